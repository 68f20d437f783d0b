package outbound_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/outbound/connector"
	"github.com/quarryhq/quarry/outbound/connector/slacktest"
)

// slackPair points the workers' Slack at the simulator s and makes a
// slack connector of config, a credential with token and their pair of
// access, as the admin; it returns the ids of the connector, the
// credential and the pair.
func (w *world) slackPair(s *slacktest.Server, config map[string]any, token, access string) (connectorID, credentialID, pairID int64) {
	w.t.Helper()
	var id struct {
		ID   int64 `json:"id"`
		Data int64 `json:"data"`
	}
	name := fmt.Sprintf("slack %s %d", w.t.Name(), time.Now().UnixNano())
	w.do("POST", "/manage/admin/connector", map[string]any{"name": name, "source": "slack",
		"input_type": "poll", "connector_specific_config": config}, &id)
	connectorID = id.ID + id.Data
	id.ID, id.Data = 0, 0
	w.do("POST", "/manage/credential", map[string]any{"credential_json": map[string]string{"slack_bot_token": token},
		"admin_public": true, "source": "slack"}, &id)
	credentialID = id.ID + id.Data
	id.ID, id.Data = 0, 0
	w.do("PUT", fmt.Sprintf("/manage/connector/%d/credential/%d", connectorID, credentialID),
		map[string]any{"name": "pair " + name, "access_type": access, "groups": []int64{}}, &id)
	return connectorID, credentialID, id.ID + id.Data
}

// principals returns the principals of each document of the pair, as
// search reads them.
func (w *world) principals(pairID int64) map[string][]string {
	w.t.Helper()
	rows, err := w.raw.Query(`SELECT document_id, principal FROM search_document_access WHERE cc_pair_id = $1 ORDER BY document_id, principal`, pairID)
	if err != nil {
		w.t.Fatal(err)
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var id, p string
		if err := rows.Scan(&id, &p); err != nil {
			w.t.Fatal(err)
		}
		out[id] = append(out[id], p)
	}
	return out
}

