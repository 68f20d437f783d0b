package api_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/quarryhq/quarry/api"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/storetest"
)

// The tests of the operations routes (GET /health, /ready, /metrics), the
// body limit and database outages. The panic test is in panic_test.go, the
// time-out and shutdown tests in cmd/quarry.

const unavailableBody = `{"detail":"The database is unavailable; try again shortly"}`

func TestHealthAndReady(t *testing.T) {
	e := newEnv(t)
	for _, bp := range []string{"", "/api"} {
		e := e
		if bp != "" {
			e = newEnv(t, func(c *api.Config) { c.BasePath = bp })
		}
		e.do(user{}, "GET", bp+"/health", nil).want(t, 200, `{"status":"ok"}`)
		e.do(user{}, "GET", bp+"/ready", nil).want(t, 200, `{"status":"ready"}`)
		// A bogus token changes nothing: these routes do not look at it.
		e.do(user{token: "qry_bogus"}, "GET", bp+"/health", nil).want(t, 200, `{"status":"ok"}`)
	}
	// A closed store is a database that does not answer: /ready says so,
	// /health does not care.
	e.db.Close()
	r := e.do(user{}, "GET", "/ready", nil)
	r.want(t, 503, `{"detail":"The database is unavailable: it did not answer the check."}`)
	if r.header.Get("Retry-After") == "" {
		t.Error("503 from /ready without Retry-After")
	}
	e.do(user{}, "GET", "/health", nil).want(t, 200, `{"status":"ok"}`)
}

// scrape returns the text of GET /metrics.
func scrape(t *testing.T, e *env) string {
	t.Helper()
	r := e.do(user{}, "GET", "/metrics", nil)
	if r.status != 200 {
		t.Fatalf("GET /metrics: %d %s", r.status, r.body)
	}
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("GET /metrics: Content-Type %q, want text/plain", ct)
	}
	return string(r.body)
}

// sample returns the value of the series named exactly series (name and
// labels as the text format writes them, labels sorted), or -1.
func sample(text, series string) float64 {
	for line := range strings.Lines(text) {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			if err == nil {
				return v
			}
		}
	}
	return -1
}

