package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

func TestMakeBuild(t *testing.T) {
	vcs := &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261122023711-047f9bba6c26+dirty"}, Settings: []debug.BuildSetting{
		{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "047f9bba6c2692834fbbf4d85daa4cc16441a2dd"},
		{Key: "vcs.time", Value: "2026-11-22T02:37:11Z"}, {Key: "vcs.modified", Value: "true"}}}
	devel := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}
	at := time.Date(2026, 11, 22, 2, 37, 11, 0, time.UTC)
	for _, tt := range []struct {
		name                                   string
		info                                   *debug.BuildInfo
		version, revision, revisionTime, dirty string
		want                                   build
	}{
		{"go build in a checkout", vcs, "dev", "", "", "",
			build{version: "v0.0.0-20261122023711-047f9bba6c26+dirty", revision: "047f9bba6c2692834fbbf4d85daa4cc16441a2dd", time: at, modified: true}},
		{"release label", vcs, "v1.4.0", "", "", "",
			build{version: "v1.4.0", revision: "047f9bba6c2692834fbbf4d85daa4cc16441a2dd", time: at, modified: true}},
		{"no VCS information", devel, "dev", "", "", "", build{version: "dev"}},
		{"no build information", nil, "dev", "", "", "", build{version: "dev"}},
		{"everything from -ldflags", vcs, "v1.4.1", "1111111111111111111111111111111111111111", "2026-12-01T10:00:00Z", "",
			build{version: "v1.4.1", revision: "1111111111111111111111111111111111111111", time: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)}},
	} {
		tt.want.goVersion = runtime.Version()
		got := makeBuild(tt.info, tt.version, tt.revision, tt.revisionTime, tt.dirty)
		if got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

// goBinary returns the go command that runs the tests.
func goBinary() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

// TestVersionOfARelease builds the binary as docs/operations.md says a
// release is built (but for -trimpath, which would compile everything
// again) and checks that "quarry version" and GET /version tell
// what the build was given.
func TestVersionOfARelease(t *testing.T) {
	quarryBinary(t) // Skips with -short; warms the build cache.
	bin := filepath.Join(t.TempDir(), "quarry")
	ldflags := "-X main.version=v1.4.0 -X main.revision=047f9bba6c2692834fbbf4d85daa4cc16441a2dd " +
		"-X main.revisionTime=2026-11-22T02:37:11Z -X main.modified=true"
	if out, err := exec.Command(goBinary(), "build", "-ldflags", ldflags, "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := "quarry v1.4.0\nrevision 047f9bba6c2692834fbbf4d85daa4cc16441a2dd (modified)\ncommitted 2026-11-22T02:37:11Z\n" +
		fmt.Sprintf("built with %s for %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if string(out) != want {
		t.Errorf("quarry version:\n%s\nwant:\n%s", out, want)
	}

	addr := procAddr(t)
	p := &procServer{t: t, base: "http://" + addr, exited: make(chan struct{})}
	p.cmd = exec.Command(bin, "serve", "-addr", addr)
	p.cmd.Env = processEnv(map[string]string{"QUARRY_DATABASE_URL": "sqlite:" + filepath.Join(t.TempDir(), "q.db")})
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(p.kill)
	if err := p.ready(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	res, err := http.Get(p.base + "/version")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var got map[string]any
	if err := json.NewDecoder(res.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	wantBody := map[string]any{"version": "v1.4.0", "revision": "047f9bba6c2692834fbbf4d85daa4cc16441a2dd",
		"revision_time": "2026-11-22T02:37:11Z", "modified": true, "go_version": runtime.Version()}
	if fmt.Sprint(got) != fmt.Sprint(wantBody) {
		t.Errorf("GET /version = %v, want %v", got, wantBody)
	}
	if !strings.Contains(p.stderr.String(), `"version":"v1.4.0","revision":"047f9bba6c2692834fbbf4d85daa4cc16441a2dd"`) {
		t.Errorf("the serving log line does not name the build:\n%s", p.stderr.String())
	}
}
