// Package authtest runs a real OpenID Provider (zitadel/oidc's op package) in
// process, for tests of Quarry's single sign-on and bearer-token checks.
//
// A Provider serves the provider's own endpoints over plain HTTP on a
// loopback address: discovery (/.well-known/openid-configuration), the
// authorization endpoint (/authorize), the token endpoint (/oauth/token,
// with client_secret_basic or client_secret_post; the authorization code
// grant, and the refresh_token grant for clients with RefreshTokens),
// token revocation (/revoke), userinfo (/userinfo), the key set (/keys)
// and RP-initiated logout (/end_session). The protocol is
// zitadel's; this package supplies what op leaves to its user: an in-memory
// storage of users, clients, keys and tokens, and a small HTML login page
// (/login) with a username, a password, a "Sign in" and a "Deny" button.
//
// A typical test:
//
//	p := authtest.Start(t)
//	p.AddClient(authtest.Client{ID: "quarry", Secret: "s3cret",
//		RedirectURIs: []string{srv.URL + "/auth/oidc/callback"}})
//	p.AddUser(authtest.User{Subject: "u1", Email: "ada@example.com",
//		EmailVerified: true, Password: "pw"})
//	jar, _ := cookiejar.New(nil)
//	c := &http.Client{Jar: jar}
//	callback, err := p.Authorize(c, srv.URL+"/auth/oidc/login", "ada@example.com", "pw")
//	// callback is the relying party's redirect URI with code and state: request it with c.
//
// Tokens. ID tokens carry iss, sub, aud (the client id), azp and client_id
// (the client id), exp, iat, auth_time, amr ["pwd"], nonce (when the
// authorization request had one), at_hash and c_hash, and the user's claims
// for the requested scopes (see [User]). Access tokens are JWTs (RFC 9068
// style, though with "typ":"JWT") with iss, sub, aud (the client id),
// client_id, exp, iat, nbf, jti, scope (the granted scopes, space-separated)
// and the same user claims. Both are signed RS256 by the current key, whose
// kid is in the header.
//
// The provider keeps no sign-in session of its own: every authorization
// request shows the login form, and one with prompt=none ends with
// error=login_required. It sets no cookies.
//
// zitadel's op logs through log/slog's default logger; go test shows that
// output only for failing tests.
//
// Only tests import this package, as with store/storetest: importing it from
// Quarry's own code would link an OpenID Provider into the server.
package authtest

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/zitadel/oidc/v3/pkg/op"
)

// DefaultLifetime is the lifetime of ID tokens and access tokens for a
// client that does not choose its own.
const DefaultLifetime = 5 * time.Minute

// ScopeGroups is the scope that asks for the "groups" claim.
const ScopeGroups = "groups"

// User is a person the provider can sign in.
//
// The provider puts the user's claims in ID tokens, userinfo answers and JWT
// access tokens according to the granted scopes: "email" gives email and
// email_verified (true or false, unless EmailUnsaid), "profile" gives name
// (and oid, for a user with an ObjectID),
// "groups" ([ScopeGroups]) gives groups (a JSON array, empty when Groups is
// empty). Scopes other than openid, profile, email, phone, address,
// offline_access and groups are dropped from the request by op.
type User struct {
	Subject       string // the "sub" claim; unique among users
	Email         string
	EmailVerified bool
	Name          string
	Groups        []string // the "groups" claim, with the groups scope

	// Like Entra ID: EmailUnsaid leaves email_verified out (Entra ID sends
	// none), and ObjectID, when set, is the "oid" claim (Entra ID's object
	// id of the person, with the profile scope).
	EmailUnsaid bool
	ObjectID    string

	// Password is what the login form accepts for this user, who signs in
	// with either Subject or Email as the username. A user with an empty
	// Password cannot sign in.
	Password string
}

