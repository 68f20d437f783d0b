package store_test

import (
	"bytes"
	"database/sql"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/storetest"
)

// TestMigrationsAreTransactional checks that every migration runs in a
// transaction: goose runs each file in one unless it says otherwise, and
// then a failure halfway would leave half a migration behind.
func TestMigrationsAreTransactional(t *testing.T) {
	for _, dialect := range []string{store.SQLite, store.Postgres} {
		files, err := fs.Glob(os.DirFS("migrations"), dialect+"/*.sql")
		if err != nil || len(files) == 0 {
			t.Fatalf("no %s migrations: %v", dialect, err)
		}
		for _, f := range files {
			b, err := os.ReadFile(path.Join("migrations", f))
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(bytes.ToUpper(b), []byte("+GOOSE NO TRANSACTION")) {
				t.Errorf("%s runs outside a transaction: a failure halfway would leave it half applied", f)
			}
		}
	}
}

// withMigrations returns the embedded migrations of every dialect plus
// extra files, named "<dialect>/<version>_<name>.sql".
func withMigrations(t *testing.T, extra map[string]string) fs.FS {
	t.Helper()
	m := fstest.MapFS{}
	err := fs.WalkDir(os.DirFS("migrations"), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path.Join("migrations", p))
		m[p] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range extra {
		m[name] = &fstest.MapFile{Data: []byte(text)}
	}
	return m
}

