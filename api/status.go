package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api/decode"
	"github.com/quarryhq/quarry/store"
)

// handleConnectorStatus serves GET /manage/admin/connector/status (contract
// section 4.1). The encoded listing is cached per visibility (admin, or the
// set of groups a curator is a member of) and filter, and served again only
// while the database's data version, read before the listing, is
// unchanged: every write that changes the listing bumps it in the same
// transaction, on whichever replica it runs.
func (s *Server) handleConnectorStatus(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in statusQuery
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	f := quarry.StatusFilter{Sources: in.Source, AccessTypes: in.AccessType}
	key := statusKey(c, f)
	version, err := s.db.DataVersion(r.Context())
	if err != nil {
		return err
	}
	l, hint := s.status.get(key, version)
	if l == nil {
		// Read in parts side by side; should a write land meanwhile, read
		// again in one part, from one snapshot.
		l, version, err = s.encodeStatus(r.Context(), c, f, runtime.GOMAXPROCS(0), hint)
		if errors.Is(err, store.ErrListingChanged) {
			l, version, err = s.encodeStatus(r.Context(), c, f, 1, hint)
		}
		if err != nil {
			return err
		}
		s.status.put(key, version, l)
	}
	l.write(w)
	return nil
}

// listing is an encoded status listing: the entries of the JSON array, in
// parts that were encoded side by side, each a comma-separated run of
// entries. write joins them into the array.
type listing [][]byte

// size returns the length of the array l encodes.
func (l listing) size() int {
	n, parts := 2, 0
	for _, p := range l {
		if len(p) > 0 {
			n += len(p)
			parts++
		}
	}
	return n + max(parts-1, 0)
}

// write writes l as the body of a 200 response.
func (l listing) write(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(l.size()))
	w.WriteHeader(http.StatusOK)
	sep := []byte("[")
	for _, p := range l {
		if len(p) > 0 {
			w.Write(sep)
			w.Write(p)
			sep = []byte(",")
		}
	}
	if string(sep) == "[" {
		w.Write(sep)
	}
	w.Write([]byte("]")) // A failed write means the client left.
}

