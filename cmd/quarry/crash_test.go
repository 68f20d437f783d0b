package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
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

// TestCrashSafety drives concurrent writes at a quarry serve process, kills
// it with SIGKILL at a random moment, restarts it and checks that every
// acknowledged write is there, whole, with its audit entry (contract section
// 7), five times on SQLite and, with QUARRY_TEST_POSTGRES_URL, on
// PostgreSQL. The writes include cc-pairs and connectors, so that the
// status listing (contract section 4.1) shows what they change: a reader
// checks, while the writes run, that each listing is whole and shows every
// write acknowledged before it was asked for; after each restart, the
// listing must show every acknowledged write, as the single-object GETs do.
func TestCrashSafety(t *testing.T) {
	quarryBinary(t)
	t.Run("sqlite", func(t *testing.T) {
		// No key set: the key file generated beside the database must
		// serve every restart.
		crashTest(t, "sqlite:"+filepath.Join(t.TempDir(), "quarry.db"), map[string]string{})
	})
	t.Run("postgres", func(t *testing.T) {
		if os.Getenv(storetest.PostgresEnv) == "" {
			t.Skip(storetest.PostgresEnv + " is not set")
		}
		crashTest(t, storetest.URL(t), map[string]string{"QUARRY_ENCRYPTION_KEY": store.NewKey()})
	})
}

const (
	crashRounds  = 5
	crashWorkers = 4
)

// crashDefinition is a valid custom tool definition.
const crashDefinition = `{"openapi": "3.0.0", "info": {"title": "Ping", "description": "Pings", "version": "1"},
	"servers": [{"url": "https://ping.example.com"}],
	"paths": {"/ping": {"get": {"summary": "ping", "operationId": "ping", "responses": {"200": {"description": "ok"}}}}}}`

// Every write of the test carries its worker w and a sequence number s,
// unique per worker, in its content and in its request id, so that what a
// restarted server shows can be traced to the write that made it.

func crashRequestID(w, s int) string { return fmt.Sprintf("crash-w%d-s%d", w, s) }

func crashName(w, s int) string { return fmt.Sprintf("w%d-seq-%d", w, s) }

// parseCrashName returns the worker and sequence number of a name.
func parseCrashName(name string) (w, s int, ok bool) {
	_, err := fmt.Sscanf(name, "w%d-seq-%d", &w, &s)
	return w, s, err == nil && crashName(w, s) == name
}

// crashGroups returns the groups of write s: a subset of groups.
func crashGroups(s int, groups []int64) []int64 {
	out := []int64{}
	for i, g := range groups {
		if s>>i&1 == 1 {
			out = append(out, g)
		}
	}
	return out
}

// credentialBody is the body of a create or a PATCH: every field follows s.
func credentialBody(w, s int, groups []int64, create bool) map[string]any {
	b := map[string]any{
		"name": crashName(w, s),
		"credential_json": map[string]any{"seq": strconv.Itoa(s), "token": fmt.Sprintf("secret-%d-%d", w, s),
			"pad": strings.Repeat("p", 100+s%400)},
		"admin_public": s%2 == 0,
		"groups":       crashGroups(s, groups),
	}
	if create {
		b["source"] = "confluence"
	}
	return b
}

// crashCredential is what the test reads of a credential.
type crashCredential struct {
	ID             int64          `json:"id"`
	Name           string         `json:"name"`
	CredentialJSON map[string]any `json:"credential_json"`
	AdminPublic    bool           `json:"admin_public"`
	Groups         []int64        `json:"groups"`
}

// check returns the worker and write of a credential, or an error if its
// fields do not all come from one write.
func (k *crashCredential) check(groups []int64) (w, s int, err error) {
	w, s, ok := parseCrashName(k.Name)
	if !ok {
		return 0, 0, fmt.Errorf("credential %d: unexpected name %q", k.ID, k.Name)
	}
	want := credentialBody(w, s, groups, false)
	got := map[string]any{"name": k.Name, "credential_json": k.CredentialJSON, "admin_public": k.AdminPublic, "groups": k.Groups}
	a, _ := json.Marshal(want)
	b, _ := json.Marshal(got)
	if string(a) != string(b) {
		return w, s, fmt.Errorf("credential %d is not one write's:\n got %.300s\nwant %.300s", k.ID, b, a)
	}
	return w, s, nil
}

