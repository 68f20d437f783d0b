// Package jiratest simulates the part of Jira's REST API that the Jira
// connector calls (and the jira Python library, the client of Onyx's,
// calls for it), as Atlassian's API reference documents it: Jira Cloud's
// v3 with basic authentication (an account's email and API token) and
// its 401, the enhanced search (GET search/jql, its nextPageToken pages),
// issue/bulkfetch, project permission schemes and project roles, groups
// (groups/picker) and their members (group/member), users with their
// emails (or none, when a user hides it); Jira Data Center's v2 search
// (startAt pages) with a personal access token ("Bearer …"); a 429 with
// Retry-After. Every listing pages, at most PageSize items a page
// whatever maxResults asks, so that a small fixture pages everywhere.
// The JQL it takes is only of the forms the connector sends; any other is
// refused with Jira's 400, so that a drift shows. Its content can change
// between runs. It is for tests only.
package jiratest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TimeLayout is how Jira writes times: "2024-03-01T09:00:00.000+0000".
const TimeLayout = "2006-01-02T15:04:05.000-0700"

// CloudID is the simulated site's cloud id (/_edge/tenant_info).
const CloudID = "5c1f7a3e-0000-4000-8000-000000000001"

// User is an Atlassian account. HideEmail: the user's profile hides the
// email, which the API then leaves out. AccountType is "atlassian" when
// empty ("app" for a bot).
type User struct {
	AccountID, DisplayName, Email string
	HideEmail                     bool
	AccountType                   string
}

// Comment is a comment of an issue; its Body is plain text, served as
// ADF paragraphs (one a line).
type Comment struct {
	Author  string // An account id.
	Body    string
	Created time.Time
}

// Issue is an issue. Description is plain text served as ADF paragraphs
// (one a line), unless DescriptionADF is set; both empty: no description.
type Issue struct {
	Project                                 string // Its project's key.
	Summary, Description                    string
	DescriptionADF                          json.RawMessage
	Status, Priority, IssueType, Resolution string
	Reporter, Assignee                      string // Account ids.
	Labels                                  []string
	Parent                                  string // The parent issue's key.
	Created, Updated                        time.Time
	DueDate                                 string // "2024-03-01".
	ResolutionDate                          *time.Time
	Comments                                []Comment
	id                                      int
	key                                     string
}

// ID is the issue's id.
func (i *Issue) ID() string { return strconv.Itoa(i.id) }

// Key is the issue's key, e.g. "ENG-1".
func (i *Issue) Key() string { return i.key }

// Holder is who holds a permission of a project's permission scheme:
// Type "anyone", "applicationRole", "user" (Param an account id),
// "group" (Param a group's name), "projectRole" (Param a role's id) or
// another Jira has ("reporter", "assignee"…).
type Holder struct {
	Permission string // "BROWSE_PROJECTS" when empty.
	Type       string
	Param      string
}

// Actor is an actor of a project role: a group (by name) or a user (by
// account id).
type Actor struct {
	Group, User string
}

// Project is a project with its permission scheme's holders and its
// roles' actors, by role id.
type Project struct {
	Key, Name   string
	Permissions []Holder
	Roles       map[int][]Actor
	id          int
}

// Server is a simulated Jira, served on 127.0.0.1 until the test ends.
type Server struct {
	*httptest.Server
	// Email and Token are the account's email and API token that Cloud's
	// basic authentication takes; Token is also the personal access
	// token that Data Center's v2 takes as a bearer.
	Email, Token string
	// PageSize is the most items a page of a listing has.
	PageSize int
	// RetryAfter is the Retry-After of a 429, in seconds.
	RetryAfter int

	mu       sync.Mutex
	users    map[string]*User
	groups   []*group
	projects []*Project
	issues   []*Issue
	nextID   int
	limited  int // The next answers that are 429s.
	requests []string
	jqls     []string
	serving  atomic.Int64 // Nanoseconds spent answering.
}

type group struct {
	name, id string
	members  []string // Account ids.
}

// New starts an empty simulator that takes email and token.
func New(t testing.TB, email, token string) *Server {
	s := &Server{Email: email, Token: token, PageSize: 2, RetryAfter: 1, users: map[string]*User{}, nextID: 10000}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// BaseURL is the simulated site's address, the connector's jira_base_url.
func (s *Server) BaseURL() string { return s.URL }

// AddUser adds u.
func (s *Server) AddUser(u User) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users[u.AccountID] = &u
}

