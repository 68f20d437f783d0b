package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry/internal/syncbuf"
	"github.com/quarryhq/quarry/outbound/connector/confluencetest"
	"github.com/quarryhq/quarry/store"
)

// TestServeIndexesAnUploadedFile runs the README's first commands (its
// sh blocks of the file example and of the Confluence connector, with sh
// and curl) against quarry serve on the embedded default, with nothing
// else started but a simulated Confluence (its address in place of the
// README's wiki_base, the README's credential its own, loopback opened
// to connectors): a file uploaded, a file connector of it paired with the
// ids read from the answers, the worker inside quarry serve indexes it
// while the README's loop waits, and search finds it; the Confluence
// connector is made and paired, indexed while the loop waits, and search
// finds the space's page. Then the index's upkeep inside quarry serve
// writes its chunks into a segment.
func TestServeIndexesAnUploadedFile(t *testing.T) {
	first, second := readmeBlocks(t)
	wiki := confluencetest.NewFixture(t, "bot@acme.com", "ATATT3x-0123456789")
	const readmeWiki = "https://acme.atlassian.net/wiki"
	if !strings.Contains(second, readmeWiki) {
		t.Fatalf("the README's Confluence connector is not of %s:\n%s", readmeWiki, second)
	}
	second = strings.Replace(second, readmeWiki, wiki.BaseURL(), 1)
	sh, err1 := exec.LookPath("sh")
	_, err2 := exec.LookPath("curl")
	if err := errors.Join(err1, err2); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the README's commands need sh and curl: %v", err)
		}
		t.Skipf("the README's commands need sh and curl: %v", err)
	}
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "quarry.db")
	var stdout, stderr syncbuf.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "-addr", "127.0.0.1:0", "-db", "sqlite:" + dbPath}, envOf(map[string]string{"QUARRY_TOOL_EGRESS_ALLOW": "127.0.0.1"}), &stdout, &stderr)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	var base string
	urlRE := regexp.MustCompile(`"url":"(http://[^"]+)"`)
	for deadline := time.Now().Add(20 * time.Second); base == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := urlRE.FindStringSubmatch(stderr.String()); m != nil {
			base = m[1]
		}
	}
	token := tokenRE.FindString(stdout.String())
	if base == "" || token == "" {
		t.Fatalf("the server did not start: %s", stderr.String())
	}

	// The README's commands, as written, but for the server's address.
	const readmeQ = "Q=http://127.0.0.1:8080"
	if !strings.Contains(first, readmeQ) {
		t.Fatalf("the README's first commands do not set %s:\n%s", readmeQ, first)
	}
	const marker = "=== the Confluence connector"
	script := "set -e\n" + strings.Replace(first, readmeQ, "Q="+base, 1) + "\necho\necho '" + marker + "'\n" + second
	runCtx, stop := context.WithTimeout(ctx, 90*time.Second)
	defer stop()
	cmd := exec.CommandContext(runCtx, sh, "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "K="+token)
	var progress strings.Builder // curl's meter and errors
	cmd.Stderr = &progress
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the README's commands: %v\n%s\n%s\nserver log: %s", err, out, progress.String(), stderr.String())
	}
	search, pairing, ok := strings.Cut(string(out), marker)
	if !ok {
		t.Fatalf("the README's commands stopped early:\n%s", out)
	}
	var answer struct {
		SearchDocs []struct {
			SemanticIdentifier string   `json:"semantic_identifier"`
			MatchHighlights    []string `json:"match_highlights"`
		} `json:"search_docs"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(search)), &answer); err != nil {
		t.Fatalf("the README's search did not answer JSON (%v):\n%s", err, search)
	}
	if len(answer.SearchDocs) != 1 || answer.SearchDocs[0].SemanticIdentifier != "climbing.txt" ||
		!strings.Contains(strings.Join(answer.SearchDocs[0].MatchHighlights, " "), "<hi>belay</hi>") {
		t.Fatalf("the README's search for belay: %+v, want climbing.txt with belay highlighted (server log: %s)", answer, stderr.String())
	}
	answer.SearchDocs = nil
	if err := json.Unmarshal([]byte(strings.TrimSpace(pairing)), &answer); err != nil {
		t.Fatalf("the README's search of the wiki did not answer JSON (%v):\n%s", err, pairing)
	}
	if len(answer.SearchDocs) != 1 || answer.SearchDocs[0].SemanticIdentifier != "Welcome" {
		t.Errorf("the README's search for welcome: %+v, want the wiki's page Welcome (server log: %s)", answer, stderr.String())
	}

	keys, err := (&Config{DatabaseURL: "sqlite:" + dbPath}).keyring(func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(context.Background(), "sqlite:"+dbPath, keys, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var state store.IndexState
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if state, err = db.SearchIndexState(context.Background()); err != nil || (state.Pending == 0 && state.Segments > 0) {
			break
		}
	}
	if err != nil || state.Pending != 0 || state.Segments == 0 {
		t.Errorf("the index's upkeep inside quarry serve: %+v, %v; want no chunk pending, a segment", state, err)
	}
}

// readmeBlocks returns the README's sh blocks of its first example (the
// one that uploads climbing.txt) and of its Confluence connector.
func readmeBlocks(t *testing.T) (first, second string) {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, block := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(string(b), -1) {
		switch {
		case first == "" && strings.Contains(block[1], "climbing.txt"):
			first = block[1]
		case second == "" && strings.Contains(block[1], `"source": "confluence"`):
			second = block[1]
		}
	}
	if first == "" || second == "" {
		t.Fatal("the README has no sh block that uploads climbing.txt, or none that makes a Confluence connector")
	}
	return first, second
}
