package quarry

import (
	"encoding/json"
	"reflect"
	"slices"
)

// Credential is a set of secrets that opens a connector's source. Its
// CredentialJSON, the JSON text of an object, is encrypted at rest and
// masked in every response (see MaskJSON).
//
// Its fields are in the order of Onyx's CredentialSnapshot, the wire shape.
type Credential struct {
	CredentialJSON json.RawMessage `json:"credential_json"`
	AdminPublic    bool            `json:"admin_public"`
	Source         DocumentSource  `json:"source"`
	Name           *string         `json:"name"`
	CuratorPublic  bool            `json:"curator_public"`
	Groups         []int64         `json:"groups"` // Ascending.
	ID             int64           `json:"id"`
	UserID         *string         `json:"user_id"` // The owner; nil for ownerless credentials.
	UserEmail      *string         `json:"user_email"`
	CreatedAt      Time            `json:"time_created"`
	UpdatedAt      Time            `json:"time_updated"`
	Version        int64           `json:"-"` // Bumped by every change; the ETag.
}

// CredentialInput holds the fields of a credential to create.
type CredentialInput struct {
	Name           *string
	Source         DocumentSource
	CredentialJSON map[string]any
	AdminPublic    bool
	CuratorPublic  bool
	Groups         []int64
}

// CredentialUpdate holds the changes of a partial credential update. A nil
// field is left unchanged.
type CredentialUpdate struct {
	CredentialJSON map[string]any  // Replaces the stored object, keeping masked echoes (see KeepMaskedEchoes).
	AdminPublic    *bool           //
	Name           **string        // *Name == nil clears the name.
	CuratorPublic  *bool           //
	Groups         *[]int64        // Replaces the credential's groups.
	Source         *DocumentSource // Must equal the stored source.
	IfMatch        []int64         // If not nil, the versions the caller accepts (If-Match).
}

// CanEditCredential reports whether c may change or delete cred (contract section 3.1):
// admins their own, ownerless and admin_public credentials; curators their
// own and those with at least one group, all of which they curate; basic
// users their own.
func (c *Caller) CanEditCredential(cred *Credential) bool {
	own := cred.UserID != nil && *cred.UserID == c.ID
	switch {
	case c.IsAdmin():
		return own || cred.UserID == nil || cred.AdminPublic
	case c.IsCurator():
		return own || (len(cred.Groups) > 0 && c.CuratesAll(cred.Groups))
	case c.Role == RoleBasic:
		return own
	default:
		return false
	}
}

// CanSeeCredential reports whether c may read cred: whatever it may edit, plus, for
// curators, credentials that are curator_public or shared with a group they
// are a member of.
func (c *Caller) CanSeeCredential(cred *Credential) bool {
	if c.CanEditCredential(cred) {
		return true
	}
	if !c.IsCurator() {
		return false
	}
	return cred.CuratorPublic || slices.ContainsFunc(cred.Groups, c.MemberOf)
}

// ChangedFields returns the JSON names of the fields u would change on cred,
// whose credential_json decodes to oldJSON, in a fixed order, for the audit
// log.
func (u *CredentialUpdate) ChangedFields(cred *Credential, oldJSON, newJSON map[string]any) []string {
	var f []string
	if u.CredentialJSON != nil && !reflect.DeepEqual(oldJSON, newJSON) {
		f = append(f, "credential_json")
	}
	if u.AdminPublic != nil && *u.AdminPublic != cred.AdminPublic {
		f = append(f, "admin_public")
	}
	if u.Name != nil && !ptrEqual(*u.Name, cred.Name) {
		f = append(f, "name")
	}
	if u.CuratorPublic != nil && *u.CuratorPublic != cred.CuratorPublic {
		f = append(f, "curator_public")
	}
	if u.Groups != nil && !slices.Equal(*u.Groups, cred.Groups) {
		f = append(f, "groups")
	}
	return f
}

func ptrEqual[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
