package connector

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/quarryhq/quarry"
)

// WebSource is the source of the web connector.
const WebSource quarry.DocumentSource = "web"

// WebUserAgent is the User-Agent of the web connector's requests; its
// product token is the name robots.txt groups are matched against.
const WebUserAgent = "Quarry-Web-Connector/1"

// Limits of the web connector.
const (
	webDefaultMaxPages = 10000                  // max_pages when not set.
	webDefaultDelay    = 500 * time.Millisecond // request_delay_ms when not set.
	webTimeout         = 30 * time.Second       // Each request, Onyx's page time-out.
	webSitemapDepth    = 2                      // Sitemap indexes are followed this deep.
)

// Limits of what the web connector reads of a server. The headers of
// every answer are bounded by the egress guard's HTTP client
// (toolrun.MaxResponseHeaderBytes).
const (
	// webPageMaxBytes bounds what is read of a page: a larger one is an
	// error of that page. A page of text is tens of kilobytes and the
	// largest HTML pages of the web (long articles, tables) a few
	// megabytes; what is kept of one is at most a document's 512 KiB.
	webPageMaxBytes = 5 << 20
	// webSitemapMaxBytes bounds what is read of a sitemap: the sitemaps
	// protocol's own limit on one (50 MiB uncompressed, 50,000 URLs). A
	// larger one fails the run.
	webSitemapMaxBytes = 50 << 20
)

// errPageTooLarge is the error of a page over webPageMaxBytes.
var errPageTooLarge = &limitError{what: "the page", limit: webPageMaxBytes}

// The kinds of a web connector (web_connector_type).
const (
	webRecursive = "recursive"
	webSingle    = "single"
	webSitemap   = "sitemap"
)

// Web is Onyx's web connector (backend/onyx/connectors/web/connector.py
// at v4.6.1) without a browser: it fetches pages over HTTP through the
// egress guard and keeps their text. Its kind is recursive (a crawl of
// the site from base_url, breadth first, under base_url's path), single
// (base_url alone) or sitemap (the pages a sitemap lists: base_url when
// it ends in .xml, else base_url's sitemap.xml). Only the pages of
// base_url's site (scheme and host) are fetched, robots.txt permitting,
// with a pause between requests, and at most max_pages of them. HTML
// pages and images are kept, as Onyx's browser shows them: a page whose
// title and text the run already kept is left out (Onyx's content hash,
// so that / and /index.html are one document), and an image is a
// document titled as a browser titles it ("logo.png (120×40)"), with no
// text.
//
// A crawl is one step (a Loader): a checkpoint that resumed it would
// have to hold its queue and the set of pages seen, up to max_pages URLs
// each, so an attempt that fails crawls again from the start. Memory is
// bounded by max_pages: the queue and the set of URLs seen never hold
// more than that many URLs each.
type Web struct {
	cfg    webConfig
	base   *url.URL
	env    *Env
	client *http.Client // env.HTTP, refusing redirects off the site or that robots.txt disallows.
	rules  *robots      // The site's robots.txt, once the run read it. A Web runs one crawl at a time.
}

// webConfig is the web connector's connector_specific_config: Onyx's keys
// and two of Quarry's own (max_pages, request_delay_ms).
type webConfig struct {
	BaseURL string `json:"base_url"`
	Type    string `json:"web_connector_type"`
	// Onyx's keys that a connector without a browser has no use for:
	// accepted and ignored.
	MintlifyCleanup      *bool `json:"mintlify_cleanup"`
	BatchSize            *int  `json:"batch_size"`
	ScrollBeforeScraping *bool `json:"scroll_before_scraping"`
	// Onyx's url_rewrites: not supported, refused unless empty.
	URLRewrites []json.RawMessage `json:"url_rewrites"`
	// Quarry's: the most pages a run fetches, and the pause between two
	// requests.
	MaxPages *int `json:"max_pages"`
	DelayMS  *int `json:"request_delay_ms"`
}

