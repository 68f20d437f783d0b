package connector

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/outbound/connector/slacktest"
)

// slackRun is what a run of the Slack connector emitted.
type slackRun struct {
	docs     []*quarry.Document
	failures []*quarry.ConnectorFailure
}

func (r *slackRun) Document(_ context.Context, d *quarry.Document) error {
	r.docs = append(r.docs, d)
	return nil
}

func (r *slackRun) Failure(_ context.Context, f *quarry.ConnectorFailure) error {
	r.failures = append(r.failures, f)
	return nil
}

// byID returns the run's document of id, or nil.
func (r *slackRun) byID(id string) *quarry.Document {
	for _, d := range r.docs {
		if d.ID == id {
			return d
		}
	}
	return nil
}

// newSlack opens the Slack connector of config against the simulator s
// with token.
func newSlack(t testing.TB, s *slacktest.Server, config, token string) *Slack {
	t.Helper()
	cred, _ := json.Marshal(map[string]string{"slack_bot_token": token})
	env := &Env{HTTP: &http.Client{}, Endpoints: Endpoints{SlackSource: s.APIURL()}}
	c, err := NewRegistry().Open(SlackSource, json.RawMessage(config), cred, env)
	if err != nil {
		t.Fatal(err)
	}
	return c.(*Slack)
}

// runSlack runs c within w from its first checkpoint to its last.
func runSlack(t testing.TB, c Connector, w Window) (*slackRun, error) {
	t.Helper()
	r := &slackRun{}
	cp := c.FirstCheckpoint()
	for range 1000 {
		var err error
		if cp, err = c.Step(context.Background(), w, cp, r); err != nil {
			return r, err
		}
		more, err := HasMore(cp)
		if err != nil {
			t.Fatal(err)
		}
		if !more {
			return r, nil
		}
	}
	t.Fatal("the run did not end")
	return nil, nil
}

func ids(docs []*quarry.Document) []string {
	var out []string
	for _, d := range docs {
		out = append(out, d.ID)
	}
	slices.Sort(out)
	return out
}

// tsOf returns the ts of the first section's link of d: .../p{ts}.
func threadTS(t *testing.T, d *quarry.Document) string {
	t.Helper()
	_, ts, _ := strings.Cut(d.ID, "__")
	return ts
}

func ptr[T any](v T) *T { return &v }

