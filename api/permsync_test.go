package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api"
)

// TestPermissionSyncRoutes covers Onyx's routes of permission syncing
// through the real server and database: who may call them and the
// refusals, a second request while one waits (409), the syncs the
// scheduler makes, their leases and reports through the worker protocol
// (a report that does not fit the kind is refused), the times the GETs
// answer once each succeeds, and the pair's page's fields of permission
// syncing before, during and after.
func TestPermissionSyncRoutes(t *testing.T) {
	c := newFxCast(t)
	conn := c.connector(c.admin, "repos", "github")
	cred := c.credential(c.admin, "github", fxSecret, "admin_public", true)
	p := c.pair(c.admin, conn, cred, "repos", quarry.AccessSync)
	private := c.pair(c.admin, c.connector(c.admin, "site", "web"), c.credential(c.admin, "web", fxSecret, "admin_public", true),
		"site", quarry.AccessPrivate, c.gA)
	pushed := c.pair(c.admin, c.connector(c.admin, "pushed", "ingestion_api"),
		c.credential(c.admin, "ingestion_api", fxSecret, "admin_public", true), "pushed", quarry.AccessPrivate, c.gA)
	perms, groups := fmt.Sprintf("/manage/admin/cc-pair/%d/sync-permissions", p), fmt.Sprintf("/manage/admin/cc-pair/%d/sync-groups", p)
	sched := c.srv.Config.Handler.(*api.Server)
	var clock time.Duration
	step := func() string {
		clock += time.Second
		at := testNow.Add(clock)
		c.db.Now = func() time.Time { return at }
		return at.Format("2006-01-02T15:04:05.999999Z")
	}
	defer func() { c.db.Now = func() time.Time { return testNow } }()
	type made struct{ Created, Permission, Group int }
	schedule := func(t *testing.T, want made) {
		t.Helper()
		res, err := sched.Schedule(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if got := (made{Created: res.Created, Permission: res.PermissionSyncs, Group: res.GroupSyncs}); got != want {
			t.Fatalf("schedule: %+v, want %+v", got, want)
		}
	}
	type pageFields struct {
		Full     *string `json:"last_full_permission_sync"`
		Status   *string `json:"last_permission_sync_attempt_status"`
		Syncing  bool    `json:"permission_syncing"`
		Finished *string `json:"last_permission_sync_attempt_finished"`
		Error    *string `json:"last_permission_sync_attempt_error_message"`
	}
	page := func(t *testing.T) string {
		t.Helper()
		var f pageFields
		c.do(c.admin, "GET", fmt.Sprintf("/manage/admin/cc-pair/%d", p), nil).decode(t, &f)
		s := func(p *string) string {
			if p == nil {
				return "null"
			}
			return *p
		}
		return fmt.Sprintf("full=%s status=%s syncing=%v finished=%s error=%s", s(f.Full), s(f.Status), f.Syncing, s(f.Finished), s(f.Error))
	}
	var lease struct {
		Attempt struct {
			ID     int64  `json:"attempt_id"`
			CCPair int64  `json:"cc_pair_id"`
			Kind   string `json:"kind"`
		} `json:"attempt"`
	}
	w := c.worker(t, "syncer")
	var ended string // When the pair's group sync ended.
	const (
		permsAsked  = `{"success":true,"message":"Successfully created the permissions sync task.","data":null}`
		groupsAsked = `{"success":true,"message":"Successfully created the external group sync task.","data":null}`
		notFound    = `{"detail":"Connection not found for current user's permissions"}`
		lastUnknown = `{"detail":"cc_pair not found for current user's permissions"}`
		wrongKind   = `{"detail":"A permission sync reports its documents' access and nothing else; a group sync reports groups and nothing else; other attempts report neither"}`
	)

	t.Run("refusals", func(t *testing.T) {
		for _, path := range []string{"sync-permissions", "sync-groups"} {
			c.do(c.admin, "POST", "/manage/admin/cc-pair/999/"+path, nil).want(t, 400, notFound)
			c.do(c.other, "POST", fmt.Sprintf("/manage/admin/cc-pair/%d/%s", private, path), nil).want(t, 400, notFound)
			c.do(c.admin, "GET", "/manage/admin/cc-pair/999/"+path, nil).want(t, 400, lastUnknown)
			c.do(c.other, "GET", fmt.Sprintf("/manage/admin/cc-pair/%d/%s", private, path), nil).want(t, 400, lastUnknown)
			c.do(c.admin, "POST", fmt.Sprintf("/manage/admin/cc-pair/%d/%s", pushed, path), nil).want(t, 400,
				`{"detail":"This cc-pair's documents are pushed through the ingestion API; there is no source to sync their permissions from."}`)
			c.do(c.admin, "POST", "/manage/admin/cc-pair/x/"+path, nil).want(t, 422, `{"detail":[`+fxIntParsing("cc_pair_id", "x")+`]}`)
			for _, m := range []string{"POST", "GET"} {
				c.do(c.basic, m, "/manage/admin/cc-pair/1/"+path, nil).want(t, 403, fxNotCurator)
				c.do(user{}, m, "/manage/admin/cc-pair/1/"+path, nil).want(t, 401, fxNotAuthed)
			}
		}
		c.do(c.curator, "GET", perms, nil).want(t, 200, `null`)
		c.do(c.global, "GET", groups, nil).want(t, 200, `null`)
		if got, want := page(t), "full=null status=null syncing=false finished=null error=null"; got != want {
			t.Errorf("page: %s, want %s", got, want)
		}
	})

	t.Run("asked for, then a second ask is 409", func(t *testing.T) {
		c.do(c.curator, "POST", perms, nil).want(t, 200, permsAsked)
		c.do(c.admin, "POST", perms, nil).want(t, 409, `{"detail":"Permissions sync task already in progress."}`)
		c.do(c.global, "POST", groups, nil).want(t, 200, groupsAsked)
		c.do(c.curator, "POST", groups, nil).want(t, 409, `{"detail":"External group sync task already in progress."}`)
		entries := c.audit("resource_type=cc_pair")
		if a, b := fxCount(entries, "cc_pair.permission_sync"), fxCount(entries, "cc_pair.group_sync"); a != 1 || b != 1 {
			t.Errorf("%d cc_pair.permission_sync and %d cc_pair.group_sync entries, want 1 each", a, b)
		}
		// Asking for a sync of a pair of another access type is Onyx's 200.
		c.do(c.admin, "POST", fmt.Sprintf("/manage/admin/cc-pair/%d/sync-groups", private), nil).want(t, 200, groupsAsked)
	})

	t.Run("the syncs run through the worker protocol", func(t *testing.T) {
		step()
		// The pair was never indexed: its first indexing first, and the
		// other pair's group sync.
		schedule(t, made{Created: 2})
		for range 2 {
			c.do(w, "POST", "/worker/lease", `{}`).decode(t, &lease)
			c.do(w, "POST", fmt.Sprintf("/worker/attempts/%d/finish", lease.Attempt.ID), `{"status":"success"}`).want(t, 200, `{"status":"success"}`)
		}
		step()
		schedule(t, made{Group: 2}) // The pair's, and the other pair's asked for again after its indexing.
		// Both group syncs: the other pair's is ended at once.
		c.do(w, "POST", "/worker/lease", `{}`).decode(t, &lease)
		otherDone := lease.Attempt.CCPair == private
		if otherDone {
			c.do(w, "POST", fmt.Sprintf("/worker/attempts/%d/finish", lease.Attempt.ID), `{"status":"success"}`).want(t, 200, `{"status":"success"}`)
			c.do(w, "POST", "/worker/lease", `{}`).decode(t, &lease)
		}
		if lease.Attempt.Kind != "group_sync" || lease.Attempt.CCPair != p {
			t.Fatalf("leased a %s of pair %d", lease.Attempt.Kind, lease.Attempt.CCPair)
		}
		progress := fmt.Sprintf("/worker/attempts/%d/progress", lease.Attempt.ID)
		c.do(w, "POST", progress, `{"access":[{"document_id":"a","external_access":{"external_user_emails":[],"external_user_group_ids":[],"is_public":true}}]}`).
			want(t, 400, wrongKind)
		c.do(w, "POST", progress, `{"groups":[{"id":"","user_emails":[]}]}`).want(t, 400, `{"detail":"A group's id has 1 to 512 bytes"}`)
		c.do(w, "POST", progress, `{"groups":[{"id":"eng","user_emails":["Ann@Example.com"]}]}`).
			want(t, 200, `{"new_docs_indexed":0,"total_docs_indexed":0,"stop":false}`)
		ended = step()
		c.do(w, "POST", fmt.Sprintf("/worker/attempts/%d/finish", lease.Attempt.ID), `{"status":"success"}`).want(t, 200, `{"status":"success"}`)
		if !otherDone {
			c.do(w, "POST", "/worker/lease", `{}`).decode(t, &lease)
			if lease.Attempt.CCPair != private {
				t.Fatalf("leased an attempt of pair %d, want the other pair's group sync", lease.Attempt.CCPair)
			}
			c.do(w, "POST", fmt.Sprintf("/worker/attempts/%d/finish", lease.Attempt.ID), `{"status":"success"}`).want(t, 200, `{"status":"success"}`)
		}
		c.do(c.admin, "GET", groups, nil).want(t, 200, fmt.Sprintf("%q", ended))
		c.do(c.admin, "GET", perms, nil).want(t, 200, `null`)
		if got, want := page(t), "full=null status=null syncing=false finished=null error=null"; got != want {
			t.Errorf("page after the group sync: %s, want %s", got, want)
		}

		step()
		schedule(t, made{Permission: 1})
		r := c.do(w, "POST", "/worker/lease", `{}`)
		r.decode(t, &lease)
		if lease.Attempt.Kind != "permission_sync" {
			t.Fatalf("leased a %s", lease.Attempt.Kind)
		}
		if got, want := page(t), "full=null status=in_progress syncing=true finished=null error=null"; got != want {
			t.Errorf("page while it runs: %s, want %s", got, want)
		}
		progress = fmt.Sprintf("/worker/attempts/%d/progress", lease.Attempt.ID)
		c.do(w, "POST", progress, `{"document_ids":["a"]}`).want(t, 400, wrongKind)
		c.do(w, "POST", progress, `{"access":[{"document_id":"a","external_access":{"external_user_emails":["ann@example.com"],"external_user_group_ids":["eng"],"is_public":false}}]}`).
			want(t, 200, `{"new_docs_indexed":0,"total_docs_indexed":0,"stop":false}`)
		synced := step()
		c.do(w, "POST", fmt.Sprintf("/worker/attempts/%d/finish", lease.Attempt.ID), `{"status":"success"}`).want(t, 200, `{"status":"success"}`)
		c.do(c.curator, "GET", perms, nil).want(t, 200, fmt.Sprintf("%q", synced))
		if got, want := page(t), fmt.Sprintf("full=%s status=success syncing=false finished=%s error=null", ended, synced); got != want {
			t.Errorf("page after: %s, want %s", got, want)
		}
	})

	t.Run("a sync of a connector that cannot says why", func(t *testing.T) {
		step()
		c.do(c.admin, "POST", perms, nil).want(t, 200, permsAsked)
		schedule(t, made{Permission: 1})
		c.do(w, "POST", "/worker/lease", `{}`).decode(t, &lease)
		msg := "The github connector cannot list its documents' permissions, so its cc-pairs' permissions cannot be synced"
		failed := step()
		c.do(w, "POST", fmt.Sprintf("/worker/attempts/%d/finish", lease.Attempt.ID), fmt.Sprintf(`{"status":"failed","error_msg":%q}`, msg)).
			want(t, 200, `{"status":"failed"}`)
		if got, want := page(t), fmt.Sprintf("full=%s status=failed syncing=false finished=%s error=%s", ended, failed, msg); got != want {
			t.Errorf("page after a failed sync: %s, want %s", got, want)
		}
	})
}

// TestSyncsForgottenOnSourceChange checks, through the real server and
// database, that what a sync pair synced is forgotten when its connector's
// config or its credential's secret changes (quarry.SourceChangedFields):
// the document its permission sync made public is found by no one, the
// GETs of its last syncs answer null, and its group sync is due at once,
// its permission sync right after; a rename of either changes nothing.
func TestSyncsForgottenOnSourceChange(t *testing.T) {
	c := newFxCast(t)
	conn := c.connector(c.admin, "repos", "github")
	cred := c.credential(c.admin, "github", fxSecret, "admin_public", true)
	p := c.pair(c.admin, conn, cred, "repos", quarry.AccessSync)
	perms, groups := fmt.Sprintf("/manage/admin/cc-pair/%d/sync-permissions", p), fmt.Sprintf("/manage/admin/cc-pair/%d/sync-groups", p)
	sched := c.srv.Config.Handler.(*api.Server)
	w := c.worker(t, "syncer")
	var clock time.Duration
	defer func() { c.db.Now = func() time.Time { return testNow } }()
	// run passes the scheduler, and runs what it made, until nothing is
	// left: the indexing reports doc-1, the permission sync makes it
	// public; it returns the kinds run, in order.
	run := func(t *testing.T) []string {
		t.Helper()
		var kinds []string
		for {
			clock += time.Second
			at := testNow.Add(clock)
			c.db.Now = func() time.Time { return at }
			if _, err := sched.Schedule(context.Background()); err != nil {
				t.Fatal(err)
			}
			var lease struct {
				Attempt *struct {
					ID   int64  `json:"attempt_id"`
					Kind string `json:"kind"`
				} `json:"attempt"`
			}
			c.do(w, "POST", "/worker/lease", `{}`).decode(t, &lease)
			if lease.Attempt == nil {
				return kinds
			}
			kinds = append(kinds, lease.Attempt.Kind)
			progress := fmt.Sprintf("/worker/attempts/%d/progress", lease.Attempt.ID)
			switch lease.Attempt.Kind {
			case "index":
				c.do(w, "POST", progress, `{"documents":[{"id":"doc-1","sections":[{"text":"quartz notes"}],"source":"github",
					"semantic_identifier":"Quartz","metadata":{}}]}`).decode(t, new(any))
			case "permission_sync":
				c.do(w, "POST", progress, `{"access":[{"document_id":"doc-1","external_access":{"external_user_emails":[],
					"external_user_group_ids":[],"is_public":true}}]}`).decode(t, new(any))
			}
			c.do(w, "POST", fmt.Sprintf("/worker/attempts/%d/finish", lease.Attempt.ID), `{"status":"success"}`).want(t, 200, `{"status":"success"}`)
		}
	}
	found := func(t *testing.T) int {
		t.Helper()
		var out struct {
			Docs []any `json:"search_docs"`
		}
		c.do(c.basic, "POST", "/search/send-search-message", `{"search_query":"quartz"}`).decode(t, &out)
		return len(out.Docs)
	}
	synced := func(t *testing.T, want bool) {
		t.Helper()
		for _, path := range []string{perms, groups} {
			r := c.do(c.admin, "GET", path, nil)
			if got := string(r.body) != "null"; r.status != 200 || got != want {
				t.Errorf("GET %s: %d %s; want a time: %v", path, r.status, r.body, want)
			}
		}
	}
	if got := run(t); fmt.Sprint(got) != "[index group_sync permission_sync]" {
		t.Fatalf("ran %v", got)
	}
	if n := found(t); n != 1 {
		t.Fatalf("basic finds %d documents after the permission sync, want 1", n)
	}
	synced(t, true)

	for _, tc := range []struct {
		name, method, path string
		body               any
		forgets            bool
	}{
		{"a connector renamed", "PATCH", fmt.Sprintf("/manage/admin/connector/%d", conn), fxConnectorBody("repos, renamed", "github"), false},
		{"a connector's config", "PATCH", fmt.Sprintf("/manage/admin/connector/%d", conn),
			fxConnectorBody("repos, renamed", "github", "connector_specific_config", json.RawMessage(`{"base_url":"https://other.example.com/"}`)), true},
		{"a credential renamed", "PATCH", fmt.Sprintf("/manage/credential/%d", cred), map[string]any{"name": "bot"}, false},
		{"a credential's secret", "PATCH", fmt.Sprintf("/manage/credential/%d", cred),
			map[string]any{"credential_json": map[string]any{"github_access_token": "a-new-token"}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if r := c.do(c.admin, tc.method, tc.path, tc.body); r.status != 200 {
				t.Fatalf("%s %s: %d %s", tc.method, tc.path, r.status, r.body)
			}
			if !tc.forgets {
				if n := found(t); n != 1 {
					t.Errorf("basic finds %d documents, want 1", n)
				}
				synced(t, true)
				if got := run(t); got != nil {
					t.Errorf("ran %v, want nothing", got)
				}
				return
			}
			if n := found(t); n != 0 {
				t.Errorf("basic finds %d documents, want none until the next permission sync", n)
			}
			synced(t, false)
			if got := run(t); fmt.Sprint(got) != "[group_sync permission_sync]" {
				t.Errorf("ran %v, want both syncs at once", got)
			}
			if n := found(t); n != 1 {
				t.Errorf("basic finds %d documents after the syncs, want 1", n)
			}
			synced(t, true)
		})
	}
}
