package connector

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/outbound/connector/imaptest"
	"github.com/quarryhq/quarry/toolrun"
)

// Test messages, as a mail client would send them.
const (
	plainMessage = `From: Bob Sender <bob@example.com>
To: Alice <alice@example.com>, carol@example.com
Subject: Quarterly plan
Date: Mon, 02 Mar 2026 10:00:00 +0100
Message-ID: <plain-1@example.com>

Hello Alice,
the plan is attached.
`
	alternativeMessage = `From: =?UTF-8?B?w4lsb2RpZQ==?= <elodie@example.com>
To: alice@example.com
Subject: =?ISO-8859-1?Q?Caf=E9_menu?=
Date: Mon, 02 Mar 2026 11:00:00 +0000
Message-ID: <alt-2@example.com>
MIME-Version: 1.0
Content-Type: multipart/alternative; boundary="b1"

--b1
Content-Type: text/plain; charset=ISO-8859-1
Content-Transfer-Encoding: quoted-printable

Le caf=E9 est pr=EAt, =
tout de suite.
--b1
Content-Type: text/html; charset=UTF-8

<p>HTML version</p>
--b1--
`
	// brokenMessage has a header line that is not a header.
	brokenMessage = `From: eve@example.com
This line is not a header
Message-ID: <broken-5@example.com>

body
`
	// bareMessage has no Message-ID, Subject or Date.
	bareMessage = `From: frank@example.com
To: alice@example.com

Just a note.
`
)

// mixedMessage has an HTML body, a text and an HTML attachment, and an
// image (which is not read).
var mixedMessage = `From: dan@example.com
Delivered-To: alice@example.com
Subject: Report
Date: Tue, 03 Mar 2026 09:00:00 +0000
Message-ID: <mixed-3@example.com>
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="m"

--m
Content-Type: text/html; charset=utf-8
Content-Transfer-Encoding: base64

` + base64.StdEncoding.EncodeToString([]byte("<html><body><h1>Weekly report</h1><p>See the notes.</p><script>x()</script></body></html>")) + `
--m
Content-Type: text/plain; charset=utf-8; name="notes.txt"
Content-Disposition: attachment; filename="notes.txt"
Content-Transfer-Encoding: base64

` + base64.StdEncoding.EncodeToString([]byte("Budget: 42 units\n")) + `
--m
Content-Type: text/html; name="summary.html"
Content-Disposition: attachment; filename="summary.html"

<p>Summary <b>ok</b></p>
--m
Content-Type: image/png; name="chart.png"
Content-Disposition: attachment; filename="chart.png"
Content-Transfer-Encoding: base64

iVBORw0KGgo=
--m--
`

func crlf(s string) []byte { return []byte(strings.ReplaceAll(s, "\n", "\r\n")) }

