// Command pdffidelity measures how much of a PDF's text each candidate
// reader recovers: for every file NAME.pdf in a directory whose source
// text is in NAME.txt (or source.txt), the share of the source's words
// that the reader's text holds (see fidelity.Of). It compares PDFium in
// WebAssembly (go-pdfium on wazero), pdfcpu (the strings of the page
// content streams, the most its API gives) and Quarry's reader
// (connector.ExtractText), and prints a table of the figures, with the
// time and memory each took. docs/decisions.md gives the figures that
// chose Quarry's reader.
//
// Usage: go run . DIR
package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/klippa-app/go-pdfium"
	"github.com/klippa-app/go-pdfium/requests"
	"github.com/klippa-app/go-pdfium/webassembly"
	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/tetratelabs/wazero"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/internal/fidelity"
	"github.com/quarryhq/quarry/outbound/connector"
)

type reader struct {
	name string
	text func(b []byte) (string, error)
}

func main() {
	dir := os.Args[1]
	start := time.Now()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	pool, err := webassembly.Init(webassembly.Config{MinIdle: 1, MaxIdle: 1, MaxTotal: 1, FSConfig: wazero.NewFSConfig()})
	if err != nil {
		panic(err)
	}
	inst, err := pool.GetInstance(30 * time.Second)
	if err != nil {
		panic(err)
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	fmt.Printf("PDFium (WebAssembly) start-up: %v, heap %d MiB, from the system %d MiB\n",
		time.Since(start).Round(time.Millisecond), after.HeapAlloc>>20, (after.Sys-before.Sys)>>20)
	quarryPDF := connector.NewPDFReader("")
	defer quarryPDF.Close()
	readers := []reader{
		{"pdfium-wasm", func(b []byte) (string, error) { return pdfiumText(inst, b) }},
		{"pdfcpu", pdfcpuText},
		{"quarry", func(b []byte) (string, error) {
			return connector.ExtractText(quarryPDF, quarry.FileKindPDF, bytes.NewReader(b), 1<<24)
		}},
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.pdf"))
	sort.Strings(files)
	fmt.Printf("%-28s", "file")
	for _, r := range readers {
		fmt.Printf(" %22s", r.name)
	}
	fmt.Println()
	sums := make([]float64, len(readers))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		src, err := os.ReadFile(strings.TrimSuffix(f, ".pdf") + ".txt")
		if err != nil {
			src, _ = os.ReadFile(filepath.Join(dir, "source.txt"))
		}
		fmt.Printf("%-28s", filepath.Base(f))
		for i, r := range readers {
			t0 := time.Now()
			text, err := r.text(b)
			d := time.Since(t0)
			if err != nil {
				fmt.Printf(" %22s", "error")
				if os.Getenv("VERBOSE") != "" {
					fmt.Fprintf(os.Stderr, "%s %s: %v\n", f, r.name, err)
				}
				continue
			}
			fi := fidelity.Of(string(src), text)
			sums[i] += fi
			fmt.Printf(" %14.1f%% %5dms", 100*fi, d.Milliseconds())
			if os.Getenv("VERBOSE") != "" {
				fmt.Fprintf(os.Stderr, "--- %s %s\n%s\n", f, r.name, text)
			}
		}
		fmt.Println()
	}
	fmt.Printf("%-28s", "mean")
	for i := range readers {
		fmt.Printf(" %14.1f%% %7s", 100*sums[i]/float64(len(files)), "")
	}
	fmt.Println()
}

// pdfiumText returns the text of every page of b, by PDFium.
func pdfiumText(inst pdfium.Pdfium, b []byte) (string, error) {
	doc, err := inst.OpenDocument(&requests.OpenDocument{File: &b})
	if err != nil {
		return "", err
	}
	defer inst.FPDF_CloseDocument(&requests.FPDF_CloseDocument{Document: doc.Document})
	n, err := inst.FPDF_GetPageCount(&requests.FPDF_GetPageCount{Document: doc.Document})
	if err != nil {
		return "", err
	}
	var out strings.Builder
	for i := 0; i < n.PageCount; i++ {
		t, err := inst.GetPageText(&requests.GetPageText{Page: requests.Page{ByIndex: &requests.PageByIndex{Document: doc.Document, Index: i}}})
		if err != nil {
			return "", err
		}
		out.WriteString(t.Text)
		out.WriteString("\n")
	}
	return out.String(), nil
}

var pdfString = regexp.MustCompile(`\((?:[^()\\]|\\.)*\)`)

// pdfcpuText returns the literal strings of the shown text of every
// page's content, as pdfcpu decodes the content streams: pdfcpu has no
// text extraction of its own, and does not map a font's codes to text.
func pdfcpuText(b []byte) (string, error) {
	var out strings.Builder
	conf := model.NewDefaultConfiguration()
	err := api.ExtractContent(bytes.NewReader(b), nil, func(r io.Reader, _ int) error {
		c, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		for _, line := range strings.Split(string(c), "\n") {
			if strings.HasSuffix(line, "Tj") || strings.HasSuffix(line, "TJ") || strings.HasSuffix(line, "'") {
				for _, s := range pdfString.FindAllString(line, -1) {
					out.WriteString(s[1 : len(s)-1])
				}
				out.WriteString("\n")
			}
		}
		return nil
	}, conf)
	return out.String(), err
}
