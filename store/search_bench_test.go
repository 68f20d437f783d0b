package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/index"
	"github.com/quarryhq/quarry/internal/corpus"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/storetest"
)

// BenchmarkSearch loads a reproducible corpus (QUARRY_BENCH_DOCS documents
// of package corpus: 300 words of a Zipf vocabulary of 50,000 words, one
// chunk each, spread over 50 private pairs of 50 groups) through
// IngestBatch, reports the indexing rate (until every chunk is in a
// segment), then searches corpus.Query's queries as a person in 3 of the
// 50 groups. quarry bench -op search measures the same through HTTP, at
// the scale.
func BenchmarkSearch(b *testing.B) {
	c := loadSearchCorpus(b)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		hits, err := c.db.Search(ctx, c.reader, c.queries[i%len(c.queries)], quarry.SearchFilters{}, 30)
		if err != nil {
			b.Fatal(err)
		}
		_ = hits
	}
	b.ReportMetric(c.rate, "chunks_indexed/s")
}

// BenchmarkSearchDocumentSet times, on BenchmarkSearch's corpus, each query
// searched twice in a row, without a filter and narrowed to a public
// document set of every pair (so that both find the same), in turns of
// which goes first, and reports the median wall time and the median CPU
// time of the process (getrusage) of each: the set's own cost (issue
// 42's target: within 10%), with the machine's other load falling on both
// alike.
func BenchmarkSearchDocumentSet(b *testing.B) {
	c := loadSearchCorpus(b)
	admin := adminOf(b, c.db)
	if _, err := c.db.CreateDocumentSet(ctx, admin, quarry.DocumentSetInput{Name: "every pair", Description: "", PairIDs: c.pairs, IsPublic: true}); err != nil {
		b.Fatal(err)
	}
	filters := [2]quarry.SearchFilters{{}, {DocumentSets: []string{"every pair"}}}
	var wall, cpu [2][]time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		q := c.queries[i%len(c.queries)]
		var found [2]int
		for k := range 2 {
			f := (i + k) % 2
			t0, c0 := time.Now(), processCPU()
			hits, err := c.db.Search(ctx, c.reader, q, filters[f], 30)
			wall[f], cpu[f] = append(wall[f], time.Since(t0)), append(cpu[f], processCPU()-c0)
			if err != nil {
				b.Fatal(err)
			}
			found[f] = len(hits)
		}
		if found[0] != found[1] {
			b.Fatalf("the set's search found %d, the plain one %d", found[1], found[0])
		}
	}
	median := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2].Nanoseconds())
	}
	b.ReportMetric(median(wall[0]), "p50-ns/plain")
	b.ReportMetric(median(wall[1]), "p50-ns/set")
	b.ReportMetric(median(cpu[0]), "p50-cpu-ns/plain")
	b.ReportMetric(median(cpu[1]), "p50-cpu-ns/set")
}

// processCPU returns the CPU time the process has used (user and system).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// searchBenchCorpus is BenchmarkSearch's corpus on a database: the
// reader's caller, the 50 pairs, the queries and the indexing rate.
type searchBenchCorpus struct {
	db      *store.DB
	reader  *quarry.Caller
	pairs   []int64
	queries []index.Query
	rate    float64
}

// loadSearchCorpus loads BenchmarkSearch's corpus (see there).
func loadSearchCorpus(b *testing.B) *searchBenchCorpus {
	b.Helper()
	docs := 5000
	if v, err := strconv.Atoi(os.Getenv("QUARRY_BENCH_DOCS")); err == nil {
		docs = v
	}
	db := storetest.Open(b)
	_, token, err := db.CreateAPIKey(ctx, nil, new("admin"), quarry.RoleAdmin)
	if err != nil {
		b.Fatal(err)
	}
	admin, err := db.Authenticate(ctx, quarry.HashAPIKey(token))
	if err != nil {
		b.Fatal(err)
	}
	_, token, err = db.CreateAPIKey(ctx, nil, new("reader"), quarry.RoleBasic)
	if err != nil {
		b.Fatal(err)
	}
	reader, err := db.Authenticate(ctx, quarry.HashAPIKey(token))
	if err != nil {
		b.Fatal(err)
	}
	gen := corpus.New(1)
	var pairs []int64
	for i := range 50 {
		name := fmt.Sprint("g", i)
		members := []string{}
		if i < 3 {
			members = []string{reader.ID}
		}
		g, err := db.CreateGroup(ctx, admin, quarry.UserGroupInput{Name: &name, UserIDs: members, CCPairIDs: []int64{}})
		if err != nil {
			b.Fatal(err)
		}
		conn, err := db.CreateConnector(ctx, admin, quarry.ConnectorInput{Name: name, Source: "web", InputType: "poll",
			Config: json.RawMessage(`{}`), AccessType: quarry.AccessPublic, Groups: &[]int64{}})
		if err != nil {
			b.Fatal(err)
		}
		k, err := db.CreateCredential(ctx, admin, quarry.CredentialInput{Source: "web", CredentialJSON: map[string]any{"k": "v"}, AdminPublic: true})
		if err != nil {
			b.Fatal(err)
		}
		p, err := db.CreateCCPair(ctx, admin, conn, k.ID, quarry.CCPairInput{Name: name, AccessType: quarry.AccessPrivate, Groups: []int64{g.ID}})
		if err != nil {
			b.Fatal(err)
		}
		pairs = append(pairs, p)
	}
	reader, err = db.Authenticate(ctx, quarry.HashAPIKey(token))
	if err != nil {
		b.Fatal(err)
	}
	// The index's upkeep runs beside the writes, as in a server.
	upkeep, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { db.RunIndexUpkeep(upkeep, time.Second, func(err error) { b.Error(err) }) })
	start := time.Now()
	const batch = 200
	for i := 0; i < docs; i += batch {
		var ds []quarry.Document
		for j := i; j < min(i+batch, docs); j++ {
			title, text := gen.Document()
			ds = append(ds, quarry.Document{ID: fmt.Sprint("d", j), SemanticIdentifier: title, Source: "web",
				Sections: []quarry.Section{{Text: text}}, Metadata: map[string]any{}})
		}
		p := pairs[(i/batch)%len(pairs)]
		if _, err := db.IngestBatch(ctx, admin, &p, ds); err != nil {
			b.Fatal(err)
		}
	}
	stop()
	wg.Wait()
	if err := db.SettleIndex(ctx); err != nil {
		b.Fatal(err)
	}
	rate := float64(docs) / time.Since(start).Seconds()
	queries := make([]index.Query, 100)
	for i := range queries {
		queries[i] = index.ParseQuery(gen.Query())
	}
	return &searchBenchCorpus{db: db, reader: reader, pairs: pairs, queries: queries, rate: rate}
}
