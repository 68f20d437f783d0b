package quarry

import (
	"slices"
	"strings"
	"time"
)

// Personal access tokens, with Onyx's shapes (onyx/server/pat at v4.6.1):
// a person makes a token of their own, for a script or an MCP client, with
// an expiry and, if they want, scopes: Onyx's permission tokens, which cap
// what the token opens to what the scopes and the person's own rights both
// allow (see Caller.LimitTo). Only the token's SHA-256 is kept; it is shown
// once. A token stops at once when it is revoked, when it expires, and when
// its person is deactivated (their tokens are deleted).

// PATPrefix is the prefix of personal access tokens.
const PATPrefix = "qrp_"

// NewPAT returns a fresh personal access token ("qrp_" + 43 base64url
// characters, 256 random bits) and its hash.
func NewPAT() (token, hash string) { return newToken(PATPrefix) }

// ValidPATFormat reports whether token has the shape of a personal access
// token.
func ValidPATFormat(token string) bool { return validTokenFormat(token, PATPrefix) }

// DisplayPAT returns the form of a token that may be shown after creation,
// as Onyx renders one: its first characters (the prefix and 4 more), four
// stars, and its last 4.
func DisplayPAT(token string) string {
	return token[:len(PATPrefix)+4] + "****" + token[len(token)-4:]
}

// PAT is a personal access token's record.
type PAT struct {
	ID         int64
	UserID     string
	Name       string
	Display    string
	Scopes     []Permission // nil: the person's whole rights.
	ExpiresAt  *Time        // nil: never.
	LastUsedAt *Time
	CreatedAt  Time
}

// PATExpiry returns when a token made at now for days days expires, as
// Onyx computes it: at the last microsecond (UTC) of the day days days
// after today; nil for days nil (never).
func PATExpiry(now time.Time, days *int64) *Time {
	if days == nil {
		return nil
	}
	d := now.UTC()
	end := time.Date(d.Year(), d.Month(), d.Day(), 23, 59, 59, 999999000, time.UTC).AddDate(0, 0, int(*days))
	t := TimeFromMicros(end.UnixMicro())
	return &t
}

// MaxPATDays bounds a token's expiry in days (about 100 years): a bigger
// number would overflow the time it names.
const MaxPATDays = 36500

// CheckPATDays reports why a token may not expire in days (nil: never):
// more than MaxPATDays (400).
func CheckPATDays(days *int64) error {
	if days != nil && *days > MaxPATDays {
		return Errorf(EINVALID, "expiration_days must be at most %d", MaxPATDays)
	}
	return nil
}

// PATScope is a scope a person may give a token, with what Onyx's GET
// /user/pats/scopes says of it.
type PATScope struct {
	Scope       Permission
	GroupLabel  string
	Label       string
	Description string
	MinTier     string // Onyx's license tier: always "community" here.
}

// PATScopes are the scopes a person may give a token (Onyx's
// SELECTABLE_PAT_SCOPES): Onyx's four, which name Onyx's search, chat and
// LLM gateway (Quarry has none of them, so a token scoped to them opens
// nothing but GET /me and GET /me/permissions), and basic, which opens
// Quarry's own routes of people (running tools, over the API and /mcp).
// The admin scopes (admin, manage:*) are not offered, as Onyx offers
// none: a token that may do what an admin does is an unscoped token of an
// admin. Tokens made with them before issue 31 keep them (LimitTo).
var PATScopes = []PATScope{
	{PermReadSearch, "Search", "Read", "Search the documents you may see (Onyx's search API).", "community"},
	{PermReadChat, "Chat", "Read", "View chat sessions and messages (Onyx's; Quarry has none).", "community"},
	{PermWriteChat, "Chat", "Write", "Create sessions and send messages (Onyx's; Quarry has none).", "community"},
	{PermUseLLMGateway, "LLM Gateway", "Use", "Call the LLM gateway from external tools (Onyx's; Quarry has none).", "community"},
	{PermBasic, "Tools", "Use", "Run the tools you may run, over the API and over MCP (Quarry's MCP endpoint), and use your own credentials and connections.", "community"},
}

// PATScopeImplies returns the other permissions scope s implies, sorted
// as strings (Onyx's PatScopeOption.implies).
func PATScopeImplies(s Permission) []string {
	var out []string
	for _, p := range setOf(s).Expand().Sorted() {
		if p != string(s) {
			out = append(out, p)
		}
	}
	if out == nil {
		out = []string{}
	}
	return out
}

// CheckPATScopes reports why scopes cannot be a token's (400, as Onyx): an
// empty list (a token scoped to nothing; null is the person's whole
// rights), or scopes that are not offered (PATScopes: the admin scopes
// are not).
func CheckPATScopes(scopes []Permission) error {
	if scopes == nil {
		return nil
	}
	if len(scopes) == 0 {
		return Errorf(EINVALID, "A scoped token must include at least one scope.")
	}
	var bad []string
	for _, s := range scopes {
		if !slices.ContainsFunc(PATScopes, func(o PATScope) bool { return o.Scope == s }) {
			bad = append(bad, string(s))
		}
	}
	if bad != nil {
		return Errorf(EINVALID, "Unsupported token scope(s): %s", strings.Join(bad, ", "))
	}
	return nil
}

// CheckMakePAT reports why c may not make a personal access token: only
// people make them, for themselves, signed in (a session) or with the
// provider's token; not an API key's service account, nor a caller that
// holds a personal access token already (CheckMint).
func (c *Caller) CheckMakePAT() error {
	if c.ServiceAccount || c.APIKeyID != 0 {
		return Errorf(EFORBIDDEN, "API keys cannot make personal access tokens: they are for people")
	}
	return c.CheckMint()
}

// CheckMint reports why c may not make what signs in on its own: a
// password (a reset, a change), an invitation, an API key (or a new token
// for one), a session, a SCIM token or a personal access token. Not with
// a personal access token: what it made would outlive the token's expiry,
// its revocation and its person's deactivation (an admin's token that
// resets a person's password gets a password whose sessions outlive the
// token). The one rule for every such route (the api's gate minting, and
// the store where keys are made); a nil c is the command line.
func (c *Caller) CheckMint() error {
	if c != nil && c.PATID != 0 {
		return Errorf(EFORBIDDEN, "A personal access token cannot make passwords, invitations, keys, sessions or tokens: sign in to do this")
	}
	return nil
}

// LimitTo caps c, authenticated with a token scoped to scopes, to what the
// scopes and its own rights both allow: its permissions become those it
// holds that the scopes (expanded by what they imply) hold too, and its
// role gives no power the scopes do not: without admin, an admin acts as
// its other permissions say; curators lose their curators' rights (Onyx
// refuses scoped tokens on the routes of curators); without basic, the
// caller is limited.
func (c *Caller) LimitTo(scopes []Permission) {
	allowed := c.Permissions() & setOf(scopes...).Expand()
	c.Scopes = slices.Clone(scopes)
	if c.Scopes == nil {
		c.Scopes = []Permission{}
	}
	switch {
	case allowed.Has(PermAdmin):
	case allowed.Has(PermBasic):
		c.Role = RoleBasic
	default:
		c.Role = RoleLimited
	}
	c.permissions, c.resolved = allowed, true
}
