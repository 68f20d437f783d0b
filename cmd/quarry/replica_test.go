package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/storetest"
)

var bootstrapTokenRE = regexp.MustCompile(`(?m)^    (qry_\S+)$`)

// TestTwoReplicas starts two quarry serve processes on one new PostgreSQL
// database at once: both come up, the schema is migrated once, at most one
// bootstrap key is made. Then conditional PATCHes sent to both race for one
// credential: one wins per version, and no update is lost.
func TestTwoReplicas(t *testing.T) {
	if os.Getenv(storetest.PostgresEnv) == "" {
		t.Skip(storetest.PostgresEnv + " is not set")
	}
	quarryBinary(t)
	url := storetest.URL(t)
	vars := map[string]string{
		"QUARRY_DATABASE_URL":     url,
		"QUARRY_ENCRYPTION_KEY":   store.NewKey(),
		"QUARRY_MASK_CREDENTIALS": "false",
		"QUARRY_LOG_LEVEL":        "warn",
		// Both replicas' schedulers and workers run often, so that their
		// writes meet the test's: a connector rename once deadlocked with
		// a worker's report on one of the connector's pairs.
		"QUARRY_SCHEDULE_INTERVAL":    "50ms",
		"QUARRY_WORKER_POLL_INTERVAL": "50ms",
	}
	replicas := []*procServer{launchServe(t, vars), launchServe(t, vars)}
	var token string
	for i, r := range replicas {
		if err := r.ready(30 * time.Second); err != nil {
			t.Fatalf("replica %d: %v", i, err)
		}
		if m := bootstrapTokenRE.FindStringSubmatch(r.stdout.String()); m != nil {
			if token != "" {
				t.Error("both replicas made a bootstrap key")
			}
			token = m[1]
		}
	}
	db := procSQL(t, url)
	count := func(query string) int {
		t.Helper()
		var n int
		if err := db.QueryRow(query).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(`SELECT COUNT(*) FROM api_keys`); n != 1 || token == "" {
		t.Errorf("%d API keys, bootstrap key printed: %t; want one", n, token != "")
	}
	// Each migration once (the numbers may have gaps: a branch's number is kept until the merge renumbers it).
	if n := count(`SELECT COUNT(*) FROM goose_db_version WHERE version_id > 0`); n != count(`SELECT COUNT(DISTINCT version_id) FROM goose_db_version WHERE version_id > 0`) {
		t.Errorf("%d migrations recorded, want each once", n)
	}
	if n := count(`SELECT COUNT(*) FROM tools`); n != 4 {
		t.Errorf("%d tools, want the 4 built-ins once", n)
	}
	if t.Failed() {
		t.FailNow()
	}

	c := newProcClient(token)
	var k struct {
		ID int64 `json:"id"`
	}
	r := c.must(t, replicas[0].base, "POST", "/manage/credential",
		map[string]any{"credential_json": map[string]any{"count": "0"}, "admin_public": true, "source": "confluence"}, &k)
	path := fmt.Sprint("/manage/credential/", k.ID)
	version := r.version()

	// One version, several writers on both replicas: one wins.
	const writers = 6
	for round := range 15 {
		statuses := make([]int, writers)
		var wg sync.WaitGroup
		for i := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := c.do(replicas[i%2].base, "PATCH", path, map[string]any{"name": fmt.Sprint("r", round, "-w", i)},
					"If-Match", strconv.Quote(strconv.FormatInt(version, 10)))
				if err != nil {
					t.Error(err)
					return
				}
				statuses[i] = r.status
			}()
		}
		wg.Wait()
		winner := -1
		for i, s := range statuses {
			switch {
			case s == 200 && winner < 0:
				winner = i
			case s == 200:
				t.Errorf("round %d: writers %d and %d both won version %d", round, winner, i, version)
			case s != 412:
				t.Errorf("round %d: writer %d got %d, want 200 or 412", round, i, s)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: nobody won version %d: %v", round, version, statuses)
		}
		var got struct {
			Name string `json:"name"`
		}
		r := c.must(t, replicas[(round+1)%2].base, "GET", path, nil, &got)
		if want := fmt.Sprint("r", round, "-w", winner); got.Name != want || r.version() != version+1 {
			t.Fatalf("round %d: name %q version %d, want the winner's %q and %d", round, got.Name, r.version(), want, version+1)
		}
		version++
	}

	// Read-modify-write increments with If-Match, retried on 412, from
	// both replicas: none is lost.
	const clients, increments = 4, 10
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			base := replicas[i%2].base
			for done := 0; done < increments; {
				var cur struct {
					CredentialJSON map[string]string `json:"credential_json"`
				}
				r, err := c.do(base, "GET", path, nil)
				if err != nil || r.status != 200 {
					t.Errorf("GET: %v %v", err, r)
					return
				}
				if err := json.Unmarshal(r.body, &cur); err != nil {
					t.Error(err)
					return
				}
				n, _ := strconv.Atoi(cur.CredentialJSON["count"])
				w, err := c.do(base, "PATCH", path, map[string]any{"credential_json": map[string]any{"count": strconv.Itoa(n + 1)}},
					"If-Match", r.header.Get("ETag"))
				if err != nil {
					t.Error(err)
					return
				}
				switch w.status {
				case 200:
					done++
				case 412:
				default:
					t.Errorf("PATCH: %d %s", w.status, w.body)
					return
				}
			}
		}()
	}
	wg.Wait()
	var final struct {
		CredentialJSON map[string]string `json:"credential_json"`
	}
	r = c.must(t, replicas[0].base, "GET", path, nil, &final)
	if got, want := final.CredentialJSON["count"], strconv.Itoa(clients*increments); got != want {
		t.Errorf("count = %s after %s acknowledged increments: updates were lost", got, want)
	}
	if got, want := r.version(), version+clients*increments; got != want {
		t.Errorf("version = %d, want %d", got, want)
	}
	if t.Failed() {
		return
	}

	// The status listing: read-your-writes across replicas, and never torn.
	t.Run("listing-read-your-writes", func(t *testing.T) { replicaListingRounds(t, c, replicas) })
	t.Run("listing-concurrent", func(t *testing.T) { replicaListingConcurrent(t, c, replicas) })
}

