// Package store keeps Quarry's domain objects in SQLite or PostgreSQL. It is
// the only package that speaks SQL.
//
// Both dialects share one set of SQL texts: placeholders are written $1, $2,
// ... (which SQLite accepts too), timestamps are integer microseconds since
// the Unix epoch, and JSON is kept as text. The schema lives in embedded
// goose migrations, one directory per dialect with the same numbering.
//
// Every write runs in one transaction that also appends its audit entry, so
// a change and its record commit together or not at all. Secrets are sealed
// with AES-256-GCM before they reach the database (see Keyring).
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // PostgreSQL driver "pgx"
	_ "modernc.org/sqlite"             // SQLite driver "sqlite"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/index"
)

// Dialects.
const (
	SQLite   = "sqlite"
	Postgres = "postgres"
)

// DB is a Quarry database.
type DB struct {
	// Now returns the current time; tests may replace it.
	Now func() time.Time

	dialect    string
	source     string // The driver's data source: a URL or a file path.
	write      *pool  // Every write transaction; one connection on SQLite.
	read       *pool  // Reads; the same pool as write on PostgreSQL.
	keys       *Keyring
	migrations fs.FS    // The migrations, a directory per dialect.
	held       *os.File // SQLite: the database file, share-locked while open (see Restore).
	statements atomic.Int64
	runs       runQueue                  // The audit entries of tool runs waiting to be written (store/toolrun.go).
	cache      atomic.Pointer[readCache] // Callers of API keys and tools kept between requests, once migrated (store/cache.go).
	// indexNudge receives a value when this server has written
	// index.NudgeChunks pending chunks since it last did (store/searchindex.go);
	// pendingWritten counts them.
	indexNudge     chan struct{}
	pendingWritten atomic.Int64
	// blocks keeps the search index's blocks that searches read
	// (store/searchreader.go).
	blocks *blockCache
	// texts compresses the documents' texts (store/documenttext.go).
	texts *textCodec
}

// pool is a connection pool that counts the statements it runs and, on
// SQLite, keeps them prepared (pgx keeps its own cache on PostgreSQL). It
// runs statements as conn does, outside any transaction.
type pool struct {
	*sql.DB
	statements *atomic.Int64
	prepared   *stmtCache // nil: statements are not kept
}

// QueryContext runs a query on the pool (see conn).
func (p *pool) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return conn{p: p}.QueryContext(ctx, query, args...)
}

// QueryRowContext runs a single-row query on the pool (see conn).
func (p *pool) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return conn{p: p}.QueryRowContext(ctx, query, args...)
}

// ExecContext runs a statement on the pool (see conn).
func (p *pool) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return conn{p: p}.ExecContext(ctx, query, args...)
}

// querier runs queries: a pool, a write transaction (Tx) or a read
// snapshot. Helpers that read take one, so that they serve all three.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// scanner is a row being read: *sql.Row or *sql.Rows.
type scanner interface{ Scan(...any) error }

// eachRow runs query on q and calls fn with each row, in order, until fn
// fails.
func eachRow(ctx context.Context, q querier, query string, args []any, fn func(row scanner) error) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return mapError(err)
	}
	for rows.Next() {
		if err := fn(rows); err != nil {
			rows.Close()
			return mapError(err)
		}
	}
	return closeRows(rows)
}