// NewWeb is the Constructor of the web connector. The credential is not
// used: the web connector fetches public pages.
func NewWeb(config, _ json.RawMessage, env *Env) (Connector, error) {
	var c webConfig
	if err := json.Unmarshal(config, &c); err != nil {
		return nil, fmt.Errorf("not an object with base_url and web_connector_type: %w", err)
	}
	switch c.Type {
	case "":
		c.Type = webRecursive
	case webRecursive, webSingle, webSitemap:
	case "upload":
		return nil, fmt.Errorf("web_connector_type upload (a file of URLs on the server) is not supported")
	default:
		return nil, fmt.Errorf("web_connector_type %q is none of recursive, single and sitemap", c.Type)
	}
	raw := strings.TrimSpace(c.BaseURL)
	if raw != "" && !strings.Contains(raw, "://") {
		raw = "https://" + raw // As Onyx's _ensure_valid_url.
	}
	base, err := url.Parse(raw)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("base_url %q is not an http or https URL", c.BaseURL)
	}
	base.Fragment, base.RawFragment, base.User = "", "", nil
	if len(c.URLRewrites) > 0 {
		return nil, fmt.Errorf("url_rewrites is not supported")
	}
	if c.MaxPages == nil {
		n := webDefaultMaxPages
		c.MaxPages = &n
	} else if *c.MaxPages < 1 {
		return nil, fmt.Errorf("max_pages %d is not a positive number", *c.MaxPages)
	}
	if c.DelayMS == nil {
		n := int(webDefaultDelay / time.Millisecond)
		c.DelayMS = &n
	} else if *c.DelayMS < 0 || *c.DelayMS > 60000 {
		return nil, fmt.Errorf("request_delay_ms %d is not between 0 and 60000", *c.DelayMS)
	}
	if env == nil || env.HTTP == nil {
		return nil, errors.New("the web connector needs the egress guard's HTTP client")
	}
	if env.Log == nil {
		e := *env
		e.Log = slog.New(slog.DiscardHandler)
		env = &e
	}
	w := &Web{cfg: c, base: base, env: env}
	hc := *env.HTTP
	next := hc.CheckRedirect
	hc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if !w.sameSite(req.URL) {
			return &offSiteError{to: req.URL.Redacted()}
		}
		if !w.rules.allowed(req.URL.EscapedPath() + query(req.URL)) {
			return &offSiteError{to: req.URL.Redacted(), robots: true}
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	w.client = &hc
	return Loaded(w), nil
}

// offSiteError is a redirect off the site, or to a page robots.txt
// disallows, which is not followed.
type offSiteError struct {
	to     string
	robots bool
}

func (e *offSiteError) Error() string {
	if e.robots {
		return "redirected to " + e.to + ", which robots.txt disallows"
	}
	return "redirected off the site, to " + e.to
}

// sameSite reports whether u is on the base URL's site: its scheme and
// host.
func (w *Web) sameSite(u *url.URL) bool {
	return strings.EqualFold(u.Scheme, w.base.Scheme) && strings.EqualFold(hostPort(u), hostPort(w.base))
}

// hostPort is u's host with its port, without the scheme's default port.
func hostPort(u *url.URL) string {
	p := u.Port()
	if p == "" || (u.Scheme == "http" && p == "80") || (u.Scheme == "https" && p == "443") {
		return strings.ToLower(u.Hostname())
	}
	return strings.ToLower(u.Hostname()) + ":" + p
}

// underBase reports whether u is on the site and under the base URL's
// path, as Onyx's _same_site: the base path without its trailing slash,
// or a path that starts with it and a slash.
func (w *Web) underBase(u *url.URL) bool {
	if !w.sameSite(u) {
		return false
	}
	bp := strings.TrimRight(w.base.Path, "/")
	if bp == "" {
		return true
	}
	p := u.Path
	if p == "" {
		p = "/"
	}
	return p == bp || strings.HasPrefix(p, bp+"/")
}

// Load crawls the site and emits a document per HTML page.
func (w *Web) Load(ctx context.Context, out Emitter) error {
	return w.crawl(ctx, func(ctx context.Context, d *quarry.Document) error { return out.Document(ctx, d) }, out)
}

// ListIDs crawls the site as Load does and lists the ids of its pages.
func (w *Web) ListIDs(ctx context.Context, ids func(ctx context.Context, batch []string) error) error {
	var batch []string
	err := w.crawl(ctx, func(ctx context.Context, d *quarry.Document) error {
		if batch = append(batch, d.ID); len(batch) == 100 {
			err := ids(ctx, batch)
			batch = nil
			return err
		}
		return nil
	}, nil)
	if err == nil && len(batch) > 0 {
		err = ids(ctx, batch)
	}
	return err
}

// webFetch is what one request fetched.
type webFetch struct {
	final *url.URL  // The URL after redirects.
	page  *webPage  // nil when the page is not HTML.
	image *webImage // nil when it is not an image.
}

// title is the title of what was fetched: the HTML page's, or the one a
// browser gives an image.
func (f *webFetch) title() string {
	if f.image != nil {
		return f.image.title(f.final)
	}
	return f.page.Title
}