// replicaRounds is how many writes replicaListingRounds checks.
const replicaRounds = 200

// replicaModel is what replicaListingRounds wrote, from which it predicts
// each listing whole. Markers (see listing_test.go) are those of worker 9.
type replicaModel struct {
	groups     []int64          // Credentials' groups draw from these; pairs join them.
	conns      map[int64]int    // Connector id: its last write.
	creds      map[int64]int    // Credential id: its last write.
	pairs      map[int64]*mPair // cc-pair id: the pair.
	groupPairs map[int64][]int64
	seq        int
}

// mPair is a cc-pair of replicaModel.
type mPair struct {
	conn, cred int64
	name       int // The write of its name.
}

// next returns the sequence number of a new write.
func (m *replicaModel) next() int { m.seq++; return m.seq }

// pairGroups returns the groups pair id is in, ascending.
func (m *replicaModel) pairGroups(id int64) []int64 {
	out := []int64{}
	for _, g := range m.groups {
		if slices.Contains(m.groupPairs[g], id) {
			out = append(out, g)
		}
	}
	return out
}

// check compares a listing with the model, entry by entry.
func (m *replicaModel) check(body []byte) []error {
	v, errs := checkListing(body, m.groups)
	if len(errs) > 0 {
		return errs
	}
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	ids := slices.Sorted(maps.Keys(m.pairs))
	got := make([]int64, len(v.entries))
	for i, e := range v.entries {
		got[i] = e.CCPairID
	}
	if !slices.Equal(got, ids) {
		fail("the listing has cc-pairs %v, want %v", got, ids)
	}
	for _, id := range ids {
		p, e := m.pairs[id], v.byPair[id]
		if e == nil {
			continue
		}
		if e.conn.ID != p.conn || e.cred.ID != p.cred {
			fail("cc-pair %d: connector %d credential %d, want %d and %d", id, e.conn.ID, e.cred.ID, p.conn, p.cred)
		}
		if s := v.seq[objKey{"cc_pair", id}]; s != p.name {
			fail("cc-pair %d shows the name of write %d (%q), want write %d", id, s, *e.Name, p.name)
		}
		if s := v.seq[objKey{"credential", p.cred}]; s != m.creds[p.cred] {
			fail("cc-pair %d: credential %d shows write %d, want write %d", id, p.cred, s, m.creds[p.cred])
		}
		if s := v.seq[objKey{"connector", p.conn}]; s != m.conns[p.conn] {
			fail("cc-pair %d: connector %d shows write %d, want write %d", id, p.conn, s, m.conns[p.conn])
		}
		if want := m.pairGroups(id); !slices.Equal(e.Groups, want) {
			fail("cc-pair %d: groups %v, want %v", id, e.Groups, want)
		}
		if e.AccessType != "public" {
			fail("cc-pair %d: access_type %q, want public", id, e.AccessType)
		}
	}
	return errs
}

