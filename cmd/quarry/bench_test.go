package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/quarryhq/quarry/api"
	"github.com/quarryhq/quarry/bench"
	"github.com/quarryhq/quarry/store/storetest"
)

// runBenchCommand runs quarry bench through run, with a tiny dataset and a
// short load unless args say otherwise.
func runBenchCommand(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	args = append([]string{"bench", "-clients", "2", "-duration", "300ms"}, args...)
	err = run(context.Background(), args, envOf(nil), &out, &errOut)
	return out.String(), errOut.String(), err
}

// checkBenchJSON parses a -json report and checks that it has no error,
// and, for each of ops, requests, a positive throughput and its ratios to
// the floor.
func checkBenchJSON(t *testing.T, stdout string, ops ...string) *bench.Report {
	t.Helper()
	var r bench.Report
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("the report does not parse: %v\n%s", err, stdout)
	}
	if dec.More() {
		t.Fatalf("more than one JSON value on stdout:\n%s", stdout)
	}
	if r.Errors.Total != 0 || r.FloorErrors.Total != 0 {
		t.Errorf("errors: %+v, floor errors: %+v", r.Errors, r.FloorErrors)
	}
	var got []string
	for _, res := range r.Results {
		got = append(got, res.Op)
		if res.Server.Requests == 0 || res.Server.ThroughputRPS <= 0 || res.Server.LatencyMS.P50 <= 0 ||
			res.Floor.Requests == 0 || res.Floor.ThroughputRPS <= 0 {
			t.Errorf("%s: no measurement: %+v", res.Op, res)
		}
		if v := res.VsFloor; v.Throughput <= 0 || v.P50 <= 0 || v.P99 <= 0 {
			t.Errorf("%s: no ratio to the floor: %+v", res.Op, v)
		}
		if res.ResponseBytes <= 0 {
			t.Errorf("%s: response_bytes %d", res.Op, res.ResponseBytes)
		}
	}
	slices.Sort(got)
	slices.Sort(ops)
	if !slices.Equal(got, ops) {
		t.Errorf("results for %v, want %v", got, ops)
	}
	if r.Machine.CPUs <= 0 || r.Machine.GOMAXPROCS <= 0 || r.Machine.GoVersion == "" {
		t.Errorf("machine: %+v", r.Machine)
	}
	return &r
}

func TestBenchOps(t *testing.T) {
	for _, tt := range []struct {
		op   string
		args []string
		want []string
	}{
		{"status", nil, []string{"status"}},
		{"status-cold", nil, []string{"status-cold", "status-cold:write"}},
		{"patch-credential", nil, []string{"patch-credential"}},
		{"put-tool", []string{"-tools", "10"}, []string{"put-tool"}},
		{"tool-run", nil, []string{"tool-run"}},
		{"mcp-call", nil, []string{"mcp-call", "mcp-call:run"}},
		{"mcp-list", []string{"-tools", "20"}, []string{"mcp-list", "mcp-list:get-tool"}},
		{"mix", []string{"-tools", "10", "-mix", "status=5,patch-credential=3,put-tool=2"}, []string{"status", "patch-credential", "put-tool"}},
	} {
		t.Run(tt.op, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"-pairs", "200", "-op", tt.op, "-json"}, tt.args...)
			if tt.op == "mix" {
				// On PostgreSQL too when QUARRY_TEST_POSTGRES_URL is set.
				args = append(args, "-db", storetest.URL(t))
			}
			stdout, stderr, err := runBenchCommand(t, args...)
			if err != nil {
				t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
			}
			r := checkBenchJSON(t, stdout, tt.want...)
			if !r.Dataset.Seeded || r.Dataset.Pairs != 200 || r.Dataset.Connectors != 40 || r.Dataset.Credentials != 200 || r.Dataset.Groups != 100 {
				t.Errorf("dataset: %+v", r.Dataset)
			}
			if r.Server.Mode != "in-process" || r.Server.PeakRSSBytes == nil || *r.Server.PeakRSSBytes <= 0 {
				t.Errorf("server: %+v", r.Server)
			}
			if tt.op == "tool-run" && r.Results[0].OverheadMS == nil {
				t.Errorf("tool-run: no overhead over the direct calls: %+v", r.Results[0])
			}
			if !strings.Contains(stderr, "loading the server") || !strings.Contains(stderr, "loading the floor") {
				t.Errorf("no progress on stderr:\n%s", stderr)
			}
		})
	}
}

// TestBenchSearchCache: bench takes serve's -search-cache-bytes for its
// in-process server, whose block cache the report shows bounded by it.
func TestBenchSearchCache(t *testing.T) {
	stdout, stderr, err := runBenchCommand(t, "-op", "search", "-search-docs", "300", "-clients", "1", "-duration", "1s",
		"-search-cache-bytes", "1048576", "-json")
	if err != nil {
		t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	r := checkBenchJSON(t, stdout, "search")
	if r.Search == nil || r.Search.Memory.BlockCache == nil || r.Search.Memory.BlockCache.MaxBytes != 1<<20 {
		t.Errorf("search: %+v", r.Search)
	}
}

// TestBenchToolRunTarget: tool-run opens the egress guard to bench's own
// upstream, which a running server's guard would refuse.
func TestBenchToolRunTarget(t *testing.T) {
	_, _, err := runBenchCommand(t, "-op", "tool-run", "-target", "http://127.0.0.1:1", "-token", "x")
	if err == nil || !strings.Contains(err.Error(), "-target") {
		t.Fatalf("err = %v", err)
	}
}

func TestBenchText(t *testing.T) {
	stdout, stderr, err := runBenchCommand(t, "-pairs", "100")
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, stdout, stderr)
	}
	for _, want := range []string{
		"seeding: 100% (", "loading the server", "loading the floor", // plain progress lines: stdout is no terminal
		"quarry bench: status, 2 clients", "dataset   100 pairs over 20 connectors, 100 credentials, 100 groups",
		"machine   ", "peak RSS  ", "vs floor", "errors       none", "floor errors none",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("no %q in the report:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "\r") {
		t.Errorf("a \\r line off a terminal:\n%q", stdout)
	}
}

