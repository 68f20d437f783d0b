package store_test

import (
	"io/fs"
	"os"
	"testing"

	"github.com/quarryhq/quarry/store"
)

func TestParseURL(t *testing.T) {
	for _, tt := range []struct{ in, dialect, source string }{
		{"postgres://u@h:5432/db?sslmode=disable", store.Postgres, "postgres://u@h:5432/db?sslmode=disable"},
		{"postgresql://u@h/db", store.Postgres, "postgresql://u@h/db"},
		{"sqlite:./data/quarry.db", store.SQLite, "./data/quarry.db"},
		{"sqlite:///var/lib/quarry.db", store.SQLite, "/var/lib/quarry.db"},
		{"file:q.db?mode=rwc", store.SQLite, "q.db"},
		{"/tmp/q.db", store.SQLite, "/tmp/q.db"},
	} {
		d, s, err := store.ParseURL(tt.in)
		if err != nil || d != tt.dialect || s != tt.source {
			t.Errorf("ParseURL(%q) = %q, %q, %v; want %q, %q", tt.in, d, s, err, tt.dialect, tt.source)
		}
	}
	for _, bad := range []string{"", "sqlite:", "file:?x=1"} {
		if _, _, err := store.ParseURL(bad); err == nil {
			t.Errorf("ParseURL(%q) succeeded", bad)
		}
	}
}

// TestMigrationParity checks that both dialects have the same migrations.
func TestMigrationParity(t *testing.T) {
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
	sq, pg := names("sqlite"), names("postgres")
	if len(sq) == 0 || len(sq) != len(pg) {
		t.Fatalf("sqlite migrations %v, postgres migrations %v", sq, pg)
	}
	for i := range sq {
		if sq[i] != pg[i] {
			t.Errorf("migration %d: sqlite %q, postgres %q", i, sq[i], pg[i])
		}
	}
}
