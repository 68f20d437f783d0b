package connector

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/quarryhq/quarry"
)

// ImapSource is the source of the IMAP connector.
const ImapSource quarry.DocumentSource = "imap"

// Limits of the IMAP connector.
const (
	imapDefaultPort     = 993              // port when not set: implicit TLS, as Onyx's default.
	imapPageSize        = 100              // Messages a step reads, as Onyx's _PAGE_SIZE.
	imapMaxMessageBytes = 25 << 20         // A larger message is a failure of its document; see imapMaxAnswerBytes.
	imapTimeout         = 30 * time.Second // Connecting, the TLS handshake and logging in.
)

// The security of an IMAP connection (security).
const (
	imapTLS      = "tls"      // Implicit TLS, as Onyx's IMAP4_SSL.
	imapStartTLS = "starttls" // A plain connection upgraded by STARTTLS before the login.
)

// Imap is Onyx's IMAP connector (backend/onyx/connectors/imap/ at
// v4.6.1): it reads the messages of an account's mailboxes (those named
// in mailboxes, or all those the server lists) whose arrival time (the
// IMAP INTERNALDATE) is within the poll window, one document per
// message, over TLS (implicit, or STARTTLS) through the egress guard. A
// run is checkpointed as Onyx's: a first step lists the mailboxes, then
// each step reads up to imapPageSize messages of one mailbox, in the
// order of their UIDs, and the checkpoint keeps the mailboxes still to
// read and, for the one being read, the next UID (where Onyx keeps the
// list of the ids still to read, which a large mailbox would make larger
// than a checkpoint may be).
type Imap struct {
	cfg      imapConfig
	username string
	password string
	tls      *tls.Config
	env      *Env
	// imapPageSize, imapMaxMessageBytes and imapMaxAnswerBytes, but in
	// tests.
	pageSize   int
	maxMessage int64
	maxAnswer  int64
}

// imapConfig is the IMAP connector's connector_specific_config: Onyx's
// keys and two of Quarry's own (security, ca_certificate).
type imapConfig struct {
	Host      string          `json:"host"`
	Port      json.RawMessage `json:"port"` // A number, or a string of one (a form's field).
	Mailboxes []string        `json:"mailboxes"`
	// Quarry's: "tls" (the default) or "starttls", and the PEM
	// certificates of the authorities that sign the server's certificate
	// when the system's do not.
	Security      string `json:"security"`
	CACertificate string `json:"ca_certificate"`

	port int
}

// imapCredential is the IMAP connector's credential_json: Onyx's keys.
type imapCredential struct {
	Username any `json:"imap_username"`
	Password any `json:"imap_password"`
}

// NewImap is the Constructor of the IMAP connector.
func NewImap(config, credential json.RawMessage, env *Env) (Connector, error) {
	var c imapConfig
	if err := json.Unmarshal(config, &c); err != nil {
		return nil, fmt.Errorf("not an object with host, port and mailboxes: %w", err)
	}
	c.Host = strings.TrimSpace(c.Host)
	if c.Host == "" || strings.ContainsAny(c.Host, "/:@ ") && net.ParseIP(c.Host) == nil {
		return nil, fmt.Errorf("host %q is not a host name or an IP address", c.Host)
	}
	c.port = imapDefaultPort
	if p := strings.Trim(strings.TrimSpace(string(c.Port)), `"`); p != "" && p != "null" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("port %s is not a port number", c.Port)
		}
		c.port = n
	}
	var boxes []string
	for _, m := range c.Mailboxes {
		if m = strings.TrimSpace(m); m != "" && !slices.Contains(boxes, m) {
			boxes = append(boxes, m)
		}
	}
	c.Mailboxes = boxes
	switch c.Security = strings.ToLower(strings.TrimSpace(c.Security)); c.Security {
	case "":
		c.Security = imapTLS
	case imapTLS, imapStartTLS:
	default:
		return nil, fmt.Errorf("security %q is neither tls nor starttls", c.Security)
	}
	tc := &tls.Config{ServerName: c.Host, MinVersion: tls.VersionTLS12}
	if pem := strings.TrimSpace(c.CACertificate); pem != "" {
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM([]byte(pem)) {
			return nil, errors.New("ca_certificate holds no PEM certificate")
		}
	}
	var cred imapCredential
	if err := json.Unmarshal(credential, &cred); err != nil {
		return nil, fmt.Errorf("the credential is not an object with imap_username and imap_password: %w", err)
	}
	user, ok := cred.Username.(string)
	if !ok || user == "" {
		return nil, errors.New("the credential has no imap_username (a string)")
	}
	pass, ok := cred.Password.(string)
	if !ok || pass == "" {
		return nil, errors.New("the credential has no imap_password (a string)")
	}
	if env == nil || env.Dial == nil {
		return nil, errors.New("the IMAP connector needs the egress guard's dialer")
	}
	if env.Log == nil {
		e := *env
		e.Log = slog.New(slog.DiscardHandler)
		env = &e
	}
	return &Imap{cfg: c, username: user, password: pass, tls: tc, env: env, pageSize: imapPageSize, maxMessage: imapMaxMessageBytes, maxAnswer: imapMaxAnswerBytes}, nil
}

