package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quarryhq/quarry/internal/syncbuf"
	"github.com/quarryhq/quarry/store"
)

// The tests of this file run the real binary, built once per test binary,
// as separate processes that they kill.

var binary struct {
	once      sync.Once
	dir, path string
	err       error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binary.dir != "" {
		os.RemoveAll(binary.dir)
	}
	os.Exit(code)
}

// quarryBinary builds the quarry binary on first use and returns its path.
func quarryBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: does not build and run the quarry binary")
	}
	binary.once.Do(func() {
		if binary.dir, binary.err = os.MkdirTemp("", "quarry-test-bin-"); binary.err != nil {
			return
		}
		gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
		if p, err := exec.LookPath("go"); err == nil {
			gobin = p
		}
		binary.path = filepath.Join(binary.dir, "quarry")
		out, err := exec.Command(gobin, "build", "-o", binary.path, ".").CombinedOutput()
		if err != nil {
			binary.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binary.err != nil {
		t.Fatal(binary.err)
	}
	return binary.path
}

// processEnv is the test's environment without QUARRY_ variables, plus vars.
func processEnv(vars map[string]string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "QUARRY_") {
			env = append(env, kv)
		}
	}
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	return env
}

// procCommand runs a command of the binary to its end and returns its
// standard output.
func procCommand(t *testing.T, vars map[string]string, args ...string) string {
	t.Helper()
	cmd := exec.Command(quarryBinary(t), args...)
	cmd.Env = processEnv(vars)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("quarry %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

// createAPIKey makes an admin key with the CLI and returns it.
func procAPIKey(t *testing.T, vars map[string]string) string {
	t.Helper()
	out := strings.Split(strings.TrimSpace(procCommand(t, vars, "create-api-key", "-name", "test", "-role", "admin")), "\n")
	return out[len(out)-1]
}

// server is a running quarry serve process.
type procServer struct {
	t              *testing.T
	cmd            *exec.Cmd
	base           string
	stdout, stderr syncbuf.Buffer
	exited         chan struct{}
}

// procAddr returns a loopback address with a port free a moment ago.
func procAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// launch starts quarry serve without waiting for it.
func launchServe(t *testing.T, vars map[string]string) *procServer {
	t.Helper()
	addr := procAddr(t)
	s := &procServer{t: t, base: "http://" + addr, exited: make(chan struct{})}
	s.cmd = exec.Command(quarryBinary(t), "serve", "-addr", addr)
	s.cmd.Env = processEnv(vars)
	s.cmd.Stdout, s.cmd.Stderr = &s.stdout, &s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.cmd.Wait(); close(s.exited) }()
	t.Cleanup(s.kill)
	return s
}

// ready waits until the server serves.
func (s *procServer) ready(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	c := &http.Client{Timeout: time.Second}
	for time.Now().Before(deadline) {
		select {
		case <-s.exited:
			return fmt.Errorf("quarry serve exited: %s", s.stderr.String())
		default:
		}
		// The server listens once it has migrated and bootstrapped; /ready
		// then answers 200, or 503 while the database is out of reach.
		if res, err := c.Get(s.base + "/ready"); err == nil {
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusServiceUnavailable {
				return nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("quarry serve not ready after %s: %s", timeout, s.stderr.String())
}

// startServe starts quarry serve and waits until it is ready, trying
// another port if the one it picked was taken meanwhile.
func startServe(t *testing.T, vars map[string]string) *procServer {
	t.Helper()
	for attempt := 0; ; attempt++ {
		s := launchServe(t, vars)
		err := s.ready(30 * time.Second)
		if err == nil {
			return s
		}
		s.kill()
		if attempt == 2 || !strings.Contains(err.Error(), "address already in use") {
			t.Fatal(err)
		}
	}
}

// kill ends the process with SIGKILL and waits for it.
func (s *procServer) kill() {
	select {
	case <-s.exited:
		return
	default:
	}
	s.cmd.Process.Kill()
	<-s.exited
}

// client calls a server's API with a token.
type procClient struct {
	http  *http.Client
	token string
}

func newProcClient(token string) *procClient {
	return &procClient{token: token, http: &http.Client{Timeout: 20 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: 32, DisableCompression: true}}}
}

// reply is a response.
type procReply struct {
	status int
	header http.Header
	body   []byte
}

// version returns the version of the ETag header, or -1.
func (r *procReply) version() int64 {
	v, err := strconv.ParseInt(strings.Trim(r.header.Get("ETag"), `"`), 10, 64)
	if err != nil {
		return -1
	}
	return v
}

// do sends a request; body, if not nil, is encoded as JSON. headers are
// name, value pairs.
func (c *procClient) do(base, method, path string, body any, headers ...string) (*procReply, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, base+path, r)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	return &procReply{status: res.StatusCode, header: res.Header, body: b}, nil
}

// must sends a request that must succeed and decodes its body into v.
func (c *procClient) must(t *testing.T, base, method, path string, body, v any, headers ...string) *procReply {
	t.Helper()
	r, err := c.do(base, method, path, body, headers...)
	return c.mustBe(t, r, err, method, path, v)
}

// mustBe fails the test unless r is a 2xx reply, decoded into v if not nil.
func (c *procClient) mustBe(t *testing.T, r *procReply, err error, method, path string, v any) *procReply {
	t.Helper()
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	if r.status/100 != 2 {
		t.Fatalf("%s %s: %d %s", method, path, r.status, r.body)
	}
	if v != nil {
		if err := json.Unmarshal(r.body, v); err != nil {
			t.Fatalf("%s %s: decoding %s: %v", method, path, r.body, err)
		}
	}
	return r
}

// procSQL opens the database at url for the test's own queries.
func procSQL(t *testing.T, url string) *sql.DB {
	t.Helper()
	dialect, source, err := store.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	driver := "pgx"
	if dialect == store.SQLite {
		driver, source = "sqlite", "file:"+source+"?_pragma=busy_timeout(10000)"
	}
	db, err := sql.Open(driver, source)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
