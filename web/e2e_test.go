package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api"
	"github.com/quarryhq/quarry/bench"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/storetest"
)

// e2eEnv makes the browser test a failure, rather than a skip, when node,
// npm or Chromium is missing. CI sets it.
const e2eEnv = "QUARRY_E2E"

// chromiumPath is Debian's Chromium (apt-get install chromium).
const chromiumPath = "/usr/bin/chromium"

// e2ePairs is the size of the deployment the page is tried on.
const e2ePairs = 10000

// The fixtures web/e2e/run.mjs expects.
var (
	e2eSecrets = map[string]any{
		"confluence_username":     "alice@example.com",
		"confluence_access_token": "ATATT3xFfGF0-very-long-secret-token-value-1234",
		"client_secret":           "s3cr3t!",
		"wiki_base":               "https://acme.atlassian.net/wiki",
		"port":                    8443.0,
		"verify_tls":              true,
		"oauth":                   map[string]any{"refresh_token": "rt-0123456789abcdefghij", "scopes": []any{"read:confluence", "write:confluence"}},
		"backup_codes":            []any{"code-one-1111", "code-two-22222222"},
	}
	e2eHeaders = []any{
		map[string]any{"key": "X-Api-Key", "value": "tok_0123456789abcdef-a-longer-SECRET"},
		map[string]any{"key": "X-Tenant", "value": "acme"},
	}
	e2eDefinition = map[string]any{
		"openapi": "3.0.3",
		"info":    map[string]any{"title": "Tickets", "description": "The ticket API", "version": "1.0.0"},
		"servers": []any{map[string]any{"url": "https://tickets.example.com/api"}},
		"paths": map[string]any{
			"/tickets/{id}": map[string]any{"get": map[string]any{
				"operationId": "get_ticket", "summary": "Get a ticket",
				"parameters": []any{map[string]any{"name": "id", "in": "path", "required": true, "schema": map[string]any{"type": "string"}}},
				"responses":  map[string]any{"200": map[string]any{"description": "The ticket"}},
			}},
		},
	}
)

// e2eTools returns node and npm, or skips (fails with QUARRY_E2E=1) when
// the browser test cannot run here.
func e2eTools(t *testing.T) (node, npm string) {
	t.Helper()
	var missing []string
	node, err := exec.LookPath("node")
	if err != nil {
		missing = append(missing, "node")
	}
	npm, err = exec.LookPath("npm")
	if err != nil {
		missing = append(missing, "npm")
	}
	if _, err := os.Stat(chromiumPath); err != nil {
		missing = append(missing, chromiumPath+" (apt-get install chromium)")
	}
	switch {
	case len(missing) > 0 && os.Getenv(e2eEnv) == "1":
		t.Fatalf("browser test: missing %s, and %s=1 requires it", strings.Join(missing, ", "), e2eEnv)
	case len(missing) > 0:
		t.Skipf("browser test skipped: missing %s (set %s=1 to make this a failure)", strings.Join(missing, ", "), e2eEnv)
	case testing.Short() && os.Getenv(e2eEnv) != "1":
		t.Skipf("browser test skipped in -short mode (set %s=1 to run it)", e2eEnv)
	}
	return node, npm
}

