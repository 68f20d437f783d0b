// Package slacktest simulates Slack's Web API for the Slack connector's
// tests: the methods the connector calls (auth.test, conversations.list,
// .history, .replies, .members, .info, .join, users.info, users.list,
// team.info), as Slack's API reference describes them. Every method is
// answered HTTP 200 with a JSON object whose ok says whether it worked and
// whose error names why not (not_authed, invalid_auth, channel_not_found,
// not_in_channel, ...); the token is the Authorization header's
// ("Bearer xoxb-…") or a token parameter; parameters come in the query,
// a form body or a JSON body; listings page by cursor
// (response_metadata.next_cursor), with pages of at most PageSize items
// whatever the limit asked, so that every listing pages. A method armed
// with RateLimit answers its next call 429 with Retry-After. It records
// every call, and its workspace can change between runs (messages posted,
// edited, deleted). It is for tests only.
package slacktest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Token is the bot token the simulator takes.
const Token = "xoxb-1111-2222-quarrytestsecret"

// BotUserID is the bot's user id.
const BotUserID = "UBOT0001"

// Team is the simulated workspace; EnterpriseID is set for a token of an
// Enterprise Grid organization.
type Team struct {
	ID, Name, Domain string
	EnterpriseID     string
}

// URL is the workspace's address, as auth.test gives it.
func (t Team) URL() string { return "https://" + t.Domain + ".slack.com/" }

// User is a user of the workspace.
type User struct {
	ID, Name, RealName, DisplayName, FirstName, LastName, Email string
	IsBot                                                       bool
}

// Channel is a channel of the workspace.
type Channel struct {
	ID, Name string
	Private  bool
	Archived bool
	Created  int64
	// Members are the ids of its members; the bot reads a channel it is
	// a member of (BotUserID among them).
	Members  []string
	messages []*Message // Oldest first.
}

// Message is a message of a channel: a top-level one with its thread's
// replies, or a reply.
type Message struct {
	TS, User, Text string
	Subtype        string // "channel_join", "bot_message", "thread_broadcast", ...
	BotID          string
	ThreadTS       string // A reply's thread; a root with replies has its own ts.
	EditedTS       string
	replies        []*Message // Oldest first.
}

// Call is a call the simulator answered.
type Call struct {
	Method string
	Params url.Values // The query's, the form's or the JSON body's, token excluded.
	Auth   string     // The Authorization header.
}

// Server is a simulated Slack workspace served on 127.0.0.1 until the
// test ends.
type Server struct {
	*httptest.Server
	// PageSize is the most items of a page of any listing.
	PageSize int

	mu        sync.Mutex
	team      Team
	users     []*User
	channels  []*Channel
	calls     []Call
	limited   map[string]int  // Method: the Retry-After of its next call's 429.
	revoked   map[string]bool // Scopes the app was not granted.
	seq       int
	busyUntil time.Duration // Time spent answering: the simulator's own.
}

// New starts a workspace with no users or channels.
func New(tb testing.TB, team Team) *Server {
	s := &Server{PageSize: 2, team: team, limited: map[string]int{}, revoked: map[string]bool{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	tb.Cleanup(s.Close)
	return s
}

// APIURL is the base of the Web API: https://slack.com/api/'s equivalent.
func (s *Server) APIURL() string { return s.URL + "/api/" }

// AddUser adds users.
func (s *Server) AddUser(us ...User) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range us {
		s.users = append(s.users, &u)
	}
}

// AddChannel adds a channel.
func (s *Server) AddChannel(c Channel) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.channels = append(s.channels, &c)
}

// ts is a message timestamp at t, unique within the workspace.
func (s *Server) ts(t time.Time) string {
	s.seq++
	return fmt.Sprintf("%d.%06d", t.Unix(), s.seq%1000000)
}

// Post posts m in channel at t and returns its ts. When m.ThreadTS is
// set it is a reply to that thread (a thread_broadcast one shows in the
// channel too).
func (s *Server) Post(channel string, t time.Time, m Message) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.channel(channel)
	if c == nil {
		panic("slacktest: no channel " + channel)
	}
	m.TS = s.ts(t)
	if m.ThreadTS == "" {
		c.messages = append(c.messages, &m)
		return m.TS
	}
	root := find(c.messages, m.ThreadTS)
	if root == nil {
		panic("slacktest: no thread " + m.ThreadTS)
	}
	root.ThreadTS = root.TS
	root.replies = append(root.replies, &m)
	if m.Subtype == "thread_broadcast" {
		c.messages = append(c.messages, &m)
	}
	return m.TS
}

