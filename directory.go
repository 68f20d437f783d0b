package quarry

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// The company's directory: the people and groups that the company's
// identity provider (Okta, Entra ID, Google, JumpCloud...) provisions over
// SCIM 2.0 (RFC 7643, RFC 7644), with a SCIM token an admin gave it.
//
// The directory owns what it manages: a directory person's email, name and
// activation, and a directory group's name and the memberships of its
// directory people. An admin still decides what Quarry alone knows (roles,
// curator flags, which cc-pairs a group sees) and may add service
// accounts, or people the directory does not manage, to its groups. Package
// scim speaks the protocol and package store keeps the records; the rules
// of who may change what are here.

// SCIMTokenPrefix begins every SCIM token.
const SCIMTokenPrefix = "qrd_"

// NewSCIMToken returns a fresh SCIM token ("qrd_" + 43 base64url
// characters, 256 random bits) and its hash.
func NewSCIMToken() (token, hash string) { return newToken(SCIMTokenPrefix) }

// ValidSCIMTokenFormat reports whether token has the shape of a SCIM token.
func ValidSCIMTokenFormat(token string) bool { return validTokenFormat(token, SCIMTokenPrefix) }

// DisplaySCIMToken returns the form of a SCIM token that may be shown after
// its creation: the prefix, four stars and its last four characters (as
// Onyx shows its own).
func DisplaySCIMToken(token string) string {
	return SCIMTokenPrefix + "****" + token[len(token)-4:]
}

// SCIMToken is the bearer token of the company's directory. It opens the
// SCIM routes and nothing else, and nothing else opens them. Only its
// SHA-256 is stored; the token is shown once, when it is made. At most one
// is active: making one revokes the one before.
type SCIMToken struct {
	ID         int64
	Name       string
	Display    string
	IsActive   bool
	CreatedAt  Time
	LastUsedAt *Time // Recorded at most once a minute.
	// IDPDomain is the email domain of the first person the directory
	// provisioned, as Onyx guesses the provider's domain; nil before then.
	IDPDomain *string
}

// DirectoryCaller returns the caller of a SCIM request made with token t:
// the directory, which is no user (it passes no role gate), and which audit
// entries name by its token.
func DirectoryCaller(t *SCIMToken) *Caller { return &Caller{Directory: t} }

// MaxDirectoryText bounds every text the directory sends (userName,
// names, emails, externalId, department...), in bytes.
const MaxDirectoryText = 512

// MaxDirectoryEmails bounds the emails of a directory person.
const MaxDirectoryEmails = 20

// DirectoryUser is a person as the directory provisions them: a SCIM User
// resource, with the account it is kept as.
type DirectoryUser struct {
	ID         string // The account's id (a UUID).
	UserName   string // As the directory sent it.
	ExternalID *string
	// DisplayName is the directory's own displayName, GivenName,
	// FamilyName and Formatted its name components; Name, the account's
	// name, is made of them (see Prepare).
	DisplayName *string
	GivenName   *string
	FamilyName  *string
	Formatted   *string
	Name        *string
	// Email is the account's email: the primary one of Emails (or the
	// first), else UserName when it is an email address (see Prepare).
	Email      string
	Emails     []DirectoryEmail
	Department *string
	Manager    *string // The manager's id at the directory (the enterprise extension's manager.value).
	Active     bool
	// Groups are the groups the person is a member of (read-only in SCIM).
	Groups    []GroupBrief
	CreatedAt Time
	UpdatedAt Time
}

// DirectoryEmail is one of the emails of a directory person.
type DirectoryEmail struct {
	Value   string  `json:"value"`
	Type    *string `json:"type,omitempty"`
	Primary bool    `json:"primary"`
	Display *string `json:"display,omitempty"`
}

// DirectoryGroup is a user group as SCIM shows it: every group is one (the
// directory can take a group made by hand over by changing it), and
// Managed says whether the directory manages it already. The default
// groups are shown too, and are never the directory's (see CheckWrite).
type DirectoryGroup struct {
	ID          int64
	DisplayName string
	ExternalID  *string
	// Members are the members the directory manages (its people),
	// ascending by id; the group's other members (service accounts, people
	// added by hand) are not its to see or change.
	Members   []DirectoryMember
	Managed   bool
	IsDefault bool // One of the default groups, Admin and Basic (see UserGroup.IsDefault).
	CreatedAt Time
	UpdatedAt Time
}

