package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry/internal/syncbuf"
	"github.com/quarryhq/quarry/store"
)

// TestServeIndexesAnUploadedFile follows the README's second path on the
// embedded default, with nothing else started: a file uploaded, a file
// connector of it paired, the worker inside quarry serve indexes it, and
// search finds it; then the index's upkeep inside quarry serve writes its
// chunk into a segment.
func TestServeIndexesAnUploadedFile(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "quarry.db")
	var stdout, stderr syncbuf.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "-addr", "127.0.0.1:0", "-db", "sqlite:" + dbPath}, envOf(nil), &stdout, &stderr)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	var base string
	urlRE := regexp.MustCompile(`"url":"(http://[^"]+)"`)
	for deadline := time.Now().Add(20 * time.Second); base == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := urlRE.FindStringSubmatch(stderr.String()); m != nil {
			base = m[1]
		}
	}
	token := tokenRE.FindString(stdout.String())
	if base == "" || token == "" {
		t.Fatalf("the server did not start: %s", stderr.String())
	}
	call := func(method, path, contentType string, body io.Reader) []byte {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, body)
		req.Header.Set("Authorization", "Bearer "+token)
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != 200 {
			t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, b)
		}
		return b
	}
	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	part, _ := mw.CreateFormFile("files", "climbing.txt")
	part.Write([]byte("Rope and belay checklist for the north face.\n"))
	mw.Close()
	var uploaded struct {
		FilePaths []string `json:"file_paths"`
	}
	if err := json.Unmarshal(call("POST", "/manage/admin/connector/file/upload", mw.FormDataContentType(), &form), &uploaded); err != nil ||
		len(uploaded.FilePaths) != 1 {
		t.Fatalf("upload: %+v, %v", uploaded, err)
	}
	const j = "application/json"
	call("POST", "/manage/admin/connector", j, strings.NewReader(fmt.Sprintf(`{"name": "notes", "source": "file", "input_type": "load_state",
		"connector_specific_config": {"file_locations": [%q], "file_names": ["climbing.txt"]}}`, uploaded.FilePaths[0])))
	call("POST", "/manage/credential", j, strings.NewReader(`{"source": "file", "admin_public": true, "credential_json": {}}`))
	call("PUT", "/manage/connector/1/credential/1", j, strings.NewReader(`{"name": "notes", "access_type": "public"}`))
	var found []string
	for deadline := time.Now().Add(60 * time.Second); len(found) == 0 && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		var out struct {
			SearchDocs []struct {
				SemanticIdentifier string `json:"semantic_identifier"`
			} `json:"search_docs"`
		}
		if err := json.Unmarshal(call("POST", "/search/send-search-message", j, strings.NewReader(`{"search_query": "belay"}`)), &out); err != nil {
			t.Fatal(err)
		}
		for _, d := range out.SearchDocs {
			found = append(found, d.SemanticIdentifier)
		}
	}
	if len(found) != 1 || found[0] != "climbing.txt" {
		t.Fatalf("search for belay: %v, want climbing.txt (server log: %s)", found, stderr.String())
	}
	keys, err := (&Config{DatabaseURL: "sqlite:" + dbPath}).keyring(func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(context.Background(), "sqlite:"+dbPath, keys, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var state store.IndexState
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if state, err = db.SearchIndexState(context.Background()); err != nil || (state.Pending == 0 && state.Segments > 0) {
			break
		}
	}
	if err != nil || state.Pending != 0 || state.Segments == 0 {
		t.Errorf("the index's upkeep inside quarry serve: %+v, %v; want no chunk pending, a segment", state, err)
	}
}
