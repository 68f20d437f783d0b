package api

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
)

// The API describes itself: openapi.json is an OpenAPI 3.1 document of
// every route registered in routes.go, kept beside the code and embedded in
// the binary; docs.html is a self-contained page that renders it. The tests
// fail when a route is registered that the document does not describe, or
// the document describes one that does not exist, and every request and
// response of the API tests is validated against it.

//go:embed openapi.json
var openAPIDocument []byte

//go:embed docs.html
var docsPage []byte

// developmentVersion is the info.version written in openapi.json: the
// label of a build without a version of its own.
const developmentVersion = "Development"

// versionLine is the text of info.version in openapi.json; it occurs
// exactly once there (the tests check it).
var versionLine = []byte(`"version": "` + developmentVersion + `"`)

// documents caches the served document per version label.
var documents sync.Map // string → []byte

// openAPIFor returns the OpenAPI document with info.version set to the
// label of version: version itself, or "Development" when it is empty or
// "dev".
func openAPIFor(version string) []byte {
	if version == "" || version == "dev" {
		version = developmentVersion
	}
	if doc, ok := documents.Load(version); ok {
		return doc.([]byte)
	}
	label, _ := json.Marshal(version) // Marshalling a string cannot fail.
	doc := bytes.Replace(openAPIDocument, versionLine, append([]byte(`"version": `), label...), 1)
	documents.Store(version, doc)
	return doc
}

// handleOpenAPI serves GET /openapi.json: the OpenAPI document of the API,
// with the server's version. It is public.
func (s *Server) handleOpenAPI(w http.ResponseWriter, r *http.Request) {
	writeBody(w, http.StatusOK, openAPIFor(s.cfg.Version))
}

// docsPolicy lets the docs page run its own inline script and style and
// fetch the document from this server, and nothing else.
const docsPolicy = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// handleDocs serves GET /docs: a page that fetches /openapi.json and renders
// it for humans. It needs nothing from the network but this server. It is
// public.
func (s *Server) handleDocs(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(docsPage)))
	h.Set("Content-Security-Policy", docsPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	w.Write(docsPage) // A failed write means the client left: nothing more to tell it.
}