func toolBody(w, s int) map[string]any {
	return map[string]any{
		"description": crashName(w, s),
		"custom_headers": []map[string]string{
			{"key": "X-Seq", "value": strconv.Itoa(s)},
			{"key": "Authorization", "value": fmt.Sprintf("Bearer secret-%d-%d", w, s)},
		},
	}
}

// crashTool is what the test reads of a tool.
type crashTool struct {
	ID            int64            `json:"id"`
	Description   string           `json:"description"`
	CustomHeaders []map[string]any `json:"custom_headers"`
}

func (tl *crashTool) check() (w, s int, err error) {
	w, s, ok := parseCrashName(tl.Description)
	if !ok {
		return 0, 0, fmt.Errorf("tool %d: unexpected description %q", tl.ID, tl.Description)
	}
	a, _ := json.Marshal(toolBody(w, s)["custom_headers"])
	b, _ := json.Marshal(tl.CustomHeaders)
	if string(a) != string(b) {
		return w, s, fmt.Errorf("tool %d: headers %s do not go with its description %q", tl.ID, b, tl.Description)
	}
	return w, s, nil
}

// crashObject is a credential, a tool or a connector that one worker
// writes. A credential has, once created, a cc-pair with its worker's
// connector, whose name the worker writes too.
type crashObject struct {
	kind    string // "credential", "tool" or "connector"
	id      int64
	acked   int   // The write last acknowledged,
	version int64 // and the version it answered (-1 for a connector, which has none).
	sent    []int // Writes sent since, not acknowledged: any of them may have committed.

	pair        crashPair // Of a credential.
	pairCreated int       // A create of the pair sent and not acknowledged, or 0.
}

// crashPair is the cc-pair of a credential, like crashObject: id is 0
// until it is created.
type crashPair struct {
	id      int64
	acked   int
	version int64
	sent    []int
}

// ack is an acknowledged write, whose audit entry must exist.
type ack struct {
	requestID, action, resourceID string
}

// crashWorker writes its own objects, one request at a time.
type crashWorker struct {
	w       int
	seq     int
	rng     *rand.Rand
	creds   []*crashObject
	tool    *crashObject
	conn    *crashObject
	creates []int // Creates sent and not acknowledged.
	acks    []ack
	errs    []string // 5xx answers other than 503.
}

// crashHarness is one database under test.
type crashHarness struct {
	t       *testing.T
	url     string
	vars    map[string]string
	c       *procClient
	srv     *procServer
	groups  []int64
	workers []*crashWorker
	unacked int // Writes found committed whose answers the kill lost.

	board    *ackBoard      // What was acknowledged, for the listing reader.
	seen     map[objKey]int // The latest write of each object a listing showed.
	listings int            // Listings the reader checked in the round.
}