// queryAll runs query on q and scans each row with scan, in order: an
// empty answer is an empty slice, not nil.
func queryAll[T any](ctx context.Context, q querier, scan func(interface{ Scan(...any) error }) (T, error), query string, args ...any) ([]T, error) {
	out := []T{}
	err := eachRow(ctx, q, query, args, func(row scanner) error {
		v, err := scan(row)
		out = append(out, v)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// conn runs statements on pool p, inside transaction tx when it is not
// nil, and is the one place that counts them and uses the prepared ones: on
// the pool a statement is prepared when first met; inside a transaction a
// statement the pool has prepared is used, and one it has not is noted, to
// be prepared when the transaction ends (it holds a connection that
// preparing might wait for).
type conn struct {
	p  *pool
	tx *sql.Tx
}

// stmt returns the prepared statement to run query with, or nil to run it
// as text.
func (c conn) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	c.p.statements.Add(1)
	if c.tx == nil {
		return c.p.prepared.get(ctx, c.p.DB, query)
	}
	if st := c.p.prepared.lookup(query); st != nil {
		return c.tx.StmtContext(ctx, st), nil
	}
	return nil, nil
}

// QueryContext runs a query and counts it.
func (c conn) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := c.stmt(ctx, query)
	switch {
	case err != nil:
		return nil, err
	case st != nil:
		return st.QueryContext(ctx, args...)
	case c.tx != nil:
		return c.tx.QueryContext(ctx, query, args...)
	}
	return c.p.DB.QueryContext(ctx, query, args...)
}

// QueryRowContext runs a single-row query and counts it.
func (c conn) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := c.stmt(ctx, query)
	switch {
	case st != nil && err == nil:
		return st.QueryRowContext(ctx, args...)
	case c.tx != nil:
		return c.tx.QueryRowContext(ctx, query, args...)
	}
	return c.p.DB.QueryRowContext(ctx, query, args...)
}

// ExecContext runs a statement and counts it.
func (c conn) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := c.stmt(ctx, query)
	switch {
	case err != nil:
		return nil, err
	case st != nil:
		return st.ExecContext(ctx, args...)
	case c.tx != nil:
		return c.tx.ExecContext(ctx, query, args...)
	}
	return c.p.DB.ExecContext(ctx, query, args...)
}

// stmtCache keeps prepared statements by their text, so that SQLite parses
// each once per connection rather than once per use: parsing is a third of
// the cost of a short transaction. Only short texts are kept, and only so
// many: the ones built for bulk inserts and long filters are not worth it.
//
// A statement met inside a write transaction cannot be prepared there (the
// transaction holds the write pool's one connection), so it is noted and
// prepared when the transaction ends.
type stmtCache struct {
	mu      sync.Mutex
	stmts   map[string]*sql.Stmt
	pending map[string]bool
}

const (
	maxPrepared     = 256
	maxPreparedText = 4096
)

func newStmtCache() *stmtCache {
	return &stmtCache{stmts: map[string]*sql.Stmt{}, pending: map[string]bool{}}
}

// cacheable reports whether query is worth keeping.
func (c *stmtCache) cacheable(query string) bool {
	return c != nil && len(query) <= maxPreparedText && len(c.stmts) < maxPrepared
}

// get returns the prepared statement for query, preparing it on db if need
// be, or nil if query is not kept (and so must run unprepared). It does not
// hold the cache's lock while preparing, which needs a connection.
func (c *stmtCache) get(ctx context.Context, db *sql.DB, query string) (*sql.Stmt, error) {
	if c == nil {
		return nil, nil
	}
	c.mu.Lock()
	st, ok := c.stmts[query]
	keep := c.cacheable(query)
	c.mu.Unlock()
	if ok || !keep {
		return st, nil
	}
	st, err := db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	return c.keep(query, st), nil
}

// keep stores st as the statement of query, unless another was stored
// meanwhile: then st is closed and the other returned.
func (c *stmtCache) keep(query string, st *sql.Stmt) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	if other, ok := c.stmts[query]; ok {
		st.Close()
		return other
	}
	c.stmts[query] = st
	return st
}

// lookup returns the prepared statement for query, or nil after noting it
// for preparePending if it is worth keeping.
func (c *stmtCache) lookup(query string) *sql.Stmt {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.stmts[query]
	if !ok && c.cacheable(query) {
		c.pending[query] = true
	}
	return st
}

