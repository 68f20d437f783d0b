package connector

import (
	"fmt"
	"io"
)

// Every read of a connector from a server (or a file) is bounded: what a
// server sends past a limit is never read, and the read fails with a
// *limitError that names the limit. The limits are named constants beside
// each connector (imap.go, mediawiki.go, web.go, robots.go, filetext.go);
// docs/operations.md lists them per connector.

// limitError is the error of a read that went past a limit: what was
// read, and the limit, in bytes.
type limitError struct {
	what  string // "the page", "an answer of the wiki's API at …"
	limit int64
}

func (e *limitError) Error() string {
	return fmt.Sprintf("%s is larger than %s, the most the connector reads", e.what, ByteSize(e.limit))
}

// boundedReader reads r until more than max bytes come, then fails with
// tooLarge: it reads at most one byte past the limit, so that a stream of
// exactly max bytes ends as it should.
type boundedReader struct {
	r        io.Reader
	left     int64 // Bytes that may still be read; -1 once past the limit.
	tooLarge error
}

// newBoundedReader returns the reader of at most max bytes of r, failing
// with tooLarge past them.
func newBoundedReader(r io.Reader, max int64, tooLarge error) *boundedReader {
	return &boundedReader{r: r, left: max, tooLarge: tooLarge}
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, b.tooLarge
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.r.Read(p)
	if b.left -= int64(n); b.left < 0 {
		return n - 1, b.tooLarge // The byte past the limit is not given.
	}
	return n, err
}

// ByteSize writes n bytes in MiB or KiB when it is a whole number of
// them, else in bytes: the limits of what Quarry reads, as its errors
// name them.
func ByteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
