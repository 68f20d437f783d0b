package authtest

import (
	"context"
	"crypto/rsa"
	"crypto/subtle"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// storage is the provider's state, kept in memory: what op.Storage asks for.
type storage struct {
	mu       sync.Mutex
	users    map[string]User   // by Subject
	clients  map[string]Client // by ID
	keys     []*signingKey     // keys[0] signs; all are published
	requests map[string]*authRequest
	codes    map[string]string // authorization code -> auth request id
	tokens   map[string]token  // by id (the jti of the JWT)
	refresh  map[string]*refreshGrant
	// refreshes counts the refresh_token grants answered.
	refreshes int
}

// refreshGrant is what a refresh token stands for: the sign-in it came
// from.
type refreshGrant struct {
	subject  string
	clientID string
	scopes   []string
	authTime time.Time
	amr      []string
}

var _ op.RefreshTokenRequest = (*refreshGrant)(nil)

func (g *refreshGrant) GetAMR() []string                 { return g.amr }
func (g *refreshGrant) GetAudience() []string            { return []string{g.clientID} }
func (g *refreshGrant) GetAuthTime() time.Time           { return g.authTime }
func (g *refreshGrant) GetClientID() string              { return g.clientID }
func (g *refreshGrant) GetScopes() []string              { return g.scopes }
func (g *refreshGrant) GetSubject() string               { return g.subject }
func (g *refreshGrant) SetCurrentScopes(scopes []string) { g.scopes = scopes }

func newStorage() *storage {
	return &storage{
		users:    make(map[string]User),
		clients:  make(map[string]Client),
		requests: make(map[string]*authRequest),
		codes:    make(map[string]string),
		tokens:   make(map[string]token),
		refresh:  make(map[string]*refreshGrant),
	}
}

// token is an access token the provider issued.
type token struct {
	subject  string
	clientID string
	scopes   []string
	expires  time.Time
}

var _ interface {
	op.Storage
	op.CanSetUserinfoFromRequest
	op.CanGetPrivateClaimsFromRequest
} = (*storage)(nil)

// signingKey is an RSA key with its kid; it is both the op.SigningKey and,
// through publicKey, the op.Key published at /keys.
type signingKey struct {
	id  string
	key *rsa.PrivateKey
}

func (k *signingKey) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k *signingKey) Key() any                                    { return k.key }
func (k *signingKey) ID() string                                  { return k.id }

type publicKey struct{ *signingKey }

func (k publicKey) Algorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k publicKey) Use() string                        { return "sig" }
func (k publicKey) Key() any                           { return &k.key.PublicKey }

// addKey makes k the signing key, keeping the others published.
func (s *storage) addKey(k *signingKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys = slices.Insert(s.keys, 0, k)
}

func (s *storage) currentKey() *signingKey {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keys[0]
}

// authRequest is an authorization request between the authorization
// endpoint and the token endpoint. The storage hands op copies, so that
// the login page can complete the stored one safely.
type authRequest struct {
	id       string
	req      oidc.AuthRequest // as op parsed and validated it
	subject  string           // the user who signed in, once done
	authTime time.Time
	done     bool
}

var _ op.AuthRequest = (*authRequest)(nil)

func (a *authRequest) GetID() string  { return a.id }
func (a *authRequest) GetACR() string { return "" }
func (a *authRequest) GetAMR() []string {
	if a.done {
		return []string{"pwd"}
	}
	return nil
}
func (a *authRequest) GetAudience() []string              { return []string{a.req.ClientID} }
func (a *authRequest) GetAuthTime() time.Time             { return a.authTime }
func (a *authRequest) GetClientID() string                { return a.req.ClientID }
func (a *authRequest) GetNonce() string                   { return a.req.Nonce }
func (a *authRequest) GetRedirectURI() string             { return a.req.RedirectURI }
func (a *authRequest) GetResponseType() oidc.ResponseType { return a.req.ResponseType }
func (a *authRequest) GetResponseMode() oidc.ResponseMode { return a.req.ResponseMode }
func (a *authRequest) GetScopes() []string                { return a.req.Scopes }
func (a *authRequest) GetState() string                   { return a.req.State }
func (a *authRequest) GetSubject() string                 { return a.subject }
func (a *authRequest) Done() bool                         { return a.done }

