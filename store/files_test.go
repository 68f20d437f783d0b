package store_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/quarryhq/quarry/store/storetest"
)

// TestSQLiteFileModes checks that a new SQLite database, its write-ahead
// log and shared-memory files, and the directory made for them are for
// Quarry's user alone, whatever the umask lets through. The test is about
// SQLite files, so it runs on SQLite whichever database the others use.
func TestSQLiteFileModes(t *testing.T) {
	old := syscall.Umask(0o022) // The usual one, which leaves files readable by all.
	defer syscall.Umask(old)
	dir := filepath.Join(t.TempDir(), "data")
	path := filepath.Join(dir, "quarry.db")
	keys := storetest.Key(t)
	db := storetest.OpenURL(t, "sqlite:"+path, keys) // Migrated: it has written.
	if _, err := db.Tools(ctx); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]fs.FileMode{
		dir:           fs.ModeDir | 0o700,
		path:          0o600,
		path + "-wal": 0o600,
		path + "-shm": 0o600,
	} {
		fi, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode() & (fs.ModeDir | fs.ModePerm); got != want {
			t.Errorf("%s has mode %v, want %v", filepath.Base(name), got, want)
		}
	}
	// A database that is already there keeps the mode its owner gave it.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	db = storetest.OpenURL(t, "sqlite:"+path, keys)
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("reopened database: %v, %v; want mode 0640 kept", fi.Mode(), err)
	}
	// Which OpenToOthers reports, with the -wal and -shm files SQLite
	// made with the database's mode, for quarry serve to warn about.
	all := []string{path, path + "-wal", path + "-shm"}
	if got, err := db.OpenToOthers(); err != nil || !slices.Equal(got, all) {
		t.Errorf("OpenToOthers = %v, %v; want %v", got, err, all)
	}
	for _, name := range all {
		if err := os.Chmod(name, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := db.OpenToOthers(); err != nil || len(got) != 0 {
		t.Errorf("OpenToOthers of 0600 files = %v, %v; want none", got, err)
	}
}
