package quarry

import (
	"slices"
	"strings"

	"github.com/quarryhq/quarry/internal/pyrepr"
)

// Document sets, as Onyx v4.6.1's Enterprise Edition has them
// (backend/onyx/db/document_set.py, backend/ee/onyx/db/document_set.py):
// named sets of cc-pairs that a search may be narrowed to, public or
// shared with people and groups, made and changed by admins and by
// curators for the groups they curate. A document is in the sets of the
// pair that holds its copy, at the moment of each search: nothing is
// written per document, so a set is searchable as soon as it is made. A
// set narrows what a person may already read and never widens it: the
// rights on documents stay those of search (store/searchrights.go).
// Store keeps them (store/documentset.go); these are their rules.

// DocumentSet is a named set of cc-pairs (Onyx's DocumentSet).
type DocumentSet struct {
	ID          int64
	Name        string // Unique.
	Description string
	// OwnerID is the user who made the set; nil once that user is gone.
	OwnerID *string
	// IsPublic sets are seen by everyone; the others by their Users, the
	// members of their Groups, their owner and those who manage document
	// sets (Caller.CanSeeDocumentSet).
	IsPublic  bool
	Pairs     []DocumentSetPair // Ascending by id.
	Users     []string          // Ascending.
	Groups    []int64           // Ascending.
	CreatedAt Time
	UpdatedAt Time
}

// DocumentSetPair is a pair of a set as the set's summaries show it
// (Onyx's CCPairSummary): the pair and its connector's source.
type DocumentSetPair struct {
	PairRef
	Source DocumentSource
}

// DocumentSetInput is a set to make, or what a set is to become: Onyx's
// DocumentSetCreationRequest and DocumentSetUpdateRequest. A change
// replaces the whole set, as Onyx's does.
type DocumentSetInput struct {
	ID          int64 // The set to change; 0 for a new set.
	Name        string
	Description string
	PairIDs     []int64
	IsPublic    bool
	Users       []string
	Groups      []int64
	// FederatedConnectors is how many federated connectors the request
	// names: Quarry has none (ErrFederatedConnectors).
	FederatedConnectors int
}

// The refusals of document sets' own rules.
var (
	// ErrFederatedConnectors answers a set that names federated
	// connectors, which Quarry does not have (400).
	ErrFederatedConnectors = Errorf(EINVALID, "Quarry has no federated connectors: federated_connectors must be empty")
	// ErrDocumentSetName answers a set without a name (400).
	ErrDocumentSetName = Errorf(EINVALID, "A document set needs a name")
)

// ErrDocumentSetNotFound answers a set that does not exist, or that the
// caller may not see (Onyx's 404).
func ErrDocumentSetNotFound(id int64) error {
	return Errorf(ENOTFOUND, "Document set %d does not exist", id)
}

// ErrDocumentSetTaken answers a set named as another is (409): names are
// unique, since searches name sets by them.
func ErrDocumentSetTaken(name string) error {
	return Errorf(ECONFLICT, "A document set named %s already exists", pyrepr.Quote(name))
}

// ErrDocumentSetInUse answers the deletion of a set that n assistants
// search (400): taking the set out of an assistant that searches only it
// would let the assistant search everything its person may read.
func ErrDocumentSetInUse(n int) error {
	return Errorf(EINVALID, "This document set is searched by %d assistant(s): take it out of them before deleting it", n)
}

// ErrNoSuchPair answers a request that names a cc-pair that does not exist,
// or that the caller may not see (400).
func ErrNoSuchPair(id int64) error {
	return Errorf(EINVALID, "CC pair %d does not exist", id)
}

// ErrDocumentSetAccess answers a search narrowed to sets of which names
// (in the order given) name none the caller may see: Onyx's 403
// INSUFFICIENT_PERMISSIONS, the names as Python's repr of a sorted list.
func ErrDocumentSetAccess(names []string) error {
	return Errorf(EFORBIDDEN, "User does not have access to document sets: %s", pyrepr.StringList(names))
}