// encodeStatus encodes the listing c sees through f in up to parts parts,
// each read and encoded on its own, the whole about hint bytes long, and
// returns it with the data version it is of. Each connector and each
// credential is encoded once per part; the entries that share one copy its
// encoding from earlier in the part.
func (s *Server) encodeStatus(ctx context.Context, c *quarry.Caller, f quarry.StatusFilter, parts, hint int) (listing, int64, error) {
	type span struct{ start, end int }
	type part struct {
		buf          []byte
		conns, creds map[int64]span
		masked       []byte
	}
	bufs := make([]part, parts)
	for i := range bufs {
		bufs[i] = part{buf: make([]byte, 0, max(hint/parts, 4096)), conns: map[int64]span{}, creds: map[int64]span{}}
	}
	version, n, err := s.db.EachConnectorStatus(ctx, c, f, parts, func(i int, p *store.StatusRow) error {
		pt := &bufs[i]
		buf := pt.buf
		if len(buf) > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, `{"cc_pair_id":`...)
		buf = strconv.AppendInt(buf, p.ID, 10)
		buf = append(buf, `,"name":`...)
		buf = quarry.AppendJSONString(buf, p.Name)
		buf = append(buf, `,"connector":`...)
		if p.Connector != nil {
			start := len(buf)
			buf = appendConnector(buf, p.Connector)
			pt.conns[p.ConnectorID] = span{start, len(buf)}
		} else {
			sp := pt.conns[p.ConnectorID]
			buf = append(buf, buf[sp.start:sp.end]...)
		}
		buf = append(buf, `,"credential":`...)
		if k := p.Credential; k != nil {
			credJSON := k.CredentialJSON
			if s.cfg.MaskCredentials {
				var err error
				if pt.masked, err = quarry.AppendMaskedJSON(pt.masked[:0], k.CredentialJSON); err != nil {
					return fmt.Errorf("credential %d: %w", k.ID, err)
				}
				credJSON = pt.masked
			}
			start := len(buf)
			buf = appendCredential(buf, k, credJSON)
			pt.creds[p.CredentialID] = span{start, len(buf)}
		} else {
			sp := pt.creds[p.CredentialID]
			buf = append(buf, buf[sp.start:sp.end]...)
		}
		buf = append(buf, `,"access_type":`...)
		buf = quarry.AppendJSONString(buf, string(p.AccessType))
		buf = append(buf, `,"groups":`...)
		buf = appendInts(buf, p.Groups)
		pt.buf = append(buf, '}')
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	l := make(listing, n)
	for i := range n {
		l[i] = bufs[i].buf
	}
	return l, version, nil
}

// statusKey names what a caller sees through a filter: admins see the
// same; curators see what their group memberships give them.
func statusKey(c *quarry.Caller, f quarry.StatusFilter) string {
	var b strings.Builder
	if c.IsAdmin() {
		b.WriteString("admin")
	} else {
		b.WriteString("groups")
		for _, id := range c.GroupIDs() {
			b.WriteByte(',')
			b.WriteString(strconv.FormatInt(id, 10))
		}
	}
	sources := slices.Clone(f.Sources)
	slices.Sort(sources)
	for _, v := range slices.Compact(sources) {
		b.WriteString("|s=")
		b.WriteString(string(v))
	}
	types := slices.Clone(f.AccessTypes)
	slices.Sort(types)
	for _, v := range slices.Compact(types) {
		b.WriteString("|a=")
		b.WriteString(string(v))
	}
	return b.String()
}

// statusCacheBytes bounds the bytes of the listings a server caches; the
// listing of 10,000 pairs is about 10 MB. statusCacheKeys bounds the
// entries, most of which hold only a size once their listing is dropped.
const (
	statusCacheBytes = 64 << 20
	statusCacheKeys  = 1024
)

// statusCache holds encoded status listings with the data version they
// were read at, and remembers the size of listings it dropped, as a hint
// for the size of the next under the same key.
type statusCache struct {
	mu      sync.Mutex
	entries map[string]*statusEntry
	bytes   int // Of the listings held.
}

type statusEntry struct {
	version int64
	listing listing // nil once dropped
	size    int
}

func newStatusCache() *statusCache { return &statusCache{entries: map[string]*statusEntry{}} }

// get returns the listing cached under key if it was read at version.
// Otherwise it drops the stale listing, if any, and returns a hint for the
// size of the next: that of the last listing under key, or 0.
func (c *statusCache) get(key string, version int64) (l listing, hint int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok {
		return nil, 0
	}
	if e.version == version && e.listing != nil {
		return e.listing, 0
	}
	c.drop(e)
	return nil, e.size + e.size/16
}

// put caches a listing read at version, unless a newer one is cached
// under key, dropping other listings, older versions first, until the
// cache is within its byte budget. A listing larger than the whole budget
// is not cached.
func (c *statusCache) put(key string, version int64, l listing) {
	c.mu.Lock()
	defer c.mu.Unlock()
	size := l.size()
	if e, ok := c.entries[key]; ok {
		if e.version > version && e.listing != nil {
			return
		}
		c.drop(e)
	}
	if len(c.entries) >= statusCacheKeys {
		for k, e := range c.entries {
			if e.listing == nil {
				delete(c.entries, k)
			}
		}
	}
	if size > statusCacheBytes {
		c.entries[key] = &statusEntry{version: version, size: size}
		return
	}
	for c.bytes+size > statusCacheBytes {
		var victim *statusEntry
		for _, e := range c.entries {
			if e.listing != nil && (victim == nil || e.version < victim.version) {
				victim = e
			}
		}
		c.drop(victim)
	}
	c.entries[key] = &statusEntry{version: version, listing: l, size: size}
	c.bytes += size
}

// drop forgets the listing of e, keeping its size.
func (c *statusCache) drop(e *statusEntry) {
	if e.listing != nil {
		c.bytes -= e.size
		e.listing = nil
	}
}
