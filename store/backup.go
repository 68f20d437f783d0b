package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// ErrBackupPostgres is returned by Backup on PostgreSQL, which pg_dump backs
// up (docs/operations.md says how).
var ErrBackupPostgres = errors.New("store: PostgreSQL databases are backed up with pg_dump, not by Quarry")

// BackupOptions configure Backup.
type BackupOptions struct {
	// Progress, if not nil, is called every ProgressEvery (and once at the
	// end) from another goroutine with the bytes written so far and an
	// estimate of the copy's size.
	Progress      func(done, total int64)
	ProgressEvery time.Duration
}

// Backup writes a consistent copy of a SQLite database to the file path,
// which must not exist, while the database stays in use: VACUUM INTO reads
// one snapshot (WAL lets writers go on meanwhile) and writes it compacted.
// The copy is written to a temporary file beside path (mode 0600), synced,
// and only then given its name, so that path never holds half a copy. The
// copy's secrets are sealed as in the database: it needs the same keys.
func (db *DB) Backup(ctx context.Context, path string, opts BackupOptions) error {
	if db.dialect != SQLite {
		return ErrBackupPostgres
	}
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("store: %s already exists", path)
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("store: %w", err)
	}
	var pageSize, pages, free int64
	for _, p := range []struct {
		name string
		v    *int64
	}{{"page_size", &pageSize}, {"page_count", &pages}, {"freelist_count", &free}} {
		if err := db.read.QueryRowContext(ctx, `PRAGMA `+p.name).Scan(p.v); err != nil {
			return fmt.Errorf("store: reading the database size: %w", mapError(err))
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.partial")
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	tmpName := tmp.Name()
	tmp.Close() // VACUUM INTO writes into an empty file.
	ok := false
	defer func() {
		if !ok {
			os.Remove(tmpName)
		}
	}()

	stop := make(chan struct{})
	var wg sync.WaitGroup
	total := (pages - free) * pageSize
	report := func() {
		if fi, err := os.Stat(tmpName); err == nil && opts.Progress != nil {
			opts.Progress(fi.Size(), max(total, fi.Size()))
		}
	}
	if opts.Progress != nil {
		every := opts.ProgressEvery
		if every <= 0 {
			every = time.Second
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.NewTicker(every)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
					report()
				}
			}
		}()
	}
	// A connection of its own, that opens the file read-only: the read
	// pool's connections are query-only, which VACUUM INTO's writing to
	// the copy would break.
	err = func() error {
		src, err := sql.Open("sqlite", "file:"+db.source+"?mode=ro&_pragma=busy_timeout("+
			strconv.FormatInt(sqliteBusyTimeout.Milliseconds(), 10)+")")
		if err != nil {
			return err
		}
		defer src.Close()
		_, err = src.ExecContext(ctx, `VACUUM INTO $1`, tmpName)
		return err
	}()
	close(stop)
	wg.Wait()
	if err != nil {
		return fmt.Errorf("store: copying the database: %w", mapError(err))
	}
	report()
	if err := syncFile(tmpName); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	// A link, unlike a rename, fails if path was made meanwhile.
	if err := os.Link(tmpName, path); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	ok = true
	os.Remove(tmpName)
	return syncDir(filepath.Dir(path))
}

// syncFile flushes the file at path to disk.
func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	return errors.Join(err, f.Close())
}

// syncDir flushes a directory, so that names made in it survive a crash.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	// Some file systems cannot sync a directory; the data itself is synced.
	f.Sync()
	return f.Close()
}