// DirectoryMember is a member of a directory group: a directory person.
type DirectoryMember struct {
	ID    string `json:"value"`
	Email string `json:"display"`
}

// MemberIDs returns the ids of g's members.
func (g *DirectoryGroup) MemberIDs() []string {
	ids := make([]string, len(g.Members))
	for i, m := range g.Members {
		ids[i] = m.ID
	}
	return ids
}

// Clone returns a deep copy of u, for a change to be compared with.
func (u *DirectoryUser) Clone() *DirectoryUser {
	c := *u
	c.Emails = slices.Clone(u.Emails)
	c.Groups = slices.Clone(u.Groups)
	return &c
}

// Clone returns a deep copy of g.
func (g *DirectoryGroup) Clone() *DirectoryGroup {
	c := *g
	c.Members = slices.Clone(g.Members)
	return &c
}

// Version returns the version of u as SCIM shows it (its ETag and
// meta.version): a hash of everything its representation holds but its
// metadata, so that it changes exactly when the representation does.
func (u *DirectoryUser) Version() string {
	return versionOf(struct {
		ID, UserName, Email                    string
		ExternalID, DisplayName, Given, Family *string
		Formatted, Name, Department, Manager   *string
		Emails                                 []DirectoryEmail
		Active                                 bool
		Groups                                 []GroupBrief
	}{u.ID, u.UserName, u.Email, u.ExternalID, u.DisplayName, u.GivenName, u.FamilyName, u.Formatted, u.Name,
		u.Department, u.Manager, u.Emails, u.Active, u.Groups})
}

// Version returns the version of g as SCIM shows it (see
// DirectoryUser.Version).
func (g *DirectoryGroup) Version() string {
	return versionOf(struct {
		ID          int64
		DisplayName string
		ExternalID  *string
		Members     []DirectoryMember
	}{g.ID, g.DisplayName, g.ExternalID, g.Members})
}

// VersionMatches reports whether one of the entity tags in the values of
// an If-Match (or If-None-Match) header is version, weak ("W/") or not, or
// whether they hold "*". SCIM compares weak tags with If-Match (RFC 7644
// section 3.14).
func VersionMatches(values []string, version string) bool {
	for _, line := range values {
		for tag := range strings.SplitSeq(line, ",") {
			tag = strings.TrimPrefix(strings.TrimSpace(tag), "W/")
			if tag == "*" || tag == `"`+version+`"` {
				return true
			}
		}
	}
	return false
}

func versionOf(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic("quarry: encoding a version: " + err.Error()) // plain structs always encode
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:10])
}

// errDirectory is an EINVALID error about what the directory sent.
func errDirectory(format string, args ...any) error { return Errorf(EINVALID, format, args...) }

// Prepare checks u as the directory sent it (a creation, or the result of a
// change) and derives what the account keeps of it: Email, the email the
// person signs in with (the primary email, or the first, since that is the
// email the provider's sign-in carries; else userName when it is an email
// address), and Name, the person's name (displayName, else the formatted
// name, else the given and family names; unchanged when the directory sends
// none). Texts are
// trimmed of surrounding space and bounded.
func (u *DirectoryUser) Prepare() error {
	u.UserName = strings.TrimSpace(u.UserName)
	if u.UserName == "" {
		return errDirectory("userName is required")
	}
	for _, f := range []struct {
		name string
		v    *string
	}{{"userName", &u.UserName}, {"externalId", u.ExternalID}, {"displayName", u.DisplayName},
		{"name.givenName", u.GivenName}, {"name.familyName", u.FamilyName}, {"name.formatted", u.Formatted},
		{"department", u.Department}, {"manager", u.Manager}} {
		if f.v != nil && (len(*f.v) > MaxDirectoryText || !utf8.ValidString(*f.v)) {
			return errDirectory("%s is longer than %d bytes", f.name, MaxDirectoryText)
		}
	}
	if len(u.Emails) > MaxDirectoryEmails {
		return errDirectory("A user has at most %d emails", MaxDirectoryEmails)
	}
	primary := -1
	for i := range u.Emails {
		e := &u.Emails[i]
		e.Value = strings.TrimSpace(e.Value)
		if len(e.Value) > MaxDirectoryText || (e.Type != nil && len(*e.Type) > MaxDirectoryText) ||
			(e.Display != nil && len(*e.Display) > MaxDirectoryText) {
			return errDirectory("emails[%d] is longer than %d bytes", i, MaxDirectoryText)
		}
		if e.Primary {
			if primary >= 0 {
				return errDirectory("Only one email may be primary")
			}
			primary = i
		}
	}
	var candidates []string
	switch {
	case primary >= 0:
		candidates = append(candidates, u.Emails[primary].Value)
	case len(u.Emails) > 0:
		candidates = append(candidates, u.Emails[0].Value)
	}
	candidates = append(candidates, u.UserName)
	u.Email = ""
	for _, c := range candidates {
		if email, _, err := ParseEmail(c); err == nil {
			u.Email = email
			break
		}
	}
	if u.Email == "" {
		return errDirectory("A person needs an email address: give a primary email, or a userName that is one")
	}
	if name := directoryName(u); name != nil {
		u.Name = name
	}
	return nil
}

