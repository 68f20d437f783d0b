package store_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/index"
	"github.com/quarryhq/quarry/store/storetest"
)

// TestSearchIndex covers the index on the database the tests run on: a
// document is chunked and indexed with its write, an unchanged one is not
// written again, a changed one is re-chunked, a deleted pair takes its
// chunks along, documents written before the index are indexed by
// IndexMissing, and sync pairs show each document to those its connector
// says may read it; each with its chunks pending, and written into
// segments (MergeIndex) after every write.
func TestSearchIndex(t *testing.T) {
	for _, merged := range []bool{false, true} {
		t.Run(map[bool]string{false: "pending", true: "merged"}[merged], func(t *testing.T) { testSearchIndex(t, merged) })
	}
}

func testSearchIndex(t *testing.T, merged bool) {
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
	// Synced access reaches proven emails only (TestSyncedAccessNeedsProvenEmail):
	// these accounts stand for people whose provider vouched for theirs.
	if err := db.ExecForTest(ctx, `UPDATE users SET email_verified = TRUE`); err != nil {
		t.Fatal(err)
	}
	n := 0
	pair := func(access quarry.AccessType) (conn, cred, id int64) {
		t.Helper()
		n++
		conn, err := db.CreateConnector(ctx, admin, quarry.ConnectorInput{Name: fmt.Sprint("c", n), Source: "web", InputType: "poll",
			Config: json.RawMessage(`{}`), AccessType: quarry.AccessPublic, Groups: &[]int64{}})
		if err != nil {
			t.Fatal(err)
		}
		k, err := db.CreateCredential(ctx, admin, quarry.CredentialInput{Source: "web", CredentialJSON: map[string]any{"k": "v"}, AdminPublic: true})
		if err != nil {
			t.Fatal(err)
		}
		id, err = db.CreateCCPair(ctx, admin, conn, k.ID, quarry.CCPairInput{Name: fmt.Sprint("p", n), AccessType: access, Groups: []int64{}})
		if err != nil {
			t.Fatal(err)
		}
		return conn, k.ID, id
	}
	ingest := func(p int64, d quarry.Document) {
		t.Helper()
		if d.Metadata == nil {
			d.Metadata = map[string]any{}
		}
		if _, err := db.Ingest(ctx, admin, &p, &d); err != nil {
			t.Fatal(err)
		}
		if merged {
			if err := db.SettleIndex(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	search := func(c *quarry.Caller, q string) []string {
		t.Helper()
		hits, err := db.Search(ctx, c, index.ParseQuery(q), quarry.SearchFilters{}, 10)
		if err != nil {
			t.Fatal(err)
		}
		ids := []string{}
		for _, h := range hits {
			ids = append(ids, fmt.Sprintf("%s#%d", h.DocumentID, h.ChunkNo))
		}
		return ids
	}
	count := func(table string) int {
		t.Helper()
		var n int
		if err := db.QueryRowForTest(ctx, `SELECT COUNT(*) FROM `+table, &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	text := func(words ...string) []quarry.Section { return []quarry.Section{{Text: strings.Join(words, " ")}} }

	conn, cred, pub := pair(quarry.AccessPublic)
	long := strings.Repeat("filler ", index.ChunkWords) + "zircon"
	ingest(pub, quarry.Document{ID: "long", SemanticIdentifier: "Long", Source: "web", Sections: text(long)})
	if got := search(basic, "zircon"); !slices.Equal(got, []string{"long#1"}) {
		t.Errorf("the second chunk: %v", got)
	}
	if chunks := count("search_chunks"); chunks != 2 {
		t.Errorf("%d chunks, want 2", chunks)
	}

	t.Run("unchanged costs nothing, changed is re-chunked", func(t *testing.T) {
		ingest(pub, quarry.Document{ID: "long", SemanticIdentifier: "Long", Source: "web", Sections: text(long)})
		var maxID int64
		if err := db.QueryRowForTest(ctx, `SELECT MAX(id) FROM search_chunks`, &maxID); err != nil || maxID != 2 {
			t.Errorf("chunk ids up to %d (%v): the unchanged document was indexed again", maxID, err)
		}
		ingest(pub, quarry.Document{ID: "long", SemanticIdentifier: "Long", Source: "web", Sections: text("zircon", "only")})
		if got := search(basic, "zircon"); !slices.Equal(got, []string{"long#0"}) || count("search_chunks") != 1 {
			t.Errorf("re-chunked: %v, %d chunks", got, count("search_chunks"))
		}
		if got := search(basic, "filler"); len(got) != 0 {
			t.Errorf("the old text still found: %v", got)
		}
	})

	t.Run("sync pairs show what the connector reports", func(t *testing.T) {
		_, _, sync := pair(quarry.AccessSync)
		ingest(sync, quarry.Document{ID: "for-basic", SemanticIdentifier: "Basalt memo", Source: "web", Sections: text("basalt"),
			ExternalAccess: &quarry.ExternalAccess{ExternalUserEmails: []string{strings.ToUpper(basic.Email)}}})
		ingest(sync, quarry.Document{ID: "for-nobody", SemanticIdentifier: "Basalt secrets", Source: "web", Sections: text("basalt"),
			ExternalAccess: &quarry.ExternalAccess{ExternalUserEmails: []string{"someone@example.com"}, ExternalUserGroupIDs: []string{"g"}}})
		ingest(sync, quarry.Document{ID: "for-all", SemanticIdentifier: "Basalt news", Source: "web", Sections: text("basalt"),
			ExternalAccess: &quarry.ExternalAccess{IsPublic: true}})
		ingest(sync, quarry.Document{ID: "unreported", SemanticIdentifier: "Basalt", Source: "web", Sections: text("basalt")})
		got := search(basic, "basalt")
		slices.Sort(got)
		if want := []string{"for-all#0", "for-basic#0"}; !slices.Equal(got, want) {
			t.Errorf("basic: %v, want %v", got, want)
		}
		got = search(admin, "basalt")
		if want := []string{"for-all#0"}; !slices.Equal(got, want) {
			t.Errorf("admin: %v, want %v", got, want)
		}
		// A pair's documents, as the console lists them: the same
		// documents to whoever does not manage every connector.
		for _, tc := range []struct {
			c    *quarry.Caller
			want []string
		}{{basic, []string{"for-all", "for-basic"}}, {admin, []string{"for-all", "for-basic", "for-nobody", "unreported"}}} {
			docs, total, err := db.PairDocumentPage(ctx, tc.c, sync, 0, 10)
			var ids []string
			for _, d := range docs {
				ids = append(ids, d.DocumentID)
			}
			if err != nil || !slices.Equal(ids, tc.want) || total != int64(len(tc.want)) {
				t.Errorf("%s's page of the sync pair: %v of %d (%v), want %v", tc.c.Role, ids, total, err, tc.want)
			}
		}
		if _, err := db.PairDocumentText(ctx, basic, sync, "for-nobody"); !errors.Is(err, quarry.ErrPairDocumentNotFound) {
			t.Errorf("basic reads for-nobody's text: %v, want ErrPairDocumentNotFound", err)
		}
		if d, err := db.PairDocumentText(ctx, basic, sync, "for-basic"); err != nil || d.Text != "basalt" {
			t.Errorf("basic reads for-basic: %+v, %v", d, err)
		}
	})

	t.Run("documents from before the index", func(t *testing.T) {
		if err := db.ExecForTest(ctx, `DELETE FROM search_chunks`); err != nil {
			t.Fatal(err)
		}
		if got := search(basic, "zircon"); len(got) != 0 {
			t.Fatalf("found without chunks: %v", got)
		}
		if err := db.IndexMissing(ctx); err != nil {
			t.Fatal(err)
		}
		if got := search(basic, "zircon"); !slices.Equal(got, []string{"long#0"}) {
			t.Errorf("after IndexMissing: %v", got)
		}
	})

	t.Run("a deleted pair takes its chunks", func(t *testing.T) {
		if err := db.DeleteCCPair(ctx, admin, conn, cred); err != nil {
			t.Fatal(err)
		}
		if got := search(basic, "zircon"); len(got) != 0 {
			t.Errorf("after deletion: %v", got)
		}
		if left := count("search_chunks WHERE document_id = 'long'"); left != 0 {
			t.Errorf("%d chunks of the deleted pair left", left)
		}
	})

	t.Run("a limited caller and the directory may not search", func(t *testing.T) {
		limited := caller(quarry.RoleLimited, "limited")
		if _, err := db.Search(ctx, limited, index.ParseQuery("basalt"), quarry.SearchFilters{}, 10); quarry.ErrorCode(err) != quarry.EFORBIDDEN {
			t.Errorf("limited: %v", err)
		}
	})
}
