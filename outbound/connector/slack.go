package connector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/quarryhq/quarry"
)

// SlackSource is the source of the Slack connector.
const SlackSource quarry.DocumentSource = "slack"

// SlackUserAgent is the User-Agent of the Slack connector's requests.
const SlackUserAgent = "Quarry-Slack-Connector/1"

// Limits of the Slack connector.
const (
	slackTimeout = 30 * time.Second // Each request.
	// slackLimit is the limit of every listing's page: Onyx's
	// _SLACK_LIMIT.
	slackLimit = 900
	// slackAnswerMaxBytes bounds what is read of one answer: a page of
	// 900 messages with their blocks and files is a few megabytes.
	slackAnswerMaxBytes = 32 << 20
	// slackMaxRetries is how many times a call answered 429 is tried
	// again, each after the Retry-After it was given.
	slackMaxRetries = 10
	// slackMaxRetryAfter is the longest Retry-After waited out: Slack
	// asks for seconds to a minute; a longer wait fails the run.
	slackMaxRetryAfter = 5 * time.Minute
	// slackMaxPages bounds the pages of one listing.
	slackMaxPages = 100000
	// slackBotChannelMinBatch and slackBotChannelShare are Onyx's
	// BOT_CHANNEL_MIN_BATCH_SIZE and BOT_CHANNEL_PERCENTAGE_THRESHOLD: a
	// channel whose first page has more messages than the first, nearly
	// all of them filtered out, is skipped as a bot's channel.
	slackBotChannelMinBatch = 256
	slackBotChannelShare    = 0.95
)

// Slack is Onyx's Slack connector (backend/onyx/connectors/slack/
// connector.py at v4.6.1) in Go, calling Slack's Web API as slack_sdk
// does (GET with the parameters in the query, the bot token in the
// Authorization header; auth.test and conversations.join by POST). A run
// is checkpointed: its first step lists the channels (conversations.list,
// public and private, archived ones excluded) and keeps those the
// configuration names; each later step reads one page of one channel's
// history within the run's window (conversations.history with oldest and
// latest) and emits a document for each thread (conversations.replies)
// and each message outside a thread, until the channel's last page, then
// goes on to the next channel. A document is a thread: its id
// {channel_id}__{thread_ts}, a section per message with the message's
// link, its semantic identifier "{sender} in #{channel}: {first 50
// characters}", Onyx's. Every document carries who may read it at Slack
// (ExternalAccess): everyone for a public channel, the members of a
// private one by their emails; a pair whose access is "sync" searches by
// it.
type Slack struct {
	cfg     slackConfig
	token   string
	api     *url.URL
	env     *Env
	include []*regexp.Regexp // channels as regular expressions, when channel_regex_enabled.
	exclude []*regexp.Regexp // exclude_channels, when exclude_channel_regex_enabled.

	// What a run learns once (a connector runs one run at a time).
	workspace string                // The workspace's URL, from auth.test.
	users     map[string]*slackUser // users.info's answers; nil for a user Slack does not have.
}

// slackConfig is the connector_specific_config of the Slack connector:
// Onyx's keys.
type slackConfig struct {
	Channels                   []string `json:"channels"`
	ChannelRegexEnabled        bool     `json:"channel_regex_enabled"`
	ExcludeChannels            []string `json:"exclude_channels"`
	ExcludeChannelRegexEnabled bool     `json:"exclude_channel_regex_enabled"`
	IncludeBotMessages         bool     `json:"include_bot_messages"`
	// Onyx's batch_size, num_threads and use_redis: the worker batches
	// what a connector emits and it makes one call at a time, so they
	// are accepted and ignored.
	BatchSize  *int  `json:"batch_size"`
	NumThreads *int  `json:"num_threads"`
	UseRedis   *bool `json:"use_redis"`
}

// slackCredential is the credential_json of the Slack connector: Onyx's.
type slackCredential struct {
	BotToken string `json:"slack_bot_token"`
}

