package store_test

import (
	"sync/atomic"
	"testing"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/storetest"
)

// BenchmarkEachConnectorStatus reads the status listing of a seeded
// database of 10,000 pairs in two parts, without encoding it.
func BenchmarkEachConnectorStatus(b *testing.B) {
	db := storetest.Open(b)
	seeded, err := db.Seed(ctx, store.DefaultSeedSpec(10000), nil)
	if err != nil {
		b.Fatal(err)
	}
	admin, _ := db.Authenticate(ctx, quarry.HashAPIKey(seeded.AdminToken))
	for b.Loop() {
		var rows atomic.Int64
		if _, _, err := db.EachConnectorStatus(ctx, admin, quarry.StatusFilter{}, 2, func(int, *store.StatusRow) error {
			rows.Add(1)
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		if rows.Load() != 10000 {
			b.Fatalf("%d rows, want 10000", rows.Load())
		}
	}
}