// npmCI installs web/e2e's pinned packages unless node_modules already has
// every one at its locked version (it is kept between runs, and ignored by
// git).
func npmCI(t *testing.T, npm, dir string) {
	t.Helper()
	var lock struct {
		Packages map[string]struct {
			Version string `json:"version"`
		} `json:"packages"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &lock); err != nil {
		t.Fatal(err)
	}
	installed := true
	for path, p := range lock.Packages {
		if path == "" {
			continue // the project itself
		}
		var have struct {
			Version string `json:"version"`
		}
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(path), "package.json"))
		if err != nil || json.Unmarshal(b, &have) != nil || have.Version != p.Version {
			installed = false
			break
		}
	}
	if installed {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "npm_config_update_notifier=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
	}
}

// e2eClient calls a test server with a key.
type e2eClient struct {
	t     *testing.T
	base  string
	token string
}

func (c e2eClient) do(method, path string, body any, out any) {
	c.t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			c.t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, r)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		c.t.Fatalf("%s %s = %d %s", method, path, res.StatusCode, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			c.t.Fatalf("%s %s: %v", method, path, err)
		}
	}
}

// TestAdminPageInChromium drives the admin page in headless Chromium
// (web/e2e/run.mjs) against a real server on SQLite holding 10,000
// cc-pairs, then checks through the API that the credential and the tool
// the page saved kept their secrets and took the edits.
func TestAdminPageInChromium(t *testing.T) {
	node, npm := e2eTools(t)
	e2eDir, err := filepath.Abs("e2e")
	if err != nil {
		t.Fatal(err)
	}
	npmCI(t, npm, e2eDir)

	ctx := context.Background()
	tmp := t.TempDir()
	db := storetest.OpenURL(t, "sqlite:"+filepath.Join(tmp, "quarry.db"), storetest.Key(t))
	start := time.Now()
	seeded, err := bench.Seed(ctx, db, bench.DefaultSeedSpec(e2ePairs), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("seeded %d cc-pairs in %v", e2ePairs, time.Since(start).Round(time.Millisecond))
	quiet := slog.New(slog.DiscardHandler)
	srv := httptest.NewServer(api.NewServer(api.Config{MaskCredentials: true, Version: "e2e"}, db, quiet))
	t.Cleanup(srv.Close)
	// A second server on the same database, with masking off, to read the
	// stored values back.
	plain := httptest.NewServer(api.NewServer(api.Config{MaskCredentials: false}, db, quiet))
	t.Cleanup(plain.Close)

	admin := e2eClient{t, srv.URL, seeded.AdminToken}
	var conn, cred struct {
		ID int64 `json:"id"`
	}
	admin.do("POST", "/manage/admin/connector", map[string]any{"name": "e2e-connector", "source": "confluence",
		"input_type": "poll", "connector_specific_config": map[string]any{"wiki_base": "https://acme.atlassian.net/wiki"}}, &conn)
	admin.do("POST", "/manage/credential", map[string]any{"name": "e2e-credential", "source": "confluence",
		"admin_public": true, "credential_json": e2eSecrets}, &cred)
	admin.do("PUT", fmt.Sprintf("/manage/connector/%d/credential/%d", conn.ID, cred.ID),
		// The first two seeded groups: the default groups Admin (1) and
		// Basic (2) come before them.
		map[string]any{"name": "e2e-pair", "access_type": "private", "groups": []int64{3, 4}}, nil)
	var tool struct {
		ID int64 `json:"id"`
	}
	admin.do("POST", "/admin/tool/custom", map[string]any{"name": "e2e_tool", "description": "Looks up tickets.",
		"definition": e2eDefinition, "custom_headers": e2eHeaders, "passthrough_auth": false}, &tool)

	// The screenshots go to the test's temporary directory, removed when it
	// ends, or to QUARRY_E2E_SHOTS to look at them afterwards.
	shots := os.Getenv("QUARRY_E2E_SHOTS")
	if shots == "" {
		shots = t.TempDir()
	} else if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithTimeout(ctx, 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(runCtx, node, filepath.Join(e2eDir, "run.mjs"), srv.URL, seeded.AdminToken, shots)
	cmd.Dir = e2eDir
	cmd.Env = append(os.Environ(), "QUARRY_CHROMIUM="+chromiumPath)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start = time.Now()
	err = cmd.Run()
	t.Logf("run.mjs took %v; screenshots in %s", time.Since(start).Round(time.Millisecond), shots)
	for line := range strings.Lines(stdout.String()) {
		t.Log(strings.TrimSpace(line))
	}
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) || runCtx.Err() != nil {
			t.Fatalf("run.mjs: %v\n%s", err, stderr.String())
		}
		t.Fatal(err)
	}

	// Through the API, unmasked: the edited values changed, nothing else.
	reader := e2eClient{t, plain.URL, seeded.AdminToken}
	var got struct {
		Name           string         `json:"name"`
		CredentialJSON map[string]any `json:"credential_json"`
	}
	reader.do("GET", fmt.Sprintf("/manage/credential/%d", cred.ID), nil, &got)
	if got.Name != "e2e-credential (edited)" {
		t.Errorf("credential name = %q, want the page's edit", got.Name)
	}
	want := map[string]any{}
	for k, v := range e2eSecrets {
		want[k] = v
	}
	want["wiki_base"] = "https://acme.atlassian.net/wiki-v2"
	if !reflect.DeepEqual(got.CredentialJSON, want) {
		t.Errorf("stored credential_json after the page saved it:\n got %v\nwant %v", got.CredentialJSON, want)
	}
	var gotTool struct {
		Description   string `json:"description"`
		CustomHeaders []any  `json:"custom_headers"`
		Definition    any    `json:"definition"`
	}
	reader.do("GET", fmt.Sprintf("/tool/%d", tool.ID), nil, &gotTool)
	if gotTool.Description != "Looks up tickets, and their history." {
		t.Errorf("tool description = %q, want the page's edit", gotTool.Description)
	}
	if !reflect.DeepEqual(gotTool.CustomHeaders, e2eHeaders) {
		t.Errorf("stored tool headers = %v, want them unchanged %v", gotTool.CustomHeaders, e2eHeaders)
	}
	if !reflect.DeepEqual(gotTool.Definition, e2eDefinition) {
		t.Errorf("stored definition changed: %v", gotTool.Definition)
	}
}

// runStory runs the story script (in dir, web/e2e) with node against the
// console at url, with its args after the screenshots' directory
// (QUARRY_E2E_SHOTS, or a temporary one), and fails t when it fails; its
// output is logged.
func runStory(ctx context.Context, t *testing.T, node, dir, script, url string, args ...string) {
	t.Helper()
	shots := os.Getenv("QUARRY_E2E_SHOTS")
	if shots == "" {
		shots = t.TempDir()
	} else if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithTimeout(ctx, 4*time.Minute)
	defer stop()
	cmd := exec.CommandContext(runCtx, node, append([]string{filepath.Join(dir, script), url, shots}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "QUARRY_CHROMIUM="+chromiumPath)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	t.Logf("%s took %v; screenshots in %s", script, time.Since(start).Round(time.Millisecond), shots)
	for line := range strings.Lines(stdout.String()) {
		t.Log(strings.TrimSpace(line))
	}
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) || runCtx.Err() != nil {
			t.Fatalf("%s: %v\n%s", script, err, stderr.String())
		}
		t.Fatal(err)
	}
}

// storyDeployment readies a story in Chromium: node with web/e2e's
// packages (in dir), and a new SQLite deployment as quarry serve
// bootstraps it (its admin key), with a basic person's key named
// "reader".
func storyDeployment(t *testing.T) (node, dir string, db *store.DB, admin, basic string) {
	t.Helper()
	node, npm := e2eTools(t)
	dir, err := filepath.Abs("e2e")
	if err != nil {
		t.Fatal(err)
	}
	npmCI(t, npm, dir)
	db = storetest.OpenURL(t, "sqlite:"+filepath.Join(t.TempDir(), "quarry.db"), storetest.Key(t))
	if admin, err = db.Bootstrap(context.Background()); err != nil || admin == "" {
		t.Fatalf("bootstrap: %q, %v", admin, err)
	}
	name := "reader"
	if _, basic, err = db.CreateAPIKey(context.Background(), nil, &name, quarry.RoleBasic); err != nil {
		t.Fatal(err)
	}
	return node, dir, db, admin, basic
}
