package bench

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry/api"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/storetest"
)

// testServer is the in-process server's set-up of the tests: serve's
// defaults, and a new key (the same for every run of the Server).
func testServer() Server {
	key := store.NewKey()
	return Server{
		API: api.Config{MaskCredentials: true, MaxBodyBytes: 1 << 20, DBTimeout: 10 * time.Second},
		Log: slog.New(slog.DiscardHandler),
		HTTP: func(h http.Handler, _ *slog.Logger) *http.Server {
			return &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
		},
		Keys: func() (*store.Keyring, error) {
			k, err := store.ParseKey(key)
			if err != nil {
				return nil, err
			}
			return store.NewKeyring(k)
		},
	}
}

// testDatabases are the databases the ops' tests run on: a new SQLite
// file, and a new PostgreSQL database when QUARRY_TEST_POSTGRES_URL is
// set.
func testDatabases(t *testing.T) map[string]string {
	dbs := map[string]string{"sqlite": "sqlite:" + filepath.Join(t.TempDir(), "bench.db")}
	if os.Getenv(storetest.PostgresEnv) != "" {
		dbs["postgres"] = storetest.URL(t)
	}
	return dbs
}

func TestLoopback(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1": true, "127.1.2.3": true, "::1": true, "localhost": true, "LOCALHOST.": true,
		"0.0.0.0": false, "10.0.0.1": false, "192.168.1.2": false, "example.com": false, "localhost.example.com": false, "": false,
	} {
		if got := isLoopback(host); got != want {
			t.Errorf("isLoopback(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestHistogram(t *testing.T) {
	for _, ns := range []int64{0, 1, 127, 128, 129, 1000, 123456, 1e9, 6e10, 1 << 62} {
		i := histIndex(ns)
		if i < 0 || i >= histBuckets {
			t.Fatalf("index %d of %d out of range", i, ns)
		}
		if v := histValue(i); float64(v) < float64(ns)*0.98 || float64(v) > float64(ns)*1.02+1 {
			t.Errorf("bucket of %d is worth %d", ns, v)
		}
	}
	var h histogram
	for i := 1; i <= 1000; i++ {
		h.record(i%shards, time.Duration(i)*time.Microsecond)
	}
	sum := h.summary()
	near := func(got int64, want float64) bool { return float64(got) > want*0.98 && float64(got) < want*1.02 }
	if sum.n != 1000 || !near(sum.p50, 500e3) || !near(sum.p90, 900e3) || !near(sum.p99, 990e3) || sum.max != 1000e3 {
		t.Errorf("summary %+v", sum)
	}
}

// TestOps checks the table of operations: every one has a step and a
// series named after it first; -mix weighs the mixable ones only; and
// each series' route is one of the routes the floor can answer.
func TestOps(t *testing.T) {
	seen := map[string]bool{}
	for _, o := range ops {
		if o.step == nil || len(o.series) == 0 || o.series[0].name != o.name || o.series[0].part {
			t.Errorf("%s: step %v, series %+v", o.name, o.step != nil, o.series)
		}
		for _, s := range o.series {
			if seen[s.name] {
				t.Errorf("series %s twice", s.name)
			}
			seen[s.name] = true
			if s.route.method == "" || !strings.HasPrefix(s.route.path, "/") {
				t.Errorf("series %s: route %+v", s.name, s.route)
			}
		}
	}
	if got := strings.Join(OpNames(), ", "); got != "status, status-cold, patch-credential, put-tool, tool-run, mcp-call, mcp-list, search, chat, indexing, ingest, mix" {
		t.Errorf("OpNames: %s", got)
	}
	mix, err := parseMix(DefaultMix)
	if err != nil || len(mix) != 3 || mix[0].op.name != "status" || mix[0].weight != 70 {
		t.Errorf("parseMix(DefaultMix) = %+v, %v", mix, err)
	}
	for _, bad := range []string{"status-cold=1", "status=1,status=2", "status=x", "status=0", "", "nothing=1"} {
		if _, err := parseMix(bad); err == nil {
			t.Errorf("parseMix(%q) succeeded", bad)
		}
	}
}

// TestIndexingOp runs -op indexing at 200 pairs on SQLite and, when
// QUARRY_TEST_POSTGRES_URL is set, on PostgreSQL: every series has its
// samples (a pass per 500 pairs due, a lease and an end per pair, the
// passes with nothing or a few pairs due, the progress reports), and the
// listing after progress is compared with the quiet one. The figures
// themselves are docs/benchmarks.md's, at 10,000 pairs.
func TestIndexingOp(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: seeds a database")
	}
	for name, url := range testDatabases(t) {
		t.Run(name, func(t *testing.T) {
			var progress bytes.Buffer
			rep, err := Run(context.Background(), Options{Pairs: 200, DB: url, Tools: 1, Clients: 1, Duration: time.Second,
				Op: Indexing, Progress: &progress, Version: "test", Server: testServer()})
			if err != nil {
				t.Fatalf("%v\n%s", err, progress.String())
			}
			ir := rep.Indexing
			if ir == nil {
				t.Fatal("no indexing report")
			}
			n := uint64(ir.Attempts)
			if n < 150 || n > 200 {
				t.Errorf("%d first attempts for 200 pairs", n)
			}
			want := map[string]uint64{"schedule:batch": 1, "lease": n, "finish": n, "schedule:idle": idlePasses,
				"schedule:one-due": indexingRounds, "schedule:few-due": indexingRounds, "progress": listingSamples}
			for _, s := range ir.Series {
				if s.Name == "schedule:one-due" && s.Samples > 0 && s.Samples < indexingRounds {
					want[s.Name] = s.Samples // Rounds on pairs of sources never indexed make none.
				}
				if n, ok := want[s.Name]; !ok || s.Samples != n || s.LatencyMS.P50 <= 0 || s.LatencyMS.Max < s.LatencyMS.P99 {
					t.Errorf("series %s: %d samples (want %d), latency %+v", s.Name, s.Samples, n, s.LatencyMS)
				}
				delete(want, s.Name)
			}
			if len(want) > 0 {
				t.Errorf("series missing: %v", want)
			}
			if len(rep.Results) != 1 || rep.Results[0].Server.Requests != listingSamples || rep.Results[0].Floor.Requests != listingSamples ||
				rep.Results[0].VsFloor.P50 <= 0 || rep.Dataset.StatusBytes == 0 {
				t.Errorf("listing: %+v, %d bytes", rep.Results, rep.Dataset.StatusBytes)
			}
			var text bytes.Buffer
			rep.WriteText(&text)
			for _, s := range []string{"schedule:idle", "lease", "status:after-progress", "quiet (floor)", "vs quiet"} {
				if !strings.Contains(text.String(), s) {
					t.Errorf("the text report has no %q:\n%s", s, text.String())
				}
			}
			var js bytes.Buffer
			if err := rep.WriteJSON(&js); err != nil || !strings.Contains(js.String(), `"listing_p50_ratio"`) {
				t.Errorf("JSON report: %v\n%s", err, js.String())
			}
			t.Logf("%s", text.String())
		})
	}
}

// -op ingest on SQLite, and when QUARRY_TEST_POSTGRES_URL is set, on
// PostgreSQL: the three ways in each put every document into the store
// (the run fails otherwise) and report a rate. The figures are
// docs/benchmarks.md's.
func TestIngestOp(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: indexes 4,000 documents")
	}
	for name, url := range testDatabases(t) {
		t.Run(name, func(t *testing.T) {
			var progress bytes.Buffer
			rep, err := Run(context.Background(), Options{Pairs: 1, DB: url, Tools: 1, Clients: 2, Duration: time.Second,
				Op: Ingest, Progress: &progress, Version: "test", Server: testServer()})
			if err != nil {
				t.Fatalf("%v\n%s", err, progress.String())
			}
			if rep.Ingest == nil || len(rep.Ingest.Series) != 3 {
				t.Fatalf("ingest report %+v", rep.Ingest)
			}
			for i, want := range []string{"file:upload", "file:index", "ingestion-api"} {
				s := rep.Ingest.Series[i]
				if s.Name != want || s.Documents != ingestDocs || s.DocsPerS <= 0 || s.TargetPS != ingestTarget {
					t.Errorf("series %d: %+v, want %s with %d documents and a rate", i, s, want, ingestDocs)
				}
				t.Logf("%s: %.0f documents/s", s.Name, s.DocsPerS)
			}
			var text bytes.Buffer
			rep.WriteText(&text)
			if !strings.Contains(text.String(), "file:index") {
				t.Errorf("the text report has no file:index:\n%s", text.String())
			}
		})
	}
}

