package store_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/bench"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/storetest"
)

// readListing returns what ReadListing passes on after version since, one
// line per item, and the version it read. Connectors and credentials,
// which come in no set order, are sorted within their kind.
func readListing(t *testing.T, db *store.DB, since int64) (int64, []string) {
	t.Helper()
	var conns, creds, rest []string
	version, err := db.ReadListing(ctx, since, func(c *store.ListingChange) error {
		switch {
		case c.Kind == store.ChangeAll:
			rest = append(rest, "all")
		case c.Connector != nil:
			conns = append(conns, fmt.Sprintf("connector %d %s", c.ID, c.Connector.Name))
		case c.Credential != nil:
			creds = append(creds, fmt.Sprintf("credential %d %s %s %v", c.ID, *c.Credential.Name, c.Credential.CredentialJSON, c.Credential.Groups))
		case c.Pair != nil:
			p := c.Pair
			rest = append(rest, fmt.Sprintf("pair %d %s %s %d/%d %v", p.ID, p.Name, p.AccessType, p.ConnectorID, p.CredentialID, p.Groups))
		case c.Kind == store.ChangePair:
			rest = append(rest, fmt.Sprintf("pair %d gone", c.ID))
		default:
			gone := fmt.Sprintf("%s %d gone", c.Kind, c.ID)
			if c.Kind == store.ChangeConnector {
				conns = append(conns, gone)
			} else {
				creds = append(creds, gone)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(conns)
	slices.Sort(creds)
	var out []string
	if len(rest) > 0 && rest[0] == "all" {
		out, rest = append(out, "all"), rest[1:]
	}
	return version, slices.Concat(out, conns, creds, rest)
}

// TestReadListing checks what ReadListing reads after each kind of write
// that changes the status listing: only what changed, with what left the
// listing as gone; nothing for writes that do not change it; and the whole
// listing when the change log cannot tell.
func TestReadListing(t *testing.T) {
	db := storetest.Open(t)
	_, token, _ := db.CreateAPIKey(ctx, nil, nil, quarry.RoleAdmin)
	admin, _ := db.Authenticate(ctx, quarry.HashAPIKey(token))
	str := func(s string) *string { return &s }
	g, err := db.CreateGroup(ctx, admin, quarry.UserGroupInput{Name: str("g"), UserIDs: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	conn := func(name string) int64 {
		id, err := db.CreateConnector(ctx, admin, quarry.ConnectorInput{Name: name, Source: "web", InputType: "poll", Config: []byte(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	cred := func(name string, groups ...int64) int64 {
		k, err := db.CreateCredential(ctx, admin, quarry.CredentialInput{Name: str(name), Source: "web",
			CredentialJSON: map[string]any{"token": name}, Groups: groups})
		if err != nil {
			t.Fatal(err)
		}
		return k.ID
	}
	pair := func(name string, conn, cred int64, groups ...int64) int64 {
		id, err := db.CreateCCPair(ctx, admin, conn, cred, quarry.CCPairInput{Name: name, AccessType: quarry.AccessPrivate, Groups: groups})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	c1, c2 := conn("c1"), conn("c2")
	k1, k2, k3 := cred("k1", g.ID), cred("k2"), cred("k3")
	unused := cred("unused")
	p1, p2, p3 := pair("p1", c1, k1, g.ID), pair("p2", c1, k2), pair("p3", c2, k3)

	version, got := readListing(t, db, 0)
	want := []string{
		"all",
		"connector 1 c1", "connector 2 c2",
		fmt.Sprintf(`credential 1 k1 {"token":"k1"} [%d]`, g.ID), `credential 2 k2 {"token":"k2"} []`, `credential 3 k3 {"token":"k3"} []`,
		fmt.Sprintf("pair %d p1 private 1/1 [%d]", p1, g.ID), fmt.Sprintf("pair %d p2 private 1/2 []", p2), fmt.Sprintf("pair %d p3 private 2/3 []", p3),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("the whole listing (-want +got):\n%s", diff)
	}
	if v, got := readListing(t, db, version); v != version || got != nil {
		t.Errorf("nothing changed: read %v at version %d, want nothing at %d", got, v, version)
	}

	steps := []struct {
		name  string
		write func() error
		want  []string // nil: the version stays
	}{
		{"a connector or credential without pairs", func() error {
			conn("c3")
			cred("k4")
			return nil
		}, nil},
		{"a credential renamed", func() error {
			name := str("k2b")
			_, err := db.UpdateCredential(ctx, admin, k2, quarry.CredentialUpdate{Name: &name, KeepEchoes: true})
			return err
		}, []string{`credential 2 k2b {"token":"k2"} []`}},
		{"a connector changed", func() error {
			_, err := db.UpdateConnector(ctx, admin, c2, quarry.ConnectorInput{Name: "c2b", Source: "web", InputType: "poll", Config: []byte(`{}`)})
			return err
		}, []string{"connector 2 c2b"}},
		{"a pair removed", func() error {
			return db.DeleteCCPair(ctx, admin, c1, k2)
		}, []string{"connector 1 c1", "credential 2 gone", fmt.Sprintf("pair %d gone", p2)}},
		{"a pair made with a credential new to the listing", func() error {
			pair("p4", c2, unused)
			return nil
		}, []string{"connector 2 c2b", fmt.Sprintf(`credential %d unused {"token":"unused"} []`, unused), fmt.Sprintf("pair %d p4 private 2/%d []", p3+1, unused)}},
		{"a group deleted", func() error {
			return db.DeleteGroup(ctx, admin, g.ID)
		}, []string{"connector 1 c1", `credential 1 k1 {"token":"k1"} []`, fmt.Sprintf("pair %d p1 private 1/1 []", p1)}},
		{"the last pair of a connector removed", func() error {
			return db.DeleteCCPairCompletely(ctx, admin, c1, k1)
		}, []string{"connector 1 gone", "credential 1 gone", fmt.Sprintf("pair %d gone", p1)}},
	}
	for _, step := range steps {
		if err := step.write(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		v, got := readListing(t, db, version)
		if step.want == nil {
			if v != version {
				t.Errorf("%s: the data version went from %d to %d", step.name, version, v)
			}
			continue
		}
		if v != version+1 {
			t.Errorf("%s: the data version went from %d to %d, want one more", step.name, version, v)
		}
		if diff := cmp.Diff(step.want, got); diff != "" {
			t.Errorf("%s: read after it (-want +got):\n%s", step.name, diff)
		}
		version = v
	}

	// A version bumped without rows (an older build did it, or the rows
	// were pruned): the whole listing.
	if err := db.ExecForTest(ctx, `UPDATE data_version SET version = version + 1 WHERE id = 1`); err != nil {
		t.Fatal(err)
	}
	if _, got := readListing(t, db, version); len(got) == 0 || got[0] != "all" || len(got) != 6 {
		t.Errorf("after a version without rows: %q, want the whole listing (all, 1 connector, 2 credentials, 2 pairs)", got)
	}
	if _, got := readListing(t, db, version-1); len(got) == 0 || got[0] != "all" {
		t.Errorf("since a version older than the log's rows: %q, want the whole listing", got)
	}
	if _, got := readListing(t, db, version+100); len(got) == 0 || got[0] != "all" {
		t.Errorf("since a version newer than the database's (a restored database): %q, want the whole listing", got)
	}
}

// TestListingLogBounds checks that a write that changes many objects logs
// that everything changed, and that old rows of the log are pruned.
func TestListingLogBounds(t *testing.T) {
	db := storetest.Open(t)
	seeded, err := bench.Seed(ctx, db, bench.DefaultSeedSpec(2500), nil)
	if err != nil {
		t.Fatal(err)
	}
	admin, _ := db.Authenticate(ctx, quarry.HashAPIKey(seeded.AdminToken))
	version, _ := readListing(t, db, 0)
	ids := make([]int64, 2500)
	for i := range ids {
		ids[i] = int64(i + 1)
	}
	name := "all pairs"
	if _, err := db.CreateGroup(ctx, admin, quarry.UserGroupInput{Name: &name, UserIDs: []string{}, CCPairIDs: ids}); err != nil {
		t.Fatal(err)
	}
	if _, got := readListing(t, db, version); len(got) != 1+500+2500+2500 || got[0] != "all" {
		t.Errorf("after a group of 2,500 pairs: %d items, first %q; want the whole listing", len(got), got[0])
	}
	count := func() int {
		var n int
		if err := db.QueryRowForTest(ctx, `SELECT COUNT(*) FROM listing_changes`, &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(); n != 2 {
		t.Errorf("the log holds %d rows, want 2: the seed's and the group's, each logged as all", n)
	}

	// The write that makes version 8,192 prunes the rows of 4,096 versions
	// and more before.
	if err := db.ExecForTest(ctx, `UPDATE data_version SET version = 8191 WHERE id = 1`); err != nil {
		t.Fatal(err)
	}
	if err := db.ExecForTest(ctx, `INSERT INTO listing_changes (version, kind, id) VALUES (4096, 'pair', 1), (4097, 'pair', 2)`); err != nil {
		t.Fatal(err)
	}
	newName := &name
	if _, err := db.UpdateCredential(ctx, admin, 1, quarry.CredentialUpdate{Name: &newName, KeepEchoes: true}); err != nil {
		t.Fatal(err)
	}
	var left string
	if err := db.QueryRowForTest(ctx, `SELECT COUNT(*) || ' ' || MIN(version) || ' ' || MAX(version) FROM listing_changes`, &left); err != nil {
		t.Fatal(err)
	}
	if left != "2 4097 8192" {
		t.Errorf("after pruning the log holds (rows, oldest, newest) %q, want \"2 4097 8192\"", left)
	}
}