// A sync pair of the Slack connector against the simulator, through a
// worker whose QUARRY_CONNECTOR_ENDPOINTS points slack at it: the first
// attempt (its first conversations.list answered 429 and waited out)
// writes the fixture's four threads, the private channel's for its two
// members, the public ones for everyone; the next attempt polls its
// window (every history call carries oldest, the window's start, not the
// epoch) and writes the one thread posted since; the thread deleted at
// Slack is removed by a prune. A token Slack does not take ends the
// attempt as every refused credential does (failed, the later attempts
// backing off) naming invalid_auth, and no log shows a token.
func TestSlackConnectorRun(t *testing.T) {
	sim := slacktest.NewFixture(t)
	w := newWorld(t)
	w.endpoints = connector.Endpoints{connector.SlackSource: sim.APIURL()}
	w.registeredWorker()
	sim.RateLimit("conversations.list", 1)
	connectorID, credentialID, pair := w.slackPair(sim, map[string]any{}, slacktest.Token, "sync")
	w.schedule()
	a := w.waitAttempt(pair, 1, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed)
	if a.Status != quarry.IndexSuccess || a.NewDocsIndexed != 4 {
		t.Fatalf("attempt %s with %d new documents (error %v), want success with 4; log:\n%s", a.Status, a.NewDocsIndexed, a.ErrorMsg, w.log.String())
	}
	docs := w.documents(pair)
	byChannel := map[string]int{}
	for _, id := range docs {
		ch, _, _ := strings.Cut(id, "__")
		byChannel[ch]++
	}
	if want := map[string]int{"C0GENERAL": 2, "C0RANDOM": 1, "G0SECRET": 1}; fmt.Sprint(byChannel) != fmt.Sprint(want) {
		t.Errorf("documents %q, want by channel %v", docs, want)
	}
	for id, ps := range w.principals(pair) {
		want := []string{"public"}
		if strings.HasPrefix(id, "G0SECRET__") {
			want = []string{"email:alice@example.com", "email:bob@example.com"}
		}
		if !slices.Equal(ps, want) {
			t.Errorf("%s is for %q, want %q", id, ps, want)
		}
	}
	limited := 0
	for _, c := range sim.Calls() {
		if c.Method == "conversations.list" {
			limited++
		}
	}
	if limited != 3 { // Two pages of three channels.
		t.Errorf("%d conversations.list calls, want the 429 and the two pages after it", limited)
	}

	// A poll: the thread posted since.
	fresh := sim.Post("C0GENERAL", time.Now(), slacktest.Message{User: "U0CAROL", Text: "A fresh thread"})
	w.do("POST", "/manage/admin/connector/run-once", map[string]any{"connector_id": connectorID,
		"credential_ids": []int64{credentialID}, "from_beginning": false}, nil)
	w.schedule()
	a = w.waitAttempt(pair, 2, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed)
	if a.Status != quarry.IndexSuccess || a.NewDocsIndexed != 1 || a.TotalDocsIndexed != 1 {
		t.Errorf("the poll %s with %d documents, %d new (error %v), want success with 1 new", a.Status, a.TotalDocsIndexed, a.NewDocsIndexed, a.ErrorMsg)
	}
	if !slices.Contains(w.documents(pair), "C0GENERAL__"+fresh) {
		t.Errorf("documents %q, want the fresh thread's", w.documents(pair))
	}
	for _, c := range sim.Calls() {
		if c.Method == "conversations.history" && (c.Params.Get("oldest") == "" || strings.HasPrefix(c.Params.Get("oldest"), "0.")) {
			t.Errorf("a history call of the poll with oldest %q, want the window's start", c.Params.Get("oldest"))
		}
	}

	// A prune after the report's thread was deleted at Slack.
	var report string
	for _, id := range docs {
		if strings.HasPrefix(id, "C0GENERAL__") && id != "C0GENERAL__"+fresh {
			if report == "" || id > report {
				report = id
			}
		}
	}
	_, ts, _ := strings.Cut(report, "__")
	sim.Delete("C0GENERAL", ts)
	w.do("POST", fmt.Sprintf("/manage/admin/cc-pair/%d/prune", pair), nil, nil)
	w.waitPruned(pair)
	if st, removed := w.pruneAttempt(pair); st != "success" || removed != 1 {
		t.Errorf("the prune ended %s removing %d, want success removing 1", st, removed)
	}
	if got := w.documents(pair); slices.Contains(got, report) || len(got) != 4 {
		t.Errorf("documents after the prune %q, want the report's thread gone", got)
	}

	// A token Slack does not take.
	_, _, bad := w.slackPair(sim, map[string]any{}, "xoxb-not-the-token", "sync")
	w.schedule()
	a = w.waitAttempt(bad, 1, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed, quarry.IndexCanceled)
	if want := quarry.CredentialRefusedMessage("Slack's auth.test answered invalid_auth"); a.Status != quarry.IndexFailed || a.ErrorMsg == nil || *a.ErrorMsg != want {
		t.Errorf("attempt %s with error %v, want failed: %s", a.Status, a.ErrorMsg, want)
	}
	if log := w.log.String(); strings.Contains(log, slacktest.Token) || strings.Contains(log, "xoxb-not-the-token") {
		t.Errorf("a log shows a token")
	}
}

// The sync pair's permission sync, through the connector the worker
// would open (Permissions: Onyx's slack_doc_sync): the server's
// permission-sync attempts are not on this branch, so the connector's
// PermissionSyncer is called directly; what it reports for the private
// channel follows its members at Slack.
func TestSlackConnectorPermissions(t *testing.T) {
	sim := slacktest.NewFixture(t)
	env := &connector.Env{HTTP: guardedRunner(t).Client(), Endpoints: connector.Endpoints{connector.SlackSource: sim.APIURL()}}
	cred, _ := json.Marshal(map[string]string{"slack_bot_token": slacktest.Token})
	c, err := connector.NewRegistry().Open(connector.SlackSource, json.RawMessage(`{"channels":["secret"]}`), cred, env)
	if err != nil {
		t.Fatal(err)
	}
	ps, ok := connector.As[connector.PermissionSyncer](c)
	if !ok {
		t.Fatal("the Slack connector is not a PermissionSyncer")
	}
	sim.SetMembers("G0SECRET", "U0CAROL", slacktest.BotUserID)
	got := map[string][]string{}
	err = ps.Permissions(context.Background(), func(_ context.Context, id string, a *quarry.ExternalAccess) error {
		got[id] = a.Principals()
		return nil
	})
	if err != nil || len(got) != 1 {
		t.Fatalf("permissions %v, %v", got, err)
	}
	for id, p := range got {
		if !strings.HasPrefix(id, "G0SECRET__") || !slices.Equal(p, []string{"email:carol@example.com"}) {
			t.Errorf("%s for %q, want #secret's thread for Carol", id, p)
		}
	}
}