// rawDB opens the database at u without the store, to look at its schema.
func rawDB(t *testing.T, u string) *sql.DB {
	t.Helper()
	dialect, source, err := store.ParseURL(u)
	if err != nil {
		t.Fatal(err)
	}
	driver := "pgx"
	if dialect == store.SQLite {
		driver = "sqlite"
	}
	db, err := sql.Open(driver, source)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// schemaOf describes the tables, columns and indexes of a database, and
// the number of rows of each table but goose's.
func schemaOf(t *testing.T, db *sql.DB, dialect string) []string {
	t.Helper()
	q := `SELECT type || ' ' || name || ': ' || COALESCE(sql, '') FROM sqlite_master ORDER BY type, name`
	if dialect == store.Postgres {
		q = `SELECT 'column ' || table_name || '.' || column_name || ' ' || data_type || ' ' || COALESCE(column_default, '')
				FROM information_schema.columns WHERE table_schema = 'public'
			UNION ALL SELECT 'index ' || indexname || ': ' || indexdef FROM pg_indexes WHERE schemaname = 'public'
			ORDER BY 1`
	}
	var out, tables []string
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	q = `SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`
	if dialect == store.Postgres {
		q = `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1`
	}
	rows, err = db.QueryContext(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for _, table := range tables {
		if table == "goose_db_version" {
			continue // SchemaVersion reads it.
		}
		var n int
		if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("rows %s: %d", table, n))
	}
	slices.Sort(out)
	return out
}

// failingMigration changes schema and data, then fails: nothing of it may
// remain. On PostgreSQL this shows that DDL is transactional there too.
const failingMigration = `-- +goose Up
CREATE TABLE probe_fail (id INTEGER PRIMARY KEY, note TEXT NOT NULL);
INSERT INTO probe_fail (id, note) VALUES (1, 'written before the failure');
ALTER TABLE credentials ADD COLUMN probe TEXT;
CREATE INDEX credentials_probe ON credentials (probe);
UPDATE credentials SET name = 'changed by a failed migration';
DELETE FROM audit_events;
DROP TABLE settings;
INSERT INTO no_such_table (id) VALUES (1);
-- +goose Down
DROP TABLE probe_fail;
`

const goodMigration = `-- +goose Up
CREATE TABLE probe_ok (id INTEGER PRIMARY KEY);
INSERT INTO probe_ok (id) VALUES (1);
-- +goose Down
DROP TABLE probe_ok;
`

// TestFailedMigration runs a migration that fails halfway, after changing
// the schema and the data, and checks that the database is as it was:
// same schema, same rows, same version, every object readable. A good
// migration before it stays applied, and once the failing one is fixed the
// next run applies it.
func TestFailedMigration(t *testing.T) {
	u, keys := storetest.URL(t), storetest.Key(t)
	db := storetest.OpenURL(t, u, keys)
	_, token, err := db.CreateAPIKey(ctx, nil, ptr("admin"), quarry.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	caller, err := db.Authenticate(ctx, quarry.HashAPIKey(token))
	if err != nil {
		t.Fatal(err)
	}
	name := "kept"
	cred, err := db.CreateCredential(ctx, caller, quarry.CredentialInput{Name: &name, Source: "confluence",
		CredentialJSON: map[string]any{"token": "migration-secret-0123456789"}, AdminPublic: true})
	if err != nil {
		t.Fatal(err)
	}
	_, latest, err := db.SchemaVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	raw := rawDB(t, u)
	before := schemaOf(t, raw, db.Dialect())

	open := func(extra map[string]string) *store.DB {
		t.Helper()
		db, err := store.Open(ctx, u, keys, store.Options{Migrations: withMigrations(t, extra)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	file := func(v int64, name string) string { return fmt.Sprintf("%s/%05d_%s.sql", db.Dialect(), v, name) }
	check := func(version int64, extraTables ...string) {
		t.Helper()
		db := open(nil)
		if cur, _, err := db.SchemaVersion(ctx); err != nil || cur != version {
			t.Errorf("schema version = %d, %v; want %d", cur, err, version)
		}
		got := schemaOf(t, raw, db.Dialect())
		for _, table := range extraTables {
			got = without(t, got, table)
		}
		if diff := cmp.Diff(before, got); diff != "" {
			t.Errorf("schema or rows changed (-before +after):\n%s", diff)
		}
		k, err := db.Credential(ctx, caller, cred.ID)
		if err != nil {
			t.Fatal(err)
		}
		if *k.Name != "kept" || string(k.CredentialJSON) != `{"token":"migration-secret-0123456789"}` {
			t.Errorf("credential after the failed migration: name %q, secret as before: %v", *k.Name, string(k.CredentialJSON) == `{"token":"migration-secret-0123456789"}`)
		}
	}

	// A failing migration alone: the database is exactly as it was.
	err = open(map[string]string{file(latest+1, "probe_fail"): failingMigration}).Migrate(ctx)
	if err == nil {
		t.Fatal("Migrate succeeded with a failing migration")
	}
	if want := fmt.Sprintf("store: migration %05d_probe_fail.sql failed and was rolled back: ", latest+1); !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %q, want it to start with %q", err, want)
	}
	check(latest)

	// A good migration, then a failing one: the good one stays.
	err = open(map[string]string{
		file(latest+1, "probe_ok"):   goodMigration,
		file(latest+2, "probe_fail"): failingMigration,
	}).Migrate(ctx)
	want := fmt.Sprintf("store: migration %05d_probe_fail.sql failed and was rolled back (the 1 before it were applied): ", latest+2)
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %v, want it to start with %q", err, want)
	}
	check(latest+1, "probe_ok")

	// Fixed, it applies; the data written before is still served.
	fixed := strings.Replace(failingMigration, "INSERT INTO no_such_table (id) VALUES (1);\n", "", 1)
	db2 := open(map[string]string{file(latest+1, "probe_ok"): goodMigration, file(latest+2, "probe_fail"): fixed})
	if err := db2.Migrate(ctx); err != nil {
		t.Fatalf("the fixed migration: %v", err)
	}
	if cur, _, err := db2.SchemaVersion(ctx); err != nil || cur != latest+2 {
		t.Errorf("schema version = %d, %v; want %d", cur, err, latest+2)
	}
	var n int
	if err := raw.QueryRowContext(ctx, `SELECT COUNT(*) FROM probe_fail`).Scan(&n); err != nil || n != 1 {
		t.Errorf("probe_fail holds %d rows (%v), want 1", n, err)
	}
}

// without returns the lines of got that do not mention table, and fails
// if none does: the migration that made it was applied.
func without(t *testing.T, got []string, table string) []string {
	t.Helper()
	var out []string
	for _, line := range got {
		if !strings.Contains(line, table) {
			out = append(out, line)
		}
	}
	if len(out) == len(got) {
		t.Errorf("no table %s", table)
	}
	return out
}

// TestMigrateRefusesNewerSchema: a build must not serve a database that a
// newer build migrated (a rolled-back binary, a restore of a newer backup).
func TestMigrateRefusesNewerSchema(t *testing.T) {
	u, keys := storetest.URL(t), storetest.Key(t)
	db := storetest.OpenURL(t, u, keys)
	_, latest, err := db.SchemaVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	newer, err := store.Open(ctx, u, keys, store.Options{Migrations: withMigrations(t, map[string]string{
		fmt.Sprintf("%s/%05d_probe_ok.sql", db.Dialect(), latest+1): goodMigration,
	})})
	if err != nil {
		t.Fatal(err)
	}
	defer newer.Close()
	if err := newer.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("store: the database was migrated by a newer Quarry (schema version %d; this build knows %d)", latest+1, latest)
	if err := db.Migrate(ctx); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Migrate on a newer schema: %v; want %q", err, want)
	}
}
