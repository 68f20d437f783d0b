package quarry

import (
	"encoding/json"
	"slices"
)

// Connector is an external content system Quarry indexes, such as a
// Confluence space or a Google Drive. Its credentials are attached through
// cc-pairs. Its fields are in the order of Onyx's ConnectorSnapshot, the
// wire shape.
type Connector struct {
	Name          string          `json:"name"`
	Source        DocumentSource  `json:"source"`
	InputType     InputType       `json:"input_type"`
	Config        json.RawMessage `json:"connector_specific_config"` // A JSON object.
	RefreshFreq   *int64          `json:"refresh_freq"`
	PruneFreq     *int64          `json:"prune_freq"`
	IndexingStart *Time           `json:"indexing_start"`
	ID            int64           `json:"id"`
	CredentialIDs []int64         `json:"credential_ids"` // Of its cc-pairs the caller can see, ascending.
	CreatedAt     Time            `json:"time_created"`
	UpdatedAt     Time            `json:"time_updated"`

	// AccessType and Groups (ascending) are how the connector is shared.
	// Onyx's ConnectorSnapshot has no such fields, so they are not part
	// of this encoding: the connector routes add them to their answers,
	// the status listing and the snapshots inside other objects do not.
	// They are only filled where they are shown.
	AccessType AccessType `json:"-"`
	Groups     []int64    `json:"-"`
}

// ConnectorInput holds the fields of a connector to create, or to replace on
// update. AccessType and Groups pass the sharing check (contract section 6)
// and are kept: they decide who else sees the connector (see
// CanSeeConnector). Left out, they mean private and no group for a new
// connector, and no change for an update (see Sharing).
type ConnectorInput struct {
	Name          string
	Source        DocumentSource
	InputType     InputType
	Config        json.RawMessage
	RefreshFreq   *int64
	PruneFreq     *int64
	IndexingStart *Time
	AccessType    AccessType // Empty if left out.
	Groups        *[]int64   // Nil if left out.
}

// Sharing returns how a connector shared as old is shared once in is
// applied to it: with in's access type and groups, and old's where in
// leaves them out. A new connector is shared as
// ConnectorSharing{AccessType: AccessPrivate} before.
func (in *ConnectorInput) Sharing(old ConnectorSharing) ConnectorSharing {
	s := old
	if in.AccessType != "" {
		s.AccessType = in.AccessType
	}
	if in.Groups != nil {
		s.Groups = *in.Groups
	}
	return s
}

// ConnectorSharing is what decides who sees a connector: the user who
// created it, and the access type and groups it was created (or last
// changed) with.
type ConnectorSharing struct {
	CreatorID  *string
	AccessType AccessType
	Groups     []int64
}

// CanSeeConnector reports whether c may see the connector shared as s, and
// so pair it with a credential: those who manage connectors (admins, and
// holders of manage:connectors, see ManagesConnectors) see every
// connector; others those
// they created, the public and sync ones, those shared with a group they
// curate, and those with a cc-pair they can see (pairSeen, see CanSeePair).
// A private connector of another user, shared with no group c curates and
// in no pair c sees, stays hidden. Like CanSeePair it depends on c's role
// and c.Memberships only; store builds the same condition in SQL.
func (c *Caller) CanSeeConnector(s ConnectorSharing, pairSeen bool) bool {
	switch {
	case c.ManagesConnectors(), pairSeen:
		return true
	case s.CreatorID != nil && *s.CreatorID == c.ID:
		return true
	case s.AccessType == AccessPublic, s.AccessType == AccessSync:
		return true
	}
	return slices.ContainsFunc(s.Groups, c.curatesShared)
}

// CanChangeConnector reports whether c may change a connector it can see,
// shared as s and paired as pairs: those who manage connectors any
// connector; others those they
// created, and those of other users that are private, shared with at least
// one group and only with groups they curate, and whose cc-pairs (at least
// one) are all shared only with groups they curate. A public or sync
// connector of another user is never theirs to change, even when every pair
// of it is theirs: others see it and may pair it too.
func (c *Caller) CanChangeConnector(s ConnectorSharing, pairs []*CCPair) bool {
	switch {
	case c.ManagesConnectors():
		return true
	case s.CreatorID != nil && *s.CreatorID == c.ID:
		return true
	case s.AccessType != AccessPrivate, len(s.Groups) == 0, !c.CuratesAll(s.Groups):
		return false
	}
	return len(pairs) > 0 && !slices.ContainsFunc(pairs, func(p *CCPair) bool {
		return len(p.Groups) == 0 || !c.CuratesAll(p.Groups)
	})
}

// CanDeleteConnector reports whether c may delete a connector shared as s
// once its last cc-pair is gone (DELETE /manage/admin/connector/{id}, or
// Onyx's deletion attempt of its last pair): those who manage connectors,
// and the user who created it (contract section 6, as Onyx v4.6.1 lets
// curators). Curators who may change a connector of another user
// (CanChangeConnector) may remove its pairs, not the connector.
func (c *Caller) CanDeleteConnector(s ConnectorSharing) bool {
	return c.ManagesConnectors() || (s.CreatorID != nil && *s.CreatorID == c.ID)
}

// ErrNotYourConnector answers the deletion of a connector by a curator who
// did not create it.
var ErrNotYourConnector = Errorf(EFORBIDDEN, "Curators can only delete the connectors they created")

// CheckDeleteConnector reports why c may not delete a connector shared as
// s (see CanDeleteConnector).
func (c *Caller) CheckDeleteConnector(s ConnectorSharing) error {
	if !c.CanDeleteConnector(s) {
		return ErrNotYourConnector
	}
	return nil
}

// ChangedFields returns the JSON names of the fields that in, to be shared
// as next, changes on old, shared as sharing, in a fixed order, for the
// audit log.
func (in *ConnectorInput) ChangedFields(old *Connector, sharing, next ConnectorSharing) []string {
	var f []string
	add := func(changed bool, name string) {
		if changed {
			f = append(f, name)
		}
	}
	add(old.Name != in.Name, "name")
	add(old.Source != in.Source, "source")
	add(old.InputType != in.InputType, "input_type")
	add(!SameJSON(old.Config, in.Config), "connector_specific_config")
	add(!PtrEqual(old.RefreshFreq, in.RefreshFreq), "refresh_freq")
	add(!PtrEqual(old.PruneFreq, in.PruneFreq), "prune_freq")
	add(!PtrEqual(micros(old.IndexingStart), micros(in.IndexingStart)), "indexing_start")
	add(sharing.AccessType != next.AccessType, "access_type")
	add(!slices.Equal(sortedSet(sharing.Groups), sortedSet(next.Groups)), "groups")
	return f
}

// micros returns t in microseconds, or nil.
func micros(t *Time) *int64 {
	if t == nil {
		return nil
	}
	us := t.Micros()
	return &us
}

// CheckChangeConnector reports why c may not change a connector it can
// see, shared as s and paired as pairs (see CanChangeConnector).
func (c *Caller) CheckChangeConnector(s ConnectorSharing, pairs []*CCPair) error {
	if !c.CanChangeConnector(s, pairs) {
		return ErrNotYourGroups
	}
	return nil
}

// CheckConnectorUnused reports why connector id, used by pairs cc-pairs,
// may not be deleted.
func CheckConnectorUnused(id int64, pairs int) error {
	if pairs > 0 {
		return Errorf(ECONFLICT, "Connector %d is still used by %d cc-pair(s); remove them first", id, pairs)
	}
	return nil
}