// replicaListingRounds writes, in turn on each replica, once the listing
// is cached on both, and checks that the other replica's very next listing
// shows the write: contract section 4.1 reads the listing's data version
// at the start of the request, so a write acknowledged before is in it.
func replicaListingRounds(t *testing.T, c *procClient, replicas []*procServer) {
	const w = 9
	m := &replicaModel{conns: map[int64]int{}, creds: map[int64]int{}, pairs: map[int64]*mPair{}, groupPairs: map[int64][]int64{}}
	a := replicas[0].base
	for i := range 3 {
		var g struct {
			ID int64 `json:"id"`
		}
		c.must(t, a, "POST", "/manage/admin/user-group", map[string]any{"name": fmt.Sprint("ryw-", i)}, &g)
		m.groups = append(m.groups, g.ID)
	}
	var conns, creds []int64
	for range 2 {
		s := m.next()
		var conn struct {
			ID int64 `json:"id"`
		}
		c.must(t, a, "POST", "/manage/admin/connector", connectorBody(w, s), &conn)
		m.conns[conn.ID] = s
		conns = append(conns, conn.ID)
	}
	for range 4 {
		s := m.next()
		var k struct {
			ID int64 `json:"id"`
		}
		c.must(t, a, "POST", "/manage/credential", credentialBody(w, s, m.groups, true), &k)
		m.creds[k.ID] = s
		creds = append(creds, k.ID)
	}
	createPair := func(base string, conn, cred int64) {
		t.Helper()
		s := m.next()
		var res struct {
			Data int64 `json:"data"`
		}
		c.must(t, base, "PUT", fmt.Sprintf("/manage/connector/%d/credential/%d", conn, cred),
			map[string]any{"name": pairName(cred, w, s), "access_type": "public"}, &res)
		m.pairs[res.Data] = &mPair{conn: conn, cred: cred, name: s}
	}
	for i := range 5 {
		createPair(a, conns[i%2], creds[(i+i/4)%4])
	}
	rng := rand.New(rand.NewPCG(2, uint64(time.Now().UnixNano())))
	pick := func(ids []int64) int64 { return ids[rng.IntN(len(ids))] }
	counts := map[string]int{}
	for round := range replicaRounds {
		writer, reader := replicas[round%2], replicas[(round+1)%2]
		for i, r := range replicas {
			res := c.must(t, r.base, "GET", statusPath, nil, nil)
			if errs := m.check(res.body); len(errs) > 0 {
				t.Fatalf("round %d: replica %d's listing before the write: %v", round, i, errors.Join(errs...))
			}
		}
		pairs := slices.Sorted(maps.Keys(m.pairs))
		var what string
		switch r := rng.IntN(100); {
		case r < 20:
			k, s := pick(creds), m.next()
			what = fmt.Sprintf("PATCH credential %d (write %d)", k, s)
			c.must(t, writer.base, "PATCH", fmt.Sprint("/manage/credential/", k), credentialBody(w, s, m.groups, false), nil)
			m.creds[k] = s
		case r < 40 && len(pairs) > 0:
			id, s := pick(pairs), m.next()
			p := m.pairs[id]
			what = fmt.Sprintf("rename cc-pair %d (write %d)", id, s)
			c.must(t, writer.base, "PUT", fmt.Sprintf("/manage/admin/cc-pair/%d/name?new_name=%s", id, url.QueryEscape(pairName(p.cred, w, s))), nil, nil)
			p.name = s
		case r < 55:
			id, s := pick(conns), m.next()
			what = fmt.Sprintf("PATCH connector %d (write %d)", id, s)
			c.must(t, writer.base, "PATCH", fmt.Sprint("/manage/admin/connector/", id), connectorBody(w, s), nil)
			m.conns[id] = s
		case r < 75:
			g := pick(m.groups)
			in := []int64{}
			for _, id := range pairs {
				if rng.IntN(2) == 0 {
					in = append(in, id)
				}
			}
			what = fmt.Sprintf("PATCH user group %d: cc_pair_ids %v", g, in)
			c.must(t, writer.base, "PATCH", fmt.Sprint("/manage/admin/user-group/", g), map[string]any{"cc_pair_ids": in}, nil)
			m.groupPairs[g] = in
		case r < 88 && len(pairs) > 1:
			id := pick(pairs)
			p := m.pairs[id]
			what = fmt.Sprintf("DELETE cc-pair %d", id)
			c.must(t, writer.base, "DELETE", fmt.Sprintf("/manage/connector/%d/credential/%d", p.conn, p.cred), nil, nil)
			delete(m.pairs, id)
			for g, ids := range m.groupPairs {
				m.groupPairs[g] = slices.DeleteFunc(ids, func(x int64) bool { return x == id })
			}
		default:
			var free [][2]int64
			for _, conn := range conns {
				for _, cred := range creds {
					if !slices.ContainsFunc(pairs, func(id int64) bool { return m.pairs[id].conn == conn && m.pairs[id].cred == cred }) {
						free = append(free, [2]int64{conn, cred})
					}
				}
			}
			if len(free) == 0 {
				continue
			}
			f := free[rng.IntN(len(free))]
			what = fmt.Sprintf("create a cc-pair of connector %d and credential %d", f[0], f[1])
			createPair(writer.base, f[0], f[1])
		}
		counts[strings.Join(strings.Fields(what)[:2], " ")]++
		res := c.must(t, reader.base, "GET", statusPath, nil, nil)
		if errs := m.check(res.body); len(errs) > 0 {
			t.Fatalf("round %d: %s acknowledged by replica %d; replica %d's next listing does not show it:\n%v",
				round, what, round%2, (round+1)%2, errors.Join(errs...))
		}
	}
	t.Logf("%d rounds, each a write on one replica seen by the next listing of the other, both cached: %v", replicaRounds, counts)
}

