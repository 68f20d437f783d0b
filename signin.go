package quarry

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// The rules of signing in: who may register a local account, what a
// password must be, how the OpenID provider's word becomes a role, which
// identity may be linked to which account, and how many attempts are
// allowed. Package store applies them inside its transactions; package api
// and package auth apply them at the edge.

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
	Mode    string       // RegistrationOpen, RegistrationInvite or RegistrationClosed.
	Domains EmailDomains // If set, the email domains accounts may have.
}

// EmailDomains are the email domains accounts may have (lower case); none
// means any.
type EmailDomains []string

// Allow reports whether email key key is of one of d, or d names none.
func (d EmailDomains) Allow(key string) bool {
	return len(d) == 0 || slices.Contains(d, key[strings.LastIndexByte(key, '@')+1:])
}

// Check reports why the person with email key key may not register a local
// account, or nil if they may. first says the database has no people yet:
// the first person may register whatever the mode but closed (and becomes
// an admin, see NewAccountRole). invited says an admin invited the email.
// Closed registration and the allowed domains bind everyone.
func (p *RegistrationPolicy) Check(key string, first, invited bool) error {
	switch {
	case p.Mode == RegistrationClosed:
		return Errorf(EFORBIDDEN, "Registration is closed; sign in with single sign-on or ask an admin")
	case !p.Domains.Allow(key):
		return Errorf(EFORBIDDEN, "Accounts are for emails of these domains only: %s", strings.Join(p.Domains, ", "))
	case first, invited:
		return nil
	case p.Mode == RegistrationInvite:
		return Errorf(EFORBIDDEN, "Registration is by invitation only, and this email has not been invited")
	}
	return nil
}

// NewAccountRole returns the role of a person who registers a local
// account: admin for the first person of a new database (as in Onyx, the
// first user is), basic for everyone after.
func NewAccountRole(first bool) Role {
	if first {
		return RoleAdmin
	}
	return RoleBasic
}

// Invitation lets a person register when registration is by invitation.
type Invitation struct {
	Email     string  `json:"email"`
	InvitedBy *string `json:"invited_by"`
	CreatedAt Time    `json:"created_at"`
}

// MaxPasswordBytes bounds the passwords Quarry hashes: longer ones are
// refused before any work is done.
const MaxPasswordBytes = 1024

//go:embed common-passwords.txt
var commonPasswordsText string

// PasswordPolicy is what a new password must be.
type PasswordPolicy struct {
	MinLength int             // In characters.
	common    map[string]bool // Lower-cased passwords too common to use.
}

// NewPasswordPolicy returns the policy for passwords of at least minLength
// characters that are not among the most common passwords.
func NewPasswordPolicy(minLength int) *PasswordPolicy {
	p := &PasswordPolicy{MinLength: minLength, common: map[string]bool{}}
	for _, line := range strings.Split(commonPasswordsText, "\n") {
		if line != "" && !strings.HasPrefix(line, "#") {
			p.common[line] = true
		}
	}
	return p
}

// ErrPasswordTooLong answers a password of more than MaxPasswordBytes.
var ErrPasswordTooLong = Errorf(EINVALID, "The password is longer than %d bytes", MaxPasswordBytes)

// Check returns an EINVALID error saying what is wrong with password, the
// new password of the account with email, or nil.
func (p *PasswordPolicy) Check(password, email string) error {
	n := utf8.RuneCountInString(password)
	lower := strings.ToLower(password)
	local, _, _ := strings.Cut(strings.ToLower(email), "@")
	switch {
	case len(password) > MaxPasswordBytes:
		return ErrPasswordTooLong
	case n < p.MinLength:
		return Errorf(EINVALID, "The password must be at least %d characters long", p.MinLength)
	case p.common[lower]:
		return Errorf(EINVALID, "The password is one of the most common passwords; choose another")
	case lower == strings.ToLower(email) || (len(local) >= 4 && strings.Contains(lower, local)):
		return Errorf(EINVALID, "The password must not contain the email address or its name part")
	}
	return nil
}

// RolePolicy gives people their roles from what the OpenID provider says of
// them.
type RolePolicy struct {
	// AdminEmails are the email keys of the people who are admins, when the
	// provider says their email is verified: they become admins when their
	// account is made, and at every sign-in when the provider decides roles.
	AdminEmails []string
	// Claim, if set, names the claim whose values decide the role at every
	// sign-in (for example "groups", or "realm_access.roles" for a nested
	// claim); Map gives the role of each value. A person matching several
	// values gets the most powerful role (see Role.Rank); one matching none
	// is basic.
	Claim string
	Map   map[string]Role
}

