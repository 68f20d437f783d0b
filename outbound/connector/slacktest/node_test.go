package slacktest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quarryhq/quarry/internal/npmtest"
	"github.com/quarryhq/quarry/outbound/connector/slacktest"
)

// nodeRead is what npm/check.mjs read of the simulator.
type nodeRead struct {
	Pages    map[string]int `json:"pages"`
	Channels []struct {
		ID        string `json:"id"`
		Name      string `json:"name"`
		IsPrivate bool   `json:"is_private"`
		IsMember  bool   `json:"is_member"`
	} `json:"channels"`
	History     map[string][]string `json:"history"`
	Replies     map[string][]string `json:"replies"`
	Members     map[string][]string `json:"members"`
	Users       map[string]string   `json:"users"`
	UsersList   []string            `json:"users_list"`
	RateLimited []struct {
		Seconds float64 `json:"seconds"`
		Method  string  `json:"method"`
	} `json:"rate_limited"`
	Invalid string `json:"invalid"`
}

// TestSlackNode reads the fixture with Slack's official Node client
// (npm's @slack/web-api, npm/package.json): conversations.list,
// conversations.members, conversations.history, conversations.replies and
// users.list through the client's own paginate, which follows the
// simulator's cursors page by page; users.info of every member; the 429
// on conversations.history's first call waited out by the client's own
// retry; a wrong token its platform error invalid_auth. What it read is
// compared with what the simulator holds, and each listing's pages with
// the pages of PageSize items it should take. It skips without node,
// unless QUARRY_E2E=1.
func TestSlackNode(t *testing.T) {
	dir, err := filepath.Abs("npm")
	if err != nil {
		t.Fatal(err)
	}
	node := npmtest.Install(t, dir)
	s := slacktest.NewFixture(t)
	s.RateLimit("conversations.history", 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "check.mjs", s.APIURL(), slacktest.Token)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node check.mjs: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	var got nodeRead
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}

	// What the simulator holds, and the pages its listings take.
	pages := func(n int) int { return max(1, (n+s.PageSize-1)/s.PageSize) }
	var want nodeRead
	want.Pages = map[string]int{}
	want.History, want.Replies, want.Members, want.Users = map[string][]string{}, map[string][]string{}, map[string][]string{}, map[string]string{}
	emails := map[string]string{}
	for _, u := range s.Users() {
		emails[u.ID] = u.Email
		want.UsersList = append(want.UsersList, u.ID)
	}
	want.Pages["users.list"] = pages(len(want.UsersList))
	for _, c := range s.Channels() {
		member := slices.Contains(c.Members, slacktest.BotUserID)
		if c.Archived || (c.Private && !member) {
			continue
		}
		want.Channels = append(want.Channels, struct {
			ID        string `json:"id"`
			Name      string `json:"name"`
			IsPrivate bool   `json:"is_private"`
			IsMember  bool   `json:"is_member"`
		}{c.ID, c.Name, c.Private, member})
		want.Members[c.ID] = c.Members
		want.Pages["conversations.members"] += pages(len(c.Members))
		for _, m := range c.Members {
			want.Users[m] = emails[m]
		}
		if !member {
			continue
		}
		want.History[c.ID] = s.History(c.ID)
		want.Pages["conversations.history"] += pages(len(want.History[c.ID]))
		for _, ts := range want.History[c.ID] {
			if r := s.Replies(c.ID, ts); r != nil {
				want.Replies[ts] = r
				want.Pages["conversations.replies"] += pages(len(r))
			}
		}
	}
	want.Pages["conversations.list"] = pages(len(want.Channels))
	want.RateLimited = append(want.RateLimited, struct {
		Seconds float64 `json:"seconds"`
		Method  string  `json:"method"`
	}{1, "conversations.history"})
	want.Invalid = "invalid_auth"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("what @slack/web-api read (-held +read):\n%s", diff)
	}
	for _, n := range got.Pages {
		if n < 2 {
			continue
		}
		return // Some listing paged.
	}
	t.Error("no listing took more than one page")
}
