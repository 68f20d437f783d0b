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
	"net/url"
	"os"
	"path/filepath"
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
