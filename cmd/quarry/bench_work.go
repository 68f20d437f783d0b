package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Paths of the operations.
const (
	benchStatusPath     = "/manage/admin/connector/status"
	benchCredentialPath = "/manage/credential/"
	benchToolPath       = "/admin/tool/custom/"
)

// benchCredentials is the number of credentials patch-credential and
// status-cold spread their writes over (fewer if there are fewer).
const benchCredentials = 1000

// benchWeight is an operation and its weight in the mix.
type benchWeight struct {
	op     string
	weight int
}

// benchWork is what the clients send: the operations' weights and the
// requests prepared for them, and the responses the floor serves.
type benchWork struct {
	token  string
	mix    []benchWeight
	total  int // Sum of the weights.
	creds  []*benchCred
	tools  []*benchTool
	status []byte // The status listing, as fetched before the load.
	// Sample responses of the writes, for the floor.
	patchResponse, putResponse []byte
	// runs are tool-run's requests, runResponse the answer of one
	// (bench_toolrun.go).
	runs        *benchToolRuns
	runResponse []byte
	// coldMu makes each status-cold write and the GET after it one step,
	// so that no other GET can cache the listing in between.
	coldMu sync.Mutex
}

// benchCred is a credential that writes go to.
type benchCred struct {
	id      int64
	noop    []byte    // status-cold's tiny write: the name as it is
	bodies  [2][]byte // patch-credential: the masked echo with the name, then with a changed name
	flips   atomic.Int64
	touched atomic.Bool // Renamed at least once.
}

// benchTool is a custom tool that put-tool updates.
type benchTool struct {
	id   int64
	body []byte
}

func (w *benchWork) uses(op string) bool {
	return slices.ContainsFunc(w.mix, func(x benchWeight) bool { return x.op == op })
}

