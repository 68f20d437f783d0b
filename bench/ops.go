package bench

import (
	"context"
	"math/rand/v2"
	"slices"
	"strconv"
)

// Paths of the operations' requests.
const (
	statusPath     = "/manage/admin/connector/status"
	credentialPath = "/manage/credential/"
	toolPath       = "/admin/tool/custom/"
)

// An op is one operation of -op: the latency series it records, how its
// requests are readied, and what one step of a client sends. A new
// operation is one more entry of ops, with its functions.
type op struct {
	name string
	// mixable reports whether -op mix may draw it.
	mixable bool
	// series are the latency series it records, its own first, each with
	// the route whose answers it times.
	series []series
	// prepare readies its requests, once per run: it reads or makes what
	// they go to, and makes one of each to check that it works, keeping
	// the answer for the floor (work.answers). Nil when there is nothing
	// to ready.
	prepare func(ctx context.Context, w *work, p *preparation) error
	// step makes the requests of one operation.
	step func(c *client, measure bool)
}

// A series is a latency distribution of the report: one kind of request
// of an operation.
type series struct {
	name  string
	route route
	// part marks a request that is part of an operation but not the one
	// it is timed by: the loading line does not count it.
	part bool
	// results marks a series whose answers are searches': the load
	// counts those with results (phase.withResults).
	results bool
	// direct marks a series whose floor is not the server's answers from
	// memory but the same call made directly to the upstream the server
	// calls (tool-run): the report calls the floor "direct" and subtracts
	// it, the overhead.
	direct bool
}

// A route is a kind of request: its method and the path its URLs start
// with. The floor answers each with the server's answer to one of them.
type route struct{ method, path string }

var (
	statusRoute     = route{"GET", statusPath}
	credentialRoute = route{"PATCH", credentialPath}
	toolRoute       = route{"PUT", toolPath}
)

var (
	statusSeries    = series{name: "status", route: statusRoute}
	coldSeries      = series{name: "status-cold", route: statusRoute}
	coldWriteSeries = series{name: "status-cold:write", route: credentialRoute, part: true}
	patchSeries     = series{name: "patch-credential", route: credentialRoute}
	putSeries       = series{name: "put-tool", route: toolRoute}
)

// ops are the operations, in the order -h lists them; mix comes last.
var ops = []*op{
	{
		// The listing, warm: no write since the last.
		name: "status", mixable: true,
		series: []series{statusSeries},
		step: func(c *client, measure bool) {
			c.do(statusSeries, statusPath, nil, measure)
		},
	},
	{
		// The listing after a write. The write and the GET are one step
		// for all clients: the GET reads the listing at a data version no
		// other GET has seen, so it is never served from the cache. Only
		// the GET is the operation's latency.
		name:    "status-cold",
		series:  []series{coldSeries, coldWriteSeries},
		prepare: prepareCredentials,
		step: func(c *client, measure bool) {
			k := c.w.creds[c.rng.IntN(len(c.w.creds))]
			c.w.coldMu.Lock()
			defer c.w.coldMu.Unlock()
			if c.do(coldWriteSeries, credentialPath+itoa(k.id), k.noop, measure) {
				c.do(coldSeries, statusPath, nil, measure)
			}
		},
	},
	{
		// A credential written back as read, masked, its name changed.
		name: "patch-credential", mixable: true,
		series:  []series{patchSeries},
		prepare: prepareCredentials,
		step: func(c *client, measure bool) {
			k := c.w.creds[c.rng.IntN(len(c.w.creds))]
			i := k.flips.Add(1) % 2
			if i == 1 {
				k.touched.Store(true)
			}
			c.do(patchSeries, credentialPath+itoa(k.id), k.bodies[i], measure)
		},
	},
	{
		// A custom tool written back as read.
		name: "put-tool", mixable: true,
		series:  []series{putSeries},
		prepare: prepareTools,
		step: func(c *client, measure bool) {
			t := c.w.tools[c.rng.IntN(len(c.w.tools))]
			c.do(putSeries, toolPath+itoa(t.id), t.body, measure)
		},
	},
	{
		// A run of a custom tool against bench's own upstream (toolrun.go);
		// in process only.
		name:    ToolRun,
		series:  []series{runSeries},
		prepare: prepareToolRuns,
		step:    stepToolRun,
	},
	{
		// tools/call through Quarry's MCP endpoint beside POST
		// /tool/{tool_id}/run, to bench's upstream (mcp.go); in process only.
		name:    MCPCall,
		series:  []series{mcpCallSeries, mcpRunSeries},
		prepare: prepareMCPCalls,
		step:    stepMCPCall,
	},
	{
		// tools/list through Quarry's MCP endpoint beside GET /tool, at
		// -tools tools (mcp.go); in process only.
		name:    MCPList,
		series:  []series{mcpListSeries, mcpGetToolSeries},
		prepare: prepareMCPLists,
		step:    stepMCPList,
	},
	{
		// POST /search/send-search-message as a person in 3 of 50 groups,
		// over a corpus loaded first (search.go); in process only.
		name:    Search,
		series:  []series{searchSeries},
		prepare: prepareSearch,
		step:    stepSearch,
	},
	{
		// POST /chat/send-chat-message, streamed, as the person of
		// search's corpus, the model a scripted server on loopback
		// (chat.go); in process only.
		name:    Chat,
		series:  []series{chatSeries, chatSessionSeries},
		prepare: prepareChat,
		step:    stepChat,
	},
}

// opNamed returns the operation called name, or nil.
func opNamed(name string) *op {
	i := slices.IndexFunc(ops, func(o *op) bool { return o.name == name })
	if i < 0 {
		return nil
	}
	return ops[i]
}

// OpNames returns the values of -op: every operation, then indexing
// (measured on the store: indexing.go) and ingest (ingest.go), then mix.
func OpNames() []string {
	var out []string
	for _, o := range ops {
		out = append(out, o.name)
	}
	return append(out, Indexing, Ingest, Mix)
}

// mixableNames returns the operations -mix may weigh.
func mixableNames() []string {
	var out []string
	for _, o := range ops {
		if o.mixable {
			out = append(out, o.name)
		}
	}
	return out
}

// weight is an operation and its weight in the mix.
type weight struct {
	op     *op
	weight int
}

// pick draws an operation by weight.
func (w *work) pick(rng *rand.Rand) *op {
	if len(w.mix) == 1 {
		return w.mix[0].op
	}
	n := rng.IntN(w.total)
	for _, x := range w.mix {
		if n < x.weight {
			return x.op
		}
		n -= x.weight
	}
	return w.mix[len(w.mix)-1].op
}

// seriesUsed returns the series the mix records, in its order.
func (w *work) seriesUsed() []series {
	var out []series
	for _, x := range w.mix {
		out = append(out, x.op.series...)
	}
	return out
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
