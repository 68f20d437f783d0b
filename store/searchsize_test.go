package store_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/store/storetest"
)

// TestSearchIndexSize reads the index's size on the database the tests
// run on: every table of the index is named, each has a size, the index
// grows with what is indexed, and the database holds more than the index.
func TestSearchIndexSize(t *testing.T) {
	db := storetest.Open(t)
	before, err := db.SearchIndexSize(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tb := range before.Tables {
		names = append(names, tb.Name)
		if !strings.HasPrefix(tb.Name, "search_") || tb.Bytes < 0 {
			t.Errorf("table %+v", tb)
		}
	}
	for _, want := range []string{"search_chunks", "search_document_access", "search_tags"} {
		if !strings.Contains(","+strings.Join(names, ",")+",", ","+want+",") {
			t.Errorf("tables %v, want %s among them", names, want)
		}
	}
	if before.DatabaseBytes <= before.IndexBytes {
		t.Errorf("empty index: %d bytes of a %d-byte database", before.IndexBytes, before.DatabaseBytes)
	}

	name := "admin"
	_, token, err := db.CreateAPIKey(ctx, nil, &name, quarry.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := db.Authenticate(ctx, quarry.HashAPIKey(token))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := db.CreateConnector(ctx, admin, quarry.ConnectorInput{Name: "c", Source: "ingestion_api", InputType: "load_state",
		Config: json.RawMessage(`{}`), AccessType: quarry.AccessPublic, Groups: &[]int64{}})
	if err != nil {
		t.Fatal(err)
	}
	k, err := db.CreateCredential(ctx, admin, quarry.CredentialInput{Source: "ingestion_api", CredentialJSON: map[string]any{}, AdminPublic: true})
	if err != nil {
		t.Fatal(err)
	}
	pair, err := db.CreateCCPair(ctx, admin, conn, k.ID, quarry.CCPairInput{Name: "p", AccessType: quarry.AccessPublic, Groups: []int64{}})
	if err != nil {
		t.Fatal(err)
	}
	var docs []quarry.Document
	for i := range 200 {
		text := strings.Repeat(fmt.Sprintf("granite%d quarry%d limestone%d ", i, i*7, i*13), 100)
		docs = append(docs, quarry.Document{ID: fmt.Sprint("d", i), SemanticIdentifier: fmt.Sprint("Document ", i), Source: "ingestion_api",
			Sections: []quarry.Section{{Text: text}}, Metadata: map[string]any{}})
	}
	if _, err := db.IngestBatch(ctx, admin, &pair, docs); err != nil {
		t.Fatal(err)
	}
	if err := db.SettleIndex(ctx); err != nil {
		t.Fatal(err)
	}
	after, err := db.SearchIndexSize(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, tb := range after.Tables {
		sum += tb.Bytes
	}
	// 200 chunks of 3 KB of text (which PostgreSQL compresses well).
	if after.IndexBytes != sum || after.IndexBytes < before.IndexBytes+100_000 || after.DatabaseBytes < after.IndexBytes {
		t.Errorf("after indexing 200 documents: %+v (before: %+v)", after, before)
	}
	t.Logf("%s: index %d bytes of %d", db.Dialect(), after.IndexBytes, after.DatabaseBytes)
}