// The documents of messages: ids, subjects, owners, dates and the text of
// their bodies and text attachments, decoded.
func TestImapDocument(t *testing.T) {
	arrived := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	owner := func(name, addr string) json.RawMessage {
		b, _ := json.Marshal(imapOwner{name, addr})
		return b
	}
	ts := func(s string) *quarry.Time {
		t, _ := time.Parse(time.RFC3339, s)
		return &quarry.Time{Time: t}
	}
	str := func(s string) *string { return &s }
	for _, tc := range []struct {
		name, in string
		want     quarry.Document
		skipped  []string
		unread   []string // The attachments not read, as the metadata names them.
	}{
		{name: "plain", in: plainMessage, want: quarry.Document{ID: "<plain-1@example.com>", SemanticIdentifier: "Quarterly plan", Title: str("Quarterly plan"),
			DocUpdatedAt:  ts("2026-03-02T09:00:00Z"),
			PrimaryOwners: []json.RawMessage{owner("Alice", "alice@example.com"), owner("", "carol@example.com"), owner("Bob Sender", "bob@example.com")},
			Sections:      []quarry.Section{{Text: "Hello Alice,\nthe plan is attached."}}}},
		{name: "alternative, quoted-printable, Latin-1, encoded words", in: alternativeMessage, want: quarry.Document{ID: "<alt-2@example.com>",
			SemanticIdentifier: "Café menu", Title: str("Café menu"), DocUpdatedAt: ts("2026-03-02T11:00:00Z"),
			PrimaryOwners: []json.RawMessage{owner("", "alice@example.com"), owner("Élodie", "elodie@example.com")},
			Sections:      []quarry.Section{{Text: "Le café est prêt, tout de suite."}}}},
		{name: "mixed, base64, attachments", in: mixedMessage, unread: []string{"chart.png (image/png)"}, want: quarry.Document{ID: "<mixed-3@example.com>",
			SemanticIdentifier: "Report", Title: str("Report"), DocUpdatedAt: ts("2026-03-03T09:00:00Z"),
			Metadata:      map[string]any{unreadAttachmentsKey: []string{"chart.png (image/png)"}},
			PrimaryOwners: []json.RawMessage{owner("", "alice@example.com"), owner("", "dan@example.com")},
			Sections: []quarry.Section{{Text: "Weekly report\nSee the notes."}, {Text: "notes.txt\n\nBudget: 42 units"},
				{Text: "summary.html\n\nSummary ok"}}}},
		{name: "no Message-ID, Subject or Date", in: bareMessage, want: quarry.Document{ID: "", SemanticIdentifier: "Unknown Subject",
			Title: str("Unknown Subject"), DocUpdatedAt: &quarry.Time{Time: arrived},
			PrimaryOwners: []json.RawMessage{owner("", "alice@example.com"), owner("", "frank@example.com")},
			Sections:      []quarry.Section{{Text: "Just a note."}}}},
		{name: "attached message", in: "Message-ID: <fw@x>\nSubject: Fwd\nContent-Type: multipart/mixed; boundary=z\n\n--z\n\nsee below\n--z\nContent-Type: message/rfc822\n\nSubject: Inner\nContent-Type: text/plain; charset=windows-1252\n\ninner \x93text\x94\n--z--\n",
			want: quarry.Document{ID: "<fw@x>", SemanticIdentifier: "Fwd", Title: str("Fwd"),
				Sections: []quarry.Section{{Text: "see below"}, {Text: "Inner\n\ninner \u201ctext\u201d"}}}},
		{name: "unknown charset is read as UTF-8", in: "Subject: x\nContent-Type: text/plain; charset=x-unknown\n\nh\xffi\n",
			want: quarry.Document{SemanticIdentifier: "x", Title: str("x"), Sections: []quarry.Section{{Text: "h\uFFFDi"}}}},
		{name: "an inline image is skipped, not an unread attachment", in: "Subject: x\nContent-Type: multipart/related; boundary=r\n\n--r\nContent-Type: text/html\n\n<p>logo</p>\n--r\nContent-Type: image/png\nContent-Disposition: inline; filename=logo.png\n\nPNG\n--r--\n",
			skipped: []string{"image/png"}, want: quarry.Document{SemanticIdentifier: "x", Title: str("x"), Sections: []quarry.Section{{Text: "logo"}}}},
		{name: "attachments read by their kind, damaged ones named", in: attachmentsMessage(t, true), unread: []string{"broken.docx (application/octet-stream)", "(application/x-unknown)"},
			want: quarry.Document{ID: "<files-8@example.com>", SemanticIdentifier: "Files", Title: str("Files"),
				Metadata: map[string]any{unreadAttachmentsKey: []string{"broken.docx (application/octet-stream)", "(application/x-unknown)"}},
				Sections: []quarry.Section{{Text: "The files are attached."},
					{Text: "report.pdf\n\nQuarterly report for the quarry\nGranite output rose by 12% (net), café closed.\nSecond page: limestone"},
					{Text: "handbook.docx\n\nSafety handbook\nWear a helmet in the pit at all times.\nBlasting happens at noon on weekdays."},
					{Text: "Field guide\n\nThe crusher runs at dawn near the marble ledge.\nCafé staff serve tea; камень means stone."},
					{Text: "Inner\n\nInner note"}},
				PrimaryOwners: []json.RawMessage{owner("", "crew@example.com"), owner("", "rosa@example.com")}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := imapDocument(testPDF, crlf(tc.in), arrived)
			if err != nil {
				t.Fatal(err)
			}
			tc.want.Source = ImapSource
			if tc.want.Metadata == nil {
				tc.want.Metadata = map[string]any{}
			}
			if tc.want.DocUpdatedAt == nil && !strings.Contains(tc.in, "Date:") {
				tc.want.DocUpdatedAt = &quarry.Time{Time: arrived}
			}
			if diff := cmp.Diff(tc.want, d.Document); diff != "" {
				t.Errorf("document (-want +got):\n%s", diff)
			}
			if !slices.Equal(d.skipped, tc.skipped) {
				t.Errorf("skipped %q, want %q", d.skipped, tc.skipped)
			}
			var unread []string
			for _, u := range d.unread {
				unread = append(unread, u.String())
				if u.why == "" {
					t.Errorf("%s is not read, and no reason is given", u)
				}
			}
			if !slices.Equal(unread, tc.unread) {
				t.Errorf("unread %q, want %q", unread, tc.unread)
			}
		})
	}
}

