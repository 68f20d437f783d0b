package api_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api"
	"github.com/quarryhq/quarry/toolrun"
)

// Runs of custom tools against real HTTP servers on loopback, which the
// egress guard opens only because these tests' configuration says so.

// allowLoopback opens 127.0.0.1 to runs (and token requests): the tests'
// upstreams and authorization servers listen there.
func allowLoopback(c *api.Config) {
	nets, hosts, err := toolrun.ParseAllow("127.0.0.1")
	if err != nil {
		panic(err)
	}
	c.ToolEgress = toolrun.Policy{Allow: nets, AllowHosts: hosts}
}

// itemsDefinition is the definition of the tests' tool, served at base.
func itemsDefinition(base string) string {
	return `{"openapi":"3.0.3","info":{"title":"Items","description":"The items API","version":"1"},
	"servers":[{"url":"` + base + `/v1"}],
	"paths":{
	 "/items/{id}":{"get":{"operationId":"getItem","summary":"Get an item","parameters":[
	   {"name":"id","in":"path","required":true,"schema":{"type":"integer","minimum":1}},
	   {"name":"verbose","in":"query","schema":{"type":"boolean"}}],
	   "responses":{"200":{"description":"OK"}}}},
	 "/items":{"post":{"operationId":"createItem","summary":"Create an item",
	   "requestBody":{"required":true,"content":{"application/json":{"schema":{"type":"object","required":["name"],
	     "properties":{"name":{"type":"string","maxLength":20}}}}}},
	   "responses":{"201":{"description":"Created"}}}},
	 "/me":{"get":{"operationId":"whoami","summary":"Who the token is for","responses":{"200":{"description":"OK"}}}},
	 "/slow":{"get":{"operationId":"slow","summary":"Takes its time","responses":{"200":{"description":"OK"}}}}}}`
}

// itemsServer is the tests' tool server. It echoes the API key it got (so
// that the tests see it masked), and answers /v1/me with the subject that
// userinfo (of the issuer the token names, when it is a provider's) says
// the bearer token is for.
type itemsServer struct {
	*httptest.Server
	mu       sync.Mutex
	requests []*http.Request
	bodies   []string
	issuers  []string // Providers whose userinfo /v1/me may ask.
}

func newItemsServer(t *testing.T, issuers ...string) *itemsServer {
	s := &itemsServer{issuers: issuers}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/items/{id}", func(w http.ResponseWriter, r *http.Request) {
		s.note(r)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-RateLimit-Remaining", "99")
		w.Header().Set("Set-Cookie", "upstream=1")
		w.Header().Set("X-Echo", r.Header.Get("X-Api-Key"))
		fmt.Fprintf(w, `{"id":%s,"verbose":%q,"key":%q}`, r.PathValue("id"), r.URL.Query().Get("verbose"), r.Header.Get("X-Api-Key"))
	})
	mux.HandleFunc("POST /v1/items", func(w http.ResponseWriter, r *http.Request) {
		s.note(r)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		w.Write([]byte(s.lastBody()))
	})
	mux.HandleFunc("GET /v1/me", func(w http.ResponseWriter, r *http.Request) {
		s.note(r)
		for _, iss := range s.issuers {
			req, _ := http.NewRequest("GET", iss+"/userinfo", nil)
			req.Header.Set("Authorization", r.Header.Get("Authorization"))
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				continue
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode == 200 {
				var info struct {
					Sub string `json:"sub"`
				}
				json.Unmarshal(body, &info)
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"sub":%q,"issuer":%q}`, info.Sub, iss)
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"error":"invalid_token"}`))
	})
	mux.HandleFunc("GET /v1/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func (s *itemsServer) note(r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r.Clone(r.Context()))
	s.bodies = append(s.bodies, string(b))
}

func (s *itemsServer) last() *http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.requests) == 0 {
		return nil
	}
	return s.requests[len(s.requests)-1]
}

func (s *itemsServer) lastBody() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bodies[len(s.bodies)-1]
}

func (s *itemsServer) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

// durationMS matches the duration of a run's answer, which the tests
// cannot know.
var durationMS = regexp.MustCompile(`"duration_ms":[0-9.e+-]+`)

// wantRun asserts the status and the whole body of a run's answer, its
// duration aside (it must be a number).
func wantRun(t *testing.T, r *response, status int, body string) {
	t.Helper()
	got := *r
	if status == 200 {
		if !durationMS.Match(r.body) {
			t.Fatalf("no duration_ms in %s", r.body)
		}
		got.body = durationMS.ReplaceAll(r.body, []byte(`"duration_ms":0`))
	}
	got.want(t, status, body)
}

