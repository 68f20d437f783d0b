package api

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/store/storetest"
)

// TestStatusCache checks the cache of the status listing on its own: that
// what a caller sees depends only on the memberships it was authenticated
// with, that requests arriving together share one read, and that parts
// that do not fit together make it read the whole listing again rather
// than fail.
func TestStatusCache(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	_, token, _ := db.CreateAPIKey(ctx, nil, nil, quarry.RoleAdmin)
	admin, err := db.Authenticate(ctx, quarry.HashAPIKey(token))
	if err != nil {
		t.Fatal(err)
	}
	name := "g"
	g, err := db.CreateGroup(ctx, admin, quarry.UserGroupInput{Name: &name, UserIDs: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	conn, _ := db.CreateConnector(ctx, admin, quarry.ConnectorInput{Name: "c", Source: "web", InputType: "poll", Config: []byte(`{}`)})
	var pairs []int64
	for _, access := range []quarry.AccessType{quarry.AccessPrivate, quarry.AccessPublic} {
		k, err := db.CreateCredential(ctx, admin, quarry.CredentialInput{Source: "web", CredentialJSON: map[string]any{"token": "secret"}})
		if err != nil {
			t.Fatal(err)
		}
		id, err := db.CreateCCPair(ctx, admin, conn, k.ID, quarry.CCPairInput{Name: "p", AccessType: access, Groups: []int64{g.ID}})
		if err != nil {
			t.Fatal(err)
		}
		pairs = append(pairs, id)
	}

	c := newStatusCache(db, true)
	var wg sync.WaitGroup
	views := make([]*statusView, 8)
	for i := range views {
		wg.Go(func() {
			v, err := c.at(ctx, 1)
			if err != nil {
				t.Error(err)
			}
			views[i] = v
		})
	}
	wg.Wait()
	if n := c.wholeReads.Load(); n != 1 {
		t.Errorf("8 requests at once read the listing %d times, want once", n)
	}
	v := views[0]
	type entry struct {
		ID        int64 `json:"cc_pair_id"`
		Connector struct {
			CredentialIDs []int64 `json:"credential_ids"`
		} `json:"connector"`
		Credential struct {
			CredentialJSON map[string]string `json:"credential_json"`
		} `json:"credential"`
	}
	list := func(v *statusView, c *quarry.Caller) []entry {
		t.Helper()
		rec := httptest.NewRecorder()
		v.write(rec, c, quarry.StatusFilter{})
		var out []entry
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatalf("%v: %s", err, rec.Body)
		}
		if rec.Header().Get("Content-Length") != strconv.Itoa(rec.Body.Len()) {
			t.Errorf("Content-Length %s, body %d bytes", rec.Header().Get("Content-Length"), rec.Body.Len())
		}
		return out
	}
	// The curator is a member of g in the database only after it was
	// authenticated: as authenticated, it sees the public pair alone.
	_, token, _ = db.CreateAPIKey(ctx, admin, nil, quarry.RoleCurator)
	curator, _ := db.Authenticate(ctx, quarry.HashAPIKey(token))
	if _, err := db.UpdateGroup(ctx, admin, g.ID, quarry.UserGroupInput{UserIDs: []string{curator.ID}}); err != nil {
		t.Fatal(err)
	}
	got := list(v, curator)
	if len(got) != 1 || got[0].ID != pairs[1] || len(got[0].Connector.CredentialIDs) != 1 {
		t.Errorf("a curator authenticated without groups sees %+v; want the public pair only, and only its credential", got)
	}
	member := *curator
	member.Memberships = []quarry.Membership{{GroupID: g.ID}}
	if got := list(v, &member); len(got) != 2 || len(got[0].Connector.CredentialIDs) != 2 {
		t.Errorf("a member of the pairs' group sees %+v; want both pairs and both credentials", got)
	}
	if got := list(v, admin); len(got) != 2 || got[0].Credential.CredentialJSON["token"] == "secret" {
		t.Errorf("an admin sees %+v; want both pairs, secrets masked", got)
	}

	// A request whose time runs out while a refresh is under way answers
	// 503, and leaves the refresh be.
	stuck := &statusRefresh{done: make(chan struct{})}
	c.mu.Lock()
	c.inflight = stuck
	c.mu.Unlock()
	short, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	_, err = c.at(short, v.version+1)
	cancel()
	if quarry.ErrorCode(err) != quarry.EUNAVAILABLE {
		t.Errorf("waiting past the request's time: %v, want an unavailable error (503)", err)
	}
	c.mu.Lock()
	if c.inflight != stuck {
		t.Error("a request that stopped waiting ended the refresh")
	}
	c.inflight = nil
	c.mu.Unlock()

	// The connector's part lost (it cannot be, with a whole log), then a
	// change to a credential of one of its pairs: the refresh reads the
	// whole listing again.
	delete(c.conns, conn)
	newName := &name
	if _, err := db.UpdateCredential(ctx, admin, 1, quarry.CredentialUpdate{Name: &newName, KeepEchoes: true}); err != nil {
		t.Fatal(err)
	}
	version, _ := db.DataVersion(ctx)
	v, err = c.at(ctx, version)
	if err != nil {
		t.Fatalf("a refresh whose parts do not fit: %v", err)
	}
	if n := c.wholeReads.Load(); n != 2 || len(list(v, admin)) != 2 {
		t.Errorf("after parts that do not fit: %d whole reads, want 2", n)
	}
}