// AddGroup adds a group of members (account ids).
func (s *Server) AddGroup(name string, members ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.groups = append(s.groups, &group{name: name, id: fmt.Sprintf("group-%d", len(s.groups)+1), members: members})
}

// RemoveMember takes accountID out of the group name.
func (s *Server) RemoveMember(name, accountID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, g := range s.groups {
		if g.name == name {
			g.members = slices.DeleteFunc(g.members, func(m string) bool { return m == accountID })
		}
	}
}

// AddProject adds p.
func (s *Server) AddProject(p Project) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	p.id = s.nextID
	s.projects = append(s.projects, &p)
}

// SetPermissions replaces the holders of the permission scheme of the
// project key.
func (s *Server) SetPermissions(key string, holders ...Holder) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.project(key); p != nil {
		p.Permissions = holders
	}
}

// AddIssue adds is to its project, numbered next, and returns its key.
func (s *Server) AddIssue(is Issue) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	is.id = s.nextID
	n := 1
	for _, o := range s.issues {
		if o.Project == is.Project {
			n++
		}
	}
	is.key = fmt.Sprintf("%s-%d", is.Project, n)
	s.issues = append(s.issues, &is)
	return is.key
}

// EditIssue changes the issue key with edit.
func (s *Server) EditIssue(key string, edit func(*Issue)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, is := range s.issues {
		if is.key == key {
			edit(is)
		}
	}
}

// DeleteIssue deletes the issue key.
func (s *Server) DeleteIssue(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.issues = slices.DeleteFunc(s.issues, func(is *Issue) bool { return is.key == key })
}

// Issues returns a copy of the issues, in the order they were added.
func (s *Server) Issues() []Issue {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Issue, len(s.issues))
	for i, is := range s.issues {
		out[i] = *is
	}
	return out
}

// User returns the user accountID.
func (s *Server) User(accountID string) User {
	s.mu.Lock()
	defer s.mu.Unlock()
	return *s.users[accountID]
}

// Limit makes the next n answers 429s with Retry-After.
func (s *Server) Limit(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limited = n
}

// Requests returns the requests served ("GET /rest/api/3/search/jql"),
// in order.
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// JQLs returns the JQL of each search, in order.
func (s *Server) JQLs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.jqls)
}

// ServeTime is the time the simulator spent answering, in all.
func (s *Server) ServeTime() time.Duration { return time.Duration(s.serving.Load()) }

// Errors: Jira's bodies.

func jiraError(w http.ResponseWriter, status int, msgs ...string) {
	writeJSON(w, status, map[string]any{"errorMessages": msgs, "errors": map[string]any{}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	defer func() { s.serving.Add(int64(time.Since(start))) }()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r.Method+" "+r.URL.Path)
	if s.limited > 0 {
		s.limited--
		w.Header().Set("Retry-After", strconv.Itoa(s.RetryAfter))
		jiraError(w, http.StatusTooManyRequests, "Rate limit exceeded.")
		return
	}
	if r.URL.Path == "/_edge/tenant_info" {
		writeJSON(w, 200, map[string]any{"cloudId": CloudID})
		return
	}
	// Atlassian's gateway serves scoped tokens at /ex/jira/{cloudId}/…:
	// the simulator serves both.
	r.URL.Path = strings.TrimPrefix(r.URL.Path, "/ex/jira/"+CloudID)
	var version string
	switch {
	case strings.HasPrefix(r.URL.Path, "/rest/api/3/"):
		version = "3"
		email, token, ok := r.BasicAuth()
		if !ok || email != s.Email || token != s.Token {
			// Jira Cloud's answer to a basic authentication it refuses.
			w.Header().Set("WWW-Authenticate", `Basic realm="protected-area"`)
			w.Header().Set("Content-Type", "text/plain;charset=UTF-8")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, "Client must be authenticated to access this resource.")
			return
		}
	case strings.HasPrefix(r.URL.Path, "/rest/api/2/"):
		version = "2"
		if r.Header.Get("Authorization") != "Bearer "+s.Token {
			jiraError(w, http.StatusUnauthorized, "You are not authenticated. Authentication required to perform this operation.")
			return
		}
	default:
		http.NotFound(w, r)
		return
	}
	path := strings.TrimPrefix(r.URL.Path, "/rest/api/"+version+"/")
	q := r.URL.Query()
	switch {
	case r.Method == "GET" && path == "serverInfo":
		deployment := map[string]string{"3": "Cloud", "2": "Server"}[version]
		writeJSON(w, 200, map[string]any{"baseUrl": s.URL, "version": "1001.0.0-SNAPSHOT", "versionNumbers": []int{1001, 0, 0},
			"deploymentType": deployment, "buildNumber": 100000, "serverTitle": "Jira"})
	case r.Method == "GET" && path == "field":
		fields := []any{}
		for _, f := range []string{"summary", "description", "comment", "project", "status", "priority", "issuetype", "reporter", "assignee",
			"creator", "labels", "created", "updated", "duedate", "resolution", "resolutiondate", "parent"} {
			fields = append(fields, map[string]any{"id": f, "key": f, "name": strings.ToUpper(f[:1]) + f[1:], "custom": false,
				"navigable": true, "searchable": true, "clauseNames": []string{f}})
		}
		writeJSON(w, 200, fields)
	case r.Method == "GET" && path == "search/jql" && version == "3":
		s.searchJQL(w, q)
	case r.Method == "POST" && path == "issue/bulkfetch" && version == "3":
		s.bulkFetch(w, r)
	case r.Method == "GET" && path == "search" && version == "2":
		s.searchV2(w, q)
	case r.Method == "GET" && strings.HasPrefix(path, "project/"):
		s.projectPath(w, strings.Split(strings.TrimPrefix(path, "project/"), "/"), version)
	case r.Method == "GET" && path == "groups/picker":
		s.groupsPicker(w, q)
	case r.Method == "GET" && path == "group/member":
		s.groupMembers(w, q)
	case r.Method == "GET" && path == "user":
		u := s.users[q.Get("accountId")]
		if u == nil {
			jiraError(w, 404, fmt.Sprintf("Specified user does not exist or you do not have required permissions"))
			return
		}
		writeJSON(w, 200, s.userJSON(u))
	default:
		jiraError(w, 404, "Not found")
	}
}

