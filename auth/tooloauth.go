package auth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/quarryhq/quarry"
)

// OAuth 2.0 for custom tools: the authorization code flow with PKCE (S256)
// against a tool's OAuth configuration, and refreshes, for each person;
// and refreshes of the single sign-on tokens kept for passthrough tools.

// fromOAuth2 returns the domain's form of an oauth2 token: its lifetime
// as the server gave it (expires_in), so that the store computes the
// expiry with its own clock.
func fromOAuth2(t *oauth2.Token) quarry.OAuthToken {
	out := quarry.OAuthToken{AccessToken: t.AccessToken, TokenType: t.TokenType, RefreshToken: t.RefreshToken}
	if s, ok := t.Extra("scope").(string); ok {
		out.Scope = s
	}
	switch {
	case t.ExpiresIn > 0:
		out.ExpiresIn = time.Duration(t.ExpiresIn) * time.Second
	case !t.Expiry.IsZero():
		out.Expiry = t.Expiry
	}
	return out
}

// toolConfig returns the oauth2 configuration of cfg with redirectURL.
// The client authenticates at the token endpoint as the server accepts
// (HTTP Basic, or the client id and secret in the form), which
// oauth2.AuthStyleAutoDetect finds out and remembers.
func toolConfig(cfg *quarry.OAuthConfig, redirectURL string) *oauth2.Config {
	return &oauth2.Config{ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, RedirectURL: redirectURL,
		Scopes: cfg.Scopes, Endpoint: oauth2.Endpoint{AuthURL: cfg.AuthorizationURL, TokenURL: cfg.TokenURL}}
}

// ToolAuthCodeURL returns where to send a person to connect their account
// for OAuth configuration cfg: its authorization endpoint with the client
// id, redirectURL, the scopes, state, the PKCE challenge of verifier (S256)
// and the configuration's additional parameters (with those a known server
// needs to issue a refresh token, see quarry.OfflineAccessParams).
func ToolAuthCodeURL(cfg *quarry.OAuthConfig, redirectURL, state, verifier string) string {
	params := map[string]string{}
	for k, v := range quarry.OfflineAccessParams(cfg.AuthorizationURL, cfg.AdditionalParams) {
		params[k] = v
	}
	for k, v := range cfg.AdditionalParams {
		params[k] = v
	}
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	opts := []oauth2.AuthCodeOption{oauth2.S256ChallengeOption(verifier)}
	for _, k := range keys {
		opts = append(opts, oauth2.SetAuthURLParam(k, params[k]))
	}
	return toolConfig(cfg, redirectURL).AuthCodeURL(state, opts...)
}

// ToolExchange trades the code of a connection to cfg for the person's
// token, with the PKCE verifier, through client (the egress-guarded
// client). A code the server refuses is a 400 that says why (in the
// server's words: an OAuth error code and description); other failures
// are returned as they are.
func ToolExchange(ctx context.Context, client *http.Client, cfg *quarry.OAuthConfig, redirectURL, code, verifier string) (quarry.OAuthToken, error) {
	return exchange(ctx, client, cfg, redirectURL, code, verifier)
}

// MCPExchange is ToolExchange for an MCP server's authorization server:
// the token request names the server as its resource (RFC 8707), as the
// MCP authorization specification requires, when resource is not empty.
func MCPExchange(ctx context.Context, client *http.Client, cfg *quarry.OAuthConfig, redirectURL, code, verifier, resource string) (quarry.OAuthToken, error) {
	var opts []oauth2.AuthCodeOption
	if resource != "" {
		opts = append(opts, oauth2.SetAuthURLParam("resource", resource))
	}
	return exchange(ctx, client, cfg, redirectURL, code, verifier, opts...)
}

func exchange(ctx context.Context, client *http.Client, cfg *quarry.OAuthConfig, redirectURL, code, verifier string, opts ...oauth2.AuthCodeOption) (quarry.OAuthToken, error) {
	ctx = context.WithValue(ctx, oauth2.HTTPClient, client)
	tok, err := toolConfig(cfg, redirectURL).Exchange(ctx, code, append([]oauth2.AuthCodeOption{oauth2.VerifierOption(verifier)}, opts...)...)
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			return quarry.OAuthToken{}, quarry.Errorf(quarry.EINVALID, "The authorization server of %s refused the code: %s", cfg.Name, oauthReason(re))
		}
		return quarry.OAuthToken{}, err
	}
	if tok.AccessToken == "" {
		return quarry.OAuthToken{}, quarry.Errorf(quarry.EBADGATEWAY, "The authorization server of %s answered no access token", cfg.Name)
	}
	return fromOAuth2(tok), nil
}

