// Package githubtest simulates the part of GitHub's REST API that the
// GitHub connector calls (and PyGithub, the client of Onyx's, calls for
// it), as GitHub's API reference documents it: token authentication
// ("Authorization: token …" or "Bearer …") and its 401 "Bad credentials",
// repositories of an organization or a user, their pull requests and
// issues (filtered by state, sorted, paged), their collaborators and
// teams, teams' and organizations' members, users with their public
// emails, and rate limits (a 403 with X-RateLimit-Remaining 0 or a 429
// with Retry-After). Every listing pages with Link headers, at most
// PageSize items a page whatever per_page asks, so that a small fixture
// pages everywhere. Its content can change between runs. It is for tests
// only.
package githubtest

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// HTMLBase is the address of the simulated GitHub's web pages, in the
// html_url of what it serves: GitHub's own, so that the connector's
// document ids are those Onyx makes.
const HTMLBase = "https://github.com"

// User is a GitHub account. Email is its public email ("" when it shows
// none), which is all the REST API tells of a user's email.
type User struct {
	Login, Name, Email string
}

// Team is a team of an organization.
type Team struct {
	Slug, Name string
	Members    []string // Logins.
}

// Item is an issue or a pull request (Pull) of a repository.
type Item struct {
	Number           int
	Pull             bool
	Title, Body      string
	State            string // "open" or "closed".
	User             string // Its author's login.
	Assignees        []string
	Labels           []string
	Created, Updated time.Time
	Closed           *time.Time
	ClosedBy         string // A login, for a closed issue.
	Merged           bool   // A pull request's.
	Commits          int    // A pull request's.
	ChangedFiles     int    // A pull request's.
	id               int64
}

// Repo is a repository.
type Repo struct {
	Owner, Name string
	// Visibility is "public", "private" or "internal" (an
	// organization's).
	Visibility    string
	Collaborators []string // Logins.
	Teams         []string // Slugs of its organization's teams.
	PushedAt      time.Time
	// Files are the files of its default branch, main, by path; nil or
	// empty: the repository is empty (GitHub answers 409 for its tree).
	Files map[string]string
	id    int64
	items []*Item
}

// FullName is owner/name.
func (r *Repo) FullName() string { return r.Owner + "/" + r.Name }

// ID is the repository's id.
func (r *Repo) ID() int64 { return r.id }

// Server is a simulated GitHub API, served on 127.0.0.1 until the test
// ends.
type Server struct {
	*httptest.Server
	// Token is the access token it takes.
	Token string
	// PageSize is the most items a page of a listing has.
	PageSize int

	mu       sync.Mutex
	users    map[string]*User
	orgs     map[string]*org
	repos    []*Repo
	nextID   int64
	limited  []int    // Statuses of the next answers: rate limited (403 or 429).
	forbid   []string // Path suffixes answered 403, as to a token without the permission.
	requests []string
	serving  atomic.Int64 // Nanoseconds spent answering.
}

// org is an organization.
type org struct {
	login   string
	id      int64
	members []string
	teams   []*team
}

type team struct {
	Team
	id int64
}

// New starts a simulated GitHub that takes token, with pages of at most 2
// items.
func New(tb testing.TB, token string) *Server {
	s := &Server{Token: token, PageSize: 2, users: map[string]*User{}, orgs: map[string]*org{}, nextID: 1000}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	tb.Cleanup(s.Close)
	return s
}

// BaseURL is the API's base, as QUARRY_CONNECTOR_ENDPOINTS points GitHub
// at it. The API answers under URL/api/v3/ too, as GitHub Enterprise
// Server's.
func (s *Server) BaseURL() string { return s.URL + "/" }

// ServeTime is how long the simulator spent answering, all requests
// together.
func (s *Server) ServeTime() time.Duration { return time.Duration(s.serving.Load()) }

// Requests returns the requests it answered ("GET /path?query"), in
// order, and forgets them.
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.requests
	s.requests = nil
	return r
}

// Forbid makes every request whose path ends with suffix answered 403
// "Resource not accessible by personal access token", as GitHub answers a
// fine-grained token without the permission.
func (s *Server) Forbid(suffix string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forbid = append(s.forbid, suffix)
}

// RateLimit makes the next answer a rate limit with status 403 (the
// primary limit: X-RateLimit-Remaining 0, X-RateLimit-Reset a second
// ahead) or 429 (a secondary limit: Retry-After 1).
func (s *Server) RateLimit(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limited = append(s.limited, status)
}

func (s *Server) id() int64 { s.nextID++; return s.nextID }

// AddUser adds users.
func (s *Server) AddUser(users ...User) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range users {
		if u.Login == "" {
			panic("a user needs a login")
		}
		s.users[strings.ToLower(u.Login)] = &u
	}
}

