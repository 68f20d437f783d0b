package store_test

import (
	"math"
	"testing"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/index"
	"github.com/quarryhq/quarry/store/storetest"
)

// TestSearchScore checks one ranking to the digit on the database the tests
// run on: BM25 with k1 2 and b 0.9 over two chunks whose lengths count
// their title twice. Both databases must give these scores (PostgreSQL once
// typed k1, b and the average length as integers and ranked otherwise).
func TestSearchScore(t *testing.T) {
	f := newSearchFixture(t, storetest.Open(t))
	db, admin, pair := f.db, f.admin, f.pair
	// Lengths 2+3 = 5 and 2+5 = 7 (the title counts twice): the average is 6.
	for _, d := range []quarry.Document{
		{ID: "a", SemanticIdentifier: "one", Source: "web", Sections: []quarry.Section{{Text: "alpha beta gamma"}}, Metadata: map[string]any{}},
		{ID: "b", SemanticIdentifier: "two", Source: "web", Sections: []quarry.Section{{Text: "alpha alpha delta epsilon zeta"}}, Metadata: map[string]any{}},
	} {
		if _, err := db.Ingest(ctx, admin, &pair, &d); err != nil {
			t.Fatal(err)
		}
	}
	hits, err := db.Search(ctx, admin, index.ParseQuery("alpha"), quarry.SearchFilters{}, 10)
	if err != nil {
		t.Fatal(err)
	}
	idf := math.Log(1 + (2-2+0.5)/(2+0.5))
	bm25 := func(tf, length float64) float64 { return idf * tf / (tf + 2.0*(1-0.9+0.9*length/6)) }
	want := map[string]float64{"b": bm25(2, 7), "a": bm25(1, 5)}
	if len(hits) != 2 || hits[0].DocumentID != "b" {
		t.Fatalf("hits %+v, want b then a", hits)
	}
	for _, h := range hits {
		if math.Abs(h.Score-want[h.DocumentID]) > 1e-9 {
			t.Errorf("%s scores %.12f, want %.12f", h.DocumentID, h.Score, want[h.DocumentID])
		}
	}
}

// TestSearchProximity checks that the nearness of a query's words reorders
// the results: two documents of the same words score alike by BM25, and
// the later one (the larger chunk id, which wins no tie) holds the query's
// words side by side: it ranks first, its score BM25's plus
// index.Candidates.Proximity's bonus. A phrase match still ranks above a
// words match with a larger bonus.
func TestSearchProximity(t *testing.T) {
	f := newSearchFixture(t, storetest.Open(t))
	db, admin, pair := f.db, f.admin, f.pair
	// Each 2+5 = 7 words long (the title counts twice).
	for _, d := range []quarry.Document{
		{ID: "far", SemanticIdentifier: "x", Source: "web", Sections: []quarry.Section{{Text: "alpha gamma delta beta epsilon"}}, Metadata: map[string]any{}},
		{ID: "near", SemanticIdentifier: "x", Source: "web", Sections: []quarry.Section{{Text: "alpha beta gamma delta epsilon"}}, Metadata: map[string]any{}},
		{ID: "other", SemanticIdentifier: "x", Source: "web", Sections: []quarry.Section{{Text: "gamma delta epsilon zeta eta"}}, Metadata: map[string]any{}},
	} {
		if _, err := db.Ingest(ctx, admin, &pair, &d); err != nil {
			t.Fatal(err)
		}
	}
	hits, err := db.Search(ctx, admin, index.ParseQuery("alpha beta"), quarry.SearchFilters{}, 10)
	if err != nil {
		t.Fatal(err)
	}
	idf := math.Log(1 + (3-2+0.5)/(2+0.5))
	bm25 := 2 * idf * 1 / (1 + 2.0*(1-0.9+0.9*7.0/7))
	sat := func(n float64) float64 { return n * 3 / (n + 2) }
	want := []struct {
		id    string
		score float64
	}{{"near", bm25 + index.ProximityWeight*2*idf*sat(1)}, {"far", bm25 + index.ProximityWeight*2*idf*sat(1.0/9)}}
	if len(hits) != 2 {
		t.Fatalf("hits %+v, want near then far", hits)
	}
	for i, w := range want {
		if hits[i].DocumentID != w.id || math.Abs(hits[i].Score-w.score) > 1e-9 {
			t.Errorf("hit %d: %s scores %.12f, want %s %.12f", i, hits[i].DocumentID, hits[i].Score, w.id, w.score)
		}
	}
	// The phrase "beta epsilon" is in far only: far first, whatever the
	// bonus; then near (a better score), then other (epsilon alone).
	hits, err = db.Search(ctx, admin, index.ParseQuery(`alpha "beta epsilon"`), quarry.SearchFilters{}, 10)
	if err != nil || len(hits) != 3 || hits[0].DocumentID != "far" || hits[1].DocumentID != "near" || hits[2].DocumentID != "other" || hits[1].Score <= hits[0].Score {
		t.Errorf("phrase: %+v, %v; want far (the phrase), near (a better score), other", hits, err)
	}
}
