package connector

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/quarryhq/quarry"
)

// The sources of the MediaWiki connector: any wiki, and Wikipedia in the
// language of language_code.
const (
	MediaWikiSource quarry.DocumentSource = "mediawiki"
	WikipediaSource quarry.DocumentSource = "wikipedia"
)

// MediaWikiUserAgent is the User-Agent of the MediaWiki connector's
// requests.
const MediaWikiUserAgent = "Quarry-MediaWiki-Connector/1"

// Limits of the MediaWiki connector.
const (
	wikiTimeout      = 30 * time.Second // Each request.
	wikiBatch        = 50               // Pages per query: the API's limit for clients without apihighlimits.
	wikiMaxPages     = 100000           // Pages a run reads, listed pages and category members together.
	wikiMaxContinues = 10000            // Continuations of one query.
)

// Limits of what the MediaWiki connector reads of a wiki. The headers of
// every answer are bounded by the egress guard's HTTP client
// (toolrun.MaxResponseHeaderBytes).
const (
	// wikiAnswerMaxBytes bounds what is read of one answer of the API to
	// a query: MediaWiki cuts an answer at $wgAPIMaxResultSize (8 MiB by
	// default, Wikipedia's too) and continues it in the next; the JSON
	// around what it counts adds a little. A larger answer fails the
	// run.
	wikiAnswerMaxBytes = 16 << 20
	// wikiParseMaxBytes bounds what is read of a page's rendered HTML
	// (the parse API's answer): MediaWiki keeps it within the same
	// $wgAPIMaxResultSize, and JSON escapes its quotes; the largest
	// pages of Wikipedia render to a few megabytes. A larger one is an
	// error of that page. It is less than wikiAnswerMaxBytes because the
	// HTML is parsed whole into a tree several times its size.
	wikiParseMaxBytes = 12 << 20
	// wikiPageMaxBytes bounds what is read of the page the API is
	// discovered from: its <head>, which holds the EditURI link, is at
	// its start.
	wikiPageMaxBytes = 5 << 20
)

// MediaWiki is Onyx's MediaWiki connector
// (backend/onyx/connectors/mediawiki/wiki.py at v4.6.1) and its Wikipedia
// one (backend/onyx/connectors/wikipedia/connector.py), through the
// MediaWiki Action API (api.php) rather than pywikibot. A run reads the
// pages listed in pages and the members of the categories in categories
// (the pages and files, and those of their subcategories recurse_depth
// deep, or all the way down when it is -1), each page once, and keeps
// those whose latest revision is within the run's window. A page's
// document is its latest revision rendered by the wiki (the parse API)
// and read to its text as the web connector reads a page's, the wiki's
// chrome dropped: a section per heading, and the text before the first
// heading as its last section, as Onyx's sections of wikitext.
//
// A run is one step (a Poller): it lists the pages, reads their latest
// revisions' times 50 at a time, then renders those within the window
// one at a time.
type MediaWiki struct {
	cfg    wikiConfig
	source quarry.DocumentSource
	start  *url.URL // Where the API is looked for: hostname as a URL.
	env    *Env
	api    *url.URL // api.php, once a run found it. A MediaWiki runs one run at a time.
}

// wikiConfig is the connector_specific_config of the MediaWiki and
// Wikipedia connectors: Onyx's keys.
type wikiConfig struct {
	Hostname     string   `json:"hostname"` // Not in Wikipedia's.
	Categories   []string `json:"categories"`
	Pages        []string `json:"pages"`
	RecurseDepth *int     `json:"recurse_depth"`
	LanguageCode string   `json:"language_code"`
	// Onyx's batch_size: the worker batches what a connector emits, so
	// it is accepted and ignored.
	BatchSize *int `json:"batch_size"`
}

// NewMediaWiki is the Constructor of the mediawiki source's connector.
// The credential is not used: the connector reads public wikis.
func NewMediaWiki(config, _ json.RawMessage, env *Env) (Connector, error) {
	return newMediaWiki(MediaWikiSource, config, env)
}

// NewWikipedia is the Constructor of the wikipedia source's connector:
// the MediaWiki connector at https://{language_code}.wikipedia.org.
func NewWikipedia(config, _ json.RawMessage, env *Env) (Connector, error) {
	return newMediaWiki(WikipediaSource, config, env)
}

