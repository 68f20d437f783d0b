package outbound_test

import (
	"database/sql"
	"encoding/base64"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/outbound/connector/imaptest"
)

// imapPair makes an IMAP connector of config, a credential of the test
// user with password, and their pair, as the admin, and returns the ids
// of the connector, the credential and the pair.
func (w *world) imapPair(config map[string]any, password string) (connectorID, credentialID, pairID int64) {
	w.t.Helper()
	return w.imapPairEvery(config, password, nil)
}

// imapPairEvery is imapPair with the connector's refresh frequency
// (seconds; nil for none).
func (w *world) imapPairEvery(config map[string]any, password string, refreshFreq *int64) (connectorID, credentialID, pairID int64) {
	w.t.Helper()
	var id struct {
		ID   int64 `json:"id"`
		Data int64 `json:"data"`
	}
	name := fmt.Sprintf("imap %s %d", w.t.Name(), time.Now().UnixNano())
	w.do("POST", "/manage/admin/connector", map[string]any{"name": name, "source": "imap",
		"input_type": "poll", "connector_specific_config": config, "refresh_freq": refreshFreq}, &id)
	connectorID = id.ID + id.Data
	id.ID, id.Data = 0, 0
	w.do("POST", "/manage/credential", map[string]any{"credential_json": map[string]string{"imap_username": imaptest.User, "imap_password": password},
		"admin_public": true, "source": "imap"}, &id)
	credentialID = id.ID + id.Data
	id.ID, id.Data = 0, 0
	w.do("PUT", fmt.Sprintf("/manage/connector/%d/credential/%d", connectorID, credentialID),
		map[string]any{"name": "pair " + name, "access_type": "public", "groups": []int64{}}, &id)
	return connectorID, credentialID, id.ID + id.Data
}

// An IMAP account read by a worker whose connectors reach 127.0.0.1
// through the egress guard, on a real Dovecot: the first attempt reads
// every message of every mailbox, text attachments too; the next reads
// only what arrived since, and the message that cannot be parsed is its
// one error. A pair whose password the server refuses fails with the
// server's reason, and the other pair is read all the same.
func TestImapConnectorRun(t *testing.T) {
	s := imaptest.Start(t)
	w := newWorld(t)
	w.registeredWorker()
	old := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	s.Append("INBOX", old, "Message-ID: <one@example.com>\nSubject: First\nFrom: Bob <bob@example.com>\nTo: alice@example.com\n\nThe first message.\n")
	s.Append("Archive", old, "Message-ID: <two@example.com>\nSubject: Second\nFrom: carol@example.com\nContent-Type: multipart/mixed; boundary=b\n\n--b\n\nSee the file.\n--b\nContent-Type: text/plain; name=notes.txt\nContent-Disposition: attachment; filename=notes.txt\n\nThe notes.\n--b--\n")
	connectorID, credentialID, pair := w.imapPair(s.Config(nil), imaptest.Password)
	_, _, refused := w.imapPair(s.Config(nil), "not-the-password")
	w.schedule()
	a := w.waitAttempt(pair, 1, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed)
	if a.Status != quarry.IndexSuccess || a.NewDocsIndexed != 2 {
		t.Errorf("attempt %s with %d new documents (error %v), want success with 2", a.Status, a.NewDocsIndexed, a.ErrorMsg)
	}
	if got, want := w.documentNames(pair, ""), []string{"<one@example.com> First", "<two@example.com> Second"}; !slices.Equal(got, want) {
		t.Errorf("documents %q, want %q", got, want)
	}
	doc, body := w.document(pair, "<two@example.com>")
	// Its text, and every section linked to the message's IMAP URL.
	link := regexp.MustCompile(fmt.Sprintf(`^imap://127\.0\.0\.1:%d/Archive;UIDVALIDITY=[0-9]+/;UID=1$`, s.TLSPort))
	if len(doc.Sections) != 2 || doc.Sections[0].Text != "See the file." || doc.Sections[1].Text != "notes.txt\n\nThe notes." ||
		doc.Sections[0].Link == nil || !link.MatchString(*doc.Sections[0].Link) || doc.Sections[1].Link == nil || *doc.Sections[1].Link != *doc.Sections[0].Link ||
		doc.DocUpdatedAt == nil || !doc.DocUpdatedAt.Equal(old) || len(doc.PrimaryOwners) != 1 || string(doc.PrimaryOwners[0]) != `{"display_name":"","email":"carol@example.com"}` {
		t.Errorf("the second message's document %s", body)
	}
	var stored string
	if err := w.raw.QueryRow(`SELECT link FROM documents WHERE cc_pair_id = $1 AND id = '<two@example.com>'`, pair).Scan(&stored); err != nil || !link.MatchString(stored) {
		t.Errorf("the document's link %q (%v), want its IMAP URL", stored, err)
	}
	b := w.waitAttempt(refused, 1, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed, quarry.IndexCanceled)
	if want := quarry.CredentialRefusedMessage(fmt.Sprintf("the IMAP server 127.0.0.1:%d refused the login: Authentication failed. (AUTHENTICATIONFAILED)",
		s.TLSPort)); b.Status != quarry.IndexFailed || b.ErrorMsg == nil || *b.ErrorMsg != want {
		t.Errorf("the refused pair's attempt %s with error %v, want failed: %s", b.Status, b.ErrorMsg, want)
	}
	var state map[string]any
	w.do("GET", fmt.Sprintf("/manage/admin/cc-pair/%d", refused), nil, &state)
	if state["status"] != "INITIAL_INDEXING" {
		t.Errorf("the refused pair is %v, want still INITIAL_INDEXING (not paused, not invalid)", state["status"])
	}

	s.Append("INBOX", time.Now(), "Message-ID: <three@example.com>\nSubject: Third\nFrom: dan@example.com\n\nA new message.\n")
	s.Append("INBOX", time.Now(), "From: eve@example.com\nThis line is not a header\nMessage-ID: <broken@example.com>\n\nbody\n")
	w.do("POST", "/manage/admin/connector/run-once", map[string]any{"connector_id": connectorID,
		"credential_ids": []int64{credentialID}, "from_beginning": false}, nil)
	w.schedule()
	a = w.waitAttempt(pair, 2, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed)
	if a.Status != quarry.IndexCompletedWithErrors || a.NewDocsIndexed != 1 || a.TotalDocsIndexed != 1 {
		t.Errorf("second attempt %s with %d new and %d written documents (error %v), want completed_with_errors with the one new", a.Status, a.NewDocsIndexed, a.TotalDocsIndexed, a.ErrorMsg)
	}
	if got := w.documents(pair); len(got) != 3 {
		t.Errorf("documents after the second attempt %q", got)
	}
	es := w.errors(pair)
	if len(es) != 1 || es[0].DocumentID == nil || *es[0].DocumentID != "<broken@example.com>" ||
		es[0].FailureMessage != "the message cannot be read: its header: malformed header line: This line is not a header" {
		t.Errorf("errors %+v, want the broken message's", es)
	}
}