func (a *authRequest) GetCodeChallenge() *oidc.CodeChallenge {
	if a.req.CodeChallenge == "" {
		return nil
	}
	return &oidc.CodeChallenge{Challenge: a.req.CodeChallenge, Method: a.req.CodeChallengeMethod}
}

// CreateAuthRequest stores a request that op has validated against its
// client. With no sign-in session at the provider, prompt=none cannot be
// satisfied.
func (s *storage) CreateAuthRequest(_ context.Context, req *oidc.AuthRequest, _ string) (op.AuthRequest, error) {
	if slices.Contains(req.Prompt, oidc.PromptNone) {
		return nil, oidc.ErrLoginRequired()
	}
	a := &authRequest{id: randomID(), req: *req}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests[a.id] = a
	c := *a
	return &c, nil
}

func (s *storage) AuthRequestByID(_ context.Context, id string) (op.AuthRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.authRequestLocked(id)
}

func (s *storage) authRequestLocked(id string) (*authRequest, error) {
	a, ok := s.requests[id]
	if !ok {
		return nil, errors.New("authtest: unknown or finished auth request")
	}
	c := *a
	return &c, nil
}

func (s *storage) AuthRequestByCode(_ context.Context, code string) (op.AuthRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.codes[code]
	if !ok {
		return nil, errors.New("authtest: unknown or used code")
	}
	return s.authRequestLocked(id)
}

func (s *storage) SaveAuthCode(_ context.Context, id, code string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.codes[code] = id
	return nil
}

// DeleteAuthRequest forgets a request and its code: op calls it once the
// code has been exchanged, so that a code works only once.
func (s *storage) DeleteAuthRequest(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deleteAuthRequestLocked(id)
	return nil
}

func (s *storage) deleteAuthRequestLocked(id string) {
	delete(s.requests, id)
	for code, rid := range s.codes {
		if rid == id {
			delete(s.codes, code)
		}
	}
}

// signIn checks username and password and, when they match a user,
// completes auth request id for that user.
func (s *storage) signIn(id, username, password string) (ok bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, found := s.requests[id]
	if !found || a.done {
		return false, errors.New("authtest: unknown or finished auth request")
	}
	u, found := s.users[username]
	if !found {
		for _, v := range s.users {
			if v.Email != "" && v.Email == username {
				u, found = v, true
				break
			}
		}
	}
	if !found || u.Password == "" || subtle.ConstantTimeCompare([]byte(u.Password), []byte(password)) != 1 {
		return false, nil
	}
	a.subject, a.authTime, a.done = u.Subject, time.Now(), true
	return true, nil
}

// deny ends auth request id unfinished.
func (s *storage) deny(id string) (*authRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.authRequestLocked(id)
	if err != nil {
		return nil, err
	}
	s.deleteAuthRequestLocked(id)
	return a, nil
}

func (s *storage) CreateAccessToken(_ context.Context, req op.TokenRequest) (string, time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.createAccessTokenLocked(req)
}

// createAccessTokenLocked records an access token for an authorization
// request or a refresh grant.
func (s *storage) createAccessTokenLocked(req op.TokenRequest) (string, time.Time, error) {
	var clientID string
	switch r := req.(type) {
	case *authRequest:
		clientID = r.GetClientID()
	case *refreshGrant:
		clientID = r.clientID
	default:
		return "", time.Time{}, errNotSupported
	}
	lifetime := s.clients[clientID].AccessTokenLifetime
	if lifetime == 0 {
		lifetime = DefaultLifetime
	}
	id := randomID()
	t := token{subject: req.GetSubject(), clientID: clientID, scopes: req.GetScopes(), expires: time.Now().Add(lifetime)}
	s.tokens[id] = t
	return id, t.expires, nil
}