// replicaWriter is a writer of replicaListingConcurrent: it writes its own
// connector, credential, cc-pair (which it also deletes and creates
// again) and user group, through one replica.
type replicaWriter struct {
	w                    int
	base                 string
	conn, cred, group    int64
	seq                  int
	rng                  *rand.Rand
	writes, recreated    int
	mu                   sync.Mutex
	pair                 int64 // Under mu, as the rest below.
	member               int64 // The pair the group holds as last acknowledged, or 0.
	busy                 bool  // While a write that may change member is in flight.
	gen                  int   // Counts such writes.
	connSeq, credSeq, ps int   // The acknowledged writes of the connector, credential and pair.
}

// groupState is what a reader knows of a writer's group at one moment.
type groupState struct {
	member int64
	busy   bool
	gen    int
}

// state returns the writer's group state.
func (rw *replicaWriter) state() groupState {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	return groupState{rw.member, rw.busy, rw.gen}
}

// replicaListingConcurrent runs writers on both replicas while a reader
// on each checks every listing: whole (checkListing), showing every write
// acknowledged before it was asked for, and each writer's group holding
// exactly the pair it last set whenever no such write was in flight.
func replicaListingConcurrent(t *testing.T, c *procClient, replicas []*procServer) {
	const writers = 4
	board := newAckBoard()
	// Start from an empty listing: the checks know only this test's groups.
	var old []*listingEntry
	c.must(t, replicas[0].base, "GET", statusPath, nil, &old)
	for _, e := range old {
		var conn listingConnector
		var cred crashCredential
		if json.Unmarshal(e.Connector, &conn) != nil || json.Unmarshal(e.Credential, &cred) != nil {
			t.Fatalf("cc-pair %d: %s %s", e.CCPairID, e.Connector, e.Credential)
		}
		c.must(t, replicas[0].base, "DELETE", fmt.Sprintf("/manage/connector/%d/credential/%d", conn.ID, cred.ID), nil, nil)
	}
	var ws []*replicaWriter
	var groups []int64
	for w := range writers {
		rw := &replicaWriter{w: w, base: replicas[w%2].base, rng: rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))}
		var g struct {
			ID int64 `json:"id"`
		}
		c.must(t, rw.base, "POST", "/manage/admin/user-group", map[string]any{"name": fmt.Sprint("concurrent-", w)}, &g)
		rw.group = g.ID
		groups = append(groups, g.ID)
		ws = append(ws, rw)
	}
	for _, rw := range ws {
		var out struct {
			ID int64 `json:"id"`
		}
		rw.seq++
		c.must(t, rw.base, "POST", "/manage/admin/connector", connectorBody(rw.w, rw.seq), &out)
		rw.conn, rw.connSeq = out.ID, rw.seq
		rw.seq++
		c.must(t, rw.base, "POST", "/manage/credential", credentialBody(rw.w, rw.seq, groups, true), &out)
		rw.cred, rw.credSeq = out.ID, rw.seq
		rw.createPair(t, c, board)
	}
	var done atomic.Bool
	var wg sync.WaitGroup
	for _, rw := range ws {
		wg.Go(func() {
			for !done.Load() && !t.Failed() {
				rw.write(t, c, board, groups)
			}
		})
	}
	listings := make([]int, len(replicas))
	for i, r := range replicas {
		wg.Go(func() {
			for !done.Load() {
				before, gb := board.fullSnapshot(), make([]groupState, writers)
				for j, rw := range ws {
					gb[j] = rw.state()
				}
				res, err := c.do(r.base, "GET", statusPath, nil)
				if err != nil || res.status != 200 {
					t.Errorf("replica %d: GET %s: %v %v", i, statusPath, err, res)
					return
				}
				after := board.fullSnapshot()
				v, errs := checkListing(res.body, groups)
				if len(errs) == 0 {
					errs = v.atLeast(stable(before, after))
				}
				for j, rw := range ws {
					ga := rw.state()
					if len(errs) > 0 || gb[j].busy || ga.busy || gb[j].gen != ga.gen {
						continue
					}
					for _, e := range v.entries {
						if has, want := slices.Contains(e.Groups, rw.group), e.CCPairID == ga.member; has != want {
							errs = append(errs, fmt.Errorf("cc-pair %d: groups %v; writer %d's group %d holds cc-pair %d (0: none) since before the listing was asked for",
								e.CCPairID, e.Groups, j, rw.group, ga.member))
						}
					}
				}
				if len(errs) > 0 {
					t.Errorf("replica %d: listing %d, read while both replicas took writes:\n%v", i, listings[i]+1, errors.Join(errs...))
					return
				}
				listings[i]++
			}
		})
	}
	time.Sleep(2 * time.Second)
	done.Store(true)
	wg.Wait()
	n, re := 0, 0
	for _, rw := range ws {
		n, re = n+rw.writes, re+rw.recreated
	}
	t.Logf("%d writers on two replicas: %d writes (%d pairs deleted and created again); listings checked on each replica: %v", writers, n, re, listings)
}

