package api_test

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"database/sql"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/storetest"
)

// uploadPart is a file of an upload: its name, content type and content.
type uploadPart struct {
	name, contentType string
	content           []byte
}

// upload sends parts to POST /manage/admin/connector/file/upload as u.
func (e *env) upload(u user, query string, parts ...uploadPart) *response {
	e.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="files"; filename="%s"`, p.name))
		if p.contentType != "" {
			h.Set("Content-Type", p.contentType)
		}
		w, _ := mw.CreatePart(h)
		w.Write(p.content)
	}
	mw.Close()
	return e.do(u, "POST", "/manage/admin/connector/file/upload"+query, body.String(), "Content-Type", mw.FormDataContentType())
}

// rawDB opens the test's database with database/sql, for what no route
// tells; it is closed when the test ends.
func (e *env) rawDB() *sql.DB {
	e.t.Helper()
	dialect, source, err := store.ParseURL(e.url)
	if err != nil {
		e.t.Fatal(err)
	}
	driver := "pgx"
	if dialect == store.SQLite {
		driver, source = "sqlite", "file:"+source+"?_pragma=busy_timeout(10000)"
	}
	db, err := sql.Open(driver, source)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { db.Close() })
	return db
}

// fileRows returns how many files and chunks the store keeps.
func (e *env) fileRows() (files, chunks int) {
	e.t.Helper()
	if err := e.rawDB().QueryRow(`SELECT (SELECT COUNT(*) FROM files), (SELECT COUNT(*) FROM file_chunks)`).Scan(&files, &chunks); err != nil {
		e.t.Fatal(err)
	}
	return files, chunks
}

// testdataFile reads a test file of the file connector.
func testdataFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("../outbound/connector/testdata/file/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fileIDs stands for the random ids of files in an answer.
var fileIDs = regexp.MustCompile(`"[0-9a-f]{32}"`)

// zipOf returns a zip archive of the entries (name, content), deflated.
func zipOf(t *testing.T, entries ...string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for i := 0; i+1 < len(entries); i += 2 {
		w, err := zw.Create(entries[i])
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(entries[i+1]))
	}
	zw.Close()
	return b.Bytes()
}

// lyingZip returns a zip whose one entry says it holds 10 bytes but
// inflates to size bytes of zeros.
func lyingZip(t *testing.T, size int) []byte {
	t.Helper()
	var comp bytes.Buffer
	fw, _ := flate.NewWriter(&comp, flate.BestCompression)
	fw.Write(make([]byte, size))
	fw.Close()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	w, err := zw.CreateRaw(&zip.FileHeader{Name: "small.txt", Method: zip.Deflate, CompressedSize64: uint64(comp.Len()),
		UncompressedSize64: 10, CRC32: crc32.ChecksumIEEE(make([]byte, 10))})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(comp.Bytes())
	zw.Close()
	return b.Bytes()
}

// noise returns n bytes of hexadecimal digits that deflate about two to
// one.
func noise(n int) string {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, n)
	for i := range b {
		b[i] = "0123456789abcdef"[r.IntN(16)]
	}
	return string(b)
}

// Onyx's upload: a zip is unpacked (its dot files left out, its
// .onyx_metadata.json apart), other files are kept as they are; curators
// may upload, basic users may not.
func TestUploadConnectorFiles(t *testing.T) {
	e := newEnv(t)
	curator := e.user(quarry.RoleGlobalCurator, "curator")
	basic := e.user(quarry.RoleBasic, "basic")

	r := e.upload(e.admin, "", uploadPart{"with_meta.zip", "application/zip", testdataFile(t, "with_meta.zip")})
	got := fileIDs.ReplaceAllString(string(r.body), `"ID"`)
	if r.status != 200 || got != `{"file_paths":["ID","ID"],"file_names":["sample1.txt","sample2.txt"],"zip_metadata_file_id":"ID","unread_files":[]}` {
		t.Fatalf("upload of with_meta.zip: %d %s", r.status, r.body)
	}
	r = e.upload(curator, "", uploadPart{"without_meta.zip", "", testdataFile(t, "without_meta.zip")},
		uploadPart{"handbook.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", testdataFile(t, "handbook.docx")},
		uploadPart{"notes.txt", "", []byte("hello")})
	got = fileIDs.ReplaceAllString(string(r.body), `"ID"`)
	if r.status != 200 || got != `{"file_paths":["ID","ID","ID","ID"],"file_names":["sample1.txt","sample2.txt","handbook.docx","notes.txt"],"zip_metadata_file_id":null,"unread_files":[]}` {
		t.Fatalf("upload of a zip and two files as a curator: %d %s", r.status, r.body)
	}
	r = e.upload(e.admin, "?unzip=false", uploadPart{"without_meta.zip", "application/zip", testdataFile(t, "without_meta.zip")})
	got = fileIDs.ReplaceAllString(string(r.body), `"ID"`)
	if r.status != 200 || got != `{"file_paths":["ID"],"file_names":["without_meta.zip"],"zip_metadata_file_id":null,"unread_files":[`+
		`{"file_path":"ID","file_name":"without_meta.zip","reason":"Quarry does not read a zip file kept whole (uploaded with unzip=false), only the files of one unpacked: `+readsAll+`"}]}` {
		t.Fatalf("upload with unzip=false: %d %s", r.status, r.body)
	}
	var kept struct {
		FilePaths []string `json:"file_paths"`
	}
	r.decode(t, &kept)
	f, err := e.db.File(context.Background(), kept.FilePaths[0])
	if err != nil || f.DisplayName != "without_meta.zip" || f.FileType != "application/zip" || f.Size != int64(len(testdataFile(t, "without_meta.zip"))) {
		t.Fatalf("the zip kept whole: %+v %v", f, err)
	}
	rc := e.db.OpenFile(context.Background(), f)
	var content bytes.Buffer
	if _, err := content.ReadFrom(rc); err != nil || !bytes.Equal(content.Bytes(), testdataFile(t, "without_meta.zip")) {
		t.Fatalf("the zip read back: %d bytes, %v", content.Len(), err)
	}

	e.upload(basic, "", uploadPart{"notes.txt", "", []byte("hello")}).want(t, 403, `{"detail":"Access denied. User is not a curator or admin."}`)
	if files, _ := e.fileRows(); files != 8 {
		t.Errorf("%d files kept, want 8 (3 + 4 + 1)", files)
	}
}

// readsAll is the end of the reason a file is not read: the kinds the
// file connector reads.
const readsAll = "it reads .txt, .md, .markdown, .mdx, .json, .jsonl, .log, .xml, .yaml, .yml, .conf, .ini, .tsv, .html, .htm, .csv, .pdf, .docx, .pptx, .xlsx, .odt, .ods, .odp, .rtf, .epub and .eml files"

// Files of kinds the file connector does not read are kept, and the
// answer names them (unread_files), each with why, in the order of
// file_paths: by their extension, in any case, in a zip too; a file with
// no extension too.
func TestUploadUnreadFiles(t *testing.T) {
	e := newEnv(t)
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	for _, name := range []string{"docs/notes.TXT", "docs/sheet.xls"} {
		w, _ := zw.Create(name)
		w.Write([]byte("content"))
	}
	zw.Close()
	r := e.upload(e.admin, "", uploadPart{"chart.png", "image/png", []byte("\x89PNG\r\n")},
		uploadPart{"letter.doc", "application/msword", []byte("\xd0\xcf\x11\xe0")},
		uploadPart{"readme.txt", "text/plain", []byte("Granite is hard.")},
		uploadPart{"Makefile", "", []byte("all:")},
		uploadPart{"more.zip", "application/zip", zbuf.Bytes()})
	var up struct {
		FilePaths []string `json:"file_paths"`
	}
	r.decode(t, &up)
	if len(up.FilePaths) != 6 {
		t.Fatalf("upload: %d %s", r.status, r.body)
	}
	p := up.FilePaths
	r.want(t, 200, `{"file_paths":["`+strings.Join(p, `","`)+`"],"file_names":["chart.png","letter.doc","readme.txt","Makefile","notes.TXT","sheet.xls"],`+
		`"zip_metadata_file_id":null,"unread_files":[`+
		`{"file_path":"`+p[0]+`","file_name":"chart.png","reason":"Quarry does not read .png files: `+readsAll+`"},`+
		`{"file_path":"`+p[1]+`","file_name":"letter.doc","reason":"Quarry does not read .doc files: `+readsAll+`"},`+
		`{"file_path":"`+p[3]+`","file_name":"Makefile","reason":"Quarry reads files by their extension, and this one has none: `+readsAll+`"},`+
		`{"file_path":"`+p[5]+`","file_name":"sheet.xls","reason":"Quarry does not read .xls files: `+readsAll+`"}]}`)
	if files, _ := e.fileRows(); files != 6 {
		t.Errorf("%d files kept, want the 6, read or not", files)
	}
}

// A file read back is the file uploaded, across chunks.
func TestUploadLargeFileRoundTrip(t *testing.T) {
	e := newEnv(t, func(c *api.Config) { c.FileLimits.MaxUploadBytes = 4 << 20 })
	big := bytes.Repeat([]byte("0123456789abcdef"), (600<<10)/16+7) // Three chunks, the last one short.
	r := e.upload(e.admin, "", uploadPart{"big.txt", "text/plain", big})
	var kept struct {
		FilePaths []string `json:"file_paths"`
	}
	r.decode(t, &kept)
	f, err := e.db.File(context.Background(), kept.FilePaths[0])
	if err != nil || f.Size != int64(len(big)) {
		t.Fatalf("file %+v %v, want %d bytes", f, err, len(big))
	}
	var content bytes.Buffer
	if _, err := content.ReadFrom(e.db.OpenFile(context.Background(), f)); err != nil || !bytes.Equal(content.Bytes(), big) {
		t.Fatalf("read back %d bytes (%v), want the %d uploaded", content.Len(), err, len(big))
	}
}

// Uploads that break a rule or a limit are refused with the reason, and
// nothing of them is kept.
func TestUploadConnectorFilesRefused(t *testing.T) {
	e := newEnv(t, func(c *api.Config) {
		c.FileLimits = quarry.FileLimits{MaxUploadBytes: 8 << 20, MaxFiles: 3, MaxExpandedBytes: 8 << 20, MaxRatio: 100}
	})
	bomb := zipOf(t, "zeros.txt", strings.Repeat("\x00", 7<<20))
	for _, tc := range []struct {
		name   string
		parts  []uploadPart
		status int
		body   string
	}{
		{"two zips", []uploadPart{{"a.zip", "", zipOf(t, "a.txt", "a")}, {"b.zip", "", zipOf(t, "b.txt", "b")}},
			400, `{"detail":"` + quarry.SeenZipDetail + `"}`},
		{"a zip bomb", []uploadPart{{"bomb.zip", "application/zip", bomb}},
			400, ""},
		{"inflates over the total", []uploadPart{{"big.zip", "", zipOf(t, "a.txt", noise(5<<20), "b.txt", noise(5<<20))}},
			400, `{"detail":"The upload's files inflate to more than 8388608 bytes"}`},
		{"too many files", []uploadPart{{"many.zip", "", zipOf(t, "1.txt", "1", "2.txt", "2", "3.txt", "3", "4.txt", "4")}},
			400, `{"detail":"The upload holds more than 3 files"}`},
		{"an entry larger than it says", []uploadPart{{"notes.txt", "", []byte("kept?")}, {"lies.zip", "", lyingZip(t, 1<<20)}},
			400, `{"detail":"The zip file's entry small.txt inflates beyond the size its header says, or is damaged"}`},
		{"not a zip", []uploadPart{{"fake.zip", "", []byte("not a zip at all")}},
			400, `{"detail":"The zip file cannot be read: it is not a zip file"}`},
		{"metadata not JSON", []uploadPart{{"meta.zip", "", zipOf(t, "a.txt", "a", ".onyx_metadata.json", "{nope")}},
			400, `{"detail":"Unable to load .onyx_metadata.json: it is not JSON"}`},
		{"body too large", []uploadPart{{"huge.txt", "", bytes.Repeat([]byte("x"), 9<<20)}},
			413, `{"detail":"Request body is larger than 8388608 bytes"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.upload(e.admin, "", tc.parts...)
			if tc.name == "a zip bomb" {
				if r.status != 400 || !strings.HasPrefix(string(r.body), `{"detail":"The zip file's entry zeros.txt inflates `) ||
					!strings.HasSuffix(string(r.body), `times over: at most 100 times is allowed"}`) {
					t.Fatalf("got %d %s", r.status, r.body)
				}
			} else {
				r.want(t, tc.status, tc.body)
			}
			if files, chunks := e.fileRows(); files != 0 || chunks != 0 {
				t.Fatalf("%d files (%d chunks) kept after a refused upload", files, chunks)
			}
		})
	}
	// Without files (no body, a JSON body, parts of other names; with a
	// bad query too): FastAPI's 422 bodies, as scripts/pydantic_goldens.py
	// generated them.
	for _, g := range fxGoldens(t, "uploadFiles") {
		t.Run("golden "+g.Name, func(t *testing.T) {
			fx{e}.replay(t, e.admin, "POST", "", g)
			if files, chunks := e.fileRows(); files != 0 || chunks != 0 {
				t.Fatalf("%d files (%d chunks) kept after a refused upload", files, chunks)
			}
		})
	}
}