func crashTest(t *testing.T, url string, vars map[string]string) {
	start := time.Now()
	vars["QUARRY_DATABASE_URL"] = url
	vars["QUARRY_MASK_CREDENTIALS"] = "false" // So that the test reads secrets back.
	vars["QUARRY_LOG_LEVEL"] = "warn"
	// The indexer's own writes (a pair's status moving on as its attempts
	// run, with its version) are not the client's: they would be told
	// apart from no acknowledged write. Indexing has crash tests of its own.
	vars["QUARRY_INDEXING"] = "false"
	h := &crashHarness{t: t, url: url, vars: vars, board: newAckBoard(), seen: map[objKey]int{}}
	h.c = newProcClient(procAPIKey(t, vars))
	h.srv = startServe(t, vars)
	for i := range 3 {
		var g struct {
			ID int64 `json:"id"`
		}
		h.c.must(t, h.srv.base, "POST", "/manage/admin/user-group", map[string]any{"name": fmt.Sprint("crash-", i)}, &g)
		h.groups = append(h.groups, g.ID)
	}
	for w := range crashWorkers {
		cw := &crashWorker{w: w, rng: rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))}
		h.workers = append(h.workers, cw)
		cw.seq++
		var conn struct {
			ID int64 `json:"id"`
		}
		h.c.must(t, h.srv.base, "POST", "/manage/admin/connector", connectorBody(w, cw.seq), &conn, "X-Request-ID", crashRequestID(w, cw.seq))
		cw.conn = &crashObject{kind: "connector", id: conn.ID, acked: cw.seq, version: -1}
		cw.acks = append(cw.acks, ack{crashRequestID(w, cw.seq), "connector.create", strconv.FormatInt(conn.ID, 10)})
		h.board.set(objKey{"connector", conn.ID}, cw.seq)
		for range 2 {
			if cw.create(h, nil); len(cw.creates) > 0 || cw.creds[len(cw.creds)-1].pair.id == 0 {
				t.Fatalf("worker %d: creating a credential failed", w)
			}
		}
		cw.seq++
		s := cw.seq
		b := toolBody(w, s)
		b["name"], b["definition"], b["passthrough_auth"] = fmt.Sprint("crash_tool_", w), json.RawMessage(crashDefinition), false
		var tl crashTool
		r := h.c.must(t, h.srv.base, "POST", "/admin/tool/custom", b, &tl, "X-Request-ID", crashRequestID(w, s))
		cw.tool = &crashObject{kind: "tool", id: tl.ID, acked: s, version: r.version()}
		cw.acks = append(cw.acks, ack{crashRequestID(w, s), "tool.create", strconv.FormatInt(tl.ID, 10)})
	}
	rng := rand.New(rand.NewPCG(1, uint64(time.Now().UnixNano())))
	total := 0
	for round := range crashRounds {
		var killed atomic.Bool
		before := h.acked()
		var wg sync.WaitGroup
		for _, cw := range h.workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cw.load(h, &killed)
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			h.readListings(&killed)
		}()
		time.Sleep(time.Duration(150+rng.IntN(900)) * time.Millisecond)
		killed.Store(true)
		h.srv.kill()
		wg.Wait()
		h.c.http.CloseIdleConnections()
		n := h.acked() - before
		total += n
		h.srv = startServe(t, vars)
		h.verify()
		if t.Failed() {
			t.Logf("round %d: server log:\n%s", round+1, h.srv.stderr.String())
			return
		}
		t.Logf("round %d: %d writes acknowledged before SIGKILL, all present after restart; %d unacknowledged ones committed; %d listings read meanwhile, all whole and fresh",
			round+1, n, h.unacked, h.listings)
		h.unacked, h.listings = 0, 0
	}
	t.Logf("%d rounds, %d writes acknowledged, %d credentials, in %s", crashRounds, total, h.credentials(), time.Since(start).Round(time.Millisecond))
}

func (h *crashHarness) acked() int {
	n := 0
	for _, cw := range h.workers {
		n += len(cw.acks)
	}
	return n
}

func (h *crashHarness) credentials() int {
	n := 0
	for _, cw := range h.workers {
		n += len(cw.creds)
	}
	return n
}

// load sends writes until the server is killed.
func (cw *crashWorker) load(h *crashHarness, killed *atomic.Bool) {
	for !killed.Load() {
		switch r := cw.rng.IntN(100); {
		case r < 45:
			cw.patch(h, cw.creds[cw.rng.IntN(len(cw.creds))], killed)
		case r < 60:
			if o := cw.creds[cw.rng.IntN(len(cw.creds))]; o.pair.id != 0 {
				cw.rename(h, o, killed)
			}
		case r < 68:
			cw.patchConnector(h, killed)
		case r < 85:
			cw.put(h, killed)
		default:
			cw.create(h, killed)
		}
	}
}

// send sends one write and reports whether it was acknowledged. A request
// that fails while the server lives is an error of the test.
func (cw *crashWorker) send(h *crashHarness, killed *atomic.Bool, method, path string, body any, s int) (*procReply, bool) {
	r, err := h.c.do(h.srv.base, method, path, body, "X-Request-ID", crashRequestID(cw.w, s))
	if err != nil {
		if killed == nil || !killed.Load() {
			h.t.Errorf("%s %s: %v", method, path, err)
		}
		return nil, false
	}
	if r.status/100 != 2 {
		if r.status != 503 {
			cw.errs = append(cw.errs, fmt.Sprintf("%s %s: %d %s", method, path, r.status, r.body))
			h.t.Errorf("%s %s: %d %s", method, path, r.status, r.body)
		}
		return r, false
	}
	return r, true
}

