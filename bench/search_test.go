package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/index"
	"github.com/quarryhq/quarry/store"
)

// firstBatches returns what each pair holds, by place, once the first k
// batches of the load of a corpus of docs are written.
func firstBatches(docs, k int) []int {
	out := make([]int, searchGroups+searchPublic)
	bs := batchSize(docs)
	for b := range k {
		out[b%len(out)] += min(bs, docs-b*bs)
	}
	return out
}

// loadedBatches finds every prefix of a load's batches, the whole load
// included, and refuses counts that are none: another corpus's, a
// document more, two pairs' counts swapped. A whole corpus whose batches
// are the first of a bigger one's (of 1,000 documents each from 60,000
// documents on) is such a prefix: a run with the bigger -search-docs
// extends it.
func TestLoadedBatches(t *testing.T) {
	for _, docs := range []int{1, 59, 60, 61, 1200, 2000, 59_999, 70_000} {
		n := searchBatches(docs)
		if got := firstBatches(docs, n); !slices.Equal(got, pairDocs(docs)) {
			t.Fatalf("docs %d: %d batches give %v, not pairDocs's %v", docs, n, got, pairDocs(docs))
		}
		for k := range n + 1 {
			if got, ok := loadedBatches(docs, firstBatches(docs, k)); !ok || got != k {
				t.Errorf("docs %d: the first %d batches read as %d, %v", docs, k, got, ok)
			}
		}
	}
	onePlus := firstBatches(1200, 25)
	onePlus[3]++
	swapped := firstBatches(1200, 3)
	swapped[2], swapped[3] = swapped[3], swapped[2]
	for name, c := range map[string]struct {
		docs int
		held []int
	}{
		"2,000 for 3,000":     {3000, pairDocs(2000)},
		"3,000 for 2,000":     {2000, pairDocs(3000)},
		"1,200 for 1,300":     {1300, firstBatches(1200, 25)},
		"a document more":     {1200, onePlus},
		"two pairs swapped":   {1200, swapped},
		"more than the whole": {1200, firstBatches(1260, 63)},
	} {
		if k, ok := loadedBatches(c.docs, c.held); ok {
			t.Errorf("%s: read as the first %d batches", name, k)
		}
	}
	if k, ok := loadedBatches(70_000, pairDocs(60_000)); !ok || k != 60 {
		t.Errorf("a whole corpus of 60,000 for 70,000: %d, %v", k, ok)
	}
}

// corpusBatches from batch k gives the very batches a load from the start
// gives from k on.
func TestCorpusBatchesFrom(t *testing.T) {
	ctx := context.Background()
	var all []corpusBatch
	for bt := range corpusBatches(ctx, 1200, 0) {
		all = append(all, bt)
	}
	if len(all) != searchBatches(1200) {
		t.Fatalf("%d batches, want %d", len(all), searchBatches(1200))
	}
	b := 25
	for bt := range corpusBatches(ctx, 1200, 25) {
		want := all[b]
		if bt.place != want.place || len(bt.docs) != len(want.docs) {
			t.Fatalf("batch %d: place %d, %d documents; want %d, %d", b, bt.place, len(bt.docs), want.place, len(want.docs))
		}
		for i, d := range bt.docs {
			w := want.docs[i]
			if d.ID != w.ID || d.SemanticIdentifier != w.SemanticIdentifier || d.Sections[0].Text != w.Sections[0].Text || *d.Sections[0].Link != *w.Sections[0].Link {
				t.Fatalf("batch %d, document %d: %s %q, want %s %q", b, i, d.ID, d.SemanticIdentifier, w.ID, w.SemanticIdentifier)
			}
		}
		b++
	}
	if b != len(all) {
		t.Errorf("from batch 25: up to batch %d, want %d", b, len(all))
	}
}

