package api_test

import (
	"fmt"
	"testing"

	"github.com/quarryhq/quarry/api/onyxtest"
)

// TestOnyxManagers replays Onyx's own admin clients (package onyxtest)
// against the handler, where every exchange is also checked against the
// OpenAPI document and the log for the secrets sent. cmd/quarry's
// TestServeOnyxManagers runs the same replay against a quarry serve
// process.
func TestOnyxManagers(t *testing.T) {
	e := newEnv(t, withLocalAccounts) // Onyx's default: registration is open.
	onyxtest.Run(t, onyxtest.Target{
		Do: func(u onyxtest.User, method, path string, body any, headers ...string) *onyxtest.Response {
			e.t.Helper()
			r := e.do(user{token: u.Token, cookie: u.Cookie, id: u.ID, email: u.Email}, method, path, body, headers...)
			return &onyxtest.Response{Status: r.status, Header: r.header, Body: r.body}
		},
		DB:    e.db,
		Admin: onyxtest.User{Token: e.admin.token, ID: e.admin.id, Email: e.admin.email},
	})
}

// TestOnyxIntegration replays Onyx v4.6.1's own integration tests of
// connectors, credentials, cc-pairs, user groups, permissions, API keys
// and users (package onyxtest, integration.go), each against a fresh
// server: local accounts on, registration open, and, as after Onyx's
// reset, no API key (the test environment's own admin key is revoked
// before the replay starts).
func TestOnyxIntegration(t *testing.T) {
	onyxtest.RunIntegration(t, func(t *testing.T) onyxtest.Target {
		e := newEnv(t, withLocalAccounts)
		var keys []struct {
			ID     int64  `json:"api_key_id"`
			UserID string `json:"user_id"`
		}
		e.do(e.admin, "GET", "/admin/api-key", nil).decode(t, &keys)
		for _, k := range keys {
			e.do(e.admin, "DELETE", fmt.Sprint("/admin/api-key/", k.ID), nil).want(t, 200, `null`)
		}
		return onyxtest.Target{
			Do: func(u onyxtest.User, method, path string, body any, headers ...string) *onyxtest.Response {
				e.t.Helper()
				r := e.do(user{token: u.Token, cookie: u.Cookie, id: u.ID, email: u.Email}, method, path, body, headers...)
				return &onyxtest.Response{Status: r.status, Header: r.header, Body: r.body}
			},
			DB: e.db,
		}
	})
}
