// Package storetest opens throwaway Quarry databases for tests: a SQLite
// file in the test's temporary directory, or, when QUARRY_TEST_POSTGRES_URL
// is set, a fresh PostgreSQL database created on that server and dropped
// when the test ends.
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry/store"
)

// PostgresEnv names the environment variable that points the tests at a
// PostgreSQL server, e.g.
// postgres://postgres@127.0.0.1:55433/postgres?sslmode=disable.
const PostgresEnv = "QUARRY_TEST_POSTGRES_URL"

// Key returns a fresh keyring for a test database.
func Key(tb testing.TB) *store.Keyring {
	tb.Helper()
	k, err := store.ParseKey(store.NewKey())
	if err != nil {
		tb.Fatal(err)
	}
	kr, err := store.NewKeyring(k)
	if err != nil {
		tb.Fatal(err)
	}
	return kr
}

// URL returns the URL of a new, empty database for tb, removed when tb ends.
func URL(tb testing.TB) string {
	tb.Helper()
	admin := os.Getenv(PostgresEnv)
	if admin == "" {
		return "sqlite:" + filepath.Join(tb.TempDir(), "quarry.db")
	}
	var b [6]byte
	rand.Read(b[:])
	name := "quarry_test_" + hex.EncodeToString(b[:])
	db, err := sql.Open("pgx", admin)
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		db.Close()
		tb.Fatalf("creating test database: %v", err)
	}
	tb.Cleanup(func() {
		defer db.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			tb.Errorf("dropping test database: %v", err)
		}
	})
	u, err := url.Parse(admin)
	if err != nil {
		tb.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

// Open returns a migrated database for tb, closed when tb ends.
func Open(tb testing.TB) *store.DB {
	tb.Helper()
	return OpenURL(tb, URL(tb), Key(tb))
}

// OpenURL opens and migrates the database at u with keys, closed when tb
// ends. Several calls with one URL give several handles (replicas) of one
// database.
func OpenURL(tb testing.TB, u string, keys *store.Keyring) *store.DB {
	tb.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, u, keys, store.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		tb.Fatal(err)
	}
	return db
}

// Upgrade fixtures are databases made by earlier schema versions, kept in
// store/testdata/upgrade/<version>/ (see the README there): sqlite.db, a
// SQLite file, and postgres.sql, a plain pg_dump of the same deployment,
// each with a manifest (sqlite.json, postgres.json) of what it holds.

// Fixture is an upgrade fixture.
type Fixture struct {
	Dir     string // Its directory.
	Version int64  // The schema version it was made at.
}

// Manifest describes what a fixture's database holds, as recorded when it
// was made.
type Manifest struct {
	SchemaVersion int64  `json:"schema_version"`
	Dialect       string `json:"dialect"`
	// Key seals the fixture's secrets. It is a test key, committed with
	// the fixture: never use it for anything else.
	Key string `json:"key"`
	// Tokens are API keys of the fixture by who holds them ("admin",
	// "curator", ...); "revoked" was revoked.
	Tokens map[string]string `json:"tokens"`
	// Secrets counts the sealed secrets by kind (the kinds of
	// store.KindCount).
	Secrets map[string]int `json:"secrets"`
	// OAuthClientSecrets are the OAuth configs' client secrets by config
	// id, which the API never shows.
	OAuthClientSecrets map[string]string `json:"oauth_client_secrets"`
	// Responses are the answers of the API to reads, made with masking off.
	Responses []Response `json:"responses"`
}

// Response is one request to the API and its answer.
type Response struct {
	As     string `json:"as"` // A key of Tokens; "" for no token.
	Method string `json:"method"`
	Path   string `json:"path"`
	// Request is the request's body, for a question asked by POST (a
	// search); "" for none.
	Request string          `json:"request,omitempty"`
	Status  int             `json:"status"`
	ETag    string          `json:"etag,omitempty"`
	Body    json.RawMessage `json:"body"`
}

// FixtureRoot returns the directory of the upgrade fixtures.
func FixtureRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata", "upgrade")
}

// Fixtures returns the upgrade fixtures, oldest first.
func Fixtures(tb testing.TB) []Fixture {
	tb.Helper()
	entries, err := os.ReadDir(FixtureRoot())
	if err != nil {
		tb.Fatal(err)
	}
	var out []Fixture
	for _, e := range entries {
		v, err := strconv.ParseInt(e.Name(), 10, 64)
		if !e.IsDir() || err != nil {
			continue
		}
		out = append(out, Fixture{Dir: filepath.Join(FixtureRoot(), e.Name()), Version: v})
	}
	if len(out) == 0 {
		tb.Fatalf("no upgrade fixtures in %s", FixtureRoot())
	}
	return out
}

// Load copies the fixture's database for tb's dialect (PostgreSQL when
// QUARRY_TEST_POSTGRES_URL is set, SQLite otherwise) into a new database,
// not migrated, and returns its URL and the fixture's manifest.
func (f Fixture) Load(tb testing.TB) (string, *Manifest) {
	tb.Helper()
	u := URL(tb)
	dialect, source, err := store.ParseURL(u)
	if err != nil {
		tb.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(f.Dir, dialect+".json"))
	if err != nil {
		tb.Fatal(err)
	}
	m := &Manifest{}
	if err := json.Unmarshal(data, m); err != nil {
		tb.Fatalf("%s: %v", f.Dir, err)
	}
	if dialect == store.SQLite {
		b, err := os.ReadFile(filepath.Join(f.Dir, "sqlite.db"))
		if err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(source, b, 0o600); err != nil {
			tb.Fatal(err)
		}
		return u, m
	}
	dump, err := os.ReadFile(filepath.Join(f.Dir, "postgres.sql"))
	if err != nil {
		tb.Fatal(err)
	}
	if err := LoadDump(u, string(dump)); err != nil {
		tb.Fatalf("loading %s/postgres.sql: %v", f.Dir, err)
	}
	return u, m
}

// psqlRestrict matches the psql meta-commands that pg_dump writes around a
// plain dump since PostgreSQL 15.14 (\restrict and \unrestrict).
var psqlRestrict = regexp.MustCompile(`(?m)^\\(un)?restrict [A-Za-z0-9]+\n`)

// LoadDump runs a plain-text pg_dump made with --inserts (no COPY blocks)
// on the PostgreSQL database at u, in one transaction, as psql would run it
// with --single-transaction.
func LoadDump(u, dump string) error {
	db, err := sql.Open("pgx", u)
	if err != nil {
		return err
	}
	defer db.Close() // The dump changes settings of its session: it is not reused.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// Without arguments, pgx sends the whole text in one simple query,
	// which may hold many statements.
	if _, err := tx.ExecContext(ctx, psqlRestrict.ReplaceAllString(dump, "")); err != nil {
		return err
	}
	return tx.Commit()
}

// ProveEmails marks every account of the database at u as one whose email
// somebody proved (users.email_verified), as a sign-in whose provider
// vouched for it would: for tests whose API keys' accounts stand for
// people a sync pair's documents name (synced access reaches proven emails
// only).
func ProveEmails(tb testing.TB, u string) {
	tb.Helper()
	driver, dsn := "pgx", u
	if path, ok := strings.CutPrefix(u, "sqlite:"); ok {
		driver, dsn = "sqlite", "file:"+path+"?_pragma=busy_timeout(10000)"
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(context.Background(), `UPDATE users SET email_verified = TRUE`); err != nil {
		tb.Fatalf("proving the accounts' emails: %v", err)
	}
}
