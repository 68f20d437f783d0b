package connector

import (
	"io"
	"net/url"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// webPage is what the web connector reads of an HTML page.
type webPage struct {
	Title     string   // <title>, else the first <h1>; "" if neither.
	Text      string   // The clean text: one line per heading, paragraph, list item or other block.
	Links     []string // Every <a href>, as written.
	Canonical string   // The href of <link rel=canonical>, as written; "" if none.
	Base      string   // The href of <base>, as written; "" if none.
}

// webDropped are the elements whose text is not the page's content (Onyx
// v4.6.1's WEB_CONNECTOR_IGNORED_ELEMENTS, nav, footer, meta, script,
// style, symbol and aside, among them).
var webDropped = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Nav: true, atom.Header: true, atom.Footer: true,
	atom.Noscript: true, atom.Svg: true, atom.Template: true, atom.Iframe: true, atom.Head: true,
	atom.Aside: true,
}

// webChrome reports whether an element of a page is its chrome rather
// than its content, besides webDropped: an element of class sidebar or
// footer (Onyx v4.6.1's WEB_CONNECTOR_IGNORED_CLASSES; Onyx's Mintlify
// classes, sticky and hidden, are not dropped: Tailwind's hidden marks
// content shown on wide screens), or whose ARIA role is that of a nav,
// header or footer (navigation, banner, contentinfo: Sphinx's navigation
// bars and sidebar are divs of role navigation).
func webChrome(n *html.Node) bool {
	if role, _ := attr(n, "role"); hasToken(role, "navigation") || hasToken(role, "banner") || hasToken(role, "contentinfo") {
		return true
	}
	class, _ := attr(n, "class")
	return hasToken(class, "sidebar") || hasToken(class, "footer")
}

// webBlocks are the elements that start and end a line of text.
var webBlocks = map[atom.Atom]bool{
	atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true, atom.H5: true, atom.H6: true,
	atom.P: true, atom.Li: true, atom.Div: true, atom.Br: true, atom.Tr: true, atom.Td: true, atom.Th: true,
	atom.Section: true, atom.Article: true, atom.Main: true, atom.Pre: true, atom.Blockquote: true,
	atom.Dt: true, atom.Dd: true, atom.Ul: true, atom.Ol: true, atom.Dl: true, atom.Table: true,
	atom.Figcaption: true, atom.Hr: true, atom.Address: true, atom.Aside: true, atom.Caption: true,
	atom.Summary: true, atom.Details: true, atom.Form: true, atom.Fieldset: true, atom.Legend: true, atom.Option: true,
}

// readHTML parses an HTML page (the parser takes any input, as browsers
// do) into its title, clean text and links. Its one error is the
// parser's refusal of a page with more than 512 elements open at once,
// which also bounds the depth of the walks below.
func readHTML(r io.Reader) (*webPage, error) {
	doc, err := html.Parse(r)
	if err != nil {
		return nil, err
	}
	p := &webPage{}
	var text strings.Builder
	var h1 string
	w := htmlText{to: &text, drop: webChrome, visit: func(n *html.Node, _ bool) {
		switch n.DataAtom {
		case atom.A:
			if href, ok := attr(n, "href"); ok {
				p.Links = append(p.Links, href)
			}
		case atom.Link:
			if rel, _ := attr(n, "rel"); p.Canonical == "" && hasToken(rel, "canonical") {
				p.Canonical, _ = attr(n, "href")
			}
		case atom.Base:
			if p.Base == "" {
				p.Base, _ = attr(n, "href")
			}
		case atom.Title:
			if p.Title == "" && n.Namespace == "" { // Not an <svg>'s <title>.
				p.Title = collapse(innerText(n))
			}
		case atom.H1:
			if h1 == "" {
				h1 = collapse(innerText(n))
			}
		}
	}}
	w.walk(doc, true, false)
	if p.Title == "" {
		p.Title = h1
	}
	p.Text = textLines(text.String())
	return p, nil
}