// Client is a relying party registered at the provider: a confidential web
// client that uses the authorization code flow and authenticates at the
// token endpoint with its secret, by client_secret_basic or
// client_secret_post. PKCE is optional; when the authorization request has a
// code_challenge (S256 or plain), the token request must have the matching
// code_verifier. Its access tokens are JWTs (op.AccessTokenTypeJWT), so that
// a resource server can verify them against the provider's keys.
type Client struct {
	ID     string
	Secret string

	// RedirectURIs are the allowed redirect_uri values, compared exactly;
	// http URIs are accepted.
	RedirectURIs []string

	// PostLogoutRedirectURIs are the allowed post_logout_redirect_uri
	// values of the end-session endpoint.
	PostLogoutRedirectURIs []string

	// IDTokenLifetime is how long the client's ID tokens are valid; zero
	// means DefaultLifetime, and a negative lifetime gives ID tokens that
	// have already expired when they are issued.
	IDTokenLifetime time.Duration

	// AccessTokenLifetime is how long the client's access tokens are valid
	// (their exp, and expires_in in the token response); zero means
	// DefaultLifetime. It must not be negative: op would answer a huge
	// expires_in. For a token that is already expired, Sign the Claims with
	// exp in the past, or check a short-lived token with a verifier whose
	// clock runs ahead.
	AccessTokenLifetime time.Duration

	// RefreshTokens lets the client use the refresh_token grant: an
	// authorization request with the offline_access scope then gets a
	// refresh token with its access token. Refresh tokens rotate: each
	// refresh answers a new one and the one used stops working, so a
	// refresh token used twice fails with invalid_grant.
	RefreshTokens bool
}

// Provider is an OpenID Provider serving on a loopback address. It is safe
// for concurrent use, but the methods that can fail (Serve, AddClient,
// RotateKey, Sign, SignWith, AccessToken) call tb.Fatal, so call them from
// the test's goroutine.
type Provider struct {
	// Issuer is the provider's issuer identifier, http://127.0.0.1:PORT,
	// which is also the base URL of its endpoints. It does not change
	// across Stop and Serve.
	Issuer string

	tb      testing.TB
	addr    string // host:port of Issuer
	store   *storage
	op      *op.Provider
	handler http.Handler

	mu     sync.Mutex
	srv    *http.Server // nil while stopped
	tokens []url.Values // the forms of the token endpoint's requests
}

// recordToken notes the form of each request to the token endpoint, then
// lets next answer it.
func (p *Provider) recordToken(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err == nil {
			if form, err := url.ParseQuery(string(b)); err == nil {
				p.mu.Lock()
				p.tokens = append(p.tokens, form)
				p.mu.Unlock()
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		next.ServeHTTP(w, r)
	})
}

// TokenRequests returns the forms of the requests the token endpoint got,
// in order (client secrets sent in the form included).
func (p *Provider) TokenRequests() []url.Values {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.tokens)
}

// Start returns a provider that is already serving. It stops when the test
// ends.
func Start(tb testing.TB) *Provider {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("authtest: listening: %v", err)
	}
	// Served on the listener that chose the address, so that no other
	// process can take the port between the two (as with New).
	p := newProvider(tb, l.Addr().String())
	p.mu.Lock()
	p.serve(l)
	p.mu.Unlock()
	return p
}

// New returns a provider whose Issuer address is chosen but which does not
// serve yet: connections to it are refused until Serve. It is for tests of
// a relying party that starts while its provider is unreachable.
//
// The address is a free loopback port when New picks it; another process
// could in principle take it before Serve, which then fails the test.
func New(tb testing.TB) *Provider {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("authtest: reserving an address: %v", err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		tb.Fatalf("authtest: reserving an address: %v", err)
	}
	return newProvider(tb, addr)
}

// newProvider returns a provider whose Issuer address is addr, not
// serving yet.
func newProvider(tb testing.TB, addr string) *Provider {
	tb.Helper()
	p := &Provider{
		Issuer: "http://" + addr,
		tb:     tb,
		addr:   addr,
		store:  newStorage(),
	}
	p.store.addKey(newKey(tb))

	config := &op.Config{
		CryptoKey:                [32]byte(randomBytes(32)),
		DefaultLogoutRedirectURI: loggedOutPath,
		CodeMethodS256:           true,
		AuthMethodPost:           true,
		GrantTypeRefreshToken:    true, // for the clients with RefreshTokens
		SupportedScopes:          append(slices.Clone(op.DefaultSupportedScopes), ScopeGroups),
		SupportedClaims:          append(slices.Clone(op.DefaultSupportedClaims), "groups", "scope"),
	}
	var err error
	p.op, err = op.NewProvider(config, p.store, op.StaticIssuer(p.Issuer), op.WithAllowInsecure())
	if err != nil {
		tb.Fatalf("authtest: %v", err)
	}
	withIssuer := op.NewIssuerInterceptor(p.op.IssuerFromRequest)
	mux := http.NewServeMux()
	mux.Handle(loginPath, withIssuer.HandlerFunc(p.login))
	mux.HandleFunc(loggedOutPath, loggedOut)
	mux.Handle("/", p.op)
	mux.Handle("POST /oauth/token", p.recordToken(p.op))
	p.handler = mux

	tb.Cleanup(p.Stop)
	return p
}