// directoryName returns the name the directory gives u: displayName, else
// the formatted name, else its given and family names, else nil.
func directoryName(u *DirectoryUser) *string {
	for _, n := range []*string{u.DisplayName, u.Formatted} {
		if n != nil && strings.TrimSpace(*n) != "" {
			t := strings.TrimSpace(*n)
			return &t
		}
	}
	var parts []string
	for _, p := range []*string{u.GivenName, u.FamilyName} {
		if p != nil && strings.TrimSpace(*p) != "" {
			parts = append(parts, strings.TrimSpace(*p))
		}
	}
	if len(parts) == 0 {
		return nil
	}
	n := strings.Join(parts, " ")
	return &n
}

// entraTombstone matches the userName Entra ID gives a person it deletes
// softly: 32 hex digits (the object id) before the address.
var entraTombstone = regexp.MustCompile(`^[0-9a-fA-F]{32}`)

// DirectoryEmailChange says what becomes of the account's email when the
// directory's changes make it next, from old: the new email, or old kept
// when next is Entra ID's tombstone of old (a soft-deleted person's
// userName, which must not become their address: they may be restored).
func DirectoryEmailChange(old, next string) string {
	if loc := entraTombstone.FindStringIndex(next); loc != nil && EmailKey(next[loc[1]:]) == EmailKey(old) {
		return old
	}
	return next
}

// CheckDirectoryEmailChange reports why the directory may not change the
// email of u, whose account it manages: not that of an admin or a curator
// (403). Single sign-on finds people by email, so whoever holds the
// directory's token could otherwise move an admin's account to an address
// they control; the directory only ever provisions basic access.
func CheckDirectoryEmailChange(u *User) error {
	if u.RunsQuarry() {
		return Errorf(EFORBIDDEN, "The directory cannot change the email of an admin or curator (%s): change it in Quarry first", u.Email)
	}
	return nil
}

// ErrDirectoryUserTaken answers the directory's creation of a person that it
// manages already, or whose userName or email another directory person has.
func ErrDirectoryUserTaken(what string) error {
	return Errorf(ECONFLICT, "User with %s already exists", what)
}

// ErrReservedGroupName answers the directory's creation of a group named
// like a default group, or a rename to such a name.
func ErrReservedGroupName(name string) error {
	return Errorf(ECONFLICT, "'%s' is a reserved group name.", name)
}

// ErrReservedGroup answers the directory's change or deletion of a default
// group.
func ErrReservedGroup(name string) error {
	return Errorf(ECONFLICT, "'%s' is a reserved group name and cannot be changed or deleted.", name)
}

// CheckDirectoryGroupName reports why the directory may not give a group
// whose name is now old (empty for a new group) the name next: the
// default groups' names are reserved (ReservedGroupName).
func CheckDirectoryGroupName(old, next string) error {
	switch {
	case strings.TrimSpace(next) == "":
		return errDirectory("displayName is required")
	case len(next) > MaxDirectoryText || !utf8.ValidString(next):
		return errDirectory("displayName is longer than %d bytes", MaxDirectoryText)
	case next != old && ReservedGroupName(next):
		return ErrReservedGroupName(next)
	}
	return nil
}

