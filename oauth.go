package quarry

import (
	"net/netip"
	"net/url"
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
	for _, f := range []struct{ name, url string }{
		{"authorization_url", o.AuthorizationURL},
		{"token_url", o.TokenURL},
	} {
		if msg := checkEndpointURL(f.url); msg != "" {
			return Errorf(EINVALID, "%s %s", f.name, msg)
		}
	}
	return nil
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
