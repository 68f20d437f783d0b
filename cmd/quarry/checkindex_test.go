package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/storetest"
)

// TestCheckSearchIndex (issue 39): quarry check counts the documents and
// files and checks the search index against the documents it indexes,
// saying what it checked; a block whose bytes are damaged fails the check,
// which names it. quarry backup (SQLite) reports the copy's documents,
// files and index, and fails on the damaged one. Both databases.
func TestCheckSearchIndex(t *testing.T) {
	ctx := context.Background()
	u := storetest.URL(t)
	key := store.NewKey()
	db := openWithKeys(t, u, key)
	name := "admin"
	_, token, err := db.CreateAPIKey(ctx, nil, &name, quarry.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := db.Authenticate(ctx, quarry.HashAPIKey(token))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := db.CreateConnector(ctx, admin, quarry.ConnectorInput{Name: "c", Source: "web", InputType: "poll",
		Config: json.RawMessage(`{}`), AccessType: quarry.AccessPublic, Groups: &[]int64{}})
	if err != nil {
		t.Fatal(err)
	}
	k, err := db.CreateCredential(ctx, admin, quarry.CredentialInput{Source: "web", CredentialJSON: map[string]any{"k": "v"}, AdminPublic: true})
	if err != nil {
		t.Fatal(err)
	}
	pair, err := db.CreateCCPair(ctx, admin, conn, k.ID, quarry.CCPairInput{Name: "p", AccessType: quarry.AccessPublic, Groups: []int64{}})
	if err != nil {
		t.Fatal(err)
	}
	var docs []quarry.Document
	for i := range 3 {
		docs = append(docs, quarry.Document{ID: fmt.Sprint("d", i), SemanticIdentifier: "Doc", Source: "web",
			Sections: []quarry.Section{{Text: "granite basalt quartz"}}, Metadata: map[string]any{}})
	}
	if _, err := db.IngestBatch(ctx, admin, &pair, docs); err != nil {
		t.Fatal(err)
	}
	if err := db.SettleIndex(ctx); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"QUARRY_DATABASE_URL": u, "QUARRY_ENCRYPTION_KEY": key}
	out, _, err := rotateRun(t, vars, "check")
	if err != nil {
		t.Fatalf("check of a sound database: %v\n%s", err, out)
	}
	for _, want := range []string{"3 documents, 0 files.\n", "Search index: 3 documents, 3 chunks (0 pending, the rest in 1 live segment listing 3 chunks), " +
		"4 blocks of 12 postings; every document has its chunks; every chunk is pending or in one live segment; " +
		"every segment's norms and blocks decode and agree.\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("check's output lacks %q:\n%s", want, out)
		}
	}

	dialect, path, err := store.ParseURL(u)
	if err != nil {
		t.Fatal(err)
	}
	driver, source := "pgx", u
	if dialect == store.SQLite {
		driver, source = "sqlite", path
	}
	raw, err := sql.Open(driver, source)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var seg int64
	if err := raw.QueryRow(`SELECT id FROM search_segments WHERE state = 'live'`).Scan(&seg); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`UPDATE search_blocks SET postings = $1 WHERE segment_id = $2 AND term = 'basalt'`, []byte{0x05, 0x01}, seg); err != nil {
		t.Fatal(err)
	}
	damaged := fmt.Sprintf(`segment %d's block of term "basalt" does not decode`, seg)
	out, _, err = rotateRun(t, vars, "check")
	if err == nil || !strings.Contains(err.Error(), "the search index is damaged") || !strings.Contains(out, "Search index: 3 documents") ||
		!strings.Contains(out, "1 problem: "+damaged+".\n") {
		t.Errorf("check of a damaged index: %v\n%s", err, out)
	}
	if dialect != store.SQLite {
		return
	}
	copyPath := filepath.Join(t.TempDir(), "copy.db")
	out, _, err = rotateRun(t, vars, "backup", "-o", copyPath)
	if err == nil || !strings.Contains(err.Error(), "the copy failed its check") ||
		!strings.Contains(out, "3 documents, 0 files; 1 secret opens") || !strings.Contains(out, "The copy's search index: 3 documents") ||
		!strings.Contains(out, damaged) {
		t.Errorf("backup of a damaged index: %v\n%s", err, out)
	}
}
