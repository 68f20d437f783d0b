package outbound_test

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/outbound/connector/mediawikitest"
)

// wikiPair makes a mediawiki connector of config, an empty credential
// (the connector needs none) and their pair, as the admin, and returns
// the ids of the connector, the credential and the pair.
func (w *world) wikiPair(config map[string]any) (connectorID, credentialID, pairID int64) {
	w.t.Helper()
	var id struct {
		ID   int64 `json:"id"`
		Data int64 `json:"data"`
	}
	name := fmt.Sprintf("wiki %s %d", w.t.Name(), time.Now().UnixNano()) // Names are unique.
	w.do("POST", "/manage/admin/connector", map[string]any{"name": name, "source": "mediawiki",
		"input_type": "poll", "connector_specific_config": config}, &id)
	connectorID = id.ID + id.Data
	id.ID, id.Data = 0, 0
	w.do("POST", "/manage/credential", map[string]any{"credential_json": map[string]string{},
		"admin_public": true, "source": "mediawiki"}, &id)
	credentialID = id.ID + id.Data
	id.ID, id.Data = 0, 0
	w.do("PUT", fmt.Sprintf("/manage/connector/%d/credential/%d", connectorID, credentialID),
		map[string]any{"name": "pair " + name, "access_type": "public", "groups": []int64{}}, &id)
	return connectorID, credentialID, id.ID + id.Data
}

// A run of the MediaWiki connector over a real wiki, by a worker whose
// connectors reach 127.0.0.1 through the egress guard: the listed page
// and the members of the category and its subcategories, once each, by
// their titles; the listed page the wiki does not have is the attempt's
// one error. The next attempt, which polls from shortly before the
// first ended, writes the one page edited since.
func TestMediaWikiConnectorRun(t *testing.T) {
	wiki := mediawikitest.NewFixture(t)
	w := newWorld(t)
	w.registeredWorker()
	connectorID, credentialID, pair := w.wikiPair(map[string]any{"hostname": wiki.URL, "pages": []string{"Loose", "Nowhere"},
		"categories": []string{"Food"}, "recurse_depth": -1})
	w.schedule()
	a := w.waitAttempt(pair, 1, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed)
	if a.Status != quarry.IndexCompletedWithErrors || a.NewDocsIndexed != 6 {
		t.Errorf("attempt %s with %d new documents (error %v), want completed_with_errors with 6", a.Status, a.NewDocsIndexed, a.ErrorMsg)
	}
	var got []string
	for _, d := range w.documentNames(pair, "") {
		got = append(got, regexp.MustCompile(`^MEDIAWIKI_[0-9]+_`).ReplaceAllString(d, ""))
	}
	slices.Sort(got)
	u := wiki.URL + "/index.php/"
	want := []string{u + "Alpha Alpha", u + "Banana Banana", u + "Bread Bread", u + "Cherry Cherry", u + "File:Map.png File:Map.png", u + "Loose Loose"}
	if !slices.Equal(got, want) {
		t.Errorf("documents %q, want %q", got, want)
	}
	es := w.errors(pair)
	if len(es) != 1 || es[0].DocumentID == nil || *es[0].DocumentID != "MEDIAWIKI_Nowhere" ||
		es[0].FailureMessage != `the wiki has no page "Nowhere"` {
		t.Errorf("errors %+v, want the missing page's", es)
	}

	wiki.Import(t, mediawikitest.Revision{Title: "Bread", Time: time.Now().UTC(), Text: "Bread is baked daily.\n[[Category:Food]]"})
	w.do("POST", "/manage/admin/connector/run-once", map[string]any{"connector_id": connectorID,
		"credential_ids": []int64{credentialID}, "from_beginning": false}, nil)
	w.schedule()
	a = w.waitAttempt(pair, 2, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed)
	if a.TotalDocsIndexed != 1 || a.NewDocsIndexed != 0 {
		t.Errorf("second attempt %s with %d documents written, %d new (error %v), want 1 and 0", a.Status, a.TotalDocsIndexed, a.NewDocsIndexed, a.ErrorMsg)
	}
	var id string
	if err := w.raw.QueryRow(`SELECT id FROM documents WHERE cc_pair_id = $1 AND semantic_identifier = 'Bread'`, pair).Scan(&id); err != nil {
		t.Fatal(err)
	}
	_, text := w.document(pair, id)
	if !strings.Contains(text, "Bread is baked daily.") {
		t.Errorf("Bread's body %s, not its edited text", text)
	}
}