// Edit changes the text of the message ts of channel, as an edit does:
// its ts stays, edited is set.
func (s *Server) Edit(channel, ts, text string, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.message(channel, ts)
	m.Text, m.EditedTS = text, s.ts(at)
}

// Delete deletes the message ts of channel and, when it is a thread's
// root, its replies.
func (s *Server) Delete(channel, ts string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.channel(channel)
	c.messages = slices.DeleteFunc(c.messages, func(m *Message) bool { return m.TS == ts || (m.ThreadTS == ts && m.Subtype == "thread_broadcast") })
	for _, m := range c.messages {
		m.replies = slices.DeleteFunc(m.replies, func(r *Message) bool { return r.TS == ts })
	}
}

// SetMembers sets the members of channel.
func (s *Server) SetMembers(channel string, members ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.channel(channel).Members = members
}

// RateLimit makes the next call of method answer 429 with Retry-After
// retryAfter (seconds) and Slack's ratelimited error.
func (s *Server) RateLimit(method string, retryAfter int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limited[method] = retryAfter
}

// Revoke takes scope from the app, as an app not granted it: the methods
// that need it answer Slack's missing_scope error naming it, and users'
// emails are not shown without users:read.email.
func (s *Server) Revoke(scope string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.revoked[scope] = true
}

// Calls returns the calls answered so far, and forgets them.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.calls
	s.calls = nil
	return c
}

// Busy returns the time the simulator spent answering calls, from
// reading a request to writing its answer.
func (s *Server) Busy() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.busyUntil
}

func (s *Server) channel(id string) *Channel {
	for _, c := range s.channels {
		if c.ID == id {
			return c
		}
	}
	return nil
}

func (s *Server) message(channel, ts string) *Message {
	c := s.channel(channel)
	if c == nil {
		panic("slacktest: no channel " + channel)
	}
	for _, m := range c.messages {
		if m.TS == ts {
			return m
		}
		if r := find(m.replies, ts); r != nil {
			return r
		}
	}
	panic("slacktest: no message " + ts)
}

func find(ms []*Message, ts string) *Message {
	for _, m := range ms {
		if m.TS == ts {
			return m
		}
	}
	return nil
}

func (s *Server) user(id string) *User {
	for _, u := range s.users {
		if u.ID == id {
			return u
		}
	}
	return nil
}

// params reads a call's parameters: the query's, then a form's or a JSON
// object's body.
func params(r *http.Request) (url.Values, error) {
	v := r.URL.Query()
	if r.Method != http.MethodPost {
		return v, nil
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			return nil, err
		}
		for k, x := range body {
			switch x := x.(type) {
			case string:
				v.Set(k, x)
			case bool:
				v.Set(k, map[bool]string{true: "true", false: "false"}[x])
			default:
				b, _ := json.Marshal(x)
				v.Set(k, string(b))
			}
		}
	case "application/x-www-form-urlencoded", "":
		if err := r.ParseForm(); err != nil {
			return nil, err
		}
		for k, vs := range r.PostForm {
			v[k] = vs
		}
	}
	return v, nil
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	defer func() {
		s.mu.Lock()
		s.busyUntil += time.Since(start)
		s.mu.Unlock()
	}()
	method, ok := strings.CutPrefix(r.URL.Path, "/api/")
	if !ok || (r.Method != http.MethodGet && r.Method != http.MethodPost) {
		http.NotFound(w, r)
		return
	}
	v, err := params(r)
	if err != nil {
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_form_data"})
		return
	}
	token := v.Get("token")
	v.Del("token")
	auth := r.Header.Get("Authorization")
	if b, ok := strings.CutPrefix(auth, "Bearer "); ok {
		token = b
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, Call{Method: method, Params: v, Auth: auth})
	if after, ok := s.limited[method]; ok {
		delete(s.limited, method)
		w.Header().Set("Retry-After", strconv.Itoa(after))
		writeJSON(w, http.StatusTooManyRequests, map[string]any{"ok": false, "error": "ratelimited"})
		return
	}
	switch {
	case token == "":
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "not_authed"})
		return
	case token != Token:
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_auth"})
		return
	}
	if scope := s.needs(method, v); scope != "" && s.revoked[scope] {
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "missing_scope", "needed": scope, "provided": s.provided()})
		return
	}
	h, ok := s.methods()[method]
	if !ok {
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "unknown_method"})
		return
	}
	out, code := h(v)
	if code != "" {
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": code})
		return
	}
	out["ok"] = true
	writeJSON(w, http.StatusOK, out)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// scopes are the bot token scopes the simulator knows.