func TestMetrics(t *testing.T) {
	e := newEnv(t)
	id := e.createCredential(e.admin, `{"credential_json": {"k": "metrics-secret-1"}, "admin_public": true, "source": "confluence"}`)
	for range 3 {
		e.do(e.admin, "GET", "/manage/credential/"+itoa(id), nil)
	}
	e.do(e.admin, "GET", "/manage/credential/987654", nil)
	e.do(user{}, "GET", "/manage/credential/987654", nil)
	e.do(user{}, "FROB", "/manage/credential/987654", nil)
	e.do(user{}, "GET", "/no/such/path/4242", nil)
	text := scrape(t, e)

	const route = `route="GET /manage/credential/{credential_id}"`
	for series, want := range map[string]float64{
		`quarry_http_requests_total{method="GET",` + route + `,status="200"}`:                                                          3,
		`quarry_http_requests_total{method="GET",` + route + `,status="404"}`:                                                          1,
		`quarry_http_requests_total{method="GET",` + route + `,status="401"}`:                                                          1,
		`quarry_http_request_duration_seconds_count{method="GET",` + route + `,status="200"}`:                                          3,
		`quarry_http_request_duration_seconds_bucket{method="GET",` + route + `,status="200",le="+Inf"}`:                               3,
		`quarry_http_requests_total{method="OTHER",route="/",status="405"}`:                                                            1,
		`quarry_http_requests_total{method="GET",route="/",status="404"}`:                                                              1,
		`quarry_build_info{go_version="` + runtimeVersion(t, text) + `",modified="false",revision="",revision_time="",version="test"}`: 1,
	} {
		if got := sample(text, series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
	// Raw paths and methods never become labels. (Bare numbers could turn
	// up in any sample's value, so the whole path is looked for.)
	for _, raw := range []string{"/manage/credential/987654", "/no/such/path", `"FROB"`} {
		if strings.Contains(text, raw) {
			t.Errorf("the metrics hold %q, part of a raw request", raw)
		}
	}
	pools := []string{"read", "write"}
	if e.db.Dialect() == store.Postgres {
		pools = []string{"shared"}
	}
	for _, pool := range pools {
		for _, name := range []string{"quarry_db_connections_max_open", "quarry_db_connections_open", "quarry_db_connections_in_use",
			"quarry_db_connections_idle", "quarry_db_connections_wait_total", "quarry_db_connections_wait_seconds_total"} {
			if got := sample(text, name+`{pool="`+pool+`"}`); got < 0 {
				t.Errorf("no %s for pool %s", name, pool)
			}
		}
		if got := sample(text, `quarry_db_connections_open{pool="`+pool+`"}`); got < 1 {
			t.Errorf("pool %s: %v connections open, want at least 1", pool, got)
		}
	}
	for _, name := range []string{"go_goroutines", "process_resident_memory_bytes"} {
		if !strings.Contains(text, "\n"+name+" ") {
			t.Errorf("no %s", name)
		}
	}

	// The statement counter is the store's.
	if got, want := sample(text, "quarry_db_statements_total"), float64(e.db.Statements()); got <= 0 || got > want {
		t.Errorf("quarry_db_statements_total = %v, want in (0, %v]", got, want)
	}
	before := e.db.Statements()
	e.do(e.admin, "GET", "/manage/credential/"+itoa(id), nil)
	if got := sample(scrape(t, e), "quarry_db_statements_total"); got < float64(before+1) {
		t.Errorf("quarry_db_statements_total = %v after a request, want > %d", got, before)
	}

	// Each server has a registry of its own, and the global one is left
	// alone.
	other := newEnv(t)
	if got := sample(scrape(t, other), `quarry_http_requests_total{method="GET",`+route+`,status="200"}`); got != -1 {
		t.Errorf("a second server reports the first one's requests: %v", got)
	}
	families, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if strings.HasPrefix(f.GetName(), "quarry_") {
			t.Errorf("the global registry has %s", f.GetName())
		}
	}
}

// runtimeVersion returns the go_version label of quarry_build_info.
func runtimeVersion(t *testing.T, text string) string {
	t.Helper()
	m := regexp.MustCompile(`quarry_build_info\{go_version="([^"]+)"`).FindStringSubmatch(text)
	if m == nil || !strings.HasPrefix(m[1], "go") {
		t.Errorf("no quarry_build_info with a go_version")
		return ""
	}
	return m[1]
}

func TestRequestLogLine(t *testing.T) {
	e := newEnv(t)
	e.do(e.admin, "GET", "/manage/credential/55", nil, "X-Request-ID", "log-line-probe")
	for line := range strings.Lines(e.log.String()) {
		var entry map[string]any
		if json.Unmarshal([]byte(line), &entry) != nil || entry["request_id"] != "log-line-probe" || entry["msg"] != "request" {
			continue
		}
		if entry["method"] != "GET" || entry["route"] != "GET /manage/credential/{credential_id}" || entry["status"] != float64(404) {
			t.Errorf("request line %s: wrong method, route or status", line)
		}
		if ms, ok := entry["duration_ms"].(float64); !ok || ms <= 0 || ms > 10000 {
			t.Errorf("request line %s: duration_ms is not a number of milliseconds", line)
		}
		return
	}
	t.Fatalf("no request line for log-line-probe in:\n%s", e.log.String())
}

// padTo pads the JSON object body with spaces before its closing brace to
// exactly n bytes.
func padTo(t *testing.T, body string, n int) string {
	t.Helper()
	body = strings.TrimSpace(body)
	if len(body) > n || !strings.HasSuffix(body, "}") {
		t.Fatalf("cannot pad %d bytes to %d", len(body), n)
	}
	return body[:len(body)-1] + strings.Repeat(" ", n-len(body)) + "}"
}

// unsized hides the length of a reader, so that the client sends the body
// chunked, without Content-Length.
type unsized struct{ io.Reader }

func TestBodyLimit(t *testing.T) {
	const limit = 4096
	e := newEnv(t, func(c *api.Config) { c.MaxBodyBytes = limit })
	cred := e.createCredential(e.admin, `{"credential_json": {"k": "limit-secret"}, "admin_public": true, "source": "confluence"}`)
	tool := e.createTool(e.admin, `{"name": "ping", "definition": `+pingDefinition+`, "passthrough_auth": false}`)
	tooLarge := `{"detail":"Request body is larger than 4096 bytes"}`
	for _, tt := range []struct{ method, path, body string }{
		{"PATCH", "/manage/credential/" + itoa(cred), `{"name": "limit"}`},
		{"PUT", "/admin/tool/custom/" + itoa(tool), `{"name": "limit"}`},
	} {
		t.Run(tt.method, func(t *testing.T) {
			version := func() string { return e.do(e.admin, "GET", etagPath(tt.path), nil).header.Get("ETag") }
			v0 := version()
			r := e.do(e.admin, tt.method, tt.path, padTo(t, tt.body, limit+1))
			r.want(t, 413, tooLarge)
			if v := version(); v != v0 {
				t.Errorf("a 413 changed the object: ETag %s → %s", v0, v)
			}
			// Without Content-Length, the limit holds as the body streams in.
			req, _ := http.NewRequest(tt.method, e.srv.URL+tt.path, unsized{strings.NewReader(padTo(t, tt.body, limit+1))})
			req.Header.Set("Authorization", "Bearer "+e.admin.token)
			req.Header.Set("Content-Type", "application/json")
			res, err := e.srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != 413 || string(b) != tooLarge {
				t.Errorf("chunked body one byte over: %d %s, want 413 %s", res.StatusCode, b, tooLarge)
			}
			// Exactly at the limit is fine.
			r = e.do(e.admin, tt.method, tt.path, padTo(t, tt.body, limit))
			if r.status != 200 {
				t.Errorf("body of exactly %d bytes: %d %s, want 200", limit, r.status, r.body)
			}
		})
	}
}

// etagPath returns the GET path that reports the ETag of the object at a
// PATCH or PUT path.
func etagPath(path string) string {
	if rest, ok := strings.CutPrefix(path, "/admin/tool/custom/"); ok {
		return "/tool/" + rest
	}
	return path
}

// ---- Database outages ----

// newEnvAt starts a test server, as newEnv does, on the database at u.
func newEnvAt(t *testing.T, u string, opts ...func(*api.Config)) *env {
	t.Helper()
	return startEnv(t, httptest.NewUnstartedServer(nil), u, opts...)
}

// timed runs a request and returns its response and how long it took.
func (e *env) timed(u user, method, path string, body any) (*response, time.Duration) {
	e.t.Helper()
	start := time.Now()
	r := e.do(u, method, path, body)
	return r, time.Since(start)
}

// wantUnavailable asserts that the usual requests answer 503 within limit,
// and that /ready answers 503 with one of reasons (which one may depend on
// whether a pooled connection or a new one tried first).
func (e *env) wantUnavailable(t *testing.T, cred int64, limit time.Duration, reasons ...string) {
	t.Helper()
	for _, req := range []struct {
		method, path string
		body         any
	}{
		{"GET", "/manage/admin/connector/status", nil},
		{"GET", "/manage/credential/" + itoa(cred), nil},
		{"PATCH", "/manage/credential/" + itoa(cred), `{"name": "during the outage"}`},
	} {
		r, took := e.timed(e.admin, req.method, req.path, req.body)
		r.want(t, 503, unavailableBody)
		if r.header.Get("Retry-After") == "" {
			t.Errorf("%s %s: 503 without Retry-After", req.method, req.path)
		}
		if took > limit {
			t.Errorf("%s %s took %v, want at most %v", req.method, req.path, took, limit)
		}
	}
	r, took := e.timed(user{}, "GET", "/ready", nil)
	var ready struct{ Detail string }
	json.Unmarshal(r.body, &ready)
	t.Logf("GET /ready: %d %s in %v", r.status, r.body, took)
	if r.status != 503 || !slices.ContainsFunc(reasons, func(reason string) bool {
		return ready.Detail == "The database is unavailable: "+reason+"."
	}) {
		t.Errorf("GET /ready: %d %s, want 503 with one of the reasons %q", r.status, r.body, reasons)
	}
	if took > limit {
		t.Errorf("GET /ready took %v, want at most %v", took, limit)
	}
	e.do(user{}, "GET", "/health", nil).want(t, 200, `{"status":"ok"}`)
}

// wantRecovered waits until the server serves again by itself, then checks
// that nothing was lost.
func (e *env) wantRecovered(t *testing.T, cred int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for e.do(user{}, "GET", "/ready", nil).status != 200 {
		if time.Now().After(deadline) {
			t.Fatal("/ready did not come back within 10s of the database")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// A pooled connection that died with the outage may cost one request;
	// after that, everything serves.
	for time.Now().Before(deadline) && e.do(e.admin, "GET", "/manage/credential/"+itoa(cred), nil).status != 200 {
		time.Sleep(50 * time.Millisecond)
	}
	e.do(e.admin, "PATCH", "/manage/credential/"+itoa(cred), `{"name": "after the outage"}`).decode(t, &struct{}{})
	var got struct {
		Name string `json:"name"`
	}
	e.do(e.admin, "GET", "/manage/credential/"+itoa(cred), nil).decode(t, &got)
	if got.Name != "after the outage" {
		t.Errorf("name = %q after recovery", got.Name)
	}
	e.do(e.admin, "GET", "/manage/admin/connector/status", nil).decode(t, &[]any{})
}

// TestOutageSQLiteLocked: another process holds SQLite's write lock (a
// backup, a stuck sqlite3 shell). SQLite's own wait for the lock cannot be
// interrupted, yet writes answer 503 within the request's database
// time-out, reads go on, and writes resume when the lock goes.
func TestOutageSQLiteLocked(t *testing.T) {
	if os.Getenv(storetest.PostgresEnv) != "" {
		t.Skip("SQLite only")
	}
	const dbTimeout = 300 * time.Millisecond
	e := newEnv(t, func(c *api.Config) { c.DBTimeout = dbTimeout })
	cred := e.createCredential(e.admin, `{"credential_json": {"k": "lock-secret-1"}, "admin_public": true, "source": "confluence"}`)
	_, path, _ := store.ParseURL(e.url)
	other, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		r, took := e.timed(e.admin, "PATCH", "/manage/credential/"+itoa(cred), `{"name": "locked"}`)
		r.want(t, 503, unavailableBody)
		if took < dbTimeout-50*time.Millisecond || took > dbTimeout+time.Second {
			t.Errorf("PATCH under a foreign lock took %v, want about the database time-out %v", took, dbTimeout)
		}
	}
	e.do(e.admin, "GET", "/manage/credential/"+itoa(cred), nil).decode(t, &struct{}{})
	e.do(user{}, "GET", "/ready", nil).want(t, 200, `{"status":"ready"}`)
	if _, err := conn.ExecContext(context.Background(), "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	e.wantRecovered(t, cred)
}

// proxy is a TCP proxy to a database server that a test can take down
// (connections refused, open ones cut) or hang (connections accepted and
// bytes swallowed: a server or network that stopped answering).
type proxy struct {
	t      *testing.T
	target string
	addr   string

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]bool
	hung  bool
}

func newProxy(t *testing.T, target string) *proxy {
	p := &proxy{t: t, target: target, conns: map[net.Conn]bool{}}
	p.listen("127.0.0.1:0")
	p.addr = p.ln.Addr().String()
	t.Cleanup(func() { p.down() })
	return p
}

func (p *proxy) listen(addr string) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		p.t.Fatal(err)
	}
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			p.conns[c] = true
			hung := p.hung
			p.mu.Unlock()
			if !hung {
				go p.serve(c)
			}
		}
	}()
}

