package outbound_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/outbound/connector"
	"github.com/quarryhq/quarry/outbound/connector/githubtest"
)

// githubPair makes a github connector of config, a credential of token
// and their pair of access type access, as the admin, and returns the ids
// of the connector, the credential and the pair.
func (w *world) githubPair(config map[string]any, token, access string) (connectorID, credentialID, pairID int64) {
	w.t.Helper()
	var id struct {
		ID   int64 `json:"id"`
		Data int64 `json:"data"`
	}
	name := fmt.Sprintf("github %s %d", w.t.Name(), time.Now().UnixNano())
	w.do("POST", "/manage/admin/connector", map[string]any{"name": name, "source": "github",
		"input_type": "poll", "connector_specific_config": config, "refresh_freq": nil, "prune_freq": nil}, &id)
	connectorID = id.ID + id.Data
	id.ID, id.Data = 0, 0
	w.do("POST", "/manage/credential", map[string]any{"credential_json": map[string]string{"github_access_token": token},
		"admin_public": true, "source": "github"}, &id)
	credentialID = id.ID + id.Data
	id.ID, id.Data = 0, 0
	w.do("PUT", fmt.Sprintf("/manage/connector/%d/credential/%d", connectorID, credentialID),
		map[string]any{"name": "pair " + name, "access_type": access, "groups": []int64{}}, &id)
	return connectorID, credentialID, id.ID + id.Data
}

// docPrincipals returns the access the index keeps of each of a pair's
// documents: its principals, joined by spaces.
func (w *world) docPrincipals(pairID int64) map[string]string {
	w.t.Helper()
	rows, err := w.raw.Query(`SELECT document_id, principal FROM search_document_access WHERE cc_pair_id = $1 ORDER BY document_id, principal`, pairID)
	if err != nil {
		w.t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, p string
		if err := rows.Scan(&id, &p); err != nil {
			w.t.Fatal(err)
		}
		out[id] = strings.TrimSpace(out[id] + " " + p)
	}
	if err := rows.Err(); err != nil {
		w.t.Fatal(err)
	}
	return out
}