// TestBenchTarget loads a running server: ids come from its API, peak RSS
// is unknown, and the credentials it renamed get their names back.
func TestBenchTarget(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	seeded, err := bench.Seed(ctx, db, bench.DefaultSeedSpec(100), nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.NewServer(api.Config{MaskCredentials: true}, db, slog.New(slog.DiscardHandler)))
	defer srv.Close()
	call := func(method, path, body string) []byte {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+seeded.AdminToken)
		req.Header.Set("Content-Type", "application/json")
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		if err != nil || res.StatusCode/100 != 2 {
			t.Fatalf("%s %s: %d %s %v", method, path, res.StatusCode, b, err)
		}
		return b
	}
	for i := range 3 {
		call("POST", "/admin/tool/custom", fmt.Sprintf(`{"name": "t%d", "definition": %s, "custom_headers": [{"key": "X-Api-Key", "value": "a-long-header-secret-%d"}], "passthrough_auth": false}`,
			i, bench.ToolDefinition(i), i))
	}
	before := call("GET", "/manage/credential", "")

	stdout, stderr, err := runBenchCommand(t, "-target", srv.URL, "-token", seeded.AdminToken, "-op", "mix", "-json")
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, stdout, stderr)
	}
	r := checkBenchJSON(t, stdout, "status", "patch-credential", "put-tool")
	if r.Server.Mode != "target" || r.Server.PeakRSSBytes != nil || !strings.Contains(r.Server.PeakRSSNote, "unknown") {
		t.Errorf("server: %+v", r.Server)
	}
	if r.Dataset.Seeded || r.Dataset.Pairs != 100 || r.Dataset.Credentials != 100 || r.Dataset.CustomTools != 3 {
		t.Errorf("dataset: %+v", r.Dataset)
	}
	after := call("GET", "/manage/credential", "")
	// The same names and, decoded, the same masked secrets (a write that
	// echoes the secrets may store their keys in another order).
	decode := func(b []byte) map[int64]string {
		var ks []struct {
			ID             int64           `json:"id"`
			Name           *string         `json:"name"`
			CredentialJSON json.RawMessage `json:"credential_json"`
		}
		if err := json.Unmarshal(b, &ks); err != nil {
			t.Fatal(err)
		}
		out := map[int64]string{}
		for _, k := range ks {
			var secret map[string]any
			json.Unmarshal(k.CredentialJSON, &secret)
			out[k.ID] = fmt.Sprint(*k.Name, " ", secret)
		}
		return out
	}
	if b, a := decode(before), decode(after); !maps.Equal(b, a) {
		t.Errorf("the target's credentials changed:\nbefore %v\nafter  %v", b, a)
	}
}

func TestBenchRefusals(t *testing.T) {
	used := storetest.URL(t)
	storetest.OpenURL(t, used, storetest.Key(t)) // migrated: not fresh
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-target", "http://192.0.2.10:8080", "-token", "k"}, "192.0.2.10 is not a loopback address"},
		{[]string{"-target", "https://quarry.example.com/api", "-token", "k"}, "quarry.example.com is not a loopback address"},
		{[]string{"-target", "http://127.0.0.1:1"}, "-target needs -token"},
		{[]string{"-target", "ftp://127.0.0.1/", "-token", "k"}, "not an http:// or https:// URL"},
		{[]string{"-target", "http://127.0.0.1:1", "-token", "k", "-pairs", "10"}, "does not go with -target"},
		{[]string{"-token", "k"}, "go with -target"},
		{[]string{"-db", used}, "bench seeds a"},
		{[]string{"-clients", "1025"}, "-clients"},
		{[]string{"-duration", "11m"}, "-duration"},
		{[]string{"-pairs", "1000001"}, "-pairs"},
		{[]string{"-op", "delete-everything"}, "-op"},
		{[]string{"-mix", "status=1"}, "-mix goes with -op mix"},
		{[]string{"-op", "mix", "-mix", "status-cold=1"}, "-mix"},
		{[]string{"-op", "mix", "-mix", "status=0"}, "no operation has a weight"},
		{[]string{"-search-docs", "10"}, "-search-docs goes with -op search and -op chat"},
		{[]string{"-document-set"}, "-document-set goes with -op search or -op chat"},
		{[]string{"-peer", "http://127.0.0.1:1"}, "-peer goes with -op search"},
		{[]string{"-op", "search", "-peer", "http://192.0.2.10:8080"}, "-peer: 192.0.2.10 is not a loopback address"},
		{[]string{"-op", "search", "-peer", "127.0.0.1:8080"}, "is not an http:// URL"},
		{[]string{"-op", "search", "-peer", "http://127.0.0.1:1", "-document-set"}, "-peer does not go with -document-set"},
		{[]string{"-op", "search", "-search-docs", "0"}, "-search-docs: 0 is not between"},
		{[]string{"-op", "search", "-pairs", "10"}, "do not go with -op search"},
		{[]string{"-op", "search", "-target", "http://127.0.0.1:1", "-token", "k"}, "does not go with -target"},
		{[]string{"-op", "search", "-db", used}, "bench seeds a"},
	} {
		_, _, err := runBenchCommand(t, tt.args...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("bench %v: error %v, want one with %q", tt.args, err, tt.want)
		}
	}
}
