package store_test

import (
	"bytes"
	"database/sql"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
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
	out := queryStrings(t, db, q)
	q = `SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`
	if dialect == store.Postgres {
		q = `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1`
	}
	for _, table := range queryStrings(t, db, q) {
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

var updateSchema = flag.Bool("update-schema", false, "rewrite testdata/schema.txt from the schema SQLite has after migrating")

// schemaFile is the schema both dialects must have after migrating, in
// schemaLines' words: reviewed with every migration, and what the
// PostgreSQL side is held to when there is no PostgreSQL to migrate.
const schemaFile = "testdata/schema.txt"

// TestMigrationParity migrates a SQLite database and, when
// QUARRY_TEST_POSTGRES_URL is set, a PostgreSQL one, and compares the
// schemas they end with (see schemaLines): every table, every column with
// its type, nullability and default, every index with its columns and
// uniqueness, every foreign key. Both must equal testdata/schema.txt, so a
// change made in one dialect's migrations only fails on SQLite alone when
// it is SQLite's, and wherever PostgreSQL is tested (CI) when it is
// PostgreSQL's. After a new migration, run
//
//	go test ./store -run '^TestMigrationParity$' -update-schema
//
// and review the change to testdata/schema.txt with the migrations.
func TestMigrationParity(t *testing.T) {
	// The same files, by name, in both directories.
	names := func(dir string) []string {
		entries, err := fs.ReadDir(os.DirFS("migrations"), dir)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range entries {
			out = append(out, e.Name())
		}
		return out
	}
	if sq, pg := names("sqlite"), names("postgres"); len(sq) == 0 || !slices.Equal(sq, pg) {
		t.Fatalf("sqlite migrations %v, postgres migrations %v", sq, pg)
	}

	sqlite := migratedSchema(t, "sqlite:"+filepath.Join(t.TempDir(), "parity.db"))
	text := strings.Join(sqlite, "\n") + "\n"
	if *updateSchema {
		if err := os.WriteFile(schemaFile, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if diff := cmp.Diff(want, sqlite); diff != "" {
		t.Errorf("SQLite's schema after migrating differs from %s (-file +sqlite); if the migrations are right, "+
			"run go test ./store -run '^TestMigrationParity$' -update-schema:\n%s", schemaFile, diff)
	}
	if os.Getenv(storetest.PostgresEnv) == "" {
		t.Logf("%s is not set: PostgreSQL's schema is not compared (CI compares it)", storetest.PostgresEnv)
		return
	}
	pg := migratedSchema(t, storetest.URL(t))
	if diff := cmp.Diff(sqlite, pg); diff != "" {
		t.Errorf("the schemas of the two dialects differ after migrating (-sqlite +postgres):\n%s", diff)
	}
}

// TestMigrationParityNotices shows that the comparison sees what it is
// for: a migration on one dialect only that adds a column, an index and
// a foreign key changes SQLite's description, line by line.
func TestMigrationParityNotices(t *testing.T) {
	base := migratedSchema(t, "sqlite:"+filepath.Join(t.TempDir(), "base.db"))
	u := "sqlite:" + filepath.Join(t.TempDir(), "probe.db")
	db, err := store.Open(ctx, u, storetest.Key(t), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, latest, err := db.SchemaVersion(ctx)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	probe := fmt.Sprintf("sqlite/%05d_probe.sql", latest+1)
	db, err = store.Open(ctx, u, storetest.Key(t), store.Options{Migrations: withMigrations(t, map[string]string{probe: `-- +goose Up
ALTER TABLE credentials ADD COLUMN probe TEXT REFERENCES users (id) ON DELETE SET NULL;
CREATE UNIQUE INDEX credentials_probe ON credentials (probe, source);
-- +goose Down
DROP INDEX credentials_probe;
ALTER TABLE credentials DROP COLUMN probe;
`})})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	got := describeSchema(t, rawDB(t, u), store.SQLite)
	var added, removed []string
	for _, l := range got {
		if !slices.Contains(base, l) {
			added = append(added, l)
		}
	}
	for _, l := range base {
		if !slices.Contains(got, l) {
			removed = append(removed, l)
		}
	}
	want := []string{
		"credentials column probe text null",
		"credentials foreign key (probe) references users (id) on delete set null",
		"credentials index credentials_probe unique (probe, source)",
	}
	if !slices.Equal(added, want) || len(removed) > 0 {
		t.Errorf("a migration on SQLite alone: added %q, removed %q; want added %q", added, removed, want)
	}
}

// migratedSchema migrates a new database at u and describes its schema.
func migratedSchema(t *testing.T, u string) []string {
	t.Helper()
	dialect, _, err := store.ParseURL(u)
	if err != nil {
		t.Fatal(err)
	}
	storetest.OpenURL(t, u, storetest.Key(t))
	return describeSchema(t, rawDB(t, u), dialect)
}

// describeSchema returns the schema of db in words that do not depend on
// the dialect, one line per table, column, primary key, index and foreign
// key, each starting with its table's name, sorted:
//
//	api_keys column id integer not null identity
//	api_keys foreign key (user_id) references users (id) on delete cascade
//	api_keys index api_keys_user (user_id)
//	api_keys primary key (id)
//	api_keys table
//	api_keys unique (hashed_key)          (a UNIQUE constraint)
//	users index users_by_email_key unique (email_key)
//
// Types are normalised (SQLite has one integer type: the width of
// PostgreSQL's is not compared), as are defaults (no casts, keywords in
// lower case). A column of a primary key counts as not null, as PostgreSQL
// makes it; identity means ids made by the database that are never reused
// (SQLite's AUTOINCREMENT, PostgreSQL's identity columns). The
// migrationTables are left out.
func describeSchema(t *testing.T, db *sql.DB, dialect string) []string {
	t.Helper()
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	column := func(table, name, typ string, notNull bool, def string, identity bool) {
		if slices.Contains(migrationTables, table) {
			return // Left out below; its types need no words.
		}
		s := fmt.Sprintf("%s column %s %s", table, name, normalType(t, dialect, typ))
		if notNull {
			s += " not null"
		} else {
			s += " null"
		}
		if def != "" {
			s += " default " + normalDefault(def)
		}
		if identity {
			s += " identity"
		}
		out = append(out, s)
	}
	if dialect == store.SQLite {
		tables := queryStrings(t, db, `SELECT name || char(9) || sql FROM sqlite_master
			WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
		for _, row := range tables {
			table, ddl, _ := strings.Cut(row, "\t")
			add("%s table", table)
			type col struct {
				name, typ string
				notNull   bool
				def       sql.NullString
				pk        int
			}
			var cols []col
			rows, err := db.QueryContext(ctx, `SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info($1)`, table)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var c col
				if err := rows.Scan(&c.name, &c.typ, &c.notNull, &c.def, &c.pk); err != nil {
					t.Fatal(err)
				}
				cols = append(cols, c)
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			var pk []string
			for k := 1; ; k++ {
				i := slices.IndexFunc(cols, func(c col) bool { return c.pk == k })
				if i < 0 {
					break
				}
				pk = append(pk, cols[i].name)
			}
			for _, c := range cols {
				identity := c.pk > 0 && len(pk) == 1 && strings.EqualFold(c.typ, "INTEGER") && strings.Contains(strings.ToUpper(ddl), "AUTOINCREMENT")
				column(table, c.name, c.typ, c.notNull || c.pk > 0, c.def.String, identity)
			}
			if len(pk) > 0 {
				add("%s primary key (%s)", table, strings.Join(pk, ", "))
			}
			for _, idx := range queryStrings(t, db, `SELECT name || char(9) || "unique" || char(9) || origin FROM pragma_index_list($1)`, table) {
				f := strings.Split(idx, "\t")
				name, unique, origin := f[0], f[1] == "1", f[2]
				cols := strings.Join(queryStrings(t, db, `SELECT name FROM pragma_index_info($1) ORDER BY seqno`, name), ", ")
				switch origin {
				case "pk": // Described above.
				case "u":
					add("%s unique (%s)", table, cols)
				default:
					add("%s index %s%s (%s)", table, name, map[bool]string{true: " unique"}[unique], cols)
				}
			}
			fks := queryStrings(t, db, `SELECT id || char(9) || "table" || char(9) || "from" || char(9) || "to" || char(9) || on_delete
				FROM pragma_foreign_key_list($1) ORDER BY id, seq`, table)
			type fk struct {
				ref, onDelete string
				from, to      []string
			}
			var list []*fk
			byID := map[string]*fk{}
			for _, row := range fks {
				f := strings.Split(row, "\t")
				k := byID[f[0]]
				if k == nil {
					k = &fk{ref: f[1], onDelete: strings.ToLower(f[4])}
					byID[f[0]] = k
					list = append(list, k)
				}
				k.from, k.to = append(k.from, f[2]), append(k.to, f[3])
			}
			for _, k := range list {
				add("%s foreign key (%s) references %s (%s) on delete %s", table, strings.Join(k.from, ", "), k.ref, strings.Join(k.to, ", "), k.onDelete)
			}
		}
	} else {
		for _, table := range queryStrings(t, db, `SELECT table_name FROM information_schema.tables
			WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`) {
			add("%s table", table)
		}
		for _, row := range queryStrings(t, db, `SELECT table_name || chr(9) || column_name || chr(9) || data_type || chr(9) ||
				is_nullable || chr(9) || COALESCE(column_default, '') || chr(9) || is_identity
			FROM information_schema.columns WHERE table_schema = current_schema()`) {
			f := strings.Split(row, "\t")
			column(f[0], f[1], f[2], f[3] == "NO", f[4], f[5] == "YES")
		}
		for _, row := range queryStrings(t, db, `SELECT t.relname || chr(9) || i.relname || chr(9) || ix.indisunique || chr(9) ||
				ix.indisprimary || chr(9) || COALESCE(c.contype::text, '-') || chr(9) ||
				(SELECT string_agg(pg_get_indexdef(ix.indexrelid, k, true), ', ' ORDER BY k) FROM generate_series(1, ix.indnkeyatts) k)
			FROM pg_index ix
			JOIN pg_class i ON i.oid = ix.indexrelid
			JOIN pg_class t ON t.oid = ix.indrelid
			JOIN pg_namespace n ON n.oid = t.relnamespace
			LEFT JOIN pg_constraint c ON c.conindid = ix.indexrelid AND c.contype IN ('p', 'u')
			WHERE n.nspname = current_schema()`) {
			f := strings.Split(row, "\t")
			table, name, unique, primary, constraint, cols := f[0], f[1], f[2] == "true", f[3] == "true", f[4], f[5]
			switch {
			case primary:
				add("%s primary key (%s)", table, cols)
			case constraint == "u":
				add("%s unique (%s)", table, cols)
			default:
				add("%s index %s%s (%s)", table, name, map[bool]string{true: " unique"}[unique], cols)
			}
		}
		actions := map[string]string{"a": "no action", "r": "restrict", "c": "cascade", "n": "set null", "d": "set default"}
		for _, row := range queryStrings(t, db, `SELECT t.relname || chr(9) || r.relname || chr(9) || c.confdeltype::text || chr(9) ||
				(SELECT string_agg(a.attname, ', ' ORDER BY k.ord) FROM unnest(c.conkey) WITH ORDINALITY k(attnum, ord)
					JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum) || chr(9) ||
				(SELECT string_agg(a.attname, ', ' ORDER BY k.ord) FROM unnest(c.confkey) WITH ORDINALITY k(attnum, ord)
					JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.attnum)
			FROM pg_constraint c
			JOIN pg_class t ON t.oid = c.conrelid
			JOIN pg_class r ON r.oid = c.confrelid
			JOIN pg_namespace n ON n.oid = t.relnamespace
			WHERE c.contype = 'f' AND n.nspname = current_schema()`) {
			f := strings.Split(row, "\t")
			add("%s foreign key (%s) references %s (%s) on delete %s", f[0], f[3], f[1], f[4], actions[f[2]])
		}
	}
	out = slices.DeleteFunc(out, func(line string) bool {
		table, _, _ := strings.Cut(line, " ")
		return slices.Contains(migrationTables, table)
	})
	slices.Sort(out)
	return out
}

// migrationTables are the tables that run the migrations rather than
// hold Quarry's data: goose's versions, and the lock SQLite's migrations
// take (PostgreSQL's take an advisory lock).
var migrationTables = []string{"goose_db_version", "quarry_migration_lock"}

// normalType names a column type in words both dialects share.
func normalType(t *testing.T, dialect, typ string) string {
	t.Helper()
	types := map[string]string{"INTEGER": "integer", "BIGINT": "integer", "TEXT": "text", "BLOB": "bytes", "BOOLEAN": "boolean"}
	if dialect == store.Postgres {
		types = map[string]string{"bigint": "integer", "integer": "integer", "smallint": "integer", "text": "text", "bytea": "bytes", "boolean": "boolean"}
	}
	if n, ok := types[typ]; ok {
		return n
	}
	t.Errorf("%s type %q: describeSchema does not know it; say what it is in normalType", dialect, typ)
	return "?" + typ
}

// cast matches PostgreSQL's cast of a default, such as ::text.
var cast = regexp.MustCompile(`::[a-z ]+$`)

// normalDefault writes a default as both dialects do: 'private' (not
// 'private'::text), false (not FALSE).
func normalDefault(def string) string {
	def = cast.ReplaceAllString(def, "")
	if !strings.HasPrefix(def, "'") {
		def = strings.ToLower(def)
	}
	return def
}

// queryStrings returns the one text column of the rows of a query.
func queryStrings(t *testing.T, db *sql.DB, q string, args ...any) []string {
	t.Helper()
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		t.Fatalf("%v\n%s", err, q)
	}
	var out []string
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
	return out
}