// A run from the beginning against the fixture gives Onyx's documents, each
// compared whole: a thread (its replies fetched) is one document whose
// sections are its messages with their links, a message outside a thread
// is one too; the join and the bot's message are not indexed; #random is
// joined first; the private channel the bot is not in and the archived
// one are not read; the titles are "{sender} in #{channel}: {snippet}",
// the mentions cleaned; public channels are everyone's, the private one
// its members'.
func TestSlackRun(t *testing.T) {
	s := slacktest.NewFixture(t)
	c := newSlack(t, s, `{}`, slacktest.Token)
	r, err := runSlack(t, c, Window{Start: time.Unix(0, 0), End: time.Now()})
	if err != nil || len(r.failures) != 0 {
		t.Fatalf("run: %v, failures %+v", err, r.failures)
	}
	calls := s.Calls()
	byTS := map[string]string{} // text: ts
	for _, d := range r.docs {
		byTS[d.Sections[0].Text] = threadTS(t, d)
	}
	welcome := byTS["Welcome to #random, @Bob Baker!"]
	report := byTS["Has anyone seen the quarry report? It is due at the end of the week\nand we need its numbers"]
	lunch := byTS["@here lunch at noon?"]
	merger := byTS["The merger closes on Friday"]
	if welcome == "" || report == "" || lunch == "" || merger == "" {
		t.Fatalf("documents %q", ids(r.docs))
	}
	var replies []string
	for _, call := range calls {
		if call.Method == "conversations.replies" {
			replies = append(replies, call.Params.Get("ts"))
		}
	}
	public := &quarry.ExternalAccess{ExternalUserEmails: []string{}, ExternalUserGroupIDs: []string{}, IsPublic: true}
	link := func(ch, ts, thread string) *string {
		l := "https://quarry-test.slack.com/archives/" + ch + "/p" + strings.ReplaceAll(ts, ".", "")
		if thread != "" {
			l += "?thread_ts=" + thread
		}
		return &l
	}
	at := func(ts string) *quarry.Time { // Slack's "seconds.microseconds".
		sec, us, _ := strings.Cut(ts, ".")
		d, err := time.ParseDuration(sec + "s" + cmpOr(strings.TrimLeft(us, "0"), "0") + "us")
		if err != nil {
			t.Fatal(err)
		}
		return &quarry.Time{Time: time.Unix(0, 0).Add(d).UTC()}
	}
	// The replies' ts, as the thread's sections give them.
	d := r.byID("C0GENERAL__" + report)
	if d == nil || len(d.Sections) != 3 {
		t.Fatalf("the report's thread: %+v", d)
	}
	reply1, reply2 := strings.TrimPrefix(*d.Sections[1].Link, *link("C0GENERAL", "", "")), ""
	reply1, _, _ = strings.Cut(reply1, "?")
	reply2 = strings.TrimPrefix(*d.Sections[2].Link, *link("C0GENERAL", "", ""))
	reply2, _, _ = strings.Cut(reply2, "?")
	reply1 = reply1[:len(reply1)-6] + "." + reply1[len(reply1)-6:]
	reply2 = reply2[:len(reply2)-6] + "." + reply2[len(reply2)-6:]
	secretReply := ""
	if d := r.byID("G0SECRET__" + merger); d != nil && len(d.Sections) == 2 {
		x, _, _ := strings.Cut(strings.TrimPrefix(*d.Sections[1].Link, *link("G0SECRET", "", "")), "?")
		secretReply = x[:len(x)-6] + "." + x[len(x)-6:]
	}
	want := []*quarry.Document{
		{ID: "C0GENERAL__" + welcome, Source: "slack", SemanticIdentifier: "Alice Archer in #general: Welcome to #random, @Bob Baker!",
			Sections: []quarry.Section{{Text: "Welcome to #random, @Bob Baker!", Link: link("C0GENERAL", welcome, "")}},
			Metadata: map[string]any{"Channel": "general"}, DocUpdatedAt: at(welcome), ExternalAccess: public},
		{ID: "C0GENERAL__" + report, Source: "slack", SemanticIdentifier: "Bob Baker in #general: Has anyone seen the quarry report? It is due at th...",
			Sections: []quarry.Section{
				{Text: "Has anyone seen the quarry report? It is due at the end of the week\nand we need its numbers", Link: link("C0GENERAL", report, report)},
				{Text: "Yes, it is in the shared drive", Link: link("C0GENERAL", reply1, report)},
				{Text: "Thanks @carol", Link: link("C0GENERAL", reply2, report)}},
			Metadata: map[string]any{"Channel": "general"}, DocUpdatedAt: at(reply2), ExternalAccess: public},
		{ID: "C0RANDOM__" + lunch, Source: "slack", SemanticIdentifier: "carol in #random: @here lunch at noon?",
			Sections: []quarry.Section{{Text: "@here lunch at noon?", Link: link("C0RANDOM", lunch, "")}},
			Metadata: map[string]any{"Channel": "random"}, DocUpdatedAt: at(lunch), ExternalAccess: public},
		{ID: "G0SECRET__" + merger, Source: "slack", SemanticIdentifier: "Alice Archer in #secret: The merger closes on Friday",
			Sections: []quarry.Section{
				{Text: "The merger closes on Friday", Link: link("G0SECRET", merger, merger)},
				{Text: "Keep it quiet", Link: link("G0SECRET", secretReply, merger)}},
			Metadata: map[string]any{"Channel": "secret"}, DocUpdatedAt: at(secretReply),
			ExternalAccess: &quarry.ExternalAccess{ExternalUserEmails: []string{"alice@example.com", "bob@example.com"}, ExternalUserGroupIDs: []string{}}},
	}
	got := slices.Clone(r.docs)
	slices.SortFunc(got, func(a, b *quarry.Document) int { return strings.Compare(a.ID, b.ID) })
	slices.SortFunc(want, func(a, b *quarry.Document) int { return strings.Compare(a.ID, b.ID) })
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("documents (-want +got):\n%s", diff)
	}
	// The report's thread of three pages in two.
	if !slices.Equal(replies, []string{report, report, merger}) {
		t.Errorf("conversations.replies of %q, want the two threads' pages", replies)
	}
	var joined []string
	for _, call := range calls {
		if call.Auth != "Bearer "+slacktest.Token {
			t.Errorf("%s's Authorization %q", call.Method, call.Auth)
		}
		switch call.Method {
		case "conversations.join":
			joined = append(joined, call.Params.Get("channel"))
		case "conversations.list":
			if call.Params.Get("types") != "public_channel,private_channel" || call.Params.Get("exclude_archived") != "1" || call.Params.Get("limit") != "900" {
				t.Errorf("conversations.list with %v", call.Params)
			}
		case "conversations.history":
			if call.Params.Get("limit") != "900" || call.Params.Get("latest") == "" {
				t.Errorf("conversations.history with %v", call.Params)
			}
		}
	}
	if !slices.Equal(joined, []string{"C0RANDOM"}) {
		t.Errorf("joined %q, want #random", joined)
	}
}

