package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/store"
)

// -op indexing: the store's side of indexing at -pairs pairs (issue 32's
// targets), measured on the store directly rather than under a load of
// clients: the scheduler's pass (store.DB.Schedule) with a full batch due,
// with nothing due and with a few pairs due; a worker's lease
// (store.DB.LeaseAttempt) with every pair's attempt waiting; the end of an
// attempt and a progress report; and the status listing (GET
// /manage/admin/connector/status, over HTTP) right after a progress
// report, against the same listing with no indexing activity, which is
// this op's floor. -clients and -duration do not apply.

// Indexing is the -op of indexing's store calls.
const Indexing = "indexing"

// Targets of issue 32, on PostgreSQL.
const (
	targetPassMS    = 5.0 // The scheduler's pass and a lease, p50.
	targetListingX  = 2.0 // The listing after a progress report, p50, times the quiet listing's.
	indexingRounds  = 40  // Passes with a few pairs due,
	dueConnectors   = 5   // whose run-once asks for this many connectors' pairs (5 each, DefaultSeedSpec).
	idlePasses      = 200 // Passes with nothing due.
	listingSamples  = 50  // Listings read quiet, and after a progress report.
	indexingWorkers = "bench worker"
)

// IndexingReport is what -op indexing measured.
type IndexingReport struct {
	Series []IndexingSeries `json:"series"`
	// Attempts is how many first attempts the passes made: one per pair,
	// but those of sources that are never indexed (the ingestion API,
	// not_applicable).
	Attempts int `json:"first_attempts"`
	// ListingP50Ratio is the listing's p50 after a progress report over
	// its p50 with no indexing activity (the target is at most 2).
	ListingP50Ratio float64 `json:"listing_p50_ratio"`
	// ListingRebuilt counts the progress reports after which the
	// database's data version had moved, so that the listing was read
	// again rather than served from the server's copy. The listing shows
	// no indexing figures (Onyx's ConnectorStatus): none is expected.
	ListingRebuilt int `json:"listing_rebuilt"`
	// Missed names the targets missed, with the figures.
	Missed []string `json:"missed"`
}

// IndexingSeries is one measured call.
type IndexingSeries struct {
	Name      string  `json:"name"`
	About     string  `json:"about"`
	Samples   uint64  `json:"samples"`
	LatencyMS Latency `json:"latency_ms"`
	// TargetP50MS is the target for the series' p50, if it has
	// one (on PostgreSQL).
	TargetP50MS float64 `json:"target_p50_ms,omitempty"`
}

// timed is a latency series being recorded.
type timed struct {
	name, about string
	target      float64
	h           histogram
}

func (t *timed) time(f func() error) error {
	start := time.Now()
	err := f()
	t.h.record(0, time.Since(start))
	return err
}

func (t *timed) series() IndexingSeries {
	sum := t.h.summary()
	ms := func(ns int64) float64 { return round(float64(ns) / 1e6) }
	return IndexingSeries{Name: t.name, About: t.about, Samples: sum.n, TargetP50MS: t.target,
		LatencyMS: Latency{Mean: round(sum.mean / 1e6), P50: ms(sum.p50), P90: ms(sum.p90), P99: ms(sum.p99), Max: ms(sum.max)}}
}

// measureIndexing measures -op indexing into rep.
func measureIndexing(ctx context.Context, sys *system, sc *screen, rep *Report) error {
	rep.Clients = 1
	ir, status, err := indexing(ctx, sys, sc)
	if err != nil {
		return err
	}
	rep.Indexing = ir
	rep.Dataset.StatusBytes = status.bytes
	rep.Results = []Result{status.result}
	return nil
}

// listingResult is the listing's series: after a progress report, and
// quiet as its floor.
type listingResult struct {
	result Result
	bytes  int
}