// imapCheckpoint is the IMAP connector's checkpoint: Onyx's
// ImapCheckpoint, with the mailbox being read kept by its next UID.
type imapCheckpoint struct {
	HasMore bool `json:"has_more"`
	// The mailboxes still to read; null until the first step listed
	// them.
	TodoMailboxes  []string     `json:"todo_mailboxes"`
	CurrentMailbox *imapMailbox `json:"current_mailbox"`
}

// imapMailbox is the mailbox a run is reading: the messages from
// NextUID on are still to read, as long as the mailbox's UIDVALIDITY is
// UIDValidity (else it is read again from the start).
type imapMailbox struct {
	Mailbox     string `json:"mailbox"`
	UIDValidity uint32 `json:"uid_validity"`
	NextUID     uint32 `json:"next_uid"`
}

// FirstCheckpoint is Onyx's build_dummy_checkpoint.
func (*Imap) FirstCheckpoint() json.RawMessage {
	return json.RawMessage(`{"has_more":true,"todo_mailboxes":null,"current_mailbox":null}`)
}

// Step logs in and runs one step from checkpoint: the first lists the
// mailboxes; each other reads a page of one mailbox's messages.
func (m *Imap) Step(ctx context.Context, w Window, checkpoint json.RawMessage, out Emitter) (json.RawMessage, error) {
	var cp imapCheckpoint
	if err := json.Unmarshal(checkpoint, &cp); err != nil {
		return nil, fmt.Errorf("the checkpoint is not the IMAP connector's: %w", err)
	}
	cp.HasMore = true
	c, err := m.connect(ctx)
	if err != nil {
		return nil, err
	}
	defer c.close()
	if cp.TodoMailboxes == nil {
		if cp.TodoMailboxes, err = m.mailboxes(ctx, c); err != nil {
			return nil, err
		}
		if len(cp.TodoMailboxes) == 0 {
			return nil, errors.New("the IMAP server lists no mailbox for this account")
		}
		return json.Marshal(cp)
	}
	if cp.CurrentMailbox == nil {
		if len(cp.TodoMailboxes) == 0 {
			cp.HasMore = false
			return json.Marshal(cp)
		}
		cp.CurrentMailbox = &imapMailbox{Mailbox: cp.TodoMailboxes[0], NextUID: 1}
		cp.TodoMailboxes = cp.TodoMailboxes[1:]
	}
	done, err := m.readPage(ctx, c, w, cp.CurrentMailbox, out)
	if err != nil {
		return nil, err
	}
	if done {
		cp.CurrentMailbox = nil
		cp.HasMore = len(cp.TodoMailboxes) > 0
	}
	return json.Marshal(cp)
}

// imapConn is a logged-in connection.
type imapConn struct {
	*imapclient.Client
	stop      func() bool // Stops closing the connection when the step's context ends.
	budget    *imapBudget // What the server may send.
	maxAnswer int64       // The budget of an answer.
}

// expect starts the budget of the answer to the next command, with extra
// bytes for the messages it fetches.
func (c *imapConn) expect(extra int64) { c.budget.expect(c.maxAnswer, extra) }

// close logs out and closes the connection.
func (c *imapConn) close() {
	c.stop()
	c.expect(0)
	_ = c.Logout().Wait()
	_ = c.Close()
}