// preparePending prepares on db the statements noted by lookup. A
// statement that fails to prepare is simply not kept. It does not hold the
// cache's lock while preparing: a transaction that holds the connection may
// be waiting for the lock.
func (c *stmtCache) preparePending(ctx context.Context, db *sql.DB) {
	if c == nil {
		return
	}
	c.mu.Lock()
	var queries []string
	for query := range c.pending {
		delete(c.pending, query)
		if _, ok := c.stmts[query]; !ok && c.cacheable(query) {
			queries = append(queries, query)
		}
	}
	c.mu.Unlock()
	for _, query := range queries {
		if st, err := db.PrepareContext(ctx, query); err == nil {
			c.keep(query, st)
		}
	}
}

// Statements returns the number of SQL statements db has run. Tests use it
// to show that the cost of a listing does not grow with its length.
func (db *DB) Statements() int64 { return db.statements.Load() }

// DefaultSearchCache is the bound of Options.SearchCache when none is
// given: 256 MiB.
const DefaultSearchCache = 256 << 20

// Options configure Open.
type Options struct {
	// MaxConns caps the connections of the read pool (PostgreSQL: of the
	// only pool). Zero means 16.
	MaxConns int
	// SearchCache bounds the bytes of the search index's blocks kept in
	// memory between searches (blockCache). Zero means
	// DefaultSearchCache; a negative bound keeps none.
	SearchCache int64
	// Migrations, if not nil, replaces the embedded migrations: a
	// directory per dialect ("sqlite", "postgres") of goose SQL files.
	// Tests use it to run a migration that fails.
	Migrations fs.FS
}

// ParseURL splits a database URL into its dialect and driver data source:
// postgres:// and postgresql:// URLs are PostgreSQL; sqlite:<path>,
// file:<path> and plain paths are SQLite files.
func ParseURL(u string) (dialect, source string, err error) {
	switch {
	case strings.HasPrefix(u, "postgres://"), strings.HasPrefix(u, "postgresql://"):
		return Postgres, u, nil
	case u == "":
		return "", "", errors.New("store: empty database URL")
	}
	path := u
	for _, p := range []string{"sqlite://", "sqlite:", "file:"} {
		if rest, ok := strings.CutPrefix(u, p); ok {
			path = rest
			break
		}
	}
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i] // Options are ours to set.
	}
	if path == "" {
		return "", "", fmt.Errorf("store: no file path in database URL %q", u)
	}
	return SQLite, path, nil
}

// Open connects to the database at url (see ParseURL) and seals secrets with
// keys. It does not migrate: call Migrate.
func Open(ctx context.Context, url string, keys *Keyring, opts Options) (*DB, error) {
	dialect, source, err := ParseURL(url)
	if err != nil {
		return nil, err
	}
	if keys == nil {
		return nil, errors.New("store: no encryption keyring")
	}
	if opts.MaxConns <= 0 {
		opts.MaxConns = 16
	}
	if opts.SearchCache == 0 {
		opts.SearchCache = DefaultSearchCache
	}
	texts, err := newTextCodec()
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	db := &DB{Now: time.Now, dialect: dialect, source: source, keys: keys, migrations: opts.Migrations,
		indexNudge: make(chan struct{}, 1), blocks: newBlockCache(opts.SearchCache), texts: texts}
	if db.migrations == nil {
		db.migrations = migrations
	}
	db.write, db.read = &pool{statements: &db.statements}, &pool{statements: &db.statements}
	if dialect == Postgres {
		db.write.DB, err = sql.Open("pgx", withConnectTimeout(source))
		if err != nil {
			return nil, fmt.Errorf("store: %w", err)
		}
		db.write.SetMaxOpenConns(opts.MaxConns)
		db.write.SetMaxIdleConns(opts.MaxConns)
		db.write.SetConnMaxIdleTime(5 * time.Minute)
		db.read = db.write
	} else {
		if err := createSQLiteFile(source); err != nil {
			return nil, err
		}
		// One writer (SQLite allows one at a time; BEGIN IMMEDIATE takes the
		// lock up front so that transactions queue instead of failing), and
		// a pool of read-only readers that WAL lets run beside it.
		db.write.DB, err = sql.Open("sqlite", sqliteDSNBusy(source, false, writerBusyTimeout))
		if err != nil {
			return nil, fmt.Errorf("store: %w", err)
		}
		db.write.SetMaxOpenConns(1)
		db.write.SetMaxIdleConns(1)
		db.write.SetConnMaxIdleTime(0)
		db.read.DB, err = sql.Open("sqlite", sqliteDSN(source, true))
		if err != nil {
			db.write.Close()
			return nil, fmt.Errorf("store: %w", err)
		}
		db.read.SetMaxOpenConns(opts.MaxConns)
		db.read.SetMaxIdleConns(opts.MaxConns)
		db.read.SetConnMaxIdleTime(0)
		db.read.prepared, db.write.prepared = newStmtCache(), newStmtCache()
	}
	// The write connection sets WAL mode as it opens, which waits for
	// processes that hold the write lock, migrating for instance.
	if err := db.whileBusy(ctx, func() error { return db.write.PingContext(ctx) }); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: connecting to %s: %w", dialect, unavailable(err))
	}
	if dialect == SQLite {
		if db.held, err = holdShared(source); err != nil {
			db.Close()
			if errors.Is(err, errFileInUse) {
				err = errors.New("quarry restore is replacing it")
			}
			return nil, fmt.Errorf("store: opening %s: %w", source, err)
		}
	}
	return db, nil
}

