package outbound_test

import (
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/outbound/connector/webtest"
)

// webPair makes a web connector of config, an empty credential (the web
// connector needs none) and their pair, as the admin, and returns the
// pair's id.
func (w *world) webPair(config map[string]any) int64 {
	w.t.Helper()
	var id struct {
		ID   int64 `json:"id"`
		Data int64 `json:"data"`
	}
	name := fmt.Sprintf("web %s %d", w.t.Name(), time.Now().UnixNano()) // Names are unique.
	w.do("POST", "/manage/admin/connector", map[string]any{"name": name, "source": "web",
		"input_type": "load_state", "connector_specific_config": config}, &id)
	connectorID := id.ID + id.Data
	id.ID, id.Data = 0, 0
	w.do("POST", "/manage/credential", map[string]any{"credential_json": map[string]string{},
		"admin_public": true, "source": "web"}, &id)
	credentialID := id.ID + id.Data
	id.ID, id.Data = 0, 0
	w.do("PUT", fmt.Sprintf("/manage/connector/%d/credential/%d", connectorID, credentialID),
		map[string]any{"name": "pair " + name, "access_type": "public", "groups": []int64{}}, &id)
	return id.ID + id.Data
}

// documentNames returns the id and semantic identifier of each document
// the pair holds, with prefix taken off the ids.
func (w *world) documentNames(pairID int64, prefix string) []string {
	w.t.Helper()
	rows, err := w.raw.Query(`SELECT id, semantic_identifier FROM documents WHERE cc_pair_id = $1 ORDER BY id`, pairID)
	if err != nil {
		w.t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var id, name string
		if err := rows.Scan(&id, &name); err != nil {
			w.t.Fatal(err)
		}
		got = append(got, strings.TrimPrefix(id, prefix)+" "+name)
	}
	return got
}

// A recursive crawl of a site served from disk, by a worker whose
// connectors reach 127.0.0.1 through the egress guard: the pages under
// the base path, by their canonical URLs, once each; the missing page is
// the attempt's one error; robots.txt's page, the page outside the base
// path, the text file and the redirect off the site are not documents.
func TestWebConnectorCrawl(t *testing.T) {
	w := newWorld(t)
	w.registeredWorker()
	s := webtest.NewSite(t, "connector/testdata/site")
	pair := w.webPair(map[string]any{"base_url": s.URL + "/docs/", "web_connector_type": "recursive", "request_delay_ms": 0})
	w.schedule()
	a := w.waitAttempt(pair, 1, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed)
	if a.Status != quarry.IndexCompletedWithErrors || a.NewDocsIndexed != 4 {
		t.Errorf("attempt %s with %d new documents (error %v), want completed_with_errors with 4", a.Status, a.NewDocsIndexed, a.ErrorMsg)
	}
	want := []string{"/docs Docs home", "/docs/guide.html The guide", "/docs/printable Printable", "/docs/sub/deep.html Deep page"}
	if got := w.documentNames(pair, s.URL); !slices.Equal(got, want) {
		t.Errorf("documents %q, want %q", got, want)
	}
	es := w.errors(pair)
	if len(es) != 1 || es[0].DocumentID == nil || *es[0].DocumentID != s.URL+"/docs/missing.html" ||
		es[0].FailureMessage != "the server answered 404 Not Found" {
		t.Errorf("errors %+v, want the missing page's 404", es)
	}
	for path, want := range map[string]int{"/robots.txt": 1, "/docs/secret.html": 0, "/about.html": 0, "/docs/guide.html": 1, "/docs/missing.html": 1} {
		if got := s.Requests(path); got != want {
			t.Errorf("%s asked for %d times, want %d", path, got, want)
		}
	}
}

// A base URL that the site refuses fails the attempt with the reason.
func TestWebConnectorBaseRefused(t *testing.T) {
	w := newWorld(t)
	w.registeredWorker()
	s := webtest.NewSite(t, "connector/testdata/site")
	pair := w.webPair(map[string]any{"base_url": s.URL + "/nothing/", "request_delay_ms": 0})
	w.schedule()
	a := w.waitAttempt(pair, 1, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed)
	if want := "the base URL " + s.URL + "/nothing/: the server answered 404 Not Found"; a.Status != quarry.IndexFailed || a.ErrorMsg == nil || *a.ErrorMsg != want {
		t.Errorf("attempt %s with error %v, want failed: %s", a.Status, a.ErrorMsg, want)
	}
}

// BenchmarkWebConnectorIndexing indexes a local site of 200 pages of
// about 2 KB (each linking to the next ten) with no pause between
// requests, from the scheduler's pass to the attempt's end, through the
// worker of quarry serve into the store: pages/s is the web connector's
// indexing speed, the site and the store on the same machine.
func BenchmarkWebConnectorIndexing(b *testing.B) {
	const pages = 200
	srv := httptest.NewServer(webtest.Pages(pages))
	defer srv.Close()
	w := newWorld(b)
	w.inProcessWorker()
	b.ResetTimer()
	for b.Loop() {
		pair := w.webPair(map[string]any{"base_url": srv.URL + "/", "request_delay_ms": 0})
		w.schedule()
		a := w.waitAttempt(pair, 1, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed)
		if a.Status != quarry.IndexSuccess || a.NewDocsIndexed != pages {
			b.Fatalf("attempt %s with %d new documents (error %v), want success with %d", a.Status, a.NewDocsIndexed, a.ErrorMsg, pages)
		}
	}
	b.ReportMetric(float64(b.N*pages)/b.Elapsed().Seconds(), "pages/s")
}
