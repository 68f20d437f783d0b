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

// CCPairStatus says whether a cc-pair is in use. The values are those of
// Onyx's ConnectorCredentialPairStatus that a control plane can reach:
// ACTIVE and PAUSED, which administrators set. Onyx's other states belong
// to its indexer: SCHEDULED and INITIAL_INDEXING before a first indexing,
// INVALID when indexing finds the credential no longer works, and DELETING
// while a background task removes the pair's documents. Quarry indexes
// nothing: a pair is deleted at once rather than marked DELETING, and none
// of those states occurs.
type CCPairStatus string

// The cc-pair statuses.
const (
	CCPairActive CCPairStatus = "ACTIVE" // In use: the default.
	CCPairPaused CCPairStatus = "PAUSED" // Kept, with its sharing, but not to be indexed.
)

// EnumValues returns every CCPairStatus.
func (CCPairStatus) EnumValues() []string { return []string{"ACTIVE", "PAUSED"} }

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
