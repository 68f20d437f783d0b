package store_test

import (
	"testing"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/bench"
	"github.com/quarryhq/quarry/store/storetest"
)

// BenchmarkHeartbeatMaximum renews, in one heartbeat, the leases of
// quarry.MaxHeartbeatAttempts attempts that one worker holds (one of each
// of as many pairs): the most a heartbeat may name. The time per
// operation is how long the heartbeat holds the write lock (SQLite's
// whole database's), with statements of at most a few hundred ids each.
func BenchmarkHeartbeatMaximum(b *testing.B) {
	db := storetest.Open(b)
	// A tenth more pairs than attempts: some seeded pairs are paused.
	if _, err := bench.Seed(ctx, db, bench.DefaultSeedSpec(quarry.MaxHeartbeatAttempts*11/10), nil); err != nil {
		b.Fatal(err)
	}
	if err := db.ExecForTest(ctx, `UPDATE cc_pairs SET next_index_at = 0`); err != nil {
		b.Fatal(err)
	}
	for made := 0; made < quarry.MaxHeartbeatAttempts; {
		res, err := db.Schedule(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if res.Created == 0 {
			b.Fatalf("the scheduler made %d attempts, want %d", made, quarry.MaxHeartbeatAttempts)
		}
		made += res.Created
	}
	_, worker, err := db.StartInProcessWorker(ctx, "bench")
	if err != nil {
		b.Fatal(err)
	}
	var held []int64
	for range quarry.MaxHeartbeatAttempts {
		l, err := db.LeaseAttempt(ctx, worker)
		if err != nil || l == nil {
			b.Fatalf("lease %d: %v, %v", len(held), l, err)
		}
		held = append(held, l.AttemptID)
	}
	for b.Loop() {
		stop, _, err := db.Heartbeat(ctx, worker, held)
		if err != nil || len(stop) != 0 {
			b.Fatalf("heartbeat: stop %v, %v", stop, err)
		}
	}
}
