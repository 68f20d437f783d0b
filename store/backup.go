package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/quarryhq/quarry/internal/progress"
)

// ErrBackupPostgres is returned by Backup on PostgreSQL, which pg_dump backs
// up (docs/operations.md says how).
var ErrBackupPostgres = errors.New("store: PostgreSQL databases are backed up with pg_dump, not by Quarry")

// BackupOptions configure Backup.
type BackupOptions struct {
	// Progress, if not nil, is called every ProgressEvery (a second if it
	// is not positive), from another goroutine, and once at the end, with
	// the bytes written so far of an estimate of the copy's size.
	Progress      func(progress.Count)
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
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("store: %w", err)
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

	total := (pages - free) * pageSize
	// report reports the size of the copy so far, against the estimate or,
	// once done, against itself.
	report := func(done bool) {
		if fi, err := os.Stat(tmpName); err == nil && opts.Progress != nil {
			if done {
				opts.Progress(progress.Count{Done: fi.Size(), Total: fi.Size()})
			} else {
				opts.Progress(progress.Count{Done: fi.Size(), Total: max(total, fi.Size())})
			}
		}
	}
	stop := func() {}
	if opts.Progress != nil {
		stop = progress.Tick(opts.ProgressEvery, func() { report(false) })
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
	stop()
	if err != nil {
		return fmt.Errorf("store: copying the database: %w", mapError(err))
	}
	report(true)
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

// ErrExists is returned by Restore when the database exists and it was not
// asked to replace it.
var ErrExists = errors.New("store: the database exists")

// ErrInUse is returned by Restore when a store has the database open: a
// server, or a command such as quarry check.
var ErrInUse = errors.New("store: the database is in use (stop quarry serve, and any other quarry command on it, first)")

// RestoreOptions configure Restore.
type RestoreOptions struct {
	// Replace lets Restore replace an existing database, which is kept
	// beside it, renamed.
	Replace bool
	// Check configures the check of the copy's secrets.
	Check CheckOptions
}

// RestoreResult is what Restore found in the backup and did.
type RestoreResult struct {
	SchemaVersion int64 // The backup's schema version; the next Migrate brings it up to date.
	Problems      []string
	Secrets       *CheckResult
	Index         *IndexCheck // Its search index against its documents.
	Objects       []ObjectCount
	Replaced      string // Where the database that was replaced went, if one was.
	// Stale is where WAL files found at the path without their database
	// went (with their suffixes, -wal and -shm), if there were any: SQLite
	// would have applied them to the restored database.
	Stale string
}

// sqliteMagic starts every SQLite database file.
const sqliteMagic = "SQLite format 3\x00"

// Restore puts the SQLite database backup (made by Backup) in the place of
// the database at path. It copies the backup beside path, checks the copy
// (sound, its search index agreeing with its documents, every secret opens
// with keys, a schema this build knows), and only then gives it the name
// path, with a link, which fails rather than replace a database made at
// path meanwhile (ErrExists). An existing
// database is replaced only with opts.Replace and only if no store has it
// open (ErrInUse); it is renamed path.replaced-<time>, with its WAL files.
// WAL files at path without a database are renamed path.stale-<time>-wal
// and -shm. The backup itself is not changed. If the check fails, nothing
// is changed, and the result says what failed.
func Restore(ctx context.Context, backup, path string, keys *Keyring, opts RestoreOptions) (*RestoreResult, error) {
	f, err := os.Open(backup)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	head := make([]byte, len(sqliteMagic))
	_, err = io.ReadFull(f, head)
	f.Close()
	if err != nil || string(head) != sqliteMagic {
		return nil, fmt.Errorf("store: %s is not a SQLite database", backup)
	}
	_, err = os.Lstat(path)
	exists := err == nil
	if exists && !opts.Replace {
		return nil, fmt.Errorf("%w: %s", ErrExists, path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	tmp, err := copyTemp(backup, path)
	if err != nil {
		return nil, fmt.Errorf("store: copying %s: %w", backup, err)
	}
	done := false
	defer func() {
		if !done {
			for _, suffix := range []string{"", "-wal", "-shm"} {
				os.Remove(tmp + suffix)
			}
		}
	}()
	res, err := checkCopy(ctx, tmp, keys, opts.Check)
	if err != nil {
		return res, err
	}
	if len(res.Problems) > 0 || res.Secrets.Failed > 0 || res.Index.Found() > 0 {
		return res, errors.New("store: the backup failed its check; nothing was changed")
	}
	stamp := time.Now().UTC().Format("20060102T150405Z")
	if exists {
		lock, err := holdExclusive(path)
		if errors.Is(err, errFileInUse) {
			return res, ErrInUse
		}
		if err != nil {
			return res, fmt.Errorf("store: %w", err)
		}
		defer lock.Close()
		res.Replaced = path + ".replaced-" + stamp
		for _, suffix := range []string{"-wal", "-shm", ""} { // The database last.
			if err := os.Rename(path+suffix, res.Replaced+suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
				return res, fmt.Errorf("store: moving the database aside: %w", err)
			}
		}
	} else {
		for _, suffix := range []string{"-wal", "-shm"} {
			if _, err := os.Lstat(path + suffix); err != nil {
				continue
			}
			res.Stale = path + ".stale-" + stamp
			if err := os.Rename(path+suffix, res.Stale+suffix); err != nil {
				return res, fmt.Errorf("store: moving stale WAL files aside: %w", err)
			}
		}
	}
	// A link, unlike a rename, fails if path was made meanwhile.
	if err := os.Link(tmp, path); errors.Is(err, os.ErrExist) {
		moved := ""
		if res.Replaced != "" {
			moved = "; the database that was there is " + res.Replaced
		}
		return res, fmt.Errorf("%w: %s was made while restoring, and the backup was not put in its place%s", ErrExists, path, moved)
	} else if err != nil {
		return res, fmt.Errorf("store: %w", err)
	}
	done = true
	os.Remove(tmp)
	return res, syncDir(filepath.Dir(path))
}

// copyTemp copies the file src to a new 0600 file beside path, synced, and
// returns its name.
func copyTemp(src, path string) (string, error) {
	in, err := os.Open(src)
	if err != nil {
		return "", err
	}
	defer in.Close()
	out, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.restoring")
	if err != nil {
		return "", err
	}
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(out.Name())
		return "", err
	}
	return out.Name(), nil
}

// checkCopy opens the database file at path and checks it: its schema,
// its pages, its search index and its secrets.
func checkCopy(ctx context.Context, path string, keys *Keyring, opts CheckOptions) (*RestoreResult, error) {
	db, err := Open(ctx, "sqlite:"+path, keys, Options{MaxConns: 2})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	res := &RestoreResult{}
	var latest int64
	if res.SchemaVersion, latest, err = db.SchemaVersion(ctx); err != nil {
		return nil, err
	}
	if res.SchemaVersion == 0 {
		return res, errors.New("store: the backup holds no Quarry schema")
	}
	if res.SchemaVersion > latest {
		return res, fmt.Errorf("store: the backup was written by a newer Quarry (schema version %d; this build knows %d)", res.SchemaVersion, latest)
	}
	if res.Problems, err = db.IntegrityCheck(ctx); err != nil {
		return res, err
	}
	if res.Objects, err = db.ObjectCounts(ctx); err != nil {
		return res, err
	}
	if res.Index, err = db.CheckIndex(ctx); err != nil {
		return res, err
	}
	res.Secrets, err = db.CheckSecrets(ctx, opts)
	return res, err
}
