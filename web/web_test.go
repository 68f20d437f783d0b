package web_test

import (
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/quarryhq/quarry/api"
	"github.com/quarryhq/quarry/store/storetest"
	"github.com/quarryhq/quarry/web"
)

// get requests path from h and returns the response and its body.
func get(t *testing.T, h http.Handler, method, path string, header ...string) (*http.Response, string) {
	t.Helper()
	r := httptest.NewRequest(method, path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	res := w.Result()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(b)
}

// wantSecurityHeaders checks the headers every response of the page has.
func wantSecurityHeaders(t *testing.T, path string, res *http.Response) {
	t.Helper()
	for name, want := range map[string]string{
		"Content-Security-Policy": web.Policy,
		"X-Content-Type-Options":  "nosniff",
		"Referrer-Policy":         "no-referrer",
		"X-Frame-Options":         "DENY",
	} {
		if got := res.Header.Get(name); got != want {
			t.Errorf("%s: %s = %q, want %q", path, name, got, want)
		}
	}
}

func TestPolicy(t *testing.T) {
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "frame-ancestors 'none'", "base-uri 'none'"} {
		if !strings.Contains(web.Policy, want) {
			t.Errorf("policy %q lacks %q", web.Policy, want)
		}
	}
	if strings.Contains(web.Policy, "unsafe") || strings.Contains(web.Policy, "http") {
		t.Errorf("policy %q allows inline code or another origin", web.Policy)
	}
}

func TestIndex(t *testing.T) {
	h := web.Handler()
	res, body := get(t, h, "GET", "/")
	if res.StatusCode != 200 {
		t.Fatalf("GET / = %d", res.StatusCode)
	}
	if ct := res.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("Content-Type = %q", ct)
	}
	wantSecurityHeaders(t, "/", res)
	for _, want := range []string{"<title>Quarry</title>", `src="assets/app.js"`, `href="assets/style.css"`, `id="signin-key"`} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	// Revalidation: an unchanged page costs a 304.
	etag := res.Header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	if res, _ := get(t, h, "GET", "/", "If-None-Match", etag); res.StatusCode != http.StatusNotModified {
		t.Errorf("GET / with its ETag = %d, want 304", res.StatusCode)
	}
	if res, body := get(t, h, "HEAD", "/"); res.StatusCode != 200 || body != "" {
		t.Errorf("HEAD / = %d with %d bytes", res.StatusCode, len(body))
	}
}

// TestPageIsSelfContained checks that the page and its files name nothing
// outside the server (no CDN, no inline script or style the policy would
// block) and that every asset the page refers to is served.
func TestPageIsSelfContained(t *testing.T) {
	h := web.Handler()
	files, err := filepath.Glob("static/assets/*")
	if err != nil || len(files) == 0 {
		t.Fatalf("no assets: %v", err)
	}
	files = append(files, "static/index.html")
	external := regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?(https?:)?//|@import|url\(\s*["']?https?:|import\s*\(?\s*["']https?:`)
	inline := regexp.MustCompile(`(?i)<script(?:\s+type="module")?>|<style|\sstyle=|\son[a-z]+=|javascript:`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if m := external.Find(b); m != nil {
			t.Errorf("%s refers to another origin: %s", f, m)
		}
		if strings.HasSuffix(f, ".html") {
			if m := inline.Find(b); m != nil {
				t.Errorf("%s has inline code the policy blocks: %s", f, m)
			}
		}
	}
	// Every relative asset reference (HTML attributes and module imports)
	// resolves to a served file.
	ref := regexp.MustCompile(`(?:src|href)="(assets/[^"]+)"|from '\./([^']+)'`)
	for _, f := range files {
		b, _ := os.ReadFile(f)
		for _, m := range ref.FindAllStringSubmatch(string(b), -1) {
			p := "/" + m[1]
			if m[2] != "" {
				p = "/assets/" + m[2]
			}
			if res, _ := get(t, h, "GET", p); res.StatusCode != 200 {
				t.Errorf("%s refers to %s, served %d", f, p, res.StatusCode)
			}
		}
	}
}

