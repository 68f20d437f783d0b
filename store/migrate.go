package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"time"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

//go:embed migrations
var embedded embed.FS

// migrations are the embedded migrations, a directory per dialect. Each
// runs in a transaction of its own, with the row that records it: a
// migration that fails leaves the database as it was before it (those before
// it stay applied). None may say "-- +goose NO TRANSACTION" (a test checks).
var migrations, _ = fs.Sub(embedded, "migrations")

// Migrate brings the schema up to date. It holds a lock meanwhile (an
// advisory lock on PostgreSQL, a lock row on SQLite), so that processes
// that start together migrate once. It refuses a database that a newer
// build migrated further than this one knows: an older build must not
// write to a schema it does not know.
func (db *DB) Migrate(ctx context.Context) error {
	p, done, err := db.migrator()
	if err != nil {
		return err
	}
	defer done()
	current, err := p.GetDBVersion(ctx)
	if err != nil {
		return fmt.Errorf("store: reading schema version: %w", err)
	}
	if sources := p.ListSources(); len(sources) > 0 && current > sources[len(sources)-1].Version {
		return fmt.Errorf("store: the database was migrated by a newer Quarry (schema version %d; this build knows %d): "+
			"run that build or a newer one, or restore a backup made before the upgrade", current, sources[len(sources)-1].Version)
	}
	if _, err := p.Up(ctx); err != nil {
		var pe *goose.PartialError
		if errors.As(err, &pe) {
			applied := ""
			if n := len(pe.Applied); n > 0 {
				applied = fmt.Sprintf(" (the %d before it were applied)", n)
			}
			return fmt.Errorf("store: migration %s failed and was rolled back%s: %w",
				path.Base(pe.Failed.Source.Path), applied, pe.Err)
		}
		return fmt.Errorf("store: migrating: %w", err)
	}
	v, err := p.GetDBVersion(ctx)
	if err != nil || v < emailSkeletonVersion {
		return err
	}
	if err := db.fillEmailKeys(ctx); err != nil || v < groupNameKeyVersion {
		return err
	}
	if err := db.fillGroupNameKeys(ctx); err != nil || v < cacheVersionVersion {
		return err
	}
	if err := db.keepCopies(ctx); err != nil || v < searchVersion {
		return err
	}
	return db.IndexMissing(ctx)
}

// cacheVersionVersion is the migration that adds cache_version and its
// triggers, with which a migrated store keeps copies (keepCopies).
const cacheVersionVersion = 11

// emailSkeletonVersion is the migration that adds users.email_skeleton,
// which fillEmailKeys fills in.
const emailSkeletonVersion = 6

// groupNameKeyVersion is the migration that adds user_groups.name_key,
// which fillGroupNameKeys fills in.
const groupNameKeyVersion = 9

// SchemaVersion returns the version of the newest applied migration, 0 for
// a database without Quarry's schema, and of the newest embedded one. It
// only reads: goose's own way of reading the version creates its table
// (and, on SQLite, the migration lock) in a database that has none.
func (db *DB) SchemaVersion(ctx context.Context) (current, latest int64, err error) {
	entries, err := fs.ReadDir(db.migrations, db.dialect)
	if err != nil {
		return 0, 0, fmt.Errorf("store: listing migrations: %w", err)
	}
	for _, e := range entries {
		if v, err := goose.NumericComponent(e.Name()); err == nil {
			latest = max(latest, v)
		}
	}
	exists := `SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'goose_db_version')`
	if db.dialect == Postgres {
		exists = `SELECT to_regclass('goose_db_version') IS NOT NULL`
	}
	var has bool
	if err := db.read.QueryRowContext(ctx, exists).Scan(&has); err != nil {
		return 0, 0, fmt.Errorf("store: reading schema version: %w", mapError(err))
	}
	if !has {
		return 0, latest, nil
	}
	var v sql.NullInt64
	if err := db.read.QueryRowContext(ctx, `SELECT MAX(version_id) FROM goose_db_version`).Scan(&v); err != nil {
		return 0, 0, fmt.Errorf("store: reading schema version: %w", mapError(err))
	}
	return v.Int64, latest, nil
}

// migrator returns a goose provider for db and a function that releases
// it. On SQLite the provider gets a pool of its own: goose holds one
// connection while its locker takes another, and the write pool has one.
func (db *DB) migrator() (*goose.Provider, func(), error) {
	fsys, err := fs.Sub(db.migrations, db.dialect)
	if err != nil {
		return nil, nil, err
	}
	var (
		pdb     = db.write.DB
		dialect = goose.DialectPostgres
		opts    []goose.ProviderOption
		done    = func() {}
	)
	if db.dialect == Postgres {
		locker, err := lock.NewPostgresSessionLocker()
		if err != nil {
			return nil, nil, err
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	} else {
		dialect = goose.DialectSQLite3
		if pdb, err = sql.Open("sqlite", sqliteDSN(db.source, false)); err != nil {
			return nil, nil, fmt.Errorf("store: %w", err)
		}
		pdb.SetMaxOpenConns(2)
		done = func() { pdb.Close() }
		opts = append(opts, goose.WithLocker(sqliteLocker{}))
	}
	p, err := goose.NewProvider(dialect, pdb, fsys, opts...)
	if err != nil {
		done()
		return nil, nil, fmt.Errorf("store: %w", err)
	}
	return p, done, nil
}

// sqliteLocker serializes migrations of one SQLite file across processes
// with a lock row. goose's session lockers need a second connection, which
// the one-connection write pool of SQLite does not have.
type sqliteLocker struct{}

// staleMigrationLock is the age past which a lock row is taken to belong to
// a process that died while migrating.
const staleMigrationLock = 10 * time.Minute

// Lock waits until it holds the lock row.
func (sqliteLocker) Lock(ctx context.Context, db *sql.DB) error {
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS quarry_migration_lock (
		id INTEGER PRIMARY KEY CHECK (id = 1), locked_at INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("store: creating the migration lock: %w", err)
	}
	for {
		now := time.Now()
		res, err := db.ExecContext(ctx, `INSERT INTO quarry_migration_lock (id, locked_at) VALUES (1, $1)
			ON CONFLICT (id) DO UPDATE SET locked_at = excluded.locked_at WHERE quarry_migration_lock.locked_at < $2`,
			now.UnixMicro(), now.Add(-staleMigrationLock).UnixMicro())
		if err != nil {
			return fmt.Errorf("store: taking the migration lock: %w", err)
		}
		if n, err := res.RowsAffected(); err == nil && n == 1 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Unlock releases the lock row.
func (sqliteLocker) Unlock(ctx context.Context, db *sql.DB) error {
	_, err := db.ExecContext(ctx, `DELETE FROM quarry_migration_lock WHERE id = 1`)
	return err
}
