// Package bench is quarry bench, a load tool: it seeds a fresh database
// with a synthetic deployment (Seed) and serves it in process, or targets
// a running server; drives a fixed number of clients for a fixed time with
// one operation or a mix; then serves the same answers from memory with
// the same HTTP stack under the same load (the floor), and reports both.
// docs/benchmarks.md describes the method; cmd/quarry's bench subcommand
// reads the flags into Options and prints the Report.
//
// The files hold the parts: the operations (ops.go), the readying of their
// requests (work.go), the load and the floor (load.go), the report
// (report.go), the progress shown meanwhile (screen.go), the dataset
// (seed.go), and the operations with set-ups of their own: tool-run
// (toolrun.go), mcp-call and mcp-list (mcp.go), indexing (indexing.go),
// ingest (ingest.go), search, with its corpus (search.go) and its Lucene
// peer (peer.go), and chat, with its scripted model (chat.go). It is kept
// apart from the packages that serve: nothing of quarry serve imports it.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/quarryhq/quarry/api"
	"github.com/quarryhq/quarry/internal/progress"
	"github.com/quarryhq/quarry/store"
)

// Bounds of a run.
const (
	MaxDuration = 10 * time.Minute
	MaxClients  = 1024
	MaxPairs    = 1_000_000
	MaxTools    = 10_000
)

// Mix is the -op that draws the operations of -mix by weight.
const Mix = "mix"

// DefaultMix is the weights of -op mix.
const DefaultMix = "status=70,patch-credential=20,put-tool=10"

// Options configure a run. Each field but Server, Version and Progress is
// the flag of quarry bench of the same name (docs/benchmarks.md), and the
// errors of Run name them so.
type Options struct {
	Pairs       int    // cc-pairs to seed (DefaultSeedSpec)
	DB          string // the fresh database to seed; "" for a temporary SQLite file
	Tools       int    // custom tools to create for put-tool
	Target      string // URL of a running server to load instead
	Token       string // an admin API key of Target
	AllowRemote bool   // allow a Target that is not loopback
	Clients     int
	Duration    time.Duration // of each phase
	Op          string        // one of OpNames
	Mix         string        // the weights of Op mix
	SearchDocs  int           // documents of -op search's corpus
	// DocumentSet narrows -op search's searches to the corpus's document
	// set, which holds every pair (filters.document_set).
	DocumentSet bool
	// Peer is the URL of a Lucene peer (scripts/speed/LuceneSearch.java)
	// that -op search loads with the same corpus and times beside Quarry,
	// in alternated rounds (peer.go); "" for none.
	Peer string

	// Server is how the in-process server, and the floor, are set up.
	Server Server
	// Version is the version of Quarry the report names.
	Version string
	// Progress receives the progress lines, if not nil.
	Progress io.Writer
	// CPUProfile, if not nil, receives a CPU profile (runtime/pprof) of
	// the whole process while the server is loaded (not while seeding,
	// nor during the floor; with Peer, during the peer's rounds too).
	CPUProfile io.Writer

	// stopLoadAfter, if positive, stops -op search's (and chat's) load of
	// the corpus after that many batches, with an error, as a run killed
	// then would leave it: for the tests of resuming.
	stopLoadAfter int
}

// Server is how the in-process server and the floor are set up: with the
// settings quarry serve gives its own.
type Server struct {
	API api.Config   // The API's configuration.
	Log *slog.Logger // The request log.
	// HTTP returns the http.Server that serves h, with its errors logged
	// to log.
	HTTP func(h http.Handler, log *slog.Logger) *http.Server
	// Keys returns the keyring that seals the fresh database's secrets.
	Keys func() (*store.Keyring, error)
	// SearchCache is the in-process server's store.Options.SearchCache.
	SearchCache int64
}