// NewSlack is the Constructor of the slack source's connector. Its API is
// env.Endpoint("slack", "https://slack.com/api/").
func NewSlack(config, credential json.RawMessage, env *Env) (Connector, error) {
	var c slackConfig
	if err := json.Unmarshal(config, &c); err != nil {
		return nil, fmt.Errorf("not an object with channels, channel_regex_enabled, exclude_channels, "+
			"exclude_channel_regex_enabled and include_bot_messages: %w", err)
	}
	var cred slackCredential
	if err := json.Unmarshal(credential, &cred); err != nil || strings.TrimSpace(cred.BotToken) == "" {
		return nil, errors.New("the credential has no slack_bot_token")
	}
	// Onyx drops a leading # of a channel's name.
	for i, ch := range c.Channels {
		c.Channels[i] = strings.TrimPrefix(ch, "#")
	}
	for i, ch := range c.ExcludeChannels {
		c.ExcludeChannels[i] = strings.TrimPrefix(ch, "#")
	}
	if env == nil || env.HTTP == nil {
		return nil, errors.New("the Slack connector needs the egress guard's HTTP client")
	}
	if env.Log == nil {
		e := *env
		e.Log = slog.New(slog.DiscardHandler)
		env = &e
	}
	api, err := url.Parse(env.Endpoint(SlackSource, "https://slack.com/api/"))
	if err != nil {
		return nil, fmt.Errorf("the Slack API's base: %w", err)
	}
	s := &Slack{cfg: c, token: strings.TrimSpace(cred.BotToken), api: api, env: env}
	if c.ChannelRegexEnabled {
		if s.include, err = slackRegexps(c.Channels, "channel"); err != nil {
			return nil, err
		}
	}
	if c.ExcludeChannelRegexEnabled {
		if s.exclude, err = slackRegexps(c.ExcludeChannels, "excluded channel"); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// slackRegexps compiles patterns to match a whole name, as Python's
// re.fullmatch does.
func slackRegexps(patterns []string, label string) ([]*regexp.Regexp, error) {
	var out []*regexp.Regexp
	for _, p := range patterns {
		re, err := regexp.Compile(`^(?:` + p + `)$`)
		if err != nil {
			return nil, fmt.Errorf("Invalid %s regex '%s': %w", label, p, err) // Onyx's words.
		}
		out = append(out, re)
	}
	return out, nil
}

// slackChannel is a channel as conversations.list tells it.
type slackChannel struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	IsPrivate bool   `json:"is_private"`
	IsMember  bool   `json:"is_member"`
	Created   int64  `json:"created"`
}

// slackMessage is a message as conversations.history and .replies tell
// it.
type slackMessage struct {
	TS         string `json:"ts"`
	ThreadTS   string `json:"thread_ts"`
	User       string `json:"user"`
	Text       string `json:"text"`
	Subtype    string `json:"subtype"`
	BotID      string `json:"bot_id"`
	AppID      string `json:"app_id"`
	BotProfile *struct {
		Name string `json:"name"`
	} `json:"bot_profile"`
}

// slackUser is a user as users.info and users.list tell them.
type slackUser struct {
	ID       string `json:"id"`
	RealName string `json:"real_name"`
	Profile  struct {
		DisplayName string `json:"display_name"`
		RealName    string `json:"real_name"`
		FirstName   string `json:"first_name"`
		LastName    string `json:"last_name"`
		Email       string `json:"email"`
	} `json:"profile"`
}

// slackPage is the part of every listing's answer that pages it.
type slackPage struct {
	ResponseMetadata struct {
		NextCursor string `json:"next_cursor"`
	} `json:"response_metadata"`
}

// slackCheckpoint is the Slack connector's checkpoint: Onyx's
// SlackCheckpoint, with the channels kept whole (so that the next one
// needs no conversations.info) and the history's cursor within the
// current channel.
type slackCheckpoint struct {
	HasMore bool `json:"has_more"`
	// Channels are the channels of the run, listed by its first step;
	// null before.
	Channels []slackChannel `json:"channels"`
	// Current is the index in Channels of the channel being read.
	Current int `json:"current"`
	// Cursor is where the next page of the current channel's history
	// starts; "" at its start.
	Cursor string `json:"cursor,omitempty"`
	// CurrentAccess is who may read the current channel.
	CurrentAccess *quarry.ExternalAccess `json:"current_channel_access,omitempty"`
	// SeenThreadTS are the threads of the current channel emitted
	// already: a reply sent to the channel too shows in its history.
	SeenThreadTS []string `json:"seen_thread_ts"`
}

// FirstCheckpoint is a run's first checkpoint: the channels are yet to be
// listed.
func (s *Slack) FirstCheckpoint() json.RawMessage {
	return json.RawMessage(`{"has_more":true,"channels":null,"current":0,"seen_thread_ts":[]}`)
}

// Step lists the channels (the first step) or reads a page of the current
// channel's history within w.
func (s *Slack) Step(ctx context.Context, w Window, raw json.RawMessage, out Emitter) (json.RawMessage, error) {
	var cp slackCheckpoint
	if err := json.Unmarshal(raw, &cp); err != nil {
		return nil, fmt.Errorf("the Slack connector's checkpoint: %w", err)
	}
	if err := s.start(ctx); err != nil {
		return nil, err
	}
	if cp.Channels == nil {
		channels, err := s.channels(ctx, true, true)
		if err != nil {
			return nil, err
		}
		if cp.Channels, err = s.filter(channels, true); err != nil {
			return nil, err
		}
		cp.Current, cp.Cursor, cp.SeenThreadTS, cp.CurrentAccess = 0, "", []string{}, nil
		cp.HasMore = len(cp.Channels) > 0
		s.env.Log.Debug("slack connector: channels", "all", len(channels), "kept", len(cp.Channels))
		return json.Marshal(&cp)
	}
	if cp.Current >= len(cp.Channels) {
		cp.HasMore = false
		return json.Marshal(&cp)
	}
	next, err := s.page(ctx, w, &cp, out)
	if err != nil {
		return nil, err
	}
	if !next {
		cp.Current++
		cp.Cursor, cp.SeenThreadTS, cp.CurrentAccess = "", []string{}, nil
	}
	cp.HasMore = cp.Current < len(cp.Channels)
	return json.Marshal(&cp)
}

// start checks the token and finds the workspace's URL, once per run
// (auth.test). An Enterprise Grid organization's token fails: Onyx reads
// each of its workspaces and scopes public channels to their members,
// which this connector does not.
func (s *Slack) start(ctx context.Context) error {
	if s.workspace != "" {
		return nil
	}
	var a struct {
		URL          string `json:"url"`
		EnterpriseID string `json:"enterprise_id"`
	}
	if err := s.call(ctx, "auth.test", nil, true, &a); err != nil {
		return err
	}
	if a.EnterpriseID != "" {
		return fmt.Errorf("the Slack token is of an Enterprise Grid organization (%s); Quarry's Slack connector reads single workspaces only", a.EnterpriseID)
	}
	if a.URL == "" {
		return errors.New("Slack's auth.test gave no workspace url")
	}
	s.workspace = a.URL
	s.users = map[string]*slackUser{}
	return nil
}

// page reads the page of the current channel's history at cp's cursor,
// emits its threads' documents, and reports whether the channel has
// another page. A channel Slack will not give is a failure of its own.
func (s *Slack) page(ctx context.Context, w Window, cp *slackCheckpoint, out Emitter) (more bool, err error) {
	ch := &cp.Channels[cp.Current]
	failed := func(err error) (bool, error) {
		var api *slackAPIError
		if !errors.As(err, &api) {
			return false, err
		}
		start, end := quarry.Time{Time: w.Start.UTC()}, quarry.Time{Time: w.End.UTC()}
		return false, out.Failure(ctx, &quarry.ConnectorFailure{
			FailedEntity:   &quarry.EntityFailure{EntityID: ch.ID, MissedTimeRange: []*quarry.Time{&start, &end}},
			FailureMessage: fmt.Sprintf("channel #%s: %v", ch.Name, err),
		})
	}
	if cp.Cursor == "" {
		if !ch.IsMember {
			// The bot joins a public channel to read it, as Onyx's does.
			err := s.call(ctx, "conversations.join", url.Values{"channel": {ch.ID}}, true, nil)
			var api *slackAPIError
			if errors.As(err, &api) && api.Code == "is_archived" {
				s.env.Log.Info("slack connector: the channel is archived; skipped", "channel", ch.Name)
				return false, nil
			}
			if err != nil {
				return failed(err)
			}
			ch.IsMember = true
		}
		a, err := s.access(ctx, ch, nil)
		if err != nil {
			return failed(err)
		}
		cp.CurrentAccess = a
	}
	q := url.Values{"channel": {ch.ID}, "limit": {strconv.Itoa(slackLimit)},
		"oldest": {slackTS(w.Start)}, "latest": {slackTS(w.End)}}
	if cp.Cursor != "" {
		q.Set("cursor", cp.Cursor)
	}
	var h struct {
		slackPage
		Messages []slackMessage `json:"messages"`
	}
	if err := s.call(ctx, "conversations.history", q, false, &h); err != nil {
		return failed(err)
	}
	seen := map[string]bool{}
	for _, ts := range cp.SeenThreadTS {
		seen[ts] = true
	}
	filtered := 0
	for _, m := range h.Messages {
		if m.ThreadTS != "" && seen[m.ThreadTS] {
			continue
		}
		d, err := s.thread(ctx, ch, m, cp.CurrentAccess)
		var api *slackAPIError
		switch {
		case errors.As(err, &api):
			link := s.link(ch.ID, m)
			ts := cmpOr(m.ThreadTS, m.TS)
			err = out.Failure(ctx, &quarry.ConnectorFailure{
				FailedDocument: &quarry.DocumentFailure{DocumentID: slackDocID(ch.ID, ts), DocumentLink: &link},
				FailureMessage: err.Error(),
			})
		case err != nil:
			return false, err
		case d == nil:
			filtered++
			continue
		default:
			err = out.Document(ctx, d)
		}
		if err != nil {
			return false, err
		}
		if m.ThreadTS != "" {
			seen[m.ThreadTS] = true
			cp.SeenThreadTS = append(cp.SeenThreadTS, m.ThreadTS)
		}
	}
	next := h.ResponseMetadata.NextCursor
	if cp.Cursor == "" && len(h.Messages) > slackBotChannelMinBatch && float64(filtered) > slackBotChannelShare*float64(len(h.Messages)) {
		s.env.Log.Warn("slack connector: the channel appears to be mostly bots' messages; skipped", "channel", ch.Name)
		next = ""
	}
	cp.Cursor = next
	return next != "", nil
}

// cmpOr returns a, or b when a is empty.
func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// slackDisallowedSubtypes are the subtypes of messages Onyx does not
// index (_DISALLOWED_MSG_SUBTYPES).
var slackDisallowedSubtypes = map[string]bool{
	"channel_join": true, "channel_leave": true, "channel_archive": true, "channel_unarchive": true,
	"pinned_item": true, "unpinned_item": true, "ekm_access_denied": true, "channel_posting_permissions": true,
	"group_join": true, "group_leave": true, "group_archive": true, "group_unarchive": true, "channel_name": true,
}

// keep reports whether a message is indexed: Onyx's default_msg_filter
// (no bots' or apps' messages, but its own test bot's) or, with
// include_bot_messages, _bot_inclusive_msg_filter.
func (s *Slack) keep(m *slackMessage) bool {
	if !s.cfg.IncludeBotMessages && (m.BotID != "" || m.AppID != "") {
		// Onyx lets its own test bot through before looking at the
		// subtype.
		return m.BotProfile != nil && m.BotProfile.Name == "DanswerBot Testing"
	}
	return !slackDisallowedSubtypes[m.Subtype]
}

// thread is the document of the thread of message m (its replies read
// with conversations.replies), or of m alone outside a thread; nil when
// every message of it is filtered out.
func (s *Slack) thread(ctx context.Context, ch *slackChannel, m slackMessage, access *quarry.ExternalAccess) (*quarry.Document, error) {
	var msgs []slackMessage
	if m.ThreadTS == "" {
		if !s.keep(&m) {
			return nil, nil
		}
		msgs = []slackMessage{m}
	} else {
		err := s.list(ctx, "conversations.replies", url.Values{"channel": {ch.ID}, "ts": {m.ThreadTS}}, func(raw json.RawMessage) error {
			var p struct {
				Messages []slackMessage `json:"messages"`
			}
			if err := json.Unmarshal(raw, &p); err != nil {
				return err
			}
			for _, r := range p.Messages {
				if s.keep(&r) {
					msgs = append(msgs, r)
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if len(msgs) == 0 {
			return nil, nil
		}
	}
	sender, err := s.senderName(ctx, msgs[0].User)
	if err != nil {
		return nil, err
	}
	var sections []quarry.Section
	var latest time.Time
	for _, x := range msgs {
		text, err := s.clean(ctx, x.Text)
		if err != nil {
			return nil, err
		}
		link := s.link(ch.ID, x)
		sections = append(sections, quarry.Section{Text: text, Link: &link})
		if t, ok := slackTime(x.TS); ok && t.After(latest) {
			latest = t
		}
	}
	first := sections[0].Text
	snippet := first
	if utf8.RuneCountInString(first) > 50 {
		snippet = strings.TrimRightFunc(string([]rune(first)[:50]), unicode.IsSpace) + "..."
	}
	updated := quarry.Time{Time: latest}
	return &quarry.Document{
		ID:                 slackDocID(ch.ID, msgs[0].TS),
		Sections:           sections,
		Source:             SlackSource,
		SemanticIdentifier: strings.ReplaceAll(fmt.Sprintf("%s in #%s: %s", sender, ch.Name, snippet), "\n", " "),
		Metadata:           map[string]any{"Channel": ch.Name},
		DocUpdatedAt:       &updated,
		ExternalAccess:     access,
	}, nil
}

// slackDocID is the id of a thread's document: Onyx's
// {channel_id}__{thread_ts}.
func slackDocID(channel, ts string) string { return channel + "__" + ts }

// slackTS is t as a Slack timestamp: seconds since the epoch, with the
// microseconds.
func slackTS(t time.Time) string {
	us := t.UnixMicro()
	if us < 0 {
		us = 0
	}
	return fmt.Sprintf("%d.%06d", us/1e6, us%1e6)
}

// slackTime reads a Slack timestamp ("1709283600.000123": seconds, and
// microseconds after the dot), exactly, as a time in UTC.
func slackTime(ts string) (time.Time, bool) {
	sec, frac, _ := strings.Cut(ts, ".")
	s, err := strconv.ParseInt(sec, 10, 64)
	if err != nil || s < 0 || len(frac) > 6 {
		return time.Time{}, false
	}
	var us int64
	if frac != "" {
		if us, err = strconv.ParseInt(frac+strings.Repeat("0", 6-len(frac)), 10, 64); err != nil || us < 0 {
			return time.Time{}, false
		}
	}
	return time.Unix(s, us*1000).UTC(), true
}

// link is a message's link, Onyx's get_message_link:
// {workspace}/archives/{channel}/p{ts without its dot}, and
// ?thread_ts={thread_ts} for a message of a thread.
func (s *Slack) link(channel string, m slackMessage) string {
	l := strings.TrimSuffix(s.workspace, "/") + "/archives/" + channel + "/p" + strings.ReplaceAll(m.TS, ".", "")
	if m.ThreadTS != "" {
		l += "?thread_ts=" + m.ThreadTS
	}
	return l
}

// user returns what users.info tells of a user, asked once per run; nil
// when Slack does not tell (no such user, or the app lacks users:read: a
// sender is then "Unknown", a mention its id, as Onyx degrades).
func (s *Slack) user(ctx context.Context, id string) (*slackUser, error) {
	if u, ok := s.users[id]; ok {
		return u, nil
	}
	var a struct {
		User slackUser `json:"user"`
	}
	err := s.call(ctx, "users.info", url.Values{"user": {id}}, false, &a)
	var api *slackAPIError
	switch {
	case errors.As(err, &api):
		s.env.Log.Warn("slack connector: a user's users.info failed", "user", id, "error", api.Error())
		s.users[id] = nil
		return nil, nil
	case err != nil:
		return nil, err
	}
	s.users[id] = &a.User
	return &a.User, nil
}

// senderName is the name a document's title gives its first sender:
// Onyx's BasicExpertInfo.get_semantic_name of the user's users.info.
func (s *Slack) senderName(ctx context.Context, id string) (string, error) {
	if id == "" {
		return "Unknown", nil
	}
	u, err := s.user(ctx, id)
	if err != nil || u == nil {
		return "Unknown", err
	}
	p := u.Profile
	display := cmpOr(u.RealName, p.DisplayName)
	switch {
	case p.FirstName != "" && p.LastName != "":
		return pyCapitalize(p.FirstName) + " " + pyCapitalize(p.LastName), nil
	case display != "":
		return display, nil
	case p.Email != "":
		return p.Email, nil
	case p.FirstName != "":
		return pyCapitalize(p.FirstName), nil
	}
	return "Unknown", nil
}

// pyCapitalize is Python's str.capitalize: the first letter upper case,
// the rest lower.
func pyCapitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + strings.ToLower(s[n:])
}

var (
	slackUserMention    = regexp.MustCompile(`<@(.*?)>`)
	slackChannelMention = regexp.MustCompile(`<#(.*?)\|(.*?)>`)
	slackSubteamMention = regexp.MustCompile(`<!subteam\^([^<>|]+)(?:\|([^<>]*))?>`)
	slackSpecialMention = regexp.MustCompile(`<!([^|]+)\|([^>]+)>`)
)

// clean is Onyx's SlackTextCleaner.index_clean: a user's mention becomes
// @ and their name (display name, else real name), a channel's #name,
// @channel, @here and @everyone plain, a user group's its label.
func (s *Slack) clean(ctx context.Context, text string) (string, error) {
	for _, m := range slackUserMention.FindAllStringSubmatch(text, -1) {
		id := m[1]
		name := id
		u, err := s.user(ctx, id)
		if err != nil {
			return "", err
		}
		if u != nil {
			name = cmpOr(u.Profile.DisplayName, u.Profile.RealName)
		}
		text = strings.ReplaceAll(text, "<@"+id+">", "@"+name)
	}
	text = slackUserMention.ReplaceAllString(text, "@$1")
	for _, m := range slackChannelMention.FindAllStringSubmatch(text, -1) {
		text = strings.ReplaceAll(text, m[0], "#"+m[2])
	}
	text = strings.NewReplacer("<!channel>", "@channel", "<!here>", "@here", "<!everyone>", "@everyone").Replace(text)
	text = slackSubteamMention.ReplaceAllStringFunc(text, func(x string) string {
		m := slackSubteamMention.FindStringSubmatch(x)
		if m[2] != "" {
			return m[2]
		}
		return "@" + m[1]
	})
	return slackSpecialMention.ReplaceAllString(text, "$2"), nil
}

// channels lists the workspace's channels that are not archived
// (conversations.list): public ones, private ones the bot is in, or
// both. When listing private channels too is refused (the app lacks
// groups:read) and public ones are asked for, it lists those alone, as
// Onyx's get_channels does.
func (s *Slack) channels(ctx context.Context, public, private bool) ([]slackChannel, error) {
	var types []string
	if public {
		types = append(types, "public_channel")
	}
	if private {
		types = append(types, "private_channel")
	}
	list := func(types []string) ([]slackChannel, error) {
		var out []slackChannel
		err := s.list(ctx, "conversations.list", url.Values{"types": {strings.Join(types, ",")}, "exclude_archived": {"1"}},
			func(raw json.RawMessage) error {
				var p struct {
					Channels []slackChannel `json:"channels"`
				}
				if err := json.Unmarshal(raw, &p); err != nil {
					return err
				}
				out = append(out, p.Channels...)
				return nil
			})
		return out, err
	}
	out, err := list(types)
	var api *slackAPIError
	if errors.As(err, &api) && private {
		if !public {
			s.env.Log.Warn("slack connector: private channels could not be listed; public channels are not asked for", "error", api.Code)
			return nil, nil
		}
		s.env.Log.Warn("slack connector: private channels could not be listed; listing public channels only", "error", api.Code)
		return list([]string{"public_channel"})
	}
	return out, err
}

// filter keeps the channels the configuration names: Onyx's
// filter_channels. A channel named (not as a regular expression) that
// the workspace does not have fails the run when strict, as Onyx's
// indexing does; the permission sync skips it.
func (s *Slack) filter(all []slackChannel, strict bool) ([]slackChannel, error) {
	match := func(name string, names []string, res []*regexp.Regexp) bool {
		if res != nil {
			return slices.ContainsFunc(res, func(re *regexp.Regexp) bool { return re.MatchString(name) })
		}
		return slices.Contains(names, name)
	}
	out := all
	if len(s.cfg.Channels) > 0 {
		if !s.cfg.ChannelRegexEnabled && strict {
			for _, want := range s.cfg.Channels {
				if !slices.ContainsFunc(all, func(c slackChannel) bool { return c.Name == want }) {
					var names []string
					for _, c := range all[:min(len(all), 50)] {
						names = append(names, c.Name)
					}
					return nil, fmt.Errorf("channel %q not found in the workspace; its channels (showing %d of %d): %s",
						want, len(names), len(all), strings.Join(names, ", "))
				}
			}
		}
		out = nil
		for _, c := range all {
			if match(c.Name, s.cfg.Channels, s.include) {
				out = append(out, c)
			}
		}
	}
	if len(s.cfg.ExcludeChannels) > 0 {
		out = slices.DeleteFunc(slices.Clone(out), func(c slackChannel) bool { return match(c.Name, s.cfg.ExcludeChannels, s.exclude) })
	}
	if out == nil {
		out = []slackChannel{}
	}
	return out, nil
}

// access is who may read a channel: everyone for a public one, as Onyx's
// get_channel_access outside Enterprise Grid; the members of a private
// one (conversations.members) by their emails. emails, when not nil, maps
// user ids to emails already known (users.list); users.info tells the
// others.
func (s *Slack) access(ctx context.Context, ch *slackChannel, emails map[string]string) (*quarry.ExternalAccess, error) {
	if !ch.IsPrivate {
		return &quarry.ExternalAccess{ExternalUserEmails: []string{}, ExternalUserGroupIDs: []string{}, IsPublic: true}, nil
	}
	var members []string
	err := s.list(ctx, "conversations.members", url.Values{"channel": {ch.ID}}, func(raw json.RawMessage) error {
		var p struct {
			Members []string `json:"members"`
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			return err
		}
		members = append(members, p.Members...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	for _, id := range members {
		email, ok := emails[id]
		if !ok {
			u, err := s.user(ctx, id)
			if err != nil {
				return nil, err
			}
			if u != nil {
				email = u.Profile.Email
			}
		}
		if email != "" {
			set[email] = true
		}
	}
	list := []string{}
	for e := range set {
		list = append(list, e)
	}
	slices.Sort(list)
	return &quarry.ExternalAccess{ExternalUserEmails: list, ExternalUserGroupIDs: []string{}, IsPublic: false}, nil
}

// slim lists the id of every thread and message of the channels the
// configuration names, a channel at a time, with who may read the
// channel: Onyx's _get_all_doc_ids, its whole history, without the
// replies. emails is as for access.
func (s *Slack) slim(ctx context.Context, emails map[string]string, each func(ctx context.Context, ids []string, a *quarry.ExternalAccess) error) error {
	if err := s.start(ctx); err != nil {
		return err
	}
	all, err := s.channels(ctx, true, true)
	if err != nil {
		return err
	}
	channels, err := s.filter(all, emails == nil)
	if err != nil {
		return err
	}
	for _, ch := range channels {
		if !ch.IsMember {
			err := s.call(ctx, "conversations.join", url.Values{"channel": {ch.ID}}, true, nil)
			var api *slackAPIError
			if errors.As(err, &api) && api.Code == "is_archived" {
				continue
			}
			if err != nil {
				return fmt.Errorf("channel #%s: %w", ch.Name, err)
			}
		}
		a, err := s.access(ctx, &ch, emails)
		if err != nil {
			return fmt.Errorf("channel #%s: %w", ch.Name, err)
		}
		err = s.list(ctx, "conversations.history", url.Values{"channel": {ch.ID}}, func(raw json.RawMessage) error {
			var p struct {
				Messages []slackMessage `json:"messages"`
			}
			if err := json.Unmarshal(raw, &p); err != nil {
				return err
			}
			var ids []string
			for _, m := range p.Messages {
				if s.keep(&m) {
					ids = append(ids, slackDocID(ch.ID, m.TS))
				}
			}
			if len(ids) == 0 {
				return nil
			}
			return each(ctx, ids, a)
		})
		if err != nil {
			return fmt.Errorf("channel #%s: %w", ch.Name, err)
		}
	}
	return nil
}

// ListIDs lists the ids of the documents the channels still have, for
// pruning.
func (s *Slack) ListIDs(ctx context.Context, ids func(ctx context.Context, batch []string) error) error {
	return s.slim(ctx, nil, func(ctx context.Context, batch []string, _ *quarry.ExternalAccess) error { return ids(ctx, batch) })
}

// Permissions lists every document's access: Onyx's slack_doc_sync. It
// maps users to emails first (users.list: the app needs
// users:read.email), then lists each channel's documents with its access
// (public: everyone; private: its members).
func (s *Slack) Permissions(ctx context.Context, access func(ctx context.Context, id string, a *quarry.ExternalAccess) error) error {
	if err := s.start(ctx); err != nil {
		return err
	}
	emails := map[string]string{}
	err := s.list(ctx, "users.list", nil, func(raw json.RawMessage) error {
		var p struct {
			Members []slackUser `json:"members"`
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			return err
		}
		for _, u := range p.Members {
			if u.ID != "" && u.Profile.Email != "" {
				emails[u.ID] = u.Profile.Email
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(emails) == 0 {
		return errors.New("Slack's users.list gave no user's email: the Slack app needs the users:read.email scope")
	}
	return s.slim(ctx, emails, func(ctx context.Context, ids []string, a *quarry.ExternalAccess) error {
		for _, id := range ids {
			if err := access(ctx, id, a); err != nil {
				return err
			}
		}
		return nil
	})
}

// list calls a listing method page by page, following
// response_metadata.next_cursor, with Onyx's limit, and calls page with
// each answer.
func (s *Slack) list(ctx context.Context, method string, q url.Values, page func(json.RawMessage) error) error {
	cursor := ""
	for range slackMaxPages {
		v := url.Values{"limit": {strconv.Itoa(slackLimit)}}
		for k, x := range q {
			v[k] = x
		}
		if cursor != "" {
			v.Set("cursor", cursor)
		}
		var raw json.RawMessage
		if err := s.call(ctx, method, v, false, &raw); err != nil {
			return err
		}
		if err := page(raw); err != nil {
			return fmt.Errorf("Slack's %s answered what is not its answer: %w", method, err)
		}
		var p slackPage
		if err := json.Unmarshal(raw, &p); err != nil {
			return fmt.Errorf("Slack's %s answered what is not its answer: %w", method, err)
		}
		if cursor = p.ResponseMetadata.NextCursor; cursor == "" {
			return nil
		}
	}
	return fmt.Errorf("Slack's %s gave more than %d pages", method, slackMaxPages)
}

// slackAPIError is Slack's answer ok: false to a call: its error code.
type slackAPIError struct {
	Method, Code, Needed string
}

func (e *slackAPIError) Error() string {
	if e.Needed != "" {
		return fmt.Sprintf("Slack's %s answered %s (the Slack app needs the %s scope)", e.Method, e.Code, e.Needed)
	}
	return fmt.Sprintf("Slack's %s answered %s", e.Method, e.Code)
}

// slackCredentialErrors are the errors of a token Slack does not take.
var slackCredentialErrors = map[string]bool{
	"not_authed": true, "invalid_auth": true, "account_inactive": true, "token_revoked": true, "token_expired": true,
	"no_permission": true, "org_login_required": true, "ekm_access_denied": true,
}

// call calls a method of the Web API with q, by GET with q in the query
// (POST with q as a form when post), and decodes its answer into out
// (when not nil). A 429 is waited out (its Retry-After) and tried again.
// An answer ok: false is a *slackAPIError, or a *CredentialError when
// Slack does not take the token.
func (s *Slack) call(ctx context.Context, method string, q url.Values, post bool, out any) error {
	u := s.api.JoinPath(method)
	for try := 0; ; try++ {
		b, retry, err := s.do(ctx, u, method, q, post)
		if err != nil {
			return err
		}
		if retry > 0 {
			if try >= slackMaxRetries {
				return fmt.Errorf("Slack's %s was rate limited (429) %d times in a row", method, try+1)
			}
			if retry > slackMaxRetryAfter {
				return fmt.Errorf("Slack's %s was rate limited (429) for %s, longer than the connector waits", method, retry)
			}
			s.env.Log.Info("slack connector: rate limited; waiting", "method", method, "retry_after", retry)
			if err := sleep(ctx, retry); err != nil {
				return err
			}
			continue
		}
		var env struct {
			OK     bool   `json:"ok"`
			Error  string `json:"error"`
			Needed string `json:"needed"`
		}
		if err := json.Unmarshal(b, &env); err != nil {
			return fmt.Errorf("Slack's %s did not answer JSON: %w", method, err)
		}
		if !env.OK {
			if slackCredentialErrors[env.Error] {
				return &CredentialError{Reason: fmt.Sprintf("Slack's %s answered %s", method, env.Error)}
			}
			return &slackAPIError{Method: method, Code: cmpOr(env.Error, "an error it did not name"), Needed: env.Needed}
		}
		if out == nil {
			return nil
		}
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("Slack's %s answered what is not its answer: %w", method, err)
		}
		return nil
	}
}

// do sends one request of a method and returns its answer's body, or the
// wait a 429 asked for.
func (s *Slack) do(parent context.Context, u *url.URL, method string, q url.Values, post bool) ([]byte, time.Duration, error) {
	ctx, cancel := context.WithTimeout(parent, slackTimeout)
	defer cancel()
	var req *http.Request
	var err error
	if post {
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, u.String(), strings.NewReader(q.Encode()))
		if err == nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
	} else {
		g := *u
		g.RawQuery = q.Encode()
		req, err = http.NewRequestWithContext(ctx, http.MethodGet, g.String(), nil)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("Slack's %s: %w", method, err)
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("User-Agent", SlackUserAgent)
	resp, err := s.env.HTTP.Do(req)
	if err != nil {
		if parent.Err() != nil {
			return nil, 0, parent.Err()
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, 0, fmt.Errorf("Slack's %s at %s: %w", method, s.api.Redacted(), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusTooManyRequests {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		wait, _ := retryAfter(resp.Header)
		return nil, max(wait, time.Second), nil // At least a second, also when Slack says none.
	}
	if resp.StatusCode/100 != 2 {
		return nil, 0, fmt.Errorf("Slack's %s at %s answered %s", method, s.api.Redacted(), resp.Status)
	}
	tooLarge := &limitError{what: "an answer of Slack's " + method, limit: slackAnswerMaxBytes}
	b, err := io.ReadAll(newBoundedReader(resp.Body, slackAnswerMaxBytes, tooLarge))
	if err != nil {
		if parent.Err() != nil {
			return nil, 0, parent.Err()
		}
		if err == tooLarge {
			return nil, 0, err
		}
		return nil, 0, fmt.Errorf("Slack's %s: %w", method, err)
	}
	return b, 0, nil
}