// text is the text of what was fetched: an image has none.
func (f *webFetch) text() string {
	if f.image != nil {
		return ""
	}
	return f.page.Text
}

// pageError is why one page was not read: a per-document failure unless
// the page is the base URL.
type pageError struct {
	msg     string
	skipped bool // Not a failure: off the site, or robots.txt disallowed the redirect's target.
	gone    bool // The server says the page is no more (404, 410).
	denied  bool // The server wants credentials (401), which the web connector does not send.
}

func (e *pageError) Error() string { return e.msg }

// crawl fetches the pages of the run in order, breadth first, giving the
// document of each HTML page and image to doc, but those whose title and
// text a document of the run already had (Onyx's content hash); a page
// that fails is a failure sent to fails. Without fails (a listing for a
// prune), every page is given, as Onyx's slim crawl lists every page it
// loads (a page left out of the listing would lose its document), and a
// page the server says is
// gone (404, 410) is left out, and any other failure fails the listing, so
// that a page the site could not serve for a moment (a time-out, a 503) is
// not taken for deleted, with the pages only it links to. The base URL
// (or, for a sitemap, the sitemap) is the exception: its failure is the
// run's.
func (w *Web) crawl(ctx context.Context, doc func(context.Context, *quarry.Document) error, fails Emitter) error {
	w.rules = nil
	rules, err := w.robots(ctx)
	if err != nil {
		return err
	}
	w.rules = rules
	maxPages := *w.cfg.MaxPages
	var queue []*url.URL
	seen := map[string]bool{}       // Normalized URLs queued or fetched, and ids emitted.
	emitted := map[string]bool{}    // Ids of the documents emitted.
	contents := map[[32]byte]bool{} // Hashes of the titles and texts of the documents emitted, when indexing.
	first := true                   // No request yet (robots.txt aside).
	enqueue := func(u *url.URL) {
		k := normalizeURL(u)
		if seen[k] || len(seen) >= 2*maxPages || len(queue) >= maxPages {
			return
		}
		seen[k] = true
		queue = append(queue, u)
	}
	if w.cfg.Type == webSitemap {
		urls, err := w.sitemap(ctx, rules)
		if err != nil {
			return err
		}
		for _, u := range urls {
			enqueue(u)
		}
		first = false
	} else {
		enqueue(w.base)
	}
	var lastFailure string
	fetched := 0
	for len(queue) > 0 && fetched < maxPages {
		u := queue[0]
		queue[0] = nil
		queue = queue[1:]
		isBase := w.cfg.Type != webSitemap && fetched == 0
		if !rules.allowed(u.EscapedPath() + query(u)) {
			if isBase {
				return fmt.Errorf("robots.txt of %s disallows the base URL %s", w.base.Host, u.Redacted())
			}
			w.env.Log.Debug("web connector: robots.txt disallows a page", "url", u.Redacted())
			continue
		}
		if !first {
			if err := sleep(ctx, time.Duration(*w.cfg.DelayMS)*time.Millisecond); err != nil {
				return err
			}
		}
		first = false
		fetched++
		f, err := w.fetch(ctx, u)
		var pe *pageError
		switch {
		case err == nil:
		case errors.As(err, &pe) && isBase && pe.denied:
			return &CredentialError{Reason: fmt.Sprintf("the base URL %s: %s; the web connector reads public pages only", u.Redacted(), pe.msg)}
		case errors.As(err, &pe) && isBase:
			return fmt.Errorf("the base URL %s: %s", u.Redacted(), pe.msg)
		case errors.As(err, &pe) && pe.skipped:
			w.env.Log.Debug("web connector: page skipped", "url", u.Redacted(), "reason", pe.msg)
			continue
		case errors.As(err, &pe):
			lastFailure = fmt.Sprintf("%s: %s", u.Redacted(), pe.msg)
			if fails == nil && !pe.gone {
				return fmt.Errorf("listing the pages for a prune: %s: %s", u.Redacted(), pe.msg)
			}
			if fails != nil {
				link := u.String()
				if err := fails.Failure(ctx, &quarry.ConnectorFailure{
					FailedDocument: &quarry.DocumentFailure{DocumentID: normalizeURL(u), DocumentLink: &link},
					FailureMessage: pe.msg,
				}); err != nil {
					return err
				}
			}
			continue
		default:
			return err
		}
		seen[normalizeURL(f.final)] = true
		if f.page == nil && f.image == nil {
			w.env.Log.Debug("web connector: neither an HTML page nor an image, skipped", "url", u.Redacted())
			continue
		}
		id := normalizeURL(f.final)
		if f.page != nil {
			id = w.readLinks(f, id, seen, enqueue)
		}
		if emitted[id] {
			continue
		}
		if fails != nil {
			k := sha256.Sum256([]byte(f.title() + "\x00" + f.text()))
			if contents[k] {
				w.env.Log.Debug("web connector: the title and text of a page already read, skipped", "url", u.Redacted())
				continue
			}
			contents[k] = true
		}
		emitted[id] = true
		if err := doc(ctx, w.document(id, f)); err != nil {
			return err
		}
	}
	if len(emitted) == 0 {
		if lastFailure != "" {
			return fmt.Errorf("no page could be read; the last failure: %s", lastFailure)
		}
		return errors.New("no valid pages found")
	}
	return nil
}

