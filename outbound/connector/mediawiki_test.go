package connector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/outbound/connector/mediawikitest"
)

// A page's rendered HTML is read as the web connector reads a page, a
// section per heading (MediaWiki 1.39's headings and 1.43's), the wiki's
// chrome dropped; the sections' anchors are MediaWiki's.
func TestWikiHTMLSections(t *testing.T) {
	type sec = wikiSection
	for _, tc := range []struct {
		name, in string
		lead     string
		sections []sec
	}{
		{"empty", "", "", nil},
		{"lead only", `<div class="mw-parser-output"><p>Just <b>text</b>.</p><p>More.</p></div>`, "Just text.\nMore.", nil},
		{"1.39 headings", `<div class="mw-parser-output"><p>Lead</p>
<div id="toc" class="toc"><div class="toctitle"><h2 id="mw-toc-heading">Contents</h2></div><ul><li><a href="#A_b">1 A b</a></li></ul></div>
<h2><span id="A_.26_b"></span><span class="mw-headline" id="A_&amp;_b">A &amp; b</span><span class="mw-editsection"><span class="mw-editsection-bracket">[</span><a href="/e">edit</a>]</span></h2>
<p>one<sup id="cite_ref-1" class="reference"><a href="#cite_note-1">[1]</a></sup> two</p>
<h3><span class="mw-headline" id="Deeper">Deeper</span></h3><table><tr><th>Stone</th><th>Tons</th></tr><tr><td>Granite</td><td>12</td></tr></table></div>`,
			"Lead", []sec{{"A_&_b", "A & b\none two"}, {"Deeper", "Deeper\nStone\nTons\nGranite\n12"}}},
		{"1.43 headings", `<div class="mw-parser-output"><div class="mw-heading mw-heading2"><h2 id="First_part">First part</h2><span class="mw-editsection">[<a href="/e">edit</a>]</span></div><p>x</p></div>`,
			"", []sec{{"First_part", "First part\nx"}}},
		{"a heading without an anchor", `<h2>No  anchor</h2><p>y</p>`, "", []sec{{"No_anchor", "No anchor\ny"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lead, sections, err := wikiHTMLSections(strings.NewReader(tc.in))
			if err != nil || lead != tc.lead || !slices.Equal(sections, tc.sections) {
				t.Errorf("wikiHTMLSections = %q, %q, %v; want %q, %q", lead, sections, err, tc.lead, tc.sections)
			}
		})
	}
}

func TestWikiTitleKey(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"Category:foo_bar", "Category:Foo bar", true},
		{"Category: Foo  bar ", "Category:Foo_bar", true},
		{"Category:élan", "Category:Élan", true},
		{"Category:Foo Bar", "Category:Foo bar", false},
		{"Category:Foo", "Foo", false},
	} {
		if same := wikiTitleKey(tc.a) == wikiTitleKey(tc.b); same != tc.same {
			t.Errorf("%q and %q the same: %v, want %v", tc.a, tc.b, same, tc.same)
		}
	}
}

// An answer cut short before its first page has [] for its query.
func TestWikiAnswerEmptyQuery(t *testing.T) {
	var a wikiAnswer
	err := json.Unmarshal([]byte(`{"continue":{"rvcontinue":"1|1","continue":"||"},"query":[]}`), &a)
	if err != nil || len(a.Query.Pages) != 0 || a.Continue["rvcontinue"] != "1|1" {
		t.Errorf("%+v, %v", a, err)
	}
	if err := json.Unmarshal([]byte(`{"query":{"pages":[{"pageid":3,"title":"A"}]}}`), &a); err != nil || len(a.Query.Pages) != 1 || a.Query.Pages[0].Title != "A" {
		t.Errorf("%+v, %v", a, err)
	}
}

