package api_test

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"net/textproto"
	"regexp"
	"strings"
	"testing"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api"
)

// updateFiles sends POST /manage/admin/connector/{id}/files/update as u,
// with the form field file_ids_to_remove (left out when remove is nil)
// and the files parts.
func (e *env) updateFiles(u user, id int64, remove *string, parts ...uploadPart) *response {
	e.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	if remove != nil {
		mw.WriteField("file_ids_to_remove", *remove)
	}
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
	return e.do(u, "POST", fmt.Sprintf("/manage/admin/connector/%d/files/update", id), body.String(),
		"Content-Type", mw.FormDataContentType())
}

// uploaded uploads parts as u and returns the answer's file ids and
// zip_metadata_file_id.
func (f fx) uploaded(u user, parts ...uploadPart) (ids []string, meta *string) {
	f.t.Helper()
	var up struct {
		FilePaths []string `json:"file_paths"`
		Meta      *string  `json:"zip_metadata_file_id"`
	}
	f.upload(u, "", parts...).decode(f.t, &up)
	return up.FilePaths, up.Meta
}

// fileConnector makes, as u, a file connector of the files ids (named
// names), a credential and their pair, shared as access with groups, and
// returns the connector's and the pair's ids.
func (f fx) fileConnector(u user, name string, ids, names []string, meta *string, access quarry.AccessType, groups ...int64) (conn, pair int64) {
	f.t.Helper()
	conn = f.connector(u, name, "file", "input_type", "load_state", "access_type", access, "groups", fxIDs(groups),
		"connector_specific_config", map[string]any{"file_locations": ids, "file_names": names, "zip_metadata_file_id": meta})
	cred := f.credential(u, "file", `{}`, "curator_public", access == quarry.AccessPublic, "groups", fxIDs(groups))
	return conn, f.pair(u, conn, cred, name+" pair", access, groups...)
}

// uploadDate is the upload_date of a file: Python's isoformat of a time in
// UTC.
var uploadDate = regexp.MustCompile(`"upload_date":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?\+00:00"`)