var scopes = []string{"channels:history", "channels:join", "channels:read", "groups:history", "groups:read",
	"team:read", "users:read", "users:read.email"}

// provided lists the scopes the app has, as missing_scope's provided.
func (s *Server) provided() string {
	var have []string
	for _, sc := range scopes {
		if !s.revoked[sc] {
			have = append(have, sc)
		}
	}
	return strings.Join(have, ",")
}

// needs is the scope a call of method with v needs, as Slack's reference
// says: a private channel's the groups: scope where a public one's is the
// channels: one.
func (s *Server) needs(method string, v url.Values) string {
	private := func(kind string) string {
		if c := s.channel(v.Get("channel")); c != nil && c.Private {
			return "groups:" + kind
		}
		return "channels:" + kind
	}
	switch method {
	case "conversations.list":
		if s.revoked["groups:read"] && slices.Contains(strings.Split(v.Get("types"), ","), "private_channel") {
			return "groups:read"
		}
		return "channels:read"
	case "conversations.info", "conversations.members":
		return private("read")
	case "conversations.history", "conversations.replies":
		return private("history")
	case "conversations.join":
		return "channels:join"
	case "users.info", "users.list":
		return "users:read"
	case "team.info":
		return "team:read"
	}
	return ""
}

// handler answers a method: its answer without ok, or Slack's error code.
type handler func(v url.Values) (map[string]any, string)

func (s *Server) methods() map[string]handler {
	return map[string]handler{
		"auth.test": func(url.Values) (map[string]any, string) {
			a := map[string]any{"url": s.team.URL(), "team": s.team.Name, "user": "quarry", "team_id": s.team.ID,
				"user_id": BotUserID, "bot_id": "B0001", "is_enterprise_install": s.team.EnterpriseID != ""}
			if s.team.EnterpriseID != "" {
				a["enterprise_id"] = s.team.EnterpriseID
			}
			return a, ""
		},
		"team.info": func(url.Values) (map[string]any, string) {
			return map[string]any{"team": map[string]any{"id": s.team.ID, "name": s.team.Name, "domain": s.team.Domain,
				"url": s.team.URL()}}, ""
		},
		"conversations.list":    s.conversationsList,
		"conversations.info":    s.conversationsInfo,
		"conversations.join":    s.conversationsJoin,
		"conversations.history": s.conversationsHistory,
		"conversations.replies": s.conversationsReplies,
		"conversations.members": s.conversationsMembers,
		"users.info": func(v url.Values) (map[string]any, string) {
			u := s.user(v.Get("user"))
			if u == nil {
				return nil, "user_not_found"
			}
			return map[string]any{"user": s.userJSON(u)}, ""
		},
		"users.list": func(v url.Values) (map[string]any, string) {
			var all []any
			for _, u := range s.users {
				all = append(all, s.userJSON(u))
			}
			return s.page(v, "members", all)
		},
	}
}

