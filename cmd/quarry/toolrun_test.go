package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestToolSettings(t *testing.T) {
	env := &environment{getenv: envOf(nil), stdout: io.Discard, stderr: io.Discard}
	cfg, _, err := loadConfig("serve", nil, env, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.ToolEgress
	if p.ConnectTimeout != 5*time.Second || p.Timeout != 30*time.Second || p.MaxBytes != 1<<20 || len(p.Allow) != 0 || len(p.AllowHosts) != 0 ||
		p.MaxRunsPerCaller != 8 || p.MaxRunsPerTool != 64 {
		t.Errorf("defaults %+v", p)
	}
	env.getenv = envOf(map[string]string{"QUARRY_TOOL_EGRESS_ALLOW": "10.0.0.0/8, api.internal", "QUARRY_TOOL_TIMEOUT": "5s"})
	cfg, _, err = loadConfig("serve", []string{"-tool-max-bytes", "4096", "-tool-connect-timeout", "2s", "-tool-max-runs-per-tool", "3"}, env, nil)
	if err != nil {
		t.Fatal(err)
	}
	p = cfg.ToolEgress
	if !slices.Equal(p.Allow, []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}) || !slices.Equal(p.AllowHosts, []string{"api.internal"}) ||
		p.Timeout != 5*time.Second || p.ConnectTimeout != 2*time.Second || p.MaxBytes != 4096 || p.MaxRunsPerTool != 3 || p.MaxRunsPerCaller != 8 {
		t.Errorf("set %+v", p)
	}
	for _, bad := range []map[string]string{{"QUARRY_TOOL_EGRESS_ALLOW": "10.0.0.0/33"}, {"QUARRY_TOOL_TIMEOUT": "0s"},
		{"QUARRY_TOOL_MAX_BYTES": "-1"}, {"QUARRY_TOOL_CONNECT_TIMEOUT": "soon"}, {"QUARRY_TOOL_MAX_RUNS_PER_CALLER": "0"},
		{"QUARRY_TOOL_MAX_RUNS_PER_TOOL": "10000000"}} {
		env.getenv = envOf(bad)
		if _, _, err := loadConfig("serve", nil, env, nil); err == nil {
			t.Errorf("loadConfig accepted %v", bad)
		}
	}
}

// TestServeToolEgress runs a tool through a quarry serve process: a
// loopback server is refused by default, and called once
// QUARRY_TOOL_EGRESS_ALLOW opens it.
func TestServeToolEgress(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"pong":true}`))
	}))
	defer up.Close()
	definition := `{"openapi":"3.0.3","info":{"title":"Ping","description":"Pings","version":"1"},"servers":[{"url":"` + up.URL + `"}],
		"paths":{"/ping":{"get":{"operationId":"ping","summary":"Ping","responses":{"200":{"description":"OK"}}}}}}`
	db := "sqlite:" + filepath.Join(t.TempDir(), "q.db")
	for _, tt := range []struct {
		allow  string
		status int
		want   string
	}{
		{"", 403, "Quarry does not call 127.0.0.1: it is a loopback address"},
		{"127.0.0.1", 200, `"body":{"pong":true}`},
	} {
		t.Run(tt.allow, func(t *testing.T) {
			vars := map[string]string{"QUARRY_DATABASE_URL": db, "QUARRY_TOOL_EGRESS_ALLOW": tt.allow}
			key := procAPIKey(t, vars)
			s := startServe(t, vars)
			c := newProcClient(key)
			var tool struct {
				ID int64 `json:"id"`
			}
			c.must(t, s.base, "POST", "/admin/tool/custom", map[string]any{"name": "ping", "definition": rawJSON(definition)}, &tool)
			r, err := c.do(s.base, "POST", fmt.Sprintf("/tool/%d/run", tool.ID), map[string]any{"method": "ping"})
			if err != nil {
				t.Fatal(err)
			}
			if r.status != tt.status || !strings.Contains(string(r.body), tt.want) {
				t.Errorf("run: %d %s, want %d with %q", r.status, r.body, tt.status, tt.want)
			}
			s.kill()
		})
	}
}

// rawJSON is JSON text kept as it is when encoded.
type rawJSON string

func (r rawJSON) MarshalJSON() ([]byte, error) { return []byte(r), nil }
