package quarry

import (
	"crypto/sha256"
	"crypto/subtle"
	_ "embed"
	"encoding/hex"
	"fmt"
	"net/netip"
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

// Check reports why an account may not have the email whose key is key:
// it is of none of d's domains (403, whatever makes the account:
// registration, or the company's directory).
func (d EmailDomains) Check(key string) error {
	if !d.Allow(key) {
		return Errorf(EFORBIDDEN, "Accounts are for emails of these domains only: %s", strings.Join(d, ", "))
	}
	return nil
}

// Allow reports whether email key key is of one of d, or d names none.
func (d EmailDomains) Allow(key string) bool {
	return len(d) == 0 || slices.Contains(d, key[strings.LastIndexByte(key, '@')+1:])
}

// InviteMatch says what an admin's invitation does for a registration.
type InviteMatch int

// What an invitation does for a registration.
const (
	NotInvited         InviteMatch = iota // The email has no invitation.
	InvitationMismatch                    // It has one, but the token given is missing, not its token, or expired.
	InvitationMatched                     // The token given is the email's invitation's, in time.
)

// RegistrationFacts are what is known of an email that would register a
// local account.
type RegistrationFacts struct {
	First     bool        // The database has no people yet.
	Taken     bool        // An account has the email (its key).
	Lookalike bool        // An account has an email that looks like it (EmailSkeleton).
	Invited   InviteMatch // What the email's invitation does with the token given (MatchInvitation).
}

// EmailProven reports whether a local account registered with f has an
// email somebody proved is its holder's: only when the registration used
// its invitation's link, which an admin gave to the person the email
// names. An email registered without one (open registration, the first
// person of a new database) is nobody's word but its holder's. Synced
// access (a sync pair's document open to an email, or to a source's group
// listed by its members' emails) reaches only accounts whose email is
// proven: see also Identity.ProvesEmail, and an account the company's
// directory makes (DirectoryUser), which is proven.
func (f RegistrationFacts) EmailProven() bool { return f.Invited == InvitationMatched }

// ErrEmailTaken answers a new account whose email another has. It is a
// 400, as FastAPI-Users' REGISTER_USER_ALREADY_EXISTS is.
var ErrEmailTaken = Errorf(EINVALID, "A user with this email already exists")

// Check reports why the person with email key key may not register a local
// account, given f, or nil if they may. Closed registration and the allowed
// domains bind everyone, and are told before whether the email is taken.
// The first person of a new database may register whatever the mode but
// closed (and becomes an admin, see NewAccountRole). By invitation, only
// the invitation's token opens registration, so that whoever merely knows
// an invited email cannot take the account.
func (p *RegistrationPolicy) Check(key string, f RegistrationFacts) error {
	switch {
	case p.Mode == RegistrationClosed:
		return Errorf(EFORBIDDEN, "Registration is closed; sign in with single sign-on or ask an admin")
	case p.Domains.Check(key) != nil:
		return p.Domains.Check(key)
	case f.Taken:
		return ErrEmailTaken
	case f.Lookalike:
		return ErrLookalikeEmail
	case f.First, f.Invited == InvitationMatched, p.Mode != RegistrationInvite:
		return nil
	case f.Invited == InvitationMismatch:
		return Errorf(EFORBIDDEN, "Registration is by invitation only: register with the link of your invitation (if it has expired, ask an admin for a new one)")
	}
	return Errorf(EFORBIDDEN, "Registration is by invitation only, and this email has not been invited")
}

// MatchInvitation says what an invitation whose link has the token hash
// tokenHash (nil: no link was issued) and ends at expires does for a
// registration with token at now. Hashes are compared in constant time.
func MatchInvitation(exists bool, tokenHash *string, expires *Time, token string, now Time) InviteMatch {
	switch {
	case !exists:
		return NotInvited
	case tokenHash == nil || expires == nil || token == "" || !expires.After(now.Time):
		return InvitationMismatch
	case subtle.ConstantTimeCompare([]byte(*tokenHash), []byte(HashToken(token))) != 1:
		return InvitationMismatch
	}
	return InvitationMatched
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

// Invitation lets a person register when registration is by invitation,
// with the link of its token (InvitationLink).
type Invitation struct {
	Email     string  `json:"email"`
	InvitedBy *string `json:"invited_by"`
	CreatedAt Time    `json:"created_at"`
	// ExpiresAt is when its link stops working; nil until a link is issued
	// (an invitation made through Onyx's PUT /manage/admin/users has none).
	ExpiresAt *Time `json:"expires_at"`
}

// InvitationLink is the single-use token of an invitation, shown once, when
// it is issued; only its SHA-256 is stored. A new link replaces the one
// before.
type InvitationLink struct {
	Email     string
	Token     string
	ExpiresAt Time
}

// InvitationTokenPrefix begins every invitation token.
const InvitationTokenPrefix = "qri_"

// NewInvitationToken returns a fresh invitation token ("qri_" + 43
// base64url characters, 256 random bits) and its hash.
func NewInvitationToken() (token, hash string) { return newToken(InvitationTokenPrefix) }

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
	// ObjectID is the person's id in the provider's directory when the
	// provider says it apart from the subject (Entra ID's "oid" claim;
	// Entra's subjects differ per application), for matching the
	// directory's externalId (see CheckLink).
	ObjectID string
	Email    string
	// EmailVerified says that the provider said outright that the email is
	// the person's (email_verified true). Only then is the identity linked
	// to an account that has the email already, or when the directory
	// vouches for it (see CheckLink).
	EmailVerified bool
	Name          *string
	// Role is the role the sign-in policy gives the person; RoleFromProvider
	// says whether the provider decides it at every sign-in (a role claim is
	// set up) or only for a person's first sign-in.
	Role             Role
	RoleFromProvider bool
}

// ProvesEmail reports whether id proves that the account whose email key
// is key has its holder's email (RegistrationFacts.EmailProven): the
// provider says its email is verified, and it is that email.
func (id *Identity) ProvesEmail(key string) bool {
	return id.EmailVerified && EmailKey(id.Email) == key
}

// ErrNotLinkable answers a first sign-in with an email that an account has
// already, when the provider does not say the email is verified.
var ErrNotLinkable = Errorf(EFORBIDDEN, "An account with this email exists, and the provider does not confirm the email is yours; ask an admin")

// CheckLink reports why id, signing in for the first time, may not be
// linked to u, the account that has its email already: only when the
// provider says the email is verified, or anybody who can set an email at a
// provider could take over an account. Linking a local account ends its
// password and its sessions: whoever registered that email locally proved
// nothing, the provider did. When nobody had proven the email, the account
// is handed over (User.HandsOver): its other identities, tokens and tools'
// connections end too.
//
// A person the company's directory provisioned (externalID, the
// directory's id of them, is not nil) is also linked when the provider
// names them by that id (the subject, as Okta does, or the object id, as
// Entra ID does, whose emails are not said to be verified): the directory
// and the provider are the same company's, and both say who the person is.
// Not an admin or a curator, though: the directory's token sets externalId,
// and must not open such an account to whoever the provider knows by it.
func (id *Identity) CheckLink(u *User, externalID *string) error {
	switch {
	case id.EmailVerified:
		return nil
	case externalID == nil || *externalID == "":
	case u.Role == RoleAdmin || u.Role == RoleCurator || u.Role == RoleGlobalCurator:
	case *externalID == id.Subject || (id.ObjectID != "" && *externalID == id.ObjectID):
		return nil
	}
	return ErrNotLinkable
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

// SignInLimits bound the attempts to sign in and to register, counted in
// windows of Window before a password is checked (so that attempts made at
// once count too); a successful sign-in takes its attempt back.
//
// Brute force against one account is bounded per address, not per account:
// a limit per account alone would let anybody lock a person out by failing
// for them. An address (an IPv6 /64 counts as one, see ThrottleAddress) may
// fail PerAccountAddress times for an account in a window. Once an account
// has failed PerAccount times in a window, from all addresses together, an
// address that has failed for it already must wait for the window to end,
// while an address that has not (the person's own, as a rule) is let
// through: so the person keeps signing in while their account is under
// attack, and a distributed attack gets one guess per address.
type SignInLimits struct {
	Window            time.Duration
	PerAccountAddress int // Sign-ins per account from one address.
	PerAccount        int // Sign-ins per account from all addresses before failed addresses wait.
	PerAddress        int // Sign-ins per address, to all accounts.
	Registrations     int // Registrations per address.
}

// DefaultSignInLimits returns the limits Quarry applies: per 15 minutes,
// 10 sign-ins per account and address, 10 per account from all addresses
// before failed addresses wait, 100 per address and 20 registrations per
// address.
func DefaultSignInLimits() SignInLimits {
	return SignInLimits{Window: 15 * time.Minute, PerAccountAddress: 10, PerAccount: 10, PerAddress: 100, Registrations: 20}
}

// AttemptKeys returns the keys the attempts to sign in to the account with
// email key key from address addr are counted against: the account and
// address together, the account, and the address.
func AttemptKeys(key, addr string) (pair, account, address string) {
	account = throttleKey("account", hashKey(key))
	address = throttleKey("address", ThrottleAddress(addr))
	return throttleKey("pair", hashKey(key)+" "+ThrottleAddress(addr)), account, address
}

// RegistrationKey returns the key the registrations from address addr are
// counted against.
func RegistrationKey(addr string) string { return throttleKey("register", ThrottleAddress(addr)) }

// hashKey returns a hash of an email key: the counts hold no emails.
func hashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:16])
}