func (cw *crashWorker) patch(h *crashHarness, o *crashObject, killed *atomic.Bool) {
	cw.seq++
	s := cw.seq
	o.sent = append(o.sent, s)
	r, ok := cw.send(h, killed, "PATCH", fmt.Sprint("/manage/credential/", o.id), credentialBody(cw.w, s, h.groups, false), s)
	if !ok {
		return
	}
	var k crashCredential
	if err := json.Unmarshal(r.body, &k); err != nil {
		h.t.Error(err)
	} else if _, got, err := k.check(h.groups); err != nil || got != s {
		h.t.Errorf("PATCH answered write %d, want %d: %v", got, s, err)
	}
	o.acked, o.version, o.sent = s, r.version(), nil
	cw.acks = append(cw.acks, ack{crashRequestID(cw.w, s), "credential.update", strconv.FormatInt(o.id, 10)})
	if o.pair.id != 0 {
		h.board.set(objKey{"credential", o.id}, s)
	}
}

// rename renames the cc-pair of credential o.
func (cw *crashWorker) rename(h *crashHarness, o *crashObject, killed *atomic.Bool) {
	cw.seq++
	s := cw.seq
	p := &o.pair
	p.sent = append(p.sent, s)
	path := fmt.Sprintf("/manage/admin/cc-pair/%d/name?new_name=%s", p.id, url.QueryEscape(pairName(o.id, cw.w, s)))
	r, ok := cw.send(h, killed, "PUT", path, nil, s)
	if !ok {
		return
	}
	p.acked, p.version, p.sent = s, r.version(), nil
	cw.acks = append(cw.acks, ack{crashRequestID(cw.w, s), "cc_pair.update", strconv.FormatInt(p.id, 10)})
	h.board.set(objKey{"cc_pair", p.id}, s)
}

// patchConnector rewrites the worker's connector: its name and its
// connector_specific_config.
func (cw *crashWorker) patchConnector(h *crashHarness, killed *atomic.Bool) {
	cw.seq++
	s := cw.seq
	o := cw.conn
	o.sent = append(o.sent, s)
	if _, ok := cw.send(h, killed, "PATCH", fmt.Sprint("/manage/admin/connector/", o.id), connectorBody(cw.w, s), s); !ok {
		return
	}
	o.acked, o.sent = s, nil
	cw.acks = append(cw.acks, ack{crashRequestID(cw.w, s), "connector.update", strconv.FormatInt(o.id, 10)})
	h.board.set(objKey{"connector", o.id}, s)
}

// createPair pairs credential o with the worker's connector.
func (cw *crashWorker) createPair(h *crashHarness, o *crashObject, killed *atomic.Bool) {
	cw.seq++
	s := cw.seq
	o.pairCreated = s
	path := fmt.Sprintf("/manage/connector/%d/credential/%d", cw.conn.id, o.id)
	r, ok := cw.send(h, killed, "PUT", path, map[string]any{"name": pairName(o.id, cw.w, s), "access_type": "public"}, s)
	if !ok {
		return
	}
	var res struct {
		Data int64 `json:"data"`
	}
	if err := json.Unmarshal(r.body, &res); err != nil || res.Data == 0 {
		h.t.Errorf("PUT %s: %s: %v", path, r.body, err)
		return
	}
	var info struct {
		Name string `json:"name"`
	}
	// The ETag of the new pair: the create does not answer one.
	g, err := h.c.do(h.srv.base, "GET", fmt.Sprint("/manage/admin/cc-pair/", res.Data), nil)
	if err != nil || g.status != 200 {
		if killed == nil || !killed.Load() {
			h.t.Errorf("GET cc-pair %d: %v %v", res.Data, err, g)
		}
		g = &procReply{header: http.Header{"Etag": {`"-2"`}}} // Unknown: verify checks the name only.
	} else if err := json.Unmarshal(g.body, &info); err != nil || info.Name != pairName(o.id, cw.w, s) {
		h.t.Errorf("cc-pair %d just created as %q reads %s: %v", res.Data, pairName(o.id, cw.w, s), g.body, err)
	}
	o.pair = crashPair{id: res.Data, acked: s, version: g.version()}
	o.pairCreated = 0
	cw.acks = append(cw.acks, ack{crashRequestID(cw.w, s), "cc_pair.create", strconv.FormatInt(res.Data, 10)})
	h.board.set(objKey{"cc_pair", o.pair.id}, s)
	h.board.set(objKey{"credential", o.id}, o.acked)
}

