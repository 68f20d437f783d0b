package bench_test

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/bench"
	"github.com/quarryhq/quarry/internal/progress"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/storetest"
)

var ctx = context.Background()

func TestSeed(t *testing.T) {
	db := storetest.Open(t)
	spec := bench.SeedSpec{Pairs: 1200, Connectors: 240, Credentials: 1200, Groups: 10}
	var counts []progress.Count
	seeded, err := bench.Seed(ctx, db, spec, func(c progress.Count) { counts = append(counts, c) })
	if err != nil {
		t.Fatal(err)
	}
	if len(counts) < 2 || counts[len(counts)-1].Done != counts[len(counts)-1].Total || counts[0].Total == 0 {
		t.Errorf("progress %v, want several reports ending at the total", counts)
	}
	for i := 1; i < len(counts); i++ {
		if counts[i].Done <= counts[i-1].Done || counts[i].Total != counts[0].Total {
			t.Errorf("progress %v does not go up to one total", counts)
			break
		}
	}
	admin, err := db.Authenticate(ctx, quarry.HashAPIKey(seeded.AdminToken))
	if err != nil {
		t.Fatal(err)
	}
	pairs := listed(t, db)
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
	if _, err := bench.Seed(ctx, db, spec, nil); quarry.ErrorCode(err) != quarry.ECONFLICT {
		t.Errorf("seeding twice: err = %v, want a conflict", err)
	}
}

// TestSeedIsReproducible: the same spec makes the same pairs, sharing and
// secrets.
func TestSeedIsReproducible(t *testing.T) {
	spec := bench.DefaultSeedSpec(300)
	var runs [2][]quarry.CCPair
	var secrets [2][]string
	for i := range runs {
		db := storetest.Open(t)
		seeded, err := bench.Seed(ctx, db, spec, nil)
		if err != nil {
			t.Fatal(err)
		}
		runs[i] = listed(t, db)
		admin, err := db.Authenticate(ctx, quarry.HashAPIKey(seeded.AdminToken))
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range []int64{1, 150, 300} {
			k, err := db.Credential(ctx, admin, id)
			if err != nil {
				t.Fatal(err)
			}
			secrets[i] = append(secrets[i], string(k.CredentialJSON))
		}
	}
	if diff := cmp.Diff(runs[0], runs[1]); diff != "" {
		t.Errorf("two seedings differ (-first +second):\n%s", diff)
	}
	if !slices.Equal(secrets[0], secrets[1]) {
		t.Errorf("secrets differ: %q, %q", secrets[0], secrets[1])
	}
}

// listed returns the pairs of the status listing with their access type
// and groups.
func listed(t *testing.T, db *store.DB) []quarry.CCPair {
	t.Helper()
	var pairs []quarry.CCPair
	_, err := db.ReadListing(ctx, 0, func(c *store.ListingChange) error {
		if c.Pair != nil {
			pairs = append(pairs, quarry.CCPair{ID: c.ID, AccessType: c.Pair.AccessType, Groups: slices.Clone(c.Pair.Groups)})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pairs
}
