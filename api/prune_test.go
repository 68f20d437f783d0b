package api_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api"
)

// TestPrune covers pruning's routes and its worker protocol through the
// real server and database: asking for a prune (and the refusals), the
// prune waiting for the pair's indexing, its lease and reports (ids
// listed, nothing else), its end deleting the documents not listed but
// not the pushed ones, last_pruned, and the prune kept out of Onyx's
// index attempts. outbound's TestWebPruning runs one with a real worker.
func TestPrune(t *testing.T) {
	c := newFxCast(t)
	conn := c.connector(c.admin, "site", "web")
	cred := c.credential(c.admin, "web", fxSecret, "admin_public", true)
	p := c.pair(c.admin, conn, cred, "site", quarry.AccessPrivate, c.gA)
	pushed := c.pair(c.admin, c.connector(c.admin, "pushed", "ingestion_api"),
		c.credential(c.admin, "ingestion_api", fxSecret, "admin_public", true), "pushed", quarry.AccessPrivate, c.gA)
	prune := fmt.Sprintf("/manage/admin/cc-pair/%d/prune", p)
	last := fmt.Sprintf("/manage/admin/cc-pair/%d/last_pruned", p)
	schedule := func(t *testing.T, created, prunes int) {
		t.Helper()
		res, err := c.srv.Config.Handler.(*api.Server).Schedule(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if res.Created != created || res.Prunes != prunes {
			t.Fatalf("schedule: %+v, want %d index attempts and %d prunes made", res, created, prunes)
		}
	}
	var lease struct {
		Attempt struct {
			ID int64 `json:"attempt_id"`
		} `json:"attempt"`
	}
	w := c.worker(t, "pruner")

	t.Run("refusals", func(t *testing.T) {
		c.do(c.admin, "POST", "/manage/admin/cc-pair/999/prune", nil).want(t, 400, `{"detail":"Connection not found for current user's permissions"}`)
		c.do(c.other, "POST", prune, nil).want(t, 400, `{"detail":"Connection not found for current user's permissions"}`)
		c.do(c.admin, "GET", "/manage/admin/cc-pair/999/last_pruned", nil).want(t, 400, `{"detail":"cc_pair not found for current user's permissions"}`)
		c.do(c.other, "GET", last, nil).want(t, 400, `{"detail":"cc_pair not found for current user's permissions"}`)
		c.do(c.admin, "POST", fmt.Sprintf("/manage/admin/cc-pair/%d/prune", pushed), nil).want(t, 400,
			`{"detail":"This cc-pair's documents are pushed through the ingestion API; there is no source to prune them against."}`)
		c.do(c.basic, "POST", prune, nil).want(t, 403, fxNotCurator)
		c.do(user{}, "POST", prune, nil).want(t, 401, fxNotAuthed)
		c.do(c.admin, "GET", last, nil).want(t, 200, `null`)
	})

	t.Run("a prune waits for the pair's indexing", func(t *testing.T) {
		c.do(c.curator, "POST", prune, nil).want(t, 200, `{"success":true,"message":"Successfully created the pruning task.","data":null}`)
		c.do(c.admin, "POST", prune, nil).want(t, 409, `{"detail":"Pruning task already in progress."}`)
		if n := fxCount(c.audit("resource_type=cc_pair"), "cc_pair.prune"); n != 1 {
			t.Errorf("%d cc_pair.prune entries, want 1", n)
		}
		schedule(t, 1, 0) // Never indexed: its first indexing first.
		r := c.do(w, "POST", "/worker/lease", `{}`)
		r.decode(t, &lease)
		c.do(w, "POST", fmt.Sprintf("/worker/attempts/%d/progress", lease.Attempt.ID), `{"document_ids":["a"]}`).want(t, 400,
			`{"detail":"A prune reports the document ids its source listed and nothing else; an indexing attempt reports no listed ids"}`)
		c.do(w, "POST", fmt.Sprintf("/worker/attempts/%d/progress", lease.Attempt.ID), `{"documents":[
			{"id":"kept","sections":[{"text":"x"}],"source":"web","semantic_identifier":"Kept","metadata":{}},
			{"id":"gone","sections":[{"text":"y"}],"source":"web","semantic_identifier":"Gone","metadata":{}}]}`).decode(t, new(any))
		c.do(w, "POST", fmt.Sprintf("/worker/attempts/%d/finish", lease.Attempt.ID), `{"status":"success"}`).
			want(t, 200, `{"status":"success"}`)
		c.do(c.admin, "POST", "/onyx-api/ingestion", fmt.Sprintf(`{"document":{"id":"pushed","sections":[{"text":"z"}],
			"semantic_identifier":"Pushed","metadata":{},"doc_updated_at":"2026-01-02T00:00:00Z"},"cc_pair_id":%d}`, p)).decode(t, new(any))
	})

	t.Run("lease, report, end", func(t *testing.T) {
		// The documents were written at the test's fixed clock; the
		// prune starts later, as it would.
		c.db.Now = func() time.Time { return testNow.Add(time.Second) }
		defer func() { c.db.Now = func() time.Time { return testNow } }()
		schedule(t, 0, 1)
		r := c.do(w, "POST", "/worker/lease", `{}`)
		r.decode(t, &lease)
		now := testNow.Add(time.Second).Format("2006-01-02T15:04:05.999999Z")
		r.want(t, 200, fmt.Sprintf(`{"attempt":{"attempt_id":%d,"cc_pair_id":%d,"kind":"prune","connector":{"id":%d,"name":"site","source":"web",
			"input_type":"poll","connector_specific_config":%s},"from_beginning":false,"poll_range_start":%q,"poll_range_end":%q,
			"checkpoint":null,"lease_expires_at":%q}}`, lease.Attempt.ID, p, conn, fxWeb, now, now, testNow.Add(time.Second+quarry.LeaseTTL).Format("2006-01-02T15:04:05.999999Z")))
		progress := fmt.Sprintf("/worker/attempts/%d/progress", lease.Attempt.ID)
		c.do(w, "POST", progress, `{"documents":[{"id":"x","sections":[{"text":"x"}],"source":"web","semantic_identifier":"X","metadata":{}}]}`).
			want(t, 400, `{"detail":"A prune reports the document ids its source listed and nothing else; an indexing attempt reports no listed ids"}`)
		c.do(w, "POST", progress, `{"document_ids":[""]}`).want(t, 400, `{"detail":"A listed document id has 1 to 512 bytes"}`)
		c.do(w, "POST", progress, `{"document_ids":["kept","new"]}`).
			want(t, 200, `{"new_docs_indexed":0,"total_docs_indexed":0,"stop":false}`)
		c.do(c.admin, "GET", last, nil).want(t, 200, `null`)
		c.do(w, "POST", fmt.Sprintf("/worker/attempts/%d/finish", lease.Attempt.ID), `{"status":"success"}`).
			want(t, 200, `{"status":"success"}`)
		c.do(c.admin, "GET", last, nil).want(t, 200, fmt.Sprintf("%q", now))
		c.do(c.admin, "GET", fmt.Sprintf("/onyx-api/connector-docs/%d", p), nil).want(t, 200,
			fmt.Sprintf(`[{"document_id":"kept","semantic_id":"Kept","link":null,"cc_pair_id":%d},{"document_id":"pushed","semantic_id":"Pushed","link":null,"cc_pair_id":%[1]d}]`, p))
		var page struct {
			Total int `json:"total_items"`
		}
		c.do(c.admin, "GET", fmt.Sprintf("/manage/admin/cc-pair/%d/index-attempts", p), nil).decode(t, &page)
		if page.Total != 1 {
			t.Errorf("%d index attempts listed, want the indexing's only", page.Total)
		}
		c.do(c.admin, "POST", prune, nil).want(t, 200, `{"success":true,"message":"Successfully created the pruning task.","data":null}`)
	})

	t.Run("an interrupted prune runs again", func(t *testing.T) {
		c.db.Now = func() time.Time { return testNow.Add(2 * time.Second) }
		defer func() { c.db.Now = func() time.Time { return testNow } }()
		schedule(t, 0, 1) // The one asked for above.
		c.do(w, "POST", "/worker/lease", `{}`).decode(t, &lease)
		c.do(w, "POST", fmt.Sprintf("/worker/attempts/%d/finish", lease.Attempt.ID), `{"status":"interrupted"}`).
			want(t, 200, `{"status":"interrupted"}`)
		schedule(t, 0, 1)
		c.do(c.admin, "POST", prune, nil).want(t, 409, `{"detail":"Pruning task already in progress."}`)
		c.do(w, "POST", "/worker/lease", `{}`).decode(t, &lease)
		c.do(w, "POST", fmt.Sprintf("/worker/attempts/%d/finish", lease.Attempt.ID), `{"status":"failed","error_msg":"listing failed"}`).
			want(t, 200, `{"status":"failed"}`)
		schedule(t, 0, 0) // A failed prune waits prune_freq; this connector has none.
	})

	t.Run("a pair's documents and one's text", func(t *testing.T) {
		docs := fmt.Sprintf("/manage/admin/cc-pair/%d/documents", p)
		c.do(c.curator, "GET", docs, nil).want(t, 200, fmt.Sprintf(`{"items":[
			{"document_id":"kept","semantic_id":"Kept","link":null,"doc_updated_at":null,"indexed_at":%q,"from_ingestion_api":false},
			{"document_id":"pushed","semantic_id":"Pushed","link":null,"doc_updated_at":"2026-01-02T00:00:00Z","indexed_at":%q,"from_ingestion_api":true}],
			"total_items":2}`, testNowJSON, testNowJSON))
		c.do(c.admin, "GET", docs+"?page_num=1&page_size=1", nil).want(t, 200, fmt.Sprintf(`{"items":[
			{"document_id":"pushed","semantic_id":"Pushed","link":null,"doc_updated_at":"2026-01-02T00:00:00Z","indexed_at":%q,"from_ingestion_api":true}],
			"total_items":2}`, testNowJSON))
		c.do(c.admin, "GET", docs+"?page_size=0", nil).want(t, 422, `{"detail":[{"type":"greater_than_equal","loc":["query","page_size"],"msg":"Input should be greater than or equal to 1","input":"0","ctx":{"ge":1}}]}`)
		c.do(c.other, "GET", docs, nil).want(t, 400, `{"detail":"CC Pair not found for current user permissions"}`)
		c.do(c.admin, "GET", docs+"/kept", nil).want(t, 200, fmt.Sprintf(`{"document_id":"kept","semantic_id":"Kept","link":null,
			"doc_updated_at":null,"indexed_at":%q,"from_ingestion_api":false,"title":null,"source":"web","metadata":{},
			"sections":[{"text":"x"}],"text":"x"}`, testNowJSON))
		c.do(c.admin, "GET", docs+"/gone", nil).want(t, 404, `{"detail":"Document not found"}`)
		c.do(c.other, "GET", docs+"/kept", nil).want(t, 400, `{"detail":"CC Pair not found for current user permissions"}`)
		c.do(c.basic, "GET", docs+"/kept", nil).want(t, 403, fxNotCurator)
	})
}

// TestPruneCannotRun (issue 39): a prune that cannot run says why on the
// pair's page (pruning, last_prune_attempt_status, …_finished,
// …_error_message), from what the server keeps, rather than leaving a
// page that says nothing and a reason in a server's log: a connector that
// cannot list its documents, credentials the source refuses, a source
// without a connector (which makes the pair INVALID), a paused pair
// (the prune waits).
func TestPruneCannotRun(t *testing.T) {
	c := newFxCast(t)
	w := c.worker(t, "pruner")
	sched := c.srv.Config.Handler.(*api.Server)
	type pageFields struct {
		Status   string  `json:"status"`
		Pruning  bool    `json:"pruning"`
		Last     *string `json:"last_prune_attempt_status"`
		Finished *string `json:"last_prune_attempt_finished"`
		Error    *string `json:"last_prune_attempt_error_message"`
		Pruned   *string `json:"last_pruned"`
	}
	page := func(t *testing.T, p int64) pageFields {
		t.Helper()
		var f pageFields
		c.do(c.admin, "GET", fmt.Sprintf("/manage/admin/cc-pair/%d", p), nil).decode(t, &f)
		return f
	}
	str := func(p *string) string {
		if p == nil {
			return "null"
		}
		return *p
	}
	// indexed makes a pair of source that was indexed once, then asks
	// for its prune, and leases it.
	var clock time.Duration
	step := func() {
		clock += time.Second
		at := testNow.Add(clock)
		c.db.Now = func() time.Time { return at }
	}
	defer func() { c.db.Now = func() time.Time { return testNow } }()
	var lease struct {
		Attempt struct {
			ID   int64  `json:"attempt_id"`
			Kind string `json:"kind"`
		} `json:"attempt"`
	}
	indexed := func(t *testing.T, source string) (int64, int64) {
		t.Helper()
		step()
		conn := c.connector(c.admin, t.Name(), source)
		p := c.pair(c.admin, conn, c.credential(c.admin, source, fxSecret, "admin_public", true), t.Name(), quarry.AccessPublic)
		c.do(c.admin, "POST", fmt.Sprintf("/manage/admin/cc-pair/%d/prune", p), nil).decode(t, new(any))
		if f := page(t, p); !f.Pruning || f.Last != nil {
			t.Fatalf("a prune asked for: %+v", f)
		}
		if res, err := sched.Schedule(context.Background()); err != nil || res.Created != 1 {
			t.Fatalf("schedule: %+v %v", res, err)
		}
		c.do(w, "POST", "/worker/lease", `{}`).decode(t, &lease)
		c.do(w, "POST", fmt.Sprintf("/worker/attempts/%d/finish", lease.Attempt.ID), `{"status":"success"}`).want(t, 200, `{"status":"success"}`)
		step()
		if res, err := sched.Schedule(context.Background()); err != nil || res.Prunes != 1 {
			t.Fatalf("schedule: %+v %v", res, err)
		}
		c.do(w, "POST", "/worker/lease", `{}`).decode(t, &lease)
		if lease.Attempt.Kind != "prune" {
			t.Fatalf("leased %+v, want the prune", lease.Attempt)
		}
		if f := page(t, p); !f.Pruning || str(f.Last) != "in_progress" || f.Error != nil {
			t.Fatalf("a prune running: %+v", f)
		}
		return conn, p
	}
	finish := func(t *testing.T, body, want string) {
		t.Helper()
		step()
		c.do(w, "POST", fmt.Sprintf("/worker/attempts/%d/finish", lease.Attempt.ID), body).want(t, 200, want)
	}
	ended := testNow.Add(3 * time.Second).Format("2006-01-02T15:04:05.999999Z")

	t.Run("a connector that cannot list its documents", func(t *testing.T) {
		_, p := indexed(t, "web")
		msg := quarry.ErrorMessage(quarry.ErrNoSlimListing("web"))
		finish(t, fmt.Sprintf(`{"status":"failed","error_msg":%q}`, msg), `{"status":"failed"}`)
		if f := page(t, p); f.Pruning || str(f.Last) != "failed" || str(f.Finished) != ended || str(f.Error) != msg || f.Pruned != nil {
			t.Errorf("the page after the prune failed: %+v; want it failed at %s: %s", f, ended, msg)
		}
	})
	t.Run("credentials the source refuses", func(t *testing.T) {
		clock = 0
		_, p := indexed(t, "imap")
		msg := quarry.CredentialRefusedMessage("the IMAP server 127.0.0.1:993 refused the login: Authentication failed.")
		finish(t, fmt.Sprintf(`{"status":"failed","error_msg":%q,"reason":"credential_refused"}`, msg), `{"status":"failed"}`)
		if f := page(t, p); f.Pruning || str(f.Last) != "failed" || str(f.Error) != msg || f.Status != "ACTIVE" {
			t.Errorf("the page after the source refused the prune's credentials: %+v", f)
		}
	})
	t.Run("a source without a connector", func(t *testing.T) {
		clock = 0
		_, p := indexed(t, "confluence")
		msg := quarry.NoConnectorMessage("confluence")
		finish(t, fmt.Sprintf(`{"status":"failed","error_msg":%q,"reason":"no_connector"}`, msg), `{"status":"canceled"}`)
		if f := page(t, p); f.Pruning || str(f.Last) != "canceled" || str(f.Error) != msg || f.Status != "INVALID" {
			t.Errorf("the page after the prune of a source without a connector: %+v", f)
		}
	})
	t.Run("a paused pair: the prune waits", func(t *testing.T) {
		step()
		conn := c.connector(c.admin, "paused pages", "web")
		p := c.pair(c.admin, conn, c.credential(c.admin, "web", fxSecret, "admin_public", true), "paused pages", quarry.AccessPublic)
		c.do(c.admin, "PUT", fmt.Sprintf("/manage/admin/cc-pair/%d/status", p), `{"status":"PAUSED"}`).want(t, 200, `{"message":"200"}`)
		c.do(c.admin, "POST", fmt.Sprintf("/manage/admin/cc-pair/%d/prune", p), nil).decode(t, new(any))
		if res, err := sched.Schedule(context.Background()); err != nil || res.Created != 0 || res.Prunes != 0 {
			t.Fatalf("schedule: %+v %v", res, err)
		}
		if f := page(t, p); !f.Pruning || f.Last != nil || f.Status != "PAUSED" {
			t.Errorf("the page of a paused pair with a prune asked for: %+v", f)
		}
	})
	t.Run("the worker reports a reason with failed only", func(t *testing.T) {
		clock = 0
		indexed(t, "web")
		c.do(w, "POST", fmt.Sprintf("/worker/attempts/%d/finish", lease.Attempt.ID), `{"status":"success","reason":"no_connector"}`).
			want(t, 400, `{"detail":"An attempt that stops for no_connector ends as failed, not success"}`)
	})
}
