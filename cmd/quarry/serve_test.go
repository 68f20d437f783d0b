package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry/internal/syncbuf"
	"github.com/quarryhq/quarry/store"
)

// envOf returns a getenv over vars.
func envOf(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

var tokenRE = regexp.MustCompile(`qry_[A-Za-z0-9_-]{43}`)

// TestServeBootstrapAndShutdown runs `quarry serve` on a new SQLite
// database as a newcomer would: the admin key it prints opens the status
// listing, and a cancelled context (SIGTERM) stops it cleanly.
func TestServeBootstrapAndShutdown(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "data", "quarry.db")
	var stdout, stderr syncbuf.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "-addr", "127.0.0.1:0", "-db", "sqlite:" + db}, envOf(nil), &stdout, &stderr)
	}()
	var base string
	urlRE := regexp.MustCompile(`"url":"(http://[^"]+)"`)
	for deadline := time.Now().Add(20 * time.Second); base == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := urlRE.FindStringSubmatch(stderr.String()); m != nil {
			base = m[1]
		}
	}
	if base == "" {
		cancel()
		t.Fatalf("the server did not start: %s", stderr.String())
	}
	token := tokenRE.FindString(stdout.String())
	if token == "" {
		t.Fatalf("no admin key printed on a new database: %q", stdout.String())
	}
	if !strings.Contains(stdout.String(), "curl -H \"Authorization: Bearer "+token+"\" "+base+"/manage/admin/connector/status") {
		t.Errorf("the banner does not show how to call the status listing: %s", stdout.String())
	}
	req, _ := http.NewRequest("GET", base+"/manage/admin/connector/status", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || string(body) != "[]" {
		t.Errorf("status listing: %d %s", res.StatusCode, body)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve returned %v after SIGTERM", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop")
	}

	// A second start on the same database prints no key.
	stdout = syncbuf.Buffer{}
	ctx2, cancel2 := context.WithCancel(context.Background())
	go func() {
		done <- run(ctx2, []string{"serve", "-addr", "127.0.0.1:0", "-db", "sqlite:" + db}, envOf(nil), &stdout, &stderr)
	}()
	time.Sleep(300 * time.Millisecond)
	cancel2()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if tokenRE.MatchString(stdout.String()) {
		t.Errorf("a key was printed again on restart: %s", stdout.String())
	}
}

func TestCreateAPIKey(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "q.db")
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"create-api-key", "-db", db, "-name", "ci", "-role", "admin"}, envOf(nil), &stdout, &stderr); err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	last := lines[len(lines)-1]
	if !tokenRE.MatchString(last) || last != tokenRE.FindString(last) {
		t.Errorf("last line %q is not the key alone", last)
	}
	for _, bad := range [][]string{
		{"create-api-key", "-db", db, "-role", "owner"},
		{"create-api-key", "-db", "postgres://127.0.0.1:1/x"}, // no key set: refused before connecting
	} {
		if err := run(context.Background(), bad, envOf(nil), io.Discard, io.Discard); err == nil {
			t.Errorf("run %v succeeded", bad)
		}
	}
}