// readLinks reads the HTML page f, whose URL is id: it queues its links
// with enqueue (in a recursive crawl) and returns its id, its canonical
// URL when that is on the site (marked seen).
func (w *Web) readLinks(f *webFetch, id string, seen map[string]bool, enqueue func(*url.URL)) string {
	base := f.final
	if f.page.Base != "" {
		if b := resolveLink(f.final, f.page.Base); b != nil {
			base = b
		}
	}
	if c := resolveLink(base, f.page.Canonical); c != nil && w.sameSite(c) {
		id = normalizeURL(c)
		seen[id] = true
	}
	if w.cfg.Type == webRecursive {
		for _, href := range f.page.Links {
			if l := resolveLink(base, href); l != nil && w.underBase(l) {
				enqueue(l)
			}
		}
	}
	return id
}

// document is the document of a page or an image fetched.
func (w *Web) document(id string, f *webFetch) *quarry.Document {
	link := f.final.String()
	d := &quarry.Document{
		ID:                 id,
		Sections:           []quarry.Section{{Text: f.text(), Link: &link}},
		Source:             WebSource,
		SemanticIdentifier: id,
		Metadata:           map[string]any{},
	}
	if t := f.title(); t != "" {
		d.Title, d.SemanticIdentifier = &t, t
	}
	return d
}

// query is u's query with its "?", or "".
func query(u *url.URL) string {
	if u.RawQuery == "" {
		return ""
	}
	return "?" + u.RawQuery
}

// get sends a GET of u, accepting accept; a redirect is followed on the
// site only. Its errors are *pageError, or ctx's.
func (w *Web) get(parent context.Context, u *url.URL, accept string) (*http.Response, context.CancelFunc, error) {
	ctx, cancel := context.WithTimeout(parent, webTimeout)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		cancel()
		return nil, nil, &pageError{msg: "not a URL: " + err.Error()}
	}
	req.Header.Set("User-Agent", WebUserAgent)
	req.Header.Set("Accept", accept)
	resp, err := w.client.Do(req)
	if err != nil {
		cancel()
		if parent.Err() != nil {
			return nil, nil, parent.Err()
		}
		var off *offSiteError
		if errors.As(err, &off) {
			return nil, nil, &pageError{msg: off.Error(), skipped: true}
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, nil, &pageError{msg: "fetching failed: " + err.Error()}
	}
	return resp, cancel, nil
}

// fetch fetches the page at u.
func (w *Web) fetch(ctx context.Context, u *url.URL) (*webFetch, error) {
	resp, cancel, err := w.get(ctx, u, "text/html,application/xhtml+xml;q=0.9,*/*;q=0.1")
	if err != nil {
		return nil, err
	}
	defer cancel()
	defer resp.Body.Close()
	f := &webFetch{final: resp.Request.URL}
	if resp.StatusCode/100 != 2 {
		gone := resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone
		return nil, &pageError{msg: "the server answered " + resp.Status, gone: gone, denied: resp.StatusCode == http.StatusUnauthorized}
	}
	ct := resp.Header.Get("Content-Type")
	if webImageType(ct) {
		f.image = readImageSize(io.LimitReader(resp.Body, webPageMaxBytes))
		return f, nil
	}
	if ct != "" && !webHTML(ct) {
		return f, nil
	}
	b, err := io.ReadAll(newBoundedReader(resp.Body, webPageMaxBytes, errPageTooLarge))
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err == errPageTooLarge {
			return nil, &pageError{msg: err.Error()}
		}
		return nil, &pageError{msg: "reading the page failed: " + err.Error()}
	}
	if sniffed := http.DetectContentType(b); ct == "" && webImageType(sniffed) {
		f.image = readImageSize(bytes.NewReader(b)) // No Content-Type, and the bytes are an image's.
		return f, nil
	} else if ct == "" && !webHTML(sniffed) {
		return f, nil // No Content-Type, and the bytes do not look like HTML.
	}
	if f.page, err = readHTML(bytes.NewReader(b)); err != nil {
		return nil, &pageError{msg: "the page is not HTML: " + err.Error()}
	}
	return f, nil
}

