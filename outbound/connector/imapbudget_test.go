package connector

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quarryhq/quarry/outbound/connector/imaptest"
)

// hostileFlood is how much a hostile IMAP server sends of its endless
// answer before it gives up: 64 times the limit the tests set.
const hostileFlood = 64 << 20

// startHostileIMAP starts an IMAP server on 127.0.0.1 until the test
// ends, with a mailbox INBOX of one message, that makes one answer
// endless: "greeting" (in plain text, before STARTTLS), "list" (the
// mailboxes, after the login) or "message" (the message's content, a
// quoted string whose lines never end it). It speaks implicit TLS, but
// for "greeting". It returns its port and its certificate's authority.
func startHostileIMAP(t *testing.T, flood string) (port int, ca string) {
	t.Helper()
	certPEM, keyPEM := imaptest.Certificate(t)
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				var rw io.ReadWriter = conn
				if flood != "greeting" {
					tc := tls.Server(conn, &tls.Config{Certificates: []tls.Certificate{cert}})
					if tc.Handshake() != nil {
						return
					}
					rw = tc
				}
				hostileSession(rw, flood)
			}()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port, string(certPEM)
}

// hostileSession answers the commands of one connection.
func hostileSession(rw io.ReadWriter, flood string) {
	endless := func(prefix, line string) {
		io.WriteString(rw, prefix)
		buf := bytes.Repeat([]byte(line), 32<<10/len(line))
		for sent := 0; sent < hostileFlood; sent += len(buf) {
			if _, err := rw.Write(buf); err != nil {
				return
			}
		}
	}
	if flood == "greeting" {
		endless("* OK ", "a")
		return
	}
	io.WriteString(rw, "* OK [CAPABILITY IMAP4rev1 AUTH=PLAIN] ready\r\n")
	br := bufio.NewReader(rw)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return
		}
		f := strings.Fields(strings.ToUpper(line))
		if len(f) < 2 {
			return
		}
		tag, cmd := f[0], f[1]
		if cmd == "UID" && len(f) > 2 {
			cmd += " " + f[2]
		}
		switch {
		case cmd == "CAPABILITY":
			io.WriteString(rw, "* CAPABILITY IMAP4rev1 AUTH=PLAIN\r\n"+tag+" OK done\r\n")
		case cmd == "LOGIN":
			io.WriteString(rw, tag+" OK logged in\r\n")
		case cmd == "LIST" && flood == "list":
			endless(`* LIST () "/" `, "a")
			return
		case cmd == "LIST":
			io.WriteString(rw, "* LIST () \"/\" INBOX\r\n"+tag+" OK done\r\n")
		case cmd == "EXAMINE" || cmd == "SELECT":
			io.WriteString(rw, "* 1 EXISTS\r\n* OK [UIDVALIDITY 7] v\r\n* OK [UIDNEXT 2] n\r\n"+tag+" OK [READ-ONLY] done\r\n")
		case cmd == "UID SEARCH":
			io.WriteString(rw, "* SEARCH 1\r\n"+tag+" OK done\r\n")
		case cmd == "UID FETCH" && strings.Contains(line, "BODY"):
			endless(`* 1 FETCH (UID 1 BODY[] "`, strings.Repeat("a", 78)+"\r\n")
			return
		case cmd == "UID FETCH":
			io.WriteString(rw, "* 1 FETCH (UID 1 INTERNALDATE \"02-Mar-2026 12:00:00 +0000\" RFC822.SIZE 40)\r\n"+tag+" OK done\r\n")
		case cmd == "LOGOUT":
			io.WriteString(rw, "* BYE\r\n"+tag+" OK done\r\n")
			return
		default:
			io.WriteString(rw, tag+" BAD unknown command\r\n")
		}
	}
}

