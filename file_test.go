package quarry

import (
	"archive/zip"
	"bytes"
	"io"
	"os"
	"testing"
)

func TestKeepArchiveEntry(t *testing.T) {
	for name, want := range map[string]bool{
		"a.txt": true, "dir/a.txt": true, ".onyx_metadata.json": false, "__MACOSX/._a.txt": false,
		"dir/.hidden/a.txt": false, "a/../b.txt": true, "win\\.x\\a.txt": false,
	} {
		if got := KeepArchiveEntry(name); got != want {
			t.Errorf("KeepArchiveEntry(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestIsZipUpload(t *testing.T) {
	for _, tc := range []struct {
		name, ct string
		want     bool
	}{
		{"a.ZIP", "", true}, {"a.bin", "application/x-zip-compressed", true}, {"a.txt", "text/plain", false},
		{"a.zip.txt", "", false}, {"x", "multipart/x-zip", true},
	} {
		if got := IsZipUpload(tc.name, tc.ct); got != tc.want {
			t.Errorf("IsZipUpload(%q, %q) = %v, want %v", tc.name, tc.ct, got, tc.want)
		}
	}
}

// The file connector reads files by their extension, in any case; what
// it does not read is said in a sentence naming the kinds it reads.
func TestFileKind(t *testing.T) {
	const reads = ": it reads .txt, .md, .markdown, .mdx, .json, .jsonl, .log, .xml, .yaml, .yml, .conf, .ini, .tsv, .html, .htm, .csv, .pdf, .docx, .pptx, .xlsx, .odt, .ods, .odp, .rtf, .epub and .eml files"
	for _, tc := range []struct{ name, kind, why string }{
		{"notes.TXT", FileKindText, ""}, {"dir/page.Htm", FileKindHTML, ""}, {"a.csv", FileKindCSV, ""}, {"r.pdf", FileKindPDF, ""},
		{"h.docx", FileKindDOCX, ""}, {"d.PPTX", FileKindPPTX, ""}, {"x.tar.gz.json", FileKindText, ""},
		{"chart.png", "", "Quarry does not read .png files" + reads},
		{"Letter.ODT", FileKindODT, ""}, {"s.xlsx", FileKindXLSX, ""}, {"s.ods", FileKindODS, ""}, {"p.odp", FileKindODP, ""},
		{"Notes.RTF", FileKindRTF, ""}, {"book.epub", FileKindEPUB, ""}, {"mail.eml", FileKindEML, ""},
		{"Letter.DOC", "", "Quarry does not read .doc files" + reads},
		{"Makefile", "", "Quarry reads files by their extension, and this one has none" + reads},
		{"odd.", "", "Quarry reads files by their extension, and this one has none" + reads},
		{"all.zip", "", "Quarry does not read a zip file kept whole (uploaded with unzip=false), only the files of one unpacked" + reads},
	} {
		if kind, why := FileKind(tc.name), FileNotRead(tc.name); kind != tc.kind || why != tc.why {
			t.Errorf("%s: kind %q, not read %q; want %q, %q", tc.name, kind, why, tc.kind, tc.why)
		}
	}
}

// A file known by its media type alone (a mail attachment without a
// name) has that type's kind; its name's extension comes first.
func TestFileKindOf(t *testing.T) {
	for _, tc := range []struct{ name, mediaType, kind string }{
		{"", "application/pdf", FileKindPDF},
		{"", "Application/VND.openxmlformats-officedocument.wordprocessingml.document", FileKindDOCX},
		{"", "text/rtf", FileKindRTF}, {"", "application/epub+zip", FileKindEPUB}, {"", "message/rfc822", FileKindEML},
		{"report.pdf", "application/octet-stream", FileKindPDF}, {"notes.docx", "application/pdf", FileKindDOCX},
		{"", "image/png", ""}, {"chart.png", "image/png", ""}, {"", "", ""},
	} {
		if got := FileKindOf(tc.name, tc.mediaType); got != tc.kind {
			t.Errorf("FileKindOf(%q, %q) = %q, want %q", tc.name, tc.mediaType, got, tc.kind)
		}
	}
}

// FuzzArchive reads any bytes as an uploaded zip within small limits:
// no panic, and what is read of the entries kept never exceeds the
// limits, whatever their headers say.
func FuzzArchive(f *testing.F) {
	for _, name := range []string{"with_meta.zip", "without_meta.zip"} {
		b, err := os.ReadFile("outbound/connector/testdata/file/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	w, _ := zw.Create("zeros.txt")
	w.Write(make([]byte, 4096))
	w, _ = zw.Create("dir/.hidden")
	w.Write([]byte("x"))
	zw.Close()
	f.Add(b.Bytes())
	f.Add([]byte("PK\x05\x06" + string(make([]byte, 18))))
	lim := FileLimits{MaxUploadBytes: 1 << 20, MaxFiles: 8, MaxExpandedBytes: 64 << 10, MaxRatio: 50}
	f.Fuzz(func(t *testing.T, in []byte) {
		a, err := ReadArchive(bytes.NewReader(in), int64(len(in)), lim, 0, 0)
		if err != nil {
			if ErrorCode(err) != EINVALID {
				t.Fatalf("error %v is not EINVALID", err)
			}
			return
		}
		if len(a.Entries) > lim.MaxFiles {
			t.Fatalf("%d entries kept, over the limit", len(a.Entries))
		}
		var total int64
		for _, e := range append(a.Entries, a.Metadata) {
			if e == nil {
				continue
			}
			if !KeepArchiveEntry(e.file.Name) && e != a.Metadata {
				t.Fatalf("entry %q kept", e.file.Name)
			}
			rc, err := e.Open()
			if err != nil {
				continue
			}
			n, _ := io.Copy(io.Discard, rc)
			rc.Close()
			total += n
		}
		if total > lim.MaxExpandedBytes {
			t.Fatalf("read %d bytes of the entries, over the limit", total)
		}
	})
}

// TestReadArchiveCountsTheDirectory: the entries are counted in the central
// directory before Go's reader builds them all, whatever the end record
// says: here it says 1 of the 6 there are.
func TestReadArchiveCountsTheDirectory(t *testing.T) {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, name := range []string{"1.txt", "2.txt", "3.txt", "4.txt", "5.txt", "6.txt"} {
		w, _ := zw.Create(name)
		w.Write([]byte(name))
	}
	zw.Close()
	lim := FileLimits{MaxUploadBytes: 1 << 20, MaxFiles: 3, MaxExpandedBytes: 1 << 20, MaxRatio: 50}
	want := "The zip file has more than 4 entries: an upload may hold at most 3 files"
	if _, err := ReadArchive(bytes.NewReader(b.Bytes()), int64(b.Len()), lim, 0, 0); err == nil || ErrorMessage(err) != want {
		t.Errorf("6 entries: %v, want %q", err, want)
	}
	lying := bytes.Clone(b.Bytes())
	end := bytes.LastIndex(lying, []byte("PK\x05\x06"))
	lying[end+8], lying[end+10] = 1, 1 // This disk's entries and all entries: 1.
	if _, err := ReadArchive(bytes.NewReader(lying), int64(len(lying)), lim, 0, 0); err == nil || ErrorMessage(err) != want {
		t.Errorf("6 entries, the end record saying 1: %v, want %q", err, want)
	}
	lim.MaxFiles = 8
	if a, err := ReadArchive(bytes.NewReader(b.Bytes()), int64(b.Len()), lim, 0, 0); err != nil || len(a.Entries) != 6 {
		t.Errorf("6 entries under a limit of 8: %v", err)
	}
}
