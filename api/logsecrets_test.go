package api_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/internal/syncbuf"
)

// Secrets never appear in logs (contract section 7). Every test server
// logs at debug level into its env's log buffer; every secret a test sends
// through env.do (credential_json values, tool header values, OAuth client
// secrets, API tokens) and every API key the server hands back is
// collected, and when the test ends its logs must hold none of them. So the
// whole API test suite checks it, with two hooks: watchSecrets in newEnv
// and noteSecrets in env.do.

// minSecretLen is the length below which a value is not looked for: "x" or
// "true" would be found in any log.
const minSecretLen = 8

// secretSet is the secrets one test has sent.
type secretSet struct {
	mu     sync.Mutex
	values map[string]bool
}

func (s *secretSet) add(v string) {
	if len(v) < minSecretLen {
		return
	}
	s.mu.Lock()
	s.values[v] = true
	s.mu.Unlock()
}

func (s *secretSet) list() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for v := range s.values {
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}

// secretSets holds each running test's secrets: *testing.T → *secretSet.
var secretSets sync.Map

// secretsOf returns the secrets of t.
func secretsOf(t *testing.T) *secretSet {
	s, _ := secretSets.LoadOrStore(t, &secretSet{values: map[string]bool{}})
	return s.(*secretSet)
}

// watchSecrets fails t, when it ends, if log holds a secret that t sent.
// It is registered before the test's servers are, so that it runs after
// they have stopped and written their last lines.
func watchSecrets(t *testing.T, log *syncbuf.Buffer) {
	set := secretsOf(t)
	t.Cleanup(func() {
		secretSets.Delete(t)
		for _, leak := range leakedSecrets(log.String(), set.list()) {
			t.Errorf("the server's log holds a secret the test sent: %q", leak)
		}
	})
}

// leakedSecrets returns the secrets that occur in log, as they are or
// escaped as JSON strings (with and without HTML escaping).
func leakedSecrets(log string, secrets []string) []string {
	var leaks []string
	for _, s := range secrets {
		if strings.Contains(log, s) || strings.Contains(log, jsonEscaped(s, true)) || strings.Contains(log, jsonEscaped(s, false)) {
			leaks = append(leaks, s)
		}
	}
	return leaks
}

// jsonEscaped returns s as it appears inside a JSON string.
func jsonEscaped(s string, html bool) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(html)
	enc.Encode(s)
	q := strings.TrimSpace(b.String())
	return q[1 : len(q)-1]
}

// noteSecrets collects the secrets of one exchange of env.do: the bearer
// token of req, the secret fields of the request body, and a new API key
// in the response body.
func noteSecrets(t *testing.T, req *http.Request, body any, resBody []byte) {
	set := secretsOf(t)
	if _, token, ok := strings.Cut(req.Header.Get("Authorization"), " "); ok {
		set.add(strings.TrimSpace(token))
	}
	if c, err := req.Cookie("fastapiusersauth"); err == nil {
		set.add(c.Value)
	}
	if b, err := requestBytes(body); err == nil {
		var v any
		if json.Unmarshal(b, &v) == nil {
			collectSecrets(v, set)
		} else if q, err := url.ParseQuery(string(b)); err == nil {
			for _, p := range q["password"] { // a sign-in form
				set.add(p)
			}
		}
	}
	var res struct {
		APIKey   string `json:"api_key"`
		RawToken string `json:"raw_token"` // a SCIM token
	}
	if json.Unmarshal(resBody, &res) == nil && quarry.ValidAPIKeyFormat(res.APIKey) {
		set.add(res.APIKey)
	}
	if quarry.ValidSCIMTokenFormat(res.RawToken) {
		set.add(res.RawToken)
	}
	var pat struct {
		Token string `json:"token"` // a personal access token, shown once
	}
	if json.Unmarshal(resBody, &pat) == nil && strings.HasPrefix(pat.Token, quarry.PATPrefix) {
		set.add(pat.Token)
	}
	var links []struct {
		Token string `json:"token"`
	}
	if json.Unmarshal(resBody, &links) == nil {
		for _, l := range links {
			if strings.HasPrefix(l.Token, quarry.InvitationTokenPrefix) {
				set.add(l.Token)
			}
		}
	}
}

// noteSetCookies collects the session tokens a response set.
func noteSetCookies(t *testing.T, res *http.Response) {
	for _, c := range res.Cookies() {
		secretsOf(t).add(c.Value)
	}
}

// collectSecrets adds the secret values found in a decoded request body
// to set: every string inside credential_json, the value of every header
// in custom_headers, client_secret; of MCP servers, the admin's token and
// values, the OAuth client secret, and a person's credentials; a model
// provider's api_key.
func collectSecrets(v any, set *secretSet) {
	switch v := v.(type) {
	case []any:
		for _, x := range v {
			collectSecrets(x, set)
		}
	case map[string]any:
		for k, x := range v {
			switch k {
			case "credential_json":
				allStrings(x, set)
			case "custom_headers":
				if headers, ok := x.([]any); ok {
					for _, h := range headers {
						if h, ok := h.(map[string]any); ok {
							allStrings(h["value"], set)
						}
					}
				}
			case "client_secret", "password", "invitation_token", "token",
				"api_token", "oauth_client_secret", "admin_credentials", "credentials", "api_key":
				allStrings(x, set)
			default:
				collectSecrets(x, set)
			}
		}
	}
}

// allStrings adds every string value in v (not object keys) to set.
func allStrings(v any, set *secretSet) {
	switch v := v.(type) {
	case string:
		set.add(v)
	case []any:
		for _, x := range v {
			allStrings(x, set)
		}
	case map[string]any:
		for _, x := range v {
			allStrings(x, set)
		}
	}
}

// TestSecretsWatch checks the check: it collects what it should, and finds
// a secret in a log, raw or JSON-escaped.
func TestSecretsWatch(t *testing.T) {
	e := newEnv(t)
	e.createCredential(e.admin, `{"credential_json": {"token": "watch-credential-value", "nested": {"deep": ["watch-nested-value", 7]}},
		"admin_public": true, "source": "confluence"}`)
	e.createTool(e.admin, `{"name": "w", "definition": `+pingDefinition+`,
		"custom_headers": [{"key": "X-Watch-Header-Name", "value": "watch-header-value"}], "passthrough_auth": false}`)
	e.createOAuthConfig("watch")
	var key struct {
		APIKey string `json:"api_key"`
	}
	e.do(e.admin, "POST", "/admin/api-key", map[string]any{"name": "watch", "role": "basic"}).decode(t, &key)
	got := secretsOf(t).list()
	for _, want := range []string{"watch-credential-value", "watch-nested-value", "watch-header-value",
		"client-secret-of-watch", e.admin.token, key.APIKey} {
		if !slices.Contains(got, want) {
			t.Errorf("secret %q was not collected; collected: %q", want, got)
		}
	}
	for _, notSecret := range []string{"confluence", "X-Watch-Header-Name", "token"} {
		if slices.Contains(got, notSecret) {
			t.Errorf("%q was collected as a secret", notSecret)
		}
	}
	log := `{"msg":"request","error":"bad value watch-credential-value"}` + "\n" + `{"x":"a \"quoted\" <secret>"}`
	secrets := []string{"watch-credential-value", `a "quoted" <secret>`, "watch-header-value"}
	if leaks := leakedSecrets(log, secrets); !slices.Equal(leaks, secrets[:2]) {
		t.Errorf("leakedSecrets = %q, want %q", leaks, secrets[:2])
	}
}