// CheckFields reports why the directory may not give g, whose name is now
// old (empty for a new group), the name and externalId it has: its name
// passes CheckDirectoryGroupName, its externalId fits (400).
func (g *DirectoryGroup) CheckFields(old string) error {
	if err := CheckDirectoryGroupName(old, g.DisplayName); err != nil {
		return err
	}
	if g.ExternalID != nil && len(*g.ExternalID) > MaxDirectoryText {
		return errDirectory("externalId is longer than %d bytes", MaxDirectoryText)
	}
	return nil
}

// CheckWrite reports why the directory may not change or delete g: a
// default group is Quarry's (409). Its members follow their roles, and
// it may be granted anything up to admin, so a directory that changed
// its members could hand out permissions; Onyx v4.6.1 refuses only its
// renaming and deletion.
func (g *DirectoryGroup) CheckWrite() error {
	if g.IsDefault {
		return ErrReservedGroup(g.DisplayName)
	}
	return nil
}

// ErrMembersNotFound answers group members that are not people the
// directory manages.
func ErrMembersNotFound(ids []string) error {
	return errDirectory("Member(s) not found: %s", strings.Join(ids, ", "))
}

// Refusals of the admin API on what the directory manages (409): the
// directory would undo the change at its next sync, or fight it.

// CheckDirectoryGroupChange reports why c may not change group g (whose directory
// people are dirPeople) as an admin: a group the directory manages keeps
// the name it gives, and the memberships of its people are the
// directory's. renamed says whether the change renames the group; added
// and removed are the members the change adds and removes.
func (c *Caller) CheckDirectoryGroupChange(g *UserGroup, renamed bool, added, removed []string, dirPeople map[string]bool) error {
	if c.Directory != nil || !g.SCIMSynced {
		return nil
	}
	if renamed {
		return Errorf(ECONFLICT, "User group %d is managed by the company's directory (SCIM): rename it there", g.ID)
	}
	for _, id := range slices.Concat(added, removed) {
		if dirPeople[id] {
			return Errorf(ECONFLICT, "User group %d is managed by the company's directory (SCIM), and so is user %s: change their membership there", g.ID, id)
		}
	}
	return nil
}

// CheckDirectoryGroupDelete reports why c may not delete group g as an admin: the
// directory deletes its groups.
func (c *Caller) CheckDirectoryGroupDelete(g *UserGroup) error {
	if c.Directory != nil || !g.SCIMSynced {
		return nil
	}
	return Errorf(ECONFLICT, "User group %d is managed by the company's directory (SCIM): delete it there", g.ID)
}

// CheckDirectoryActivation reports why c may not activate u as an admin
// when the directory manages u (managed) and says whether u is active
// (directoryActive): a person the directory deactivated is activated
// there. An admin may always deactivate a person (at once, as when a
// laptop is stolen; the directory may activate them again at its next
// sync), and may undo their own deactivation of a person the directory
// says is active.
func (c *Caller) CheckDirectoryActivation(u *User, managed, directoryActive, active bool) error {
	if c.Directory != nil || !managed || !active || directoryActive {
		return nil
	}
	return Errorf(ECONFLICT, "%s is deactivated by the company's directory (SCIM): activate them there", u.Email)
}

// CheckDirectoryDeactivation reports why c may not deactivate u (active
// false): the directory deactivates no admin or curator (403, as it
// renames none, CheckDirectoryEmailChange), whether by active false, by a
// DELETE, or by adopting their account inactive: its token must not be
// able to lock out the people who run Quarry. An admin demotes them in
// Quarry first, or deactivates them there.
func (c *Caller) CheckDirectoryDeactivation(u *User, active bool) error {
	if c == nil || c.Directory == nil || active || !u.RunsQuarry() {
		return nil
	}
	return Errorf(EFORBIDDEN, "The directory cannot deactivate an admin or curator (%s): deactivate them in Quarry, or demote them first", u.Email)
}

