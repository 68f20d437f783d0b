package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// maxCredentials is the number of credentials patch-credential and
// status-cold spread their writes over (fewer if there are fewer).
const maxCredentials = 1000

// work is what the clients send: the operations' weights and the requests
// readied for them, and the answers the floor serves.
type work struct {
	token string
	mix   []weight
	total int // Sum of the weights.
	creds []*credential
	tools []*tool
	runs  *toolRuns // tool-run's requests (toolrun.go)
	// mcpCalls and mcpLists are mcp-call's and mcp-list's requests (mcp.go).
	mcpCalls *mcpCalls
	mcpLists *mcpLists
	search   *searchWork // -op search's requests (search.go).
	chat     *chatWork   // -op chat's requests and the parts of its messages' times (chat.go).
	status   []byte      // The status listing, as fetched before the load.
	// answers are the server's answers to one request of each route the
	// mix sends, which the floor serves.
	answers map[route][]byte
	// coldMu makes each status-cold write and the GET after it one step,
	// so that no other GET can cache the listing in between.
	coldMu sync.Mutex
}

// credential is a credential that writes go to.
type credential struct {
	id      int64
	noop    []byte    // status-cold's tiny write: the name as it is
	bodies  [2][]byte // patch-credential: the masked echo with the name, then with a changed name
	flips   atomic.Int64
	touched atomic.Bool // Renamed at least once.
}

// tool is a custom tool that put-tool updates.
type tool struct {
	id   int64
	body []byte
}

// preparation is what the operations' prepare functions work with: the
// system under test, a caller for the requests that must succeed, and
// where to say what they do.
type preparation struct {
	sys    *system
	o      *Options
	caller *caller
	screen *screen
}

// prepare fetches the listing, runs the prepare function of each operation
// of the mix, and fetches the listing again after their writes (and so
// caches it again for the warm operation): the floor serves that one.
func prepare(ctx context.Context, sys *system, o *Options, mix []weight, sc *screen) (*work, error) {
	w := &work{token: sys.token, mix: mix, answers: map[route][]byte{}}
	for _, x := range mix {
		w.total += x.weight
	}
	p := &preparation{sys: sys, o: o, caller: &caller{client: setupClient(), base: sys.base, token: sys.token}, screen: sc}
	defer p.caller.client.CloseIdleConnections()

	var err error
	if w.status, err = p.caller.call(ctx, "GET", statusPath, nil); err != nil {
		return nil, err
	}
	if !sys.inProcess {
		var rows []json.RawMessage
		if err := json.Unmarshal(w.status, &rows); err != nil {
			return nil, fmt.Errorf("decoding the status listing: %w", err)
		}
		sys.spec.Pairs = len(rows)
	}
	wrote := false
	for _, x := range mix {
		if x.op.prepare == nil {
			continue
		}
		if err := x.op.prepare(ctx, w, p); err != nil {
			return nil, err
		}
		wrote = true
	}
	if wrote {
		if w.status, err = p.caller.call(ctx, "GET", statusPath, nil); err != nil {
			return nil, err
		}
	}
	w.answers[statusRoute] = w.status
	return w, nil
}

// credentialRecord is what bench reads of a credential.
type credentialRecord struct {
	ID             int64           `json:"id"`
	Name           *string         `json:"name"`
	CredentialJSON json.RawMessage `json:"credential_json"`
}

// prepareCredentials picks up to maxCredentials credentials spread over
// all, reads them as a client would (masked), and builds their bodies;
// then it sends the first one's, for the floor.
func prepareCredentials(ctx context.Context, w *work, p *preparation) error {
	if w.creds != nil {
		return nil // Readied for another operation of the mix.
	}
	c := p.caller
	var recs []credentialRecord
	if p.sys.inProcess {
		n := p.sys.spec.Credentials
		k := min(n, maxCredentials)
		for i := range k {
			id := 1 + int64(i)*int64(n)/int64(k)
			var r credentialRecord
			if err := c.getJSON(ctx, credentialPath+itoa(id), &r); err != nil {
				return err
			}
			recs = append(recs, r)
			p.screen.fraction("reading credentials", i+1, k)
		}
	} else {
		var all []credentialRecord
		if err := c.getJSON(ctx, "/manage/credential", &all); err != nil {
			return err
		}
		p.sys.spec.Credentials = len(all)
		k := min(len(all), maxCredentials)
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
		k := &credential{id: r.ID}
		k.noop = mustJSON(patch{Name: r.Name})
		k.bodies[0] = mustJSON(patch{Name: r.Name, CredentialJSON: r.CredentialJSON})
		k.bodies[1] = mustJSON(patch{Name: &changed, CredentialJSON: r.CredentialJSON})
		w.creds = append(w.creds, k)
	}
	p.screen.line(fmt.Sprintf("writes go to %d credentials", len(w.creds)))
	answer, err := c.call(ctx, "PATCH", credentialPath+itoa(w.creds[0].id), w.creds[0].bodies[0])
	w.answers[credentialRoute] = answer
	return err
}

