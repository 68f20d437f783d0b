package store_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/index"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/storetest"
)

// TestPermissionSync checks the syncs of a sync pair through the store's
// worker protocol, and the rule of search they feed: a person in a group
// a document's access names finds it once a group sync lists them, and no
// longer once the next group sync drops them; a permission sync that
// narrows a document's emails hides it from the next search, leaves the
// documents it did not list as they were and ignores ids the pair does not
// hold; what a sync reported is not seen until the sync ends in success;
// a failed sync changes nothing. The listings of a pair's documents agree
// (the one rule).
func TestPermissionSync(t *testing.T) {
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
	admin := caller(quarry.RoleAdmin, "admin")
	ann, bob := person(t, db, "ann@corp.example", true), person(t, db, "bob@corp.example", true)
	conn, err := db.CreateConnector(ctx, admin, quarry.ConnectorInput{Name: "repos", Source: "github", InputType: "poll",
		Config: json.RawMessage(`{}`), AccessType: quarry.AccessSync, Groups: &[]int64{}})
	if err != nil {
		t.Fatal(err)
	}
	k, err := db.CreateCredential(ctx, admin, quarry.CredentialInput{Source: "github", CredentialJSON: map[string]any{"k": "v"}, AdminPublic: true})
	if err != nil {
		t.Fatal(err)
	}
	pair, err := db.CreateCCPair(ctx, admin, conn, k.ID, quarry.CCPairInput{Name: "repos", AccessType: quarry.AccessSync, Groups: []int64{}})
	if err != nil {
		t.Fatal(err)
	}
	docs := []quarry.Document{
		{ID: "team-doc", ExternalAccess: &quarry.ExternalAccess{ExternalUserGroupIDs: []string{"eng"}}},
		{ID: "mail-doc", ExternalAccess: &quarry.ExternalAccess{ExternalUserEmails: []string{ann.Email, bob.Email}}},
	}
	for i := range docs {
		docs[i].SemanticIdentifier, docs[i].Source, docs[i].Metadata = "Quartz "+docs[i].ID, "github", map[string]any{}
		docs[i].Sections = []quarry.Section{{Text: "quartz"}}
		if _, err := db.Ingest(ctx, admin, &pair, &docs[i]); err != nil {
			t.Fatal(err)
		}
	}
	_, worker, err := db.StartInProcessWorker(ctx, "test")
	if err != nil {
		t.Fatal(err)
	}
	// found returns the documents c finds, and checks that the pair's
	// listing shows c the same.
	found := func(t *testing.T, c *quarry.Caller) []string {
		t.Helper()
		hits, err := db.Search(ctx, c, index.ParseQuery("quartz"), quarry.SearchFilters{}, 10)
		if err != nil {
			t.Fatal(err)
		}
		ids := []string{}
		for _, h := range hits {
			ids = append(ids, h.DocumentID)
		}
		slices.Sort(ids)
		page, _, err := db.PairDocumentPage(ctx, c, pair, 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		listed := []string{}
		for _, d := range page {
			listed = append(listed, d.DocumentID)
		}
		if !slices.Equal(ids, listed) {
			t.Errorf("%s finds %v but the pair's page lists %v", c.Email, ids, listed)
		}
		return ids
	}
	want := func(t *testing.T, c *quarry.Caller, ids ...string) {
		t.Helper()
		if ids == nil {
			ids = []string{}
		}
		if got := found(t, c); !slices.Equal(got, ids) {
			t.Errorf("%s finds %v, want %v", c.Email, got, ids)
		}
	}
	// start asks for a sync of kind and leases it (an indexing run the
	// pair is due for first ends in success), and reports p.
	start := func(t *testing.T, kind quarry.AttemptKind, p quarry.Progress) int64 {
		t.Helper()
		if err := db.RequestSync(ctx, admin, pair, kind); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if _, err := db.Schedule(ctx); err != nil {
				t.Fatal(err)
			}
			l, err := db.LeaseAttempt(ctx, worker)
			if err != nil || l == nil {
				t.Fatalf("lease: %v, %v", l, err)
			}
			if l.Kind == quarry.AttemptIndex {
				if _, err := db.FinishAttempt(ctx, worker, l.AttemptID, quarry.Finish{Status: quarry.IndexSuccess}); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if l.Kind != kind {
				t.Fatalf("leased a %s, want a %s", l.Kind, kind)
			}
			if _, err := db.ReportProgress(ctx, worker, l.AttemptID, &p); err != nil {
				t.Fatal(err)
			}
			return l.AttemptID
		}
		t.Fatal("no sync leased")
		return 0
	}
	end := func(t *testing.T, id int64, status quarry.IndexingStatus) {
		t.Helper()
		if _, err := db.FinishAttempt(ctx, worker, id, quarry.Finish{Status: status}); err != nil {
			t.Fatal(err)
		}
	}
	groups := func(members ...string) quarry.Progress {
		return quarry.Progress{Groups: []quarry.ExternalGroup{{ID: "eng", UserEmails: members}, {ID: "ops", UserEmails: []string{bob.Email}}}}
	}

	want(t, ann, "mail-doc")
	want(t, bob, "mail-doc")
	t.Run("a group sync opens a group's documents to its members", func(t *testing.T) {
		id := start(t, quarry.AttemptGroupSync, groups(strings.ToUpper(ann.Email)))
		want(t, ann, "mail-doc") // Reported, not yet applied.
		if err := db.RequestSync(ctx, admin, pair, quarry.AttemptGroupSync); !errors.Is(err, quarry.ErrGroupSyncInProgress) {
			t.Errorf("a second group sync: %v, want ErrGroupSyncInProgress", err)
		}
		end(t, id, quarry.IndexSuccess)
		want(t, ann, "mail-doc", "team-doc")
		want(t, bob, "mail-doc")
		if last, err := db.LastSynced(ctx, admin, pair, quarry.AttemptGroupSync); err != nil || last == nil {
			t.Errorf("last group sync %v (%v), want a time", last, err)
		}
	})
	t.Run("a failed group sync changes nothing", func(t *testing.T) {
		end(t, start(t, quarry.AttemptGroupSync, groups(bob.Email)), quarry.IndexFailed)
		want(t, ann, "mail-doc", "team-doc")
		want(t, bob, "mail-doc")
	})
	t.Run("the next group sync that drops a member closes the documents to them", func(t *testing.T) {
		end(t, start(t, quarry.AttemptGroupSync, groups(bob.Email)), quarry.IndexSuccess)
		want(t, ann, "mail-doc")
		want(t, bob, "mail-doc", "team-doc")
	})
	t.Run("a permission sync replaces the access of the documents it lists", func(t *testing.T) {
		if last, err := db.LastSynced(ctx, admin, pair, quarry.AttemptPermissionSync); err != nil || last != nil {
			t.Errorf("last permission sync %v (%v), want none", last, err)
		}
		id := start(t, quarry.AttemptPermissionSync, quarry.Progress{Access: []quarry.DocumentAccess{
			{DocumentID: "mail-doc", ExternalAccess: quarry.ExternalAccess{ExternalUserEmails: []string{ann.Email}}},
			{DocumentID: "not-held", ExternalAccess: quarry.ExternalAccess{IsPublic: true}},
		}})
		want(t, bob, "mail-doc", "team-doc")
		end(t, id, quarry.IndexSuccess)
		want(t, ann, "mail-doc")
		want(t, bob, "team-doc") // team-doc, not listed, keeps its group.
		var n int
		if err := db.QueryRowForTest(ctx, `SELECT COUNT(*) FROM search_document_access WHERE document_id = 'not-held'`, &n); err != nil || n != 0 {
			t.Errorf("%d rows of access for a document the pair does not hold (%v)", n, err)
		}
		for _, table := range []string{"perm_sync_listed", "perm_sync_access", "group_sync_listed"} {
			if err := db.QueryRowForTest(ctx, `SELECT COUNT(*) FROM `+table, &n); err != nil || n != 0 {
				t.Errorf("%d rows left in %s (%v)", n, table, err)
			}
		}
	})
	t.Run("a document's access split across reports is their union", func(t *testing.T) {
		if err := db.RequestSync(ctx, admin, pair, quarry.AttemptPermissionSync); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Schedule(ctx); err != nil {
			t.Fatal(err)
		}
		l, err := db.LeaseAttempt(ctx, worker)
		if err != nil || l == nil || l.Kind != quarry.AttemptPermissionSync {
			t.Fatalf("lease: %+v, %v", l, err)
		}
		for _, e := range []string{ann.Email, bob.Email} {
			if _, err := db.ReportProgress(ctx, worker, l.AttemptID, &quarry.Progress{Access: []quarry.DocumentAccess{
				{DocumentID: "team-doc", ExternalAccess: quarry.ExternalAccess{ExternalUserEmails: []string{e}}}}}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := db.ReportProgress(ctx, worker, l.AttemptID, &quarry.Progress{ListedIDs: []string{"x"}}); !errors.Is(err, quarry.ErrSyncProgressKind) {
			t.Errorf("a permission sync reporting listed ids: %v, want ErrSyncProgressKind", err)
		}
		end(t, l.AttemptID, quarry.IndexSuccess)
		want(t, ann, "mail-doc", "team-doc")
		want(t, bob, "team-doc")
	})
}

// person returns the caller of the person with email who signs in with an
// OpenID provider that says (verified) or does not say the email is
// verified, making their account at the first sign-in.
func person(t *testing.T, db *store.DB, email string, verified bool) *quarry.Caller {
	t.Helper()
	c, err := db.IdentityCaller(ctx, &quarry.Identity{Issuer: "https://idp.example", Subject: email, Email: email,
		EmailVerified: verified, Role: quarry.RoleBasic})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSyncedAccessNeedsProvenEmail checks that synced access reaches only
// accounts whose email somebody proved: a person whose provider did not
// say their email is verified finds, of a sync pair's documents that name
// their email or a group listing it, only the public one, until a sign-in
// whose provider says it is verified. Which accounts are proven: those
// the directory makes, those registered with their invitation's link,
// those a provider vouched for; not an open registration, the first
// person of a database, a service account.
func TestSyncedAccessNeedsProvenEmail(t *testing.T) {
	db := storetest.Open(t)
	proven := func(t *testing.T, email string) bool {
		t.Helper()
		var v bool
		if err := db.QueryRowForTest(ctx, `SELECT email_verified FROM users WHERE email_key = '`+quarry.EmailKey(email)+`'`, &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	open := &quarry.RegistrationPolicy{Mode: quarry.RegistrationOpen}
	first, err := db.Register(ctx, "first@corp.example", nil, "h", "", open)
	if err != nil {
		t.Fatal(err)
	}
	admin := &quarry.Caller{User: *first}
	if _, err := db.Register(ctx, "open@corp.example", nil, "h", "", open); err != nil {
		t.Fatal(err)
	}
	links, err := db.IssueInvitations(ctx, admin, []string{"invited@corp.example"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Register(ctx, "invited@corp.example", nil, "h", links[0].Token, open); err != nil {
		t.Fatal(err)
	}
	_, token, err := db.CreateSCIMToken(ctx, admin, "okta")
	if err != nil {
		t.Fatal(err)
	}
	dir, err := db.SCIMCaller(ctx, quarry.HashToken(token))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateDirectoryUser(ctx, dir, &quarry.DirectoryUser{UserName: "dir@corp.example",
		Emails: []quarry.DirectoryEmail{{Value: "dir@corp.example", Primary: true}}, Active: true}, nil); err != nil {
		t.Fatal(err)
	}
	name := "robot"
	_, robot, err := db.CreateAPIKey(ctx, admin, &name, quarry.RoleBasic)
	if err != nil {
		t.Fatal(err)
	}
	service, err := db.Authenticate(ctx, quarry.HashAPIKey(robot))
	if err != nil {
		t.Fatal(err)
	}
	carl := person(t, db, "carl@corp.example", false)
	for email, want := range map[string]bool{"first@corp.example": false, "open@corp.example": false, "invited@corp.example": true,
		"dir@corp.example": true, "carl@corp.example": false, service.Email: false} {
		if got := proven(t, email); got != want {
			t.Errorf("%s: email proven %v, want %v", email, got, want)
		}
	}

	conn, err := db.CreateConnector(ctx, admin, quarry.ConnectorInput{Name: "repos", Source: "github", InputType: "poll",
		Config: json.RawMessage(`{}`), AccessType: quarry.AccessSync, Groups: &[]int64{}})
	if err != nil {
		t.Fatal(err)
	}
	k, err := db.CreateCredential(ctx, admin, quarry.CredentialInput{Source: "github", CredentialJSON: map[string]any{"k": "v"}, AdminPublic: true})
	if err != nil {
		t.Fatal(err)
	}
	pair, err := db.CreateCCPair(ctx, admin, conn, k.ID, quarry.CCPairInput{Name: "repos", AccessType: quarry.AccessSync, Groups: []int64{}})
	if err != nil {
		t.Fatal(err)
	}
	for id, a := range map[string]quarry.ExternalAccess{
		"mail-doc":   {ExternalUserEmails: []string{"carl@corp.example"}},
		"team-doc":   {ExternalUserGroupIDs: []string{"eng"}},
		"public-doc": {IsPublic: true},
	} {
		d := quarry.Document{ID: id, SemanticIdentifier: id, Source: "github", Metadata: map[string]any{},
			Sections: []quarry.Section{{Text: "quartz"}}, ExternalAccess: &a}
		if _, err := db.Ingest(ctx, admin, &pair, &d); err != nil {
			t.Fatal(err)
		}
	}
	_, worker, err := db.StartInProcessWorker(ctx, "test")
	if err != nil {
		t.Fatal(err)
	}
	if err := db.RequestSync(ctx, admin, pair, quarry.AttemptGroupSync); err != nil {
		t.Fatal(err)
	}
	for synced := false; !synced; {
		if _, err := db.Schedule(ctx); err != nil {
			t.Fatal(err)
		}
		l, err := db.LeaseAttempt(ctx, worker)
		if err != nil || l == nil {
			t.Fatalf("lease: %v, %v", l, err)
		}
		if l.Kind == quarry.AttemptGroupSync {
			synced = true
			if _, err := db.ReportProgress(ctx, worker, l.AttemptID, &quarry.Progress{Groups: []quarry.ExternalGroup{
				{ID: "eng", UserEmails: []string{"carl@corp.example"}}}}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := db.FinishAttempt(ctx, worker, l.AttemptID, quarry.Finish{Status: quarry.IndexSuccess}); err != nil {
			t.Fatal(err)
		}
	}
	found := func(t *testing.T, c *quarry.Caller) []string {
		t.Helper()
		hits, err := db.Search(ctx, c, index.ParseQuery("quartz"), quarry.SearchFilters{}, 10)
		if err != nil {
			t.Fatal(err)
		}
		ids := []string{}
		for _, h := range hits {
			ids = append(ids, h.DocumentID)
		}
		slices.Sort(ids)
		return ids
	}
	if got := found(t, carl); !slices.Equal(got, []string{"public-doc"}) {
		t.Errorf("carl, his email unproven, finds %v; want only public-doc", got)
	}
	carl = person(t, db, "carl@corp.example", true)
	if got := found(t, carl); !slices.Equal(got, []string{"mail-doc", "public-doc", "team-doc"}) {
		t.Errorf("carl, his email proven at his next sign-in, finds %v", got)
	}
}

// syncedPair makes a sync pair named name of a GitHub connector holding
// docs (each with the text "quartz" and the access given), as admin, and
// returns it and its credential.
func syncedPair(t *testing.T, db *store.DB, admin *quarry.Caller, name string, docs map[string]quarry.ExternalAccess) (pair, credential int64) {
	t.Helper()
	conn, err := db.CreateConnector(ctx, admin, quarry.ConnectorInput{Name: name, Source: "github", InputType: "poll",
		Config: json.RawMessage(`{}`), AccessType: quarry.AccessSync, Groups: &[]int64{}})
	if err != nil {
		t.Fatal(err)
	}
	k, err := db.CreateCredential(ctx, admin, quarry.CredentialInput{Source: "github", CredentialJSON: map[string]any{"k": name}, AdminPublic: true})
	if err != nil {
		t.Fatal(err)
	}
	pair, err = db.CreateCCPair(ctx, admin, conn, k.ID, quarry.CCPairInput{Name: name, AccessType: quarry.AccessSync, Groups: []int64{}})
	if err != nil {
		t.Fatal(err)
	}
	for id, a := range docs {
		d := quarry.Document{ID: id, SemanticIdentifier: id, Source: "github", Metadata: map[string]any{},
			Sections: []quarry.Section{{Text: "quartz"}}, ExternalAccess: &a}
		if _, err := db.Ingest(ctx, admin, &pair, &d); err != nil {
			t.Fatal(err)
		}
	}
	return pair, k.ID
}

// runSync asks for a sync of kind of pair, leases it (first ending in
// success any other attempt the pair is due for), reports p and ends it
// in status.
func runSync(t *testing.T, db *store.DB, admin *quarry.Caller, worker, pair int64, kind quarry.AttemptKind, p quarry.Progress, status quarry.IndexingStatus) {
	t.Helper()
	if err := db.RequestSync(ctx, admin, pair, kind); err != nil {
		t.Fatal(err)
	}
	for range 4 {
		if _, err := db.Schedule(ctx); err != nil {
			t.Fatal(err)
		}
		l, err := db.LeaseAttempt(ctx, worker)
		if err != nil || l == nil {
			t.Fatalf("lease: %v, %v", l, err)
		}
		st := quarry.IndexSuccess
		if l.Kind == kind && l.CCPairID == pair {
			if _, err := db.ReportProgress(ctx, worker, l.AttemptID, &p); err != nil {
				t.Fatal(err)
			}
			st = status
		}
		if _, err := db.FinishAttempt(ctx, worker, l.AttemptID, quarry.Finish{Status: st}); err != nil {
			t.Fatal(err)
		}
		if st == status && l.Kind == kind && l.CCPairID == pair {
			return
		}
	}
	t.Fatalf("no %s of pair %d leased", kind, pair)
}

// finds returns the ids of the documents c finds with "quartz", sorted.
func finds(t *testing.T, db *store.DB, c *quarry.Caller) []string {
	t.Helper()
	hits, err := db.Search(ctx, c, index.ParseQuery("quartz"), quarry.SearchFilters{}, 20)
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{}
	for _, h := range hits {
		ids = append(ids, h.DocumentID)
	}
	slices.Sort(ids)
	return ids
}

// TestPermissionSyncBounds checks what synced access does not reach: a
// group a pair's group sync lists opens nothing of another pair whose
// documents name a group of the same id; a failed sync applies nothing of
// what it reported and leaves no staged rows; a deactivated member of a
// synced group, or a person an email names, finds nothing. A new secret
// of a pair's credential forgets what the pair synced, and what a sync
// running meanwhile lists (quarry.SourceChangedFields).
func TestPermissionSyncBounds(t *testing.T) {
	db := storetest.Open(t)
	name := "admin"
	_, token, err := db.CreateAPIKey(ctx, nil, &name, quarry.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := db.Authenticate(ctx, quarry.HashAPIKey(token))
	if err != nil {
		t.Fatal(err)
	}
	ann, bob := person(t, db, "ann@corp.example", true), person(t, db, "bob@corp.example", true)
	team := quarry.ExternalAccess{ExternalUserGroupIDs: []string{"eng"}}
	first, firstKey := syncedPair(t, db, admin, "first", map[string]quarry.ExternalAccess{"first-team": team})
	second, _ := syncedPair(t, db, admin, "second", map[string]quarry.ExternalAccess{"second-team": team,
		"second-mail": {ExternalUserEmails: []string{bob.Email}}})
	_, worker, err := db.StartInProcessWorker(ctx, "test")
	if err != nil {
		t.Fatal(err)
	}
	// The pairs' first runs, and the syncs they are then due for, report
	// nothing.
	for {
		if _, err := db.Schedule(ctx); err != nil {
			t.Fatal(err)
		}
		l, err := db.LeaseAttempt(ctx, worker)
		if err != nil {
			t.Fatal(err)
		}
		if l == nil {
			break
		}
		if _, err := db.FinishAttempt(ctx, worker, l.AttemptID, quarry.Finish{Status: quarry.IndexSuccess}); err != nil {
			t.Fatal(err)
		}
	}
	want := func(t *testing.T, c *quarry.Caller, ids ...string) {
		t.Helper()
		if ids == nil {
			ids = []string{}
		}
		if got := finds(t, db, c); !slices.Equal(got, ids) {
			t.Errorf("%s finds %v, want %v", c.Email, got, ids)
		}
	}
	staged := func(t *testing.T) {
		t.Helper()
		for _, table := range []string{"perm_sync_listed", "perm_sync_access", "group_sync_listed"} {
			var n int
			if err := db.QueryRowForTest(ctx, `SELECT COUNT(*) FROM `+table, &n); err != nil || n != 0 {
				t.Errorf("%d rows left in %s (%v)", n, table, err)
			}
		}
	}

	t.Run("a pair's groups open nothing of another pair", func(t *testing.T) {
		runSync(t, db, admin, worker, first, quarry.AttemptGroupSync,
			quarry.Progress{Groups: []quarry.ExternalGroup{{ID: "eng", UserEmails: []string{ann.Email}}}}, quarry.IndexSuccess)
		want(t, ann, "first-team")
		want(t, bob, "second-mail")
	})
	t.Run("a failed sync applies nothing and leaves nothing staged", func(t *testing.T) {
		runSync(t, db, admin, worker, second, quarry.AttemptGroupSync,
			quarry.Progress{Groups: []quarry.ExternalGroup{{ID: "eng", UserEmails: []string{ann.Email, bob.Email}}}}, quarry.IndexFailed)
		runSync(t, db, admin, worker, second, quarry.AttemptPermissionSync, quarry.Progress{Access: []quarry.DocumentAccess{
			{DocumentID: "second-mail", ExternalAccess: quarry.ExternalAccess{ExternalUserEmails: []string{ann.Email}}},
			{DocumentID: "second-team", ExternalAccess: quarry.ExternalAccess{IsPublic: true}}}}, quarry.IndexFailed)
		staged(t)
		want(t, ann, "first-team")
		want(t, bob, "second-mail")
	})
	t.Run("a deactivated person finds nothing synced", func(t *testing.T) {
		runSync(t, db, admin, worker, second, quarry.AttemptGroupSync,
			quarry.Progress{Groups: []quarry.ExternalGroup{{ID: "eng", UserEmails: []string{bob.Email}}}}, quarry.IndexSuccess)
		staged(t)
		want(t, bob, "second-mail", "second-team")
		if err := db.SetActive(ctx, admin, bob.Email, false); err != nil {
			t.Fatal(err)
		}
		want(t, bob)
		if err := db.SetActive(ctx, admin, bob.Email, true); err != nil {
			t.Fatal(err)
		}
		want(t, bob, "second-mail", "second-team")
	})
	t.Run("a new secret forgets what the pair synced", func(t *testing.T) {
		want(t, ann, "first-team")
		if err := db.RequestSync(ctx, admin, first, quarry.AttemptGroupSync); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Schedule(ctx); err != nil {
			t.Fatal(err)
		}
		l, err := db.LeaseAttempt(ctx, worker)
		if err != nil || l == nil || l.Kind != quarry.AttemptGroupSync || l.CCPairID != first {
			t.Fatalf("lease: %+v, %v", l, err)
		}
		if _, err := db.ReportProgress(ctx, worker, l.AttemptID, &quarry.Progress{Groups: []quarry.ExternalGroup{
			{ID: "eng", UserEmails: []string{ann.Email}}}}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.UpdateCredential(ctx, admin, firstKey, quarry.CredentialUpdate{CredentialJSON: map[string]any{"k": "new"}}); err != nil {
			t.Fatal(err)
		}
		want(t, ann)
		if _, err := db.FinishAttempt(ctx, worker, l.AttemptID, quarry.Finish{Status: quarry.IndexSuccess}); err != nil {
			t.Fatal(err)
		}
		staged(t)
		want(t, ann)
		want(t, bob, "second-mail", "second-team") // The other pair keeps its.
		for _, k := range []quarry.AttemptKind{quarry.AttemptGroupSync, quarry.AttemptPermissionSync} {
			if last, err := db.LastSynced(ctx, admin, first, k); err != nil || last != nil {
				t.Errorf("last %s %v (%v), want none after the change", k, last, err)
			}
		}
		// Both syncs are due at once, one after the other (a pair runs one
		// attempt at a time), and open the documents again.
		for _, sync := range []struct {
			kind quarry.AttemptKind
			p    quarry.Progress
		}{
			{quarry.AttemptGroupSync, quarry.Progress{Groups: []quarry.ExternalGroup{{ID: "eng", UserEmails: []string{ann.Email}}}}},
			{quarry.AttemptPermissionSync, quarry.Progress{Access: []quarry.DocumentAccess{{DocumentID: "first-team", ExternalAccess: team}}}},
		} {
			if _, err := db.Schedule(ctx); err != nil {
				t.Fatal(err)
			}
			l, err := db.LeaseAttempt(ctx, worker)
			if err != nil || l == nil || l.Kind != sync.kind || l.CCPairID != first {
				t.Fatalf("lease: %+v, %v; want a %s of the pair", l, err, sync.kind)
			}
			if _, err := db.ReportProgress(ctx, worker, l.AttemptID, &sync.p); err != nil {
				t.Fatal(err)
			}
			if _, err := db.FinishAttempt(ctx, worker, l.AttemptID, quarry.Finish{Status: quarry.IndexSuccess}); err != nil {
				t.Fatal(err)
			}
		}
		want(t, ann, "first-team")
	})
}
