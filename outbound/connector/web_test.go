package connector

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/outbound/connector/webtest"
)

func TestReadHTML(t *testing.T) {
	for _, tc := range []struct {
		name, in                     string
		title, text, canonical, base string
		links                        []string
	}{
		{name: "empty", in: "", title: "", text: ""},
		{name: "title and blocks",
			in:    "<html><head><title> A \n title </title></head><body><h1>Head</h1><p>One  <b>two</b>\nthree</p><ul><li>a</li><li>b</li></ul></body></html>",
			title: "A title", text: "Head\nOne two three\na\nb"},
		{name: "first h1 when no title", in: "<h2>Sub</h2><h1>The <i>heading</i></h1><h1>Second</h1>", title: "The heading", text: "Sub\nThe heading\nSecond"},
		{name: "dropped elements",
			in:    "<header>H</header><nav>N<a href='/x'>x</a></nav><script>s()</script><style>p{}</style><noscript>ns</noscript><svg><title>icon</title><text>t</text></svg><template>tp</template><main><p>kept</p></main><footer>F</footer>",
			title: "", text: "kept", links: []string{"/x"}},
		{name: "chrome by class and role",
			in:    `<div class="related" role="navigation"><h3>Navigation</h3><a href="/i">index</a></div><div role="Banner">B</div><aside>A</aside><div class="main sidebar">S</div><div class="footer">F</div><div role="contentinfo">C</div><div class="sidebar-like">kept</div>`,
			title: "", text: "kept", links: []string{"/i"}},
		{name: "svg title is not the title", in: "<body><svg><title>icon</title></svg><h1>Real</h1></body>", title: "Real", text: "Real"},
		{name: "canonical and base", in: `<head><link rel="Canonical" href="/c"><link rel=canonical href="/d"><base href="/b/"></head><body>x<br>y</body>`,
			title: "", text: "x\ny", canonical: "/c", base: "/b/"},
		{name: "links everywhere", in: `<a href="a">1</a><a>no href</a><div><a href="">2</a></div>`, text: "1no href\n2", links: []string{"a", ""}},
		{name: "entities", in: "<p>Fish &amp; chips&nbsp;&lt;3</p>", text: "Fish & chips <3"},
		{name: "broken html", in: "<p>open<div>inner</p>text", text: "open\ninner\ntext"},
		{name: "pre keeps its lines", in: "<p>a\nb</p><pre>x  y\n  z</pre>", text: "a b\nx y\nz"},
		{name: "deep", in: strings.Repeat("<div>", 400) + "deep" + strings.Repeat("</div>", 400) + "<p>shallow</p>", text: "deep\nshallow"},
		{name: "table cells are lines", in: "<table><tr><td>a</td><td>b</td></tr></table>", text: "a\nb"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := readHTML(strings.NewReader(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if p.Title != tc.title || p.Text != tc.text || p.Canonical != tc.canonical || p.Base != tc.base || !slices.Equal(p.Links, tc.links) {
				t.Errorf("readHTML = title %q text %q canonical %q base %q links %q\nwant title %q text %q canonical %q base %q links %q",
					p.Title, p.Text, p.Canonical, p.Base, p.Links, tc.title, tc.text, tc.canonical, tc.base, tc.links)
			}
		})
	}
}

// TestReadHTMLSphinx reads a page Sphinx made (Debian's python3-dev ships
// it as /usr/share/doc/python3/python-policy.html; the fixture is its
// head, its first section and its end): the navigation bars, the sidebar
// (divs of role navigation) and the footer (role contentinfo) are
// dropped, their links still followed.
func TestReadHTMLSphinx(t *testing.T) {
	f, err := os.Open("testdata/sphinx-python-policy.html")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := readHTML(f)
	if err != nil {
		t.Fatal(err)
	}
	want := "Abstract¶\n" +
		"This document describes the packaging of Python within the Debian GNU/Linux distribution and the policy requirements for packaged Python programs and modules.\n" +
		"Indices and tables¶\nIndex\nModule Index\nSearch Page"
	if p.Title != "Debian Python Policy 0.12.0.0 documentation" || p.Text != want {
		t.Errorf("title %q, text:\n%s\nwant:\n%s", p.Title, p.Text, want)
	}
	if !slices.Contains(p.Links, "genindex.html") || !slices.Contains(p.Links, "index.html#document-copyright") {
		t.Errorf("links %q: the navigation's are missing", p.Links)
	}
}

// The parser refuses a page too deep: that page is a per-document
// failure ("the page is not HTML").
func TestReadHTMLTooDeep(t *testing.T) {
	if _, err := readHTML(strings.NewReader(strings.Repeat("<div>", 600))); err == nil {
		t.Error("readHTML of 600 nested elements: no error")
	}
}

func FuzzWebText(f *testing.F) {
	for _, s := range []string{
		"", "<title>t</title><p>a</p>", "<svg><title>x</title></svg><h1>h</h1>",
		"<table><tr><td>a<td>b</table><script>x</script>", "<a href='\\x'>&#0;</a>\xff<p>",
		`<link rel=canonical href="http://[::1">`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		p, err := readHTML(strings.NewReader(in))
		if err != nil {
			return
		}
		for l := range strings.SplitSeq(p.Text, "\n") {
			if p.Text != "" && (l == "" || l != collapse(l)) {
				t.Fatalf("line %q of %q is empty or not collapsed", l, p.Text)
			}
		}
		if p.Title != collapse(p.Title) {
			t.Fatalf("title %q is not collapsed", p.Title)
		}
		if utf8.ValidString(in) && !utf8.ValidString(p.Text) {
			t.Fatalf("text %q of valid UTF-8 is not", p.Text)
		}
		base, _ := url.Parse("http://example.com/a/b")
		for _, l := range p.Links {
			if u := resolveLink(base, l); u != nil {
				normalizeURL(u)
			}
		}
	})
}

func TestNormalizeURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://Example.COM":              "http://example.com/",
		"HTTP://example.com:80/a/":        "http://example.com/a",
		"https://example.com:443/a//":     "https://example.com/a",
		"https://example.com:8443/":       "https://example.com:8443/",
		"http://u:p@example.com/a#frag":   "http://example.com/a",
		"http://example.com/a/?q=1#x":     "http://example.com/a?q=1",
		"http://example.com/a?":           "http://example.com/a",
		"http://example.com/docs/":        "http://example.com/docs",
		"http://example.com/a%2Fb/":       "http://example.com/a%2Fb",
		"http://example.com/sp ace/index": "http://example.com/sp%20ace/index",
	} {
		u, err := url.Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := normalizeURL(u); got != want {
			t.Errorf("normalizeURL(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestResolveLink(t *testing.T) {
	base, _ := url.Parse("http://example.com/docs/page.html")
	for href, want := range map[string]string{
		"other.html":          "http://example.com/docs/other.html",
		"../up.html#x":        "http://example.com/up.html",
		"/abs":                "http://example.com/abs",
		"sub\\win.html":       "http://example.com/docs/sub/win.html",
		"//cdn.example.org/x": "http://cdn.example.org/x",
		"#top":                "http://example.com/docs/page.html",
		"mailto:a@b.c":        "",
		"javascript:void(0)":  "",
		"":                    "",
		"http://[::1":         "",
		"ftp://example.com/f": "",
	} {
		got := ""
		if u := resolveLink(base, href); u != nil {
			got = u.String()
		}
		if got != want {
			t.Errorf("resolveLink(%q) = %q, want %q", href, got, want)
		}
	}
}

func TestUnderBase(t *testing.T) {
	for _, tc := range []struct {
		base string
		in   map[string]bool
	}{
		{"http://h/docs/", map[string]bool{"http://h/docs": true, "http://h/docs/": true, "http://h/docs/a": true,
			"http://h/docsx": false, "http://h/": false, "https://h/docs/a": false, "http://h:8080/docs/a": false, "http://other/docs/a": false}},
		{"http://h", map[string]bool{"http://h/": true, "http://h/anything": true, "http://H:80/x": true, "http://g/": false}},
	} {
		w := newTestWeb(t, `{"base_url":"`+tc.base+`"}`, http.DefaultClient)
		for in, want := range tc.in {
			u, _ := url.Parse(in)
			if got := w.underBase(u); got != want {
				t.Errorf("base %s: underBase(%s) = %v, want %v", tc.base, in, got, want)
			}
		}
	}
}

func TestParseRobots(t *testing.T) {
	const txt = `# comment
User-agent: quarry
Disallow: /private
Allow: /private/open

User-agent: *
Disallow: /
Allow: /public
Disallow: /*.pdf$

User-agent: SomeBot
User-agent: OtherBot
Disallow: /
`
	for _, tc := range []struct {
		txt, agent string
		allowed    map[string]bool
	}{
		{txt, "Quarry-Web-Connector", map[string]bool{"/": true, "/private": false, "/private/x": false, "/private/open/x": true, "/robots.txt": true}},
		{txt, "Unknown", map[string]bool{"/": false, "/public/a": true, "/x": false}},
		{"User-agent: *\nDisallow: /*.pdf$\nDisallow: /tmp/*/cache\n", "x", map[string]bool{"/a.pdf": false, "/a.pdf?x": true, "/a.pdfx": true,
			"/tmp/a/cache": false, "/tmp/a/b/cache/z": false, "/tmp/cache": true}},
		{"User-agent: *\nDisallow:\n", "x", map[string]bool{"/anything": true}},
		{"", "x", map[string]bool{"/": true}},
		{"Disallow: /no-group\nUser-agent: *\nDisallow: /a\n", "x", map[string]bool{"/no-group": true, "/a": false}},
		{"User-agent: *\nAllow: /a\nDisallow: /a\n", "x", map[string]bool{"/a": true}},
		{"user-agent: QUARRY-web-connector\ndisallow: /q  # for us\nUser-agent: quarry\nDisallow: /\n", "Quarry-Web-Connector", map[string]bool{"/q": false, "/x": true}},
	} {
		r := parseRobots(strings.NewReader(tc.txt), tc.agent)
		for path, want := range tc.allowed {
			if got := r.allowed(path); got != want {
				t.Errorf("robots %q for %s: allowed(%s) = %v, want %v", tc.txt, tc.agent, path, got, want)
			}
		}
	}
}

func TestNewWebConfig(t *testing.T) {
	for cfg, want := range map[string]string{
		`{"base_url":"https://example.com"}`:                                                                        "",
		`{"base_url":"example.com/docs","web_connector_type":"single"}`:                                             "",
		`{"base_url":"https://example.com","web_connector_type":"sitemap"}`:                                         "",
		`{"base_url":"https://example.com","mintlify_cleanup":true,"batch_size":16,"scroll_before_scraping":false}`: "",
		`{"base_url":"ftp://example.com"}`:                                                                          "is not an http or https URL",
		`{"base_url":""}`:                                                                                           "is not an http or https URL",
		`{"base_url":"https://example.com","web_connector_type":"upload"}`:                                          "upload",
		`{"base_url":"https://example.com","web_connector_type":"crawl"}`:                                           "none of recursive",
		`{"base_url":"https://example.com","max_pages":0}`:                                                          "max_pages 0",
		`{"base_url":"https://example.com","request_delay_ms":-1}`:                                                  "request_delay_ms -1",
		`{"base_url":"https://example.com","url_rewrites":[{"source":"a","target":"b"}]}`:                           "url_rewrites",
		`[]`: "not an object",
	} {
		_, err := NewWeb(json.RawMessage(cfg), nil, &Env{HTTP: http.DefaultClient})
		if (err == nil) != (want == "") || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("NewWeb(%s) = %v, want %q", cfg, err, want)
		}
	}
}

// newTestWeb makes a web connector of cfg.
func newTestWeb(t *testing.T, cfg string, hc *http.Client) *Web {
	t.Helper()
	c, err := NewWeb(json.RawMessage(cfg), nil, &Env{HTTP: hc, Now: time.Now, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return c.(*oneStep).inner.(*Web)
}

// testSite is the site of testdata/site.
type testSite struct{ *webtest.Site }

func newTestSite(t *testing.T) *testSite { return &testSite{webtest.NewSite(t, "testdata/site")} }

// recorder is an Emitter that keeps what it is given.
type recorder struct {
	docs     []*quarry.Document
	failures []*quarry.ConnectorFailure
}

func (r *recorder) Document(_ context.Context, d *quarry.Document) error {
	r.docs = append(r.docs, d)
	return nil
}

func (r *recorder) Failure(_ context.Context, f *quarry.ConnectorFailure) error {
	r.failures = append(r.failures, f)
	return nil
}

// run runs the web connector of cfg (its base_url relative to the site)
// to the end.
func (s *testSite) run(t *testing.T, cfg map[string]any) (*recorder, error) {
	t.Helper()
	cfg["base_url"] = s.URL + cfg["base_url"].(string)
	cfg["request_delay_ms"] = 0
	b, _ := json.Marshal(cfg)
	c, err := NewWeb(b, nil, &Env{HTTP: s.Client(), Now: time.Now, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	_, err = c.Step(context.Background(), Window{}, c.FirstCheckpoint(), rec)
	return rec, err
}

// summary is the ids and semantic identifiers of the documents, and the
// ids and messages of the failures, with the site's URL as "".
func (s *testSite) summary(r *recorder) (docs, failures []string) {
	for _, d := range r.docs {
		docs = append(docs, strings.TrimPrefix(d.ID, s.URL)+" "+d.SemanticIdentifier)
	}
	for _, f := range r.failures {
		failures = append(failures, strings.TrimPrefix(f.FailedDocument.DocumentID, s.URL)+" "+f.FailureMessage)
	}
	return docs, failures
}

func TestWebKinds(t *testing.T) {
	for _, tc := range []struct {
		name          string
		cfg           map[string]any
		docs, failure []string
		err           string
	}{
		{"recursive", map[string]any{"base_url": "/docs/"},
			[]string{"/docs Docs home", "/docs/guide.html The guide", "/docs/sub/deep.html Deep page", "/docs/printable Printable"},
			[]string{"/docs/missing.html the server answered 404 Not Found"}, ""},
		{"recursive capped", map[string]any{"base_url": "/docs/", "max_pages": 2},
			[]string{"/docs Docs home", "/docs/guide.html The guide"}, nil, ""},
		{"single", map[string]any{"base_url": "/docs/guide.html", "web_connector_type": "single"},
			[]string{"/docs/guide.html The guide"}, nil, ""},
		{"sitemap", map[string]any{"base_url": "/docs/", "web_connector_type": "sitemap"},
			[]string{"/docs/guide.html The guide", "/docs/sub/deep.html Deep page"},
			[]string{"/docs/missing.html the server answered 404 Not Found"}, ""},
		{"sitemap by name", map[string]any{"base_url": "/docs/sitemap.xml", "web_connector_type": "sitemap", "max_pages": 1},
			[]string{"/docs/guide.html The guide"}, nil, ""},
		{"base URL gone", map[string]any{"base_url": "/nothing/", "web_connector_type": "single"},
			nil, nil, "the base URL %u/nothing/: the server answered 404 Not Found"},
		{"base URL disallowed", map[string]any{"base_url": "/docs/secret.html"},
			nil, nil, "robots.txt of %h disallows the base URL"},
		{"no sitemap", map[string]any{"base_url": "/docs/sub/", "web_connector_type": "sitemap"},
			nil, nil, "the sitemap %u/docs/sub/sitemap.xml: the server answered 404 Not Found"},
		{"only a text file", map[string]any{"base_url": "/docs/file.txt"}, nil, nil, "no valid pages found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestSite(t)
			rec, err := s.run(t, tc.cfg)
			want := strings.ReplaceAll(tc.err, "%u", s.URL)
			want = strings.ReplaceAll(want, "%h", strings.TrimPrefix(s.URL, "http://"))
			if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), want)) {
				t.Fatalf("error %v, want %q", err, want)
			}
			docs, failures := s.summary(rec)
			if !slices.Equal(docs, tc.docs) || !slices.Equal(failures, tc.failure) {
				t.Errorf("documents %q and failures %q, want %q and %q", docs, failures, tc.docs, tc.failure)
			}
			for _, p := range []string{"/docs/secret.html", "/about.html"} {
				if n := s.Requests(p); n != 0 {
					t.Errorf("%s was fetched %d times, want never", p, n)
				}
			}
		})
	}
}

func TestWebDocument(t *testing.T) {
	s := newTestSite(t)
	rec, err := s.run(t, map[string]any{"base_url": "/docs/guide.html", "web_connector_type": "single"})
	if err != nil || len(rec.docs) != 1 {
		t.Fatalf("%v, %d documents", err, len(rec.docs))
	}
	d := rec.docs[0]
	b, _ := json.Marshal(d)
	want := `{"id":"` + s.URL + `/docs/guide.html","sections":[{"text":"Guide\nPart 1\nFirst, read this.\nPart 2\nThen go deeper.","link":"` +
		s.URL + `/docs/guide.html"}],"source":"web","semantic_identifier":"The guide","title":"The guide","metadata":{}}`
	if string(b) != want {
		t.Errorf("document\n%s\nwant\n%s", b, want)
	}
}

func TestWebListIDs(t *testing.T) {
	s := newTestSite(t)
	c, err := NewWeb(json.RawMessage(`{"base_url":"`+s.URL+`/docs/","request_delay_ms":0}`), nil, &Env{HTTP: s.Client(), Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	err = c.(*oneStep).inner.(Slim).ListIDs(context.Background(), func(_ context.Context, batch []string) error {
		for _, id := range batch {
			ids = append(ids, strings.TrimPrefix(id, s.URL))
		}
		return nil
	})
	if want := []string{"/docs", "/docs/guide.html", "/docs/sub/deep.html", "/docs/printable"}; err != nil || !slices.Equal(ids, want) {
		t.Errorf("ListIDs: %q, %v; want %q", ids, err, want)
	}
}

func TestWebPageTooLarge(t *testing.T) {
	big := strings.Repeat("<p>x</p>", webPageMaxBytes/8+1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/":
			io.WriteString(w, `<title>Home</title><a href="/big">big</a>`)
		case "/big":
			io.WriteString(w, big)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c, err := NewWeb(json.RawMessage(`{"base_url":"`+srv.URL+`","request_delay_ms":0}`), nil, &Env{HTTP: srv.Client(), Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	if _, err := c.Step(context.Background(), Window{}, c.FirstCheckpoint(), rec); err != nil {
		t.Fatal(err)
	}
	if len(rec.docs) != 1 || len(rec.failures) != 1 || rec.failures[0].FailureMessage != "the page is larger than 5 MiB, the most the connector reads" {
		t.Errorf("%d documents, failures %+v; want Home and the big page's failure", len(rec.docs), rec.failures)
	}
}

// A base URL that wants credentials (401) refused the connector's access
// (issue 39): a *CredentialError, asked for once, not retried; a page
// other than the base URL that answers 401 is that page's failure.
func TestWebBaseURLUnauthorized(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		requests.Add(1)
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/":
			io.WriteString(w, `<title>Open</title><a href="/closed">closed</a>`)
		default:
			w.Header().Set("WWW-Authenticate", `Basic realm="intranet"`)
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	defer srv.Close()
	run := func(base string) (*recorder, error) {
		c, err := NewWeb(json.RawMessage(`{"base_url":"`+base+`","request_delay_ms":0}`), nil, &Env{HTTP: srv.Client(), Log: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		rec := &recorder{}
		_, err = c.Step(context.Background(), Window{}, c.FirstCheckpoint(), rec)
		return rec, err
	}
	_, err := run(srv.URL + "/closed")
	var refused *CredentialError
	if want := "the base URL " + srv.URL + "/closed: the server answered 401 Unauthorized; the web connector reads public pages only"; !errors.As(err, &refused) || refused.Reason != want {
		t.Errorf("a base URL that answers 401: %#v, want a CredentialError: %s", err, want)
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("%d requests of the base URL, want 1", n)
	}
	rec, err := run(srv.URL + "/")
	if err != nil || len(rec.docs) != 1 || len(rec.failures) != 1 || rec.failures[0].FailureMessage != "the server answered 401 Unauthorized" {
		t.Errorf("a page that answers 401: %v, %d documents, failures %+v", err, len(rec.docs), rec.failures)
	}
}

func TestWebSniff(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = nil // No Content-Type at all.
		switch r.URL.Path {
		case "/":
			io.WriteString(w, `<!DOCTYPE html><title>Home</title><a href="/bin">bin</a>`)
		case "/bin":
			w.Write([]byte{0, 1, 2, 3, 0xff})
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c, err := NewWeb(json.RawMessage(`{"base_url":"`+srv.URL+`","request_delay_ms":0}`), nil, &Env{HTTP: srv.Client(), Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	if _, err := c.Step(context.Background(), Window{}, c.FirstCheckpoint(), rec); err != nil {
		t.Fatal(err)
	}
	if len(rec.docs) != 1 || rec.docs[0].SemanticIdentifier != "Home" || len(rec.failures) != 0 {
		t.Errorf("%d documents, %d failures; want Home alone", len(rec.docs), len(rec.failures))
	}
}

func TestWebDelay(t *testing.T) {
	s := newTestSite(t)
	c, err := NewWeb(json.RawMessage(`{"base_url":"`+s.URL+`/docs/","request_delay_ms":30,"max_pages":3}`), nil, &Env{HTTP: s.Client(), Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := c.Step(context.Background(), Window{}, c.FirstCheckpoint(), &recorder{}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 60*time.Millisecond {
		t.Errorf("3 pages in %s, want two pauses of 30ms at least", d)
	}
}

// BenchmarkWebCrawl crawls a local site of 200 pages of about 2 KB, each
// linking to the next ten, with no pause between requests: pages/s is
// the connector's own speed (HTTP, parsing, text), not a site's.
func BenchmarkWebCrawl(b *testing.B) {
	const pages = 200
	srv := httptest.NewServer(webtest.Pages(pages))
	defer srv.Close()
	cfg := json.RawMessage(`{"base_url":"` + srv.URL + `/","request_delay_ms":0}`)
	b.ResetTimer()
	for b.Loop() {
		c, err := NewWeb(cfg, nil, &Env{HTTP: srv.Client(), Log: slog.New(slog.DiscardHandler)})
		if err != nil {
			b.Fatal(err)
		}
		rec := &recorder{}
		if _, err := c.Step(context.Background(), Window{}, c.FirstCheckpoint(), rec); err != nil {
			b.Fatal(err)
		}
		if len(rec.docs) != pages {
			b.Fatalf("%d documents, want %d", len(rec.docs), pages)
		}
	}
	b.ReportMetric(float64(b.N*pages)/b.Elapsed().Seconds(), "pages/s")
}

// TestWebListIDsFailure: a listing for a prune fails when a page fails
// for a moment (a 503 here), rather than leaving that page, and those only
// it links to, to be pruned; a page the server says is gone is left out.
func TestWebListIDsFailure(t *testing.T) {
	status := http.StatusServiceUnavailable
	mux := http.NewServeMux()
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, _ *http.Request) { http.NotFound(w, nil) })
	mux.HandleFunc("/site/", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/site/":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<html><head><title>Home</title></head><body><a href="/site/b.html">b</a></body></html>`)
		case "/site/b.html":
			w.WriteHeader(status)
		}
	})
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	c, err := NewWeb(json.RawMessage(`{"base_url":"`+s.URL+`/site/","request_delay_ms":0}`), nil, &Env{HTTP: s.Client(), Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	list := func() ([]string, error) {
		var ids []string
		err := c.(*oneStep).inner.(Slim).ListIDs(context.Background(), func(_ context.Context, batch []string) error {
			for _, id := range batch {
				ids = append(ids, strings.TrimPrefix(id, s.URL))
			}
			return nil
		})
		return ids, err
	}
	if ids, err := list(); err == nil || !strings.Contains(err.Error(), "/site/b.html: the server answered 503 Service Unavailable") {
		t.Errorf("with a 503: %q, %v; want the listing to fail", ids, err)
	}
	status = http.StatusNotFound
	if ids, err := list(); err != nil || !slices.Equal(ids, []string{"/site"}) {
		t.Errorf("with a 404: %q, %v; want [/site]", ids, err)
	}
}

// TestWebDuplicatesAndImages: as Onyx's browser crawl, a page whose title
// and text a page already read had is not a document (the second of two
// copies, and / against /index.html), while a listing for a prune lists
// it; an image a page links to is a document titled as Chromium titles it
// (checked against Chromium's --dump-dom: "1.jpg (825×550)"), with an
// empty text: its size when Quarry reads its format, its name alone when
// not, and no title when it is damaged; a second image of the same name
// and size (in another directory) has the same title and text, and is not
// one. A text file is not a document.
func TestWebDuplicatesAndImages(t *testing.T) {
	img := func(enc func(io.Writer, image.Image) error, w, h int) []byte {
		var b bytes.Buffer
		if err := enc(&b, image.NewRGBA(image.Rect(0, 0, w, h))); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	jpg := func(w io.Writer, m image.Image) error { return jpeg.Encode(w, m, nil) }
	gf := func(w io.Writer, m image.Image) error { return gif.Encode(w, m, nil) }
	home := `<title>Home</title><nav><a href="/index.html">i</a><a href="/copy">c</a><a href="/other">o</a>` +
		`<a href="/img/a.png">a</a><a href="/img/b%20c.jpg">b</a><a href="/img/d.gif">d</a><a href="/img/e.webp">e</a>` +
		`<a href="/img/broken.png">f</a><a href="/img/raw">g</a><a href="/notes.txt">t</a><a href="/img2/a.png">s</a></nav><p>Welcome</p>`
	site := map[string][2]string{ // Path: Content-Type and body.
		"/":               {"text/html", home},
		"/index.html":     {"text/html", home},
		"/copy":           {"text/html; charset=utf-8", `<html><head><title>Home</title></head><body><p>Welcome</p></body></html>`},
		"/other":          {"text/html", `<title>Home</title><p>Another text</p>`},
		"/img/a.png":      {"image/png", string(img(png.Encode, 120, 40))},
		"/img/b c.jpg":    {"image/jpeg", string(img(jpg, 825, 550))},
		"/img/d.gif":      {"image/gif", string(img(gf, 3, 2))},
		"/img/e.webp":     {"image/webp", "RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00\x2f\x00\x00\x00\x00"},
		"/img/broken.png": {"image/png", "\x89PNG\r\n\x1a\nnot a png"},
		"/img/raw":        {"", string(img(png.Encode, 7, 9))},
		"/img2/a.png":     {"image/png", string(img(png.Encode, 120, 40))},
		"/notes.txt":      {"text/plain", "some notes"},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		page, ok := site[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header()["Content-Type"] = nil
		if page[0] != "" {
			w.Header().Set("Content-Type", page[0])
		}
		io.WriteString(w, page[1])
	}))
	defer srv.Close()
	c, err := NewWeb(json.RawMessage(`{"base_url":"`+srv.URL+`/","request_delay_ms":0}`), nil, &Env{HTTP: srv.Client(), Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	if _, err := c.Step(context.Background(), Window{}, c.FirstCheckpoint(), rec); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range rec.docs {
		b, _ := json.Marshal(d.Sections)
		got = append(got, strings.TrimPrefix(d.ID, srv.URL)+" | "+d.SemanticIdentifier+" | "+strings.ReplaceAll(string(b), srv.URL, ""))
	}
	u := srv.URL
	want := []string{
		`/ | Home | [{"text":"Welcome","link":"/"}]`,
		`/other | Home | [{"text":"Another text","link":"/other"}]`,
		`/img/a.png | a.png (120×40) | [{"text":"","link":"/img/a.png"}]`,
		`/img/b%20c.jpg | b c.jpg (825×550) | [{"text":"","link":"/img/b%20c.jpg"}]`,
		`/img/d.gif | d.gif (3×2) | [{"text":"","link":"/img/d.gif"}]`,
		`/img/e.webp | e.webp | [{"text":"","link":"/img/e.webp"}]`,
		`/img/broken.png | ` + u + `/img/broken.png | [{"text":"","link":"/img/broken.png"}]`,
		`/img/raw | raw (7×9) | [{"text":"","link":"/img/raw"}]`,
	}
	if !slices.Equal(got, want) || len(rec.failures) != 0 {
		t.Errorf("documents\n%s\nwant\n%s\nfailures %+v", strings.Join(got, "\n"), strings.Join(want, "\n"), rec.failures)
	}
	var ids []string
	err = c.(*oneStep).inner.(Slim).ListIDs(context.Background(), func(_ context.Context, batch []string) error {
		for _, id := range batch {
			ids = append(ids, strings.TrimPrefix(id, srv.URL))
		}
		return nil
	})
	wantIDs := []string{"/", "/index.html", "/copy", "/other", "/img/a.png", "/img/b%20c.jpg", "/img/d.gif", "/img/e.webp",
		"/img/broken.png", "/img/raw", "/img2/a.png"}
	if err != nil || !slices.Equal(ids, wantIDs) {
		t.Errorf("ListIDs: %q, %v; want %q", ids, err, wantIDs)
	}
}
