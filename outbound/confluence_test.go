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
	"github.com/quarryhq/quarry/outbound/connector/confluencetest"
)

const confluenceUser = "bot@example.com"

// confluencePair makes a confluence connector of config, a credential of
// the bot's email and token and their pair of access type access, as the
// admin, and returns the ids of the connector, the credential and the
// pair.
func (w *world) confluencePair(config map[string]any, token, access string) (connectorID, credentialID, pairID int64) {
	w.t.Helper()
	var id struct {
		ID   int64 `json:"id"`
		Data int64 `json:"data"`
	}
	name := fmt.Sprintf("confluence %s %d", w.t.Name(), time.Now().UnixNano())
	w.do("POST", "/manage/admin/connector", map[string]any{"name": name, "source": "confluence",
		"input_type": "poll", "connector_specific_config": config, "refresh_freq": nil, "prune_freq": nil}, &id)
	connectorID = id.ID + id.Data
	id.ID, id.Data = 0, 0
	w.do("POST", "/manage/credential", map[string]any{"credential_json": map[string]string{"confluence_username": confluenceUser, "confluence_access_token": token},
		"admin_public": true, "source": "confluence"}, &id)
	credentialID = id.ID + id.Data
	id.ID, id.Data = 0, 0
	w.do("PUT", fmt.Sprintf("/manage/connector/%d/credential/%d", connectorID, credentialID),
		map[string]any{"name": "pair " + name, "access_type": access, "groups": []int64{}}, &id)
	return connectorID, credentialID, id.ID + id.Data
}