// Onyx's routes of a file connector's files: the listing with each file's
// size and upload time (null for a file the store does not have), the
// refusals in Onyx's order, and a change that adds and removes files in
// one transaction, asks the pair to index and to prune, and is audited.
func TestConnectorFiles(t *testing.T) {
	c := newFxCast(t)
	ids, _ := c.uploaded(c.curator, uploadPart{"a.txt", "", []byte("alpha")}, uploadPart{"b.txt", "", []byte("beta!!")})
	// The admin makes it (the curator may not name a file it did not
	// upload); the curator may change it (private, shared with gA only).
	conn, pair := c.fileConnector(c.admin, "files", append(ids, "0123456789abcdef0123456789abcdef"), []string{"a.txt", "b.txt"},
		nil, quarry.AccessPrivate, c.gA)
	list := fmt.Sprintf("/manage/admin/connector/%d/files", conn)
	r := c.do(c.curator, "GET", list, nil)
	got := uploadDate.ReplaceAllString(string(r.body), `"upload_date":"DATE"`)
	want := `{"files":[{"file_id":"` + ids[0] + `","file_name":"a.txt","file_size":5,"upload_date":"DATE"},` +
		`{"file_id":"` + ids[1] + `","file_name":"b.txt","file_size":6,"upload_date":"DATE"},` +
		`{"file_id":"0123456789abcdef0123456789abcdef","file_name":"0123456789abcdef0123456789abcdef","file_size":null,"upload_date":null}]}`
	if r.status != 200 || got != want {
		t.Fatalf("the listing: %d %s\nwant %s", r.status, got, want)
	}
	c.do(c.admin, "GET", list, nil).want(t, 200, string(r.body))

	web := c.connector(c.admin, "web one", "web")
	lonely := c.connector(c.admin, "no pair", "file", "input_type", "load_state",
		"connector_specific_config", map[string]any{"file_locations": []string{}, "file_names": []string{}})
	denied := `{"detail":"Access denied. User cannot manage files for this connector."}`
	for _, tc := range []struct {
		name   string
		u      user
		path   string
		status int
		body   string
	}{
		{"a curator of another group", c.other, list, 403, denied},
		{"a global curator of another group", c.global, list, 403, denied},
		{"a basic user", c.basic, list, 403, `{"detail":"Access denied. User is not a curator or admin."}`},
		{"no such connector", c.admin, "/manage/admin/connector/99999/files", 404, `{"detail":"Connector not found"}`},
		{"not a file connector", c.admin, fmt.Sprintf("/manage/admin/connector/%d/files", web), 400,
			`{"detail":"This endpoint only works with file connectors"}`},
		{"no pair", c.admin, fmt.Sprintf("/manage/admin/connector/%d/files", lonely), 404,
			`{"detail":"No Connector-Credential Pair found for this connector"}`},
		{"a bad id", c.admin, "/manage/admin/connector/abc/files", 422, `{"detail":[` + fxIntParsing("connector_id", "abc") + `]}`},
		{"anonymous", user{}, list, 401, `{"detail":"Not authenticated"}`},
	} {
		t.Run("list: "+tc.name, func(t *testing.T) { c.do(tc.u, "GET", tc.path, nil).want(t, tc.status, tc.body) })
		if tc.status == 422 {
			continue
		}
		t.Run("update: "+tc.name, func(t *testing.T) {
			path := strings.TrimSuffix(tc.path, "/files") + "/files/update"
			c.do(tc.u, "POST", path, nil).want(t, tc.status, tc.body)
		})
	}

	// Refused changes keep nothing.
	files, chunks := c.fileRows()
	str := func(s string) *string { return &s }
	for _, tc := range []struct {
		name, remove, body string
	}{
		{"not JSON", "nope", `{"detail":"Invalid file_ids_to_remove format"}`},
		{"not a list", `{"a":1}`, `{"detail":"file_ids_to_remove must be a JSON-encoded list"}`},
		{"every file", `["` + ids[0] + `","` + ids[1] + `","0123456789abcdef0123456789abcdef"]`,
			`{"detail":"Cannot remove all files from connector. At least one file must remain."}`},
		{"two zips", `[]`, `{"detail":"` + quarry.SeenZipDetail + `"}`},
	} {
		t.Run("refused: "+tc.name, func(t *testing.T) {
			var parts []uploadPart
			if tc.name == "two zips" {
				parts = []uploadPart{{"a.zip", "", zipOf(t, "x.txt", "x")}, {"b.zip", "", zipOf(t, "y.txt", "y")}}
			}
			c.updateFiles(c.curator, conn, str(tc.remove), parts...).want(t, 400, tc.body)
			if f, ch := c.fileRows(); f != files || ch != chunks {
				t.Errorf("%d files, %d chunks after a refused change, want %d, %d", f, ch, files, chunks)
			}
		})
	}
	c.updateFiles(c.other, conn, str("[]"), uploadPart{"c.txt", "", []byte("gamma")}).want(t, 403, denied)
	c.updateFiles(c.global, conn, str("[]"), uploadPart{"c.txt", "", []byte("gamma")}).want(t, 403, denied)
	if f, _ := c.fileRows(); f != files {
		t.Errorf("%d files after refused changes, want %d", f, files)
	}

	// Nothing to add or remove: nothing is written.
	before := len(c.audit("resource_type=connector"))
	c.updateFiles(c.curator, conn, nil).want(t, 200, `{"file_paths":["`+ids[0]+`","`+ids[1]+
		`","0123456789abcdef0123456789abcdef"],"file_names":["a.txt","b.txt","0123456789abcdef0123456789abcdef"],"zip_metadata_file_id":null,"unread_files":[]}`)
	if n := len(c.audit("resource_type=connector")); n != before {
		t.Errorf("%d connector entries after a change of nothing, want %d", n, before)
	}

	// The curator removes a.txt and the unknown file, and adds c.txt.
	r = c.updateFiles(c.curator, conn, str(`["`+ids[0]+`","0123456789abcdef0123456789abcdef",7]`), uploadPart{"c.txt", "", []byte("gamma")})
	var out struct {
		FilePaths []string `json:"file_paths"`
	}
	r.decode(t, &out)
	if len(out.FilePaths) != 2 {
		t.Fatalf("the change answered %s", r.body)
	}
	r.want(t, 200, `{"file_paths":["`+ids[1]+`","`+out.FilePaths[1]+`"],"file_names":["b.txt","c.txt"],"zip_metadata_file_id":null,"unread_files":[]}`)
	var config string
	if err := c.rawDB().QueryRow(`SELECT config FROM connectors WHERE id = $1`, conn).Scan(&config); err != nil {
		t.Fatal(err)
	}
	if want := `{"file_locations":["` + ids[1] + `","` + out.FilePaths[1] + `"],"file_names":["b.txt","c.txt"],"zip_metadata_file_id":null}`; config != want {
		t.Errorf("the configuration %s, want %s", config, want)
	}
	var trigger *string
	var prune bool
	if err := c.rawDB().QueryRow(`SELECT indexing_trigger, prune_requested FROM cc_pairs WHERE id = $1`, pair).Scan(&trigger, &prune); err != nil {
		t.Fatal(err)
	}
	if trigger == nil || *trigger != "update" || !prune {
		t.Errorf("the pair's indexing_trigger %v and prune_requested %v, want update and true", trigger, prune)
	}
	entries := c.audit("limit=4")
	var actions []string
	for _, a := range entries {
		actions = append(actions, a.Action+" "+a.ResourceType+" "+strings.Join(a.Fields, ","))
	}
	if want := []string{"cc_pair.prune cc_pair prune_requested", "cc_pair.run_once cc_pair indexing_trigger",
		"connector.update connector connector_specific_config", "file.upload file "}; strings.Join(actions, "|") != strings.Join(want, "|") {
		t.Errorf("the audit entries %q, want %q", actions, want)
	}

	// A file of a kind Quarry does not read is named in the answer, as at
	// upload; the files already there are not judged again.
	r = c.updateFiles(c.curator, conn, str("[]"), uploadPart{"chart.png", "", []byte("\x89PNG")})
	var png struct {
		FilePaths   []string `json:"file_paths"`
		UnreadFiles []struct {
			FilePath string `json:"file_path"`
			FileName string `json:"file_name"`
		} `json:"unread_files"`
	}
	r.decode(t, &png)
	if r.status != 200 || len(png.FilePaths) != 3 || len(png.UnreadFiles) != 1 ||
		png.UnreadFiles[0].FilePath != png.FilePaths[2] || png.UnreadFiles[0].FileName != "chart.png" {
		t.Errorf("adding chart.png answered %d %s, want it alone in unread_files", r.status, r.body)
	}

	// A public file connector: a curator who did not make it lists its
	// files but may not change them; a global curator may (Onyx's special
	// case).
	pub, _ := c.uploaded(c.curator, uploadPart{"p.txt", "", []byte("public")})
	pconn, _ := c.fileConnector(c.curator, "public files", pub, []string{"p.txt"}, nil, quarry.AccessPublic)
	if r := c.do(c.other, "GET", fmt.Sprintf("/manage/admin/connector/%d/files", pconn), nil); r.status != 200 {
		t.Errorf("another curator lists a public file connector's files: %d %s", r.status, r.body)
	}
	c.updateFiles(c.other, pconn, str(`["`+pub[0]+`"]`), uploadPart{"o.txt", "", []byte("other")}).want(t, 403, denied)
	r = c.updateFiles(c.global, pconn, str(`["`+pub[0]+`"]`), uploadPart{"g.txt", "", []byte("global")})
	if r.status != 200 || !strings.Contains(string(r.body), `"file_names":["g.txt"]`) {
		t.Errorf("a global curator changes a public file connector's files: %d %s", r.status, r.body)
	}

	for _, g := range fxGoldens(t, "updateFiles") {
		t.Run("golden "+g.Name, func(t *testing.T) { fx{c.env}.replay(t, c.admin, "POST", "", g) })
	}
}

