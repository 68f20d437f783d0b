package store_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/storetest"
)

// The upgrade fixtures (testdata/upgrade/README.md) are databases made by
// earlier schema versions; api's TestUpgrade checks every object they hold
// through the API. These tests check what the API cannot show.

func fixtureKeys(t *testing.T, m *storetest.Manifest) *store.Keyring {
	t.Helper()
	k, err := store.ParseKey(m.Key)
	if err != nil {
		t.Fatal(err)
	}
	return keyring(t, k)
}

// TestUpgradeFixtureForEveryMigration checks that the newest migration has
// its fixture, complete: a migration is merged with the fixture of the
// schema it makes, so that the next one is tested against real data.
func TestUpgradeFixtureForEveryMigration(t *testing.T) {
	db := storetest.Open(t)
	_, latest, err := db.SchemaVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fixtures := storetest.Fixtures(t)
	if newest := fixtures[len(fixtures)-1]; newest.Version != latest {
		t.Errorf("the newest upgrade fixture is of schema version %d, the newest migration %d: record its fixture with\n"+
			"  %s=postgres://… go test ./api -run '^TestMakeUpgradeFixture$' -make-upgrade-fixture\n"+
			"(store/testdata/upgrade/README.md)", newest.Version, latest, storetest.PostgresEnv)
	}
	for _, f := range fixtures {
		for _, name := range []string{"sqlite.db", "sqlite.json", "postgres.sql", "postgres.json"} {
			if _, err := os.Stat(filepath.Join(f.Dir, name)); err != nil {
				t.Errorf("fixture %s: %v", filepath.Base(f.Dir), err)
			}
		}
	}
}

// TestUpgradeSecrets migrates each fixture and opens every secret with the
// fixture's key: as many of each kind as were made, OAuth client secrets
// (which no response shows) equal to those sent.
func TestUpgradeSecrets(t *testing.T) {
	for _, f := range storetest.Fixtures(t) {
		t.Run(filepath.Base(f.Dir), func(t *testing.T) {
			u, m := f.Load(t)
			db := storetest.OpenURL(t, u, fixtureKeys(t, m))
			res, err := db.CheckSecrets(ctx, store.CheckOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Failed > 0 || !cmp.Equal(nonZero(res.OpenedKinds), m.Secrets) {
				t.Errorf("%s; the fixture has %v", res.Summary(), m.Secrets)
			}
			if len(m.OAuthClientSecrets) == 0 {
				t.Error("the fixture has no OAuth client secret")
			}
			for id, want := range m.OAuthClientSecrets {
				n, _ := strconv.ParseInt(id, 10, 64)
				if got, err := db.OAuthClientSecret(ctx, n); err != nil || got != want {
					t.Errorf("OAuth config %s: client secret %q (%v), want %q", id, got, err, want)
				}
			}
		})
	}
}

// TestUpgradeDocuments checks the documents of the fixtures on each side
// of migration 00030: those 00029's deployment wrote whole and those
// 00030's wrote in two parts (the same deployment) read the same, texts
// included, through StoredDocument, which showing a document whole and
// indexing it again use.
func TestUpgradeDocuments(t *testing.T) {
	docs := map[int64]map[string]*quarry.Document{}
	for _, f := range storetest.Fixtures(t) {
		if f.Version != 29 && f.Version != 30 {
			continue
		}
		u, m := f.Load(t)
		db := storetest.OpenURL(t, u, fixtureKeys(t, m))
		var err error
		if docs[f.Version], err = db.StoredDocumentsForTest(ctx); err != nil {
			t.Fatal(err)
		}
	}
	before, after := docs[29], docs[30]
	texts := 0
	for _, d := range after {
		for _, s := range d.Sections {
			texts += len(s.Text)
		}
	}
	if len(after) < 5 || texts == 0 {
		t.Fatalf("fixture 00030 has %d documents, %d bytes of text", len(after), texts)
	}
	// The deployment's times differ from one recording to the next.
	opts := cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".DocUpdatedAt" }, cmp.Ignore())
	if diff := cmp.Diff(before, after, opts); diff != "" {
		t.Errorf("documents of fixture 00029 (-) and 00030 (+):\n%s", diff)
	}
}

// TestFailedMigrationOnFixture runs a migration that fails halfway on the
// newest fixture: the schema and every row stay as they were, and the
// secrets still open.
func TestFailedMigrationOnFixture(t *testing.T) {
	fixtures := storetest.Fixtures(t)
	f := fixtures[len(fixtures)-1]
	u, m := f.Load(t)
	keys := fixtureKeys(t, m)
	db := storetest.OpenURL(t, u, keys) // Up to date.
	_, latest, err := db.SchemaVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	raw := rawDB(t, u)
	before := schemaOf(t, raw, db.Dialect())
	failing, err := store.Open(ctx, u, keys, store.Options{Migrations: withMigrations(t, map[string]string{
		fmt.Sprintf("%s/%05d_probe_fail.sql", db.Dialect(), latest+1): failingMigration,
	})})
	if err != nil {
		t.Fatal(err)
	}
	defer failing.Close()
	if err := failing.Migrate(ctx); err == nil {
		t.Fatal("Migrate succeeded with a failing migration")
	}
	if diff := cmp.Diff(before, schemaOf(t, raw, db.Dialect())); diff != "" {
		t.Errorf("the failed migration changed the fixture (-before +after):\n%s", diff)
	}
	if cur, _, err := db.SchemaVersion(ctx); err != nil || cur != latest {
		t.Errorf("schema version %d (%v), want %d", cur, err, latest)
	}
	res, err := db.CheckSecrets(ctx, store.CheckOptions{})
	if err != nil || res.Failed > 0 || res.Opened == 0 {
		t.Errorf("secrets after the failed migration: %v %v", res, err)
	}
}

// TestNoFirstAdminAfterUpgrade: a database that had users before people
// existed (the 00001 fixture: API keys only) is not new, so the first
// person to register after the upgrade is a basic user, not an admin.
func TestNoFirstAdminAfterUpgrade(t *testing.T) {
	for _, f := range storetest.Fixtures(t) {
		if filepath.Base(f.Dir) != "00001" {
			continue
		}
		u, m := f.Load(t)
		db := storetest.OpenURL(t, u, fixtureKeys(t, m))
		p, err := db.Register(ctx, "stranger@example.com", nil, "h", "", &quarry.RegistrationPolicy{Mode: quarry.RegistrationOpen})
		if err != nil {
			t.Fatal(err)
		}
		if p.Role != quarry.RoleBasic {
			t.Errorf("the first person to register after the upgrade is %s, want basic", p.Role)
		}
		return
	}
	t.Fatal("no 00001 fixture")
}
