package store_test

import (
	"slices"
	"testing"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/storetest"
)

func TestSeed(t *testing.T) {
	db := storetest.Open(t)
	spec := store.SeedSpec{Pairs: 1200, Connectors: 240, Credentials: 1200, Groups: 10}
	var last, total int
	seeded, err := db.Seed(ctx, spec, func(done, all int) { last, total = done, all })
	if err != nil {
		t.Fatal(err)
	}
	if last != total || total == 0 {
		t.Errorf("progress ended at %d of %d", last, total)
	}
	admin, err := db.Authenticate(ctx, quarry.HashAPIKey(seeded.AdminToken))
	if err != nil {
		t.Fatal(err)
	}
	var pairs []quarry.CCPair
	_, err = db.ReadListing(ctx, 0, func(c *store.ListingChange) error {
		if c.Pair != nil {
			pairs = append(pairs, quarry.CCPair{ID: c.ID, AccessType: c.Pair.AccessType, Groups: slices.Clone(c.Pair.Groups)})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pairs) != spec.Pairs {
		t.Errorf("%d pairs listed, want %d", len(pairs), spec.Pairs)
	}
	curator, err := db.Authenticate(ctx, quarry.HashAPIKey(seeded.CuratorToken))
	if err != nil {
		t.Fatal(err)
	}
	mine := 0
	for i := range pairs {
		if curator.CanSeePair(&pairs[i]) {
			mine++
		}
	}
	if mine == 0 || mine >= len(pairs) {
		t.Errorf("the curator sees %d of %d pairs, want some but not all", mine, len(pairs))
	}
	// Ids keep counting after the seeded ones.
	id, err := db.CreateConnector(ctx, admin, quarry.ConnectorInput{Name: "after", Source: "web", InputType: "poll", Config: []byte(`{}`)})
	if err != nil || id != int64(spec.Connectors+1) {
		t.Errorf("CreateConnector after seeding = %d, %v; want id %d", id, err, spec.Connectors+1)
	}
	if _, err := db.Seed(ctx, spec, nil); quarry.ErrorCode(err) != quarry.ECONFLICT {
		t.Errorf("seeding twice: err = %v, want a conflict", err)
	}
}
