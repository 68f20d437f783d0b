package connector

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/klippa-app/go-pdfium"
	pdfiumerrors "github.com/klippa-app/go-pdfium/errors"
	"github.com/klippa-app/go-pdfium/requests"
	"github.com/klippa-app/go-pdfium/webassembly"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
)

// PDFs are read by PDFium, Chromium's PDF library, compiled to
// WebAssembly and run by wazero in the process (github.com/klippa-app/go-pdfium's
// webassembly mode; docs/decisions.md, "PDF: PDFium in WebAssembly"). The
// module comes inside the Go module (no download); it is compiled once per
// PDFReader (a process has one), on the first PDF, and each PDF is read by
// an instance of its own, in a sandbox with no file system, at most
// maxPDFMemory of memory and maxPDFTime of time.

// Limits of the PDF reader.
const (
	// maxPDFMemory bounds the memory of the instance reading one PDF.
	maxPDFMemory = 512 << 20
	// maxPDFTime bounds the time of reading one PDF.
	maxPDFTime = 2 * time.Minute
	// maxPDFInstances is how many PDFs a PDFReader reads at once.
	maxPDFInstances = 2
)

// PDFReader reads PDFs: PDFium's module, compiled on the first PDF and
// kept for the reader's life, and at most maxPDFInstances instances of it
// at once. One reader serves a process; it is safe for concurrent use,
// Close included.
type PDFReader struct {
	cacheDir string // Where wazero keeps the module compiled, if anywhere.
	once     sync.Once
	pool     pdfium.Pool
	err      error

	mu     sync.Mutex
	closed bool
	reads  sync.WaitGroup // The reads in flight, which Close waits for.
}

// errPDFReaderClosed is the error of a PDF read once its reader is
// closed (the process is shutting down).
var errPDFReaderClosed = errors.New("the PDF reader is closed")

// NewPDFReader returns a PDF reader that keeps its module, compiled to
// machine code, in the directory cacheDir (made if missing) and uses it
// when it is there: the first PDF then starts the reader in seconds, not
// in the tens of seconds compiling takes on a busy machine. cacheDir must
// be writable by this user only; empty, the module is compiled at every
// start.
func NewPDFReader(cacheDir string) *PDFReader { return &PDFReader{cacheDir: cacheDir} }

// Close waits for the reads in flight (each at most maxPDFTime) and ends
// the reader's instances, if it started. A read after Close is an error
// that says so; a nil reader, or one closed before, has nothing to close.
func (p *PDFReader) Close() error {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.mu.Unlock()
	p.reads.Wait()
	p.once.Do(func() { p.err = errPDFReaderClosed }) // Never started.
	if p.pool == nil {
		return nil
	}
	return p.pool.Close()
}

// acquire returns the reader's PDFium pool for a read, compiling the module
// on the first one; the caller calls p.reads.Done once the read is over.
func (p *PDFReader) acquire() (pdfium.Pool, error) {
	if p == nil {
		return nil, errors.New("no PDF reader is configured")
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, errPDFReaderClosed
	}
	p.reads.Add(1)
	p.mu.Unlock()
	p.once.Do(func() {
		rc := wazero.NewRuntimeConfig().
			WithCoreFeatures(api.CoreFeaturesV2 | experimental.CoreFeaturesExceptionHandling).
			WithMemoryLimitPages(maxPDFMemory / 65536).
			WithCloseOnContextDone(true)
		if p.cacheDir != "" {
			if c, err := wazero.NewCompilationCacheWithDir(p.cacheDir); err == nil {
				rc = rc.WithCompilationCache(c)
			}
		}
		p.pool, p.err = webassembly.Init(webassembly.Config{
			MinIdle: 0, MaxIdle: maxPDFInstances, MaxTotal: maxPDFInstances,
			FSConfig: wazero.NewFSConfig(), RuntimeConfig: rc,
			Stdout: io.Discard, Stderr: io.Discard,
		})
		if p.err != nil {
			p.err = fmt.Errorf("the PDF reader does not start: %w", p.err)
		}
	})
	if p.err != nil {
		p.reads.Done()
		return nil, p.err
	}
	return p.pool, nil
}