func throttleKey(kind, value string) string { return kind + ":" + value }

// ThrottleAddress returns the address attempts from addr are counted
// against: addr itself for IPv4 (and IPv4-mapped IPv6), its /64 for IPv6,
// the block one host is usually given, so that it cannot try again from
// each of its 2^64 addresses.
func ThrottleAddress(addr string) string {
	ip, err := netip.ParseAddr(addr)
	if err != nil {
		return addr
	}
	ip = ip.Unmap()
	if ip.Is4() {
		return ip.String()
	}
	p, _ := ip.WithZone("").Prefix(64)
	return p.String()
}

// AttemptCount is how many attempts were counted against a key in its
// window so far, this one included, and when the window started.
type AttemptCount struct {
	N     int
	Start time.Time
}

// CheckSignIn reports ETOOMANY, saying when to try again, if an attempt to
// sign in that brought the counts of its AttemptKeys to pair, account and
// address at now may not have its password checked.
func (l SignInLimits) CheckSignIn(pair, account, address AttemptCount, now time.Time) error {
	switch {
	case address.N > l.PerAddress:
		return l.tooMany(address, now)
	case pair.N > l.PerAccountAddress:
		return l.tooMany(pair, now)
	case account.N > l.PerAccount && pair.N > 1:
		return l.tooMany(pair, now)
	}
	return nil
}

