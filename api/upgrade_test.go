package api_test

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api"
	"github.com/quarryhq/quarry/auth"
	"github.com/quarryhq/quarry/auth/authtest"
	"github.com/quarryhq/quarry/internal/llmtest"
	"github.com/quarryhq/quarry/internal/mcptest"
	"github.com/quarryhq/quarry/internal/syncbuf"
	"github.com/quarryhq/quarry/scim"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/storetest"
)

// Upgrade tests: a database written by an earlier schema version, migrated
// by this build, serves every object as it did, secrets included. The
// databases are the fixtures of store/testdata/upgrade (README.md there),
// one per schema version, made once by TestMakeUpgradeFixture and never
// again.

var makeUpgradeFixture = flag.Bool("make-upgrade-fixture", false,
	"record the upgrade fixture of the current schema version in store/testdata/upgrade (needs "+storetest.PostgresEnv+" and pg_dump)")

// upgradeDefinition is the definition of the fixtures' custom tools.
const upgradeDefinition = `{"openapi":"3.0.3","info":{"title":"Tickets","description":"Help desk tickets","version":"1"},
	"servers":[{"url":"https://tickets.example.com"}],
	"paths":{"/tickets/{id}":{"get":{"operationId":"get_ticket","summary":"Get a ticket",
		"parameters":[{"name":"id","in":"path","required":true,"schema":{"type":"integer"}}],
		"responses":{"200":{"description":"OK"}}}}}}`

// envAt starts a test server on the database at u, migrating it, with
// masking off so that secrets are compared in clear, and the given changes
// to its configuration. Unlike newEnv it writes nothing: the fixture is
// served as it is.
func envAt(t *testing.T, u string, keys *store.Keyring, opts ...func(*api.Config)) *env {
	t.Helper()
	return envOn(t, httptest.NewUnstartedServer(nil), u, keys, opts...)
}