// SetUser changes a user's name and email.
func (s *Server) SetUser(u User) { s.AddUser(u) }

// AddOrg adds an organization with its members (logins of users added).
func (s *Server) AddOrg(login string, members ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.orgs[strings.ToLower(login)] = &org{login: login, id: s.id(), members: members}
}

// SetTeam adds a team to an organization, or changes its name and
// members.
func (s *Server) SetTeam(orgLogin string, t Team) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.orgs[strings.ToLower(orgLogin)]
	for _, old := range o.teams {
		if old.Slug == t.Slug {
			old.Team = t
			return
		}
	}
	o.teams = append(o.teams, &team{Team: t, id: s.id()})
}

// AddRepo adds a repository, and returns it.
func (s *Server) AddRepo(r Repo) *Repo {
	s.mu.Lock()
	defer s.mu.Unlock()
	r.id = s.id()
	if r.PushedAt.IsZero() {
		r.PushedAt = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	s.repos = append(s.repos, &r)
	return &r
}

// EditRepo changes a repository (its visibility, collaborators, teams,
// files).
func (s *Server) EditRepo(fullName string, edit func(r *Repo)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	edit(s.repo(fullName))
}

// AddItem adds an issue or a pull request to a repository and returns its
// number.
func (s *Server) AddItem(fullName string, it Item) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repo(fullName)
	it.Number = len(r.items) + 1
	for _, old := range r.items {
		it.Number = max(it.Number, old.Number+1)
	}
	it.id = s.id()
	if it.State == "" {
		it.State = "open"
	}
	r.items = append(r.items, &it)
	return it.Number
}

// EditItem changes an issue or a pull request.
func (s *Server) EditItem(fullName string, number int, edit func(it *Item)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	edit(s.item(s.repo(fullName), number))
}

// DeleteItem deletes an issue (GitHub lets admins delete issues).
func (s *Server) DeleteItem(fullName string, number int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repo(fullName)
	r.items = slices.DeleteFunc(r.items, func(it *Item) bool { return it.Number == number })
}

// Items returns a copy of a repository's issues and pull requests, by
// number.
func (s *Server) Items(fullName string) []Item {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Item
	for _, it := range s.repo(fullName).items {
		out = append(out, *it)
	}
	slices.SortFunc(out, func(a, b Item) int { return a.Number - b.Number })
	return out
}

// Repos returns a copy of the repositories.
func (s *Server) Repos() []Repo {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Repo
	for _, r := range s.repos {
		c := *r
		c.items = nil
		out = append(out, c)
	}
	return out
}

// User returns a user.
func (s *Server) User(login string) User {
	s.mu.Lock()
	defer s.mu.Unlock()
	return *s.users[strings.ToLower(login)]
}

// OrgID returns an organization's id.
func (s *Server) OrgID(login string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.orgs[strings.ToLower(login)].id
}

// OrgMembers returns an organization's members.
func (s *Server) OrgMembers(login string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.orgs[strings.ToLower(login)].members)
}

// Team returns a team of an organization.
func (s *Server) Team(orgLogin, slug string) Team {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.orgs[strings.ToLower(orgLogin)].teams {
		if t.Slug == slug {
			return t.Team
		}
	}
	panic("no team " + slug)
}

func (s *Server) repo(fullName string) *Repo {
	for _, r := range s.repos {
		if strings.EqualFold(r.FullName(), fullName) {
			return r
		}
	}
	panic("no repository " + fullName)
}

func (s *Server) item(r *Repo, number int) *Item {
	for _, it := range r.items {
		if it.Number == number {
			return it
		}
	}
	panic(fmt.Sprintf("no item %d in %s", number, r.FullName()))
}

// ---- Serving.

