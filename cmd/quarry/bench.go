package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"time"

	"github.com/quarryhq/quarry/api"
	"github.com/quarryhq/quarry/bench"
	"github.com/quarryhq/quarry/store"
)

// quarry bench: the flags of package bench's load tool, which
// docs/benchmarks.md describes.

const benchDBUsage = "fresh database to seed: a SQLite path that does not exist yet, or a postgres:// URL of a database Quarry has never used (default: a new SQLite file in a temporary directory, removed afterwards; QUARRY_DATABASE_URL is not read); -op search also takes one an earlier -op search loaded, and searches its corpus again, or resumes its load if that run was stopped (same -search-docs and QUARRY_ENCRYPTION_KEY)"

// benchServerSettings are the settings of serve that bench takes too: the
// in-process server and the floor are built with them.
var benchServerSettings = []string{"mask-credentials", "max-body-bytes", "db-timeout",
	"read-header-timeout", "read-timeout", "write-timeout", "idle-timeout", "log-level", "log-format", "search-cache-bytes"}

func runBench(ctx context.Context, env *environment, args []string) error {
	var o bench.Options
	var jsonOut bool
	var cpuProfile string
	cfg, fs, err := loadConfig("bench", args, env, func(fs *flag.FlagSet) {
		fs.Usage = func() {
			fmt.Fprintln(fs.Output(), "Usage: quarry bench [flags]\n\nLoad a seeded in-process server (or a running one, -target) and the HTTP floor; see docs/benchmarks.md.\n\nFlags:")
			fs.PrintDefaults()
		}
		fs.IntVar(&o.Pairs, "pairs", 10_000, fmt.Sprintf("cc-pairs to seed (bench.DefaultSeedSpec), 1 to %d", bench.MaxPairs))
		// -db is bench's own, not serve's: it is never QUARRY_DATABASE_URL.
		fs.StringVar(&o.DB, "db", "", benchDBUsage)
		fs.IntVar(&o.Tools, "tools", 100, fmt.Sprintf("custom tools to create through the API for put-tool, 1 to %d", bench.MaxTools))
		fs.StringVar(&o.Target, "target", "", "URL of a running server to load instead (no seeding; the operations use ids found through the API)")
		fs.StringVar(&o.Token, "token", "", "admin API key for -target (env QUARRY_BENCH_TOKEN)")
		fs.BoolVar(&o.AllowRemote, "allow-remote", false, "allow a -target whose host is not loopback")
		fs.IntVar(&o.Clients, "clients", 8, fmt.Sprintf("concurrent clients, 1 to %d", bench.MaxClients))
		fs.DurationVar(&o.Duration, "duration", 10*time.Second, fmt.Sprintf("how long to load the server, and then the floor (at most %s)", bench.MaxDuration))
		fs.StringVar(&o.Op, "op", "status", strings.Join(bench.OpNames(), ", "))
		fs.StringVar(&o.Mix, "mix", bench.DefaultMix, "weights of -op mix: op=weight,… over status, patch-credential, put-tool")
		fs.IntVar(&o.SearchDocs, "search-docs", 1_000_000, fmt.Sprintf("documents of -op search's corpus (one chunk each), 1 to %d (-op chat: %d unless given)", bench.MaxSearchDocs, bench.DefaultChatDocs))
		fs.BoolVar(&o.DocumentSet, "document-set", false, "-op search, -op chat: narrow each search to the corpus's document set, which holds every pair (search's filters.document_set, chat's internal_search_filters), to measure the filter's cost")
		fs.StringVar(&o.Peer, "peer", "", "-op search: URL of a Lucene peer on loopback (scripts/speed/LuceneSearch.java; scripts/speed/run starts one) to load with the same corpus, unless it holds it, and to time with the same queries and clients, in rounds alternated with Quarry's")
		fs.BoolVar(&jsonOut, "json", false, "print one JSON object instead of the text report")
		fs.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile (go tool pprof) of the bench process, the in-process server's load only, to this file")
	}, benchServerSettings...)
	if err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("bench: unexpected arguments %q", fs.Args())
	}
	given := givenFlags(fs)
	if given(&o.DB) && o.DB == "" {
		return errors.New("-db: empty")
	}
	if o.Token == "" {
		o.Token = env.getenv("QUARRY_BENCH_TOKEN")
	}
	// What goes with what; package bench checks the values.
	switch {
	case given(&o.Mix) && o.Op != bench.Mix:
		return errors.New("-mix goes with -op mix")
	case given(&o.SearchDocs) && o.Op != bench.Search && o.Op != bench.Chat:
		return errors.New("-search-docs goes with -op search and -op chat")
	case (o.Op == bench.Search || o.Op == bench.Chat) && (given(&o.Pairs) || given(&o.Tools)):
		return fmt.Errorf("-pairs and -tools do not go with -op %s (its corpus has 60 pairs; -search-docs sizes it)", o.Op)
	case o.Target == "" && (given(&o.Token) || given(&o.AllowRemote)):
		return errors.New("-token and -allow-remote go with -target")
	}
	if o.Target != "" {
		for _, f := range []struct {
			flag string
			p    any
		}{{"pairs", &o.Pairs}, {"db", &o.DB}, {"tools", &o.Tools}} {
			if given(f.p) {
				return fmt.Errorf("-%s seeds the in-process server; it does not go with -target", f.flag)
			}
		}
	}

	if o.Op == bench.Chat && !given(&o.SearchDocs) {
		o.SearchDocs = bench.DefaultChatDocs
	}
	o.Version = currentBuild().version
	log := newLogger(cfg, io.Discard) // The request log is formatted as in serve, then dropped.
	o.Server = bench.Server{
		API: api.Config{
			BasePath:        cfg.BasePath,
			MaskCredentials: cfg.MaskCredentials,
			MaxBodyBytes:    cfg.MaxBodyBytes,
			DBTimeout:       cfg.DBTimeout,
			Version:         o.Version,
		},
		Log:         log,
		SearchCache: storeCache(cfg.SearchCacheBytes),
		HTTP:        cfg.httpServer,
		Keys:        func() (*store.Keyring, error) { return benchKeyring(cfg) },
	}
	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		o.CPUProfile = f
	}
	o.Progress = env.stdout
	if jsonOut {
		o.Progress = env.stderr // stdout holds the JSON object only.
	}
	rep, err := bench.Run(ctx, o)
	if rep != nil {
		if jsonOut {
			if err := rep.WriteJSON(env.stdout); err != nil {
				return err
			}
		} else {
			rep.WriteText(env.stdout)
		}
	}
	return err
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

// givenFlags returns whether the command line gave the flag of fs that
// sets the variable p points to (flag.StringVar and its like make the
// flag's Value of that very address): the checks of what goes with what
// ask about the options, not about the flags' names.
func givenFlags(fs *flag.FlagSet) func(p any) bool {
	set := map[uintptr]bool{}
	fs.Visit(func(f *flag.Flag) { set[reflect.ValueOf(f.Value).Pointer()] = true })
	return func(p any) bool { return set[reflect.ValueOf(p).Pointer()] }
}