// htmlText writes the text of an HTML tree as the web connector keeps a
// page's: the text of every element but those of webDropped (and those
// drop reports), a line break around each block. A walk may change where
// the text goes (to) as it meets elements.
type htmlText struct {
	to *strings.Builder
	// drop, if set, reports the elements whose text is not content,
	// besides webDropped.
	drop func(n *html.Node) bool
	// visit, if set, is called at each element before its content;
	// keep tells whether its text is kept.
	visit func(n *html.Node, keep bool)
}

// walk writes the text of n (kept when keep; pre when inside <pre>).
func (w *htmlText) walk(n *html.Node, keep, pre bool) {
	if n.Type == html.ElementNode {
		if webDropped[n.DataAtom] || w.drop != nil && w.drop(n) {
			keep = false
		}
		if w.visit != nil {
			w.visit(n, keep)
		}
	}
	if keep && n.Type == html.TextNode {
		if pre {
			w.to.WriteString(n.Data) // Its lines are lines.
		} else {
			w.to.WriteString(strings.Map(func(r rune) rune {
				if r == '\n' || r == '\r' {
					return ' '
				}
				return r
			}, n.Data))
		}
	}
	pre = pre || (n.Type == html.ElementNode && (n.DataAtom == atom.Pre || n.DataAtom == atom.Textarea))
	block := keep && n.Type == html.ElementNode && webBlocks[n.DataAtom]
	if block {
		w.to.WriteByte('\n')
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		w.walk(c, keep, pre)
	}
	if block {
		w.to.WriteByte('\n')
	}
}

// textLines is text written by htmlText made clean: each line collapsed
// (see collapse), blank lines dropped.
func textLines(text string) string {
	var lines []string
	for l := range strings.SplitSeq(text, "\n") {
		if l = collapse(l); l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}

// attr returns the value of n's attribute key.
func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Namespace == "" && strings.EqualFold(a.Key, key) {
			return a.Val, true
		}
	}
	return "", false
}

// hasToken reports whether the space-separated list s has tok, in any case.
func hasToken(s, tok string) bool {
	for f := range strings.FieldsSeq(s) {
		if strings.EqualFold(f, tok) {
			return true
		}
	}
	return false
}

// innerText is the text of n's descendants.
func innerText(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

// collapse trims s and makes every run of white space in it one space.
func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// normalizeURL is the form of u the web connector identifies pages by:
// scheme and host in lower case, without the default port, the user
// name or the fragment, the path "/" when empty, and no trailing slash
// on any other path (Onyx compares paths without it), so that /docs and
// /docs/ are one page. The query is kept as it is.
func normalizeURL(u *url.URL) string {
	v := *u
	v.Scheme = strings.ToLower(v.Scheme)
	v.Host = strings.ToLower(v.Host)
	if port := v.Port(); (v.Scheme == "http" && port == "80") || (v.Scheme == "https" && port == "443") {
		v.Host = strings.TrimSuffix(v.Host, ":"+port)
	}
	v.User = nil
	v.Fragment, v.RawFragment = "", ""
	v.ForceQuery = false
	if v.Path == "" {
		v.Path, v.RawPath = "/", ""
	}
	if len(v.Path) > 1 && strings.HasSuffix(v.Path, "/") {
		v.Path = strings.TrimRight(v.Path, "/")
		v.RawPath = strings.TrimRight(v.RawPath, "/")
		if v.Path == "" {
			v.Path, v.RawPath = "/", ""
		}
	}
	return v.String()
}

// resolveLink resolves a link href found on the page at base into an
// absolute http or https URL without its fragment, or nil. Backslashes
// are slashes, as Onyx reads them.
func resolveLink(base *url.URL, href string) *url.URL {
	href = strings.TrimSpace(strings.ReplaceAll(href, "\\", "/"))
	if href == "" {
		return nil
	}
	u, err := base.Parse(href)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil
	}
	u.Fragment, u.RawFragment = "", ""
	return u
}