// webHTML reports whether the media type of Content-Type ct is HTML's.
func webHTML(ct string) bool {
	mt, _, _ := mime.ParseMediaType(ct)
	return mt == "text/html" || mt == "application/xhtml+xml"
}

// robots reads the site's robots.txt. One that is not there (or not
// readable) allows everything; a robots.txt the server fails to give
// (5xx) or an unreachable site fails the run, as RFC 9309 asks to
// assume everything disallowed.
func (w *Web) robots(ctx context.Context) (*robots, error) {
	u := &url.URL{Scheme: w.base.Scheme, Host: w.base.Host, Path: "/robots.txt"}
	resp, cancel, err := w.get(ctx, u, "text/plain")
	var pe *pageError
	if errors.As(err, &pe) {
		if pe.skipped {
			return nil, nil
		}
		return nil, fmt.Errorf("the site %s: %s", w.base.Host, pe.msg)
	} else if err != nil {
		return nil, err
	}
	defer cancel()
	defer resp.Body.Close()
	switch {
	case resp.StatusCode/100 == 2:
		body := newBoundedReader(resp.Body, robotsMaxBytes, errRobotsTooLarge)
		rules := parseRobots(body, strings.Split(WebUserAgent, "/")[0])
		if body.left < 0 {
			w.env.Log.Warn("web connector: robots.txt is larger than the connector reads; the rules past the limit are not read, as RFC 9309 allows",
				"site", w.base.Host, "limit_bytes", robotsMaxBytes)
		}
		return rules, nil
	case resp.StatusCode >= 500:
		return nil, fmt.Errorf("the site %s answered %s for robots.txt", w.base.Host, resp.Status)
	default:
		return nil, nil
	}
}

// sitemap returns the same-site URLs the sitemap lists, following
// sitemap indexes webSitemapDepth deep, at most max_pages of them.
func (w *Web) sitemap(ctx context.Context, rules *robots) ([]*url.URL, error) {
	sm := w.base
	if !strings.HasSuffix(strings.ToLower(sm.Path), ".xml") {
		p := *w.base
		if !strings.HasSuffix(p.Path, "/") {
			p.Path += "/"
		}
		sm = p.ResolveReference(&url.URL{Path: "sitemap.xml"})
	}
	var urls []*url.URL
	var read func(u *url.URL, depth int) error
	read = func(u *url.URL, depth int) error {
		resp, cancel, err := w.get(ctx, u, "application/xml,text/xml;q=0.9,*/*;q=0.1")
		if err != nil {
			return fmt.Errorf("the sitemap %s: %w", u.Redacted(), err)
		}
		defer cancel()
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusUnauthorized {
			return &CredentialError{Reason: fmt.Sprintf("the sitemap %s: the server answered %s; the web connector reads public pages only", u.Redacted(), resp.Status)}
		}
		if resp.StatusCode/100 != 2 {
			return fmt.Errorf("the sitemap %s: the server answered %s", u.Redacted(), resp.Status)
		}
		var doc struct {
			URLs     []string `xml:"url>loc"`
			Sitemaps []string `xml:"sitemap>loc"`
		}
		tooLarge := &limitError{what: "the sitemap " + u.Redacted(), limit: webSitemapMaxBytes}
		if err := xml.NewDecoder(newBoundedReader(resp.Body, webSitemapMaxBytes, tooLarge)).Decode(&doc); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if err == tooLarge {
				return err
			}
			return fmt.Errorf("the sitemap %s is not a sitemap: %w", u.Redacted(), err)
		}
		for _, loc := range doc.URLs {
			if l := resolveLink(u, loc); l != nil && w.sameSite(l) && len(urls) < *w.cfg.MaxPages {
				urls = append(urls, l)
			}
		}
		for _, loc := range doc.Sitemaps {
			if l := resolveLink(u, loc); l != nil && w.sameSite(l) && depth < webSitemapDepth && len(urls) < *w.cfg.MaxPages && rules.allowed(l.EscapedPath()+query(l)) {
				if err := read(l, depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := read(sm, 1); err != nil {
		return nil, err
	}
	return urls, nil
}
