package api_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"mime/multipart"
	"net/textproto"
	"regexp"
	"testing"

	"github.com/quarryhq/quarry"
)

// Assistants' avatars (api/avatar.go): their uploads, the assistants that
// name them, and the route that serves them, on the real server and
// database.

// avatarPNG is a valid 1x1 PNG (Onyx's test's).
var avatarPNG, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=")

// avatarGIF is a valid 1x1 GIF.
var avatarGIF, _ = base64.StdEncoding.DecodeString("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7")

// formPart is a part of a multipart form: its field, file name (none when
// ""), content type and content.
type formPart struct {
	field, name, contentType string
	content                  []byte
}

// uploadImage sends parts to POST /admin/persona/upload-image as u.
func (e *env) uploadImage(u user, parts ...formPart) *response {
	e.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		cd := fmt.Sprintf(`form-data; name="%s"`, p.field)
		if p.name != "" {
			cd += fmt.Sprintf(`; filename="%s"`, p.name)
		}
		h.Set("Content-Disposition", cd)
		if p.contentType != "" {
			h.Set("Content-Type", p.contentType)
		}
		w, _ := mw.CreatePart(h)
		w.Write(p.content)
	}
	mw.Close()
	return e.do(u, "POST", "/admin/persona/upload-image", body.String(), "Content-Type", mw.FormDataContentType())
}

// avatarID uploads content as an avatar as u and returns its file id.
func (e *env) avatarID(u user, content []byte) string {
	e.t.Helper()
	r := e.uploadImage(u, formPart{"file", "avatar.png", "image/png", content})
	var out struct {
		FileID string `json:"file_id"`
	}
	r.decode(e.t, &out)
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(out.FileID) {
		e.t.Fatalf("file_id %q", out.FileID)
	}
	r.want(e.t, 200, fmt.Sprintf(`{"file_id":%q}`, out.FileID))
	return out.FileID
}

const (
	avatarNotFound = `{"detail":"Avatar not found"}`
	avatarNotImage = `{"detail":"An assistant's image must be a PNG, JPEG, GIF or WebP image"}`
)

// notYours is the 400 of an uploaded_image_id the caller may not give.
func notYours(id string) string {
	return fmt.Sprintf(`{"detail":"uploaded_image_id %s is not an image you uploaded through /admin/persona/upload-image"}`, id)
}

// wantAvatar asserts that r is the avatar of file id with content.
func wantAvatar(t *testing.T, r *response, id, contentType string, content []byte) {
	t.Helper()
	want := map[string]string{"Content-Type": contentType, "Content-Length": fmt.Sprint(len(content)), "ETag": `"` + id + `"`,
		"Cache-Control": "private, max-age=31536000, immutable", "Vary": "Cookie, Authorization", "X-Content-Type-Options": "nosniff"}
	if r.status != 200 || !bytes.Equal(r.body, content) {
		t.Fatalf("avatar: %d %q, want 200 and %d bytes", r.status, r.body, len(content))
	}
	for k, v := range want {
		if got := r.header.Get(k); got != v {
			t.Errorf("avatar's %s: %q, want %q", k, got, v)
		}
	}
}

// imageIDOf returns the uploaded_image_id of assistant id as u reads it
// (GET /persona/{id}), and as the listings of u show it.
func imageIDOf(t *testing.T, c *fxCast, u user, id int64) *string {
	t.Helper()
	var one struct {
		UploadedImageID *string `json:"uploaded_image_id"`
	}
	c.do(u, "GET", fmt.Sprintf("/persona/%d", id), nil).decode(t, &one)
	var all []struct {
		ID              int64   `json:"id"`
		UploadedImageID *string `json:"uploaded_image_id"`
	}
	for _, path := range []string{"/persona", "/admin/persona"} {
		if path == "/admin/persona" && u.id != c.admin.id {
			continue
		}
		c.do(u, "GET", path, nil).decode(t, &all)
		for _, p := range all {
			if p.ID == id && fmt.Sprint(deref(p.UploadedImageID)) != fmt.Sprint(deref(one.UploadedImageID)) {
				t.Errorf("%s shows %v, GET /persona/%d %v", path, deref(p.UploadedImageID), id, deref(one.UploadedImageID))
			}
		}
	}
	return one.UploadedImageID
}