// BenchmarkSlackConnectorIndexing indexes slacktest.NewLarge's workspace
// of 1000 documents (5 channels of 200 messages, one in five a thread of
// three) from the simulator on the same machine, from the scheduler's pass
// to the attempt's end, through the worker of quarry serve into the
// store: docs/s is the Slack connector's indexing speed; sim-% the share
// of it the simulator spent answering (its own time).
func BenchmarkSlackConnectorIndexing(b *testing.B) {
	const docs = 1000
	sim := slacktest.NewLarge(b, 5, 200)
	w := newWorld(b)
	w.endpoints = connector.Endpoints{connector.SlackSource: sim.APIURL()}
	w.inProcessWorker()
	busy := sim.Busy()
	b.ResetTimer()
	for b.Loop() {
		_, _, pair := w.slackPair(sim, map[string]any{}, slacktest.Token, "sync")
		w.schedule()
		a := w.waitAttempt(pair, 1, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed, quarry.IndexCanceled)
		if a.Status != quarry.IndexSuccess || a.NewDocsIndexed != docs {
			b.Fatalf("attempt %s with %d new documents (error %v), want success with %d", a.Status, a.NewDocsIndexed, a.ErrorMsg, docs)
		}
		sim.Calls()
	}
	b.ReportMetric(float64(b.N*docs)/b.Elapsed().Seconds(), "docs/s")
	b.ReportMetric(100*(sim.Busy()-busy).Seconds()/b.Elapsed().Seconds(), "sim-%")
}

// searchAs sends Onyx's search (POST /search/send-search-message) for
// query with token, a person's personal access token, fails the test
// unless it is answered 200, and returns the answer with each result's
// score checked (a positive number) and written as 0: the rest is
// compared whole.
func (w *world) searchAs(token, query string) string {
	w.t.Helper()
	b, _ := json.Marshal(map[string]any{"search_query": query})
	req, _ := http.NewRequest("POST", w.srv.URL+"/api/search/send-search-message", bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := w.srv.Client().Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		w.t.Fatalf("search %q: %d %s", query, resp.StatusCode, body)
	}
	var out map[string]any
	if err := json.Unmarshal(body, &out); err != nil {
		w.t.Fatalf("search %q: %v in %s", query, err, body)
	}
	docs, _ := out["search_docs"].([]any)
	for _, d := range docs {
		m := d.(map[string]any)
		if s, ok := m["score"].(float64); !ok || s <= 0 {
			w.t.Errorf("search %q: score %v", query, m["score"])
		}
		m["score"] = 0
	}
	b, _ = json.Marshal(out)
	return string(b)
}

// sameJSON reports whether a and b are JSON texts of the same value.
func sameJSON(a, b string) bool {
	var x, y any
	return json.Unmarshal([]byte(a), &x) == nil && json.Unmarshal([]byte(b), &y) == nil && reflect.DeepEqual(x, y)
}

