package quarry

import "slices"

// DocumentSource names the kind of external system a connector reads from.
// Its values are those of interface.md section 2.7, in that order.
type DocumentSource string

// documentSources lists every DocumentSource in specification order.
var documentSources = []string{
	"ingestion_api",
	"slack",
	"web",
	"google_drive",
	"gmail",
	"requesttracker",
	"github",
	"gitbook",
	"gitlab",
	"guru",
	"bookstack",
	"outline",
	"confluence",
	"jira",
	"slab",
	"productboard",
	"file",
	"coda",
	"notion",
	"zulip",
	"linear",
	"hubspot",
	"document360",
	"gong",
	"google_sites",
	"zendesk",
	"loopio",
	"dropbox",
	"sharepoint",
	"teams",
	"salesforce",
	"discourse",
	"axero",
	"clickup",
	"mediawiki",
	"wikipedia",
	"asana",
	"s3",
	"r2",
	"google_cloud_storage",
	"oci_storage",
	"xenforo",
	"not_applicable",
	"discord",
	"freshdesk",
	"fireflies",
	"egnyte",
	"airtable",
	"highspot",
	"drupal_wiki",
	"imap",
	"bitbucket",
	"testrail",
	"mock_connector",
	"user_file",
}

// EnumValues returns every valid DocumentSource in specification order.
func (DocumentSource) EnumValues() []string { return documentSources }

// Valid reports whether s is one of the enumerated sources.
func (s DocumentSource) Valid() bool { return slices.Contains(documentSources, string(s)) }

// AccessType says who may see a cc-pair's documents.
type AccessType string

// The access types.
const (
	AccessPublic  AccessType = "public"  // Everyone.
	AccessPrivate AccessType = "private" // Members of the pair's groups.
	AccessSync    AccessType = "sync"    // As permissions synced from the source say.
)

// EnumValues returns every valid AccessType in specification order.
func (AccessType) EnumValues() []string { return []string{"public", "private", "sync"} }

// InputType says how a connector obtains documents.
type InputType string

// EnumValues returns every valid InputType in specification order.
func (InputType) EnumValues() []string {
	return []string{"load_state", "poll", "event", "slim_retrieval"}
}

// CCPairStatus is the state of a cc-pair: Onyx's
// ConnectorCredentialPairStatus. A new pair is SCHEDULED; its first index
// attempt to start makes it INITIAL_INDEXING, its first success ACTIVE
// (PairStatusAfter). Administrators pause and resume it (PAUSED, ACTIVE).
// DELETING is Onyx's too, and does not occur: Quarry deletes a pair at
// once. INVALID is a pair whose source has no connector in Quarry
// (StopNoConnector), which is not indexed until something changes
// (Revalidated).
type CCPairStatus string

// The cc-pair statuses.
const (
	CCPairScheduled       CCPairStatus = "SCHEDULED"        // Made, never indexed.
	CCPairInitialIndexing CCPairStatus = "INITIAL_INDEXING" // Being indexed for the first time.
	CCPairActive          CCPairStatus = "ACTIVE"           // Indexed at least once, or resumed.
	CCPairPaused          CCPairStatus = "PAUSED"           // Kept, with its sharing, but not indexed.
	CCPairDeleting        CCPairStatus = "DELETING"         // Onyx's, while its documents are removed.
	CCPairInvalid         CCPairStatus = "INVALID"          // Onyx's, when its settings cannot be used: its source has no connector.
)

// EnumValues returns every CCPairStatus, in Onyx's order.
func (CCPairStatus) EnumValues() []string {
	return []string{"SCHEDULED", "INITIAL_INDEXING", "ACTIVE", "PAUSED", "DELETING", "INVALID"}
}

// Active reports whether pairs in status s are indexed: Onyx's
// active_statuses (SCHEDULED, INITIAL_INDEXING, ACTIVE).
func (s CCPairStatus) Active() bool {
	return s == CCPairScheduled || s == CCPairInitialIndexing || s == CCPairActive
}

// CCPairStatusChange is a status a person gives a cc-pair: ACTIVE (resume)
// or PAUSED. Onyx's route takes any status; the others are the indexer's.
type CCPairStatusChange string

// EnumValues returns every CCPairStatusChange.
func (CCPairStatusChange) EnumValues() []string { return []string{"ACTIVE", "PAUSED"} }

// Role is the authorization role of a user.
type Role string

// The roles, from most to least privileged.
const (
	RoleAdmin         Role = "admin"          // Everything.
	RoleGlobalCurator Role = "global_curator" // Curates every group it is a member of.
	RoleCurator       Role = "curator"        // Curates the groups where its membership says so.
	RoleBasic         Role = "basic"          // Its own credentials.
	RoleLimited       Role = "limited"        // Nothing on the admin API.
)

// EnumValues returns every valid Role.
func (Role) EnumValues() []string {
	return []string{"admin", "global_curator", "curator", "basic", "limited"}
}

// Valid reports whether r is one of the enumerated roles.
func (r Role) Valid() bool { return slices.Contains(r.EnumValues(), string(r)) }

// Rank orders the roles from least to most powerful: limited 0, basic 1,
// curator 2, global_curator 3, admin 4; -1 for an unknown role.
func (r Role) Rank() int {
	return slices.Index([]Role{RoleLimited, RoleBasic, RoleCurator, RoleGlobalCurator, RoleAdmin}, r)
}

// CheckAPIKeyRole reports why an API key may not have role r.
func CheckAPIKeyRole(r Role) error {
	if !r.Valid() {
		return Errorf(EINVALID, "Unknown role %q", r)
	}
	return nil
}

// KeepsCuratorFlags reports whether a user whose role becomes r keeps its
// group curator flags: only curators have them; a user given any other
// role loses them.
func (r Role) KeepsCuratorFlags() bool { return r == RoleCurator }
