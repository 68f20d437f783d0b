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
	"github.com/quarryhq/quarry/outbound/connector/jiratest"
)

// jiraPair makes a jira connector of config, a Cloud credential of the
// fixture's email and token and their pair of access type access, as the
// admin, and returns the ids of the connector, the credential and the
// pair.
func (w *world) jiraPair(config map[string]any, token, access string) (connectorID, credentialID, pairID int64) {
	w.t.Helper()
	var id struct {
		ID   int64 `json:"id"`
		Data int64 `json:"data"`
	}
	name := fmt.Sprintf("jira %s %d", w.t.Name(), time.Now().UnixNano())
	w.do("POST", "/manage/admin/connector", map[string]any{"name": name, "source": "jira",
		"input_type": "poll", "connector_specific_config": config, "refresh_freq": nil, "prune_freq": nil}, &id)
	connectorID = id.ID + id.Data
	id.ID, id.Data = 0, 0
	w.do("POST", "/manage/credential", map[string]any{"credential_json": map[string]string{"jira_user_email": jiratest.FixtureEmail, "jira_api_token": token},
		"admin_public": true, "source": "jira"}, &id)
	credentialID = id.ID + id.Data
	id.ID, id.Data = 0, 0
	w.do("PUT", fmt.Sprintf("/manage/connector/%d/credential/%d", connectorID, credentialID),
		map[string]any{"name": "pair " + name, "access_type": access, "groups": []int64{}}, &id)
	return connectorID, credentialID, id.ID + id.Data
}

// jiraAccess returns the access the index keeps of each of a pair's
// documents, by issue key: its principals, joined by spaces.
func (w *world) jiraAccess(pairID int64, base string) map[string]string {
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
		id = strings.TrimPrefix(id, base)
		out[id] = strings.TrimSpace(out[id] + " " + p)
	}
	if err := rows.Err(); err != nil {
		w.t.Fatal(err)
	}
	return out
}

