package main

// quarry bench: a load tool. It seeds a fresh database and serves it in
// process (or targets a running server), drives a fixed number of clients
// for a fixed time with one operation or a mix, then serves the same
// response bytes from memory with the same HTTP stack under the same load
// (the floor), and reports both. The files bench_*.go hold the parts: the
// load (bench_load.go), the preparation of each operation's requests
// (bench_work.go) and the report (bench_report.go). docs/benchmarks.md
// describes the method.

import (
	"context"
	"errors"
	"flag"
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
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/quarryhq/quarry/api"
	"github.com/quarryhq/quarry/store"
)

// Bounds of a bench run.
const (
	benchMaxDuration = 10 * time.Minute
	benchMaxClients  = 1024
	benchMaxPairs    = 1_000_000
	benchMaxTools    = 10_000
)

// Operations.
const (
	opStatus          = "status"
	opStatusCold      = "status-cold"
	opPatchCredential = "patch-credential"
	opPutTool         = "put-tool"
	opMix             = "mix"
)

var benchOps = []string{opStatus, opStatusCold, opPatchCredential, opPutTool, opToolRun, opMix}

// benchDefaultMix is the weighted mix of -op mix.
const benchDefaultMix = "status=70,patch-credential=20,put-tool=10"

// benchOptions are the flags of quarry bench.
type benchOptions struct {
	pairs       int
	db          string
	tools       int
	target      string
	token       string
	allowRemote bool
	clients     int
	duration    time.Duration
	op          string
	mix         string
	json        bool
}

const benchDBUsage = "fresh database to seed: a SQLite path that does not exist yet, or a postgres:// URL of a database Quarry has never used (default: a new SQLite file in a temporary directory, removed afterwards; QUARRY_DATABASE_URL is not read)"

// benchServerSettings are the settings of serve that bench takes too: the
// in-process server and the floor are built with them.
var benchServerSettings = []string{"mask-credentials", "max-body-bytes", "db-timeout",
	"read-header-timeout", "read-timeout", "write-timeout", "idle-timeout", "log-level", "log-format"}

