package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api"
	"github.com/quarryhq/quarry/api/onyxtest"
	"github.com/quarryhq/quarry/internal/syncbuf"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/storetest"
)

// testNow is the fixed clock of test servers, so that whole bodies can be
// asserted.
var testNow = time.Date(2026, 11, 21, 10, 15, 30, 123456000, time.UTC)

// testNowJSON is testNow as responses render it.
const testNowJSON = "2026-11-21T10:15:30.123456Z"

// env is a test server on a real database, with an admin key.
type env struct {
	t     *testing.T
	db    *store.DB
	srv   *httptest.Server
	cfg   api.Config
	log   *syncbuf.Buffer // The log lines of its servers.
	admin user
	url   string // The database's, for replicas.
	keys  *store.Keyring
}

// user is a caller of the test server.
type user struct {
	token  string // An API key (or a session token), sent as a bearer token.
	cookie string // A session token, sent as the session cookie.
	id     string
	email  string
	name   string // The API key's name, its service account's name.
}

// newEnv starts a server with the given configuration changes.
func newEnv(t *testing.T, opts ...func(*api.Config)) *env {
	t.Helper()
	return startEnv(t, httptest.NewUnstartedServer(nil), storetest.URL(t), opts...)
}

// newKeylessEnv starts a server with the given configuration changes on a
// database with no API key and no person yet (e.admin is empty), as Onyx's
// integration tests start after their reset.
func newKeylessEnv(t *testing.T, opts ...func(*api.Config)) *env {
	t.Helper()
	return startServer(t, httptest.NewUnstartedServer(nil), storetest.URL(t), opts...)
}

// startEnv starts srv, not started yet (so that its address can go into
// the configuration), as a server of the database at dbURL with the given
// configuration changes.
func startEnv(t *testing.T, srv *httptest.Server, dbURL string, opts ...func(*api.Config)) *env {
	t.Helper()
	e := startServer(t, srv, dbURL, opts...)
	e.admin = e.user(quarry.RoleAdmin, "admin")
	return e
}

// startServer is startEnv without the admin key.
func startServer(t *testing.T, srv *httptest.Server, dbURL string, opts ...func(*api.Config)) *env {
	t.Helper()
	cfg := api.Config{MaskCredentials: true, Version: "test"}
	for _, o := range opts {
		o(&cfg)
	}
	e := &env{t: t, cfg: cfg, log: &syncbuf.Buffer{}, url: dbURL, keys: storetest.Key(t), srv: srv}
	watchSecrets(t, e.log) // logsecrets_test.go
	e.db = storetest.OpenURL(t, e.url, e.keys)
	e.db.Now = func() time.Time { return testNow }
	logger := slog.New(slog.NewJSONHandler(e.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	srv.Config.Handler = api.NewServer(cfg, e.db, logger)
	srv.Start()
	t.Cleanup(srv.Close)
	return e
}

// replica starts a second server with a store handle of its own on e's
// database, as a second replica behind a load balancer would be.
func (e *env) replica() *env {
	e.t.Helper()
	r := *e
	r.db = storetest.OpenURL(e.t, e.url, e.keys)
	r.db.Now = e.db.Now
	logger := slog.New(slog.NewJSONHandler(e.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	r.srv = httptest.NewServer(api.NewServer(e.cfg, r.db, logger))
	e.t.Cleanup(r.srv.Close)
	return &r
}

// user creates an API key with role and returns its caller.
func (e *env) user(role quarry.Role, name string) user {
	e.t.Helper()
	k, token, err := e.db.CreateAPIKey(context.Background(), nil, &name, role)
	if err != nil {
		e.t.Fatal(err)
	}
	u := user{token: token, id: k.UserID, name: name}
	var me struct {
		Email string `json:"email"`
	}
	e.do(u, "GET", "/me", nil).decode(e.t, &me)
	u.email = me.Email
	return u
}

// response is what a request got back.
type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends a request as u. body is sent as is if it is a string, encoded as
// JSON otherwise, and not at all if nil. It may be called from several
// goroutines: a transport failure is reported with Errorf and a response of
// status 0.
func (e *env) do(u user, method, path string, body any, headers ...string) *response {
	e.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		r = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, r)
	if err != nil {
		e.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if u.token != "" {
		req.Header.Set("Authorization", "Bearer "+u.token)
	}
	if u.cookie != "" {
		req.AddCookie(&http.Cookie{Name: "fastapiusersauth", Value: u.cookie})
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Errorf("%s %s: %v", method, path, err)
		return &response{header: http.Header{}}
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Errorf("%s %s: reading body: %v", method, path, err)
	}
	noteSecrets(e.t, req, body, b) // logsecrets_test.go
	noteSetCookies(e.t, res)
	e.conform(req, body, res, b)
	e.conformOnyx(req, res.StatusCode, b) // onyx_answers_test.go
	return &response{status: res.StatusCode, header: res.Header, body: b}
}

// want asserts the status and the whole JSON body of a response.
func (r *response) want(t *testing.T, status int, body string) {
	t.Helper()
	r.shared().Want(t, status, body)
}

// decode decodes the JSON body of a 2xx response into v.
func (r *response) decode(t *testing.T, v any) {
	t.Helper()
	r.shared().Decode(t, v)
}

// shared returns r as the test helpers shared with cmd/quarry see it.
func (r *response) shared() *onyxtest.Response {
	return &onyxtest.Response{Status: r.status, Header: r.header, Body: r.body}
}
