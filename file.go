package quarry

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"path"
	"strings"
)

// File is a file of the file store: what POST
// /manage/admin/connector/file/upload keeps for the file connector
// (Onyx's FileRecord). Its content is the store's, read as a stream.
type File struct {
	ID          string `json:"file_id"`
	DisplayName string `json:"display_name"`
	FileType    string `json:"file_type"`
	Origin      string `json:"file_origin"`
	Size        int64  `json:"size"`
	CreatedAt   Time   `json:"created_at"`
	// UploadedBy is the id of the person who uploaded it; "" when
	// unknown or gone.
	UploadedBy string `json:"-"`
}

// Origins of files (Onyx's FileOrigin values).
const (
	FileOriginUpload    = "connector_file_upload" // A file uploaded for the file connector.
	FileOriginConnector = "connector"             // A file added to a file connector by a change of its files.
	FileOriginMetadata  = "connector_metadata"    // The .onyx_metadata.json of an uploaded zip.
)

// OnyxMetadataFile is the name of the file in a zip that gives the
// metadata of the zip's other files (Onyx's ONYX_METADATA_FILENAME).
const OnyxMetadataFile = ".onyx_metadata.json"

// MaxMetadataBytes bounds a .onyx_metadata.json: a zip's, which an upload
// reads whole to check that it is JSON, and one a change of a file
// connector's files merges.
const MaxMetadataBytes = 16 << 20

// SeenZipDetail is the 400 of an upload with two zip files (Onyx's
// SEEN_ZIP_DETAIL).
const SeenZipDetail = "Only one zip file is allowed per file connector, use the ingestion APIs for multiple files"

// FileLimits bounds what one upload may hold and expand to: zip bombs
// (many entries, or entries that inflate far beyond their compressed
// size) are refused before anything is written.
type FileLimits struct {
	// MaxUploadBytes bounds the whole request body (every file, as sent).
	MaxUploadBytes int64
	// MaxFiles bounds how many files an upload keeps, the entries of a
	// zip included.
	MaxFiles int
	// MaxExpandedBytes bounds the total size of the files kept, the zip's
	// entries once inflated.
	MaxExpandedBytes int64
	// MaxRatio bounds how many times larger than its compressed size a
	// zip entry may inflate.
	MaxRatio int64
}

// DefaultFileLimits are the limits when none are configured.
var DefaultFileLimits = FileLimits{
	MaxUploadBytes:   100 << 20,
	MaxFiles:         10000,
	MaxExpandedBytes: 500 << 20,
	MaxRatio:         200,
}

// WithDefaults returns l with its zero fields set to DefaultFileLimits'.
func (l FileLimits) WithDefaults() FileLimits {
	d := DefaultFileLimits
	if l.MaxUploadBytes <= 0 {
		l.MaxUploadBytes = d.MaxUploadBytes
	}
	if l.MaxFiles <= 0 {
		l.MaxFiles = d.MaxFiles
	}
	if l.MaxExpandedBytes <= 0 {
		l.MaxExpandedBytes = d.MaxExpandedBytes
	}
	if l.MaxRatio <= 0 {
		l.MaxRatio = d.MaxRatio
	}
	return l
}

// IsZipUpload reports whether an uploaded file is a zip archive, by its
// content type or its name, as Onyx's is_zip_file does.
func IsZipUpload(filename, contentType string) bool {
	for _, p := range []string{"application/zip", "application/x-zip-compressed", "application/x-zip", "multipart/x-zip"} {
		if strings.HasPrefix(contentType, p) {
			return true
		}
	}
	return strings.HasSuffix(strings.ToLower(filename), ".zip")
}

// KeepArchiveEntry reports whether a zip entry named name is kept: no
// part of its path starts with a dot (macOS's __MACOSX/._ files, hidden
// files, .onyx_metadata.json itself), as Onyx's should_process_file says.
func KeepArchiveEntry(name string) bool {
	for _, part := range strings.Split(path.Clean(strings.ReplaceAll(name, "\\", "/")), "/") {
		if strings.HasPrefix(part, ".") {
			return false
		}
	}
	return true
}

