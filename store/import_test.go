package store_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/storetest"
)

// TestImport imports one object of every kind, with what refers to what,
// and reads each back through the store's own reads: as given, sealed and
// opened, shared as said; the import is audited, the listing is read
// anew, and objects made afterwards get the next ids.
func TestImport(t *testing.T) {
	db := storetest.Open(t)
	before, err := db.DataVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var admin, curator *quarry.APIKey
	var adminToken string
	err = db.Import(ctx, func(im *store.Importer) error {
		var err error
		if admin, adminToken, err = im.APIKey(ptr("importer"), quarry.RoleAdmin); err != nil {
			return err
		}
		if curator, _, err = im.APIKey(ptr("curator"), quarry.RoleCurator); err != nil {
			return err
		}
		for g := int64(1); g <= 3; g++ {
			group := &quarry.UserGroup{ID: g, Name: fmt.Sprintf("group %d", g)}
			if g < 3 {
				group.Users = []quarry.User{{ID: curator.UserID}}
			}
			if g == 1 {
				group.CuratorIDs = []string{curator.UserID}
			}
			if err := im.Group(group); err != nil {
				return err
			}
		}
		refresh := int64(3600)
		if err := im.Connector(&quarry.Connector{ID: 7, Name: "wiki", Source: "confluence", InputType: "poll",
			Config: json.RawMessage(`{"space":"ENG"}`), RefreshFreq: &refresh}, &admin.UserID); err != nil {
			return err
		}
		if err := im.Connector(&quarry.Connector{ID: 8, Name: "site", Source: "web", InputType: "load_state",
			Config: json.RawMessage(`{}`), AccessType: quarry.AccessPublic, Groups: []int64{2, 3}}, nil); err != nil {
			return err
		}
		if err := im.Credential(&quarry.Credential{ID: 11, Name: ptr("bot"), Source: "confluence",
			CredentialJSON: json.RawMessage(`{"token":"imported-secret-0123456789"}`), AdminPublic: true,
			UserID: &admin.UserID, Groups: []int64{1}}); err != nil {
			return err
		}
		return im.Pair(&quarry.CCPair{ID: 21, Name: "wiki pair", ConnectorID: 7, CredentialID: 11,
			AccessType: quarry.AccessPrivate, Groups: []int64{1, 2}, CreatorID: &admin.UserID})
	})
	if err != nil {
		t.Fatal(err)
	}
	c, err := db.Authenticate(ctx, quarry.HashAPIKey(adminToken))
	if err != nil {
		t.Fatal(err)
	}

	g, err := db.Group(ctx, c, 1)
	if err != nil {
		t.Fatal(err)
	}
	if g.Name != "group 1" || len(g.Users) != 1 || g.Users[0].ID != curator.UserID ||
		!cmp.Equal(g.CuratorIDs, []string{curator.UserID}) || !cmp.Equal(g.CCPairIDs, []int64{21}) {
		t.Errorf("group 1: %+v", g)
	}
	if g, err := db.Group(ctx, c, 2); err != nil || len(g.Users) != 1 || len(g.CuratorIDs) != 0 {
		t.Errorf("group 2: %+v, %v; want the curator as a member who does not curate it", g, err)
	}

	conn, err := db.Connector(ctx, c, 7)
	if err != nil {
		t.Fatal(err)
	}
	if conn.Name != "wiki" || conn.Source != "confluence" || conn.InputType != "poll" || string(conn.Config) != `{"space":"ENG"}` ||
		conn.RefreshFreq == nil || *conn.RefreshFreq != 3600 || conn.PruneFreq != nil ||
		conn.AccessType != quarry.AccessPrivate || len(conn.Groups) != 0 || !cmp.Equal(conn.CredentialIDs, []int64{11}) {
		t.Errorf("connector 7: %+v", conn)
	}
	if conn, err := db.Connector(ctx, c, 8); err != nil || conn.AccessType != quarry.AccessPublic || !cmp.Equal(conn.Groups, []int64{2, 3}) {
		t.Errorf("connector 8: %+v, %v; want public, shared with groups 2 and 3", conn, err)
	}

	k, err := db.Credential(ctx, c, 11)
	if err != nil {
		t.Fatal(err)
	}
	if *k.Name != "bot" || string(k.CredentialJSON) != `{"token":"imported-secret-0123456789"}` || !k.AdminPublic || k.CuratorPublic ||
		*k.UserID != admin.UserID || !cmp.Equal(k.Groups, []int64{1}) {
		t.Errorf("credential 11: %+v (secret %s)", k, k.CredentialJSON)
	}
	res, err := db.CheckSecrets(ctx, store.CheckOptions{})
	if err != nil || res.Opened != 1 || res.Failed != 0 {
		t.Errorf("CheckSecrets: %+v, %v; want the imported secret sealed with the keyring", res, err)
	}

	p, err := db.CCPair(ctx, c, 21)
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "wiki pair" || p.ConnectorID != 7 || p.CredentialID != 11 || p.AccessType != quarry.AccessPrivate ||
		p.Status != quarry.CCPairActive || !cmp.Equal(p.Groups, []int64{1, 2}) || *p.CreatorID != admin.UserID {
		t.Errorf("cc-pair 21: %+v", p.CCPair)
	}

	action := "database.import"
	events, _, err := db.AuditEvents(ctx, quarry.AuditFilter{Action: &action, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 1 || events[0].ResourceType != "database" || events[0].ActorID != nil ||
		!cmp.Equal(events[0].Fields, []string{"user_groups", "connectors", "credentials", "cc_pairs"}) {
		t.Errorf("audit entries of the import: %+v", events)
	}
	var all bool
	if _, err := db.ReadListing(ctx, before, func(ch *store.ListingChange) error {
		all = all || ch.Kind == store.ChangeAll
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !all {
		t.Error("the listing read since before the import is not read anew")
	}

	// Ids go on after the imported ones.
	id, err := db.CreateConnector(ctx, c, quarry.ConnectorInput{Name: "after", Source: "web", InputType: "poll", Config: []byte(`{}`)})
	if err != nil || id != 9 {
		t.Errorf("CreateConnector after the import = %d, %v; want id 9", id, err)
	}
	group, err := db.CreateGroup(ctx, c, quarry.UserGroupInput{Name: ptr("after")})
	if err != nil || group.ID != 4 {
		t.Errorf("CreateGroup after the import = %+v, %v; want id 4", group, err)
	}
}

// TestImportAllOrNothing: an import that fails writes nothing, not even
// the API keys it made before failing.
func TestImportAllOrNothing(t *testing.T) {
	db := storetest.Open(t)
	if err := db.Import(ctx, func(im *store.Importer) error {
		return im.Group(&quarry.UserGroup{ID: 1, Name: "taken"})
	}); err != nil {
		t.Fatal(err)
	}
	counts := func() []store.ObjectCount {
		t.Helper()
		c, err := db.ObjectCounts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	want := counts()
	fillErr := errors.New("the program that fills it failed")
	for _, tt := range []struct {
		name  string
		fill  func(im *store.Importer) error
		check func(error) bool
	}{
		{"an id taken", func(im *store.Importer) error {
			return im.Group(&quarry.UserGroup{ID: 1, Name: "another"})
		}, func(err error) bool { return quarry.ErrorCode(err) == quarry.ECONFLICT }},
		{"a name taken", func(im *store.Importer) error {
			return im.Group(&quarry.UserGroup{ID: 2, Name: "taken"})
		}, func(err error) bool { return quarry.ErrorCode(err) == quarry.ECONFLICT }},
		{"an unknown reference", func(im *store.Importer) error {
			if err := im.Credential(&quarry.Credential{ID: 1, Source: "web", CredentialJSON: json.RawMessage(`{}`)}); err != nil {
				return err
			}
			return im.Pair(&quarry.CCPair{ID: 1, Name: "p", ConnectorID: 99, CredentialID: 1, AccessType: quarry.AccessPublic})
		}, func(err error) bool { return quarry.ErrorCode(err) == quarry.EINVALID }},
		{"fill failed", func(im *store.Importer) error {
			return fillErr
		}, func(err error) bool { return errors.Is(err, fillErr) }},
	} {
		err := db.Import(ctx, func(im *store.Importer) error {
			if _, _, err := im.APIKey(ptr("made first"), quarry.RoleAdmin); err != nil {
				return err
			}
			return tt.fill(im)
		})
		if !tt.check(err) {
			t.Errorf("%s: err = %v", tt.name, err)
		}
		if diff := cmp.Diff(want, counts(), cmp.AllowUnexported(store.ObjectCount{})); diff != "" {
			t.Errorf("%s: something was written (-before +after):\n%s", tt.name, diff)
		}
	}
}

// TestImportBatches imports more rows of each table than one INSERT
// takes, each pair in its own groups, so that batches of pairs are written
// while the rows they refer to are still kept (they must be written
// first).
func TestImportBatches(t *testing.T) {
	db := storetest.Open(t)
	const n = 1234
	err := db.Import(ctx, func(im *store.Importer) error {
		for g := int64(1); g <= 3; g++ {
			if err := im.Group(&quarry.UserGroup{ID: g, Name: fmt.Sprint("g", g)}); err != nil {
				return err
			}
		}
		for i := int64(1); i <= n; i++ {
			if err := im.Connector(&quarry.Connector{ID: i, Name: fmt.Sprint("c", i), Source: "web", InputType: "poll",
				Config: json.RawMessage(`{}`), Groups: []int64{1 + i%3}}, nil); err != nil {
				return err
			}
			if err := im.Credential(&quarry.Credential{ID: i, Source: "web", CredentialJSON: json.RawMessage(`{"n":1}`),
				Groups: []int64{1 + i%3}}); err != nil {
				return err
			}
			if err := im.Pair(&quarry.CCPair{ID: i, Name: fmt.Sprint("p", i), ConnectorID: i, CredentialID: i,
				AccessType: quarry.AccessPrivate, Groups: []int64{1, 2, 3}[:1+i%3]}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	counts, err := db.ObjectCounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range counts {
		if (c.Kind == "connectors" || c.Kind == "credentials" || c.Kind == "cc-pairs") && c.Count != n {
			t.Errorf("%d %s, want %d", c.Count, c.Kind, n)
		}
	}
	pairs, groups := 0, 0
	if _, err := db.ReadListing(ctx, 0, func(ch *store.ListingChange) error {
		if ch.Pair != nil {
			pairs++
			groups += len(ch.Pair.Groups)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	wantGroups := 0 // Pair i is in 1 + i%3 groups.
	for i := 1; i <= n; i++ {
		wantGroups += 1 + i%3
	}
	if pairs != n || groups != wantGroups {
		t.Errorf("the listing has %d pairs in %d groups in all, want %d in %d", pairs, groups, n, wantGroups)
	}
}
