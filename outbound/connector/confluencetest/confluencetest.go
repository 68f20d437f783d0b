// Package confluencetest simulates the part of Confluence Cloud's REST API
// (v1, under /wiki/rest/api) that the Confluence connector calls, as
// Onyx v4.6.1's onyx_confluence.py and atlassian-python-api call it and as
// Atlassian's REST reference documents it: basic authentication (account
// email and API token) or a bearer personal access token (Data Center),
// and their 401; content search by CQL (/content/search, of the CQL forms
// the connector sends; any other is refused with Confluence's 400),
// paged by a cursor in _links.next; spaces (/space) paged by start, with
// their permissions (expand=permissions); users (/search/user) and the
// groups of each (/user/memberof); a user by account id (/user); a
// content's restrictions by operation (/content/{id}/restriction/byOperation).
// Every
// listing pages, at most PageSize results a page whatever limit asks. A
// first call can be answered 429 with Retry-After. Its content changes
// between runs (EditPage, DeletePage, Restrict). A draft page (Page.Draft)
// is found by no search, and a search that expands the ancestors'
// restrictions of a page under one answers 404, as Confluence Cloud does
// (CONFCLOUD-77618). It is for tests only.
package confluencetest

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// User is a Confluence account: its account id, display name and email
// ("" when the account shows none).
type User struct {
	AccountID, Name, Email string
	Groups                 []string
}

// Space is a Confluence space. Readers are the account ids and groups
// with its read permission; Anonymous says whether anonymous users may
// read it.
type Space struct {
	Key, Name    string
	ReaderUsers  []string
	ReaderGroups []string
	Anonymous    bool
	id           int64
}

// Page is a page (or, with Container set, a comment on the page of that
// id). Body is its storage-format XHTML. RestrictUsers and RestrictGroups
// are its read restrictions (account ids, group names). Parent is the id
// of its parent page, "" at the top of its space.
type Page struct {
	ID, Space, Title, Body string
	Parent                 string
	Container              string // A comment's or attachment's page.
	// An attachment has a media type and content; its title is its file
	// name.
	Attachment       bool
	MediaType        string
	Data             []byte
	Author           string // Account id.
	Labels           []string
	Created, Updated time.Time
	Version          int
	RestrictUsers    []string
	RestrictGroups   []string
	// Draft says that the page is a draft (its status "draft", say one
	// another user owns): no search finds it, a search that expands the
	// ancestors' restrictions of a page under it answers 404
	// (CONFCLOUD-77618), and its restrictions by operation are not found.
	Draft bool
}

// Server is the simulated Confluence.
type Server struct {
	*httptest.Server
	// PageSize is the most results a page of any listing holds.
	PageSize int
	// Cloud is whether it takes basic authentication (Cloud) or a bearer
	// personal access token (Data Center).
	Cloud bool
	// RestrictionsStatus, when not 0, is the status answered, with
	// Confluence's message, to a content search that expands read
	// restrictions (403: an account that may not read them) or its
	// results' ancestors' read restrictions (404: CONFCLOUD-77618 on an
	// ancestor it cannot see, whatever the ancestors are).
	RestrictionsStatus int
	// SpacePermissionsStatus, when not 0, is the status answered to a
	// read of a space's permissions (an account that is not the space's
	// admin).
	SpacePermissionsStatus int

	user, token string

	mu          sync.Mutex
	users       []User
	spaces      []*Space
	pages       []*Page
	nextID      int64
	limit429    int // 429s still to answer.
	answered429 int
	cqls        []string
	reads       []string // The ids of restriction/byOperation's reads.

	served atomic.Int64 // Nanoseconds spent answering.
}