// createSQLiteFile makes the SQLite database file at path, and the
// directories leading to it, if they are not there yet, for this user alone
// (0600 and 0700): the database holds API key hashes, emails and the audit
// log. SQLite gives the files it makes beside the database (-wal, -shm) the
// database file's mode. A file that is there already keeps its mode.
func createSQLiteFile(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("store: creating the database directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("store: creating the database file: %w", err)
	}
	return f.Close()
}

// connectTimeout bounds a PostgreSQL connection attempt made without a
// deadline of its own (at start-up, by the CLI); requests bound theirs with
// their context as well.
const connectTimeout = 10 * time.Second

// withConnectTimeout adds connect_timeout to a PostgreSQL URL that has none,
// so that a server that does not answer (a dropped packet, not a refused
// connection) cannot hang a connection attempt for minutes.
func withConnectTimeout(source string) string {
	u, err := url.Parse(source)
	if err != nil {
		return source // pgx reports the error.
	}
	q := u.Query()
	if q.Has("connect_timeout") {
		return source
	}
	q.Set("connect_timeout", strconv.Itoa(int(connectTimeout/time.Second)))
	u.RawQuery = q.Encode()
	return u.String()
}

// SQLite waits for another process's write lock in SQLite itself (its busy
// time-out), which a context cannot interrupt. The write pool therefore
// waits in short slices, and begin retries between them until the
// request's context or sqliteBusyTimeout runs out.
const (
	sqliteBusyTimeout = 10 * time.Second
	writerBusyTimeout = 100 * time.Millisecond
)

func sqliteDSN(path string, readOnly bool) string {
	return sqliteDSNBusy(path, readOnly, sqliteBusyTimeout)
}

// sqliteDSNBusy is sqliteDSN with the given busy time-out.
func sqliteDSNBusy(path string, readOnly bool, busy time.Duration) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout("+strconv.FormatInt(busy.Milliseconds(), 10)+")")
	if readOnly {
		q.Add("_pragma", "query_only(1)")
	} else {
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_txlock", "immediate")
	}
	q.Add("_pragma", "foreign_keys(1)")
	// NORMAL is durable across process crashes in WAL mode (the OS holds
	// the log); only a power cut can lose the last transactions.
	q.Add("_pragma", "synchronous(NORMAL)")
	// Statement journals (and sorts) in memory: a statement that writes
	// many rows (the search index's postings) would otherwise write each
	// page it changes to a temporary file first, in case it fails halfway.
	q.Add("_pragma", "temp_store(MEMORY)")
	return "file:" + path + "?" + q.Encode()
}

// Dialect returns SQLite or Postgres.
func (db *DB) Dialect() string { return db.dialect }

