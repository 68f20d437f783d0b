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
	CredentialJSON map[string]any  // Replaces the stored object, keeping masked echoes (see KeepEchoes).
	AdminPublic    *bool           //
	Name           **string        // *Name == nil clears the name.
	CuratorPublic  *bool           //
	Groups         *[]int64        // Replaces the credential's groups.
	Source         *DocumentSource // Must equal the stored source.
	IfMatch        []int64         // If not nil, the versions the caller accepts (If-Match).
	// KeepEchoes says that values of CredentialJSON equal to the masked
	// rendering of the stored ones keep the stored secrets (see
	// KeepMaskedEchoes): true when responses are masked, so that a client
	// that sends back what it read never overwrites a secret with its mask.
	KeepEchoes bool
}

// CanEditCredential reports whether c may change cred (contract section
// 3.1): admins (and holders of manage:connectors, see ManagesConnectors)
// their own, ownerless and admin_public credentials; curators their own
// and those with at least one group, all of which they curate; basic users
// their own.
func (c *Caller) CanEditCredential(cred *Credential) bool {
	if c.ManagesConnectors() && (c.owns(cred) || cred.UserID == nil || cred.AdminPublic) {
		return true
	}
	// A curator granted manage:connectors keeps what its role gives it.
	switch {
	case c.IsCurator():
		return c.owns(cred) || (len(cred.Groups) > 0 && c.CuratesAll(cred.Groups))
	case c.Role == RoleBasic:
		return c.owns(cred)
	default:
		return false
	}
}

// CanDeleteCredential reports whether c may delete cred: its owner, and
// an admin (or a holder of manage:connectors) who may edit it
// (CanEditCredential). A curator who may edit a credential of its groups
// may not delete it: the credential is its owner's.
func (c *Caller) CanDeleteCredential(cred *Credential) bool {
	return c.owns(cred) || (c.ManagesConnectors() && (cred.UserID == nil || cred.AdminPublic))
}

// owns reports whether c owns cred.
func (c *Caller) owns(cred *Credential) bool { return cred.UserID != nil && *cred.UserID == c.ID }

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
	return cred.CuratorPublic || slices.ContainsFunc(cred.Groups, c.reachedThrough)
}

// CanUseCredential reports whether c may pair a connector with cred, as
// Onyx v4.6.1 decides (its read filter of credentials): whatever c may
// edit; and for curators their own, the curator_public ones, and those
// shared with a group they curate (a curator's flag, or a global
// curator's membership). A curator who is only a member of a credential's
// group may read the credential (CanSeeCredential) but not use it.
func (c *Caller) CanUseCredential(cred *Credential) bool {
	if c.CanEditCredential(cred) {
		return true
	}
	if !c.IsCurator() {
		return false
	}
	return c.owns(cred) || cred.CuratorPublic || slices.ContainsFunc(cred.Groups, c.Curates)
}

// CheckSource reports why u may not be applied to cred, whose source is
// fixed (400).
func (u *CredentialUpdate) CheckSource(cred *Credential) error {
	if u.Source != nil && *u.Source != cred.Source {
		return Errorf(EINVALID, "The source of a credential cannot be changed")
	}
	return nil
}

// CheckSharing reports why c may not share cred as u says (contract
// section 4.3; the groups named are known to exist): every group named
// must be one c curates (403), and sharing the credential anew follows the
// rules of sharing it at first (Caller.CheckSharing, 400).
func (u *CredentialUpdate) CheckSharing(c *Caller, cred *Credential) error {
	groups, curatorPublic := cred.Groups, cred.CuratorPublic
	if u.Groups != nil {
		groups = *u.Groups
		if !c.ManagesConnectors() && !c.CuratesAll(groups) {
			return ErrShareNotCurated
		}
	}
	if u.CuratorPublic != nil {
		curatorPublic = *u.CuratorPublic
	}
	if u.Groups == nil && u.CuratorPublic == nil {
		return nil
	}
	return c.CheckSharing(groups, curatorPublic)
}

// Apply returns cred, whose credential_json decodes to stored, as u
// changes it, with its new credential_json (stored itself when u leaves it
// alone) and the JSON names of the fields that change, in a fixed order,
// for the audit log. Groups are taken as given: pass them deduplicated
// and sorted, so that reordering them is no change.
func (u *CredentialUpdate) Apply(cred *Credential, stored map[string]any) (next Credential, nextJSON map[string]any, fields []string) {
	next, nextJSON = *cred, stored
	if u.CredentialJSON != nil {
		nextJSON = u.CredentialJSON
		if u.KeepEchoes {
			nextJSON = KeepMaskedEchoes(stored, u.CredentialJSON)
		}
		if !reflect.DeepEqual(stored, nextJSON) {
			fields = append(fields, "credential_json")
		}
	}
	if u.AdminPublic != nil {
		next.AdminPublic = *u.AdminPublic
	}
	if u.Name != nil {
		next.Name = *u.Name
	}
	if u.CuratorPublic != nil {
		next.CuratorPublic = *u.CuratorPublic
	}
	if u.Groups != nil {
		next.Groups = *u.Groups
	}
	add := func(changed bool, name string) {
		if changed {
			fields = append(fields, name)
		}
	}
	add(next.AdminPublic != cred.AdminPublic, "admin_public")
	add(!PtrEqual(next.Name, cred.Name), "name")
	add(next.CuratorPublic != cred.CuratorPublic, "curator_public")
	add(!slices.Equal(next.Groups, cred.Groups), "groups")
	return next, nextJSON, fields
}

// CheckCredentialUnused reports why credential id, used by pairs cc-pairs,
// may not be deleted.
func CheckCredentialUnused(pairs int) error {
	if pairs > 0 {
		return Errorf(ECONFLICT, "Cannot delete credential as it is still associated with %d connector(s)", pairs)
	}
	return nil
}

// CheckVersion reports EPRECONDITION when ifMatch, the versions a
// conditional request accepts (If-Match; nil for any), does not hold
// version, the object's version now.
func CheckVersion(ifMatch []int64, version int64) error {
	if ifMatch != nil && !slices.Contains(ifMatch, version) {
		return ErrPrecondition
	}
	return nil
}

// CheckVersionTag is CheckVersion for the entity tags of SCIM (RFC 7644
// section 3.14): 412 when ifMatch (the If-Match header's values, nil for
// none) names neither version nor "*" (VersionMatches).
func CheckVersionTag(ifMatch []string, version string) error {
	if ifMatch != nil && !VersionMatches(ifMatch, version) {
		return ErrTagPrecondition
	}
	return nil
}

// ErrTagPrecondition answers a SCIM If-Match that names a stale version.
var ErrTagPrecondition = Errorf(EPRECONDITION, "The resource has changed: its version is no longer the one given in If-Match")

// ErrPrecondition answers an If-Match that names a stale version.
var ErrPrecondition = Errorf(EPRECONDITION, "The object has changed since you read it; fetch it again and retry")

// PtrEqual reports whether a and b are both nil or point to equal values:
// the comparison of optional fields, for the names of what a change
// changed (the audit log's fields).
func PtrEqual[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