// answer is what a handler answers: a status and a JSON body, or a
// listing to page (list, or count items made by item, only those of the
// page asked for).
type answer struct {
	status int
	body   any
	list   []any
	count  int
	item   func(i int) any
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	defer func() { s.serving.Add(int64(time.Since(start))) }()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r.Method+" "+r.URL.RequestURI())
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-GitHub-Media-Type", "github.v3; format=json")
	reset := strconv.FormatInt(time.Now().Add(time.Second).Unix()+1, 10)
	auth := r.Header.Get("Authorization")
	scheme, token, _ := strings.Cut(auth, " ")
	switch {
	case auth == "":
	case (strings.EqualFold(scheme, "token") || strings.EqualFold(scheme, "bearer")) && token == s.Token:
	default:
		w.WriteHeader(http.StatusUnauthorized)
		writeJSON(w, map[string]any{"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest", "status": "401"})
		return
	}
	if len(s.limited) > 0 {
		status := s.limited[0]
		s.limited = s.limited[1:]
		w.Header().Set("X-RateLimit-Limit", "5000")
		w.Header().Set("X-RateLimit-Used", "5000")
		w.Header().Set("X-RateLimit-Resource", "core")
		if status == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", "1")
			w.Header().Set("X-RateLimit-Remaining", "4000")
			w.Header().Set("X-RateLimit-Reset", reset)
			w.WriteHeader(status)
			writeJSON(w, map[string]any{"message": "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
				"documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits", "status": "429"})
			return
		}
		w.Header().Set("X-RateLimit-Remaining", "0")
		w.Header().Set("X-RateLimit-Reset", reset)
		w.WriteHeader(http.StatusForbidden)
		writeJSON(w, map[string]any{"message": "API rate limit exceeded for user ID 1.",
			"documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-primary-rate-limits", "status": "403"})
		return
	}
	w.Header().Set("X-RateLimit-Limit", "5000")
	w.Header().Set("X-RateLimit-Remaining", "4999")
	w.Header().Set("X-RateLimit-Reset", reset)
	w.Header().Set("X-RateLimit-Used", "1")
	w.Header().Set("X-RateLimit-Resource", "core")
	if r.Method != http.MethodGet {
		s.notFound(w)
		return
	}
	for _, suffix := range s.forbid {
		if strings.HasSuffix(r.URL.Path, suffix) {
			w.WriteHeader(http.StatusForbidden)
			writeJSON(w, map[string]any{"message": "Resource not accessible by personal access token",
				"documentation_url": "https://docs.github.com/rest", "status": "403"})
			return
		}
	}
	a := s.route(r, auth != "")
	switch {
	case a == nil:
		s.notFound(w)
	case a.list != nil:
		s.page(w, r, len(a.list), func(i int) any { return a.list[i] })
	case a.item != nil:
		s.page(w, r, a.count, a.item)
	case a.status == http.StatusNoContent:
		w.WriteHeader(http.StatusNoContent)
	default:
		w.WriteHeader(cmp.Or(a.status, http.StatusOK))
		writeJSON(w, a.body)
	}
}

func (s *Server) notFound(w http.ResponseWriter) {
	w.WriteHeader(http.StatusNotFound)
	writeJSON(w, map[string]any{"message": "Not Found", "documentation_url": "https://docs.github.com/rest", "status": "404"})
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	w.Write(b)
}

// page answers one page of a listing of n items: page (from 1) of
// per_page items (30 by default, at most 100 and PageSize), with GitHub's
// Link header.
func (s *Server) page(w http.ResponseWriter, r *http.Request, n int, item func(i int) any) {
	q := r.URL.Query()
	per, err := strconv.Atoi(q.Get("per_page"))
	if err != nil || per <= 0 {
		per = 30
	}
	per = min(per, 100, s.PageSize)
	page, err := strconv.Atoi(q.Get("page"))
	if err != nil || page <= 0 {
		page = 1
	}
	last := max(1, (n+per-1)/per)
	link := func(p int, rel string) string {
		u := *r.URL
		v := u.Query()
		v.Set("page", strconv.Itoa(p))
		u.RawQuery = v.Encode()
		return fmt.Sprintf("<%s%s>; rel=%q", s.URL, u.RequestURI(), rel)
	}
	var links []string
	if page > 1 {
		links = append(links, link(page-1, "prev"))
	}
	if page < last {
		links = append(links, link(page+1, "next"), link(last, "last"))
	}
	if page > 1 {
		links = append(links, link(1, "first"))
	}
	if len(links) > 0 {
		w.Header().Set("Link", strings.Join(links, ", "))
	}
	from := min((page-1)*per, n)
	to := min(from+per, n)
	out := []any{}
	for i := from; i < to; i++ {
		out = append(out, item(i))
	}
	writeJSON(w, out)
}