// envOn is envAt on a server made but not started.
func envOn(t *testing.T, srv *httptest.Server, u string, keys *store.Keyring, opts ...func(*api.Config)) *env {
	t.Helper()
	cfg := api.Config{MaskCredentials: false, Version: "test"}
	for _, o := range opts {
		o(&cfg)
	}
	e := &env{t: t, cfg: cfg, log: &syncbuf.Buffer{}, url: u, keys: keys, srv: srv}
	watchSecrets(t, e.log)
	e.db = storetest.OpenURL(t, u, keys)
	e.db.Now = func() time.Time { return testNow }
	logger := slog.New(slog.NewJSONHandler(e.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	srv.Config.Handler = api.NewServer(cfg, e.db, logger)
	srv.Start()
	t.Cleanup(srv.Close)
	return e
}

// upgradeSSOEnv is envAt with people signing in: local accounts, and single
// sign-on at op, a real OpenID Provider in process.
func upgradeSSOEnv(t *testing.T, u string, keys *store.Keyring) *ssoEnv {
	t.Helper()
	op := authtest.Start(t)
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	op.AddClient(authtest.Client{ID: ssoClient, Secret: ssoSecret, RedirectURIs: []string{base + "/auth/oidc/callback"},
		PostLogoutRedirectURIs: []string{base + "/"}})
	p := auth.NewProvider(t.Context(), auth.OIDCConfig{Issuer: op.Issuer, ClientID: ssoClient, ClientSecret: ssoSecret,
		RedirectURL: base + "/auth/oidc/callback", Scopes: []string{"email", "profile", authtest.ScopeGroups},
		Skew: 30 * time.Second, KeyRefresh: time.Nanosecond}, slog.New(slog.DiscardHandler))
	public, _ := url.Parse(base)
	// Tools' OAuth (schema 00007) at the same provider, for another client.
	op.AddClient(authtest.Client{ID: "tools-upgrade", Secret: "tools-upgrade-client-secret-0123456789",
		RedirectURIs: []string{base + "/oauth-config/callback"}, RefreshTokens: true})
	// MCP servers' OAuth (schema 00010) at the same provider.
	op.AddClient(authtest.Client{ID: upgradeMCPClient, Secret: upgradeMCPSecret,
		RedirectURIs: []string{base + "/mcp/oauth/callback"}, RefreshTokens: true})
	e := envOn(t, srv, u, keys, withLocalAccounts, allowLoopback, func(c *api.Config) {
		c.SignIn.OIDC, c.SignIn.OIDCName, c.SignIn.PublicURL = p, "Example SSO", public
	})
	s := &ssoEnv{env: e, op: op, provider: p}
	s.waitReady()
	return s
}

// TestUpgrade loads every fixture, migrates it, and asks the API every
// question the fixture's manifest recorded: each answer must hold all that
// the recorded one held (a newer schema may add fields, never lose one),
// with the same status and ETag; secrets are compared in clear. Then it
// writes, to show that ids, versions and secrets carry on.
func TestUpgrade(t *testing.T) {
	for _, f := range storetest.Fixtures(t) {
		t.Run(filepath.Base(f.Dir), func(t *testing.T) {
			u, m := f.Load(t)
			keys := upgradeKeyring(t, m.Key)
			e := envAt(t, u, keys)
			if cur, latest, err := e.db.SchemaVersion(context.Background()); err != nil || cur != latest || cur < m.SchemaVersion {
				t.Fatalf("schema version %d of %d after migrating a version %d fixture (%v)", cur, latest, m.SchemaVersion, err)
			}
			as := func(who string) user { return user{token: m.Tokens[who]} }
			changed := expectedChanges(t, e, as("admin"), m.SchemaVersion)
			var connectorIDs []int64
			for _, r := range m.Responses {
				var body any
				if r.Request != "" {
					body = r.Request
				}
				got := e.do(as(r.As), r.Method, r.Path, body)
				if got.status != r.Status {
					t.Errorf("%s %s as %s: status %d, want %d: %s", r.Method, r.Path, r.As, got.status, r.Status, got.body)
					continue
				}
				if r.ETag != "" && got.header.Get("ETag") != r.ETag {
					t.Errorf("%s %s: ETag %q, want %q", r.Method, r.Path, got.header.Get("ETag"), r.ETag)
				}
				var want, have any
				// The server's own URLs (SCIM's locations) are compared
				// without their origin: each run has a port of its own.
				if err := json.Unmarshal(loopbackOrigin.ReplaceAll(r.Body, []byte("http://server")), &want); err != nil {
					t.Fatalf("%s %s: recorded body: %v", r.Method, r.Path, err)
				}
				want = changed(r.Path, want)
				if err := json.Unmarshal(loopbackOrigin.ReplaceAll(got.body, []byte("http://server")), &have); err != nil {
					t.Fatalf("%s %s: %v: %s", r.Method, r.Path, err, got.body)
				}
				for _, d := range holds(have, want, "") {
					t.Errorf("%s %s as %s: %s", r.Method, r.Path, r.As, d)
				}
				if r.As == "admin" && r.Path == "/manage/connector" {
					var cs []struct{ ID int64 }
					json.Unmarshal(got.body, &cs)
					for _, c := range cs {
						connectorIDs = append(connectorIDs, c.ID)
					}
				}
			}
			if t.Failed() {
				return
			}

			// Secrets: every one opens, as many as were made.
			res, err := e.db.CheckSecrets(context.Background(), store.CheckOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range res.OpenedKinds {
				if k.Count != m.Secrets[k.Kind] {
					t.Errorf("%d %s open, the fixture has %d", k.Count, k.Kind, m.Secrets[k.Kind])
				}
			}
			if res.Failed > 0 {
				t.Errorf("secrets that do not open: %s", res.Summary())
			}

			// Writes carry on: new ids follow the old ones, versions go on
			// from the stored ones, secrets left alone stay as they were.
			admin := as("admin")
			var made struct{ ID int64 }
			e.do(admin, "POST", "/manage/admin/connector", map[string]any{"name": "after the upgrade", "source": "web",
				"input_type": "poll", "connector_specific_config": map[string]any{"base_url": "https://example.com"}}).decode(t, &made)
			if len(connectorIDs) == 0 || made.ID <= slices.Max(connectorIDs) {
				t.Errorf("a new connector got id %d; the fixture's are %v", made.ID, connectorIDs)
			}
			var creds []struct {
				ID             int64           `json:"id"`
				CredentialJSON json.RawMessage `json:"credential_json"`
			}
			e.do(admin, "GET", "/manage/credential", nil).decode(t, &creds)
			for _, k := range creds {
				path := fmt.Sprintf("/manage/credential/%d", k.ID)
				before := e.do(admin, "GET", path, nil)
				after := e.do(admin, "PATCH", path, map[string]any{"name": "renamed after the upgrade"}, "If-Match", before.header.Get("ETag"))
				v0, _ := strconv.Atoi(strings.Trim(before.header.Get("ETag"), `"`))
				v1, _ := strconv.Atoi(strings.Trim(after.header.Get("ETag"), `"`))
				if after.status != 200 || v0 == 0 || v1 != v0+1 {
					t.Errorf("PATCH %s: %d, ETag %s after %s", path, after.status, after.header.Get("ETag"), before.header.Get("ETag"))
					continue
				}
				var got struct {
					CredentialJSON json.RawMessage `json:"credential_json"`
				}
				after.decode(t, &got)
				if !jsonEqual(got.CredentialJSON, k.CredentialJSON) {
					t.Errorf("PATCH %s changed the secret: %s, was %s", path, got.CredentialJSON, k.CredentialJSON)
				}
			}
		})
	}
}

// expectedChanges returns what the migrations after a fixture's schema
// version change on purpose in an answer it recorded to path (a JSON
// value), read as admin once migrated:
//
//   - 00008 (group permissions and the default groups): every user that can
//     act joins the default group of its role, so the people listing's
//     groups gain it (GET /me lists no default group); the people
//     listing's account_type is Onyx's STANDARD.
//
// and what the code changes on purpose since a fixture was recorded:
//
//   - issue 31: a SCIM User's name holds the components the directory
//     sent, no longer a formatted name made of the others (the fixtures'
//     directory sent none).
//   - issue 39: a secret shorter than 30 characters is masked whole
//     (remasked).
//   - issue 44: a search's highlight starts at its first matched word
//     (highlightsAtMatch), and its scores are the new ranking's
//     (scoresUnrecorded).
func expectedChanges(t *testing.T, e *env, admin user, version int64) func(path string, want any) any {
	t.Helper()
	if version >= 8 {
		return func(path string, want any) any {
			return sessionPersonaNamed(t, e, admin, path, scoresUnrecorded(path, highlightsAtMatch(path, remask(scimNamesAsSent(path, want)))))
		}
	}
	var groups []struct {
		ID        int64  `json:"id"`
		Name      string `json:"name"`
		IsDefault bool   `json:"is_default"`
	}
	e.do(admin, "GET", "/manage/admin/user-group?include_default=true", nil).decode(t, &groups)
	defaults := map[string]float64{}
	for _, g := range groups {
		if g.IsDefault {
			defaults[g.Name] = float64(g.ID)
		}
	}
	if len(defaults) != 2 {
		t.Fatalf("default groups after the upgrade: %+v", groups)
	}
	defaultOf := func(u map[string]any) (float64, string) {
		role, _ := u["role"].(string)
		name := quarry.DefaultGroupFor(quarry.Role(role))
		return defaults[name], name
	}
	return func(path string, want any) any {
		switch {
		case strings.HasPrefix(path, "/manage/users/accepted"):
			for _, item := range want.(map[string]any)["items"].([]any) {
				p := item.(map[string]any)
				p["account_type"] = "STANDARD"
				if id, name := defaultOf(p); name != "" {
					gs := append(p["groups"].([]any), map[string]any{"id": id, "name": name})
					slices.SortFunc(gs, func(a, b any) int {
						return cmp.Compare(a.(map[string]any)["id"].(float64), b.(map[string]any)["id"].(float64))
					})
					p["groups"] = gs
				}
			}
		}
		return scoresUnrecorded(path, highlightsAtMatch(path, remask(scimNamesAsSent(path, want))))
	}
}

// highlightsAtMatch starts each highlight of a recorded search (POST
// /search/send-search-message) at its first matched word: fixtures
// recorded before issue 44 kept the words before it.
func highlightsAtMatch(path string, want any) any {
	r, ok := want.(map[string]any)
	if !ok || path != "/search/send-search-message" {
		return want
	}
	docs, _ := r["search_docs"].([]any)
	for _, d := range docs {
		hs, _ := d.(map[string]any)["match_highlights"].([]any)
		for i, h := range hs {
			if s, ok := h.(string); ok {
				if at := strings.Index(s, "<hi>"); at > 0 {
					hs[i] = s[at:]
				}
			}
		}
	}
	return want
}

// scoresUnrecorded drops the scores of a recorded search (POST
// /search/send-search-message): issue 44 changed the ranking (BM25's k1
// and b, and the nearness of the query's words), so the scores of every
// fixture recorded before differ; the documents and their order are still
// compared.
func scoresUnrecorded(path string, want any) any {
	r, ok := want.(map[string]any)
	if !ok || path != "/search/send-search-message" {
		return want
	}
	docs, _ := r["search_docs"].([]any)
	for _, d := range docs {
		if m, ok := d.(map[string]any); ok {
			delete(m, "score")
		}
	}
	return want
}

// sessionPersonaNamed states, in a recorded session (GET
// /chat/get-chat-session), the name of its assistant: fixtures recorded
// before it was told gave every session the default assistant's name.
func sessionPersonaNamed(t *testing.T, e *env, admin user, path string, want any) any {
	t.Helper()
	s, ok := want.(map[string]any)
	id, _ := s["persona_id"].(float64)
	if !ok || !strings.HasPrefix(path, "/chat/get-chat-session/") || id == quarry.DefaultPersonaID {
		return want
	}
	var p struct {
		Name string `json:"name"`
	}
	e.do(admin, "GET", fmt.Sprintf("/persona/%d", int64(id)), nil).decode(t, &p)
	s["persona_name"] = p.Name
	return want
}

// remasked maps the masks the fixtures recorded of their secrets shorter
// than 30 characters, which showed their ends (Onyx's rule), to their
// masks now: the desk MCP server's API keys and the tools' OAuth client
// id.
var remasked = map[string]string{
	"desk...6789": quarry.MaskString("desk-upgrade-admin-0123456789"),
	"quar...rade": quarry.MaskString("quarry-upgrade"),
}

// remask replaces, in a recorded answer, the masks of remasked.
func remask(want any) any {
	switch w := want.(type) {
	case map[string]any:
		for k, v := range w {
			w[k] = remask(v)
		}
	case []any:
		for i, v := range w {
			w[i] = remask(v)
		}
	case string:
		if now, ok := remasked[w]; ok {
			return now
		}
	}
	return want
}

// scimNamesAsSent takes out of the SCIM Users recorded at path the
// formatted names Quarry made of the given and family names (issue 31:
// only what the directory sent is shown).
func scimNamesAsSent(path string, want any) any {
	if !strings.HasPrefix(path, "/scim/v2/Users") {
		return want
	}
	users := []any{want}
	if list, ok := want.(map[string]any)["Resources"].([]any); ok {
		users = list
	}
	for _, u := range users {
		name, _ := u.(map[string]any)["name"].(map[string]any)
		if name != nil && name["formatted"] == fmt.Sprint(name["givenName"], " ", name["familyName"]) {
			delete(name, "formatted")
		}
	}
	return want
}

// loopbackOrigin matches the origin of a test server.
var loopbackOrigin = regexp.MustCompile(`http://127\.0\.0\.1:[0-9]+`)

// upgradeKeyring returns the keyring of a fixture's test key.
func upgradeKeyring(t *testing.T, key string) *store.Keyring {
	t.Helper()
	k, err := store.ParseKey(key)
	if err != nil {
		t.Fatal(err)
	}
	kr, err := store.NewKeyring(k)
	if err != nil {
		t.Fatal(err)
	}
	return kr
}

// holds reports where got lacks something of want: objects must have every
// member of want (and may have more), arrays the same length, other values
// be equal. at is the JSON pointer of got.
func holds(got, want any, at string) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: %s, want an object", pointer(at), short(got))}
		}
		var out []string
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			gv, ok := g[k]
			if !ok {
				out = append(out, fmt.Sprintf("%s/%s: missing, want %s", pointer(at), k, short(w[k])))
				continue
			}
			out = append(out, holds(gv, w[k], at+"/"+k)...)
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{fmt.Sprintf("%s: %s, want %s", pointer(at), short(got), short(want))}
		}
		var out []string
		for i := range w {
			out = append(out, holds(g[i], w[i], fmt.Sprintf("%s/%d", at, i))...)
		}
		return out
	}
	if !reflect.DeepEqual(got, want) {
		return []string{fmt.Sprintf("%s: %s, want %s", pointer(at), short(got), short(want))}
	}
	return nil
}

