package api

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/store"
)

// statusCache is the server's copy of the connector status listing, as an
// admin sees it, kept encoded in parts: one per pair, pointing at one part
// per connector and one per credential, so that each is encoded once
// however many pairs share it. Requests write the entries they may see
// from the latest view (statusView); when the database has moved on, one
// refresh at a time re-reads only what the change log
// (store.ReadListing) says changed since the view, and publishes a new
// view that shares every unchanged part with the old one. See
// docs/decisions.md, "The status listing's cache".
type statusCache struct {
	db   *store.DB
	mask bool // Whether credential_json is masked (Config.MaskCredentials).

	view atomic.Pointer[statusView] // nil until the first refresh

	mu       sync.Mutex
	inflight *statusRefresh // The refresh running, if any.

	// Owned by the refresh that runs: the latest part of each connector
	// and credential of the listing; and whether the last refresh failed,
	// leaving them out of step with the view.
	conns  map[int64]*connPart
	creds  map[int64]*credPart
	broken bool

	// Refreshes done: of the whole listing, and of what changed.
	wholeReads, changeReads atomic.Int64
}

// statusRefreshTimeout bounds a refresh. It runs on its own, not bound to
// the request that started it, so that a client that leaves or a short
// request timeout does not stop a long first read (a million pairs take
// tens of seconds) that later requests wait for.
const statusRefreshTimeout = 10 * time.Minute

// statusRefresh is a refresh that requests wait for.
type statusRefresh struct {
	done chan struct{}
	err  error
}

// statusView is the listing at one data version: its pairs in ascending id
// order. A view, and every part it points to, is never changed once
// published, so requests read it without locks; only the curators'
// credential_ids, worked out on demand, are added under mu.
type statusView struct {
	version int64
	pairs   []*pairPart
	size    int // Of the whole listing, as an admin sees it unfiltered.

	mu      sync.Mutex
	visible map[string]map[int64][]byte // By visibilityKey: connector id → credential_ids.
}

// pairPart is one entry of the listing: enc[:split] goes before its
// connector's part, then the credential's part, then enc[split:].
type pairPart struct {
	id     int64
	enc    []byte // {"cc_pair_id":…,"name":…,"connector": and ,"access_type":…,"groups":[…]}
	split  int
	conn   *connPart
	cred   *credPart
	access quarry.AccessType
	groups []int64
	// The encodings of conn and cred, as an admin sees them: copied here
	// so that an admin's listing reads one object per pair.
	connEnc, credEnc []byte
}

// size returns the length of the pair's entry as an admin sees it.
func (p *pairPart) size() int { return len(p.enc) + len(p.connEnc) + len(p.credEnc) }

// point returns p pointing at conn and cred: p itself if it already does.
func (p *pairPart) point(conn *connPart, cred *credPart) *pairPart {
	if p.conn == conn && p.cred == cred {
		return p
	}
	next := *p
	next.conn, next.cred, next.connEnc, next.credEnc = conn, cred, conn.enc, cred.enc
	return &next
}

// visibleTo reports whether c may see the pair (quarry.Caller.CanSeePair).
func (p *pairPart) visibleTo(c *quarry.Caller) bool {
	return c.CanSeePair(&quarry.CCPair{AccessType: p.access, Groups: p.groups})
}

// connPart is a connector of the listing, encoded as an admin sees it;
// enc[idsAt:idsEnd] is the value of credential_ids, which differs from
// caller to caller.
type connPart struct {
	id            int64
	source        quarry.DocumentSource
	enc           []byte
	idsAt, idsEnd int
}

// credPart is a credential of the listing, encoded with its key:
// ,"credential":{…}
type credPart struct {
	id  int64
	enc []byte
}

func newStatusCache(db *store.DB, mask bool) *statusCache {
	return &statusCache{db: db, mask: mask}
}

// at returns a view of the listing at data version version or later,
// refreshing it first if needed. A request that stops waiting leaves the
// refresh running for the next.
func (c *statusCache) at(ctx context.Context, version int64) (*statusView, error) {
	for {
		if v := c.view.Load(); v != nil && v.version >= version {
			return v, nil
		}
		c.mu.Lock()
		r := c.inflight
		if r == nil {
			r = &statusRefresh{done: make(chan struct{})}
			c.inflight = r
			go c.run(r)
		}
		c.mu.Unlock()
		select {
		case <-r.done:
			if r.err != nil {
				return nil, r.err
			}
			// The refresh may have read a version older than this
			// request's: then another follows.
		case <-ctx.Done():
			return nil, errListingSlow
		}
	}
}