// route answers a GET; authed says whether the request carried the
// token (an anonymous one sees public repositories only).
func (s *Server) route(r *http.Request, authed bool) *answer {
	// GitHub Enterprise Server's API is under /api/v3.
	parts := strings.Split(strings.Trim(strings.TrimPrefix(r.URL.Path, "/api/v3"), "/"), "/")
	q := r.URL.Query()
	visible := func(rp *Repo) bool { return authed || rp.Visibility == "public" }
	repoAt := func(owner, name string) *Repo {
		for _, rp := range s.repos {
			if strings.EqualFold(rp.Owner, owner) && strings.EqualFold(rp.Name, name) && visible(rp) {
				return rp
			}
		}
		return nil
	}
	match := func(pattern string) bool {
		p := strings.Split(pattern, "/")
		if len(p) != len(parts) {
			return false
		}
		for i := range p {
			if !strings.HasPrefix(p[i], "{") && p[i] != parts[i] {
				return false
			}
		}
		return true
	}
	switch {
	case match("rate_limit"):
		core := map[string]any{"limit": 5000, "remaining": 4999, "reset": time.Now().Add(time.Hour).Unix(), "used": 1, "resource": "core"}
		return &answer{body: map[string]any{"resources": map[string]any{"core": core}, "rate": core}}
	case match("users/{login}"):
		if u := s.users[strings.ToLower(parts[1])]; u != nil {
			return &answer{body: s.userJSON(u, true)}
		}
		if o := s.orgs[strings.ToLower(parts[1])]; o != nil {
			return &answer{body: s.orgJSON(o, "Organization")}
		}
	case match("orgs/{org}"):
		if o := s.orgs[strings.ToLower(parts[1])]; o != nil {
			return &answer{body: s.orgJSON(o, "")}
		}
	case match("orgs/{org}/repos"), match("users/{login}/repos"):
		var list []any
		for _, rp := range s.repos {
			if strings.EqualFold(rp.Owner, parts[1]) && visible(rp) {
				list = append(list, s.repoJSON(rp))
			}
		}
		if list == nil && s.orgs[strings.ToLower(parts[1])] == nil && s.users[strings.ToLower(parts[1])] == nil {
			return nil
		}
		if list == nil {
			list = []any{}
		}
		return &answer{list: list}
	case match("orgs/{org}/members"):
		o := s.orgs[strings.ToLower(parts[1])]
		if o == nil || !authed {
			return nil
		}
		return &answer{list: s.usersJSON(o.members)}
	case match("orgs/{org}/members/{login}"):
		o := s.orgs[strings.ToLower(parts[1])]
		if o == nil {
			return nil
		}
		if slices.ContainsFunc(o.members, func(m string) bool { return strings.EqualFold(m, parts[3]) }) {
			return &answer{status: http.StatusNoContent}
		}
		return &answer{status: http.StatusNotFound, body: map[string]any{"message": "User does not exist or is not a member of the organization",
			"documentation_url": "https://docs.github.com/rest/orgs/members#check-organization-membership-for-a-user", "status": "404"}}
	case match("orgs/{org}/teams/{slug}/members"):
		if o := s.orgs[strings.ToLower(parts[1])]; o != nil && authed {
			for _, t := range o.teams {
				if t.Slug == parts[3] {
					return &answer{list: s.usersJSON(t.Members)}
				}
			}
		}
	case match("organizations/{org_id}/team/{team_id}/members"):
		for _, o := range s.orgs {
			for _, t := range o.teams {
				if strconv.FormatInt(o.id, 10) == parts[1] && strconv.FormatInt(t.id, 10) == parts[3] && authed {
					return &answer{list: s.usersJSON(t.Members)}
				}
			}
		}
	case match("repositories/{id}"):
		for _, rp := range s.repos {
			if strconv.FormatInt(rp.id, 10) == parts[1] && visible(rp) {
				return &answer{body: s.repoJSON(rp)}
			}
		}
	case match("repos/{owner}/{repo}"):
		if rp := repoAt(parts[1], parts[2]); rp != nil {
			return &answer{body: s.repoJSON(rp)}
		}
	case match("repos/{owner}/{repo}/pulls"), match("repos/{owner}/{repo}/issues"):
		rp := repoAt(parts[1], parts[2])
		if rp == nil {
			return nil
		}
		pulls := parts[3] == "pulls"
		state := cmp.Or(q.Get("state"), "open")
		sortBy := cmp.Or(q.Get("sort"), "created")
		dir := q.Get("direction")
		if dir == "" {
			dir = "desc"
			if pulls && sortBy != "created" {
				dir = "asc" // GitHub's default for pull requests sorted otherwise.
			}
		}
		if !slices.Contains([]string{"open", "closed", "all"}, state) || !slices.Contains([]string{"created", "updated"}, sortBy) ||
			!slices.Contains([]string{"asc", "desc"}, dir) {
			return &answer{status: http.StatusUnprocessableEntity, body: map[string]any{"message": "Validation Failed",
				"documentation_url": "https://docs.github.com/rest", "status": "422"}}
		}
		var items []*Item
		for _, it := range rp.items {
			if (!pulls || it.Pull) && (state == "all" || it.State == state) {
				items = append(items, it)
			}
		}
		slices.SortStableFunc(items, func(a, b *Item) int {
			ta, tb := a.Created, b.Created
			if sortBy == "updated" {
				ta, tb = a.Updated, b.Updated
			}
			c := cmp.Or(ta.Compare(tb), a.Number-b.Number)
			if dir == "desc" {
				return -c
			}
			return c
		})
		return &answer{count: len(items), item: func(i int) any {
			if pulls {
				return s.pullJSON(rp, items[i], false)
			}
			return s.issueJSON(rp, items[i], false)
		}}
	case match("repos/{owner}/{repo}/pulls/{number}"), match("repos/{owner}/{repo}/issues/{number}"):
		rp := repoAt(parts[1], parts[2])
		if rp == nil {
			return nil
		}
		for _, it := range rp.items {
			if strconv.Itoa(it.Number) != parts[4] {
				continue
			}
			if parts[3] == "issues" {
				return &answer{body: s.issueJSON(rp, it, true)}
			}
			if it.Pull {
				return &answer{body: s.pullJSON(rp, it, true)}
			}
		}
	case len(parts) >= 5 && parts[0] == "repos" && parts[3] == "contents":
		rp := repoAt(parts[1], parts[2])
		path := strings.Join(parts[4:], "/")
		content, ok := "", false
		if rp != nil && cmp.Or(q.Get("ref"), "main") == "main" {
			content, ok = rp.Files[path]
		}
		if !ok {
			return nil
		}
		name := parts[len(parts)-1]
		enc := base64.StdEncoding.EncodeToString([]byte(content))
		var lines []string // GitHub wraps the base64 at 60 characters.
		for len(enc) > 60 {
			lines, enc = append(lines, enc[:60]), enc[60:]
		}
		lines = append(lines, enc)
		return &answer{body: map[string]any{"type": "file", "encoding": "base64", "size": len(content), "name": name, "path": path,
			"content": strings.Join(lines, "\n") + "\n", "sha": blobSHA(content),
			"url":          s.api("/repos/%s/contents/%s?ref=main", rp.FullName(), path),
			"html_url":     fmt.Sprintf("%s/%s/blob/main/%s", HTMLBase, rp.FullName(), path),
			"download_url": fmt.Sprintf("https://raw.githubusercontent.com/%s/main/%s", rp.FullName(), path)}}
	case match("repos/{owner}/{repo}/git/trees/{sha}"):
		rp := repoAt(parts[1], parts[2])
		if rp == nil {
			return nil
		}
		if len(rp.Files) == 0 {
			return &answer{status: http.StatusConflict, body: map[string]any{"message": "Git Repository is empty.",
				"documentation_url": "https://docs.github.com/rest/git/trees#get-a-tree", "status": "409"}}
		}
		if parts[5] != "main" && parts[5] != treeSHA(rp) {
			return nil
		}
		recursive := q.Get("recursive") != ""
		dirs := map[string]bool{}
		var entries []map[string]any
		for path, content := range rp.Files {
			if !recursive && strings.Contains(path, "/") {
				continue
			}
			entries = append(entries, map[string]any{"path": path, "mode": "100644", "type": "blob", "sha": blobSHA(content), "size": len(content),
				"url": s.api("/repos/%s/git/blobs/%s", rp.FullName(), blobSHA(content))})
			for d := path; strings.Contains(d, "/"); {
				d = d[:strings.LastIndex(d, "/")]
				if !dirs[d] && (recursive || !strings.Contains(d, "/")) {
					dirs[d] = true
					entries = append(entries, map[string]any{"path": d, "mode": "040000", "type": "tree", "sha": blobSHA(d),
						"url": s.api("/repos/%s/git/trees/%s", rp.FullName(), blobSHA(d))})
				}
			}
		}
		slices.SortFunc(entries, func(a, b map[string]any) int { return strings.Compare(a["path"].(string), b["path"].(string)) })
		return &answer{body: map[string]any{"sha": treeSHA(rp), "url": s.api("/repos/%s/git/trees/%s", rp.FullName(), treeSHA(rp)),
			"tree": entries, "truncated": false}}
	case match("repos/{owner}/{repo}/collaborators"):
		if rp := repoAt(parts[1], parts[2]); rp != nil && authed {
			return &answer{list: s.usersJSON(rp.Collaborators)}
		}
	case match("repos/{owner}/{repo}/teams"):
		rp := repoAt(parts[1], parts[2])
		if rp == nil || !authed {
			return nil
		}
		list := []any{}
		if o := s.orgs[strings.ToLower(rp.Owner)]; o != nil {
			for _, t := range o.teams {
				if slices.Contains(rp.Teams, t.Slug) {
					list = append(list, s.teamJSON(o, t))
				}
			}
		}
		return &answer{list: list}
	}
	return nil
}

