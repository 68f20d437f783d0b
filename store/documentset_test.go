package store_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/index"
	"github.com/quarryhq/quarry/store/storetest"
)

// TestDocumentSets covers what the store keeps of document sets and how
// searches are narrowed by them, on the database the tests run on: who
// makes, sees, changes and deletes which set, the checks of a write and
// its audit entry, a search by a set's name (the set's pairs, within what
// the person may read; a set the person may not see refused), by a set's
// id, whether sets are public, and what a pair's or a group's deletion
// does to the sets it was in. A set is searchable as soon as its write
// commits: nothing is written per document.
func TestDocumentSets(t *testing.T) {
	db := storetest.Open(t)
	admin := adminOf(t, db)
	key := func(role quarry.Role, name string) string {
		t.Helper()
		k, _, err := db.CreateAPIKey(ctx, nil, &name, role)
		if err != nil {
			t.Fatal(err)
		}
		return k.UserID
	}
	// caller authenticates user id anew, so that its memberships are
	// those of now.
	tokens := map[string]string{}
	caller := func(id string) *quarry.Caller {
		t.Helper()
		keys, err := db.APIKeys(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			if k.UserID == id && tokens[id] == "" {
				_, tokens[id], err = db.RegenerateAPIKey(ctx, admin, k.ID)
				if err != nil {
					t.Fatal(err)
				}
			}
		}
		c, err := db.Authenticate(ctx, quarry.HashAPIKey(tokens[id]))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	curatorID, memberID, outsiderID := key(quarry.RoleBasic, "curator"), key(quarry.RoleBasic, "member"), key(quarry.RoleBasic, "outsider")
	gA, err := db.CreateGroup(ctx, admin, quarry.UserGroupInput{Name: ptr("A"), UserIDs: []string{curatorID, memberID}, CCPairIDs: []int64{}})
	if err != nil {
		t.Fatal(err)
	}
	gB, err := db.CreateGroup(ctx, admin, quarry.UserGroupInput{Name: ptr("B"), UserIDs: []string{}, CCPairIDs: []int64{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SetCurator(ctx, admin, gA.ID, curatorID, true); err != nil {
		t.Fatal(err)
	}
	n := 0
	type pairOf struct{ conn, cred, id int64 }
	pair := func(access quarry.AccessType, groups ...int64) pairOf {
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
		id, err := db.CreateCCPair(ctx, admin, conn, k.ID, quarry.CCPairInput{Name: fmt.Sprint("p", n), AccessType: access, Groups: append([]int64{}, groups...)})
		if err != nil {
			t.Fatal(err)
		}
		d := quarry.Document{ID: fmt.Sprint("doc-", n), SemanticIdentifier: fmt.Sprint("Doc ", n), Source: "web",
			Sections: []quarry.Section{{Text: "quartz report"}}, Metadata: map[string]any{}}
		if _, err := db.Ingest(ctx, admin, &id, &d); err != nil {
			t.Fatal(err)
		}
		return pairOf{conn, k.ID, id}
	}
	pub, privA, privB := pair(quarry.AccessPublic), pair(quarry.AccessPrivate, gA.ID), pair(quarry.AccessPrivate, gB.ID)

	wantErr := func(err error, code, msg string) {
		t.Helper()
		if quarry.ErrorCode(err) != code || quarry.ErrorMessage(err) != msg {
			t.Errorf("got %v, want %s %q", err, code, msg)
		}
	}
	curator := caller(curatorID)
	setA, err := db.CreateDocumentSet(ctx, curator, quarry.DocumentSetInput{Name: "A docs", Description: "for A",
		PairIDs: []int64{privA.id, pub.id, privA.id}, Groups: []int64{gA.ID}})
	if err != nil {
		t.Fatal(err)
	}
	// A pair the curator does not see is as one that does not exist.
	_, err = db.CreateDocumentSet(ctx, curator, quarry.DocumentSetInput{Name: "B docs", PairIDs: []int64{privB.id}, Groups: []int64{gA.ID}})
	wantErr(err, quarry.EINVALID, fmt.Sprintf("CC pair %d does not exist", privB.id))
	// A private pair of group A in a set of group B, by an admin.
	_, err = db.CreateDocumentSet(ctx, admin, quarry.DocumentSetInput{Name: "B docs", PairIDs: []int64{privA.id}, Groups: []int64{gB.ID}})
	wantErr(err, quarry.EINVALID, fmt.Sprintf("Connector Credential Pair with ID: '%d' is not owned by the specified groups", privA.id))
	_, err = db.CreateDocumentSet(ctx, admin, quarry.DocumentSetInput{Name: "A docs", PairIDs: []int64{pub.id}, IsPublic: true})
	wantErr(err, quarry.ECONFLICT, "A document set named 'A docs' already exists")
	_, err = db.CreateDocumentSet(ctx, admin, quarry.DocumentSetInput{Name: "x", PairIDs: []int64{pub.id}, Users: []string{"00000000-0000-4000-8000-000000000000"}})
	wantErr(err, quarry.ENOTFOUND, "User(s) not found: 00000000-0000-4000-8000-000000000000")
	_, err = db.CreateDocumentSet(ctx, admin, quarry.DocumentSetInput{Name: "x", PairIDs: []int64{pub.id}, Groups: []int64{1}})
	wantErr(err, quarry.EINVALID, "Cannot share with the default system group(s): Admin. Make the resource public instead.")
	everyone, err := db.CreateDocumentSet(ctx, admin, quarry.DocumentSetInput{Name: "Everyone", PairIDs: []int64{pub.id, privB.id}, IsPublic: true})
	if err != nil {
		t.Fatal(err)
	}
	shared, err := db.CreateDocumentSet(ctx, admin, quarry.DocumentSetInput{Name: "Shared", PairIDs: []int64{pub.id}, Users: []string{outsiderID}})
	if err != nil {
		t.Fatal(err)
	}

	names := func(c *quarry.Caller, editable bool) []string {
		t.Helper()
		sets, err := db.DocumentSets(ctx, c, editable)
		if err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for _, s := range sets {
			out = append(out, s.Name)
		}
		return out
	}
	member, outsider := caller(memberID), caller(outsiderID)
	for _, tt := range []struct {
		who      string
		c        *quarry.Caller
		editable bool
		want     []string
	}{
		{"admin", admin, false, []string{"A docs", "Everyone", "Shared"}},
		{"admin", admin, true, []string{"A docs", "Everyone", "Shared"}},
		{"curator", curator, false, []string{"A docs", "Everyone"}},
		{"curator", curator, true, []string{"A docs"}},
		{"member", member, false, []string{"A docs", "Everyone"}},
		{"member", member, true, []string{}},
		{"outsider", outsider, false, []string{"Everyone", "Shared"}},
	} {
		if got := names(tt.c, tt.editable); !slices.Equal(got, tt.want) {
			t.Errorf("%s's sets (editable %t): %v, want %v", tt.who, tt.editable, got, tt.want)
		}
	}
	sets, err := db.DocumentSets(ctx, admin, false)
	if err != nil {
		t.Fatal(err)
	}
	if a := sets[0]; a.ID != setA || a.Description != "for A" || *a.OwnerID != curatorID || a.IsPublic || len(a.Pairs) != 2 ||
		a.Pairs[0].ID != pub.id || a.Pairs[0].Source != "web" || a.Pairs[0].AccessType != quarry.AccessPublic || a.Pairs[0].Name != "p1" ||
		a.Pairs[1].ID != privA.id || !slices.Equal(a.Groups, []int64{gA.ID}) || len(a.Users) != 0 {
		t.Errorf("set A: %+v", a)
	}

	search := func(c *quarry.Caller, f quarry.SearchFilters) ([]string, error) {
		t.Helper()
		hits, err := db.Search(ctx, c, index.ParseQuery("quartz"), f, 10)
		out := []string{}
		for _, h := range hits {
			out = append(out, h.DocumentID)
		}
		slices.Sort(out)
		return out, err
	}
	for _, tt := range []struct {
		who  string
		c    *quarry.Caller
		f    quarry.SearchFilters
		want []string
	}{
		{"member", member, quarry.SearchFilters{}, []string{"doc-1", "doc-2"}},
		{"member", member, quarry.SearchFilters{DocumentSets: []string{"A docs"}}, []string{"doc-1", "doc-2"}},
		// The set holds privB, which the member may not read: a set
		// narrows, it never widens.
		{"member", member, quarry.SearchFilters{DocumentSets: []string{"Everyone"}}, []string{"doc-1"}},
		// The admin made the pairs' credentials, which opens them.
		{"admin", admin, quarry.SearchFilters{DocumentSets: []string{"Everyone"}}, []string{"doc-1", "doc-3"}},
		{"outsider", outsider, quarry.SearchFilters{DocumentSets: []string{"Shared", "Everyone"}}, []string{"doc-1"}},
		// By id (an assistant's sets): the pairs of the set, within what
		// the person reads.
		{"outsider", outsider, quarry.SearchFilters{DocumentSetIDs: []int64{setA}}, []string{"doc-1"}},
		{"member", member, quarry.SearchFilters{DocumentSetIDs: []int64{setA, everyone}}, []string{"doc-1", "doc-2"}},
		{"member", member, quarry.SearchFilters{DocumentSetIDs: []int64{999}}, []string{}},
	} {
		got, err := search(tt.c, tt.f)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("%s searches %+v: %v %v, want %v", tt.who, tt.f, got, err, tt.want)
		}
	}
	_, err = search(outsider, quarry.SearchFilters{DocumentSets: []string{"A docs", "Everyone", "nope"}})
	wantErr(err, quarry.EFORBIDDEN, "User does not have access to document sets: ['A docs', 'nope']")
	// An empty query names its sets all the same.
	_, err = db.Search(ctx, outsider, index.ParseQuery(""), quarry.SearchFilters{DocumentSets: []string{"A docs"}}, 10)
	wantErr(err, quarry.EFORBIDDEN, "User does not have access to document sets: ['A docs']")
	wantErr(db.CheckDocumentSetNames(ctx, outsider, []string{"A docs"}), quarry.EFORBIDDEN, "User does not have access to document sets: ['A docs']")
	if err := db.CheckDocumentSetNames(ctx, member, []string{"A docs", "Everyone"}); err != nil {
		t.Errorf("the member's sets: %v", err)
	}

	for _, tt := range []struct {
		c    *quarry.Caller
		ids  []int64
		want bool
	}{
		{admin, []int64{setA}, false},
		{admin, []int64{shared}, true},
		{admin, []int64{shared, everyone}, false},
		{admin, []int64{}, true},
		{outsider, []int64{setA, shared}, true}, // Set A is not the outsider's to see.
	} {
		if got, err := db.DocumentSetsArePublic(ctx, tt.c, tt.ids); err != nil || got != tt.want {
			t.Errorf("sets %v public for %s: %t %v", tt.ids, tt.c.Email, got, err)
		}
	}

	// A change replaces the whole set and is searched at once.
	err = db.UpdateDocumentSet(ctx, member, quarry.DocumentSetInput{ID: setA, Name: "A only", Description: "", PairIDs: []int64{privA.id}, Groups: []int64{gA.ID}})
	wantErr(err, quarry.EFORBIDDEN, "Curators can only change what is shared with groups they curate")
	err = db.UpdateDocumentSet(ctx, outsider, quarry.DocumentSetInput{ID: setA, Name: "A only", PairIDs: []int64{privA.id}})
	wantErr(err, quarry.ENOTFOUND, fmt.Sprintf("Document set %d does not exist", setA))
	err = db.UpdateDocumentSet(ctx, curator, quarry.DocumentSetInput{ID: setA, Name: "A only", PairIDs: []int64{privA.id}, Groups: []int64{gA.ID, gB.ID}})
	wantErr(err, quarry.EFORBIDDEN, "You can only share with groups you curate")
	err = db.UpdateDocumentSet(ctx, curator, quarry.DocumentSetInput{ID: setA, Name: "Everyone", PairIDs: []int64{privA.id}, Groups: []int64{gA.ID}})
	wantErr(err, quarry.ECONFLICT, "A document set named 'Everyone' already exists")
	if err := db.UpdateDocumentSet(ctx, curator, quarry.DocumentSetInput{ID: setA, Name: "A only", PairIDs: []int64{privA.id}, Groups: []int64{gA.ID}}); err != nil {
		t.Fatal(err)
	}
	if got, err := search(member, quarry.SearchFilters{DocumentSets: []string{"A only"}}); err != nil || !slices.Equal(got, []string{"doc-2"}) {
		t.Errorf("the renamed set: %v %v", got, err)
	}
	_, err = search(member, quarry.SearchFilters{DocumentSets: []string{"A docs"}})
	wantErr(err, quarry.EFORBIDDEN, "User does not have access to document sets: ['A docs']")

	// A pair's deletion leaves the sets it was in; a group's, the sets
	// shared with it.
	if err := db.DeleteCCPair(ctx, admin, privA.conn, privA.cred); err != nil {
		t.Fatal(err)
	}
	if got, err := search(member, quarry.SearchFilters{DocumentSets: []string{"A only"}}); err != nil || len(got) != 0 {
		t.Errorf("a set of no pair finds: %v %v", got, err)
	}
	if err := db.DeleteGroup(ctx, admin, gA.ID); err != nil {
		t.Fatal(err)
	}
	sets, err = db.DocumentSets(ctx, admin, false)
	if err != nil {
		t.Fatal(err)
	}
	if a := sets[0]; a.Name != "A only" || len(a.Pairs) != 0 || len(a.Groups) != 0 {
		t.Errorf("set A after its pair and group went: %+v", a)
	}
	if got := names(caller(memberID), false); !slices.Equal(got, []string{"Everyone"}) {
		t.Errorf("the member's sets once group A is gone: %v", got)
	}

	// Deleting: its maker may (no longer a curator of any group), others
	// may not see it.
	wantErr(db.DeleteDocumentSet(ctx, caller(outsiderID), setA), quarry.ENOTFOUND, fmt.Sprintf("Document set %d does not exist", setA))
	if err := db.DeleteDocumentSet(ctx, caller(curatorID), setA); err != nil {
		t.Fatal(err)
	}
	wantErr(db.DeleteDocumentSet(ctx, admin, setA), quarry.ENOTFOUND, fmt.Sprintf("Document set %d does not exist", setA))
	if got := names(admin, false); !slices.Equal(got, []string{"Everyone", "Shared"}) {
		t.Errorf("the sets after the deletion: %v", got)
	}
	var rows int
	if err := db.QueryRowForTest(ctx, fmt.Sprintf(`SELECT COUNT(*) FROM document_set_pairs WHERE document_set_id = %d`, setA), &rows); err != nil || rows != 0 {
		t.Errorf("the deleted set's pairs: %d %v", rows, err)
	}

	events, _, err := db.AuditEvents(ctx, quarry.AuditFilter{ResourceType: ptr("document_set")})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range events {
		got = append(got, fmt.Sprintf("%s %s %v", e.Action, e.ResourceID, e.Fields))
	}
	want := []string{
		fmt.Sprintf("document_set.delete %d []", setA),
		fmt.Sprintf("document_set.update %d [name description cc_pair_ids]", setA),
		fmt.Sprintf("document_set.create %d [name description cc_pair_ids is_public users groups]", shared),
		fmt.Sprintf("document_set.create %d [name description cc_pair_ids is_public users groups]", everyone),
		fmt.Sprintf("document_set.create %d [name description cc_pair_ids is_public users groups]", setA),
	}
	if !slices.Equal(got, want) {
		t.Errorf("the audit log:\n got %q\nwant %q", got, want)
	}
}