// page answers the page of a listing that v's cursor and limit ask for,
// under key.
func (s *Server) page(v url.Values, key string, all []any) (map[string]any, string) {
	offset := 0
	if c := v.Get("cursor"); c != "" {
		b, err := base64.StdEncoding.DecodeString(c)
		n, ok := strings.CutPrefix(string(b), "offset:")
		if err != nil || !ok {
			return nil, "invalid_cursor"
		}
		if offset, err = strconv.Atoi(n); err != nil || offset < 0 || offset > len(all) {
			return nil, "invalid_cursor"
		}
	}
	size := s.PageSize
	if l := v.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 {
			return nil, "invalid_limit"
		}
		size = min(size, n)
	}
	end := min(offset+size, len(all))
	next := ""
	if end < len(all) {
		next = base64.StdEncoding.EncodeToString([]byte("offset:" + strconv.Itoa(end)))
	}
	items := all[offset:end]
	if items == nil {
		items = []any{}
	}
	return map[string]any{key: items, "has_more": next != "", "response_metadata": map[string]any{"next_cursor": next}}, ""
}

func (s *Server) userJSON(u *User) map[string]any {
	profile := map[string]any{"real_name": u.RealName, "display_name": u.DisplayName, "first_name": u.FirstName, "last_name": u.LastName}
	if u.Email != "" && !s.revoked["users:read.email"] {
		profile["email"] = u.Email
	}
	return map[string]any{"id": u.ID, "name": u.Name, "real_name": u.RealName, "is_bot": u.IsBot, "deleted": false, "profile": profile}
}

func (s *Server) channelJSON(c *Channel) map[string]any {
	return map[string]any{"id": c.ID, "name": c.Name, "name_normalized": c.Name, "is_channel": !c.Private, "is_group": c.Private,
		"is_private": c.Private, "is_archived": c.Archived, "is_member": slices.Contains(c.Members, BotUserID),
		"created": c.Created, "context_team_id": s.team.ID, "num_members": len(c.Members)}
}

// bool reads a Slack boolean parameter: true, 1.
func boolParam(v url.Values, k string) bool {
	return v.Get(k) == "true" || v.Get(k) == "1"
}

func (s *Server) conversationsList(v url.Values) (map[string]any, string) {
	types := []string{"public_channel"}
	if t := v.Get("types"); t != "" {
		types = strings.Split(t, ",")
	}
	var all []any
	for _, c := range s.channels {
		switch {
		case c.Archived && boolParam(v, "exclude_archived"):
		case c.Private && (!slices.Contains(types, "private_channel") || !slices.Contains(c.Members, BotUserID)):
		case !c.Private && !slices.Contains(types, "public_channel"):
		default:
			all = append(all, s.channelJSON(c))
		}
	}
	return s.page(v, "channels", all)
}

// readable returns the channel of v a bot may read, or Slack's error.
func (s *Server) readable(v url.Values) (*Channel, string) {
	c := s.channel(v.Get("channel"))
	if c == nil || (c.Private && !slices.Contains(c.Members, BotUserID)) {
		return nil, "channel_not_found"
	}
	if !slices.Contains(c.Members, BotUserID) {
		return nil, "not_in_channel"
	}
	return c, ""
}

func (s *Server) conversationsInfo(v url.Values) (map[string]any, string) {
	c := s.channel(v.Get("channel"))
	if c == nil || (c.Private && !slices.Contains(c.Members, BotUserID)) {
		return nil, "channel_not_found"
	}
	return map[string]any{"channel": s.channelJSON(c)}, ""
}

func (s *Server) conversationsJoin(v url.Values) (map[string]any, string) {
	c := s.channel(v.Get("channel"))
	switch {
	case c == nil || (c.Private && !slices.Contains(c.Members, BotUserID)):
		return nil, "channel_not_found"
	case c.Private:
		return nil, "method_not_supported_for_channel_type"
	case c.Archived:
		return nil, "is_archived"
	}
	if !slices.Contains(c.Members, BotUserID) {
		c.Members = append(c.Members, BotUserID)
	}
	return map[string]any{"channel": s.channelJSON(c)}, ""
}

func (s *Server) conversationsMembers(v url.Values) (map[string]any, string) {
	c := s.channel(v.Get("channel"))
	if c == nil || (c.Private && !slices.Contains(c.Members, BotUserID)) {
		return nil, "channel_not_found"
	}
	var all []any
	for _, m := range c.Members {
		all = append(all, m)
	}
	return s.page(v, "members", all)
}

// tsParam reads a ts parameter; def when it is absent.
func tsParam(v url.Values, k string, def float64) (float64, bool) {
	x := v.Get(k)
	if x == "" {
		return def, true
	}
	f, err := strconv.ParseFloat(x, 64)
	return f, err == nil
}