// connect dials the server through the egress guard, secures the
// connection and logs in. A login the server refuses is a
// *CredentialError with the server's reason.
func (m *Imap) connect(ctx context.Context) (*imapConn, error) {
	addr := net.JoinHostPort(m.cfg.Host, strconv.Itoa(m.cfg.port))
	dctx, cancel := context.WithTimeout(ctx, imapTimeout)
	defer cancel()
	raw, err := m.env.Dial(dctx, "tcp", addr)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("connecting to the IMAP server %s: %w", addr, err)
	}
	// go-imap takes no context: the connection is closed when the step's
	// ends, which ends any command waiting on it.
	stop := context.AfterFunc(ctx, func() { raw.Close() })
	budget := newImapBudget(raw, m.maxAnswer)
	fail := func(what string, err error) (*imapConn, error) {
		stop()
		raw.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if berr := budget.exceeded(); berr != nil {
			err = berr
		}
		return nil, fmt.Errorf("%s %s: %w", what, addr, err)
	}
	_ = raw.SetDeadline(time.Now().Add(imapTimeout))
	opts := &imapclient.Options{TLSConfig: m.tls.Clone(), WordDecoder: wordDecoder()}
	var c *imapclient.Client
	if m.cfg.Security == imapStartTLS {
		if c, err = imapclient.NewStartTLS(budget, opts); err != nil {
			return fail("STARTTLS with the IMAP server", err)
		}
	} else {
		tc := tls.Client(budget, opts.TLSConfig)
		if err := tc.HandshakeContext(dctx); err != nil {
			return fail("the TLS handshake with the IMAP server", err)
		}
		c = imapclient.New(tc, opts)
	}
	if err := c.WaitGreeting(); err != nil {
		c.Close()
		return fail("the greeting of the IMAP server", err)
	}
	if err := c.Login(m.username, m.password).Wait(); err != nil {
		c.Close()
		var ie *imap.Error
		if errors.As(err, &ie) && ctx.Err() == nil {
			// Refused: once per attempt (no other login follows it), in the
			// server's words, which hold no password.
			stop()
			raw.Close()
			return nil, &CredentialError{Reason: fmt.Sprintf("the IMAP server %s refused the login: %s", addr, imapReason(ie))}
		}
		return fail("logging in to the IMAP server", err)
	}
	_ = raw.SetDeadline(time.Time{}) // go-imap sets its own from here.
	return &imapConn{Client: c, stop: stop, budget: budget, maxAnswer: m.maxAnswer}, nil
}

// imapReason is what an IMAP server said when it refused a command: its
// text, and its response code if any.
func imapReason(e *imap.Error) string {
	s := strings.TrimSpace(e.Text)
	if s == "" {
		s = string(e.Type)
	}
	if e.Code != "" {
		s += " (" + string(e.Code) + ")"
	}
	return s
}

// mailboxes returns the mailboxes to read: those configured, or every
// mailbox the server lists that can be selected.
func (m *Imap) mailboxes(ctx context.Context, c *imapConn) ([]string, error) {
	if len(m.cfg.Mailboxes) > 0 {
		return slices.Clone(m.cfg.Mailboxes), nil
	}
	c.expect(0)
	list, err := c.List("", "*", nil).Collect()
	if err != nil {
		return nil, c.commandError(ctx, "listing the mailboxes", err)
	}
	boxes := []string{}
	for _, l := range list {
		if slices.Contains(l.Attrs, imap.MailboxAttrNoSelect) || slices.Contains(l.Attrs, imap.MailboxAttrNonExistent) {
			continue
		}
		boxes = append(boxes, l.Mailbox)
	}
	return boxes, nil
}