func runBench(ctx context.Context, env *environment, args []string) error {
	var o benchOptions
	cfg, fs, err := loadConfig("bench", args, env, func(fs *flag.FlagSet) {
		fs.IntVar(&o.pairs, "pairs", 10_000, fmt.Sprintf("cc-pairs to seed (store.DefaultSeedSpec), 1 to %d", benchMaxPairs))
		// -db is serve's flag (loadConfig defines it); bench takes its value
		// only when given, never QUARRY_DATABASE_URL, and says so in -h.
		fs.Usage = func() {
			if f := fs.Lookup("db"); f != nil {
				f.Usage = benchDBUsage
			}
			fmt.Fprintln(fs.Output(), "Usage: quarry bench [flags]\n\nLoad a seeded in-process server (or a running one, -target) and the HTTP floor; see docs/benchmarks.md.\n\nFlags:")
			fs.PrintDefaults()
		}
		fs.IntVar(&o.tools, "tools", 100, fmt.Sprintf("custom tools to create through the API for put-tool, 1 to %d", benchMaxTools))
		fs.StringVar(&o.target, "target", "", "URL of a running server to load instead (no seeding; the operations use ids found through the API)")
		fs.StringVar(&o.token, "token", "", "admin API key for -target (env QUARRY_BENCH_TOKEN)")
		fs.BoolVar(&o.allowRemote, "allow-remote", false, "allow a -target whose host is not loopback")
		fs.IntVar(&o.clients, "clients", 8, fmt.Sprintf("concurrent clients, 1 to %d", benchMaxClients))
		fs.DurationVar(&o.duration, "duration", 10*time.Second, fmt.Sprintf("how long to load the server, and then the floor (at most %s)", benchMaxDuration))
		fs.StringVar(&o.op, "op", opStatus, strings.Join(benchOps, ", "))
		fs.StringVar(&o.mix, "mix", benchDefaultMix, "weights of -op mix: op=weight,… over status, patch-credential, put-tool")
		fs.BoolVar(&o.json, "json", false, "print one JSON object instead of the text report")
	}, append([]string{"db"}, benchServerSettings...)...)
	if err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("bench: unexpected arguments %q", fs.Args())
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if given["db"] {
		if o.db = fs.Lookup("db").Value.String(); o.db == "" {
			return errors.New("-db: empty")
		}
	}
	if o.token == "" {
		o.token = env.getenv("QUARRY_BENCH_TOKEN")
	}
	mix, err := o.check(given)
	if err != nil {
		return err
	}

	progressOut := env.stdout
	if o.json {
		progressOut = env.stderr // stdout holds the JSON object only.
	}
	prog := benchNewProgress(progressOut)
	defer prog.end()

	var sys *benchSystem
	if o.target == "" {
		sys, err = benchStartServer(ctx, cfg, &o, prog)
	} else {
		sys, err = benchConnectTarget(ctx, &o)
	}
	if sys != nil {
		defer sys.close()
	}
	if err != nil {
		return err
	}

	w, err := benchPrepare(ctx, sys, &o, mix, prog)
	if err != nil {
		return err
	}
	rep := benchNewReport(&o, mix, sys)

	if sys.inProcess {
		// Peak RSS of the load alone: return what seeding and preparing
		// left behind, then reset the high-water mark.
		runtime.GC()
		debug.FreeOSMemory()
		rep.setupPeakRSS()
	}
	server, err := w.load(ctx, "server", sys.base, &o, prog)
	if err != nil {
		return err
	}
	rep.loadPeakRSS(sys.inProcess)

	floorBase, stopFloor, err := benchStartFloor(cfg, w.floorBodies())
	if err != nil {
		return err
	}
	if w.runs != nil { // tool-run's floor: the same calls, made directly to the upstream.
		stopFloor()
		floorBase, stopFloor = w.runs.upstream, func() {}
	}
	floor, err := w.load(ctx, "floor", floorBase, &o, prog)
	stopFloor()
	if err != nil {
		return err
	}
	var restoreErr error
	if !sys.inProcess {
		restoreErr = w.restoreNames(ctx, sys.base)
	}
	prog.end()

	rep.addResults(w, server, floor)
	if o.json {
		if err := rep.writeJSON(env.stdout); err != nil {
			return err
		}
	} else {
		rep.writeText(env.stdout)
	}
	if n := server.errs.total.Load() + floor.errs.total.Load(); n > 0 {
		return fmt.Errorf("bench: %d requests failed (counted by status in the report)", n)
	}
	if restoreErr != nil {
		return fmt.Errorf("bench: restoring the credential names of the target: %w", restoreErr)
	}
	return nil
}

// check validates the options and returns the operations' weights.
func (o *benchOptions) check(given map[string]bool) ([]benchWeight, error) {
	switch {
	case !slices.Contains(benchOps, o.op):
		return nil, fmt.Errorf("-op: %q is not one of %s", o.op, strings.Join(benchOps, ", "))
	case o.clients < 1 || o.clients > benchMaxClients:
		return nil, fmt.Errorf("-clients: %d is not between 1 and %d", o.clients, benchMaxClients)
	case o.duration <= 0 || o.duration > benchMaxDuration:
		return nil, fmt.Errorf("-duration: %s is not between 0 and %s", o.duration, benchMaxDuration)
	case o.pairs < 1 || o.pairs > benchMaxPairs:
		return nil, fmt.Errorf("-pairs: %d is not between 1 and %d", o.pairs, benchMaxPairs)
	case o.tools < 1 || o.tools > benchMaxTools:
		return nil, fmt.Errorf("-tools: %d is not between 1 and %d", o.tools, benchMaxTools)
	case given["mix"] && o.op != opMix:
		return nil, errors.New("-mix goes with -op mix")
	}
	if o.target != "" && o.op == opToolRun {
		return nil, fmt.Errorf("-op %s needs the in-process server, which opens the egress guard to bench's own upstream; it does not go with -target", opToolRun)
	}
	if o.target != "" {
		for _, f := range []string{"pairs", "db", "tools"} {
			if given[f] {
				return nil, fmt.Errorf("-%s seeds the in-process server; it does not go with -target", f)
			}
		}
		u, err := url.Parse(o.target)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("-target: %q is not an http:// or https:// URL", o.target)
		}
		if !o.allowRemote && !benchIsLoopback(u.Hostname()) {
			return nil, fmt.Errorf("-target: %s is not a loopback address; bench loads only this machine unless -allow-remote is given", u.Hostname())
		}
		if o.token == "" {
			return nil, errors.New("-target needs -token (or QUARRY_BENCH_TOKEN): an admin API key of the target")
		}
	} else if given["token"] || given["allow-remote"] {
		return nil, errors.New("-token and -allow-remote go with -target")
	}
	if o.op != opMix {
		return []benchWeight{{o.op, 1}}, nil
	}
	return benchParseMix(o.mix)
}