// Role returns the role of a person with email key key whose Claim has the
// given values, and whether the provider decides it (a claim is set up):
// the most powerful role among the values that Map names, basic if none;
// admin for one of AdminEmails that the provider says is verified.
func (p *RolePolicy) Role(key string, verified bool, values []string) (Role, bool) {
	var role Role
	for _, v := range values {
		if r, ok := p.Map[v]; ok && (role == "" || r.Rank() > role.Rank()) {
			role = r
		}
	}
	if role == "" {
		role = RoleBasic
	}
	if verified && slices.Contains(p.AdminEmails, key) {
		role = RoleAdmin
	}
	return role, p.Claim != ""
}

// Identity is a person as an OpenID provider vouches for them at sign-in.
type Identity struct {
	Issuer  string
	Subject string
	Email   string
	// EmailVerified says that the provider said outright that the email is
	// the person's (email_verified true). Only then is the identity linked
	// to an account that has the email already (see CheckLink).
	EmailVerified bool
	Name          *string
	// Role is the role the sign-in policy gives the person; RoleFromProvider
	// says whether the provider decides it at every sign-in (a role claim is
	// set up) or only for a person's first sign-in.
	Role             Role
	RoleFromProvider bool
}

// ErrNotLinkable answers a first sign-in with an email that an account has
// already, when the provider does not say the email is verified.
var ErrNotLinkable = Errorf(EFORBIDDEN, "An account with this email exists, and the provider does not confirm the email is yours; ask an admin")

// CheckLink reports why id, signing in for the first time, may not be
// linked to the account that has its email already: only when the provider
// says the email is verified, or anybody who can set an email at a provider
// could take over an account. Linking a local account ends its password and
// its sessions: whoever registered that email locally proved nothing, the
// provider did.
func (id *Identity) CheckLink() error {
	if !id.EmailVerified {
		return ErrNotLinkable
	}
	return nil
}

// RoleOutOfDate reports whether the role the provider gives in id should
// replace role, a person's role now: only when the provider decides roles.
// A curator made one through group flags stays one while the provider says
// basic.
func (id *Identity) RoleOutOfDate(role Role) bool {
	return id.RoleFromProvider && id.Role != role && !(id.Role == RoleBasic && role == RoleCurator)
}

// ErrDeactivated answers a deactivated person who signs in with the
// provider. (A wrong password gets the same answer for a deactivated
// account as for a wrong password.)
var ErrDeactivated = Errorf(EFORBIDDEN, "This account is deactivated; ask an admin")

// SignInLimits bound the attempts to sign in or register counted against a
// key (see ThrottleKey) in each Window; a successful sign-in takes its
// attempt back. Past its limit in a window, a key is refused until the
// window ends.
type SignInLimits struct {
	Window        time.Duration
	PerAccount    int // Sign-ins per account (or email tried).
	PerAddress    int // Sign-ins per client address.
	Registrations int // Registrations per client address.
}

// DefaultSignInLimits returns the limits Quarry applies: per 15 minutes,
// 10 sign-ins per account, 100 per address and 20 registrations per
// address.
func DefaultSignInLimits() SignInLimits {
	return SignInLimits{Window: 15 * time.Minute, PerAccount: 10, PerAddress: 100, Registrations: 20}
}

// ThrottleKey names what attempts are counted against: an account by its
// email key (hashed: the store holds no emails in its counts), an address,
// or registrations from an address (kinds "account", "address",
// "register").
func ThrottleKey(kind, value string) string {
	if kind == "account" {
		sum := sha256.Sum256([]byte(value))
		value = hex.EncodeToString(sum[:16])
	}
	return kind + ":" + value
}

// Throttle is a key with its limit of attempts per window.
type Throttle struct {
	Key   string
	Limit int
}

// Check reports ETOOMANY, saying when to try again, if count attempts
// counted in the window that started at start are past t's limit at now.
func (t Throttle) Check(count int, start, now time.Time, window time.Duration) error {
	if count <= t.Limit {
		return nil
	}
	wait := start.Add(window).Sub(now)
	minutes := int((wait + time.Minute - 1) / time.Minute)
	unit := "minutes"
	if minutes == 1 {
		unit = "minute"
	}
	return &Error{Code: ETOOMANY, RetryAfter: wait, Message: fmt.Sprintf("Too many failed sign-ins; try again in %d %s", minutes, unit)}
}