func TestConfigPrecedence(t *testing.T) {
	env := &environment{getenv: envOf(map[string]string{"QUARRY_ADDR": "0.0.0.0:9000", "QUARRY_LOG_LEVEL": "debug",
		"QUARRY_MASK_CREDENTIALS": "false"}), stdout: io.Discard, stderr: io.Discard}
	cfg, _, err := loadConfig("serve", []string{"-addr", "127.0.0.1:7000"}, env, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Addr != "127.0.0.1:7000" {
		t.Errorf("Addr = %q: the flag should win over the environment", cfg.Addr)
	}
	if cfg.LogLevel.String() != "DEBUG" || cfg.MaskCredentials {
		t.Errorf("LogLevel = %v, MaskCredentials = %v: the environment should win over the defaults", cfg.LogLevel, cfg.MaskCredentials)
	}
	if cfg.DatabaseURL != "sqlite:./data/quarry.db" || cfg.MaxBodyBytes != 1<<20 || cfg.SearchCacheBytes != store.DefaultSearchCache {
		t.Errorf("defaults not applied: %+v", cfg)
	}
	for _, bad := range []map[string]string{{"QUARRY_MAX_BODY_BYTES": "-1"}, {"QUARRY_LOG_FORMAT": "xml"}, {"QUARRY_SHUTDOWN_GRACE": "soon"},
		{"QUARRY_SEARCH_CACHE_BYTES": "-1"}, {"QUARRY_SEARCH_CACHE_BYTES": "lots"}} {
		env.getenv = envOf(bad)
		if _, _, err := loadConfig("serve", nil, env, nil); err == nil {
			t.Errorf("loadConfig accepted %v", bad)
		}
	}
}

func TestVersion(t *testing.T) {
	var out bytes.Buffer
	// A test binary has no version and no VCS information.
	want := "quarry dev\nrevision unknown (built without VCS information; see docs/operations.md)\n" +
		"built with " + runtime.Version() + " for " + runtime.GOOS + "/" + runtime.GOARCH + "\n"
	if err := run(context.Background(), []string{"version"}, envOf(nil), &out, io.Discard); err != nil || out.String() != want {
		t.Errorf("version: %q, %v; want %q", out.String(), err, want)
	}
	if err := run(context.Background(), []string{"frobnicate"}, envOf(nil), io.Discard, io.Discard); err == nil {
		t.Error("an unknown command succeeded")
	}
}

// TestServeWarnsOfOpenFiles starts `quarry serve` on a database whose files
// other users may read, as an earlier Quarry made them: it serves, and
// says so in a warning.
func TestServeWarnsOfOpenFiles(t *testing.T) {
	db := filepath.Join(t.TempDir(), "quarry.db")
	if err := run(context.Background(), []string{"create-api-key", "-db", "sqlite:" + db, "-name", "ci", "-role", "admin"}, envOf(nil), io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{db, db + "-wal", db + "-shm"} {
		if err := os.Chmod(name, 0o644); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
	}
	var warned bool
	for line := range strings.Lines(serveLog(t, "-addr", "127.0.0.1:0", "-db", "sqlite:"+db)) {
		var e struct {
			Level string   `json:"level"`
			Msg   string   `json:"msg"`
			Files []string `json:"files"`
		}
		if json.Unmarshal([]byte(line), &e) == nil && e.Level == "WARN" && strings.Contains(e.Msg, "chmod 600") {
			warned = slices.Contains(e.Files, db)
		}
	}
	if !warned {
		t.Errorf("no warning naming %s", db)
	}
}

// serveLog runs `quarry serve` with args until it serves, stops it, and
// returns what it logged.
func serveLog(t *testing.T, args ...string) string {
	t.Helper()
	var stdout, stderr syncbuf.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, append([]string{"serve"}, args...), envOf(nil), &stdout, &stderr) }()
	for !strings.Contains(stderr.String(), `"msg":"serving"`) {
		select {
		case err := <-done:
			t.Fatalf("serve stopped: %v: %s", err, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	return stderr.String()
}

// TestServeWarnsOfNoPublicURL: a server that listens beyond this machine
// without QUARRY_PUBLIC_URL says that, behind an https proxy, its cookies
// may not be Secure; one on loopback, or with the setting, does not.
func TestServeWarnsOfNoPublicURL(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		warn bool
	}{
		{"all interfaces", []string{"-addr", "0.0.0.0:0"}, true},
		{"loopback", []string{"-addr", "127.0.0.1:0"}, false},
		{"all interfaces, a public URL", []string{"-addr", "0.0.0.0:0", "-public-url", "https://quarry.example"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "quarry.db")
			log := serveLog(t, append([]string{"-db", "sqlite:" + db}, tc.args...)...)
			if got := strings.Contains(log, "QUARRY_PUBLIC_URL is not set"); got != tc.warn {
				t.Errorf("warned %t, want %t:\n%s", got, tc.warn, log)
			}
		})
	}
}
