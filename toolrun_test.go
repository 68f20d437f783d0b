package quarry_test

import (
	"errors"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
)

func TestCheckToolRun(t *testing.T) {
	builtIn := "SearchTool"
	custom := &quarry.Tool{ID: 3, Enabled: true}
	for _, tt := range []struct {
		name string
		role quarry.Role
		tool *quarry.Tool
		code string
	}{
		{"admin", quarry.RoleAdmin, custom, ""},
		{"curator, not the owner", quarry.RoleCurator, custom, ""},
		{"global curator", quarry.RoleGlobalCurator, custom, ""},
		{"basic", quarry.RoleBasic, custom, ""},
		{"limited", quarry.RoleLimited, custom, quarry.EFORBIDDEN},
		{"limited, disabled tool", quarry.RoleLimited, &quarry.Tool{ID: 3}, quarry.EFORBIDDEN},
		{"built-in", quarry.RoleAdmin, &quarry.Tool{ID: 1, InCodeToolID: &builtIn, Enabled: true}, quarry.EINVALID},
		{"built-in and disabled", quarry.RoleAdmin, &quarry.Tool{ID: 1, InCodeToolID: &builtIn}, quarry.EINVALID},
		{"disabled", quarry.RoleAdmin, &quarry.Tool{ID: 3}, quarry.ECONFLICT},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := &quarry.Caller{User: quarry.User{ID: "u", Role: tt.role}}
			if got := quarry.ErrorCode(c.CheckToolRun(tt.tool)); got != tt.code {
				t.Errorf("CheckToolRun = %q, want %q", got, tt.code)
			}
		})
	}
}

func TestRunAuth(t *testing.T) {
	id := int64(4)
	for _, tt := range []struct {
		name string
		tool quarry.Tool
		want quarry.ToolAuth
	}{
		{"headers only", quarry.Tool{}, quarry.ToolAuthHeaders},
		{"OAuth", quarry.Tool{OAuthConfigID: &id}, quarry.ToolAuthOAuth},
		{"passthrough", quarry.Tool{PassthroughAuth: true}, quarry.ToolAuthPassthrough},
		{"both: OAuth wins, as in Onyx", quarry.Tool{OAuthConfigID: &id, PassthroughAuth: true}, quarry.ToolAuthOAuth},
		{"headers with Authorization", quarry.Tool{Headers: []quarry.Header{{Key: "Authorization", Value: "Basic x"}}}, quarry.ToolAuthHeaders},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.tool.RunAuth(); got != tt.want {
				t.Errorf("RunAuth = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestTokenStep(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name    string
		tok     quarry.OAuthToken
		step    quarry.TokenStep
		expired bool
	}{
		{"no expiry", quarry.OAuthToken{AccessToken: "a"}, quarry.TokenUse, false},
		{"no expiry, refreshable", quarry.OAuthToken{AccessToken: "a", RefreshToken: "r"}, quarry.TokenUse, false},
		{"an hour to live", quarry.OAuthToken{AccessToken: "a", Expiry: now.Add(time.Hour)}, quarry.TokenUse, false},
		{"61 s to live", quarry.OAuthToken{AccessToken: "a", Expiry: now.Add(61 * time.Second)}, quarry.TokenUse, false},
		{"60 s to live, refreshable", quarry.OAuthToken{AccessToken: "a", RefreshToken: "r", Expiry: now.Add(60 * time.Second)}, quarry.TokenRefresh, true},
		{"60 s to live, not refreshable", quarry.OAuthToken{AccessToken: "a", Expiry: now.Add(60 * time.Second)}, quarry.TokenReconnect, true},
		{"expires now", quarry.OAuthToken{AccessToken: "a", RefreshToken: "r", Expiry: now}, quarry.TokenRefresh, true},
		{"expired, refreshable", quarry.OAuthToken{AccessToken: "a", RefreshToken: "r", Expiry: now.Add(-time.Hour)}, quarry.TokenRefresh, true},
		{"expired, not refreshable", quarry.OAuthToken{AccessToken: "a", Expiry: now.Add(-time.Hour)}, quarry.TokenReconnect, true},
		{"no access token, refreshable", quarry.OAuthToken{RefreshToken: "r"}, quarry.TokenRefresh, false},
		{"nothing", quarry.OAuthToken{}, quarry.TokenReconnect, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.tok.Step(now); got != tt.step {
				t.Errorf("Step = %d, want %d", got, tt.step)
			}
			if got := tt.tok.Expired(now); got != tt.expired {
				t.Errorf("Expired = %t, want %t", got, tt.expired)
			}
		})
	}
}

func TestTokenRefreshed(t *testing.T) {
	old := quarry.OAuthToken{AccessToken: "a1", RefreshToken: "r1"}
	for _, tt := range []struct {
		name string
		next quarry.OAuthToken
		want string
	}{
		{"a new refresh token replaces the old", quarry.OAuthToken{AccessToken: "a2", RefreshToken: "r2"}, "r2"},
		{"none sent keeps the old", quarry.OAuthToken{AccessToken: "a2"}, "r1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := old.Refreshed(tt.next)
			if got.RefreshToken != tt.want || got.AccessToken != "a2" {
				t.Errorf("Refreshed = %+v, want refresh token %q and access token a2", got, tt.want)
			}
		})
	}
}

func TestCheckReturnPath(t *testing.T) {
	for _, tt := range []struct {
		path string
		ok   bool
	}{
		{"/", true},
		{"/#tool/3", true},
		{"/?view=tools#tool/3", true},
		{"/api/", true},
		{"", false},
		{"chat", false},
		{"//evil.example.com/", false},
		{"/\\evil.example.com", false},
		{"https://evil.example.com/", false},
		{"javascript:alert(1)", false},
		{"/\r\nSet-Cookie: x=1", false},
		{"/\x00", false},
		{"/\t", false},
		{"/\xff", false},
		{"/" + string(make([]byte, 1024)), false},
	} {
		t.Run(tt.path, func(t *testing.T) {
			err := quarry.CheckReturnPath(tt.path)
			if (err == nil) != tt.ok {
				t.Errorf("CheckReturnPath(%q) = %v, want ok %t", tt.path, err, tt.ok)
			}
			if err != nil && quarry.ErrorCode(err) != quarry.EINVALID {
				t.Errorf("code %q, want %q", quarry.ErrorCode(err), quarry.EINVALID)
			}
		})
	}
}

func TestRunOutcome(t *testing.T) {
	for _, tt := range []struct {
		status int
		err    error
		want   string
	}{
		{200, nil, quarry.RunOK},
		{302, nil, quarry.RunOK},
		{404, nil, quarry.RunUpstream4xx},
		{503, nil, quarry.RunUpstream5xx},
		{0, quarry.Errorf(quarry.EINVALID, "bad argument"), quarry.RunInvalid},
		{0, quarry.Errorf(quarry.EFORBIDDEN, "refused"), quarry.RunRefused},
		{0, quarry.Errorf(quarry.EGATEWAYTIMEOUT, "slow"), quarry.RunTimeout},
		{0, quarry.Errorf(quarry.EBADGATEWAY, "down"), quarry.RunUnreachable},
		{0, quarry.Errorf(quarry.ECONFLICT, "connect"), quarry.RunNoToken},
		{0, errors.New("boom"), quarry.RunError},
	} {
		if got := quarry.RunOutcome(tt.status, tt.err); got != tt.want {
			t.Errorf("RunOutcome(%d, %v) = %q, want %q", tt.status, tt.err, got, tt.want)
		}
	}
}
