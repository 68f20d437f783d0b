package bench

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/quarryhq/quarry/internal/proctest"
)

// peerClassPath returns the class path of the Lucene peer (Debian's
// liblucene8-java), or skips the test when java or the jars are missing.
func peerClassPath(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("java"); err != nil {
		t.Skip("no java on PATH: the Lucene peer needs Java 11 or later and liblucene8-java (apt-get install -y liblucene8-java default-jre-headless)")
	}
	var jars []string
	for _, name := range []string{"lucene-core", "lucene-analyzers-common", "lucene-queryparser", "lucene-highlighter", "lucene-queries", "lucene-memory"} {
		found, _ := filepath.Glob("/usr/share/java/" + name + "-[0-9]*.jar")
		if len(found) == 0 {
			t.Skipf("no /usr/share/java/%s-*.jar: the Lucene peer needs liblucene8-java (apt-get install -y liblucene8-java)", name)
		}
		jars = append(jars, found[0])
	}
	return strings.Join(jars, ":")
}

// startPeer starts scripts/speed/LuceneSearch.java over the index in dir
// and returns its URL, and a function that stops it (also called at the
// test's end).
func startPeer(t *testing.T, classPath, dir string) (string, func()) {
	t.Helper()
	cmd := exec.Command("java", "-cp", classPath, filepath.Join("..", "scripts", "speed", "LuceneSearch.java"), dir, "0")
	url, p := proctest.Start(t, cmd, regexp.MustCompile(`^listening on (\S+)$`), time.Minute)
	return url, p.Stop
}

// -op search -peer at 2,000 documents against the real Lucene peer
// (skipped without java and liblucene8-java): the first run loads the
// corpus into the peer, the second, with another peer process over the
// same index directory, finds it there; most answers of both systems
// have results, and the report gives the peer's figures and Quarry's
// divided by them. Then the peer's rights filter is checked
// (checkPeerRights).
func TestSearchPeer(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: loads 2,000 documents into Quarry and into the Lucene peer")
	}
	classPath := peerClassPath(t)
	index := t.TempDir()
	db := "sqlite:" + filepath.Join(t.TempDir(), "bench.db")
	server := testServer()
	for i, reused := range []bool{false, true} {
		url, stop := startPeer(t, classPath, index)
		var progress bytes.Buffer
		rep, err := Run(context.Background(), Options{Pairs: 1, DB: db, Tools: 1, Clients: 1, Duration: 900 * time.Millisecond,
			Op: Search, SearchDocs: 2000, Peer: url, Progress: &progress, Version: "test", Server: server})
		t.Logf("%s", progress.String())
		if err != nil {
			t.Fatal(err)
		}
		if reused {
			checkPeerRights(t, url)
		}
		stop()
		if rep.Search == nil || rep.Search.Peer == nil || len(rep.Results) != 1 {
			t.Fatalf("run %d: report %+v", i, rep)
		}
		p, res := rep.Search.Peer, rep.Results[0]
		if p.Reused != reused || p.Documents != 2000 || p.Lucene == "" || p.URL != url || (p.LoadSeconds > 0) == reused ||
			p.Rounds != peerRounds || p.RoundSeconds != 0.3 || p.Warmup < 1 || p.ResponseBytes == 0 {
			t.Errorf("run %d: peer %+v", i, p)
		}
		if p.Peer.Requests == 0 || p.Peer.LatencyMS.P50 <= 0 || p.Peer.LatencyMS.P99 < p.Peer.LatencyMS.P50 || p.Peer.ThroughputRPS <= 0 {
			t.Errorf("run %d: the peer's numbers %+v", i, p.Peer)
		}
		if p.Answered != int64(p.Peer.Requests) || p.WithResults*10 < p.Answered*8 || p.Errors.Total != 0 {
			t.Errorf("run %d: %d of the peer's %d answers had results (%d requests), errors %+v", i, p.WithResults, p.Answered, p.Peer.Requests, p.Errors)
		}
		if q := rep.Search.Queries; q.Answered != int64(res.Server.Requests) || q.WithResults*10 < q.Answered*8 {
			t.Errorf("run %d: %d of Quarry's %d answers had results (%d requests)", i, q.WithResults, q.Answered, res.Server.Requests)
		}
		if want := ratiosOf(res.Server, p.Peer); p.QuarryOverPeer != want || want.P50 <= 0 || want.Throughput <= 0 {
			t.Errorf("run %d: Quarry ÷ Lucene %+v, want %+v", i, p.QuarryOverPeer, want)
		}
		var text, js bytes.Buffer
		rep.WriteText(&text)
		for _, s := range []string{"  lucene ", "quarry ÷ lucene", "Lucene " + p.Lucene, "peer errors  none"} {
			if !strings.Contains(text.String(), s) {
				t.Errorf("the text report has no %q:\n%s", s, text.String())
			}
		}
		if err := rep.WriteJSON(&js); err != nil || !strings.Contains(js.String(), `"quarry_over_peer"`) {
			t.Errorf("JSON report: %v\n%s", err, js.String())
		}
		t.Logf("%s", text.String())
	}
}