func indexing(ctx context.Context, sys *system, sc *screen) (*IndexingReport, *listingResult, error) {
	db := sys.db
	caller, err := db.Authenticate(ctx, quarry.HashToken(sys.token))
	if err != nil {
		return nil, nil, err
	}
	_, worker, err := db.StartInProcessWorker(ctx, indexingWorkers)
	if err != nil {
		return nil, nil, err
	}
	batch := &timed{name: "schedule:batch", about: "a pass with more pairs due than a pass takes (it makes 500 attempts)"}
	lease := &timed{name: "lease", about: fmt.Sprintf("a worker's lease, with %d to 1 attempts waiting", sys.spec.Pairs), target: targetPassMS}
	finish := &timed{name: "finish", about: "a worker ends an attempt (success): the pair moves on and is rescheduled"}
	idle := &timed{name: "schedule:idle", about: "a pass with nothing due and no lease expired", target: targetPassMS}
	few := &timed{name: "schedule:few-due", about: fmt.Sprintf("a pass with %d pairs due (run-once of %d connectors)", 5*dueConnectors, dueConnectors), target: targetPassMS}
	one := &timed{name: "schedule:one-due", about: "a pass with 1 pair due (run-once of one pair)", target: targetPassMS}
	progress := &timed{name: "progress", about: "a worker's progress report: one document and a checkpoint"}

	// Every pair is due (never indexed): passes make their attempts, 500
	// at a time.
	sc.line(fmt.Sprintf("scheduling the first attempt of %d pairs", sys.spec.Pairs))
	made := 0
	for {
		start := time.Now()
		res, err := db.Schedule(ctx)
		if err != nil {
			return nil, nil, err
		}
		if res.Created == 0 {
			break // The last pass made none: it is not a batch.
		}
		batch.h.record(0, time.Since(start))
		made += res.Created
	}
	if made == 0 {
		return nil, nil, fmt.Errorf("bench: the scheduler made no attempt for %d pairs never indexed", sys.spec.Pairs)
	}
	// Pairs of the ingestion API and not_applicable sources are never due.
	lease.about = fmt.Sprintf("a worker's lease, with %d to 1 attempts waiting", made)

	// Leases with every attempt waiting, each ended at once.
	sc.line(fmt.Sprintf("leasing and ending %d attempts", made))
	for i := 0; ; i++ {
		start := time.Now()
		l, err := db.LeaseAttempt(ctx, worker)
		if err != nil {
			return nil, nil, err
		}
		if l == nil {
			break // Nothing was waiting: not a lease.
		}
		lease.h.record(0, time.Since(start))
		if err := finish.time(func() error {
			_, err := db.FinishAttempt(ctx, worker, l.AttemptID, quarry.Finish{Status: quarry.IndexSuccess})
			return err
		}); err != nil {
			return nil, nil, err
		}
		if i%500 == 499 {
			sc.line(fmt.Sprintf("  %d attempts leased and ended", i+1))
		}
	}

	// Nothing is due now: every pair's next run is its refresh frequency
	// (600 s or more) away.
	sc.line(fmt.Sprintf("%d passes with nothing due", idlePasses))
	for range idlePasses {
		var res store.ScheduleResult
		if err := idle.time(func() (err error) { res, err = db.Schedule(ctx); return err }); err != nil {
			return nil, nil, err
		}
		if res.Created != 0 || res.Expired != 0 {
			return nil, nil, fmt.Errorf("bench: a pass with nothing due made %d attempts and expired %d", res.Created, res.Expired)
		}
	}

	// One pair due at a time, then a few, as at a steady state.
	connectors := int64(sys.spec.Connectors)
	sc.line(fmt.Sprintf("%d passes with 1 pair due", indexingRounds))
	for i := range int64(indexingRounds) {
		// Pair p has credential p and connector 1+(p-1)%connectors
		// (Seed); the pairs of the last connectors are taken, which the
		// run-once rounds below reach last.
		p := int64(sys.spec.Pairs) - i
		if _, err := db.RunOnce(ctx, caller, 1+(p-1)%connectors, []int64{p}, false); err != nil {
			return nil, nil, err
		}
		start := time.Now()
		res, err := db.Schedule(ctx)
		if err != nil {
			return nil, nil, err
		}
		if res.Created == 1 { // Not a pair of a source never indexed.
			one.h.record(0, time.Since(start))
		}
		if err := drain(ctx, db, worker); err != nil {
			return nil, nil, err
		}
	}
	sc.line(fmt.Sprintf("%d passes with %d pairs due", indexingRounds, 5*dueConnectors))
	next := int64(0)
	for range indexingRounds {
		for range dueConnectors {
			if _, err := db.RunOnce(ctx, caller, 1+next%connectors, nil, false); err != nil {
				return nil, nil, err
			}
			next++
		}
		var res store.ScheduleResult
		if err := few.time(func() (err error) { res, err = db.Schedule(ctx); return err }); err != nil {
			return nil, nil, err
		}
		if res.Created == 0 {
			return nil, nil, fmt.Errorf("bench: a pass after run-once made no attempt")
		}
		if err := drain(ctx, db, worker); err != nil {
			return nil, nil, err
		}
	}

	// The listing, quiet and right after a progress report of an attempt
	// in progress.
	sc.line("the status listing, quiet and after progress reports")
	if _, err := db.RunOnce(ctx, caller, 1, nil, false); err != nil {
		return nil, nil, err
	}
	if _, err := db.Schedule(ctx); err != nil {
		return nil, nil, err
	}
	running, err := db.LeaseAttempt(ctx, worker)
	if err != nil || running == nil {
		return nil, nil, fmt.Errorf("bench: no attempt to report progress on (%v)", err)
	}
	get := &http.Client{Timeout: time.Minute}
	quiet := &timed{name: "status:quiet"}
	after := &timed{name: "status:after-progress"}
	var size int
	read := func(t *timed) error {
		return t.time(func() error {
			req, err := http.NewRequestWithContext(ctx, "GET", sys.base+statusPath, nil)
			if err != nil {
				return err
			}
			req.Header.Set("Authorization", "Bearer "+sys.token)
			res, err := get.Do(req)
			if err != nil {
				return err
			}
			defer res.Body.Close()
			n, err := io.Copy(io.Discard, res.Body)
			if res.StatusCode != http.StatusOK {
				return fmt.Errorf("bench: GET %s: %s", statusPath, res.Status)
			}
			size = int(n)
			return err
		})
	}
	// The first read after the lease is neither.
	if err := read(&timed{}); err != nil {
		return nil, nil, err
	}
	for range listingSamples {
		if err := read(quiet); err != nil {
			return nil, nil, err
		}
	}
	link, rebuilt := "https://docs.example.com/bench", 0
	for i := range listingSamples {
		p := &quarry.Progress{
			Documents: []quarry.Document{{ID: fmt.Sprintf("bench-doc-%d", i), Source: running.Connector.Source,
				SemanticIdentifier: fmt.Sprintf("Bench document %d", i), Metadata: map[string]any{},
				Sections: []quarry.Section{{Text: "A document a connector found.", Link: &link}}}},
			Checkpoint: json.RawMessage(fmt.Sprintf(`{"has_more":true,"last_document_id":"bench-doc-%d"}`, i)),
		}
		before, err := db.DataVersion(ctx)
		if err != nil {
			return nil, nil, err
		}
		if err := progress.time(func() error { _, err := db.ReportProgress(ctx, worker, running.AttemptID, p); return err }); err != nil {
			return nil, nil, err
		}
		if after, err := db.DataVersion(ctx); err != nil {
			return nil, nil, err
		} else if after != before {
			rebuilt++
		}
		if err := read(after); err != nil {
			return nil, nil, err
		}
	}
	if _, err := db.FinishAttempt(ctx, worker, running.AttemptID, quarry.Finish{Status: quarry.IndexSuccess}); err != nil {
		return nil, nil, err
	}

	ir := &IndexingReport{Missed: []string{}, ListingRebuilt: rebuilt, Attempts: made}
	for _, t := range []*timed{batch, lease, finish, idle, one, few, progress} {
		s := t.series()
		ir.Series = append(ir.Series, s)
		if s.TargetP50MS > 0 && s.LatencyMS.P50 > s.TargetP50MS {
			ir.Missed = append(ir.Missed, fmt.Sprintf("%s: p50 %.3g ms, target %.3g ms", s.Name, s.LatencyMS.P50, s.TargetP50MS))
		}
	}
	qs, as := quiet.series(), after.series()
	toNumbers := func(s IndexingSeries) Numbers { return Numbers{Requests: s.Samples, LatencyMS: s.LatencyMS} }
	ratio := func(a, b float64) float64 {
		if b == 0 {
			return 0
		}
		return round(a / b)
	}
	res := Result{Op: "status:after-progress", ResponseBytes: size, Server: toNumbers(as), Floor: toNumbers(qs),
		VsFloor: Ratios{P50: ratio(as.LatencyMS.P50, qs.LatencyMS.P50), P90: ratio(as.LatencyMS.P90, qs.LatencyMS.P90),
			P99: ratio(as.LatencyMS.P99, qs.LatencyMS.P99), Max: ratio(as.LatencyMS.Max, qs.LatencyMS.Max)}}
	ir.ListingP50Ratio = res.VsFloor.P50
	if ir.ListingP50Ratio > targetListingX {
		ir.Missed = append(ir.Missed, fmt.Sprintf("status after a progress report: p50 %.3g× the quiet listing's, target %.3g×",
			ir.ListingP50Ratio, targetListingX))
	}
	return ir, &listingResult{result: res, bytes: size}, nil
}