// A page with markup (bold, a link with a label, a template, a table) is
// indexed as the wiki renders it: a search finds it by words the
// template and the link give, and its snippet shows words, not wikitext.
func TestMediaWikiSearchSnippet(t *testing.T) {
	wiki := mediawikitest.New(t)
	wiki.Import(t, mediawikitest.Revision{Title: "Template:Greeting", Time: mediawikitest.Old, Text: "Welcome from the '''{{{1|nobody}}}'''"},
		mediawikitest.Revision{Title: "Granite", Time: mediawikitest.Old, Text: "The '''granite''' pit is in [[Cornwall|the far west]]. {{Greeting|quarrymen}}\n" +
			"== Output ==\n{| class=\"wikitable\"\n! Stone !! Tons\n|-\n| Granite || 12\n|}\n"})
	w := newWorld(t)
	w.registeredWorker()
	_, _, pair := w.wikiPair(map[string]any{"hostname": wiki.URL, "pages": []string{"Granite"}, "categories": []string{}, "recurse_depth": 0})
	w.schedule()
	if a := w.waitAttempt(pair, 1, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed); a.Status != quarry.IndexSuccess {
		t.Fatalf("attempt %s (error %v), want success", a.Status, a.ErrorMsg)
	}
	var out struct {
		SearchDocs []struct {
			SemanticIdentifier string   `json:"semantic_identifier"`
			Blurb              string   `json:"blurb"`
			MatchHighlights    []string `json:"match_highlights"`
		} `json:"search_docs"`
	}
	w.do("POST", "/search/send-search-message", map[string]any{"search_query": "granite west quarrymen"}, &out)
	if len(out.SearchDocs) == 0 || out.SearchDocs[0].SemanticIdentifier != "Granite" {
		t.Fatalf("search found %+v, want Granite", out.SearchDocs)
	}
	d := out.SearchDocs[0]
	snippet := d.Blurb + " " + strings.Join(d.MatchHighlights, " ")
	if want := "The granite pit is in the far west. Welcome from the quarrymen"; !strings.Contains(d.Blurb, want) {
		t.Errorf("blurb %q, want it to hold %q", d.Blurb, want)
	}
	for _, markup := range []string{"'''", "[[", "]]", "{{", "{|", "||"} {
		if strings.Contains(snippet, markup) {
			t.Errorf("the snippet shows wikitext %q: %s", markup, snippet)
		}
	}
}

// A wiki whose API is not there fails the attempt with the reason.
func TestMediaWikiConnectorRefused(t *testing.T) {
	wiki := mediawikitest.New(t)
	w := newWorld(t)
	w.registeredWorker()
	_, _, pair := w.wikiPair(map[string]any{"hostname": wiki.URL + "/w/api.php", "pages": []string{"Main Page"}, "categories": []string{}, "recurse_depth": 0})
	w.schedule()
	a := w.waitAttempt(pair, 1, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed)
	if want := "the wiki's API at " + wiki.URL + "/w/api.php answered 404 Not Found"; a.Status != quarry.IndexFailed || a.ErrorMsg == nil || *a.ErrorMsg != want {
		t.Errorf("attempt %s with error %v, want failed: %s", a.Status, a.ErrorMsg, want)
	}
}

// BenchmarkMediaWikiConnectorIndexing indexes a category of 200 pages of
// about 2 KB of wikitext (three headings each) from a MediaWiki on the
// same machine (PHP's built-in server, SQLite), from the scheduler's pass
// to the attempt's end, through the worker of quarry serve into the
// store: pages/s is the MediaWiki connector's indexing speed.
func BenchmarkMediaWikiConnectorIndexing(b *testing.B) {
	const pages = 200
	wiki := mediawikitest.New(b)
	para := strings.Repeat("Some words of a paragraph of the page. ", 12)
	var revs []mediawikitest.Revision
	for i := range pages {
		text := fmt.Sprintf("Page %d.\n== One ==\n%s\n== Two ==\n%s\n== Three ==\n%s\n[[Category:Bench]]", i, para, para, para)
		revs = append(revs, mediawikitest.Revision{Title: fmt.Sprintf("Page %d", i), Time: mediawikitest.Old, Text: text})
	}
	wiki.Import(b, revs...)
	w := newWorld(b)
	w.inProcessWorker()
	b.ResetTimer()
	for b.Loop() {
		_, _, pair := w.wikiPair(map[string]any{"hostname": wiki.URL, "categories": []string{"Bench"}, "pages": []string{}, "recurse_depth": 0})
		w.schedule()
		a := w.waitAttempt(pair, 1, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed)
		if a.Status != quarry.IndexSuccess || a.NewDocsIndexed != pages {
			b.Fatalf("attempt %s with %d new documents (error %v), want success with %d", a.Status, a.NewDocsIndexed, a.ErrorMsg, pages)
		}
	}
	b.ReportMetric(float64(b.N*pages)/b.Elapsed().Seconds(), "pages/s")
}
