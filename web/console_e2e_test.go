package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api"
	"github.com/quarryhq/quarry/internal/mcptest"
	"github.com/quarryhq/quarry/store/storetest"
	"github.com/quarryhq/quarry/toolrun"
)

// TestConsoleInChromium tells the admin console's story in headless
// Chromium (web/e2e/console.mjs), from an empty database: the first person
// registers and is the admin; the admin creates a connector, a credential
// and a pair, a group, invites a person and makes them the group's
// curator; the curator signs in and sees only that group's pairs; the
// admin manages API keys, tools, MCP servers (two, on loopback), people,
// makes a personal access token an MCP client lists tools with, makes a
// SCIM token with which the company's directory provisions a person and a
// group (shown as the directory's, read-only where it decides), and reads
// the story in the audit log. Search is the start page: a document pushed
// through Onyx's ingestion API is found and opened from it, and not by a
// person who may not see its pair. On the way, a pair is indexed: run now,
// canceled, re-indexed from the beginning, run by a worker registered with
// a registration token the admin makes, then revoked. Every view is
// checked with axe-core and shot at 1280 and 390 px.
// Then the store is asked what the page did.
func TestConsoleInChromium(t *testing.T) {
	node, npm := e2eTools(t)
	e2eDir, err := filepath.Abs("e2e")
	if err != nil {
		t.Fatal(err)
	}
	npmCI(t, npm, e2eDir)

	db := storetest.OpenURL(t, "sqlite:"+filepath.Join(t.TempDir(), "quarry.db"), storetest.Key(t))
	// The MCP servers the story adds run on loopback, which the egress
	// guard lets Quarry reach here only.
	loopback, hosts, err := toolrun.ParseAllow("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	handler := api.NewServer(api.Config{MaskCredentials: true, Version: "e2e", SignIn: api.SignInConfig{
		LocalAccounts: true, Registration: quarry.RegistrationPolicy{Mode: quarry.RegistrationInvite},
	}, ToolEgress: toolrun.Policy{Allow: loopback, AllowHosts: hosts}}, db, slog.New(slog.DiscardHandler))
	// The test server runs no scheduler (quarry serve does, every few
	// seconds): the story asks for a pass when it needs one, so that what
	// it sees does not depend on timing.
	mux := http.NewServeMux()
	mux.Handle("/", handler)
	mux.HandleFunc("POST /_e2e/schedule", func(w http.ResponseWriter, r *http.Request) {
		res, err := db.Schedule(r.Context())
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]int{"created": res.Created, "expired": res.Expired, "prunes": res.Prunes})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	open := mcptest.Start(t, mcptest.Options{})
	keyed := mcptest.Start(t, mcptest.Options{Header: "X-Api-Key", Values: map[string]string{"ada-key": "ada"}})

	shots := os.Getenv("QUARRY_E2E_SHOTS")
	if shots == "" {
		shots = t.TempDir()
	} else if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(e2eDir, "console.mjs"), srv.URL, shots, open.URL, keyed.URL)
	cmd.Dir = e2eDir
	cmd.Env = append(os.Environ(), "QUARRY_CHROMIUM="+chromiumPath)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err = cmd.Run()
	t.Logf("console.mjs took %v; screenshots in %s", time.Since(start).Round(time.Millisecond), shots)
	for line := range strings.Lines(stdout.String()) {
		t.Log(strings.TrimSpace(line))
	}
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) || ctx.Err() != nil {
			t.Fatalf("console.mjs: %v\n%s", err, stderr.String())
		}
		t.Fatal(err)
	}

	// The people, as the store has them.
	people, _, err := db.People(context.Background(), quarry.UserFilter{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range people {
		got = append(got, fmt.Sprintf("%s %s %v", p.Email, p.Role, p.IsActive))
	}
	want := []string{"ada@example.com admin true", "cy@example.com curator true", "dan@example.com basic false"}
	if !slices.Equal(got, want) {
		t.Errorf("people after the story:\n got %v\nwant %v", got, want)
	}
	// The story, as the audit log has it: the admin's changes, oldest first.
	actor := "ADA@example.com"
	events, total, err := db.AuditEvents(context.Background(), quarry.AuditFilter{Actor: &actor, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for i := len(events) - 1; i >= 0; i-- {
		actions = append(actions, events[i].Action)
	}
	if int(total) != len(events) {
		t.Errorf("total %d, %d events", total, len(events))
	}
	story := []string{"user.register", "connector.create", "credential.create", "cc_pair.create", "cc_pair.update",
		"user_group.create", "user.invite", "user_group.update", "user_group.set_curator", "api_key.create", "tool.create",
		"mcp_server.create", "mcp_credentials.save", "pat.create", "pat.revoke",
		"cc_pair.run_once", "cc_pair.prune", "worker_registration.create", "worker.revoke", "worker_registration.revoke", "document.ingest"}
	for _, a := range story {
		if !slices.Contains(actions, a) {
			t.Errorf("the audit log has no %s by the admin: %v", a, actions)
		}
	}
}
