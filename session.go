package quarry

import (
	"strings"
	"time"
)

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

// Identity is a person as an OpenID provider vouches for them at sign-in.
type Identity struct {
	Issuer  string
	Subject string
	Email   string
	// EmailVerified says that the provider said outright that the email is
	// the person's (email_verified true). Only then is the identity linked
	// to an account that has the email already.
	EmailVerified bool
	Name          *string
	// Role is the role the sign-in policy gives the person; RoleFromProvider
	// says whether the provider decides it at every sign-in (a role claim is
	// set up) or only for a person's first sign-in.
	Role             Role
	RoleFromProvider bool
}

// Registration modes: who may create a local account with POST
// /auth/register once the first person has.
const (
	RegistrationOpen   = "open"   // Anyone (with an email of an allowed domain, if any are set).
	RegistrationInvite = "invite" // Only people an admin invited.
	RegistrationClosed = "closed" // Nobody, not even the first person: people sign in through the OpenID provider.
)

// RegistrationPolicy says who may register a local account. (Nobody
// becomes an admin by registering, but the first person of a new database:
// a local account's email is not proven.)
type RegistrationPolicy struct {
	Mode    string   // RegistrationOpen, RegistrationInvite or RegistrationClosed.
	Domains []string // If set, the email domains accounts may have (lower case).
}

// AllowsDomain reports whether email key key is of one of domains, or
// whether domains is empty.
func AllowsDomain(domains []string, key string) bool {
	if len(domains) == 0 {
		return true
	}
	domain := key[strings.LastIndexByte(key, '@')+1:]
	for _, d := range domains {
		if domain == d {
			return true
		}
	}
	return false
}

// Invitation lets a person register when registration is by invitation.
type Invitation struct {
	Email     string  `json:"email"`
	InvitedBy *string `json:"invited_by"`
	CreatedAt Time    `json:"created_at"`
}