// TestTextOnly holds the console to its rule: what the server or a
// connector says goes into the page as text, never as HTML or code. No
// script sets HTML (innerHTML, outerHTML, insertAdjacentHTML,
// document.write, a Range's createContextualFragment) or runs a string
// (eval, new Function, a string given to setTimeout or setInterval); and
// a link opened in a new tab is opened without its opener.
func TestTextOnly(t *testing.T) {
	files, err := filepath.Glob("static/assets/*.js")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	html := regexp.MustCompile(`\b(innerHTML|outerHTML|insertAdjacentHTML|createContextualFragment|document\.write(ln)?|eval|Function)\s*[=(]` +
		`|\bset(Timeout|Interval)\(\s*['"` + "`" + `]|\.srcdoc\b`)
	blank := regexp.MustCompile(`target:\s*'_blank'[^)]*`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if m := html.FindString(line); m != "" {
				t.Errorf("%s:%d sets HTML or runs a string: %s", f, i+1, strings.TrimSpace(line))
			}
			if m := blank.FindString(line); m != "" && !strings.Contains(m, "noopener") {
				t.Errorf("%s:%d opens a new tab with its opener: %s", f, i+1, strings.TrimSpace(line))
			}
		}
	}
}

func TestAssets(t *testing.T) {
	h := web.Handler()
	want := map[string]string{
		".js":  "text/javascript; charset=utf-8",
		".css": "text/css; charset=utf-8",
		".svg": "image/svg+xml",
	}
	n := 0
	err := fs.WalkDir(os.DirFS("static/assets"), ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		path := "/assets/" + name
		res, body := get(t, h, "GET", path)
		if res.StatusCode != 200 {
			t.Errorf("GET %s = %d", path, res.StatusCode)
			return nil
		}
		if ct := res.Header.Get("Content-Type"); ct != want[filepath.Ext(name)] {
			t.Errorf("GET %s: Content-Type = %q, want %q", path, ct, want[filepath.Ext(name)])
		}
		src, _ := os.ReadFile(filepath.Join("static/assets", name))
		if body != string(src) {
			t.Errorf("GET %s: body is not the file's", path)
		}
		wantSecurityHeaders(t, path, res)
		if cc := res.Header.Get("Cache-Control"); cc != "no-cache" {
			t.Errorf("GET %s: Cache-Control = %q", path, cc)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 5 {
		t.Errorf("only %d assets", n)
	}
}

func TestUnknownPaths(t *testing.T) {
	h := web.Handler()
	for _, path := range []string{"/assets/", "/assets/nope.js", "/index.html", "/assets/../web.go", "/assets/app.js/x", "/static/index.html"} {
		res, body := get(t, h, "GET", path)
		if res.StatusCode != 404 || body != `{"detail":"Not Found"}` || res.Header.Get("Content-Type") != "application/json" {
			t.Errorf("GET %s = %d %q %q, want the API's JSON 404", path, res.StatusCode, res.Header.Get("Content-Type"), body)
		}
	}
	if res, _ := get(t, h, "POST", "/"); res.StatusCode != 404 {
		t.Errorf("POST / on the bare handler = %d, want 404", res.StatusCode)
	}
}

// TestServedByAPI checks the page as the API server mounts it: public,
// beside the API's routes, under the base path too, and with the API's
// catch-all still answering what the page does not.
func TestServedByAPI(t *testing.T) {
	db := storetest.OpenURL(t, "sqlite:"+filepath.Join(t.TempDir(), "q.db"), storetest.Key(t))
	srv := api.NewServer(api.Config{MaskCredentials: true, BasePath: "/api"}, db, slog.New(slog.DiscardHandler))
	for _, path := range []string{"/", "/api/", "/assets/app.js", "/api/assets/style.css"} {
		res, _ := get(t, srv, "GET", path)
		if res.StatusCode != 200 {
			t.Errorf("GET %s = %d, want 200 without a key", path, res.StatusCode)
		}
		wantSecurityHeaders(t, path, res)
		if res.Header.Get("X-Request-ID") == "" {
			t.Errorf("GET %s: no X-Request-ID: not behind the API's middleware", path)
		}
	}
	res, body := get(t, srv, "GET", "/assets/missing.js")
	if res.StatusCode != 404 || body != `{"detail":"Not Found"}` {
		t.Errorf("GET /assets/missing.js = %d %s", res.StatusCode, body)
	}
	res, body = get(t, srv, "POST", "/")
	if res.StatusCode != 405 || body != `{"detail":"Method Not Allowed"}` || res.Header.Get("Allow") != "GET" {
		t.Errorf("POST / = %d %s Allow %q, want the catch-all's 405", res.StatusCode, body, res.Header.Get("Allow"))
	}
	// The API keeps its own answers.
	if res, _ := get(t, srv, "GET", "/me"); res.StatusCode != 401 {
		t.Errorf("GET /me without a key = %d, want 401", res.StatusCode)
	}
	if res, body := get(t, srv, "GET", "/nope"); res.StatusCode != 404 || body != `{"detail":"Not Found"}` {
		t.Errorf("GET /nope = %d %s", res.StatusCode, body)
	}
}
