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