// A zip's metadata is merged: the entries of the names no file has any
// more are dropped (Onyx drops a removed file's name even when another
// file has it), the zip's added over the others, into a new
// .onyx_metadata.json that the configuration names; none is left once no
// entry is.
func TestConnectorFilesMetadata(t *testing.T) {
	f := fx{newEnv(t)}
	ids, meta := f.uploaded(f.admin, uploadPart{"one.zip", "application/zip", zipOf(t, "a.txt", "alpha", "b.txt", "beta",
		".onyx_metadata.json", `[{"filename":"a.txt","title":"A"},{"filename":"b.txt","title":"B"}]`)})
	conn, _ := f.fileConnector(f.admin, "zipped", ids, []string{"a.txt", "b.txt"}, meta, quarry.AccessPublic)
	content := func(id *string) string {
		t.Helper()
		if id == nil {
			return "none"
		}
		var b []byte
		if err := f.rawDB().QueryRow(`SELECT data FROM file_chunks WHERE file_id = $1`, *id).Scan(&b); err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	var out struct {
		Paths []string `json:"file_paths"`
		Meta  *string  `json:"zip_metadata_file_id"`
	}
	f.updateFiles(f.admin, conn, new(`["`+ids[0]+`"]`), uploadPart{"two.zip", "", zipOf(t, "b.txt", "beta 2", "c.txt", "gamma",
		".onyx_metadata.json", `{"b.txt":{"filename":"b.txt","title":"B2"},"c.txt":{"title":"C"}}`)}).decode(t, &out)
	if got, want := content(out.Meta), `{"b.txt":{"filename":"b.txt","title":"B2"},"c.txt":{"title":"C"}}`; got != want || *out.Meta == *meta {
		t.Errorf("the merged metadata %s (%v), want a new file of %s", got, out.Meta, want)
	}
	f.updateFiles(f.admin, conn, new(`["`+ids[1]+`"]`)).decode(t, &out)
	if got, want := content(out.Meta), `{"b.txt":{"filename":"b.txt","title":"B2"},"c.txt":{"title":"C"}}`; got != want {
		t.Errorf("after removing the first b.txt: %s, want %s", got, want)
	}
	// A zip of metadata alone changes the metadata only.
	before := *out.Meta
	f.updateFiles(f.admin, conn, nil, uploadPart{"meta.zip", "", zipOf(t, ".onyx_metadata.json", `[{"filename":"c.txt","title":"C2"}]`)}).decode(t, &out)
	if got, want := content(out.Meta), `{"b.txt":{"filename":"b.txt","title":"B2"},"c.txt":{"filename":"c.txt","title":"C2"}}`; got != want || *out.Meta == before || len(out.Paths) != 2 {
		t.Errorf("after a zip of metadata alone: %s, %v; want %s in a new file, and the two files", got, out.Paths, want)
	}
	var paths []string
	paths = append(paths, out.Paths...)
	f.updateFiles(f.admin, conn, new(`["`+paths[0]+`","`+paths[1]+`"]`), uploadPart{"d.txt", "", []byte("delta")}).decode(t, &out)
	if out.Meta != nil {
		t.Errorf("zip_metadata_file_id %s once every file with metadata is gone, want null", *out.Meta)
	}
}

// A change of a file connector's files may be as large as an upload
// (QUARRY_FILE_MAX_UPLOAD_BYTES), not only QUARRY_MAX_BODY_BYTES, and no
// larger.
func TestConnectorFilesBodyLimit(t *testing.T) {
	f := fx{newEnv(t, func(c *api.Config) {
		c.MaxBodyBytes = 1 << 20
		c.FileLimits = quarry.FileLimits{MaxUploadBytes: 4 << 20}
	})}
	ids, _ := f.uploaded(f.admin, uploadPart{"a.txt", "", []byte("alpha")})
	conn, _ := f.fileConnector(f.admin, "big", ids, []string{"a.txt"}, nil, quarry.AccessPublic)
	if r := f.updateFiles(f.admin, conn, nil, uploadPart{"two.txt", "", bytes.Repeat([]byte("x"), 2<<20)}); r.status != 200 {
		t.Errorf("a change of 2 MiB: %d %s, want 200", r.status, r.body)
	}
	f.updateFiles(f.admin, conn, nil, uploadPart{"five.txt", "", bytes.Repeat([]byte("x"), 5<<20)}).want(t, 413,
		`{"detail":"Request body is larger than 4194304 bytes"}`)
}
