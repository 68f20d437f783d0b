package quarry

import "time"

// Ways a person signs in, as sessions and audit entries record them.
const (
	SignInPassword = "password" // Email and password of a local account.
	SignInOIDC     = "oidc"     // Single sign-on at the OpenID provider.
)

// Session is a signed-in browser or client of a person. Its token is shown
// once, in the cookie that carries it; only its SHA-256 is stored.
type Session struct {
	ID         int64  `json:"id"`
	UserID     string `json:"user_id"`
	UserEmail  string `json:"user_email"`
	Method     string `json:"method"` // SignInPassword or SignInOIDC
	IP         string `json:"ip"`
	UserAgent  string `json:"user_agent"`
	CreatedAt  Time   `json:"created_at"`
	LastSeenAt Time   `json:"last_seen_at"`
	ExpiresAt  Time   `json:"expires_at"` // The absolute end; an idle session ends sooner.
}

// SessionPolicy says how long sessions last.
type SessionPolicy struct {
	Idle     time.Duration // A session unused this long ends.
	Absolute time.Duration // A session ends this long after sign-in, used or not.
}

// TouchEvery is how often the use of a session is recorded: rarely, so
// that reads seldom write, but at least four times per idle time-out, so
// that a session in use never looks idle (a minute, or a quarter of Idle
// when that is shorter).
func (p SessionPolicy) TouchEvery() time.Duration { return min(time.Minute, p.Idle/4) }

// NewSession describes a session to open at sign-in.
type NewSession struct {
	Method    string
	IP        string
	UserAgent string
	IDToken   string // The OpenID provider's ID token, kept sealed as the hint of its end-session endpoint.
	// SSOToken holds the provider's access and refresh tokens, kept sealed
	// with the session for the tools that pass them through; nil for none.
	SSOToken *OAuthToken
	Replaces string // The hash of the session token the browser signs in over, if any: that session ends.
}