// OpenToOthers returns the files of a SQLite database (the database, and
// its -wal and -shm files) that users other than their owner may read or
// write: new ones are made 0600, but those made by Quarry before it did so
// are 0644 under the usual umask, and keep their mode. It returns nil on
// PostgreSQL.
func (db *DB) OpenToOthers() ([]string, error) {
	if db.dialect != SQLite {
		return nil, nil
	}
	var loose []string
	for _, suffix := range []string{"", "-wal", "-shm"} {
		fi, err := os.Stat(db.source + suffix)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("store: %w", err)
		}
		if fi.Mode().Perm()&0o077 != 0 {
			loose = append(loose, db.source+suffix)
		}
	}
	return loose, nil
}

// Close closes the database.
func (db *DB) Close() error {
	err := db.write.Close()
	if db.read != db.write {
		err = errors.Join(err, db.read.Close())
	}
	if db.held != nil {
		db.held.Close()
	}
	return err
}

// Ping reports whether the database answers. On PostgreSQL a ping is a
// round trip to the server; on SQLite, where a pooled connection answers a
// ping without touching the file, it reads the file's header. It does not
// count as a statement.
func (db *DB) Ping(ctx context.Context) error {
	err := db.read.PingContext(ctx)
	if err == nil && db.dialect == SQLite {
		var v int64
		err = db.read.DB.QueryRowContext(ctx, `PRAGMA schema_version`).Scan(&v)
	}
	if err != nil {
		return unavailable(err)
	}
	return nil
}

// Stats returns the statistics of the read pool and of the write pool.
func (db *DB) Stats() (read, write sql.DBStats) { return db.read.Stats(), db.write.Stats() }

// now returns the current time at the store's precision.
func (db *DB) now() quarry.Time { return quarry.TimeFromMicros(db.Now().UnixMicro()) }

// Tx is a write transaction. Its helpers append audit entries and mark the
// connector status listing as changed.
type Tx struct {
	conn
	db      *DB
	now     quarry.Time
	changes []listingChange // What the transaction changes in the status listing.
	// pendingChunks: the chunks the transaction writes to the search
	// index, pending (store/searchindex.go).
	pendingChunks int64
}

// reader returns a Tx that reads outside any transaction, from the
// reading connections: for a check that a write transaction repeats, made
// before the work that precedes the transaction.
func (db *DB) reader() *Tx {
	return &Tx{conn: conn{p: db.read}, db: db, now: db.now()}
}

// update runs fn in a write transaction and commits if fn returns nil.
func (db *DB) update(ctx context.Context, fn func(*Tx) error) error {
	sqlTx, err := db.begin(ctx)
	if err != nil {
		return mapError(err)
	}
	// Deferred first, so run last: once the transaction has given back the
	// write connection.
	defer db.write.prepared.preparePending(ctx, db.write.DB)
	tx := &Tx{conn: conn{p: db.write, tx: sqlTx}, db: db, now: db.now()}
	defer sqlTx.Rollback()
	if err := fn(tx); err != nil {
		return mapError(err)
	}
	if len(tx.changes) > 0 {
		// Last, so that the row lock on PostgreSQL is held briefly.
		if err := tx.logChanges(ctx); err != nil {
			return mapError(err)
		}
	}
	if err := sqlTx.Commit(); err != nil {
		return mapError(err)
	}
	forgetVersion(ctx) // What it changed may be kept copies.
	if tx.pendingChunks > 0 && db.pendingWritten.Add(tx.pendingChunks) >= index.NudgeChunks {
		db.pendingWritten.Store(0)
		select {
		case db.indexNudge <- struct{}{}:
		default:
		}
	}
	return nil
}

// snapshot runs fn with a querier that reads one snapshot of the
// database, so that reads that must agree (a count and its page, a
// listing and its parts) do.
func (db *DB) snapshot(ctx context.Context, fn func(q querier) error) error {
	tx, err := db.read.BeginTx(ctx, db.snapshotOptions())
	if err != nil {
		return mapError(err)
	}
	defer db.read.prepared.preparePending(ctx, db.read.DB)
	defer tx.Rollback()
	return fn(conn{p: db.read, tx: tx})
}

