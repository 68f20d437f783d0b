package connector_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/outbound/connector"
)

func TestHasMore(t *testing.T) {
	tests := []struct {
		cp      string
		want    bool
		wantErr string
	}{
		{`{"has_more":true,"last_document_id":null}`, true, ""},
		{`{"has_more":false}`, false, ""},
		{`{}`, false, "has no has_more"},
		{`[]`, false, "not a JSON object"},
		{`null`, false, "has no has_more"},
	}
	for _, tt := range tests {
		got, err := connector.HasMore(json.RawMessage(tt.cp))
		if got != tt.want || (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("HasMore(%s) = %v, %v; want %v, error with %q", tt.cp, got, err, tt.want, tt.wantErr)
		}
	}
}

// TestRegistrySources: the sources listed are those Open has a connector
// for, and no other.
func TestRegistrySources(t *testing.T) {
	r := connector.NewRegistry()
	got := r.Sources()
	want := []quarry.DocumentSource{"file", "imap", "mediawiki", "mock_connector", "web", "wikipedia"}
	if !slices.Equal(got, want) {
		t.Errorf("Sources() = %v, want %v", got, want)
	}
	for _, v := range quarry.DocumentSource("").EnumValues() {
		s := quarry.DocumentSource(v)
		_, err := r.Open(s, json.RawMessage(`{}`), json.RawMessage(`{}`), &connector.Env{})
		var none *connector.NoConnectorError
		if has := !errors.As(err, &none); has != slices.Contains(got, s) {
			t.Errorf("Open(%s): %v, listed: %v", s, err, slices.Contains(got, s))
		}
	}
}

func TestRegistryOpen(t *testing.T) {
	r := connector.NewRegistry()
	env := &connector.Env{}
	_, err := r.Open("confluence", json.RawMessage(`{}`), json.RawMessage(`{}`), env)
	var none *connector.NoConnectorError
	if !errors.As(err, &none) || err.Error() != quarry.NoConnectorMessage("confluence") {
		t.Errorf("Open(confluence) = %v, want: %s", err, quarry.NoConnectorMessage("confluence"))
	}
	configs := []struct {
		config, wantErr string
	}{
		{`{"mock_server_host":"127.0.0.1","mock_server_port":8001}`, ""},
		{`{"mock_server_host":"mock_connector_server","mock_server_port":"8001"}`, ""},
		{`{"mock_server_host":"[::1]","mock_server_port":8001}`, ""},
		{`{"mock_server_host":"","mock_server_port":8001}`, "is not a host name"},
		{`{"mock_server_host":"evil.com/x?","mock_server_port":8001}`, "is not a host name"},
		{`{"mock_server_host":"h","mock_server_port":0}`, "is not a port"},
		{`{"mock_server_host":"h"}`, "is not a port"},
		{`[]`, "not an object"},
	}
	for _, c := range configs {
		conn, err := r.Open(connector.MockSource, json.RawMessage(c.config), json.RawMessage(`{}`), env)
		if (err == nil) != (c.wantErr == "") || (err != nil && !strings.Contains(err.Error(), c.wantErr)) {
			t.Errorf("Open(mock_connector, %s) = %v, want an error with %q", c.config, err, c.wantErr)
		}
		if err == nil && string(conn.FirstCheckpoint()) != `{"has_more":true,"last_document_id":null}` {
			t.Errorf("the mock's first checkpoint is %s", conn.FirstCheckpoint())
		}
	}
}

// poller polls one document; it lists ids too.
type poller struct{ window connector.Window }

func (p *poller) Poll(ctx context.Context, w connector.Window, out connector.Emitter) error {
	p.window = w
	return out.Document(ctx, &quarry.Document{ID: "d", SemanticIdentifier: "d"})
}

func (p *poller) ListIDs(ctx context.Context, ids func(context.Context, []string) error) error {
	return ids(ctx, []string{"d"})
}

// loader fails.
type loader struct{}

func (loader) Load(context.Context, connector.Emitter) error { return errors.New("source down") }

// collect is an Emitter that keeps what it gets.
type collect struct{ docs []string }

func (c *collect) Document(_ context.Context, d *quarry.Document) error {
	c.docs = append(c.docs, d.ID)
	return nil
}

func (c *collect) Failure(context.Context, *quarry.ConnectorFailure) error { return nil }

func TestOneStepConnectors(t *testing.T) {
	ctx := context.Background()
	p := &poller{}
	c := connector.Polled(p)
	if _, ok := c.(connector.Slim); !ok {
		t.Error("a polled connector that lists ids is not Slim")
	}
	out := &collect{}
	more, _ := connector.HasMore(c.FirstCheckpoint())
	next, err := c.Step(ctx, connector.Window{}, c.FirstCheckpoint(), out)
	after, _ := connector.HasMore(next)
	if !more || err != nil || after || strings.Join(out.docs, ",") != "d" {
		t.Errorf("polled: first has more %v, step %s %v with %q", more, next, err, out.docs)
	}
	l := connector.Loaded(loader{})
	if _, ok := l.(connector.Slim); ok {
		t.Error("a loaded connector that lists no ids is Slim")
	}
	if _, err := l.Step(ctx, connector.Window{}, l.FirstCheckpoint(), out); err == nil || err.Error() != "source down" {
		t.Errorf("loaded: step error %v, want source down", err)
	}
}