// CreateAccessAndRefreshTokens issues an access token and a refresh token:
// for a code exchanged with the offline_access scope, or for a refresh
// (which retires the refresh token used: they rotate).
func (s *storage) CreateAccessAndRefreshTokens(_ context.Context, req op.TokenRequest, current string) (string, string, time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var g refreshGrant
	switch r := req.(type) {
	case *authRequest:
		g = refreshGrant{subject: r.subject, clientID: r.GetClientID(), scopes: r.GetScopes(), authTime: r.authTime, amr: r.GetAMR()}
	case *refreshGrant:
		if _, ok := s.refresh[current]; !ok {
			return "", "", time.Time{}, oidc.ErrInvalidGrant().WithDescription("the refresh token is unknown, used or revoked")
		}
		delete(s.refresh, current)
		s.refreshes++
		g = *r
	default:
		return "", "", time.Time{}, errNotSupported
	}
	id, exp, err := s.createAccessTokenLocked(&g)
	if err != nil {
		return "", "", time.Time{}, err
	}
	rt := "rt-" + randomID()
	s.refresh[rt] = &g
	return id, rt, exp, nil
}

// TokenRequestByRefreshToken returns the grant of a refresh token that is
// still good (a copy, which op may narrow the scopes of).
func (s *storage) TokenRequestByRefreshToken(_ context.Context, rt string) (op.RefreshTokenRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.refresh[rt]
	if !ok {
		return nil, errors.New("authtest: unknown, used or revoked refresh token")
	}
	c := *g
	c.scopes = slices.Clone(g.scopes)
	return &c, nil
}

// TerminateSession, called by the end-session endpoint, revokes the user's
// access tokens for the client at the userinfo endpoint. (A JWT access token
// stays valid for a resource server that checks only its signature and
// claims, as with any provider.)
func (s *storage) TerminateSession(_ context.Context, userID, clientID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, t := range s.tokens {
		if t.subject == userID && t.clientID == clientID {
			delete(s.tokens, id)
		}
	}
	return nil
}

// RevokeToken revokes an access token (by id) or a refresh token (RFC 7009).
func (s *storage) RevokeToken(_ context.Context, tokenOrID, _, clientID string) *oidc.Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.tokens[tokenOrID]; ok && t.clientID == clientID {
		delete(s.tokens, tokenOrID)
	}
	if g, ok := s.refresh[tokenOrID]; ok && g.clientID == clientID {
		delete(s.refresh, tokenOrID)
	}
	return nil
}

// GetRefreshTokenInfo tells op whether a token being revoked is a refresh
// token, and whose.
func (s *storage) GetRefreshTokenInfo(_ context.Context, clientID, token string) (string, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if g, ok := s.refresh[token]; ok && g.clientID == clientID {
		return g.subject, token, nil
	}
	return "", "", op.ErrInvalidRefreshToken
}

func (s *storage) SigningKey(context.Context) (op.SigningKey, error) {
	return s.currentKey(), nil
}

func (s *storage) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.RS256}, nil
}

func (s *storage) KeySet(context.Context) ([]op.Key, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]op.Key, len(s.keys))
	for i, k := range s.keys {
		keys[i] = publicKey{k}
	}
	return keys, nil
}

func (s *storage) GetClientByClientID(_ context.Context, id string) (op.Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clients[id]
	if !ok {
		return nil, fmt.Errorf("authtest: unknown client %q", id)
	}
	return client{c}, nil
}

func (s *storage) AuthorizeClientIDSecret(_ context.Context, id, secret string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clients[id]
	if !ok || subtle.ConstantTimeCompare([]byte(c.Secret), []byte(secret)) != 1 {
		return errors.New("authtest: unknown client or wrong secret")
	}
	return nil
}

// SetUserinfoFromScopes is deprecated in op; SetUserinfoFromRequest does
// the work.
func (s *storage) SetUserinfoFromScopes(context.Context, *oidc.UserInfo, string, string, []string) error {
	return nil
}

// SetUserinfoFromRequest fills the user's claims into an ID token.
func (s *storage) SetUserinfoFromRequest(_ context.Context, info *oidc.UserInfo, req op.IDTokenRequest, scopes []string) error {
	return s.setUserinfo(info, req.GetSubject(), scopes)
}

// SetUserinfoFromToken answers the userinfo endpoint for an access token
// the provider issued and has not revoked.
func (s *storage) SetUserinfoFromToken(_ context.Context, info *oidc.UserInfo, tokenID, _, _ string) error {
	s.mu.Lock()
	t, ok := s.tokens[tokenID]
	s.mu.Unlock()
	if !ok || time.Now().After(t.expires) {
		return errors.New("authtest: unknown, revoked or expired access token")
	}
	return s.setUserinfo(info, t.subject, t.scopes)
}