// A sync pair of the Jira connector, through a registered worker whose
// connectors reach the simulator through the egress guard: the first
// attempt (its first search answered 429, waited out) indexes the
// issues but the labelled one, each with its project's access (ENG's
// users and groups, OPS public, SEC no one); a poll writes the one issue
// edited since, with its new text; a prune removes the issue deleted at
// Jira. The connector's GroupSyncer and PermissionSyncer, which the
// server's permission syncs are to run, list the groups and the access
// of the moment (tested here directly: the sync attempts are another
// workstream's). The token is the credential's secret value, which no
// log may show.
func TestJiraConnectorRun(t *testing.T) {
	s := jiratest.NewFixture(t, secretValue)
	s.Limit(1)
	w := newWorld(t)
	w.registeredWorker()
	config := map[string]any{"jira_base_url": s.BaseURL(), "comment_email_blacklist": []string{"automation@example.com"}, "labels_to_skip": []string{"secret"}}
	connectorID, credentialID, pair := w.jiraPair(config, secretValue, "sync")
	w.schedule()
	a := w.waitAttempt(pair, 1, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed)
	if a.Status != quarry.IndexSuccess || a.NewDocsIndexed != 6 {
		t.Fatalf("attempt %s with %d new documents (error %v), want success with 6; log:\n%s", a.Status, a.NewDocsIndexed, a.ErrorMsg, w.log.String())
	}
	b := s.BaseURL() + "/browse/"
	want := []string{"ENG-1 ENG-1: Search revamp", "ENG-2 ENG-2: Index the wiki", "ENG-4 ENG-4: Write the docs",
		"OPS-1 OPS-1: Rotate the keys", "OPS-2 OPS-2: Renew the certificate", "SEC-1 SEC-1: Audit"}
	if got := w.documentNames(pair, b); !slices.Equal(got, want) {
		t.Errorf("documents\n%q, want\n%q", got, want)
	}
	eng := "email:alice@example.com email:dave@example.com group:jira_engineering group:jira_support"
	wantAccess := map[string]string{"ENG-1": eng, "ENG-2": eng, "ENG-4": eng, "OPS-1": "public", "OPS-2": "public"}
	if got := w.jiraAccess(pair, b); fmt.Sprint(got) != fmt.Sprint(wantAccess) {
		t.Errorf("access\n%v, want\n%v", got, wantAccess)
	}

	s.EditIssue("ENG-2", func(is *jiratest.Issue) {
		is.Description = "Index the wiki and its talk pages."
		is.Updated = time.Now().UTC().Truncate(time.Millisecond)
	})
	w.do("POST", "/manage/admin/connector/run-once", map[string]any{"connector_id": connectorID,
		"credential_ids": []int64{credentialID}, "from_beginning": false}, nil)
	w.schedule()
	a = w.waitAttempt(pair, 2, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed)
	if a.Status != quarry.IndexSuccess || a.TotalDocsIndexed != 1 || a.NewDocsIndexed != 0 {
		t.Errorf("the poll %s with %d documents written, %d new (error %v), want success with 1 and 0", a.Status, a.TotalDocsIndexed, a.NewDocsIndexed, a.ErrorMsg)
	}
	_, body := w.document(pair, b+"ENG-2")
	if !strings.Contains(body, "Index the wiki and its talk pages.") || strings.Contains(body, "Keep the links.") {
		t.Errorf("ENG-2's body %s, not its edited text alone", body)
	}
	jqls := s.JQLs()
	if last := jqls[len(jqls)-1]; strings.HasPrefix(last, "updated >= 0 AND") {
		t.Errorf("the poll's JQL %q starts at the epoch, not at its window", last)
	}

	s.DeleteIssue("OPS-2")
	if code, body := w.call("POST", fmt.Sprintf("/manage/admin/cc-pair/%d/prune", pair), nil); code != 200 {
		t.Fatalf("prune: %d %s", code, body)
	}
	w.waitPruned(pair)
	if st, removed := w.pruneAttempt(pair); st != "success" || removed != 1 {
		t.Errorf("the prune ended %s removing %d documents, want success removing 1", st, removed)
	}
	if ids := w.documents(pair); len(ids) != 5 || slices.Contains(ids, b+"OPS-2") {
		t.Errorf("documents after the prune %q, want the 5 but OPS-2", ids)
	}

	// The syncs, as the server's permission-sync attempts are to run them
	// (the pair's connector, opened as a worker opens it).
	s.SetPermissions("SEC", jiratest.Holder{Type: "group", Param: "jira-admins"})
	s.RemoveMember("engineering", jiratest.Bob)
	cfg, _ := json.Marshal(config)
	cred, _ := json.Marshal(map[string]string{"jira_user_email": jiratest.FixtureEmail, "jira_api_token": secretValue})
	c, err := connector.NewRegistry().Open(connector.JiraSource, cfg, cred, &connector.Env{HTTP: guardedRunner(t).Client()})
	if err != nil {
		t.Fatal(err)
	}
	ps, _ := connector.As[connector.PermissionSyncer](c)
	got := map[string]string{}
	if err := ps.Permissions(context.Background(), func(_ context.Context, id string, a *quarry.ExternalAccess) error {
		got[strings.TrimPrefix(id, b)] = strings.Join(a.Principals(), " ")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	wantAccess = map[string]string{"ENG-1": eng, "ENG-2": eng, "ENG-3": eng, "ENG-4": eng, "OPS-1": "public", "SEC-1": "group:jira_jira-admins"}
	if fmt.Sprint(got) != fmt.Sprint(wantAccess) {
		t.Errorf("Permissions\n%v, want\n%v", got, wantAccess)
	}
	gs, _ := connector.As[connector.GroupSyncer](c)
	var groups []string
	if err := gs.Groups(context.Background(), func(_ context.Context, g *quarry.ExternalGroup) error {
		groups = append(groups, g.ID+"="+strings.Join(g.UserEmails, ","))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"jira_engineering=alice@example.com", "jira_jira-admins=alice@example.com", "jira_support=dave@example.com"}; !slices.Equal(groups, want) {
		t.Errorf("groups %q, want %q", groups, want)
	}
}

// A token Jira refuses ends the attempt as every refused credential does
// (failed, quarry.StopCredentialRefused, the pair backing off), with
// Jira's message and no secret.
func TestJiraConnectorRefused(t *testing.T) {
	s := jiratest.NewFixture(t, "the-right-token")
	w := newWorld(t)
	w.registeredWorker()
	_, _, pair := w.jiraPair(map[string]any{"jira_base_url": s.BaseURL(), "project_key": "OPS"}, secretValue, "public")
	w.schedule()
	a := w.waitAttempt(pair, 1, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed, quarry.IndexCanceled)
	want := quarry.CredentialRefusedMessage("Jira at " + s.BaseURL() + " answered 401 Unauthorized (search issue ids): Client must be authenticated to access this resource.")
	if a.Status != quarry.IndexFailed || a.ErrorMsg == nil || *a.ErrorMsg != want {
		t.Errorf("attempt %s with error %v, want failed with %q", a.Status, a.ErrorMsg, want)
	}
}

// BenchmarkJiraConnectorIndexing indexes a project of 1,000 issues
// (about 1 KB of description and two comments each) from the simulator
// (pages of 100 ids), from the scheduler's pass to the attempt's end,
// through the worker of quarry serve into the store: docs/s is the Jira
// connector's indexing rate, sim-ms/op the simulator's own time
// answering.
func BenchmarkJiraConnectorIndexing(b *testing.B) {
	const n = 1000
	s := jiratest.New(b, jiratest.FixtureEmail, secretValue)
	s.PageSize = 100
	s.AddUser(jiratest.User{AccountID: "a1", DisplayName: "Ann", Email: "ann@example.com"})
	s.AddProject(jiratest.Project{Key: "BEN", Name: "Bench", Permissions: []jiratest.Holder{{Type: "anyone"}}})
	text := strings.Repeat("A line of the description of the issue, with some words. ", 17)
	for i := range n {
		s.AddIssue(jiratest.Issue{Project: "BEN", Summary: fmt.Sprintf("Issue %d", i), Description: text, Status: "To Do", IssueType: "Task",
			Reporter: "a1", Assignee: "a1", Labels: []string{"bench"}, Created: jiratest.Created, Updated: jiratest.Created.Add(time.Duration(i) * time.Minute),
			Comments: []jiratest.Comment{{Author: "a1", Body: "A comment.", Created: jiratest.Created}, {Author: "a1", Body: "Another.", Created: jiratest.Created}}})
	}
	w := newWorld(b)
	w.inProcessWorker()
	served := s.ServeTime()
	b.ResetTimer()
	for b.Loop() {
		_, _, pair := w.jiraPair(map[string]any{"jira_base_url": s.BaseURL(), "project_key": "BEN"}, secretValue, "public")
		w.schedule()
		a := w.waitAttempt(pair, 1, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed)
		if a.Status != quarry.IndexSuccess || a.NewDocsIndexed != n {
			b.Fatalf("attempt %s with %d new documents (error %v), want success with %d", a.Status, a.NewDocsIndexed, a.ErrorMsg, n)
		}
	}
	b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "docs/s")
	b.ReportMetric(float64((s.ServeTime()-served).Milliseconds())/float64(b.N), "sim-ms/op")
}