func (cw *crashWorker) put(h *crashHarness, killed *atomic.Bool) {
	cw.seq++
	s := cw.seq
	o := cw.tool
	o.sent = append(o.sent, s)
	r, ok := cw.send(h, killed, "PUT", fmt.Sprint("/admin/tool/custom/", o.id), toolBody(cw.w, s), s)
	if !ok {
		return
	}
	o.acked, o.version, o.sent = s, r.version(), nil
	cw.acks = append(cw.acks, ack{crashRequestID(cw.w, s), "tool.update", strconv.FormatInt(o.id, 10)})
}

func (cw *crashWorker) create(h *crashHarness, killed *atomic.Bool) {
	cw.seq++
	s := cw.seq
	cw.creates = append(cw.creates, s)
	r, ok := cw.send(h, killed, "POST", "/manage/credential", credentialBody(cw.w, s, h.groups, true), s)
	if !ok {
		return
	}
	var k crashCredential
	if err := json.Unmarshal(r.body, &k); err != nil {
		h.t.Error(err)
		return
	}
	cw.creates = slices.DeleteFunc(cw.creates, func(x int) bool { return x == s })
	o := &crashObject{kind: "credential", id: k.ID, acked: s, version: r.version()}
	cw.creds = append(cw.creds, o)
	cw.acks = append(cw.acks, ack{crashRequestID(cw.w, s), "credential.create", strconv.FormatInt(k.ID, 10)})
	cw.createPair(h, o, killed)
}

// readListings reads the status listing until the server is killed, and
// checks each: whole (checkListing), showing every write acknowledged
// before it was asked for, and no write older than one an earlier listing
// showed. It stops at the first listing that fails.
func (h *crashHarness) readListings(killed *atomic.Bool) {
	for !killed.Load() {
		min := h.board.snapshot()
		for k, s := range h.seen {
			min[k] = max(min[k], s)
		}
		r, err := h.c.do(h.srv.base, "GET", statusPath, nil)
		if err != nil || r.status != 200 {
			if !killed.Load() {
				h.t.Errorf("GET %s: %v %v", statusPath, err, r)
			}
			return
		}
		v, errs := checkListing(r.body, h.groups)
		if len(errs) == 0 {
			errs = v.atLeast(min)
		}
		if len(errs) > 0 {
			for i, err := range errs {
				if i == 10 {
					h.t.Errorf("listing %d: ... %d more", h.listings+1, len(errs)-i)
					break
				}
				h.t.Errorf("listing %d read during the writes: %v", h.listings+1, err)
			}
			return
		}
		h.listings++
		for k, s := range v.seq {
			h.seen[k] = max(h.seen[k], s)
		}
	}
}

