package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry/internal/syncbuf"
)

// The operations tests of quarry serve (contract section 7): time-outs
// and draining. They run "quarry serve" in-process, through run, on a
// SQLite database of their own, as main would; cancelling run's context is
// what SIGTERM does in main (signal.NotifyContext).

// opsServed is a running "quarry serve".
type opsServed struct {
	url, addr, token string
	stop             context.CancelFunc // SIGTERM
	done             chan struct{}      // closed when run returns
	err              error              // what run returned, once done
	stderr           *syncbuf.Buffer
}

// opsServe starts "quarry serve" with the given environment (on top of a fresh
// database and a free port) and waits until it listens.
func opsServe(t *testing.T, vars map[string]string) *opsServed {
	t.Helper()
	env := map[string]string{
		"QUARRY_DATABASE_URL": "sqlite:" + filepath.Join(t.TempDir(), "quarry.db"),
		"QUARRY_ADDR":         "127.0.0.1:0",
		"QUARRY_LOG_FORMAT":   "json",
	}
	for k, v := range vars {
		env[k] = v
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &opsServed{stop: cancel, done: make(chan struct{}), stderr: &syncbuf.Buffer{}}
	stdout := &syncbuf.Buffer{}
	go func() {
		s.err = run(ctx, []string{"serve"}, func(k string) string { return env[k] }, stdout, s.stderr)
		close(s.done)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			t.Error("quarry serve did not stop")
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for s.url == "" {
		for line := range strings.Lines(s.stderr.String()) {
			var entry struct{ Msg, URL string }
			if json.Unmarshal([]byte(line), &entry) == nil && entry.Msg == "serving" {
				s.url = entry.URL
			}
		}
		select {
		case <-s.done:
			t.Fatalf("quarry serve ended: %v\n%s", s.err, s.stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("quarry serve did not start:\n%s", s.stderr)
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.addr = strings.TrimPrefix(s.url, "http://")
	s.token = regexp.MustCompile(`qry_[A-Za-z0-9_-]{43}`).FindString(stdout.String())
	if s.token == "" {
		t.Fatalf("no bootstrap key in the output:\n%s", stdout)
	}
	return s
}

// opsDial opens a raw connection to the server.
func (s *opsServed) opsDial(t *testing.T) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// opsClosedWithin reports how long the server took to close c (reading until
// EOF or an error), failing t if it took longer than limit. It returns what
// the server sent.
func opsClosedWithin(t *testing.T, c net.Conn, limit time.Duration) (time.Duration, string) {
	t.Helper()
	start := time.Now()
	c.SetReadDeadline(start.Add(limit))
	b, err := io.ReadAll(c)
	took := time.Since(start)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the server kept the connection open for %v", limit)
	}
	return took, string(b)
}

// TestSlowClientsAreCut: a client that trickles its headers is cut at the
// read-header time-out, one that trickles its body at the read time-out,
// and an idle keep-alive connection at the idle time-out; meanwhile the
// server serves others.
func TestSlowClientsAreCut(t *testing.T) {
	s := opsServe(t, map[string]string{
		"QUARRY_READ_HEADER_TIMEOUT": "300ms",
		"QUARRY_READ_TIMEOUT":        "800ms",
		"QUARRY_IDLE_TIMEOUT":        "400ms",
	})

	t.Run("headers", func(t *testing.T) {
		c := s.opsDial(t)
		fmt.Fprint(c, "GET /health HTTP/1.1\r\nHost: quarry\r\n")
		stop := make(chan struct{})
		defer close(stop)
		go func() { // One more header line every 50ms, never the end.
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				case <-time.After(50 * time.Millisecond):
				}
				if _, err := fmt.Fprintf(c, "X-Slow-%d: x\r\n", i); err != nil {
					return
				}
			}
		}()
		// Others are served meanwhile.
		res, err := http.Get(s.url + "/health")
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("GET /health beside a slow client: %v %v", res, err)
		}
		res.Body.Close()
		took, got := opsClosedWithin(t, c, 3*time.Second)
		if took < 200*time.Millisecond || got != "" {
			t.Errorf("cut after %v having sent %q; want about 300ms and nothing", took, got)
		}
	})

	t.Run("body", func(t *testing.T) {
		c := s.opsDial(t)
		fmt.Fprintf(c, "PATCH /manage/credential/1 HTTP/1.1\r\nHost: quarry\r\nAuthorization: Bearer %s\r\n"+
			"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{", s.token)
		took, _ := opsClosedWithin(t, c, 3*time.Second)
		if took > 2*time.Second {
			t.Errorf("a stalled body held the connection %v, want about the 800ms read time-out", took)
		}
	})

	t.Run("idle", func(t *testing.T) {
		c := s.opsDial(t)
		fmt.Fprint(c, "GET /health HTTP/1.1\r\nHost: quarry\r\n\r\n")
		r := bufio.NewReader(c)
		res, err := http.ReadResponse(r, nil)
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("GET /health: %v %v", res, err)
		}
		io.Copy(io.Discard, res.Body)
		took, _ := opsClosedWithin(t, c, 3*time.Second)
		if took < 300*time.Millisecond || took > 2*time.Second {
			t.Errorf("idle connection closed after %v, want about 400ms", took)
		}
	})
}

