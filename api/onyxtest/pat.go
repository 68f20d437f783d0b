package onyxtest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// The replays of Onyx v4.6.1's tests of personal access tokens:
// pat/test_pat_api.py and permissions/test_pat_scope_assignment.py. Where
// Quarry differs from Onyx on purpose (docs/decisions.md, "Personal access
// tokens"), the replay asserts Quarry's behaviour at that point and says
// what Onyx's test asserts:
//
//   - the token's prefix is qrp_ (Onyx's onyx_pat_);
//   - a revoked token answers 401 (Onyx's 403), as every bearer token
//     Quarry does not accept;
//   - Quarry offers one scope more than Onyx's four: basic, which opens
//     its own routes of people (running tools over the API and /mcp);
//     like Onyx, it offers no admin scope. Its errors on these routes
//     carry Onyx's error_code (INVALID_INPUT...), as Onyx's do.
//
// permissions/test_pat_scopes.py is not replayed: it mints tokens in
// Onyx's database (PATManager.create_scoped) and calls Onyx's search,
// chat and LLM routes, which Quarry does not have.

// patPrefix is the prefix of Quarry's tokens, where Onyx's tests expect
// "onyx_pat_".
const patPrefix = "qrp_"

var patReplays = []Replay{
	{Name: "pat/test_pat_api.py::test_pat_lifecycle_happy_path", Run: func(t *testing.T, c client) {
		user := must(c.createUser("pat_user", ""))(t)
		pat := must(c.createPAT("My Integration Token", ptr(30), user, nil))(t)
		check(t, pat.Name == "My Integration Token", "name %q", pat.Name)
		check(t, pat.Token != nil, "the raw token only returned on creation")
		check(t, pat.ExpiresAt != nil, "expires_at")
		// Onyx: startswith("onyx_pat_") for the token and its display.
		check(t, strings.HasPrefix(*pat.Token, patPrefix) && len(*pat.Token) > 20, "token %.8q…", *pat.Token)
		check(t, strings.Contains(pat.TokenDisplay, "****") && strings.HasPrefix(pat.TokenDisplay, patPrefix), "display %q", pat.TokenDisplay)

		tokens := must(c.listPATs(user))(t)
		check(t, len(tokens) == 1 && tokens[0].ID == pat.ID && tokens[0].Name == "My Integration Token" &&
			tokens[0].TokenDisplay == pat.TokenDisplay && tokens[0].Token == nil, "listed: %+v", tokens)

		r := c.authenticatePAT(*pat.Token)
		check(t, r.Status == 200, "authenticate: %d %s", r.Status, clip(r.Body))
		me := must(keys(r, "email", "id"))(t)
		check(t, string(me["email"]) == fmt.Sprintf("%q", user.Email) && string(me["id"]) == fmt.Sprintf("%q", user.ID), "GET /me: %s", r.Body)

		ok(t, c.revokePAT(pat.ID, user))
		// Onyx: 403.
		r = c.authenticatePAT(*pat.Token)
		check(t, r.Status == 401, "a revoked token: %d, want 401 (Onyx: 403)", r.Status)
		check(t, len(must(c.listPATs(user))(t)) == 0, "the revoked token is not listed")
	}},
	{Name: "pat/test_pat_api.py::test_pat_user_isolation_and_authentication", Run: func(t *testing.T, c client) {
		userA := must(c.createUser("user_a", ""))(t)
		userB := must(c.createUser("user_b", ""))(t)
		var patsA, patsB []onyxDATestPAT
		for i := range 2 {
			patsA = append(patsA, must(c.createPAT(fmt.Sprintf("User A Token %d", i+1), ptr(30), userA, nil))(t))
		}
		for i := range 2 {
			patsB = append(patsB, must(c.createPAT(fmt.Sprintf("User B Token %d", i+1), ptr(30), userB, nil))(t))
		}
		for _, p := range []struct {
			u   daUser
			pat onyxDATestPAT
		}{{userA, patsA[0]}, {userB, patsB[0]}} {
			r := c.authenticatePAT(*p.pat.Token)
			check(t, r.Status == 200, "authenticate: %d", r.Status)
			me := must(keys(r, "email", "id"))(t)
			check(t, string(me["email"]) == fmt.Sprintf("%q", p.u.Email) && string(me["id"]) == fmt.Sprintf("%q", p.u.ID), "GET /me: %s", r.Body)
		}
		check(t, len(must(c.listPATs(userA))(t)) == 2, "user A's tokens")
		check(t, len(must(c.listPATs(userB))(t)) == 2, "user B's tokens")
		// User A's token cannot delete user B's token.
		path := fmt.Sprint("/user/pats/", patsB[0].ID)
		r := c.tg.Do(User{Token: *patsA[0].Token}, "DELETE", path, nil)
		check(t, r.Status == 404, "DELETE %s with A's token: %d", path, r.Status)
		check(t, len(must(c.listPATs(userB))(t)) == 2, "user B's tokens are kept")
		r = c.tg.Do(userA.caller(), "DELETE", "/user/pats/999999", nil)
		check(t, r.Status == 404, "deleting a token that does not exist: %d", r.Status)
	}},
	{Name: "pat/test_pat_api.py::test_pat_expiration_flow", Run: func(t *testing.T, c client) {
		user := must(c.createUser("expiration_user", ""))(t)
		pat := must(c.createPAT("Expiring Token", ptr(7), user, nil))(t)
		check(t, pat.ExpiresAt != nil, "expires_at")
		expires, err := time.Parse(time.RFC3339Nano, strings.Replace(*pat.ExpiresAt, "Z", "+00:00", 1))
		check(t, err == nil, "expires_at %q: %v", *pat.ExpiresAt, err)
		check(t, expires.Hour() == 23 && expires.Minute() == 59 && expires.Second() == 59, "end of day: %s", expires)
		// Onyx compares with its wall clock; the server's clock is the
		// store's (fixed in tests).
		now := c.now()
		y, m, d := now.AddDate(0, 0, 7).Date()
		expected := time.Date(y, m, d, 23, 59, 59, 999999000, time.UTC)
		check(t, expires.Sub(expected).Abs() < 24*time.Hour, "expires %s, expected about %s", expires, expected)

		never := must(c.createPAT("Never Expiring Token", nil, user, nil))(t)
		check(t, never.ExpiresAt == nil, "a token that never expires: %v", never.ExpiresAt)
		r := c.authenticatePAT(*never.Token)
		check(t, r.Status == 200, "authenticate: %d", r.Status)
		ok(t, c.revokePAT(never.ID, user))
		r = c.authenticatePAT(*never.Token)
		check(t, r.Status == 401, "a revoked token: %d, want 401 (Onyx: 403)", r.Status)
	}},
	{Name: "pat/test_pat_api.py::test_pat_validation_errors", Run: func(t *testing.T, c client) {
		user := must(c.createUser("validation_user", ""))(t)
		for _, b := range []map[string]any{
			{"name": "", "expiration_days": 30},
			{"name": strings.Repeat("a", 101), "expiration_days": 30},
			{"name": "Test Token", "expiration_days": -1},
			{"name": "Test Token", "expiration_days": 0},
			{"expiration_days": 30},
		} {
			r := c.tg.Do(user.caller(), "POST", "/user/pats", b)
			check(t, r.Status == 422, "POST /user/pats %v: %d %s", b, r.Status, clip(r.Body))
		}
		valid := must(c.createPAT(strings.Repeat("a", 100), ptr(7), user, nil))(t)
		check(t, valid.ID != 0, "a name of 100 characters")
	}},
	{Name: "pat/test_pat_api.py::test_pat_sorting_and_last_used", Run: func(t *testing.T, c client) {
		user := must(c.createUser("sorting_user", ""))(t)
		// Onyx sleeps 0.1 s between the three; the order holds for tokens
		// made in the same microsecond too (newest first, then by id).
		token1 := must(c.createPAT("First Token", ptr(30), user, nil))(t)
		must(c.createPAT("Second Token", ptr(30), user, nil))(t)
		must(c.createPAT("Third Token", ptr(30), user, nil))(t)
		tokens := must(c.listPATs(user))(t)
		check(t, len(tokens) == 3 && tokens[0].Name == "Third Token" && tokens[1].Name == "Second Token" && tokens[2].Name == "First Token",
			"newest first: %+v", tokens)
		for _, tk := range tokens {
			check(t, tk.LastUsedAt == nil, "%s used before its first use", tk.Name)
		}
		r := c.authenticatePAT(*token1.Token)
		check(t, r.Status == 200, "authenticate: %d", r.Status)
		after := must(c.listPATs(user))(t)
		for _, tk := range after {
			check(t, (tk.LastUsedAt != nil) == (tk.Name == "First Token"), "%s: last_used_at %v", tk.Name, tk.LastUsedAt)
		}
	}},
	{Name: "pat/test_pat_api.py::test_pat_role_based_access_control", Run: func(t *testing.T, c client) {
		adminUser := must(c.createUser("admin_user", ""))(t)
		check(t, adminUser.Role == "admin", "the first person is an admin")
		basicUser := must(c.createUser("basic_user", ""))(t)
		check(t, basicUser.Role == "basic", "basic")
		curatorUser := must(c.createUser("curator_user", ""))(t)
		curatorUser = must(c.setRole(curatorUser, "curator", adminUser, true))(t)
		globalCurator := must(c.createUser("global_curator_user", ""))(t)
		globalCurator = must(c.setRole(globalCurator, "global_curator", adminUser, true))(t)
		adminPAT := must(c.createPAT("Admin Token", ptr(7), adminUser, nil))(t)
		basicPAT := must(c.createPAT("Basic Token", ptr(7), basicUser, nil))(t)
		curatorPAT := must(c.createPAT("Curator Token", ptr(7), curatorUser, nil))(t)
		globalPAT := must(c.createPAT("Global Curator Token", ptr(7), globalCurator, nil))(t)
		get := func(pat onyxDATestPAT, path string) int {
			return c.tg.Do(User{Token: *pat.Token}, "GET", path, nil).Status
		}

		check(t, get(adminPAT, "/admin/api-key") == 200, "the admin's token on /admin/api-key")
		for _, p := range []onyxDATestPAT{basicPAT, curatorPAT, globalPAT} {
			check(t, get(p, "/admin/api-key") == 403, "%s on /admin/api-key", p.Name)
		}
		for _, p := range []onyxDATestPAT{adminPAT, curatorPAT, globalPAT} {
			check(t, get(p, "/manage/admin/connector") == 200, "%s on /manage/admin/connector", p.Name)
		}
		s := get(basicPAT, "/manage/admin/connector")
		check(t, s == 403 || s == 401, "the basic token on /manage/admin/connector: %d", s)
		for _, p := range []struct {
			pat  onyxDATestPAT
			user daUser
			role string
		}{{adminPAT, adminUser, "admin"}, {basicPAT, basicUser, "basic"}, {curatorPAT, curatorUser, "curator"}, {globalPAT, globalCurator, "global_curator"}} {
			r := c.authenticatePAT(*p.pat.Token)
			me := must(keys(r, "email", "role"))(t)
			check(t, r.Status == 200 && string(me["email"]) == fmt.Sprintf("%q", p.user.Email) && string(me["role"]) == fmt.Sprintf("%q", p.role),
				"GET /me with %s: %s", p.pat.Name, r.Body)
		}
		for _, p := range []onyxDATestPAT{adminPAT, basicPAT, curatorPAT, globalPAT} {
			check(t, get(p, "/persona") == 200, "%s on /persona", p.Name)
		}
	}},
	{Name: "permissions/test_pat_scope_assignment.py::test_selectable_scopes_endpoint", Run: func(t *testing.T, c client) {
		basic := patBasicUser(t, c)
		options := must(c.selectableScopes(basic))(t)
		var scopes []string
		for _, o := range options {
			scopes = append(scopes, fmt.Sprint(o["scope"]))
			check(t, o["label"] != "" && o["label"] != nil && o["description"] != "" && o["description"] != nil, "label and description: %v", o)
		}
		// Onyx offers exactly its four; Quarry offers them and basic (the
		// scope of its own routes of people), and no admin scope either.
		slices.Sort(scopes)
		check(t, slices.Equal(scopes, []string{"basic", "read:chat", "read:search", "use:llm_gateway", "write:chat"}), "scopes offered: %v", scopes)
	}},
	{Name: "permissions/test_pat_scope_assignment.py::test_scope_implications", Run: func(t *testing.T, c client) {
		basic := patBasicUser(t, c)
		by := map[string]map[string]any{}
		for _, o := range must(c.selectableScopes(basic))(t) {
			by[fmt.Sprint(o["scope"])] = o
		}
		implies := func(s string) string { return fmt.Sprint(by[s]["implies"]) }
		check(t, implies("write:chat") == "[read:chat]", "write:chat implies %s", implies("write:chat"))
		for _, s := range []string{"read:chat", "read:search", "use:llm_gateway"} {
			check(t, implies(s) == "[]", "%s implies %s", s, implies(s))
		}
	}},
	{Name: "permissions/test_pat_scope_assignment.py::test_scopes_round_trip", Run: func(t *testing.T, c client) {
		basic := patBasicUser(t, c)
		created := must(c.createPAT("scoped-token", nil, basic, []string{"read:search", "read:chat"}))(t)
		want := []string{"read:chat", "read:search"}
		check(t, created.Scopes != nil && sameSet(*created.Scopes, want), "created with %v", created.Scopes)
		for _, p := range must(c.listPATs(basic))(t) {
			if p.ID == created.ID {
				check(t, p.Scopes != nil && sameSet(*p.Scopes, want), "listed with %v", p.Scopes)
			}
		}
	}},
	{Name: "permissions/test_pat_scope_assignment.py::test_unscoped_token_is_unrestricted", Run: func(t *testing.T, c client) {
		created := must(c.createPAT("full-token", nil, patBasicUser(t, c), nil))(t)
		check(t, created.Scopes == nil, "scopes %v", created.Scopes)
	}},
	{Name: "permissions/test_pat_scope_assignment.py::test_empty_scopes_rejected", Run: func(t *testing.T, c client) {
		r := c.createPATResponse("empty-token", nil, patBasicUser(t, c), []string{})
		check(t, r.Status == 400 && string(must(keys(r, "error_code"))(t)["error_code"]) == `"INVALID_INPUT"`, "empty scopes: %d %s", r.Status, clip(r.Body))
	}},
	{Name: "permissions/test_pat_scope_assignment.py::test_non_selectable_scope_rejected", Run: func(t *testing.T, c client) {
		r := c.createPATResponse("admin-token", nil, patBasicUser(t, c), []string{"read:admin"})
		check(t, r.Status == 400 && string(must(keys(r, "error_code"))(t)["error_code"]) == `"INVALID_INPUT"`, "read:admin: %d %s", r.Status, clip(r.Body))
	}},
}

// patBasicUser is permissions/conftest.py's permission_basic_user: the
// second person to register (basic), after permission_admin_user.
func patBasicUser(t *testing.T, c client) daUser {
	t.Helper()
	must(c.createUser("perm_admin", ""))(t)
	return must(c.createUser("perm_basic", ""))(t)
}

// now is the server's clock: the store's.
func (c client) now() time.Time {
	if c.tg.DB != nil && c.tg.DB.Now != nil {
		return c.tg.DB.Now()
	}
	return time.Now()
}

func ptr[T any](v T) *T { return &v }
