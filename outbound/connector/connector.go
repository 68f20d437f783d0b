// Package connector reads content from the systems admins connect, for the
// workers that run index attempts (package outbound). A connector is Onyx's
// (backend/onyx/connectors/interfaces.py at v4.6.1), in Go: a run starts
// from a first checkpoint, or from the one an earlier attempt stopped at,
// and goes step by step, each step emitting the documents and failures it
// found and returning the next checkpoint, until a checkpoint says there
// is no more. A connector that loads everything at once (Onyx's
// LoadConnector) or polls a time window (PollConnector) is one step.
//
// Connectors make no connection of their own: every call goes through the
// *http.Client (or the Dial) of their Env, which the caller builds with the
// egress guard of package toolrun, so that the hosts a connector may reach are those
// QUARRY_TOOL_EGRESS_ALLOW opens. The package knows nothing of the worker
// protocol, SQL or how credentials are kept.
package connector

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/quarryhq/quarry"
)

// Window is the poll window of a run: the documents changed from Start to
// End. A run from the beginning has its Start at the epoch.
type Window struct {
	Start, End time.Time
}

// Emitter takes what a step finds, one item at a time: a worker sends them
// on in batches as they come, so that neither a run nor a step has to fit
// in memory. An error (the attempt is to stop, the server is gone) ends
// the step: the connector returns it as it is.
type Emitter interface {
	Document(ctx context.Context, d *quarry.Document) error
	Failure(ctx context.Context, f *quarry.ConnectorFailure) error
}

// Connector is a checkpointed connector: Onyx's CheckpointedConnector.
// Checkpoints are JSON objects with at least Onyx's has_more (see HasMore);
// the rest is the connector's own.
type Connector interface {
	// FirstCheckpoint returns the checkpoint a run from scratch starts
	// from: Onyx's build_dummy_checkpoint. It has more to do.
	FirstCheckpoint() json.RawMessage
	// Step runs one step from checkpoint within w: it emits the
	// documents and failures it finds to out, and returns the checkpoint
	// reached after them. It is Onyx's load_from_checkpoint.
	Step(ctx context.Context, w Window, checkpoint json.RawMessage, out Emitter) (json.RawMessage, error)
}

// Poller is a connector that reads the documents changed within a window
// in one go: Onyx's PollConnector. Polled turns it into a Connector.
type Poller interface {
	Poll(ctx context.Context, w Window, out Emitter) error
}

// Loader is a connector that reads every document in one go: Onyx's
// LoadConnector. Loaded turns it into a Connector.
type Loader interface {
	Load(ctx context.Context, out Emitter) error
}

// Slim is a connector that can list the ids of every document its source
// still has, without their content: Onyx's SlimConnector, for pruning the
// documents deleted at the source. It is optional: assert it on a
// Connector. ids is called with each batch of ids.
type Slim interface {
	ListIDs(ctx context.Context, ids func(ctx context.Context, batch []string) error) error
}

// GroupSyncer is a connector that can list its source's groups with their
// members' emails, for the group sync of a sync pair: Onyx's
// group_sync_func (backend/ee/onyx/external_permissions/<source>/
// group_sync.py). It is optional: find it with As. group is called with
// each group once.
type GroupSyncer interface {
	Groups(ctx context.Context, group func(ctx context.Context, g *quarry.ExternalGroup) error) error
}

// PermissionSyncer is a connector that can list every document its source
// has with who may read it, without their content, for the permission
// sync of a sync pair: Onyx's doc_sync (backend/ee/onyx/
// external_permissions/<source>/doc_sync.py). The ids are those its runs
// give the documents. It is optional: find it with As. access is called
// with each document once.
type PermissionSyncer interface {
	Permissions(ctx context.Context, access func(ctx context.Context, id string, a *quarry.ExternalAccess) error) error
}

// As returns what c is as a T (Slim, GroupSyncer, PermissionSyncer), looking
// through Polled and Loaded to the connector they run.
func As[T any](c Connector) (T, bool) {
	if t, ok := c.(T); ok {
		return t, true
	}
	if s, ok := c.(*oneStep); ok {
		t, ok := s.inner.(T)
		return t, ok
	}
	var zero T
	return zero, false
}

// checkpoint is the part of every checkpoint the worker reads: Onyx's
// ConnectorCheckpoint.
type checkpoint struct {
	HasMore *bool `json:"has_more"`
}

