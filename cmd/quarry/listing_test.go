package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// Checks of the connector status listing (GET /manage/admin/connector/status,
// contract section 4.1) that hold for any implementation, read through the
// HTTP API only. The tests that use them write every object so that a torn
// mix of writes shows:
//
//   - a credential's name and credential_json come from one PATCH (see
//     credentialBody and crashCredential.check);
//   - a connector's name is "conn-" followed by the marker of its
//     connector_specific_config, both written by one PATCH (connectorBody);
//   - a cc-pair's name is "k<credential id>-" followed by a marker, so that
//     each entry tells which credential its pair was created with (pairName).
//
// Markers are "w<worker>-seq-<sequence>" (crashName): the sequence numbers
// of one object's writes grow, so a listing that shows a smaller one than
// an acknowledged write's is stale.

// statusPath is the route of the status listing.
const statusPath = "/manage/admin/connector/status"

// objKey names an object the listing shows: kind is "credential",
// "cc_pair" or "connector".
type objKey struct {
	kind string
	id   int64
}

// String names the object in failure messages.
func (k objKey) String() string { return fmt.Sprintf("%s %d", k.kind, k.id) }

// connectorBody is the body of a connector create or PATCH: its name and
// its connector_specific_config carry the same marker.
func connectorBody(w, s int) map[string]any {
	return map[string]any{
		"name":                      "conn-" + crashName(w, s),
		"source":                    "confluence",
		"input_type":                "poll",
		"connector_specific_config": map[string]any{"marker": crashName(w, s), "wiki_base": "https://wiki.example.com"},
	}
}

// pairName is the name of a cc-pair of credential k written by write s of
// worker w.
func pairName(k int64, w, s int) string { return fmt.Sprintf("k%d-%s", k, crashName(w, s)) }

// parsePairName returns the credential, worker and sequence number of a
// pair name.
func parsePairName(name string) (k int64, w, s int, ok bool) {
	_, err := fmt.Sscanf(name, "k%d-w%d-seq-%d", &k, &w, &s)
	return k, w, s, err == nil && pairName(k, w, s) == name
}

// listingConnector is what the checks read of an entry's connector.
type listingConnector struct {
	ID            int64          `json:"id"`
	Name          string         `json:"name"`
	Config        map[string]any `json:"connector_specific_config"`
	CredentialIDs []int64        `json:"credential_ids"`
}

// listingEntry is one entry of the listing: its connector and credential
// are kept as sent, to be compared whole, and decoded.
type listingEntry struct {
	CCPairID   int64           `json:"cc_pair_id"`
	Name       *string         `json:"name"`
	Connector  json.RawMessage `json:"connector"`
	Credential json.RawMessage `json:"credential"`
	AccessType string          `json:"access_type"`
	Groups     []int64         `json:"groups"`

	conn listingConnector
	cred crashCredential
}

// listingView is a listing that passed checkListing, with the sequence
// number of the write each object shows.
type listingView struct {
	entries []*listingEntry
	byPair  map[int64]*listingEntry
	seq     map[objKey]int
}

// checkListing decodes a listing an admin read without filters and checks
// that it is whole, as one snapshot of the database shows it: entries in
// ascending cc_pair_id order, each pair's credential the one its name
// names, each credential and connector from one write, an object shared by
// entries encoded the same in each, groups and credential_ids ascending
// without duplicates, and each connector's credential_ids exactly the
// credentials of its entries. groups are those credentialBody draws from.
func checkListing(body []byte, groups []int64) (*listingView, []error) {
	var entries []*listingEntry
	if err := json.Unmarshal(body, &entries); err != nil {
		return nil, []error{fmt.Errorf("listing does not decode: %v: %.300s", err, body)}
	}
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	v := &listingView{entries: entries, byPair: map[int64]*listingEntry{}, seq: map[objKey]int{}}
	conns := map[int64]json.RawMessage{}
	creds := map[int64]json.RawMessage{}
	connCreds := map[int64][]int64{}
	for i, e := range entries {
		if i > 0 && e.CCPairID <= entries[i-1].CCPairID {
			fail("entry %d: cc_pair_id %d after %d: not ascending", i, e.CCPairID, entries[i-1].CCPairID)
		}
		v.byPair[e.CCPairID] = e
		if err := json.Unmarshal(e.Connector, &e.conn); err != nil {
			fail("pair %d: connector %s: %v", e.CCPairID, e.Connector, err)
			continue
		}
		if err := json.Unmarshal(e.Credential, &e.cred); err != nil {
			fail("pair %d: credential %s: %v", e.CCPairID, e.Credential, err)
			continue
		}
		// The pair.
		if e.Name == nil {
			fail("pair %d: name null", e.CCPairID)
		} else if k, _, s, ok := parsePairName(*e.Name); !ok {
			fail("pair %d: unexpected name %q", e.CCPairID, *e.Name)
		} else {
			if k != e.cred.ID {
				fail("pair %d was created with credential %d (its name is %q) but its entry shows credential %d: %.200s",
					e.CCPairID, k, *e.Name, e.cred.ID, e.Credential)
			}
			v.seq[objKey{"cc_pair", e.CCPairID}] = s
		}
		if e.AccessType == "" {
			fail("pair %d: no access_type", e.CCPairID)
		}
		if e.Groups == nil || !strictlyAscending(e.Groups) {
			fail("pair %d: groups %v: want a list, ascending, without duplicates", e.CCPairID, e.Groups)
		}
		// Its credential: one write's fields, the same in every entry.
		if _, s, err := e.cred.check(groups); err != nil {
			fail("pair %d: %v", e.CCPairID, err)
		} else {
			v.seq[objKey{"credential", e.cred.ID}] = s
		}
		if prev, ok := creds[e.cred.ID]; ok && string(prev) != string(e.Credential) {
			fail("credential %d differs between two entries of one listing:\n%.300s\n%.300s", e.cred.ID, prev, e.Credential)
		}
		creds[e.cred.ID] = e.Credential
		// Its connector: one write's fields, the same in every entry.
		marker, _ := e.conn.Config["marker"].(string)
		if _, s, ok := parseCrashName(marker); !ok || e.conn.Name != "conn-"+marker {
			fail("pair %d: connector %d is not one write's: name %q, connector_specific_config %v", e.CCPairID, e.conn.ID, e.conn.Name, e.conn.Config)
		} else {
			v.seq[objKey{"connector", e.conn.ID}] = s
		}
		if prev, ok := conns[e.conn.ID]; ok && string(prev) != string(e.Connector) {
			fail("connector %d differs between two entries of one listing:\n%.300s\n%.300s", e.conn.ID, prev, e.Connector)
		}
		conns[e.conn.ID] = e.Connector
		if !slices.Contains(e.conn.CredentialIDs, e.cred.ID) {
			fail("pair %d: connector %d's credential_ids %v lack the entry's credential %d", e.CCPairID, e.conn.ID, e.conn.CredentialIDs, e.cred.ID)
		}
		connCreds[e.conn.ID] = append(connCreds[e.conn.ID], e.cred.ID)
	}
	for _, e := range entries {
		if len(errs) > 0 {
			break
		}
		want := slices.Sorted(slices.Values(connCreds[e.conn.ID]))
		want = slices.Compact(want)
		if !slices.Equal(e.conn.CredentialIDs, want) {
			fail("connector %d: credential_ids %v, but the listing's entries of this connector have credentials %v", e.conn.ID, e.conn.CredentialIDs, want)
			break
		}
	}
	return v, errs
}