// waitPermissionSync asks for a permission sync of the pair (POST
// …/sync-permissions) and waits until GET …/sync-permissions answers a
// time other than before, running the scheduler meanwhile; it returns
// that time.
func (w *world) waitPermissionSync(pairID int64, before string) string {
	w.t.Helper()
	path := fmt.Sprintf("/manage/admin/cc-pair/%d/sync-permissions", pairID)
	if code, body := w.call("POST", path, nil); code != 200 && code != 409 {
		w.t.Fatalf("POST %s: %d %s", path, code, body)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		w.schedule()
		code, body := w.call("GET", path, nil)
		if code != 200 {
			w.t.Fatalf("GET %s: %d %s", path, code, body)
		}
		if body != before && body != "null" {
			return body
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("pair %d was not synced; log:\n%s", pairID, w.log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A Slack private channel's access, end to end through search: a sync
// pair against the simulator, indexed by the worker of quarry serve, its
// permissions synced through Onyx's route, and Onyx's search route asked
// by two people signed in with proven emails, each with a personal access
// token: Alice, a member of #secret at Slack, finds its thread; Carol, who
// is not, does not; both find #general's. Alice then leaves #secret at
// Slack: she still finds it until the next permission sync, and not after
// it. Both databases.
func TestSlackSyncedAccessThroughSearch(t *testing.T) {
	sim := slacktest.NewFixture(t)
	w := newWorld(t)
	w.endpoints = connector.Endpoints{connector.SlackSource: sim.APIURL()}
	w.inProcessWorker()
	ctx := context.Background()
	person := func(name string) string {
		c, err := w.db.IdentityCaller(ctx, &quarry.Identity{Issuer: "https://idp.example", Subject: name,
			Email: name + "@example.com", EmailVerified: true, Role: quarry.RoleBasic})
		if err != nil {
			t.Fatal(err)
		}
		_, token, err := w.db.CreatePAT(ctx, c, "search", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return token
	}
	alice, carol := person("alice"), person("carol")
	_, _, pair := w.slackPair(sim, map[string]any{}, slacktest.Token, "sync")
	w.schedule()
	if a := w.waitAttempt(pair, 1, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed); a.Status != quarry.IndexSuccess {
		t.Fatalf("attempt %s (error %v); log:\n%s", a.Status, a.ErrorMsg, w.log.String())
	}
	synced := w.waitPermissionSync(pair, "null")

	var got struct {
		Name string `json:"name"`
	}
	w.do("GET", fmt.Sprintf("/manage/admin/cc-pair/%d", pair), nil, &got)
	// doc is the result of the thread ts of channel (named name in
	// Quarry) whose text is text, as search answers it.
	doc := func(channel, name, ts, title, text, highlight string) string {
		replies := sim.Replies(channel, ts)
		sec, frac, _ := strings.Cut(replies[len(replies)-1], ".")
		s, _ := strconv.ParseInt(sec, 10, 64)
		us, _ := strconv.ParseInt(frac, 10, 64)
		updated := time.Unix(s, us*1000).UTC().Format("2006-01-02T15:04:05.999999Z")
		link := fmt.Sprintf("%sarchives/%s/p%s?thread_ts=%s", slacktest.FixtureTeam.URL(), channel, strings.ReplaceAll(ts, ".", ""), ts)
		return fmt.Sprintf(`{"document_id":%q,"chunk_ind":0,"semantic_identifier":%q,"link":%q,"blurb":%q,
			"source_type":"slack","boost":0,"hidden":false,"metadata":{"Channel":%q},"score":0,"is_relevant":null,"relevance_explanation":null,
			"match_highlights":[%q],"updated_at":%q,"primary_owners":null,"secondary_owners":null,
			"is_internet":false,"file_id":null,"content":null,"cc_pair_id":%d,"cc_pair_name":%q,"cc_pair_access_type":"sync"}`,
			channel+"__"+ts, title, link, text, name, highlight, updated, pair, got.Name)
	}
	answer := func(query string, docs ...string) string {
		return fmt.Sprintf(`{"all_executed_queries":[%q],"search_docs":[%s],"doc_selection_reasoning":null,"llm_selected_doc_ids":null,"error":null}`,
			query, strings.Join(docs, ","))
	}
	secretText := "The merger closes on Friday\nKeep it quiet"
	secret := doc("G0SECRET", "secret", sim.History("G0SECRET")[0], "Alice Archer in #secret: The merger closes on Friday", secretText,
		"<hi>merger</hi> closes on Friday\nKeep it quiet")
	reportText := "Has anyone seen the quarry report? It is due at the end of the week\nand we need its numbers\nYes, it is in the shared drive\nThanks @carol"
	report := doc("C0GENERAL", "general", sim.History("C0GENERAL")[2], "Bob Baker in #general: Has anyone seen the quarry report? It is due at th...",
		reportText, "<hi>quarry</hi> <hi>report</hi>? It is due at the end of the week\nand we need its numbers\nYes, it is in the shared drive\nThanks @carol")
	for _, tc := range []struct {
		who, token, query, want string
	}{
		{"Alice, a member of #secret", alice, "merger", answer("merger", secret)},
		{"Carol, who is not", carol, "merger", answer("merger")},
		{"Alice", alice, "quarry report", answer("quarry report", report)},
		{"Carol", carol, "quarry report", answer("quarry report", report)},
	} {
		if got := w.searchAs(tc.token, tc.query); !sameJSON(got, tc.want) {
			t.Errorf("%s searching %q after the first permission sync:\n got %s\nwant %s", tc.who, tc.query, got, tc.want)
		}
	}

	// Alice leaves #secret at Slack: what search answers changes with the
	// next permission sync, not before.
	sim.SetMembers("G0SECRET", "U0BOB", slacktest.BotUserID)
	if got, want := w.searchAs(alice, "merger"), answer("merger", secret); !sameJSON(got, want) {
		t.Errorf("Alice before the next permission sync:\n got %s\nwant %s", got, want)
	}
	time.Sleep(2 * time.Millisecond) // The sync's time differs from the first one's.
	w.waitPermissionSync(pair, synced)
	if got, want := w.searchAs(alice, "merger"), answer("merger"); !sameJSON(got, want) {
		t.Errorf("Alice after the next permission sync:\n got %s\nwant %s", got, want)
	}
	if got, want := w.searchAs(alice, "quarry report"), answer("quarry report", report); !sameJSON(got, want) {
		t.Errorf("Alice searching #general after the next permission sync:\n got %s\nwant %s", got, want)
	}
}