// ---- GitHub's JSON.

func (s *Server) api(path string, a ...any) string {
	return s.URL + fmt.Sprintf(path, a...)
}

// userJSON is a user as GitHub gives it: full (name and email, the
// "Get a user" answer) or simple (in listings).
func (s *Server) userJSON(u *User, full bool) map[string]any {
	m := map[string]any{
		"login": u.Login, "id": s.userID(u.Login), "node_id": "U_" + u.Login, "type": "User", "site_admin": false,
		"url": s.api("/users/%s", u.Login), "html_url": HTMLBase + "/" + u.Login,
		"avatar_url": "https://avatars.githubusercontent.com/u/1", "gravatar_id": "",
	}
	if full {
		m["name"] = nullable(u.Name)
		m["email"] = nullable(u.Email)
		m["company"], m["blog"], m["location"], m["bio"] = nil, "", nil, nil
		m["public_repos"], m["followers"], m["following"] = 0, 0, 0
		m["created_at"], m["updated_at"] = "2020-01-01T00:00:00Z", "2020-01-01T00:00:00Z"
	}
	return m
}

// userID is a user's id: stable, from its login.
func (s *Server) userID(login string) int64 {
	var h int64 = 7
	for _, c := range strings.ToLower(login) {
		h = (h*31 + int64(c)) % 1_000_000_007
	}
	return h
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func (s *Server) usersJSON(logins []string) []any {
	list := []any{}
	for _, l := range logins {
		if u := s.users[strings.ToLower(l)]; u != nil {
			list = append(list, s.userJSON(u, false))
		}
	}
	return list
}

func (s *Server) userOrNil(login string) any {
	if u := s.users[strings.ToLower(login)]; u != nil {
		return s.userJSON(u, false)
	}
	return nil
}

func (s *Server) orgJSON(o *org, typ string) map[string]any {
	m := map[string]any{"login": o.login, "id": o.id, "node_id": "O_" + o.login, "url": s.api("/orgs/%s", o.login),
		"repos_url": s.api("/orgs/%s/repos", o.login), "members_url": s.api("/orgs/%s/members{/member}", o.login),
		"avatar_url": "https://avatars.githubusercontent.com/u/2", "description": nil}
	if typ != "" {
		m["type"] = typ
	} else {
		m["html_url"] = HTMLBase + "/" + o.login
		m["type"] = "Organization"
	}
	return m
}

func (s *Server) repoJSON(r *Repo) map[string]any {
	owner := map[string]any{"login": r.Owner, "type": "User", "url": s.api("/users/%s", r.Owner), "html_url": HTMLBase + "/" + r.Owner}
	o := s.orgs[strings.ToLower(r.Owner)]
	if o != nil {
		owner["type"], owner["id"] = "Organization", o.id
	} else {
		owner["id"] = s.userID(r.Owner)
	}
	m := map[string]any{
		"id": r.id, "node_id": fmt.Sprintf("R_%d", r.id), "name": r.Name, "full_name": r.FullName(), "owner": owner,
		"private": r.Visibility != "public", "visibility": r.Visibility,
		"html_url": HTMLBase + "/" + r.FullName(), "url": s.api("/repos/%s", r.FullName()),
		"description": nil, "fork": false, "default_branch": "main", "archived": false, "disabled": false,
		"created_at": "2020-01-01T00:00:00Z", "updated_at": "2024-01-01T00:00:00Z", "pushed_at": r.PushedAt.UTC().Format(time.RFC3339),
		"has_issues": true, "open_issues_count": 0,
		"pulls_url":         s.api("/repos/%s/pulls{/number}", r.FullName()),
		"issues_url":        s.api("/repos/%s/issues{/number}", r.FullName()),
		"collaborators_url": s.api("/repos/%s/collaborators{/collaborator}", r.FullName()),
		"teams_url":         s.api("/repos/%s/teams", r.FullName()),
	}
	if o != nil {
		m["organization"] = s.orgJSON(o, "Organization")
	}
	return m
}

// blobSHA is a stand-in for a git object's SHA-1: 40 hex digits from s.
func blobSHA(s string) string {
	var h uint64 = 14695981039346656037
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * 1099511628211
	}
	return fmt.Sprintf("%016x%016x%08x", h, h*31, uint32(h>>7))
}