// Serve starts serving on the Issuer address: at once, or again after Stop,
// with the same keys, users, clients and outstanding codes and tokens. It
// does nothing while the provider is serving.
func (p *Provider) Serve() {
	p.tb.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.srv != nil {
		return
	}
	l, err := net.Listen("tcp", p.addr)
	if err != nil {
		p.tb.Fatalf("authtest: serving on %s: %v", p.addr, err)
	}
	p.serve(l)
}

// serve serves on l. Called with mu held.
func (p *Provider) serve(l net.Listener) {
	p.srv = &http.Server{Handler: p.handler, ReadHeaderTimeout: 10 * time.Second}
	go p.srv.Serve(l)
}

// Stop stops serving: it closes the listener and every open connection, so
// that new connections are refused. It does nothing while the provider is
// stopped.
func (p *Provider) Stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.srv == nil {
		return
	}
	p.srv.Close()
	p.srv = nil
}

// AddClient registers c, or replaces the client with the same ID.
func (p *Provider) AddClient(c Client) {
	if c.AccessTokenLifetime < 0 {
		p.tb.Fatalf("authtest: client %q: negative AccessTokenLifetime %v", c.ID, c.AccessTokenLifetime)
	}
	c.RedirectURIs = slices.Clone(c.RedirectURIs)
	c.PostLogoutRedirectURIs = slices.Clone(c.PostLogoutRedirectURIs)
	p.store.mu.Lock()
	defer p.store.mu.Unlock()
	p.store.clients[c.ID] = c
}

// AddUser adds u, or replaces the user with the same Subject: for example to
// flip EmailVerified or change Groups. Tokens issued from then on carry the
// new claims; tokens already issued keep theirs.
func (p *Provider) AddUser(u User) {
	u.Groups = slices.Clone(u.Groups)
	p.store.mu.Lock()
	defer p.store.mu.Unlock()
	p.store.users[u.Subject] = u
}

// RotateKey makes a new RSA signing key, with a new kid, the one that signs
// from now on. The key set (/keys) then lists the new key first and keeps
// the previous ones, as providers do during a rotation, so that tokens
// signed before still verify; RetireOldKeys removes them.
func (p *Provider) RotateKey() {
	p.store.addKey(newKey(p.tb))
}

// RetireOldKeys removes every key but the current signing key from the key
// set, so that tokens signed by earlier keys no longer verify for a relying
// party that fetches the key set again.
func (p *Provider) RetireOldKeys() {
	p.store.mu.Lock()
	defer p.store.mu.Unlock()
	p.store.keys = p.store.keys[:1]
}

// Refreshes returns the number of refresh_token grants the provider has
// answered with new tokens.
func (p *Provider) Refreshes() int {
	p.store.mu.Lock()
	defer p.store.mu.Unlock()
	return p.store.refreshes
}

// RevokeRefreshTokens revokes every refresh token of user subject, as an
// administrator of the provider (or the user, at the provider) would: they
// fail with invalid_grant from then on. Access tokens already issued stay
// valid until they expire. It returns how many were revoked.
func (p *Provider) RevokeRefreshTokens(subject string) int {
	p.store.mu.Lock()
	defer p.store.mu.Unlock()
	n := 0
	for rt, g := range p.store.refresh {
		if g.subject == subject {
			delete(p.store.refresh, rt)
			n++
		}
	}
	return n
}

// KeyID returns the kid of the current signing key.
func (p *Provider) KeyID() string {
	return p.store.currentKey().id
}

// newKey returns a fresh RSA key with a random kid.
func newKey(tb testing.TB) *signingKey {
	tb.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		tb.Fatalf("authtest: generating a key: %v", err)
	}
	return &signingKey{id: hex.EncodeToString(randomBytes(8)), key: k}
}

// randomBytes returns n random bytes.
func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

// randomID returns a random identifier for auth requests, codes and tokens.
func randomID() string {
	return hex.EncodeToString(randomBytes(16))
}

// errNotSupported answers the op storage methods for features the provider
// does not offer (JWT profile grants, introspection).
var errNotSupported = errors.New("authtest: not supported")
