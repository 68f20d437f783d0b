package auth

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/quarryhq/quarry"
)

// OIDCConfig configures single sign-on with an OpenID provider.
type OIDCConfig struct {
	Issuer       string   // The provider's issuer URL, as its discovery document names it.
	ClientID     string   // Quarry's client id at the provider.
	ClientSecret string   // Quarry's client secret at the provider.
	RedirectURL  string   // <public URL>/auth/oidc/callback, registered at the provider.
	Scopes       []string // Requested scopes; openid is always added.
	// Audience is the audience bearer access tokens must be for; empty
	// means ClientID.
	Audience string
	// Algorithms are the signing algorithms accepted; empty means the
	// asymmetric ones of DefaultAlgorithms. "none" and the HMAC algorithms
	// are never accepted.
	Algorithms []string
	// Skew is the clock difference tolerated on the expiry and not-before
	// times of bearer access tokens.
	Skew time.Duration
	// KeyRefresh is the shortest time between two fetches of the provider's
	// keys caused by tokens that name a key not seen before, so that made-up
	// key ids cannot make Quarry hammer the provider. Zero means 10 seconds.
	KeyRefresh time.Duration
	// Roles maps the provider's claims to Quarry roles.
	Roles quarry.RolePolicy
	// Domains, if set, are the email domains (lower case) whose people may
	// sign in; others are refused.
	Domains quarry.EmailDomains
	// TokenClients are the client ids whose bearer access tokens are
	// accepted (checked against azp, client_id, cid or appid, whichever the
	// token has); empty means ClientID.
	TokenClients []string
	// HTTPClient talks to the provider; nil means a client with a 10-second
	// time-out.
	HTTPClient *http.Client
	// keyClock is the clock KeyRefresh is measured with; nil means
	// time.Now (tests set their own).
	keyClock func() time.Time
}

// DefaultAlgorithms are the signing algorithms accepted when
// OIDCConfig.Algorithms is empty.
func DefaultAlgorithms() []string {
	return []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
}

// providerRole returns the role p gives a person with email key key whose
// provider said claims of them, and whether the provider decides it.
func providerRole(p *quarry.RolePolicy, key string, verified bool, claims map[string]any) (quarry.Role, bool) {
	return p.Role(key, verified, claimStrings(claims, p.Claim))
}

