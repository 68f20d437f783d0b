package connector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/outbound/connector/jiratest"
)

const jiraToken = "ATATT3xFfGF0-the-api-token"

// jiraOpen opens the Jira connector of cfg (its jira_base_url the
// simulator's unless set) with the fixture's Cloud credential.
func jiraOpen(t *testing.T, s *jiratest.Server, cfg map[string]any, cred map[string]any) *Jira {
	t.Helper()
	if _, ok := cfg["jira_base_url"]; !ok {
		cfg["jira_base_url"] = s.BaseURL() + "/"
	}
	if cred == nil {
		cred = map[string]any{"jira_user_email": jiratest.FixtureEmail, "jira_api_token": jiraToken}
	}
	b, _ := json.Marshal(cfg)
	cb, _ := json.Marshal(cred)
	c, err := NewJira(b, cb, &Env{HTTP: http.DefaultClient, Now: time.Now, Log: slog.New(slog.DiscardHandler),
		Endpoints: Endpoints{JiraSource: s.BaseURL()}})
	if err != nil {
		t.Fatal(err)
	}
	return c.(*Jira)
}

// jiraRun runs c over w from its first checkpoint to the end, and returns
// what it emitted and the steps it took.
func jiraRun(t *testing.T, c Connector, w Window) (*recorder, int, error) {
	t.Helper()
	rec := &recorder{}
	cp := c.FirstCheckpoint()
	for steps := 1; ; steps++ {
		next, err := c.Step(context.Background(), w, cp, rec)
		if err != nil {
			return rec, steps, err
		}
		if len(next) > quarry.MaxCheckpointBytes {
			t.Fatalf("a checkpoint of %d bytes", len(next))
		}
		more, err := HasMore(next)
		if err != nil {
			t.Fatal(err)
		}
		if !more {
			return rec, steps, nil
		}
		if steps > 100 {
			t.Fatal("more than 100 steps")
		}
		cp = next
	}
}

func everything() Window { return Window{Start: time.Unix(0, 0), End: time.Now()} }

func docIDs(r *recorder) []string {
	var ids []string
	for _, d := range r.docs {
		ids = append(ids, d.ID)
	}
	slices.Sort(ids)
	return ids
}

func owner(name, email string) json.RawMessage {
	m := map[string]any{"display_name": name, "first_name": nil, "middle_initial": nil, "last_name": nil, "email": nil}
	if email != "" {
		m["email"] = email
	}
	b, _ := json.Marshal(m)
	return b
}

