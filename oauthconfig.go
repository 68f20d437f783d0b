package quarry

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"
)

// OAuthConfig describes how custom tools obtain OAuth tokens from an
// authorization server. Its client secret is encrypted at rest and never
// returned.
type OAuthConfig struct {
	ID               int64    `json:"id"`
	Name             string   `json:"name"`
	AuthorizationURL string   `json:"authorization_url"`
	TokenURL         string   `json:"token_url"`
	ClientID         string   `json:"client_id"`
	ClientSecret     string   `json:"-"`
	Scopes           []string `json:"scopes"`
	UserID           *string  `json:"user_id"`
	CreatedAt        Time     `json:"time_created"`
	UpdatedAt        Time     `json:"time_updated"`
	// AdditionalParams are sent with the authorization request, such as
	// Google's access_type=offline; nil when none are set.
	AdditionalParams map[string]string `json:"additional_params"`
	// ToolCount is the number of tools that use the configuration.
	ToolCount int `json:"tool_count"`
}

// CheckURLs reports the first of AuthorizationURL and TokenURL that an
// authorization server could not have: each must be an absolute https URL
// with a host, and no user name, password or fragment (RFC 6749 section 3);
// http is allowed for a loopback host only (localhost, 127.0.0.0/8, ::1),
// as for a provider run locally. The message does not show the URL, which
// could hold a password.
func (o *OAuthConfig) CheckURLs() error {
	if msg := checkAuthorizationURL(o.AuthorizationURL); msg != "" {
		return Errorf(EINVALID, "authorization_url %s", msg)
	}
	if msg := checkEndpointURL(o.TokenURL); msg != "" {
		return Errorf(EINVALID, "token_url %s", msg)
	}
	return nil
}

// checkAuthorizationURL returns why s cannot be an authorization
// endpoint, or "": checkEndpointURL's reasons, and a query that sets a
// parameter Quarry sets for each authorization request (redirect_uri,
// state, code_challenge, client_id...: the request would carry two
// values, and a server that takes the first would send the code
// elsewhere or skip the state's check), as additional parameters may
// not (CheckAdditionalParams).
func checkAuthorizationURL(s string) string {
	if msg := checkEndpointURL(s); msg != "" {
		return msg
	}
	u, _ := url.Parse(s)
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return "must have a query of name=value pairs"
	}
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if slices.Contains(reservedAuthParams, strings.ToLower(k)) {
			return fmt.Sprintf("must not set %q in its query: Quarry sets it for each authorization request", k)
		}
	}
	return ""
}

// checkEndpointURL returns why s cannot be an OAuth endpoint, or "".
func checkEndpointURL(s string) string {
	const notAbsolute = "must be an absolute https:// URL (http:// only for localhost or a loopback address)"
	u, err := url.Parse(s)
	if err != nil || u.Opaque != "" || u.Hostname() == "" {
		return notAbsolute
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && isLoopback(u.Hostname()):
	default:
		return notAbsolute
	}
	if u.User != nil {
		return "must not contain a user name or password"
	}
	if u.Fragment != "" || strings.HasSuffix(s, "#") {
		return "must not contain a fragment (#…)"
	}
	return ""
}

// isLoopback reports whether host, a URL's host name, names this machine.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// CheckOAuthConfigUnused reports why OAuth configuration id, used by tools
// tools, may not be deleted.
func CheckOAuthConfigUnused(id int64, tools int) error {
	if tools > 0 {
		return Errorf(ECONFLICT, "OAuth config %d is still used by %d tool(s)", id, tools)
	}
	return nil
}

// HasClientCredentials reports whether o has a client id and a client
// secret (Onyx's has_client_credentials).
func (o *OAuthConfig) HasClientCredentials() bool { return o.ClientID != "" && o.ClientSecret != "" }

// OAuthConfigUpdate holds the changes of PUT /admin/oauth-config/{id}
// (Onyx's OAuthConfigUpdate): a nil field is left unchanged; a client id
// or secret is cleared only by its Clear flag, so that an admin can change
// other fields without typing the secret again.
type OAuthConfigUpdate struct {
	Name              *string
	AuthorizationURL  *string
	TokenURL          *string
	ClientID          *string
	ClientSecret      *string
	Scopes            *[]string
	AdditionalParams  *map[string]string
	ClearClientID     bool
	ClearClientSecret bool
}

// Apply returns o with u applied. A Clear flag wins over a value sent for
// the same field, as in Onyx.
func (u *OAuthConfigUpdate) Apply(o OAuthConfig) OAuthConfig {
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	set(&o.Name, u.Name)
	set(&o.AuthorizationURL, u.AuthorizationURL)
	set(&o.TokenURL, u.TokenURL)
	set(&o.ClientID, u.ClientID)
	set(&o.ClientSecret, u.ClientSecret)
	if u.ClearClientID {
		o.ClientID = ""
	}
	if u.ClearClientSecret {
		o.ClientSecret = ""
	}
	if u.Scopes != nil {
		o.Scopes = slices.Clone(*u.Scopes)
	}
	if u.AdditionalParams != nil {
		o.AdditionalParams = *u.AdditionalParams
	}
	return o
}