// snapshotOptions are the options of a read transaction that sees one
// snapshot: SQLite's deferred transactions do (WAL), PostgreSQL needs
// REPEATABLE READ.
func (db *DB) snapshotOptions() *sql.TxOptions {
	if db.dialect == Postgres {
		return &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}
	}
	return nil
}

// begin starts a write transaction. On SQLite, while another process holds
// the write lock, it tries again every writerBusyTimeout until ctx ends or
// sqliteBusyTimeout has passed, so that a request waits no longer than its
// context allows.
func (db *DB) begin(ctx context.Context) (*sql.Tx, error) {
	var tx *sql.Tx
	err := db.whileBusy(ctx, func() (err error) {
		tx, err = db.write.BeginTx(ctx, nil)
		return err
	})
	return tx, err
}

// whileBusy runs fn, and on SQLite runs it again while it fails because
// another process holds the write lock, until ctx ends or
// sqliteBusyTimeout has passed.
func (db *DB) whileBusy(ctx context.Context, fn func() error) error {
	deadline := time.Now().Add(sqliteBusyTimeout)
	for {
		err := fn()
		if err == nil || db.dialect != SQLite || !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// audit appends an audit entry for a change made by c (a user, or the
// company's directory).
func (tx *Tx) audit(ctx context.Context, c *quarry.Caller, action, resourceType string, resourceID any, fields []string) error {
	if fields == nil {
		fields = []string{}
	}
	var actor *string
	var keyID, scimTokenID *int64
	switch {
	case c == nil:
	case c.Directory != nil: // The company's directory, named by its token.
		scimTokenID = &c.Directory.ID
	default:
		actor = &c.ID
		if c.APIKeyID != 0 {
			keyID = &c.APIKeyID
		}
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO audit_events (at, actor_id, api_key_id, scim_token_id, action, resource_type, resource_id, fields, request_id, source_ip)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		tx.now.Micros(), actor, keyID, scimTokenID, action, resourceType, fmt.Sprint(resourceID), jsonText(fields),
		quarry.RequestIDFrom(ctx), quarry.ClientIPFrom(ctx))
	return err
}

// auditAs appends an audit entry for a change made by user id (or by
// nobody known, for ""), outside any request of theirs: a sign-in.
func (tx *Tx) auditAs(ctx context.Context, userID, action, resourceType string, resourceID any, fields []string) error {
	if userID == "" {
		return tx.audit(ctx, nil, action, resourceType, resourceID, fields)
	}
	return tx.audit(ctx, &quarry.Caller{User: quarry.User{ID: userID}}, action, resourceType, resourceID, fields)
}

// DataVersion returns a number that changes whenever a committed write
// changes what the connector status listing shows, on every replica.
func (db *DB) DataVersion(ctx context.Context) (int64, error) {
	var v int64
	err := db.read.QueryRowContext(ctx, `SELECT version FROM data_version WHERE id = 1`).Scan(&v)
	return v, mapError(err)
}

// eachInts runs a query of two integer columns and calls fn for each row.
func eachInts(ctx context.Context, q querier, query string, args []any, fn func(a, b int64)) error {
	return eachRow(ctx, q, query, args, func(row scanner) error {
		var a, b int64
		if err := row.Scan(&a, &b); err != nil {
			return err
		}
		fn(a, b)
		return nil
	})
}

// anys returns the elements of s as query arguments.
func anys[T any](s []T) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// sqlIn returns "column IN ($n, …)" for values, which it appends to args:
// the one way the store builds an IN list.
func sqlIn(column string, values []any, args *[]any) string {
	var b strings.Builder
	b.WriteString(column + " IN (")
	for i, v := range values {
		if i > 0 {
			b.WriteString(", ")
		}
		*args = append(*args, v)
		fmt.Fprintf(&b, "$%d", len(*args))
	}
	b.WriteString(")")
	return b.String()
}