// benchPrepare fetches the listing, and the credentials and tools the
// operations write to (creating the tools on the in-process server), and
// makes one request of each operation to check that it works and to keep
// its response for the floor.
func benchPrepare(ctx context.Context, sys *benchSystem, o *benchOptions, mix []benchWeight, prog *benchProgress) (*benchWork, error) {
	w := &benchWork{token: sys.token, mix: mix}
	for _, x := range mix {
		w.total += x.weight
	}
	c := &benchCaller{client: benchSetupClient(), base: sys.base, token: sys.token}
	defer c.client.CloseIdleConnections()

	var err error
	if w.status, err = c.call(ctx, "GET", benchStatusPath, nil); err != nil {
		return nil, err
	}
	if !sys.inProcess {
		var rows []json.RawMessage
		if err := json.Unmarshal(w.status, &rows); err != nil {
			return nil, fmt.Errorf("decoding the status listing: %w", err)
		}
		sys.spec.Pairs = len(rows)
	}

	if w.uses(opPatchCredential) || w.uses(opStatusCold) {
		if err := w.prepareCredentials(ctx, c, sys, prog); err != nil {
			return nil, err
		}
		if w.patchResponse, err = c.call(ctx, "PATCH", benchCredentialPath+benchItoa(w.creds[0].id), w.creds[0].bodies[0]); err != nil {
			return nil, err
		}
	}
	if w.uses(opPutTool) {
		if err := w.prepareTools(ctx, c, sys, o.tools, prog); err != nil {
			return nil, err
		}
		if w.putResponse, err = c.call(ctx, "PUT", benchToolPath+benchItoa(w.tools[0].id), w.tools[0].body); err != nil {
			return nil, err
		}
	}
	if w.uses(opToolRun) {
		if err := w.prepareToolRuns(ctx, c, sys); err != nil {
			return nil, err
		}
	}
	if w.patchResponse != nil || w.putResponse != nil {
		// The body just fetched, after the preparation's writes (and the
		// listing cached again for the warm operation).
		if w.status, err = c.call(ctx, "GET", benchStatusPath, nil); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// benchCredRecord is what bench reads of a credential.
type benchCredRecord struct {
	ID             int64           `json:"id"`
	Name           *string         `json:"name"`
	CredentialJSON json.RawMessage `json:"credential_json"`
}

// prepareCredentials picks up to benchCredentials credentials spread over
// all, reads them as a client would (masked), and builds their bodies.
func (w *benchWork) prepareCredentials(ctx context.Context, c *benchCaller, sys *benchSystem, prog *benchProgress) error {
	var recs []benchCredRecord
	if sys.inProcess {
		n := sys.spec.Credentials
		k := min(n, benchCredentials)
		for i := range k {
			id := 1 + int64(i)*int64(n)/int64(k)
			var r benchCredRecord
			if err := c.getJSON(ctx, benchCredentialPath+benchItoa(id), &r); err != nil {
				return err
			}
			recs = append(recs, r)
			prog.fraction("reading credentials", i+1, k)
		}
	} else {
		var all []benchCredRecord
		if err := c.getJSON(ctx, "/manage/credential", &all); err != nil {
			return err
		}
		sys.spec.Credentials = len(all)
		k := min(len(all), benchCredentials)
		for i := range k {
			recs = append(recs, all[i*len(all)/k])
		}
	}
	if len(recs) == 0 {
		return errors.New("no credential to write to: the caller may edit none")
	}
	for _, r := range recs {
		changed := "(bench)"
		if r.Name != nil {
			changed = *r.Name + " (bench)"
		}
		type patch struct {
			Name           *string         `json:"name"`
			CredentialJSON json.RawMessage `json:"credential_json,omitempty"`
		}
		k := &benchCred{id: r.ID}
		k.noop = benchJSON(patch{Name: r.Name})
		k.bodies[0] = benchJSON(patch{Name: r.Name, CredentialJSON: r.CredentialJSON})
		k.bodies[1] = benchJSON(patch{Name: &changed, CredentialJSON: r.CredentialJSON})
		w.creds = append(w.creds, k)
	}
	prog.line(fmt.Sprintf("writes go to %d credentials", len(w.creds)))
	return nil
}

// benchToolRecord is what bench reads of a tool.
type benchToolRecord struct {
	ID              int64           `json:"id"`
	Name            string          `json:"name"`
	Description     string          `json:"description"`
	Definition      json.RawMessage `json:"definition"`
	InCodeToolID    *string         `json:"in_code_tool_id"`
	CustomHeaders   []benchHeader   `json:"custom_headers"`
	PassthroughAuth bool            `json:"passthrough_auth"`
}

type benchHeader struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// prepareTools creates n custom tools through the API (in process) or
// finds the target's, and builds their PUT bodies: the tool as read, its
// header values masked echoes, as a client that edits it sends it back.
func (w *benchWork) prepareTools(ctx context.Context, c *benchCaller, sys *benchSystem, n int, prog *benchProgress) error {
	var recs []benchToolRecord
	if sys.inProcess {
		for i := 1; i <= n; i++ {
			body := benchJSON(map[string]any{
				"name":        fmt.Sprintf("bench-tool-%03d", i),
				"description": fmt.Sprintf("Tickets of help desk %d", i),
				"definition":  json.RawMessage(benchToolDefinition(i)),
				"custom_headers": []benchHeader{
					{"X-Api-Key", fmt.Sprintf("hd-%03d-%s", i, strings.Repeat("k3y", 12))},
					{"X-Tenant", fmt.Sprintf("tenant-%03d", i)},
				},
				"passthrough_auth": false,
			})
			var r benchToolRecord
			if err := c.decode(ctx, "POST", "/admin/tool/custom", body, &r); err != nil {
				return err
			}
			recs = append(recs, r)
			prog.fraction("creating tools", i, n)
		}
		sys.tools = n
	} else {
		var all []benchToolRecord
		if err := c.getJSON(ctx, "/tool", &all); err != nil {
			return err
		}
		for _, r := range all {
			if r.InCodeToolID == nil && len(r.Definition) > 0 && string(r.Definition) != "null" {
				recs = append(recs, r)
			}
		}
		sys.tools = len(recs)
	}
	if len(recs) == 0 {
		return errors.New("no custom tool to update: create some on the target, or choose another -op")
	}
	for _, r := range recs {
		w.tools = append(w.tools, &benchTool{id: r.ID, body: benchJSON(map[string]any{
			"name":             r.Name,
			"description":      r.Description,
			"definition":       r.Definition,
			"custom_headers":   r.CustomHeaders,
			"passthrough_auth": r.PassthroughAuth,
		})})
	}
	prog.line(fmt.Sprintf("updates go to %d custom tools", len(w.tools)))
	return nil
}

// benchToolDefinition is a valid OpenAPI definition of a small help desk
// API: four operations, parameters, a request body and components.
func benchToolDefinition(i int) string {
	return fmt.Sprintf(`{"openapi": "3.0.3",
  "info": {"title": "Help desk %[1]d", "description": "Tickets and comments of help desk %[1]d", "version": "1.%[1]d.0"},
  "servers": [{"url": "https://helpdesk-%[1]d.example.com/api/v2"}],
  "paths": {
    "/tickets": {
      "get": {"operationId": "listTickets", "summary": "List tickets",
        "parameters": [{"name": "status", "in": "query", "schema": {"type": "string", "enum": ["open", "closed"]}},
                       {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 100}}],
        "responses": {"200": {"description": "The tickets", "content": {"application/json": {"schema": {"type": "array", "items": {"$ref": "#/components/schemas/Ticket"}}}}}}},
      "post": {"operationId": "createTicket", "summary": "Open a ticket",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/NewTicket"}}}},
        "responses": {"201": {"description": "Created"}}}
    },
    "/tickets/{ticket_id}": {
      "parameters": [{"name": "ticket_id", "in": "path", "required": true, "schema": {"type": "integer", "format": "int64"}}],
      "get": {"operationId": "getTicket", "summary": "Get a ticket",
        "responses": {"200": {"description": "The ticket", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Ticket"}}}}}},
      "delete": {"operationId": "closeTicket", "summary": "Close a ticket", "responses": {"204": {"description": "Closed"}}}
    }
  },
  "components": {"schemas": {
    "NewTicket": {"type": "object", "required": ["title"], "properties": {"title": {"type": "string"}, "body": {"type": "string"}, "priority": {"type": "string", "enum": ["low", "normal", "high"]}}},
    "Ticket": {"type": "object", "properties": {"id": {"type": "integer"}, "title": {"type": "string"}, "status": {"type": "string"}, "created_at": {"type": "string", "format": "date-time"}}}
  }}}`, i)
}

// floorBodies returns the responses the floor serves, by route.
func (w *benchWork) floorBodies() map[string][]byte {
	return map[string][]byte{
		floorStatus:     w.status,
		floorCredential: w.patchResponse,
		floorTool:       w.putResponse,
	}
}

// restoreNames gives the renamed credentials of a target their names back.
func (w *benchWork) restoreNames(ctx context.Context, base string) error {
	c := &benchCaller{client: benchSetupClient(), base: base, token: w.token}
	defer c.client.CloseIdleConnections()
	var errs []error
	for _, k := range w.creds {
		if k.touched.Load() {
			if _, err := c.call(ctx, "PATCH", benchCredentialPath+benchItoa(k.id), k.bodies[0]); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// benchCaller makes the requests of the preparation, which must succeed.
type benchCaller struct {
	client      *http.Client
	base, token string
}

func benchSetupClient() *http.Client {
	return &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{Proxy: nil, DisableCompression: true, MaxIdleConnsPerHost: 4}}
}

// call sends a request and returns the body of its 2xx answer.
func (c *benchCaller) call(ctx context.Context, method, path string, body []byte) ([]byte, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, r)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := c.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if res.StatusCode/100 != 2 {
		return nil, fmt.Errorf("%s %s: %s: %s", method, path, res.Status, benchTruncate(b, 512))
	}
	return b, nil
}

func (c *benchCaller) decode(ctx context.Context, method, path string, body []byte, v any) error {
	b, err := c.call(ctx, method, path, body)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s %s: decoding the answer: %w", method, path, err)
	}
	return nil
}

func (c *benchCaller) getJSON(ctx context.Context, path string, v any) error {
	return c.decode(ctx, "GET", path, nil, v)
}

func benchJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func benchItoa(n int64) string { return strconv.FormatInt(n, 10) }

func benchTruncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
