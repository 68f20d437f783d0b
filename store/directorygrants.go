package store

import (
	"context"

	"github.com/quarryhq/quarry"
)

// checkDirectoryAddition applies quarry.CheckDirectoryAddition to the
// people (added) the directory adds to group id, named name: it reads the
// group's grants, inside the transaction that adds them.
func (tx *Tx) checkDirectoryAddition(ctx context.Context, id int64, name string, added []string) error {
	if len(added) == 0 {
		return nil
	}
	grants, err := groupPermissions(ctx, tx, id)
	if err != nil {
		return err
	}
	return quarry.CheckDirectoryAddition(name, grants, added)
}
