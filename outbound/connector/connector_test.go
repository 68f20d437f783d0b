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
	want := []quarry.DocumentSource{"confluence", "file", "github", "google_drive", "imap", "jira", "mediawiki", "mock_connector", "slack", "web", "wikipedia"}
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
	_, err := r.Open("notion", json.RawMessage(`{}`), json.RawMessage(`{}`), env)
	var none *connector.NoConnectorError
	if !errors.As(err, &none) || err.Error() != quarry.NoConnectorMessage("notion") {
		t.Errorf("Open(notion) = %v, want: %s", err, quarry.NoConnectorMessage("notion"))
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
	if _, ok := connector.As[connector.Slim](c); !ok {
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
	if _, ok := connector.As[connector.Slim](l); ok {
		t.Error("a loaded connector that lists no ids is Slim")
	}
	if _, err := l.Step(ctx, connector.Window{}, l.FirstCheckpoint(), out); err == nil || err.Error() != "source down" {
		t.Errorf("loaded: step error %v, want source down", err)
	}
}

// syncer is a loader that also syncs groups and permissions.
type syncer struct{ loader }

func (syncer) Groups(context.Context, func(context.Context, *quarry.ExternalGroup) error) error {
	return nil
}

func (syncer) Permissions(context.Context, func(context.Context, string, *quarry.ExternalAccess) error) error {
	return nil
}

// As finds what a connector run as one step is besides.
func TestAs(t *testing.T) {
	s, l := connector.Loaded(syncer{}), connector.Loaded(loader{})
	if _, ok := connector.As[connector.GroupSyncer](s); !ok {
		t.Error("a loaded group syncer is not found")
	}
	if _, ok := connector.As[connector.PermissionSyncer](s); !ok {
		t.Error("a loaded permission syncer is not found")
	}
	if _, ok := connector.As[connector.GroupSyncer](l); ok {
		t.Error("a loader that syncs no groups is found as one")
	}
	if _, ok := connector.As[connector.Slim](connector.Polled(&poller{})); !ok {
		t.Error("a polled connector that lists ids is not Slim")
	}
}

// QUARRY_CONNECTOR_ENDPOINTS points sources at other bases; the vendor's
// is the default, and every base ends with a slash.
func TestEndpoints(t *testing.T) {
	e, err := connector.ParseEndpoints(" slack=http://127.0.0.1:9/api , github=https://ghe.example.com/api/v3/,")
	if err != nil {
		t.Fatal(err)
	}
	env := &connector.Env{Endpoints: e}
	for source, want := range map[quarry.DocumentSource]string{
		"slack":        "http://127.0.0.1:9/api/",
		"github":       "https://ghe.example.com/api/v3/",
		"google_drive": "https://www.googleapis.com/",
	} {
		if got := env.Endpoint(source, "https://www.googleapis.com"); got != want {
			t.Errorf("%s: %q, want %q", source, got, want)
		}
	}
	if got := (&connector.Env{}).Endpoint("slack", "https://slack.com/api/"); got != "https://slack.com/api/" {
		t.Errorf("no endpoints: %q", got)
	}
	for in, want := range map[string]string{
		"slack":                           `"slack" is not source=base_url`,
		"slak=https://a":                  `"slak" is not a source`,
		"slack=https://a,slack=https://b": `source "slack" is given twice`,
		"slack=ftp://a":                   `slack: "ftp://a" is not an http(s) URL with no query or credentials`,
		"slack=https://u:p@a":             `slack: "https://u:p@a" is not an http(s) URL with no query or credentials`,
		"slack=https://a/?x=1":            `slack: "https://a/?x=1" is not an http(s) URL with no query or credentials`,
		"slack=/api":                      `slack: "/api" is not an http(s) URL with no query or credentials`,
	} {
		if _, err := connector.ParseEndpoints(in); err == nil || err.Error() != want {
			t.Errorf("%q: %v, want %s", in, err, want)
		}
	}
}