// attachmentsMessage is a message with files of real producers attached
// (testdata/file): a PDF by its media type, a .docx by its name alone,
// with damaged, an RTF without a name, a damaged .docx and a part of a
// type Quarry does not read, and a message attached as a file.
func attachmentsMessage(t testing.TB, damaged bool) string {
	var b strings.Builder
	b.WriteString("From: rosa@example.com\nTo: crew@example.com\nSubject: Files\nMessage-ID: <files-8@example.com>\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"f\"\n\n--f\nContent-Type: text/plain\n\nThe files are attached.\n")
	attach := func(header, file string, raw []byte) {
		if file != "" {
			var err error
			if raw, err = os.ReadFile("testdata/file/" + file); err != nil {
				t.Fatal(err)
			}
		}
		enc := base64.StdEncoding.EncodeToString(raw)
		b.WriteString("--f\n" + header + "\nContent-Transfer-Encoding: base64\n\n")
		for len(enc) > 76 {
			b.WriteString(enc[:76] + "\n")
			enc = enc[76:]
		}
		b.WriteString(enc + "\n")
	}
	attach("Content-Type: application/pdf\nContent-Disposition: attachment; filename=\"report.pdf\"", "report.pdf", nil)
	attach("Content-Type: application/octet-stream\nContent-Disposition: attachment; filename=\"handbook.docx\"", "handbook.docx", nil)
	if damaged {
		attach("Content-Type: application/rtf\nContent-Disposition: attachment", "guide.rtf", nil)
		attach("Content-Type: application/octet-stream\nContent-Disposition: attachment; filename=\"broken.docx\"", "", []byte("not a zip"))
		attach("Content-Type: application/x-unknown\nContent-Disposition: attachment", "", []byte("x"))
		attach("Content-Type: application/octet-stream\nContent-Disposition: attachment; filename=\"forwarded.eml\"", "", []byte("Subject: Inner\r\n\r\nInner note\r\n"))
	}
	b.WriteString("--f--\n")
	return b.String()
}

// nested is a message of n multiparts one in another, with a text at the
// bottom.
func nested(n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Content-Type: multipart/mixed; boundary=b0\n\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "--b%d\nContent-Type: multipart/mixed; boundary=b%d\n\n", i-1, i)
	}
	fmt.Fprintf(&b, "--b%d\n\ntext\n", n-1)
	for i := n - 1; i >= 0; i-- {
		fmt.Fprintf(&b, "--b%d--\n", i)
	}
	return b.String()
}

// Messages that cannot be read are errors (per-document failures of the
// run), and their Message-ID is found all the same when it is there.
func TestImapDocumentErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, err, id string }{
		{"header", brokenMessage, "its header: malformed header line: This line is not a header", "<broken-5@example.com>"},
		{"no boundary", "Message-ID: <a@b>\nContent-Type: multipart/mixed\n\nx\n", "its multipart/mixed part has no boundary", "<a@b>"},
		{"unknown transfer encoding", "Content-Type: text/plain\nContent-Transfer-Encoding: x-uue\n\nx\n", `unknown Content-Transfer-Encoding "x-uue"`, ""},
		{"bad base64", "Content-Type: text/plain\nContent-Transfer-Encoding: base64\n\n!!!!\n", "decoding a part: illegal base64 data at input byte 0", ""},
		{"too deep", nested(12), "its parts are nested more than 10 deep", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := imapDocument(testPDF, crlf(tc.in), time.Time{})
			if err == nil || err.Error() != tc.err {
				t.Errorf("error %v, want %s", err, tc.err)
			}
			if got := messageID(crlf(tc.in)); got != tc.id {
				t.Errorf("messageID %q, want %q", got, tc.id)
			}
		})
	}
}