// strictlyAscending reports whether ids ascend without duplicates.
func strictlyAscending(ids []int64) bool {
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			return false
		}
	}
	return true
}

// atLeast checks that the listing shows every object of min, with the
// write min names for it or a later one: what a listing read after those
// writes were acknowledged must show.
func (v *listingView) atLeast(min map[objKey]int) []error {
	var errs []error
	for _, k := range slices.SortedFunc(maps.Keys(min), func(a, b objKey) int {
		return strings.Compare(a.String(), b.String())
	}) {
		got, ok := v.seq[k]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("%s is missing from the listing; its write %d was acknowledged before the listing was asked for", k, min[k]))
		case got < min[k]:
			errs = append(errs, fmt.Errorf("%s shows write %d in the listing, but write %d was acknowledged before the listing was asked for: stale", k, got, min[k]))
		}
	}
	return errs
}

// sameFields checks that every field of listed, an object as the listing
// shows it, has the same value in single, the object as its own GET shows
// it; single may have more fields.
func sameFields(what string, listed, single []byte) error {
	var a, b map[string]any
	if err := json.Unmarshal(listed, &a); err != nil {
		return fmt.Errorf("%s: listing: %v", what, err)
	}
	if err := json.Unmarshal(single, &b); err != nil {
		return fmt.Errorf("%s: single GET: %v", what, err)
	}
	for k, va := range a {
		x, _ := json.Marshal(va)
		y, _ := json.Marshal(b[k])
		if string(x) != string(y) {
			return fmt.Errorf("%s: field %q is %.200s in the listing but %.200s in its own GET", what, k, x, y)
		}
	}
	return nil
}

// ackBoard holds the writes acknowledged so far, by object, for readers
// that check listings against them while writers write.
type ackBoard struct {
	mu      sync.Mutex
	acked   map[objKey]int
	removed map[objKey]int // How many times each object was removed.
}

// newAckBoard returns an empty board.
func newAckBoard() *ackBoard { return &ackBoard{acked: map[objKey]int{}, removed: map[objKey]int{}} }

// set records that write s of k was acknowledged.
func (b *ackBoard) set(k objKey, s int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.acked[k] = max(b.acked[k], s)
}

// remove forgets k before a write that may take it out of the listing
// is sent.
func (b *ackBoard) remove(k objKey) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.acked, k)
	b.removed[k]++
}

// snapshot returns a copy of what was acknowledged so far.
func (b *ackBoard) snapshot() map[objKey]int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return maps.Clone(b.acked)
}

// boardSnapshot is what an ackBoard held at one moment.
type boardSnapshot struct {
	acked, removed map[objKey]int
}

// fullSnapshot returns a copy of the board, removals included.
func (b *ackBoard) fullSnapshot() boardSnapshot {
	b.mu.Lock()
	defer b.mu.Unlock()
	return boardSnapshot{maps.Clone(b.acked), maps.Clone(b.removed)}
}

// stable returns what a listing asked for after before and answered
// before after must show: the writes acknowledged at before, of the
// objects that no write removed from the board in between.
func stable(before, after boardSnapshot) map[objKey]int {
	out := map[objKey]int{}
	for k, s := range before.acked {
		if _, ok := after.acked[k]; ok && before.removed[k] == after.removed[k] {
			out[k] = s
		}
	}
	return out
}