// HasMore reports whether a run that reached checkpoint cp has another
// step to run.
func HasMore(cp json.RawMessage) (bool, error) {
	var c checkpoint
	if err := json.Unmarshal(cp, &c); err != nil {
		return false, fmt.Errorf("the connector's checkpoint is not a JSON object: %w", err)
	}
	if c.HasMore == nil {
		return false, fmt.Errorf("the connector's checkpoint has no has_more")
	}
	return *c.HasMore, nil
}

// doneCheckpoint is the checkpoint of a run that has nothing more to do.
const doneCheckpoint = `{"has_more":false}`

// Polled returns the Connector that runs p as a single step, as Onyx's
// ConnectorRunner runs a PollConnector. As finds what else p is (Slim...).
func Polled(p Poller) Connector {
	return &oneStep{inner: p, first: func(ctx context.Context, w Window, out Emitter) error { return p.Poll(ctx, w, out) }}
}

// Loaded returns the Connector that runs l as a single step that ignores
// the window, as Onyx's ConnectorRunner runs a LoadConnector. As finds
// what else l is (Slim...).
func Loaded(l Loader) Connector {
	return &oneStep{inner: l, first: func(ctx context.Context, _ Window, out Emitter) error { return l.Load(ctx, out) }}
}

// oneStep is a Connector whose run is one step of inner's.
type oneStep struct {
	inner any // The Poller or Loader.
	first func(ctx context.Context, w Window, out Emitter) error
}

func (*oneStep) FirstCheckpoint() json.RawMessage { return json.RawMessage(`{"has_more":true}`) }

func (c *oneStep) Step(ctx context.Context, w Window, _ json.RawMessage, out Emitter) (json.RawMessage, error) {
	if err := c.first(ctx, w, out); err != nil {
		return nil, err
	}
	return json.RawMessage(doneCheckpoint), nil
}

// Env is what a connector may use of the outside world.
type Env struct {
	// HTTP makes every call the connector makes: the egress guard's
	// client (toolrun.Runner.Client), which sets no time-out of its own.
	HTTP *http.Client
	// Dial opens the connections of connectors that speak other protocols
	// than HTTP (IMAP): the egress guard's (toolrun.Runner.Dial); nil when
	// the caller has none.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// Now is the clock.
	Now func() time.Time
	// Log is for what the connector has to say; never a credential's
	// value.
	Log *slog.Logger
	// SaveCredential writes back the pair's credential when the
	// connector changed it (an OAuth token it refreshed); nil when
	// writing back is not possible.
	SaveCredential func(ctx context.Context, credential json.RawMessage) error
	// OpenFile reads a file of the file store that the connector's
	// configuration names (the file connector's); nil when there is no
	// file store.
	OpenFile func(ctx context.Context, id string) (*File, error)
	// Endpoints are the API bases the operator set for sources whose
	// API host is fixed (QUARRY_CONNECTOR_ENDPOINTS): see Endpoint.
	Endpoints Endpoints
	// PDF reads the PDFs among the files a connector reads (the
	// process's one reader); nil when the caller has none, and those
	// files then fail with a reason that says so.
	PDF *PDFReader
}

// withDefaults returns env, or a copy of it with the clock and the log
// filled in where it has none (time.Now, a log that discards).
func (e *Env) withDefaults() *Env {
	if e.Log != nil && e.Now != nil {
		return e
	}
	c := *e
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return &c
}

// Endpoint returns the base URL of source's API: the operator's, or def,
// the vendor's. It ends with a slash, so that a path is resolved under it.
func (e *Env) Endpoint(source quarry.DocumentSource, def string) string {
	if u, ok := e.Endpoints[source]; ok {
		def = u
	}
	if !strings.HasSuffix(def, "/") {
		def += "/"
	}
	return def
}

// Endpoints maps a source to the base URL of its API, where the operator
// points it elsewhere than the vendor's (GitHub Enterprise Server, a
// regional endpoint, a simulator in tests).
type Endpoints map[quarry.DocumentSource]string