// drain leases and ends every attempt waiting.
func drain(ctx context.Context, db *store.DB, worker int64) error {
	for {
		l, err := db.LeaseAttempt(ctx, worker)
		if err != nil || l == nil {
			return err
		}
		if _, err := db.FinishAttempt(ctx, worker, l.AttemptID, quarry.Finish{Status: quarry.IndexSuccess}); err != nil {
			return err
		}
	}
}

// writeIndexingText writes the text report of -op indexing.
func (r *Report) writeIndexingText(w io.Writer) {
	ir := r.Indexing
	const row = "%-18s %8s %9s %9s %9s %9s %9s %8s  %s\n"
	fmt.Fprintln(w)
	fmt.Fprintf(w, row, "", "samples", "mean", "p50", "p90", "p99", "max", "target", "")
	for _, s := range ir.Series {
		l, target := s.LatencyMS, ""
		if s.TargetP50MS > 0 {
			target = "≤" + ms(s.TargetP50MS)
		}
		fmt.Fprintf(w, row, s.Name, fmt.Sprint(s.Samples), ms(l.Mean), ms(l.P50), ms(l.P90), ms(l.P99), ms(l.Max), target, s.About)
	}
	for _, res := range r.Results {
		for _, n := range []struct {
			label string
			Numbers
		}{{res.Op, res.Server}, {"  quiet (floor)", res.Floor}} {
			l := n.LatencyMS
			fmt.Fprintf(w, row, n.label, fmt.Sprint(n.Requests), ms(l.Mean), ms(l.P50), ms(l.P90), ms(l.P99), ms(l.Max), "", "")
		}
		v := res.VsFloor
		fmt.Fprintf(w, row, "  vs quiet", "", "", num(v.P50)+"×", num(v.P90)+"×", num(v.P99)+"×", num(v.Max)+"×", "≤2×", "")
	}
	fmt.Fprintf(w, "\nthe listing was read again from the database after %d of the %d progress reports (its data version moved)\n",
		ir.ListingRebuilt, r.Results[0].Server.Requests)
	if len(ir.Missed) == 0 {
		fmt.Fprintln(w, "targets     met (they are PostgreSQL's)")
		return
	}
	for _, m := range ir.Missed {
		fmt.Fprintf(w, "missed      %s\n", m)
	}
}