func TestMediaWikiConfig(t *testing.T) {
	env := &Env{HTTP: http.DefaultClient}
	for _, tc := range []struct {
		source quarry.DocumentSource
		config string
		start  string // The URL the API is looked for from.
		err    string
	}{
		{MediaWikiSource, `{"hostname":"wiki.example.com","pages":["A"," ",""],"categories":["B","Category:C"],"recurse_depth":0}`, "https://wiki.example.com", ""},
		{MediaWikiSource, `{"hostname":"http://wiki.example.com/w/api.php","pages":[],"categories":[],"recurse_depth":-1,"batch_size":10,"language_code":"de"}`, "http://wiki.example.com/w/api.php", ""},
		{WikipediaSource, `{"pages":["Go"],"categories":[],"recurse_depth":1,"language_code":"fr"}`, "https://fr.wikipedia.org/w/api.php", ""},
		{WikipediaSource, `{"pages":["Go"],"categories":[],"recurse_depth":1}`, "https://en.wikipedia.org/w/api.php", ""},
		{MediaWikiSource, `{"hostname":"wiki.example.com","pages":[],"categories":[]}`, "", "recurse_depth is missing"},
		{MediaWikiSource, `{"hostname":"wiki.example.com","pages":[],"categories":[],"recurse_depth":-2}`, "", "recurse_depth must be an integer greater than or equal to -1, not -2"},
		{MediaWikiSource, `{"hostname":"wiki.example.com","recurse_depth":"1"}`, "", "not an object"},
		{MediaWikiSource, `{"hostname":"","recurse_depth":1}`, "", `hostname "" is not a host name`},
		{MediaWikiSource, `{"hostname":"ftp://x","recurse_depth":1}`, "", `hostname "ftp://x" is not a host name`},
		{WikipediaSource, `{"recurse_depth":1,"language_code":"en.evil.com/x?"}`, "", "is not a language code"},
		{MediaWikiSource, `[]`, "", "not an object"},
	} {
		c, err := newMediaWiki(tc.source, json.RawMessage(tc.config), env)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.config, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.config, err)
			continue
		}
		m := c.(*oneStep).inner.(*MediaWiki)
		if m.start.String() != tc.start {
			t.Errorf("%s: the API is looked for from %s, want %s", tc.config, m.start, tc.start)
		}
	}
	c, _ := newMediaWiki(MediaWikiSource, json.RawMessage(`{"hostname":"w","pages":["A"," "],"categories":["B","Category:C"],"recurse_depth":0}`), env)
	m := c.(*oneStep).inner.(*MediaWiki)
	if !slices.Equal(m.cfg.Pages, []string{"A"}) || !slices.Equal(m.cfg.Categories, []string{"Category:B", "Category:C"}) {
		t.Errorf("pages %q and categories %q", m.cfg.Pages, m.cfg.Categories)
	}
	if _, err := newMediaWiki(MediaWikiSource, json.RawMessage(`{"hostname":"w","recurse_depth":0}`), &Env{}); err == nil {
		t.Error("no error without an HTTP client")
	}
}

