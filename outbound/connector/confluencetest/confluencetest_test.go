package confluencetest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"testing"
)

// get asks the simulator for path (under /wiki) as user with token, and
// returns the status, the Retry-After header and the body as JSON.
func get(t *testing.T, s *Server, path, user, token string) (int, string, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("GET", s.BaseURL()+path, nil)
	req.SetBasicAuth(user, token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v: %s", path, err, b)
	}
	return resp.StatusCode, resp.Header.Get("Retry-After"), m
}

// The simulator's answers: Confluence's error body for a refused
// credential, a rate limit and a CQL it does not take; every listing in
// pages of PageSize, each page's _links.next keeping the query, until
// the last, which has none.
func TestServer(t *testing.T) {
	s := NewFixture(t, "u@example.com", "tok")
	if code, _, m := get(t, s, "/rest/api/space", "u@example.com", "wrong"); code != 401 || m["message"] != UnauthorizedMessage || m["statusCode"] != 401.0 {
		t.Errorf("a wrong token: %d %v", code, m)
	}
	s.RateLimit(1)
	if code, after, m := get(t, s, "/rest/api/space", "u@example.com", "tok"); code != 429 || after != "1" || m["statusCode"] != 429.0 {
		t.Errorf("a rate limit: %d %q %v", code, after, m)
	}
	if code, _, m := get(t, s, "/rest/api/content/search?cql="+url.QueryEscape("type=blogpost"), "u@example.com", "tok"); code != 400 ||
		m["message"] != "com.atlassian.confluence.api.service.exceptions.BadRequestException: Could not parse cql : type=blogpost" {
		t.Errorf("a CQL it does not take: %d %v", code, m)
	}
	for _, tc := range []struct {
		path string
		n    int
	}{
		{"/rest/api/content/search?" + url.Values{"cql": {"type=page order by lastmodified asc"}, "expand": {"version"}, "limit": {"16"}}.Encode(), 5},
		{"/rest/api/space?limit=50", 2},
		{"/rest/api/search/user?cql=type=user&limit=1000", 3},
		{"/rest/api/user/memberof?accountId=acc-alice&limit=1000", 2},
	} {
		n, pages := 0, 0
		for path := tc.path; path != ""; pages++ {
			code, _, m := get(t, s, path, "u@example.com", "tok")
			if code != 200 {
				t.Fatalf("%s: %d %v", path, code, m)
			}
			results := m["results"].([]any)
			if len(results) > s.PageSize {
				t.Errorf("%s: %d results, more than a page", path, len(results))
			}
			n += len(results)
			next, _ := m["_links"].(map[string]any)["next"].(string)
			path = next
		}
		if n != tc.n || pages != (tc.n+s.PageSize-1)/s.PageSize {
			t.Errorf("%s: %d results in %d pages, want %d", tc.path, n, pages, tc.n)
		}
	}
}

// A content's restrictions by operation, as Atlassian's REST reference
// gives them (read and update, users and groups expanded); a draft's are
// not found, no search finds a draft, and a search expanding the
// ancestors' restrictions of a page under one answers CONFCLOUD-77618's
// 404, while one expanding the ancestors bare lists the draft among them.
func TestDrafts(t *testing.T) {
	s := NewFixture(t, "u@example.com", "tok")
	s.AddDrafts()
	code, _, m := get(t, s, "/rest/api/content/"+SecretsID+"/restriction/byOperation", "u@example.com", "tok")
	read, _ := m["read"].(map[string]any)
	users, _ := read["restrictions"].(map[string]any)["user"].(map[string]any)["results"].([]any)
	update, _ := m["update"].(map[string]any)
	if code != 200 || read["operation"] != "read" || len(users) != 1 || users[0].(map[string]any)["email"] != "alice@example.com" || update["operation"] != "update" {
		t.Errorf("Secrets' restrictions: %d %v", code, m)
	}
	if code, _, m := get(t, s, "/rest/api/content/"+BudgetDraftID+"/restriction/byOperation", "u@example.com", "tok"); code != 404 || m["statusCode"] != 404.0 {
		t.Errorf("a draft's restrictions: %d %v", code, m)
	}
	search := func(expand string) (int, map[string]any) {
		code, _, m := get(t, s, "/rest/api/content/search?"+url.Values{"cql": {"type=page and id='" + BudgetID + "' order by lastmodified asc"},
			"expand": {expand}}.Encode(), "u@example.com", "tok")
		return code, m
	}
	if code, m := search("ancestors.restrictions.read.restrictions.user"); code != 404 ||
		m["message"] != "Cannot find content. Outdated version/old_draft/trashed? Cannot find content <ContentId>" {
		t.Errorf("a search expanding the ancestors' restrictions: %d %v", code, m)
	}
	code, m = search("ancestors")
	results, _ := m["results"].([]any)
	if code != 200 || len(results) != 1 {
		t.Fatalf("a search expanding the ancestors: %d %v", code, m)
	}
	var ids []any
	for _, a := range results[0].(map[string]any)["ancestors"].([]any) {
		ids = append(ids, a.(map[string]any)["id"])
	}
	if fmt.Sprint(ids) != fmt.Sprint([]string{DesignID, SecretsID, BudgetDraftID}) {
		t.Errorf("Budget's ancestors %v", ids)
	}
	if code, _, m := get(t, s, "/rest/api/content/search?"+url.Values{"cql": {"type=page order by lastmodified asc"}, "limit": {"16"}}.Encode(),
		"u@example.com", "tok"); code != 200 || m["totalSize"] != 7.0 {
		t.Errorf("every page: %d, %v found, want the 7 that are not drafts", code, m["totalSize"])
	}
}