// verify checks the restarted server against what was acknowledged, then
// takes what it shows as the new starting point.
func (h *crashHarness) verify() {
	t := h.t
	t.Helper()
	base := h.srv.base
	// Every credential decrypts (or the listing fails) and is whole.
	var list []*crashCredential
	h.c.must(t, base, "GET", "/manage/credential", nil, &list)
	byID := map[int64]*crashCredential{}
	owned := map[int64]bool{}
	for _, cw := range h.workers {
		for _, o := range cw.creds {
			owned[o.id] = true
		}
	}
	audit := h.auditEntries()
	for _, k := range list {
		byID[k.ID] = k
		w, s, err := k.check(h.groups)
		if err != nil {
			t.Error(err)
			continue
		}
		// The write that made what is shown committed with its audit entry.
		if e, ok := audit[crashRequestID(w, s)]; !ok || e.resourceID != strconv.FormatInt(k.ID, 10) {
			t.Errorf("credential %d shows write %d of worker %d, whose audit entry is %+v", k.ID, s, w, e)
		}
		if owned[k.ID] {
			continue
		}
		// A create that committed while its answer was lost to the kill.
		cw := h.workers[w]
		if !slices.Contains(cw.creates, s) {
			t.Errorf("credential %d (write %d of worker %d) was never created as far as the test knows", k.ID, s, w)
			continue
		}
		h.unacked++
		cw.creds = append(cw.creds, &crashObject{kind: "credential", id: k.ID, acked: s, version: 1})
		cw.creates = slices.DeleteFunc(cw.creates, func(x int) bool { return x == s })
	}
	// Every acknowledged object shows its last acknowledged write or one
	// sent after it, never an older one.
	var tools []*crashTool
	h.c.must(t, base, "GET", "/tool", nil, &tools)
	toolByID := map[int64]*crashTool{}
	for _, tl := range tools {
		toolByID[tl.ID] = tl
	}
	// The status listing of the new process: whole, and showing no write
	// older than one a listing of the old process showed.
	listed := h.c.must(t, base, "GET", statusPath, nil, nil)
	v, errs := checkListing(listed.body, h.groups)
	if len(errs) == 0 {
		errs = v.atLeast(h.seen)
	}
	for i, err := range errs {
		if i == 10 {
			t.Errorf("listing after the restart: ... %d more", len(errs)-i)
			break
		}
		t.Errorf("listing after the restart: %v", err)
	}
	if len(errs) > 0 {
		return
	}
	single := map[objKey][]byte{} // What the single-object GETs answered.
	for _, cw := range h.workers {
		cw.creates = nil // Those not shown by now were not committed.
		for _, o := range append(slices.Clone(cw.creds), cw.tool, cw.conn) {
			var s int
			var err error
			path := fmt.Sprint("/manage/credential/", o.id)
			if o.kind == "connector" {
				path = fmt.Sprint("/manage/connector/", o.id)
				var conn listingConnector
				r := h.c.must(t, base, "GET", path, nil, &conn)
				marker, _ := conn.Config["marker"].(string)
				var ok bool
				if _, s, ok = parseCrashName(marker); !ok || conn.Name != "conn-"+marker {
					t.Errorf("connector %d is not one write's: %s", o.id, r.body)
					continue
				}
			} else if o.kind == "tool" {
				path = fmt.Sprint("/tool/", o.id)
				tl := toolByID[o.id]
				if tl == nil {
					t.Errorf("tool %d is gone", o.id)
					continue
				}
				_, s, err = tl.check()
			} else {
				k := byID[o.id]
				if k == nil {
					t.Errorf("credential %d is gone", o.id)
					continue
				}
				_, s, err = k.check(h.groups)
			}
			if err != nil {
				continue // Reported above.
			}
			r := h.c.must(t, base, "GET", path, nil, nil)
			single[objKey{o.kind, o.id}] = r.body
			h.compare(o.kind, o.id, s, o.acked, o.sent, o.version, r.version())
			o.acked, o.version, o.sent = s, r.version(), nil
		}
		// The pairs, in the listing and one by one.
		for _, o := range cw.creds {
			p := &o.pair
			if p.id == 0 && o.pairCreated != 0 {
				// A create whose answer the kill lost may have committed.
				for _, e := range v.entries {
					if e.cred.ID == o.id {
						p.id, p.acked, p.version = e.CCPairID, o.pairCreated, -2
						h.unacked++
					}
				}
			}
			o.pairCreated = 0
			if p.id == 0 {
				continue
			}
			e := v.byPair[p.id]
			if e == nil {
				t.Errorf("cc-pair %d of credential %d is missing from the listing after the restart", p.id, o.id)
				continue
			}
			var full struct {
				Name       string          `json:"name"`
				AccessType string          `json:"access_type"`
				Groups     []int64         `json:"groups"`
				Connector  json.RawMessage `json:"connector"`
				Credential json.RawMessage `json:"credential"`
			}
			r := h.c.must(t, base, "GET", fmt.Sprint("/manage/admin/cc-pair/", p.id), nil, &full)
			what := fmt.Sprint("cc-pair ", p.id)
			if p.version == -2 { // Adopted above, or created just before the kill.
				if s := v.seq[objKey{"cc_pair", p.id}]; s != p.acked {
					t.Errorf("%s: created by write %d, whose answer was lost, but shows write %d", what, p.acked, s)
				}
			} else {
				h.compare("cc_pair", p.id, v.seq[objKey{"cc_pair", p.id}], p.acked, p.sent, p.version, r.version())
			}
			p.acked, p.version, p.sent = v.seq[objKey{"cc_pair", p.id}], r.version(), nil
			if *e.Name != full.Name || e.AccessType != full.AccessType || !slices.Equal(e.Groups, full.Groups) {
				t.Errorf("%s: the listing shows name %q, access_type %q, groups %v; its own GET %q, %q, %v",
					what, *e.Name, e.AccessType, e.Groups, full.Name, full.AccessType, full.Groups)
			}
			for _, err := range []error{
				sameFields(what+"'s credential (vs the pair's GET)", e.Credential, full.Credential),
				sameFields(what+"'s connector (vs the pair's GET)", e.Connector, full.Connector),
				sameFields(what+"'s credential (vs the credential's GET)", e.Credential, single[objKey{"credential", o.id}]),
				sameFields(what+"'s connector (vs the connector's GET)", e.Connector, single[objKey{"connector", cw.conn.id}]),
			} {
				if err != nil {
					t.Error(err)
				}
			}
			if e.conn.ID != cw.conn.id {
				t.Errorf("%s: connector %d, want %d", what, e.conn.ID, cw.conn.id)
			}
		}
	}
	// The listing shows the test's pairs and nothing else.
	pairs := map[int64]bool{}
	for _, cw := range h.workers {
		for _, o := range cw.creds {
			pairs[o.pair.id] = true
		}
	}
	for _, e := range v.entries {
		if !pairs[e.CCPairID] {
			t.Errorf("the listing after the restart shows cc-pair %d (%q), which the test does not know", e.CCPairID, *e.Name)
		}
	}
	// Every acknowledged write has its audit entry.
	missing := 0
	for _, cw := range h.workers {
		for _, a := range cw.acks {
			if e, ok := audit[a.requestID]; !ok || e != a {
				missing++
				if missing <= 5 {
					t.Errorf("acknowledged write %+v: audit entry %+v", a, e)
				}
			}
		}
	}
	// Pair the credentials whose pair the kill prevented, and tell the
	// next round's reader what the objects show now.
	for _, cw := range h.workers {
		h.board.set(objKey{"connector", cw.conn.id}, cw.conn.acked)
		for _, o := range cw.creds {
			if o.pair.id == 0 {
				if cw.createPair(h, o, nil); o.pair.id == 0 {
					t.Fatalf("credential %d: creating its cc-pair failed", o.id)
				}
			}
			h.board.set(objKey{"credential", o.id}, o.acked)
			h.board.set(objKey{"cc_pair", o.pair.id}, o.pair.acked)
		}
	}
}

