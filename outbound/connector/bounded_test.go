package connector

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quarryhq/quarry/internal/syncbuf"
	"github.com/quarryhq/quarry/toolrun"
)

// A bounded reader gives a stream of exactly its limit whole, fails past
// it, and never reads more than one byte past it from its source.
func TestBoundedReader(t *testing.T) {
	tooLarge := errors.New("too large")
	for _, tc := range []struct {
		size, max int
		err       error
	}{
		{0, 0, nil}, {10, 10, nil}, {9, 10, nil}, {11, 10, tooLarge}, {1 << 20, 10, tooLarge}, {1, 0, tooLarge},
	} {
		src := &countingReader{r: bytes.NewReader(make([]byte, tc.size))}
		b, err := io.ReadAll(newBoundedReader(src, int64(tc.max), tooLarge))
		if err != tc.err || len(b) != min(tc.size, tc.max) || src.n.Load() > int64(tc.max)+1 {
			t.Errorf("%d bytes, limit %d: read %d bytes (%d from the source), %v; want %d, %v",
				tc.size, tc.max, len(b), src.n.Load(), err, min(tc.size, tc.max), tc.err)
		}
	}
}

// countingReader counts the bytes read from r.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// countingConn is a connection that counts the bytes read from it: what a
// connector took from a server.
type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// countingClient is an HTTP client whose connections count the bytes read
// from them into n.
func countingClient(n *atomic.Int64) *http.Client {
	var d net.Dialer
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return countingConn{c, n}, nil
	}}}
}

// endless answers prefix, then filler bytes with no end (until the client
// goes, or 1 GiB).
func endless(contentType, prefix string, filler byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		io.WriteString(w, prefix)
		buf := bytes.Repeat([]byte{filler}, 32<<10)
		for sent := 0; sent < 1<<30; sent += len(buf) {
			if _, err := w.Write(buf); err != nil {
				return
			}
		}
	}
}

// Servers that send without end: the web and MediaWiki connectors read
// each answer up to its limit and no further, and fail (the run, or the
// page) with an error that names the limit. The bytes read from the
// connection (headers and all) are at most the limit and a little.
func TestHostileHTTPServers(t *testing.T) {
	const slack = 256 << 10
	page := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<title>Home</title><p>Hello</p>")
	}
	for _, tc := range []struct {
		name    string
		routes  map[string]http.HandlerFunc
		connect func(t *testing.T, url string, hc *http.Client, log *slog.Logger) error
		err     string // The run's error; "" for none.
		max     int64  // The most the run may read.
		log     string // What the log says, if anything.
	}{
		{name: "a page of the web", routes: map[string]http.HandlerFunc{"/": endless("text/html", "<title>Big</title><p>", 'a')},
			connect: webRun(`"web_connector_type":"single"`), err: "the base URL {url}/: the page is larger than 5 MiB, the most the connector reads",
			max: webPageMaxBytes},
		{name: "a sitemap", routes: map[string]http.HandlerFunc{"/sitemap.xml": endless("application/xml", "<urlset><url><loc>", 'a')},
			connect: webRun(`"web_connector_type":"sitemap"`), err: "the sitemap {url}/sitemap.xml is larger than 50 MiB, the most the connector reads",
			max: webSitemapMaxBytes},
		{name: "robots.txt", routes: map[string]http.HandlerFunc{"/robots.txt": endless("text/plain", "User-agent: *\nDisallow: /private\n#", 'a'), "/": page},
			connect: webRun(`"web_connector_type":"single"`), max: robotsMaxBytes, log: "robots.txt is larger than the connector reads"},
		{name: "an answer of the wiki's API", routes: map[string]http.HandlerFunc{"/api.php": endless("application/json", `{"query":{"userinfo":{"name":"`, 'a')},
			connect: wikiRunAt("/api.php"), err: "an answer of the wiki's API at {url}/api.php is larger than 16 MiB, the most the connector reads",
			max: wikiAnswerMaxBytes},
		{name: "the page the wiki's API is found from", routes: map[string]http.HandlerFunc{"/wiki": endless("text/html", "<html><head><title>x</title>", ' ')},
			connect: wikiRunAt("/wiki"), err: "{url}/wiki is not a page of a MediaWiki: it has no EditURI link to the API in its first 5 MiB",
			max: wikiPageMaxBytes},
		{name: "an answer of Jira's API", routes: map[string]http.HandlerFunc{"/rest/api/3/search/jql": endless("application/json", `{"issues":[{"id":"`, '1')},
			connect: jiraRunAt, err: "Jira at {url} (search issue ids): an answer of Jira's API is larger than 32 MiB, the most the connector reads",
			max: jiraAnswerMaxLen},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mux := http.NewServeMux()
			if tc.routes["/robots.txt"] == nil {
				mux.HandleFunc("/robots.txt", http.NotFound)
			}
			for p, h := range tc.routes {
				mux.HandleFunc(p, h)
			}
			srv := httptest.NewServer(mux)
			defer srv.Close()
			var read atomic.Int64
			var logs syncbuf.Buffer
			err := tc.connect(t, srv.URL, countingClient(&read), slog.New(slog.NewTextHandler(&logs, nil)))
			want := strings.ReplaceAll(tc.err, "{url}", srv.URL)
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || err.Error() != want) {
				t.Errorf("error %v, want %q", err, want)
			}
			if n := read.Load(); n > tc.max+slack {
				t.Errorf("read %d bytes from the server, more than the limit of %d and %d", n, tc.max, slack)
			}
			if !strings.Contains(logs.String(), tc.log) {
				t.Errorf("the log does not say %q:\n%s", tc.log, logs.String())
			}
		})
	}
}