// toolRecord is what bench reads of a tool.
type toolRecord struct {
	ID              int64           `json:"id"`
	Name            string          `json:"name"`
	Description     string          `json:"description"`
	Definition      json.RawMessage `json:"definition"`
	InCodeToolID    *string         `json:"in_code_tool_id"`
	CustomHeaders   []header        `json:"custom_headers"`
	PassthroughAuth bool            `json:"passthrough_auth"`
}

type header struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// prepareTools creates o.Tools custom tools through the API (in process)
// or finds the target's, and builds their PUT bodies: the tool as read,
// its header values masked echoes, as a client that edits it sends it
// back; then it sends the first one's, for the floor.
func prepareTools(ctx context.Context, w *work, p *preparation) error {
	c := p.caller
	var recs []toolRecord
	if p.sys.inProcess {
		n := p.o.Tools
		for i := 1; i <= n; i++ {
			body := mustJSON(map[string]any{
				"name":        fmt.Sprintf("bench-tool-%03d", i),
				"description": fmt.Sprintf("Tickets of help desk %d", i),
				"definition":  json.RawMessage(ToolDefinition(i)),
				"custom_headers": []header{
					{"X-Api-Key", fmt.Sprintf("hd-%03d-%s", i, strings.Repeat("k3y", 12))},
					{"X-Tenant", fmt.Sprintf("tenant-%03d", i)},
				},
				"passthrough_auth": false,
			})
			var r toolRecord
			if err := c.decode(ctx, "POST", "/admin/tool/custom", body, &r); err != nil {
				return err
			}
			recs = append(recs, r)
			p.screen.fraction("creating tools", i, n)
		}
		p.sys.tools = n
	} else {
		var all []toolRecord
		if err := c.getJSON(ctx, "/tool", &all); err != nil {
			return err
		}
		for _, r := range all {
			if r.InCodeToolID == nil && len(r.Definition) > 0 && string(r.Definition) != "null" {
				recs = append(recs, r)
			}
		}
		p.sys.tools = len(recs)
	}
	if len(recs) == 0 {
		return errors.New("no custom tool to update: create some on the target, or choose another -op")
	}
	for _, r := range recs {
		w.tools = append(w.tools, &tool{id: r.ID, body: mustJSON(map[string]any{
			"name":             r.Name,
			"description":      r.Description,
			"definition":       r.Definition,
			"custom_headers":   r.CustomHeaders,
			"passthrough_auth": r.PassthroughAuth,
		})})
	}
	p.screen.line(fmt.Sprintf("updates go to %d custom tools", len(w.tools)))
	answer, err := c.call(ctx, "PUT", toolPath+itoa(w.tools[0].id), w.tools[0].body)
	w.answers[toolRoute] = answer
	return err
}

// ToolDefinition is the OpenAPI definition of the custom tools the bench
// makes (i numbers them): a small help desk API of four operations, with
// parameters, a request body and components, which Quarry accepts.
func ToolDefinition(i int) string {
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

// restoreNames gives the renamed credentials of a target their names back.
func (w *work) restoreNames(ctx context.Context, base string) error {
	c := &caller{client: setupClient(), base: base, token: w.token}
	defer c.client.CloseIdleConnections()
	var errs []error
	for _, k := range w.creds {
		if k.touched.Load() {
			if _, err := c.call(ctx, "PATCH", credentialPath+itoa(k.id), k.bodies[0]); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// caller makes the requests of the preparation, which must succeed.
type caller struct {
	client      *http.Client
	base, token string
}

func setupClient() *http.Client {
	return &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{Proxy: nil, DisableCompression: true, MaxIdleConnsPerHost: 4}}
}

// call sends a request and returns the body of its 2xx answer.
func (c *caller) call(ctx context.Context, method, path string, body []byte, headers ...string) ([]byte, error) {
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
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
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
		return nil, fmt.Errorf("%s %s: %s: %s", method, path, res.Status, truncate(b, 512))
	}
	return b, nil
}

func (c *caller) decode(ctx context.Context, method, path string, body []byte, v any) error {
	b, err := c.call(ctx, method, path, body)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s %s: decoding the answer: %w", method, path, err)
	}
	return nil
}

func (c *caller) getJSON(ctx context.Context, path string, v any) error {
	return c.decode(ctx, "GET", path, nil, v)
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
