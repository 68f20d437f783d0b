package store_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/store"
)

// mcpFixture is a token fixture (an admin and a person) with an MCP
// server called with each person's credentials and OAuth token.
func newMCPServer(t *testing.T, f *tokenFixture, in quarry.MCPServerSetup) *quarry.MCPServer {
	t.Helper()
	m, err := f.db.SetUpMCPServer(ctx, f.admin, nil, &in, nil)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestMCPServerStore(t *testing.T) {
	f := newTokenFixture(t)
	perUser, oauth := quarry.MCPPerformerPerUser, quarry.MCPAuthOAuth
	m := newMCPServer(t, f, quarry.MCPServerSetup{Name: "desk", ServerURL: "https://mcp.example.com/mcp", AuthType: oauth,
		Performer: &perUser, OAuthClientID: ptr("client"), OAuthClientSecret: ptr("client-secret"),
		Template: map[string]string{"X-Tenant": "{tenant}"}})
	if m.Status != quarry.MCPAwaitingAuth || *m.Transport != quarry.MCPStreamableHTTP || m.OwnerEmail == "" ||
		!cmp.Equal(m.Config, quarry.MCPConfig{HeaderTemplate: map[string]string{"X-Tenant": "{tenant}"},
			OAuth: &quarry.MCPOAuthClient{ClientID: "client", ClientSecret: "client-secret"}}) {
		t.Fatalf("server %+v", m)
	}

	t.Run("tools follow the server's listing", func(t *testing.T) {
		sync1, err := f.db.SyncMCPTools(ctx, f.admin, m.ID, []quarry.MCPToolInfo{
			{Name: "echo", DisplayName: "Echo", Description: "Echoes", InputSchema: []byte(`{"type":"object"}`)},
			{Name: "add", DisplayName: "add", Description: "Adds", InputSchema: []byte(`{"type":"object"}`)},
		})
		if err != nil || !slices.Equal(sync1.Created, []string{"echo", "add"}) {
			t.Fatal(sync1, err)
		}
		sync2, err := f.db.SyncMCPTools(ctx, f.admin, m.ID, []quarry.MCPToolInfo{
			{Name: "echo", DisplayName: "Echo", Description: "Echoes back", InputSchema: []byte(`{"type":"object"}`)},
			{Name: "mul", DisplayName: "mul", Description: "Multiplies", InputSchema: []byte(`{"type":"object","properties":{}}`)},
		})
		if err != nil || !cmp.Equal(sync2, &quarry.MCPToolSync{Created: []string{"mul"}, Updated: []string{"echo"}, Deleted: []string{"add"}}) {
			t.Fatal(sync2, err)
		}
		tools, err := f.db.MCPToolsOf(ctx, m.ID)
		if err != nil || len(tools) != 2 || tools[0].Name != "echo" || *tools[0].Description != "Echoes back" || tools[0].Enabled ||
			*tools[1].UserID != f.admin.ID || string(tools[1].MCPInputSchema) != `{"type":"object","properties":{}}` {
			t.Fatalf("tools %+v", tools)
		}
		v1, _ := f.db.ToolCatalogVersion(ctx)
		_, n, err := f.db.SelectMCPTools(ctx, f.admin, m.ID, nil, nil, []string{"mul"})
		v2, _ := f.db.ToolCatalogVersion(ctx)
		if err != nil || n != 1 || v1 == v2 {
			t.Errorf("select: %d %v; catalog version %s then %s", n, err, v1, v2)
		}
		if got, _ := f.db.MCPServer(ctx, m.ID); got.Status != quarry.MCPConnected || got.LastRefreshedAt == nil || got.ToolCount != 2 {
			t.Errorf("after listing: %+v", got)
		}
	})

	t.Run("what people give is forgotten when the server changes", func(t *testing.T) {
		if err := f.db.SaveMCPCredentials(ctx, f.person, m.ID, map[string]string{"tenant": "acme"}); err != nil {
			t.Fatal(err)
		}
		if err := f.db.SaveMCPToken(ctx, f.person, m.ID, false, quarry.OAuthToken{AccessToken: "a", RefreshToken: "r", ExpiresIn: time.Hour}); err != nil {
			t.Fatal(err)
		}
		same := quarry.MCPServerSetup{Name: "desk renamed", ServerURL: "https://mcp.example.com/mcp", AuthType: oauth, Performer: &perUser,
			OAuthClientID: ptr(quarry.MaskString("client")), OAuthClientSecret: ptr(quarry.MaskString("client-secret")),
			Template: map[string]string{"X-Tenant": "{tenant}"}}
		if _, err := f.db.SetUpMCPServer(ctx, f.admin, &m.ID, &same, nil); err != nil {
			t.Fatal(err)
		}
		creds, tokens, _ := f.db.MCPConnections(ctx, f.person.ID)
		if !creds[m.ID] || !tokens[m.ID] {
			t.Fatalf("a rename forgot: %v %v", creds, tokens)
		}
		other := same
		other.Template = map[string]string{"X-Tenant": "{tenant}", "X-Region": "{region}"}
		if _, err := f.db.SetUpMCPServer(ctx, f.admin, &m.ID, &other, nil); err != nil {
			t.Fatal(err)
		}
		creds, tokens, _ = f.db.MCPConnections(ctx, f.person.ID)
		if creds[m.ID] || tokens[m.ID] {
			t.Errorf("a new template kept: %v %v", creds, tokens)
		}
		events, _, err := f.db.AuditEvents(ctx, quarry.AuditFilter{ResourceType: ptr("mcp_server"), Limit: 1})
		if err != nil || len(events) != 1 || !slices.Equal(events[0].Fields, []string{"auth_template", "status", "connections"}) {
			t.Errorf("audit %+v", events[0])
		}
	})

	t.Run("one refresh at a time", func(t *testing.T) {
		if err := f.db.SaveMCPToken(ctx, f.person, m.ID, false, quarry.OAuthToken{AccessToken: "a0", RefreshToken: "r0", ExpiresIn: time.Minute}); err != nil {
			t.Fatal(err)
		}
		f.clock.advance(2 * time.Minute)
		r := &refresher{next: rotating, delay: 50 * time.Millisecond}
		replica := f.open(t)
		var wg sync.WaitGroup
		for i := range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				db := []*store.DB{f.db, replica}[i%2]
				tok, err := db.MCPToken(ctx, m, f.person.ID, r.refresh)
				if err != nil || tok.AccessToken != "access-1" {
					t.Errorf("token %v, %v", tok, err)
				}
			}()
		}
		wg.Wait()
		if n := r.calls.Load(); n != 1 {
			t.Errorf("%d refreshes, want 1", n)
		}
		_, err := f.db.MCPToken(ctx, m, "someone-else", r.refresh)
		if quarry.ErrorCode(err) != quarry.ECONFLICT {
			t.Errorf("no token: %v", err)
		}
	})

	t.Run("connections in progress are used once", func(t *testing.T) {
		k := &quarry.MCPOAuthConnection{ServerID: m.ID, Verifier: "v", RedirectURI: "https://q/mcp/oauth/callback", ReturnPath: "/x"}
		if err := f.db.BeginMCPOAuth(ctx, f.person, "state-1", k); err != nil {
			t.Fatal(err)
		}
		got, err := f.db.TakeMCPOAuth(ctx, "state-1")
		if err != nil || !cmp.Equal(got, &quarry.MCPOAuthConnection{UserID: f.person.ID, ServerID: m.ID, Verifier: "v",
			RedirectURI: "https://q/mcp/oauth/callback", ReturnPath: "/x"}) {
			t.Fatal(got, err)
		}
		if _, err := f.db.TakeMCPOAuth(ctx, "state-1"); quarry.ErrorCode(err) != quarry.EINVALID {
			t.Errorf("second take: %v", err)
		}
	})

	t.Run("deactivation forgets a person's", func(t *testing.T) {
		f.db.SaveMCPCredentials(ctx, f.person, m.ID, map[string]string{"tenant": "acme", "region": "eu"})
		f.db.SaveMCPToken(ctx, f.person, m.ID, false, quarry.OAuthToken{AccessToken: "a"})
		if err := f.db.SetActive(ctx, f.admin, f.person.Email, false); err != nil {
			t.Fatal(err)
		}
		creds, tokens, _ := f.db.MCPConnections(ctx, f.person.ID)
		if len(creds)+len(tokens) != 0 {
			t.Errorf("kept %v %v", creds, tokens)
		}
	})

	t.Run("deleting the server deletes its tools", func(t *testing.T) {
		if err := f.db.DeleteMCPServer(ctx, f.admin, m.ID); err != nil {
			t.Fatal(err)
		}
		if tools, _ := f.db.MCPToolsOf(ctx, m.ID); len(tools) != 0 {
			t.Errorf("tools left: %v", tools)
		}
		if _, err := f.db.MCPServer(ctx, m.ID); quarry.ErrorCode(err) != quarry.ENOTFOUND {
			t.Errorf("server: %v", err)
		}
	})
}