func messageJSON(m *Message) map[string]any {
	j := map[string]any{"type": "message", "ts": m.TS, "text": m.Text}
	if m.User != "" {
		j["user"] = m.User
	}
	if m.Subtype != "" {
		j["subtype"] = m.Subtype
	}
	if m.BotID != "" {
		j["bot_id"] = m.BotID
	}
	if m.ThreadTS != "" {
		j["thread_ts"] = m.ThreadTS
	}
	if m.EditedTS != "" {
		j["edited"] = map[string]any{"user": m.User, "ts": m.EditedTS}
	}
	if len(m.replies) > 0 {
		j["reply_count"] = len(m.replies)
		j["latest_reply"] = m.replies[len(m.replies)-1].TS
	}
	return j
}

func (s *Server) conversationsHistory(v url.Values) (map[string]any, string) {
	c, code := s.readable(v)
	if code != "" {
		return nil, code
	}
	oldest, ok1 := tsParam(v, "oldest", 0)
	latest, ok2 := tsParam(v, "latest", float64(time.Now().Unix()+1))
	if !ok1 || !ok2 {
		return nil, "invalid_ts_oldest"
	}
	inclusive := boolParam(v, "inclusive")
	// Newest first, between oldest and latest.
	var all []any
	for _, m := range slices.Backward(c.messages) {
		ts, _ := strconv.ParseFloat(m.TS, 64)
		if (ts > oldest && ts < latest) || (inclusive && (ts == oldest || ts == latest)) {
			all = append(all, messageJSON(m))
		}
	}
	return s.page(v, "messages", all)
}

func (s *Server) conversationsReplies(v url.Values) (map[string]any, string) {
	c, code := s.readable(v)
	if code != "" {
		return nil, code
	}
	root := find(c.messages, v.Get("ts"))
	if root == nil {
		return nil, "thread_not_found"
	}
	all := []any{messageJSON(root)}
	for _, r := range root.replies {
		all = append(all, messageJSON(r))
	}
	return s.page(v, "messages", all)
}

// Old is when the fixture's messages were posted.
var Old = time.Date(2024, 3, 1, 9, 0, 0, 0, time.UTC)

// FixtureTeam is the fixture's workspace.
var FixtureTeam = Team{ID: "T0QUARRY", Name: "Quarry Test", Domain: "quarry-test"}

// NewFixture starts a workspace of three people and the bot, with a
// public channel the bot is in (#general: a message, a thread of three, a
// join and a bot's message), a public one it is not in (#random: a
// message), a private one it is in (#secret: a thread of two, Alice and
// Bob its members), a private one it is not in (#hidden) and an archived
// one (#old-stuff). The messages were posted at Old and the minutes after.
func NewFixture(tb testing.TB) *Server {
	s := New(tb, FixtureTeam)
	s.AddUser(
		User{ID: "U0ALICE", Name: "alice", RealName: "Alice Archer", DisplayName: "alice", FirstName: "alice", LastName: "archer", Email: "alice@example.com"},
		User{ID: "U0BOB", Name: "bob", RealName: "Bob Baker", Email: "bob@example.com"},
		User{ID: "U0CAROL", Name: "carol", DisplayName: "carol", Email: "carol@example.com"},
		User{ID: BotUserID, Name: "quarry", RealName: "Quarry", IsBot: true},
	)
	created := Old.Add(-24 * time.Hour).Unix()
	s.AddChannel(Channel{ID: "C0GENERAL", Name: "general", Created: created, Members: []string{"U0ALICE", "U0BOB", "U0CAROL", BotUserID}})
	s.AddChannel(Channel{ID: "C0RANDOM", Name: "random", Created: created, Members: []string{"U0ALICE", "U0BOB"}})
	s.AddChannel(Channel{ID: "G0SECRET", Name: "secret", Private: true, Created: created, Members: []string{"U0ALICE", "U0BOB", BotUserID}})
	s.AddChannel(Channel{ID: "G0HIDDEN", Name: "hidden", Private: true, Created: created, Members: []string{"U0CAROL"}})
	s.AddChannel(Channel{ID: "C0OLD", Name: "old-stuff", Archived: true, Created: created, Members: []string{"U0ALICE", BotUserID}})
	at := func(min int) time.Time { return Old.Add(time.Duration(min) * time.Minute) }
	s.Post("C0GENERAL", at(0), Message{User: "U0ALICE", Text: "Welcome to <#C0RANDOM|random>, <@U0BOB>!"})
	root := s.Post("C0GENERAL", at(1), Message{User: "U0BOB", Text: "Has anyone seen the quarry report? It is due at the end of the week\nand we need its numbers"})
	s.Post("C0GENERAL", at(2), Message{User: "U0CAROL", Text: "Yes, it is in the shared drive", ThreadTS: root})
	s.Post("C0GENERAL", at(3), Message{User: "U0ALICE", Text: "Thanks <@U0CAROL>", ThreadTS: root})
	s.Post("C0GENERAL", at(4), Message{User: "U0CAROL", Subtype: "channel_join", Text: "<@U0CAROL> has joined the channel"})
	s.Post("C0GENERAL", at(5), Message{Subtype: "bot_message", BotID: "B0DEPLOY", Text: "Deploy finished"})
	s.Post("C0RANDOM", at(6), Message{User: "U0CAROL", Text: "<!here> lunch at noon?"})
	secret := s.Post("G0SECRET", at(7), Message{User: "U0ALICE", Text: "The merger closes on Friday"})
	s.Post("G0SECRET", at(8), Message{User: "U0BOB", Text: "Keep it quiet", ThreadTS: secret})
	s.Post("G0HIDDEN", at(9), Message{User: "U0CAROL", Text: "Nobody else sees this"})
	s.Post("C0OLD", at(10), Message{User: "U0ALICE", Text: "An archived channel's message"})
	return s
}