// send sends one write of the writer, which must succeed.
func (rw *replicaWriter) send(t *testing.T, c *procClient, method, path string, body any) bool {
	r, err := c.do(rw.base, method, path, body)
	if err != nil || r.status/100 != 2 {
		t.Errorf("writer %d: %s %s: %v %v", rw.w, method, path, err, r)
		return false
	}
	rw.writes++
	return true
}

// createPair pairs the writer's connector and credential.
func (rw *replicaWriter) createPair(t *testing.T, c *procClient, board *ackBoard) bool {
	rw.seq++
	var res struct {
		Data int64 `json:"data"`
	}
	r, err := c.do(rw.base, "PUT", fmt.Sprintf("/manage/connector/%d/credential/%d", rw.conn, rw.cred),
		map[string]any{"name": pairName(rw.cred, rw.w, rw.seq), "access_type": "public"})
	if err != nil || r.status != 200 || json.Unmarshal(r.body, &res) != nil {
		t.Errorf("writer %d: creating its cc-pair: %v %v", rw.w, err, r)
		return false
	}
	rw.mu.Lock()
	rw.pair, rw.ps = res.Data, rw.seq
	rw.mu.Unlock()
	board.set(objKey{"cc_pair", res.Data}, rw.seq)
	board.set(objKey{"credential", rw.cred}, rw.credSeq)
	board.set(objKey{"connector", rw.conn}, rw.connSeq)
	return true
}