// ToolRefresh refreshes a person's token for cfg through client. A refresh
// token the server refuses for good (invalid_grant) fails with
// quarry.ErrTokenRevoked; another refusal with a 502 that says why; other
// failures are returned as they are.
func ToolRefresh(ctx context.Context, client *http.Client, cfg *quarry.OAuthConfig, tok quarry.OAuthToken) (quarry.OAuthToken, error) {
	ctx = context.WithValue(ctx, oauth2.HTTPClient, client)
	return refresh(ctx, toolConfig(cfg, ""), tok, "The authorization server of "+cfg.Name)
}

// MCPRefresh is ToolRefresh for an MCP server's authorization server,
// with the server's resource indicator in the request (RFC 8707), as the
// MCP authorization specification asks of every token request.
func MCPRefresh(ctx context.Context, client *http.Client, cfg *quarry.OAuthConfig, tok quarry.OAuthToken, resource string) (quarry.OAuthToken, error) {
	if resource != "" {
		c := *client
		c.Transport = &formParam{base: client.Transport, url: cfg.TokenURL, key: "resource", value: resource}
		client = &c
	}
	return ToolRefresh(ctx, client, cfg, tok)
}

// formParam adds key=value to the form of POSTs to url (oauth2's refresh
// takes no extra parameters).
type formParam struct {
	base       http.RoundTripper
	url        string
	key, value string
}

func (f *formParam) RoundTrip(r *http.Request) (*http.Response, error) {
	base := f.base
	if base == nil {
		base = http.DefaultTransport
	}
	if r.Method != http.MethodPost || r.URL.String() != f.url || r.Body == nil {
		return base.RoundTrip(r)
	}
	b, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil {
		return nil, err
	}
	form, err := url.ParseQuery(string(b))
	if err != nil {
		return nil, err
	}
	form.Set(f.key, f.value)
	body := form.Encode()
	r = r.Clone(r.Context())
	r.Body, r.ContentLength = io.NopCloser(strings.NewReader(body)), int64(len(body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(body)), nil }
	return base.RoundTrip(r)
}

// Refresh refreshes the single sign-on token of a session at the OpenID
// provider, as ToolRefresh does.
func (p *Provider) Refresh(ctx context.Context, tok quarry.OAuthToken) (quarry.OAuthToken, error) {
	d, err := p.discovered()
	if err != nil {
		return quarry.OAuthToken{}, err
	}
	next, err := refresh(oidc.ClientContext(ctx, p.client), &d.oauth2, tok, "The single sign-on provider")
	if err != nil && quarry.ErrorCode(err) == quarry.EINTERNAL && !errors.Is(err, quarry.ErrTokenRevoked) && ctx.Err() == nil {
		return quarry.OAuthToken{}, quarry.Errorf(quarry.EBADGATEWAY, "The single sign-on provider cannot be reached to refresh your token; try again shortly")
	}
	return next, err
}

// refresh runs the refresh token grant of conf for tok.
func refresh(ctx context.Context, conf *oauth2.Config, tok quarry.OAuthToken, who string) (quarry.OAuthToken, error) {
	// An expired token makes the source refresh at once.
	src := conf.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken, Expiry: time.Unix(1, 0)})
	next, err := src.Token()
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			if re.ErrorCode == "invalid_grant" {
				return quarry.OAuthToken{}, fmt.Errorf("%s: %w", who, quarry.ErrTokenRevoked)
			}
			return quarry.OAuthToken{}, quarry.Errorf(quarry.EBADGATEWAY, "%s refused to refresh the token: %s", who, oauthReason(re))
		}
		return quarry.OAuthToken{}, err
	}
	return fromOAuth2(next), nil
}

// oauthReason renders an OAuth error answer: its error code and
// description, or its status.
func oauthReason(re *oauth2.RetrieveError) string {
	switch {
	case re.ErrorCode != "" && re.ErrorDescription != "":
		return re.ErrorCode + " (" + quarry.ClipText(re.ErrorDescription, 200) + ")"
	case re.ErrorCode != "":
		return re.ErrorCode
	case re.Response != nil:
		return "HTTP " + re.Response.Status
	}
	return "an error"
}
