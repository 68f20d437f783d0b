package quarry_test

import (
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
)

// TestLimitTo is the table of what a scoped personal access token opens:
// what its scopes (with what they imply) and its person's rights both
// allow, and a role that gives no more.
func TestLimitTo(t *testing.T) {
	basic := "basic generate:image read:chat read:search use:llm_gateway write:chat"
	for _, tt := range []struct {
		name   string
		role   quarry.Role
		grants []quarry.Permission
		scopes []quarry.Permission
		role2  quarry.Role
		perms  string // sorted, space-separated
	}{
		{"an admin's token scoped to admin keeps everything", quarry.RoleAdmin, nil, []quarry.Permission{quarry.PermAdmin},
			quarry.RoleAdmin, strings.Join(quarry.EffectivePermissions(quarry.RoleAdmin, nil).Sorted(), " ")},
		{"an admin's token scoped to basic acts as basic", quarry.RoleAdmin, nil, []quarry.Permission{quarry.PermBasic},
			quarry.RoleBasic, basic},
		{"an admin's token scoped to manage:actions", quarry.RoleAdmin, nil, []quarry.Permission{quarry.PermManageActions},
			quarry.RoleLimited, "manage:actions"},
		{"an admin's token scoped to read:search opens no route of Quarry's", quarry.RoleAdmin, nil,
			[]quarry.Permission{quarry.PermReadSearch}, quarry.RoleLimited, "read:search"},
		{"a basic person's token scoped to admin opens only what they have", quarry.RoleBasic, nil,
			[]quarry.Permission{quarry.PermAdmin}, quarry.RoleBasic, basic},
		{"a basic person's token scoped to manage:connectors opens nothing more", quarry.RoleBasic, nil,
			[]quarry.Permission{quarry.PermManageConnectors}, quarry.RoleLimited, ""},
		{"a granted permission survives its scope", quarry.RoleBasic, []quarry.Permission{quarry.PermManageConnectors},
			[]quarry.Permission{quarry.PermBasic, quarry.PermManageConnectors}, quarry.RoleBasic,
			"add:connectors basic generate:image manage:connectors read:chat read:connectors read:search use:llm_gateway write:chat"},
		{"a curator's token loses the curator's rights, even scoped to admin", quarry.RoleCurator, nil,
			[]quarry.Permission{quarry.PermAdmin}, quarry.RoleBasic, basic},
		{"a global curator's token scoped to basic", quarry.RoleGlobalCurator, nil, []quarry.Permission{quarry.PermBasic},
			quarry.RoleBasic, basic},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := &quarry.Caller{User: quarry.User{Role: tt.role}}
			c.SetGrants(tt.grants)
			c.LimitTo(tt.scopes)
			if got := strings.Join(c.Permissions().Sorted(), " "); got != tt.perms {
				t.Errorf("permissions\n got %s\nwant %s", got, tt.perms)
			}
			if c.Role != tt.role2 {
				t.Errorf("role %s, want %s", c.Role, tt.role2)
			}
			if len(c.Scopes) != len(tt.scopes) {
				t.Errorf("scopes %v", c.Scopes)
			}
		})
	}
}

// TestCheckMint: nothing that signs in on its own (passwords, invitations,
// keys, sessions, tokens) is made with a personal access token (it would
// outlive it).
func TestCheckMint(t *testing.T) {
	for _, tt := range []struct {
		name string
		c    *quarry.Caller
		want string
	}{
		{"the command line", nil, ""},
		{"an admin signed in", &quarry.Caller{User: quarry.User{Role: quarry.RoleAdmin}, SessionID: 3}, ""},
		{"an admin's API key", &quarry.Caller{User: quarry.User{Role: quarry.RoleAdmin, ServiceAccount: true}, APIKeyID: 4}, ""},
		{"an admin's personal access token", &quarry.Caller{User: quarry.User{Role: quarry.RoleAdmin}, PATID: 5},
			"A personal access token cannot make passwords, invitations, keys, sessions or tokens: sign in to do this"},
		{"a basic person's personal access token", &quarry.Caller{User: quarry.User{Role: quarry.RoleBasic}, PATID: 6},
			"A personal access token cannot make passwords, invitations, keys, sessions or tokens: sign in to do this"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.c.CheckMint()
			got := ""
			if err != nil {
				got = quarry.ErrorMessage(err)
			}
			if got != tt.want || (err != nil && quarry.ErrorCode(err) != quarry.EFORBIDDEN) {
				t.Errorf("CheckMint: %v, want %q (403)", err, tt.want)
			}
		})
	}
}