// A message on a real Dovecot with a PDF and a .docx attached (files of
// real producers), and an image, is indexed whole through a worker: a
// search for a word of each attachment finds it, on both databases, and
// its document names the image it could not read.
func TestImapAttachmentsFound(t *testing.T) {
	s := imaptest.Start(t)
	w := newWorld(t)
	w.registeredWorker()
	var msg strings.Builder
	msg.WriteString("Message-ID: <files@example.com>\nSubject: Site files\nFrom: rosa@example.com\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=f\n\n--f\n\nThe files are attached.\n")
	for _, a := range []struct{ name, mediaType string }{{"report.pdf", "application/pdf"},
		{"handbook.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"}, {"chart.png", "image/png"}} {
		b := []byte("PNG")
		if a.name != "chart.png" {
			var err error
			if b, err = os.ReadFile("connector/testdata/file/" + a.name); err != nil {
				t.Fatal(err)
			}
		}
		fmt.Fprintf(&msg, "--f\nContent-Type: %s\nContent-Disposition: attachment; filename=%q\nContent-Transfer-Encoding: base64\n\n", a.mediaType, a.name)
		for enc := base64.StdEncoding.EncodeToString(b); enc != ""; {
			n := min(len(enc), 76)
			msg.WriteString(enc[:n] + "\n")
			enc = enc[n:]
		}
	}
	msg.WriteString("--f--\n")
	s.Append("INBOX", time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC), msg.String())
	_, _, pair := w.imapPair(s.Config(nil), imaptest.Password)
	w.schedule()
	a := w.waitAttempt(pair, 1, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed)
	if a.Status != quarry.IndexSuccess || a.NewDocsIndexed != 1 {
		t.Fatalf("attempt %s with %d new documents (error %v), want success with 1", a.Status, a.NewDocsIndexed, a.ErrorMsg)
	}
	for _, q := range []string{"limestone", "helmet", "attached"} {
		var found struct {
			SearchDocs []struct {
				SemanticIdentifier string         `json:"semantic_identifier"`
				Metadata           map[string]any `json:"metadata"`
			} `json:"search_docs"`
		}
		w.do("POST", "/search/send-search-message", map[string]any{"search_query": q}, &found)
		if len(found.SearchDocs) != 1 || found.SearchDocs[0].SemanticIdentifier != "Site files" ||
			fmt.Sprint(found.SearchDocs[0].Metadata["unread_attachments"]) != "[chart.png (image/png)]" {
			t.Errorf("a search for %q found %+v, want the message, naming chart.png unread", q, found.SearchDocs)
		}
	}
}