// An upload slower than the server's read time-out (QUARRY_READ_TIMEOUT)
// is read whole: the handler moves the connection's read deadline.
func TestUploadOutlastsReadTimeout(t *testing.T) {
	srv := httptest.NewUnstartedServer(nil)
	srv.Config.ReadTimeout = 300 * time.Millisecond
	e := startEnv(t, srv, storetest.URL(t))
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		part, _ := mw.CreateFormFile("files", "slow.txt")
		for i := range 8 {
			fmt.Fprintf(part, "line %d\n", i)
			time.Sleep(100 * time.Millisecond) // 800 ms in all, over the 300 ms time-out.
		}
		mw.Close()
		pw.Close()
	}()
	req, _ := http.NewRequest("POST", e.srv.URL+"/manage/admin/connector/file/upload", pr)
	req.Header.Set("Authorization", "Bearer "+e.admin.token)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	res, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	got := fileIDs.ReplaceAllString(string(b), `"ID"`)
	if res.StatusCode != 200 || got != `{"file_paths":["ID"],"file_names":["slow.txt"],"zip_metadata_file_id":null,"unread_files":[]}` {
		t.Fatalf("slow upload: %d %s", res.StatusCode, b)
	}
}

// TestFileConnectorNamesOwnFiles: a file connector may name only files its
// author uploaded (or that it named already), unless the author manages
// every connector: the ids a connector's configuration shows must not let
// another curator index those files into a pair of theirs.
func TestFileConnectorNamesOwnFiles(t *testing.T) {
	c := newFxCast(t)
	var up struct {
		FilePaths []string `json:"file_paths"`
	}
	c.upload(c.curator, "", uploadPart{"notes.txt", "", []byte("private notes")}).decode(t, &up)
	config := map[string]any{"file_locations": up.FilePaths, "file_names": []string{"notes.txt"}, "zip_metadata_file_id": nil}
	body := func(name string, group int64) map[string]any {
		return fxConnectorBody(name, "file", "input_type", "load_state", "connector_specific_config", config,
			"access_type", "private", "groups", []int64{group})
	}
	c.do(c.other, "POST", "/manage/admin/connector", body("taken", c.gB)).want(t, 400,
		`{"detail":"The configuration names a file you did not upload (`+up.FilePaths[0]+`): upload it, then name the id the upload answers"}`)
	own := c.fxOK(c.do(c.curator, "POST", "/manage/admin/connector", body("own", c.gA)))
	c.fxOK(c.do(c.admin, "POST", "/manage/admin/connector", body("admin's", c.gB)))
	// The connector's author changes its name: the file it named stays.
	if r := c.do(c.curator, "PATCH", fmt.Sprintf("/manage/admin/connector/%d", own), body("own, renamed", c.gA)); r.status != 200 {
		t.Errorf("the author renames its file connector: %d %s", r.status, r.body)
	}
}
