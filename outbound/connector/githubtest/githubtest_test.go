package githubtest

import (
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// pygithubPython is the Python that has PyGithub: QUARRY_PYGITHUB_PYTHON,
// or Debian's (python3-github installs into its dist-packages).
func pygithubPython() string {
	if p := os.Getenv("QUARRY_PYGITHUB_PYTHON"); p != "" {
		return p
	}
	return "/usr/bin/python3"
}

// TestPyGithub checks the simulator against GitHub's own client for
// Python, PyGithub (Debian's python3-github), the client Onyx's connector
// and permission syncs use: pygithub_check.py lists the organization's
// repositories, their pull requests and issues (page by page as Onyx's
// connector does, and through the Link headers), the collaborators (and
// whether they are members of the organization), the teams and their
// members, the organization's members, with each user's name and email,
// and a token refused; what it read must be what the simulator holds. CI
// sets QUARRY_REQUIRE_PYGITHUB=1 (.ci/run installs python3-github) so
// that the test cannot be skipped there.
func TestPyGithub(t *testing.T) {
	python := pygithubPython()
	if err := exec.Command(python, "-c", "import github").Run(); err != nil {
		if os.Getenv("QUARRY_REQUIRE_PYGITHUB") != "" {
			t.Fatalf("QUARRY_REQUIRE_PYGITHUB is set but %s cannot import github (PyGithub): %v", python, err)
		}
		t.Skipf("%s -c 'import github' failed: install Debian's python3-github to run this check", python)
	}
	s := NewFixture(t, "sim-token")
	out, err := exec.Command(python, "pygithub_check.py", s.URL, s.Token, "test-org").Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("pygithub_check.py: %v\n%s", err, stderr)
	}
	var got any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("pygithub_check.py printed %s: %v", out, err)
	}
	want := roundTrip(t, s.expected())
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("what PyGithub read differs from what the simulator holds (-want +got):\n%s", diff)
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

// expected is what pygithub_check.py must print of the simulator's
// content, built from what it holds (not from what it serves).
func (s *Server) expected() map[string]any {
	pyTime := func(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05") } // PyGithub's naive UTC datetimes.
	user := func(login string) map[string]any {
		u := s.User(login)
		return map[string]any{"login": u.Login, "name": nullable(u.Name), "email": nullable(u.Email)}
	}
	users := func(logins []string) []any {
		out := []any{}
		for _, l := range logins {
			out = append(out, user(l))
		}
		return out
	}
	labels := func(it Item) []any {
		out := []any{}
		for _, l := range it.Labels {
			out = append(out, l)
		}
		return out
	}
	members := s.OrgMembers("test-org")
	var repos []any
	for _, r := range s.Repos() {
		items := s.Items(r.FullName())
		// Sorted by update, newest first.
		slices.SortStableFunc(items, func(a, b Item) int {
			if c := b.Updated.Compare(a.Updated); c != 0 {
				return c
			}
			return b.Number - a.Number
		})
		pulls, issues, linked := []any{}, []any{}, []any{}
		npulls := 0
		for _, it := range items {
			var closedAt any
			if it.Closed != nil {
				closedAt = pyTime(*it.Closed)
			}
			var closedBy any
			if it.State == "closed" && it.ClosedBy != "" {
				closedBy = it.ClosedBy
			}
			kind := "issues"
			if it.Pull {
				kind = "pull"
				npulls++
				linked = append(linked, it.Number)
				pulls = append(pulls, map[string]any{"number": it.Number, "title": it.Title, "body": nullable(it.Body), "state": it.State,
					"html_url": HTMLBase + "/" + r.FullName() + "/pull/" + strconv.Itoa(it.Number), "updated_at": pyTime(it.Updated),
					"created_at": pyTime(it.Created), "closed_at": closedAt, "merged": it.Merged, "commits": it.Commits,
					"changed_files": it.ChangedFiles, "base_repo": r.FullName(), "user": user(it.User), "assignees": users(it.Assignees),
					"labels": labels(it)})
			}
			issues = append(issues, map[string]any{"number": it.Number, "title": it.Title, "body": nullable(it.Body), "state": it.State,
				"html_url": HTMLBase + "/" + r.FullName() + "/" + kind + "/" + strconv.Itoa(it.Number), "is_pull": it.Pull,
				"updated_at": pyTime(it.Updated), "closed_by": closedBy, "user": user(it.User), "assignees": users(it.Assignees),
				"labels": labels(it)})
		}
		var collaborators []any
		for _, c := range r.Collaborators {
			u := user(c)
			u["in_org"] = slices.Contains(members, c)
			collaborators = append(collaborators, u)
		}
		teams := []any{}
		for _, slug := range []string{"core", "docs"} { // The organization's teams, in the order they were made.
			if slices.Contains(r.Teams, slug) {
				tm := s.Team("test-org", slug)
				teams = append(teams, map[string]any{"slug": tm.Slug, "name": tm.Name, "members": users(tm.Members)})
			}
		}
		var tree any = map[string]any{"status": 409, "message": "Git Repository is empty."}
		var contents any
		if len(r.Files) > 0 {
			var entries []any
			dirs := map[string]bool{}
			for path, content := range r.Files {
				entries = append(entries, []any{path, "blob", len(content)})
				for d := path; strings.Contains(d, "/"); {
					d = d[:strings.LastIndex(d, "/")]
					if !dirs[d] {
						dirs[d] = true
						entries = append(entries, []any{d, "tree", nil})
					}
				}
			}
			slices.SortFunc(entries, func(a, b any) int { return strings.Compare(a.([]any)[0].(string), b.([]any)[0].(string)) })
			tree = map[string]any{"truncated": false, "entries": entries}
			contents = r.Files
		}
		visibility := r.Visibility
		repo := map[string]any{"tree": tree, "id": r.ID(), "full_name": r.FullName(), "private": r.Visibility != "public",
			"visibility": visibility, "organization_id": s.OrgID("test-org"), "by_id": r.FullName(),
			"pull_pages": (npulls + s.PageSize - 1) / s.PageSize, "pulls": pulls, "pulls_linked": linked, "issues": issues,
			"collaborators": collaborators, "teams": teams}
		if contents != nil {
			repo["contents"] = contents
		}
		repos = append(repos, repo)
	}
	return map[string]any{"org_id": s.OrgID("test-org"), "repos": repos, "org_members": users(members),
		"bad_token": map[string]any{"status": 401, "message": "Bad credentials"}}
}
