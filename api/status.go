package api

import (
	"bufio"
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api/decode"
)

// handleConnectorStatus serves GET /manage/admin/connector/status (contract
// section 4.1). It reads the database's data version, which every write
// that changes the listing bumps in its transaction, on whichever replica
// it runs; brings the server's copy of the listing (statusCache) up to at
// least that version; and writes the entries the caller may see through
// the filter from it.
func (s *Server) handleConnectorStatus(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in statusQuery
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	version, err := s.db.DataVersion(r.Context())
	if err != nil {
		return err
	}
	v, err := s.status.at(r.Context(), version)
	if err != nil {
		return err
	}
	v.write(w, c, quarry.StatusFilter{Sources: in.Source, AccessTypes: in.AccessType})
	return nil
}

// LoadStatus brings the server's copy of the connector status listing up
// to the database's current data version, as the listing's first request
// would: quarry serve calls it at start, so that no request waits for the
// whole listing to be read.
func (s *Server) LoadStatus(ctx context.Context) error {
	version, err := s.db.DataVersion(ctx)
	if err != nil {
		return err
	}
	_, err = s.status.at(ctx, version)
	return err
}

// statusWriters are the buffers the listing is written through: its
// entries are written in pieces, a few dozen bytes to a few kilobytes each.
var statusWriters = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 64<<10) }}

// write writes the listing of v that c sees through f as the body of a 200
// response. It goes over the pairs twice: to add up the length, then to
// write.
func (v *statusView) write(w http.ResponseWriter, c *quarry.Caller, f quarry.StatusFilter) {
	ids := v.credentialIDs(c)
	match := matcher(c, f)
	whole := ids == nil && len(f.Sources) == 0 && len(f.AccessTypes) == 0
	size := v.size
	if !whole {
		n := 0
		size = 2
		for _, p := range v.pairs {
			if match(p) {
				size += p.size()
				if ids != nil {
					size += len(ids(p.conn)) - (p.conn.idsEnd - p.conn.idsAt)
				}
				n++
			}
		}
		size += max(n-1, 0)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(size))
	w.WriteHeader(http.StatusOK)

	bw := statusWriters.Get().(*bufio.Writer)
	bw.Reset(w)
	defer func() {
		bw.Reset(nil)
		statusWriters.Put(bw)
	}()
	bw.WriteByte('[')
	first := true
	for _, p := range v.pairs {
		if !whole && !match(p) {
			continue
		}
		if !first {
			bw.WriteByte(',')
		}
		first = false
		bw.Write(p.enc[:p.split])
		if ids == nil {
			bw.Write(p.connEnc)
		} else {
			bw.Write(p.conn.enc[:p.conn.idsAt])
			bw.Write(ids(p.conn))
			bw.Write(p.conn.enc[p.conn.idsEnd:])
		}
		bw.Write(p.credEnc)
		bw.Write(p.enc[p.split:])
	}
	bw.WriteByte(']')
	bw.Flush() // A failed write means the client left.
}

// matcher returns whether a pair is in the listing c sees through f.
func matcher(c *quarry.Caller, f quarry.StatusFilter) func(*pairPart) bool {
	all := c.ManagesConnectors()
	return func(p *pairPart) bool {
		return (all || p.visibleTo(c)) &&
			(len(f.Sources) == 0 || slices.Contains(f.Sources, p.conn.source)) &&
			(len(f.AccessTypes) == 0 || slices.Contains(f.AccessTypes, p.access))
	}
}

// maxVisibilities bounds the curators' credential_ids a view keeps: past
// it, they are worked out for each request.
const maxVisibilities = 64

// credentialIDs returns, for each connector, the encoded credential_ids c
// sees: the credentials of the connector's pairs that c may see, whatever
// the filter. Those who manage connectors (admins) see them all, as the
// connector parts hold them: for
// them it returns nil. Curators see those of the pairs their memberships
// show them, worked out once per view and visibility.
func (v *statusView) credentialIDs(c *quarry.Caller) func(*connPart) []byte {
	if c.ManagesConnectors() {
		return nil
	}
	key := visibilityKey(c)
	v.mu.Lock()
	m, ok := v.visible[key]
	v.mu.Unlock()
	if !ok {
		ids := map[int64][]int64{}
		for _, p := range v.pairs {
			if p.visibleTo(c) {
				ids[p.conn.id] = append(ids[p.conn.id], p.cred.id)
			}
		}
		m = make(map[int64][]byte, len(ids))
		for conn, creds := range ids {
			slices.Sort(creds)
			m[conn] = appendInts(nil, slices.Compact(creds))
		}
		v.mu.Lock()
		if len(v.visible) < maxVisibilities {
			if v.visible == nil {
				v.visible = map[string]map[int64][]byte{}
			}
			v.visible[key] = m
		}
		v.mu.Unlock()
	}
	return func(conn *connPart) []byte { return m[conn.id] }
}

// visibilityKey names what a curator or basic user sees: the groups it is
// a member of, as authenticated, but the default ones, which share
// nothing.
func visibilityKey(c *quarry.Caller) string {
	var b strings.Builder
	ids := c.SharingGroupIDs()
	slices.Sort(ids)
	for _, id := range slices.Compact(ids) {
		b.WriteString(strconv.FormatInt(id, 10))
		b.WriteByte(',')
	}
	return b.String()
}