// A run reads every issue through search/jql pages and bulk fetches, and
// makes each document as Onyx v4.6.1's process_jira_issue does: its
// browse URL, "KEY: summary", the ADF description's text nodes joined by
// spaces and the comments (less the blacklisted author's), Onyx's
// metadata and owners, and its project's access; the labelled issue is
// skipped.
func TestJiraDocuments(t *testing.T) {
	s := jiratest.NewFixture(t, jiraToken)
	c := jiraOpen(t, s, map[string]any{"comment_email_blacklist": []string{" automation@example.com "}, "labels_to_skip": []string{"secret"}}, nil)
	rec, steps, err := jiraRun(t, c, everything())
	if err != nil {
		t.Fatal(err)
	}
	b := s.BaseURL() + "/browse/"
	if got, want := docIDs(rec), []string{b + "ENG-1", b + "ENG-2", b + "ENG-4", b + "OPS-1", b + "OPS-2", b + "SEC-1"}; !slices.Equal(got, want) || len(rec.failures) != 0 {
		t.Fatalf("documents %q (failures %v), want %q", got, rec.failures, want)
	}
	if steps != 4 { // 7 issues, 2 ids a page: 4 pages, a step each.
		t.Errorf("%d steps, want 4", steps)
	}
	eng := &quarry.ExternalAccess{ExternalUserEmails: []string{"alice@example.com", "dave@example.com"}, ExternalUserGroupIDs: []string{"jira_engineering", "jira_support"}}
	str := func(s string) *string { return &s }
	at := func(h int) *quarry.Time {
		return &quarry.Time{Time: jiratest.Created.Add(time.Duration(h) * time.Hour)}
	}
	want := map[string]*quarry.Document{
		"ENG-1": {ID: b + "ENG-1", Sections: []quarry.Section{{Text: "Goals Faster answers owns it\n", Link: str(b + "ENG-1")}}, Source: JiraSource,
			SemanticIdentifier: "ENG-1: Search revamp", Title: str("ENG-1 Search revamp"), DocUpdatedAt: at(1),
			Metadata: map[string]any{"key": "ENG-1", "reporter": "Alice Admin", "reporter_email": "alice@example.com", "assignee": "Alice Admin",
				"assignee_email": "alice@example.com", "priority": "High", "status": "In Progress", "issuetype": "Epic", "labels": []string{"search"},
				"created": "2024-03-01T09:00:00.000+0000", "updated": "2024-03-01T10:00:00.000+0000", "project": "ENG", "project_name": "Engineering"},
			PrimaryOwners: []json.RawMessage{owner("Alice Admin", "alice@example.com")}, ExternalAccess: eng},
		"ENG-2": {ID: b + "ENG-2", Sections: []quarry.Section{{Text: "Index every page of the wiki. Keep the links.\nComment: Started on it.\nComment: Looks good.", Link: str(b + "ENG-2")}},
			Source: JiraSource, SemanticIdentifier: "ENG-2: Index the wiki", Title: str("ENG-2 Index the wiki"), DocUpdatedAt: at(2),
			Metadata: map[string]any{"key": "ENG-2", "reporter": "Alice Admin", "reporter_email": "alice@example.com", "assignee": "Bob Builder",
				"assignee_email": "bob@example.com", "priority": "Medium", "status": "In Progress", "issuetype": "Story", "labels": []string{"search", "backend"},
				"created": "2024-03-01T10:00:00.000+0000", "updated": "2024-03-01T11:00:00.000+0000", "parent": "ENG-1", "project": "ENG", "project_name": "Engineering"},
			PrimaryOwners: []json.RawMessage{owner("Alice Admin", "alice@example.com"), owner("Bob Builder", "bob@example.com")}, ExternalAccess: eng},
		"ENG-4": {ID: b + "ENG-4", Sections: []quarry.Section{{Text: "Operations and decisions.\n", Link: str(b + "ENG-4")}}, Source: JiraSource,
			SemanticIdentifier: "ENG-4: Write the docs", Title: str("ENG-4 Write the docs"), DocUpdatedAt: at(4),
			Metadata: map[string]any{"key": "ENG-4", "reporter": "Dave Dev", "reporter_email": "dave@example.com", "assignee": "Carol Quiet",
				"priority": "Low", "status": "Done", "resolution": "Done", "issuetype": "Task", "created": "2024-03-01T12:00:00.000+0000",
				"updated": "2024-03-01T13:00:00.000+0000", "duedate": "2024-03-15", "resolution_date": "2024-03-02T05:00:00.000+0000",
				"project": "ENG", "project_name": "Engineering"},
			PrimaryOwners: []json.RawMessage{owner("Dave Dev", "dave@example.com"), owner("Carol Quiet", "")}, ExternalAccess: eng},
		"OPS-1": {ID: b + "OPS-1", Sections: []quarry.Section{{Text: "Every quarter.\n", Link: str(b + "OPS-1")}}, Source: JiraSource,
			SemanticIdentifier: "OPS-1: Rotate the keys", Title: str("OPS-1 Rotate the keys"), DocUpdatedAt: at(5),
			Metadata: map[string]any{"key": "OPS-1", "reporter": "Dave Dev", "reporter_email": "dave@example.com", "priority": "Medium", "status": "To Do",
				"issuetype": "Task", "created": "2024-03-01T13:00:00.000+0000", "updated": "2024-03-01T14:00:00.000+0000", "project": "OPS", "project_name": "Operations"},
			PrimaryOwners:  []json.RawMessage{owner("Dave Dev", "dave@example.com")},
			ExternalAccess: &quarry.ExternalAccess{ExternalUserEmails: []string{}, ExternalUserGroupIDs: []string{}, IsPublic: true}},
		"SEC-1": {ID: b + "SEC-1", Sections: []quarry.Section{{Text: "Who reads what.\n", Link: str(b + "SEC-1")}}, Source: JiraSource,
			SemanticIdentifier: "SEC-1: Audit", Title: str("SEC-1 Audit"), DocUpdatedAt: at(7),
			Metadata: map[string]any{"key": "SEC-1", "reporter": "Alice Admin", "reporter_email": "alice@example.com", "priority": "High", "status": "To Do",
				"issuetype": "Task", "created": "2024-03-01T15:00:00.000+0000", "updated": "2024-03-01T16:00:00.000+0000", "project": "SEC", "project_name": "Security"},
			PrimaryOwners:  []json.RawMessage{owner("Alice Admin", "alice@example.com")},
			ExternalAccess: &quarry.ExternalAccess{ExternalUserEmails: []string{}, ExternalUserGroupIDs: []string{}}},
	}
	for _, d := range rec.docs {
		key := strings.TrimPrefix(d.ID, b)
		w, ok := want[key]
		if !ok {
			continue
		}
		got, _ := json.Marshal(d)
		exp, _ := json.Marshal(w)
		if string(got) != string(exp) {
			t.Errorf("%s:\n got %s\nwant %s", key, got, exp)
		}
	}
	// Every search carried the whole window as epoch milliseconds.
	for _, q := range s.JQLs() {
		if !strings.HasPrefix(q, "updated >= 0 AND updated <= ") {
			t.Errorf("JQL %q, want the window alone", q)
		}
	}
}