// run refreshes the view and reports to those waiting for r.
func (c *statusCache) run(r *statusRefresh) {
	ctx, cancel := context.WithTimeout(context.Background(), statusRefreshTimeout)
	defer cancel()
	v, err := c.refresh(ctx)
	if err == nil {
		c.view.Store(v)
	}
	c.mu.Lock()
	c.inflight = nil
	c.mu.Unlock()
	r.err = err
	close(r.done)
}

// errListingSlow answers a request whose time on the database ran out
// while it waited for the listing to be read: the read goes on, for the
// requests after it.
var errListingSlow = quarry.Errorf(quarry.EUNAVAILABLE, "The status listing is still being read from the database; try again shortly")

// errListingTorn reports a pair whose connector or credential the cache
// does not hold: it cannot happen with a change log that is whole, and
// makes the next refresh read the whole listing.
var errListingTorn = errors.New("api: the status listing's parts do not fit together")

// refresh reads what changed since the view (everything, if there is none
// or the last refresh failed) and returns the new view. Should the parts
// not fit together, it reads everything again.
func (c *statusCache) refresh(ctx context.Context) (*statusView, error) {
	v, err := c.read(ctx)
	if errors.Is(err, errListingTorn) {
		v, err = c.read(ctx) // c.broken: the whole listing.
	}
	return v, err
}

