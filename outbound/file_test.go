package outbound_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/outbound"
)

// uploadResponse is Onyx's FileUploadResponse.
type uploadResponse struct {
	FilePaths         []string `json:"file_paths"`
	FileNames         []string `json:"file_names"`
	ZipMetadataFileID *string  `json:"zip_metadata_file_id"`
}

// upload sends files (name → path on disk) to POST
// /manage/admin/connector/file/upload as the admin, each part with
// contentType, and returns the status and the answer's body.
func (w *world) upload(query string, contentType string, files ...string) (int, []byte) {
	w.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for _, f := range files {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="files"; filename="%s"`, filepath.Base(f)))
		h.Set("Content-Type", contentType)
		part, _ := mw.CreatePart(h)
		b, err := os.ReadFile(f)
		if err != nil {
			w.t.Fatal(err)
		}
		part.Write(b)
	}
	mw.Close()
	req, _ := http.NewRequest("POST", w.srv.URL+"/api/manage/admin/connector/file/upload"+query, &body)
	req.Header.Set("Authorization", "Bearer "+w.admin)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := w.srv.Client().Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// filePair makes a file connector of config, an empty credential and
// their pair (public), as the admin, as Onyx's test does, and returns the
// pair's id.
func (w *world) filePair(config map[string]any) int64 {
	w.t.Helper()
	var id struct {
		ID   int64 `json:"id"`
		Data int64 `json:"data"`
	}
	name := fmt.Sprintf("FileConnector-%d", time.Now().UnixNano())
	w.do("POST", "/manage/admin/connector", map[string]any{"name": name, "source": "file",
		"input_type": "load_state", "connector_specific_config": config, "access_type": "public", "groups": []int64{}}, &id)
	connectorID := id.ID + id.Data
	id.ID, id.Data = 0, 0
	w.do("POST", "/manage/credential", map[string]any{"credential_json": map[string]string{},
		"admin_public": true, "source": "file"}, &id)
	credentialID := id.ID + id.Data
	id.ID, id.Data = 0, 0
	w.do("PUT", fmt.Sprintf("/manage/connector/%d/credential/%d", connectorID, credentialID),
		map[string]any{"name": "pair " + name, "access_type": "public", "groups": []int64{}}, &id)
	return id.ID + id.Data
}

// Onyx v4.6.1's test_zip_metadata_handling
// (backend/tests/integration/tests/indexing/file_connector/
// test_file_connector_zip_metadata.py), replayed: its two zips are
// uploaded, a file connector is made of the answer, run once by a worker
// registered over HTTP (which reads the files through the worker route),
// and its documents have the display names and links of the zip's
// .onyx_metadata.json, when it has one. (Onyx's test compares a file
// name with the entries of the metadata's list, which never matches, so it
// asserts nothing; this one asserts what it means to.)
func TestFileConnectorZipMetadata(t *testing.T) {
	for _, tc := range []struct {
		zip      string
		hasMeta  bool
		want     []string // semantic_identifier link body
		wantMeta map[string]any
	}{
		{"with_meta.zip", true, []string{"Basically Google https://www.google.com", "Pretty much youtube https://www.youtube.com"},
			map[string]any{"status": "bingle bongle"}},
		{"without_meta.zip", false, []string{"sample1.txt <nil>", "sample2.txt <nil>"}, nil},
	} {
		t.Run(tc.zip, func(t *testing.T) {
			w := newWorld(t)
			w.registeredWorker()
			status, body := w.upload("", "application/zip", filepath.Join("connector/testdata/file", tc.zip))
			if status != http.StatusOK {
				t.Fatalf("upload: %d %s", status, body)
			}
			var up uploadResponse
			if err := json.Unmarshal(body, &up); err != nil {
				t.Fatal(err)
			}
			if len(up.FilePaths) != 2 || !slices.Equal(up.FileNames, []string{"sample1.txt", "sample2.txt"}) {
				t.Fatalf("upload answered %s, want the zip's two files", body)
			}
			if (up.ZipMetadataFileID != nil) != tc.hasMeta {
				t.Fatalf("zip_metadata_file_id %v, want one: %v", up.ZipMetadataFileID, tc.hasMeta)
			}
			pair := w.filePair(map[string]any{"file_locations": up.FilePaths, "file_names": up.FileNames,
				"zip_metadata_file_id": up.ZipMetadataFileID})
			w.schedule()
			a := w.waitAttempt(pair, 1, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed)
			if a.Status != quarry.IndexSuccess || a.NewDocsIndexed != 2 {
				t.Fatalf("attempt %s with %d new documents (error %v), want success with 2", a.Status, a.NewDocsIndexed, a.ErrorMsg)
			}
			rows, err := w.raw.Query(`SELECT id, semantic_identifier, link FROM documents WHERE cc_pair_id = $1 ORDER BY semantic_identifier`, pair)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var got []string
			for rows.Next() {
				var id, name string
				var link *string
				if err := rows.Scan(&id, &name, &link); err != nil {
					t.Fatal(err)
				}
				l := "<nil>"
				if link != nil {
					l = *link
				}
				got = append(got, name+" "+l)
				d, _ := w.document(pair, id)
				if !strings.HasPrefix(id, "FILE_CONNECTOR__") || !slices.Contains(up.FilePaths, strings.TrimPrefix(id, "FILE_CONNECTOR__")) {
					t.Errorf("document id %s, want FILE_CONNECTOR__ and a file id", id)
				}
				if len(d.Sections) != 1 || d.Sections[0].Text == "" {
					t.Errorf("document %s has sections %+v, want the file's text", id, d.Sections)
				}
				if tc.wantMeta != nil && d.Metadata["status"] == nil {
					t.Errorf("document %s has metadata %v, want the zip's custom fields (status)", id, d.Metadata)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("documents %q, want %q", got, tc.want)
			}
		})
	}
}

// Files of every kind the connector reads, uploaded one by one (not in a
// zip), become documents with their text; a file the connector does not
// read and a damaged one are the attempt's errors.
func TestFileConnectorKinds(t *testing.T) {
	w := newWorld(t)
	w.registeredWorker()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "notes.md"), []byte("# Notes\n\nThe pit opens at six."), 0o600)
	os.WriteFile(filepath.Join(dir, "page.html"), []byte("<html><body><nav>menu</nav><p>Crusher manual</p></body></html>"), 0o600)
	os.WriteFile(filepath.Join(dir, "sizes.csv"), []byte("stone,size\ngranite,12\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "photo.bin"), []byte{0, 1, 2}, 0o600)
	os.WriteFile(filepath.Join(dir, "broken.docx"), []byte("not a zip"), 0o600)
	files := []string{"connector/testdata/file/report.pdf", "connector/testdata/file/handbook.docx", "connector/testdata/file/deck.pptx",
		"connector/testdata/pdf/pdftex.pdf", "connector/testdata/pdf/lo-encrypted-aes256.pdf", "connector/testdata/file/password.pdf",
		"connector/testdata/file/letter.odt", "connector/testdata/file/sizes.ods", "connector/testdata/file/deck.odp", "connector/testdata/file/sizes.xlsx",
		"connector/testdata/file/guide.rtf", "connector/testdata/file/tunnels.rtf", "connector/testdata/file/guide.epub",
		"connector/testdata/file/tunnels.epub", "connector/testdata/file/schedule.eml",
		filepath.Join(dir, "notes.md"), filepath.Join(dir, "page.html"), filepath.Join(dir, "sizes.csv"),
		filepath.Join(dir, "photo.bin"), filepath.Join(dir, "broken.docx")}
	status, body := w.upload("", "application/octet-stream", files...)
	if status != http.StatusOK {
		t.Fatalf("upload: %d %s", status, body)
	}
	var up uploadResponse
	json.Unmarshal(body, &up)
	pair := w.filePair(map[string]any{"file_locations": up.FilePaths, "file_names": up.FileNames, "zip_metadata_file_id": nil})
	w.schedule()
	a := w.waitAttempt(pair, 1, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed)
	if a.Status != quarry.IndexCompletedWithErrors || a.NewDocsIndexed != 17 {
		t.Fatalf("attempt %s with %d new documents (error %v), want completed_with_errors with 17", a.Status, a.NewDocsIndexed, a.ErrorMsg)
	}
	rows, err := w.raw.Query(`SELECT semantic_identifier, id FROM documents WHERE cc_pair_id = $1 ORDER BY semantic_identifier`, pair)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	want := map[string]string{
		"deck.pptx":     "Quarry roadmap\nOpen the north face in spring\n\nBudget: crushers and trucks",
		"handbook.docx": "Safety handbook\nWear a helmet in the pit at all times.\nBlasting happens at noon on weekdays.",
		"notes.md":      "# Notes\n\nThe pit opens at six.",
		"page.html":     "Crusher manual",
		"report.pdf":    "Quarterly report for the quarry\nGranite output rose by 12% (net), café closed.\nSecond page: limestone",
		"sizes.csv":     "stone, size\ngranite, 12",
		// PDFs of other producers (pdfTeX's ligatures, an encrypted PDF
		// with an empty password): their text holds these words.
		"pdftex.pdf":              "contains: The first shift finds the flagstone seams",
		"lo-encrypted-aes256.pdf": "contains: Waffles and coffee were offered",
		// LibreOffice's OpenDocument and Excel files.
		"letter.odt": "Safety letter\n\nWear a helmet in the pit at all times.\nBlasting happens at noon on weekdays.",
		"sizes.ods":  "stone\nsize\nquarry\ngranite\n12\nnorth face\nbasalt\n7\neast bench",
		"deck.odp":   "contains: Budget: crushers and trucks",
		"sizes.xlsx": "sizes\nstone, size, quarry\ngranite, 12, north face\nbasalt, 7, east bench",
		// LibreOffice's and pandoc's RTF and EPUB files.
		"guide.rtf":    "Field guide\n\nThe crusher runs at dawn near the marble ledge.\nCafé staff serve tea; камень means stone.",
		"tunnels.rtf":  "Tunnel notes\n\nDrilling\nThe tunnel under the ridge opens in autumn; surveyors mark the basalt seam.\nVentilation\nFans keep the gallery’s air fresh for the miners.",
		"guide.epub":   "Field guide\nThe crusher runs at dawn near the marble ledge.\nCafé staff serve tea; камень means stone.",
		"tunnels.epub": "Tunnel notes\n\nDrilling\nThe tunnel under the ridge opens in autumn; surveyors mark the basalt seam.\n\nVentilation\nFans keep the gallery’s air fresh for the miners.",
		// A message of Python's email package: its body, then its PDF
		// attachment, a section each.
		"schedule.eml": "Hello crew,\nthe detonators arrive on Thursday; keep clear of the east bench.\n\n" +
			"report.pdf\n\nQuarterly report for the quarry\nGranite output rose by 12% (net), café closed.\nSecond page: limestone",
	}
	n := 0
	for rows.Next() {
		var name, id string
		if err := rows.Scan(&name, &id); err != nil {
			t.Fatal(err)
		}
		d, _ := w.document(pair, id)
		n++
		if name == "schedule.eml" {
			var texts []string
			for _, sec := range d.Sections {
				texts = append(texts, sec.Text)
			}
			if len(d.Sections) != 2 || strings.Join(texts, "\n\n") != want[name] || d.Title == nil || *d.Title != "Blasting schedule for the east bench" ||
				d.DocUpdatedAt == nil || !d.DocUpdatedAt.Equal(time.Date(2026, 3, 9, 8, 30, 0, 0, time.UTC)) {
				t.Errorf("%s: title %v, time %v, sections %+v; want its subject, its Date, its body and its attachment's text", name, d.Title, d.DocUpdatedAt, d.Sections)
			}
		} else if part, ok := strings.CutPrefix(want[name], "contains: "); ok {
			if len(d.Sections) != 1 || !strings.Contains(d.Sections[0].Text, part) {
				t.Errorf("%s: sections %+v, want a text with %q", name, d.Sections, part)
			}
		} else if len(d.Sections) != 1 || d.Sections[0].Text != want[name] {
			t.Errorf("%s: sections %+v, want the text %q", name, d.Sections, want[name])
		}
	}
	if n != len(want) {
		t.Errorf("%d documents, want %d", n, len(want))
	}
	var msgs []string
	for _, e := range w.errors(pair) {
		msgs = append(msgs, e.FailureMessage)
	}
	slices.Sort(msgs)
	if want := []string{"broken.docx: it is not a docx file (not a zip archive)",
		"password.pdf: it is a PDF encrypted with a password, which the file connector does not read",
		"photo.bin: " + quarry.FileNotRead("photo.bin")}; !slices.Equal(msgs, want) {
		t.Errorf("errors %q, want %q", msgs, want)
	}
	var found struct {
		SearchDocs []struct {
			SemanticIdentifier string `json:"semantic_identifier"`
		} `json:"search_docs"`
	}
	// The two PDFs hold the same text (testdata/pdf/source.txt).
	for _, q := range []string{"flagstone", "waffles", "efficient"} {
		w.do("POST", "/search/send-search-message", map[string]any{"search_query": q}, &found)
		var names []string
		for _, d := range found.SearchDocs {
			names = append(names, d.SemanticIdentifier)
		}
		slices.Sort(names)
		if want := []string{"lo-encrypted-aes256.pdf", "pdftex.pdf"}; !slices.Equal(names, want) {
			t.Errorf("a search for %q found %q, want %q", q, names, want)
		}
	}
	for q, name := range map[string]string{"helmet": "letter.odt", "bench": "sizes.xlsx", "east": "sizes.ods", "trucks": "deck.odp",
		"marble": "guide.rtf", "камень": "guide.epub", "surveyors": "tunnels.rtf", "gallery": "tunnels.epub", "detonators": "schedule.eml",
		"limestone": "schedule.eml"} {
		w.do("POST", "/search/send-search-message", map[string]any{"search_query": q}, &found)
		var names []string
		for _, d := range found.SearchDocs {
			names = append(names, d.SemanticIdentifier)
		}
		if !slices.Contains(names, name) {
			t.Errorf("a search for %q found %q, want %s among them", q, names, name)
		}
	}
}

// Files of kinds Quarry does not read (a .png, an .odt; a .jpg in a zip)
// are named by the upload's answer, with why, and are errors of the
// attempt, each naming its file and saying its kind is not read (Onyx's
// index attempt errors, through the pair's errors route); the files it
// reads (a .txt; a .md in the zip) are documents that a search finds.
func TestFileConnectorUnreadFiles(t *testing.T) {
	w := newWorld(t)
	w.registeredWorker()
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	for name, text := range map[string]string{"photos/site.jpg": "\xff\xd8\xff", "guide.md": "Basalt columns need care."} {
		f, _ := zw.Create(name)
		f.Write([]byte(text))
	}
	zw.Close()
	files := []string{write("chart.png", []byte("\x89PNG\r\n\x1a\n")), write("letter.doc", []byte("\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1")),
		write("readme.txt", []byte("Granite is quarried in blocks."))}
	status, body := w.upload("", "application/octet-stream", files...)
	if status != http.StatusOK {
		t.Fatalf("upload: %d %s", status, body)
	}
	zipStatus, zipBody := w.upload("", "application/zip", write("more.zip", zbuf.Bytes()))
	if zipStatus != http.StatusOK {
		t.Fatalf("upload of the zip: %d %s", zipStatus, zipBody)
	}
	type answer struct {
		FilePaths   []string `json:"file_paths"`
		FileNames   []string `json:"file_names"`
		UnreadFiles []struct {
			FilePath string `json:"file_path"`
			FileName string `json:"file_name"`
			Reason   string `json:"reason"`
		} `json:"unread_files"`
	}
	var up, zup answer
	if err := json.Unmarshal(body, &up); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(zipBody, &zup); err != nil {
		t.Fatal(err)
	}
	var unread []string
	for _, u := range append(up.UnreadFiles, zup.UnreadFiles...) {
		unread = append(unread, u.FileName+": "+u.Reason)
	}
	want := []string{"chart.png: " + quarry.FileNotRead("chart.png"), "letter.doc: " + quarry.FileNotRead("letter.doc"), "site.jpg: " + quarry.FileNotRead("site.jpg")}
	if !slices.Equal(unread, want) || !strings.HasPrefix(want[0], "chart.png: Quarry does not read .png files: it reads .txt, ") {
		t.Errorf("the answers name %q, want %q", unread, want)
	}
	pair := w.filePair(map[string]any{"file_locations": append(up.FilePaths, zup.FilePaths...), "file_names": append(up.FileNames, zup.FileNames...)})
	w.schedule()
	a := w.waitAttempt(pair, 1, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed)
	if a.Status != quarry.IndexCompletedWithErrors || a.NewDocsIndexed != 2 {
		t.Fatalf("attempt %s with %d new documents (error %v), want completed_with_errors with 2", a.Status, a.NewDocsIndexed, a.ErrorMsg)
	}
	var errs struct {
		Items []struct {
			DocumentID     *string `json:"document_id"`
			FailureMessage string  `json:"failure_message"`
		} `json:"items"`
		TotalItems int `json:"total_items"`
	}
	w.do("GET", fmt.Sprintf("/manage/admin/cc-pair/%d/errors", pair), nil, &errs)
	var got []string
	for _, e := range errs.Items {
		got = append(got, *e.DocumentID+" "+e.FailureMessage)
	}
	slices.Sort(got)
	byName := map[string]string{}
	for i, n := range append(up.FileNames, zup.FileNames...) {
		byName[n] = append(up.FilePaths, zup.FilePaths...)[i]
	}
	var wantErrs []string
	for _, u := range want {
		name, _, _ := strings.Cut(u, ": ")
		wantErrs = append(wantErrs, "FILE_CONNECTOR__"+byName[name]+" "+u)
	}
	slices.Sort(wantErrs)
	if errs.TotalItems != 3 || !slices.Equal(got, wantErrs) {
		t.Errorf("the pair's errors (%d) %q, want %q", errs.TotalItems, got, wantErrs)
	}
	var found struct {
		SearchDocs []struct {
			SemanticIdentifier string `json:"semantic_identifier"`
		} `json:"search_docs"`
	}
	for q, name := range map[string]string{"granite quarried": "readme.txt", "basalt columns": "guide.md"} {
		w.do("POST", "/search/send-search-message", map[string]any{"search_query": q}, &found)
		if len(found.SearchDocs) != 1 || found.SearchDocs[0].SemanticIdentifier != name {
			t.Errorf("a search for %q found %+v, want %s", q, found.SearchDocs, name)
		}
	}
}

// The worker route gives a file only to the worker holding the attempt's
// lease (409 otherwise), and only a file the pair's connector names (404
// otherwise).
func TestWorkerFileRoute(t *testing.T) {
	w := newWorld(t)
	status, body := w.upload("", "text/plain", "connector/testdata/file/onyx_metadata.json")
	if status != http.StatusOK {
		t.Fatalf("upload: %d %s", status, body)
	}
	var own, other uploadResponse
	json.Unmarshal(body, &own)
	_, body = w.upload("", "text/plain", "connector/testdata/file/report.pdf")
	json.Unmarshal(body, &other)
	pair := w.filePair(map[string]any{"file_locations": own.FilePaths, "file_names": own.FileNames})
	var reg struct {
		Token string `json:"token"`
	}
	w.do("POST", "/admin/worker/registration-token", map[string]any{"name": "test workers"}, &reg)
	ctx := context.Background()
	holder, _, err := outbound.RegisterWorker(ctx, w.srv.Client(), w.srv.URL+"/api", reg.Token, "holder")
	if err != nil {
		t.Fatal(err)
	}
	stranger, _, err := outbound.RegisterWorker(ctx, w.srv.Client(), w.srv.URL+"/api", reg.Token, "stranger")
	if err != nil {
		t.Fatal(err)
	}
	w.schedule()
	api := outbound.NewWorkerAPI(w.srv.Client(), w.srv.URL+"/api", holder)
	lease, err := api.Lease(ctx)
	if err != nil || lease == nil || lease.CCPairID != pair {
		t.Fatalf("lease %+v, %v: want the pair's attempt", lease, err)
	}
	f, err := api.File(ctx, lease.AttemptID, own.FilePaths[0])
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(f.Content)
	f.Content.Close()
	want, _ := os.ReadFile("connector/testdata/file/onyx_metadata.json")
	if !bytes.Equal(got, want) || f.Name != "onyx_metadata.json" || f.Type != "text/plain" || f.Size != int64(len(want)) {
		t.Errorf("file %q %q %d with %d bytes, want onyx_metadata.json's %d", f.Name, f.Type, f.Size, len(got), len(want))
	}
	var ae *outbound.WorkerAPIError
	if _, err := api.File(ctx, lease.AttemptID, other.FilePaths[0]); !errors.As(err, &ae) || !ae.NotFound() {
		t.Errorf("a file the pair does not name: %v, want 404", err)
	}
	if _, err := api.File(ctx, lease.AttemptID, "nope"); !errors.As(err, &ae) || !ae.NotFound() {
		t.Errorf("a file that does not exist: %v, want 404", err)
	}
	if _, err := outbound.NewWorkerAPI(w.srv.Client(), w.srv.URL+"/api", stranger).File(ctx, lease.AttemptID, own.FilePaths[0]); !errors.Is(err, outbound.ErrAttemptNotHeld) {
		t.Errorf("another worker: %v, want ErrAttemptNotHeld", err)
	}
	if _, err := outbound.NewWorkerAPI(w.srv.Client(), w.srv.URL+"/api", w.admin).File(ctx, lease.AttemptID, own.FilePaths[0]); !errors.Is(err, outbound.ErrWorkerRevoked) {
		t.Errorf("an admin's key: %v, want 401", err)
	}
}

// A change of a file connector's files (Onyx's files/update) is indexed
// and pruned by the worker as Onyx's route asks: the new file's document
// comes with the index attempt it triggers, the removed file's goes with
// the prune.
func TestFileConnectorFilesUpdate(t *testing.T) {
	w := newWorld(t)
	w.registeredWorker()
	dir := t.TempDir()
	for name, text := range map[string]string{"a.txt": "alpha text", "b.txt": "beta text", "c.txt": "gamma text"} {
		os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600)
	}
	status, body := w.upload("", "text/plain", filepath.Join(dir, "a.txt"), filepath.Join(dir, "b.txt"))
	if status != http.StatusOK {
		t.Fatalf("upload: %d %s", status, body)
	}
	var up uploadResponse
	json.Unmarshal(body, &up)
	pair := w.filePair(map[string]any{"file_locations": up.FilePaths, "file_names": up.FileNames, "zip_metadata_file_id": nil})
	w.schedule()
	if a := w.waitAttempt(pair, 1, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed); a.Status != quarry.IndexSuccess {
		t.Fatalf("first attempt %s (error %v)", a.Status, a.ErrorMsg)
	}
	var connectorID int64
	if err := w.raw.QueryRow(`SELECT connector_id FROM cc_pairs WHERE id = $1`, pair).Scan(&connectorID); err != nil {
		t.Fatal(err)
	}

	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	mw.WriteField("file_ids_to_remove", `["`+up.FilePaths[0]+`"]`)
	part, _ := mw.CreateFormFile("files", "c.txt")
	part.Write([]byte("gamma text"))
	mw.Close()
	req, _ := http.NewRequest("POST", fmt.Sprintf("%s/api/manage/admin/connector/%d/files/update", w.srv.URL, connectorID), &form)
	req.Header.Set("Authorization", "Bearer "+w.admin)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := w.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var changed uploadResponse
	if err := json.Unmarshal(b, &changed); resp.StatusCode != 200 || err != nil || len(changed.FilePaths) != 2 {
		t.Fatalf("files/update: %d %s", resp.StatusCode, b)
	}

	w.schedule()
	if a := w.waitAttempt(pair, 2, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed); a.Status != quarry.IndexSuccess || a.NewDocsIndexed != 1 {
		t.Fatalf("the attempt the change asked for: %s with %d new documents (error %v), want success with 1", a.Status, a.NewDocsIndexed, a.ErrorMsg)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		w.schedule()
		if st, removed := w.pruneAttempt(pair); st == "success" {
			if removed != 1 {
				t.Errorf("the prune removed %d documents, want a.txt's", removed)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no prune ended; log:\n%s", w.log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	want := []string{"FILE_CONNECTOR__" + up.FilePaths[1], "FILE_CONNECTOR__" + changed.FilePaths[1]}
	slices.Sort(want)
	if got := w.documents(pair); !slices.Equal(got, want) {
		t.Errorf("documents %q, want b.txt's and c.txt's %q", got, want)
	}
}