var wikiLanguageCode = regexp.MustCompile(`^[a-z][a-z0-9-]{0,34}$`)

func newMediaWiki(source quarry.DocumentSource, config json.RawMessage, env *Env) (Connector, error) {
	var c wikiConfig
	if err := json.Unmarshal(config, &c); err != nil {
		return nil, fmt.Errorf("not an object with categories, pages and recurse_depth: %w", err)
	}
	if c.RecurseDepth == nil {
		return nil, errors.New("recurse_depth is missing")
	}
	if *c.RecurseDepth < -1 {
		return nil, fmt.Errorf("recurse_depth must be an integer greater than or equal to -1, not %d", *c.RecurseDepth)
	}
	if c.LanguageCode == "" {
		c.LanguageCode = "en"
	}
	if !wikiLanguageCode.MatchString(c.LanguageCode) {
		return nil, fmt.Errorf("language_code %q is not a language code", c.LanguageCode)
	}
	var pages, cats []string
	for _, p := range c.Pages {
		if p = strings.TrimSpace(p); p != "" {
			pages = append(pages, p)
		}
	}
	for _, cat := range c.Categories {
		if cat = strings.TrimSpace(cat); cat != "" {
			if !strings.HasPrefix(cat, "Category:") {
				cat = "Category:" + cat
			}
			cats = append(cats, cat)
		}
	}
	c.Pages, c.Categories = pages, cats
	var start *url.URL
	if source == WikipediaSource {
		start = &url.URL{Scheme: "https", Host: c.LanguageCode + ".wikipedia.org", Path: "/w/api.php"}
	} else {
		raw := strings.TrimSpace(c.Hostname)
		if raw != "" && !strings.Contains(raw, "://") {
			raw = "https://" + raw
		}
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("hostname %q is not a host name or an http or https URL", c.Hostname)
		}
		u.Fragment, u.RawFragment, u.User = "", "", nil
		start = u
	}
	if env == nil || env.HTTP == nil {
		return nil, errors.New("the MediaWiki connector needs the egress guard's HTTP client")
	}
	if env.Log == nil {
		e := *env
		e.Log = slog.New(slog.DiscardHandler)
		env = &e
	}
	return Polled(&MediaWiki{cfg: c, source: source, start: start, env: env}), nil
}

// wikiPage is what the API tells of a page.
type wikiPage struct {
	PageID    int64  `json:"pageid"`
	NS        int    `json:"ns"`
	Title     string `json:"title"`
	Missing   bool   `json:"missing"`
	Invalid   bool   `json:"invalid"`
	FullURL   string `json:"fullurl"`
	Revisions []struct {
		RevID     int64     `json:"revid"`
		Timestamp time.Time `json:"timestamp"`
	} `json:"revisions"`
	Categories []wikiCategory `json:"categories"`
}

// wikiCategory is a category of a page.
type wikiCategory struct {
	Title string `json:"title"`
}

// merge adds to p what a continuation of its query tells of it: the
// parts that did not fit the earlier answers.
func (p *wikiPage) merge(more *wikiPage) {
	if p.FullURL == "" {
		p.FullURL = more.FullURL
	}
	if len(p.Revisions) == 0 {
		p.Revisions = more.Revisions
	}
	for _, c := range more.Categories {
		if !slices.Contains(p.Categories, c) {
			p.Categories = append(p.Categories, c)
		}
	}
	p.Missing = p.Missing || more.Missing
}

// wikiAnswer is an answer of the API to action=query.
type wikiAnswer struct {
	Error *struct {
		Code string `json:"code"`
		Info string `json:"info"`
	} `json:"error"`
	Continue map[string]any `json:"continue"`
	Query    wikiQuery      `json:"query"`
}

// wikiQuery is the query part of an answer of the API.
type wikiQuery struct {
	Pages           []*wikiPage `json:"pages"`
	CategoryMembers []struct {
		PageID int64  `json:"pageid"`
		NS     int    `json:"ns"`
		Title  string `json:"title"`
		Type   string `json:"type"`
	} `json:"categorymembers"`
}