// treeSHA is the SHA of a repository's tree: it changes with its files.
func treeSHA(r *Repo) string {
	paths := slices.Sorted(maps.Keys(r.Files))
	var b strings.Builder
	for _, p := range paths {
		b.WriteString(p + "\x00" + r.Files[p] + "\x00")
	}
	return blobSHA(b.String())
}

// stamp is a time as GitHub writes it, or null.
func stamp(t *time.Time) any {
	if t == nil || t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}

func (s *Server) labelsJSON(it *Item) []any {
	list := []any{}
	for i, l := range it.Labels {
		list = append(list, map[string]any{"id": i + 1, "name": l, "color": "ededed", "default": false, "description": nil})
	}
	return list
}

// issueJSON is an issue (or a pull request as the issues API lists it,
// with its pull_request key) as a listing gives it, or as "Get an issue"
// does (full: with closed_by).
func (s *Server) issueJSON(r *Repo, it *Item, full bool) map[string]any {
	kind := "issues"
	if it.Pull {
		kind = "pull"
	}
	assignees := s.usersJSON(it.Assignees)
	var assignee any
	if len(assignees) > 0 {
		assignee = assignees[0]
	}
	m := map[string]any{
		"id": it.id, "node_id": fmt.Sprintf("I_%d", it.id), "number": it.Number, "title": it.Title, "body": nullable(it.Body),
		"state": it.State, "locked": false, "user": s.userOrNil(it.User), "assignee": assignee, "assignees": assignees,
		"labels": s.labelsJSON(it), "comments": 0, "milestone": nil, "author_association": "MEMBER",
		"created_at": stamp(&it.Created), "updated_at": stamp(&it.Updated), "closed_at": stamp(it.Closed),
		"url":            s.api("/repos/%s/issues/%d", r.FullName(), it.Number),
		"repository_url": s.api("/repos/%s", r.FullName()),
		"html_url":       fmt.Sprintf("%s/%s/%s/%d", HTMLBase, r.FullName(), kind, it.Number),
	}
	if it.Pull {
		m["pull_request"] = map[string]any{"url": s.api("/repos/%s/pulls/%d", r.FullName(), it.Number),
			"html_url": fmt.Sprintf("%s/%s/pull/%d", HTMLBase, r.FullName(), it.Number), "merged_at": nil}
	}
	if full {
		m["closed_by"] = nil
		if it.State == "closed" && it.ClosedBy != "" {
			m["closed_by"] = s.userOrNil(it.ClosedBy)
		}
	}
	return m
}

