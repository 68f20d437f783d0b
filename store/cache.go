package store

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/quarryhq/quarry"
)

// The copies a server keeps between requests of what every request reads:
// the callers of API keys and the tools, and what every message of a chat
// reads: the model providers with the default model, and the default
// assistant. They hold while the database's cache_version is the one they
// were read at: triggers on every table they are read from bump it with
// each change (migrations 00011 and 00022), so one read of that version
// tells a server whether its copies still hold, whichever replica made the
// change. A copy is read with the version in one snapshot, and is only
// kept under that version.

// maxCached bounds each kind of copy; past it, the kind starts again empty.
const maxCached = 10_000

// cachedTables are the tables the copies are read from: each must bump
// cache_version on every insert, update and delete for the copies to be
// kept (see CacheTriggers).
var cachedTables = []string{"api_keys", "group_permissions", "llm_default_model", "llm_models", "llm_provider_groups", "llm_providers",
	"oauth_configs", "persona_document_sets", "persona_tools", "personas", "tools", "user_group_members", "user_groups", "users"}

// CacheTriggers returns, as "<table> <event>" lines in order, the row
// changes that bump cache_version: what migration 00011 made, unless a
// trigger was lost since (a table rebuilt by a later migration drops its
// triggers on SQLite).
func (db *DB) CacheTriggers(ctx context.Context) ([]string, error) {
	q := `SELECT tbl_name || ' ' || CASE
			WHEN sql LIKE '%AFTER INSERT ON%' THEN 'insert'
			WHEN sql LIKE '%AFTER UPDATE ON%' THEN 'update'
			WHEN sql LIKE '%AFTER DELETE ON%' THEN 'delete' END
		FROM sqlite_master WHERE type = 'trigger' AND sql LIKE '%UPDATE cache_version SET version = version + 1%'`
	if db.dialect == Postgres {
		q = `SELECT c.relname || ' ' || e.event
			FROM pg_trigger t
			JOIN pg_class c ON c.oid = t.tgrelid
			JOIN pg_namespace n ON n.oid = c.relnamespace
			JOIN (VALUES (4, 'insert'), (8, 'delete'), (16, 'update')) e(bit, event) ON t.tgtype & e.bit <> 0
			WHERE n.nspname = current_schema() AND NOT t.tgisinternal AND t.tgfoid = 'bump_cache_version'::regproc`
	}
	rows, err := db.read.QueryContext(ctx, q)
	if err != nil {
		return nil, mapError(err)
	}
	var out []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			rows.Close()
			return nil, mapError(err)
		}
		out = append(out, line)
	}
	slices.Sort(out)
	return out, closeRows(rows)
}

// keepCopies turns the copies on when every table of cachedTables bumps
// cache_version on every change, and off otherwise: without the version
// moving, a copy could outlive a change.
func (db *DB) keepCopies(ctx context.Context) error {
	have, err := db.CacheTriggers(ctx)
	if err != nil {
		return err
	}
	for _, t := range cachedTables {
		for _, e := range []string{"delete", "insert", "update"} {
			if !slices.Contains(have, t+" "+e) {
				db.cache.Store(nil)
				return nil
			}
		}
	}
	db.cache.Store(newReadCache())
	return nil
}

// KeepsCopies reports whether db keeps its copies between requests: once
// migrated, with every trigger of migrations 00011 and 00022.
func (db *DB) KeepsCopies() bool { return db.cache.Load() != nil }

// readCache is the DB's copies, all of one version.
type readCache struct {
	mu        sync.Mutex
	version   int64 // of the copies; -1 before the first
	callers   map[string]*quarry.Caller
	tools     map[int64]*quarry.Tool
	providers *providersCopy
	assistant *quarry.DefaultAssistant
}

// providersCopy is what DB.LLMProviders returns.
type providersCopy struct {
	ps  []*quarry.LLMProvider
	def *quarry.DefaultModel
}

func newReadCache() *readCache {
	return &readCache{version: -1}
}

