// Package web serves Quarry's admin page, embedded in the binary.
//
// The page is plain HTML, CSS and JavaScript modules under static/, with no
// build step and nothing fetched from the network at run time: GET / serves
// static/index.html and GET /assets/<name> the files of static/assets/.
// Both are public; the page signs people in itself (single sign-on, an
// email and a password, or an API key) and its calls to the API carry the
// session cookie or the key.
package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"io/fs"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"
)

//go:embed static
var static embed.FS

// Policy is the Content-Security-Policy of every response of the page: its
// own scripts, styles and images, calls to this server only, no framing.
const Policy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// contentTypes are the types of the files the page is made of; a file of
// another kind is not served.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
	".png":  "image/png",
	".ico":  "image/x-icon",
}

// file is one embedded file, ready to serve.
type file struct {
	body        []byte
	contentType string
	etag        string
}

// page holds the files by URL path: "/" for the page, "/assets/…" for the
// rest.
type page map[string]*file

// load reads the embedded files.
func load() page {
	p := page{}
	err := fs.WalkDir(static, "static", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		ct, ok := contentTypes[path.Ext(name)]
		if !ok {
			return nil
		}
		body, err := static.ReadFile(name)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		f := &file{body: body, contentType: ct, etag: `"` + base64.RawURLEncoding.EncodeToString(sum[:12]) + `"`}
		urlPath := strings.TrimPrefix(name, "static")
		if urlPath == "/index.html" {
			urlPath = "/"
		}
		if urlPath == "/" || strings.HasPrefix(urlPath, "/assets/") {
			p[urlPath] = f
		}
		return nil
	})
	if err != nil {
		panic("web: reading the embedded page: " + err.Error()) // The files are compiled in: cannot happen.
	}
	return p
}

// Handler returns the handler of the page: GET / and GET /assets/….
// Anything else it is given answers 404 {"detail":"Not Found"}, as the API
// does.
func Handler() http.Handler { return load() }

// ServeHTTP implements http.Handler.
func (p page) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", Policy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	f := p[r.URL.Path]
	if f == nil || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
		notFound(w)
		return
	}
	h.Set("Content-Type", f.contentType)
	h.Set("ETag", f.etag)
	// Revalidate every time: an upgraded binary must never run with an old
	// script, and an unchanged file costs only a 304.
	h.Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(f.body))
}

// notFound answers as the API's catch-all does.
func notFound(w http.ResponseWriter) {
	const body = `{"detail":"Not Found"}`
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusNotFound)
	w.Write([]byte(body)) // A failed write means the client left.
}