func TestNewImapConfig(t *testing.T) {
	dial := (&Env{Dial: toolrun.NewRunner(toolrun.Policy{}).Dial})
	cred := `{"imap_username":"u","imap_password":"p"}`
	for _, tc := range []struct{ cfg, cred, err string }{
		{`{"host":"imap.example.com"}`, cred, ""},
		{`{"host":"imap.example.com","port":"143","security":"STARTTLS","mailboxes":["INBOX"," ","INBOX","Sent"]}`, cred, ""},
		{`{"host":""}`, cred, `host "" is not a host name or an IP address`},
		{`{"host":"imaps://imap.example.com"}`, cred, `host "imaps://imap.example.com" is not a host name or an IP address`},
		{`{"host":"h","port":0}`, cred, "port 0 is not a port number"},
		{`{"host":"h","port":"x"}`, cred, `port "x" is not a port number`},
		{`{"host":"h","security":"none"}`, cred, `security "none" is neither tls nor starttls`},
		{`{"host":"h","ca_certificate":"not pem"}`, cred, "ca_certificate holds no PEM certificate"},
		{`{"host":"h"}`, `{"imap_password":"p"}`, "the credential has no imap_username (a string)"},
		{`{"host":"h"}`, `{"imap_username":"u","imap_password":7}`, "the credential has no imap_password (a string)"},
		{`[]`, cred, "not an object with host, port and mailboxes: json: cannot unmarshal array into Go value of type connector.imapConfig"},
	} {
		c, err := NewImap(json.RawMessage(tc.cfg), json.RawMessage(tc.cred), dial)
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || err.Error() != tc.err) {
			t.Errorf("NewImap(%s, %s): %v, want %q", tc.cfg, tc.cred, err, tc.err)
		}
		if err == nil && strings.Contains(tc.cfg, "Sent") {
			if m := c.(*Imap); m.cfg.port != 143 || m.cfg.Security != imapStartTLS || !slices.Equal(m.cfg.Mailboxes, []string{"INBOX", "Sent"}) {
				t.Errorf("config %+v", m.cfg)
			}
		}
	}
	if _, err := NewImap(json.RawMessage(`{"host":"h"}`), json.RawMessage(cred), &Env{}); err == nil || err.Error() != "the IMAP connector needs the egress guard's dialer" {
		t.Errorf("NewImap without a dialer: %v", err)
	}
}

