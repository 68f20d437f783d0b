package connector

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/outbound/connector/confluencetest"
)

const (
	confluenceTestUser  = "bot@example.com"
	confluenceTestToken = "ATATT3x-the-secret-token"
)

// confluenceOpen makes the Confluence connector of cfg (wiki_base and
// is_cloud set to the simulator's unless cfg has them) with token.
func confluenceOpen(t *testing.T, s *confluencetest.Server, cfg map[string]any, token string) *Confluence {
	t.Helper()
	if _, ok := cfg["wiki_base"]; !ok {
		cfg["wiki_base"] = s.BaseURL()
	}
	if _, ok := cfg["is_cloud"]; !ok {
		cfg["is_cloud"] = true
	}
	b, _ := json.Marshal(cfg)
	cred, _ := json.Marshal(map[string]string{"confluence_username": confluenceTestUser, "confluence_access_token": token})
	c, err := NewRegistry().Open(ConfluenceSource, b, cred, &Env{HTTP: http.DefaultClient, PDF: testPDF, Now: time.Now, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return c.(*Confluence)
}

// confluenceRun runs c over w from its first checkpoint to the end, and
// returns what it emitted and how many steps it took.
func confluenceRun(c Connector, w Window) (*recorder, int, error) {
	rec := &recorder{}
	cp := c.FirstCheckpoint()
	for steps := 1; ; steps++ {
		next, err := c.Step(context.Background(), w, cp, rec)
		if err != nil {
			return rec, steps, err
		}
		if more, err := HasMore(next); err != nil || !more {
			return rec, steps, err
		}
		cp = next
	}
}

// The documents of a run from the beginning, whole, as Onyx v4.6.1's
// connector makes them: ids the pages' addresses, titles, the text of
// their storage format (users named, link bodies and attachments written
// out, tables, lists) with the comments' as a second section, the space
// and labels, the last editor, the last modification; and the access of
// each: its space's permissions (ENG's group and user; PUB read by
// anonymous users, so public) unless it or an ancestor is restricted.
// Every listing pages (pages of 2), so a run takes a step a page of
// results; the first call is answered 429 and waited out.
func TestConfluenceDocuments(t *testing.T) {
	s := confluencetest.NewFixture(t, confluenceTestUser, confluenceTestToken)
	s.RateLimit(1)
	c := confluenceOpen(t, s, map[string]any{}, confluenceTestToken)
	rec, steps, err := confluenceRun(c, Window{End: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if steps != 3 || s.Throttled() != 1 || len(rec.failures) != 0 {
		for _, f := range rec.failures {
			t.Log(f.FailureMessage)
		}
		t.Errorf("%d steps, %d calls throttled, failures %+v; want 3 steps (5 pages by 2), 1 throttled, no failure", steps, s.Throttled(), rec.failures)
	}
	base := s.BaseURL() + "/spaces/"
	link := func(s string) *string { return &s }
	owner := func(name, email string) []json.RawMessage {
		b, _ := json.Marshal(imapOwner{name, email})
		return []json.RawMessage{b}
	}
	day := func(n int) *quarry.Time {
		return &quarry.Time{Time: confluencetest.Created.Add(time.Duration(n) * 24 * time.Hour)}
	}
	eng := &quarry.ExternalAccess{ExternalUserEmails: []string{"bob@example.com"}, ExternalUserGroupIDs: []string{"confluence_engineering"}}
	alice := &quarry.ExternalAccess{ExternalUserEmails: []string{"alice@example.com"}, ExternalUserGroupIDs: []string{}}
	public := &quarry.ExternalAccess{ExternalUserEmails: []string{}, ExternalUserGroupIDs: []string{}, IsPublic: true}
	want := []*quarry.Document{
		{ID: base + "ENG/pages/2001/Design", Source: ConfluenceSource, SemanticIdentifier: "Design",
			Sections: []quarry.Section{
				{Text: "Design\nThe service has three parts, reviewed by @Bob Brown .\n- API\n- Store\n\tPart\tOwner\n\tAPI\tAlice\nSee (LINK TEXT: the plans) and <attachment>arch_diagram.png</attachment> .",
					Link: link(base + "ENG/pages/2001/Design")},
				{Text: "\nComment:\nLooks good to me.", Link: link(base + "ENG/pages/2001/Design#comments")}},
			Metadata: map[string]any{"space": "Engineering", "labels": []string{"architecture", "draft"}}, DocUpdatedAt: day(1),
			PrimaryOwners: owner("Alice Adams", "alice@example.com"), ExternalAccess: eng},
		{ID: s.BaseURL() + "/pages/viewpageattachments.action?pageId=2001&preview=%2F2001%2F3002%2Fnotes.txt", Source: ConfluenceSource, SemanticIdentifier: "notes.txt",
			Sections: []quarry.Section{{Text: "Release notes: the API ships first.\n", Link: link(s.BaseURL() + "/download/attachments/2001/notes.txt")}},
			Metadata: map[string]any{"space": "Engineering", "parent_page_id": base + "ENG/pages/2001/Design"}, DocUpdatedAt: day(1),
			PrimaryOwners: owner("Bob Brown", "bob@example.com"), ExternalAccess: eng},
		{ID: base + "ENG/pages/2002/Secrets", Source: ConfluenceSource, SemanticIdentifier: "Secrets",
			Sections: []quarry.Section{{Text: "The keys are rotated monthly.", Link: link(base + "ENG/pages/2002/Secrets")}},
			Metadata: map[string]any{"space": "Engineering"}, DocUpdatedAt: day(2), PrimaryOwners: owner("Alice Adams", "alice@example.com"), ExternalAccess: alice},
		{ID: base + "ENG/pages/2003/Plans", Source: ConfluenceSource, SemanticIdentifier: "Plans",
			Sections: []quarry.Section{{Text: "Ship in May . line one line two", Link: link(base + "ENG/pages/2003/Plans")}},
			Metadata: map[string]any{"space": "Engineering"}, DocUpdatedAt: day(3), PrimaryOwners: owner("Bob Brown", "bob@example.com"), ExternalAccess: alice},
		{ID: base + "PUB/pages/2004/Welcome", Source: ConfluenceSource, SemanticIdentifier: "Welcome",
			Sections: []quarry.Section{{Text: "Welcome to the wiki.\nAsk in #help.", Link: link(base + "PUB/pages/2004/Welcome")}},
			Metadata: map[string]any{"space": "Public"}, DocUpdatedAt: day(4), PrimaryOwners: owner("Carol Clark", "unknown@domain.invalid"), ExternalAccess: public},
		{ID: base + "PUB/pages/2005/Old+news", Source: ConfluenceSource, SemanticIdentifier: "Old news",
			Sections: []quarry.Section{{Text: "Nothing to see.", Link: link(base + "PUB/pages/2005/Old+news")}},
			Metadata: map[string]any{"space": "Public", "labels": []string{"archived"}}, DocUpdatedAt: day(5), PrimaryOwners: owner("Bob Brown", "bob@example.com"), ExternalAccess: public},
	}
	if diff := cmp.Diff(want, rec.docs); diff != "" {
		t.Errorf("documents (-want +got):\n%s", diff)
	}
}

// Indexing is lenient where the permission sync is strict, as Jira's
// connector: when Confluence refuses (403) or does not find (404,
// CONFCLOUD-77618) the pages' read restrictions, the pages are read
// without them and carry no access; when it refuses a space's
// permissions, the pages of the space without restrictions carry none,
// and a restricted page keeps its restriction's. The permission sync
// fails on a refusal, naming Confluence's answer, and reads each
// ancestor's restrictions on its own after CONFCLOUD-77618's 404, as Onyx
// (TestConfluenceAncestorFallback).
func TestConfluenceRestrictionsRefused(t *testing.T) {
	ids := func(rec *recorder) map[string]string {
		out := map[string]string{}
		for _, d := range rec.docs {
			a := "none"
			if d.ExternalAccess != nil {
				a = strings.Join(d.ExternalAccess.Principals(), " ")
			}
			out[d.SemanticIdentifier] = a
		}
		return out
	}
	for _, tc := range []struct {
		name      string
		refuse    func(s *confluencetest.Server)
		want      map[string]string
		permError string // "": the sync gives the fixture's access.
	}{
		{"restrictions refused", func(s *confluencetest.Server) { s.RestrictionsStatus = http.StatusForbidden },
			map[string]string{"Design": "none", "notes.txt": "none", "Secrets": "none", "Plans": "none", "Welcome": "none", "Old news": "none"},
			"answered 403 Forbidden (list the pages' restrictions): User not permitted to view restrictions of content"},
		{"an ancestor not found", func(s *confluencetest.Server) { s.RestrictionsStatus = http.StatusNotFound },
			map[string]string{"Design": "none", "notes.txt": "none", "Secrets": "none", "Plans": "none", "Welcome": "none", "Old news": "none"}, ""},
		{"space permissions refused", func(s *confluencetest.Server) { s.SpacePermissionsStatus = http.StatusForbidden },
			map[string]string{"Design": "none", "notes.txt": "none", "Secrets": "email:alice@example.com", "Plans": "email:alice@example.com",
				"Welcome": "none", "Old news": "none"},
			"answered 403 Forbidden (read the permissions of space ENG): User not permitted to view permissions of space : ENG"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := confluencetest.NewFixture(t, confluenceTestUser, confluenceTestToken)
			tc.refuse(s)
			c := confluenceOpen(t, s, map[string]any{}, confluenceTestToken)
			rec, _, err := confluenceRun(c, Window{End: time.Now()})
			if err != nil {
				t.Fatalf("indexing: %v", err)
			}
			if diff := cmp.Diff(tc.want, ids(rec)); diff != "" || len(rec.failures) != 0 {
				t.Errorf("access (-want +got):\n%s\nfailures %+v", diff, rec.failures)
			}
			got := map[string]string{}
			err = confluenceOpen(t, s, map[string]any{}, confluenceTestToken).Permissions(context.Background(),
				func(_ context.Context, id string, a *quarry.ExternalAccess) error {
					got[strings.TrimPrefix(id, s.BaseURL())] = strings.Join(a.Principals(), " ")
					return nil
				})
			if tc.permError == "" {
				if diff := cmp.Diff(confluenceFixtureAccess, got); err != nil || diff != "" {
					t.Errorf("permission sync: %v, access (-want +got):\n%s", err, diff)
				}
			} else if err == nil || !strings.Contains(err.Error(), tc.permError) {
				t.Errorf("permission sync: %v, want an error naming %q", err, tc.permError)
			}
		})
	}
}

// confluenceFixtureAccess is the access of each document of
// confluencetest.NewFixture (by its address under the wiki's base), as
// its principals: ENG's permissions, Secrets' restriction (and Plans'
// through it), PUB's anonymous read.
var confluenceFixtureAccess = map[string]string{
	"/spaces/ENG/pages/2001/Design": "email:bob@example.com group:confluence_engineering",
	"/pages/viewpageattachments.action?pageId=2001&preview=%2F2001%2F3002%2Fnotes.txt": "email:bob@example.com group:confluence_engineering",
	"/spaces/ENG/pages/2002/Secrets":  "email:alice@example.com",
	"/spaces/ENG/pages/2003/Plans":    "email:alice@example.com",
	"/spaces/PUB/pages/2004/Welcome":  "public",
	"/spaces/PUB/pages/2005/Old+news": "public",
}

// Onyx v4.6.1's CONFCLOUD-77618 fallback in the permission sync
// (retrieve_all_slim_docs_perm_sync, get_page_restrictions_with_per_ancestor_fetch):
// two pages under drafts (Budget under a draft under Secrets, Launch under
// a draft at the top of ENG) make the search expanding the ancestors'
// restrictions answer 404; the listing starts again with the ancestors
// bare, and each ancestor's restrictions are read on their own
// (restriction/byOperation), once a run each, closest first, until one
// is restricted: Plans gets Secrets' restriction, Budget (past its
// draft, not found) Secrets' too, Launch (past its draft) its space's.
// Budget's attachment gets Budget's access, where Onyx gives an
// attachment its own or its page's own restriction, else the space's.
func TestConfluenceAncestorFallback(t *testing.T) {
	s := confluencetest.NewFixture(t, confluenceTestUser, confluenceTestToken)
	s.AddDrafts()
	got := map[string]string{}
	err := confluenceOpen(t, s, map[string]any{}, confluenceTestToken).Permissions(context.Background(),
		func(_ context.Context, id string, a *quarry.ExternalAccess) error {
			got[strings.TrimPrefix(id, s.BaseURL())] = strings.Join(a.Principals(), " ")
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	want := maps.Clone(confluenceFixtureAccess)
	want["/spaces/ENG/pages/2007/Budget"] = "email:alice@example.com"
	want["/pages/viewpageattachments.action?pageId=2007&preview=%2F2007%2F3004%2Fbudget.txt"] = "email:alice@example.com"
	want["/spaces/ENG/pages/2009/Launch"] = "email:bob@example.com group:confluence_engineering"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("access (-want +got):\n%s", diff)
	}
	// Plans' ancestors Secrets (restricted: the walk stops); Budget's
	// draft (not found), then Secrets (read already); Launch's draft.
	if reads, want := s.RestrictionReads(), []string{confluencetest.SecretsID, confluencetest.BudgetDraftID, confluencetest.LaunchDraftID}; !slices.Equal(reads, want) {
		t.Errorf("restrictions read of %q, want %q", reads, want)
	}
}

// The CQL of each configuration and window, as Onyx v4.6.1 writes it, and
// the pages it finds; an admin's own CQL, which the simulator does not
// take, ends the run with Confluence's 400 message.
func TestConfluenceQueries(t *testing.T) {
	s := confluencetest.NewFixture(t, confluenceTestUser, confluenceTestToken)
	start := time.Date(2025, 3, 3, 12, 0, 0, 0, time.UTC)
	end := time.Date(2025, 3, 6, 8, 15, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		cfg    map[string]any
		w      Window
		cql    string
		titles []string
		err    string
	}{
		{"everything", map[string]any{}, Window{End: end},
			"type=page and lastmodified <= '2025-03-07 08:15' order by lastmodified asc", []string{"Design", "notes.txt", "Secrets", "Plans", "Welcome", "Old news"}, ""},
		{"no attachments", map[string]any{"include_attachments": false}, Window{End: end},
			"type=page and lastmodified <= '2025-03-07 08:15' order by lastmodified asc", []string{"Design", "Secrets", "Plans", "Welcome", "Old news"}, ""},
		{"window", map[string]any{}, Window{Start: start, End: end},
			"type=page and lastmodified >= '2025-03-03 12:00' and lastmodified <= '2025-03-07 08:15' order by lastmodified asc", []string{"Plans", "Welcome", "Old news"}, ""},
		{"time zone", map[string]any{"timezone_offset": -5}, Window{Start: start, End: end},
			"type=page and lastmodified >= '2025-03-03 07:00' and lastmodified <= '2025-03-07 03:15' order by lastmodified asc", []string{"Secrets", "Plans", "Welcome", "Old news"}, ""},
		{"space and labels", map[string]any{"space": "PUB", "labels_to_skip": []string{"archived", "old news"}}, Window{End: end},
			"type=page and space='PUB' and label not in ('archived','old%20news') and lastmodified <= '2025-03-07 08:15' order by lastmodified asc", []string{"Welcome"}, ""},
		{"page", map[string]any{"page_id": "2002"}, Window{End: end},
			"type=page and id='2002' and lastmodified <= '2025-03-07 08:15' order by lastmodified asc", []string{"Secrets"}, ""},
		{"page and descendants", map[string]any{"page_id": "2002", "index_recursively": true}, Window{End: end},
			"type=page and (ancestor='2002' or id='2002') and lastmodified <= '2025-03-07 08:15' order by lastmodified asc", []string{"Secrets", "Plans"}, ""},
		{"own query", map[string]any{"cql_query": "type=blogpost"}, Window{End: end},
			"type=blogpost and lastmodified <= '2025-03-07 08:15' order by lastmodified asc", nil,
			"Confluence at " + s.BaseURL() + " answered 400 Bad Request (search the pages): com.atlassian.confluence.api.service.exceptions.BadRequestException: Could not parse cql : type=blogpost and lastmodified <= '2025-03-07 08:15' order by lastmodified asc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(s.CQLs())
			rec, _, err := confluenceRun(confluenceOpen(t, s, tc.cfg, confluenceTestToken), tc.w)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Errorf("error %v, want %q", err, tc.err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if cqls := s.CQLs()[before:]; len(cqls) == 0 || cqls[0] != tc.cql {
				t.Errorf("CQL %q, want first %q", cqls, tc.cql)
			}
			var titles []string
			for _, d := range rec.docs {
				titles = append(titles, d.SemanticIdentifier)
			}
			if !slices.Equal(titles, tc.titles) {
				t.Errorf("pages %q, want %q", titles, tc.titles)
			}
		})
	}
}

// Content that changes between runs: a poll from just before an edit
// finds the edited page alone, with its new text; the slim listing no
// longer has a deleted page, so a prune removes it; a restriction added
// to a page changes its access at the next permission sync.
func TestConfluenceChanges(t *testing.T) {
	s := confluencetest.NewFixture(t, confluenceTestUser, confluenceTestToken)
	c := confluenceOpen(t, s, map[string]any{}, confluenceTestToken)
	before := time.Now().Add(-time.Minute)
	s.EditPage(confluencetest.WelcomeID, func(p *confluencetest.Page) { p.Body = "<p>Welcome, new starters.</p>" })
	rec, _, err := confluenceRun(c, Window{Start: before, End: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.docs) != 1 || rec.docs[0].SemanticIdentifier != "Welcome" || rec.docs[0].Sections[0].Text != "Welcome, new starters." {
		t.Errorf("the poll found %+v, want Welcome's new text alone", rec.docs)
	}

	s.DeletePage(confluencetest.OldID)
	var ids []string
	if err := c.ListIDs(context.Background(), func(_ context.Context, batch []string) error {
		ids = append(ids, batch...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	base := s.BaseURL() + "/spaces/"
	notes := s.BaseURL() + "/pages/viewpageattachments.action?pageId=2001&preview=%2F2001%2F3002%2Fnotes.txt"
	want := []string{base + "ENG/pages/2001/Design", notes, base + "ENG/pages/2002/Secrets", base + "ENG/pages/2003/Plans", base + "PUB/pages/2004/Welcome"}
	if !slices.Equal(ids, want) {
		t.Errorf("ids %q, want %q", ids, want)
	}
	if cqls := s.CQLs(); !slices.Contains(cqls, "type=page order by lastmodified asc") ||
		!slices.Contains(cqls, "type=attachment and container='2001' order by lastmodified asc") {
		t.Errorf("the slim listing's CQL %q, want the pages' and attachments' without a window", cqls)
	}

	s.Restrict(confluencetest.DesignID, nil, []string{"Leads"})
	s.Restrict(confluencetest.SecretsID, nil, nil)
	got := map[string]string{}
	if err := c.Permissions(context.Background(), func(_ context.Context, id string, a *quarry.ExternalAccess) error {
		got[strings.TrimPrefix(id, base)] = strings.Join(a.Principals(), " ")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	wantAccess := map[string]string{"ENG/pages/2001/Design": "group:confluence_leads", "ENG/pages/2002/Secrets": "group:confluence_leads",
		"ENG/pages/2003/Plans": "group:confluence_leads", "PUB/pages/2004/Welcome": "public", notes: "group:confluence_leads"}
	if diff := cmp.Diff(wantAccess, got); diff != "" {
		t.Errorf("access (-want +got):\n%s", diff)
	}
}

// The groups, as Onyx's group sync lists them: each user's groups by
// email (carol, who shows none, in none), and on Cloud the group of every
// user found with an email.
func TestConfluenceGroups(t *testing.T) {
	s := confluencetest.NewFixture(t, confluenceTestUser, confluenceTestToken)
	c := confluenceOpen(t, s, map[string]any{}, confluenceTestToken)
	var got []quarry.ExternalGroup
	if err := c.Groups(context.Background(), func(_ context.Context, g *quarry.ExternalGroup) error {
		got = append(got, *g)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := []quarry.ExternalGroup{
		{ID: "confluence_engineering", UserEmails: []string{"alice@example.com"}},
		{ID: "confluence_confluence-users", UserEmails: []string{"alice@example.com", "bob@example.com"}},
		{ID: "confluence_all_confluence_users_found_by_onyx", UserEmails: []string{"alice@example.com", "bob@example.com"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("groups (-want +got):\n%s", diff)
	}
}

// A token Confluence refuses is a *CredentialError naming Confluence's
// message, and never the token; a Data Center connector sends its token
// as a bearer token.
func TestConfluenceRefused(t *testing.T) {
	s := confluencetest.NewFixture(t, confluenceTestUser, "the-right-token")
	_, _, err := confluenceRun(confluenceOpen(t, s, map[string]any{}, confluenceTestToken), Window{End: time.Now()})
	var ce *CredentialError
	want := "Confluence at " + s.BaseURL() + " answered 401 Unauthorized (search the pages): " + confluencetest.UnauthorizedMessage
	if !errors.As(err, &ce) || ce.Reason != want || strings.Contains(err.Error(), confluenceTestToken) {
		t.Errorf("error %v, want a credential error of %q", err, want)
	}
	s.Cloud = false
	if _, _, err := confluenceRun(confluenceOpen(t, s, map[string]any{"is_cloud": false}, "the-right-token"), Window{End: time.Now()}); err != nil {
		t.Errorf("Data Center with a bearer token: %v", err)
	}
}

// Configurations and credentials the connector refuses.
func TestConfluenceConfig(t *testing.T) {
	for _, tc := range []struct{ cfg, cred, err string }{
		{`{"wiki_base":"ftp://x","is_cloud":true}`, `{"confluence_username":"u","confluence_access_token":"t"}`, `wiki_base "ftp://x" is not an http(s) URL`},
		{`{"wiki_base":"https://x.atlassian.net/wiki","is_cloud":true}`, `{"confluence_access_token":"t"}`, "the credential needs confluence_access_token, and confluence_username for Confluence Cloud"},
		{`{"wiki_base":"https://x.atlassian.net/wiki","is_cloud":true,"scoped_token":true}`, `{"confluence_username":"u","confluence_access_token":"t"}`, "scoped_token: Quarry's Confluence connector does not take scoped API tokens yet; use an API token without scopes"},
		{`{"wiki_base":"https://x.atlassian.net/wiki","is_cloud":true}`, `{"confluence_refresh_token":"r","confluence_access_token":"t"}`, "the credential is an OAuth token (confluence_refresh_token), which Quarry's Confluence connector does not take yet; use an API token"},
	} {
		if _, err := NewConfluence(json.RawMessage(tc.cfg), json.RawMessage(tc.cred), &Env{}); err == nil || err.Error() != tc.err {
			t.Errorf("%s %s: %v, want %q", tc.cfg, tc.cred, err, tc.err)
		}
	}
	c, err := newConfluence(json.RawMessage(`{"wiki_base":"https://acme.atlassian.net","is_cloud":true}`), json.RawMessage(`{"confluence_username":"u","confluence_access_token":"t"}`), &Env{})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.docID("/spaces/K/pages/1/T"); got != "https://acme.atlassian.net/wiki/spaces/K/pages/1/T" {
		t.Errorf("document id %q, want /wiki added as Onyx's build_confluence_document_id does", got)
	}
}

// A checkpoint is Onyx's (has_more, next_page_url: the search's next
// link): a new connector resumes from it where the last step stopped.
func TestConfluenceResume(t *testing.T) {
	s := confluencetest.NewFixture(t, confluenceTestUser, confluenceTestToken)
	w := Window{End: time.Now()}
	first := &recorder{}
	cp, err := confluenceOpen(t, s, map[string]any{}, confluenceTestToken).Step(context.Background(), w, json.RawMessage(`{"has_more":true,"next_page_url":null}`), first)
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		HasMore     bool   `json:"has_more"`
		NextPageURL string `json:"next_page_url"`
	}
	if err := json.Unmarshal(cp, &c); err != nil || !c.HasMore || !strings.HasPrefix(c.NextPageURL, "rest/api/content/search?") || !strings.Contains(c.NextPageURL, "cursor=") {
		t.Fatalf("checkpoint %s, want has_more and the next link", cp)
	}
	rest, _, err := confluenceRun(confluenceOpen(t, s, map[string]any{}, confluenceTestToken), w)
	if err != nil {
		t.Fatal(err)
	}
	resumed := &recorder{}
	for more := true; more; {
		if cp, err = confluenceOpen(t, s, map[string]any{}, confluenceTestToken).Step(context.Background(), w, cp, resumed); err != nil {
			t.Fatal(err)
		}
		more, _ = HasMore(cp)
	}
	var got []string
	for _, d := range slices.Concat(first.docs, resumed.docs) {
		got = append(got, d.SemanticIdentifier)
	}
	var want []string
	for _, d := range rest.docs {
		want = append(want, d.SemanticIdentifier)
	}
	if len(first.docs) != 3 || !slices.Equal(got, want) {
		t.Errorf("a first step of %d documents, then resumed: %q; want 3 (2 pages, an attachment), then all of %q", len(first.docs), got, want)
	}
}