// webRun runs a web connector of base_url url/ and more configuration.
func webRun(more string) func(t *testing.T, url string, hc *http.Client, log *slog.Logger) error {
	return func(t *testing.T, url string, hc *http.Client, log *slog.Logger) error {
		c, err := NewWeb(json.RawMessage(`{"base_url":"`+url+`/","request_delay_ms":0,`+more+`}`), nil, &Env{HTTP: hc, Now: time.Now, Log: log})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Step(context.Background(), Window{}, c.FirstCheckpoint(), &recorder{})
		return err
	}
}

// wikiRunAt runs a MediaWiki connector of hostname url+path.
func wikiRunAt(path string) func(t *testing.T, url string, hc *http.Client, log *slog.Logger) error {
	return func(t *testing.T, url string, hc *http.Client, log *slog.Logger) error {
		cfg, _ := json.Marshal(map[string]any{"hostname": url + path, "pages": []string{"A"}, "categories": []string{}, "recurse_depth": 0})
		c, err := NewMediaWiki(cfg, nil, &Env{HTTP: hc, Now: time.Now, Log: log})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Step(context.Background(), always, c.FirstCheckpoint(), &recorder{})
		return err
	}
}

// jiraRunAt runs a Jira connector of jira_base_url url.
func jiraRunAt(t *testing.T, url string, hc *http.Client, log *slog.Logger) error {
	cfg, _ := json.Marshal(map[string]any{"jira_base_url": url})
	c, err := NewJira(cfg, json.RawMessage(`{"jira_user_email":"a@example.com","jira_api_token":"t"}`), &Env{HTTP: hc, Now: time.Now, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Step(context.Background(), always, c.FirstCheckpoint(), &recorder{})
	return err
}

// Headers past the egress guard's limit fail the request, for the web and
// MediaWiki connectors alike, through the guard's client as workers use it.
func TestHostileHTTPHeaders(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Filler", strings.Repeat("a", 2*toolrun.MaxResponseHeaderBytes))
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<title>Home</title>")
	}))
	defer srv.Close()
	nets, hosts, err := toolrun.ParseAllow("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	hc := toolrun.NewRunner(toolrun.Policy{Allow: nets, AllowHosts: hosts}).Client()
	log := slog.New(slog.DiscardHandler)
	want := "server response headers exceeded 1048576 bytes; aborted"
	if err := webRun(`"web_connector_type":"single"`)(t, srv.URL, hc, log); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("the web connector: %v, want %q", err, want)
	}
	if err := wikiRunAt("/api.php")(t, srv.URL, hc, log); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("the MediaWiki connector: %v, want %q", err, want)
	}
}

// A page whose rendered text has no end is an error of that page naming
// the limit, and the run goes on; the connector reads no more than the
// limit and a little.
func TestHostileWikiParse(t *testing.T) {
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		page := `{"pageid":7,"ns":0,"title":"Big","fullurl":"` + srv.URL + `/index.php/Big","revisions":[{"revid":9,"timestamp":"2020-01-02T03:04:05Z"}]}`
		switch {
		case q.Get("action") == "parse":
			endless("application/json", `{"parse":{"title":"Big","text":"<p>`, 'a')(w, r)
		case q.Get("meta") == "userinfo":
			io.WriteString(w, `{"query":{"userinfo":{"id":0,"name":"127.0.0.1"}}}`)
		default:
			io.WriteString(w, `{"batchcomplete":true,"query":{"pages":[`+page+`]}}`)
		}
	}))
	defer srv.Close()
	var read atomic.Int64
	cfg, _ := json.Marshal(map[string]any{"hostname": srv.URL + "/api.php", "pages": []string{"Big"}, "categories": []string{}, "recurse_depth": 0})
	c, err := NewMediaWiki(cfg, nil, &Env{HTTP: countingClient(&read), Now: time.Now, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	if _, err := c.Step(context.Background(), always, c.FirstCheckpoint(), rec); err != nil {
		t.Fatal(err)
	}
	want := "its rendered text: an answer of the wiki's API at " + srv.URL + "/api.php is larger than 12 MiB, the most the connector reads"
	if len(rec.docs) != 0 || len(rec.failures) != 1 || rec.failures[0].FailureMessage != want ||
		rec.failures[0].FailedDocument.DocumentID != "MEDIAWIKI_7_"+srv.URL+"/index.php/Big" {
		t.Errorf("documents %d, failures %+v; want the page's failure %q", len(rec.docs), rec.failures, want)
	}
	if n := read.Load(); n > wikiParseMaxBytes+256<<10 {
		t.Errorf("read %d bytes, more than the limit of %d and 256 KiB", n, wikiParseMaxBytes)
	}
}