// pdfText writes the text of the PDF file b, read by p, page after page,
// a line per line of text. An encrypted PDF is read when its password is
// empty (a PDF that may be opened by anyone, only its owner's rights
// restricted); one with a password is an error that says so.
func pdfText(p *PDFReader, out *textBuffer, b []byte) error {
	if !bytes.HasPrefix(bytes.TrimLeft(b, "\x00\t\r\n "), []byte("%PDF-")) {
		return errors.New("it is not a PDF file")
	}
	pool, err := p.acquire()
	if err != nil {
		return err
	}
	defer p.reads.Done()
	ctx, cancel := context.WithTimeout(context.Background(), maxPDFTime)
	defer cancel()
	inst, err := pool.GetInstanceWithContext(ctx)
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("the PDF reader has no instance free within %s", maxPDFTime)
	case err != nil:
		return fmt.Errorf("the PDF reader has no instance for it (%v)", err)
	}
	timedOut := false
	var mu sync.Mutex
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		timedOut = true
		mu.Unlock()
		inst.Kill()
	})
	err = pdfPages(out, inst, b)
	if stop() {
		inst.Close()
	}
	mu.Lock()
	defer mu.Unlock()
	if timedOut {
		return fmt.Errorf("reading it took longer than %s, the most the connector allows a PDF", maxPDFTime)
	}
	return err
}

// pdfPages writes the text of every page of the PDF b, read by inst.
func pdfPages(out *textBuffer, inst pdfium.Pdfium, b []byte) (err error) {
	defer func() {
		// PDFium's instance ends in a trap (out of memory, a fault of the
		// module): its calls panic, the reading fails.
		if r := recover(); r != nil {
			err = fmt.Errorf("the PDF reader failed on it (%v)", r)
		}
	}()
	doc, err := inst.OpenDocument(&requests.OpenDocument{File: &b})
	switch {
	case errors.Is(err, pdfiumerrors.ErrPassword), errors.Is(err, pdfiumerrors.ErrSecurity):
		return errors.New("it is a PDF encrypted with a password, which the file connector does not read")
	case err != nil:
		return fmt.Errorf("it is not a PDF file that can be read (%s)", pdfError(err))
	}
	defer inst.FPDF_CloseDocument(&requests.FPDF_CloseDocument{Document: doc.Document})
	n, err := inst.FPDF_GetPageCount(&requests.FPDF_GetPageCount{Document: doc.Document})
	if err != nil {
		return fmt.Errorf("its pages cannot be read (%s)", pdfError(err))
	}
	for i := range n.PageCount {
		t, err := inst.GetPageText(&requests.GetPageText{Page: requests.Page{ByIndex: &requests.PageByIndex{Document: doc.Document, Index: i}}})
		if err != nil {
			return fmt.Errorf("its page %d cannot be read (%s)", i+1, pdfError(err))
		}
		text := strings.ReplaceAll(strings.ReplaceAll(t.Text, "\r\n", "\n"), "\r", "\n")
		if i > 0 {
			text = "\n" + text
		}
		if err := out.WriteString(pdfClean(text)); err != nil {
			return err
		}
	}
	return nil
}

// pdfClean returns PDFium's text of a page as valid UTF-8, its ligatures
// spelled out and its control characters (other than tabs and line
// breaks) left out: PDFium marks some breaks inside a word with U+0002
// (groff's "Waf\x02fles").
func pdfClean(s string) string {
	s = ligatures.Replace(strings.ToValidUTF8(s, "\uFFFD"))
	return strings.Map(func(r rune) rune {
		if r < 0x20 && r != '\t' && r != '\n' || r == 0x7f {
			return -1
		}
		return r
	}, s)
}

// ligatures spells out the Latin ligatures of Unicode's presentation
// forms (U+FB00 to U+FB06), which PDFium gives for a ligature glyph whose
// font maps it to one (Ghostscript's fonts do): "ﬄ" is "ffl", so that
// "waﬄe" is found by "waffle".
var ligatures = strings.NewReplacer("\uFB00", "ff", "\uFB01", "fi", "\uFB02", "fl", "\uFB03", "ffi", "\uFB04", "ffl", "\uFB05", "st", "\uFB06", "st")

// pdfError returns PDFium's error without its number ("3: incorrect
// format" is "incorrect format").
func pdfError(err error) string {
	s := err.Error()
	if n, rest, ok := strings.Cut(s, ": "); ok && strings.Trim(n, "0123456789") == "" {
		return rest
	}
	return s
}