// claimStrings returns the string values of the claim at path (dots
// separate the names of nested objects): a string gives one value, an
// array its strings.
func claimStrings(claims map[string]any, path string) []string {
	if path == "" {
		return nil
	}
	var v any = claims
	for _, name := range strings.Split(path, ".") {
		obj, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = obj[name]
	}
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, e := range v {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// Provider is the OpenID provider Quarry signs people in with. It learns
// the provider's endpoints from its discovery document in the background,
// trying again until it succeeds, so that a provider that is down when
// Quarry starts only delays single sign-on.
type Provider struct {
	cfg    OIDCConfig
	log    *slog.Logger
	client *http.Client

	mu      sync.RWMutex
	disc    *discovered // nil until discovery succeeds
	lastErr error       // why discovery has not succeeded yet
	ready   chan struct{}
}

// discovered is what the discovery document says.
type discovered struct {
	oauth2     oauth2.Config
	provider   *oidc.Provider
	idTokens   *oidc.IDTokenVerifier
	access     *oidc.IDTokenVerifier
	endSession string
}

// NewProvider returns a Provider for cfg and starts discovering it; the
// attempts stop when ctx ends.
func NewProvider(ctx context.Context, cfg OIDCConfig, log *slog.Logger) *Provider {
	if len(cfg.Algorithms) == 0 {
		cfg.Algorithms = DefaultAlgorithms()
	}
	if cfg.Audience == "" {
		cfg.Audience = cfg.ClientID
	}
	if cfg.KeyRefresh == 0 {
		cfg.KeyRefresh = 10 * time.Second
	}
	if len(cfg.TokenClients) == 0 {
		cfg.TokenClients = []string{cfg.ClientID}
	}
	cfg.Scopes = append([]string{oidc.ScopeOpenID}, slices.DeleteFunc(slices.Clone(cfg.Scopes),
		func(s string) bool { return s == oidc.ScopeOpenID })...)
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	p := &Provider{cfg: cfg, log: log, client: client, ready: make(chan struct{}),
		lastErr: errors.New("the discovery document has not been read yet")}
	go p.discover(ctx)
	return p
}

// Issuer returns the provider's issuer URL, as configured.
func (p *Provider) Issuer() string { return p.cfg.Issuer }

// Scopes returns the scopes Quarry asks the provider for, openid first.
func (p *Provider) Scopes() []string { return slices.Clone(p.cfg.Scopes) }

// discover reads the discovery document, trying again with growing pauses
// (1 s to 1 min) until it succeeds or ctx ends.
func (p *Provider) discover(ctx context.Context) {
	pause := time.Second
	for {
		err := p.tryDiscover(ctx)
		if err == nil {
			p.log.Info("single sign-on ready", "issuer", p.cfg.Issuer)
			return
		}
		p.mu.Lock()
		p.lastErr = err
		p.mu.Unlock()
		p.log.Warn("single sign-on: the OpenID provider cannot be reached; trying again",
			"issuer", p.cfg.Issuer, "error", err.Error(), "retry_in", pause.String())
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
		pause = min(pause*2, time.Minute)
	}
}

func (p *Provider) tryDiscover(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	op, err := oidc.NewProvider(oidc.ClientContext(ctx, p.client), p.cfg.Issuer)
	if err != nil {
		return err
	}
	var extra struct {
		JWKS       string `json:"jwks_uri"`
		EndSession string `json:"end_session_endpoint"`
	}
	if err := op.Claims(&extra); err != nil {
		return err
	}
	if extra.JWKS == "" {
		return errors.New("the discovery document names no jwks_uri")
	}
	keys := newKeySet(extra.JWKS, p.client, p.cfg.Algorithms, p.cfg.KeyRefresh, p.cfg.keyClock)
	d := &discovered{
		provider:   op,
		endSession: extra.EndSession,
		oauth2: oauth2.Config{ClientID: p.cfg.ClientID, ClientSecret: p.cfg.ClientSecret,
			Endpoint: op.Endpoint(), RedirectURL: p.cfg.RedirectURL, Scopes: p.cfg.Scopes},
		idTokens: oidc.NewVerifier(p.cfg.Issuer, keys, &oidc.Config{
			ClientID: p.cfg.ClientID, SupportedSigningAlgs: p.cfg.Algorithms}),
		// Expiry and not-before are checked by VerifyAccessToken, with the
		// configured skew.
		access: oidc.NewVerifier(p.cfg.Issuer, keys, &oidc.Config{
			ClientID: p.cfg.Audience, SupportedSigningAlgs: p.cfg.Algorithms, SkipExpiryCheck: true}),
	}
	p.mu.Lock()
	p.disc, p.lastErr = d, nil
	p.mu.Unlock()
	close(p.ready)
	return nil
}

// errUnavailable answers sign-ins while the provider cannot be reached.
var errUnavailable = quarry.Errorf(quarry.EUNAVAILABLE, "The single sign-on provider cannot be reached; try again shortly")

// Err returns nil once the provider's discovery document was read, and
// otherwise why it could not be.
func (p *Provider) Err() error {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.lastErr
}

// Outage says in a few words why the provider's discovery document could
// not be read yet, or "" once it was: the kind of failure, never a host or
// an address, for the readiness check.
func (p *Provider) Outage() string {
	err := p.Err()
	if err == nil {
		return ""
	}
	reason := "it did not answer as an OpenID provider"
	var ne net.Error
	var de *net.DNSError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		reason = "the connection was refused"
	case errors.As(err, &de):
		reason = "its name does not resolve"
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		reason = "it did not answer in time"
	case errors.As(err, &ne):
		reason = "it cannot be reached"
	}
	return "The OpenID provider cannot be reached (" + reason + "); trying again"
}

// Ready returns a channel closed once the provider's discovery document was
// read.
func (p *Provider) Ready() <-chan struct{} { return p.ready }

func (p *Provider) discovered() (*discovered, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.disc == nil {
		return nil, errUnavailable
	}
	return p.disc, nil
}

// Login is a sign-in at the provider in progress: what the callback needs
// to finish it. Its fields are secrets until the sign-in is over.
type Login struct {
	State    string `json:"-"` // Sent to the provider and back; bound to the browser by a cookie.
	Nonce    string `json:"nonce"`
	Verifier string `json:"verifier"` // The PKCE code verifier.
}

// NewLogin returns fresh random values for a sign-in.
func NewLogin() *Login {
	return &Login{State: randomString(), Nonce: randomString(), Verifier: oauth2.GenerateVerifier()}
}

func randomString() string {
	var b [32]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// AuthCodeURL returns the provider's authorization URL for l, with its
// state, nonce and PKCE challenge (S256).
func (p *Provider) AuthCodeURL(l *Login) (string, error) {
	d, err := p.discovered()
	if err != nil {
		return "", err
	}
	return d.oauth2.AuthCodeURL(l.State, oidc.Nonce(l.Nonce), oauth2.S256ChallengeOption(l.Verifier)), nil
}

// SignInError is why a sign-in at the provider failed, as a code the admin
// page shows a message for; its Err is for the log.
type SignInError struct {
	Code string // "code", "token", "email", "email_unverified", "domain"
	Err  error
}

func (e *SignInError) Error() string {
	return "auth: sign-in failed (" + e.Code + "): " + e.Err.Error()
}

func (e *SignInError) Unwrap() error { return e.Err }

func signInError(code string, format string, args ...any) *SignInError {
	return &SignInError{Code: code, Err: fmt.Errorf(format, args...)}
}

// SignInTokens are the provider's tokens of a finished sign-in: the raw ID
// token, and the access and refresh tokens (kept for the tools that pass
// them through). They are secrets.
type SignInTokens struct {
	IDToken string
	Token   quarry.OAuthToken
}

// Exchange finishes sign-in l: it trades code for the provider's tokens
// (with the PKCE verifier), checks the ID token (signature, issuer,
// audience, expiry, nonce) and returns the person it vouches for, and the
// tokens. Errors are *SignInError, or EUNAVAILABLE.
func (p *Provider) Exchange(ctx context.Context, l *Login, code string) (*quarry.Identity, *SignInTokens, error) {
	d, err := p.discovered()
	if err != nil {
		return nil, nil, err
	}
	ctx = oidc.ClientContext(ctx, p.client)
	tok, err := d.oauth2.Exchange(ctx, code, oauth2.VerifierOption(l.Verifier))
	if err != nil {
		return nil, nil, signInError("code", "exchanging the code: %w", err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return nil, nil, signInError("token", "the token response holds no ID token")
	}
	idt, err := d.idTokens.Verify(ctx, raw)
	if err != nil {
		return nil, nil, signInError("token", "checking the ID token: %w", err)
	}
	if idt.Nonce == "" || !constantTimeEqual(idt.Nonce, l.Nonce) {
		return nil, nil, signInError("token", "the ID token's nonce is not the one sent")
	}
	claims := map[string]any{}
	if err := idt.Claims(&claims); err != nil {
		return nil, nil, signInError("token", "reading the ID token's claims: %w", err)
	}
	if _, ok := claims["email"].(string); !ok && d.provider.UserInfoEndpoint() != "" {
		// Some providers keep the email out of the ID token: ask the
		// userinfo endpoint, and keep what it says of the same subject.
		info, err := d.provider.UserInfo(ctx, oauth2.StaticTokenSource(tok))
		if err != nil {
			return nil, nil, signInError("email", "reading userinfo: %w", err)
		}
		more := map[string]any{}
		if err := info.Claims(&more); err != nil || info.Subject != idt.Subject {
			return nil, nil, signInError("email", "userinfo is about another subject or unreadable")
		}
		for k, v := range more {
			if _, ok := claims[k]; !ok {
				claims[k] = v
			}
		}
	}
	id, err := p.identity(idt.Issuer, idt.Subject, claims)
	if err != nil {
		return nil, nil, err
	}
	return id, &SignInTokens{IDToken: raw, Token: fromOAuth2(tok)}, nil
}

// identity returns the person the claims describe, refusing an email the
// provider says is unverified, or of a domain not allowed.
func (p *Provider) identity(issuer, subject string, claims map[string]any) (*quarry.Identity, error) {
	if subject == "" {
		return nil, signInError("token", "the token has no subject")
	}
	raw, _ := claims["email"].(string)
	if raw == "" {
		return nil, signInError("email", "the provider gave no email for subject %q", subject)
	}
	v, said := claims["email_verified"]
	if said && !truthy(v) {
		return nil, signInError("email_unverified", "the provider says the email of subject %q is not verified", subject)
	}
	email, key, err := quarry.ParseEmail(raw)
	if err != nil {
		return nil, signInError("email", "the provider's email for subject %q is not an email address", subject)
	}
	if !p.cfg.Domains.Allow(key) {
		return nil, signInError("domain", "the email of subject %q is not of an allowed domain", subject)
	}
	id := &quarry.Identity{Issuer: issuer, Subject: subject, Email: email, EmailVerified: said && truthy(v)}
	if oid, _ := claims["oid"].(string); len(oid) <= maxNameBytes {
		id.ObjectID = oid // Entra ID's object id, which its SCIM provisioning may send as externalId.
	}
	if name, _ := claims["name"].(string); strings.TrimSpace(name) != "" {
		n := strings.TrimSpace(name)
		if len(n) > maxNameBytes {
			n = n[:maxNameBytes]
			for !utf8.ValidString(n) {
				n = n[:len(n)-1]
			}
		}
		id.Name = &n
	}
	id.Role, id.RoleFromProvider = providerRole(&p.cfg.Roles, key, id.EmailVerified, claims)
	return id, nil
}

// maxNameBytes bounds the names Quarry keeps.
const maxNameBytes = 256

// truthy reads email_verified, which some providers send as a string.
func truthy(v any) bool {
	switch v := v.(type) {
	case bool:
		return v
	case string:
		return strings.EqualFold(v, "true")
	}
	return false
}

// errInvalidToken answers every bearer token that fails a check.
var errInvalidToken = errors.New("auth: invalid access token")

// LooksLikeJWT reports whether token has the shape of a compact JWT, so
// that other tokens are refused without any work.
func LooksLikeJWT(token string) bool {
	return strings.Count(token, ".") == 2 && len(token) <= 16<<10
}

// VerifyAccessToken checks a JWT access token from the provider, as an
// OAuth 2.0 resource server does: its signature with the provider's keys
// (fetched again when it names a key not seen before), its algorithm
// against the allowed ones, its issuer, its audience, and its expiry and
// not-before times with the configured skew. An ID token is refused (it
// carries a nonce). It returns the person the token is for; the error says
// why for the log only.
func (p *Provider) VerifyAccessToken(ctx context.Context, raw string) (*quarry.Identity, error) {
	d, err := p.discovered()
	if err != nil {
		return nil, err
	}
	if !LooksLikeJWT(raw) {
		return nil, errInvalidToken
	}
	if err := p.checkHeader(raw); err != nil {
		return nil, err
	}
	t, err := d.access.Verify(oidc.ClientContext(ctx, p.client), raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errInvalidToken, err)
	}
	var c struct {
		Expiry    *json.Number `json:"exp"`
		NotBefore *json.Number `json:"nbf"`
		Nonce     *string      `json:"nonce"`
		AtHash    *string      `json:"at_hash"`
		CHash     *string      `json:"c_hash"`
		Typ       string       `json:"typ"`
		AZP       string       `json:"azp"`
		ClientID  string       `json:"client_id"`
		CID       string       `json:"cid"`
		AppID     string       `json:"appid"`
	}
	if err := t.Claims(&c); err != nil {
		return nil, fmt.Errorf("%w: %v", errInvalidToken, err)
	}
	client := cmp.Or(c.AZP, c.ClientID, c.CID, c.AppID)
	now := time.Now()
	switch {
	case c.Expiry == nil:
		return nil, fmt.Errorf("%w: no exp claim", errInvalidToken)
	case !within(*c.Expiry, func(at time.Time) bool { return now.Before(at.Add(p.cfg.Skew)) }):
		return nil, fmt.Errorf("%w: expired", errInvalidToken)
	case c.NotBefore != nil && !within(*c.NotBefore, func(at time.Time) bool { return !now.Before(at.Add(-p.cfg.Skew)) }):
		return nil, fmt.Errorf("%w: not valid yet", errInvalidToken)
	case c.Nonce != nil || c.AtHash != nil || c.CHash != nil || strings.EqualFold(c.Typ, "ID"):
		// Claims only ID tokens have (typ "ID" is Keycloak's).
		return nil, fmt.Errorf("%w: an ID token, not an access token", errInvalidToken)
	case client != "" && !slices.Contains(p.cfg.TokenClients, client):
		return nil, fmt.Errorf("%w: issued to client %q, which is not among the accepted ones", errInvalidToken, client)
	}
	claims := map[string]any{}
	if err := t.Claims(&claims); err != nil {
		return nil, fmt.Errorf("%w: %v", errInvalidToken, err)
	}
	if _, ok := claims["email"].(string); !ok {
		// Tokens without an email can still name a person who signed in
		// before; the store decides.
		return &quarry.Identity{Issuer: t.Issuer, Subject: t.Subject}, nil
	}
	id, err := p.identity(t.Issuer, t.Subject, claims)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errInvalidToken, err)
	}
	return id, nil
}