func (s *storage) setUserinfo(info *oidc.UserInfo, subject string, scopes []string) error {
	s.mu.Lock()
	u, ok := s.users[subject]
	s.mu.Unlock()
	if !ok {
		return fmt.Errorf("authtest: unknown user %q", subject)
	}
	info.Subject = u.Subject
	for k, v := range userClaims(u, scopes) {
		info.AppendClaims(k, v)
	}
	return nil
}

func (s *storage) SetIntrospectionFromToken(context.Context, *oidc.IntrospectionResponse, string, string, string) error {
	return errNotSupported
}

// GetPrivateClaimsFromRequest gives the claims of a JWT access token beyond
// the registered ones: the user's claims and the granted scopes.
func (s *storage) GetPrivateClaimsFromRequest(_ context.Context, req op.TokenRequest, _ []string) (map[string]any, error) {
	s.mu.Lock()
	u, ok := s.users[req.GetSubject()]
	s.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("authtest: unknown user %q", req.GetSubject())
	}
	claims := userClaims(u, req.GetScopes())
	claims["scope"] = strings.Join(req.GetScopes(), " ")
	return claims, nil
}

// GetPrivateClaimsFromScopes is not called: op prefers
// GetPrivateClaimsFromRequest.
func (s *storage) GetPrivateClaimsFromScopes(context.Context, string, string, []string) (map[string]any, error) {
	return nil, nil
}

func (s *storage) GetKeyByIDAndClientID(context.Context, string, string) (*jose.JSONWebKey, error) {
	return nil, errNotSupported
}

func (s *storage) ValidateJWTProfileScopes(context.Context, string, []string) ([]string, error) {
	return nil, errNotSupported
}

func (s *storage) Health(context.Context) error { return nil }

// userClaims returns u's claims for scopes (see User).
func userClaims(u User, scopes []string) map[string]any {
	claims := make(map[string]any)
	for _, scope := range scopes {
		switch scope {
		case oidc.ScopeEmail:
			if u.Email != "" {
				claims["email"] = u.Email
			}
			if !u.EmailUnsaid {
				claims["email_verified"] = u.EmailVerified
			}
		case oidc.ScopeProfile:
			if u.Name != "" {
				claims["name"] = u.Name
			}
			if u.ObjectID != "" {
				claims["oid"] = u.ObjectID
			}
		case ScopeGroups:
			claims["groups"] = append([]string{}, u.Groups...)
		}
	}
	return claims
}

// client adapts a Client to op.Client.
type client struct{ c Client }

var _ op.Client = client{}

func (c client) GetID() string                       { return c.c.ID }
func (c client) RedirectURIs() []string              { return c.c.RedirectURIs }
func (c client) PostLogoutRedirectURIs() []string    { return c.c.PostLogoutRedirectURIs }
func (c client) ApplicationType() op.ApplicationType { return op.ApplicationTypeWeb }
func (c client) AuthMethod() oidc.AuthMethod         { return oidc.AuthMethodBasic }
func (c client) ResponseTypes() []oidc.ResponseType {
	return []oidc.ResponseType{oidc.ResponseTypeCode}
}
func (c client) GrantTypes() []oidc.GrantType {
	if c.c.RefreshTokens {
		return []oidc.GrantType{oidc.GrantTypeCode, oidc.GrantTypeRefreshToken}
	}
	return []oidc.GrantType{oidc.GrantTypeCode}
}
func (c client) LoginURL(id string) string           { return loginPath + "?authRequestID=" + id }
func (c client) AccessTokenType() op.AccessTokenType { return op.AccessTokenTypeJWT }
func (c client) IDTokenLifetime() time.Duration {
	if c.c.IDTokenLifetime == 0 {
		return DefaultLifetime
	}
	return c.c.IDTokenLifetime
}
func (c client) DevMode() bool                        { return false }
func (c client) IsScopeAllowed(scope string) bool     { return scope == ScopeGroups }
func (c client) ClockSkew() time.Duration             { return 0 }
func (c client) IDTokenUserinfoClaimsAssertion() bool { return true }
func (c client) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(scopes []string) []string { return scopes }
}
func (c client) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(scopes []string) []string { return scopes }
}
