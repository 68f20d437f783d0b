package api_test

import (
	"testing"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api"
	"github.com/quarryhq/quarry/api/onyxtest"
	"github.com/quarryhq/quarry/internal/llmtest"
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
// connectors, credentials, cc-pairs, user groups, permissions, API keys,
// users, model providers and the chat (package onyxtest, integration.go),
// each against a fresh server: local accounts on, registration open, and,
// as after Onyx's reset, no person and no API key. Onyx does not throttle
// registrations, and test_user_pagination registers 50 people from one
// address: the servers allow 100 per window. The chat's model is the
// scripted Chat Completions server (internal/llmtest) on loopback, and
// the server is in the chat's test mode (Onyx's INTEGRATION_TESTS_MODE).
func TestOnyxIntegration(t *testing.T) {
	onyxtest.RunIntegration(t, func(t *testing.T) onyxtest.Target {
		model := llmtest.New(t)
		e := newKeylessEnv(t, withLocalAccounts, withRegistrations(100), allowLoopback, func(c *api.Config) { c.Chat.TestMode = true })
		return onyxtest.Target{
			Do: func(u onyxtest.User, method, path string, body any, headers ...string) *onyxtest.Response {
				e.t.Helper()
				r := e.do(user{token: u.Token, cookie: u.Cookie, id: u.ID, email: u.Email}, method, path, body, headers...)
				return &onyxtest.Response{Status: r.status, Header: r.header, Body: r.body}
			},
			DB:        e.db,
			ModelBase: model.BaseURL(),
		}
	})
}

// withRegistrations allows n registrations per address in a window of the
// default sign-in limits.
func withRegistrations(n int) func(*api.Config) {
	return func(c *api.Config) {
		c.SignIn.Limits = quarry.DefaultSignInLimits()
		c.SignIn.Limits.Registrations = n
	}
}
