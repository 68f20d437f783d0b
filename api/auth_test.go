package api_test

import (
	"net/http"
	"testing"

	"github.com/quarryhq/quarry"
)

func TestAuthentication(t *testing.T) {
	e := newEnv(t)
	revoked := e.user(quarry.RoleAdmin, "revoked")
	var keys []struct {
		ID     int64  `json:"api_key_id"`
		UserID string `json:"user_id"`
	}
	e.do(e.admin, "GET", "/admin/api-key", nil).decode(t, &keys)
	for _, k := range keys {
		if k.UserID == revoked.id {
			e.do(e.admin, "DELETE", "/admin/api-key/"+itoa(k.ID), nil).want(t, 200, `null`)
		}
	}
	const unauthorized = `{"detail":"Not authenticated"}`
	for _, tt := range []struct {
		name   string
		header string
	}{
		{"no header", ""},
		{"empty bearer", "Bearer "},
		{"wrong scheme", "Basic " + e.admin.token},
		{"no scheme", e.admin.token},
		{"malformed token", "Bearer qry_short"},
		{"unknown token", "Bearer qry_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"},
		{"revoked token", "Bearer " + revoked.token},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, req := range []struct{ method, path, body string }{
				{"GET", "/manage/admin/connector/status", ""},
				{"PUT", "/admin/tool/custom/abc", `not json`},
				{"PATCH", "/manage/credential/1", `{"name": 5}`},
			} {
				var r *response
				if tt.header == "" {
					r = e.do(user{}, req.method, req.path, nilIfEmpty(req.body))
				} else {
					r = e.do(user{}, req.method, req.path, nilIfEmpty(req.body), "Authorization", tt.header)
				}
				r.want(t, http.StatusUnauthorized, unauthorized)
				want := `Bearer error="invalid_token"` // RFC 6750: credentials were sent
				if tt.header == "" {
					want = "Bearer"
				}
				if got := r.header.Get("WWW-Authenticate"); got != want {
					t.Errorf("%s %s: WWW-Authenticate = %q, want %q", req.method, req.path, got, want)
				}
			}
		})
	}
	t.Run("scheme is case-insensitive", func(t *testing.T) {
		e.do(user{}, "GET", "/manage/admin/connector/status", nil, "Authorization", "bEaReR "+e.admin.token).want(t, 200, `[]`)
	})
}

func TestRoleGates(t *testing.T) {
	e := newEnv(t)
	basic, limited := e.user(quarry.RoleBasic, "basic"), e.user(quarry.RoleLimited, "limited")
	curator := e.user(quarry.RoleCurator, "curator")
	const notCurator = `{"detail":"Access denied. User is not a curator or admin."}`
	const limitedBody = `{"detail":"Access denied. User has limited permissions."}`
	for _, tt := range []struct {
		name         string
		u            user
		method, path string
		body         any
		status       int
		want         string
	}{
		{"basic status", basic, "GET", "/manage/admin/connector/status", nil, 403, notCurator},
		{"limited status", limited, "GET", "/manage/admin/connector/status", nil, 403, notCurator},
		{"basic tool", basic, "PUT", "/admin/tool/custom/1", `{}`, 403, notCurator},
		{"limited tool", limited, "PUT", "/admin/tool/custom/1", `{}`, 403, notCurator},
		// The role gate answers before validation: the bad path is not reported.
		{"basic tool bad path", basic, "PUT", "/admin/tool/custom/abc", `{`, 403, notCurator},
		{"limited credential", limited, "PATCH", "/manage/credential/1", `{}`, 403, limitedBody},
		{"limited credential bad path", limited, "PATCH", "/manage/credential/x", `{`, 403, limitedBody},
		{"curator api keys", curator, "GET", "/admin/api-key", nil, 403, `{"detail":"Access denied. User is not an admin."}`},
		{"basic connector create", basic, "POST", "/manage/admin/connector", `{}`, 403, notCurator},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e.do(tt.u, tt.method, tt.path, tt.body).want(t, tt.status, tt.want)
		})
	}
}

func TestNoRoute(t *testing.T) {
	e := newEnv(t)
	e.do(e.admin, "GET", "/nope", nil).want(t, 404, `{"detail":"Not Found"}`)
	r := e.do(e.admin, "POST", "/manage/admin/connector/status", nil)
	r.want(t, 405, `{"detail":"Method Not Allowed"}`)
	if got := r.header.Get("Allow"); got != "GET, PATCH, DELETE" { // PATCH and DELETE match {connector_id}
		t.Errorf("Allow = %q, want GET, PATCH, DELETE", got)
	}
}