// write sends one write, chosen at random.
func (rw *replicaWriter) write(t *testing.T, c *procClient, board *ackBoard, groups []int64) {
	switch r := rw.rng.IntN(100); {
	case r < 30:
		rw.seq++
		if rw.send(t, c, "PATCH", fmt.Sprint("/manage/credential/", rw.cred), credentialBody(rw.w, rw.seq, groups, false)) {
			rw.credSeq = rw.seq
			board.set(objKey{"credential", rw.cred}, rw.seq)
		}
	case r < 50:
		rw.seq++
		path := fmt.Sprintf("/manage/admin/cc-pair/%d/name?new_name=%s", rw.pair, url.QueryEscape(pairName(rw.cred, rw.w, rw.seq)))
		if rw.send(t, c, "PUT", path, nil) {
			rw.ps = rw.seq
			board.set(objKey{"cc_pair", rw.pair}, rw.seq)
		}
	case r < 65:
		rw.seq++
		if rw.send(t, c, "PATCH", fmt.Sprint("/manage/admin/connector/", rw.conn), connectorBody(rw.w, rw.seq)) {
			rw.connSeq = rw.seq
			board.set(objKey{"connector", rw.conn}, rw.seq)
		}
	case r < 85:
		rw.mu.Lock()
		next := []int64{}
		if rw.member == 0 {
			next = append(next, rw.pair)
		}
		rw.busy, rw.gen = true, rw.gen+1
		rw.mu.Unlock()
		if rw.send(t, c, "PATCH", fmt.Sprint("/manage/admin/user-group/", rw.group), map[string]any{"cc_pair_ids": next}) {
			rw.mu.Lock()
			rw.member, rw.busy = 0, false
			if len(next) > 0 {
				rw.member = next[0]
			}
			rw.mu.Unlock()
		}
	default:
		// Delete the pair and create it again: meanwhile it, its
		// credential and its connector leave the listing.
		rw.mu.Lock()
		rw.busy, rw.gen = true, rw.gen+1
		rw.mu.Unlock()
		board.remove(objKey{"cc_pair", rw.pair})
		board.remove(objKey{"credential", rw.cred})
		board.remove(objKey{"connector", rw.conn})
		if !rw.send(t, c, "DELETE", fmt.Sprintf("/manage/connector/%d/credential/%d", rw.conn, rw.cred), nil) {
			return
		}
		rw.mu.Lock()
		rw.member = 0 // The group lost the pair with it.
		rw.mu.Unlock()
		if rw.createPair(t, c, board) {
			rw.recreated++
			rw.mu.Lock()
			rw.busy = false
			rw.mu.Unlock()
		}
	}
}