// Check reports why in cannot be a set (400): it names federated
// connectors, has no name, or no pair (Onyx's "Cannot create a document
// set with no connectors", or "update" for a change). It keeps each pair,
// person and group once, in ascending order.
func (in *DocumentSetInput) Check() error {
	in.PairIDs, in.Users, in.Groups = sortedSet(in.PairIDs), sortedSet(in.Users), sortedSet(in.Groups)
	switch {
	case in.FederatedConnectors > 0:
		return ErrFederatedConnectors
	case strings.TrimSpace(in.Name) == "":
		return ErrDocumentSetName
	case hasNUL(in.Name) || hasNUL(in.Description):
		return ErrNUL
	case len(in.PairIDs) == 0 && in.ID == 0:
		return Errorf(EINVALID, "Cannot create a document set with no connectors")
	case len(in.PairIDs) == 0:
		return Errorf(EINVALID, "Cannot update a document set with no connectors")
	}
	return nil
}

// KeepUnseenPairs adds to in, a change of set old by c, the pairs old
// holds that c may not see (CanSeePair; pairs holds them by id): a person
// is not shown those pairs in the listings, so a change, which names the
// whole set, keeps them rather than dropping what its author never saw.
func (in *DocumentSetInput) KeepUnseenPairs(c *Caller, old *DocumentSet, pairs map[int64]*CCPair) {
	for _, sp := range old.Pairs {
		if p := pairs[sp.ID]; p != nil && !c.CanSeePair(p) {
			in.PairIDs = append(in.PairIDs, sp.ID)
		}
	}
	in.PairIDs = sortedSet(in.PairIDs)
}

// CheckPairs reports why in may not hold its pairs, which pairs holds by
// id: each must exist and be one c may see (CanSeePair; 400, as a missing
// pair) or one the set already holds (old; nil for a new set: see
// KeepUnseenPairs), and a set that is not public may hold a private pair
// only if the pair is shared with every group of the set (Onyx's
// _check_if_cc_pairs_are_owned_by_groups), so that the set's groups can
// read what it holds.
func (in *DocumentSetInput) CheckPairs(c *Caller, old *DocumentSet, pairs map[int64]*CCPair) error {
	for _, id := range in.PairIDs {
		p := pairs[id]
		if p == nil || !c.CanSeePair(p) && !old.holds(id) {
			return ErrNoSuchPair(id)
		}
	}
	if in.IsPublic {
		return nil
	}
	for _, id := range in.PairIDs {
		p := pairs[id]
		if p.AccessType != AccessPrivate {
			continue
		}
		for _, g := range in.Groups {
			if !slices.Contains(p.Groups, g) {
				return Errorf(EINVALID, "Connector Credential Pair with ID: '%d' is not owned by the specified groups", id)
			}
		}
	}
	return nil
}

// holds reports whether s, which may be nil, holds pair id.
func (s *DocumentSet) holds(id int64) bool {
	return s != nil && slices.ContainsFunc(s.Pairs, func(p DocumentSetPair) bool { return p.ID == id })
}

// ManagesDocumentSets reports whether c manages document sets as an admin
// does: admins, and holders of manage:document_sets. Curators manage the
// sets of the groups they curate (see CanEditDocumentSet).
func (c *Caller) ManagesDocumentSets() bool { return c.Has(PermManageDocumentSets) }

// CanReachDocumentSets reports whether c may call the routes that make,
// change and delete document sets (Onyx's current_curator_or_admin_user):
// curators, and those who manage document sets.
func (c *Caller) CanReachDocumentSets() bool { return c.IsCurator() || c.ManagesDocumentSets() }

// CanSeeDocumentSet reports whether c may see set s, list it and narrow a
// search to it: those who manage document sets see every set; others the
// public sets, the sets shared with them or with a group they are a
// member of, and the sets they made. (Onyx's listing, _add_user_filters,
// leaves out the sets shared with a person and those a person made,
// though its Enterprise Edition's fetch_document_sets counts the first:
// Quarry shows a person what is shared with them.)
func (c *Caller) CanSeeDocumentSet(s *DocumentSet) bool {
	return c.ManagesDocumentSets() || s.IsPublic || slices.Contains(s.Users, c.ID) || c.madeSet(s) ||
		slices.ContainsFunc(s.Groups, c.reachedThrough)
}