// confluenceAccess returns the access the index keeps of each of a pair's
// documents: its principals, joined by spaces.
func (w *world) confluenceAccess(pairID int64) map[string]string {
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

// A sync pair of the Confluence connector, through a registered worker
// against the simulator (its wiki_base in the config, as in Onyx): the
// first attempt indexes the five pages and an attachment, each with its access (its
// space's permissions, or its own or its ancestor's restriction); a poll
// writes the one page edited since, with its new text; a prune removes
// the page deleted in Confluence. The connector's PermissionSyncer and
// GroupSyncer, which the server's permission syncs are to run, see a
// restriction added since and the groups (tested here directly: the sync
// attempts are another workstream's). The token is the credential's
// secret value, which no log may show.
func TestConfluenceConnectorRun(t *testing.T) {
	s := confluencetest.NewFixture(t, confluenceUser, secretValue)
	w := newWorld(t)
	w.registeredWorker()
	config := map[string]any{"wiki_base": s.BaseURL(), "is_cloud": true}
	connectorID, credentialID, pair := w.confluencePair(config, secretValue, "sync")
	w.schedule()
	a := w.waitAttempt(pair, 1, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed)
	if a.Status != quarry.IndexSuccess || a.NewDocsIndexed != 6 {
		t.Fatalf("attempt %s with %d new documents (error %v), want success with 6; log:\n%s", a.Status, a.NewDocsIndexed, a.ErrorMsg, w.log.String())
	}
	base := s.BaseURL() + "/spaces/"
	notes := s.BaseURL() + "/pages/viewpageattachments.action?pageId=2001&preview=%2F2001%2F3002%2Fnotes.txt"
	want := []string{notes + " notes.txt", base + "ENG/pages/2001/Design Design", base + "ENG/pages/2002/Secrets Secrets", base + "ENG/pages/2003/Plans Plans",
		base + "PUB/pages/2004/Welcome Welcome", base + "PUB/pages/2005/Old+news Old news"}
	if got := w.documentNames(pair, ""); !slices.Equal(got, want) {
		t.Errorf("documents\n%q, want\n%q", got, want)
	}
	wantAccess := map[string]string{
		base + "ENG/pages/2001/Design":   "email:bob@example.com group:confluence_engineering",
		base + "ENG/pages/2002/Secrets":  "email:alice@example.com",
		base + "ENG/pages/2003/Plans":    "email:alice@example.com",
		base + "PUB/pages/2004/Welcome":  "public",
		base + "PUB/pages/2005/Old+news": "public",
		notes:                            "email:bob@example.com group:confluence_engineering",
	}
	if got := w.confluenceAccess(pair); !equalMaps(got, wantAccess) {
		t.Errorf("access %q, want %q", got, wantAccess)
	}

	s.EditPage(confluencetest.WelcomeID, func(p *confluencetest.Page) { p.Body = "<p>Welcome, new starters.</p>" })
	w.do("POST", "/manage/admin/connector/run-once", map[string]any{"connector_id": connectorID,
		"credential_ids": []int64{credentialID}, "from_beginning": false}, nil)
	w.schedule()
	a = w.waitAttempt(pair, 2, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed)
	if a.Status != quarry.IndexSuccess || a.TotalDocsIndexed != 1 || a.NewDocsIndexed != 0 {
		t.Errorf("the poll %s with %d documents written, %d new (error %v), want success with 1 and 0", a.Status, a.TotalDocsIndexed, a.NewDocsIndexed, a.ErrorMsg)
	}
	_, body := w.document(pair, base+"PUB/pages/2004/Welcome")
	if !strings.Contains(body, "Welcome, new starters.") || strings.Contains(body, "Ask in #help.") {
		t.Errorf("Welcome's body %s, not its edited text alone", body)
	}

	s.DeletePage(confluencetest.OldID)
	if code, body := w.call("POST", fmt.Sprintf("/manage/admin/cc-pair/%d/prune", pair), nil); code != 200 {
		t.Fatalf("prune: %d %s", code, body)
	}
	w.waitPruned(pair)
	if st, removed := w.pruneAttempt(pair); st != "success" || removed != 1 {
		t.Errorf("the prune ended %s removing %d documents, want success removing 1", st, removed)
	}
	if ids := w.documents(pair); len(ids) != 5 || slices.Contains(ids, base+"PUB/pages/2005/Old+news") {
		t.Errorf("documents after the prune %q, want the 5 but Old news", ids)
	}

	// The syncs, as the server's permission-sync attempts are to run them
	// (the pair's connector, opened as a worker opens it).
	s.Restrict(confluencetest.WelcomeID, []string{"acc-bob"}, nil)
	cfg, _ := json.Marshal(config)
	cred, _ := json.Marshal(map[string]string{"confluence_username": confluenceUser, "confluence_access_token": secretValue})
	c, err := connector.NewRegistry().Open(connector.ConfluenceSource, cfg, cred, &connector.Env{HTTP: guardedRunner(t).Client(), PDF: testPDF})
	if err != nil {
		t.Fatal(err)
	}
	ps, _ := connector.As[connector.PermissionSyncer](c)
	got := map[string]string{}
	if err := ps.Permissions(context.Background(), func(_ context.Context, id string, a *quarry.ExternalAccess) error {
		got[id] = strings.Join(a.Principals(), " ")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	delete(wantAccess, base+"PUB/pages/2005/Old+news")
	wantAccess[base+"PUB/pages/2004/Welcome"] = "email:bob@example.com"
	if !equalMaps(got, wantAccess) {
		t.Errorf("Permissions %q, want %q", got, wantAccess)
	}
	gs, _ := connector.As[connector.GroupSyncer](c)
	var groups []string
	if err := gs.Groups(context.Background(), func(_ context.Context, g *quarry.ExternalGroup) error {
		groups = append(groups, g.ID+" "+strings.Join(g.UserEmails, ","))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	wantGroups := []string{"confluence_engineering alice@example.com", "confluence_confluence-users alice@example.com,bob@example.com",
		"confluence_all_confluence_users_found_by_onyx alice@example.com,bob@example.com"}
	if !slices.Equal(groups, wantGroups) {
		t.Errorf("groups %q, want %q", groups, wantGroups)
	}
}

// A sync pair of the Confluence connector whose pages lie under drafts
// (CONFCLOUD-77618), through the worker of quarry serve and Onyx's
// permission-sync route: the first attempt indexes every page, those of
// the search pages after Confluence's 404 without access (indexing is
// lenient); the permission sync reads each ancestor's restrictions on its
// own, as Onyx v4.6.1's fallback, and every document gets its access:
// Budget (under a draft under Secrets) and its attachment Secrets'
// restriction, Launch (under a draft) its space's. Both databases.
func TestConfluencePermissionSyncAncestorFallback(t *testing.T) {
	s := confluencetest.NewFixture(t, confluenceUser, secretValue)
	s.AddDrafts()
	w := newWorld(t)
	w.inProcessWorker()
	_, _, pair := w.confluencePair(map[string]any{"wiki_base": s.BaseURL(), "is_cloud": true}, secretValue, "sync")
	w.schedule()
	a := w.waitAttempt(pair, 1, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed)
	if a.Status != quarry.IndexSuccess || a.NewDocsIndexed != 9 {
		t.Fatalf("attempt %s with %d new documents (error %v), want success with 9; log:\n%s", a.Status, a.NewDocsIndexed, a.ErrorMsg, w.log.String())
	}
	base := s.BaseURL() + "/spaces/"
	notes := s.BaseURL() + "/pages/viewpageattachments.action?pageId=2001&preview=%2F2001%2F3002%2Fnotes.txt"
	budget := s.BaseURL() + "/pages/viewpageattachments.action?pageId=2007&preview=%2F2007%2F3004%2Fbudget.txt"
	eng := "email:bob@example.com group:confluence_engineering"
	// Search pages of two: the third (Old news, Budget) was answered 404
	// and read again without restrictions, and so were the next.
	wantAccess := map[string]string{base + "ENG/pages/2001/Design": eng, notes: eng, base + "ENG/pages/2002/Secrets": "email:alice@example.com",
		base + "ENG/pages/2003/Plans": "email:alice@example.com", base + "PUB/pages/2004/Welcome": "public"}
	if got := w.confluenceAccess(pair); !equalMaps(got, wantAccess) {
		t.Errorf("access after indexing %q, want %q", got, wantAccess)
	}
	w.waitPermissionSync(pair, "null")
	wantAccess[base+"PUB/pages/2005/Old+news"] = "public"
	wantAccess[base+"ENG/pages/2007/Budget"] = "email:alice@example.com"
	wantAccess[budget] = "email:alice@example.com"
	wantAccess[base+"ENG/pages/2009/Launch"] = eng
	if got := w.confluenceAccess(pair); !equalMaps(got, wantAccess) {
		t.Errorf("access after the permission sync %q, want %q", got, wantAccess)
	}
	if reads, want := s.RestrictionReads(), []string{confluencetest.SecretsID, confluencetest.BudgetDraftID, confluencetest.LaunchDraftID}; !slices.Equal(reads, want) {
		t.Errorf("restrictions read of %q, want %q", reads, want)
	}
}

// equalMaps reports whether a and b hold the same entries.
func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if bv, ok := b[k]; !ok || bv != v {
			return false
		}
	}
	return true
}

// A token Confluence refuses ends the attempt as every refused credential
// does (failed, quarry.StopCredentialRefused, the pair backing off),
// with Confluence's message and no secret.
func TestConfluenceConnectorRefused(t *testing.T) {
	s := confluencetest.NewFixture(t, confluenceUser, "the-right-token")
	w := newWorld(t)
	w.registeredWorker()
	_, _, pair := w.confluencePair(map[string]any{"wiki_base": s.BaseURL(), "is_cloud": true, "space": "PUB"}, secretValue, "public")
	w.schedule()
	a := w.waitAttempt(pair, 1, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed, quarry.IndexCanceled)
	want := quarry.CredentialRefusedMessage("Confluence at " + s.BaseURL() + " answered 401 Unauthorized (search the pages): " + confluencetest.UnauthorizedMessage)
	if a.Status != quarry.IndexFailed || a.ErrorMsg == nil || *a.ErrorMsg != want {
		t.Errorf("attempt %s with error %v, want failed with %q", a.Status, a.ErrorMsg, want)
	}
}

// BenchmarkConfluenceConnectorIndexing indexes a space of 1,000 pages
// (about 1 KB of storage format each, one comment search a page, as
// Onyx's connector makes) from the simulator, 16 pages a search (Onyx's
// batch), from the scheduler's pass to the attempt's end, through the
// worker of quarry serve into the store: docs/s is the Confluence
// connector's indexing rate, sim-ms/op the simulator's own time
// answering.
func BenchmarkConfluenceConnectorIndexing(b *testing.B) {
	const n = 1000
	s := confluencetest.New(b, confluenceUser, secretValue)
	s.PageSize = 16
	s.AddUser(confluencetest.User{AccountID: "acc-bench", Name: "Bench User", Email: "bench@example.com", Groups: []string{"bench"}})
	s.AddSpace(confluencetest.Space{Key: "BENCH", Name: "Bench", ReaderGroups: []string{"bench"}})
	body := strings.Repeat("<p>A paragraph of the page, with <strong>some</strong> words in it.</p>", 15)
	for i := range n {
		s.AddPage(confluencetest.Page{Space: "BENCH", Title: fmt.Sprintf("Page %d", i), Body: body, Author: "acc-bench",
			Labels: []string{"bench"}, Created: confluencetest.Created, Updated: confluencetest.Created.Add(time.Duration(i) * time.Minute)})
	}
	w := newWorld(b)
	w.inProcessWorker()
	served := s.ServeTime()
	b.ResetTimer()
	for b.Loop() {
		_, _, pair := w.confluencePair(map[string]any{"wiki_base": s.BaseURL(), "is_cloud": true, "space": "BENCH"}, secretValue, "public")
		w.schedule()
		a := w.waitAttempt(pair, 1, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed)
		if a.Status != quarry.IndexSuccess || a.NewDocsIndexed != n {
			b.Fatalf("attempt %s with %d new documents (error %v), want success with %d", a.Status, a.NewDocsIndexed, a.ErrorMsg, n)
		}
	}
	b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "docs/s")
	b.ReportMetric(float64((s.ServeTime()-served).Milliseconds())/float64(b.N), "sim-ms/op")
}