// benchParseMix parses "op=weight,…".
func benchParseMix(s string) ([]benchWeight, error) {
	var out []benchWeight
	total := 0
	for _, part := range splitList(s) {
		op, w, ok := strings.Cut(part, "=")
		op = strings.TrimSpace(op)
		n, err := strconv.Atoi(strings.TrimSpace(w))
		if !ok || err != nil || n < 0 || n > 1_000_000 {
			return nil, fmt.Errorf("-mix: %q is not op=weight", part)
		}
		if !slices.Contains([]string{opStatus, opPatchCredential, opPutTool}, op) {
			return nil, fmt.Errorf("-mix: %q is not one of status, patch-credential, put-tool", op)
		}
		if slices.ContainsFunc(out, func(x benchWeight) bool { return x.op == op }) {
			return nil, fmt.Errorf("-mix: %s is given twice", op)
		}
		if n > 0 {
			out = append(out, benchWeight{op, n})
			total += n
		}
	}
	if total == 0 {
		return nil, errors.New("-mix: no operation has a weight")
	}
	return out, nil
}

// benchIsLoopback reports whether host names this machine's loopback.
func benchIsLoopback(host string) bool {
	if strings.EqualFold(strings.TrimSuffix(host, "."), "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// benchSystem is the server under test: in process, or a running one.
type benchSystem struct {
	inProcess bool
	base      string // URL of the API, without a trailing slash
	token     string // an admin key
	database  string // what the report says of the database
	spec      store.SeedSpec
	seedTime  time.Duration
	loadTime  time.Duration  // Of the server's first, whole read of the status listing.
	tools     int            // Custom tools that put-tool updates.
	upstream  *benchUpstream // The tool's server of tool-run (bench_toolrun.go); nil for the other operations.
	close     func()
}

// benchStartServer seeds a fresh database and serves it on loopback with
// the settings serve uses.
func benchStartServer(ctx context.Context, cfg *Config, o *benchOptions, prog *benchProgress) (*benchSystem, error) {
	sys := &benchSystem{inProcess: true}
	var cleanups []func()
	sys.close = func() {
		for _, f := range slices.Backward(cleanups) {
			f()
		}
	}
	dbURL := o.db
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
	if o.db != "" {
		sys.database = dialect + " (" + benchRedactURL(dbURL) + ", kept)"
		if dialect == store.SQLite {
			if _, err := os.Stat(source); !errors.Is(err, os.ErrNotExist) {
				return sys, fmt.Errorf("-db: %s exists; bench seeds a fresh database only (give a new path)", source)
			}
		}
	}
	keys, err := benchKeyring(cfg)
	if err != nil {
		return sys, err
	}
	db, err := store.Open(ctx, dbURL, keys, store.Options{})
	if err != nil {
		return sys, err
	}
	cleanups = append(cleanups, func() { db.Close() })
	if current, _, err := db.SchemaVersion(ctx); err != nil {
		return sys, err
	} else if current > 0 {
		return sys, fmt.Errorf("-db: %s already holds a Quarry schema (version %d); bench seeds an empty database only (create a new one)", benchRedactURL(dbURL), current)
	}
	if err := db.Migrate(ctx); err != nil {
		return sys, err
	}

	sys.spec = store.DefaultSeedSpec(o.pairs)
	prog.line(fmt.Sprintf("seeding %d pairs into %s", o.pairs, dialect))
	start := time.Now()
	seeded, err := db.Seed(ctx, sys.spec, func(done, total int) {
		prog.fraction("seeding", done, total)
	})
	if err != nil {
		return sys, fmt.Errorf("seeding: %w", err)
	}
	sys.seedTime = time.Since(start)
	prog.line(fmt.Sprintf("seeded in %s", sys.seedTime.Round(time.Millisecond)))
	sys.token = seeded.AdminToken

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return sys, err
	}
	log := newLogger(cfg, io.Discard) // The request log is formatted as in serve, then dropped.
	ac := api.Config{
		BasePath:        cfg.BasePath,
		MaskCredentials: cfg.MaskCredentials,
		MaxBodyBytes:    cfg.MaxBodyBytes,
		DBTimeout:       cfg.DBTimeout,
		Version:         currentBuild().version,
	}
	if o.op == opToolRun {
		if sys.upstream, err = benchStartUpstream(cfg); err != nil {
			return sys, err
		}
		cleanups = append(cleanups, sys.upstream.stop)
		ac.ToolEgress = sys.upstream.egress()
	}
	handler := api.NewServer(ac, db, log)
	// As serve does at start: the listing is read whole once, timed apart.
	prog.line("reading the status listing")
	start = time.Now()
	if err := handler.LoadStatus(ctx); err != nil {
		return sys, fmt.Errorf("reading the status listing: %w", err)
	}
	sys.loadTime = time.Since(start)
	prog.line(fmt.Sprintf("status listing read in %s", sys.loadTime.Round(time.Millisecond)))
	srv := benchHTTPServer(cfg, handler, log)
	go srv.Serve(ln)
	cleanups = append(cleanups, func() { benchShutdown(srv) })
	sys.base = "http://" + ln.Addr().String()
	return sys, nil
}

// benchKeyring seals the bench database's secrets with
// QUARRY_ENCRYPTION_KEY if it is set, else with a new key: the database is
// a fresh one, and no key file is left behind.
func benchKeyring(cfg *Config) (*store.Keyring, error) {
	key := cfg.EncryptionKey
	if key == "" {
		key = store.NewKey()
	}
	b, err := store.ParseKey(key)
	if err != nil {
		return nil, fmt.Errorf("QUARRY_ENCRYPTION_KEY: %w", err)
	}
	return store.NewKeyring(b)
}

// benchHTTPServer returns an http.Server with the settings runServe gives
// its own; keep the two in step.
func benchHTTPServer(cfg *Config, h http.Handler, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		ReadTimeout:       cfg.ReadTimeout,
		WriteTimeout:      cfg.WriteTimeout,
		IdleTimeout:       cfg.IdleTimeout,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}

func benchShutdown(srv *http.Server) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if srv.Shutdown(ctx) != nil {
		srv.Close()
	}
}

// benchConnectTarget checks that the target answers and that the token is
// an admin's.
func benchConnectTarget(ctx context.Context, o *benchOptions) (*benchSystem, error) {
	sys := &benchSystem{base: strings.TrimRight(o.target, "/"), token: o.token, close: func() {}}
	u, _ := url.Parse(o.target)
	u.User = nil
	sys.database = "unknown (running server at " + u.Redacted() + ")"
	c := &benchCaller{client: benchSetupClient(), base: sys.base, token: sys.token}
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

// benchRedactURL hides the password of a database URL.
func benchRedactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Scheme == "sqlite" || u.Scheme == "file" {
		return s
	}
	return u.Redacted()
}