// imapEnv is the Env of the IMAP connector's tests: the egress guard with
// loopback opened, as QUARRY_TOOL_EGRESS_ALLOW=127.0.0.1 would.
func imapEnv(t *testing.T) *Env {
	nets, hosts, err := toolrun.ParseAllow("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	return &Env{Dial: toolrun.NewRunner(toolrun.Policy{Allow: nets, AllowHosts: hosts}).Dial, PDF: testPDF, Now: time.Now, Log: slog.New(slog.DiscardHandler)}
}

// runImap runs the IMAP connector of cfg to the end of its steps within
// w, and returns what it emitted and the checkpoints it went through.
func runImap(t *testing.T, env *Env, cfg map[string]any, w Window) (*recorder, []string, error) {
	t.Helper()
	b, _ := json.Marshal(cfg)
	cb, _ := json.Marshal(imaptest.Credential())
	c, err := NewImap(b, cb, env)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	cp := c.FirstCheckpoint()
	var cps []string
	for i := 0; ; i++ {
		if i > 100 {
			t.Fatal("more than 100 steps")
		}
		if cp, err = c.Step(context.Background(), w, cp, rec); err != nil {
			return rec, cps, err
		}
		cps = append(cps, string(cp))
		if more, err := HasMore(cp); err != nil || !more {
			return rec, cps, err
		}
	}
}

// summary is each document's id, semantic identifier and the start of its
// text, and each failure's document (or entity) and message.
func imapSummary(r *recorder) (docs, failures []string) {
	for _, d := range r.docs {
		docs = append(docs, d.ID+" "+d.SemanticIdentifier)
	}
	for _, f := range r.failures {
		id := ""
		if f.FailedDocument != nil {
			id = f.FailedDocument.DocumentID
		} else {
			id = "entity " + f.FailedEntity.EntityID
		}
		failures = append(failures, id+" "+f.FailureMessage)
	}
	return docs, failures
}

// A run from the beginning over implicit TLS: a first step lists the
// mailboxes, then each mailbox's messages are read, one document each,
// with the attachments' text; the message that cannot be read is a
// failure of its document, the others are read all the same; the one
// without a Message-ID is named by its IMAP URL.
func TestImapRun(t *testing.T) {
	s := imaptest.Start(t)
	day := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	s.Append("INBOX", day, plainMessage)
	s.Append("INBOX", day, alternativeMessage)
	s.Append("INBOX", day, brokenMessage)
	s.Append("Archive", day, mixedMessage)
	s.Append("Archive", day, bareMessage)
	s.Append("Projects.Alpha", day, "Message-ID: <nested-6@example.com>\nSubject: Nested\n\nIn a child mailbox.\n")
	s.Append("Général", day, "Message-ID: <utf7-7@example.com>\nSubject: Accents\n\nIn a mailbox whose name IMAP writes in UTF-7.\n")
	rec, cps, err := runImap(t, imapEnv(t), s.Config(nil), Window{Start: time.Unix(0, 0), End: time.Now().Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	docs, failures := imapSummary(rec)
	bare := fmt.Sprintf("imap://127.0.0.1:%d/Archive;UIDVALIDITY=", s.TLSPort)
	for i, d := range docs {
		if strings.HasPrefix(d, bare) {
			docs[i] = "<archive url> Unknown Subject"
			if !strings.HasSuffix(rec.docs[i].ID, "/;UID=2") {
				t.Errorf("the bare message's id %s", rec.docs[i].ID)
			}
		}
	}
	slices.Sort(docs) // The mailboxes in the order Dovecot lists them.
	want := []string{"<alt-2@example.com> Café menu", "<archive url> Unknown Subject", "<mixed-3@example.com> Report", "<nested-6@example.com> Nested",
		"<plain-1@example.com> Quarterly plan", "<utf7-7@example.com> Accents"}
	if !slices.Equal(docs, want) {
		t.Errorf("documents %q, want %q", docs, want)
	}
	if want := []string{"<broken-5@example.com> the message cannot be read: its header: malformed header line: This line is not a header"}; !slices.Equal(failures, want) {
		t.Errorf("failures %q, want %q", failures, want)
	}
	if n := s.Unseen("INBOX"); n != 3 {
		t.Errorf("%d messages of INBOX unread after the run, want the 3 still unread", n)
	}
	for _, d := range rec.docs {
		if d.ID == "<mixed-3@example.com>" && (len(d.Sections) != 3 || d.Sections[1].Text != "notes.txt\n\nBudget: 42 units") {
			t.Errorf("the mixed message's sections %+v", d.Sections)
		}
	}
	// Each document links to its message by its IMAP URL, every section
	// alike, and the URL opens the message on the server; so does the
	// failure's link.
	for _, d := range rec.docs {
		link := d.Link()
		if link == nil || !strings.HasPrefix(*link, fmt.Sprintf("imap://127.0.0.1:%d/", s.TLSPort)) {
			t.Errorf("%s links to %v, want its IMAP URL", d.ID, link)
			continue
		}
		for _, sec := range d.Sections {
			if sec.Link == nil || *sec.Link != *link {
				t.Errorf("%s: a section links to %v, not %s", d.ID, sec.Link, *link)
			}
		}
		raw := s.Open(*link)
		if id := messageID(raw); id != d.ID && !(id == "" && d.ID == *link) {
			t.Errorf("%s opens the message %q, not %s's", *link, id, d.ID)
		}
	}
	if f := rec.failures[0].FailedDocument; f.DocumentLink == nil || messageID(s.Open(*f.DocumentLink)) != f.DocumentID {
		t.Errorf("the failure links to %v, not to %s", f.DocumentLink, f.DocumentID)
	}
	// Dovecot lists INBOX, Archive, Projects.Alpha (not Projects) and
	// Général, in an order of its own.
	if len(cps) != 5 || !strings.Contains(cps[0], `"Général"`) || !strings.Contains(cps[0], `"todo_mailboxes":["`) || !strings.Contains(cps[0], `"current_mailbox":null`) ||
		strings.Contains(cps[0], `"Projects"`) || !strings.HasSuffix(cps[4], `"todo_mailboxes":[],"current_mailbox":null}`) || !strings.HasPrefix(cps[4], `{"has_more":false`) {
		t.Errorf("checkpoints %q", cps)
	}
}

// A message on the real Dovecot with a PDF and a .docx attached is one
// document whose sections hold each attachment's text, found by a word
// of it; the attachments that cannot be read are named in its metadata
// and in a log line that says why, and the message is indexed all the
// same.
func TestImapAttachments(t *testing.T) {
	s := imaptest.Start(t)
	s.Append("INBOX", time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC), attachmentsMessage(t, true))
	var logs strings.Builder
	env := imapEnv(t)
	env.Log = slog.New(slog.NewTextHandler(&logs, nil))
	rec, _, err := runImap(t, env, s.Config(nil), Window{Start: time.Unix(0, 0), End: time.Now().Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.docs) != 1 || len(rec.failures) != 0 {
		t.Fatalf("%d documents and failures %+v, want one document", len(rec.docs), rec.failures)
	}
	d := rec.docs[0]
	found := map[string]string{}
	for _, sec := range d.Sections {
		for _, word := range []string{"limestone", "helmet", "crusher"} {
			if strings.Contains(sec.Text, word) {
				found[word] = strings.SplitN(sec.Text, "\n", 2)[0]
			}
		}
	}
	if want := map[string]string{"limestone": "report.pdf", "helmet": "handbook.docx", "crusher": "Field guide"}; !cmp.Equal(found, want) {
		t.Errorf("words found in the sections headed %v, want %v", found, want)
	}
	if got, want := d.Metadata[unreadAttachmentsKey], []string{"broken.docx (application/octet-stream)", "(application/x-unknown)"}; !cmp.Equal(got, any(want)) {
		t.Errorf("unread attachments %v, want %v", got, want)
	}
	for _, want := range []string{`msg="imap connector: an attachment of a message is not read" mailbox=INBOX uid=1 attachment=broken.docx type=application/octet-stream why="it is not a docx file (not a zip archive)"`,
		`attachment="" type=application/x-unknown why="Quarry does not read attachments of type application/x-unknown"`} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log has no %s; it is:\n%s", want, logs.String())
		}
	}
}

// A poll window reads only the messages that arrived within it, to the
// second, though IMAP's SEARCH knows only dates; a mailbox of more than a
// page is read a page a step, resuming at the next UID.
func TestImapPollWindow(t *testing.T) {
	s := imaptest.Start(t)
	start := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	end := start.Add(2 * time.Hour)
	msg := func(n int) string {
		return fmt.Sprintf("Message-ID: <m%d@example.com>\nSubject: Message %d\nFrom: a@example.com\n\nText %d.\n", n, n, n)
	}
	s.Append("INBOX", start.Add(-time.Second), msg(1)) // Before.
	s.Append("INBOX", start, msg(2))
	s.Append("INBOX", end.Add(-time.Second), msg(3))
	s.Append("INBOX", end, msg(4))                     // After: the window ends before it.
	s.Append("INBOX", start.AddDate(-1, 0, 0), msg(5)) // A year before.
	for n := 100; n < 100+imapPageSize+5; n++ {
		s.Append("Bulk", start.Add(time.Minute), msg(n))
	}
	rec, cps, err := runImap(t, imapEnv(t), s.Config(map[string]any{"mailboxes": []string{"INBOX", "Bulk"}}), Window{Start: start, End: end})
	if err != nil {
		t.Fatal(err)
	}
	docs, failures := imapSummary(rec)
	if len(failures) != 0 {
		t.Errorf("failures %q", failures)
	}
	if len(docs) != 2+imapPageSize+5 || docs[0] != "<m2@example.com> Message 2" || docs[1] != "<m3@example.com> Message 3" || docs[len(docs)-1] != "<m204@example.com> Message 204" {
		t.Errorf("%d documents, from %q", len(docs), docs[:min(3, len(docs))])
	}
	// Listing (configured), INBOX, Bulk's two pages.
	if len(cps) != 4 || !strings.Contains(cps[2], `"current_mailbox":{"mailbox":"Bulk","uid_validity":`) || !strings.Contains(cps[2], fmt.Sprintf(`"next_uid":%d}`, imapPageSize+1)) {
		t.Errorf("checkpoints %q", cps)
	}
	// A second run, from where the first ended: only what arrived since.
	s.Append("INBOX", end.Add(time.Minute), msg(6))
	rec, _, err = runImap(t, imapEnv(t), s.Config(map[string]any{"mailboxes": []string{"INBOX", "Bulk"}}), Window{Start: end, End: end.Add(time.Hour)})
	if docs, _ := imapSummary(rec); err != nil || !slices.Equal(docs, []string{"<m4@example.com> Message 4", "<m6@example.com> Message 6"}) {
		t.Errorf("the second window: %q, %v", docs, err)
	}
}

// STARTTLS on the plain port; a mailbox that does not exist is a failure
// of its entity, and the others are read.
func TestImapStartTLS(t *testing.T) {
	s := imaptest.Start(t)
	s.Append("INBOX", time.Now(), plainMessage)
	rec, _, err := runImap(t, imapEnv(t), s.Config(map[string]any{"port": s.StartTLSPort, "security": "starttls", "mailboxes": []string{"Nowhere", "INBOX"}}),
		Window{Start: time.Unix(0, 0), End: time.Now().Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	docs, failures := imapSummary(rec)
	if !slices.Equal(docs, []string{"<plain-1@example.com> Quarterly plan"}) || len(failures) != 1 ||
		!strings.HasPrefix(failures[0], "entity Nowhere the IMAP server refused to open the mailbox: Mailbox doesn't exist: Nowhere") {
		t.Errorf("documents %q, failures %q", docs, failures)
	}
	if f := rec.failures[0].FailedEntity; len(f.MissedTimeRange) != 2 {
		t.Errorf("the mailbox's failure misses %v", f.MissedTimeRange)
	}
}

// A password the server refuses fails the step with the server's reason,
// which does not quote the password; so do a certificate no authority
// signs and an address the egress guard does not open.
func TestImapRefused(t *testing.T) {
	s := imaptest.Start(t)
	w := Window{Start: time.Unix(0, 0), End: time.Now()}
	b, _ := json.Marshal(s.Config(nil))
	c, err := NewImap(b, json.RawMessage(`{"imap_username":"alice","imap_password":"wrong-password-77"}`), imapEnv(t))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Step(context.Background(), w, c.FirstCheckpoint(), &recorder{})
	var credential *CredentialError
	if want := fmt.Sprintf("the IMAP server 127.0.0.1:%d refused the login: Authentication failed. (AUTHENTICATIONFAILED)", s.TLSPort); !errors.As(err, &credential) || credential.Reason != want {
		t.Errorf("wrong password: %#v, want a CredentialError: %s", err, want)
	}
	if n := s.RefusedLogins(); n != 1 {
		t.Errorf("Dovecot refused %d logins, want 1: a refused login is not tried again", n)
	}
	if err != nil && strings.Contains(err.Error(), "wrong-password-77") {
		t.Errorf("the error quotes the password: %v", err)
	}

	cfg := s.Config(nil)
	delete(cfg, "ca_certificate")
	_, _, err = runImap(t, imapEnv(t), cfg, w)
	if err == nil || !strings.Contains(err.Error(), "the TLS handshake with the IMAP server") || !strings.Contains(err.Error(), "certificate signed by unknown authority") {
		t.Errorf("without the CA: %v", err)
	}

	env := imapEnv(t)
	env.Dial = toolrun.NewRunner(toolrun.Policy{}).Dial
	_, _, err = runImap(t, env, s.Config(nil), w)
	var refused *toolrun.RefusedError
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), toolrun.AllowSetting) {
		t.Errorf("through the default guard: %v, want its refusal", err)
	}
}

// A message larger than the limit is a failure of its document (named by
// its IMAP URL: its Message-ID was not read); a mailbox whose UIDVALIDITY
// changed between two steps is read again from its first message.
func TestImapLimitsAndUIDValidity(t *testing.T) {
	s := imaptest.Start(t)
	msg := func(n int, text string) string {
		return fmt.Sprintf("Message-ID: <m%d@example.com>\nSubject: Message %d\n\n%s\n", n, n, text)
	}
	arrived := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	s.Append("Box", arrived, msg(1, "small"))
	s.Append("Box", arrived, msg(2, strings.Repeat("large ", 300)))
	s.Append("Box", arrived, msg(3, "small"))
	b, _ := json.Marshal(s.Config(map[string]any{"mailboxes": []string{"Box"}}))
	cb, _ := json.Marshal(imaptest.Credential())
	c, err := NewImap(b, cb, imapEnv(t))
	if err != nil {
		t.Fatal(err)
	}
	m := c.(*Imap)
	m.pageSize, m.maxMessage = 2, 1<<10
	w := Window{Start: time.Unix(0, 0), End: time.Now().Add(time.Minute)}
	rec := &recorder{}
	step := func(cp json.RawMessage) json.RawMessage {
		t.Helper()
		next, err := c.Step(context.Background(), w, cp, rec)
		if err != nil {
			t.Fatal(err)
		}
		return next
	}
	cp := step(step(c.FirstCheckpoint())) // The mailboxes, then Box's first page.
	var got imapCheckpoint
	if err := json.Unmarshal(cp, &got); err != nil || got.CurrentMailbox == nil || got.CurrentMailbox.NextUID != 3 {
		t.Fatalf("checkpoint after the first page %s", cp)
	}
	first := got.CurrentMailbox.UIDValidity
	docs, failures := imapSummary(rec)
	wantURL := fmt.Sprintf("imap://127.0.0.1:%d/Box;UIDVALIDITY=%d/;UID=2", s.TLSPort, first)
	if !slices.Equal(docs, []string{"<m1@example.com> Message 1"}) || !slices.Equal(failures, []string{wantURL + " the message is larger than 1 KiB"}) {
		t.Errorf("first page: documents %q, failures %q", docs, failures)
	}

	s.Delete("Box")
	s.Append("Box", arrived, msg(4, "after"))
	s.Append("Box", arrived, msg(5, "after"))
	s.Append("Box", arrived, msg(6, "after"))
	rec.docs, rec.failures = nil, nil
	for more := true; more; {
		cp = step(cp)
		if more, err = HasMore(cp); err != nil {
			t.Fatal(err)
		}
	}
	if docs, _ := imapSummary(rec); !slices.Equal(docs, []string{"<m4@example.com> Message 4", "<m5@example.com> Message 5", "<m6@example.com> Message 6"}) {
		t.Errorf("after the UIDVALIDITY changed: %q", docs)
	}
}

// Any bytes a server sends as a message are a document or an error,
// never a panic; a document's text is valid UTF-8 and its id either
// empty or a Message-ID within the store's limit.
func FuzzImapDocument(f *testing.F) {
	for _, s := range []string{plainMessage, alternativeMessage, mixedMessage, brokenMessage, bareMessage, nested(4),
		"Subject: =?utf-8?b?////?=\nContent-Type: text/html; charset=shift_jis\n\n<p>\x82\xa0</p>\n",
		"Content-Type: message/rfc822\nContent-Transfer-Encoding: base64\n\nU3ViamVjdDogeAoKeQo=\n",
		"Content-Type: multipart/mixed; boundary=a\n\n--a\nContent-Type: application/rtf\nContent-Disposition: attachment\n\n{\\rtf1 x\\'e9}\n--a\nContent-Type: application/octet-stream; name=b.eml\n\nSubject: y\n\nz\n--a--\n"} {
		f.Add(crlf(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		d, err := imapDocument(testPDF, raw, time.Unix(0, 0))
		if err != nil {
			return
		}
		if len(d.ID) > quarry.MaxDocumentIDBytes || !utf8.ValidString(d.ID) || d.SemanticIdentifier == "" || !utf8.ValidString(d.SemanticIdentifier) {
			t.Errorf("id %q, semantic identifier %q", d.ID, d.SemanticIdentifier)
		}
		for _, s := range d.Sections {
			if !utf8.ValidString(s.Text) {
				t.Errorf("section %q is not UTF-8", s.Text)
			}
		}
	})
}

// BenchmarkImapRun reads 200 messages of about 2 KB (plain text and
// HTML alternatives, quoted-printable) from a local Dovecot, to the end of
// the run: messages/s is the connector's speed alone.
func BenchmarkImapRun(b *testing.B) {
	const messages = 200
	s := imaptest.Start(b)
	for n := range messages {
		s.Append("INBOX", time.Now(), benchMessage(n))
	}
	cfg, _ := json.Marshal(s.Config(nil))
	cred, _ := json.Marshal(imaptest.Credential())
	nets, hosts, _ := toolrun.ParseAllow("127.0.0.1")
	env := &Env{Dial: toolrun.NewRunner(toolrun.Policy{Allow: nets, AllowHosts: hosts}).Dial, PDF: testPDF, Now: time.Now, Log: slog.New(slog.DiscardHandler)}
	w := Window{Start: time.Unix(0, 0), End: time.Now().Add(time.Hour)}
	b.ResetTimer()
	for b.Loop() {
		c, err := NewImap(cfg, cred, env)
		if err != nil {
			b.Fatal(err)
		}
		rec := &recorder{}
		cp := c.FirstCheckpoint()
		for more := true; more; {
			if cp, err = c.Step(context.Background(), w, cp, rec); err != nil {
				b.Fatal(err)
			}
			more, _ = HasMore(cp)
		}
		if len(rec.docs) != messages {
			b.Fatalf("%d documents, want %d", len(rec.docs), messages)
		}
	}
	b.ReportMetric(float64(b.N*messages)/b.Elapsed().Seconds(), "messages/s")
}

// benchMessage is a message of about 2 KB, plain text and HTML.
func benchMessage(n int) string {
	para := strings.Repeat(fmt.Sprintf("Paragraph of message %d about the quarterly plan, caf=C3=A9 and budgets. ", n), 6)
	return fmt.Sprintf("Message-ID: <bench-%d@example.com>\nSubject: Message %d\nFrom: Bob <bob@example.com>\nTo: alice@example.com\n"+
		"MIME-Version: 1.0\nContent-Type: multipart/alternative; boundary=alt\n\n--alt\nContent-Type: text/plain; charset=utf-8\n"+
		"Content-Transfer-Encoding: quoted-printable\n\n%s\n--alt\nContent-Type: text/html; charset=utf-8\nContent-Transfer-Encoding: quoted-printable\n\n<p>%s</p>\n--alt--\n",
		n, n, para, para)
}
