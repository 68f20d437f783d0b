package outbound_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/index"
	"github.com/quarryhq/quarry/outbound/connector"
)

// syncSource is a source whose documents, access and groups a test
// changes: its connector (syncConnector) loads the documents and
// implements both syncers.
type syncSource struct {
	mu     sync.Mutex
	access map[string]quarry.ExternalAccess // By document id: the documents.
	groups map[string][]string              // By group id: the members' emails.
}

// set replaces the source's access and groups.
func (s *syncSource) set(access map[string]quarry.ExternalAccess, groups map[string][]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.access, s.groups = access, groups
}

// syncConnector is the connector of a syncSource; with syncs false it
// implements neither syncer.
type syncConnector struct{ src *syncSource }

// Load emits every document with its access.
func (c *syncConnector) Load(ctx context.Context, out connector.Emitter) error {
	c.src.mu.Lock()
	ids := slices.Sorted(func(yield func(string) bool) {
		for id := range c.src.access {
			if !yield(id) {
				return
			}
		}
	})
	access := c.src.access
	c.src.mu.Unlock()
	for _, id := range ids {
		a := access[id]
		if err := out.Document(ctx, &quarry.Document{ID: id, SemanticIdentifier: "Quartz " + id, Source: "github",
			Sections: []quarry.Section{{Text: "quartz"}}, Metadata: map[string]any{}, ExternalAccess: &a}); err != nil {
			return err
		}
	}
	return nil
}

// syncingConnector is a syncConnector that implements both syncers.
type syncingConnector struct{ syncConnector }

// Groups lists the source's groups.
func (c *syncingConnector) Groups(ctx context.Context, group func(ctx context.Context, g *quarry.ExternalGroup) error) error {
	c.src.mu.Lock()
	groups := c.src.groups
	c.src.mu.Unlock()
	for id, members := range groups {
		if err := group(ctx, &quarry.ExternalGroup{ID: id, UserEmails: members}); err != nil {
			return err
		}
	}
	return nil
}

// Permissions lists every document's access.
func (c *syncingConnector) Permissions(ctx context.Context, access func(ctx context.Context, id string, a *quarry.ExternalAccess) error) error {
	c.src.mu.Lock()
	all := c.src.access
	c.src.mu.Unlock()
	for id, a := range all {
		if err := access(ctx, id, &a); err != nil {
			return err
		}
	}
	return nil
}