// pullJSON is a pull request as a listing gives it, or as "Get a pull
// request" does (full: with merged, commits, changed_files).
func (s *Server) pullJSON(r *Repo, it *Item, full bool) map[string]any {
	assignees := s.usersJSON(it.Assignees)
	var assignee any
	if len(assignees) > 0 {
		assignee = assignees[0]
	}
	repo := s.repoJSON(r)
	var merged any
	if it.Merged && it.Closed != nil {
		merged = stamp(it.Closed)
	}
	m := map[string]any{
		"id": it.id, "node_id": fmt.Sprintf("PR_%d", it.id), "number": it.Number, "title": it.Title, "body": nullable(it.Body),
		"state": it.State, "locked": false, "draft": false, "user": s.userOrNil(it.User), "assignee": assignee, "assignees": assignees,
		"labels": s.labelsJSON(it), "milestone": nil, "author_association": "MEMBER",
		"created_at": stamp(&it.Created), "updated_at": stamp(&it.Updated), "closed_at": stamp(it.Closed), "merged_at": merged,
		"url":         s.api("/repos/%s/pulls/%d", r.FullName(), it.Number),
		"issue_url":   s.api("/repos/%s/issues/%d", r.FullName(), it.Number),
		"html_url":    fmt.Sprintf("%s/%s/pull/%d", HTMLBase, r.FullName(), it.Number),
		"head":        map[string]any{"label": r.Owner + ":feature", "ref": "feature", "sha": "0000000000000000000000000000000000000001", "repo": repo},
		"base":        map[string]any{"label": r.Owner + ":main", "ref": "main", "sha": "0000000000000000000000000000000000000000", "repo": repo},
		"commits_url": s.api("/repos/%s/pulls/%d/commits", r.FullName(), it.Number),
	}
	if full {
		m["merged"] = it.Merged
		m["mergeable"] = nil
		m["commits"] = it.Commits
		m["changed_files"] = it.ChangedFiles
		m["additions"], m["deletions"], m["comments"], m["review_comments"] = 0, 0, 0, 0
		m["merged_by"] = nil
	}
	return m
}

func (s *Server) teamJSON(o *org, t *team) map[string]any {
	return map[string]any{
		"id": t.id, "node_id": fmt.Sprintf("T_%d", t.id), "name": t.Name, "slug": t.Slug, "description": nil,
		"privacy": "closed", "permission": "pull", "parent": nil,
		"url":              s.api("/organizations/%d/team/%d", o.id, t.id),
		"html_url":         fmt.Sprintf("%s/orgs/%s/teams/%s", HTMLBase, o.login, t.Slug),
		"members_url":      s.api("/organizations/%d/team/%d/members{/member}", o.id, t.id),
		"repositories_url": s.api("/organizations/%d/team/%d/repos", o.id, t.id),
	}
}

