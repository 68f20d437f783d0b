// Package onyxtest replays Onyx's own admin clients against a Quarry
// server, for tests: the managers of Onyx v4.6.1's integration tests
// (onyx-dot-app/onyx, backend/tests/integration/common_utils/managers/:
// user.py, api_key.py, connector.py, credential.py, cc_pair.py,
// user_group.py, tool.py, document_set.py, persona.py), call by call, with the paths, methods and
// bodies they send. Each answer is parsed as the manager parses it, against
// a mirror of the Onyx pydantic model it is read into (models.go), and
// against the table of v4.6.1's models written from Onyx's source
// (table.go, scripts/onyx_models.py).
//
// Run replays the managers in one sequence (replay.go); RunIntegration
// replays Onyx's integration tests of connectors, credentials, cc-pairs,
// user groups, permissions, API keys and users, one test function each,
// against a fresh server (integration.go).
//
// It is a test helper: only tests import it. api/onyx_test.go runs both
// against the handler (api.NewServer in an httptest server, where every
// exchange is also checked against the OpenAPI document), and
// cmd/quarry's TestServeOnyxManagers runs Run against a quarry serve
// process.
package onyxtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/store"
)

// Target is the server the replay runs against.
type Target struct {
	// Do sends a request as u and returns the answer. body is sent as is
	// if it is a string, encoded as JSON (with Content-Type
	// application/json) otherwise, and not at all if nil; headers are
	// name, value pairs, set after Content-Type. A failure to send is
	// reported by Do, which then returns a response of status 0.
	Do func(u User, method, path string, body any, headers ...string) *Response
	// DB is a handle on the server's database, with its keys: the replay
	// reads there what the API never shows, the secrets kept in clear.
	DB *store.DB
	// Admin is an admin API key of the test's own (Token is enough), which
	// reads the secrets kept and the audit log.
	Admin User
	// ModelBase is the api_base of a Chat Completions server (a scripted
	// one) for the chat replays' model provider.
	ModelBase string
}

// User is a caller of the server.
type User struct {
	Token  string // An API key (or a session token), sent as a bearer token.
	Cookie string // A session token, sent as the session cookie.
	ID     string
	Email  string
}

// Response is what a request got back.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// SessionCookie is the name of Quarry's (and Onyx's) session cookie.
const SessionCookie = "fastapiusersauth"

// Send returns a Target.Do that sends requests to the server at base (a
// URL without a trailing slash) with client, reporting a failure to send
// with t.Errorf.
func Send(t *testing.T, base string, client *http.Client) func(u User, method, path string, body any, headers ...string) *Response {
	return func(u User, method, path string, body any, headers ...string) *Response {
		t.Helper()
		var r io.Reader
		switch b := body.(type) {
		case nil:
		case string:
			r = strings.NewReader(b)
		default:
			j, err := json.Marshal(b)
			if err != nil {
				t.Errorf("%s %s: encoding the body: %v", method, path, err)
				return &Response{Header: http.Header{}}
			}
			r = bytes.NewReader(j)
		}
		req, err := http.NewRequest(method, base+path, r)
		if err != nil {
			t.Errorf("%s %s: %v", method, path, err)
			return &Response{Header: http.Header{}}
		}
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		if u.Token != "" {
			req.Header.Set("Authorization", "Bearer "+u.Token)
		}
		if u.Cookie != "" {
			req.AddCookie(&http.Cookie{Name: SessionCookie, Value: u.Cookie})
		}
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		res, err := client.Do(req)
		if err != nil {
			t.Errorf("%s %s: %v", method, path, err)
			return &Response{Header: http.Header{}}
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		if err != nil {
			t.Errorf("%s %s: reading body: %v", method, path, err)
		}
		return &Response{Status: res.StatusCode, Header: res.Header, Body: b}
	}
}

// NotIndexing is the 501 body of the routes that need an indexer, which
// cannot do what.
func NotIndexing(what string) string {
	return fmt.Sprintf(`{"detail":"Quarry cannot %s yet"}`, what)
}

// notAuthed is the 401 body of a request without valid credentials.
const notAuthed = `{"detail":"Not authenticated"}`

// pingDefinition is a minimal valid custom tool definition.
const pingDefinition = `{"openapi": "3.0.0", "info": {"title": "Ping", "description": "Pings", "version": "1"},
	"servers": [{"url": "https://ping.example.com"}],
	"paths": {"/ping": {"get": {"summary": "ping", "operationId": "ping", "responses": {"200": {"description": "ok"}}}}}}`

// Want asserts the status and the whole JSON body of a response.
func (r *Response) Want(t *testing.T, status int, body string) {
	t.Helper()
	if r.Status != status {
		t.Errorf("status = %d, want %d; body: %s", r.Status, status, r.Body)
	}
	var got, want any
	if err := json.Unmarshal(r.Body, &got); err != nil {
		t.Fatalf("response is not JSON: %v: %s", err, r.Body)
	}
	if err := json.Unmarshal([]byte(body), &want); err != nil {
		t.Fatalf("bad expected JSON: %v: %s", err, body)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("body mismatch (-want +got):\n%s\ngot: %s", diff, r.Body)
	}
}

// Decode decodes the JSON body of a 2xx response into v.
func (r *Response) Decode(t *testing.T, v any) {
	t.Helper()
	if r.Status/100 != 2 {
		t.Fatalf("status = %d: %s", r.Status, r.Body)
	}
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decoding %s: %v", r.Body, err)
	}
}