// ChangedFields returns the JSON names of the fields that differ between
// old and updated, in a fixed order, for the audit log (never the
// values).
func (u *OAuthConfigUpdate) ChangedFields(old, updated *OAuthConfig) []string {
	var f []string
	add := func(changed bool, name string) {
		if changed {
			f = append(f, name)
		}
	}
	add(old.Name != updated.Name, "name")
	add(old.AuthorizationURL != updated.AuthorizationURL, "authorization_url")
	add(old.TokenURL != updated.TokenURL, "token_url")
	add(old.ClientID != updated.ClientID, "client_id")
	add(old.ClientSecret != updated.ClientSecret, "client_secret")
	add(!slices.Equal(old.Scopes, updated.Scopes), "scopes")
	add(!sameParams(old.AdditionalParams, updated.AdditionalParams), "additional_params")
	return f
}

func sameParams(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// KeepsTokens reports whether the tokens people connected under old still
// belong to o: they were issued by old's token endpoint to old's
// client, and are refreshed there. When either changes, they are
// forgotten (people connect again), so that a refresh token never goes to
// another server or client than the one that issued it.
func (o *OAuthConfig) KeepsTokens(old *OAuthConfig) bool {
	return old.TokenURL == o.TokenURL && old.ClientID == o.ClientID
}

// reservedAuthParams are the parameters of an authorization request that
// Quarry sets itself: additional parameters may not replace them.
var reservedAuthParams = []string{"client_id", "redirect_uri", "response_type", "state", "scope",
	"code_challenge", "code_challenge_method", "nonce", "request", "request_uri"}

// ParseAdditionalParams reads additional_params, an object whose values
// must be strings (they go into the authorization URL), and checks it
// (CheckAdditionalParams).
func ParseAdditionalParams(raw json.RawMessage) (map[string]string, error) {
	var in map[string]any
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, Errorf(EINVALID, "additional_params must be an object")
	}
	out := make(map[string]string, len(in))
	for k, v := range in {
		s, ok := v.(string)
		if !ok {
			return nil, Errorf(EINVALID, "additional_params values must be strings: %q is not", k)
		}
		out[k] = s
	}
	if err := CheckAdditionalParams(out); err != nil {
		return nil, err
	}
	return out, nil
}

// CheckAdditionalParams reports the first additional authorization
// parameter that Quarry sets itself (such as redirect_uri or state: one
// could send the authorization code elsewhere, or defeat the state's
// check), or whose name is empty.
func CheckAdditionalParams(params map[string]string) error {
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if strings.TrimSpace(k) == "" {
			return Errorf(EINVALID, "additional_params has an empty parameter name")
		}
		if slices.Contains(reservedAuthParams, strings.ToLower(k)) {
			return Errorf(EINVALID, "additional_params cannot set %q: Quarry sets it for each authorization request", k)
		}
	}
	return nil
}

// OfflineAccessParams returns the parameters that authorizationURL's
// server needs to issue a refresh token, unless params sets them: Google
// issues one only when asked for offline access with the consent screen
// (as Onyx does for accounts.google.com).
func OfflineAccessParams(authorizationURL string, params map[string]string) map[string]string {
	u, err := url.Parse(authorizationURL)
	out := map[string]string{}
	if err == nil && strings.EqualFold(u.Hostname(), "accounts.google.com") {
		for k, v := range map[string]string{"access_type": "offline", "prompt": "consent"} {
			if _, set := params[k]; !set {
				out[k] = v
			}
		}
	}
	return out
}

// OAuthConnection is a connection of a person to an OAuth configuration
// in progress, between POST /oauth-config/initiate and the callback.
type OAuthConnection struct {
	UserID        string `json:"-"`
	OAuthConfigID int64  `json:"-"`
	Verifier      string `json:"verifier"`     // The PKCE code verifier: a secret until the code is exchanged.
	RedirectURI   string `json:"redirect_uri"` // Where the authorization server sends the browser back; the exchange names it again.
	ReturnPath    string `json:"-"`
}

// OAuthConnectionTTL is how long a connection may take: its state is good
// for this long, and once.
const OAuthConnectionTTL = 5 * time.Minute

// CheckCallbackCaller reports whether c may finish connection k: only the
// person who started it (the state is bound to them), so that nobody can
// make another person's account hold their token.
func (c *Caller) CheckCallbackCaller(k *OAuthConnection) error {
	return c.checkConnectionOwner(k.UserID)
}

// ErrCallbackUser answers a callback finished by another person than the
// one who started the connection (tools' OAuth and MCP servers').
var ErrCallbackUser = Errorf(EFORBIDDEN, "User mismatch in OAuth callback")

// checkConnectionOwner reports ErrCallbackUser unless c is owner, the
// person who started a connection.
func (c *Caller) checkConnectionOwner(owner string) error {
	if c.ID != owner {
		return ErrCallbackUser
	}
	return nil
}