// ParseEndpoints reads QUARRY_CONNECTOR_ENDPOINTS: comma-separated
// source=base_url, e.g. "slack=https://slack.com/api/,github=https://ghe.example.com/api/v3/".
// Each source must be a quarry.DocumentSource, given once; each URL an
// absolute http(s) URL with no query, fragment or credentials.
func ParseEndpoints(s string) (Endpoints, error) {
	out := Endpoints{}
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, base, ok := strings.Cut(item, "=")
		source := quarry.DocumentSource(strings.TrimSpace(name))
		base = strings.TrimSpace(base)
		switch {
		case !ok:
			return nil, fmt.Errorf("%q is not source=base_url", item)
		case !source.Valid():
			return nil, fmt.Errorf("%q is not a source", source)
		case out[source] != "":
			return nil, fmt.Errorf("source %q is given twice", source)
		}
		u, err := url.Parse(base)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
			return nil, fmt.Errorf("%s: %q is not an http(s) URL with no query or credentials", source, base)
		}
		out[source] = base
	}
	return out, nil
}

// File is a file of the file store, as a connector reads it: a stream it
// closes.
type File struct {
	ID, Name, Type string
	Size           int64 // -1 when unknown.
	Content        io.ReadCloser
}

// Constructor makes the connector of one run from its connector's
// configuration (connector_specific_config) and its pair's credential
// (credential_json), both JSON objects. It makes no connection: a bad
// configuration is its error, an unreachable source the first step's.
type Constructor func(config, credential json.RawMessage, env *Env) (Connector, error)

// Registry maps each source to the constructor of its connector.
type Registry struct {
	bySource map[quarry.DocumentSource]Constructor
}

// NewRegistry returns the registry of the connectors Quarry has.
func NewRegistry() *Registry {
	return &Registry{bySource: map[quarry.DocumentSource]Constructor{
		MockSource:        NewMock,
		WebSource:         NewWeb,
		ImapSource:        NewImap,
		MediaWikiSource:   NewMediaWiki,
		WikipediaSource:   NewWikipedia,
		FileSource:        NewFile,
		SlackSource:       NewSlack,
		GitHubSource:      NewGitHub,
		ConfluenceSource:  NewConfluence,
		JiraSource:        NewJira,
		GoogleDriveSource: NewGoogleDrive,
	}}
}

// Sources returns the sources that have a connector, sorted: the pairs
// of these sources are the ones Quarry indexes.
func (r *Registry) Sources() []quarry.DocumentSource {
	return slices.Sorted(maps.Keys(r.bySource))
}

// Register makes source's connector c, replacing any other.
func (r *Registry) Register(source quarry.DocumentSource, c Constructor) { r.bySource[source] = c }

// NoConnectorError is the error of a run of a source that has no
// connector in Quarry yet: the worker reports it as such
// (quarry.StopNoConnector), which makes the pair INVALID rather than
// failing attempt after attempt.
type NoConnectorError struct {
	Source quarry.DocumentSource
}

func (e *NoConnectorError) Error() string { return quarry.NoConnectorMessage(e.Source) }

// CredentialError is the error of a connector whose source refused the
// pair's credential, or demanded one it did not take (a login refused, an
// answer 401): Onyx's CredentialInvalidError. A connector returns it at
// once, without trying again; the worker reports it as such
// (quarry.StopCredentialRefused), and the pair's later attempts back off
// (quarry.CredentialBackoff) until the credential changes.
type CredentialError struct {
	// Reason is what the source said, and where: never the credential's
	// values.
	Reason string
}

func (e *CredentialError) Error() string { return quarry.CredentialRefusedMessage(e.Reason) }

// Open returns the connector of one run of source, made from its
// configuration and credential, or a *NoConnectorError.
func (r *Registry) Open(source quarry.DocumentSource, config, credential json.RawMessage, env *Env) (Connector, error) {
	c, ok := r.bySource[source]
	if !ok {
		return nil, &NoConnectorError{Source: source}
	}
	conn, err := c(config, credential, env)
	if err != nil {
		return nil, fmt.Errorf("the %s connector's configuration: %w", source, err)
	}
	return conn, nil
}

// retryAfter reads an answer's Retry-After in seconds (the form the
// vendors whose APIs the connectors call send with a 429), and reports
// whether there was one.
func retryAfter(h http.Header) (time.Duration, bool) {
	s, err := strconv.Atoi(strings.TrimSpace(h.Get("Retry-After")))
	if err != nil || s < 0 {
		return 0, false
	}
	return time.Duration(s) * time.Second, true
}

// sleep waits d, or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
