package store_test

import (
	"testing"

	"github.com/quarryhq/quarry/bench"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/storetest"
)

// BenchmarkReadListing reads the whole status listing of a seeded database
// of 10,000 pairs, credentials opened, without encoding it.
func BenchmarkReadListing(b *testing.B) {
	db := storetest.Open(b)
	if _, err := bench.Seed(ctx, db, bench.DefaultSeedSpec(10000), nil); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		pairs := 0
		if _, err := db.ReadListing(ctx, 0, func(c *store.ListingChange) error {
			if c.Pair != nil {
				pairs++
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		if pairs != 10000 {
			b.Fatalf("%d pairs, want 10000", pairs)
		}
	}
}