// within reports whether the NumericDate n satisfies ok.
func within(n json.Number, ok func(time.Time) bool) bool {
	f, err := n.Float64()
	if err != nil {
		return false
	}
	sec := int64(f)
	return ok(time.Unix(sec, int64((f-float64(sec))*1e9)))
}

// checkHeader refuses, before any key is looked at, a token whose header is
// unreadable, whose algorithm is not allowed, or whose type says it is not
// an access token.
func (p *Provider) checkHeader(raw string) error {
	b, err := base64.RawURLEncoding.DecodeString(raw[:strings.IndexByte(raw, '.')])
	if err != nil {
		return fmt.Errorf("%w: header: %v", errInvalidToken, err)
	}
	var h struct {
		Alg string `json:"alg"`
		Typ string `json:"typ"`
	}
	if err := json.Unmarshal(b, &h); err != nil {
		return fmt.Errorf("%w: header: %v", errInvalidToken, err)
	}
	if !slices.Contains(p.cfg.Algorithms, h.Alg) {
		return fmt.Errorf("%w: algorithm %q is not allowed", errInvalidToken, h.Alg)
	}
	switch strings.ToLower(h.Typ) {
	case "", "jwt", "at+jwt", "application/at+jwt":
		return nil
	}
	return fmt.Errorf("%w: type %q is not an access token", errInvalidToken, h.Typ)
}

// EndSessionURL returns where to send a browser so that the provider ends
// its session too, coming back to postLogout; "" when the provider has no
// end-session endpoint.
func (p *Provider) EndSessionURL(idToken, postLogout string) string {
	d, err := p.discovered()
	if err != nil || d.endSession == "" {
		return ""
	}
	u, err := url.Parse(d.endSession)
	if err != nil {
		return ""
	}
	q := u.Query()
	if idToken != "" {
		q.Set("id_token_hint", idToken)
	}
	q.Set("client_id", p.cfg.ClientID)
	if postLogout != "" {
		q.Set("post_logout_redirect_uri", postLogout)
	}
	u.RawQuery = q.Encode()
	return u.String()
}