// Run runs a bench. It returns the report, and an error when a request
// failed (the report counts them) or, on a target, when the names of the
// credentials it renamed could not be given back; with a nil report when
// the run did not get that far.
func Run(ctx context.Context, o Options) (*Report, error) {
	mix, err := o.check()
	if err != nil {
		return nil, err
	}
	if o.Op == Indexing {
		return runOnStore(ctx, o, measureIndexing)
	}
	if o.Op == Ingest {
		return runOnStore(ctx, o, measureIngest)
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	sc := newScreen(o.Progress)
	defer sc.end()

	var sys *system
	if o.Target == "" {
		sys, err = startServer(ctx, &o, sc)
	} else {
		sys, err = connectTarget(ctx, &o)
	}
	if sys != nil {
		defer sys.close()
	}
	if err != nil {
		return nil, err
	}

	w, err := prepare(ctx, sys, &o, mix, sc)
	if err != nil {
		return nil, err
	}
	rep := newReport(&o, mix, sys)
	switch {
	case o.Op == Chat:
		rep.startChatReport(sys)
	case sys.search != nil:
		if err := rep.startSearchReport(ctx, sys); err != nil {
			return nil, err
		}
	}

	var peer *lucenePeer
	if o.Peer != "" {
		if peer, err = setUpPeer(ctx, &o, sc); err != nil {
			return nil, err
		}
		sc.line(fmt.Sprintf("warming up Quarry and the peer: each query once, then to %s", min(peerWarmup, o.Duration)))
		if err := peer.warmUp(ctx, w, sys.base, o.Duration); err != nil {
			return nil, err
		}
	}

	if sys.inProcess {
		// Peak RSS of the load alone: return what seeding and preparing
		// left behind, then reset the high-water mark.
		runtime.GC()
		debug.FreeOSMemory()
		rep.setupPeakRSS()
	}
	if o.CPUProfile != nil {
		if err := pprof.StartCPUProfile(o.CPUProfile); err != nil {
			return nil, fmt.Errorf("bench: the CPU profile: %w", err)
		}
	}
	var server, lucene *phase
	if peer == nil {
		server, err = w.load(ctx, "server", sys.base, &o, sc)
	} else {
		server, lucene, err = peer.rounds(ctx, w, sys.base, &o, sc)
	}
	if o.CPUProfile != nil {
		pprof.StopCPUProfile()
	}
	if err != nil {
		return nil, err
	}
	rep.loadPeakRSS(sys.inProcess)
	if rep.Search != nil {
		rep.Search.Memory.HeapAfterSearchesBytes = heapInUse()
		if sys.db != nil {
			c := sys.db.SearchCacheStats()
			rep.Search.Memory.BlockCache = &c
		}
	}

	floorBase, stopFloor, err := startFloor(o.Server, w.answers)
	if err != nil {
		return nil, err
	}
	if w.runs != nil { // tool-run's floor: the same calls, made directly to the upstream.
		stopFloor()
		floorBase, stopFloor = w.runs.upstream, func() {}
	}
	floor, err := w.load(ctx, "floor", floorBase, &o, sc)
	stopFloor()
	if err != nil {
		return nil, err
	}
	var restoreErr error
	if !sys.inProcess {
		restoreErr = w.restoreNames(ctx, sys.base)
	}
	sc.end()

	rep.addResults(w, server, floor)
	if rep.Search != nil {
		rep.endSearchReport(server)
	}
	n := server.errs.total.Load() + floor.errs.total.Load()
	if peer != nil {
		peer.endReport(rep, lucene)
		n += lucene.errs.total.Load()
	}
	if rep.Chat != nil {
		rep.endChatReport(w.chat)
	}
	if n > 0 {
		return rep, fmt.Errorf("bench: %d requests failed (counted by status in the report)", n)
	}
	if restoreErr != nil {
		return rep, fmt.Errorf("bench: restoring the credential names of the target: %w", restoreErr)
	}
	return rep, nil
}

// runOnStore runs an operation measured on the store rather than by the
// load of clients (indexing, ingest): it starts the in-process server,
// lets measure fill the report, and ends it.
func runOnStore(ctx context.Context, o Options, measure func(ctx context.Context, sys *system, sc *screen, rep *Report) error) (*Report, error) {
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	sc := newScreen(o.Progress)
	defer sc.end()
	start := time.Now()
	sys, err := startServer(ctx, &o, sc)
	if sys != nil {
		defer sys.close()
	}
	if err != nil {
		return nil, err
	}
	rep := newReport(&o, nil, sys)
	rep.Results = []Result{}
	rep.Errors, rep.FloorErrors = ErrorCounts{ByStatus: map[string]int64{}, Samples: []ErrorSample{}},
		ErrorCounts{ByStatus: map[string]int64{}, Samples: []ErrorSample{}}
	if err := measure(ctx, sys, sc, rep); err != nil {
		return nil, err
	}
	sc.end()
	rep.DurationSeconds = round(time.Since(start).Seconds())
	rep.loadPeakRSS(true)
	rep.Server.PeakRSSNote = "since the start: VmHWM of the bench process, seeding included"
	return rep, nil
}

// check validates the options and returns the operations' weights.
func (o *Options) check() ([]weight, error) {
	switch {
	case !slices.Contains(OpNames(), o.Op):
		return nil, fmt.Errorf("-op: %q is not one of %s", o.Op, strings.Join(OpNames(), ", "))
	case o.Clients < 1 || o.Clients > MaxClients:
		return nil, fmt.Errorf("-clients: %d is not between 1 and %d", o.Clients, MaxClients)
	case o.Duration <= 0 || o.Duration > MaxDuration:
		return nil, fmt.Errorf("-duration: %s is not between 0 and %s", o.Duration, MaxDuration)
	case o.Pairs < 1 || o.Pairs > MaxPairs:
		return nil, fmt.Errorf("-pairs: %d is not between 1 and %d", o.Pairs, MaxPairs)
	case o.Tools < 1 || o.Tools > MaxTools:
		return nil, fmt.Errorf("-tools: %d is not between 1 and %d", o.Tools, MaxTools)
	}
	if o.DocumentSet && o.Op != Search && o.Op != Chat {
		return nil, errors.New("-document-set goes with -op search or -op chat")
	}
	if o.Peer != "" {
		u, err := url.Parse(o.Peer)
		switch {
		case o.Op != Search:
			return nil, errors.New("-peer goes with -op search")
		case o.DocumentSet:
			return nil, errors.New("-peer does not go with -document-set: the peer knows no document sets")
		case err != nil || u.Scheme != "http" || u.Host == "":
			return nil, fmt.Errorf("-peer: %q is not an http:// URL", o.Peer)
		case !isLoopback(u.Hostname()):
			return nil, fmt.Errorf("-peer: %s is not a loopback address; the peer runs on this machine", u.Hostname())
		}
	}
	if (o.Op == Search || o.Op == Chat) && (o.SearchDocs < 1 || o.SearchDocs > MaxSearchDocs) {
		return nil, fmt.Errorf("-search-docs: %d is not between 1 and %d", o.SearchDocs, MaxSearchDocs)
	}
	if o.Target != "" && (o.Op == ToolRun || o.Op == MCPCall || o.Op == MCPList || o.Op == Indexing || o.Op == Ingest || o.Op == Search || o.Op == Chat) {
		return nil, fmt.Errorf("-op %s needs the in-process server (its own upstream, tools or corpus); it does not go with -target", o.Op)
	}
	if o.Target != "" {
		u, err := url.Parse(o.Target)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("-target: %q is not an http:// or https:// URL", o.Target)
		}
		if !o.AllowRemote && !isLoopback(u.Hostname()) {
			return nil, fmt.Errorf("-target: %s is not a loopback address; bench loads only this machine unless -allow-remote is given", u.Hostname())
		}
		if o.Token == "" {
			return nil, errors.New("-target needs -token (or QUARRY_BENCH_TOKEN): an admin API key of the target")
		}
	}
	if o.Op == Indexing || o.Op == Ingest {
		return nil, nil // Measured on the store, not by the load (indexing.go, ingest.go).
	}
	if o.Op != Mix {
		return []weight{{opNamed(o.Op), 1}}, nil
	}
	return parseMix(o.Mix)
}

