package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/bench"
	"github.com/quarryhq/quarry/internal/progress"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/storetest"
)

// rotationKey returns a fresh raw key.
func rotationKey(t *testing.T) []byte {
	t.Helper()
	k, err := store.ParseKey(store.NewKey())
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func keyring(t *testing.T, primary []byte, older ...[]byte) *store.Keyring {
	t.Helper()
	kr, err := store.NewKeyring(primary, older...)
	if err != nil {
		t.Fatal(err)
	}
	return kr
}

// rotationFixture is a database whose secrets are sealed with oldKey.
type rotationFixture struct {
	url            string
	oldKey, newKey []byte
	admin          *quarry.Caller
	secrets        int // Sealed values in all.
	creds          []*quarry.Credential
	tools          []*quarry.Tool
	mcp            *quarry.MCPServer
}

// newRotationFixture makes credentials credentials, 3 custom tools with
// headers and 2 OAuth configs under a first key.
func newRotationFixture(t *testing.T, credentials int) *rotationFixture {
	t.Helper()
	f := &rotationFixture{url: storetest.URL(t), oldKey: rotationKey(t), newKey: rotationKey(t)}
	db := storetest.OpenURL(t, f.url, keyring(t, f.oldKey))
	seeded, err := bench.Seed(ctx, db, bench.SeedSpec{Credentials: credentials, Connectors: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.admin, err = db.Authenticate(ctx, quarry.HashAPIKey(seeded.AdminToken)); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		o, err := db.CreateOAuthConfig(ctx, f.admin, quarry.OAuthConfig{Name: fmt.Sprint("o", i), AuthorizationURL: "https://a.example.com",
			TokenURL: "https://t.example.com", ClientID: "id", ClientSecret: fmt.Sprint("client-secret-", i)})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			_, err = db.CreateTool(ctx, f.admin, quarry.ToolInput{Name: "oauth", Definition: json.RawMessage(`{}`), OAuthConfigID: &o.ID})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := range 2 {
		_, err := db.CreateTool(ctx, f.admin, quarry.ToolInput{Name: fmt.Sprint("t", i), Definition: json.RawMessage(`{}`),
			Headers: []quarry.Header{{Key: "Authorization", Value: fmt.Sprint("Bearer tool-secret-", i)}}})
		if err != nil {
			t.Fatal(err)
		}
	}
	// A person signed in with single sign-on: the session keeps the ID
	// token, and the access and refresh tokens, sealed.
	if _, _, err := db.SignInOIDC(ctx, &quarry.Identity{Issuer: "https://idp.example.com", Subject: "s1", Email: "p@example.com", Role: quarry.RoleBasic},
		quarry.NewSession{Method: quarry.SignInOIDC, IDToken: rotationIDToken, SSOToken: &rotationSSOToken}, testSessions); err != nil {
		t.Fatal(err)
	}
	// The admin connected the first OAuth config, and is connecting the
	// second.
	configs, err := db.OAuthConfigs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SaveOAuthToken(ctx, f.admin, configs[0].ID, rotationToolToken); err != nil {
		t.Fatal(err)
	}
	if err := db.BeginOAuthConnection(ctx, f.admin, rotationState, &quarry.OAuthConnection{OAuthConfigID: configs[1].ID,
		Verifier: rotationVerifier, RedirectURI: "https://q.example.com/oauth-config/callback", ReturnPath: "/"}); err != nil {
		t.Fatal(err)
	}
	// An MCP server with its secrets, the admin's values for its
	// template, its token, and a connection to it in progress.
	perUser, oauth := quarry.MCPPerformerPerUser, quarry.MCPAuthOAuth
	m, err := db.SetUpMCPServer(ctx, f.admin, nil, &quarry.MCPServerSetup{Name: "mcp", ServerURL: "https://mcp.example.com/mcp",
		AuthType: oauth, Performer: &perUser, OAuthClientID: ptr("mcp-client"), OAuthClientSecret: ptr(rotationMCPSecret),
		Template: map[string]string{"X-Tenant": "{tenant}"}}, map[string]string{"tenant": "acme-secret-tenant"})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SaveMCPToken(ctx, f.admin, m.ID, false, rotationToolToken); err != nil {
		t.Fatal(err)
	}
	if err := db.BeginMCPOAuth(ctx, f.admin, rotationState+"-mcp", &quarry.MCPOAuthConnection{ServerID: m.ID,
		Verifier: rotationVerifier, RedirectURI: "https://q.example.com/mcp/oauth/callback", ReturnPath: "/"}); err != nil {
		t.Fatal(err)
	}
	f.mcp = m
	// A model provider with a key, and one without (no secret).
	for _, key := range []*string{ptr(rotationLLMKey), nil} {
		if _, err := db.UpsertLLMProvider(ctx, f.admin, quarry.LLMProviderUpsert{IsCreation: true, Provider: quarry.LLMProviderOpenAI,
			APIKey: key, APIKeyChanged: true, IsPublic: true}); err != nil {
			t.Fatal(err)
		}
	}
	f.secrets = credentials + 3 + 2 + 1 + 3 + 4 + 1
	f.creds, f.tools = f.read(t, db)
	return f
}

// rotationMCPSecret is the client secret of the fixture's MCP server.
const rotationMCPSecret = "mcp-client-secret-0123"

// rotationLLMKey is the key of the fixture's model provider.
const rotationLLMKey = "sk-model-provider-key-0123"

// read returns every credential and tool of db, secrets in clear.
func (f *rotationFixture) read(t *testing.T, db *store.DB) ([]*quarry.Credential, []*quarry.Tool) {
	t.Helper()
	creds, err := db.Credentials(ctx, f.admin)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := db.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return creds, tools
}

// open opens the fixture's database with keys.
func (f *rotationFixture) open(t *testing.T, primary []byte, older ...[]byte) *store.DB {
	t.Helper()
	return storetest.OpenURL(t, f.url, keyring(t, primary, older...))
}

// checkRotated checks that every secret opens with the new key alone and is
// unchanged, and that no version or updated_at moved.
func (f *rotationFixture) checkRotated(t *testing.T) {
	t.Helper()
	db := f.open(t, f.newKey)
	n, _, err := db.SecretsToRotate(ctx)
	if err != nil || n != 0 {
		t.Errorf("after rotation, SecretsToRotate = %d, %v; want 0", n, err)
	}
	creds, tools := f.read(t, db)
	if diff := cmp.Diff(f.creds, creds); diff != "" {
		t.Errorf("credentials changed by the rotation (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(f.tools, tools); diff != "" {
		t.Errorf("tools changed by the rotation (-before +after):\n%s", diff)
	}
	people, _, err := db.People(ctx, quarry.UserFilter{Limit: 10})
	if err != nil || len(people) != 1 {
		t.Fatalf("People = %v, %v", people, err)
	}
	sessions, err := db.Sessions(ctx, "", testSessions)
	if err != nil || len(sessions) != 1 {
		t.Fatalf("Sessions = %v, %v", sessions, err)
	}
	noRefresh := func(context.Context, quarry.OAuthToken) (quarry.OAuthToken, error) {
		t.Error("a token was refreshed")
		return quarry.OAuthToken{}, errors.New("no refresh")
	}
	sso, err := db.SessionToken(ctx, sessions[0].ID, noRefresh)
	if err != nil || sso.AccessToken != rotationSSOToken.AccessToken || sso.RefreshToken != rotationSSOToken.RefreshToken {
		t.Errorf("the session's single sign-on token after the rotation = %+v, %v", sso, err)
	}
	idToken, err := db.CloseSession(ctx, &quarry.Caller{User: people[0].User}, sessions[0].ID)
	if err != nil || idToken != rotationIDToken {
		t.Errorf("the session's ID token after the rotation = %q, %v; want %q", idToken, err, rotationIDToken)
	}
	configs, err := db.OAuthConfigs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := db.ToolToken(ctx, f.admin.ID, configs[0], noRefresh)
	if err != nil || tok.AccessToken != rotationToolToken.AccessToken || tok.RefreshToken != rotationToolToken.RefreshToken {
		t.Errorf("the tool token after the rotation = %+v, %v", tok, err)
	}
	k, err := db.TakeOAuthConnection(ctx, rotationState)
	if err != nil || k.Verifier != rotationVerifier {
		t.Errorf("the connection in progress after the rotation = %+v, %v", k, err)
	}
	m, err := db.MCPServer(ctx, f.mcp.ID)
	if err != nil || !cmp.Equal(m.Config, f.mcp.Config) || m.Version != f.mcp.Version || m.UpdatedAt != f.mcp.UpdatedAt {
		t.Errorf("the MCP server after the rotation = %+v, %v", m, err)
	}
	mcreds, err := db.MCPCredentials(ctx, f.mcp.ID, f.admin.ID)
	if err != nil || mcreds["tenant"] != "acme-secret-tenant" {
		t.Errorf("the MCP credentials after the rotation = %v, %v", mcreds, err)
	}
	mt, err := db.MCPToken(ctx, m, f.admin.ID, noRefresh)
	if err != nil || mt.AccessToken != rotationToolToken.AccessToken {
		t.Errorf("the MCP token after the rotation = %+v, %v", mt, err)
	}
	mk, err := db.TakeMCPOAuth(ctx, rotationState+"-mcp")
	if err != nil || mk.Verifier != rotationVerifier {
		t.Errorf("the MCP connection in progress after the rotation = %+v, %v", mk, err)
	}
	providers, _, err := db.LLMProviders(ctx)
	if err != nil || len(providers) != 2 || providers[0].APIKey != rotationLLMKey || providers[1].APIKey != "" ||
		providers[0].UpdatedAt != providers[0].CreatedAt {
		t.Errorf("the model providers after the rotation = %+v, %v", providers, err)
	}
}

// The tokens of the fixture (not checked by anyone).
var (
	rotationSSOToken  = quarry.OAuthToken{AccessToken: "sso-access-token-0123", RefreshToken: "sso-refresh-token-0123"}
	rotationToolToken = quarry.OAuthToken{AccessToken: "tool-access-token-0123", RefreshToken: "tool-refresh-token-0123", TokenType: "Bearer"}
)

const (
	rotationState    = "state-of-a-connection-in-progress-0123456789"
	rotationVerifier = "verifier-of-a-connection-in-progress-0123456789"
)

// rotationIDToken is the (unchecked) ID token of the fixture's session.
const rotationIDToken = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzMSJ9.c2lnbmF0dXJl"

func TestRotateKeys(t *testing.T) {
	f := newRotationFixture(t, 120)
	db := f.open(t, f.newKey, f.oldKey)
	n, kinds, err := db.SecretsToRotate(ctx)
	if err != nil || n != f.secrets {
		t.Fatalf("SecretsToRotate = %d, %v; want %d", n, err, f.secrets)
	}
	wantKinds := []store.KindCount{{"credentials", 120}, {"tool header sets", 3}, {"OAuth client secrets", 2}, {"session ID tokens", 1},
		{"tool OAuth tokens", 1}, {"single sign-on tokens", 1}, {"OAuth connections in progress", 1},
		{"MCP server secret sets", 1}, {"MCP credential sets", 1}, {"MCP OAuth tokens", 1}, {"MCP OAuth connections in progress", 1},
		{"model provider keys", 1}}
	if diff := cmp.Diff(wantKinds, kinds); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
	var counts []progress.Count
	res, err := db.RotateKeys(ctx, store.RotateOptions{BatchSize: 50, Progress: func(c progress.Count) { counts = append(counts, c) }})
	if err != nil {
		t.Fatal(err)
	}
	if res.Found != f.secrets || res.Rotated != f.secrets || res.Remaining != 0 || res.Concurrent != 0 {
		t.Errorf("result %+v; want %d found and rotated, none remaining", res, f.secrets)
	}
	if diff := cmp.Diff(wantKinds, res.RotatedKinds); diff != "" {
		t.Errorf("rotated kinds (-want +got):\n%s", diff)
	}
	if !strings.Contains(res.Summary(), "re-encrypted 134 secrets (120 credentials, 3 tool header sets, 2 OAuth client secrets, 1 session ID token, "+
		"1 tool OAuth token, 1 single sign-on token, 1 OAuth connection in progress, 1 MCP server secret set, 1 MCP credential set, "+
		"1 MCP OAuth token, 1 MCP OAuth connection in progress, 1 model provider key)") {
		t.Errorf("summary %q", res.Summary())
	}
	// 50 + 50 + 20 credentials, then 3 tools, 2 OAuth configs, 1 session,
	// 1 tool token, 1 session's tokens, 1 connection, the MCP server's
	// four and the model provider's key.
	var wantProgress []progress.Count
	for _, n := range []int64{50, 100, 120, 123, 125, 126, 127, 128, 129, 130, 131, 132, 133, 134} {
		wantProgress = append(wantProgress, progress.Count{Done: n, Total: 134})
	}
	if diff := cmp.Diff(wantProgress, counts); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
	check, err := f.open(t, f.newKey).CheckSecrets(ctx, store.CheckOptions{})
	if err != nil || check.Opened != f.secrets || check.Failed != 0 || !cmp.Equal(check.OpenedKinds, wantKinds) {
		t.Errorf("quarry check after the rotation: %+v, %v", check, err)
	}
	f.checkRotated(t)

	events, _, err := db.AuditEvents(ctx, quarry.AuditFilter{ResourceType: ptr("encryption_key")})
	if err != nil {
		t.Fatal(err)
	}
	if e := events[0]; e.Action != "encryption_key.rotate" || e.ResourceID != res.PrimaryKeyID ||
		!cmp.Equal(e.Fields, []string{"credential_json", "custom_headers", "client_secret", "id_token", "oauth_token", "sso_token", "oauth_state",
			"mcp_config", "mcp_credentials", "mcp_token", "mcp_oauth_state", "api_key"}) {
		t.Errorf("last audit event %+v; want the rotation", e)
	}

	again, err := db.RotateKeys(ctx, store.RotateOptions{})
	if err != nil || again.Found != 0 || again.Rotated != 0 {
		t.Errorf("second run: %+v, %v; want nothing to do", again, err)
	}
}

func TestRotateKeysResumes(t *testing.T) {
	f := newRotationFixture(t, 90)
	db := f.open(t, f.newKey, f.oldKey)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	res, err := db.RotateKeys(cctx, store.RotateOptions{BatchSize: 40, Progress: func(progress.Count) { cancel() }})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: err = %v, want context.Canceled", err)
	}
	if res.Rotated != 40 {
		t.Errorf("interrupted run rotated %d, want one batch of 40", res.Rotated)
	}
	// What it did is in the audit log, though its context was cancelled.
	action := "encryption_key.rotate"
	if events, _, err := db.AuditEvents(ctx, quarry.AuditFilter{Action: &action, Limit: 10}); err != nil || len(events) != 1 {
		t.Errorf("audit entries of the interrupted run: %d, %v; want 1", len(events), err)
	}
	if n, _, err := db.SecretsToRotate(ctx); err != nil || n != f.secrets-40 {
		t.Errorf("after interruption, SecretsToRotate = %d, %v; want %d", n, err, f.secrets-40)
	}
	// The server, still holding both keys, reads everything meanwhile.
	creds, tools := f.read(t, db)
	if !cmp.Equal(f.creds, creds) || !cmp.Equal(f.tools, tools) {
		t.Error("half-rotated database does not read as before")
	}
	res, err = db.RotateKeys(ctx, store.RotateOptions{BatchSize: 40})
	if err != nil {
		t.Fatal(err)
	}
	if res.Found != f.secrets-40 || res.Rotated != f.secrets-40 || res.Remaining != 0 {
		t.Errorf("rerun %+v; want the %d left rotated", res, f.secrets-40)
	}
	f.checkRotated(t)
}

func TestRotateKeysWithoutTheOldKey(t *testing.T) {
	f := newRotationFixture(t, 10)
	for name, older := range map[string][][]byte{"missing": nil, "wrong": {rotationKey(t)}} {
		t.Run(name, func(t *testing.T) {
			db := f.open(t, f.newKey, older...)
			res, err := db.RotateKeys(ctx, store.RotateOptions{})
			var ue *store.UnreadableSecretsError
			if !errors.As(err, &ue) {
				t.Fatalf("err = %v, want an UnreadableSecretsError", err)
			}
			if ue.Count != f.secrets || res.Rotated != 0 {
				t.Errorf("%d unreadable, %d rotated; want %d, 0", ue.Count, res.Rotated, f.secrets)
			}
			msg := err.Error()
			for _, want := range []string{"24 secrets (10 credentials, 3 tool header sets, 2 OAuth client secrets, 1 session ID token, 1 tool OAuth token, " +
				"1 single sign-on token, 1 OAuth connection in progress, 1 MCP server secret set, 1 MCP credential set, 1 MCP OAuth token, " +
				"1 MCP OAuth connection in progress, 1 model provider key) cannot be opened",
				"QUARRY_OLD_ENCRYPTION_KEYS", "nothing was changed"} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not say %q", msg, want)
				}
			}
			if strings.Contains(msg, "secret-") {
				t.Errorf("error %q shows a secret", msg)
			}
		})
	}
	// Nothing changed: the old key still opens everything.
	creds, tools := f.read(t, f.open(t, f.oldKey))
	if !cmp.Equal(f.creds, creds) || !cmp.Equal(f.tools, tools) {
		t.Error("a failed rotation changed the database")
	}
}

// TestRotateKeysConcurrentWrites rotates while another handle (a server
// with both keys) keeps changing credentials: no write is lost.
func TestRotateKeysConcurrentWrites(t *testing.T) {
	f := newRotationFixture(t, 60)
	db, server := f.open(t, f.newKey, f.oldKey), f.open(t, f.newKey, f.oldKey)
	last := make(map[int64]map[string]any)
	var mu sync.Mutex
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				k := f.creds[(i*3+w)%len(f.creds)]
				u := quarry.CredentialUpdate{}
				name := fmt.Sprint("w", w, "-", i)
				np := &name
				u.Name = &np
				var j map[string]any
				if i%2 == 0 { // Every other update leaves the secret as it is.
					j = map[string]any{"token": fmt.Sprint("s-", w, "-", i)}
					u.CredentialJSON = j
				}
				if _, err := server.UpdateCredential(ctx, f.admin, k.ID, u); err != nil {
					t.Error(err)
					return
				}
				if j != nil {
					mu.Lock()
					last[k.ID] = j
					mu.Unlock()
				}
			}
		}()
	}
	var res *store.RotateResult
	var err error
	for range 3 { // Sometimes the writers finish the rotation's work first.
		if res, err = db.RotateKeys(ctx, store.RotateOptions{BatchSize: 7}); err != nil || res.Rotated > 0 {
			break
		}
	}
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.RotateKeys(ctx, store.RotateOptions{}); err != nil { // Whatever a writer sealed with the old key last.
		t.Fatal(err)
	}
	t.Logf("rotation %+v", res)
	final := f.open(t, f.newKey)
	if n, _, err := final.SecretsToRotate(ctx); err != nil || n != 0 {
		t.Errorf("SecretsToRotate = %d, %v; want 0", n, err)
	}
	creds, err := final.Credentials(ctx, f.admin)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range creds {
		want, ok := last[k.ID]
		if !ok {
			continue
		}
		got, err := quarry.DecodeObject(k.CredentialJSON)
		if err != nil {
			t.Fatal(err)
		}
		if !cmp.Equal(want, got) {
			t.Errorf("credential %d: %v, want the last written %v", k.ID, got, want)
		}
	}
}