// readPage reads the next page of mb's messages within w, and moves
// mb.NextUID past them; done reports that the mailbox has no more. A
// mailbox that cannot be selected is a failure of its entity, and done.
func (m *Imap) readPage(ctx context.Context, c *imapConn, w Window, mb *imapMailbox, out Emitter) (done bool, err error) {
	c.expect(0)
	sel, err := c.Select(mb.Mailbox, &imap.SelectOptions{ReadOnly: true}).Wait()
	if err != nil {
		var ie *imap.Error
		if !errors.As(err, &ie) || c.budget.exceeded() != nil || ctx.Err() != nil {
			return false, c.commandError(ctx, "selecting the mailbox "+strconv.Quote(mb.Mailbox), err)
		}
		start, end := quarry.Time{Time: w.Start.UTC()}, quarry.Time{Time: w.End.UTC()}
		return true, out.Failure(ctx, &quarry.ConnectorFailure{
			FailedEntity:   &quarry.EntityFailure{EntityID: mb.Mailbox, MissedTimeRange: []*quarry.Time{&start, &end}},
			FailureMessage: "the IMAP server refused to open the mailbox: " + imapReason(ie),
		})
	}
	if mb.NextUID == 0 {
		mb.NextUID = 1 // UIDs start at 1; "0:*" is no set.
	}
	if mb.UIDValidity != 0 && mb.UIDValidity != sel.UIDValidity {
		m.env.Log.Info("imap connector: the mailbox's UIDVALIDITY changed; reading it again from the start", "mailbox", mb.Mailbox)
		mb.NextUID = 1
	}
	mb.UIDValidity = sel.UIDValidity
	if sel.NumMessages == 0 {
		return true, nil
	}
	// SEARCH compares dates only, in the server's time zone: the window
	// is widened by days there, and applied to the arrival times after.
	var crit imap.SearchCriteria
	crit.UID = []imap.UIDSet{{imap.UIDRange{Start: imap.UID(mb.NextUID), Stop: 0}}}
	if w.Start.After(time.Unix(0, 0).Add(48 * time.Hour)) {
		crit.Since = w.Start.AddDate(0, 0, -1)
	}
	crit.Before = w.End.AddDate(0, 0, 2)
	c.expect(0)
	found, err := c.UIDSearch(&crit, nil).Wait()
	if err != nil {
		return false, c.commandError(ctx, "searching the mailbox "+strconv.Quote(mb.Mailbox), err)
	}
	var uids []imap.UID
	for _, u := range found.AllUIDs() {
		if uint32(u) >= mb.NextUID { // n:* holds the last message even when its UID is below n.
			uids = append(uids, u)
		}
	}
	slices.Sort(uids)
	if len(uids) == 0 {
		return true, nil
	}
	done = len(uids) <= m.pageSize
	if !done {
		uids = uids[:m.pageSize]
	}
	mb.NextUID = uint32(uids[len(uids)-1]) + 1
	// The arrival times and sizes first, then the messages within the
	// window.
	c.expect(0)
	facts, err := c.Fetch(imap.UIDSetNum(uids...), &imap.FetchOptions{UID: true, InternalDate: true, RFC822Size: true}).Collect()
	if err != nil {
		return false, c.commandError(ctx, "reading the mailbox "+strconv.Quote(mb.Mailbox), err)
	}
	arrived := map[imap.UID]time.Time{}
	var want []imapWanted
	for _, f := range facts {
		if f.InternalDate.Before(w.Start) || !f.InternalDate.Before(w.End) {
			continue
		}
		arrived[f.UID] = f.InternalDate
		if f.RFC822Size > m.maxMessage {
			if err := out.Failure(ctx, m.failure(mb, f.UID, "", fmt.Sprintf("the message is larger than %s", ByteSize(m.maxMessage)))); err != nil {
				return false, err
			}
			continue
		}
		want = append(want, imapWanted{f.UID, max(f.RFC822Size, 0)})
	}
	// The messages are fetched a few at a time, together at most
	// maxMessage bytes (a larger one alone), so that what one answer
	// holds stays bounded.
	for len(want) > 0 {
		var uids imap.UIDSet
		n, size := 0, int64(0)
		for ; n < len(want) && (n == 0 || size+want[n].size <= m.maxMessage); n++ {
			uids.AddNum(want[n].uid)
			size += want[n].size
		}
		want = want[n:]
		if err := m.fetchMessages(ctx, c, mb, uids, size, arrived, out); err != nil {
			return false, err
		}
	}
	return done, nil
}

// imapWanted is a message to fetch, and its size as the server gave it.
type imapWanted struct {
	uid  imap.UID
	size int64
}