// TestCheckMakePAT: people make tokens, signed in; keys and tokens do not.
func TestCheckMakePAT(t *testing.T) {
	for _, tt := range []struct {
		name string
		c    quarry.Caller
		want string
	}{
		{"a person with a session", quarry.Caller{User: quarry.User{Role: quarry.RoleBasic}, SessionID: 3}, ""},
		{"a person with the provider's token", quarry.Caller{User: quarry.User{Role: quarry.RoleAdmin}}, ""},
		{"an API key", quarry.Caller{User: quarry.User{Role: quarry.RoleAdmin, ServiceAccount: true}, APIKeyID: 4},
			"API keys cannot make personal access tokens: they are for people"},
		{"a personal access token", quarry.Caller{User: quarry.User{Role: quarry.RoleAdmin}, PATID: 5},
			"A personal access token cannot make passwords, invitations, keys, sessions or tokens: sign in to do this"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.c.CheckMakePAT()
			got := ""
			if err != nil {
				got = quarry.ErrorMessage(err)
			}
			if got != tt.want || (err != nil && quarry.ErrorCode(err) != quarry.EFORBIDDEN) {
				t.Errorf("CheckMakePAT: %v, want %q (403)", err, tt.want)
			}
		})
	}
}

// TestCheckPATScopes: null is the whole of the person's rights; a list
// must name scopes that are offered, at least one (Onyx's words).
func TestCheckPATScopes(t *testing.T) {
	for _, tt := range []struct {
		scopes []quarry.Permission
		want   string
	}{
		{nil, ""},
		{[]quarry.Permission{quarry.PermReadSearch, quarry.PermBasic, quarry.PermWriteChat}, ""},
		// The admin scopes are not offered (issue 31, as Onyx).
		{[]quarry.Permission{quarry.PermBasic, quarry.PermAdmin, quarry.PermManageActions, quarry.PermManageConnectors, quarry.PermManageUserGroups},
			"Unsupported token scope(s): admin, manage:actions, manage:connectors, manage:user_groups"},
		{[]quarry.Permission{}, "A scoped token must include at least one scope."},
		{[]quarry.Permission{quarry.PermBasic, quarry.PermManageLLMs, quarry.PermCraftSandbox}, "Unsupported token scope(s): manage:llms, craft_sandbox"},
	} {
		got := ""
		if err := quarry.CheckPATScopes(tt.scopes); err != nil {
			got = quarry.ErrorMessage(err)
		}
		if got != tt.want {
			t.Errorf("CheckPATScopes(%v) = %q, want %q", tt.scopes, got, tt.want)
		}
	}
}

// TestPATExpiry: the end of the day, UTC, days days after today (Onyx's
// rule); never without days.
func TestPATExpiry(t *testing.T) {
	days := func(n int64) *int64 { return &n }
	for _, tt := range []struct {
		now  time.Time
		days *int64
		want string
	}{
		{time.Date(2026, 11, 21, 8, 30, 0, 0, time.UTC), days(1), "2026-11-22T23:59:59.999999Z"},
		{time.Date(2026, 11, 21, 23, 59, 59, 0, time.UTC), days(30), "2026-12-21T23:59:59.999999Z"},
		// 00:30 in Berlin is still the 20th in UTC.
		{time.Date(2026, 11, 21, 0, 30, 0, 0, time.FixedZone("CET", 3600)), days(7), "2026-11-27T23:59:59.999999Z"},
		{time.Date(2026, 11, 21, 8, 30, 0, 0, time.UTC), nil, "never"},
	} {
		got := "never"
		if e := quarry.PATExpiry(tt.now, tt.days); e != nil {
			got = e.Time.UTC().Format("2006-01-02T15:04:05.999999Z")
		}
		if got != tt.want {
			t.Errorf("PATExpiry(%v, %v) = %s, want %s", tt.now, tt.days, got, tt.want)
		}
	}
}

// TestDisplayPAT: the prefix and four characters, four stars, the last
// four.
func TestDisplayPAT(t *testing.T) {
	token, hash := quarry.NewPAT()
	if !quarry.ValidPATFormat(token) || hash != quarry.HashToken(token) || len(hash) != 64 {
		t.Fatalf("NewPAT: %q %q", token, hash)
	}
	if got, want := quarry.DisplayPAT(token), token[:8]+"****"+token[len(token)-4:]; got != want || !strings.HasPrefix(got, "qrp_") {
		t.Errorf("DisplayPAT = %q, want %q", got, want)
	}
	if quarry.ValidPATFormat("qry_" + token[4:]) {
		t.Error("an API key's shape passes for a token")
	}
}
