package store_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/index"
	"github.com/quarryhq/quarry/store/storetest"
)

// TestTags covers the tags of documents: each key and value once by
// source and list-ness, shared by the documents carrying it, replaced
// with a document's metadata; and valid-tags' matching (Onyx's get_tags):
// a prefix of the key or of the value, "key=value" for both, whatever the
// case, narrowed to sources, bounded by its limit, each key, value and
// source once; and the search's filter by tags.
func TestTags(t *testing.T) {
	db := storetest.Open(t)
	caller := func(role quarry.Role, name string) *quarry.Caller {
		t.Helper()
		_, token, err := db.CreateAPIKey(ctx, nil, &name, role)
		if err != nil {
			t.Fatal(err)
		}
		c, err := db.Authenticate(ctx, quarry.HashAPIKey(token))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	admin, basic := caller(quarry.RoleAdmin, "admin"), caller(quarry.RoleBasic, "basic")
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
	push := func(id string, source quarry.DocumentSource, meta map[string]any) {
		t.Helper()
		d := quarry.Document{ID: id, SemanticIdentifier: id, Source: source, Metadata: quarry.CoerceMetadata(meta),
			Sections: []quarry.Section{{Text: "granite " + id}}}
		if _, err := db.Ingest(ctx, admin, &pair, &d); err != nil {
			t.Fatal(err)
		}
	}
	kept := func(id string) []quarry.Tag {
		t.Helper()
		tags, err := db.DocumentTags(ctx, pair, id)
		if err != nil {
			t.Fatal(err)
		}
		return tags
	}
	str := func(tags []quarry.Tag) string {
		var out []string
		for _, t := range tags {
			s := t.Key + "=" + t.Value + "@" + string(t.Source)
			if t.IsList {
				s += "[]"
			}
			out = append(out, s)
		}
		return strings.Join(out, " ")
	}

	push("d1", "web", map[string]any{"Author": "Bob", "team": []any{"ops", "dev"}, "same": "x", "long": strings.Repeat("é", 252)})
	push("d2", "web", map[string]any{"author": "bob", "team": []any{"ops"}, "same": []any{"x"}, "topic": "author=bo"})
	push("d3", "slack", map[string]any{"author": "Bob"})
	if got, want := str(kept("d1")), "Author=Bob@web same=x@web team=dev@web[] team=ops@web[]"; got != want {
		t.Errorf("d1's tags: %s, want %s (a key and value over 255 characters is no tag)", got, want)
	}
	if got, want := str(kept("d2")), "author=bob@web same=x@web[] team=ops@web[] topic=author=bo@web"; got != want {
		t.Errorf("d2's tags: %s, want %s", got, want)
	}
	id := func(doc, key, value string) int64 {
		for _, t := range kept(doc) {
			if t.Key == key && t.Value == value {
				return t.ID
			}
		}
		return 0
	}
	if a, b := id("d1", "team", "ops"), id("d2", "team", "ops"); a == 0 || a != b {
		t.Errorf("team=ops is tag %d of d1 and %d of d2: one tag, shared", a, b)
	}
	if a, b := id("d1", "same", "x"), id("d2", "same", "x"); a == 0 || b == 0 || a == b {
		t.Errorf("same=x is tag %d of d1 (a value) and %d of d2 (a list's): two tags", a, b)
	}

	valid := func(c *quarry.Caller, pattern string, sources []quarry.DocumentSource, limit int) string {
		t.Helper()
		tags, err := db.ValidTags(ctx, c, quarry.ParseTagQuery(pattern, sources, limit))
		if err != nil {
			t.Fatal(err)
		}
		return str(tags)
	}
	for _, tc := range []struct {
		pattern string
		sources []quarry.DocumentSource
		limit   int
		want    string
	}{
		// By the key's folded prefix, then the value's; in each, the
		// order of the folded key and value; same=x once (a value and a
		// list's item are one key and value of one source).
		{"", nil, 50, "Author=Bob@web author=bob@web author=Bob@slack same=x@web team=dev@web[] team=ops@web[] topic=author=bo@web"},
		{"AU", nil, 50, "Author=Bob@web author=bob@web author=Bob@slack topic=author=bo@web"},
		{"bo", nil, 50, "Author=Bob@web author=bob@web author=Bob@slack"},
		{"o", nil, 50, "team=ops@web[]"},
		{"author=b", nil, 50, "Author=Bob@web author=bob@web author=Bob@slack"},
		{"=bo", nil, 50, "Author=Bob@web author=bob@web author=Bob@slack"},
		{"topic=author=", nil, 50, "topic=author=bo@web"},
		{"author=x", nil, 50, ""},
		{"au", []quarry.DocumentSource{"slack"}, 50, "author=Bob@slack"},
		{"", nil, 2, "Author=Bob@web author=bob@web"},
		{"%", nil, 50, ""}, // No wildcards: a prefix is a prefix.
		{"t", nil, 3, "team=dev@web[] team=ops@web[] topic=author=bo@web"},
	} {
		if got := valid(basic, tc.pattern, tc.sources, tc.limit); got != tc.want {
			t.Errorf("valid-tags %q %v limit %d: %s, want %s", tc.pattern, tc.sources, tc.limit, got, tc.want)
		}
	}

	// A document's new metadata replaces its tags; a tag no document
	// carries any more is listed to no one.
	push("d1", "web", map[string]any{"Author": "Ann"})
	if got, want := str(kept("d1")), "Author=Ann@web"; got != want {
		t.Errorf("d1's new tags: %s, want %s", got, want)
	}
	if got, want := valid(basic, "team", nil, 50), "team=ops@web[]"; got != want {
		t.Errorf("valid-tags team: %s, want %s", got, want)
	}
	if got, want := valid(basic, "author=", nil, 50), "Author=Ann@web author=bob@web author=Bob@slack"; got != want {
		t.Errorf("valid-tags author=: %s, want %s", got, want)
	}

	// Migration 00025 gives the documents indexed before it their tags:
	// the same as indexing gives them (ASCII keys and values here).
	t.Run("the migration's tags", func(t *testing.T) {
		before := str(kept("d1")) + "|" + str(kept("d2")) + "|" + str(kept("d3"))
		b, err := os.ReadFile(filepath.Join("migrations", db.Dialect(), "00025_tags.sql"))
		if err != nil {
			t.Fatal(err)
		}
		up := string(b)
		up = up[strings.Index(up, "-- The tags of the documents indexed so far"):strings.Index(up, "-- +goose Down")]
		for _, stmt := range []string{`UPDATE search_tags SET tag_id = NULL`, `DELETE FROM tags`, up} {
			if err := db.ExecForTest(ctx, stmt); err != nil {
				t.Fatalf("%s: %v", stmt, err)
			}
		}
		if after := str(kept("d1")) + "|" + str(kept("d2")) + "|" + str(kept("d3")); after != before {
			t.Errorf("after the migration: %s, indexed: %s", after, before)
		}
	})

	// The search's filter: any of the tags, whether from a list or not.
	for _, tc := range []struct {
		tags [][2]string
		want []string
	}{
		{[][2]string{{"same", "x"}}, []string{"d2"}},
		{[][2]string{{"author", "Bob"}, {"Author", "Ann"}}, []string{"d1", "d3"}},
		{[][2]string{{"author", "BOB"}}, []string{}}, // The filter is exact.
	} {
		hits, err := db.Search(ctx, basic, index.ParseQuery("granite"), quarry.SearchFilters{Tags: tc.tags}, 10)
		if err != nil {
			t.Fatal(err)
		}
		got := []string{}
		for _, h := range hits {
			got = append(got, h.DocumentID)
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("a search by %v: %v, want %v", tc.tags, got, tc.want)
		}
	}
}

// TestValidTagsWalksPages: valid-tags finds the tags a caller may see past
// the first page of the index's walk (tagPage), when the tags before them
// are all of documents the caller may not read.
func TestValidTagsWalksPages(t *testing.T) {
	db := storetest.Open(t)
	admin := adminOf(t, db)
	_, token, err := db.CreateAPIKey(ctx, nil, ptr("reader"), quarry.RoleBasic)
	if err != nil {
		t.Fatal(err)
	}
	reader, err := db.Authenticate(ctx, quarry.HashAPIKey(token))
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
	g, err := db.CreateGroup(ctx, admin, quarry.UserGroupInput{Name: ptr("closed"), UserIDs: []string{}, CCPairIDs: []int64{}})
	if err != nil {
		t.Fatal(err)
	}
	closed, err := db.CreateCCPair(ctx, admin, conn, k.ID, quarry.CCPairInput{Name: "closed", AccessType: quarry.AccessPrivate, Groups: []int64{g.ID}})
	if err != nil {
		t.Fatal(err)
	}
	k2, err := db.CreateCredential(ctx, admin, quarry.CredentialInput{Source: "web", CredentialJSON: map[string]any{"k": "w"}, AdminPublic: true})
	if err != nil {
		t.Fatal(err)
	}
	open, err := db.CreateCCPair(ctx, admin, conn, k2.ID, quarry.CCPairInput{Name: "open", AccessType: quarry.AccessPublic, Groups: []int64{}})
	if err != nil {
		t.Fatal(err)
	}
	var hidden []quarry.Document
	for i := range 700 { // More than two pages of tags before the open ones.
		hidden = append(hidden, quarry.Document{ID: fmt.Sprint("h", i), SemanticIdentifier: "h", Source: "web",
			Sections: []quarry.Section{{Text: "granite"}}, Metadata: map[string]any{"n": fmt.Sprintf("a%03d", i)}})
	}
	if _, err := db.IngestBatch(ctx, admin, &closed, hidden); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"z2", "z1"} {
		d := quarry.Document{ID: v, SemanticIdentifier: v, Source: "web", Sections: []quarry.Section{{Text: "granite"}}, Metadata: map[string]any{"n": v}}
		if _, err := db.Ingest(ctx, admin, &open, &d); err != nil {
			t.Fatal(err)
		}
	}
	for _, pattern := range []string{"", "n", "z", "n=z"} {
		tags, err := db.ValidTags(ctx, reader, quarry.ParseTagQuery(pattern, nil, 1))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, tg := range tags {
			got = append(got, tg.Key+"="+tg.Value)
		}
		if want := "n=z1"; strings.Join(got, " ") != want {
			t.Errorf("pattern %q, limit 1: %v, want %s", pattern, got, want)
		}
	}
	tags, err := db.ValidTags(ctx, admin, quarry.ParseTagQuery("n=a69", nil, 0))
	if err != nil || len(tags) != 10 {
		t.Errorf("the admin's tags n=a69…: %d, %v", len(tags), err)
	}
}