// deref returns *p, or "<nil>".
func deref(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

func TestPersonaAvatarUpload(t *testing.T) {
	c := newFxCast(t)
	files, chunks := c.fileRows()

	// Refused uploads keep nothing.
	c.uploadImage(c.basic, formPart{"file", "a.txt", "text/plain", []byte("hello, world")}).want(t, 400, avatarNotImage)
	c.uploadImage(c.basic, formPart{"file", "a.png", "image/png", []byte("<html><script>alert(1)</script></html>")}).want(t, 400, avatarNotImage)
	c.uploadImage(c.basic, formPart{"file", "a.svg", "image/svg+xml", []byte(`<svg xmlns="http://www.w3.org/2000/svg"></svg>`)}).want(t, 400, avatarNotImage)
	c.uploadImage(c.basic, formPart{"file", "empty.png", "image/png", nil}).want(t, 400, avatarNotImage)
	c.uploadImage(c.basic, formPart{"files", "a.png", "image/png", avatarPNG}).want(t, 422,
		`{"detail":[{"type":"missing","loc":["body","file"],"msg":"Field required","input":null}]}`)
	c.uploadImage(c.basic, formPart{"file", "", "", []byte("not a file")}).want(t, 400, `{"detail":"The field file must hold a file, with its file name"}`)
	c.uploadImage(c.basic, formPart{"file", "a.png", "image/png", avatarPNG}, formPart{"file", "b.png", "image/png", avatarPNG}).
		want(t, 400, `{"detail":"Upload one image at a time"}`)
	big := append(append([]byte{}, avatarPNG...), make([]byte, quarry.MaxAvatarBytes+1-len(avatarPNG))...)
	c.uploadImage(c.basic, formPart{"file", "big.png", "image/png", big}).want(t, 413, `{"detail":"An assistant's image may be at most 5 MiB (5242880 bytes)"}`)
	huge := append(big, make([]byte, 64<<10)...)
	c.uploadImage(c.basic, formPart{"file", "huge.png", "image/png", huge}).want(t, 413,
		fmt.Sprintf(`{"detail":"Request body is larger than %d bytes"}`, quarry.MaxAvatarBytes+64<<10))
	c.uploadImage(c.limited, formPart{"file", "a.png", "image/png", avatarPNG}).want(t, 403, `{"detail":"Access denied. User has limited permissions."}`)
	c.uploadImage(user{}, formPart{"file", "a.png", "image/png", avatarPNG}).want(t, 401, `{"detail":"Not authenticated"}`)
	if f, ch := c.fileRows(); f != files || ch != chunks {
		t.Fatalf("refused uploads kept %d files, %d chunks", f-files, ch-chunks)
	}

	// The largest image allowed is kept whole, and served whole.
	maxed := big[:quarry.MaxAvatarBytes]
	id := c.avatarID(c.basic, maxed)
	p := c.fxOK(c.do(c.basic, "POST", "/persona", paBody("Big", true, "uploaded_image_id", id)))
	wantAvatar(t, c.do(c.curator, "GET", fmt.Sprintf("/persona/%d/avatar", p), nil), id, "image/png", maxed)

	// Its type is sniffed from its bytes, whatever the upload says: a GIF
	// sent as text is served as a GIF.
	var up struct {
		FileID string `json:"file_id"`
	}
	c.uploadImage(c.basic, formPart{"file", "notes.txt", "text/plain", avatarGIF}).decode(t, &up)
	c.do(c.basic, "PATCH", fmt.Sprintf("/persona/%d", p), paBody("Big", true, "uploaded_image_id", up.FileID)).decode(t, &struct{}{})
	wantAvatar(t, c.do(c.basic, "GET", fmt.Sprintf("/persona/%d/avatar", p), nil), up.FileID, "image/gif", avatarGIF)
}

func TestPersonaAvatars(t *testing.T) {
	c := newFxCast(t)
	path := func(id int64) string { return fmt.Sprintf("/persona/%d/avatar", id) }

	// The owner uploads two images and makes a public assistant and a
	// private one with them, and one without.
	pubImg, privImg := c.avatarID(c.basic, avatarPNG), c.avatarID(c.basic, avatarGIF)
	pub := c.fxOK(c.do(c.basic, "POST", "/persona", paBody("Public", true, "uploaded_image_id", pubImg)))
	priv := c.fxOK(c.do(c.basic, "POST", "/persona", paBody("Private", false, "uploaded_image_id", privImg, "remove_image", nil)))
	none := c.fxOK(c.do(c.basic, "POST", "/persona", paBody("None", true, "uploaded_image_id", nil)))
	blank := c.fxOK(c.do(c.basic, "POST", "/persona", paBody("Blank", true, "uploaded_image_id", "")))
	for id, want := range map[int64]string{pub: pubImg, priv: privImg, none: "<nil>", blank: "<nil>"} {
		if got := deref(imageIDOf(t, c, c.basic, id)); got != want {
			t.Errorf("assistant %d's uploaded_image_id %s, want %s", id, got, want)
		}
	}

	// Who reads it: those who may read the assistant.
	wantAvatar(t, c.do(c.basic, "GET", path(pub), nil), pubImg, "image/png", avatarPNG)
	wantAvatar(t, c.do(c.curator, "GET", path(pub), nil), pubImg, "image/png", avatarPNG)
	wantAvatar(t, c.do(c.admin, "GET", path(priv), nil), privImg, "image/gif", avatarGIF)
	wantAvatar(t, c.do(c.basic, "GET", path(priv), nil), privImg, "image/gif", avatarGIF)
	// Others get the same 404 for every failure, its ETag named or not.
	for _, r := range []*response{
		c.do(c.curator, "GET", path(priv), nil),
		c.do(c.curator, "GET", path(priv), nil, "If-None-Match", `"`+privImg+`"`),
		c.do(c.basic, "GET", path(none), nil),
		c.do(c.basic, "GET", path(blank), nil),
		c.do(c.basic, "GET", path(99999999), nil),
	} {
		r.want(t, 404, avatarNotFound)
		if r.header.Get("ETag") != "" || r.header.Get("Cache-Control") != "no-store" {
			t.Errorf("a 404 has ETag %q, Cache-Control %q", r.header.Get("ETag"), r.header.Get("Cache-Control"))
		}
	}
	c.do(c.limited, "GET", path(pub), nil).want(t, 403, `{"detail":"Access denied. User has limited permissions."}`)
	c.do(user{}, "GET", path(pub), nil).want(t, 401, `{"detail":"Not authenticated"}`)
	c.do(c.basic, "GET", "/persona/x/avatar", nil).want(t, 422, `{"detail":[{"type":"int_parsing","loc":["path","persona_id"],`+
		`"msg":"Input should be a valid integer, unable to parse string as an integer","input":"x"}]}`)
	// Shared with the curator, it reads it.
	c.do(c.basic, "PATCH", fmt.Sprintf("/persona/%d/share", priv), map[string]any{"user_ids": []string{c.curator.id}}).want(t, 200, `null`)
	wantAvatar(t, c.do(c.curator, "GET", path(priv), nil), privImg, "image/gif", avatarGIF)

	// If-None-Match naming its ETag (strong, weak, in a list, or *): 304,
	// no body, the same headers.
	for _, inm := range []string{`"` + pubImg + `"`, `W/"` + pubImg + `"`, `"other", "` + pubImg + `"`, `*`} {
		r := c.do(c.curator, "GET", path(pub), nil, "If-None-Match", inm)
		if r.status != 304 || len(r.body) != 0 || r.header.Get("ETag") != `"`+pubImg+`"` ||
			r.header.Get("Cache-Control") != "private, max-age=31536000, immutable" {
			t.Errorf("If-None-Match %s: %d %q %v", inm, r.status, r.body, r.header)
		}
	}
	wantAvatar(t, c.do(c.curator, "GET", path(pub), nil, "If-None-Match", `"`+privImg+`"`), pubImg, "image/png", avatarPNG)

	// Who names an image: its uploader alone. Another's image, a file of
	// the file connector, an id the store does not hold: the same 400.
	connFile := func() string {
		var out struct {
			FilePaths []string `json:"file_paths"`
		}
		c.upload(c.admin, "", uploadPart{"logo.png", "image/png", avatarPNG}).decode(t, &out)
		return out.FilePaths[0]
	}()
	for _, bad := range []struct {
		u  user
		id string
	}{{c.curator, pubImg}, {c.admin, pubImg}, {c.admin, connFile}, {c.basic, connFile}, {c.basic, "0123456789abcdef0123456789abcdef"}} {
		c.do(bad.u, "POST", "/persona", paBody("Taken "+bad.id, true, "uploaded_image_id", bad.id)).want(t, 400, notYours(bad.id))
	}
	c.do(c.basic, "POST", "/persona", paBody("NUL", true, "uploaded_image_id", "a\x00b")).want(t, 400,
		`{"detail":"Text may not contain the NUL character (\\u0000)"}`)

	// A change keeps the avatar it has: null or "" leave it, and an EDITOR
	// may send the owner's id back; remove_image takes it away; a new one
	// must be the changer's.
	c.do(c.basic, "PATCH", fmt.Sprintf("/persona/%d/share", pub), map[string]any{"user_shares": []map[string]any{
		{"user_id": c.curator.id, "permission": "EDITOR"}}}).want(t, 200, `null`)
	patch := func(u user, extra ...any) *response {
		return c.do(u, "PATCH", fmt.Sprintf("/persona/%d", pub), paBody("Public", true, extra...))
	}
	for _, extra := range [][]any{{"uploaded_image_id", nil}, {"uploaded_image_id", ""}, {"uploaded_image_id", pubImg},
		{"remove_image", false}} {
		patch(c.curator, extra...).decode(t, &struct{}{})
		if got := deref(imageIDOf(t, c, c.basic, pub)); got != pubImg {
			t.Fatalf("after %v: %s", extra, got)
		}
	}
	patch(c.curator, "uploaded_image_id", privImg).want(t, 400, notYours(privImg))
	mine := c.avatarID(c.curator, avatarGIF)
	patch(c.curator, "uploaded_image_id", mine).decode(t, &struct{}{})
	wantAvatar(t, c.do(c.basic, "GET", path(pub), nil), mine, "image/gif", avatarGIF)
	// remove_image with an id: that id (Onyx's rule); alone: none.
	patch(c.basic, "remove_image", true, "uploaded_image_id", pubImg).decode(t, &struct{}{})
	wantAvatar(t, c.do(c.basic, "GET", path(pub), nil), pubImg, "image/png", avatarPNG)
	patch(c.basic, "remove_image", true).decode(t, &struct{}{})
	if got := imageIDOf(t, c, c.basic, pub); got != nil {
		t.Fatalf("after remove_image: %s", *got)
	}
	c.do(c.basic, "GET", path(pub), nil).want(t, 404, avatarNotFound)

	// A deleted assistant's avatar is not served.
	c.do(c.basic, "DELETE", fmt.Sprintf("/persona/%d", priv), nil).want(t, 200, `null`)
	c.do(c.basic, "GET", path(priv), nil).want(t, 404, avatarNotFound)

	// A file that is not an avatar's upload is never served as one, even
	// when the row names it (a write no route makes).
	db := c.rawDB()
	if _, err := db.Exec(`UPDATE personas SET uploaded_image_id = $1 WHERE id = $2`, connFile, none); err != nil {
		t.Fatal(err)
	}
	c.do(c.basic, "GET", path(none), nil).want(t, 404, avatarNotFound)
	if _, err := db.Exec(`UPDATE personas SET uploaded_image_id = $1 WHERE id = $2`, "gone", none); err != nil {
		t.Fatal(err)
	}
	c.do(c.basic, "GET", path(none), nil).want(t, 404, avatarNotFound)
}