func (p *proxy) serve(c net.Conn) {
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	p.conns[s] = true
	p.mu.Unlock()
	go p.pipe(s, c)
	p.pipe(c, s)
}

// pipe copies from src to dst, swallowing the bytes while the proxy hangs.
func (p *proxy) pipe(dst, src net.Conn) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			hung := p.hung
			p.mu.Unlock()
			if !hung {
				if _, err := dst.Write(buf[:n]); err != nil {
					return
				}
			}
		}
		if err != nil {
			return
		}
	}
}

// cut closes every open connection.
func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

// down refuses new connections and cuts the open ones.
func (p *proxy) down() {
	p.mu.Lock()
	ln := p.ln
	p.mu.Unlock()
	ln.Close()
	p.cut()
}

// hang makes the database stop answering, on open and new connections.
func (p *proxy) hang() {
	p.mu.Lock()
	p.hung = true
	p.mu.Unlock()
}

// up serves again, on the same address, from a state set by down or hang.
func (p *proxy) up() {
	p.mu.Lock()
	wasHung := p.hung
	p.hung = false
	p.mu.Unlock()
	if wasHung {
		p.cut() // Their protocol state is lost: as after a network failure.
		return
	}
	p.listen(p.addr)
}

// TestOutagePostgres points a server at PostgreSQL through a proxy, then
// takes the database away in the two ways it goes: refusing connections
// (a stopped server) and not answering at all (a hung server or a
// partitioned network). Requests answer 503 within the database time-out,
// /ready says why, and the server recovers by itself each time.
func TestOutagePostgres(t *testing.T) {
	admin := os.Getenv(storetest.PostgresEnv)
	if admin == "" {
		t.Skip(storetest.PostgresEnv + " is not set")
	}
	u, err := url.Parse(storetest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	p := newProxy(t, u.Host)
	u.Host = p.addr
	const dbTimeout = 500 * time.Millisecond
	e := newEnvAt(t, u.String(), func(c *api.Config) { c.DBTimeout = dbTimeout })
	cred := e.createCredential(e.admin, `{"credential_json": {"k": "outage-secret-1"}, "admin_public": true, "source": "confluence"}`)
	e.do(user{}, "GET", "/ready", nil).want(t, 200, `{"status":"ready"}`)

	t.Log("refused")
	p.down()
	e.wantUnavailable(t, cred, dbTimeout+time.Second, "the connection was refused", "the connection was closed")
	p.up()
	e.wantRecovered(t, cred)

	t.Log("hung")
	p.hang()
	e.wantUnavailable(t, cred, dbTimeout+time.Second, "it did not answer in time")
	p.up()
	e.wantRecovered(t, cred)
}

// TestOutagePostgresStopped starts a PostgreSQL cluster of its own, stops
// it under a running server and starts it again: the real thing, not a
// simulated network. It runs with the PostgreSQL tests (when
// QUARRY_TEST_POSTGRES_URL is set) if the PostgreSQL server programs are
// installed.
func TestOutagePostgresStopped(t *testing.T) {
	if os.Getenv(storetest.PostgresEnv) == "" {
		t.Skip(storetest.PostgresEnv + " is not set")
	}
	c := startCluster(t)
	const dbTimeout = 2 * time.Second
	e := newEnvAt(t, c.url, func(cfg *api.Config) { cfg.DBTimeout = dbTimeout })
	cred := e.createCredential(e.admin, `{"credential_json": {"k": "stopped-secret-1"}, "admin_public": true, "source": "confluence"}`)
	c.pgctl("-m", "fast", "stop")
	e.wantUnavailable(t, cred, dbTimeout+time.Second, "the connection was refused", "the connection was closed",
		"the server is starting up or shutting down")
	c.pgctl("start")
	e.wantRecovered(t, cred)
}

// cluster is a throwaway PostgreSQL cluster.
type cluster struct {
	t        *testing.T
	bin, dir string
	port     int
	url      string
	asUser   []string // runuser -u postgres --, when running as root
}

// startCluster initialises and starts a cluster in a temporary directory,
// stopped and removed when t ends.
func startCluster(t *testing.T) *cluster {
	t.Helper()
	bin := os.Getenv("PGBIN")
	if bin == "" {
		out, err := exec.Command("pg_config", "--bindir").Output()
		if err != nil {
			t.Skip("no pg_config to find the PostgreSQL programs")
		}
		bin = strings.TrimSpace(string(out))
	}
	if _, err := os.Stat(filepath.Join(bin, "initdb")); err != nil {
		t.Skipf("no initdb in %s", bin)
	}
	dir, err := os.MkdirTemp("", "quarry-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	c := &cluster{t: t, bin: bin, dir: dir}
	if os.Getuid() == 0 { // initdb refuses to run as root.
		if err := exec.Command("chown", "postgres:postgres", dir).Run(); err != nil {
			t.Skipf("running as root and cannot hand %s to user postgres: %v", dir, err)
		}
		c.asUser = []string{"runuser", "-u", "postgres", "--"}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c.port = ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	c.run("initdb", "-D", dir+"/data", "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C.UTF-8")
	c.pgctl("start")
	t.Cleanup(func() {
		if _, err := os.Stat(dir + "/data/postmaster.pid"); err == nil {
			c.pgctl("-m", "immediate", "stop")
		}
	})
	c.url = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.port)
	return c
}

// pgctl runs pg_ctl on the cluster with args.
func (c *cluster) pgctl(args ...string) {
	c.t.Helper()
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off", c.port, c.dir)
	c.run("pg_ctl", append([]string{"-D", c.dir + "/data", "-l", c.dir + "/pg.log", "-w", "-o", opts}, args...)...)
}

// run runs one of the PostgreSQL programs.
func (c *cluster) run(program string, args ...string) {
	c.t.Helper()
	argv := append(append(append([]string{}, c.asUser...), filepath.Join(c.bin, program)), args...)
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		c.t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
	}
}
