package quarry

import (
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strings"
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
