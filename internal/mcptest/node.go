package mcptest

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry/internal/npmtest"
)

// E2EEnv makes a test that needs node a failure, rather than a skip, when
// node or npm is missing. CI sets it.
const E2EEnv = npmtest.E2EEnv

// Dir returns the directory of the npm packages (npm/), with its
// node_modules installed at the locked versions, and node's path. Without
// node or npm the test skips (fails with QUARRY_E2E=1).
func Dir(t testing.TB) (dir, node string) {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir = filepath.Join(filepath.Dir(file), "npm")
	return dir, npmtest.Install(t, dir)
}

// freePort returns a loopback port nobody listens on (yet).
func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startNode runs node with args in the npm directory and env, stops it
// with the test, and waits until each of ports accepts connections.
func startNode(t testing.TB, env []string, ports []int, args ...string) {
	t.Helper()
	dir, node := Dir(t)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	deadline := time.Now().Add(30 * time.Second)
	for _, port := range ports {
		for {
			c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
			if err == nil {
				c.Close()
				break
			}
			select {
			case <-done:
				t.Fatalf("node %s exited: %s", strings.Join(args, " "), out.String())
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("node %s does not listen on %d: %s", strings.Join(args, " "), port, out.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// StartEverything starts npm's @modelcontextprotocol/server-everything in
// its Streamable HTTP mode and returns its MCP endpoint's URL.
func StartEverything(t testing.TB) string {
	t.Helper()
	port := freePort(t)
	startNode(t, []string{"PORT=" + strconv.Itoa(port)}, []int{port},
		"node_modules/@modelcontextprotocol/server-everything/dist/index.js", "streamableHttp")
	return "http://127.0.0.1:" + strconv.Itoa(port) + "/mcp"
}

// StartOAuthServer starts the TypeScript SDK's example MCP server behind
// its example OAuth authorization server (which registers clients
// dynamically, RFC 7591, approves every authorization request without a
// login page, and, being strict, accepts only tokens issued for this
// server as the resource, RFC 8707). It returns the MCP endpoint's URL,
// on localhost as the example insists.
func StartOAuthServer(t testing.TB) string {
	t.Helper()
	mcpPort, authPort := freePort(t), freePort(t)
	startNode(t, []string{"MCP_PORT=" + strconv.Itoa(mcpPort), "MCP_AUTH_PORT=" + strconv.Itoa(authPort)},
		[]int{mcpPort, authPort}, "node_modules/@modelcontextprotocol/sdk/dist/esm/examples/server/simpleStreamableHttp.js", "--oauth", "--oauth-strict")
	return "http://localhost:" + strconv.Itoa(mcpPort) + "/mcp"
}

// RunScript runs node with a script of the npm directory (or a package's
// binary given by its path there) and args, and returns its standard
// output; a failure fails the test with both outputs.
func RunScript(t testing.TB, timeout time.Duration, script string, args ...string) string {
	t.Helper()
	dir, _ := Dir(t)
	return runIn(t, timeout, dir, script, args...)
}

// Inspector runs the inspector's CLI (@modelcontextprotocol/inspector-cli)
// with args and returns its standard output. It runs in the CLI's own
// directory: the CLI looks for its package.json relative to the working
// directory (and imports it relative to its module), which only agree
// there.
func Inspector(t testing.TB, timeout time.Duration, args ...string) string {
	t.Helper()
	dir, _ := Dir(t)
	build := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "inspector-cli", "build")
	return runIn(t, timeout, build, filepath.Join(build, "index.js"), args...)
}

func runIn(t testing.TB, timeout time.Duration, dir, script string, args ...string) string {
	t.Helper()
	_, node := Dir(t)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{script}, args...)...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node %s: %v\nstdout: %s\nstderr: %s", script, err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// Check is one check of a conformance scenario.
type Check struct {
	ID           string `json:"id"`
	Status       string `json:"status"` // SUCCESS, FAILURE, WARNING, INFO
	ErrorMessage string `json:"errorMessage"`
}

// Conformance runs the server scenario of @modelcontextprotocol/conformance
// against the MCP endpoint at url and returns its checks.
func Conformance(t testing.TB, url, scenario string) []Check {
	t.Helper()
	dir, node := Dir(t)
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(dir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js"),
		"server", "--url", url, "--scenario", scenario, "-o", out)
	cmd.Dir = dir
	log, _ := cmd.CombinedOutput() // A failing scenario exits with 1; its checks say why.
	matches, _ := filepath.Glob(filepath.Join(out, "*", "checks.json"))
	if len(matches) != 1 {
		t.Fatalf("conformance %s wrote no checks: %s", scenario, log)
	}
	b, err := os.ReadFile(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	var checks []Check
	if err := json.Unmarshal(b, &checks); err != nil {
		t.Fatal(err)
	}
	return checks
}