// madeSet reports whether c made set s.
func (c *Caller) madeSet(s *DocumentSet) bool { return s.OwnerID != nil && *s.OwnerID == c.ID }

// CanEditDocumentSet reports whether c may change or delete set s (and
// lists it with get_editable, as Onyx's _add_user_filters does): those
// who manage document sets every set; others the sets they made, and
// those shared with at least one group and only with groups they curate.
func (c *Caller) CanEditDocumentSet(s *DocumentSet) bool {
	return c.ManagesDocumentSets() || c.madeSet(s) || len(s.Groups) > 0 && c.CuratesAll(s.Groups)
}

// CheckEditDocumentSet reports why c may not change or delete set s,
// which it can see (403; see CanEditDocumentSet).
func (c *Caller) CheckEditDocumentSet(s *DocumentSet) error {
	if !c.CanEditDocumentSet(s) {
		return ErrNotYourGroups
	}
	return nil
}

// CheckDocumentSetSharing applies Onyx's validate_object_creation_for_user
// to set in, which c makes (old is nil) or makes of set old: those who
// manage document sets may share any set; curators must name at least one
// group, unless the set is public and theirs (new, or one they made), and
// only groups they curate (400 for a new set, 403 for a change, as the
// other sharing rules: see CheckSharing).
func (c *Caller) CheckDocumentSetSharing(old *DocumentSet, in *DocumentSetInput) error {
	switch {
	case c.ManagesDocumentSets():
		return nil
	case !c.IsCurator():
		return ErrNotCurator
	case old != nil && !c.CuratesAll(in.Groups):
		return ErrShareNotCurated
	}
	return c.checkCuratorSharing(in.Groups, in.IsPublic && (old == nil || c.madeSet(old)))
}

// CheckDocumentSetNames reports why c may not narrow a search to the sets
// named names: of the sets of those names that exist (sets), some name is
// of none that c may see (ErrDocumentSetAccess, Onyx's 403; a name of no
// set is refused as one c may not see, so that names cannot be probed).
// It returns the sets c may see, by name.
func (c *Caller) CheckDocumentSetNames(names []string, sets []*DocumentSet) (map[string]*DocumentSet, error) {
	seen := map[string]*DocumentSet{}
	for _, s := range sets {
		if c.CanSeeDocumentSet(s) {
			seen[s.Name] = s
		}
	}
	var refused []string
	for _, n := range names {
		if seen[n] == nil {
			refused = append(refused, n)
		}
	}
	if len(refused) > 0 {
		slices.Sort(refused)
		return nil, ErrDocumentSetAccess(refused)
	}
	return seen, nil
}

// DocumentSetsPublic reports whether every pair of sets is public (Onyx's
// check_document_sets_are_public): whether everyone who may search reads
// every document the sets hold.
func DocumentSetsPublic(sets []*DocumentSet) bool {
	for _, s := range sets {
		for _, p := range s.Pairs {
			if p.AccessType != AccessPublic {
				return false
			}
		}
	}
	return true
}

// DocumentSetChangedFields returns the names of the fields that in
// changes of set old (every field, for a new set), in the order of
// Onyx's request, for the audit log.
func DocumentSetChangedFields(old *DocumentSet, in *DocumentSetInput) []string {
	all := []string{"name", "description", "cc_pair_ids", "is_public", "users", "groups"}
	if old == nil {
		return all
	}
	pairs := make([]int64, len(old.Pairs))
	for i, p := range old.Pairs {
		pairs[i] = p.ID
	}
	changed := []bool{old.Name != in.Name, old.Description != in.Description, !slices.Equal(pairs, in.PairIDs),
		old.IsPublic != in.IsPublic, !slices.Equal(old.Users, in.Users), !slices.Equal(old.Groups, in.Groups)}
	var out []string
	for i, f := range all {
		if changed[i] {
			out = append(out, f)
		}
	}
	return out
}
