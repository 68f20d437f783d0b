package jiratest

import (
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// jiraPython is the Python that has the jira library: QUARRY_JIRA_PYTHON,
// or Debian's (python3-jira installs into its dist-packages).
func jiraPython() string {
	if p := os.Getenv("QUARRY_JIRA_PYTHON"); p != "" {
		return p
	}
	return "/usr/bin/python3"
}

// TestJiraLibrary checks the simulator against the jira library for
// Python (Debian's python3-jira), the client of Onyx's Jira connector:
// jira_check.py lists the issue ids with search/jql page by page and
// bulk-fetches them through the library's session (as Onyx's connector
// does), reads their fields and comments as library resources, lists
// the groups and their members, reads the permission schemes, project
// roles and users, searches as Data Center (v2, a personal access
// token, startAt pages), and has a JQL and a token refused; what it read
// must be what the simulator holds. CI sets QUARRY_REQUIRE_PYTHON_JIRA=1
// (.ci/run installs python3-jira) so that the test cannot be skipped
// there.
func TestJiraLibrary(t *testing.T) {
	python := jiraPython()
	if err := exec.Command(python, "-c", "import jira").Run(); err != nil {
		if os.Getenv("QUARRY_REQUIRE_PYTHON_JIRA") != "" {
			t.Fatalf("QUARRY_REQUIRE_PYTHON_JIRA is set but %s cannot import jira: %v", python, err)
		}
		t.Skipf("%s -c 'import jira' failed: install Debian's python3-jira to run this check", python)
	}
	s := NewFixture(t, "sim-token")
	out, err := exec.Command(python, "jira_check.py", s.URL, s.Email, s.Token).Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("jira_check.py: %v\n%s", err, stderr)
	}
	var got any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("jira_check.py printed %s: %v", out, err)
	}
	want := roundTrip(t, s.expected())
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("what the jira library read differs from what the simulator holds (-want +got):\n%s", diff)
	}
}

// roundTrip is v as JSON decodes it into any.
func roundTrip(t *testing.T, v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// texts is the text nodes of an ADF document, joined by spaces.
func texts(raw json.RawMessage) string {
	var node any
	_ = json.Unmarshal(raw, &node)
	var out []string
	var walk func(n any)
	walk = func(n any) {
		m, _ := n.(map[string]any)
		if t, _ := m["text"].(string); m["type"] == "text" && t != "" {
			out = append(out, t)
		}
		cs, _ := m["content"].([]any)
		for _, c := range cs {
			walk(c)
		}
	}
	walk(node)
	return strings.Join(out, " ")
}

// expected is what jira_check.py must print of the simulator's content,
// built from what it holds (not from what it serves).
func (s *Server) expected() map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	email := func(id string) any {
		if u := s.users[id]; u != nil && !u.HideEmail {
			return u.Email
		}
		return nil
	}
	display := func(id string) any {
		if u := s.users[id]; u != nil {
			return u.DisplayName
		}
		return nil
	}
	orNil := func(v string) any {
		if v == "" {
			return nil
		}
		return v
	}
	issues := slices.Clone(s.issues)
	slices.Reverse(issues) // Jira's order without ORDER BY: newest first.
	var list []any
	var eng []string
	for _, is := range issues {
		desc := any(nil)
		switch {
		case is.DescriptionADF != nil:
			desc = texts(is.DescriptionADF)
		case is.Description != "":
			desc = strings.Join(strings.Fields(strings.ReplaceAll(is.Description, "\n", " ")), " ")
		}
		comments := []any{}
		for _, c := range is.Comments {
			comments = append(comments, map[string]any{"body": c.Body, "author_email": email(c.Author)})
		}
		rd := any(nil)
		if is.ResolutionDate != nil {
			rd = is.ResolutionDate.UTC().Format(TimeLayout)
		}
		p := s.project(is.Project)
		list = append(list, map[string]any{"id": is.ID(), "key": is.key, "summary": is.Summary, "description": desc,
			"status": orNil(is.Status), "priority": orNil(is.Priority), "issuetype": orNil(is.IssueType), "resolution": orNil(is.Resolution),
			"labels": append([]string{}, is.Labels...), "reporter": display(is.Reporter), "reporter_email": email(is.Reporter),
			"assignee": display(is.Assignee), "created": is.Created.UTC().Format(TimeLayout), "updated": is.Updated.UTC().Format(TimeLayout),
			"duedate": orNil(is.DueDate), "resolutiondate": rd, "parent": orNil(is.Parent), "project": []string{p.Key, p.Name}, "comments": comments})
		if is.Project == "ENG" {
			eng = append(eng, is.key)
		}
	}
	groups := map[string]any{}
	for _, g := range s.groups {
		members := []any{}
		for _, id := range g.members {
			members = append(members, []any{email(id), cmpOr(s.users[id].AccountType, "atlassian")})
		}
		groups[g.name] = members
	}
	projects := map[string]any{}
	for _, p := range s.projects {
		holders := []any{}
		roles := map[string]any{}
		for _, h := range p.Permissions {
			var userEmail any
			if h.Type == "user" {
				userEmail = email(h.Param)
			}
			holders = append(holders, []any{cmpOr(h.Permission, "BROWSE_PROJECTS"), h.Type, orNil(h.Param), userEmail})
			if h.Type == "projectRole" {
				var id int
				_ = json.Unmarshal([]byte(h.Param), &id)
				actors := []any{}
				for _, a := range p.Roles[id] {
					if a.Group != "" {
						actors = append(actors, []any{"group", a.Group})
					} else {
						actors = append(actors, []any{"user", email(a.User)})
					}
				}
				roles[h.Param] = actors
			}
		}
		projects[p.Key] = map[string]any{"holders": holders, "roles": roles}
	}
	var opsNewest string
	for _, is := range issues {
		if is.Project == "OPS" && opsNewest == "" {
			opsNewest = is.Description
		}
	}
	return map[string]any{
		"search_pages":   (len(s.issues) + s.PageSize - 1) / s.PageSize,
		"issues":         list,
		"bad_jql":        []any{400, "Error in the JQL Query"},
		"groups":         groups,
		"projects":       projects,
		"dc_keys":        eng,
		"dc_description": opsNewest,
		"refused":        []any{401, "Client must be authenticated to access this resource."},
	}
}