// at drops every copy unless v is their version, which v becomes: a copy
// read fresh, at version v, is put. Any other version, newer or older (a
// database restored from a backup), has copies of its own: each copy was
// read in one snapshot with the version it is kept under, and the version
// changes with every change to what the copies are read from. A get only
// compares (has): a request whose shared version is older than the copies
// (ShareVersion) misses without dropping them for every other request.
// Called with mu held.
func (rc *readCache) at(v int64) {
	if v != rc.version {
		rc.version, rc.callers, rc.tools, rc.providers, rc.assistant = v, nil, nil, nil, nil
	}
}

// has reports whether the copies are of version v. Called with mu held.
func (rc *readCache) has(v int64) bool { return v == rc.version }

// caller returns a copy of the caller of API key hash at version v, if
// there is one.
func (rc *readCache) caller(v int64, hash string) (*quarry.Caller, bool) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if !rc.has(v) {
		return nil, false
	}
	if c := rc.callers[hash]; c != nil {
		return cloneCaller(c), true
	}
	return nil, false
}

// putCaller keeps c, read at version v, as the caller of API key hash.
func (rc *readCache) putCaller(v int64, hash string, c *quarry.Caller) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.at(v)
	if rc.callers == nil || len(rc.callers) >= maxCached {
		rc.callers = map[string]*quarry.Caller{}
	}
	rc.callers[hash] = cloneCaller(c)
}

// tool returns a copy of tool id at version v, if there is one.
func (rc *readCache) tool(v, id int64) (*quarry.Tool, bool) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if !rc.has(v) {
		return nil, false
	}
	if t := rc.tools[id]; t != nil {
		return cloneTool(t), true
	}
	return nil, false
}

// putTool keeps t, read at version v.
func (rc *readCache) putTool(v int64, t *quarry.Tool) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.at(v)
	if rc.tools == nil || len(rc.tools) >= maxCached {
		rc.tools = map[int64]*quarry.Tool{}
	}
	rc.tools[t.ID] = cloneTool(t)
}

// getProviders returns a copy of the providers at version v, if there is one.
func (rc *readCache) getProviders(v int64) (*providersCopy, bool) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if !rc.has(v) {
		return nil, false
	}
	if rc.providers == nil {
		return nil, false
	}
	return rc.providers.clone(), true
}

// putProviders keeps p, read at version v.
func (rc *readCache) putProviders(v int64, p *providersCopy) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.at(v)
	rc.providers = p.clone()
}

// getAssistant returns a copy of the default assistant at version v, if
// there is one.
func (rc *readCache) getAssistant(v int64) (*quarry.DefaultAssistant, bool) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if !rc.has(v) {
		return nil, false
	}
	if rc.assistant == nil {
		return nil, false
	}
	return cloneAssistant(rc.assistant), true
}

// putAssistant keeps a, read at version v.
func (rc *readCache) putAssistant(v int64, a *quarry.DefaultAssistant) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.at(v)
	rc.assistant = cloneAssistant(a)
}

// clone copies p's providers and default model, as cloneCaller does.
func (p *providersCopy) clone() *providersCopy {
	out := &providersCopy{ps: make([]*quarry.LLMProvider, len(p.ps))}
	for i, x := range p.ps {
		c := *x
		c.Groups, c.Models = slices.Clone(x.Groups), slices.Clone(x.Models)
		out.ps[i] = &c
	}
	if p.def != nil {
		d := *p.def
		out.def = &d
	}
	return out
}

// cloneAssistant copies a, as cloneCaller does.
func cloneAssistant(a *quarry.DefaultAssistant) *quarry.DefaultAssistant {
	out := *a
	out.ToolIDs, out.DocumentSetIDs = slices.Clone(a.ToolIDs), slices.Clone(a.DocumentSetIDs)
	return &out
}

// cloneCaller copies c so that changing the fields or slices of the copy
// kept or of the one given out cannot change the other (pointers to
// strings and numbers are shared: nothing writes through them).
func cloneCaller(c *quarry.Caller) *quarry.Caller {
	out := *c
	out.Scopes, out.Memberships, out.Grants = slices.Clone(c.Scopes), slices.Clone(c.Memberships), slices.Clone(c.Grants)
	return &out
}

