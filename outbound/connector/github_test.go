package connector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/internal/pyrepr"
	"github.com/quarryhq/quarry/outbound/connector/githubtest"
)

const ghTestToken = "ghp_simulatedTokenValue0123456789"

// ghOpen opens the GitHub connector of cfg with token against s, through
// the registry as a worker does.
func ghOpen(t testing.TB, s *githubtest.Server, cfg map[string]any, token string) Connector {
	t.Helper()
	b, _ := json.Marshal(cfg)
	cred, _ := json.Marshal(map[string]string{"github_access_token": token})
	c, err := NewRegistry().Open(GitHubSource, b, cred, &Env{HTTP: s.Client(), Now: time.Now, Log: slog.New(slog.DiscardHandler),
		Endpoints: Endpoints{GitHubSource: s.BaseURL()}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// ghRun runs c over w, step after step, to the end.
func ghRun(t testing.TB, c Connector, w Window) (*recorder, error) {
	t.Helper()
	rec := &recorder{}
	cp := c.FirstCheckpoint()
	for range 1000 {
		next, err := c.Step(context.Background(), w, cp, rec)
		if err != nil {
			return rec, err
		}
		more, err := HasMore(next)
		if err != nil {
			t.Fatal(err)
		}
		if !more {
			return rec, nil
		}
		cp = next
	}
	t.Fatal("the run did not end in 1000 steps")
	return nil, nil
}

// all is a window from the epoch to now.
func all() Window { return Window{Start: time.Unix(0, 0), End: time.Now()} }

// at is the fixture's time h hours after githubtest.Created.
func at(h int) time.Time { return githubtest.Created.Add(time.Duration(h) * time.Hour) }

// ghDoc is a document as Onyx v4.6.1's GitHub connector makes it.
func ghDoc(kind, repo string, n int, title, body string, updated time.Time, access *quarry.ExternalAccess, md map[string]any) map[string]any {
	url := fmt.Sprintf("https://github.com/%s/%s/%d", repo, kind, n)
	return map[string]any{"id": url, "sections": []any{map[string]any{"text": body, "link": url}}, "source": "github",
		"semantic_identifier": fmt.Sprintf("%d: %s", n, title), "metadata": md, "doc_updated_at": updated.Format(time.RFC3339),
		"external_access": access}
}

// Users as Onyx's metadata shows them: str() of _get_userinfo's dict.
const (
	pyAlice = `{'login': 'alice', 'name': 'Alice Liddell', 'email': 'alice@example.com'}`
	pyBob   = `{'login': 'bob', 'name': "Bob O'Brien", 'email': 'bob@example.com'}`
	pyCarol = `{'login': 'carol', 'email': 'carol@example.com'}`
	pyDave  = `{'login': 'dave', 'name': 'Dave'}`
)

var publicAccess = &quarry.ExternalAccess{ExternalUserEmails: []string{}, ExternalUserGroupIDs: []string{}, IsPublic: true}

// jsonOf is v as JSON decodes it into any.
func jsonOf(t testing.TB, v any) any {
	t.Helper()
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

// A run over a public repository: its pull requests, then its issues
// (the pull requests among them left out), newest first, each with
// Onyx's id, link, semantic identifier, text, time and metadata (users
// as str() of a Python dict, times as str() of a datetime) and, the
// repository being public, public access. The listings ask for what
// PyGithub asks for (state=all, sort=updated, direction=desc,
// per_page=100, page numbers as get_page's) and page to the end.
func TestGitHubDocuments(t *testing.T) {
	s := githubtest.NewFixture(t, ghTestToken)
	c := ghOpen(t, s, map[string]any{"repo_owner": "test-org", "repositories": "public-repo", "include_prs": true, "include_issues": true}, ghTestToken)
	rec, err := ghRun(t, c, all())
	if err != nil || len(rec.failures) > 0 {
		t.Fatalf("run: %v, failures %+v", err, rec.failures)
	}
	repo := "test-org/public-repo"
	want := []any{
		ghDoc("pull", repo, 2, "Fix the crash", "Fixes #1.", at(31), publicAccess, map[string]any{
			"object_type": "PullRequest", "id": "2", "merged": "True", "state": "closed", "user": pyBob, "assignees": []any{pyAlice},
			"repo": repo, "num_commits": "3", "num_files_changed": "2", "labels": []any{"bug"},
			"created_at": "2024-03-01 11:00:00+00:00", "updated_at": "2024-03-02 16:00:00+00:00", "closed_at": "2024-03-02 15:00:00+00:00"}),
		ghDoc("pull", repo, 4, "Add a README", "A README with the install.", at(10), publicAccess, map[string]any{
			"object_type": "PullRequest", "id": "4", "merged": "False", "state": "open", "user": pyDave, "assignees": []any{},
			"repo": repo, "num_commits": "1", "num_files_changed": "1", "labels": []any{},
			"created_at": "2024-03-01 13:00:00+00:00", "updated_at": "2024-03-01 19:00:00+00:00"}),
		ghDoc("issues", repo, 3, "Document the install", "", at(32), publicAccess, map[string]any{
			"object_type": "Issue", "id": "3", "state": "closed", "user": pyCarol, "assignees": []any{}, "repo": repo, "labels": []any{},
			"created_at": "2024-03-01 12:00:00+00:00", "updated_at": "2024-03-02 17:00:00+00:00", "closed_at": "2024-03-02 15:00:00+00:00",
			"closed_by": pyBob}),
		ghDoc("issues", repo, 1, "Crash on start", "The app crashes when it starts.", at(20), publicAccess, map[string]any{
			"object_type": "Issue", "id": "1", "state": "open", "user": pyAlice, "assignees": []any{pyBob, pyDave}, "repo": repo,
			"labels": []any{"bug", "p1"}, "created_at": "2024-03-01 10:00:00+00:00", "updated_at": "2024-03-02 05:00:00+00:00"}),
		ghDoc("issues", repo, 5, `Support "quotes" in names`, "Names with quotes break it.", at(12), publicAccess, map[string]any{
			"object_type": "Issue", "id": "5", "state": "open", "user": pyBob, "assignees": []any{}, "repo": repo, "labels": []any{},
			"created_at": "2024-03-01 14:00:00+00:00", "updated_at": "2024-03-01 21:00:00+00:00"}),
	}
	if diff := cmp.Diff(jsonOf(t, want), jsonOf(t, rec.docs)); diff != "" {
		t.Errorf("documents (-want +got):\n%s", diff)
	}
	var lists []string
	for _, r := range s.Requests() {
		if strings.Contains(r, "/pulls?") || strings.Contains(r, "/issues?") {
			lists = append(lists, r)
		}
	}
	wantLists := []string{
		"GET /repos/test-org/public-repo/pulls?direction=desc&per_page=100&sort=updated&state=all",
		"GET /repos/test-org/public-repo/issues?direction=desc&per_page=100&sort=updated&state=all",
		"GET /repos/test-org/public-repo/issues?direction=desc&page=2&per_page=100&sort=updated&state=all",
		"GET /repos/test-org/public-repo/issues?direction=desc&page=3&per_page=100&sort=updated&state=all",
	}
	if !slices.Equal(lists, wantLists) {
		t.Errorf("listings %q, want %q", lists, wantLists)
	}
}

// A poll reads only its window (less Onyx's 3 hours of slack): the
// listings, newest first, stop at the first item updated before it; an
// issue edited since replaces the old text; a deleted one is not listed
// by the slim listing, which lists the rest whatever their time.
func TestGitHubPollEditAndSlim(t *testing.T) {
	s := githubtest.NewFixture(t, ghTestToken)
	cfg := map[string]any{"repo_owner": "test-org", "repositories": "public-repo", "include_prs": true, "include_issues": true}
	c := ghOpen(t, s, cfg, ghTestToken)
	s.Requests()
	rec, err := ghRun(t, c, Window{Start: at(20).Add(3*time.Hour + time.Minute), End: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, d := range rec.docs {
		ids = append(ids, d.ID)
	}
	want := []string{"https://github.com/test-org/public-repo/pull/2", "https://github.com/test-org/public-repo/issues/3"}
	if !slices.Equal(ids, want) {
		t.Errorf("the poll's documents %q, want %q", ids, want)
	}
	// The pull requests' first page ends past the window (#4); the
	// issues' second does (#1).
	for _, r := range s.Requests() {
		if strings.Contains(r, "/pulls?") && strings.Contains(r, "page=2") || strings.Contains(r, "page=3") {
			t.Errorf("the poll read past its window: %s", r)
		}
	}

	s.EditItem("test-org/public-repo", 1, func(it *githubtest.Item) {
		it.Body = "It crashes only on Tuesdays."
		it.Updated = time.Now().UTC().Truncate(time.Second)
	})
	s.DeleteItem("test-org/public-repo", 5)
	rec, err = ghRun(t, ghOpen(t, s, cfg, ghTestToken), Window{Start: time.Now().Add(-time.Minute), End: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.docs) != 1 || rec.docs[0].ID != "https://github.com/test-org/public-repo/issues/1" || rec.docs[0].Sections[0].Text != "It crashes only on Tuesdays." {
		t.Errorf("the poll after the edit gave %s, want issue 1 with its new text", jsonOf(t, rec.docs))
	}

	slim, ok := As[Slim](ghOpen(t, s, cfg, ghTestToken))
	if !ok {
		t.Fatal("the GitHub connector is not Slim")
	}
	var listed []string
	if err := slim.ListIDs(context.Background(), func(_ context.Context, batch []string) error {
		listed = append(listed, batch...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(listed)
	wantListed := []string{"https://github.com/test-org/public-repo/issues/1", "https://github.com/test-org/public-repo/issues/3",
		"https://github.com/test-org/public-repo/pull/2", "https://github.com/test-org/public-repo/pull/4"}
	if !slices.Equal(listed, wantListed) {
		t.Errorf("ListIDs %q, want %q", listed, wantListed)
	}
}

// Rate limits are waited out and the request tried again: a secondary
// limit (429, Retry-After) and the primary one (403,
// X-RateLimit-Remaining 0 until X-RateLimit-Reset).
func TestGitHubRateLimits(t *testing.T) {
	for _, status := range []int{429, 403} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			s := githubtest.NewFixture(t, ghTestToken)
			c := ghOpen(t, s, map[string]any{"repo_owner": "test-org", "repositories": "internal-repo", "include_issues": true}, ghTestToken)
			s.RateLimit(status)
			start := time.Now()
			rec, err := ghRun(t, c, all())
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			if len(rec.docs) != 1 {
				t.Errorf("%d documents, want 1", len(rec.docs))
			}
			if reqs := s.Requests(); len(reqs) < 2 || reqs[0] != reqs[1] {
				t.Errorf("requests %q: the first, rate-limited, was not tried again", reqs)
			}
			if time.Since(start) < 900*time.Millisecond {
				t.Errorf("the run took %s: it did not wait for the limit", time.Since(start))
			}
		})
	}
}

// A token GitHub refuses ends the run with a *CredentialError that names
// GitHub's answer and not the token.
func TestGitHubBadToken(t *testing.T) {
	s := githubtest.NewFixture(t, ghTestToken)
	bad := "ghp_notTheRightToken987654321"
	_, err := ghRun(t, ghOpen(t, s, map[string]any{"repo_owner": "test-org", "repositories": "public-repo"}, bad), all())
	var ce *CredentialError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v, want a *CredentialError", err)
	}
	want := "GitHub's API at " + s.BaseURL() + " answered 401 Unauthorized (get repository test-org/public-repo): Bad credentials"
	if ce.Reason != want {
		t.Errorf("reason %q, want %q", ce.Reason, want)
	}
	if strings.Contains(err.Error(), bad) || strings.Contains(err.Error(), ghTestToken) {
		t.Errorf("the error shows the token: %v", err)
	}
}

// Each document carries its repository's access as Onyx's EE
// get_external_access_permission decides it (group ids as Onyx keeps
// them, "github_" and the name): public for a public repository; its
// collaborators', outside collaborators' and teams' groups for a private
// one; its organization's group for an internal one. The
// PermissionSyncer lists every document with the access of the moment:
// a repository made public, a team taken off another, show.
func TestGitHubAccess(t *testing.T) {
	s := githubtest.NewFixture(t, ghTestToken)
	cfg := map[string]any{"repo_owner": "test-org", "repositories": "public-repo, private-repo,internal-repo", "include_prs": true, "include_issues": true}
	rec, err := ghRun(t, ghOpen(t, s, cfg, ghTestToken), all())
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]int64{}
	for _, r := range s.Repos() {
		ids[r.Name] = r.ID()
	}
	private := &quarry.ExternalAccess{ExternalUserEmails: []string{}, ExternalUserGroupIDs: []string{
		fmt.Sprintf("github_%d_collaborators", ids["private-repo"]), fmt.Sprintf("github_%d_outside_collaborators", ids["private-repo"]), "github_core"}}
	slices.Sort(private.ExternalUserGroupIDs)
	internal := &quarry.ExternalAccess{ExternalUserEmails: []string{}, ExternalUserGroupIDs: []string{fmt.Sprintf("github_%d_organization", s.OrgID("test-org"))}}
	byRepo := map[string]*quarry.ExternalAccess{"public-repo": publicAccess, "private-repo": private, "internal-repo": internal}
	got := map[string]any{}
	want := map[string]any{}
	for _, d := range rec.docs {
		got[d.ID] = jsonOf(t, d.ExternalAccess)
		repo := strings.Split(d.ID, "/")[4]
		want[d.ID] = jsonOf(t, byRepo[repo])
	}
	if len(got) != 9 {
		t.Errorf("%d documents, want 9", len(got))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("access (-want +got):\n%s", diff)
	}

	s.EditRepo("test-org/public-repo", func(r *githubtest.Repo) { r.Visibility = "private"; r.Teams = []string{"docs"} })
	s.EditRepo("test-org/private-repo", func(r *githubtest.Repo) { r.Teams = nil })
	ps, ok := As[PermissionSyncer](ghOpen(t, s, cfg, ghTestToken))
	if !ok {
		t.Fatal("the GitHub connector is not a PermissionSyncer")
	}
	got = map[string]any{}
	if err := ps.Permissions(context.Background(), func(_ context.Context, id string, a *quarry.ExternalAccess) error {
		if _, dup := got[id]; dup {
			t.Errorf("%s listed twice", id)
		}
		got[id] = jsonOf(t, a)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	nowPrivate := &quarry.ExternalAccess{ExternalUserEmails: []string{}, ExternalUserGroupIDs: []string{
		fmt.Sprintf("github_%d_collaborators", ids["public-repo"]), fmt.Sprintf("github_%d_outside_collaborators", ids["public-repo"]), "github_docs"}}
	slices.Sort(nowPrivate.ExternalUserGroupIDs)
	private.ExternalUserGroupIDs = slices.DeleteFunc(private.ExternalUserGroupIDs, func(g string) bool { return g == "github_core" })
	byRepo["public-repo"] = nowPrivate
	for id := range want {
		want[id] = jsonOf(t, byRepo[strings.Split(id, "/")[4]])
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Permissions after the changes (-want +got):\n%s", diff)
	}
}

// A token GitHub does not let list a repository's teams (403, a
// fine-grained token without the organization's Members permission)
// still indexes: the private repository's documents name no team, as
// Onyx's; the group sync, which would give wrong groups, fails with
// GitHub's answer.
func TestGitHubTeamsForbidden(t *testing.T) {
	s := githubtest.NewFixture(t, ghTestToken)
	s.Forbid("/teams")
	cfg := map[string]any{"repo_owner": "test-org", "repositories": "private-repo", "include_prs": false, "include_issues": true}
	rec, err := ghRun(t, ghOpen(t, s, cfg, ghTestToken), all())
	if err != nil || len(rec.docs) != 2 {
		t.Fatalf("run: %d documents, error %v; want 2", len(rec.docs), err)
	}
	id := s.Repos()[1].ID()
	want := []string{fmt.Sprintf("github_%d_collaborators", id), fmt.Sprintf("github_%d_outside_collaborators", id)}
	if got := rec.docs[0].ExternalAccess.ExternalUserGroupIDs; !slices.Equal(got, want) {
		t.Errorf("groups %q, want %q", got, want)
	}
	gs, _ := As[GroupSyncer](ghOpen(t, s, cfg, ghTestToken))
	err = gs.Groups(context.Background(), func(context.Context, *quarry.ExternalGroup) error { return nil })
	if err == nil || !strings.HasSuffix(err.Error(), "answered 403 Forbidden (list the teams of test-org/private-repo): Resource not accessible by personal access token") {
		t.Errorf("Groups: %v, want GitHub's 403", err)
	}
}

// The groups are Onyx's github_group_sync's: for the private repository
// its collaborators who are members of the organization, its outside
// collaborators and its team, with their public emails (dave has none);
// for the internal one the organization's members; none for the public
// one. A change of a team's members shows at the next sync.
func TestGitHubGroups(t *testing.T) {
	s := githubtest.NewFixture(t, ghTestToken)
	cfg := map[string]any{"repo_owner": "test-org", "include_issues": true} // All the organization's repositories.
	groups := func() map[string][]string {
		gs, ok := As[GroupSyncer](ghOpen(t, s, cfg, ghTestToken))
		if !ok {
			t.Fatal("the GitHub connector is not a GroupSyncer")
		}
		out := map[string][]string{}
		if err := gs.Groups(context.Background(), func(_ context.Context, g *quarry.ExternalGroup) error {
			if _, dup := out[g.ID]; dup {
				t.Errorf("group %s listed twice", g.ID)
			}
			out[g.ID] = g.UserEmails
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	var private int64
	for _, r := range s.Repos() {
		if r.Name == "private-repo" {
			private = r.ID()
		}
	}
	org := fmt.Sprintf("github_%d_organization", s.OrgID("test-org"))
	want := map[string][]string{
		fmt.Sprintf("github_%d_collaborators", private):         {"alice@example.com"},
		fmt.Sprintf("github_%d_outside_collaborators", private): {"carol@example.com"},
		"github_core": {"alice@example.com", "bob@example.com"},
		org:           {"alice@example.com", "bob@example.com"},
	}
	if diff := cmp.Diff(want, groups()); diff != "" {
		t.Errorf("groups (-want +got):\n%s", diff)
	}
	s.SetTeam("test-org", githubtest.Team{Slug: "core", Name: "Core", Members: []string{"carol"}})
	s.SetUser(githubtest.User{Login: "alice", Name: "Alice Liddell", Email: "alice@wonderland.example"})
	want = map[string][]string{
		fmt.Sprintf("github_%d_collaborators", private):         {"alice@wonderland.example"},
		fmt.Sprintf("github_%d_outside_collaborators", private): {"carol@example.com"},
		"github_core": {"carol@example.com"},
		org:           {"alice@wonderland.example", "bob@example.com"},
	}
	if diff := cmp.Diff(want, groups()); diff != "" {
		t.Errorf("groups after the changes (-want +got):\n%s", diff)
	}
}

// Without repositories, a run reads every repository of repo_owner: an
// organization's (listed page by page), or a user's.
func TestGitHubAllRepositories(t *testing.T) {
	s := githubtest.NewFixture(t, ghTestToken)
	s.AddRepo(githubtest.Repo{Owner: "alice", Name: "notes", Visibility: "public"})
	s.AddItem("alice/notes", githubtest.Item{Pull: true, Title: "Notes", User: "alice", Created: at(1), Updated: at(2)})
	for _, tc := range []struct {
		owner string
		want  int
	}{{"test-org", 3}, {"alice", 1}} {
		rec, err := ghRun(t, ghOpen(t, s, map[string]any{"repo_owner": tc.owner, "include_issues": true}, ghTestToken), all())
		if err != nil {
			t.Fatal(err)
		}
		repos := map[string]bool{}
		for _, d := range rec.docs {
			repos[d.Metadata["repo"].(string)] = true
		}
		if len(repos) != tc.want {
			t.Errorf("%s: pull requests of %v, want %d repositories", tc.owner, repos, tc.want)
		}
	}
}

// A configuration Onyx's connector refuses is refused.
func TestGitHubConfig(t *testing.T) {
	for _, tc := range []struct {
		cfg, cred, err string
	}{
		{`{"repositories": "x"}`, `{"github_access_token": "t"}`, "repo_owner must be provided"},
		{`{"repo_owner": "o", "include_prs": false}`, `{"github_access_token": "t"}`, "at least one of pull requests, issues, or files must be selected for indexing"},
		{`{"repo_owner": "o", "state_filter": "merged"}`, `{"github_access_token": "t"}`, `state_filter must be all, open or closed, not "merged"`},
		{`{"repo_owner": "o"}`, `{}`, "the credential has no github_access_token"},
	} {
		_, err := NewGitHub(json.RawMessage(tc.cfg), json.RawMessage(tc.cred), &Env{HTTP: &http.Client{}})
		if err == nil || err.Error() != tc.err {
			t.Errorf("%s %s: error %v, want %q", tc.cfg, tc.cred, err, tc.err)
		}
	}
}

// With include_files, a run reads the files of each repository's default
// branch that Onyx indexes (prose documents, conventional names such as
// LICENSE; not code, not under node_modules), each a document with
// Onyx's id (the blob's URL), path, metadata and the repository's last
// push as its time; a file that is not text is a failure of its own; an
// empty repository has none. Files are read 100 a step, the checkpoint
// keeping the tree's SHA. A poll skips a repository not pushed to since
// its window's start; the slim listing lists the files; a branch the
// repository has not got ends the run.
func TestGitHubFiles(t *testing.T) {
	s := githubtest.NewFixture(t, ghTestToken)
	many := map[string]string{}
	for i := range 150 {
		many[fmt.Sprintf("docs/page%03d.md", i)] = fmt.Sprintf("Page %d.\n", i)
	}
	s.AddRepo(githubtest.Repo{Owner: "test-org", Name: "handbook", Visibility: "public", Files: many})
	cfg := map[string]any{"repo_owner": "test-org", "repositories": "public-repo,private-repo,internal-repo,handbook", "include_prs": false, "include_files": true}
	c := ghOpen(t, s, cfg, ghTestToken)
	rec, err := ghRun(t, c, all())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, d := range rec.docs {
		if !strings.Contains(d.ID, "/handbook/") {
			ids = append(ids, d.ID)
		}
	}
	blob := "https://github.com/test-org/public-repo/blob/main/"
	want := []string{blob + "LICENSE", blob + "README.md", blob + "docs/guide.md", "https://github.com/test-org/private-repo/blob/main/README.md"}
	if !slices.Equal(ids, want) {
		t.Errorf("files %q, want %q", ids, want)
	}
	if n := len(rec.docs) - len(ids); n != 150 {
		t.Errorf("%d files of the handbook, want 150", n)
	}
	readme := map[string]any{"id": blob + "README.md", "sections": []any{map[string]any{"text": "# Public repo\nIt does things.\n", "link": blob + "README.md"}},
		"source": "github", "semantic_identifier": "README.md", "doc_updated_at": "2024-01-01T00:00:00Z", "external_access": publicAccess,
		"metadata": map[string]any{"object_type": "File", "repo": "test-org/public-repo", "path": "README.md", "file_extension": ".md", "branch": "main"}}
	if diff := cmp.Diff(jsonOf(t, readme), jsonOf(t, rec.docs[1])); diff != "" {
		t.Errorf("README.md (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(jsonOf(t, []*quarry.ConnectorFailure{{FailedDocument: &quarry.DocumentFailure{DocumentID: blob + "notes.txt", DocumentLink: new(blob + "notes.txt")},
		FailureMessage: "Skipping non-text/undecodable file: notes.txt"}}), jsonOf(t, rec.failures)); diff != "" {
		t.Errorf("failures (-want +got):\n%s", diff)
	}

	s.Requests()
	rec, err = ghRun(t, ghOpen(t, s, cfg, ghTestToken), Window{Start: time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC), End: time.Now()})
	if err != nil || len(rec.docs) != 0 {
		t.Errorf("a poll after the last push: %d documents, error %v; want none", len(rec.docs), err)
	}
	for _, r := range s.Requests() {
		if strings.Contains(r, "/git/trees/") {
			t.Errorf("a poll after the last push listed a tree: %s", r)
		}
	}

	slim, _ := As[Slim](ghOpen(t, s, cfg, ghTestToken))
	n := 0
	if err := slim.ListIDs(context.Background(), func(_ context.Context, batch []string) error {
		n += len(batch)
		return nil
	}); err != nil || n != 4+1+150 {
		t.Errorf("ListIDs: %d ids, error %v; want %d (the files, notes.txt too)", n, err, 4+1+150)
	}

	cfg["branch"] = "dev"
	_, err = ghRun(t, ghOpen(t, s, cfg, ghTestToken), all())
	if want := "Branch 'dev' not found in repository test-org/public-repo. Leave the branch setting blank to use the repository's default branch."; err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}

func TestGitHubIndexablePath(t *testing.T) {
	for path, want := range map[string]bool{
		"README.md": true, "docs/Guide.MDX": true, "a/b/notes.txt": true, "LICENSE": true, "sub/Changelog": true, "x.rst": true,
		"main.go": false, "data.json": false, "node_modules/a/README.md": false, "build/x.md": false, ".md": false, "README": true,
		"LICENSE.txt": true, "readme.go": false, "CODEOWNERS": true,
	} {
		if got := ghIndexablePath(path, 10); got != want {
			t.Errorf("ghIndexablePath(%q) = %v, want %v", path, got, want)
		}
	}
	if ghIndexablePath("big.md", 1_000_001) {
		t.Error("a file over 1,000,000 bytes is indexable")
	}
}

// pyStr writes strings as Python's repr() does.
func TestPyStr(t *testing.T) {
	for in, want := range map[string]string{
		"plain": `'plain'`, "O'Brien": `"O'Brien"`, `say "hi"`: `'say "hi"'`, `it's "x"`: `'it\'s "x"'`,
		"a\\b": `'a\\b'`, "tab\there\n": `'tab\there\n'`, "é 中": `'é 中'`, "\x00\u00a0": `'\x00\xa0'`,
	} {
		if got := pyrepr.Quote(in); got != want {
			t.Errorf("pyrepr.Quote(%q) = %s, want %s", in, got, want)
		}
	}
}

// BenchmarkGitHubConnector runs the GitHub connector over a repository
// of 500 pull requests and 500 issues (of 20 authors, each with about
// 1 KB of text) on the simulator, on loopback, with GitHub's own page
// size (100): docs/s is the connector's indexing rate, sim-ms/op the
// simulator's own time answering (the rest is the connector's and the
// client's, and the loopback's).
func BenchmarkGitHubConnector(b *testing.B) {
	const n = 500
	s := githubtest.New(b, ghTestToken)
	s.PageSize = 100
	s.AddOrg("bench-org")
	for i := range 20 {
		s.AddUser(githubtest.User{Login: fmt.Sprintf("user%d", i), Name: fmt.Sprintf("User %d", i), Email: fmt.Sprintf("user%d@example.com", i)})
	}
	s.AddRepo(githubtest.Repo{Owner: "bench-org", Name: "big", Visibility: "public"})
	body := strings.Repeat("A line of the description of the change, with some words. ", 17)
	for i := range 2 * n {
		s.AddItem("bench-org/big", githubtest.Item{Pull: i%2 == 0, Title: fmt.Sprintf("Item %d", i), Body: body, User: fmt.Sprintf("user%d", i%20),
			Assignees: []string{fmt.Sprintf("user%d", (i+1)%20)}, Labels: []string{"bench"}, Created: at(i), Updated: at(i + 1), Commits: 1, ChangedFiles: 1})
	}
	cfg := map[string]any{"repo_owner": "bench-org", "repositories": "big", "include_prs": true, "include_issues": true}
	served := s.ServeTime()
	b.ResetTimer()
	for b.Loop() {
		rec, err := ghRun(b, ghOpen(b, s, cfg, ghTestToken), all())
		if err != nil || len(rec.docs) != 2*n {
			b.Fatalf("run: %d documents, error %v", len(rec.docs), err)
		}
	}
	b.ReportMetric(float64(b.N*2*n)/b.Elapsed().Seconds(), "docs/s")
	b.ReportMetric(float64((s.ServeTime()-served).Milliseconds())/float64(b.N), "sim-ms/op")
}

// As Onyx's fetch_configured_repos: among several repositories named, one
// GitHub has not got is skipped; named alone, it fails the run with
// GitHub's answer.
func TestGitHubMissingRepository(t *testing.T) {
	s := githubtest.NewFixture(t, ghTestToken)
	rec, err := ghRun(t, ghOpen(t, s, map[string]any{"repo_owner": "test-org", "repositories": "nope, internal-repo", "include_issues": true}, ghTestToken), all())
	if err != nil || len(rec.docs) != 1 {
		t.Errorf("run: %d documents, error %v; want internal-repo's one", len(rec.docs), err)
	}
	_, err = ghRun(t, ghOpen(t, s, map[string]any{"repo_owner": "test-org", "repositories": "nope"}, ghTestToken), all())
	if want := "GitHub's API at " + s.BaseURL() + " answered 404 Not Found (get repository test-org/nope): Not Found"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}

// QUARRY_CONNECTOR_ENDPOINTS may point github at GitHub Enterprise
// Server's API, under /api/v3/: every request goes there, pages too.
func TestGitHubEnterpriseServerBase(t *testing.T) {
	s := githubtest.NewFixture(t, ghTestToken)
	b, _ := json.Marshal(map[string]any{"repo_owner": "test-org", "repositories": "public-repo", "include_issues": true})
	cred, _ := json.Marshal(map[string]string{"github_access_token": ghTestToken})
	c, err := NewGitHub(b, cred, &Env{HTTP: s.Client(), Endpoints: Endpoints{GitHubSource: s.URL + "/api/v3"}})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := ghRun(t, c, all())
	if err != nil || len(rec.docs) != 5 {
		t.Fatalf("run: %d documents, error %v; want 5", len(rec.docs), err)
	}
	for _, r := range s.Requests() {
		if !strings.HasPrefix(r, "GET /api/v3/") {
			t.Errorf("a request outside the base: %s", r)
		}
	}
}

// BenchmarkGitHubPermissions lists the access of 10,000 documents (5,000
// pull requests and 5,000 issues of a private repository with a team) on
// the simulator, pages of 100: entries/s is the rate of the connector's
// side of a permission sync, sim-ms/op the simulator's own time.
func BenchmarkGitHubPermissions(b *testing.B) {
	const n = 5000
	s := githubtest.New(b, ghTestToken)
	s.PageSize = 100
	s.AddUser(githubtest.User{Login: "owner", Email: "owner@example.com"})
	s.AddOrg("bench-org", "owner")
	s.SetTeam("bench-org", githubtest.Team{Slug: "core", Name: "Core", Members: []string{"owner"}})
	s.AddRepo(githubtest.Repo{Owner: "bench-org", Name: "secret", Visibility: "private", Collaborators: []string{"owner"}, Teams: []string{"core"}})
	for i := range 2 * n {
		s.AddItem("bench-org/secret", githubtest.Item{Pull: i%2 == 0, Title: fmt.Sprintf("Item %d", i), User: "owner", Created: at(i), Updated: at(i + 1)})
	}
	cfg := map[string]any{"repo_owner": "bench-org", "repositories": "secret", "include_prs": true, "include_issues": true}
	served := s.ServeTime()
	b.ResetTimer()
	for b.Loop() {
		ps, _ := As[PermissionSyncer](ghOpen(b, s, cfg, ghTestToken))
		count := 0
		if err := ps.Permissions(context.Background(), func(_ context.Context, _ string, a *quarry.ExternalAccess) error {
			if len(a.ExternalUserGroupIDs) != 3 {
				return fmt.Errorf("access %+v", a)
			}
			count++
			return nil
		}); err != nil || count != 2*n {
			b.Fatalf("Permissions: %d entries, error %v", count, err)
		}
	}
	b.ReportMetric(float64(b.N*2*n)/b.Elapsed().Seconds(), "entries/s")
	b.ReportMetric(float64((s.ServeTime()-served).Milliseconds())/float64(b.N), "sim-ms/op")
}

// The token goes to the API's host only: an answer that redirects to
// another host (a proxy before GitHub Enterprise Server gone wrong) does
// not carry it there.
func TestGitHubTokenStaysOnItsHost(t *testing.T) {
	var seen []string
	var mu sync.Mutex
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
	}))
	defer other.Close()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+ghTestToken {
			t.Errorf("the API's host got Authorization %q", r.Header.Get("Authorization"))
		}
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusFound)
	}))
	defer api.Close()
	b, _ := json.Marshal(map[string]any{"repo_owner": "test-org", "repositories": "public-repo"})
	cred, _ := json.Marshal(map[string]string{"github_access_token": ghTestToken})
	c, err := NewRegistry().Open(GitHubSource, b, cred, &Env{HTTP: api.Client(), Now: time.Now, Log: slog.New(slog.DiscardHandler),
		Endpoints: Endpoints{GitHubSource: api.URL}})
	if err != nil {
		t.Fatal(err)
	}
	ghRun(t, c, all())
	mu.Lock()
	defer mu.Unlock()
	if len(seen) == 0 {
		t.Fatal("the redirect was not followed")
	}
	for _, a := range seen {
		if a != "" {
			t.Errorf("the other host got Authorization %q", a)
		}
	}
}
