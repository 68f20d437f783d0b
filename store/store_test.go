package store_test

import (
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