func pointer(at string) string {
	if at == "" {
		return "body"
	}
	return at
}

// short renders v as JSON, cut to a readable length.
func short(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// TestMakeUpgradeFixture records the fixture of the current schema version
// when run with -make-upgrade-fixture (see store/testdata/upgrade/README.md):
// it builds the same deployment through the API on SQLite and on
// PostgreSQL, records the answers to every read, and keeps the databases:
// a copy of the SQLite file and a plain pg_dump.
func TestMakeUpgradeFixture(t *testing.T) {
	if !*makeUpgradeFixture {
		t.Skip("records a new upgrade fixture only with -make-upgrade-fixture")
	}
	if os.Getenv(storetest.PostgresEnv) == "" {
		t.Fatalf("%s must point at a PostgreSQL server: the fixture has a PostgreSQL dump too", storetest.PostgresEnv)
	}
	if _, err := exec.LookPath("pg_dump"); err != nil {
		t.Fatal("pg_dump is needed: ", err)
	}
	key := store.NewKey()
	keys := upgradeKeyring(t, key)
	if err := os.MkdirAll(storetest.FixtureRoot(), 0o755); err != nil {
		t.Fatal(err)
	}
	// Made aside, and named when complete.
	tmp, err := os.MkdirTemp(storetest.FixtureRoot(), ".making-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	var dir string
	for _, dialect := range []string{store.SQLite, store.Postgres} {
		u := storetest.URL(t)
		if dialect == store.SQLite {
			u = "sqlite:" + filepath.Join(t.TempDir(), "quarry.db")
		}
		s := upgradeSSOEnv(t, u, keys)
		e := s.env
		_, version, err := e.db.SchemaVersion(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if dir == "" {
			dir = filepath.Join(storetest.FixtureRoot(), fmt.Sprintf("%05d", version))
			if _, err := os.Stat(dir); err == nil {
				t.Fatalf("%s exists: a fixture is made once, by the schema version it is named after. "+
					"Remove it first only if that version was never merged.", dir)
			}
		}
		m := &storetest.Manifest{SchemaVersion: version, Dialect: dialect, Key: key}
		m.Tokens, m.OAuthClientSecrets = upgradeSeed(s)
		m.Responses = upgradeReads(e, m.Tokens)
		res, err := e.db.CheckSecrets(context.Background(), store.CheckOptions{})
		if err != nil || res.Failed > 0 {
			t.Fatalf("checking the secrets: %v %v", err, res)
		}
		m.Secrets = map[string]int{}
		for _, k := range res.OpenedKinds {
			if k.Count > 0 {
				m.Secrets[k.Kind] = k.Count
			}
		}
		if dialect == store.SQLite {
			if err := e.db.Backup(context.Background(), filepath.Join(tmp, "sqlite.db"), store.BackupOptions{}); err != nil {
				t.Fatal(err)
			}
		} else {
			out, err := exec.Command("pg_dump", "--inserts", "--no-owner", "--no-privileges",
				"--file", filepath.Join(tmp, "postgres.sql"), "--dbname", u).CombinedOutput()
			if err != nil {
				t.Fatalf("pg_dump: %v\n%s", err, out)
			}
		}
		b, err := json.MarshalIndent(m, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tmp, dialect+".json"), append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(tmp, "sqlite.db"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", dir)
}

// upgradeSeed builds, through the API, a deployment that uses every kind of
// object and secret, with updates, deletions and a revoked key, and returns
// its API keys and session tokens by holder and its OAuth client secrets by
// config id.
func upgradeSeed(s *ssoEnv) (tokens, oauthSecrets map[string]string) {
	e := s.env
	t := e.t
	token, err := e.db.Bootstrap(context.Background())
	if err != nil || token == "" {
		t.Fatalf("bootstrap: %q %v", token, err)
	}
	tokens = map[string]string{"admin": token}
	admin := user{token: token}
	id := func(r *response) int64 {
		t.Helper()
		var m map[string]any
		r.decode(t, &m)
		for _, k := range []string{"id", "data"} {
			if v, ok := m[k].(float64); ok {
				return int64(v)
			}
		}
		t.Fatalf("no id in %s", r.body)
		return 0
	}
	userIDs := map[string]string{}
	keyIDs := map[string]int64{}
	for _, k := range []struct{ name, role string }{
		{"curator", "curator"}, {"global", "global_curator"}, {"basic", "basic"}, {"limited", "limited"},
		{"revoked", "basic"}, {"rotated", "admin"},
	} {
		var out struct {
			ID     int64  `json:"api_key_id"`
			Token  string `json:"api_key"`
			UserID string `json:"user_id"`
		}
		e.do(admin, "POST", "/admin/api-key", map[string]any{"name": k.name + " key", "role": k.role}).decode(t, &out)
		tokens[k.name], userIDs[k.name], keyIDs[k.name] = out.Token, out.UserID, out.ID
	}
	curator, basic := user{token: tokens["curator"]}, user{token: tokens["basic"]}

	eng := id(e.do(admin, "POST", "/manage/admin/user-group", map[string]any{"name": "engineering",
		"user_ids": []string{userIDs["curator"], userIDs["global"], userIDs["basic"]}}))
	sales := id(e.do(admin, "POST", "/manage/admin/user-group", map[string]any{"name": "sales",
		"user_ids": []string{userIDs["curator"]}}))
	e.do(admin, "POST", fmt.Sprintf("/manage/admin/user-group/%d/set-curator", eng),
		map[string]any{"user_id": userIDs["curator"], "is_curator": true}).want(t, 200, `null`)

	oauthSecrets = map[string]string{}
	oauth := id(e.do(admin, "POST", "/admin/oauth-config", map[string]any{"name": "help desk sso",
		"authorization_url": "https://sso.example.com/authorize", "token_url": "https://sso.example.com/token",
		"client_id": "quarry-upgrade", "client_secret": "upgrade-oauth-client-secret-0123456789", "scopes": []string{"tickets.read", "tickets.write"}}))
	oauthSecrets[fmt.Sprint(oauth)] = "upgrade-oauth-client-secret-0123456789"

	wikiConfig := map[string]any{"wiki_base": "https://acme.atlassian.net/wiki", "space": "ENG", "index_recursively": true}
	wiki := id(e.do(admin, "POST", "/manage/admin/connector", map[string]any{"name": "wiki", "source": "confluence", "input_type": "poll",
		"connector_specific_config": wikiConfig, "refresh_freq": 3600, "prune_freq": 86400, "indexing_start": "2026-01-02T03:04:05Z"}))
	chat := id(e.do(admin, "POST", "/manage/admin/connector", map[string]any{"name": "chat", "source": "slack", "input_type": "poll",
		"connector_specific_config": map[string]any{"channels": []string{"general", "eng"}}}))
	gone := id(e.do(admin, "POST", "/manage/admin/connector", map[string]any{"name": "old site", "source": "web", "input_type": "load_state",
		"connector_specific_config": map[string]any{"base_url": "https://old.example.com"}}))
	drive := id(e.do(curator, "POST", "/manage/admin/connector", map[string]any{"name": "drive", "source": "google_drive", "input_type": "poll",
		"connector_specific_config": map[string]any{}, "access_type": "private", "groups": []int64{eng}}))
	id(e.do(curator, "POST", "/manage/admin/connector", map[string]any{"name": "handbook", "source": "web", "input_type": "load_state",
		"connector_specific_config": map[string]any{"base_url": "https://handbook.example.com"}, "access_type": "public"}))

	wikiCred := id(e.do(admin, "POST", "/manage/credential", map[string]any{"source": "confluence", "admin_public": true, "name": "wiki bot",
		"credential_json": map[string]any{"confluence_username": "bot@acme.com", "confluence_access_token": "ATATT3x-upgrade-0123456789"}}))
	chatCred := id(e.do(admin, "POST", "/manage/credential", map[string]any{"source": "slack", "admin_public": false,
		"credential_json": map[string]any{"slack_bot_token": "xoxb-upgrade-0123456789",
			"nested": map[string]any{"n": 42, "ok": true, "list": []any{"a", 1.5, nil}}, "unicode": "ключ-🔑"}}))
	syncCred := id(e.do(admin, "POST", "/manage/credential", map[string]any{"source": "slack", "admin_public": true, "name": "sync",
		"credential_json": map[string]any{"slack_bot_token": "xoxb-sync-upgrade-0123456789"}}))
	driveCred := id(e.do(curator, "POST", "/manage/credential", map[string]any{"source": "google_drive", "admin_public": false,
		"groups": []int64{eng}, "credential_json": map[string]any{"google_tokens": `{"refresh_token":"1//upgrade-0123456789"}`}}))
	id(e.do(basic, "POST", "/manage/credential", map[string]any{"source": "confluence", "admin_public": false, "name": "mine",
		"credential_json": map[string]any{"confluence_access_token": "basic-upgrade-secret-0123456789"}}))
	goneCred := id(e.do(admin, "POST", "/manage/credential", map[string]any{"source": "web", "admin_public": true,
		"credential_json": map[string]any{"password": "deleted-upgrade-secret"}}))

	e.do(admin, "PATCH", fmt.Sprintf("/manage/credential/%d", wikiCred), map[string]any{"name": "wiki bot (renamed)", "groups": []int64{sales},
		"credential_json": map[string]any{"confluence_username": "bot@acme.com", "confluence_access_token": "ATATT3x-upgrade-changed-0123456789",
			"is_cloud": true}}).decode(t, &map[string]any{})

	pair := func(u user, conn, cred int64, body map[string]any) int64 {
		t.Helper()
		return id(e.do(u, "PUT", fmt.Sprintf("/manage/connector/%d/credential/%d", conn, cred), body))
	}
	wikiPair := pair(admin, wiki, wikiCred, map[string]any{"name": "wiki", "access_type": "public"})
	chatPair := pair(admin, chat, chatCred, map[string]any{"name": "chat", "access_type": "private", "groups": []int64{eng, sales}})
	syncPair := pair(admin, chat, syncCred, map[string]any{"name": "chat sync", "access_type": "sync"})
	drivePair := pair(curator, drive, driveCred, map[string]any{"name": "drive", "access_type": "private", "groups": []int64{eng}})
	// cc-pair status and versions (schema 00004): a paused pair, a renamed one.
	e.do(admin, "PUT", fmt.Sprintf("/manage/admin/cc-pair/%d/status", chatPair), map[string]any{"status": "PAUSED"}).decode(t, new(any))
	e.do(curator, "PUT", fmt.Sprintf("/manage/admin/cc-pair/%d/name?new_name=team%%20drive", drivePair), nil).decode(t, new(any))

	tickets := id(e.do(admin, "POST", "/admin/tool/custom", map[string]any{"name": "tickets", "description": "Help desk",
		"definition": json.RawMessage(upgradeDefinition), "oauth_config_id": oauth, "passthrough_auth": false,
		"custom_headers": []map[string]string{{"key": "X-Api-Key", "value": "tool-upgrade-secret-0123456789"}, {"key": "X-Tenant", "value": "acme"}}}))
	id(e.do(curator, "POST", "/admin/tool/custom", map[string]any{"name": "tickets (passthrough)",
		"definition": json.RawMessage(upgradeDefinition), "passthrough_auth": true,
		"custom_headers": []map[string]string{{"key": "X-Trace", "value": "curator-upgrade-header-0123"}}}))
	e.do(admin, "PUT", fmt.Sprintf("/admin/tool/custom/%d", tickets), map[string]any{"description": "Help desk tickets, read and write",
		"custom_headers": []map[string]string{{"key": "X-Api-Key", "value": "tool-upgrade-secret-changed-0123456789"}, {"key": "X-Tenant", "value": "acme"}}}).
		decode(t, &map[string]any{})

	e.do(admin, "DELETE", fmt.Sprintf("/manage/admin/connector/%d", gone), nil).decode(t, &map[string]any{})
	e.do(admin, "DELETE", fmt.Sprintf("/manage/credential/%d", goneCred), nil).decode(t, &map[string]any{})
	if r := e.do(admin, "DELETE", fmt.Sprintf("/admin/api-key/%d", keyIDs["revoked"]), nil); r.status != 200 {
		t.Fatalf("revoking a key: %d %s", r.status, r.body)
	}
	var rotated struct {
		Token string `json:"api_key"`
	}
	e.do(admin, "POST", fmt.Sprintf("/admin/api-key/%d/regenerate", keyIDs["rotated"]), nil).decode(t, &rotated)
	tokens["rotated"] = rotated.Token

	// People (schema 00002): local accounts (the first becomes an admin),
	// one given another role and then deactivated, an invitation, and a
	// person who signed in at the OpenID provider (an identity, a session
	// with a sealed ID token); their sessions' tokens open the API too.
	signIn := func(email string) string {
		t.Helper()
		e.register(email, goodSecret)
		c := sessionCookie(e.login(email, goodSecret))
		if c == nil {
			t.Fatalf("no session for %s", email)
		}
		return c.Value
	}
	tokens["ann"] = signIn("ann@example.com")
	tokens["bob"] = signIn("Bob@Example.com")
	e.do(admin, "PATCH", "/manage/set-user-role", map[string]any{"user_email": "bob@example.com", "new_role": "global_curator"}).want(t, 200, `null`)
	e.do(admin, "PATCH", "/manage/admin/deactivate-user", map[string]any{"user_email": "bob@example.com"}).want(t, 200, `null`)
	e.do(admin, "PUT", "/manage/admin/users", map[string]any{"emails": []string{"dave@example.com"}}).decode(t, new(any))
	// Since 00006: an invitation with a link (whose token stays unknown).
	e.do(admin, "POST", "/manage/admin/invitations", map[string]any{"emails": []string{"erin@example.com"}}).decode(t, new(any))
	// Since 00008: group permissions, granted to a group and to the default
	// group Basic (everyone's); one granted and taken back.
	grant := func(g int64, p string, enabled bool) {
		t.Helper()
		e.do(admin, "PUT", fmt.Sprintf("/manage/admin/user-group/%d/permissions", g), map[string]any{"permission": p, "enabled": enabled}).
			decode(t, new(any))
	}
	var groups []struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
	}
	e.do(admin, "GET", "/manage/admin/user-group?include_default=true", nil).decode(t, &groups)
	for _, g := range groups {
		if g.Name == "Basic" {
			grant(g.ID, "manage:llms", true)
		}
	}
	grant(sales, "manage:connectors", true)
	grant(eng, "manage:actions", true)
	grant(eng, "manage:actions", false)
	s.op.AddUser(authtest.User{Subject: "u-carol", Email: "carol@example.com", EmailVerified: true, Name: "Carol Example",
		Password: "pw-u-carol"})
	b := e.newBrowser()
	c := sessionCookie(b.get(b.authorize(s, "u-carol").String()))
	if c == nil {
		t.Fatal("no session for carol")
	}
	tokens["carol"] = c.Value

	// Running tools (schema 00007): Carol's session keeps her single
	// sign-on tokens; she connects her account for a tool's OAuth config
	// (with additional parameters) at the provider, and starts another
	// connection she does not finish; runs leave audit entries with
	// details (one answered by a server on loopback, one refused).
	calendar := id(e.do(admin, "POST", "/admin/oauth-config", map[string]any{"name": "calendar",
		"authorization_url": s.op.Issuer + "/authorize", "token_url": s.op.Issuer + "/oauth/token",
		"client_id": "tools-upgrade", "client_secret": "tools-upgrade-client-secret-0123456789",
		"scopes": []string{"openid", "offline_access"}, "additional_params": map[string]string{"prompt": "login"}}))
	oauthSecrets[fmt.Sprint(calendar)] = "tools-upgrade-client-secret-0123456789"
	connect := func() string {
		t.Helper()
		var out struct {
			URL string `json:"authorization_url"`
		}
		b.send("POST", "/oauth-config/initiate", fmt.Sprintf(`{"oauth_config_id":%d,"return_path":"/#account"}`, calendar),
			"Content-Type", "application/json").decode(t, &out)
		return out.URL
	}
	cb, err := s.op.Authorize(b.c, connect(), "u-carol", "pw-u-carol")
	if err != nil {
		t.Fatal(err)
	}
	if r := b.get(cb.String()); r.status != 303 || !strings.Contains(r.header.Get("Location"), "oauth_connected=") {
		t.Fatalf("connecting Carol: %d %s", r.status, r.header.Get("Location"))
	}
	connect() // not finished: a connection in progress
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id":7,"title":"upgrade"}`))
	}))
	t.Cleanup(up.Close)
	local := id(e.do(admin, "POST", "/admin/tool/custom", map[string]any{"name": "local tickets", "passthrough_auth": false,
		"definition": json.RawMessage(strings.Replace(upgradeDefinition, "https://tickets.example.com", up.URL, 1)), "oauth_config_id": calendar}))
	carol := user{token: tokens["carol"]}
	e.do(carol, "POST", fmt.Sprintf("/tool/%d/run", local), `{"method":"get_ticket","args":{"id":7}}`).decode(t, new(any))
	e.do(carol, "POST", fmt.Sprintf("/tool/%d/run", tickets), `{"method":"get_ticket","args":{"id":"seven"}}`).decode400(t)

	// Since 00009 (after 00007): the company's directory (SCIM): its token, a person it
	// made (with the enterprise extension), Ann, whose account it took
	// over, Fay, whom it deactivated, a group it made (granted basic, and
	// manage:actions by an admin), and engineering, which it took over by
	// adding Dan (sales, which those fixtures used, is granted
	// manage:connectors: since issue 31 the directory adds no one to a group
	// granted beyond basic).
	var made struct {
		RawToken string `json:"raw_token"`
	}
	e.do(admin, "POST", "/admin/enterprise-settings/scim/token", map[string]any{"name": "okta"}).decode(t, &made)
	tokens["scim"] = made.RawToken
	d := &directory{e: e, token: made.RawToken, contentType: scim.MediaType}
	danBody := oktaUser("dan@example.com", "Dan", "Ng")
	danBody[scim.EnterpriseUserSchema] = map[string]any{"department": "Support", "manager": map[string]any{"value": "00uBoss"}}
	dan := created(t, d.do("POST", "/Users", danBody))
	created(t, d.do("POST", "/Users", oktaUser("ann@example.com", "Ann", "Lee")))
	fay := created(t, d.do("POST", "/Users", oktaUser("fay@example.com", "Fay", "Ruiz")))
	scimJSON(t, d.do("PATCH", "/Users/"+fay, `{"Operations":[{"op":"replace","value":{"active":false}}]}`), 200)
	team := created(t, d.do("POST", "/Groups", map[string]any{"displayName": "directory team", "externalId": "00gTeam",
		"members": []any{map[string]any{"value": dan}, map[string]any{"value": fay}}}))
	e.do(admin, "PUT", "/manage/admin/user-group/"+team+"/permissions", map[string]any{"permission": "manage:actions", "enabled": true}).
		want(t, 200, `{"permission":"manage:actions","enabled":true}`)
	scimJSON(t, d.do("PATCH", fmt.Sprintf("/Groups/%d", eng), `{"Operations":[{"op":"add","path":"members","value":[{"value":"`+dan+`"}]}]}`), 200)

	// Since 00010: MCP servers, as sources of tools (Go SDK servers on
	// loopback): kit, called with the admin's sealed token through a
	// header template, whose tools (with their input schemas) were listed
	// and two enabled; desk, called with each person's own key, which
	// Carol gave; vault, behind OAuth at the provider, to which Carol
	// connected her account and started another connection she did not
	// finish. Carol's personal access tokens: one unscoped (in the
	// manifest, as "pat"), one scoped, one revoked.
	setUp := func(body string) int64 {
		t.Helper()
		var out struct {
			ServerID int64 `json:"server_id"`
		}
		e.do(admin, "POST", "/admin/mcp/servers/create", body).decode(t, &out)
		return out.ServerID
	}
	const kitToken = "mcp-upgrade-admin-token-0123456789"
	kitUp := mcptest.Start(t, mcptest.Options{Header: "X-Api-Key", Values: map[string]string{kitToken: "admin"}})
	kit := setUp(fmt.Sprintf(`{"name":"kit","description":"A test kit","server_url":%q,"auth_type":"API_TOKEN","auth_performer":"ADMIN",
		"api_token":%q,"auth_template":{"headers":{"X-Api-Key":"{api_key}","X-User":"{user_email}","X-Tenant":"{tenant}"}},
		"admin_credentials":{"tenant":"acme"}}`, kitUp.URL, kitToken))
	e.syncMCPTools(admin, kit, "echo", "whoami")
	deskUp := mcptest.Start(t, mcptest.Options{Header: "Authorization", Values: map[string]string{
		"Bearer desk-upgrade-admin-0123456789": "admin", "Bearer desk-upgrade-carol-0123456789": "carol"}})
	desk := setUp(fmt.Sprintf(`{"name":"desk","server_url":%q,"auth_type":"API_TOKEN","auth_performer":"PER_USER",
		"auth_template":{"headers":{"Authorization":"Bearer {api_key}"}},"admin_credentials":{"api_key":"desk-upgrade-admin-0123456789"}}`, deskUp.URL))
	e.syncMCPTools(admin, desk, "whoami")
	e.do(carol, "POST", "/mcp/user-credentials", fmt.Sprintf(`{"server_id":%d,"credentials":{"api_key":"desk-upgrade-carol-0123456789"},
		"transport":"STREAMABLE_HTTP"}`, desk)).decode(t, new(any))
	vaultUp := mcptest.Start(t, mcptest.Options{Issuer: s.op.Issuer, Audience: upgradeMCPClient, Scopes: []string{"openid", "email", "offline_access"}})
	vault := setUp(fmt.Sprintf(`{"name":"vault","server_url":%q,"auth_type":"OAUTH","auth_performer":"PER_USER",
		"oauth_client_id":%q,"oauth_client_secret":%q}`, vaultUp.URL, upgradeMCPClient, upgradeMCPSecret))
	connectMCP := func() string {
		t.Helper()
		var out struct {
			OAuthURL string `json:"oauth_url"`
		}
		b.send("POST", "/mcp/oauth/connect", fmt.Sprintf(`{"server_id":%d,"return_path":"/#mcp","include_resource_param":true}`, vault),
			"Content-Type", "application/json").decodeInto(t, &out)
		return out.OAuthURL
	}
	cb, err = s.op.Authorize(b.c, connectMCP(), "u-carol", "pw-u-carol")
	if err != nil {
		t.Fatal(err)
	}
	if r := b.get(cb.String()); r.status != 303 || !strings.Contains(r.header.Get("Location"), "mcp_connected=") {
		t.Fatalf("connecting Carol to vault: %d %s", r.status, r.header.Get("Location"))
	}
	connectMCP() // not finished: a connection in progress
	pat := func(body string) (int64, string) {
		t.Helper()
		var out struct {
			ID    int64  `json:"id"`
			Token string `json:"token"`
		}
		e.do(carol, "POST", "/user/pats", body).decode(t, &out)
		return out.ID, out.Token
	}
	_, tokens["pat"] = pat(`{"name":"laptop","expiration_days":30}`)
	// A scope offered today (the admin scopes are not, since issue 31; the
	// fixture of 00010 holds a token made with manage:actions before).
	pat(`{"name":"scoped","expiration_days":null,"scopes":["basic"]}`)
	old, _ := pat(`{"name":"old","expiration_days":7}`)
	e.do(carol, "DELETE", fmt.Sprintf("/user/pats/%d", old), nil).decode(t, new(any))

	// Since 00012: indexing. A registration token (and a revoked one), the
	// worker it registered, an attempt for every pair due; the worker
	// leased one, reported two documents, a failure and a checkpoint, and
	// finished it (completed with errors); it leased another and failed it.
	var reg struct {
		ID    int64  `json:"id"`
		Token string `json:"token"`
	}
	e.do(admin, "POST", "/admin/worker/registration-token", `{"name":"fleet","hours":48}`).decode(t, &reg)
	var oldReg struct {
		ID int64 `json:"id"`
	}
	e.do(admin, "POST", "/admin/worker/registration-token", `{"name":"old fleet"}`).decode(t, &oldReg)
	e.do(admin, "DELETE", fmt.Sprintf("/admin/worker/registration-token/%d", oldReg.ID), nil).decode(t, new(any))
	var wk struct {
		Token string `json:"token"`
	}
	e.do(user{token: reg.Token}, "POST", "/worker/register", `{"name":"indexer-1"}`).decode(t, &wk)
	worker := user{token: wk.Token}
	if _, err := e.db.Schedule(context.Background()); err != nil {
		t.Fatal(err)
	}
	lease := func() int64 {
		t.Helper()
		var l struct {
			Attempt *struct {
				ID int64 `json:"attempt_id"`
			} `json:"attempt"`
		}
		e.do(worker, "POST", "/worker/lease", `{}`).decode(t, &l)
		if l.Attempt == nil {
			t.Fatal("no attempt to lease")
		}
		return l.Attempt.ID
	}
	a := lease()
	e.do(worker, "GET", fmt.Sprintf("/worker/attempts/%d/credential", a), nil).decode(t, new(any))
	e.do(worker, "POST", fmt.Sprintf("/worker/attempts/%d/progress", a), `{"documents":[
		{"id":"doc-1","sections":[{"text":"Quarterly plan","link":"https://wiki.example.com/plan"}],"source":"confluence",
		 "semantic_identifier":"Plan","title":"Plan","metadata":{"team":"eng"},"doc_updated_at":"2026-11-01T10:00:00Z"},
		{"id":"doc-2","sections":[{"text":"Héllo wörld"}],"source":"confluence","semantic_identifier":"Hello","metadata":{}}],
		"failures":[{"failed_document":{"document_id":"doc-3","document_link":null},"failed_entity":null,"failure_message":"Too large"}],
		"checkpoint":{"has_more":false,"cursor":"page-2"}}`).decode(t, new(any))
	e.do(worker, "POST", fmt.Sprintf("/worker/attempts/%d/finish", a), `{"status":"success"}`).decode(t, new(any))
	a = lease()
	e.do(worker, "POST", fmt.Sprintf("/worker/attempts/%d/finish", a), `{"status":"failed","error_msg":"The source said 401",
		"full_exception_trace":"Traceback: 401"}`).decode(t, new(any))

	// Since 00013: documents pushed through Onyx's ingestion API, one with
	// its own id and one without.
	e.do(admin, "POST", "/onyx-api/ingestion", `{"cc_pair_id":1,"document":{"id":"pushed 1","sections":[{"text":"Pushed",
		"link":"https://push.example.com/1"}],"semantic_identifier":"Pushed one","metadata":{"k":["v",1]},
		"doc_updated_at":"2026-11-02T08:00:00Z"}}`).decode(t, new(any))
	e.do(admin, "POST", "/onyx-api/ingestion", `{"cc_pair_id":1,"document":{"sections":[{"text":"No id"}],
		"semantic_identifier":"Pushed two","metadata":{}}}`).decode(t, new(any))

	// Since 00014: files uploaded for the file connector (a zip with its
	// metadata, and a text file), and a file connector naming them.
	var uploaded struct {
		FilePaths         []string `json:"file_paths"`
		FileNames         []string `json:"file_names"`
		ZipMetadataFileID *string  `json:"zip_metadata_file_id"`
	}
	e.upload(admin, "", uploadPart{"with_meta.zip", "application/zip", testdataFile(t, "with_meta.zip")},
		uploadPart{"notes.txt", "text/plain", []byte("Notes on the north face.\n")}).decode(t, &uploaded)
	fileConfig, _ := json.Marshal(map[string]any{"file_locations": uploaded.FilePaths, "file_names": uploaded.FileNames,
		"zip_metadata_file_id": uploaded.ZipMetadataFileID})
	e.do(admin, "POST", "/manage/admin/connector", `{"name":"Uploaded files","source":"file","input_type":"load_state",
		"connector_specific_config":`+string(fileConfig)+`,"refresh_freq":null,"prune_freq":null}`).decode(t, new(any))
	// Since 00016: pruning. A prune asked for on pair 1, which a pass of
	// the scheduler makes (or keeps asked for while the pair's attempt
	// waits).
	e.do(admin, "POST", "/manage/admin/cc-pair/1/prune", nil).decode(t, new(any))
	if _, err := e.db.Schedule(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Since 00017: the search index in segments. The documents so far are
	// written into a segment by the index's upkeep; one more stays pending.
	if err := e.db.SettleIndex(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.do(admin, "POST", "/onyx-api/ingestion", `{"cc_pair_id":1,"document":{"id":"pushed 3","sections":[{"text":"Pushed after the upkeep"}],
		"semantic_identifier":"Pushed three","metadata":{}}}`).decode(t, new(any))
	// Since 00019: attempts that are not their source's failure, each with
	// why it stopped: a worker without a connector for the source (the pair
	// becomes INVALID), and a source that refused the credentials (the
	// pair's next attempt backs off).
	a = lease()
	e.do(worker, "POST", fmt.Sprintf("/worker/attempts/%d/finish", a), `{"status":"failed","reason":"no_connector",
		"error_msg":"Quarry has no connector for confluence yet"}`).decode(t, new(any))
	a = lease()
	e.do(worker, "POST", fmt.Sprintf("/worker/attempts/%d/finish", a), `{"status":"failed","reason":"credential_refused",
		"error_msg":"The source refused the credentials"}`).decode(t, new(any))
	// Since 00020: model providers. A self-hosted server's, its key sealed
	// and one model the default; OpenAI's, public, with no key yet.
	e.do(admin, "PUT", "/admin/llm/provider?is_creation=true", `{"name":"vLLM","provider":"openai_compatible",
		"api_key":"sk-upgrade-0123456789abcdefghijklmnop","api_base":"https://llm.upgrade.example/v1","is_public":false,
		"model_configurations":[{"name":"llama","is_visible":true,"max_input_tokens":8192},{"name":"qwen","is_visible":false}]}`).decode(t, new(any))
	e.do(admin, "PUT", "/admin/llm/provider?is_creation=true", `{"provider":"openai",
		"model_configurations":[{"name":"gpt-4o-mini","is_visible":true}]}`).decode(t, new(any))
	e.do(admin, "POST", "/admin/llm/default", `{"provider_id":1,"model_name":"llama"}`).decode(t, new(any))
	// Since 00021: chat. A model server on loopback (gone once recorded)
	// the default; a basic person's session, whose question was answered
	// after a search, with a citation, then liked and renamed; the
	// default assistant's instructions changed.
	model := llmtest.New(t)
	model.Push(
		llmtest.Script{ToolCalls: []llmtest.ToolCall{llmtest.Call("call_1", "internal_search", `{"queries": ["pushed"]}`)}},
		llmtest.Text("The pushed documents ", "are in the first pair [1]."),
	)
	localModel := id(e.do(admin, "PUT", "/admin/llm/provider?is_creation=true", fmt.Sprintf(`{"name":"local","provider":"openai_compatible",
		"api_key":"sk-upgrade-local-0123456789abcdef","api_base":%q,"model_configurations":[{"name":"llama","is_visible":true,"max_input_tokens":8192}]}`,
		model.BaseURL())))
	e.do(admin, "POST", "/admin/llm/default", fmt.Sprintf(`{"provider_id":%d,"model_name":"llama"}`, localModel)).decode(t, new(any))
	e.do(admin, "PATCH", "/admin/default-assistant", `{"system_prompt":"Answer from the company's documents, briefly."}`).decode(t, new(any))
	var session struct {
		ID string `json:"chat_session_id"`
	}
	e.do(basic, "POST", "/chat/create-chat-session", `{"persona_id":0}`).decode(t, &session)
	var answer struct {
		ID int64 `json:"message_id"`
	}
	e.do(basic, "POST", "/chat/send-chat-message", fmt.Sprintf(`{"chat_session_id":%q,"message":"Where are the pushed documents?","stream":false}`,
		session.ID)).decode(t, &answer)
	e.do(basic, "POST", "/chat/create-chat-message-feedback", fmt.Sprintf(`{"chat_message_id":%d,"is_positive":true,"feedback_text":"Clear"}`,
		answer.ID)).decode(t, new(any))
	e.do(basic, "PUT", "/chat/rename-chat-session", fmt.Sprintf(`{"chat_session_id":%q,"name":"Pushed documents"}`, session.ID)).decode(t, new(any))
	// Since 00023: document sets. A public one of the wiki and the chat
	// pair; the curator's, of the drive, shared with eng and the basic
	// person.
	e.do(admin, "POST", "/manage/admin/document-set", map[string]any{"name": "Everything said", "description": "Wiki and chat",
		"cc_pair_ids": []int64{wikiPair, chatPair}, "is_public": true}).decode(t, new(any))
	var driveSet int64
	e.do(curator, "POST", "/manage/admin/document-set", map[string]any{"name": "Engineering drive", "description": "",
		"cc_pair_ids": []int64{drivePair}, "is_public": false, "groups": []int64{eng}, "users": []string{userIDs["basic"]}}).decode(t, &driveSet)
	// Since 00024: assistants. A label; the admin's assistant of the
	// drive's set with the search tool and the tickets tool, labelled,
	// shared with eng and the basic person, whose chat session uses it;
	// the basic person's own assistant, deleted.
	var tools []struct {
		ID     int64   `json:"id"`
		InCode *string `json:"in_code_tool_id"`
	}
	e.do(admin, "GET", "/tool", nil).decode(t, &tools)
	toolIDs := []int64{tickets}
	for _, x := range tools {
		if x.InCode != nil && *x.InCode == "SearchTool" {
			toolIDs = append(toolIDs, x.ID)
		}
	}
	label := id(e.do(admin, "POST", "/persona/labels", map[string]any{"name": "Engineering"}))
	helper := id(e.do(admin, "POST", "/persona", map[string]any{"name": "Drive helper", "description": "Answers from the drive",
		"document_set_ids": []int64{driveSet}, "tool_ids": toolIDs, "system_prompt": "Answer from the engineering drive.",
		"task_prompt": "Cite the drive.", "datetime_aware": true, "is_public": false, "groups": []int64{eng},
		"users": []string{userIDs["basic"]}, "label_ids": []int64{label},
		"starter_messages": []map[string]any{{"name": "Build", "message": "How do I build?"}}}))
	e.do(basic, "POST", "/chat/create-chat-session", fmt.Sprintf(`{"persona_id":%d,"description":"Drive questions"}`, helper)).decode(t, new(any))
	mine := id(e.do(basic, "POST", "/persona", map[string]any{"name": "Scratch", "description": "", "document_set_ids": []int64{},
		"tool_ids": []int64{}, "system_prompt": "Be brief.", "task_prompt": "", "datetime_aware": false, "is_public": false}))
	e.do(basic, "DELETE", fmt.Sprintf("/persona/%d", mine), nil).decode(t, new(any))
	// Since 00025: tags, of the documents pushed above (no new object).
	// Since 00026: a model provider restricted to the drive's assistant.
	e.do(admin, "PUT", "/admin/llm/provider?is_creation=true", fmt.Sprintf(`{"name":"drive model","provider":"openai_compatible",
		"api_key":"sk-upgrade-drive-0123456789abcdef","api_base":%q,"is_public":true,"personas":[%d],
		"model_configurations":[{"name":"drive-llama","is_visible":true,"max_input_tokens":4096}]}`, model.BaseURL(), helper)).decode(t, new(any))
	// Since 00028: permission syncing. A permission sync asked for on the
	// sync pair of Slack.
	e.do(admin, "POST", fmt.Sprintf("/manage/admin/cc-pair/%d/sync-permissions", syncPair), nil).decode(t, new(any))
	return tokens, oauthSecrets
}

// The client Quarry is at the provider for the fixture's MCP server behind
// OAuth (schema 00010).
const (
	upgradeMCPClient = "quarry-at-mcp-upgrade"
	upgradeMCPSecret = "quarry-at-mcp-upgrade-secret-0123456789"
)

// upgradeReads asks the API every read question about the deployment, as
// each holder of a key, and returns the answers.
func upgradeReads(e *env, tokens map[string]string) []storetest.Response {
	t := e.t
	var out []storetest.Response
	ask := func(as, path string) *response {
		t.Helper()
		r := e.do(user{token: tokens[as]}, "GET", path, nil)
		if r.status == 0 {
			t.Fatalf("GET %s failed", path)
		}
		out = append(out, storetest.Response{As: as, Method: "GET", Path: path, Status: r.status, ETag: r.header.Get("ETag"), Body: r.body})
		return r
	}
	each := func(as, list, item string) {
		t.Helper()
		var objs []struct {
			ID int64 `json:"id"`
		}
		ask(as, list).decode(t, &objs)
		for _, o := range objs {
			ask(as, fmt.Sprintf("%s/%d", item, o.ID))
		}
	}
	for _, as := range []string{"admin", "curator", "global", "basic", "limited", "rotated", "revoked", "ann", "bob", "carol", "pat"} {
		if tokens[as] != "" {
			ask(as, "/me")
			ask(as, "/me/permissions")
		}
	}
	var pairs []struct {
		ID int64 `json:"cc_pair_id"`
	}
	ask("admin", "/manage/admin/connector/status").decode(t, &pairs)
	for _, p := range pairs {
		ask("admin", fmt.Sprintf("/manage/admin/cc-pair/%d", p.ID))
		ask("admin", fmt.Sprintf("/manage/admin/cc-pair/%d/sync-permissions", p.ID))
		ask("admin", fmt.Sprintf("/manage/admin/cc-pair/%d/sync-groups", p.ID))
	}
	ask("admin", "/manage/admin/connector/status?source=slack&access_type=sync")
	each("admin", "/manage/connector", "/manage/connector")
	each("admin", "/manage/credential", "/manage/credential")
	ask("admin", "/manage/admin/user-group")
	var groups []struct {
		ID int64 `json:"id"`
	}
	ask("admin", "/manage/admin/user-group?include_default=true").decode(t, &groups)
	for _, g := range groups {
		ask("admin", fmt.Sprintf("/manage/admin/user-group/%d/permissions", g.ID))
	}
	ask("admin", "/manage/users?include_api_keys=true")
	ask("admin", "/admin/api-key")
	each("admin", "/tool", "/tool")
	each("admin", "/admin/oauth-config", "/admin/oauth-config")
	ask("admin", "/admin/audit-log?limit=1000")
	ask("admin", "/manage/users/accepted?page_size=1000")
	ask("admin", "/manage/users/invited")
	ask("admin", "/manage/admin/sessions")
	for _, as := range []string{"curator", "global"} {
		ask(as, "/manage/admin/connector/status")
		each(as, "/manage/connector", "/manage/connector")
		each(as, "/manage/credential", "/manage/credential")
	}
	ask("basic", "/manage/credential")
	ask("limited", "/manage/credential")
	ask("carol", "/manage/credential")
	if tokens["carol"] != "" {
		ask("carol", "/user-oauth-token/status")
	}
	if tokens["pat"] != "" {
		var servers struct {
			Servers []struct {
				ID int64 `json:"id"`
			} `json:"mcp_servers"`
		}
		ask("admin", "/admin/mcp/servers").decode(t, &servers)
		for _, sv := range servers.Servers {
			ask("admin", fmt.Sprintf("/admin/mcp/servers/%d", sv.ID))
			ask("admin", fmt.Sprintf("/admin/mcp/server/%d/db-tools", sv.ID))
		}
		ask("admin", "/admin/mcp/tools")
		ask("carol", "/mcp/servers")
		ask("carol", "/user/pats")
		ask("pat", "/user/pats")
	}
	ask("admin", "/onyx-api/ingestion")
	// Searches (since 00017): from a segment and from the pending chunks.
	for _, as := range []string{"admin", "basic"} {
		for _, q := range []string{"pushed", `"after the upkeep"`, "hel"} {
			body := fmt.Sprintf(`{"search_query":%q,"num_hits":10}`, q)
			r := e.do(user{token: tokens[as]}, "POST", "/search/send-search-message", body)
			if r.status == 0 {
				t.Fatalf("search %s failed", q)
			}
			out = append(out, storetest.Response{As: as, Method: "POST", Path: "/search/send-search-message", Request: body,
				Status: r.status, Body: r.body})
		}
	}
	ask("admin", "/admin/workers")
	ask("admin", "/admin/worker/registration-tokens")
	for _, p := range pairs {
		ask("admin", fmt.Sprintf("/manage/admin/cc-pair/%d/index-attempts", p.ID))
		ask("admin", fmt.Sprintf("/manage/admin/cc-pair/%d/errors?include_resolved=true", p.ID))
		ask("admin", fmt.Sprintf("/onyx-api/connector-docs/%d", p.ID))
		ask("admin", fmt.Sprintf("/manage/admin/cc-pair/%d/last_pruned", p.ID))
		ask("admin", fmt.Sprintf("/manage/admin/cc-pair/%d/documents?page_size=100", p.ID))
	}
	ask("admin", "/admin/llm/provider")
	ask("basic", "/llm/provider")
	// Chat (since 00021): the person's sessions, each read back.
	var sessions struct {
		Sessions []struct {
			ID string `json:"id"`
		} `json:"sessions"`
	}
	ask("basic", "/chat/get-user-chat-sessions").decode(t, &sessions)
	for _, cs := range sessions.Sessions {
		ask("basic", "/chat/get-chat-session/"+cs.ID)
	}
	ask("admin", "/admin/default-assistant/configuration")
	// Document sets (since 00023), as those who see them.
	for _, who := range []string{"admin", "curator", "basic"} {
		ask(who, "/manage/document-set")
	}
	// Assistants (since 00024): the listings, and each one the person sees.
	ask("admin", "/admin/persona?include_deleted=true")
	ask("basic", "/persona/labels")
	var personas []struct {
		ID int64 `json:"id"`
	}
	ask("basic", "/persona").decode(t, &personas)
	for _, p := range personas {
		ask("basic", fmt.Sprintf("/persona/%d", p.ID))
		ask("basic", fmt.Sprintf("/llm/persona/%d/providers", p.ID))
	}
	// Tags (since 00025), as a person and an admin find them.
	ask("basic", "/query/valid-tags")
	ask("admin", "/query/valid-tags?match_pattern=k")
	if tokens["scim"] != "" {
		ask("admin", "/admin/enterprise-settings/scim/token")
		var list struct {
			Resources []struct{ ID string } `json:"Resources"`
		}
		for _, kind := range []string{"Users", "Groups"} {
			ask("scim", "/scim/v2/"+kind).decode(t, &list)
			for _, r := range list.Resources {
				ask("scim", "/scim/v2/"+kind+"/"+r.ID)
			}
		}
	}
	return out
}

// decode400 asserts a 400 answer.
func (r *response) decode400(t *testing.T) {
	t.Helper()
	if r.status != 400 {
		t.Fatalf("status %d, want 400: %s", r.status, r.body)
	}
}
