// Package imaptest runs the IMAP server the IMAP connector's tests read: a
// real Dovecot (Debian's dovecot-imapd), started as a child process of the
// test with a configuration of its own in a temporary directory, one user
// with a password, Maildir mailboxes and a certificate made for the test.
// It is for tests only.
package imaptest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	neturl "net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/quarryhq/quarry/internal/syncbuf"
)

// The test user's name and password.
const (
	User     = "alice"
	Password = "imap-secret-password-5e1d"
)

// Server is a Dovecot running for one test: implicit TLS on TLSPort and
// plain IMAP with STARTTLS on StartTLSPort, both on 127.0.0.1, with a
// certificate for 127.0.0.1 and localhost that CA (PEM) signs.
type Server struct {
	TLSPort      int
	StartTLSPort int
	CA           string

	tb     testing.TB
	log    *syncbuf.Buffer // Dovecot's log.
	roots  *x509.CertPool
	mu     sync.Mutex
	client *imapclient.Client // For Append, once logged in.
}

// dovecotBinary returns the path of the dovecot binary, or "".
func dovecotBinary() string {
	if p, err := exec.LookPath("dovecot"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/sbin/dovecot"); err == nil {
		return "/usr/sbin/dovecot"
	}
	return ""
}

// Start starts a Dovecot until tb ends. Without Dovecot installed the test
// is skipped, unless CI is set: then it fails.
func Start(tb testing.TB) *Server {
	tb.Helper()
	bin := dovecotBinary()
	if bin == "" {
		if os.Getenv("CI") == "" {
			tb.Skip("dovecot is not installed (apt-get install dovecot-imapd): the IMAP connector's tests need a real IMAP server")
		}
		tb.Fatal("dovecot is not installed (apt-get install dovecot-imapd), and CI is set")
	}
	dir := tb.TempDir()
	s := &Server{tb: tb}
	certPEM, keyPEM := Certificate(tb)
	s.CA = string(certPEM)
	s.roots = x509.NewCertPool()
	s.roots.AppendCertsFromPEM(certPEM)
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			tb.Fatal(err)
		}
		return p
	}
	certFile, keyFile := write("cert.pem", certPEM), write("key.pem", keyPEM)
	// The mail is the user's: as root, Dovecot refuses to give mail to
	// root, so it is nobody's and the directories on the way are open.
	uid, gid := os.Getuid(), os.Getgid()
	var users string
	if uid == 0 {
		uid, gid = 65534, 65534
		for d := dir; d != filepath.Dir(d) && strings.HasPrefix(d, os.TempDir()) && d != filepath.Clean(os.TempDir()); d = filepath.Dir(d) {
			if err := os.Chmod(d, 0o755); err != nil {
				tb.Fatal(err)
			}
		}
	} else {
		// Not root: every process is the user's, in the user's group.
		u, err := user.Current()
		if err != nil {
			tb.Fatal(err)
		}
		g, err := user.LookupGroupId(u.Gid)
		if err != nil {
			tb.Fatal(err)
		}
		users = fmt.Sprintf("default_login_user = %[1]s\ndefault_internal_user = %[1]s\ndefault_internal_group = %[2]s\n", u.Username, g.Name)
	}
	home := filepath.Join(dir, "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.Chown(home, uid, gid); err != nil {
		tb.Fatal(err)
	}
	passwd := write("passwd", fmt.Appendf(nil, "%s:{PLAIN}%s:%d:%d::%s\n", User, Password, uid, gid, home))
	s.TLSPort, s.StartTLSPort = freePort(tb), freePort(tb)
	conf := fmt.Sprintf(`protocols = imap
listen = 127.0.0.1
base_dir = %[1]s/run
state_dir = %[1]s/state
log_path = /dev/stderr
info_log_path = /dev/stderr
auth_verbose = yes
%[2]sssl = yes
ssl_cert = <%[3]s
ssl_key = <%[4]s
mail_location = maildir:~/Maildir
passdb {
  driver = passwd-file
  args = %[5]s
}
userdb {
  driver = passwd-file
  args = %[5]s
}
service imap-login {
  chroot =
  inet_listener imap {
    port = %[6]d
  }
  inet_listener imaps {
    port = %[7]d
    ssl = yes
  }
}
service anvil {
  chroot =
}
`, dir, users, certFile, keyFile, passwd, s.StartTLSPort, s.TLSPort)
	confFile := write("dovecot.conf", []byte(conf))
	log := &syncbuf.Buffer{}
	s.log = log
	cmd := exec.Command(bin, "-F", "-c", confFile)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		tb.Fatalf("starting dovecot: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	tb.Cleanup(func() {
		s.mu.Lock()
		if s.client != nil {
			_ = s.client.Logout().Wait()
			s.client.Close()
		}
		s.mu.Unlock()
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		if tb.Failed() {
			tb.Logf("dovecot's log:\n%s", log.String())
		}
	})
	// Ready when both ports answer.
	deadline := time.Now().Add(20 * time.Second)
	for _, port := range []int{s.TLSPort, s.StartTLSPort} {
		for {
			c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), time.Second)
			if err == nil {
				c.Close()
				break
			}
			select {
			case <-exited:
				tb.Fatalf("dovecot exited:\n%s", log.String())
			default:
			}
			if time.Now().After(deadline) {
				tb.Fatalf("dovecot does not listen on %d:\n%s", port, log.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return s
}

// RefusedLogins returns how many logins Dovecot has refused for a wrong
// password so far, as its log (auth_verbose) says.
func (s *Server) RefusedLogins() int {
	return strings.Count(s.log.String(), "Password mismatch")
}

// freePort returns a TCP port of 127.0.0.1 that was free a moment ago.
func freePort(tb testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Certificate makes a self-signed certificate for 127.0.0.1 and
// localhost, and its key, in PEM.
func Certificate(tb testing.TB) (certPEM, keyPEM []byte) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: "Quarry test IMAP server"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		tb.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		tb.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
}

// Config returns the IMAP connector's configuration for the server over
// implicit TLS, with extra keys added.
func (s *Server) Config(extra map[string]any) map[string]any {
	c := map[string]any{"host": "127.0.0.1", "port": s.TLSPort, "ca_certificate": s.CA}
	for k, v := range extra {
		c[k] = v
	}
	return c
}

// Credential returns the IMAP connector's credential of the test user.
func Credential() map[string]string {
	return map[string]string{"imap_username": User, "imap_password": Password}
}

// Delete deletes mailbox and its messages.
func (s *Server) Delete(mailbox string) {
	s.tb.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.login().Delete(mailbox).Wait(); err != nil {
		s.tb.Fatalf("deleting %s: %v", mailbox, err)
	}
}

// Unseen returns how many messages of mailbox have no \Seen flag.
func (s *Server) Unseen(mailbox string) int {
	s.tb.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.login()
	if _, err := c.Select(mailbox, &imap.SelectOptions{ReadOnly: true}).Wait(); err != nil {
		s.tb.Fatalf("selecting %s: %v", mailbox, err)
	}
	defer func() { _ = c.Unselect().Wait() }()
	found, err := c.Search(&imap.SearchCriteria{NotFlag: []imap.Flag{imap.FlagSeen}}, nil).Wait()
	if err != nil {
		s.tb.Fatalf("searching %s: %v", mailbox, err)
	}
	return len(found.AllSeqNums())
}

// login returns the client of Append and Delete, logged in.
func (s *Server) login() *imapclient.Client {
	s.tb.Helper()
	if s.client == nil {
		c, err := imapclient.DialTLS(net.JoinHostPort("127.0.0.1", strconv.Itoa(s.TLSPort)),
			&imapclient.Options{TLSConfig: &tls.Config{RootCAs: s.roots, ServerName: "127.0.0.1"}})
		if err != nil {
			s.tb.Fatal(err)
		}
		if err := c.Login(User, Password).Wait(); err != nil {
			s.tb.Fatal(err)
		}
		s.client = c
	}
	return s.client
}

// imapURL is an IMAP URL of a message (RFC 5092), without a user: its
// server, its mailbox (percent-encoded UTF-8), the mailbox's UIDVALIDITY
// and the message's UID.
var imapURL = regexp.MustCompile(`^imap://([^/@]+)/(.+);UIDVALIDITY=([0-9]+)/;UID=([0-9]+)$`)

// Open returns the message that an IMAP URL names on this server, as a
// mail client opens it: the mailbox selected (read-only), its UIDVALIDITY
// checked, the message fetched by its UID. A URL of another server, or
// that names no message, fails the test.
func (s *Server) Open(url string) []byte {
	s.tb.Helper()
	m := imapURL.FindStringSubmatch(url)
	if m == nil {
		s.tb.Fatalf("%s is not an IMAP URL of a message", url)
	}
	if m[1] != net.JoinHostPort("127.0.0.1", strconv.Itoa(s.TLSPort)) && m[1] != net.JoinHostPort("127.0.0.1", strconv.Itoa(s.StartTLSPort)) {
		s.tb.Fatalf("%s is not on this server", url)
	}
	mailbox, err := neturl.PathUnescape(m[2])
	if err != nil {
		s.tb.Fatalf("%s: %v", url, err)
	}
	validity, _ := strconv.ParseUint(m[3], 10, 32)
	uid, _ := strconv.ParseUint(m[4], 10, 32)
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.login()
	sel, err := c.Select(mailbox, &imap.SelectOptions{ReadOnly: true}).Wait()
	if err != nil {
		s.tb.Fatalf("%s: selecting %q: %v", url, mailbox, err)
	}
	defer func() { _ = c.Unselect().Wait() }()
	if uint64(sel.UIDValidity) != validity {
		s.tb.Fatalf("%s: the mailbox's UIDVALIDITY is %d", url, sel.UIDValidity)
	}
	msgs, err := c.Fetch(imap.UIDSetNum(imap.UID(uid)), &imap.FetchOptions{BodySection: []*imap.FetchItemBodySection{{Peek: true}}}).Collect()
	if err != nil || len(msgs) != 1 || len(msgs[0].BodySection) != 1 {
		s.tb.Fatalf("%s: fetching UID %d: %d messages, %v", url, uid, len(msgs), err)
	}
	return msgs[0].BodySection[0].Bytes
}

// Append delivers a message to mailbox (made if missing) as arrived then
// (its INTERNALDATE).
func (s *Server) Append(mailbox string, arrived time.Time, message string) {
	s.tb.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.login()
	if mailbox != "INBOX" {
		var ie *imap.Error
		if err := s.client.Create(mailbox, nil).Wait(); err != nil && !(errors.As(err, &ie) && ie.Code == imap.ResponseCodeAlreadyExists) {
			s.tb.Fatalf("creating %s: %v", mailbox, err)
		}
	}
	msg := strings.ReplaceAll(strings.ReplaceAll(message, "\r\n", "\n"), "\n", "\r\n")
	cmd := s.client.Append(mailbox, int64(len(msg)), &imap.AppendOptions{Time: arrived})
	if _, err := cmd.Write([]byte(msg)); err != nil {
		s.tb.Fatal(err)
	}
	if err := cmd.Close(); err != nil {
		s.tb.Fatal(err)
	}
	if _, err := cmd.Wait(); err != nil {
		s.tb.Fatalf("appending to %s: %v", mailbox, err)
	}
}