// -op search's load of 1,200 documents (60 batches of 20) on SQLite, and
// when QUARRY_TEST_POSTGRES_URL is set, on PostgreSQL, stopped after 25
// batches: a run with -search-docs 1300 is refused (its batches are of
// 22), and a run with 1,200 resumes the load at document 500, says so,
// and leaves the database as a load in one go leaves another: each
// pair's documents (ids, titles, links, texts) and the index's answers to
// the corpus's queries are the same.
func TestSearchResume(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: loads 1,200 documents twice")
	}
	straight := testDatabases(t)
	for name, url := range testDatabases(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			server := testServer() // One key for every run: the corpus's secrets open.
			var progress bytes.Buffer
			run := func(docs, stop int) (*Report, error) {
				progress.Reset()
				rep, err := Run(ctx, Options{Pairs: 1, DB: url, Tools: 1, Clients: 1, Duration: time.Second, Op: Search,
					SearchDocs: docs, Progress: &progress, Version: "test", Server: server, stopLoadAfter: stop})
				t.Logf("%s", progress.String())
				return rep, err
			}
			if _, err := run(1200, 25); err == nil || !strings.Contains(err.Error(), "stopped after 25 batches") {
				t.Fatalf("the run stopped after 25 batches: %v", err)
			}
			if _, err := run(1300, 0); err == nil || !strings.Contains(err.Error(), "not the 1300 of -search-docs 1300 nor the first batches") {
				t.Errorf("a run with another -search-docs on a stopped load: %v", err)
			}
			rep, err := run(1200, 0)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(progress.String(), "resuming the load at document 500 of 1200") {
				t.Errorf("the progress does not say the load resumed:\n%s", progress.String())
			}
			sr := rep.Search
			if l := sr.Load; l.ResumedFrom != 500 || l.Documents != 700 || l.BatchSize != 20 || l.ChunksPerS <= 0 || sr.Corpus.Reused || sr.Corpus.Documents != 1200 {
				t.Errorf("load %+v, corpus %+v", l, sr.Corpus)
			}
			var text, js bytes.Buffer
			rep.WriteText(&text)
			if !strings.Contains(text.String(), "load      700 documents, resumed at document 500 of 1200") {
				t.Errorf("the text report does not say the load resumed:\n%s", text.String())
			}
			if err := rep.WriteJSON(&js); err != nil || !strings.Contains(js.String(), `"resumed_from": 500`) {
				t.Errorf("JSON report: %v\n%s", err, js.String())
			}

			keys, err := server.Keys()
			if err != nil {
				t.Fatal(err)
			}
			resumed, err := store.Open(ctx, url, keys, store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer resumed.Close()
			whole, err := store.Open(ctx, straight[name], keys, store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer whole.Close()
			if err := whole.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			if _, _, err := setUpSearch(ctx, whole, &Options{SearchDocs: 1200}, false, newScreen(io.Discard)); err != nil {
				t.Fatal(err)
			}
			if st, err := resumed.SearchIndexState(ctx); err != nil || st.Pending != 0 {
				t.Errorf("the resumed index: %+v, %v", st, err)
			}
			a, b := corpusView(t, resumed), corpusView(t, whole)
			if len(a) != len(b) {
				t.Fatalf("%d lines of the resumed corpus, %d of the whole", len(a), len(b))
			}
			for i := range a {
				if a[i] != b[i] {
					t.Fatalf("line %d:\nresumed %.200s\nwhole   %.200s", i, a[i], b[i])
				}
			}
		})
	}
}

// corpusView returns what db holds of the corpus, as lines to compare:
// each pair's documents (with their counts checked against pairDocs), and
// the index's answers to the first 50 of the corpus's queries.
func corpusView(t *testing.T, db *store.DB) []string {
	t.Helper()
	ctx := context.Background()
	name := "corpus view"
	_, token, err := db.CreateAPIKey(ctx, nil, &name, quarry.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := db.Authenticate(ctx, quarry.HashAPIKey(token))
	if err != nil {
		t.Fatal(err)
	}
	briefs, err := db.CCPairBriefs(ctx, admin, "ingestion_api")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	want := pairDocs(1200)
	for i, n := range want {
		j := slices.IndexFunc(briefs, func(p *quarry.CCPairBrief) bool { return p.Name == pairName(i) })
		if j < 0 {
			t.Fatalf("no pair %s", pairName(i))
		}
		docs, total, err := db.PairDocumentPage(ctx, admin, briefs[j].ID, 0, 1000)
		if err != nil || int(total) != n || len(docs) != n {
			t.Fatalf("pair %s: %d documents (%d listed), want %d: %v", pairName(i), total, len(docs), n, err)
		}
		for _, d := range docs {
			dt, err := db.PairDocumentText(ctx, admin, briefs[j].ID, d.DocumentID)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("%s %s %q %s %q", pairName(i), dt.DocumentID, dt.SemanticID, *dt.Link, dt.Text))
		}
	}
	for _, q := range searchQueryTexts()[:50] {
		hits, err := db.Search(ctx, admin, index.ParseQuery(q), quarry.SearchFilters{}, searchNumHits)
		if err != nil {
			t.Fatal(err)
		}
		// Equal scores may come in any order, and those equal to the
		// last of a full page may be cut anywhere: they are sorted, and
		// the cut's left out.
		var got []string
		for _, h := range hits {
			if len(hits) == searchNumHits && h.Score <= hits[len(hits)-1].Score*(1+1e-9) {
				break
			}
			got = append(got, fmt.Sprintf("%.6f %s/%s", h.Score, h.DocumentID, h.Pair.Name))
		}
		slices.SortFunc(got, func(a, b string) int { return -strings.Compare(a, b) })
		out = append(out, q+": "+strings.Join(got, ", "))
	}
	return out
}
