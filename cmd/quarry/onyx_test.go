package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry/api/onyxtest"
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
