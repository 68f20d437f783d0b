package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"

	"github.com/quarryhq/quarry/toolrun"
)

// -op tool-run: runs of a custom tool (POST /tool/{tool_id}/run) against
// an upstream that bench serves on loopback, and, as the floor, direct
// calls of the same operation to the same upstream with the same headers.
// The difference is what a run adds to a call: authentication, the tool
// and its secrets read, the arguments checked and bound, the egress
// guard, the audit entry, and the answer rendered.

// ToolRun is the -op of runs of a custom tool.
const ToolRun = "tool-run"

// upstreamKey is the secret header the tool sends and the upstream checks.
const upstreamKey = "hd-bench-0123456789abcdefghijklmnopqrstuv"

// tickets is the number of ticket ids the runs spread over.
const tickets = 100

var (
	runRoute     = route{"POST", "/tool/"}
	runSeries    = series{name: ToolRun, route: runRoute, direct: true}
	ticketsRoute = route{"GET", "/api/v2/tickets/"}
)

// upstream is the tool's server: GET /api/v2/tickets/{id} answers a small
// ticket, with the API key checked.
type upstream struct {
	base string // http://127.0.0.1:port
	addr netip.Addr
	stop func()
}

func startUpstream(s Server) (*upstream, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v2/tickets/{id}", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") != upstreamKey {
			http.Error(w, `{"error":"unauthorized"}`, http.StatusUnauthorized)
			return
		}
		body := `{"id":` + r.PathValue("id") + `,"title":"Printer on floor 3 is out of toner","status":"open","priority":"normal",` +
			`"created_at":"2026-11-20T09:14:00Z","assignee":"helpdesk-1"}`
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Header().Set("X-RateLimit-Remaining", "4999")
		io.WriteString(w, body)
	})
	srv := s.HTTP(mux, slog.New(slog.DiscardHandler))
	go srv.Serve(ln)
	return &upstream{base: "http://" + ln.Addr().String(), addr: netip.MustParseAddr("127.0.0.1"),
		stop: func() { shutdown(srv) }}, nil
}

// egress opens the upstream's address, and nothing else, to runs.
func (u *upstream) egress() toolrun.Policy {
	return toolrun.Policy{Allow: []netip.Prefix{netip.PrefixFrom(u.addr, 32)}}
}

// toolRuns is what the clients of tool-run send.
type toolRuns struct {
	tool     int64
	bodies   [][]byte // POST /tool/{id}/run bodies, one per ticket
	direct   []string // the paths of the same calls, on the upstream
	upstream string
}

// prepareToolRuns creates the tool (its server the upstream) and makes one
// run, to check that it works and to keep its answer.
func prepareToolRuns(ctx context.Context, w *work, p *preparation) error {
	u := p.sys.upstream
	if u == nil {
		return fmt.Errorf("-op %s needs the in-process server, which opens the egress guard to bench's own upstream", ToolRun)
	}
	def := strings.Replace(ToolDefinition(1), "https://helpdesk-1.example.com", u.base, 1)
	body := mustJSON(map[string]any{"name": "bench-tool-run", "description": "The help desk bench calls",
		"definition": json.RawMessage(def), "custom_headers": []header{{"X-Api-Key", upstreamKey}, {"X-Tenant", "tenant-001"}},
		"passthrough_auth": false})
	var r toolRecord
	if err := p.caller.decode(ctx, "POST", "/admin/tool/custom", body, &r); err != nil {
		return err
	}
	runs := &toolRuns{tool: r.ID, upstream: u.base}
	for i := 1; i <= tickets; i++ {
		runs.bodies = append(runs.bodies, mustJSON(map[string]any{"method": "getTicket", "args": map[string]any{"ticket_id": i}}))
		runs.direct = append(runs.direct, ticketsRoute.path+strconv.Itoa(i))
	}
	w.runs = runs
	p.sys.tools = 1
	answer, err := p.caller.call(ctx, "POST", runs.path(), runs.bodies[0])
	if err != nil {
		return err
	}
	if !strings.Contains(string(answer), `"status":200`) {
		return fmt.Errorf("the first run did not reach the upstream: %s", truncate(answer, 512))
	}
	w.answers[runRoute] = answer
	return nil
}

func (r *toolRuns) path() string { return runRoute.path + itoa(r.tool) + "/run" }

// stepToolRun makes one run, or, on the floor, the same call directly.
func stepToolRun(c *client, measure bool) {
	r := c.w.runs
	i := c.rng.IntN(len(r.bodies))
	if c.ph.name == "floor" {
		s := runSeries
		s.route = ticketsRoute
		c.do(s, r.direct[i], nil, measure, "X-Api-Key", upstreamKey, "X-Tenant", "tenant-001")
		return
	}
	c.do(runSeries, r.path(), r.bodies[i], measure)
}
