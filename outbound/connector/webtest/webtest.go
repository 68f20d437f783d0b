// Package webtest serves the sites the web connector's tests crawl: the
// small site of outbound/connector/testdata/site, from disk, and a
// generated one of many pages for the benchmarks. It is for tests only.
package webtest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Site is a site served from disk, with three redirects the files cannot
// make: /docs/old.html to /docs/sub/deep.html (on the site),
// /docs/to-secret to /docs/secret.html (which its robots.txt disallows)
// and /docs/away off the site. It counts the requests of each path.
type Site struct {
	*httptest.Server
	mu    sync.Mutex
	count map[string]int
}

// NewSite serves the directory dir until tb ends.
func NewSite(tb testing.TB, dir string) *Site {
	s := &Site{count: map[string]int{}}
	files := http.FileServer(http.Dir(dir))
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.count[r.URL.Path]++
		s.mu.Unlock()
		switch r.URL.Path {
		case "/docs/old.html":
			http.Redirect(w, r, "/docs/sub/deep.html", http.StatusMovedPermanently)
		case "/docs/to-secret":
			http.Redirect(w, r, "/docs/secret.html", http.StatusFound)
		case "/docs/away":
			http.Redirect(w, r, "http://elsewhere.invalid/", http.StatusFound)
		default:
			files.ServeHTTP(w, r)
		}
	}))
	tb.Cleanup(s.Close)
	return s
}

// NewStaticSite serves the directory dir until tb ends as Starlette's
// StaticFiles(html=True) serves it, the server of Onyx's pruning test: a
// file at its path, a directory's index.html at the directory's path,
// /index.html itself too (where http.FileServer redirects it to /), and
// 404 for anything else. It counts the requests of each path.
func NewStaticSite(tb testing.TB, dir string) *Site {
	s := &Site{count: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.count[r.URL.Path]++
		s.mu.Unlock()
		name := filepath.Join(dir, filepath.FromSlash(path.Clean("/"+r.URL.Path)))
		if st, err := os.Stat(name); err == nil && st.IsDir() {
			if !strings.HasSuffix(r.URL.Path, "/") {
				http.Redirect(w, r, r.URL.Path+"/", http.StatusTemporaryRedirect)
				return
			}
			name = filepath.Join(name, "index.html")
		}
		f, err := os.Open(name)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil || st.IsDir() {
			http.NotFound(w, r)
			return
		}
		http.ServeContent(w, r, st.Name(), st.ModTime(), f)
	}))
	tb.Cleanup(s.Close)
	return s
}

// Requests returns how many times path was asked for.
func (s *Site) Requests(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.count[path]
}

// Pages is a site of n HTML pages of about 2 KB, / and /p/1 to /p/{n-1},
// each titled "Page {i}" and linking to the next ten.
func Pages(n int) http.Handler {
	para := strings.Repeat("Some words of a paragraph of the page. ", 12)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var i int
		if _, err := fmt.Sscanf(r.URL.Path, "/p/%d", &i); (err != nil && r.URL.Path != "/") || i >= n {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!DOCTYPE html><html><head><title>Page %d</title></head><body><nav><a href=\"/\">Home</a></nav><h1>Page %d</h1>", i, i)
		for j := range 4 {
			fmt.Fprintf(w, "<p>%d. %s</p>", j, para)
		}
		fmt.Fprint(w, "<ul>")
		for j := i + 1; j <= i+10 && j < n; j++ {
			fmt.Fprintf(w, "<li><a href=\"/p/%d\">Page %d</a></li>", j, j)
		}
		fmt.Fprint(w, "</ul></body></html>")
	})
}
