package outbound_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/outbound/connector/webtest"
)

// pruningSite copies Onyx's pruning test site (its pages and the images
// they link to) to a temporary directory and serves it as Onyx's test
// does (Starlette's StaticFiles); pages are removed from the directory to
// remove them from the site.
func pruningSite(t *testing.T) (*webtest.Site, string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("connector/testdata/pruning")); err != nil {
		t.Fatalf("the pruning site: %v", err)
	}
	return webtest.NewStaticSite(t, dir), dir
}

// call sends a request as the admin and returns the status and body.
func (w *world) call(method, path string, body any) (int, string) {
	w.t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = strings.NewReader(string(b))
	}
	req, _ := http.NewRequest(method, w.srv.URL+"/api"+path, r)
	req.Header.Set("Authorization", "Bearer "+w.admin)
	req.Header.Set("Content-Type", "application/json")
	resp, err := w.srv.Client().Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// waitPruned waits until the pair's last_pruned (GET .../last_pruned) is
// not null, running the scheduler meanwhile, and returns it.
func (w *world) waitPruned(pairID int64) string {
	w.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		w.schedule()
		code, body := w.call("GET", fmt.Sprintf("/manage/admin/cc-pair/%d/last_pruned", pairID), nil)
		if code != 200 {
			w.t.Fatalf("last_pruned: %d %s", code, body)
		}
		if body != "null" {
			return body
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("pair %d was not pruned; log:\n%s", pairID, w.log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// pruneAttempt returns the pair's newest prune: its status and the
// documents it removed.
func (w *world) pruneAttempt(pairID int64) (status string, removed int64) {
	w.t.Helper()
	err := w.raw.QueryRow(`SELECT status, docs_removed_from_index FROM index_attempts WHERE cc_pair_id = $1 AND kind = 'prune'
		ORDER BY id DESC LIMIT 1`, pairID).Scan(&status, &removed)
	if err != nil {
		w.t.Fatal(err)
	}
	return status, removed
}

// docsIndexed returns the pair's docs_indexed as the status of indexing
// reports it.
func (w *world) docsIndexed(pairID int64) int64 {
	w.t.Helper()
	var statuses []struct {
		CCPairID    int64 `json:"cc_pair_id"`
		DocsIndexed int64 `json:"docs_indexed"`
	}
	var out []struct {
		Indexing json.RawMessage `json:"indexing_statuses"`
	}
	w.do("POST", "/manage/admin/connector/indexing-status", map[string]any{}, &out)
	for _, o := range out {
		var s []struct {
			CCPairID    int64 `json:"cc_pair_id"`
			DocsIndexed int64 `json:"docs_indexed"`
		}
		if err := json.Unmarshal(o.Indexing, &s); err != nil {
			w.t.Fatal(err)
		}
		statuses = append(statuses, s...)
	}
	for _, s := range statuses {
		if s.CCPairID == pairID {
			return s.DocsIndexed
		}
	}
	w.t.Fatalf("pair %d is not in the status of indexing", pairID)
	return 0
}

// Onyx's test_pruning.py, in Go: a recursive crawl of the pruning site,
// served as Onyx's test serves it, through a real worker gives Onyx's 14
// documents: the six pages (/ and /index.html have the same title and
// text, and are one) and the eight images portfolio.html links to. Then
// about.html and courses.html are removed from the site and a prune asked
// for through the API leaves Onyx's 12: / is there, /index.html, about and
// courses are not.
//
// Beyond Onyx's test: a second prune asked for while one waits is 409,
// last_pruned is set, the prune is not one of Onyx's index attempts, a
// document pushed through the ingestion API (which the site never had)
// outlives a prune that deletes pricing.html's, and deleting the pair
// deletes its documents.
func TestWebPruning(t *testing.T) {
	w := newWorld(t)
	w.registeredWorker()
	s, dir := pruningSite(t)
	pair := w.webPair(map[string]any{"base_url": s.URL + "/", "web_connector_type": "recursive", "request_delay_ms": 0})
	if code, body := w.call("GET", fmt.Sprintf("/manage/admin/cc-pair/%d/last_pruned", pair), nil); code != 200 || body != "null" {
		t.Fatalf("last_pruned before any prune: %d %s, want 200 null", code, body)
	}
	w.schedule()
	a := w.waitAttempt(pair, 1, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed)
	if a.Status != quarry.IndexSuccess {
		t.Fatalf("crawl %s with %d errors (error %v), want success; log:\n%s", a.Status, a.ErrorCount, a.ErrorMsg, w.log.String())
	}
	// used to be 15, but now localhost:8889/ and localhost:8889/index.html
	// are deduped (Onyx's comment)
	if n := w.docsIndexed(pair); n != 14 {
		t.Fatalf("docs_indexed %d after the crawl, want 14; documents %q", n, w.documentNames(pair, s.URL))
	}
	const page = " Above Multi-purpose Free Bootstrap Responsive Template" // Every page's title.
	want := []string{"/" + page, "/about.html" + page, "/contact.html" + page, "/courses.html" + page,
		"/img/works/1.jpg 1.jpg (825×550)", "/img/works/2.jpg 2.jpg (828×550)", "/img/works/3.jpg 3.jpg (825×550)",
		"/img/works/4.jpg 4.jpg (826×550)", "/img/works/5.jpg 5.jpg (830×550)", "/img/works/6.jpg 6.jpg (830×550)",
		"/img/works/7.jpg 7.jpg (830×550)", "/img/works/8.jpg 8.jpg (824×550)", "/portfolio.html" + page, "/pricing.html" + page}
	if got := w.documentNames(pair, s.URL); !slices.Equal(got, want) {
		t.Fatalf("documents after the crawl\n%q, want\n%q", got, want)
	}
	if n := s.Requests("/index.html"); n != 1 {
		t.Errorf("/index.html was fetched %d times, want once (a page of its own, as Starlette serves it)", n)
	}

	for _, f := range []string{"about.html", "courses.html"} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	code, body := w.call("POST", fmt.Sprintf("/manage/admin/cc-pair/%d/prune", pair), nil)
	if want := `{"success":true,"message":"Successfully created the pruning task.","data":null}`; code != 200 || body != want {
		t.Fatalf("prune: %d %s, want 200 %s", code, body, want)
	}
	code, body = w.call("POST", fmt.Sprintf("/manage/admin/cc-pair/%d/prune", pair), nil)
	if want := `{"detail":"Pruning task already in progress."}`; code != 409 || body != want {
		t.Fatalf("a second prune: %d %s, want 409 %s", code, body, want)
	}
	last := w.waitPruned(pair)
	if _, err := time.Parse(`"2006-01-02T15:04:05.999999Z07:00"`, last); err != nil {
		t.Errorf("last_pruned %s is not a time: %v", last, err)
	}
	if st, removed := w.pruneAttempt(pair); st != "success" || removed != 2 {
		t.Errorf("the prune ended %s removing %d documents, want success removing 2", st, removed)
	}
	if n := w.docsIndexed(pair); n != 12 {
		t.Errorf("docs_indexed %d after the prune, want 12", n)
	}
	ids := w.documents(pair)
	for id, held := range map[string]bool{"/": true, "/index.html": false, "/about.html": false, "/courses.html": false} {
		if slices.Contains(ids, s.URL+id) != held {
			t.Errorf("document %s held %v after the prune, want %v", id, !held, held)
		}
	}
	// A page's document, by its URL as the console asks for it
	// (percent-encoded), with its text.
	code, body = w.call("GET", fmt.Sprintf("/manage/admin/cc-pair/%d/documents/%s", pair, url.PathEscape(s.URL+"/contact.html")), nil)
	if held := strings.Contains(body, `"document_id":"`+s.URL+`/contact.html"`); code != 200 || !held || !strings.Contains(body, `"text":"`) {
		t.Errorf("the contact page's document: %d %s", code, body)
	}
	code, body = w.call("GET", fmt.Sprintf("/manage/admin/cc-pair/%d/documents/%s", pair, url.PathEscape(s.URL+"/about.html")), nil)
	if code != 404 {
		t.Errorf("the pruned about page's document: %d %s, want 404", code, body)
	}
	if as := w.attempts(pair); len(as) != 1 {
		t.Errorf("%d index attempts listed after the prune, want the crawl's only", len(as))
	}

	var pushed struct {
		DocumentID string `json:"document_id"`
	}
	w.do("POST", "/onyx-api/ingestion", map[string]any{"cc_pair_id": pair, "document": map[string]any{
		"id": "pushed-1", "semantic_identifier": "Pushed", "sections": []map[string]any{{"text": "pushed text", "link": nil}},
		"source": "web", "metadata": map[string]any{}}}, &pushed)
	if err := os.Remove(filepath.Join(dir, "pricing.html")); err != nil {
		t.Fatal(err)
	}
	w.do("POST", fmt.Sprintf("/manage/admin/cc-pair/%d/prune", pair), nil, nil)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		w.schedule()
		if st, removed := w.pruneAttempt(pair); st == "success" && removed == 1 {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("the second prune: %s removing %d, want success removing 1", st, removed)
		}
	}
	ids = w.documents(pair)
	if !slices.Contains(ids, "pushed-1") || slices.Contains(ids, s.URL+"/pricing.html") || len(ids) != 12 {
		t.Errorf("documents after the second prune %q, want pushed-1 kept and pricing.html gone", ids)
	}

	var credentialID int64
	var connectorID int64
	if err := w.raw.QueryRow(`SELECT connector_id, credential_id FROM cc_pairs WHERE id = $1`, pair).Scan(&connectorID, &credentialID); err != nil {
		t.Fatal(err)
	}
	w.do("POST", "/manage/admin/deletion-attempt", map[string]any{"connector_id": connectorID, "credential_id": credentialID}, nil)
	if got := w.documents(pair); len(got) != 0 {
		t.Errorf("documents %q left after the pair was deleted", got)
	}
}

// A connector's prune_freq is honoured by the scheduler: a pair indexed
// successfully is pruned prune_freq seconds after its connector was made,
// then prune_freq after its last prune ended, and not before.
func TestWebPruneFreq(t *testing.T) {
	w := newWorld(t)
	w.registeredWorker()
	s, dir := pruningSite(t)
	var clock time.Duration
	w.db.Now = func() time.Time { return time.Now().Add(clock) }
	pair := w.webPair(map[string]any{"base_url": s.URL + "/", "request_delay_ms": 0})
	var connectorID int64
	if err := w.raw.QueryRow(`SELECT connector_id FROM cc_pairs WHERE id = $1`, pair).Scan(&connectorID); err != nil {
		t.Fatal(err)
	}
	var conn map[string]any
	w.do("GET", fmt.Sprintf("/manage/connector/%d", connectorID), nil, &conn)
	w.do("PATCH", fmt.Sprintf("/manage/admin/connector/%d", connectorID), map[string]any{"name": conn["name"], "source": "web",
		"input_type": "load_state", "connector_specific_config": conn["connector_specific_config"], "refresh_freq": nil,
		"prune_freq": 3600, "indexing_start": nil, "access_type": "public", "groups": []int64{}}, nil)
	w.schedule()
	if a := w.waitAttempt(pair, 1, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed); a.Status != quarry.IndexSuccess {
		t.Fatalf("crawl %s (error %v)", a.Status, a.ErrorMsg)
	}
	if err := os.Remove(filepath.Join(dir, "pricing.html")); err != nil {
		t.Fatal(err)
	}
	if res := w.schedule(); res.Prunes != 0 {
		t.Fatalf("%d prunes made before prune_freq passed", res.Prunes)
	}
	clock = time.Hour + time.Second
	if res := w.schedule(); res.Prunes != 1 {
		t.Fatalf("%d prunes made once prune_freq passed, want 1", res.Prunes)
	}
	w.waitPruned(pair)
	if got := w.documents(pair); slices.Contains(got, s.URL+"/pricing.html") || len(got) != 13 {
		t.Errorf("documents after the scheduled prune %q, want 13 without pricing.html", got)
	}
	clock += 30 * time.Minute
	if res := w.schedule(); res.Prunes != 0 {
		t.Errorf("%d prunes made half a prune_freq after the last, want 0", res.Prunes)
	}
	clock += 31 * time.Minute
	if res := w.schedule(); res.Prunes != 1 {
		t.Errorf("%d prunes made a prune_freq after the last, want 1", res.Prunes)
	}
}