// GuessFileType returns the MIME type of a file named name, from its
// extension, or application/octet-stream.
func GuessFileType(name string) string {
	if t := mime.TypeByExtension(strings.ToLower(path.Ext(name))); t != "" {
		return t
	}
	return "application/octet-stream"
}

// ArchiveEntry is a file of a zip archive that an upload keeps.
type ArchiveEntry struct {
	Name string // Its base name.
	file *zip.File
	max  int64 // The most its content may inflate to.
}

// Open returns the entry's content, inflated; reading more than the
// limits allow (an entry whose header lies about its size) is an
// EINVALID error.
func (e *ArchiveEntry) Open() (io.ReadCloser, error) {
	rc, err := e.file.Open()
	if err != nil {
		return nil, Errorf(EINVALID, "The zip file's entry %s cannot be read: %s", ClipText(e.file.Name, 200), zipFault(err))
	}
	return &boundedReader{rc: rc, left: e.max, name: e.file.Name}, nil
}

// Archive is a zip archive an upload holds, checked against the limits:
// its entries to keep, and its .onyx_metadata.json, if it has one.
type Archive struct {
	Entries  []*ArchiveEntry
	Metadata *ArchiveEntry // nil when the zip has none.
}

// ReadArchive reads the directory of the zip archive r of size bytes and
// checks it against lim (sized by what the upload already keeps: files
// and bytes so far): too many entries, entries that say they inflate
// beyond the limits or beyond lim.MaxRatio times their compressed size,
// are an EINVALID error naming the limit, before anything is inflated.
// Entries whose headers lie are caught as they are read (ArchiveEntry.Open).
func ReadArchive(r io.ReaderAt, size int64, lim FileLimits, filesSoFar int, bytesSoFar int64) (*Archive, error) {
	lim = lim.WithDefaults()
	if n := zipDirectoryEntries(r, size, lim.MaxFiles+2); n > lim.MaxFiles+1 {
		return nil, Errorf(EINVALID, "The zip file has more than %d entries: an upload may hold at most %d files", lim.MaxFiles+1, lim.MaxFiles)
	}
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return nil, Errorf(EINVALID, "The zip file cannot be read: %s", zipFault(err))
	}
	if len(zr.File) > lim.MaxFiles+1 {
		return nil, Errorf(EINVALID, "The zip file has %d entries: an upload may hold at most %d files", len(zr.File), lim.MaxFiles)
	}
	a := &Archive{}
	total := bytesSoFar
	for _, f := range zr.File {
		if f.FileInfo().IsDir() {
			continue
		}
		meta := f.Name == OnyxMetadataFile
		if !meta && !KeepArchiveEntry(f.Name) {
			continue
		}
		if f.UncompressedSize64 > uint64(lim.MaxExpandedBytes) {
			return nil, expandedError(lim)
		}
		u, c := int64(f.UncompressedSize64), int64(f.CompressedSize64)
		if u > 1<<20 && u > lim.MaxRatio*max(c, 1) {
			return nil, Errorf(EINVALID, "The zip file's entry %s inflates %d times over: at most %d times is allowed", ClipText(f.Name, 200), u/max(c, 1), lim.MaxRatio)
		}
		total += u
		if total > lim.MaxExpandedBytes {
			return nil, expandedError(lim)
		}
		e := &ArchiveEntry{Name: path.Base(strings.ReplaceAll(f.Name, "\\", "/")), file: f, max: u}
		if meta {
			a.Metadata = e
			continue
		}
		if filesSoFar+len(a.Entries)+1 > lim.MaxFiles {
			return nil, Errorf(EINVALID, "The upload holds more than %d files", lim.MaxFiles)
		}
		a.Entries = append(a.Entries, e)
	}
	return a, nil
}

// ConnectorFiles returns the ids of the files a connector of source with
// configuration config reads: a file connector's file_locations and its
// zip_metadata_file_id; none for another source or a configuration that
// does not parse (the connector refuses it when it runs).
func ConnectorFiles(source DocumentSource, config json.RawMessage) []string {
	if source != "file" {
		return nil
	}
	var c struct {
		FileLocations []any `json:"file_locations"`
		ZipMetadata   any   `json:"zip_metadata_file_id"`
	}
	if json.Unmarshal(config, &c) != nil {
		return nil
	}
	var ids []string
	for _, v := range append(c.FileLocations, c.ZipMetadata) {
		if id, ok := v.(string); ok && id != "" {
			ids = append(ids, id)
		}
	}
	return ids
}

