package api_test

import (
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