// compare checks that object id of kind shows write s after a restart:
// the acknowledged one, with the version it answered, or one sent after
// it whose answer the kill lost, with a later version. A version of -1
// means the object has none.
func (h *crashHarness) compare(kind string, id int64, s, acked int, sent []int, version, now int64) {
	t := h.t
	t.Helper()
	switch {
	case s == acked:
		if now != version {
			t.Errorf("%s %d: version %d, want the acknowledged %d", kind, id, now, version)
		}
	case slices.Contains(sent, s) && s > acked:
		h.unacked++
		if version >= 0 && now <= version {
			t.Errorf("%s %d: version %d after an unacknowledged write, want more than %d", kind, id, now, version)
		}
	default:
		t.Errorf("%s %d shows write %d; acknowledged %d, sent since %v", kind, id, s, acked, sent)
	}
}

// auditEntries returns the audit entries of the test's writes by request id.
func (h *crashHarness) auditEntries() map[string]ack {
	db := procSQL(h.t, h.url)
	defer db.Close()
	rows, err := db.Query(`SELECT request_id, action, resource_id FROM audit_events WHERE request_id LIKE 'crash-%'`)
	if err != nil {
		h.t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]ack{}
	for rows.Next() {
		var a ack
		if err := rows.Scan(&a.requestID, &a.action, &a.resourceID); err != nil {
			h.t.Fatal(err)
		}
		if _, dup := out[a.requestID]; dup {
			h.t.Errorf("two audit entries for request %s", a.requestID)
		}
		out[a.requestID] = a
	}
	if err := rows.Err(); err != nil {
		h.t.Fatal(err)
	}
	return out
}