// Channels returns the channels the workspace has, in its order.
func (s *Server) Channels() []Channel {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Channel
	for _, c := range s.channels {
		x := *c
		x.Members = slices.Clone(c.Members)
		x.messages = nil
		out = append(out, x)
	}
	return out
}

// History returns the ts of channel's messages (those its history
// lists), newest first.
func (s *Server) History(channel string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, m := range slices.Backward(s.channel(channel).messages) {
		out = append(out, m.TS)
	}
	return out
}

// Replies returns the ts of the thread ts of channel: its root, then its
// replies; nil when it has none.
func (s *Server) Replies(channel, ts string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	root := find(s.channel(channel).messages, ts)
	if root == nil || len(root.replies) == 0 {
		return nil
	}
	out := []string{root.TS}
	for _, r := range root.replies {
		out = append(out, r.TS)
	}
	return out
}

// Users returns the workspace's users, in its order.
func (s *Server) Users() []User {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []User
	for _, u := range s.users {
		out = append(out, *u)
	}
	return out
}

// NewLarge starts a workspace of channels public channels of messages
// messages each, one in five a thread of three, of about 200 characters
// each, for benchmarks: a run's documents are its channels × messages
// messages and threads. Its pages are of 200 items.
func NewLarge(tb testing.TB, channels, messages int) *Server {
	s := New(tb, FixtureTeam)
	s.PageSize = 200
	s.AddUser(User{ID: "U0ALICE", Name: "alice", RealName: "Alice Archer", Email: "alice@example.com"},
		User{ID: "U0BOB", Name: "bob", RealName: "Bob Baker", Email: "bob@example.com"})
	text := strings.Repeat("Some words of a message about the quarry's output. ", 4)
	for c := range channels {
		id := "C0LARGE" + strconv.Itoa(c)
		s.AddChannel(Channel{ID: id, Name: "large-" + strconv.Itoa(c), Members: []string{"U0ALICE", "U0BOB", BotUserID}})
		for i := range messages {
			at := Old.Add(time.Duration(c*messages+i) * time.Minute)
			ts := s.Post(id, at, Message{User: "U0ALICE", Text: text + "<@U0BOB>"})
			if i%5 == 0 {
				s.Post(id, at.Add(time.Second), Message{User: "U0BOB", Text: text, ThreadTS: ts})
				s.Post(id, at.Add(2*time.Second), Message{User: "U0ALICE", Text: text, ThreadTS: ts})
			}
		}
	}
	return s
}