// ---- Search.

var (
	windowRE = regexp.MustCompile(`^(?:(.+) AND )?updated >= (-?\d+) AND updated <= (-?\d+)$`)
	clauseRE = regexp.MustCompile(`^(project|labels|status|issuetype) = ("[^"]*"|[A-Za-z0-9_-]+)$`)
)

// filter is a parsed JQL: its clauses (field = value, ANDed) and window.
type filter struct {
	clauses    [][2]string
	start, end int64 // Epoch milliseconds.
}

// parseJQL reads the JQL the connector sends: "updated >= MS AND
// updated <= MS", after `project = "KEY" AND ` or `(custom) AND `,
// where custom is field = value clauses joined by AND. Anything else is
// an error Jira would answer 400 for.
func (s *Server) parseJQL(jql string) (*filter, error) {
	m := windowRE.FindStringSubmatch(jql)
	if m == nil {
		return nil, fmt.Errorf("Error in the JQL Query: the simulator takes only the connector's forms, not %q.", jql)
	}
	f := &filter{}
	f.start, _ = strconv.ParseInt(m[2], 10, 64)
	f.end, _ = strconv.ParseInt(m[3], 10, 64)
	rest := m[1]
	if strings.HasPrefix(rest, "(") && strings.HasSuffix(rest, ")") {
		rest = rest[1 : len(rest)-1]
	}
	if rest != "" {
		for c := range strings.SplitSeq(rest, " AND ") {
			cm := clauseRE.FindStringSubmatch(strings.TrimSpace(c))
			if cm == nil {
				return nil, fmt.Errorf("Error in the JQL Query: the simulator does not take the clause %q.", c)
			}
			v := strings.Trim(cm[2], `"`)
			if cm[1] == "project" && s.project(v) == nil {
				return nil, fmt.Errorf("The value '%s' does not exist for the field 'project'.", v)
			}
			f.clauses = append(f.clauses, [2]string{cm[1], v})
		}
	}
	return f, nil
}

func (f *filter) match(is *Issue) bool {
	if ms := is.Updated.UnixMilli(); ms < f.start || ms > f.end {
		return false
	}
	for _, c := range f.clauses {
		var ok bool
		switch c[0] {
		case "project":
			ok = strings.EqualFold(is.Project, c[1])
		case "labels":
			ok = slices.Contains(is.Labels, c[1])
		case "status":
			ok = strings.EqualFold(is.Status, c[1])
		case "issuetype":
			ok = strings.EqualFold(is.IssueType, c[1])
		}
		if !ok {
			return false
		}
	}
	return true
}