// itemsTool creates the items tool as u with the extra fields of body.
func (e *env) itemsTool(u user, base, name, extra string) int64 {
	e.t.Helper()
	return e.createTool(u, fmt.Sprintf(`{"name":%q,"definition":%s%s}`, name, itemsDefinition(base), extra))
}

const itemsKey = "items-api-key-0123456789"

func TestToolRun(t *testing.T) {
	e := newEnv(t, allowLoopback, func(c *api.Config) { c.ToolEgress.Timeout = 300 * time.Millisecond })
	up := newItemsServer(t)
	tool := e.itemsTool(e.admin, up.URL, "items", `,"custom_headers":[{"key":"X-Api-Key","value":"`+itemsKey+`"}],"passthrough_auth":false`)
	basic := e.user(quarry.RoleBasic, "basic")
	limited := e.user(quarry.RoleLimited, "limited")
	run := func(u user, id int64, body string) *response {
		return e.do(u, "POST", fmt.Sprintf("/tool/%d/run", id), body)
	}

	t.Run("a run", func(t *testing.T) {
		r := run(basic, tool, `{"method":"getItem","args":{"id":7,"verbose":true}}`)
		length := len(`{"id":7,"verbose":"true","key":"` + itemsKey + `"}`)
		wantRun(t, r, 200, fmt.Sprintf(`{"status":200,"content_type":"application/json",
			"headers":{"Content-Length":"%d","Content-Type":"application/json","X-RateLimit-Remaining":"99"},
			"body":{"id":7,"verbose":"true","key":"••••••••••••"},"body_encoding":"json","truncated":false,"duration_ms":0}`, length))
		got := up.last()
		if got.URL.RequestURI() != "/v1/items/7?verbose=true" || got.Header.Get("X-Api-Key") != itemsKey ||
			got.Header.Get("User-Agent") != toolrun.UserAgent || got.Header.Get("Authorization") != "" {
			t.Errorf("the tool's server got %s %v", got.URL.RequestURI(), got.Header)
		}
		if strings.Contains(string(r.body), itemsKey) {
			t.Errorf("the answer holds the tool's secret: %s", r.body)
		}
	})
	t.Run("a body", func(t *testing.T) {
		wantRun(t, run(e.admin, tool, `{"method":"createItem","args":{"requestBody":{"name":"bolt"}}}`), 200,
			`{"status":201,"content_type":"application/json","headers":{"Content-Length":"15","Content-Type":"application/json"},
			"body":{"name":"bolt"},"body_encoding":"json","truncated":false,"duration_ms":0}`)
		if got := up.last(); got.Header.Get("Content-Type") != "application/json" || up.lastBody() != `{"name":"bolt"}` {
			t.Errorf("the tool's server got %v %s", got.Header, up.lastBody())
		}
	})

	builtIn := int64(1)
	disabled := e.itemsTool(e.admin, up.URL, "disabled", "")
	e.do(e.admin, "PATCH", "/admin/tool/status", fmt.Sprintf(`{"tool_ids":[%d],"enabled":false}`, disabled)).decode(t, new(any))
	private := e.createTool(e.admin, fmt.Sprintf(`{"name":"private","definition":%s}`, itemsDefinition("http://10.1.2.3:8080")))
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	unreachable := e.itemsTool(e.admin, closed.URL, "unreachable", "")
	before := up.count()
	for _, tt := range []struct {
		name   string
		u      user
		id     any
		body   string
		status int
		want   string
	}{
		{"no token", user{}, tool, `{"method":"getItem"}`, 401, fxNotAuthed},
		{"limited", limited, tool, `{"method":"getItem","args":{"id":1}}`, 403, fxLimited},
		{"bad id", basic, "x", `{"method":"getItem"}`, 422, `{"detail":[` + fxIntParsing("tool_id", "x") + `]}`},
		{"no body", basic, tool, ``, 422, fxMissingBody},
		{"no method", basic, tool, `{"args":{}}`, 400, `{"detail":"method is required: this tool's methods are createItem, getItem, slow, whoami"}`},
		{"unknown tool", basic, 9999, `{"method":"getItem"}`, 404, `{"detail":"Tool by specified id does not exist"}`},
		{"built-in", basic, builtIn, `{"method":"getItem"}`, 400, `{"detail":"Built-in tools cannot be run through this endpoint."}`},
		{"disabled", basic, disabled, `{"method":"getItem","args":{"id":1}}`, 409,
			fmt.Sprintf(`{"detail":"Tool %d is disabled; an admin or its owner can enable it with PATCH /admin/tool/status"}`, disabled)},
		{"unknown method", basic, tool, `{"method":"get_item"}`, 400,
			`{"detail":"Unknown method \"get_item\": this tool's methods are createItem, getItem, slow, whoami"}`},
		{"missing argument", basic, tool, `{"method":"getItem"}`, 400, `{"detail":"Missing required argument \"id\" (path parameter of getItem)"}`},
		{"argument of the wrong type", basic, tool, `{"method":"getItem","args":{"id":"7"}}`, 400,
			`{"detail":"Argument \"id\" does not fit its schema: value must be an integer"}`},
		{"argument out of range", basic, tool, `{"method":"getItem","args":{"id":0}}`, 400,
			`{"detail":"Argument \"id\" does not fit its schema: number must be at least 1"}`},
		{"unknown argument", basic, tool, `{"method":"getItem","args":{"id":1,"x-api-key":"mine"}}`, 400,
			`{"detail":"Unknown argument \"x-api-key\": method getItem takes id (path), verbose (query)"}`},
		{"body that does not fit", basic, tool, `{"method":"createItem","args":{"requestBody":{"name":"a name far too long for it"}}}`, 400,
			`{"detail":"Argument \"requestBody\" does not fit its schema: maximum string length is 20 (at /name)"}`},
		{"a private address", basic, private, `{"method":"getItem","args":{"id":1}}`, 403,
			`{"detail":"Quarry does not call 10.1.2.3: it is a private (RFC 1918) address. To call internal APIs, add the host or its network to QUARRY_TOOL_EGRESS_ALLOW"}`},
		{"an unreachable server", basic, unreachable, `{"method":"getItem","args":{"id":1}}`, 502,
			`{"detail":"The tool's server 127.0.0.1 could not be reached: the connection was refused"}`},
		{"a slow server", basic, tool, `{"method":"slow"}`, 504, `{"detail":"The tool's server 127.0.0.1 did not answer within 300ms"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := e.do(tt.u, "POST", fmt.Sprintf("/tool/%v/run", tt.id), tt.body)
			r.want(t, tt.status, tt.want)
		})
	}
	if n := up.count() - before; n != 0 {
		t.Errorf("refused runs made %d calls", n)
	}

	t.Run("audit log", func(t *testing.T) {
		var entries []struct {
			Action     string         `json:"action"`
			ActorID    string         `json:"actor_user_id"`
			ResourceID string         `json:"resource_id"`
			Fields     []string       `json:"fields"`
			Details    map[string]any `json:"details"`
		}
		r := e.do(e.admin, "GET", "/admin/audit-log?action=tool.run&limit=1000", nil)
		r.decode(t, &entries)
		if strings.Contains(string(r.body), itemsKey) || strings.Contains(string(r.body), "bolt") || strings.Contains(string(r.body), "verbose") {
			t.Errorf("the audit log holds arguments or secrets: %s", r.body)
		}
		// Oldest first: the two runs, then the refusals of existing tools.
		var got []string
		for i := len(entries) - 1; i >= 0; i-- {
			en := entries[i]
			d := en.Details
			got = append(got, fmt.Sprintf("%s %s %v %v %v %v", en.ResourceID, d["method"], d["host"], d["status"], d["outcome"], len(en.Fields)))
			if ms, ok := d["duration_ms"].(float64); !ok || ms < 0 {
				t.Errorf("entry %+v: no duration", en)
			}
		}
		want := []string{
			fmt.Sprintf("%d getItem 127.0.0.1 200 ok 0", tool),
			fmt.Sprintf("%d createItem 127.0.0.1 201 ok 0", tool),
			fmt.Sprintf("%d  127.0.0.1 <nil> invalid 0", tool),  // no method
			fmt.Sprintf("%d getItem  <nil> invalid 0", builtIn), // no host: a built-in has no definition
			fmt.Sprintf("%d getItem 127.0.0.1 <nil> disabled 0", disabled),
			fmt.Sprintf("%d get_item 127.0.0.1 <nil> invalid 0", tool),
			fmt.Sprintf("%d getItem 127.0.0.1 <nil> invalid 0", tool),
			fmt.Sprintf("%d getItem 127.0.0.1 <nil> invalid 0", tool),
			fmt.Sprintf("%d getItem 127.0.0.1 <nil> invalid 0", tool),
			fmt.Sprintf("%d getItem 127.0.0.1 <nil> invalid 0", tool),
			fmt.Sprintf("%d createItem 127.0.0.1 <nil> invalid 0", tool),
			fmt.Sprintf("%d getItem 10.1.2.3 <nil> refused 0", private),
			fmt.Sprintf("%d getItem 127.0.0.1 <nil> unreachable 0", unreachable),
			fmt.Sprintf("%d slow 127.0.0.1 <nil> timeout 0", tool),
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("audit entries:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
	t.Run("metrics", func(t *testing.T) {
		r := e.do(user{}, "GET", "/metrics", nil)
		for _, want := range []string{`quarry_tool_runs_total{outcome="ok"} 2`, `quarry_tool_runs_total{outcome="invalid"} 8`,
			`quarry_tool_runs_total{outcome="refused"} 1`, `quarry_tool_runs_total{outcome="timeout"} 1`,
			`quarry_tool_runs_total{outcome="unreachable"} 1`, `quarry_tool_runs_total{outcome="disabled"} 1`,
			`quarry_tool_runs_total{outcome="no_token"} 0`,
			`quarry_tool_runs_total{outcome="upstream_5xx"} 0`, `quarry_tool_run_duration_seconds_count{outcome="ok"} 2`} {
			if !strings.Contains(string(r.body), want) {
				t.Errorf("/metrics has no %q", want)
			}
		}
	})
	t.Run("golden 422 bodies", func(t *testing.T) {
		for _, g := range fxGoldens(t, "toolRun") {
			t.Run(g.Name, func(t *testing.T) { fx{e}.replay(t, basic, "POST", "", g) })
		}
	})
}

// TestToolRunCaps: runs in progress are capped per caller (of any tool)
// and per tool (everyone's together): past a cap, 429 with Retry-After,
// the tool's server gets nothing, the refusal is counted and not audited;
// a slot comes back when its run ends (issue 31).
func TestToolRunCaps(t *testing.T) {
	e := newEnv(t, allowLoopback, func(c *api.Config) { c.ToolEgress.MaxRunsPerCaller = 2; c.ToolEgress.MaxRunsPerTool = 3 })
	started := make(chan struct{}, 10)
	hold := make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(hold) }) }
	t.Cleanup(free)
	var calls atomic.Int32
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		started <- struct{}{}
		<-hold
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(up.Close)
	definition := `{"openapi":"3.0.3","info":{"title":"Hold","description":"Holds","version":"1"},"servers":[{"url":"` + up.URL + `"}],
		"paths":{"/hold":{"get":{"operationId":"hold","summary":"Hold","responses":{"200":{"description":"OK"}}}}}}`
	tool := e.createTool(e.admin, `{"name":"hold","definition":`+definition+`}`)
	other := e.createTool(e.admin, `{"name":"hold2","definition":`+definition+`}`)
	ann, bob := e.user(quarry.RoleBasic, "ann"), e.user(quarry.RoleBasic, "bob")
	run := func(u user, id int64) *response {
		return e.do(u, "POST", fmt.Sprintf("/tool/%d/run", id), `{"method":"hold"}`)
	}
	var wg sync.WaitGroup
	var held []*response
	var mu sync.Mutex
	start := func(u user, id int64) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := run(u, id)
			mu.Lock()
			held = append(held, r)
			mu.Unlock()
		}()
		<-started
	}
	tooMany := func(r *response, detail string) {
		t.Helper()
		r.want(t, 429, fxJSON(map[string]string{"detail": detail}))
		if r.header.Get("Retry-After") != "1" {
			t.Errorf("Retry-After %q", r.header.Get("Retry-After"))
		}
	}
	start(ann, tool)
	start(ann, tool)
	// Ann's third run, of any tool, waits for one of hers to end.
	perCaller := "You have 2 tool runs in progress, the most at once (QUARRY_TOOL_MAX_RUNS_PER_CALLER): wait for one to end"
	tooMany(run(ann, other), perCaller)
	// Over MCP too: a tool error, with the same words.
	res := mcpCall(t, e.mcpSession(t, ann.token), "hold2__hold", map[string]any{})
	res.Meta = nil
	jsonEq(t, "over /mcp", resultJSON(t, res), `{"content":[{"type":"text","text":`+jsonString(perCaller)+`}],"isError":true}`)
	// Bob's first run of the tool is its third; his second is one too many
	// for the tool, not for him.
	start(bob, tool)
	tooMany(run(bob, tool), fmt.Sprintf("Tool %d has 3 runs in progress, the most at once (QUARRY_TOOL_MAX_RUNS_PER_TOOL): try again shortly", tool))
	if n := calls.Load(); n != 3 {
		t.Errorf("the tool's server got %d calls, want the 3 admitted", n)
	}
	free()
	wg.Wait()
	for _, r := range held {
		if r.status != 200 {
			t.Errorf("a held run: %d %s", r.status, r.body)
		}
	}
	// The slots came back.
	if r := run(ann, tool); r.status != 200 {
		t.Errorf("after the runs ended: %d %s", r.status, r.body)
	}
	if n := fxCount(fx{e}.audit("resource_type=tool"), "tool.run"); n != 4 {
		t.Errorf("%d tool.run entries, want 4: refusals by the caps are not audited", n)
	}
	metrics := string(e.do(user{}, "GET", "/metrics", nil).body)
	if !strings.Contains(metrics, `quarry_tool_runs_total{outcome="limited"} 3`) {
		t.Errorf("the refusals are not counted as limited:\n%s", metrics)
	}
}
