package store_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/index"
	"github.com/quarryhq/quarry/store/storetest"
)

// TestDocumentTextsStoredApart checks how a document is kept (migration
// 00030): its body without its sections' texts, the texts compressed, and
// every reader given the document whole: as stored, the pair's page of
// it, the search's document, and IndexMissing, which indexes it again. A
// document written before 00030 (its whole JSON in body, no texts) reads
// the same, and texts that do not decompress are an error.
func TestDocumentTextsStoredApart(t *testing.T) {
	f := newSearchFixture(t, storetest.Open(t))
	link, title := "https://example.com/a#2", "Stones"
	updated := quarry.Time{Time: time.Date(2026, 11, 2, 3, 4, 5, 0, time.UTC)}
	long := strings.Repeat("Granite is an igneous rock of quartz and feldspar. ", 200)
	doc := quarry.Document{ID: "stones", SemanticIdentifier: "Stones", Title: &title, Source: "web",
		Sections: []quarry.Section{{Text: long}, {Text: "Basalt <cools> fast & flows \"far\" — très loin.", Link: &link}, {Text: ""}},
		Metadata: map[string]any{"kind": "rock", "tags": []any{"a", "b"}}, DocUpdatedAt: &updated,
		PrimaryOwners: []json.RawMessage{json.RawMessage(`{"email":"ann@example.com"}`)}}
	bare := quarry.Document{ID: "bare", SemanticIdentifier: "Bare", Source: "web", Metadata: map[string]any{}}
	empty := quarry.Document{ID: "empty", SemanticIdentifier: "Empty", Source: "web", Sections: []quarry.Section{}, Metadata: map[string]any{}}
	if _, err := f.db.IngestBatch(ctx, f.admin, &f.pair, []quarry.Document{doc, bare, empty}); err != nil {
		t.Fatal(err)
	}
	whole := func(d *quarry.Document) string {
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	check := func(when string) {
		t.Helper()
		for _, want := range []*quarry.Document{&doc, &bare, &empty} {
			got, err := f.db.StoredDocument(ctx, f.pair, want.ID)
			if err != nil {
				t.Fatal(err)
			}
			if whole(got) != whole(want) {
				t.Errorf("%s: stored %s\nwant %s", when, whole(got), whole(want))
			}
		}
		page, err := f.db.PairDocumentText(ctx, f.admin, f.pair, doc.ID)
		if err != nil {
			t.Fatal(err)
		}
		if whole(&quarry.Document{Sections: page.Sections}) != whole(&quarry.Document{Sections: doc.Sections}) || page.Text != doc.DocumentText() {
			t.Errorf("%s: the pair's page of it has sections %+v", when, page.Sections)
		}
		cp, err := f.db.SearchDocument(ctx, f.admin, doc.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		if whole(cp.Document) != whole(&doc) {
			t.Errorf("%s: the search's document %s", when, whole(cp.Document))
		}
	}
	check("written")

	var body string
	var texts []byte
	if err := f.db.QueryRowForTest(ctx, `SELECT body, texts FROM documents WHERE id = 'stones'`, &body, &texts); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(body, "Granite") || strings.Contains(body, "Basalt") || !strings.Contains(body, `"link":"https://example.com/a#2"`) {
		t.Errorf("the body keeps the texts, or not the links: %s", body)
	}
	if len(texts) == 0 || len(texts) > len(long)/10 {
		t.Errorf("texts of %d bytes for %d bytes of text that repeat", len(texts), len(long))
	}

	// Indexed again from what is stored: the chunks removed, as an upgrade
	// that rebuilds the index does.
	if err := f.db.ExecForTest(ctx, `DELETE FROM search_chunks WHERE document_id = 'stones'`); err != nil {
		t.Fatal(err)
	}
	if err := f.db.IndexMissing(ctx); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"feldspar", "loin"} {
		hits, err := f.db.Search(ctx, f.admin, index.ParseQuery(q), quarry.SearchFilters{}, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) == 0 || hits[0].DocumentID != "stones" {
			t.Fatalf("%s after IndexMissing finds %+v, want stones", q, hits)
		}
		// What a result takes from the body, and its text from its chunk.
		h := hits[0]
		if whole(&quarry.Document{Metadata: h.Metadata}) != whole(&quarry.Document{Metadata: doc.Metadata}) ||
			h.UpdatedAt == nil || !h.UpdatedAt.Equal(updated.Time) || len(h.PrimaryOwners) != 1 || h.PrimaryOwners[0] != "ann@example.com" ||
			!strings.Contains(h.Content, q) {
			t.Errorf("%s's result: metadata %v, updated %v, owners %v, content %.80q", q, h.Metadata, h.UpdatedAt, h.PrimaryOwners, h.Content)
		}
	}

	// A row as written before 00030.
	if err := f.db.ExecForTest(ctx, `UPDATE documents SET body = $1, texts = NULL WHERE id = 'stones'`, whole(&doc)); err != nil {
		t.Fatal(err)
	}
	check("written before 00030")

	if err := f.db.ExecForTest(ctx, `UPDATE documents SET body = $1, texts = $2 WHERE id = 'stones'`, body, []byte("not zstd")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.StoredDocument(ctx, f.pair, doc.ID); err == nil || !strings.Contains(err.Error(), "its texts") {
		t.Errorf("texts that do not decompress: %v", err)
	}
	if _, err := f.db.StoredDocument(ctx, f.pair, "nowhere"); err != quarry.ErrPairDocumentNotFound {
		t.Errorf("a document the pair does not hold: %v", err)
	}
}