// sessionCookie returns the session cookie a response set, or nil.
func (r *Response) sessionCookie() *http.Cookie {
	for _, c := range (&http.Response{Header: r.Header}).Cookies() {
		if c.Name == SessionCookie {
			return c
		}
	}
	return nil
}

// wantStored asserts the stored credential_json of credential id, read in
// clear from the database by the target's admin.
func (tg Target) wantStored(t *testing.T, id int64, want string) {
	t.Helper()
	w, err := quarry.DecodeObject([]byte(want))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c, err := tg.DB.Authenticate(ctx, quarry.HashAPIKey(tg.Admin.Token))
	if err != nil {
		t.Fatal(err)
	}
	k, err := tg.DB.Credential(ctx, c, id)
	if err != nil {
		t.Fatalf("reading credential %d: %v", id, err)
	}
	got, err := quarry.DecodeObject(k.CredentialJSON)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(w, got); diff != "" {
		t.Errorf("stored credential_json mismatch (-want +got):\n%s", diff)
	}
}

// storedHeaders returns the headers kept for tool id, in clear.
func (tg Target) storedHeaders(t *testing.T, id int64) []quarry.Header {
	t.Helper()
	tool, err := tg.DB.Tool(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return tool.Headers
}

// AuditEntry is an entry of the audit log (GET /admin/audit-log), as a
// client reads it: the api tests compare whole entries with it.
type AuditEntry struct {
	ID         int64   `json:"id"`
	Time       string  `json:"time"`
	ActorID    *string `json:"actor_user_id"`
	ActorEmail *string `json:"actor_email"`
	APIKeyID   *int64  `json:"api_key_id"`
	// SCIMTokenID and SCIMTokenName name the company's directory's token
	// when the directory made the change.
	SCIMTokenID   *int64   `json:"scim_token_id"`
	SCIMTokenName *string  `json:"scim_token_name"`
	Action        string   `json:"action"`
	ResourceType  string   `json:"resource_type"`
	ResourceID    string   `json:"resource_id"`
	Fields        []string `json:"fields"`
	RequestID     string   `json:"request_id"`
	SourceIP      string   `json:"source_ip"`
}

// audit returns the audit log entries that query (e.g.
// "resource_type=connector") selects, read by the target's admin.
func (tg Target) audit(t *testing.T, query string) []AuditEntry {
	t.Helper()
	var out []AuditEntry
	tg.Do(tg.Admin, "GET", "/admin/audit-log?"+query, nil).Decode(t, &out)
	return out
}