// A hostile IMAP server that makes an answer endless (a greeting without
// a line end, a mailbox's name, a message's content that spans lines)
// fails the step with the limit's error; the connector reads no more
// than the limit of an answer and a little from the connection, and
// allocates far less than the server sent.
func TestImapHostileServer(t *testing.T) {
	const limit = 1 << 20
	for _, tc := range []struct {
		flood, security string
		err             string
	}{
		{"greeting", "starttls", "an answer of the IMAP server is larger than 1 MiB, the most the connector reads"},
		{"list", "tls", "listing the mailboxes: an answer of the IMAP server is larger than 1 MiB, the most the connector reads"},
		{"message", "tls", `reading the messages of the mailbox "INBOX": an answer of the IMAP server, less the 40 bytes of the messages it was asked for, is larger than 1 MiB, the most the connector reads`},
	} {
		t.Run(tc.flood, func(t *testing.T) {
			port, ca := startHostileIMAP(t, tc.flood)
			var read atomic.Int64
			var d net.Dialer
			env := &Env{PDF: testPDF, Now: time.Now, Log: slog.New(slog.DiscardHandler), Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
				c, err := d.DialContext(ctx, network, addr)
				if err != nil {
					return nil, err
				}
				return countingConn{c, &read}, nil
			}}
			cfg, _ := json.Marshal(map[string]any{"host": "127.0.0.1", "port": port, "security": tc.security, "ca_certificate": ca})
			c, err := NewImap(cfg, json.RawMessage(`{"imap_username":"u","imap_password":"p"}`), env)
			if err != nil {
				t.Fatal(err)
			}
			c.(*Imap).maxAnswer = limit
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			cp := c.FirstCheckpoint()
			for i := 0; i < 5 && err == nil; i++ {
				cp, err = c.Step(context.Background(), always, cp, &recorder{})
			}
			runtime.ReadMemStats(&after)
			if err == nil || !strings.HasSuffix(err.Error(), tc.err) {
				t.Errorf("error %v, want …%q", err, tc.err)
			}
			if n := read.Load(); n > limit+64<<10 {
				t.Errorf("read %d bytes from the server, more than the limit of an answer (%d) and 64 KiB", n, limit)
			}
			t.Logf("read %d bytes, allocated %d bytes; the server sent up to %d", read.Load(), after.TotalAlloc-before.TotalAlloc, hostileFlood)
			if n := after.TotalAlloc - before.TotalAlloc; n > 16<<20 {
				t.Errorf("allocated %d bytes while the server sent %d: more than 16 MiB", n, hostileFlood)
			}
		})
	}
}

// The budget of an answer: exactly its size is read whole, a byte more
// fails the read and every read after, until the next answer's budget
// (which does not clear the failure).
func TestImapBudget(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	go func() {
		server.Write(bytes.Repeat([]byte("a"), 10))
		server.Write(bytes.Repeat([]byte("b"), 11))
		server.Close()
	}()
	b := newImapBudget(client, 10)
	got, err := io.ReadAll(io.LimitReader(b, 10))
	if err != nil || string(got) != "aaaaaaaaaa" || b.exceeded() != nil {
		t.Fatalf("the first answer: %q, %v, %v", got, err, b.exceeded())
	}
	b.expect(5, 5)
	got, err = io.ReadAll(b)
	want := "an answer of the IMAP server, less the 5 bytes of the messages it was asked for, is larger than 5 bytes, the most the connector reads"
	if string(got) != "bbbbbbbbbb" || err == nil || err.Error() != want || b.exceeded() != err {
		t.Errorf("the second answer: %q, %v; want 10 bytes and %q", got, err, want)
	}
	b.expect(100, 0)
	if n, err := b.Read(make([]byte, 10)); n != 0 || err == nil {
		t.Errorf("a read after the failure: %d, %v", n, err)
	}
}

// A real server's answers fit their budgets, however small, when the
// messages fetched are allowed on top: messages are fetched a few at a
// time, together at most the size of the largest message allowed.
func TestImapFetchInGroups(t *testing.T) {
	s := imaptest.Start(t)
	arrived := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	for n := 1; n <= 5; n++ {
		s.Append("INBOX", arrived, fmt.Sprintf("Message-ID: <g%d@example.com>\nSubject: Group %d\n\n%s\n", n, n, strings.Repeat("word ", 2000)))
	}
	b, _ := json.Marshal(s.Config(map[string]any{"mailboxes": []string{"INBOX"}}))
	cb, _ := json.Marshal(imaptest.Credential())
	c, err := NewImap(b, cb, imapEnv(t))
	if err != nil {
		t.Fatal(err)
	}
	m := c.(*Imap)
	m.maxMessage, m.maxAnswer = 25<<10, 8<<10 // Two messages a fetch; each answer 8 KiB and its messages.
	rec := &recorder{}
	cp := c.FirstCheckpoint()
	for more := true; more; {
		if cp, err = c.Step(context.Background(), always, cp, rec); err != nil {
			t.Fatal(err)
		}
		if more, err = HasMore(cp); err != nil {
			t.Fatal(err)
		}
	}
	if docs, failures := imapSummary(rec); len(docs) != 5 || len(failures) != 0 {
		t.Errorf("documents %q, failures %q; want the 5 messages", docs, failures)
	}
}