// wikiRun runs the MediaWiki connector of cfg (hostname set to the
// wiki's URL unless cfg has one) over w to the end.
func wikiRun(t *testing.T, wiki *mediawikitest.Wiki, cfg map[string]any, w Window) (*recorder, error) {
	t.Helper()
	if _, ok := cfg["hostname"]; !ok {
		cfg["hostname"] = wiki.URL
	}
	b, _ := json.Marshal(cfg)
	c, err := NewMediaWiki(b, nil, &Env{HTTP: http.DefaultClient, Now: time.Now, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	_, err = c.Step(context.Background(), w, c.FirstCheckpoint(), rec)
	return rec, err
}

// wikiTitles returns the semantic identifiers of the documents, and the
// ids and messages of the failures.
func wikiTitles(r *recorder) (docs, failures []string) {
	for _, d := range r.docs {
		docs = append(docs, d.SemanticIdentifier)
	}
	for _, f := range r.failures {
		failures = append(failures, f.FailedDocument.DocumentID+" "+f.FailureMessage)
	}
	return docs, failures
}

// always is a window that holds every revision.
var always = Window{Start: time.Unix(0, 0), End: time.Now().Add(24 * time.Hour)}

// Listed pages (in the order of the API), then the members of the
// categories breadth first, each once, as deep as recurse_depth: the
// category cycle Fruit, Tropical ends.
func TestMediaWikiCategories(t *testing.T) {
	wiki := mediawikitest.NewFixture(t)
	for _, tc := range []struct {
		name string
		cfg  map[string]any
		docs []string
	}{
		{"depth 0", map[string]any{"categories": []string{"Food"}, "pages": []string{}, "recurse_depth": 0}, []string{"Bread", "File:Map.png"}},
		{"depth 1", map[string]any{"categories": []string{"Food"}, "pages": []string{}, "recurse_depth": 1}, []string{"Bread", "File:Map.png", "Alpha", "Cherry"}},
		{"one category twice", map[string]any{"categories": []string{"food", " Category:Food "}, "pages": []string{}, "recurse_depth": 0}, []string{"Bread", "File:Map.png"}},
		{"unbounded", map[string]any{"categories": []string{"Category:Food"}, "pages": []string{}, "recurse_depth": -1}, []string{"Bread", "File:Map.png", "Alpha", "Cherry", "Banana"}},
		{"pages and categories overlapping", map[string]any{"categories": []string{"Tropical", "Fruit"}, "pages": []string{"Loose", "Banana"}, "recurse_depth": 0},
			[]string{"Banana", "Loose", "Alpha", "Cherry"}},
		{"the API's URL", map[string]any{"hostname": wiki.URL + "/api.php", "categories": []string{}, "pages": []string{"Loose"}, "recurse_depth": 0}, []string{"Loose"}},
		{"a page of the wiki", map[string]any{"hostname": wiki.URL + "/index.php/Bread", "categories": []string{}, "pages": []string{"Loose"}, "recurse_depth": 0}, []string{"Loose"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec, err := wikiRun(t, wiki, maps.Clone(tc.cfg), always)
			if err != nil {
				t.Fatal(err)
			}
			if docs, failures := wikiTitles(rec); !slices.Equal(docs, tc.docs) || len(failures) > 0 {
				t.Errorf("documents %q, failures %q; want %q", docs, failures, tc.docs)
			}
		})
	}
	// Answers cut short by the API's size limit: the queries continue,
	// and the documents are the same.
	rec, err := wikiRun(t, wiki, map[string]any{"categories": []string{"Food"}, "pages": []string{"Loose"}, "recurse_depth": -1}, always)
	if err != nil {
		t.Fatal(err)
	}
	wiki.Configure(t, "$wgAPIMaxResultSize = 300;")
	cut, err := wikiRun(t, wiki, map[string]any{"categories": []string{"Food"}, "pages": []string{"Loose"}, "recurse_depth": -1}, always)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(rec.docs)
	b, _ := json.Marshal(cut.docs)
	if len(rec.docs) != 6 || string(a) != string(b) {
		t.Errorf("with answers cut short\n%s\nwant\n%s", b, a)
	}
}

// A page's document: Onyx's id, title, sections (one per heading, the
// lead last), categories and the time of its latest revision; its text is
// the page rendered (the heading in a comment is not one, the category
// link is not text).
func TestMediaWikiDocument(t *testing.T) {
	wiki := mediawikitest.NewFixture(t)
	rec, err := wikiRun(t, wiki, map[string]any{"pages": []string{"Alpha"}, "categories": []string{}, "recurse_depth": 0}, always)
	if err != nil || len(rec.docs) != 1 {
		t.Fatalf("%v, %d documents", err, len(rec.docs))
	}
	d := rec.docs[0]
	if !regexp.MustCompile(`^MEDIAWIKI_[0-9]+_` + regexp.QuoteMeta(wiki.URL+"/index.php/Alpha") + `$`).MatchString(d.ID) {
		t.Errorf("id %s", d.ID)
	}
	d.ID = "ID"
	b, _ := json.Marshal(d)
	u := wiki.URL + "/index.php/Alpha"
	want := `{"id":"ID","sections":[` +
		`{"text":"First part\nAlpha one.","link":"` + u + `#First_part"},` +
		`{"text":"Deeper part\nDeeper text.","link":"` + u + `#Deeper_part"},` +
		`{"text":"Lead of alpha.","link":"` + u + `"}],` +
		`"source":"mediawiki","semantic_identifier":"Alpha","title":"Alpha","metadata":{"categories":["Category:Fruit"]},"doc_updated_at":"2020-01-02T03:04:05Z"}`
	if string(b) != want {
		t.Errorf("document\n%s\nwant\n%s", b, want)
	}
}

// A page with markup (bold, links, a template, a table, a heading with
// an ampersand) is read as the wiki renders it: words, no wikitext; each
// section links to its heading's anchor as the wiki makes it.
func TestMediaWikiRenderedText(t *testing.T) {
	wiki := mediawikitest.New(t)
	wiki.Import(t, mediawikitest.Revision{Title: "Template:Greeting", Time: mediawikitest.Old, Text: "Welcome from the '''{{{1|nobody}}}'''"},
		mediawikitest.Revision{Title: "Granite", Time: mediawikitest.Old, Text: "The '''granite''' pit is in [[Cornwall|the far west]]. {{Greeting|quarrymen}}\n" +
			"== Output & sales ==\n{| class=\"wikitable\"\n! Stone !! Tons\n|-\n| Granite || 12\n|}\n''Figures'' of [[2025]].\n[[Category:Stone]]"})
	rec, err := wikiRun(t, wiki, map[string]any{"pages": []string{"Granite"}, "categories": []string{}, "recurse_depth": 0}, always)
	if err != nil || len(rec.docs) != 1 || len(rec.failures) != 0 {
		t.Fatalf("%v, %d documents, failures %+v", err, len(rec.docs), rec.failures)
	}
	u := wiki.URL + "/index.php/Granite"
	b, _ := json.Marshal(rec.docs[0].Sections)
	want := `[{"text":"Output \u0026 sales\nStone\nTons\nGranite\n12\nFigures of 2025.","link":"` + u + `#Output_\u0026_sales"},` +
		`{"text":"The granite pit is in the far west. Welcome from the quarrymen","link":"` + u + `"}]`
	if string(b) != want {
		t.Errorf("sections\n%s\nwant\n%s", b, want)
	}
}

// A poll reads only the pages whose latest revision is within its window;
// a listed page the wiki does not have is a failure of that page.
func TestMediaWikiPollWindow(t *testing.T) {
	wiki := mediawikitest.NewFixture(t)
	cfg := map[string]any{"pages": []string{"Loose", "Nowhere"}, "categories": []string{"Food"}, "recurse_depth": -1}
	w := Window{Start: mediawikitest.Edited.Add(-time.Hour), End: mediawikitest.Edited.Add(time.Hour)}
	rec, err := wikiRun(t, wiki, cfg, w)
	if err != nil {
		t.Fatal(err)
	}
	docs, failures := wikiTitles(rec)
	if want := []string{"MEDIAWIKI_Nowhere the wiki has no page \"Nowhere\""}; !slices.Equal(docs, []string{"Cherry"}) || !slices.Equal(failures, want) {
		t.Fatalf("documents %q, failures %q; want Cherry and %q", docs, failures, want)
	}
	if text := rec.docs[0].Sections[0].Text; text != "Cherries are dark red." {
		t.Errorf("Cherry's text %q, not its latest revision's", text)
	}
	// Both ends are in the window.
	for _, w := range []Window{{Start: mediawikitest.Edited, End: mediawikitest.Edited.Add(time.Hour)}, {Start: mediawikitest.Old.Add(time.Second), End: mediawikitest.Edited}} {
		if rec, err := wikiRun(t, wiki, cfg, w); err != nil || len(rec.docs) != 1 {
			t.Errorf("window %v: %v, %d documents, want Cherry", w, err, len(rec.docs))
		}
	}
	rec, err = wikiRun(t, wiki, cfg, Window{Start: mediawikitest.Edited.Add(time.Second), End: time.Now()})
	if docs, _ := wikiTitles(rec); err != nil || len(docs) != 0 {
		t.Errorf("a window after the edit: %q, %v; want nothing", docs, err)
	}
}

// ListIDs lists the pages of the run without their text; a page deleted
// from the wiki is no longer listed.
func TestMediaWikiListIDs(t *testing.T) {
	wiki := mediawikitest.NewFixture(t)
	b, _ := json.Marshal(map[string]any{"hostname": wiki.URL, "pages": []string{"Loose", "Nowhere"}, "categories": []string{"Tropical"}, "recurse_depth": 0})
	c, err := NewMediaWiki(b, nil, &Env{HTTP: http.DefaultClient})
	if err != nil {
		t.Fatal(err)
	}
	list := func() []string {
		t.Helper()
		var ids []string
		err := c.(*oneStep).inner.(Slim).ListIDs(context.Background(), func(_ context.Context, batch []string) error {
			for _, id := range batch {
				ids = append(ids, regexp.MustCompile(`^MEDIAWIKI_[0-9]+_`).ReplaceAllString(id, ""))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return ids
	}
	u := wiki.URL + "/index.php/"
	if got, want := list(), []string{u + "Loose", u + "Banana"}; !slices.Equal(got, want) {
		t.Errorf("ListIDs: %q, want %q", got, want)
	}
	wiki.Delete(t, "Banana")
	if got, want := list(), []string{u + "Loose"}; !slices.Equal(got, want) {
		t.Errorf("ListIDs after Banana's deletion: %q, want %q", got, want)
	}
}

// A wiki that is not there, not a MediaWiki, unreachable or private fails
// the run with the reason.
func TestMediaWikiRefused(t *testing.T) {
	wiki := mediawikitest.New(t)
	for _, tc := range []struct{ hostname, err string }{
		{wiki.URL + "/w/api.php", "the wiki's API at " + wiki.URL + "/w/api.php answered 404 Not Found"},
		{wiki.URL + "/nothing.html", "the wiki at " + wiki.URL + "/nothing.html answered 404 Not Found"},
		{wiki.URL + "/resources/assets/change-your-logo.svg", wiki.URL + "/resources/assets/change-your-logo.svg is not a page of a MediaWiki: it has no EditURI link to the API"},
	} {
		_, err := wikiRun(t, wiki, map[string]any{"hostname": tc.hostname, "pages": []string{"Main Page"}, "recurse_depth": 0}, always)
		if err == nil || err.Error() != tc.err {
			t.Errorf("%s: error %v, want %q", tc.hostname, err, tc.err)
		}
	}
	// A wiki that cannot be reached.
	_, err := wikiRun(t, wiki, map[string]any{"hostname": "http://127.0.0.1:1", "pages": []string{"Main Page"}, "recurse_depth": 0}, always)
	if want := "the wiki at http://127.0.0.1:1: dial tcp 127.0.0.1:1: connect: connection refused"; err == nil || err.Error() != want {
		t.Errorf("an unreachable wiki: error %v, want %q", err, want)
	}
	// A wiki that only the signed in may read refused the connector's
	// access: a *CredentialError (issue 39), which the worker does not
	// retry within the attempt and the scheduler backs off.
	wiki.Configure(t, `$wgGroupPermissions['*']['read'] = false;`)
	_, err = wikiRun(t, wiki, map[string]any{"pages": []string{"Main Page"}, "recurse_depth": 0}, always)
	var refused *CredentialError
	if want := "the wiki's API at " + wiki.URL + "/api.php answered readapidenied: "; !errors.As(err, &refused) || !strings.HasPrefix(refused.Reason, want) {
		t.Errorf("a private wiki: error %#v, want a CredentialError: %q…", err, want)
	}
}

// BenchmarkMediaWikiPoll reads a category of 200 pages of about 2 KB of
// wikitext (three headings each) from a MediaWiki on the same machine
// (PHP's built-in server, one request at a time, SQLite, no parser
// cache): pages/s is the connector and the wiki together, the queries,
// one parse a page, and the sections.
func BenchmarkMediaWikiPoll(b *testing.B) {
	const pages = 200
	wiki := mediawikitest.New(b)
	para := strings.Repeat("Some words of a paragraph of the page. ", 12)
	var revs []mediawikitest.Revision
	for i := range pages {
		text := fmt.Sprintf("Page %d.\n== One ==\n%s\n== Two ==\n%s\n== Three ==\n%s\n[[Category:Bench]]", i, para, para, para)
		revs = append(revs, mediawikitest.Revision{Title: fmt.Sprintf("Page %d", i), Time: mediawikitest.Old, Text: text})
	}
	wiki.Import(b, revs...)
	cfg, _ := json.Marshal(map[string]any{"hostname": wiki.URL, "categories": []string{"Bench"}, "pages": []string{}, "recurse_depth": 0})
	c, err := NewMediaWiki(cfg, nil, &Env{HTTP: http.DefaultClient})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		rec := &recorder{}
		if _, err := c.Step(context.Background(), Window{Start: time.Unix(0, 0), End: time.Now()}, c.FirstCheckpoint(), rec); err != nil || len(rec.docs) != pages {
			b.Fatalf("%v, %d documents", err, len(rec.docs))
		}
	}
	b.ReportMetric(float64(b.N*pages)/b.Elapsed().Seconds(), "pages/s")
}
