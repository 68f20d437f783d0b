package connector

import (
	"fmt"
	"net"
	"sync"
)

// imapMaxAnswerBytes bounds what the IMAP connector reads of one answer of
// a server: everything it sends from one command of the connector to the
// next (the greeting, the TLS handshake and the login being the first
// answer), responses, their lines and their literals together, counted as
// they come off the connection. The messages' content that a fetch asks
// for is allowed on top, by the sizes the server gave (at most
// imapMaxMessageBytes in one fetch). Legitimate answers are far smaller:
// the longest, a SEARCH of a mailbox of a million messages, is about
// 7 MB; the others are a few kilobytes. An answer past the limit fails
// the step with an error naming the limit.
//
// The bound is on answers, not lines: go-imap (v2.0.0-beta.8) reads a
// line, a quoted string (across line ends) or a literal it must keep into
// memory whole, with no limit of its own, so only the bytes of the
// connection bound what it holds; counting them below TLS bounds the
// text above it, which is never larger.
const imapMaxAnswerBytes = 16 << 20

// imapBudget is the connection to an IMAP server as the connector reads
// it: reads fail once the server has sent more than the budget of the
// answer being read. The client's reading goroutine reads it while the
// connector sets the next answer's budget.
type imapBudget struct {
	net.Conn
	mu    sync.Mutex
	left  int64 // What the server may still send of this answer.
	limit int64 // The budget of this answer, less extra.
	extra int64 // The size of the messages this answer may hold.
	err   error // Set once the server sent more.
}

// newImapBudget returns c bounded, the first answer (the greeting) to
// limit bytes.
func newImapBudget(c net.Conn, limit int64) *imapBudget {
	return &imapBudget{Conn: c, left: limit, limit: limit}
}

// expect starts the budget of the answer to the next command: limit
// bytes, and extra more for the messages it fetches.
func (b *imapBudget) expect(limit, extra int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.left, b.limit, b.extra = limit+extra, limit, extra
}

// exceeded returns the error of an answer past its budget, or nil.
func (b *imapBudget) exceeded() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}

// Read reads at most one byte past the budget; that byte is not given,
// and the read fails, as do all the next.
func (b *imapBudget) Read(p []byte) (int, error) {
	b.mu.Lock()
	if b.err != nil {
		b.mu.Unlock()
		return 0, b.err
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	b.mu.Unlock()
	n, err := b.Conn.Read(p)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.left -= int64(n); b.left < 0 {
		what := "an answer of the IMAP server"
		if b.extra > 0 {
			what += fmt.Sprintf(", less the %d bytes of the messages it was asked for,", b.extra)
		}
		b.err = &limitError{what: what, limit: b.limit}
		return max(n-1, 0), b.err
	}
	return n, err
}
