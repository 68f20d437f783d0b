package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api"
	"github.com/quarryhq/quarry/auth"
	"github.com/quarryhq/quarry/internal/proctest"
	"github.com/quarryhq/quarry/store/storetest"
	"github.com/quarryhq/quarry/toolrun"
)

// startIdP runs web/e2e/idp.mjs (npm's oidc-provider) on a free port for
// the server at quarryURL, and returns its issuer.
func startIdP(t *testing.T, node, dir, quarryURL string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	cmd := exec.Command(node, filepath.Join(dir, "idp.mjs"), port, quarryURL)
	cmd.Dir = dir
	issuer, _ := proctest.Start(t, cmd, regexp.MustCompile(`^listening (\S+)$`), time.Minute)
	return issuer
}

// TestSignInInChromium signs people in to the admin page in headless
// Chromium (web/e2e/signin.mjs): through a real OpenID Provider's own login
// page (npm's oidc-provider, web/e2e/idp.mjs), and with a local account;
// then checks through the store what the page did.
func TestSignInInChromium(t *testing.T) {
	node, npm := e2eTools(t)
	e2eDir, err := filepath.Abs("e2e")
	if err != nil {
		t.Fatal(err)
	}
	npmCI(t, npm, e2eDir)

	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	issuer := startIdP(t, node, e2eDir, base)
	provider := auth.NewProvider(t.Context(), auth.OIDCConfig{Issuer: issuer, ClientID: "quarry",
		ClientSecret: "e2e-client-secret-at-the-idp", RedirectURL: base + "/auth/oidc/callback",
		Scopes: []string{"email", "profile"}}, slog.New(slog.DiscardHandler))
	select {
	case <-provider.Ready():
	case <-time.After(time.Minute):
		t.Fatalf("the provider was not discovered: %v", provider.Err())
	}
	db := storetest.OpenURL(t, "sqlite:"+filepath.Join(t.TempDir(), "quarry.db"), storetest.Key(t))
	public, _ := url.Parse(base)
	srv.Config.Handler = api.NewServer(api.Config{MaskCredentials: true, Version: "e2e", SignIn: api.SignInConfig{
		LocalAccounts: true, Registration: quarry.RegistrationPolicy{Mode: quarry.RegistrationOpen},
		OIDC: provider, OIDCName: "Example IdP", PublicURL: public,
	}, ToolEgress: loopbackEgress(t)}, db, slog.New(slog.DiscardHandler))
	srv.Start()
	t.Cleanup(srv.Close)
	name := "e2e admin"
	_, token, err := db.CreateAPIKey(context.Background(), nil, &name, quarry.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}

	shots := os.Getenv("QUARRY_E2E_SHOTS")
	if shots == "" {
		shots = t.TempDir()
	} else if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(e2eDir, "signin.mjs"), base, token, shots)
	cmd.Dir = e2eDir
	cmd.Env = append(os.Environ(), "QUARRY_CHROMIUM="+chromiumPath, "QUARRY_E2E_ISSUER="+issuer)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err = cmd.Run()
	t.Logf("signin.mjs took %v; screenshots in %s", time.Since(start).Round(time.Millisecond), shots)
	var ids struct {
		AnnCredential int64  `json:"annCredential"`
		Cy            string `json:"cy"`
		Tool          int64  `json:"tool"`
		OAuthConfig   int64  `json:"oauthConfig"`
	}
	for line := range strings.Lines(stdout.String()) {
		t.Log(strings.TrimSpace(line))
		if j, ok := strings.CutPrefix(strings.TrimSpace(line), "ids "); ok {
			json.Unmarshal([]byte(j), &ids)
		}
	}
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) || ctx.Err() != nil {
			t.Fatalf("signin.mjs: %v\n%s", err, stderr.String())
		}
		t.Fatal(err)
	}

	// What the page did, as the store has it.
	people, _, err := db.People(context.Background(), quarry.UserFilter{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	var ann *quarry.Caller
	for _, p := range people {
		if p.Email == "ann@example.com" {
			ann = &quarry.Caller{User: p.User}
		}
		how := "password"
		if len(p.Identities) > 0 {
			how = "sso " + p.Identities[0]
		}
		got[p.Email] = fmt.Sprintf("%s %v %s", p.Role, p.IsActive, how)
	}
	want := map[string]string{
		"ann@example.com": "basic true sso " + issuer,
		"cy@example.com":  "curator false sso " + issuer,
		"lee@example.com": "basic true password",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("people after the browser test:\n got %v\nwant %v", got, want)
	}
	if ann == nil {
		t.Fatal("no Ann")
	}
	cred, err := db.Credential(context.Background(), ann, ids.AnnCredential)
	if err != nil || cred.UserEmail == nil || *cred.UserEmail != "ann@example.com" {
		t.Errorf("Ann's credential %d: %+v, %v", ids.AnnCredential, cred, err)
	}

	// Ann connected her account for the tool, ran it (refused, then
	// answered), and disconnected, as the audit log has it.
	events, _, err := db.AuditEvents(context.Background(), quarry.AuditFilter{Actor: &ann.ID, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var trail []string
	for i := len(events) - 1; i >= 0; i-- {
		e := events[i]
		switch e.Action {
		case "tool.run", "oauth_token.connect", "oauth_token.disconnect":
			trail = append(trail, e.Action+" "+e.ResourceID+" "+string(e.Details))
		}
	}
	want1 := []string{
		fmt.Sprintf(`tool.run %d {"duration_ms":`, ids.Tool),
		fmt.Sprintf(`oauth_token.connect %d `, ids.OAuthConfig),
		fmt.Sprintf(`tool.run %d {"duration_ms":`, ids.Tool),
		fmt.Sprintf(`oauth_token.disconnect %d `, ids.OAuthConfig),
	}
	outcomes := []string{`"outcome":"no_token"`, "", `"outcome":"ok"`, ""}
	if len(trail) != len(want1) {
		t.Fatalf("Ann's tool trail:\n%s", strings.Join(trail, "\n"))
	}
	for i := range want1 {
		if !strings.HasPrefix(trail[i], want1[i]) || !strings.Contains(trail[i], outcomes[i]) {
			t.Errorf("Ann's tool trail, entry %d: %s, want %s…%s", i, trail[i], want1[i], outcomes[i])
		}
	}
}

// loopbackEgress opens 127.0.0.1 to tool runs: the test's provider, whose
// userinfo endpoint is the tool's API, listens there.
func loopbackEgress(t *testing.T) toolrun.Policy {
	nets, hosts, err := toolrun.ParseAllow("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	return toolrun.Policy{Allow: nets, AllowHosts: hosts}
}
