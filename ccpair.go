package quarry

import (
	"slices"
	"strings"
)

// CCPair pairs a connector with one of its credentials and shares the result
// with user groups. A connector may be paired with several credentials, but
// with each at most once.
type CCPair struct {
	ID           int64        `json:"id"`
	Name         string       `json:"name"`
	ConnectorID  int64        `json:"connector_id"`
	CredentialID int64        `json:"credential_id"`
	AccessType   AccessType   `json:"access_type"`
	Status       CCPairStatus `json:"status"`
	Groups       []int64      `json:"groups"`
	CreatorID    *string      `json:"creator_id"`
	CreatedAt    Time         `json:"time_created"`
	Version      int64        `json:"-"` // Bumped by every change of its name or status; the ETag.
}

// CCPairInfo is a cc-pair with its connector, its credential (in clear:
// responses mask it) and its creator's email: what a page about one pair,
// or a user group's list of pairs, shows.
type CCPairInfo struct {
	CCPair
	Connector    *Connector  // With the credentials of its pairs that the caller can see.
	Credential   *Credential // Unmasked.
	CreatorEmail *string
}

// CCPairUpdate holds the changes of a cc-pair update. A nil field is left
// unchanged.
type CCPairUpdate struct {
	Name    *string
	Status  *CCPairStatus
	IfMatch []int64 // If not nil, the versions the caller accepts (If-Match).
}

// CheckCCPairName reports why a pair may not be renamed name: a pair
// needs a name (400).
func CheckCCPairName(name string) error {
	if strings.TrimSpace(name) == "" {
		return Errorf(EINVALID, "A cc-pair needs a name")
	}
	return nil
}

// ChangedFields returns the JSON names of the fields u would change on p,
// in a fixed order, for the audit log.
func (u *CCPairUpdate) ChangedFields(p *CCPair) []string {
	var f []string
	if u.Name != nil && *u.Name != p.Name {
		f = append(f, "name")
	}
	if u.Status != nil && *u.Status != p.Status {
		f = append(f, "status")
	}
	return f
}

// CanSeePair reports whether c may see cc-pair p: those who manage
// connectors (admins, and holders of manage:connectors) see every pair;
// others the public and sync pairs, and those shared with a group they are
// a member of. Who sees every pair depends on c's permissions, and what the
// others see on c.Memberships only, so that it can be cached by those;
// store builds the same condition in SQL for listings.
func (c *Caller) CanSeePair(p *CCPair) bool {
	return c.ManagesConnectors() || p.AccessType == AccessPublic || p.AccessType == AccessSync || slices.ContainsFunc(p.Groups, c.reachedThrough)
}

// SeesWholePair reports whether c, who can see cc-pair p (CanSeePair),
// sees every document p holds in the listings and counts of its documents
// (documents pages, the ingestion API's listings, document counts, the
// figures and errors of its indexing): those who manage connectors every
// pair, as its operators; others a public pair, and a private pair, which
// they see as members of one of its groups and whose documents that opens
// to them. A sync pair's documents are each for those its connector
// reports: others than those who manage connectors see of it only the
// documents open to them (store's documentsReadable, the rule of search).
func (c *Caller) SeesWholePair(p *CCPair) bool {
	return c.ManagesConnectors() || p.AccessType != AccessSync
}

// CanChangePair reports whether c may rename, pause, resume or remove
// cc-pair p, which it can see: those who manage connectors any pair;
// others the pairs they created and those shared with groups they all
// curate (at least one).
func (c *Caller) CanChangePair(p *CCPair) bool {
	switch {
	case c.ManagesConnectors():
		return true
	case p.CreatorID != nil && *p.CreatorID == c.ID:
		return true
	}
	return len(p.Groups) > 0 && c.CuratesAll(p.Groups)
}

// CCPairInput holds the fields of a cc-pair to create.
type CCPairInput struct {
	Name       string
	AccessType AccessType
	Groups     []int64
}

// StatusFilter narrows the connector status listing. Empty slices do not
// filter.
type StatusFilter struct {
	Sources     []DocumentSource
	AccessTypes []AccessType
}

// CheckChangePair reports why c may not rename, pause, resume or remove
// cc-pair p, which it can see (see CanChangePair).
func (c *Caller) CheckChangePair(p *CCPair) error {
	if !c.CanChangePair(p) {
		return ErrNotYourGroups
	}
	return nil
}

// CheckPairSources reports why a connector reading source may not be
// paired with credential cred: the credential must be for the same source,
// or for none in particular (not_applicable).
func CheckPairSources(connectorID int64, source DocumentSource, cred *Credential) error {
	if cred.Source != source && cred.Source != "not_applicable" {
		return Errorf(EINVALID, "Credential %d is for %s, but connector %d reads %s", cred.ID, cred.Source, connectorID, source)
	}
	return nil
}

// CCPairBrief is a cc-pair with the source of its connector: what the
// listing of indexing statuses shows of it.
type CCPairBrief struct {
	CCPair
	Source DocumentSource
}