// checkPeerRights checks that the peer at url, which holds the corpus of
// 2,000 documents, searches only the pairs given: a query of words that
// only pairs the person cannot see hold finds documents among all the
// pairs, each with a snippet, and none among the person's.
func checkPeerRights(t *testing.T, url string) {
	t.Helper()
	ctx := context.Background()
	c := &caller{client: setupClient(), base: url}
	// The pairs each word of the corpus is in, by place.
	in := map[string]uint64{}
	for bt := range corpusBatches(ctx, 2000, 0) {
		for _, d := range bt.docs {
			for _, w := range strings.FieldsFunc(d.SemanticIdentifier+" "+d.Sections[0].Text, func(r rune) bool { return !unicode.IsLetter(r) }) {
				in[strings.ToLower(w)] |= 1 << bt.place
			}
		}
	}
	var all, visible []string
	var seen uint64
	for i := range searchGroups + searchPublic {
		all = append(all, pairName(i))
		if personSees(i) {
			visible = append(visible, pairName(i))
			seen |= 1 << i
		}
	}
	if len(visible) != 13 {
		t.Fatalf("the person sees %d pairs, not 13", len(visible))
	}
	var hidden []string
	for w, places := range in {
		if places&seen == 0 {
			hidden = append(hidden, w)
		}
	}
	slices.Sort(hidden)
	if len(hidden) < 3 {
		t.Fatalf("%d words are in hidden pairs only", len(hidden))
	}
	query := strings.Join(hidden[:3], " ")
	hits := func(pairs []string) int {
		var answer struct {
			SearchDocs []struct {
				DocumentID      string   `json:"document_id"`
				MatchHighlights []string `json:"match_highlights"`
			} `json:"search_docs"`
		}
		if err := c.decode(ctx, "POST", peerSearchPath, mustJSON(map[string]any{"query": query, "pairs": pairs, "num_hits": 30}), &answer); err != nil {
			t.Fatal(err)
		}
		for _, d := range answer.SearchDocs {
			if len(d.MatchHighlights) != 1 || !strings.Contains(d.MatchHighlights[0], "<hi>") {
				t.Errorf("%q: %s has no snippet with a match: %q", query, d.DocumentID, d.MatchHighlights)
			}
		}
		return len(answer.SearchDocs)
	}
	if n := hits(all); n == 0 {
		t.Errorf("%q: nothing among all the pairs", query)
	}
	if n := hits(visible); n != 0 {
		t.Errorf("%q: %d results among the person's pairs, which hold none of its words", query, n)
	}
	if n := hits([]string{}); n != 0 {
		t.Errorf("%q: %d results among no pairs", query, n)
	}
}

// A phase's rounds add up: the latencies of two histograms added are
// those of one that recorded both.
func TestHistogramAdd(t *testing.T) {
	var a, b, both histogram
	for i := range 1000 {
		d := time.Duration(i*i) * time.Microsecond
		h := &a
		if i%3 == 0 {
			h = &b
		}
		h.record(i%shards, d)
		both.record(i%shards, d)
	}
	a.add(&b)
	if got, want := a.summary(), both.summary(); got != want {
		t.Errorf("added: %+v, want %+v", got, want)
	}
}