// -op search at 2,000 documents on SQLite, and when
// QUARRY_TEST_POSTGRES_URL is set, on PostgreSQL: the corpus is loaded
// and searched through HTTP beside the floor, most searches find
// something, the index's size and the memory are reported; a second run
// on the same database finds the corpus and loads nothing (and narrows
// its searches to the corpus's document set, -document-set, which finds
// as much), and a run with another -search-docs is refused. The figures are docs/benchmarks.md's.
func TestSearchOp(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: loads 2,000 documents")
	}
	for name, url := range testDatabases(t) {
		t.Run(name, func(t *testing.T) {
			server := testServer() // One key for every run: the corpus's secrets open.
			run := func(docs int, server Server, set bool) (*Report, error) {
				var progress bytes.Buffer
				rep, err := Run(context.Background(), Options{Pairs: 1, DB: url, Tools: 1, Clients: 2, Duration: 2 * time.Second,
					Op: Search, SearchDocs: docs, DocumentSet: set, Progress: &progress, Version: "test", Server: server})
				t.Logf("%s", progress.String())
				return rep, err
			}
			for i, reused := range []bool{false, true} {
				rep, err := run(2000, server, reused)
				if err != nil {
					t.Fatal(err)
				}
				sr := rep.Search
				if sr == nil || len(rep.Results) != 1 {
					t.Fatalf("report: %+v", rep)
				}
				res := rep.Results[0]
				if res.Op != Search || res.Server.Requests == 0 || res.Floor.Requests == 0 || res.ResponseBytes == 0 ||
					res.Server.LatencyMS.P50 <= 0 || res.Server.LatencyMS.P99 < res.Server.LatencyMS.P50 || res.VsFloor.P50 <= 0 {
					t.Errorf("run %d: results %+v", i, res)
				}
				c := sr.Corpus
				if c.Documents != 2000 || c.Pairs != 60 || c.PublicPairs != 10 || c.Groups != 50 || c.PersonGroups != 3 || c.VisiblePairs != 13 || c.Reused != reused {
					t.Errorf("run %d: corpus %+v", i, c)
				}
				if l := sr.Load; reused && l.Documents != 0 || !reused && (l.Documents != 2000 || l.BatchSize != 34 || l.ChunksPerS <= 0 || l.Seconds <= 0) {
					t.Errorf("run %d: load %+v", i, l)
				}
				q := sr.Queries
				// A query's common word (rank 50 to 2,000) is in about one
				// of the person's 433 documents in a hundred or more.
				if q.Answered != int64(res.Server.Requests) || q.WithResults*10 < q.Answered*8 || q.Distinct != searchQueries {
					t.Errorf("run %d: %d of %d answers had results (%d requests)", i, q.WithResults, q.Answered, res.Server.Requests)
				}
				if want := map[bool]string{true: searchSet}[reused]; q.DocumentSet != want {
					t.Errorf("run %d: narrowed to %q, want %q", i, q.DocumentSet, want)
				}
				if ix := sr.Index; ix.IndexBytes <= 0 || ix.DatabaseBytes < ix.IndexBytes || ix.TablesBytes["search_chunks"] <= 0 {
					t.Errorf("run %d: index %+v", i, ix)
				}
				if m := sr.Memory; m.PeakRSSAfterLoadBytes == nil || m.HeapAfterLoadBytes == 0 || m.HeapAfterSearchesBytes == 0 || rep.Server.PeakRSSBytes == nil {
					t.Errorf("run %d: memory %+v, peak RSS %v", i, m, rep.Server.PeakRSSBytes)
				}
				if sr.Missed == nil || rep.Errors.Total != 0 {
					t.Errorf("run %d: missed %v, errors %+v", i, sr.Missed, rep.Errors)
				}
				var text, js bytes.Buffer
				rep.WriteText(&text)
				for _, s := range []string{"search ", "answers", "index", "memory", "vs floor"} {
					if !strings.Contains(text.String(), s) {
						t.Errorf("the text report has no %q:\n%s", s, text.String())
					}
				}
				if err := rep.WriteJSON(&js); err != nil || !strings.Contains(js.String(), `"with_results_share"`) {
					t.Errorf("JSON report: %v\n%s", err, js.String())
				}
				t.Logf("%s", text.String())
			}
			if _, err := run(3000, server, false); err == nil || !strings.Contains(err.Error(), "not the 3000") {
				t.Errorf("a run with another -search-docs: %v", err)
			}
			if _, err := run(2000, testServer(), false); err == nil || !strings.Contains(err.Error(), "QUARRY_ENCRYPTION_KEY") {
				t.Errorf("a run with another key: %v", err)
			}
		})
	}
}