// CheckDirectoryAddition reports why the directory may not add people
// (added, their ids) to group, granted grants (GrantList): not to a group
// that holds a permission beyond basic (403, RFC 7644's "not permitted";
// issue 31). A group's grants are an admin's decision, made in Quarry:
// the directory's token adding people to a group granted
// manage:user_groups or admin would hand those rights to whoever it
// names, and an adopted local account keeps its password. Removing people
// is allowed (it takes rights away). An admin grants such permissions to
// a group made in Quarry and adds the directory's people there by hand,
// or takes them back from this group first.
func CheckDirectoryAddition(group string, grants []Permission, added []string) error {
	if len(added) == 0 {
		return nil
	}
	var beyond []string
	for _, p := range grants {
		if p != PermBasic {
			beyond = append(beyond, string(p))
		}
	}
	if beyond == nil {
		return nil
	}
	return Errorf(EFORBIDDEN, "Group '%s' is granted %s beyond basic: the directory cannot add people to it (grant such permissions to a group made in Quarry, and add people there; or take them back from this group)",
		group, strings.Join(beyond, ", "))
}

// RunsQuarry reports whether u is an admin or a curator: those whose
// account the directory may neither move nor deactivate.
func (u *User) RunsQuarry() bool {
	return u.Role == RoleAdmin || u.Role == RoleCurator || u.Role == RoleGlobalCurator
}

// String returns a short description of f, for logs and errors.
func (f *DirectoryFilter) String() string {
	switch f.Op {
	case FilterAnd, FilterOr:
		return fmt.Sprintf("(%v %s %v)", f.Left, f.Op, f.Right)
	case FilterNot:
		return fmt.Sprintf("not(%v)", f.Left)
	case FilterPresent:
		return f.Attr + " pr"
	}
	return fmt.Sprintf("%s %s %q", f.Attr, f.Op, f.Value)
}

// DirectoryFilter selects directory people or groups: a tree of
// comparisons of an attribute with a value, joined by and, or and not
// (RFC 7644 section 3.4.2.2). Package scim makes it from a SCIM filter;
// package store turns it into SQL. Attributes are the canonical SCIM
// names: for people "id", "userName", "externalId", "emails.value",
// "displayName", "active"; for groups "id", "displayName", "externalId",
// "members.value".
type DirectoryFilter struct {
	Op          FilterOp
	Attr        string
	Value       string // The compared value ("true" or "false" for active).
	Left, Right *DirectoryFilter
}

// FilterOp is an operator of a DirectoryFilter.
type FilterOp string

// The operators of a DirectoryFilter.
const (
	FilterEq         FilterOp = "eq"
	FilterNe         FilterOp = "ne"
	FilterContains   FilterOp = "co"
	FilterStartsWith FilterOp = "sw"
	FilterEndsWith   FilterOp = "ew"
	FilterPresent    FilterOp = "pr"
	FilterAnd        FilterOp = "and"
	FilterOr         FilterOp = "or"
	FilterNot        FilterOp = "not"
)

// DirectoryUserChangedFields returns the names of the attributes that
// differ between old (nil: none) and u, for the audit log (the directory's
// twin of CredentialUpdate's and MCPServerChangedFields).
func DirectoryUserChangedFields(old, u *DirectoryUser) []string {
	if old == nil {
		old = &DirectoryUser{Active: u.Active}
	}
	var fields []string
	add := func(name string, changed bool) {
		if changed {
			fields = append(fields, name)
		}
	}
	ptr := func(a, b *string) bool { return !PtrEqual(a, b) }
	add("userName", old.UserName != u.UserName)
	add("email", old.Email != u.Email)
	add("externalId", ptr(old.ExternalID, u.ExternalID))
	add("name", ptr(old.Name, u.Name))
	add("displayName", ptr(old.DisplayName, u.DisplayName))
	add("name.givenName", ptr(old.GivenName, u.GivenName))
	add("name.familyName", ptr(old.FamilyName, u.FamilyName))
	add("name.formatted", ptr(old.Formatted, u.Formatted))
	add("emails", !slices.EqualFunc(old.Emails, u.Emails, func(a, b DirectoryEmail) bool {
		return a.Value == b.Value && a.Primary == b.Primary && !ptr(a.Type, b.Type) && !ptr(a.Display, b.Display)
	}))
	add("department", ptr(old.Department, u.Department))
	add("manager", ptr(old.Manager, u.Manager))
	return fields
}
