package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry/api/onyxtest"
	"github.com/quarryhq/quarry/internal/llmtest"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/storetest"
)

// TestServeOnyxManagers replays Onyx's own admin clients (package
// onyxtest, which api's TestOnyxManagers runs against the handler) against
// a quarry serve process, on SQLite and, when QUARRY_TEST_POSTGRES_URL is
// set, on PostgreSQL. Registration is open, as in Onyx, so that the first
// person to register is the admin that Onyx's managers act as; the test's
// own admin key, made with the CLI before the server starts, reads the
// secrets kept in the database and the audit log.
func TestServeOnyxManagers(t *testing.T) {
	url := storetest.URL(t)
	key := store.NewKey()
	vars := map[string]string{
		"QUARRY_DATABASE_URL":   url,
		"QUARRY_ENCRYPTION_KEY": key,
		"QUARRY_LOCAL_ACCOUNTS": "true",
		"QUARRY_REGISTRATION":   "open",
	}
	token := procAPIKey(t, vars)
	srv := startServe(t, vars)
	db := openWithKeys(t, url, key)
	client := &http.Client{Timeout: 20 * time.Second}
	t.Cleanup(client.CloseIdleConnections)
	onyxtest.Run(t, onyxtest.Target{
		Do:    onyxtest.Send(t, srv.base, client),
		DB:    db,
		Admin: onyxtest.User{Token: token},
	})
	select {
	case <-srv.exited:
		t.Fatalf("quarry serve exited during the replay:\n%s", srv.stderr.String())
	default:
	}
	for _, secret := range []string{"TestPassword123!", "file-store-token-0123456789", "tool-secret-0123456789", token} {
		if strings.Contains(srv.stderr.String()+srv.stdout.String(), secret) {
			t.Errorf("the server's log holds a secret the replay sent: %q", secret)
		}
	}
}

// TestServeOnyxIntegration replays Onyx v4.6.1's own integration tests of
// connectors, credentials, cc-pairs, user groups, permissions, API keys,
// users, model providers and the chat (package onyxtest; api's
// TestOnyxIntegration runs them against the handler), each against a
// quarry serve process of its own on a new database, SQLite and, when
// QUARRY_TEST_POSTGRES_URL is set, PostgreSQL; the chat's model is the
// scripted server on loopback, and the process runs in the chat's test
// mode (QUARRY_CHAT_TEST_MODE, which the mock replays need).
// As after Onyx's reset, there is no person and no API key: the database
// is migrated and marked bootstrapped first (as one whose bootstrap key
// was revoked), so that the server makes none. Registration is open, and
// test_user_pagination registers 50 people from one address: the server
// allows 100 (QUARRY_REGISTRATIONS_PER_ADDRESS).
func TestServeOnyxIntegration(t *testing.T) {
	onyxtest.RunIntegration(t, func(t *testing.T) onyxtest.Target {
		url, key := storetest.URL(t), store.NewKey()
		vars := map[string]string{
			"QUARRY_DATABASE_URL":              url,
			"QUARRY_ENCRYPTION_KEY":            key,
			"QUARRY_LOCAL_ACCOUNTS":            "true",
			"QUARRY_REGISTRATION":              "open",
			"QUARRY_REGISTRATIONS_PER_ADDRESS": "100",
			// The chat's model is the scripted server on loopback, and
			// the chat's replays need its test mode (mock_llm_response).
			"QUARRY_CHAT_TEST_MODE":    "true",
			"QUARRY_TOOL_EGRESS_ALLOW": "127.0.0.1",
		}
		model := llmtest.New(t)
		procCommand(t, vars, "migrate")
		if _, err := procSQL(t, url).Exec(`INSERT INTO settings (name, value) VALUES ('bootstrapped', 'by the test')`); err != nil {
			t.Fatal(err)
		}
		srv := startServe(t, vars)
		client := &http.Client{Timeout: 20 * time.Second}
		t.Cleanup(client.CloseIdleConnections)
		t.Cleanup(func() {
			select {
			case <-srv.exited:
				t.Errorf("quarry serve exited during the replay:\n%s", srv.stderr.String())
			default:
			}
		})
		// The database, for what a replay reads there (tags' rows, as Onyx's
		// tests read its tables).
		return onyxtest.Target{Do: onyxtest.Send(t, srv.base, client), ModelBase: model.BaseURL(), DB: openWithKeys(t, url, key)}
	})
}