// Created is the time of NewFixture's items: each was created some hours
// after it (its Created), and last updated later (its Updated).
var Created = time.Date(2024, 3, 1, 9, 0, 0, 0, time.UTC)

// NewFixture starts a simulated GitHub with the organization test-org:
// members alice and bob (emails alice@example.com, bob@example.com), the
// outside collaborator carol (carol@example.com) and dave (no public
// email); teams core (alice, bob) and docs (bob); repositories
// public-repo (public: three issues, one closed by bob, two pull
// requests, one merged; six files, among them a README, a guide in docs/,
// a LICENSE, a Go file, a README under node_modules/ and a notes.txt that
// is not text), private-repo (private: collaborators alice, carol and
// dave, team core; two issues, one pull request; a README) and
// internal-repo (internal: one issue; empty).
func NewFixture(tb testing.TB, token string) *Server {
	s := New(tb, token)
	s.AddUser(User{Login: "alice", Name: "Alice Liddell", Email: "alice@example.com"},
		User{Login: "bob", Name: "Bob O'Brien", Email: "bob@example.com"},
		User{Login: "carol", Name: "", Email: "carol@example.com"},
		User{Login: "dave", Name: "Dave"})
	s.AddOrg("test-org", "alice", "bob")
	s.SetTeam("test-org", Team{Slug: "core", Name: "Core", Members: []string{"alice", "bob"}})
	s.SetTeam("test-org", Team{Slug: "docs", Name: "Docs", Members: []string{"bob"}})
	s.AddRepo(Repo{Owner: "test-org", Name: "public-repo", Visibility: "public", Collaborators: []string{"alice", "bob"}, Teams: []string{"docs"},
		Files: map[string]string{"README.md": "# Public repo\nIt does things.\n", "docs/guide.md": "A guide to it.\n", "LICENSE": "MIT License\n",
			"src/main.go": "package main\n", "node_modules/dep/README.md": "A dependency.\n", "notes.txt": "\x00\x01\x02 not text"}})
	s.AddRepo(Repo{Owner: "test-org", Name: "private-repo", Visibility: "private", Collaborators: []string{"alice", "carol", "dave"}, Teams: []string{"core"},
		Files: map[string]string{"README.md": "Secret plans.\n"}})
	s.AddRepo(Repo{Owner: "test-org", Name: "internal-repo", Visibility: "internal", Collaborators: []string{"alice"}})
	at := func(h int) time.Time { return Created.Add(time.Duration(h) * time.Hour) }
	closed := at(30)
	s.AddItem("test-org/public-repo", Item{Title: "Crash on start", Body: "The app crashes when it starts.", User: "alice",
		Assignees: []string{"bob", "dave"}, Labels: []string{"bug", "p1"}, Created: at(1), Updated: at(20)})
	s.AddItem("test-org/public-repo", Item{Pull: true, Title: "Fix the crash", Body: "Fixes #1.", User: "bob", Assignees: []string{"alice"},
		Labels: []string{"bug"}, Created: at(2), Updated: at(31), State: "closed", Closed: &closed, Merged: true, Commits: 3, ChangedFiles: 2})
	s.AddItem("test-org/public-repo", Item{Title: "Document the install", Body: "", User: "carol", Created: at(3), Updated: at(32),
		State: "closed", Closed: &closed, ClosedBy: "bob"})
	s.AddItem("test-org/public-repo", Item{Pull: true, Title: "Add a README", Body: "A README with the install.", User: "dave",
		Created: at(4), Updated: at(10), Commits: 1, ChangedFiles: 1})
	s.AddItem("test-org/public-repo", Item{Title: "Support \"quotes\" in names", Body: "Names with quotes break it.", User: "bob",
		Created: at(5), Updated: at(12)})
	s.AddItem("test-org/private-repo", Item{Title: "Secret roadmap", Body: "The roadmap for next year.", User: "alice", Created: at(1), Updated: at(8)})
	s.AddItem("test-org/private-repo", Item{Pull: true, Title: "Rotate the keys", Body: "Rotates the signing keys.", User: "alice",
		Created: at(2), Updated: at(9), Commits: 2, ChangedFiles: 4})
	s.AddItem("test-org/private-repo", Item{Title: "Audit", Body: "The yearly audit.", User: "carol", Created: at(3), Updated: at(11)})
	s.AddItem("test-org/internal-repo", Item{Title: "Onboarding", Body: "How to start here.", User: "bob", Created: at(1), Updated: at(7)})
	return s
}