// zipDirectoryEntries counts the entries of the central directory of the
// zip file r (of size bytes), up to max: Go's reader builds every entry
// (some 250 bytes each) before its caller can count them, so a 100 MB zip
// of empty entries would cost a quarter of a gigabyte. It reads the
// headers where the end record says the directory is (where Go's reader
// reads them, prepended data allowed for), and 0 when there is no end
// record to read: the reader then refuses the file.
func zipDirectoryEntries(r io.ReaderAt, size int64, max int) int {
	const endLen, headerLen = 22, 46
	tail := min(size, endLen+0xFFFF)
	buf := make([]byte, tail)
	if _, err := r.ReadAt(buf, size-tail); err != nil && err != io.EOF {
		return 0
	}
	end := bytes.LastIndex(buf, []byte("PK\x05\x06"))
	if end < 0 || len(buf)-end < endLen {
		return 0
	}
	dirSize := int64(binary.LittleEndian.Uint32(buf[end+12:]))
	dirOffset := int64(binary.LittleEndian.Uint32(buf[end+16:]))
	endOffset := size - tail + int64(end)
	if base := endOffset - dirSize - dirOffset; base > 0 && dirOffset != 0xFFFFFFFF {
		dirOffset += base
	}
	if dirOffset < 0 || dirOffset >= size {
		return 0 // Zip64, or a broken end record: the reader decides.
	}
	n := 0
	var h [headerLen]byte
	for off := dirOffset; n < max; n++ {
		if _, err := r.ReadAt(h[:], off); err != nil || !bytes.Equal(h[:4], []byte("PK\x01\x02")) {
			break
		}
		off += headerLen + int64(binary.LittleEndian.Uint16(h[28:])) + int64(binary.LittleEndian.Uint16(h[30:])) + int64(binary.LittleEndian.Uint16(h[32:]))
	}
	return n
}

// expandedError is the error of an upload whose files, inflated, would be
// over lim.MaxExpandedBytes.
func expandedError(lim FileLimits) error {
	return Errorf(EINVALID, "The upload's files inflate to more than %d bytes", lim.MaxExpandedBytes)
}

// zipFault says what is wrong with a zip file, without Go's words.
func zipFault(err error) string {
	switch {
	case errors.Is(err, zip.ErrFormat):
		return "it is not a zip file"
	case errors.Is(err, zip.ErrAlgorithm):
		return "it is compressed with a method Quarry does not read"
	case errors.Is(err, zip.ErrChecksum):
		return "its checksum is wrong"
	case errors.Is(err, zip.ErrInsecurePath):
		return "an entry's path leads outside the archive"
	}
	return "it is damaged"
}

// boundedReader reads rc and fails once more than left bytes come out of
// it: an entry inflating beyond what its header says.
type boundedReader struct {
	rc   io.ReadCloser
	left int64
	name string
}

func (b *boundedReader) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n, Errorf(EINVALID, "The zip file's entry %s inflates beyond the size its header says", ClipText(b.name, 200))
	}
	if errors.Is(err, zip.ErrFormat) {
		// archive/zip's answer to an entry that inflates beyond its
		// header's size (or whose trailer does not match it).
		return n, Errorf(EINVALID, "The zip file's entry %s inflates beyond the size its header says, or is damaged", ClipText(b.name, 200))
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return n, Errorf(EINVALID, "The zip file's entry %s cannot be read: %s", ClipText(b.name, 200), zipFault(err))
	}
	return n, err
}

func (b *boundedReader) Close() error { return b.rc.Close() }

