package authtest

import (
	"context"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"testing"
	"time"

	"github.com/zitadel/oidc/v3/pkg/crypto"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
	"golang.org/x/oauth2"
)

// Claims returns the claims of an access token that the provider would
// issue to client clientID for user subject with scopes openid, email,
// profile and groups, valid for DefaultLifetime from now: iss, sub, aud
// (clientID), client_id, iat, nbf, exp (Unix seconds), jti, scope, and the
// user's claims when subject is a known user (see User). Tests change the
// map and Sign it: exp in the past, nbf in the future, another aud or iss.
func (p *Provider) Claims(clientID, subject string) map[string]any {
	scopes := []string{oidc.ScopeOpenID, oidc.ScopeEmail, oidc.ScopeProfile, ScopeGroups}
	claims := map[string]any{}
	p.store.mu.Lock()
	if u, ok := p.store.users[subject]; ok {
		claims = userClaims(u, scopes)
	}
	p.store.mu.Unlock()
	now := time.Now()
	for k, v := range map[string]any{
		"iss":       p.Issuer,
		"sub":       subject,
		"aud":       []string{clientID},
		"client_id": clientID,
		"iat":       now.Unix(),
		"nbf":       now.Unix(),
		"exp":       now.Add(DefaultLifetime).Unix(),
		"jti":       randomID(),
		"scope":     "openid email profile groups",
	} {
		claims[k] = v
	}
	return claims
}

// Sign returns claims as a JWT signed the way the provider signs its tokens:
// RS256 with the current key, whose kid is in the header. The provider keeps
// no record of it, so its userinfo endpoint does not accept it as an access
// token.
func (p *Provider) Sign(claims map[string]any) string {
	p.tb.Helper()
	return sign(p.tb, p.store.currentKey(), claims)
}

// SignWith returns claims as a JWT signed RS256 with key and kid in the
// header: a key the provider never published, for tests of forged tokens
// (with the provider's KeyID, or another kid).
func (p *Provider) SignWith(key *rsa.PrivateKey, kid string, claims map[string]any) string {
	p.tb.Helper()
	return sign(p.tb, &signingKey{id: kid, key: key}, claims)
}

func sign(tb testing.TB, k op.SigningKey, claims map[string]any) string {
	tb.Helper()
	signer, err := op.SignerFromKey(k)
	if err != nil {
		tb.Fatalf("authtest: %v", err)
	}
	jwt, err := crypto.Sign(claims, signer)
	if err != nil {
		tb.Fatalf("authtest: signing: %v", err)
	}
	return jwt
}

// Unsigned returns claims as an unsecured JWT: header {"alg":"none","typ":"JWT"}
// and an empty signature, which a relying party must refuse.
func Unsigned(claims map[string]any) string {
	payload, err := json.Marshal(claims)
	if err != nil {
		panic("authtest: " + err.Error())
	}
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + enc.EncodeToString(payload) + "."
}

// AccessToken returns a JWT access token that the provider issues to client
// clientID for the user who signs in as username with password, obtained
// through its real endpoints: an authorization code flow with PKCE, state
// and nonce, scopes openid, email, profile and groups, the client's first
// redirect URI (which is never requested), and the token endpoint with
// clientSecret (client_secret_basic). Any failure fails the test.
func (p *Provider) AccessToken(tb testing.TB, clientID, clientSecret, username, password string) string {
	tb.Helper()
	p.store.mu.Lock()
	c, ok := p.store.clients[clientID]
	p.store.mu.Unlock()
	if !ok || len(c.RedirectURIs) == 0 {
		tb.Fatalf("authtest: AccessToken: no client %q with a redirect URI", clientID)
	}
	conf := oauth2.Config{
		ClientID:     clientID,
		ClientSecret: clientSecret,
		Endpoint: oauth2.Endpoint{
			AuthURL:   p.op.AuthorizationEndpoint().Absolute(p.Issuer),
			TokenURL:  p.op.TokenEndpoint().Absolute(p.Issuer),
			AuthStyle: oauth2.AuthStyleInHeader,
		},
		RedirectURL: c.RedirectURIs[0],
		Scopes:      []string{oidc.ScopeOpenID, oidc.ScopeEmail, oidc.ScopeProfile, ScopeGroups},
	}
	state, verifier := randomID(), oauth2.GenerateVerifier()
	start := conf.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("nonce", randomID()))
	callback, err := p.Authorize(nil, start, username, password)
	if err != nil {
		tb.Fatalf("authtest: AccessToken: %v", err)
	}
	q := callback.Query()
	if q.Get("state") != state || q.Get("code") == "" {
		tb.Fatalf("authtest: AccessToken: the provider answered %s", callback)
	}
	tok, err := conf.Exchange(context.Background(), q.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		tb.Fatalf("authtest: AccessToken: %v", err)
	}
	return tok.AccessToken
}