// matching is the issues jql selects, in Jira's default order (by key,
// newest first, as a search without ORDER BY is).
func (s *Server) matching(w http.ResponseWriter, jql string) ([]*Issue, bool) {
	s.jqls = append(s.jqls, jql)
	f, err := s.parseJQL(jql)
	if err != nil {
		jiraError(w, 400, err.Error())
		return nil, false
	}
	var out []*Issue
	for _, is := range s.issues {
		if f.match(is) {
			out = append(out, is)
		}
	}
	slices.Reverse(out)
	return out, true
}

func (s *Server) pageSize(q map[string][]string, def int) int {
	n := def
	if v := first(q, "maxResults"); v != "" {
		n, _ = strconv.Atoi(v)
	}
	return max(1, min(n, s.PageSize))
}

func first(q map[string][]string, k string) string {
	if v := q[k]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// searchJQL is GET /rest/api/3/search/jql: issues' ids (the connector
// asks fields=id), a page at a time with nextPageToken.
func (s *Server) searchJQL(w http.ResponseWriter, q map[string][]string) {
	jql := first(q, "jql")
	offset := 0
	if tok := first(q, "nextPageToken"); tok != "" {
		b, err := base64.RawURLEncoding.DecodeString(tok)
		o, j, ok := strings.Cut(string(b), "|")
		if err != nil || !ok || j != jql {
			jiraError(w, 400, "The provided next page token is invalid or expired.")
			return
		}
		offset, _ = strconv.Atoi(o)
	}
	if first(q, "fields") != "id" {
		jiraError(w, 400, "The simulator serves search/jql with fields=id only, as the connector asks.")
		return
	}
	all, ok := s.matching(w, jql)
	if !ok {
		return
	}
	n := s.pageSize(q, 50)
	end := min(offset+n, len(all))
	issues := []map[string]any{}
	for _, is := range all[min(offset, len(all)):end] {
		issues = append(issues, map[string]any{"id": is.ID()})
	}
	out := map[string]any{"issues": issues, "isLast": end >= len(all)}
	if end < len(all) {
		out["nextPageToken"] = base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(end) + "|" + jql))
	}
	writeJSON(w, 200, out)
}