// A wrong IMAP password (issue 39), on a real Dovecot: each attempt logs
// in once (Dovecot's log counts the refusals), is not retried within the
// attempt, ends failed saying the server refused the credentials, and
// the next attempt waits the refresh frequency, then twice that; the pair
// stays out of the repeated error state. A corrected password is tried at
// once. The store's clock moves; no test sleeps.
func TestImapRefusedLoginBacksOff(t *testing.T) {
	s := imaptest.Start(t)
	s.Append("INBOX", time.Now(), "Message-ID: <one@example.com>\nSubject: First\nFrom: bob@example.com\n\nThe first message.\n")
	w := newWorld(t)
	w.registeredWorker()
	refresh := int64(600)
	_, credentialID, pair := w.imapPairEvery(s.Config(nil), "not-the-password", &refresh)
	var now, lastEnd time.Time
	defer func() { w.db.Now = time.Now }()
	refusals := func(want int) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); s.RefusedLogins() < want && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond) // Dovecot's log is written apart from its answer.
		}
		if got := s.RefusedLogins(); got != want {
			t.Fatalf("Dovecot refused %d logins, want %d: one per attempt", got, want)
		}
	}
	nextIndexAt := func() time.Time {
		t.Helper()
		var us sql.NullInt64
		if err := w.raw.QueryRow(`SELECT next_index_at FROM cc_pairs WHERE id = $1`, pair).Scan(&us); err != nil || !us.Valid {
			t.Fatalf("next_index_at %v, %v", us, err)
		}
		return time.UnixMicro(us.Int64)
	}
	for n, wait := range []time.Duration{10 * time.Minute, 20 * time.Minute} {
		if res := w.schedule(); res.Created != 1 {
			t.Fatalf("attempt %d: the scheduler made %d", n+1, res.Created)
		}
		a := w.waitAttempt(pair, n+1, quarry.IndexSuccess, quarry.IndexFailed, quarry.IndexCanceled)
		if want := quarry.CredentialRefusedMessage(fmt.Sprintf("the IMAP server 127.0.0.1:%d refused the login: Authentication failed. (AUTHENTICATIONFAILED)",
			s.TLSPort)); a.Status != quarry.IndexFailed || a.ErrorMsg == nil || *a.ErrorMsg != want {
			t.Fatalf("attempt %d: %s with error %v, want failed: %s", n+1, a.Status, a.ErrorMsg, want)
		}
		refusals(n + 1)
		lastEnd = a.TimeUpdated.Time
		if got, want := nextIndexAt(), a.TimeUpdated.Add(wait); !got.Equal(want) {
			t.Errorf("after %d refusals the next attempt is at %s, want %s (%s after the last)", n+1, got, want, wait)
		}
		var m map[string]any
		w.do("GET", fmt.Sprintf("/manage/admin/cc-pair/%d", pair), nil, &m)
		if m["in_repeated_error_state"] != false || m["status"] != "INITIAL_INDEXING" {
			t.Errorf("the pair after %d refusals: %v", n+1, m)
		}
		if res := w.schedule(); res.Created != 0 {
			t.Fatalf("the scheduler made an attempt before the backoff ended")
		}
		now = nextIndexAt().Add(time.Second)
		at := now
		w.db.Now = func() time.Time { return at }
	}
	// A minute after the last refusal, long before the backoff ends: the
	// edit alone makes the pair due.
	w.db.Now = func() time.Time { return lastEnd.Add(time.Minute) }
	w.do("PATCH", fmt.Sprintf("/manage/credential/%d", credentialID), map[string]any{"credential_json": map[string]string{
		"imap_username": imaptest.User, "imap_password": imaptest.Password}}, nil)
	if res := w.schedule(); res.Created != 1 {
		t.Fatalf("after the credential's edit the scheduler made %d attempts, want 1", res.Created)
	}
	if a := w.waitAttempt(pair, 3, quarry.IndexSuccess, quarry.IndexFailed, quarry.IndexCanceled); a.Status != quarry.IndexSuccess || a.NewDocsIndexed != 1 {
		t.Errorf("the attempt with the corrected password: %s, %d new (error %v)", a.Status, a.NewDocsIndexed, a.ErrorMsg)
	}
	refusals(2)
}

// BenchmarkImapConnectorIndexing indexes 200 messages of about 1 KB from
// a local Dovecot, from the scheduler's pass to the attempt's end, through
// the worker of quarry serve into the store: messages/s is the IMAP
// connector's indexing speed, the server and the store on the same
// machine.
func BenchmarkImapConnectorIndexing(b *testing.B) {
	const messages = 200
	s := imaptest.Start(b)
	for n := range messages {
		s.Append("INBOX", time.Now(), fmt.Sprintf("Message-ID: <bench-%d@example.com>\nSubject: Message %d\nFrom: bob@example.com\nTo: alice@example.com\n\n%s\n",
			n, n, strings.Repeat(fmt.Sprintf("Line %d of the quarterly plan and its budget. ", n), 20)))
	}
	w := newWorld(b)
	w.inProcessWorker()
	b.ResetTimer()
	for b.Loop() {
		_, _, pair := w.imapPair(s.Config(nil), imaptest.Password)
		w.schedule()
		a := w.waitAttempt(pair, 1, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed)
		if a.Status != quarry.IndexSuccess || a.NewDocsIndexed != messages {
			b.Fatalf("attempt %s with %d new documents (error %v), want success with %d", a.Status, a.NewDocsIndexed, a.ErrorMsg, messages)
		}
	}
	b.ReportMetric(float64(b.N*messages)/b.Elapsed().Seconds(), "messages/s")
}