// TestPermissionSyncThroughWorker runs both syncs of a sync pair end to
// end with a worker registered over HTTP, through the worker protocol,
// with a connector registered for the test that implements both syncers:
// the scheduler makes them after the pair's first indexing, the source's
// groups (one of 2,501 members, split across entries and reports) and
// access reach search, and a change at the source is what search sees
// after the next syncs, asked for through Onyx's routes. A source whose
// connector has no syncer ends its sync failed, saying why, on the pair's
// page. Both databases.
func TestPermissionSyncThroughWorker(t *testing.T) {
	w := newWorld(t)
	src := &syncSource{}
	w.connectors = connector.NewRegistry()
	w.connectors.Register("github", func(_, _ json.RawMessage, _ *connector.Env) (connector.Connector, error) {
		return connector.Loaded(&syncingConnector{syncConnector{src}}), nil
	})
	w.connectors.Register("confluence", func(_, _ json.RawMessage, _ *connector.Env) (connector.Connector, error) {
		return connector.Loaded(&syncConnector{src}), nil
	})
	ctx := context.Background()
	// person signs in with a provider that says their email is verified:
	// synced access reaches only proven emails.
	person := func(name string) *quarry.Caller {
		c, err := w.db.IdentityCaller(ctx, &quarry.Identity{Issuer: "https://idp.example", Subject: name,
			Email: name + "@corp.example", EmailVerified: true, Role: quarry.RoleBasic})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	ann, bob := person("ann"), person("bob")
	many := make([]string, 2500)
	for i := range many {
		many[i] = fmt.Sprintf("someone%d@example.com", i)
	}
	src.set(map[string]quarry.ExternalAccess{
		"team-doc": {ExternalUserGroupIDs: []string{"eng"}},
		"mail-doc": {ExternalUserEmails: []string{ann.Email, bob.Email}},
	}, map[string][]string{"eng": append(slices.Clone(many), strings.ToUpper(ann.Email))})
	syncPair := func(source string) int64 {
		var id struct {
			ID   int64 `json:"id"`
			Data int64 `json:"data"`
		}
		w.do("POST", "/manage/admin/connector", map[string]any{"name": source, "source": source, "input_type": "load_state",
			"connector_specific_config": map[string]any{}, "access_type": "sync"}, &id)
		conn := id.ID
		id.ID = 0
		w.do("POST", "/manage/credential", map[string]any{"credential_json": map[string]string{"token": secretValue},
			"admin_public": true, "source": source}, &id)
		cred := id.ID
		id.ID = 0
		w.do("PUT", fmt.Sprintf("/manage/connector/%d/credential/%d", conn, cred),
			map[string]any{"name": source, "access_type": "sync", "groups": []int64{}}, &id)
		return id.Data
	}
	p := syncPair("github")
	w.registeredWorker()
	found := func(c *quarry.Caller) []string {
		t.Helper()
		hits, err := w.db.Search(ctx, c, index.ParseQuery("quartz"), quarry.SearchFilters{}, 10)
		if err != nil {
			t.Fatal(err)
		}
		ids := []string{}
		for _, h := range hits {
			ids = append(ids, h.DocumentID)
		}
		slices.Sort(ids)
		return ids
	}
	// synced waits until both GETs of pair p answer a time other than
	// before (by kind), running the scheduler meanwhile.
	synced := func(before map[string]string) map[string]string {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			w.schedule()
			now := map[string]string{}
			for _, k := range []string{"sync-permissions", "sync-groups"} {
				code, body := w.call("GET", fmt.Sprintf("/manage/admin/cc-pair/%d/%s", p, k), nil)
				if code != 200 {
					t.Fatalf("GET %s: %d %s", k, code, body)
				}
				now[k] = body
			}
			if now["sync-permissions"] != before["sync-permissions"] && now["sync-groups"] != before["sync-groups"] {
				return now
			}
			if time.Now().After(deadline) {
				t.Fatalf("not synced: %v; log:\n%s", now, w.log.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	last := synced(map[string]string{"sync-permissions": "null", "sync-groups": "null"})
	if got := found(ann); !slices.Equal(got, []string{"mail-doc", "team-doc"}) {
		t.Errorf("ann finds %v after the first syncs", got)
	}
	if got := found(bob); !slices.Equal(got, []string{"mail-doc"}) {
		t.Errorf("bob finds %v after the first syncs", got)
	}

	// The source changes: bob joins eng and ann leaves it; mail-doc is
	// ann's only. Nothing changes until the next syncs.
	src.set(map[string]quarry.ExternalAccess{
		"team-doc": {ExternalUserGroupIDs: []string{"eng"}},
		"mail-doc": {ExternalUserEmails: []string{ann.Email}},
	}, map[string][]string{"eng": append(slices.Clone(many), bob.Email)})
	if got := found(bob); !slices.Equal(got, []string{"mail-doc"}) {
		t.Errorf("bob finds %v before the next syncs", got)
	}
	time.Sleep(2 * time.Millisecond) // The syncs' times differ from the first ones'.
	for _, k := range []string{"sync-permissions", "sync-groups"} {
		if code, body := w.call("POST", fmt.Sprintf("/manage/admin/cc-pair/%d/%s", p, k), nil); code != 200 {
			t.Fatalf("POST %s: %d %s", k, code, body)
		}
	}
	synced(last)
	if got := found(ann); !slices.Equal(got, []string{"mail-doc"}) {
		t.Errorf("ann finds %v after the next syncs", got)
	}
	if got := found(bob); !slices.Equal(got, []string{"team-doc"}) {
		t.Errorf("bob finds %v after the next syncs", got)
	}

	t.Run("a connector without a syncer says why", func(t *testing.T) {
		q := syncPair("confluence")
		deadline := time.Now().Add(20 * time.Second)
		var page struct {
			Status *string `json:"last_permission_sync_attempt_status"`
			Error  *string `json:"last_permission_sync_attempt_error_message"`
		}
		for {
			w.schedule()
			w.do("GET", fmt.Sprintf("/manage/admin/cc-pair/%d", q), nil, &page)
			if page.Status != nil && *page.Status == "failed" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no failed permission sync; log:\n%s", w.log.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
		want := "The confluence connector cannot list its documents' permissions, so its cc-pairs' permissions cannot be synced"
		if page.Error == nil || *page.Error != want {
			t.Errorf("error %q, want %q", deref(page.Error), want)
		}
	})
}

// test_permission_sync_attempt_status_success and the last assertion of
// test_mock_connector_initial_permission_sync
// (indexing/test_initial_permission_sync.py): a sync pair of the mock
// connector is indexed, CCPairManager.sync asks for both syncs (a 409
// passes), wait_for_sync waits until GET …/sync-permissions says a time
// after the ask, and the pair's newest permission sync succeeded
// (Onyx's DocPermissionSyncAttempt, which Quarry answers on the pair's
// page) and its last_full_permission_sync is set. The mock connector's
// permission sync lists nothing, as Onyx's mock_doc_sync.
func TestMockConnectorPermissionSyncSuccess(t *testing.T) {
	w := newWorld(t)
	w.inProcessWorker()
	w.mockCall("POST", "/set-behavior", []any{map[string]any{
		"documents": []any{testDocument("test-doc-1")}, "checkpoint": checkpoint(false, nil), "failures": []any{}}}, nil)
	_, _, pair := w.pairOf("mock_connector", nil, "sync")
	w.schedule()
	if a := w.waitAttempt(pair, 1, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed); a.Status != quarry.IndexSuccess {
		t.Fatalf("indexing %s (%v)", a.Status, a.ErrorMsg)
	}
	before := time.Now().UTC()
	for _, k := range []string{"sync-permissions", "sync-groups"} {
		if code, body := w.call("POST", fmt.Sprintf("/manage/admin/cc-pair/%d/%s", pair, k), nil); code != 200 && code != 409 {
			t.Fatalf("POST %s: %d %s", k, code, body)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		w.schedule()
		code, body := w.call("GET", fmt.Sprintf("/manage/admin/cc-pair/%d/sync-permissions", pair), nil)
		if code != 200 {
			t.Fatalf("GET sync-permissions: %d %s", code, body)
		}
		var last *time.Time
		if err := json.Unmarshal([]byte(body), &last); err != nil {
			t.Fatal(err)
		}
		if last != nil && last.After(before) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no permission sync after %s; log:\n%s", before, w.log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	var page struct {
		Status *string `json:"last_permission_sync_attempt_status"`
		Full   *string `json:"last_full_permission_sync"`
	}
	w.do("GET", fmt.Sprintf("/manage/admin/cc-pair/%d", pair), nil, &page)
	if deref(page.Status) != "success" || page.Full == nil {
		t.Errorf("the newest permission sync %s, last_full_permission_sync %s; want success and a time", deref(page.Status), deref(page.Full))
	}
}
