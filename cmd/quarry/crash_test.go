package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
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
// PostgreSQL.
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

// crashObject is a credential or a tool that one worker writes.
type crashObject struct {
	kind    string // "credential" or "tool"
	id      int64
	acked   int   // The write last acknowledged,
	version int64 // and the version it answered.
	sent    []int // Writes sent since, not acknowledged: any of them may have committed.
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
}

func crashTest(t *testing.T, url string, vars map[string]string) {
	start := time.Now()
	vars["QUARRY_DATABASE_URL"] = url
	vars["QUARRY_MASK_CREDENTIALS"] = "false" // So that the test reads secrets back.
	vars["QUARRY_LOG_LEVEL"] = "warn"
	h := &crashHarness{t: t, url: url, vars: vars}
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
		for range 2 {
			if cw.create(h, nil); len(cw.creates) > 0 {
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
		t.Logf("round %d: %d writes acknowledged before SIGKILL, all present after restart; %d unacknowledged ones committed",
			round+1, n, h.unacked)
		h.unacked = 0
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
		case r < 60:
			cw.patch(h, cw.creds[cw.rng.IntN(len(cw.creds))], killed)
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
	cw.creds = append(cw.creds, &crashObject{kind: "credential", id: k.ID, acked: s, version: r.version()})
	cw.acks = append(cw.acks, ack{crashRequestID(cw.w, s), "credential.create", strconv.FormatInt(k.ID, 10)})
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
	for _, cw := range h.workers {
		cw.creates = nil // Those not shown by now were not committed.
		for _, o := range append(slices.Clone(cw.creds), cw.tool) {
			var s int
			var err error
			path := fmt.Sprint("/manage/credential/", o.id)
			if o.kind == "tool" {
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
			switch {
			case s == o.acked:
				if r.version() != o.version {
					t.Errorf("%s %d: version %d, want the acknowledged %d", o.kind, o.id, r.version(), o.version)
				}
			case slices.Contains(o.sent, s) && s > o.acked:
				h.unacked++
				if r.version() <= o.version {
					t.Errorf("%s %d: version %d after an unacknowledged write, want more than %d", o.kind, o.id, r.version(), o.version)
				}
			default:
				t.Errorf("%s %d shows write %d; acknowledged %d, sent since %v", o.kind, o.id, s, o.acked, o.sent)
			}
			o.acked, o.version, o.sent = s, r.version(), nil
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
