package quarry

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func ptr[T any](v T) *T { return &v }

func TestCheckEditMCPServer(t *testing.T) {
	owner := "u-owner"
	s := &MCPServer{OwnerID: &owner}
	orphan := &MCPServer{}
	for _, tt := range []struct {
		name   string
		c      Caller
		s      *MCPServer
		allow  bool
		detail bool
	}{
		{"admin", Caller{User: User{ID: "a", Role: RoleAdmin}}, s, true, true},
		{"admin, orphan", Caller{User: User{ID: "a", Role: RoleAdmin}}, orphan, true, true},
		{"owner curator", Caller{User: User{ID: owner, Role: RoleCurator}}, s, true, true},
		{"owner global curator", Caller{User: User{ID: owner, Role: RoleGlobalCurator}}, s, true, true},
		{"other curator", Caller{User: User{ID: "c", Role: RoleCurator}}, s, false, false},
		{"curator, orphan", Caller{User: User{ID: "c", Role: RoleCurator}}, orphan, false, false},
		{"owner demoted to basic", Caller{User: User{ID: owner, Role: RoleBasic}}, s, false, true},
		{"basic", Caller{User: User{ID: "b", Role: RoleBasic}}, s, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.c.CheckEditMCPServer(tt.s)
			if (err == nil) != tt.allow {
				t.Errorf("CheckEditMCPServer = %v, want allowed %v", err, tt.allow)
			}
			if err != nil && err != ErrNotYourMCPServer {
				t.Errorf("refusal %v, want ErrNotYourMCPServer", err)
			}
			if got := tt.c.CanSeeMCPServerDetails(tt.s); got != tt.detail {
				t.Errorf("CanSeeMCPServerDetails = %v, want %v", got, tt.detail)
			}
		})
	}
}