// cloneTool copies t likewise (its headers, definition and input schema
// included).
func cloneTool(t *quarry.Tool) *quarry.Tool {
	out := *t
	out.Headers = slices.Clone(t.Headers)
	out.Definition, out.MCPInputSchema = slices.Clone(t.Definition), slices.Clone(t.MCPInputSchema)
	return &out
}

// cacheVersion reads the version of the copies.
func cacheVersion(ctx context.Context, q querier) (int64, error) {
	var v int64
	err := q.QueryRowContext(ctx, `SELECT version FROM cache_version WHERE id = 1`).Scan(&v)
	return v, mapError(err)
}

// sharedVersionFor bounds how long the reads made with a context of
// ShareVersion use the version one of them read: a change committed on any
// replica shows in every request that starts after it, and in a longer
// one (a chat's answer) within this time.
const sharedVersionFor = time.Second

// sharedVersion is a request's read of cache_version (ShareVersion).
type sharedVersion struct {
	mu      sync.Mutex
	version int64
	at      time.Time // Zero until read.
}

type sharedVersionKey struct{}

// ShareVersion returns ctx whose reads of kept copies (callers, tools, the
// model providers, the default assistant) share one read of their version
// for up to sharedVersionFor: a request that reads several copies reads
// the version once, not once a copy (a chat message read three, each a
// round trip on PostgreSQL).
func ShareVersion(ctx context.Context) context.Context {
	return context.WithValue(ctx, sharedVersionKey{}, &sharedVersion{})
}

// currentVersion returns the copies' version: ctx's shared one while it
// is fresh, else one read now (and shared from then on).
func currentVersion(ctx context.Context, db *DB) (int64, error) {
	sv, _ := ctx.Value(sharedVersionKey{}).(*sharedVersion)
	if sv == nil {
		return cacheVersion(ctx, db.read)
	}
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if !sv.at.IsZero() && time.Since(sv.at) < sharedVersionFor {
		return sv.version, nil
	}
	at := time.Now() // The version is of no later than now.
	v, err := cacheVersion(ctx, db.read)
	if err != nil {
		return 0, err
	}
	sv.version, sv.at = v, at
	return v, nil
}

// advance moves ctx's shared version, if any, forward to v, read at at.
func advance(ctx context.Context, v int64, at time.Time) {
	if sv, _ := ctx.Value(sharedVersionKey{}).(*sharedVersion); sv != nil {
		sv.mu.Lock()
		if v >= sv.version {
			sv.version, sv.at = v, at
		}
		sv.mu.Unlock()
	}
}

// forgetVersion makes ctx's shared version, if any, read again at the
// next read of a copy: a request sees what it changed itself.
func forgetVersion(ctx context.Context) {
	if sv, _ := ctx.Value(sharedVersionKey{}).(*sharedVersion); sv != nil {
		sv.mu.Lock()
		sv.at = time.Time{}
		sv.mu.Unlock()
	}
}

// cached returns what read returns: the copy get finds at the current
// version, or else read's answer in one snapshot with the version, which
// put then keeps under that version.
func cached[T any](ctx context.Context, db *DB, get func(rc *readCache, v int64) (T, bool), read func(q querier) (T, error), put func(rc *readCache, v int64, x T)) (T, error) {
	rc := db.cache.Load()
	if rc == nil {
		var x T
		err := db.snapshot(ctx, func(q querier) error {
			var err error
			x, err = read(q)
			return err
		})
		return x, err
	}
	v, err := currentVersion(ctx, db)
	if err != nil {
		var zero T
		return zero, err
	}
	if x, ok := get(rc, v); ok {
		return x, nil
	}
	var x T
	at := time.Now()
	err = db.snapshot(ctx, func(q querier) error {
		var err error
		if v, err = cacheVersion(ctx, q); err != nil {
			return err
		}
		x, err = read(q)
		return err
	})
	if err != nil {
		return x, err
	}
	put(rc, v, x)
	// The request's later reads look for copies of this version, which may
	// be newer than the one it shared.
	advance(ctx, v, at)
	return x, nil
}