// A poll's JQL carries its window, under the configured project or
// query; only the issues updated within it are read. A JQL Jira refuses
// ends the run naming Jira's message.
func TestJiraPollWindow(t *testing.T) {
	s := jiratest.NewFixture(t, jiraToken)
	w := Window{Start: jiratest.Created.Add(90 * time.Minute), End: jiratest.Created.Add(5 * time.Hour)}
	ms := fmt.Sprintf("updated >= %d AND updated <= %d", w.Start.UnixMilli(), w.End.UnixMilli())
	b := s.BaseURL() + "/browse/"
	for _, tc := range []struct {
		name string
		cfg  map[string]any
		jql  string
		want []string
		err  string
	}{
		{"everything", map[string]any{}, ms, []string{b + "ENG-2", b + "ENG-3", b + "ENG-4", b + "OPS-1"}, ""},
		{"project", map[string]any{"project_key": "ENG"}, `project = "ENG" AND ` + ms, []string{b + "ENG-2", b + "ENG-3", b + "ENG-4"}, ""},
		{"query", map[string]any{"jql_query": "project = OPS AND labels = none"}, "(project = OPS AND labels = none) AND " + ms, nil, ""},
		{"query by label", map[string]any{"jql_query": "labels = backend"}, "(labels = backend) AND " + ms, []string{b + "ENG-2"}, ""},
		{"unknown project", map[string]any{"project_key": "NOPE"}, `project = "NOPE" AND ` + ms, nil,
			"The value 'NOPE' does not exist for the field 'project'."},
		{"refused query", map[string]any{"jql_query": "text ~ \"x\""}, `(text ~ "x") AND ` + ms, nil, "Error in the JQL Query"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(s.JQLs())
			rec, _, err := jiraRun(t, jiraOpen(t, s, tc.cfg, nil), w)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "400 Bad Request") {
					t.Errorf("error %v, want Jira's 400 %q", err, tc.err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if got := docIDs(rec); !slices.Equal(got, tc.want) {
				t.Errorf("documents %q, want %q", got, tc.want)
			}
			for _, q := range s.JQLs()[before:] {
				if q != tc.jql {
					t.Errorf("JQL %q, want %q", q, tc.jql)
				}
			}
		})
	}
}