// bulkFetch is POST /rest/api/3/issue/bulkfetch: up to 100 issues by id
// or key, with all their fields.
func (s *Server) bulkFetch(w http.ResponseWriter, r *http.Request) {
	var in struct {
		IDs    []string `json:"issueIdsOrKeys"`
		Fields []string `json:"fields"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		jiraError(w, 400, "Invalid request payload. Refer to the REST API documentation and try again.")
		return
	}
	if len(in.IDs) == 0 || len(in.IDs) > 100 {
		jiraError(w, 400, "issueIdsOrKeys must have between 1 and 100 items.")
		return
	}
	if !slices.Equal(in.Fields, []string{"*all"}) {
		jiraError(w, 400, "The simulator serves every field (*all), as the connector asks.")
		return
	}
	byID := make(map[string]*Issue, 2*len(s.issues))
	for _, is := range s.issues {
		byID[is.ID()], byID[is.key] = is, is
	}
	issues := []any{}
	errs := []any{}
	for _, id := range in.IDs {
		is := byID[id]
		if is == nil {
			errs = append(errs, map[string]any{"issueIdsOrKeys": []string{id}, "errorMessages": []string{"Issue does not exist or you do not have permission to see it."}})
			continue
		}
		issues = append(issues, s.issueJSON(is, "3"))
	}
	writeJSON(w, 200, map[string]any{"expand": "schema,names", "issues": issues, "issueErrors": errs})
}

// searchV2 is Data Center's GET /rest/api/2/search: issues with their
// fields, startAt pages.
func (s *Server) searchV2(w http.ResponseWriter, q map[string][]string) {
	all, ok := s.matching(w, first(q, "jql"))
	if !ok {
		return
	}
	startAt, _ := strconv.Atoi(first(q, "startAt"))
	n := s.pageSize(q, 50)
	end := min(startAt+n, len(all))
	issues := []any{}
	for _, is := range all[min(startAt, len(all)):end] {
		issues = append(issues, s.issueJSON(is, "2"))
	}
	writeJSON(w, 200, map[string]any{"expand": "schema,names", "startAt": startAt, "maxResults": n, "total": len(all), "issues": issues})
}

func (s *Server) issue(idOrKey string) *Issue {
	if idOrKey == "" {
		return nil
	}
	for _, is := range s.issues {
		if is.ID() == idOrKey || is.key == idOrKey {
			return is
		}
	}
	return nil
}

func (s *Server) project(key string) *Project {
	for _, p := range s.projects {
		if strings.EqualFold(p.Key, key) {
			return p
		}
	}
	return nil
}

// adf is text as an ADF document: a paragraph a line.
func adf(text string) any {
	paras := []any{}
	for line := range strings.SplitSeq(text, "\n") {
		content := []any{}
		if line != "" {
			content = append(content, map[string]any{"type": "text", "text": line})
		}
		paras = append(paras, map[string]any{"type": "paragraph", "content": content})
	}
	return map[string]any{"type": "doc", "version": 1, "content": paras}
}

// body is text as version's API writes a rich text: ADF for v3, the text
// (wiki markup) for v2.
func body(text string, version string) any {
	if version == "2" {
		return text
	}
	return adf(text)
}

func jiraTime(t time.Time) string { return t.UTC().Format(TimeLayout) }

// userRef is a user as an issue's fields name it.
func (s *Server) userRef(accountID string) any {
	u := s.users[accountID]
	if u == nil {
		return nil
	}
	return s.userJSON(u)
}

func (s *Server) userJSON(u *User) map[string]any {
	m := map[string]any{"self": s.URL + "/rest/api/3/user?accountId=" + u.AccountID, "accountId": u.AccountID,
		"displayName": u.DisplayName, "active": true, "timeZone": "UTC", "accountType": cmpOr(u.AccountType, "atlassian")}
	if !u.HideEmail && u.Email != "" {
		m["emailAddress"] = u.Email
	}
	return m
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func named(name string) any {
	if name == "" {
		return nil
	}
	return map[string]any{"name": name, "id": "1"}
}

// issueJSON is is as the API serves it, its fields all there.
func (s *Server) issueJSON(is *Issue, version string) map[string]any {
	p := s.project(is.Project)
	f := map[string]any{
		"summary":        is.Summary,
		"project":        map[string]any{"id": strconv.Itoa(p.id), "key": p.Key, "name": p.Name, "projectTypeKey": "software"},
		"status":         named(is.Status),
		"priority":       named(is.Priority),
		"issuetype":      named(is.IssueType),
		"reporter":       s.userRef(is.Reporter),
		"assignee":       s.userRef(is.Assignee),
		"creator":        s.userRef(is.Reporter),
		"labels":         append([]string{}, is.Labels...),
		"created":        jiraTime(is.Created),
		"updated":        jiraTime(is.Updated),
		"duedate":        nil,
		"resolution":     named(is.Resolution),
		"resolutiondate": nil,
		"description":    nil,
	}
	if is.DueDate != "" {
		f["duedate"] = is.DueDate
	}
	if is.ResolutionDate != nil {
		f["resolutiondate"] = jiraTime(*is.ResolutionDate)
	}
	switch {
	case is.DescriptionADF != nil && version == "3":
		f["description"] = is.DescriptionADF
	case is.Description != "":
		f["description"] = body(is.Description, version)
	}
	if par := s.issue(is.Parent); par != nil {
		f["parent"] = map[string]any{"id": par.ID(), "key": par.key, "self": s.URL + "/rest/api/" + version + "/issue/" + par.ID(),
			"fields": map[string]any{"summary": par.Summary, "status": named(par.Status), "priority": named(par.Priority), "issuetype": named(par.IssueType)}}
	}
	comments := []any{}
	for i, c := range is.Comments {
		comments = append(comments, map[string]any{"id": strconv.Itoa(is.id*100 + i), "author": s.userRef(c.Author), "body": body(c.Body, version),
			"created": jiraTime(c.Created), "updated": jiraTime(c.Created)})
	}
	f["comment"] = map[string]any{"comments": comments, "maxResults": len(comments), "total": len(comments), "startAt": 0}
	return map[string]any{"expand": "renderedFields,names,schema", "id": is.ID(), "key": is.key,
		"self": s.URL + "/rest/api/" + version + "/issue/" + is.ID(), "fields": f}
}

// ---- Projects, groups.

// projectPath serves project/{key}/permissionscheme and
// project/{key}/role/{id}.
func (s *Server) projectPath(w http.ResponseWriter, parts []string, version string) {
	p := (*Project)(nil)
	if len(parts) > 0 {
		p = s.project(parts[0])
	}
	if p == nil {
		jiraError(w, 404, fmt.Sprintf("No project could be found with key '%s'.", parts[0]))
		return
	}
	switch {
	case len(parts) == 1:
		writeJSON(w, 200, map[string]any{"id": strconv.Itoa(p.id), "key": p.Key, "name": p.Name})
	case len(parts) == 2 && parts[1] == "permissionscheme":
		perms := []any{}
		for i, h := range p.Permissions {
			holder := map[string]any{"type": h.Type}
			switch h.Type {
			case "user":
				holder["parameter"], holder["value"] = h.Param, h.Param
				if u := s.users[h.Param]; u != nil {
					holder["user"] = s.userJSON(u)
				}
			case "group":
				holder["parameter"], holder["expand"] = h.Param, "group"
				for _, g := range s.groups {
					if g.name == h.Param {
						holder["value"] = g.id
					}
				}
			case "projectRole":
				holder["parameter"], holder["value"], holder["expand"] = h.Param, h.Param, "projectRole"
			default:
				if h.Param != "" {
					holder["parameter"], holder["value"] = h.Param, h.Param
				}
			}
			perms = append(perms, map[string]any{"id": 10000 + i, "self": s.URL + "/rest/api/" + version + "/permissionscheme/0/permission/" + strconv.Itoa(10000+i),
				"holder": holder, "permission": cmpOr(h.Permission, "BROWSE_PROJECTS")})
		}
		writeJSON(w, 200, map[string]any{"expand": "permissions,user,group,projectRole,field,all", "id": 10000 + p.id,
			"self": s.URL + "/rest/api/" + version + "/permissionscheme/" + strconv.Itoa(10000+p.id), "name": p.Key + " permission scheme",
			"description": "", "permissions": perms})
	case len(parts) == 3 && parts[1] == "role":
		id, _ := strconv.Atoi(parts[2])
		actors, ok := p.Roles[id]
		if !ok {
			jiraError(w, 404, fmt.Sprintf("Can not retrieve a role actor for a null project role."))
			return
		}
		out := []any{}
		for i, a := range actors {
			if a.Group != "" {
				gid := ""
				for _, g := range s.groups {
					if g.name == a.Group {
						gid = g.id
					}
				}
				out = append(out, map[string]any{"id": 20000 + i, "displayName": a.Group, "type": "atlassian-group-role-actor", "name": a.Group,
					"actorGroup": map[string]any{"name": a.Group, "displayName": a.Group, "groupId": gid}})
			} else {
				name := ""
				if u := s.users[a.User]; u != nil {
					name = u.DisplayName
				}
				out = append(out, map[string]any{"id": 20000 + i, "displayName": name, "type": "atlassian-user-role-actor",
					"actorUser": map[string]any{"accountId": a.User}})
			}
		}
		writeJSON(w, 200, map[string]any{"self": s.URL + "/rest/api/" + version + "/project/" + p.Key + "/role/" + parts[2],
			"name": fmt.Sprintf("Role %d", id), "id": id, "description": "", "actors": out})
	default:
		jiraError(w, 404, "Not found")
	}
}

// groupsPicker is GET groups/picker: the groups, at most maxResults.
func (s *Server) groupsPicker(w http.ResponseWriter, q map[string][]string) {
	n := len(s.groups)
	if v := first(q, "maxResults"); v != "" {
		m, _ := strconv.Atoi(v)
		n = min(n, m)
	}
	out := []any{}
	for _, g := range s.groups[:n] {
		out = append(out, map[string]any{"name": g.name, "html": g.name, "labels": []any{}, "groupId": g.id})
	}
	writeJSON(w, 200, map[string]any{"header": fmt.Sprintf("Showing %d of %d matching groups", n, len(s.groups)), "total": len(s.groups), "groups": out})
}

// groupMembers is GET group/member: a group's members, startAt pages.
func (s *Server) groupMembers(w http.ResponseWriter, q map[string][]string) {
	name := first(q, "groupname")
	var g *group
	for _, o := range s.groups {
		if o.name == name {
			g = o
		}
	}
	if g == nil {
		jiraError(w, 404, fmt.Sprintf("The group named '%s' does not exist.", name))
		return
	}
	startAt, _ := strconv.Atoi(first(q, "startAt"))
	n := s.pageSize(q, 50)
	end := min(startAt+n, len(g.members))
	values := []any{}
	for _, id := range g.members[min(startAt, len(g.members)):end] {
		if u := s.users[id]; u != nil {
			values = append(values, s.userJSON(u))
		}
	}
	writeJSON(w, 200, map[string]any{"self": s.URL + "/rest/api/3/group/member?groupname=" + name, "maxResults": n, "startAt": startAt,
		"total": len(g.members), "isLast": end >= len(g.members), "values": values})
}