// CheckRegistration reports ETOOMANY if count registrations from one
// address (RegistrationKey) are too many at now.
func (l SignInLimits) CheckRegistration(count AttemptCount, now time.Time) error {
	if count.N > l.Registrations {
		return l.refuse("Too many registrations from this address", count, now)
	}
	return nil
}

// tooMany is the refusal of a sign-in counted as c, until its window ends.
func (l SignInLimits) tooMany(c AttemptCount, now time.Time) error {
	return l.refuse("Too many failed sign-ins", c, now)
}

// refuse is ETOOMANY with what, saying when c's window ends.
func (l SignInLimits) refuse(what string, c AttemptCount, now time.Time) error {
	wait := c.Start.Add(l.Window).Sub(now)
	minutes := int((wait + time.Minute - 1) / time.Minute)
	unit := "minutes"
	if minutes == 1 {
		unit = "minute"
	}
	return &Error{Code: ETOOMANY, RetryAfter: wait, Message: fmt.Sprintf("%s; try again in %d %s", what, minutes, unit)}
}

// CheckPersonName reports why a person registering may not be called
// name (nil: no name given): it is longer than 256 characters (400).
func CheckPersonName(name *string) error {
	if name != nil && utf8.RuneCountInString(*name) > 256 {
		return Errorf(EINVALID, "The name is longer than 256 characters")
	}
	return nil
}

// The refusals of a change of one's own password (400).
var (
	// ErrKeyHasNoPassword refuses a service account: it has none.
	ErrKeyHasNoPassword = Errorf(EINVALID, "An API key has no password")
	// ErrNoPassword refuses a person who signs in with single sign-on.
	ErrNoPassword = Errorf(EINVALID, "Your account has no password: you sign in with single sign-on")
	// ErrWrongPassword refuses a current password given wrong.
	ErrWrongPassword = Errorf(EINVALID, "The current password is wrong")
)
