package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"

	"github.com/quarryhq/quarry/toolrun"
)

// quarry bench -op tool-run: runs of a custom tool (POST
// /tool/{tool_id}/run) against an upstream that bench serves on loopback,
// and, as the floor, direct calls of the same operation to the same
// upstream with the same headers. The difference is what a run adds to a
// call: authentication, the tool and its secrets read, the arguments
// checked and bound, the egress guard, the audit entry, and the answer
// rendered.

const opToolRun = "tool-run"

// benchUpstreamKey is the secret header the tool sends and the upstream
// checks.
const benchUpstreamKey = "hd-bench-0123456789abcdefghijklmnopqrstuv"

// benchTickets is the number of ticket ids the runs spread over.
const benchTickets = 100

// benchUpstream is the tool's server: GET /api/v2/tickets/{id} answers a
// small ticket, with the API key checked.
type benchUpstream struct {
	base string // http://127.0.0.1:port
	addr netip.Addr
	stop func()
}

func benchStartUpstream(cfg *Config) (*benchUpstream, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v2/tickets/{id}", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") != benchUpstreamKey {
			http.Error(w, `{"error":"unauthorized"}`, http.StatusUnauthorized)
			return
		}
		id := r.PathValue("id")
		body := `{"id":` + id + `,"title":"Printer on floor 3 is out of toner","status":"open","priority":"normal",` +
			`"created_at":"2026-11-20T09:14:00Z","assignee":"helpdesk-1"}`
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Header().Set("X-RateLimit-Remaining", "4999")
		w.Write([]byte(body))
	})
	srv := benchHTTPServer(cfg, mux, newLogger(cfg, io.Discard))
	go srv.Serve(ln)
	return &benchUpstream{base: "http://" + ln.Addr().String(), addr: netip.MustParseAddr("127.0.0.1"),
		stop: func() { benchShutdown(srv) }}, nil
}

// egress opens the upstream's address, and nothing else, to runs.
func (u *benchUpstream) egress() toolrun.Policy {
	return toolrun.Policy{Allow: []netip.Prefix{netip.PrefixFrom(u.addr, 32)}}
}

// benchToolRuns is what the clients of tool-run send.
type benchToolRuns struct {
	tool     int64
	bodies   [][]byte // POST /tool/{id}/run bodies, one per ticket
	direct   []string // the paths of the same calls, on the upstream
	upstream string
}

// prepareToolRuns creates the tool (its server the upstream) and makes one
// run to check that it works and to keep its answer.
func (w *benchWork) prepareToolRuns(ctx context.Context, c *benchCaller, sys *benchSystem) error {
	if sys.upstream == nil {
		return fmt.Errorf("-op %s needs the in-process server, which opens the egress guard to bench's own upstream", opToolRun)
	}
	def := strings.Replace(benchToolDefinition(1), "https://helpdesk-1.example.com", sys.upstream.base, 1)
	body := benchJSON(map[string]any{"name": "bench-tool-run", "description": "The help desk bench calls",
		"definition": json.RawMessage(def), "custom_headers": []benchHeader{{"X-Api-Key", benchUpstreamKey}, {"X-Tenant", "tenant-001"}},
		"passthrough_auth": false})
	var r benchToolRecord
	if err := c.decode(ctx, "POST", "/admin/tool/custom", body, &r); err != nil {
		return err
	}
	runs := &benchToolRuns{tool: r.ID, upstream: sys.upstream.base}
	for i := 1; i <= benchTickets; i++ {
		runs.bodies = append(runs.bodies, benchJSON(map[string]any{"method": "getTicket", "args": map[string]any{"ticket_id": i}}))
		runs.direct = append(runs.direct, "/api/v2/tickets/"+strconv.Itoa(i))
	}
	w.runs = runs
	sys.tools = 1
	var err error
	if w.runResponse, err = c.call(ctx, "POST", runs.path(), runs.bodies[0]); err != nil {
		return err
	}
	if !strings.Contains(string(w.runResponse), `"status":200`) {
		return fmt.Errorf("the first run did not reach the upstream: %s", benchTruncate(w.runResponse, 512))
	}
	return nil
}

func (r *benchToolRuns) path() string { return "/tool/" + benchItoa(r.tool) + "/run" }

// stepToolRun makes one run, or, on the floor, the same call directly.
func (c *benchClient) stepToolRun(measure bool) {
	r := c.w.runs
	i := c.rng.IntN(len(r.bodies))
	if c.ph.name == "floor" {
		c.do(seriesToolRun, "GET", r.direct[i], nil, measure, "X-Api-Key", benchUpstreamKey, "X-Tenant", "tenant-001")
		return
	}
	c.do(seriesToolRun, "POST", r.path(), r.bodies[i], measure)
}