// New starts a simulated Confluence Cloud that takes user and token as
// its one credential, with no content.
func New(t testing.TB, user, token string) *Server {
	s := &Server{PageSize: 2, Cloud: true, user: user, token: token, nextID: 1000}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// BaseURL is the wiki's base, as an admin enters it (wiki_base).
func (s *Server) BaseURL() string { return s.URL + "/wiki" }

// ServeTime is the time it spent answering so far.
func (s *Server) ServeTime() time.Duration { return time.Duration(s.served.Load()) }

// RateLimit makes it answer the next n calls 429 with Retry-After: 1.
func (s *Server) RateLimit(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limit429 = n
}

// Throttled returns how many calls it answered 429.
func (s *Server) Throttled() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.answered429
}

// RestrictionReads returns the content ids whose restrictions by
// operation were read so far, in order.
func (s *Server) RestrictionReads() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reads)
}

// CQLs returns the CQL of every content search so far, in order.
func (s *Server) CQLs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.cqls)
}

// AddUser adds an account.
func (s *Server) AddUser(u User) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users = append(s.users, u)
}

// AddSpace adds a space.
func (s *Server) AddSpace(sp Space) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	sp.id = s.nextID
	s.spaces = append(s.spaces, &sp)
}

// AddPage adds a page or a comment, giving it an id when it has none;
// it returns the id.
func (s *Server) AddPage(p Page) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p.ID == "" {
		s.nextID++
		p.ID = strconv.FormatInt(s.nextID, 10)
	}
	p.Version = cmp.Or(p.Version, 1)
	p.Updated = cmp.Or(p.Updated, p.Created)
	s.pages = append(s.pages, &p)
	return p.ID
}

// EditPage changes the page of id with edit, as an edit in Confluence
// does: a new version, last modified now.
func (s *Server) EditPage(id string, edit func(p *Page)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.pages {
		if p.ID == id {
			edit(p)
			p.Version++
			p.Updated = time.Now().UTC()
		}
	}
}

// DeletePage deletes the page of id (to the trash: no search finds it).
func (s *Server) DeletePage(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pages = slices.DeleteFunc(s.pages, func(p *Page) bool { return p.ID == id })
}

// Restrict sets the read restrictions of the page of id; it is no edit
// of the page (its last modification stays).
func (s *Server) Restrict(id string, users, groups []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.pages {
		if p.ID == id {
			p.RestrictUsers, p.RestrictGroups = users, groups
		}
	}
}

// Error is Confluence's error body.
type Error struct {
	StatusCode int            `json:"statusCode"`
	Data       map[string]any `json:"data"`
	Message    string         `json:"message"`
	Reason     string         `json:"reason"`
}