// -op chat at 2,000 documents on SQLite, and when QUARRY_TEST_POSTGRES_URL
// is set, on PostgreSQL: every measured message is measured in its parts
// (Quarry's own, the search, the model, the first token) and cites a
// document; none fails. A second run on the same corpus narrows each
// message's search to the corpus's document set (-document-set, in
// internal_search_filters), and its messages still cite. The figures are
// docs/benchmarks.md's. Each run writes a CPU profile of its load
// (-cpuprofile).
func TestChatOp(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: loads 2,000 documents")
	}
	for name, url := range testDatabases(t) {
		t.Run(name, func(t *testing.T) {
			server := testServer() // One key for both runs: the corpus's secrets open.
			for i, set := range []bool{false, true} {
				var progress, profile bytes.Buffer
				rep, err := Run(context.Background(), Options{Pairs: 1, DB: url, Tools: 1, Clients: 4, Duration: 2 * time.Second,
					Op: Chat, SearchDocs: 2000, DocumentSet: set, Progress: &progress, Version: "test", Server: server, CPUProfile: &profile})
				t.Logf("%s", progress.String())
				if err != nil {
					t.Fatal(err)
				}
				// -cpuprofile: a profile of the load, gzipped as runtime/pprof writes it.
				if !bytes.HasPrefix(profile.Bytes(), []byte{0x1f, 0x8b}) {
					t.Errorf("run %d: the CPU profile is %d bytes, not gzipped: %.20q", i, profile.Len(), profile.Bytes())
				}
				cr := rep.Chat
				if cr == nil || len(rep.Results) != 2 || rep.Search != nil {
					t.Fatalf("run %d: report: %+v", i, rep)
				}
				res := rep.Results[0]
				if res.Op != Chat || res.Server.Requests == 0 || res.Floor.Requests == 0 || res.ResponseBytes == 0 || res.Server.LatencyMS.P50 <= 0 {
					t.Errorf("run %d: results %+v", i, res)
				}
				if cr.Messages != int64(res.Server.Requests) || cr.Cited != cr.Messages {
					t.Errorf("run %d: %d messages measured, %d citing, of %d requests", i, cr.Messages, cr.Cited, res.Server.Requests)
				}
				for name, l := range map[string]Latency{"own": cr.Own, "with search": cr.WithSearch, "search": cr.Search, "model": cr.Model, "first token": cr.FirstToken} {
					if l.P50 <= 0 || l.P99 < l.P50 {
						t.Errorf("run %d: %s: %+v", i, name, l)
					}
				}
				if cr.WithSearch.P50 < cr.Own.P50 || res.Server.LatencyMS.P50 < cr.WithSearch.P50 {
					t.Errorf("run %d: the parts of a message: own %v, with the search %v, whole %v", i, cr.Own.P50, cr.WithSearch.P50, res.Server.LatencyMS.P50)
				}
				if c := cr.Corpus; c.Documents != 2000 || c.VisiblePairs != 13 || c.Reused != set || cr.Missed == nil || rep.Errors.Total != 0 || rep.Server.PeakRSSBytes == nil {
					t.Errorf("run %d: corpus %+v, missed %v, errors %+v", i, c, cr.Missed, rep.Errors)
				}
				if want := map[bool]string{true: searchSet}[set]; cr.DocumentSet != want {
					t.Errorf("run %d: narrowed to %q, want %q", i, cr.DocumentSet, want)
				}
				var text bytes.Buffer
				rep.WriteText(&text)
				want := []string{"chat ", "Quarry's own", "first token after the model", "targets", "memory"}
				if set {
					want = append(want, "filter    document set")
				}
				for _, s := range want {
					if !strings.Contains(text.String(), s) {
						t.Errorf("run %d: the text report has no %q:\n%s", i, s, text.String())
					}
				}
				t.Logf("%s", text.String())
			}
		})
	}
}

// A message of -op chat -document-set names the corpus's set in Onyx's
// internal_search_filters; without it, no filter.
func TestChatMessageBody(t *testing.T) {
	for set, want := range map[string]string{
		"":        `{"chat_session_id":"s","message":"bench-chat-7: rocks","stream":true}`,
		searchSet: `{"chat_session_id":"s","internal_search_filters":{"document_set":["` + searchSet + `"]},"message":"bench-chat-7: rocks","stream":true}`,
	} {
		if got := string((&chatWork{set: set}).messageBody("s", "rocks", 7)); got != want {
			t.Errorf("set %q: %s, want %s", set, got, want)
		}
	}
}