// TestShutdownDrains: on SIGTERM the server stops accepting connections at
// once, lets the request in flight finish (a PATCH whose body is still
// arriving), answers it in full, and then run returns without error.
func TestShutdownDrains(t *testing.T) {
	s := opsServe(t, map[string]string{"QUARRY_SHUTDOWN_GRACE": "10s"})
	req, _ := http.NewRequest("POST", s.url+"/manage/credential",
		strings.NewReader(`{"credential_json": {"k": "v"}, "admin_public": true, "source": "confluence"}`))
	req.Header.Set("Authorization", "Bearer "+s.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("creating a credential: %v %v", res, err)
	}
	var cred struct{ ID int64 }
	json.NewDecoder(res.Body).Decode(&cred)
	res.Body.Close()

	body := `{"name": "renamed while shutting down"}`
	c := s.opsDial(t)
	fmt.Fprintf(c, "PATCH /manage/credential/%d HTTP/1.1\r\nHost: quarry\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", cred.ID, s.token, len(body), body[:10])
	time.Sleep(100 * time.Millisecond) // The request is in flight.

	s.stop() // SIGTERM
	deadline := time.Now().Add(5 * time.Second)
	for {
		nc, err := net.DialTimeout("tcp", s.addr, time.Second)
		if err != nil {
			break // New connections are refused.
		}
		nc.Close()
		if time.Now().After(deadline) {
			t.Fatal("the server still accepts connections 5s after SIGTERM")
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	select {
	case <-s.done:
		t.Fatalf("run returned with a request in flight: %v", s.err)
	default:
	}

	fmt.Fprint(c, body[10:])
	res, err = http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("the request in flight got no response: %v", err)
	}
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 || !strings.Contains(string(b), `"name":"renamed while shutting down"`) {
		t.Errorf("the request in flight got %d %s", res.StatusCode, b)
	}
	select {
	case <-s.done:
		if s.err != nil {
			t.Errorf("run: %v", s.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("run did not return after the last request")
	}
	for _, msg := range []string{`"msg":"shutting down: draining requests in flight"`, `"msg":"stopped"`} {
		if !strings.Contains(s.stderr.String(), msg) {
			t.Errorf("the log lacks %s:\n%s", msg, s.stderr)
		}
	}
}

// TestShutdownGrace: a request that outlasts the grace period does not
// hold the process: run returns, with an error, once the grace is over, and
// the straggler's connection is closed.
func TestShutdownGrace(t *testing.T) {
	s := opsServe(t, map[string]string{"QUARRY_SHUTDOWN_GRACE": "300ms"})
	c := s.opsDial(t)
	fmt.Fprintf(c, "PATCH /manage/credential/1 HTTP/1.1\r\nHost: quarry\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{", s.token)
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	s.stop()
	select {
	case <-s.done:
		err := s.err
		if took := time.Since(start); took < 250*time.Millisecond || took > 3*time.Second {
			t.Errorf("run returned %v after SIGTERM, want about the 300ms grace", took)
		}
		if err == nil || !strings.Contains(err.Error(), "shutting down") {
			t.Errorf("run: %v, want a shutting-down error", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("run did not return 5s after SIGTERM with a 300ms grace")
	}
	if took, _ := opsClosedWithin(t, c, 3*time.Second); took > 2*time.Second {
		t.Errorf("the straggler's connection stayed open %v", took)
	}
}