// parseMix parses "op=weight,…".
func parseMix(s string) ([]weight, error) {
	var out []weight
	total := 0
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		name, w, ok := strings.Cut(part, "=")
		name = strings.TrimSpace(name)
		n, err := strconv.Atoi(strings.TrimSpace(w))
		if !ok || err != nil || n < 0 || n > 1_000_000 {
			return nil, fmt.Errorf("-mix: %q is not op=weight", part)
		}
		if !slices.Contains(mixableNames(), name) {
			return nil, fmt.Errorf("-mix: %q is not one of %s", name, strings.Join(mixableNames(), ", "))
		}
		if slices.ContainsFunc(out, func(x weight) bool { return x.op.name == name }) {
			return nil, fmt.Errorf("-mix: %s is given twice", name)
		}
		if n > 0 {
			out = append(out, weight{opNamed(name), n})
			total += n
		}
	}
	if total == 0 {
		return nil, errors.New("-mix: no operation has a weight")
	}
	return out, nil
}

// isLoopback reports whether host names this machine's loopback.
func isLoopback(host string) bool {
	if strings.EqualFold(strings.TrimSuffix(host, "."), "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// system is the server under test: in process, or a running one.
type system struct {
	inProcess bool
	base      string // URL of the API, without a trailing slash
	token     string // an admin key
	database  string // what the report says of the database
	spec      SeedSpec
	seedTime  time.Duration
	loadTime  time.Duration // Of the server's first, whole read of the status listing.
	tools     int           // Custom tools that put-tool updates.
	upstream  *upstream     // tool-run's upstream (toolrun.go); nil for the other operations.
	db        *store.DB     // The seeded database, in process only (-op indexing measures it).
	search    *searchCorpus // -op search's and chat's corpus (search.go); nil for the other operations.
	model     *chatModel    // -op chat's scripted model (chat.go); nil for the other operations.
	close     func()
}

// startServer seeds a fresh database and serves it on loopback with the
// settings serve uses.
func startServer(ctx context.Context, o *Options, sc *screen) (*system, error) {
	sys := &system{inProcess: true}
	var cleanups []func()
	sys.close = func() {
		for _, f := range slices.Backward(cleanups) {
			f()
		}
	}
	dbURL := o.DB
	if dbURL == "" {
		dir, err := os.MkdirTemp("", "quarry-bench-")
		if err != nil {
			return sys, err
		}
		cleanups = append(cleanups, func() { os.RemoveAll(dir) })
		dbURL = "sqlite:" + filepath.Join(dir, "bench.db")
		sys.database = "sqlite (temporary file, removed afterwards)"
	}
	dialect, source, err := store.ParseURL(dbURL)
	if err != nil {
		return sys, fmt.Errorf("-db: %w", err)
	}
	// -op search and -op chat may also reuse the database an earlier run
	// loaded (search.go); every other operation seeds a fresh one.
	exists := false
	if o.DB != "" {
		sys.database = dialect + " (" + redactURL(dbURL) + ", kept)"
		if dialect == store.SQLite {
			if _, err := os.Stat(source); !errors.Is(err, os.ErrNotExist) {
				exists = true
				if o.Op != Search && o.Op != Chat {
					return sys, fmt.Errorf("-db: %s exists; bench seeds a fresh database only (give a new path)", source)
				}
			}
		}
	}
	keys, err := o.Server.Keys()
	if err != nil {
		return sys, err
	}
	db, err := store.Open(ctx, dbURL, keys, store.Options{SearchCache: o.Server.SearchCache})
	if err != nil {
		return sys, err
	}
	cleanups = append(cleanups, func() { db.Close() })
	current, _, err := db.SchemaVersion(ctx)
	if err != nil {
		return sys, err
	}
	reuse := current > 0 && (o.Op == Search || o.Op == Chat) && holdsSearchCorpus(ctx, db)
	switch {
	case current > 0 && !reuse:
		return sys, fmt.Errorf("-db: %s already holds a Quarry schema (version %d); bench seeds an empty database only (create a new one; -op search and -op chat also take one they loaded)", redactURL(dbURL), current)
	case current == 0 && exists:
		return sys, fmt.Errorf("-db: %s exists and holds no Quarry schema; bench seeds a fresh database only (give a new path)", source)
	}
	if err := db.Migrate(ctx); err != nil {
		return sys, err
	}
	sys.db = db

	start := time.Now()
	if o.Op == Search || o.Op == Chat {
		sys.spec = SeedSpec{Pairs: searchGroups + searchPublic, Connectors: searchGroups + searchPublic, Credentials: searchGroups + searchPublic, Groups: searchGroups}
		if sys.search, sys.token, err = setUpSearch(ctx, db, o, reuse, sc); err != nil {
			return sys, err
		}
		sys.seedTime = time.Since(start)
	} else {
		sys.spec = DefaultSeedSpec(o.Pairs)
		sc.line(fmt.Sprintf("seeding %d pairs into %s", o.Pairs, dialect))
		seeded, err := Seed(ctx, db, sys.spec, func(c progress.Count) { sc.count("seeding", c) })
		if err != nil {
			return sys, fmt.Errorf("seeding: %w", err)
		}
		sys.seedTime = time.Since(start)
		sc.line(fmt.Sprintf("seeded in %s", sys.seedTime.Round(time.Millisecond)))
		sys.token = seeded.AdminToken
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return sys, err
	}
	ac := o.Server.API
	if o.Op == ToolRun || o.Op == MCPCall {
		if sys.upstream, err = startUpstream(o.Server); err != nil {
			return sys, err
		}
		cleanups = append(cleanups, sys.upstream.stop)
		ac.ToolEgress = sys.upstream.egress()
	}
	if o.Op == Chat {
		if sys.model, err = startChatModel(o.Server); err != nil {
			return sys, err
		}
		cleanups = append(cleanups, sys.model.stop)
		ac.ToolEgress = sys.model.egress()
	}
	handler := api.NewServer(ac, db, o.Server.Log)
	// As serve does at start: the listing is read whole once, timed apart.
	sc.line("reading the status listing")
	start = time.Now()
	if err := handler.LoadStatus(ctx); err != nil {
		return sys, fmt.Errorf("reading the status listing: %w", err)
	}
	sys.loadTime = time.Since(start)
	sc.line(fmt.Sprintf("status listing read in %s", sys.loadTime.Round(time.Millisecond)))
	srv := o.Server.HTTP(handler, o.Server.Log)
	go srv.Serve(ln)
	cleanups = append(cleanups, func() { shutdown(srv) })
	sys.base = "http://" + ln.Addr().String()
	return sys, nil
}

// connectTarget checks that the target answers and that the token is an
// admin's.
func connectTarget(ctx context.Context, o *Options) (*system, error) {
	sys := &system{base: strings.TrimRight(o.Target, "/"), token: o.Token, close: func() {}}
	u, _ := url.Parse(o.Target)
	u.User = nil
	sys.database = "unknown (running server at " + u.Redacted() + ")"
	c := &caller{client: setupClient(), base: sys.base, token: sys.token}
	var me struct {
		Role string `json:"role"`
	}
	if err := c.getJSON(ctx, "/me", &me); err != nil {
		return sys, fmt.Errorf("-target: %w", err)
	}
	if me.Role != "admin" {
		return sys, fmt.Errorf("-token: the key's role is %q; bench needs an admin key", me.Role)
	}
	return sys, nil
}

// redactURL hides the password of a database URL.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Scheme == "sqlite" || u.Scheme == "file" {
		return s
	}
	return u.Redacted()
}