// An issue edited at Jira is read again by the next poll with its new
// text; one deleted is missing from the slim listing, which a prune
// removes it by.
func TestJiraEditAndPrune(t *testing.T) {
	s := jiratest.NewFixture(t, jiraToken)
	c := jiraOpen(t, s, map[string]any{}, nil)
	edited := time.Now().UTC().Truncate(time.Millisecond)
	s.EditIssue("OPS-1", func(is *jiratest.Issue) { is.Description = "Every month now."; is.Updated = edited })
	rec, _, err := jiraRun(t, c, Window{Start: edited.Add(-time.Second), End: edited.Add(time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.docs) != 1 || rec.docs[0].Sections[0].Text != "Every month now.\n" {
		t.Fatalf("the poll read %d documents, want OPS-1 with its new text", len(rec.docs))
	}
	s.DeleteIssue("OPS-2")
	var ids []string
	if err := c.ListIDs(context.Background(), func(_ context.Context, batch []string) error {
		ids = append(ids, batch...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(ids)
	b := s.BaseURL() + "/browse/"
	if want := []string{b + "ENG-1", b + "ENG-2", b + "ENG-3", b + "ENG-4", b + "OPS-1", b + "SEC-1"}; !slices.Equal(ids, want) {
		t.Errorf("ListIDs %q, want %q", ids, want)
	}
}

// A 429 is waited out for its Retry-After and the request made again; a
// wait longer than the attempt has ends with the attempt.
func TestJiraRateLimit(t *testing.T) {
	s := jiratest.NewFixture(t, jiraToken)
	s.Limit(1)
	start := time.Now()
	rec, _, err := jiraRun(t, jiraOpen(t, s, map[string]any{"project_key": "OPS"}, nil), everything())
	if err != nil || len(rec.docs) != 2 {
		t.Fatalf("%d documents, error %v; want 2 after the wait", len(rec.docs), err)
	}
	if d := time.Since(start); d < time.Second {
		t.Errorf("the run took %s, less than Retry-After", d)
	}
	if reqs := s.Requests(); len(reqs) < 2 || reqs[0] != reqs[1] || reqs[0] != "GET /rest/api/3/search/jql" {
		t.Errorf("requests %q, want the search twice first", reqs)
	}
	s.RetryAfter = 600
	s.Limit(1)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	c := jiraOpen(t, s, map[string]any{}, nil)
	start = time.Now()
	_, err = c.Step(ctx, everything(), c.FirstCheckpoint(), &recorder{})
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
		t.Errorf("error %v after %s, want the context's at once", err, time.Since(start))
	}
}

// A credential Jira refuses ends the run with a *CredentialError naming
// Jira's answer, never the token.
func TestJiraRefused(t *testing.T) {
	s := jiratest.NewFixture(t, "the-right-token")
	for _, tc := range []struct {
		name string
		cred map[string]any
		want string
	}{
		{"cloud", map[string]any{"jira_user_email": jiratest.FixtureEmail, "jira_api_token": jiraToken},
			"Jira at " + s.BaseURL() + " answered 401 Unauthorized (search issue ids): Client must be authenticated to access this resource."},
		{"data center", map[string]any{"jira_api_token": jiraToken},
			"Jira at " + s.BaseURL() + " answered 401 Unauthorized (search issues): You are not authenticated. Authentication required to perform this operation."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := jiraRun(t, jiraOpen(t, s, map[string]any{}, tc.cred), everything())
			var ce *CredentialError
			if !errors.As(err, &ce) || ce.Reason != tc.want {
				t.Errorf("error %v, want a CredentialError %q", err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), jiraToken) {
				t.Errorf("the error %q shows the token", err)
			}
		})
	}
}

// The PermissionSyncer lists every issue with its project's access from
// the BROWSE_PROJECTS holders: users' emails (a role's user read from
// its account; a hidden email left out), groups of the scheme and of
// roles, "anyone" public, "reporter" no one; a scheme changed at Jira is
// seen by the next sync.
func TestJiraPermissions(t *testing.T) {
	s := jiratest.NewFixture(t, jiraToken)
	perms := func() map[string]string {
		c := jiraOpen(t, s, map[string]any{}, nil)
		out := map[string]string{}
		if err := c.Permissions(context.Background(), func(_ context.Context, id string, a *quarry.ExternalAccess) error {
			out[strings.TrimPrefix(id, s.BaseURL()+"/browse/")] = strings.Join(a.Principals(), " ")
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	eng := "email:alice@example.com email:dave@example.com group:jira_engineering group:jira_support"
	want := map[string]string{"ENG-1": eng, "ENG-2": eng, "ENG-3": eng, "ENG-4": eng, "OPS-1": "public", "OPS-2": "public", "SEC-1": ""}
	if got := perms(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("access\n%v, want\n%v", got, want)
	}
	s.SetPermissions("ENG", jiratest.Holder{Type: "group", Param: "jira-admins"}, jiratest.Holder{Type: "applicationRole"})
	s.SetPermissions("OPS", jiratest.Holder{Type: "user", Param: jiratest.Bob}, jiratest.Holder{Type: "user", Param: jiratest.Carol})
	want = map[string]string{"ENG-1": "public", "ENG-2": "public", "ENG-3": "public", "ENG-4": "public",
		"OPS-1": "email:bob@example.com", "OPS-2": "email:bob@example.com", "SEC-1": ""}
	if got := perms(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("access after the schemes changed\n%v, want\n%v", got, want)
	}
}

// The GroupSyncer lists Jira's groups with their members' emails (app
// accounts and hidden emails left out); a member moved out of a group is
// gone from the next sync.
func TestJiraGroups(t *testing.T) {
	s := jiratest.NewFixture(t, jiraToken)
	groups := func() string {
		var out []string
		if err := jiraOpen(t, s, map[string]any{}, nil).Groups(context.Background(), func(_ context.Context, g *quarry.ExternalGroup) error {
			out = append(out, g.ID+"="+strings.Join(g.UserEmails, ","))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return strings.Join(out, " ")
	}
	if got, want := groups(), "jira_engineering=alice@example.com,bob@example.com jira_jira-admins=alice@example.com jira_support=dave@example.com"; got != want {
		t.Errorf("groups %s, want %s", got, want)
	}
	s.RemoveMember("engineering", jiratest.Bob)
	s.RemoveMember("support", jiratest.Dave)
	if got, want := groups(), "jira_engineering=alice@example.com jira_jira-admins=alice@example.com"; got != want {
		t.Errorf("groups after the moves %s, want %s", got, want)
	}
}

// Jira Data Center (a personal access token, its email empty as Onyx's
// form leaves it) is read with the
// v2 search by startAt, its descriptions as text; a scoped token reads
// Cloud through Atlassian's gateway at the site's cloud id.
func TestJiraDataCenterAndScoped(t *testing.T) {
	s := jiratest.NewFixture(t, jiraToken)
	b := s.BaseURL() + "/browse/"
	rec, steps, err := jiraRun(t, jiraOpen(t, s, map[string]any{"project_key": "ENG"}, map[string]any{"jira_user_email": "", "jira_api_token": jiraToken}), everything())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := docIDs(rec), []string{b + "ENG-1", b + "ENG-2", b + "ENG-3", b + "ENG-4"}; !slices.Equal(got, want) || steps != 2 {
		t.Errorf("documents %q in %d steps, want %q in 2", got, steps, want)
	}
	for _, d := range rec.docs {
		if d.ID == b+"ENG-2" && d.Sections[0].Text != "Index every page of the wiki.\nKeep the links.\nComment: Started on it.\nComment: Build passed.\nComment: Looks good." {
			t.Errorf("ENG-2's text %q", d.Sections[0].Text)
		}
	}
	before := len(s.Requests())
	rec, _, err = jiraRun(t, jiraOpen(t, s, map[string]any{"project_key": "OPS", "scoped_token": true}, nil), everything())
	if err != nil || len(rec.docs) != 2 || rec.docs[0].ID != b+"OPS-2" {
		t.Fatalf("scoped: %d documents, error %v", len(rec.docs), err)
	}
	if reqs := s.Requests()[before:]; reqs[0] != "GET /_edge/tenant_info" || reqs[1] != "GET /ex/jira/"+jiratest.CloudID+"/rest/api/3/search/jql" {
		t.Errorf("scoped requests %q", reqs)
	}
}

// BenchmarkJiraConnector reads 1,000 issues (about 1 KB of description
// and two comments each) from the simulator, pages of 100 ids: docs/s is
// the connector's rate, sim-ms/op the simulator's own time a run.
func BenchmarkJiraConnector(b *testing.B) {
	const n = 1000
	s := jiratest.New(b, "bench@example.com", jiraToken)
	s.PageSize = 100
	s.AddUser(jiratest.User{AccountID: "a1", DisplayName: "Ann", Email: "ann@example.com"})
	s.AddProject(jiratest.Project{Key: "BEN", Name: "Bench", Permissions: []jiratest.Holder{{Type: "anyone"}}})
	text := strings.Repeat("A line of the description of the issue, with some words. ", 17)
	for i := range n {
		s.AddIssue(jiratest.Issue{Project: "BEN", Summary: fmt.Sprintf("Issue %d", i), Description: text, Status: "To Do", IssueType: "Task",
			Reporter: "a1", Assignee: "a1", Labels: []string{"bench"}, Created: jiratest.Created, Updated: jiratest.Created.Add(time.Duration(i) * time.Minute),
			Comments: []jiratest.Comment{{Author: "a1", Body: "A comment.", Created: jiratest.Created}, {Author: "a1", Body: "Another.", Created: jiratest.Created}}})
	}
	cfg, _ := json.Marshal(map[string]any{"jira_base_url": s.BaseURL(), "project_key": "BEN"})
	cred, _ := json.Marshal(map[string]any{"jira_user_email": "bench@example.com", "jira_api_token": jiraToken})
	served := s.ServeTime()
	for b.Loop() {
		c, err := NewJira(cfg, cred, &Env{HTTP: http.DefaultClient})
		if err != nil {
			b.Fatal(err)
		}
		cp := c.FirstCheckpoint()
		docs := &recorder{}
		w := everything()
		for more := true; more; {
			if cp, err = c.Step(context.Background(), w, cp, docs); err != nil {
				b.Fatal(err)
			}
			more, _ = HasMore(cp)
		}
		if len(docs.docs) != n {
			b.Fatalf("%d documents, want %d", len(docs.docs), n)
		}
	}
	b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "docs/s")
	b.ReportMetric(float64((s.ServeTime()-served).Milliseconds())/float64(b.N), "sim-ms/op")
}

// BenchmarkJiraPermissions lists the access of 10,000 issues of two
// projects (one public, one of users, a group and a role) from the
// simulator, pages of 1,000 ids, as a permission sync does: entries/s is
// the connector's rate, sim-ms/op the simulator's own time a run.
func BenchmarkJiraPermissions(b *testing.B) {
	const n = 10000
	s := jiratest.New(b, "bench@example.com", jiraToken)
	s.PageSize = 1000
	for i := range 20 {
		s.AddUser(jiratest.User{AccountID: fmt.Sprintf("u%d", i), DisplayName: fmt.Sprintf("User %d", i), Email: fmt.Sprintf("user%d@example.com", i)})
	}
	s.AddGroup("staff", "u1", "u2")
	s.AddProject(jiratest.Project{Key: "PUB", Name: "Public", Permissions: []jiratest.Holder{{Type: "anyone"}}})
	s.AddProject(jiratest.Project{Key: "PRV", Name: "Private", Permissions: []jiratest.Holder{{Type: "user", Param: "u0"}, {Type: "group", Param: "staff"},
		{Type: "projectRole", Param: "10002"}}, Roles: map[int][]jiratest.Actor{10002: {{User: "u3"}, {Group: "staff"}}}})
	for i := range n {
		p := "PUB"
		if i%2 == 1 {
			p = "PRV"
		}
		s.AddIssue(jiratest.Issue{Project: p, Summary: fmt.Sprintf("Issue %d", i), Description: "Short.", Status: "To Do", IssueType: "Task",
			Reporter: "u0", Created: jiratest.Created, Updated: jiratest.Created.Add(time.Duration(i) * time.Second)})
	}
	cfg, _ := json.Marshal(map[string]any{"jira_base_url": s.BaseURL()})
	cred, _ := json.Marshal(map[string]any{"jira_user_email": "bench@example.com", "jira_api_token": jiraToken})
	served := s.ServeTime()
	for b.Loop() {
		c, err := NewJira(cfg, cred, &Env{HTTP: http.DefaultClient})
		if err != nil {
			b.Fatal(err)
		}
		got := 0
		if err := c.(PermissionSyncer).Permissions(context.Background(), func(context.Context, string, *quarry.ExternalAccess) error {
			got++
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		if got != n {
			b.Fatalf("%d entries, want %d", got, n)
		}
	}
	b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "entries/s")
	b.ReportMetric(float64((s.ServeTime()-served).Milliseconds())/float64(b.N), "sim-ms/op")
}
