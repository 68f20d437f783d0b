package quarry

import (
	"errors"
	"time"
)

// OAuthToken is a person's token at an authorization server: for a tool's
// OAuth configuration, or from their single sign-on. Its access and refresh
// tokens are secrets: sealed at rest, never logged, never answered.
type OAuthToken struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type,omitempty"`
	RefreshToken string `json:"refresh_token,omitempty"`
	Scope        string `json:"scope,omitempty"`
	// Expiry is when the access token stops working; the zero Time when
	// the server said nothing.
	Expiry time.Time `json:"-"`
	// ExpiresIn is the lifetime the server gave the access token
	// (expires_in), from which the store computes Expiry with its own
	// clock when it keeps the token; 0 when it said nothing.
	ExpiresIn time.Duration `json:"-"`
}

// RefreshMargin is how long before its expiry an access token is
// refreshed, so that it does not expire on its way to the tool's server
// (Onyx uses the same minute).
const RefreshMargin = 60 * time.Second

// TokenStep is what to do with a stored token before a run.
type TokenStep int

const (
	// TokenUse: the access token is good; send it.
	TokenUse TokenStep = iota
	// TokenRefresh: it is expired or about to be, and a refresh token can
	// get a new one.
	TokenRefresh
	// TokenReconnect: it is expired and cannot be refreshed; the person
	// must connect (or sign in) again.
	TokenReconnect
)

// Step returns what to do with t at now: use it while it has more than
// RefreshMargin to live (or no known expiry), refresh it when it has less
// and a refresh token, and otherwise have the person connect again.
func (t *OAuthToken) Step(now time.Time) TokenStep {
	if t.AccessToken != "" && (t.Expiry.IsZero() || now.Add(RefreshMargin).Before(t.Expiry)) {
		return TokenUse
	}
	if t.RefreshToken != "" {
		return TokenRefresh
	}
	return TokenReconnect
}

// Expired reports whether t's access token has expired at now, or will
// within RefreshMargin, as a person's list of connections shows it (Onyx's
// is_token_expired).
func (t *OAuthToken) Expired(now time.Time) bool {
	return !t.Expiry.IsZero() && !now.Add(RefreshMargin).Before(t.Expiry)
}

// Refreshed returns the token to keep after a refresh of t answered next:
// a server that sends no new refresh token (many do not) keeps the old one
// valid, so it is kept (RFC 6749 section 6).
func (t *OAuthToken) Refreshed(next OAuthToken) OAuthToken {
	if next.RefreshToken == "" {
		next.RefreshToken = t.RefreshToken
	}
	return next
}

// ErrTokenRevoked is the error of a refresh that the authorization server
// refused for good (invalid_grant: the refresh token was revoked, expired
// or already used): the stored token is of no more use and is forgotten.
var ErrTokenRevoked = errors.New("quarry: the authorization server refused the refresh token (invalid_grant)")

// RefreshLease is how long a replica may hold a token to refresh it before
// another may take over: longer than a token endpoint may take to answer.
const RefreshLease = 30 * time.Second