// A poll reads only its window: every history call carries oldest (the
// window's start) and latest (its end), and only the thread posted within
// it is emitted. An edited message replaces the thread's text in the next
// run that reads it; a deleted thread is no longer in the slim listing,
// so that a prune removes it.
func TestSlackPollEditPrune(t *testing.T) {
	s := slacktest.NewFixture(t)
	s.PageSize = 1
	c := newSlack(t, s, `{"channels":["#general"]}`, slacktest.Token)
	start := slacktest.Old.Add(24 * time.Hour)
	fresh := s.Post("C0GENERAL", start.Add(time.Hour), slacktest.Message{User: "U0CAROL", Text: "A new week"})
	s.Calls()
	w := Window{Start: start, End: start.Add(2 * time.Hour)}
	r, err := runSlack(t, c, w)
	if err != nil || len(r.failures) != 0 {
		t.Fatalf("poll: %v %+v", err, r.failures)
	}
	if got := ids(r.docs); !slices.Equal(got, []string{"C0GENERAL__" + fresh}) {
		t.Errorf("the poll's documents %q, want the new message's", got)
	}
	n := 0
	for _, call := range s.Calls() {
		if call.Method != "conversations.history" {
			continue
		}
		n++
		if call.Params.Get("oldest") != slackTS(w.Start) || call.Params.Get("latest") != slackTS(w.End) {
			t.Errorf("a history call of the poll with %v, want oldest %s and latest %s", call.Params, slackTS(w.Start), slackTS(w.End))
		}
	}
	if n == 0 {
		t.Error("no history call")
	}

	// An edit of a thread's reply, seen by a run from the beginning.
	all, err := runSlack(t, c, Window{Start: time.Unix(0, 0), End: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	var thread *quarry.Document
	for _, d := range all.docs {
		if len(d.Sections) == 3 {
			thread = d
		}
	}
	if thread == nil {
		t.Fatalf("no thread in %q", ids(all.docs))
	}
	replyTS := strings.TrimPrefix(*thread.Sections[1].Link, "https://quarry-test.slack.com/archives/C0GENERAL/p")
	replyTS, _, _ = strings.Cut(replyTS, "?")
	replyTS = replyTS[:len(replyTS)-6] + "." + replyTS[len(replyTS)-6:]
	s.Edit("C0GENERAL", replyTS, "No, it moved to the wiki", time.Now())
	again, err := runSlack(t, c, Window{Start: time.Unix(0, 0), End: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if d := again.byID(thread.ID); d == nil || d.Sections[1].Text != "No, it moved to the wiki" {
		t.Errorf("the thread after the edit: %+v", d)
	}

	// The slim listing: every thread and message, then without the
	// deleted thread.
	list := func() []string {
		var out []string
		if err := c.ListIDs(context.Background(), func(_ context.Context, b []string) error { out = append(out, b...); return nil }); err != nil {
			t.Fatal(err)
		}
		slices.Sort(out)
		return out
	}
	if got, want := list(), ids(again.docs); !slices.Equal(got, want) {
		t.Errorf("listed %q, want the run's %q", got, want)
	}
	s.Delete("C0GENERAL", threadTS(t, thread))
	if got := list(); slices.Contains(got, thread.ID) || len(got) != len(again.docs)-1 {
		t.Errorf("listed %q after the thread's deletion, want the others", got)
	}
}

// A 429 is waited out (its Retry-After) and the call tried again.
func TestSlackRateLimited(t *testing.T) {
	s := slacktest.NewFixture(t)
	c := newSlack(t, s, `{"channels":["general"]}`, slacktest.Token)
	s.RateLimit("conversations.history", 1)
	began := time.Now()
	r, err := runSlack(t, c, Window{Start: time.Unix(0, 0), End: time.Now()})
	if err != nil || len(r.docs) != 2 {
		t.Fatalf("run: %v with %q", err, ids(r.docs))
	}
	if waited := time.Since(began); waited < time.Second {
		t.Errorf("the run took %s, less than the Retry-After", waited)
	}
	n := 0
	for _, call := range s.Calls() {
		if call.Method == "conversations.history" {
			n++
		}
	}
	if n != 3 { // The 429, then the two pages of the fixture's four messages.
		t.Errorf("%d history calls, want 3", n)
	}
	// A wait is cut short by the run's end.
	s.RateLimit("auth.test", 60)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	c = newSlack(t, s, `{}`, slacktest.Token)
	if _, err := c.Step(ctx, Window{End: time.Now()}, c.FirstCheckpoint(), &slackRun{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a step ended during a wait: %v", err)
	}
}

// A token Slack does not take ends the run with a CredentialError that
// names Slack's answer, never the token; another error of a call names
// Slack's error.
func TestSlackErrors(t *testing.T) {
	s := slacktest.NewFixture(t)
	for _, tc := range []struct {
		name, config, token, want string
		cred                      bool
	}{
		{"invalid_auth", `{}`, "xoxb-wrong-secret-token", "Slack's auth.test answered invalid_auth", true},
		{"a channel not there", `{"channels":["nowhere"]}`, slacktest.Token, `channel "nowhere" not found in the workspace`, false},
		{"a bad regex", `{"channels":["[unclosed"],"channel_regex_enabled":true}`, slacktest.Token, "Invalid channel regex '[unclosed'", false},
		{"a bad exclusion", `{"exclude_channels":["(x"],"exclude_channel_regex_enabled":true}`, slacktest.Token, "Invalid excluded channel regex '(x'", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cred, _ := json.Marshal(map[string]string{"slack_bot_token": tc.token})
			conn, err := NewRegistry().Open(SlackSource, json.RawMessage(tc.config), cred,
				&Env{HTTP: &http.Client{}, Endpoints: Endpoints{SlackSource: s.APIURL()}})
			if err == nil {
				_, err = runSlack(t, conn, Window{End: time.Now()})
			}
			var ce *CredentialError
			if err == nil || !strings.Contains(err.Error(), tc.want) || errors.As(err, &ce) != tc.cred {
				t.Fatalf("error %v (a credential's: %v), want one with %q (a credential's: %v)", err, errors.As(err, &ce), tc.want, tc.cred)
			}
			if strings.Contains(err.Error(), tc.token) || strings.Contains(err.Error(), "xoxb") {
				t.Errorf("the error shows the token: %v", err)
			}
		})
	}
	// A private channel whose history Slack refuses is a failure of that
	// channel; the others are read.
	s.SetMembers("G0SECRET", "U0ALICE", "U0BOB") // The bot was removed after the listing.
	c := newSlack(t, s, `{}`, slacktest.Token)
	cp, err := c.Step(context.Background(), Window{End: time.Now()}, c.FirstCheckpoint(), &slackRun{})
	if err != nil {
		t.Fatal(err)
	}
	var x slackCheckpoint
	json.Unmarshal(cp, &x)
	x.Channels = append(x.Channels, slackChannel{ID: "G0SECRET", Name: "secret", IsPrivate: true, IsMember: true})
	cp, _ = json.Marshal(&x)
	r := &slackRun{}
	for more := true; more; more, _ = HasMore(cp) {
		if cp, err = c.Step(context.Background(), Window{End: time.Now()}, cp, r); err != nil {
			t.Fatal(err)
		}
	}
	if len(r.failures) != 1 || r.failures[0].FailedEntity == nil || r.failures[0].FailedEntity.EntityID != "G0SECRET" ||
		r.failures[0].FailureMessage != "channel #secret: Slack's conversations.members answered channel_not_found" || len(r.docs) != 3 {
		t.Errorf("failures %+v, documents %q", r.failures, ids(r.docs))
	}
}

// The channel filters: names with or without #, regular expressions that
// match whole names, exclusions after inclusions.
func TestSlackChannelFilter(t *testing.T) {
	s := slacktest.NewFixture(t)
	for _, tc := range []struct {
		config string
		want   []string
	}{
		{`{}`, []string{"general", "random", "secret"}},
		{`{"channels":["#random","secret"]}`, []string{"random", "secret"}},
		{`{"channels":["gen"],"channel_regex_enabled":true}`, nil},
		{`{"channels":["gen.*|sec.*"],"channel_regex_enabled":true}`, []string{"general", "secret"}},
		{`{"exclude_channels":["secret"]}`, []string{"general", "random"}},
		{`{"channels":[".*"],"channel_regex_enabled":true,"exclude_channels":["r.*"],"exclude_channel_regex_enabled":true}`, []string{"general", "secret"}},
	} {
		c := newSlack(t, s, tc.config, slacktest.Token)
		cp, err := c.Step(context.Background(), Window{End: time.Now()}, c.FirstCheckpoint(), &slackRun{})
		if err != nil {
			t.Fatalf("%s: %v", tc.config, err)
		}
		var x slackCheckpoint
		json.Unmarshal(cp, &x)
		var got []string
		for _, ch := range x.Channels {
			got = append(got, ch.Name)
		}
		if !slices.Equal(got, tc.want) || x.HasMore != (len(tc.want) > 0) {
			t.Errorf("%s: channels %q (has_more %v), want %q", tc.config, got, x.HasMore, tc.want)
		}
	}
}

// The permission sync: every document with its channel's access, the
// private channel's members by the emails users.list gives.
func TestSlackPermissions(t *testing.T) {
	s := slacktest.NewFixture(t)
	c := newSlack(t, s, `{}`, slacktest.Token)
	run, err := runSlack(t, c, Window{Start: time.Unix(0, 0), End: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	s.SetMembers("G0SECRET", "U0ALICE", "U0CAROL", slacktest.BotUserID) // Bob left, Carol joined.
	got := map[string]*quarry.ExternalAccess{}
	err = c.Permissions(context.Background(), func(_ context.Context, id string, a *quarry.ExternalAccess) error {
		got[id] = a
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]*quarry.ExternalAccess{}
	for _, d := range run.docs {
		want[d.ID] = d.ExternalAccess
		if strings.HasPrefix(d.ID, "G0SECRET__") {
			want[d.ID] = &quarry.ExternalAccess{ExternalUserEmails: []string{"alice@example.com", "carol@example.com"}, ExternalUserGroupIDs: []string{}}
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("access (-want +got):\n%s", diff)
	}
	if _, ok := As[GroupSyncer](Connector(c)); ok {
		t.Error("the Slack connector syncs groups; Onyx v4.6.1 does not for Slack")
	}
	if _, ok := As[PermissionSyncer](Connector(c)); !ok {
		t.Error("the Slack connector is not a PermissionSyncer")
	}
}

// The text cleaner is Onyx's index_clean.
func TestSlackClean(t *testing.T) {
	s := slacktest.NewFixture(t)
	c := newSlack(t, s, `{}`, slacktest.Token)
	c.users = map[string]*slackUser{}
	c.workspace = "x"
	for in, want := range map[string]string{
		"hi <@U0ALICE> and <@U0BOB> and <@U0NOBODY>":    "hi @alice and @Bob Baker and @U0NOBODY",
		"see <#C0RANDOM|random> <!channel> <!everyone>": "see #random @channel @everyone",
		"ask <!subteam^S123|@ops> or <!subteam^S456>":   "ask @ops or @S456",
		"<!date^1392734382^{date}|Feb 18, 2014>":        "Feb 18, 2014",
	} {
		got, err := c.clean(context.Background(), in)
		if err != nil || got != want {
			t.Errorf("clean(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// BenchmarkSlackConnector runs the Slack connector over
// slacktest.NewLarge's workspace of 1000 documents on loopback, from its first checkpoint to its last, the
// documents emitted to nothing: docs/s is the connector's rate; sim-% the
// share of the run the simulator spent answering (its own time).
func BenchmarkSlackConnector(b *testing.B) {
	s := slacktest.NewLarge(b, 5, 200)
	docs := 0
	busy := s.Busy()
	for b.Loop() {
		c := newSlack(b, s, `{}`, slacktest.Token)
		r, err := runSlack(b, c, Window{Start: time.Unix(0, 0), End: time.Now()})
		if err != nil || len(r.docs) != 1000 {
			b.Fatalf("run: %v with %d documents", err, len(r.docs))
		}
		docs += len(r.docs)
		s.Calls()
	}
	b.ReportMetric(float64(docs)/b.Elapsed().Seconds(), "docs/s")
	b.ReportMetric(100*(s.Busy()-busy).Seconds()/b.Elapsed().Seconds(), "sim-%")
}

// An app without users:read: users.info answers missing_scope, and the
// threads are indexed all the same, their senders Unknown and their
// mentions the users' ids, as Onyx degrades; a private channel's access
// then has no one (its members' emails unknown): no wider than it was.
func TestSlackWithoutUsersRead(t *testing.T) {
	s := slacktest.NewFixture(t)
	s.Revoke("users:read")
	c := newSlack(t, s, `{"channels":["general","secret"]}`, slacktest.Token)
	r, err := runSlack(t, c, Window{Start: time.Unix(0, 0), End: time.Now()})
	if err != nil || len(r.failures) != 0 || len(r.docs) != 3 {
		t.Fatalf("run: %v, failures %+v, documents %q", err, r.failures, ids(r.docs))
	}
	var titles []string
	for _, d := range r.docs {
		titles = append(titles, d.SemanticIdentifier)
		if strings.HasPrefix(d.ID, "G0SECRET__") && (d.ExternalAccess.IsPublic || len(d.ExternalAccess.ExternalUserEmails) != 0) {
			t.Errorf("#secret's access %+v, want no one", d.ExternalAccess)
		}
	}
	slices.Sort(titles)
	want := []string{"Unknown in #general: Has anyone seen the quarry report? It is due at th...",
		"Unknown in #general: Welcome to #random, @U0BOB!", "Unknown in #secret: The merger closes on Friday"}
	if !slices.Equal(titles, want) {
		t.Errorf("titles %q, want %q", titles, want)
	}
}

// An app without groups:read: private channels are left out (listing them
// is refused, and the public ones are listed again alone), the public ones
// read, as Onyx's get_channels falls back.
func TestSlackWithoutGroupsRead(t *testing.T) {
	s := slacktest.NewFixture(t)
	s.Revoke("groups:read")
	c := newSlack(t, s, `{}`, slacktest.Token)
	r, err := runSlack(t, c, Window{Start: time.Unix(0, 0), End: time.Now()})
	if err != nil || len(r.failures) != 0 {
		t.Fatalf("run: %v, failures %+v", err, r.failures)
	}
	var channels []string
	for _, d := range r.docs {
		ch, _, _ := strings.Cut(d.ID, "__")
		channels = append(channels, ch)
	}
	slices.Sort(channels)
	if want := []string{"C0GENERAL", "C0GENERAL", "C0RANDOM"}; !slices.Equal(channels, want) {
		t.Errorf("documents of %q, want the public channels'", channels)
	}
	var lists []string
	for _, call := range s.Calls() {
		if call.Method == "conversations.list" {
			lists = append(lists, call.Params.Get("types"))
		}
	}
	if want := []string{"public_channel,private_channel", "public_channel"}; !slices.Equal(lists, want) {
		t.Errorf("conversations.list of types %q, want %q", lists, want)
	}
	// The permission sync needs users:read.email.
	s.Revoke("users:read.email")
	err = c.Permissions(context.Background(), func(context.Context, string, *quarry.ExternalAccess) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "users:read.email") {
		t.Errorf("permissions without users:read.email: %v", err)
	}
}

// An Enterprise Grid organization's token fails the run: Onyx scopes its
// public channels per workspace, which the connector does not, and
// marking them public would widen who reads them.
func TestSlackEnterpriseGrid(t *testing.T) {
	team := slacktest.FixtureTeam
	team.EnterpriseID = "E0GRID"
	s := slacktest.New(t, team)
	c := newSlack(t, s, `{}`, slacktest.Token)
	_, err := runSlack(t, c, Window{End: time.Now()})
	if err == nil || !strings.Contains(err.Error(), "Enterprise Grid organization (E0GRID)") {
		t.Errorf("run: %v, want the Grid refused", err)
	}
}

// A run resumed from its checkpoint by a new connector (another worker,
// after an interruption) reads from the page it was on: each step of
// this run is made by a connector of its own, and emits the documents a
// run by one connector does, once each.
func TestSlackResume(t *testing.T) {
	s := slacktest.NewFixture(t)
	w := Window{Start: time.Unix(0, 0), End: time.Now()}
	whole, err := runSlack(t, newSlack(t, s, `{}`, slacktest.Token), w)
	if err != nil {
		t.Fatal(err)
	}
	r := &slackRun{}
	cp := newSlack(t, s, `{}`, slacktest.Token).FirstCheckpoint()
	steps := 0
	for more := true; more; steps++ {
		c := newSlack(t, s, `{}`, slacktest.Token)
		if cp, err = c.Step(context.Background(), w, cp, r); err != nil {
			t.Fatal(err)
		}
		more, _ = HasMore(cp)
	}
	if diff := cmp.Diff(whole.docs, r.docs); diff != "" || steps != 5 {
		t.Errorf("%d steps; documents (-one connector +one a step):\n%s", steps, diff)
	}
}

// A channel whose first page has more than 256 messages, more than 95% of
// them filtered out (bots'), is skipped after that page, as Onyx's.
func TestSlackBotChannel(t *testing.T) {
	s := slacktest.New(t, slacktest.FixtureTeam)
	s.PageSize = 900
	s.AddUser(slacktest.User{ID: "U0ALICE", Name: "alice", Email: "alice@example.com"})
	s.AddChannel(slacktest.Channel{ID: "C0ALERTS", Name: "alerts", Members: []string{"U0ALICE", slacktest.BotUserID}})
	s.AddChannel(slacktest.Channel{ID: "C0TALK", Name: "talk", Members: []string{"U0ALICE", slacktest.BotUserID}})
	for i := range 1000 {
		at := slacktest.Old.Add(time.Duration(i) * time.Minute)
		if i%100 == 0 {
			s.Post("C0ALERTS", at, slacktest.Message{User: "U0ALICE", Text: "a person"})
			s.Post("C0TALK", at, slacktest.Message{User: "U0ALICE", Text: "a person"})
			continue
		}
		s.Post("C0ALERTS", at, slacktest.Message{Subtype: "bot_message", BotID: "B0ALERT", Text: "an alert"})
		s.Post("C0TALK", at, slacktest.Message{Subtype: "bot_message", BotID: "B0ALERT", Text: "an alert"})
	}
	c := newSlack(t, s, `{"channels":["alerts"]}`, slacktest.Token)
	r, err := runSlack(t, c, Window{Start: time.Unix(0, 0), End: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, call := range s.Calls() {
		if call.Method == "conversations.history" {
			n++
		}
	}
	// The first page holds the 900 newest: 9 people's messages.
	if n != 1 || len(r.docs) != 9 {
		t.Errorf("%d history pages, %d documents; want the first page's 9 and no more", n, len(r.docs))
	}
	c = newSlack(t, s, `{"channels":["talk"],"include_bot_messages":true}`, slacktest.Token)
	if r, err = runSlack(t, c, Window{Start: time.Unix(0, 0), End: time.Now()}); err != nil || len(r.docs) != 1000 {
		t.Errorf("with include_bot_messages: %v, %d documents, want 1000", err, len(r.docs))
	}
}

// Slack's timestamps are read exactly, to the microsecond (a float64 of
// 1709283600.000001 is not).
func TestSlackTime(t *testing.T) {
	for ts, want := range map[string]string{
		"1709283600.000001": "2024-03-01T09:00:00.000001Z",
		"1709283600.999999": "2024-03-01T09:00:00.999999Z",
		"1709283600.5":      "2024-03-01T09:00:00.5Z",
		"1709283600":        "2024-03-01T09:00:00Z",
		"bad":               "",
		"-1.000000":         "",
		"1.0000001":         "",
	} {
		got, ok := slackTime(ts)
		if (want == "") != !ok || (ok && got.Format(time.RFC3339Nano) != want) {
			t.Errorf("slackTime(%q) = %v, %v; want %q", ts, got, ok, want)
		}
	}
	if got := slackTS(time.Date(2024, 3, 1, 9, 0, 0, 1000, time.UTC)); got != "1709283600.000001" {
		t.Errorf("slackTS = %q", got)
	}
}

// The message filters are Onyx's default_msg_filter and, with
// include_bot_messages, _bot_inclusive_msg_filter: the cases of Onyx's
// test_message_filtering.py, and its test bot's join, which Onyx lets
// through (the bot check returns first).
func TestSlackKeep(t *testing.T) {
	danswer := &struct {
		Name string `json:"name"`
	}{"DanswerBot Testing"}
	for _, tc := range []struct {
		name         string
		m            slackMessage
		keep, keepIn bool // By default, and with include_bot_messages.
	}{
		{"regular_user_message", slackMessage{Text: "hello", User: "U123"}, true, true},
		{"bot_id_message", slackMessage{Text: "automated update", BotID: "B123"}, false, true},
		{"app_id_message", slackMessage{Text: "app notification", AppID: "A123"}, false, true},
		{"bot_and_app_id", slackMessage{Text: "bot+app", BotID: "B1", AppID: "A1"}, false, true},
		{"danswerbot_testing_allowed", slackMessage{Text: "danswer test", BotID: "B999", BotProfile: danswer}, true, true},
		{"channel_join", slackMessage{Text: "joined", Subtype: "channel_join"}, false, false},
		{"channel_leave", slackMessage{Text: "left", Subtype: "channel_leave"}, false, false},
		{"pinned_item", slackMessage{Text: "pinned", Subtype: "pinned_item"}, false, false},
		{"empty_subtype", slackMessage{Text: "normal"}, true, true},
		{"danswerbot_testing_join", slackMessage{Subtype: "channel_join", BotID: "B999", BotProfile: danswer}, true, false},
	} {
		for _, in := range []bool{false, true} {
			c := &Slack{cfg: slackConfig{IncludeBotMessages: in}}
			want := tc.keep
			if in {
				want = tc.keepIn
			}
			if got := c.keep(&tc.m); got != want {
				t.Errorf("%s, include_bot_messages %v: keep %v, want %v", tc.name, in, got, want)
			}
		}
	}
}

// The channel filter is Onyx's filter_channels: the cases of Onyx's
// test_slack_filter_channels.py.
func TestSlackFilterChannels(t *testing.T) {
	var all []slackChannel
	for _, n := range []string{"general", "support", "infra-alerts", "billing-alerts", "deploy-notifications"} {
		all = append(all, slackChannel{ID: "C-" + n, Name: n})
	}
	for _, tc := range []struct {
		name, config string
		want         []string // nil: all.
		err          string
	}{
		{"no_filters_returns_all", `{}`, nil, ""},
		{"exclude_regex_without_includes", `{"exclude_channels":[".*-alerts",".*-notifications"],"exclude_channel_regex_enabled":true}`, []string{"general", "support"}, ""},
		{"exclude_exact_names", `{"exclude_channels":["support"]}`, []string{"general", "infra-alerts", "billing-alerts", "deploy-notifications"}, ""},
		{"exclude_exact_requires_full_name", `{"exclude_channels":["alerts"]}`, nil, ""},
		{"exclude_applied_after_include_regex", `{"channels":["infra-.*","general"],"channel_regex_enabled":true,"exclude_channels":[".*-alerts"],"exclude_channel_regex_enabled":true}`, []string{"general"}, ""},
		{"exclude_applied_after_include_exact", `{"channels":["general","support"],"exclude_channels":["support"]}`, []string{"general"}, ""},
		{"exclude_nonexistent_name_is_harmless", `{"exclude_channels":["no-such-channel"]}`, nil, ""},
		{"exclude_regex_is_full_match", `{"exclude_channels":["alerts"],"exclude_channel_regex_enabled":true}`, nil, ""},
		{"include_validation_still_raises_for_unknown_channel", `{"channels":["typo-channel"]}`, nil, `channel "typo-channel" not found in the workspace`},
		{"validate_channel_regexes_accepts_valid_patterns", `{"channels":[".*-alerts$","general"],"channel_regex_enabled":true}`, []string{"general", "infra-alerts", "billing-alerts"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cred := json.RawMessage(`{"slack_bot_token":"xoxb-x"}`)
			c, err := NewSlack(json.RawMessage(tc.config), cred, &Env{HTTP: &http.Client{}})
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.(*Slack).filter(all, true)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("error %v, want %q", err, tc.err)
				}
				return
			}
			var names []string
			for _, ch := range got {
				names = append(names, ch.Name)
			}
			want := tc.want
			if want == nil {
				for _, ch := range all {
					want = append(want, ch.Name)
				}
			}
			if err != nil || !slices.Equal(names, want) {
				t.Errorf("filter = %q, %v; want %q", names, err, want)
			}
		})
	}
}

// The slim listing of a prune: a private channel the bot was removed from
// is no longer listed, so its threads are pruned; a channel whose history
// Slack refuses fails the listing, naming it, rather than letting its
// documents be pruned.
func TestSlackListIDsChannels(t *testing.T) {
	s := slacktest.NewFixture(t)
	c := newSlack(t, s, `{}`, slacktest.Token)
	list := func() ([]string, error) {
		var out []string
		err := c.ListIDs(context.Background(), func(_ context.Context, b []string) error { out = append(out, b...); return nil })
		return out, err
	}
	got, err := list()
	if err != nil || !slices.ContainsFunc(got, func(id string) bool { return strings.HasPrefix(id, "G0SECRET__") }) {
		t.Fatalf("listed %q, %v; want #secret's thread among them", got, err)
	}
	s.SetMembers("G0SECRET", "U0ALICE", "U0BOB")
	got, err = list()
	if err != nil || len(got) != 3 || slices.ContainsFunc(got, func(id string) bool { return strings.HasPrefix(id, "G0SECRET__") }) {
		t.Errorf("listed %q, %v after the bot left #secret; want the public channels' 3", got, err)
	}
	s.Revoke("channels:history")
	if _, err = list(); err == nil || err.Error() != "channel #general: Slack's conversations.history answered missing_scope (the Slack app needs the channels:history scope)" {
		t.Errorf("listing without channels:history: %v", err)
	}
}
