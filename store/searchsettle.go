package store

import "context"

// SettleIndex is a placeholder the engine branch replaces.
func (db *DB) SettleIndex(ctx context.Context) error { return nil }
