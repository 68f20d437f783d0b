package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/index"
	"github.com/quarryhq/quarry/internal/corpus"
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
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		hits, err := db.Search(ctx, reader, queries[i%len(queries)], quarry.SearchFilters{}, 30)
		if err != nil {
			b.Fatal(err)
		}
		_ = hits
	}
	b.ReportMetric(rate, "chunks_indexed/s")
}