// Kinds of files the file connector reads (FileKind).
const (
	FileKindText = "text" // Read as it is, as UTF-8.
	FileKindHTML = "html"
	FileKindCSV  = "csv"
	FileKindPDF  = "pdf"
	FileKindDOCX = "docx"
	FileKindPPTX = "pptx"
	FileKindXLSX = "xlsx"
	FileKindODT  = "odt" // OpenDocument text.
	FileKindODS  = "ods" // OpenDocument spreadsheet.
	FileKindODP  = "odp" // OpenDocument presentation.
	FileKindRTF  = "rtf"
	FileKindEPUB = "epub"
	FileKindEML  = "eml" // A mail message (RFC 5322, with MIME).
)

// fileKinds are the extensions the file connector reads, with their
// kinds, in the order FileNotRead lists them.
var fileKinds = []struct{ ext, kind string }{
	{".txt", FileKindText}, {".md", FileKindText}, {".markdown", FileKindText}, {".mdx", FileKindText},
	{".json", FileKindText}, {".jsonl", FileKindText}, {".log", FileKindText}, {".xml", FileKindText},
	{".yaml", FileKindText}, {".yml", FileKindText}, {".conf", FileKindText}, {".ini", FileKindText},
	{".tsv", FileKindText}, {".html", FileKindHTML}, {".htm", FileKindHTML}, {".csv", FileKindCSV},
	{".pdf", FileKindPDF}, {".docx", FileKindDOCX}, {".pptx", FileKindPPTX}, {".xlsx", FileKindXLSX},
	{".odt", FileKindODT}, {".ods", FileKindODS}, {".odp", FileKindODP}, {".rtf", FileKindRTF},
	{".epub", FileKindEPUB}, {".eml", FileKindEML},
}

// fileKindTypes are the media types of the kinds the file connector
// reads, for a file known by its media type alone (an attachment of a
// mail message without a file name).
var fileKindTypes = map[string]string{
	"text/plain": FileKindText, "text/markdown": FileKindText, "application/json": FileKindText,
	"text/html": FileKindHTML, "text/csv": FileKindCSV, "application/pdf": FileKindPDF,
	"application/vnd.openxmlformats-officedocument.wordprocessingml.document":   FileKindDOCX,
	"application/vnd.openxmlformats-officedocument.presentationml.presentation": FileKindPPTX,
	"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet":         FileKindXLSX,
	"application/vnd.oasis.opendocument.text":                                   FileKindODT,
	"application/vnd.oasis.opendocument.spreadsheet":                            FileKindODS,
	"application/vnd.oasis.opendocument.presentation":                           FileKindODP,
	"application/rtf": FileKindRTF, "text/rtf": FileKindRTF, "application/epub+zip": FileKindEPUB,
	"message/rfc822": FileKindEML,
}

// FileKind returns the kind of a file named name, by its extension (in
// any case), or "" for a file the file connector does not read.
func FileKind(name string) string {
	ext := strings.ToLower(path.Ext(name))
	for _, k := range fileKinds {
		if k.ext == ext {
			return k.kind
		}
	}
	return ""
}

// FileKindOf returns the kind of a file named name with media type
// mediaType: its extension's (FileKind), else its media type's (without
// parameters, in any case); "" for a file the file connector does not
// read.
func FileKindOf(name, mediaType string) string {
	if k := FileKind(name); k != "" {
		return k
	}
	return fileKindTypes[strings.ToLower(strings.TrimSpace(mediaType))]
}

// FileNotRead returns why the file connector does not read a file named
// name, in a sentence that names the kinds it reads, or "" when it reads
// it. The upload's answer and the attempt's errors say it.
func FileNotRead(name string) string {
	if FileKind(name) != "" {
		return ""
	}
	exts := make([]string, len(fileKinds))
	for i, k := range fileKinds {
		exts[i] = k.ext
	}
	reads := "it reads " + strings.Join(exts[:len(exts)-1], ", ") + " and " + exts[len(exts)-1] + " files"
	switch ext := strings.ToLower(path.Ext(name)); ext {
	case "", ".":
		return "Quarry reads files by their extension, and this one has none: " + reads
	case ".zip":
		return "Quarry does not read a zip file kept whole (uploaded with unzip=false), only the files of one unpacked: " + reads
	default:
		return "Quarry does not read " + ext + " files: " + reads
	}
}

// String names a file for logs.
func (f *File) String() string { return fmt.Sprintf("file %s (%s)", f.ID, f.DisplayName) }