// UnmarshalJSON reads the query part of an answer, which is [] (PHP's
// empty array) when an answer cut short has nothing in it.
func (q *wikiQuery) UnmarshalJSON(b []byte) error {
	if string(bytes.TrimSpace(b)) == "[]" {
		*q = wikiQuery{}
		return nil
	}
	type plain wikiQuery
	return json.Unmarshal(b, (*plain)(q))
}

// Poll emits the document of each page whose latest revision is within
// w. A listed page the wiki does not have is a failure of that page.
func (m *MediaWiki) Poll(ctx context.Context, w Window, out Emitter) error {
	ids, err := m.pageIDs(ctx, out)
	if err != nil {
		return err
	}
	for len(ids) > 0 {
		batch := ids[:min(wikiBatch, len(ids))]
		ids = ids[len(batch):]
		// The revision times first, so that only the pages within the
		// window are read whole.
		pages, err := m.pages(ctx, batch, false)
		if err != nil {
			return err
		}
		var changed []int64
		for _, p := range pages {
			if len(p.Revisions) > 0 && inWindow(p.Revisions[0].Timestamp, w) {
				changed = append(changed, p.PageID)
			}
		}
		if len(changed) == 0 {
			continue
		}
		if pages, err = m.pages(ctx, changed, true); err != nil {
			return err
		}
		for _, p := range pages {
			if len(p.Revisions) == 0 || !inWindow(p.Revisions[0].Timestamp, w) {
				continue // Deleted, or edited again, since the first query.
			}
			d, failure, err := m.document(ctx, p)
			switch {
			case err != nil:
				return err
			case failure != "":
				link := p.FullURL
				err = out.Failure(ctx, &quarry.ConnectorFailure{
					FailedDocument: &quarry.DocumentFailure{DocumentID: m.documentID(p), DocumentLink: &link},
					FailureMessage: failure,
				})
			case d != nil:
				err = out.Document(ctx, d)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// inWindow reports whether t is within w, both ends included.
func inWindow(t time.Time, w Window) bool {
	return !t.Before(w.Start) && !t.After(w.End)
}

// ListIDs lists the ids of the documents of the pages a run would read,
// without their text.
func (m *MediaWiki) ListIDs(ctx context.Context, ids func(ctx context.Context, batch []string) error) error {
	pageIDs, err := m.pageIDs(ctx, nil)
	if err != nil {
		return err
	}
	for len(pageIDs) > 0 {
		batch := pageIDs[:min(wikiBatch, len(pageIDs))]
		pageIDs = pageIDs[len(batch):]
		pages, err := m.pages(ctx, batch, false)
		if err != nil {
			return err
		}
		var list []string
		for _, p := range pages {
			if !p.Missing && p.PageID != 0 {
				list = append(list, m.documentID(p))
			}
		}
		if len(list) > 0 {
			if err := ids(ctx, list); err != nil {
				return err
			}
		}
	}
	return nil
}

// documentID is the id of a page's document, Onyx's:
// MEDIAWIKI_{page id}_{page URL}, for Wikipedia's pages too.
func (m *MediaWiki) documentID(p *wikiPage) string {
	return fmt.Sprintf("MEDIAWIKI_%d_%s", p.PageID, p.FullURL)
}

// document is the document of a page, its latest revision rendered; nil
// when the revision is gone (the page was deleted or edited again since
// it was listed). A page the wiki cannot render, or renders larger than
// wikiParseMaxBytes, is a failure of its own (failure says why); err is
// the run's.
func (m *MediaWiki) document(ctx context.Context, p *wikiPage) (d *quarry.Document, failure string, err error) {
	rev := p.Revisions[0]
	var a struct {
		Error *struct {
			Code string `json:"code"`
			Info string `json:"info"`
		} `json:"error"`
		Parse *struct {
			Text *string `json:"text"`
		} `json:"parse"`
	}
	q := url.Values{"action": {"parse"}, "oldid": {strconv.FormatInt(rev.RevID, 10)}, "prop": {"text"},
		"disableeditsection": {"1"}, "disabletoc": {"1"}, "disablelimitreport": {"1"}, "format": {"json"}, "formatversion": {"2"}}
	var tooLarge *limitError
	switch err := m.get(ctx, q, wikiParseMaxBytes, &a); {
	case errors.As(err, &tooLarge):
		return nil, "its rendered text: " + err.Error(), nil
	case err != nil:
		return nil, "", err
	case a.Error != nil && (a.Error.Code == "nosuchrevid" || a.Error.Code == "missingtitle"):
		m.env.Log.Debug("mediawiki connector: the page's revision is gone; skipped", "page", p.Title, "code", a.Error.Code)
		return nil, "", nil
	case a.Error != nil:
		return nil, fmt.Sprintf("the wiki did not render the page: %s: %s", a.Error.Code, a.Error.Info), nil
	case a.Parse == nil || a.Parse.Text == nil:
		return nil, "the wiki gave no rendered text for the page (its answer was cut at its $wgAPIMaxResultSize)", nil
	}
	lead, sections, err := wikiHTMLSections(strings.NewReader(*a.Parse.Text))
	if err != nil {
		return nil, "its rendered text: " + err.Error(), nil
	}
	var ss []quarry.Section
	for _, s := range sections {
		link := p.FullURL + "#" + (&url.URL{Fragment: s.anchor}).EscapedFragment()
		ss = append(ss, quarry.Section{Text: s.text, Link: &link})
	}
	link := p.FullURL
	ss = append(ss, quarry.Section{Text: lead, Link: &link})
	cats := []string{}
	for _, c := range p.Categories {
		cats = append(cats, c.Title)
	}
	title := p.Title
	updated := quarry.Time{Time: rev.Timestamp.UTC()}
	return &quarry.Document{
		ID:                 m.documentID(p),
		Sections:           ss,
		Source:             m.source,
		SemanticIdentifier: p.Title,
		Title:              &title,
		Metadata:           map[string]any{"categories": cats},
		DocUpdatedAt:       &updated,
	}, "", nil
}

// wikiSection is a part of a page's rendered text from one heading to the
// next.
type wikiSection struct {
	anchor string // The heading's anchor: its link's fragment.
	text   string // The heading's line and what follows it.
}

// wikiHTMLSections reads a page's rendered HTML (the parse API's text)
// as the web connector reads a page, the wiki's chrome dropped (see
// wikiChrome): the text before the first heading (lead), and each heading
// (h1 to h6) with the text up to the next, as Onyx's sections of
// wikitext.
func wikiHTMLSections(r io.Reader) (lead string, sections []wikiSection, err error) {
	doc, err := html.Parse(r)
	if err != nil {
		return "", nil, err
	}
	var leadText strings.Builder
	var texts []*strings.Builder
	w := htmlText{to: &leadText, drop: wikiChrome}
	w.visit = func(n *html.Node, keep bool) {
		if !keep || n.Namespace != "" || !wikiHeadings[n.DataAtom] {
			return
		}
		texts = append(texts, &strings.Builder{})
		sections = append(sections, wikiSection{anchor: wikiAnchor(n)})
		w.to = texts[len(texts)-1]
	}
	w.walk(doc, true, false)
	for i := range sections {
		sections[i].text = textLines(texts[i].String())
		if sections[i].anchor == "" { // The heading's text, as MediaWiki makes anchors.
			heading, _, _ := strings.Cut(sections[i].text, "\n")
			sections[i].anchor = strings.ReplaceAll(heading, " ", "_")
		}
	}
	return textLines(leadText.String()), sections, nil
}

// wikiHeadings are the elements that start a section.
var wikiHeadings = map[atom.Atom]bool{atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true, atom.H5: true, atom.H6: true}

// wikiChrome reports whether an element of a page's rendered HTML is the
// wiki's rather than the page's: a section's edit link
// (.mw-editsection), the table of contents (#toc, .toc), a link to skip
// to the navigation (.mw-jump-link), a footnote's marker ([1],
// .reference; the notes themselves are text).
func wikiChrome(n *html.Node) bool {
	if id, _ := attr(n, "id"); id == "toc" {
		return true
	}
	class, _ := attr(n, "class")
	for c := range strings.FieldsSeq(class) {
		switch c {
		case "mw-editsection", "toc", "mw-jump-link", "reference":
			return true
		}
	}
	return false
}

// wikiAnchor is the anchor of heading h: its id (MediaWiki 1.43 and
// later), else the id of its span.mw-headline (before), else "".
func wikiAnchor(h *html.Node) string {
	if id, _ := attr(h, "id"); id != "" {
		return id
	}
	for c := h.FirstChild; c != nil; c = c.NextSibling {
		if class, _ := attr(c, "class"); c.Type == html.ElementNode && hasToken(class, "mw-headline") {
			id, _ := attr(c, "id")
			return id
		}
	}
	return ""
}

// pageIDs returns the ids of the pages a run reads: the listed pages the
// wiki has, then the members of the categories, each once. A listed page
// the wiki does not have is a failure sent to fails (when not nil).
func (m *MediaWiki) pageIDs(ctx context.Context, fails Emitter) ([]int64, error) {
	if err := m.findAPI(ctx); err != nil {
		return nil, err
	}
	var ids []int64
	seen := map[int64]bool{}
	add := func(id int64) error {
		if seen[id] {
			return nil
		}
		if len(ids) >= wikiMaxPages {
			return fmt.Errorf("the pages and categories have more than %d pages", wikiMaxPages)
		}
		seen[id] = true
		ids = append(ids, id)
		return nil
	}
	for i := 0; i < len(m.cfg.Pages); i += wikiBatch {
		titles := m.cfg.Pages[i:min(i+wikiBatch, len(m.cfg.Pages))]
		var pages []*wikiPage
		err := m.query(ctx, url.Values{"titles": {wikiList(titles)}, "prop": {"info"}, "inprop": {"url"}},
			func(a *wikiAnswer) error { pages = append(pages, a.Query.Pages...); return nil })
		if err != nil {
			return nil, err
		}
		for _, p := range pages {
			if p.Missing || p.Invalid || p.PageID == 0 {
				if fails != nil {
					msg := "the wiki has no page " + strconv.Quote(p.Title)
					if p.Invalid {
						msg = "not a page title: " + strconv.Quote(p.Title)
					}
					var link *string
					if p.FullURL != "" {
						link = &p.FullURL
					}
					if err := fails.Failure(ctx, &quarry.ConnectorFailure{
						FailedDocument: &quarry.DocumentFailure{DocumentID: "MEDIAWIKI_" + p.Title, DocumentLink: link},
						FailureMessage: msg,
					}); err != nil {
						return nil, err
					}
				}
				continue
			}
			if err := add(p.PageID); err != nil {
				return nil, err
			}
		}
	}
	// Categories breadth first, each once, recurse_depth deep.
	type cat struct {
		title string
		depth int
	}
	var queue []cat
	seenCats := map[string]bool{}
	for _, c := range m.cfg.Categories {
		k := wikiTitleKey(c)
		if !seenCats[k] {
			seenCats[k] = true
			queue = append(queue, cat{c, 0})
		}
	}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		err := m.query(ctx, url.Values{"list": {"categorymembers"}, "cmtitle": {c.title}, "cmprop": {"ids|title|type"},
			"cmtype": {"page|subcat|file"}, "cmlimit": {"max"}}, func(a *wikiAnswer) error {
			for _, mem := range a.Query.CategoryMembers {
				if mem.Type != "subcat" {
					if err := add(mem.PageID); err != nil {
						return err
					}
					continue
				}
				d := *m.cfg.RecurseDepth
				k := wikiTitleKey(mem.Title)
				if (d == -1 || c.depth < d) && !seenCats[k] {
					seenCats[k] = true
					queue = append(queue, cat{mem.Title, c.depth + 1})
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return ids, nil
}

// wikiList is the values of a parameter that takes many: separated by
// U+001F, which no value has (MediaWiki's alternative to "|", which a
// title in the configuration could have).
func wikiList(values []string) string {
	return "\x1f" + strings.Join(values, "\x1f")
}

// wikiTitleKey is the key of a category's title for telling titles
// apart: MediaWiki takes spaces and underscores alike, and (on a wiki
// with $wgCapitalLinks, the default) the first letter of the name in
// either case.
func wikiTitleKey(t string) string {
	t = strings.Join(strings.Fields(strings.ReplaceAll(t, "_", " ")), " ")
	ns, name, ok := strings.Cut(t, ":")
	if !ok {
		ns, name = "", t
	}
	r, n := utf8.DecodeRuneInString(strings.TrimSpace(name))
	return strings.ToLower(ns) + ":" + string(unicode.ToUpper(r)) + strings.TrimSpace(name)[n:]
}

// pages returns what the wiki has of the pages of ids: their URLs and
// latest revision's time, and when categories their latest revision's id
// and their categories too.
func (m *MediaWiki) pages(ctx context.Context, ids []int64, categories bool) ([]*wikiPage, error) {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.FormatInt(id, 10)
	}
	q := url.Values{"pageids": {strings.Join(s, "|")}, "prop": {"info|revisions"}, "inprop": {"url"}, "rvprop": {"timestamp"}}
	if categories {
		q.Set("prop", "info|revisions|categories")
		q.Set("cllimit", "max")
		q.Set("rvprop", "ids|timestamp")
	}
	byID := map[int64]*wikiPage{}
	err := m.query(ctx, q, func(a *wikiAnswer) error {
		for _, p := range a.Query.Pages {
			prev, ok := byID[p.PageID]
			if !ok {
				byID[p.PageID] = p
				continue
			}
			prev.merge(p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// In the order of ids, which the API does not keep.
	var pages []*wikiPage
	for _, id := range ids {
		if p, ok := byID[id]; ok && !p.Missing {
			pages = append(pages, p)
		}
	}
	return pages, nil
}

// query runs action=query with q, following its continuations, and calls
// each with every answer.
func (m *MediaWiki) query(ctx context.Context, q url.Values, each func(*wikiAnswer) error) error {
	var cont map[string]any
	for range wikiMaxContinues {
		v := url.Values{"action": {"query"}, "format": {"json"}, "formatversion": {"2"}}
		for k, vs := range q {
			v[k] = vs
		}
		for k, c := range cont {
			v.Set(k, fmt.Sprint(c))
		}
		var a wikiAnswer
		if err := m.get(ctx, v, wikiAnswerMaxBytes, &a); err != nil {
			return err
		}
		if a.Error != nil {
			return m.apiError(a.Error.Code, a.Error.Info)
		}
		if err := each(&a); err != nil {
			return err
		}
		if len(a.Continue) == 0 {
			return nil
		}
		cont = a.Continue
	}
	return fmt.Errorf("the wiki's API at %s continued a query more than %d times", m.api.Redacted(), wikiMaxContinues)
}

// get sends a GET of the API with q and decodes its JSON answer, of at
// most limit bytes, into out.
func (m *MediaWiki) get(parent context.Context, q url.Values, limit int64, out any) error {
	u := *m.api
	u.RawQuery = q.Encode()
	resp, cancel, err := m.request(parent, &u, "application/json")
	if err != nil {
		return err
	}
	defer cancel()
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		return &CredentialError{Reason: fmt.Sprintf("the wiki's API at %s answered %s: it lets no one read without signing in, "+
			"and the MediaWiki connector does not sign in", m.api.Redacted(), resp.Status)}
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("the wiki's API at %s answered %s", m.api.Redacted(), resp.Status)
	}
	tooLarge := &limitError{what: "an answer of the wiki's API at " + m.api.Redacted(), limit: limit}
	dec := json.NewDecoder(newBoundedReader(resp.Body, limit, tooLarge))
	if err := dec.Decode(out); err != nil {
		if parent.Err() != nil {
			return parent.Err()
		}
		if err == tooLarge {
			return err
		}
		return fmt.Errorf("the wiki's API at %s did not answer JSON: %w", m.api.Redacted(), err)
	}
	return nil
}

// apiError is the error of an answer of the API that holds one: a wiki
// that lets no one read without signing in (readapidenied) refused the
// connector's access, a *CredentialError, not tried again within the
// attempt.
func (m *MediaWiki) apiError(code, info string) error {
	if code == "readapidenied" {
		return &CredentialError{Reason: fmt.Sprintf("the wiki's API at %s answered %s: %s; the MediaWiki connector reads public wikis only, "+
			"without signing in", m.api.Redacted(), code, info)}
	}
	return fmt.Errorf("the wiki's API at %s answered %s: %s", m.api.Redacted(), code, info)
}

// request sends a GET of u.
func (m *MediaWiki) request(parent context.Context, u *url.URL, accept string) (*http.Response, context.CancelFunc, error) {
	ctx, cancel := context.WithTimeout(parent, wikiTimeout)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		cancel()
		return nil, nil, fmt.Errorf("not a URL: %w", err)
	}
	req.Header.Set("User-Agent", MediaWikiUserAgent)
	req.Header.Set("Accept", accept)
	resp, err := m.env.HTTP.Do(req)
	if err != nil {
		cancel()
		if parent.Err() != nil {
			return nil, nil, parent.Err()
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, nil, fmt.Errorf("the wiki at %s: %w", u.Redacted(), err)
	}
	return resp, cancel, nil
}

// wikiEditURI is the link to the API's RSD that every page of a
// MediaWiki has in its head.
var wikiEditURI = regexp.MustCompile(`<link[^>]+rel="EditURI"[^>]*href="([^"]+)"`)

// findAPI finds the wiki's api.php, as pywikibot does from a URL of the
// wiki: hostname itself when it is api.php, else the EditURI link of the
// page at hostname. It checks that the API answers as MediaWiki's.
func (m *MediaWiki) findAPI(ctx context.Context) error {
	m.api = nil
	api := m.start
	if !strings.HasSuffix(m.start.Path, "/api.php") {
		resp, cancel, err := m.request(ctx, m.start, "text/html")
		if err != nil {
			return err
		}
		defer cancel()
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusUnauthorized {
			return &CredentialError{Reason: fmt.Sprintf("the wiki at %s answered %s: it lets no one read without signing in, "+
				"and the MediaWiki connector does not sign in", m.start.Redacted(), resp.Status)}
		}
		if resp.StatusCode/100 != 2 {
			return fmt.Errorf("the wiki at %s answered %s", m.start.Redacted(), resp.Status)
		}
		// Only the start of a large page is read: the link is in its head.
		tooLarge := &limitError{what: "the page", limit: wikiPageMaxBytes}
		b, err := io.ReadAll(newBoundedReader(resp.Body, wikiPageMaxBytes, tooLarge))
		if err != nil && err != tooLarge {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("the wiki at %s: %w", m.start.Redacted(), err)
		}
		match := wikiEditURI.FindSubmatch(b)
		if match == nil {
			where := ""
			if err == tooLarge {
				where = " in its first " + ByteSize(wikiPageMaxBytes)
			}
			return fmt.Errorf("%s is not a page of a MediaWiki: it has no EditURI link to the API%s", m.start.Redacted(), where)
		}
		href := strings.ReplaceAll(string(match[1]), "&amp;", "&")
		l, err := resp.Request.URL.Parse(href)
		if err != nil || (l.Scheme != "http" && l.Scheme != "https") {
			return fmt.Errorf("the EditURI link of %s, %q, is not a URL", m.start.Redacted(), href)
		}
		l.RawQuery, l.Fragment, l.RawFragment = "", "", ""
		api = l
	}
	m.api = api
	// The smallest answer that only a MediaWiki gives: who the
	// connector is to the wiki (an anonymous user).
	var a struct {
		Error *struct {
			Code string `json:"code"`
			Info string `json:"info"`
		} `json:"error"`
		Query *struct {
			UserInfo *struct {
				Name string `json:"name"`
			} `json:"userinfo"`
		} `json:"query"`
	}
	if err := m.get(ctx, url.Values{"action": {"query"}, "meta": {"userinfo"}, "format": {"json"}, "formatversion": {"2"}}, wikiAnswerMaxBytes, &a); err != nil {
		return err
	}
	if a.Error != nil {
		return m.apiError(a.Error.Code, a.Error.Info)
	}
	if a.Query == nil || a.Query.UserInfo == nil {
		return fmt.Errorf("%s is not the API of a MediaWiki", m.api.Redacted())
	}
	m.env.Log.Debug("mediawiki connector: the wiki's API", "api", m.api.Redacted())
	return nil
}