// fetchMessages reads the messages of uids in mb, of size bytes together,
// and emits their documents, or their failures.
func (m *Imap) fetchMessages(ctx context.Context, c *imapConn, mb *imapMailbox, uids imap.UIDSet, size int64, arrived map[imap.UID]time.Time, out Emitter) error {
	body := &imap.FetchItemBodySection{Peek: true}
	c.expect(size)
	cmd := c.Fetch(uids, &imap.FetchOptions{UID: true, BodySection: []*imap.FetchItemBodySection{body}})
	defer cmd.Close()
	for msg := cmd.Next(); msg != nil; msg = cmd.Next() {
		var uid imap.UID
		var raw []byte
		var readErr error
		tooLarge := false
		for item := msg.Next(); item != nil; item = msg.Next() {
			switch it := item.(type) {
			case imapclient.FetchItemDataUID:
				uid = it.UID
			case imapclient.FetchItemDataBodySection:
				if it.Literal == nil {
					continue
				}
				if it.Literal.Size() > m.maxMessage {
					tooLarge = true // The next item discards it.
					continue
				}
				raw, readErr = io.ReadAll(io.LimitReader(it.Literal, m.maxMessage+1))
			}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if uid == 0 {
			continue // Not one of ours: the server may send others' flags.
		}
		if tooLarge {
			if err := out.Failure(ctx, m.failure(mb, uid, "", "the message is larger than "+ByteSize(m.maxMessage))); err != nil {
				return err
			}
			continue
		}
		if readErr != nil {
			return c.commandError(ctx, "reading a message of the mailbox "+strconv.Quote(mb.Mailbox), readErr)
		}
		if raw == nil {
			m.env.Log.Warn("imap connector: the server sent no content for a message; skipped", "mailbox", mb.Mailbox, "uid", uid)
			continue
		}
		d, err := imapDocument(m.env.PDF, raw, arrived[uid])
		if err != nil {
			if err := out.Failure(ctx, m.failure(mb, uid, messageID(raw), "the message cannot be read: "+err.Error())); err != nil {
				return err
			}
			continue
		}
		link := m.messageURL(mb, uid)
		if d.ID == "" {
			d.ID = link
		}
		for i := range d.Sections {
			d.Sections[i].Link = &link
		}
		for _, skipped := range d.skipped {
			m.env.Log.Debug("imap connector: an inline part that is not text, skipped", "mailbox", mb.Mailbox, "uid", uid, "type", skipped)
		}
		for _, u := range d.unread {
			m.env.Log.Warn("imap connector: an attachment of a message is not read", "mailbox", mb.Mailbox, "uid", uid, "attachment", u.name, "type", u.mediaType, "why", u.why)
		}
		if err := out.Document(ctx, &d.Document); err != nil {
			return err
		}
	}
	if err := cmd.Close(); err != nil {
		return c.commandError(ctx, "reading the messages of the mailbox "+strconv.Quote(mb.Mailbox), err)
	}
	return nil
}

// commandError is the error of an IMAP command that failed: the step's
// context's, if it ended (which closed the connection), or the budget's,
// if the server sent more than it allows (which made the client close
// the connection).
func (c *imapConn) commandError(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if berr := c.budget.exceeded(); berr != nil {
		return fmt.Errorf("%s: %w", what, berr)
	}
	var ie *imap.Error
	if errors.As(err, &ie) {
		return fmt.Errorf("%s: the IMAP server answered %s", what, imapReason(ie))
	}
	return fmt.Errorf("%s: %w", what, err)
}

// failure is the failure of message uid of mb, named by its Message-ID
// (id), or its IMAP URL when it has none, and linked to its IMAP URL.
func (m *Imap) failure(mb *imapMailbox, uid imap.UID, id, msg string) *quarry.ConnectorFailure {
	link := m.messageURL(mb, uid)
	if id == "" {
		id = link
	}
	return &quarry.ConnectorFailure{FailedDocument: &quarry.DocumentFailure{DocumentID: id, DocumentLink: &link}, FailureMessage: msg}
}

// messageURL is the IMAP URL (RFC 5092) of message uid of mb, without the
// user (a part of the credential, which a link would show to everyone
// who finds the message): the link of the message's document, which a
// mail client with an account on the server opens, and the id of a
// message that has no Message-ID.
func (m *Imap) messageURL(mb *imapMailbox, uid imap.UID) string {
	host := m.cfg.Host
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return fmt.Sprintf("imap://%s:%d/%s;UIDVALIDITY=%d/;UID=%d", host, m.cfg.port, imapPathEscape(mb.Mailbox), mb.UIDValidity, uid)
}

// imapPathEscape escapes a mailbox name for an IMAP URL: every byte but
// unreserved characters and the hierarchy's "/" and "." percent-encoded.
func imapPathEscape(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', strings.IndexByte("-._~/", c) >= 0:
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	return b.String()
}