// A sync pair of the GitHub connector, through a registered worker whose
// QUARRY_CONNECTOR_ENDPOINTS point github at the simulator: the first
// attempt, whose first call GitHub answers 429 (Retry-After: 1), indexes
// the pull requests and issues of a public and a private repository, each with its repository's access (public, or the private
// repository's groups); a poll writes the one issue edited since, with
// its new text; a prune removes the issue deleted at GitHub. The
// connector's GroupSyncer and PermissionSyncer, which the server's
// permission syncs are to run, list the groups and the access of the
// moment (tested here directly: the sync attempts are another
// workstream's). The token is the credential's secret value, which no
// log may show.
func TestGitHubConnectorRun(t *testing.T) {
	s := githubtest.NewFixture(t, secretValue)
	w := newWorld(t)
	w.endpoints = connector.Endpoints{connector.GitHubSource: s.BaseURL()}
	w.registeredWorker()
	config := map[string]any{"repo_owner": "test-org", "repositories": "public-repo,private-repo", "include_prs": true, "include_issues": true}
	connectorID, credentialID, pair := w.githubPair(config, secretValue, "sync")
	s.RateLimit(429) // The first call is refused for a second.
	w.schedule()
	a := w.waitAttempt(pair, 1, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed)
	if a.Status != quarry.IndexSuccess || a.NewDocsIndexed != 8 {
		t.Fatalf("attempt %s with %d new documents (error %v), want success with 8; log:\n%s", a.Status, a.NewDocsIndexed, a.ErrorMsg, w.log.String())
	}
	pub := "https://github.com/test-org/public-repo/"
	priv := "https://github.com/test-org/private-repo/"
	want := []string{priv + "issues/1 1: Secret roadmap", priv + "issues/3 3: Audit", priv + "pull/2 2: Rotate the keys",
		pub + "issues/1 1: Crash on start", pub + "issues/3 3: Document the install", pub + `issues/5 5: Support "quotes" in names`,
		pub + "pull/2 2: Fix the crash", pub + "pull/4 4: Add a README"}
	if got := w.documentNames(pair, ""); !slices.Equal(got, want) {
		t.Errorf("documents\n%q, want\n%q", got, want)
	}
	var privateID int64
	for _, r := range s.Repos() {
		if r.Name == "private-repo" {
			privateID = r.ID()
		}
	}
	privateAccess := fmt.Sprintf("group:github_%d_collaborators group:github_%d_outside_collaborators group:github_core", privateID, privateID)
	access := w.docPrincipals(pair)
	for _, id := range w.documents(pair) {
		want := "public"
		if strings.HasPrefix(id, priv) {
			want = privateAccess
		}
		if access[id] != want {
			t.Errorf("%s: access %q, want %q", id, access[id], want)
		}
	}

	s.EditItem("test-org/public-repo", 1, func(it *githubtest.Item) {
		it.Body = "It crashes only on Tuesdays."
		it.Updated = time.Now().UTC().Truncate(time.Second)
	})
	w.do("POST", "/manage/admin/connector/run-once", map[string]any{"connector_id": connectorID,
		"credential_ids": []int64{credentialID}, "from_beginning": false}, nil)
	w.schedule()
	a = w.waitAttempt(pair, 2, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed)
	if a.Status != quarry.IndexSuccess || a.TotalDocsIndexed != 1 || a.NewDocsIndexed != 0 {
		t.Errorf("the poll %s with %d documents written, %d new (error %v), want success with 1 and 0", a.Status, a.TotalDocsIndexed, a.NewDocsIndexed, a.ErrorMsg)
	}
	_, body := w.document(pair, pub+"issues/1")
	if !strings.Contains(body, "It crashes only on Tuesdays.") || strings.Contains(body, "The app crashes when it starts.") {
		t.Errorf("issue 1's body %s, not its edited text alone", body)
	}

	s.DeleteItem("test-org/public-repo", 5)
	if code, body := w.call("POST", fmt.Sprintf("/manage/admin/cc-pair/%d/prune", pair), nil); code != 200 {
		t.Fatalf("prune: %d %s", code, body)
	}
	w.waitPruned(pair)
	if st, removed := w.pruneAttempt(pair); st != "success" || removed != 1 {
		t.Errorf("the prune ended %s removing %d documents, want success removing 1", st, removed)
	}
	if ids := w.documents(pair); len(ids) != 7 || slices.Contains(ids, pub+"issues/5") {
		t.Errorf("documents after the prune %q, want the 7 but issue 5", ids)
	}

	// The syncs, as the server's permission-sync attempts are to run them
	// (the pair's connector, opened as a worker opens it).
	s.EditRepo("test-org/private-repo", func(r *githubtest.Repo) { r.Visibility = "public" })
	c, err := connector.NewRegistry().Open(connector.GitHubSource, mustJSON(t, config), mustJSON(t, map[string]string{"github_access_token": secretValue}),
		&connector.Env{HTTP: guardedRunner(t).Client(), Endpoints: w.endpoints})
	if err != nil {
		t.Fatal(err)
	}
	ps, _ := connector.As[connector.PermissionSyncer](c)
	n := 0
	if err := ps.Permissions(context.Background(), func(_ context.Context, id string, a *quarry.ExternalAccess) error {
		n++
		if !a.IsPublic {
			t.Errorf("%s: access %+v after private-repo was made public", id, a)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n != 7 {
		t.Errorf("Permissions listed %d documents, want 7", n)
	}
	gs, _ := connector.As[connector.GroupSyncer](c)
	var groups []string
	if err := gs.Groups(context.Background(), func(_ context.Context, g *quarry.ExternalGroup) error {
		groups = append(groups, g.ID)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(groups) != 0 {
		t.Errorf("groups %q of two public repositories, want none", groups)
	}
}

// A token GitHub refuses ends the attempt as every refused credential
// does (failed, quarry.StopCredentialRefused, the pair backing off),
// with GitHub's message and no secret.
func TestGitHubConnectorRefused(t *testing.T) {
	s := githubtest.NewFixture(t, "the-right-token")
	w := newWorld(t)
	w.endpoints = connector.Endpoints{connector.GitHubSource: s.BaseURL()}
	w.registeredWorker()
	_, _, pair := w.githubPair(map[string]any{"repo_owner": "test-org", "repositories": "public-repo"}, secretValue, "public")
	w.schedule()
	a := w.waitAttempt(pair, 1, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed, quarry.IndexCanceled)
	want := quarry.CredentialRefusedMessage("GitHub's API at " + s.BaseURL() + " answered 401 Unauthorized (get repository test-org/public-repo): Bad credentials")
	if a.Status != quarry.IndexFailed || a.ErrorMsg == nil || *a.ErrorMsg != want {
		t.Errorf("attempt %s with error %v, want failed with %q", a.Status, a.ErrorMsg, want)
	}
}

// mustJSON is v as JSON.
func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// BenchmarkGitHubConnectorIndexing indexes a repository of 500 pull
// requests and 500 issues (about 1 KB of text each) from the simulator
// (pages of 100, GitHub's most), from the scheduler's pass to the
// attempt's end, through the worker of quarry serve into the store:
// docs/s is the GitHub connector's indexing rate, sim-ms/op the
// simulator's own time answering.
func BenchmarkGitHubConnectorIndexing(b *testing.B) {
	const n = 500
	s := githubtest.New(b, secretValue)
	s.PageSize = 100
	s.AddOrg("bench-org")
	for i := range 20 {
		s.AddUser(githubtest.User{Login: fmt.Sprintf("user%d", i), Name: fmt.Sprintf("User %d", i), Email: fmt.Sprintf("user%d@example.com", i)})
	}
	s.AddRepo(githubtest.Repo{Owner: "bench-org", Name: "big", Visibility: "public"})
	body := strings.Repeat("A line of the description of the change, with some words. ", 17)
	for i := range 2 * n {
		s.AddItem("bench-org/big", githubtest.Item{Pull: i%2 == 0, Title: fmt.Sprintf("Item %d", i), Body: body, User: fmt.Sprintf("user%d", i%20),
			Assignees: []string{fmt.Sprintf("user%d", (i+1)%20)}, Labels: []string{"bench"}, Created: githubtest.Created.Add(time.Duration(i) * time.Hour),
			Updated: githubtest.Created.Add(time.Duration(i+1) * time.Hour), Commits: 1, ChangedFiles: 1})
	}
	w := newWorld(b)
	w.endpoints = connector.Endpoints{connector.GitHubSource: s.BaseURL()}
	w.inProcessWorker()
	served := s.ServeTime()
	b.ResetTimer()
	for b.Loop() {
		_, _, pair := w.githubPair(map[string]any{"repo_owner": "bench-org", "repositories": "big", "include_prs": true, "include_issues": true}, secretValue, "public")
		w.schedule()
		a := w.waitAttempt(pair, 1, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed)
		if a.Status != quarry.IndexSuccess || a.NewDocsIndexed != 2*n {
			b.Fatalf("attempt %s with %d new documents (error %v), want success with %d", a.Status, a.NewDocsIndexed, a.ErrorMsg, 2*n)
		}
	}
	b.ReportMetric(float64(b.N*2*n)/b.Elapsed().Seconds(), "docs/s")
	b.ReportMetric(float64((s.ServeTime()-served).Milliseconds())/float64(b.N), "sim-ms/op")
}
