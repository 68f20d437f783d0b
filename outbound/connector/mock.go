package connector

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/quarryhq/quarry"
)

// MockSource is the source of Onyx's mock connector.
const MockSource quarry.DocumentSource = "mock_connector"

// mockTimeout bounds each call to the mock server, as Onyx's client does.
const mockTimeout = 30 * time.Second

// mockMaxBytes bounds what the mock server's answers are read of.
const mockMaxBytes = 64 << 20

// Mock is Onyx's mock connector (backend/onyx/connectors/mock_connector at
// v4.6.1), with which Onyx's indexing tests drive a run: a test server
// (Onyx's mock_connector_server) says what each step yields. At its first
// step it reads the whole script (GET /get-documents: a list of yields);
// each step then posts the checkpoint it was called with
// (POST /add-checkpoint), so that the test can check where runs resume,
// and plays the next yield: its unhandled_exception fails the step with
// that text, else its documents and failures are emitted and its
// checkpoint returned.
type Mock struct {
	base   string // http://host:port
	env    *Env
	yields []mockYield // Read at the first step.
	read   bool
	next   int
}

// mockConfig is the mock connector's connector_specific_config.
type mockConfig struct {
	Host string          `json:"mock_server_host"`
	Port json.RawMessage `json:"mock_server_port"` // A number, or a string of one.
}

// mockCheckpoint is the mock connector's checkpoint: Onyx's
// MockConnectorCheckpoint.
type mockCheckpoint struct {
	HasMore        bool    `json:"has_more"`
	LastDocumentID *string `json:"last_document_id"`
}

// mockYield is what one step plays: Onyx's SingleConnectorYield.
type mockYield struct {
	Documents          []quarry.Document         `json:"documents"`
	Checkpoint         mockCheckpoint            `json:"checkpoint"`
	Failures           []quarry.ConnectorFailure `json:"failures"`
	UnhandledException *string                   `json:"unhandled_exception"`
}

// NewMock is the Constructor of the mock connector: config names the mock
// server (mock_server_host, mock_server_port); the credential is not used.
func NewMock(config, _ json.RawMessage, env *Env) (Connector, error) {
	var c mockConfig
	if err := json.Unmarshal(config, &c); err != nil {
		return nil, fmt.Errorf("not an object with mock_server_host and mock_server_port: %w", err)
	}
	host := strings.Trim(c.Host, "[]")
	if host == "" || strings.ContainsAny(host, "/?#@ ") {
		return nil, fmt.Errorf("mock_server_host %q is not a host name or an address", c.Host)
	}
	port, err := strconv.Unquote(string(c.Port))
	if err != nil {
		port = string(c.Port)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return nil, fmt.Errorf("mock_server_port %s is not a port", c.Port)
	}
	return &Mock{base: "http://" + net.JoinHostPort(host, port), env: env}, nil
}

// FirstCheckpoint is Onyx's: more to do, no document yet.
func (*Mock) FirstCheckpoint() json.RawMessage {
	return json.RawMessage(`{"has_more":true,"last_document_id":null}`)
}

// Step plays the next yield of the script, after posting checkpoint to the
// mock server.
func (m *Mock) Step(ctx context.Context, _ Window, checkpoint json.RawMessage, out Emitter) (json.RawMessage, error) {
	if !m.read {
		if err := m.call(ctx, http.MethodGet, "/get-documents", nil, &m.yields); err != nil {
			return nil, err
		}
		m.read = true
	}
	var cp mockCheckpoint
	if err := json.Unmarshal(checkpoint, &cp); err != nil {
		return nil, fmt.Errorf("the mock connector's checkpoint: %w", err)
	}
	if err := m.call(ctx, http.MethodPost, "/add-checkpoint", cp, nil); err != nil {
		return nil, err
	}
	if m.next >= len(m.yields) {
		return nil, fmt.Errorf("the mock server's script has %d yields: none is left for step %d", len(m.yields), m.next+1)
	}
	y := &m.yields[m.next]
	m.next++
	if y.UnhandledException != nil && *y.UnhandledException != "" {
		return nil, mockException(*y.UnhandledException)
	}
	for i := range y.Documents {
		if err := out.Document(ctx, &y.Documents[i]); err != nil {
			return nil, err
		}
	}
	for i := range y.Failures {
		if err := out.Failure(ctx, &y.Failures[i]); err != nil {
			return nil, err
		}
	}
	return json.Marshal(y.Checkpoint)
}

// Permissions lists no document: Onyx's mock_doc_sync (its documents'
// access comes with them), so that a permission sync of a sync pair of the
// mock connector ends in success, changing nothing.
func (*Mock) Permissions(context.Context, func(context.Context, string, *quarry.ExternalAccess) error) error {
	return nil
}

// mockException is an unhandled exception the script asked for: its text
// is the error's, as Onyx's RuntimeError.
type mockException string

func (e mockException) Error() string { return string(e) }

// call sends a request to the mock server with in as its JSON body (none
// if nil), and decodes its JSON answer into out (unless nil).
func (m *Mock) call(ctx context.Context, method, path string, in, out any) error {
	ctx, cancel := context.WithTimeout(ctx, mockTimeout)
	defer cancel()
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, m.base+path, body)
	if err != nil {
		return fmt.Errorf("the mock server's URL: %w", err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := m.env.HTTP.Do(req)
	if err != nil {
		return fmt.Errorf("calling the mock server: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, mockMaxBytes))
	if err != nil {
		return fmt.Errorf("reading the mock server's answer to %s %s: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("the mock server answered %s to %s %s: %s", resp.Status, method, path, quarry.ClipText(string(b), 512))
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("the mock server's answer to %s %s: %w", method, path, err)
	}
	return nil
}