func writeError(w http.ResponseWriter, status int, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(Error{StatusCode: status, Message: message, Reason: http.StatusText(status),
		Data: map[string]any{"authorized": status != 401 && status != 403, "valid": true, "errors": []any{}, "successful": false}})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// UnauthorizedMessage is what Confluence answers a call whose credential
// it refuses.
const UnauthorizedMessage = "Client must be authenticated to access this resource."

func (s *Server) authorized(r *http.Request) bool {
	h := r.Header.Get("Authorization")
	if s.Cloud {
		want := "Basic " + base64.StdEncoding.EncodeToString([]byte(s.user+":"+s.token))
		return h == want
	}
	return h == "Bearer "+s.token
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	defer func() { s.served.Add(int64(time.Since(start))) }()
	if r.Method != http.MethodGet {
		writeError(w, http.StatusMethodNotAllowed, "method not allowed")
		return
	}
	if !s.authorized(r) {
		writeError(w, http.StatusUnauthorized, UnauthorizedMessage)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.limit429 > 0 {
		s.limit429--
		s.answered429++
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusTooManyRequests, "Rate limit exceeded.")
		return
	}
	path, ok := strings.CutPrefix(r.URL.Path, "/wiki/rest/api/")
	if !ok {
		writeError(w, http.StatusNotFound, "No content found at "+r.URL.Path)
		return
	}
	q := r.URL.Query()
	switch {
	case path == "content/search":
		s.search(w, q)
	case path == "space":
		s.spaceList(w, q)
	case strings.HasPrefix(path, "content/") && strings.HasSuffix(path, "/restriction/byOperation"):
		s.restrictionsByOperation(w, strings.TrimSuffix(strings.TrimPrefix(path, "content/"), "/restriction/byOperation"))
	case strings.HasPrefix(path, "content/") && strings.HasSuffix(path, "/download"):
		s.download(w, path)
	case strings.HasPrefix(path, "space/"):
		s.space(w, strings.TrimPrefix(path, "space/"), q)
	case path == "search/user":
		s.userSearch(w, q)
	case path == "user/memberof":
		s.memberOf(w, q)
	case path == "user":
		u := s.userByID(q.Get("accountId"))
		if u == nil {
			writeError(w, http.StatusNotFound, "No user found with accountId "+q.Get("accountId"))
			return
		}
		writeJSON(w, userJSON(u))
	default:
		writeError(w, http.StatusNotFound, "No content found at "+r.URL.Path)
	}
}

// limitStart reads limit and start, bounded by PageSize.
func (s *Server) limitStart(q url.Values) (limit, start int) {
	limit, err := strconv.Atoi(q.Get("limit"))
	if err != nil || limit <= 0 || limit > s.PageSize {
		limit = s.PageSize
	}
	start, _ = strconv.Atoi(q.Get("start"))
	return limit, max(start, 0)
}

// page returns the slice of all from start, at most limit long, and the
// _links of its page: next (a path under the wiki's context, with q and
// start or cursor moved on) while there is more.
func page[T any](s *Server, path string, all []T, q url.Values, cursor bool) ([]T, map[string]any) {
	limit, start := s.limitStart(q)
	if cursor {
		start, _ = strconv.Atoi(strings.TrimPrefix(q.Get("cursor"), "c"))
	}
	start = min(start, len(all))
	end := min(start+limit, len(all))
	links := map[string]any{"base": s.BaseURL(), "context": "/wiki"}
	if end < len(all) {
		next := url.Values{}
		for k, v := range q {
			next[k] = v
		}
		next.Set("limit", strconv.Itoa(limit))
		if cursor {
			next.Set("cursor", "c"+strconv.Itoa(end))
			next.Set("next", "true")
		} else {
			next.Set("start", strconv.Itoa(end))
		}
		links["next"] = "/rest/api/" + path + "?" + next.Encode()
	}
	return all[start:end], links
}

// The CQL the connector sends: pages (all, of a space, a page, a page
// and its descendants), comments and attachments of a page, each with
// labels to skip and a lastmodified window; and users.
var (
	cqlPage    = regexp.MustCompile(`^type=page(?: and space='([^']*)'| and id='(\d+)'| and \(ancestor='(\d+)' or id='(\d+)'\))?((?: and label not in \((?:'[^']*',?)+\))?)((?: and lastmodified [<>]= '\d{4}-\d\d-\d\d \d\d:\d\d')*) order by lastmodified asc$`)
	cqlChild   = regexp.MustCompile(`^type=(comment|attachment) and container='(\d+)'((?: and label not in \((?:'[^']*',?)+\))?)((?: and lastmodified [<>]= '\d{4}-\d\d-\d\d \d\d:\d\d')*)(?: order by lastmodified asc)?$`)
	cqlLabel   = regexp.MustCompile(`'([^']*)'`)
	cqlModTime = regexp.MustCompile(`lastmodified ([<>])= '([^']*)'`)
)

// match is a parsed CQL query.
type match struct {
	kind, space, id, ancestor, container string
	skip                                 []string
	from, to                             *time.Time
}

func parseCQL(cql string) (*match, bool) {
	m := &match{}
	var labels, window string
	if g := cqlPage.FindStringSubmatch(cql); g != nil {
		m.kind, m.space, m.id, labels, window = "page", g[1], g[2], g[5], g[6]
		if g[3] != "" {
			m.ancestor, m.id = g[3], g[4]
		}
	} else if g := cqlChild.FindStringSubmatch(cql); g != nil {
		m.kind, m.container, labels, window = g[1], g[2], g[3], g[4]
	} else {
		return nil, false
	}
	for _, l := range cqlLabel.FindAllStringSubmatch(labels, -1) {
		name, _ := url.PathUnescape(l[1])
		m.skip = append(m.skip, name)
	}
	for _, w := range cqlModTime.FindAllStringSubmatch(window, -1) {
		t, err := time.Parse("2006-01-02 15:04", w[2])
		if err != nil {
			return nil, false
		}
		if w[1] == ">" {
			m.from = &t
		} else {
			m.to = &t
		}
	}
	return m, true
}

func (s *Server) pageByID(id string) *Page {
	for _, p := range s.pages {
		if p.ID == id {
			return p
		}
	}
	return nil
}

// ancestors returns p's ancestors, root first.
func (s *Server) ancestors(p *Page) []*Page {
	var out []*Page
	for a := s.pageByID(p.Parent); a != nil; a = s.pageByID(a.Parent) {
		out = append([]*Page{a}, out...)
	}
	return out
}

func (s *Server) search(w http.ResponseWriter, q url.Values) {
	cql := q.Get("cql")
	s.cqls = append(s.cqls, cql)
	switch expand := q.Get("expand"); {
	case s.RestrictionsStatus == http.StatusForbidden && strings.Contains(expand, "restrictions"):
		writeError(w, s.RestrictionsStatus, "User not permitted to view restrictions of content")
		return
	case s.RestrictionsStatus != 0 && s.RestrictionsStatus != http.StatusForbidden && strings.Contains(expand, "ancestors.restrictions"):
		writeError(w, s.RestrictionsStatus, confcloud77618Message)
		return
	}
	m, ok := parseCQL(cql)
	if !ok {
		writeError(w, http.StatusBadRequest, "com.atlassian.confluence.api.service.exceptions.BadRequestException: Could not parse cql : "+cql)
		return
	}
	var found []*Page
	for _, p := range s.pages {
		if p.Draft {
			continue
		}
		switch m.kind {
		case "page":
			if p.Container != "" || (m.space != "" && p.Space != m.space) {
				continue
			}
			if m.ancestor != "" {
				if p.ID != m.id && !slices.ContainsFunc(s.ancestors(p), func(a *Page) bool { return a.ID == m.ancestor }) {
					continue
				}
			} else if m.id != "" && p.ID != m.id {
				continue
			}
		case "comment", "attachment":
			if p.Container != m.container || p.Attachment != (m.kind == "attachment") {
				continue
			}
		}
		if slices.ContainsFunc(p.Labels, func(l string) bool { return slices.Contains(m.skip, l) }) {
			continue
		}
		mod := p.Updated.Truncate(time.Minute)
		if (m.from != nil && mod.Before(*m.from)) || (m.to != nil && mod.After(*m.to)) {
			continue
		}
		found = append(found, p)
	}
	slices.SortStableFunc(found, func(a, b *Page) int { return a.Updated.Compare(b.Updated) })
	results, links := page(s, "content/search", found, q, true)
	expand := strings.Split(q.Get("expand"), ",")
	if expanded(expand, "ancestors.restrictions") {
		for _, p := range results {
			if slices.ContainsFunc(s.ancestors(p), func(a *Page) bool { return a.Draft }) {
				writeError(w, http.StatusNotFound, confcloud77618Message)
				return
			}
		}
	}
	out := make([]any, 0, len(results))
	for _, p := range results {
		out = append(out, s.contentJSON(p, expand))
	}
	limit, _ := s.limitStart(q)
	writeJSON(w, map[string]any{"results": out, "start": 0, "limit": limit, "size": len(out), "totalSize": len(found),
		"cqlQuery": cql, "searchDuration": 3, "_links": links})
}

// expanded reports whether expand asks for field or something under it.
func expanded(expand []string, field string) bool {
	return slices.ContainsFunc(expand, func(e string) bool { return e == field || strings.HasPrefix(e, field+".") })
}

// WebUI is the path of a page in the wiki's web interface, under the
// wiki's context, as Confluence Cloud gives it in _links.webui.
func WebUI(p *Page) string {
	if p.Attachment {
		return "/pages/viewpageattachments.action?pageId=" + p.Container + "&preview=" + url.QueryEscape("/"+p.Container+"/"+p.ID+"/"+p.Title)
	}
	if p.Container != "" {
		return "/spaces/" + p.Space + "/pages/" + p.Container + "?focusedCommentId=" + p.ID
	}
	return "/spaces/" + p.Space + "/pages/" + p.ID + "/" + strings.ReplaceAll(url.PathEscape(p.Title), "%20", "+")
}

func (s *Server) contentJSON(p *Page, expand []string) map[string]any {
	typ := "page"
	if p.Attachment {
		typ = "attachment"
	} else if p.Container != "" {
		typ = "comment"
	}
	c := map[string]any{"id": p.ID, "type": typ, "status": "current", "title": p.Title,
		"_links":      map[string]any{"webui": WebUI(p), "self": s.BaseURL() + "/rest/api/content/" + p.ID, "tinyui": "/x/" + p.ID},
		"_expandable": map[string]any{"container": "", "children": "", "descendants": ""}}
	if p.Attachment {
		c["_links"].(map[string]any)["download"] = "/download/attachments/" + p.Container + "/" + url.PathEscape(p.Title) + "?version=" + strconv.Itoa(p.Version) + "&api=v2"
		c["extensions"] = map[string]any{"mediaType": p.MediaType, "fileSize": len(p.Data)}
		c["metadata"] = map[string]any{"mediaType": p.MediaType}
	}
	sp := s.spaceByKey(p.Space)
	if expanded(expand, "space") && sp != nil {
		c["space"] = s.spaceJSON(sp)
	}
	if expanded(expand, "version") {
		v := map[string]any{"when": p.Updated.Format("2006-01-02T15:04:05.000Z"), "number": p.Version, "minorEdit": false}
		if u := s.userByID(p.Author); u != nil {
			v["by"] = userJSON(u)
		}
		c["version"] = v
	}
	if expanded(expand, "history") {
		h := map[string]any{"latest": true, "createdDate": p.Created.Format("2006-01-02T15:04:05.000Z")}
		if expanded(expand, "history.lastUpdated") {
			h["lastUpdated"] = map[string]any{"when": p.Updated.Format("2006-01-02T15:04:05.000Z"), "number": p.Version}
		}
		c["history"] = h
	}
	if expanded(expand, "body.storage") {
		c["body"] = map[string]any{"storage": map[string]any{"value": p.Body, "representation": "storage"}}
	}
	if expanded(expand, "metadata.labels") {
		labels := []any{}
		for i, l := range p.Labels {
			labels = append(labels, map[string]any{"prefix": "global", "name": l, "id": strconv.Itoa(i + 1), "label": l})
		}
		md, _ := c["metadata"].(map[string]any)
		if md == nil {
			md = map[string]any{}
		}
		md["labels"] = map[string]any{"results": labels, "start": 0, "limit": 200, "size": len(labels)}
		c["metadata"] = md
	}
	if expanded(expand, "restrictions") {
		c["restrictions"] = s.restrictionsJSON(p)
	}
	if expanded(expand, "ancestors") {
		as := []any{}
		for _, a := range s.ancestors(p) {
			aj := map[string]any{"id": a.ID, "type": "page", "status": "current", "title": a.Title,
				"_links": map[string]any{"webui": WebUI(a), "self": s.BaseURL() + "/rest/api/content/" + a.ID}}
			if expanded(expand, "ancestors.restrictions") {
				aj["restrictions"] = s.restrictionsJSON(a)
			}
			as = append(as, aj)
		}
		c["ancestors"] = as
	}
	return c
}

// download answers GET /content/{page}/child/attachment/{id}/download
// with the attachment's content.
func (s *Server) download(w http.ResponseWriter, path string) {
	parts := strings.Split(path, "/") // content, page, child, attachment, id, download
	if len(parts) == 6 && parts[2] == "child" && parts[3] == "attachment" {
		if p := s.pageByID(parts[4]); p != nil && p.Attachment && p.Container == parts[1] {
			w.Header().Set("Content-Type", p.MediaType)
			_, _ = w.Write(p.Data)
			return
		}
	}
	writeError(w, http.StatusNotFound, "No content found at /wiki/rest/api/"+path)
}

// confcloud77618Message is what Confluence Cloud answers, with a 404, a
// content search that expands the ancestors' restrictions of a page under
// a draft, outdated or trashed page (CONFCLOUD-77618, CONFCLOUD-76424).
const confcloud77618Message = "Cannot find content. Outdated version/old_draft/trashed? Cannot find content <ContentId>"

// restrictionsByOperation answers GET /content/{id}/restriction/byOperation
// as Atlassian's REST reference gives it: an entry an operation (read,
// update) with its users and groups (restrictions.user and
// restrictions.group are expanded by default); a draft or unknown content
// is not found.
func (s *Server) restrictionsByOperation(w http.ResponseWriter, id string) {
	s.reads = append(s.reads, id)
	p := s.pageByID(id)
	if p == nil || p.Draft {
		writeError(w, http.StatusNotFound, "No content found with id: ContentId{id="+id+"}")
		return
	}
	read := s.restrictionsJSON(p)["read"].(map[string]any)
	self := s.BaseURL() + "/rest/api/content/" + id + "/restriction/byOperation"
	read["_expandable"] = map[string]any{"content": "/rest/api/content/" + id}
	read["_links"] = map[string]any{"self": self + "/read"}
	update := map[string]any{"operation": "update", "restrictions": map[string]any{
		"user":  map[string]any{"results": []any{}, "start": 0, "limit": 200, "size": 0},
		"group": map[string]any{"results": []any{}, "start": 0, "limit": 200, "size": 0},
	}, "_expandable": map[string]any{"content": "/rest/api/content/" + id}, "_links": map[string]any{"self": self + "/update"}}
	writeJSON(w, map[string]any{"read": read, "update": update,
		"_links": map[string]any{"base": s.BaseURL(), "context": "/wiki", "self": self}})
}

func (s *Server) restrictionsJSON(p *Page) map[string]any {
	users := []any{}
	for _, id := range p.RestrictUsers {
		if u := s.userByID(id); u != nil {
			users = append(users, userJSON(u))
		}
	}
	groups := []any{}
	for _, g := range p.RestrictGroups {
		groups = append(groups, map[string]any{"type": "group", "name": g, "id": "g-" + g})
	}
	return map[string]any{"read": map[string]any{"operation": "read", "restrictions": map[string]any{
		"user":  map[string]any{"results": users, "start": 0, "limit": 200, "size": len(users)},
		"group": map[string]any{"results": groups, "start": 0, "limit": 200, "size": len(groups)},
	}}}
}

func (s *Server) userByID(id string) *User {
	for i := range s.users {
		if s.users[i].AccountID == id {
			return &s.users[i]
		}
	}
	return nil
}

func userJSON(u *User) map[string]any {
	j := map[string]any{"type": "known", "accountId": u.AccountID, "accountType": "atlassian", "publicName": u.Name, "displayName": u.Name,
		"isExternalCollaborator": false, "_links": map[string]any{"self": "/rest/api/user?accountId=" + u.AccountID}}
	if u.Email != "" {
		j["email"] = u.Email
	}
	return j
}

func (s *Server) spaceByKey(key string) *Space {
	for _, sp := range s.spaces {
		if sp.Key == key {
			return sp
		}
	}
	return nil
}

func (s *Server) spaceJSON(sp *Space) map[string]any {
	return map[string]any{"id": sp.id, "key": sp.Key, "name": sp.Name, "type": "global", "status": "current",
		"_links": map[string]any{"webui": "/spaces/" + sp.Key, "self": s.BaseURL() + "/rest/api/space/" + sp.Key}}
}

func (s *Server) spaceList(w http.ResponseWriter, q url.Values) {
	var all []*Space
	keys := q.Get("spaceKey")
	for _, sp := range s.spaces {
		if keys == "" || slices.Contains(strings.Split(keys, ","), sp.Key) {
			all = append(all, sp)
		}
	}
	results, links := page(s, "space", all, q, false)
	out := []any{}
	for _, sp := range results {
		out = append(out, s.spaceJSON(sp))
	}
	limit, start := s.limitStart(q)
	writeJSON(w, map[string]any{"results": out, "start": start, "limit": limit, "size": len(out), "_links": links})
}

// space answers GET /space/{key}, with its permissions when expanded as
// Confluence Cloud's v1 API gives them: one entry a subject and
// operation, and an entry without subjects for anonymous access.
func (s *Server) space(w http.ResponseWriter, key string, q url.Values) {
	sp := s.spaceByKey(key)
	if sp == nil {
		writeError(w, http.StatusNotFound, "No space with key : "+key)
		return
	}
	j := s.spaceJSON(sp)
	if expanded(strings.Split(q.Get("expand"), ","), "permissions") {
		if s.SpacePermissionsStatus != 0 {
			writeError(w, s.SpacePermissionsStatus, "User not permitted to view permissions of space : "+key)
			return
		}
		perms := []any{}
		n := 0
		add := func(subjects map[string]any, anonymous bool) {
			n++
			e := map[string]any{"id": n, "operation": map[string]any{"operation": "read", "targetType": "space"},
				"anonymousAccess": anonymous, "unlicensedAccess": false}
			if subjects != nil {
				e["subjects"] = subjects
			}
			perms = append(perms, e)
		}
		for _, id := range sp.ReaderUsers {
			if u := s.userByID(id); u != nil {
				add(map[string]any{"user": map[string]any{"results": []any{userJSON(u)}, "size": 1}}, false)
			}
		}
		for _, g := range sp.ReaderGroups {
			add(map[string]any{"group": map[string]any{"results": []any{map[string]any{"type": "group", "name": g, "id": "g-" + g}}, "size": 1}}, false)
		}
		if sp.Anonymous {
			add(nil, true)
		}
		j["permissions"] = perms
	}
	writeJSON(w, j)
}

func (s *Server) userSearch(w http.ResponseWriter, q url.Values) {
	if q.Get("cql") != "type=user" {
		writeError(w, http.StatusBadRequest, "com.atlassian.confluence.api.service.exceptions.BadRequestException: Could not parse cql : "+q.Get("cql"))
		return
	}
	results, links := page(s, "search/user", s.users, q, false)
	out := []any{}
	for i := range results {
		u := &results[i]
		out = append(out, map[string]any{"user": userJSON(u), "title": u.Name, "excerpt": "", "url": "/people/" + u.AccountID,
			"entityType": "user", "iconCssClass": "aui-icon content-type-profile", "lastModified": "2025-02-18T04:08:03.579Z", "score": 0.0})
	}
	limit, start := s.limitStart(q)
	writeJSON(w, map[string]any{"results": out, "start": start, "limit": limit, "size": len(out), "totalSize": len(s.users), "_links": links})
}

func (s *Server) memberOf(w http.ResponseWriter, q url.Values) {
	u := s.userByID(q.Get("accountId"))
	if u == nil {
		writeError(w, http.StatusNotFound, "No user found with accountId "+q.Get("accountId"))
		return
	}
	results, links := page(s, "user/memberof", u.Groups, q, false)
	out := []any{}
	for _, g := range results {
		out = append(out, map[string]any{"type": "group", "name": g, "id": "g-" + g})
	}
	limit, start := s.limitStart(q)
	writeJSON(w, map[string]any{"results": out, "start": start, "limit": limit, "size": len(out), "_links": links})
}

// String names the simulator in failures.
func (s *Server) String() string { return fmt.Sprintf("confluence simulator at %s", s.BaseURL()) }