// read is refresh, once.
func (c *statusCache) read(ctx context.Context) (*statusView, error) {
	old := c.view.Load()
	var since int64
	if old != nil && !c.broken {
		since = old.version
	} else {
		old = nil
	}
	c.broken = true // Until this refresh succeeds.
	var (
		whole   bool
		pairs   []*pairPart             // Reading the whole listing: its pairs.
		changed = map[int64]*pairPart{} // Reading changes: changed pairs, nil if gone.
		users   []int64                 // Reading changes: pairs whose connector or credential changed.
	)
	version, err := c.db.ReadListing(ctx, since, func(ch *store.ListingChange) error {
		switch ch.Kind {
		case store.ChangeAll:
			whole = true
			c.conns, c.creds = map[int64]*connPart{}, map[int64]*credPart{}
		case store.ChangeConnector:
			if ch.Connector == nil {
				delete(c.conns, ch.ID)
				return nil
			}
			c.conns[ch.ID] = newConnPart(ch.Connector)
			users = append(users, ch.Pairs...)
		case store.ChangeCredential:
			if ch.Credential == nil {
				delete(c.creds, ch.ID)
				return nil
			}
			k, err := c.newCredPart(ch.Credential)
			if err != nil {
				return err
			}
			c.creds[ch.ID] = k
			users = append(users, ch.Pairs...)
		case store.ChangePair:
			if ch.Pair == nil {
				changed[ch.ID] = nil
				return nil
			}
			p, err := c.newPairPart(ch.Pair)
			if err != nil {
				return err
			}
			if whole {
				pairs = append(pairs, p)
			} else {
				changed[ch.ID] = p
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var size int
	switch {
	case whole:
		c.wholeReads.Add(1)
		size = c.setCredentialIDs(pairs)
	case version == since:
		c.broken = false
		return old, nil
	default:
		c.changeReads.Add(1)
		if pairs, size, err = c.apply(old, changed, users); err != nil {
			return nil, err
		}
	}
	c.broken = false
	return &statusView{version: version, pairs: pairs, size: size}, nil
}

// apply returns the pairs of the view old with the changed ones in their
// place (ascending id), and the pairs named in users pointed at the latest
// parts of their connector and credential; and the admin's listing's
// size. old is left as it is: only the pairs that change are copied.
func (c *statusCache) apply(view *statusView, changed map[int64]*pairPart, users []int64) ([]*pairPart, int, error) {
	old := view.pairs
	entries := view.size - 2 - max(len(old)-1, 0) // Of the entries alone.
	var pairs []*pairPart
	if len(changed) == 0 {
		pairs = slices.Clone(old)
	} else {
		ids := slices.Sorted(maps.Keys(changed))
		pairs = make([]*pairPart, 0, len(old)+len(ids))
		i := 0
		for _, p := range old {
			for ; i < len(ids) && ids[i] <= p.id; i++ {
				if q := changed[ids[i]]; q != nil {
					pairs = append(pairs, q)
				}
			}
			if _, ok := changed[p.id]; !ok {
				pairs = append(pairs, p)
			} else {
				entries -= p.size()
			}
		}
		for ; i < len(ids); i++ {
			if q := changed[ids[i]]; q != nil {
				pairs = append(pairs, q)
			}
		}
		for _, q := range changed {
			if q != nil {
				entries += q.size()
			}
		}
	}
	for _, id := range users {
		i, ok := slices.BinarySearchFunc(pairs, id, func(p *pairPart, id int64) int { return cmp.Compare(p.id, id) })
		if !ok {
			return nil, 0, fmt.Errorf("%w: pair %d", errListingTorn, id)
		}
		p := pairs[i]
		conn, cred := c.conns[p.conn.id], c.creds[p.cred.id]
		if conn == nil || cred == nil {
			return nil, 0, fmt.Errorf("%w: pair %d", errListingTorn, id)
		}
		next := p.point(conn, cred)
		entries += next.size() - p.size()
		pairs[i] = next
	}
	return pairs, 2 + entries + max(len(pairs)-1, 0), nil
}

// setCredentialIDs encodes the admin's credential_ids into the part of
// every connector of pairs, which a whole read has just made and no view
// shows yet, and returns the size of the admin's listing.
func (c *statusCache) setCredentialIDs(pairs []*pairPart) int {
	ids := map[*connPart][]int64{}
	for _, p := range pairs {
		ids[p.conn] = append(ids[p.conn], p.cred.id)
	}
	for conn, creds := range ids {
		slices.Sort(creds)
		conn.setIDs(slices.Compact(creds))
	}
	size := 2 + max(len(pairs)-1, 0)
	for _, p := range pairs {
		p.connEnc = p.conn.enc
		size += p.size()
	}
	return size
}

// newConnPart encodes conn, with its CredentialIDs.
func newConnPart(conn *quarry.Connector) *connPart {
	part := &connPart{id: conn.ID, source: conn.Source}
	part.enc = appendConnectorHead(nil, conn)
	part.idsAt = len(part.enc)
	part.enc = appendInts(part.enc, conn.CredentialIDs)
	part.idsEnd = len(part.enc)
	part.enc = slices.Clip(appendConnectorTail(part.enc, conn))
	return part
}

// setIDs replaces the credential_ids of a part no view shows yet.
func (conn *connPart) setIDs(ids []int64) {
	enc := slices.Concat(conn.enc[:conn.idsAt], appendInts(nil, ids), conn.enc[conn.idsEnd:])
	conn.idsEnd = len(enc) - (len(conn.enc) - conn.idsEnd)
	conn.enc = enc
}

// newCredPart encodes k, masked unless the server is set not to mask.
func (c *statusCache) newCredPart(k *quarry.Credential) (*credPart, error) {
	credJSON := k.CredentialJSON
	if c.mask {
		var err error
		if credJSON, err = quarry.AppendMaskedJSON(nil, k.CredentialJSON); err != nil {
			return nil, fmt.Errorf("credential %d: %w", k.ID, err)
		}
	}
	enc := append([]byte(`,"credential":`), appendCredential(nil, k, credJSON)...)
	return &credPart{id: k.ID, enc: slices.Clip(enc)}, nil
}

// newPairPart encodes p, pointing at the parts of its connector and
// credential, which the cache must hold.
func (c *statusCache) newPairPart(p *store.ListingPair) (*pairPart, error) {
	conn, cred := c.conns[p.ConnectorID], c.creds[p.CredentialID]
	if conn == nil || cred == nil {
		return nil, fmt.Errorf("%w: pair %d", errListingTorn, p.ID)
	}
	enc := append([]byte(`{"cc_pair_id":`), strconv.AppendInt(nil, p.ID, 10)...)
	enc = append(enc, `,"name":`...)
	enc = quarry.AppendJSONString(enc, p.Name)
	enc = append(enc, `,"connector":`...)
	split := len(enc)
	enc = append(enc, `,"access_type":`...)
	enc = quarry.AppendJSONString(enc, string(p.AccessType))
	enc = append(enc, `,"groups":`...)
	enc = appendInts(enc, p.Groups)
	enc = append(enc, '}')
	return &pairPart{id: p.ID, enc: slices.Clip(enc), split: split, conn: conn, cred: cred,
		access: p.AccessType, groups: slices.Clone(p.Groups), connEnc: conn.enc, credEnc: cred.enc}, nil
}