func TestMCPServerSetupCheck(t *testing.T) {
	admin, perUser := ptr(MCPPerformerAdmin), ptr(MCPPerformerPerUser)
	for _, tt := range []struct {
		name     string
		in       MCPServerSetup
		creating bool
		want     string
	}{
		{"none", MCPServerSetup{ServerURL: "https://m.example.com/mcp", AuthType: MCPAuthNone}, true, ""},
		{"bad url", MCPServerSetup{ServerURL: "ftp://m", AuthType: MCPAuthNone}, true, "Invalid server_url: it must be an absolute http:// or https:// URL"},
		{"url with password", MCPServerSetup{ServerURL: "https://u:p@m/mcp", AuthType: MCPAuthNone}, true, "Invalid server_url: it must not contain a user name or password; send credentials in headers"},
		{"no url", MCPServerSetup{ServerURL: " ", AuthType: MCPAuthNone}, true, "server_url is required"},
		{"stdio", MCPServerSetup{ServerURL: "https://m/mcp", AuthType: MCPAuthNone, Transport: ptr(MCPStdio)}, true,
			"The STDIO transport is not supported: Quarry connects to MCP servers over HTTP (STREAMABLE_HTTP or SSE)"},
		{"no performer", MCPServerSetup{ServerURL: "https://m/mcp", AuthType: MCPAuthAPIToken}, true, "auth_performer is required for non-none auth types"},
		{"admin token missing", MCPServerSetup{ServerURL: "https://m/mcp", AuthType: MCPAuthAPIToken, Performer: admin}, true,
			"api_token is required when auth_type is 'api_token' and auth_performer is 'admin'"},
		{"admin token missing on update", MCPServerSetup{ServerURL: "https://m/mcp", AuthType: MCPAuthAPIToken, Performer: admin}, false, ""},
		{"admin template without api_key", MCPServerSetup{ServerURL: "https://m/mcp", AuthType: MCPAuthAPIToken, Performer: admin,
			APIToken: ptr("t"), Template: map[string]string{"X-Key": "{key}"}}, true, "Shared API-token header templates must include the {api_key} placeholder"},
		{"per user with token", MCPServerSetup{ServerURL: "https://m/mcp", AuthType: MCPAuthAPIToken, Performer: perUser,
			APIToken: ptr("t"), Template: map[string]string{"X-Key": "{api_key}"}}, true,
			"api_token should not be provided when auth_performer is 'per_user'. Users will provide their own credentials."},
		{"per user without template", MCPServerSetup{ServerURL: "https://m/mcp", AuthType: MCPAuthAPIToken, Performer: perUser}, true,
			"auth_template is required when auth_performer is 'per_user'"},
		{"bad header name", MCPServerSetup{ServerURL: "https://m/mcp", AuthType: MCPAuthNone, Template: map[string]string{"X Key": "v"}}, true,
			`Invalid MCP header name: "X Key"`},
		{"host header", MCPServerSetup{ServerURL: "https://m/mcp", AuthType: MCPAuthNone, Template: map[string]string{"Host": "v"}}, true,
			`MCP header "Host" is not allowed: the HTTP client sets it for each call`},
		{"duplicate header", MCPServerSetup{ServerURL: "https://m/mcp", AuthType: MCPAuthNone, Template: map[string]string{"X-A": "1", "x-a": "2"}}, true,
			`Duplicate MCP header name: "x-a"`},
		{"header injection", MCPServerSetup{ServerURL: "https://m/mcp", AuthType: MCPAuthNone, Template: map[string]string{"X-A": "1\r\nX-B: 2"}}, true,
			`The value of MCP header "X-A" is not a valid HTTP header value: it must not contain control characters such as CR or LF`},
		{"known provider without endpoints", MCPServerSetup{ServerURL: "https://m/mcp", AuthType: MCPAuthOAuth, Performer: perUser,
			ProviderMode: MCPKnownProvider}, true, "oauth_authorization_endpoint is required for known-provider OAuth mode"},
		{"known provider http", MCPServerSetup{ServerURL: "https://m/mcp", AuthType: MCPAuthOAuth, Performer: perUser,
			ProviderMode: MCPKnownProvider, AuthorizationEndpoint: ptr("http://idp.example.com/a"), TokenEndpoint: ptr("https://idp/t")}, true,
			"Invalid oauth_authorization_endpoint: it must be an absolute https:// URL (http:// only for localhost or a loopback address)"},
		{"known provider, state in the query", MCPServerSetup{ServerURL: "https://m/mcp", AuthType: MCPAuthOAuth, Performer: perUser,
			ProviderMode: MCPKnownProvider, AuthorizationEndpoint: ptr("https://idp.example.com/a?state=x"), TokenEndpoint: ptr("https://idp/t")}, true,
			`Invalid oauth_authorization_endpoint: it must not set "state" in its query: Quarry sets it for each authorization request`},
		{"known provider, an ordinary query", MCPServerSetup{ServerURL: "https://m/mcp", AuthType: MCPAuthOAuth, Performer: perUser,
			ProviderMode: MCPKnownProvider, AuthorizationEndpoint: ptr("https://idp.example.com/a?tenant=x"), TokenEndpoint: ptr("https://idp/t?client_id=y")}, true, ""},
		{"reserved auth param", MCPServerSetup{ServerURL: "https://m/mcp", AuthType: MCPAuthOAuth, Performer: perUser,
			AdditionalAuthParams: map[string]string{"redirect_uri": "x"}}, true,
			`additional_params cannot set "redirect_uri": Quarry sets it for each authorization request`},
		{"oauth", MCPServerSetup{ServerURL: "https://m/mcp", AuthType: MCPAuthOAuth, Performer: perUser}, true, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.in.Check(tt.creating)
			got := ""
			if err != nil {
				got = ErrorMessage(err)
				if ErrorCode(err) != EINVALID {
					t.Errorf("code %s, want invalid", ErrorCode(err))
				}
			}
			if got != tt.want {
				t.Errorf("Check = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestMCPServerSetupApply(t *testing.T) {
	admin, perUser := ptr(MCPPerformerAdmin), ptr(MCPPerformerPerUser)
	apiToken := MCPAuthAPIToken
	oauth := MCPAuthOAuth
	streamable := MCPStreamableHTTP
	stored := &MCPServer{ID: 1, Name: "kit", ServerURL: "https://m/mcp", AuthType: &apiToken, Performer: admin,
		Transport: &streamable, Status: MCPConnected, ProviderMode: MCPAutoDiscovery,
		Config: MCPConfig{APIToken: "secret-token-123456", HeaderTemplate: map[string]string{"X-Key": "{api_key}", "X-Static": "static-secret-value"}}}
	t.Run("new server gets the default template", func(t *testing.T) {
		in := &MCPServerSetup{Name: "kit", ServerURL: "https://m/mcp", AuthType: MCPAuthAPIToken, Performer: admin, APIToken: ptr("tok")}
		next, forget, err := in.Apply(nil)
		if err != nil || forget {
			t.Fatal(err, forget)
		}
		want := MCPConfig{APIToken: "tok", HeaderTemplate: map[string]string{"Authorization": "Bearer {api_key}"}}
		if diff := cmp.Diff(want, next.Config); diff != "" {
			t.Error(diff)
		}
		if *next.Transport != MCPStreamableHTTP || next.Status != MCPConnected {
			t.Errorf("transport %v, status %v", *next.Transport, next.Status)
		}
	})
	t.Run("masked echoes keep the secrets", func(t *testing.T) {
		in := &MCPServerSetup{Name: "kit2", ServerURL: "https://m/mcp", AuthType: MCPAuthAPIToken, Performer: admin,
			APIToken: ptr(MaskString("secret-token-123456")),
			Template: map[string]string{"X-Key": "{api_key}", "X-Static": MaskString("static-secret-value")}}
		next, forget, err := in.Apply(stored)
		if err != nil || forget {
			t.Fatal(err, forget)
		}
		if diff := cmp.Diff(stored.Config, next.Config); diff != "" {
			t.Error(diff)
		}
		if got := MCPServerChangedFields(stored, next); !slices.Equal(got, []string{"name"}) {
			t.Errorf("changed fields %v", got)
		}
	})
	t.Run("a new template forgets people's connections", func(t *testing.T) {
		in := &MCPServerSetup{Name: "kit", ServerURL: "https://m/mcp", AuthType: MCPAuthAPIToken, Performer: admin,
			Template: map[string]string{"X-Key": "{api_key}"}}
		next, forget, err := in.Apply(stored)
		if err != nil || !forget {
			t.Fatal(err, forget)
		}
		if next.Config.APIToken != "secret-token-123456" {
			t.Errorf("token %q", next.Config.APIToken)
		}
	})
	t.Run("another URL forgets them too", func(t *testing.T) {
		in := &MCPServerSetup{Name: "kit", ServerURL: "https://other/mcp", AuthType: MCPAuthAPIToken, Performer: admin}
		_, forget, err := in.Apply(stored)
		if err != nil || !forget {
			t.Fatal(err, forget)
		}
	})
	t.Run("OAuth client: a new id drops what was registered", func(t *testing.T) {
		old := &MCPServer{ID: 2, Name: "o", ServerURL: "https://m/mcp", AuthType: &oauth, Performer: perUser, Transport: &streamable,
			ProviderMode: MCPAutoDiscovery, Config: MCPConfig{OAuth: &MCPOAuthClient{ClientID: "dyn", Registered: true,
				AuthorizationEndpoint: "https://idp/a", TokenEndpoint: "https://idp/t", RedirectURI: "https://q/mcp/oauth/callback"}}}
		in := &MCPServerSetup{Name: "o", ServerURL: "https://m/mcp", AuthType: MCPAuthOAuth, Performer: perUser,
			OAuthClientID: ptr("given"), OAuthClientSecret: ptr("s3cret"), OAuthClientIDChanged: true, OAuthClientSecretChanged: true}
		next, forget, err := in.Apply(old)
		if err != nil || !forget {
			t.Fatal(err, forget)
		}
		if diff := cmp.Diff(&MCPOAuthClient{ClientID: "given", ClientSecret: "s3cret"}, next.Config.OAuth); diff != "" {
			t.Error(diff)
		}
		if next.Status != MCPAwaitingAuth {
			t.Errorf("status %v", next.Status)
		}
		// Unchanged flags keep the stored client and its discovery.
		in2 := &MCPServerSetup{Name: "o", ServerURL: "https://m/mcp", AuthType: MCPAuthOAuth, Performer: perUser,
			OAuthClientID: ptr("ignored")}
		next2, forget2, err := in2.Apply(next)
		if err != nil || forget2 || next2.Config.OAuth.ClientID != "given" {
			t.Fatal(err, forget2, next2.Config.OAuth)
		}
	})
}

func TestMCPAuthTemplate(t *testing.T) {
	tpl := NewMCPAuthTemplate(map[string]string{"Authorization": "Bearer {api_key}", "X-User": "{user_email}", "X-Team": "{team}-{region}"})
	if !slices.Equal(tpl.RequiredFields, []string{"api_key", "region", "team"}) {
		t.Errorf("required fields %v", tpl.RequiredFields)
	}
	got, err := tpl.Render(map[string]string{"api_key": "k", "team": "t", "region": "eu"}, "ann@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"Authorization": "Bearer k", "X-User": "ann@example.com", "X-Team": "t-eu"}, got); diff != "" {
		t.Error(diff)
	}
	if _, err := tpl.Render(map[string]string{"api_key": "k"}, "a@b.c"); ErrorMessage(err) != "Missing MCP header substitutions: region, team" {
		t.Errorf("missing: %v", err)
	}
	if _, err := tpl.Render(map[string]string{"api_key": "k\r\nX-Evil: 1", "team": "t", "region": "r"}, "a@b.c"); err == nil ||
		!strings.Contains(ErrorMessage(err), "not a valid HTTP header value") {
		t.Errorf("injection: %v", err)
	}
	if strings.Contains(ErrorMessage(func() error {
		_, err := tpl.Render(map[string]string{"api_key": "very-secret\n", "team": "t", "region": "r"}, "a")
		return err
	}()), "very-secret") {
		t.Error("the message shows the value")
	}
	masked := NewMCPAuthTemplate(map[string]string{"A": "{x}", "B": "plain-static-secret"}).Masked()
	if masked.Headers["A"] != "{x}" || masked.Headers["B"] != MaskString("plain-static-secret") {
		t.Errorf("masked %v", masked.Headers)
	}
}

func TestMCPToolName(t *testing.T) {
	for _, tt := range []struct{ prefix, name, want string }{
		{"tickets", "get_ticket", "tickets__get_ticket"},
		{"My Tools!", "get.thing/x", "My_Tools___get_thing_x"},
		{"", "x", "___x"},
		{strings.Repeat("p", 200), "method", strings.Repeat("p", 128-2-6) + "__method"},
		{"p", strings.Repeat("m", 200), "p__" + strings.Repeat("m", 125)[:123]},
	} {
		got := MCPToolName(tt.prefix, tt.name)
		if tt.name == strings.Repeat("m", 200) {
			if len(got) > MCPNameLimit || !strings.HasPrefix(got, "p__mmm") {
				t.Errorf("MCPToolName(p, long) = %q (%d)", got, len(got))
			}
			continue
		}
		if got != tt.want || len(got) > MCPNameLimit {
			t.Errorf("MCPToolName(%q, %q) = %q, want %q", tt.prefix, tt.name, got, tt.want)
		}
	}
}

func TestMCPStatusAndAuth(t *testing.T) {
	none, apiToken, oauth, pt := MCPAuthNone, MCPAuthAPIToken, MCPAuthOAuth, MCPAuthPTOAuth
	admin, perUser := ptr(MCPPerformerAdmin), ptr(MCPPerformerPerUser)
	for _, tt := range []struct {
		name            string
		s               MCPServer
		userAuth, share bool
		initial         MCPServerStatus
	}{
		{"none", MCPServer{AuthType: &none, Performer: admin}, false, false, MCPConnected},
		{"admin token", MCPServer{AuthType: &apiToken, Performer: admin}, false, false, MCPConnected},
		{"per-user token", MCPServer{AuthType: &apiToken, Performer: perUser}, true, false, MCPAwaitingAuth},
		{"shared oauth", MCPServer{AuthType: &oauth, Performer: admin}, false, true, MCPAwaitingAuth},
		{"per-user oauth", MCPServer{AuthType: &oauth, Performer: perUser}, true, false, MCPAwaitingAuth},
		{"passthrough", MCPServer{AuthType: &pt, Performer: perUser}, true, false, MCPAwaitingAuth},
	} {
		if got := tt.s.RequiresUserAuth(); got != tt.userAuth {
			t.Errorf("%s: RequiresUserAuth = %v", tt.name, got)
		}
		if got := tt.s.SharedOAuth(); got != tt.share {
			t.Errorf("%s: SharedOAuth = %v", tt.name, got)
		}
		if got := MCPInitialStatus(&tt.s); got != tt.initial {
			t.Errorf("%s: MCPInitialStatus = %v", tt.name, got)
		}
	}
	if MCPStatusAfterListing(MCPDisconnected, nil) != MCPDisconnected || MCPStatusAfterListing(MCPCreated, nil) != MCPConnected ||
		MCPStatusAfterListing(MCPConnected, ErrNotYourMCPServer) != MCPAwaitingAuth {
		t.Error("MCPStatusAfterListing")
	}
	if got := TruncateDescription(strings.Repeat("é", 600)); len([]rune(got)) != 500 || !strings.HasSuffix(got, "...") {
		t.Errorf("TruncateDescription: %d runes", len([]rune(got)))
	}
}

func TestCheckMCPToolRun(t *testing.T) {
	apiToken, stdio, streamable := MCPAuthAPIToken, MCPStdio, MCPStreamableHTTP
	perUser := ptr(MCPPerformerPerUser)
	ready := &MCPServer{ID: 4, Name: "kit", AuthType: &apiToken, Performer: perUser, Transport: &streamable, Status: MCPConnected}
	offline := *ready
	offline.Status = MCPDisconnected
	bare := &MCPServer{ID: 4, Name: "kit", Status: MCPCreated}
	local := *ready
	local.Transport = &stdio
	basic := Caller{User: User{ID: "b", Role: RoleBasic}}
	on := &Tool{ID: 9, Enabled: true, MCPServerID: ptr(int64(4))}
	off := &Tool{ID: 9, MCPServerID: ptr(int64(4))}
	for _, tt := range []struct {
		name string
		c    Caller
		t    *Tool
		s    *MCPServer
		code string
		msg  string
	}{
		{"a person runs an enabled tool", basic, on, ready, "", ""},
		{"limited", Caller{User: User{ID: "l", Role: RoleLimited}}, on, ready, EFORBIDDEN, "Access denied. User has limited permissions."},
		{"a disabled tool", basic, off, ready, ECONFLICT, "Tool 9 is disabled; an admin or its owner can enable it with PATCH /admin/tool/status"},
		{"a server taken offline", basic, on, &offline, ECONFLICT,
			"The MCP server kit is disconnected; an admin or its owner can set its status again with PATCH /admin/mcp/server/4/status"},
		{"a server not configured", basic, on, bare, ECONFLICT,
			"The MCP server kit has no authentication configured yet; an admin or its owner configures it with POST /admin/mcp/servers/create"},
		{"STDIO", basic, on, &local, ECONFLICT, "The MCP server kit uses the STDIO transport, which Quarry does not support"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.c.CheckMCPToolRun(tt.t, tt.s)
			if tt.code == "" {
				if err != nil {
					t.Fatalf("CheckMCPToolRun: %v", err)
				}
				return
			}
			if ErrorCode(err) != tt.code || ErrorMessage(err) != tt.msg {
				t.Errorf("CheckMCPToolRun: %s %q, want %s %q", ErrorCode(err), ErrorMessage(err), tt.code, tt.msg)
			}
		})
	}
}

// TestConnectMCPFirst: a missing connection says which call makes it.
func TestConnectMCPFirst(t *testing.T) {
	apiToken, oauth, sse := MCPAuthAPIToken, MCPAuthOAuth, MCPSSE
	admin, perUser := ptr(MCPPerformerAdmin), ptr(MCPPerformerPerUser)
	for _, tt := range []struct {
		name string
		s    *MCPServer
		step MCPConnectionStep
		want string
	}{
		{"the person's values", &MCPServer{ID: 3, Name: "crm", AuthType: &apiToken, Performer: perUser, Transport: &sse}, MCPNeedsCredentials,
			`This tool calls the MCP server crm with your own credentials, and you have not given them. Save them with POST /mcp/user-credentials {"server_id": 3, "credentials": {...}, "transport": "SSE"}, then run it again.`},
		{"the person's OAuth account", &MCPServer{ID: 3, Name: "crm", AuthType: &oauth, Performer: perUser}, MCPNeedsOAuth,
			`Connect your crm account first: this tool calls its MCP server with your own OAuth token, and you have none. Start with POST /mcp/oauth/connect {"server_id": 3, "return_path": "/", "include_resource_param": true} and open the oauth_url it answers.`},
		{"the shared OAuth account", &MCPServer{ID: 3, Name: "crm", AuthType: &oauth, Performer: admin}, MCPNeedsOAuth,
			`The MCP server crm is called with an OAuth account that an admin connects for everyone, and none is connected. An admin or its owner starts with POST /admin/mcp/oauth/connect {"server_id": 3, "return_path": "/", "include_resource_param": true} and opens the oauth_url it answers.`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := ConnectMCPFirst(tt.s, tt.step)
			if err.Code != ECONFLICT || err.Message != tt.want {
				t.Errorf("ConnectMCPFirst:\n got %s %s\nwant 409 %s", err.Code, err.Message, tt.want)
			}
		})
	}
}

func TestCheckMCPServerURL(t *testing.T) {
	for _, tt := range []struct{ url, want string }{
		{"https://mcp.example.com/mcp", ""},
		{"http://10.0.0.5:8080/sse", ""}, // The egress guard decides when it is called.
		{"", "server_url is required"},
		{"   ", "server_url is required"},
		{"mcp.example.com/mcp", "Invalid server_url: it must be an absolute http:// or https:// URL"},
		{"ftp://mcp.example.com", "Invalid server_url: it must be an absolute http:// or https:// URL"},
		{"https://user:pw@mcp.example.com", "Invalid server_url: it must not contain a user name or password; send credentials in headers"},
		{"https://mcp.example.com/mcp#x", "Invalid server_url: it must not contain a fragment (#…)"},
	} {
		got := ""
		if err := CheckMCPServerURL(tt.url); err != nil {
			got = ErrorMessage(err)
		}
		if got != tt.want {
			t.Errorf("CheckMCPServerURL(%q) = %q, want %q", tt.url, got, tt.want)
		}
	}
}

// TestMCPCallers: who finishes a connection, and who sees tools over MCP.
func TestMCPCallers(t *testing.T) {
	k := &MCPOAuthConnection{UserID: "ann", ServerID: 3}
	if err := (&Caller{User: User{ID: "ann"}}).CheckMCPCallbackCaller(k); err != nil {
		t.Errorf("the person who started it: %v", err)
	}
	if err := (&Caller{User: User{ID: "bob", Role: RoleAdmin}}).CheckMCPCallbackCaller(k); ErrorCode(err) != EFORBIDDEN {
		t.Errorf("someone else, even an admin: %v", err)
	}
	for _, tt := range []struct {
		c    Caller
		want bool
	}{
		{Caller{User: User{Role: RoleAdmin}}, true},
		{Caller{User: User{Role: RoleCurator}}, true},
		{Caller{User: User{Role: RoleBasic}}, true},
		{Caller{User: User{Role: RoleLimited}}, false},
	} {
		if got := tt.c.CanUseToolsOverMCP(); got != tt.want {
			t.Errorf("%s: CanUseToolsOverMCP = %v", tt.c.Role, got)
		}
	}
	scoped := Caller{User: User{Role: RoleAdmin}}
	scoped.LimitTo([]Permission{PermReadSearch})
	if scoped.CanUseToolsOverMCP() {
		t.Error("a token scoped to read:search uses tools")
	}
	actions := Caller{User: User{ID: "x", Role: RoleBasic}}
	actions.SetGrants([]Permission{PermManageActions})
	if err := actions.CheckEditMCPServer(&MCPServer{OwnerID: ptr("someone")}); err != nil {
		t.Errorf("a holder of manage:actions edits every server: %v", err)
	}
}
