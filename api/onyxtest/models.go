package onyxtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// The mirrors of the pydantic models of Onyx v4.6.1 that its managers send
// or parse, field for field: the same names in the same order, a pointer
// where the annotation allows None, the tag onyx:"default" where the field
// has a default (and so may be absent), and the types of the table
// (table.go). TestMirrorsMatchOnyx checks each mirror against the table
// written from Onyx's source; mirrors lists them with the model each
// stands for.

// onyxPassword is the password of Onyx's test users (DEFAULT_PASSWORD).
const onyxPassword = "TestPassword123!"

// onyxDefault tags the fields of the mirror models that have a default in
// Onyx's model, and so may be absent.
const onyxDefault = "default"

// onyxUUID is a UUID field: a string in the canonical 8-4-4-4-12 form.
type onyxUUID string

func (onyxUUID) onyxName() string { return "UUID" }

// UnmarshalJSON accepts a canonical UUID only.
func (u *onyxUUID) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	for i, c := range s {
		hyphen := i == 8 || i == 13 || i == 18 || i == 23
		if len(s) != 36 || hyphen != (c == '-') || !hyphen && !strings.ContainsRune("0123456789abcdefABCDEF", c) {
			return fmt.Errorf("%q is not a UUID", s)
		}
	}
	*u = onyxUUID(s)
	return nil
}

// onyxTime is a datetime field, as pydantic reads one from JSON.
type onyxTime struct{ time.Time }

func (onyxTime) onyxName() string { return "datetime" }

// UnmarshalJSON accepts an RFC 3339 time, or one without an offset.
func (t *onyxTime) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := parseDatetime(s)
	t.Time = v
	return err
}

// MarshalJSON writes the time as pydantic does.
func (t onyxTime) MarshalJSON() ([]byte, error) {
	return json.Marshal(t.UTC().Format("2006-01-02T15:04:05.999999Z"))
}

// onyxEmail is an EmailStr field.
type onyxEmail string

func (onyxEmail) onyxName() string { return "EmailStr" }

// Onyx's enumerations, with the values of the table.
type (
	onyxRole                 string // UserRole
	onyxAccountType          string // AccountType
	onyxAccessType           string // AccessType
	onyxSource               string // DocumentSource
	onyxFederatedSource      string // FederatedConnectorSource
	onyxInputType            string // InputType
	onyxCCPairStatus         string // ConnectorCredentialPairStatus
	onyxIndexingStatus       string // IndexingStatus
	onyxPermissionSyncStatus string // PermissionSyncStatus
	onyxTaskStatus           string // TaskStatus
	onyxPermission           string // Permission
	onyxThemePreference      string // ThemePreference
	onyxDefaultAppMode       string // DefaultAppMode
)

func (onyxRole) onyxName() string                 { return "UserRole" }
func (onyxAccountType) onyxName() string          { return "AccountType" }
func (onyxAccessType) onyxName() string           { return "AccessType" }
func (onyxSource) onyxName() string               { return "DocumentSource" }
func (onyxFederatedSource) onyxName() string      { return "FederatedConnectorSource" }
func (onyxInputType) onyxName() string            { return "InputType" }
func (onyxCCPairStatus) onyxName() string         { return "ConnectorCredentialPairStatus" }
func (onyxIndexingStatus) onyxName() string       { return "IndexingStatus" }
func (onyxPermissionSyncStatus) onyxName() string { return "PermissionSyncStatus" }
func (onyxTaskStatus) onyxName() string           { return "TaskStatus" }
func (onyxPermission) onyxName() string           { return "Permission" }
func (onyxThemePreference) onyxName() string      { return "ThemePreference" }
func (onyxDefaultAppMode) onyxName() string       { return "DefaultAppMode" }

// EnumValues returns the values of Onyx's enumeration.
func (e onyxRole) EnumValues() []string                 { return enumValues(e.onyxName()) }
func (e onyxAccountType) EnumValues() []string          { return enumValues(e.onyxName()) }
func (e onyxAccessType) EnumValues() []string           { return enumValues(e.onyxName()) }
func (e onyxSource) EnumValues() []string               { return enumValues(e.onyxName()) }
func (e onyxFederatedSource) EnumValues() []string      { return enumValues(e.onyxName()) }
func (e onyxInputType) EnumValues() []string            { return enumValues(e.onyxName()) }
func (e onyxCCPairStatus) EnumValues() []string         { return enumValues(e.onyxName()) }
func (e onyxIndexingStatus) EnumValues() []string       { return enumValues(e.onyxName()) }
func (e onyxPermissionSyncStatus) EnumValues() []string { return enumValues(e.onyxName()) }
func (e onyxTaskStatus) EnumValues() []string           { return enumValues(e.onyxName()) }
func (e onyxPermission) EnumValues() []string           { return enumValues(e.onyxName()) }
func (e onyxThemePreference) EnumValues() []string      { return enumValues(e.onyxName()) }
func (e onyxDefaultAppMode) EnumValues() []string       { return enumValues(e.onyxName()) }

// Models the mirrors do not describe (table.go's "opaque"): Quarry has no
// document sets and no personas, and answers [] where a UserGroup lists
// them; an item would have to be an object.
type (
	onyxDocumentSet     map[string]any
	onyxPersonaSnapshot map[string]any
)

func (onyxDocumentSet) onyxName() string     { return "DocumentSet" }
func (onyxPersonaSnapshot) onyxName() string { return "PersonaSnapshot" }

// ---- backend/onyx/server/documents/models.py ----

// onyxConnectorUpdateRequest mirrors ConnectorUpdateRequest, the body of
// POST /manage/admin/connector (ConnectorManager.create sends its
// model_dump(), every field).
type onyxConnectorUpdateRequest struct {
	Name                    string         `json:"name"`
	Source                  onyxSource     `json:"source"`
	InputType               onyxInputType  `json:"input_type"`
	ConnectorSpecificConfig map[string]any `json:"connector_specific_config"`
	RefreshFreq             *int64         `json:"refresh_freq" onyx:"default"`
	PruneFreq               *int64         `json:"prune_freq" onyx:"default"`
	IndexingStart           *onyxTime      `json:"indexing_start" onyx:"default"`
	AccessType              onyxAccessType `json:"access_type"`
	Groups                  []int64        `json:"groups" onyx:"default"`
}

// onyxConnectorSnapshot mirrors ConnectorSnapshot.
type onyxConnectorSnapshot struct {
	Name                    string         `json:"name"`
	Source                  onyxSource     `json:"source"`
	InputType               onyxInputType  `json:"input_type"`
	ConnectorSpecificConfig map[string]any `json:"connector_specific_config"`
	RefreshFreq             *int64         `json:"refresh_freq" onyx:"default"`
	PruneFreq               *int64         `json:"prune_freq" onyx:"default"`
	IndexingStart           *onyxTime      `json:"indexing_start" onyx:"default"`
	ID                      int64          `json:"id"`
	CredentialIDs           []int64        `json:"credential_ids"`
	TimeCreated             onyxTime       `json:"time_created"`
	TimeUpdated             onyxTime       `json:"time_updated"`
}

// onyxCredentialSnapshot mirrors CredentialSnapshot.
type onyxCredentialSnapshot struct {
	CredentialJSON map[string]any `json:"credential_json"`
	AdminPublic    bool           `json:"admin_public"`
	Source         onyxSource     `json:"source"`
	Name           *string        `json:"name" onyx:"default"`
	CuratorPublic  bool           `json:"curator_public" onyx:"default"`
	Groups         []int64        `json:"groups" onyx:"default"`
	ID             int64          `json:"id"`
	UserID         *onyxUUID      `json:"user_id"`
	UserEmail      *string        `json:"user_email" onyx:"default"`
	TimeCreated    onyxTime       `json:"time_created"`
	TimeUpdated    onyxTime       `json:"time_updated"`
}

// onyxObjectCreationID mirrors ObjectCreationIdResponse.
type onyxObjectCreationID struct {
	ID         int64                   `json:"id"`
	Credential *onyxCredentialSnapshot `json:"credential" onyx:"default"`
}

// onyxDeletionAttemptSnapshot mirrors DeletionAttemptSnapshot.
type onyxDeletionAttemptSnapshot struct {
	ConnectorID  int64          `json:"connector_id"`
	CredentialID int64          `json:"credential_id"`
	Status       onyxTaskStatus `json:"status"`
}

// onyxCCPairFullInfo mirrors CCPairFullInfo, a cc-pair's page.
type onyxCCPairFullInfo struct {
	ID                                    int64                        `json:"id"`
	Name                                  string                       `json:"name"`
	Status                                onyxCCPairStatus             `json:"status"`
	InRepeatedErrorState                  bool                         `json:"in_repeated_error_state"`
	NumDocsIndexed                        int64                        `json:"num_docs_indexed"`
	Connector                             onyxConnectorSnapshot        `json:"connector"`
	Credential                            onyxCredentialSnapshot       `json:"credential"`
	NumberOfIndexAttempts                 int64                        `json:"number_of_index_attempts"`
	LastIndexAttemptStatus                *onyxIndexingStatus          `json:"last_index_attempt_status"`
	LatestDeletionAttempt                 *onyxDeletionAttemptSnapshot `json:"latest_deletion_attempt"`
	AccessType                            onyxAccessType               `json:"access_type"`
	IsEditableForCurrentUser              bool                         `json:"is_editable_for_current_user"`
	DeletionFailureMessage                *string                      `json:"deletion_failure_message"`
	Indexing                              bool                         `json:"indexing"`
	Creator                               *onyxUUID                    `json:"creator"`
	CreatorEmail                          *string                      `json:"creator_email"`
	LastIndexed                           *onyxTime                    `json:"last_indexed"`
	LastPruned                            *onyxTime                    `json:"last_pruned"`
	LastFullPermissionSync                *onyxTime                    `json:"last_full_permission_sync"`
	OverallIndexingSpeed                  *float64                     `json:"overall_indexing_speed"`
	LatestCheckpointDescription           *string                      `json:"latest_checkpoint_description"`
	LastPermissionSyncAttemptStatus       *onyxPermissionSyncStatus    `json:"last_permission_sync_attempt_status"`
	PermissionSyncing                     bool                         `json:"permission_syncing"`
	LastPermissionSyncAttemptFinished     *onyxTime                    `json:"last_permission_sync_attempt_finished"`
	LastPermissionSyncAttemptErrorMessage *string                      `json:"last_permission_sync_attempt_error_message"`
	SupportsTargetedReindex               bool                         `json:"supports_targeted_reindex"`
}

// onyxConnectorStatus mirrors ConnectorStatus, an entry of the status listing.
type onyxConnectorStatus struct {
	CCPairID   int64                  `json:"cc_pair_id"`
	Name       string                 `json:"name"`
	Connector  onyxConnectorSnapshot  `json:"connector"`
	Credential onyxCredentialSnapshot `json:"credential"`
	AccessType onyxAccessType         `json:"access_type"`
	Groups     []int64                `json:"groups"`
}

// onyxIndexingStatusLite mirrors ConnectorIndexingStatusLite, a pair in
// the answer of POST /manage/admin/connector/indexing-status.
type onyxIndexingStatusLite struct {
	CCPairID                      int64               `json:"cc_pair_id"`
	Name                          string              `json:"name"`
	Source                        onyxSource          `json:"source"`
	AccessType                    onyxAccessType      `json:"access_type"`
	CCPairStatus                  onyxCCPairStatus    `json:"cc_pair_status"`
	InProgress                    bool                `json:"in_progress"`
	InRepeatedErrorState          bool                `json:"in_repeated_error_state"`
	LastFinishedStatus            *onyxIndexingStatus `json:"last_finished_status"`
	LastStatus                    *onyxIndexingStatus `json:"last_status"`
	LastSuccess                   *onyxTime           `json:"last_success"`
	IsEditable                    bool                `json:"is_editable"`
	DocsIndexed                   int64               `json:"docs_indexed"`
	LatestIndexAttemptDocsIndexed *int64              `json:"latest_index_attempt_docs_indexed"`
}

// onyxSourceSummary mirrors SourceSummary.
type onyxSourceSummary struct {
	TotalConnectors  int64 `json:"total_connectors"`
	ActiveConnectors int64 `json:"active_connectors"`
	PublicConnectors int64 `json:"public_connectors"`
	TotalDocsIndexed int64 `json:"total_docs_indexed"`
}

// onyxSourceTag mirrors SourceTag, an item of TagResponse.
type onyxSourceTag struct {
	TagKey   string     `json:"tag_key"`
	TagValue string     `json:"tag_value"`
	Source   onyxSource `json:"source"`
}

// onyxTagResponse mirrors TagResponse, the answer of GET /query/valid-tags.
type onyxTagResponse struct {
	Tags []onyxSourceTag `json:"tags"`
}

// onyxIndexingStatusResponse mirrors ConnectorIndexingStatusLiteResponse,
// the pairs of one source in the answer of indexing-status.
type onyxIndexingStatusResponse struct {
	Source           onyxSource                `json:"source"`
	Summary          onyxSourceSummary         `json:"summary"`
	CurrentPage      int64                     `json:"current_page"`
	TotalPages       int64                     `json:"total_pages"`
	IndexingStatuses []onyxIndexingStatusEntry `json:"indexing_statuses"`
}

// onyxFederatedConnectorStatus mirrors FederatedConnectorStatus
// (backend/onyx/server/federated/models.py).
type onyxFederatedConnectorStatus struct {
	ID     int64               `json:"id"`
	Source onyxFederatedSource `json:"source"`
	Name   string              `json:"name"`
}

// onyxIndexingStatusEntry is an entry of indexing_statuses:
// ConnectorIndexingStatusLite | FederatedConnectorStatus, one of the two
// set.
type onyxIndexingStatusEntry struct {
	Lite      *onyxIndexingStatusLite
	Federated *onyxFederatedConnectorStatus
}

func (onyxIndexingStatusEntry) onyxUnion() []reflect.Type {
	return []reflect.Type{reflect.TypeFor[onyxIndexingStatusLite](), reflect.TypeFor[onyxFederatedConnectorStatus]()}
}

// UnmarshalJSON decodes the first member of the union that the entry
// parses as, in order, as pydantic does.
func (e *onyxIndexingStatusEntry) UnmarshalJSON(b []byte) error {
	if onyxCheck("entry", b, reflect.TypeFor[onyxIndexingStatusLite]()) == nil {
		return json.Unmarshal(b, &e.Lite)
	}
	return json.Unmarshal(b, &e.Federated)
}

// onyxCCPairIdentifier mirrors ConnectorCredentialPairIdentifier, the body
// of POST /manage/admin/deletion-attempt.
type onyxCCPairIdentifier struct {
	ConnectorID  int64 `json:"connector_id"`
	CredentialID int64 `json:"credential_id"`
}

// onyxPairDescriptor mirrors ConnectorCredentialPairDescriptor, a pair of a group.
type onyxPairDescriptor struct {
	ID         int64                  `json:"id"`
	Name       string                 `json:"name"`
	Connector  onyxConnectorSnapshot  `json:"connector"`
	Credential onyxCredentialSnapshot `json:"credential"`
	AccessType onyxAccessType         `json:"access_type"`
}

// onyxPaginatedUsers mirrors PaginatedReturn[FullUserSnapshot].
type onyxPaginatedUsers struct {
	Items      []onyxFullUserSnapshot `json:"items"`
	TotalItems int64                  `json:"total_items"`
}

// ---- backend/onyx/server/models.py ----

// onyxStatusResponse mirrors StatusResponse[int].
type onyxStatusResponse struct {
	Success bool    `json:"success"`
	Message *string `json:"message" onyx:"default"`
	Data    *int64  `json:"data" onyx:"default"`
}

// onyxUserGroupInfo mirrors UserGroupInfo, a group of a person.
type onyxUserGroupInfo struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

// onyxFullUserSnapshot mirrors FullUserSnapshot, a person of the users pages.
type onyxFullUserSnapshot struct {
	ID                 onyxUUID            `json:"id"`
	Email              string              `json:"email"`
	Role               onyxRole            `json:"role"`
	AccountType        onyxAccountType     `json:"account_type"`
	IsActive           bool                `json:"is_active"`
	PasswordConfigured bool                `json:"password_configured"`
	PersonalName       *string             `json:"personal_name"`
	CreatedAt          onyxTime            `json:"created_at"`
	UpdatedAt          onyxTime            `json:"updated_at"`
	Groups             []onyxUserGroupInfo `json:"groups"`
	IsSCIMSynced       bool                `json:"is_scim_synced"`
	CraftEnabled       *bool               `json:"craft_enabled"`
}

// onyxInvitedUserSnapshot mirrors InvitedUserSnapshot.
type onyxInvitedUserSnapshot struct {
	Email string `json:"email"`
}

// ---- backend/onyx/server/manage/models.py ----

// onyxAssistantPreference mirrors UserSpecificAssistantPreference.
type onyxAssistantPreference struct {
	DisabledToolIDs []int64 `json:"disabled_tool_ids"`
}

// onyxUserPreferences mirrors UserPreferences.
type onyxUserPreferences struct {
	ChosenAssistants           *[]int64                           `json:"chosen_assistants" onyx:"default"`
	HiddenAssistants           []int64                            `json:"hidden_assistants" onyx:"default"`
	VisibleAssistants          []int64                            `json:"visible_assistants" onyx:"default"`
	DefaultModel               *string                            `json:"default_model" onyx:"default"`
	PinnedAssistants           *[]int64                           `json:"pinned_assistants" onyx:"default"`
	ShortcutEnabled            *bool                              `json:"shortcut_enabled" onyx:"default"`
	AutoScroll                 *bool                              `json:"auto_scroll" onyx:"default"`
	TemperatureOverrideEnabled *bool                              `json:"temperature_override_enabled" onyx:"default"`
	ThemePreference            *onyxThemePreference               `json:"theme_preference" onyx:"default"`
	Language                   *string                            `json:"language" onyx:"default"`
	ChatBackground             *string                            `json:"chat_background" onyx:"default"`
	DefaultAppMode             onyxDefaultAppMode                 `json:"default_app_mode" onyx:"default"`
	PasteAsTile                *bool                              `json:"paste_as_tile" onyx:"default"`
	VoiceAutoSend              *bool                              `json:"voice_auto_send" onyx:"default"`
	VoiceAutoPlayback          *bool                              `json:"voice_auto_playback" onyx:"default"`
	VoicePlaybackSpeed         *float64                           `json:"voice_playback_speed" onyx:"default"`
	AssistantSpecificConfigs   *map[int64]onyxAssistantPreference `json:"assistant_specific_configs" onyx:"default"`
}

// onyxMemoryItem mirrors MemoryItem.
type onyxMemoryItem struct {
	ID      *int64 `json:"id" onyx:"default"`
	Content string `json:"content"`
}

// onyxUserPersonalization mirrors UserPersonalization.
type onyxUserPersonalization struct {
	Name             string           `json:"name" onyx:"default"`
	Role             string           `json:"role" onyx:"default"`
	UseMemories      bool             `json:"use_memories" onyx:"default"`
	EnableMemoryTool bool             `json:"enable_memory_tool" onyx:"default"`
	Memories         []onyxMemoryItem `json:"memories" onyx:"default"`
	UserPreferences  string           `json:"user_preferences" onyx:"default"`
}

// onyxTenantSnapshot mirrors TenantSnapshot.
type onyxTenantSnapshot struct {
	TenantID      string `json:"tenant_id"`
	NumberOfUsers int64  `json:"number_of_users"`
}

// onyxTenantInfo mirrors TenantInfo.
type onyxTenantInfo struct {
	Invitation *onyxTenantSnapshot `json:"invitation" onyx:"default"`
	NewTenant  *onyxTenantSnapshot `json:"new_tenant" onyx:"default"`
}

// onyxUserInfo mirrors UserInfo: GET /me, and a member of a group.
type onyxUserInfo struct {
	ID                 string                  `json:"id"`
	Email              string                  `json:"email"`
	IsActive           bool                    `json:"is_active"`
	IsSuperuser        bool                    `json:"is_superuser"`
	IsVerified         bool                    `json:"is_verified"`
	Role               onyxRole                `json:"role"`
	Preferences        onyxUserPreferences     `json:"preferences"`
	Personalization    onyxUserPersonalization `json:"personalization" onyx:"default"`
	TokenExpiresAt     *onyxTime               `json:"token_expires_at" onyx:"default"`
	IsCloudSuperuser   bool                    `json:"is_cloud_superuser" onyx:"default"`
	TeamName           *string                 `json:"team_name" onyx:"default"`
	IsAnonymousUser    *bool                   `json:"is_anonymous_user" onyx:"default"`
	PasswordConfigured *bool                   `json:"password_configured" onyx:"default"`
	TenantInfo         *onyxTenantInfo         `json:"tenant_info" onyx:"default"`
}

// onyxAllUsers mirrors AllUsersResponse, the answer of GET /manage/users.
type onyxAllUsers struct {
	Accepted        []onyxFullUserSnapshot    `json:"accepted"`
	Invited         []onyxInvitedUserSnapshot `json:"invited"`
	SlackUsers      []onyxFullUserSnapshot    `json:"slack_users"`
	AcceptedPages   int64                     `json:"accepted_pages"`
	InvitedPages    int64                     `json:"invited_pages"`
	SlackUsersPages int64                     `json:"slack_users_pages"`
}

// ---- backend/onyx/auth/schemas.py (and fastapi-users' BaseUser) ----

// onyxUserRead mirrors UserRead, the answer of POST /auth/register.
type onyxUserRead struct {
	ID          onyxUUID  `json:"id"`
	Email       onyxEmail `json:"email"`
	IsActive    bool      `json:"is_active" onyx:"default"`
	IsSuperuser bool      `json:"is_superuser" onyx:"default"`
	IsVerified  bool      `json:"is_verified" onyx:"default"`
	Role        onyxRole  `json:"role"`
}

// ---- backend/ee/onyx/server/user_group/models.py ----

// onyxUserGroup mirrors UserGroup.
type onyxUserGroup struct {
	ID               int64                 `json:"id"`
	Name             string                `json:"name"`
	Users            []onyxUserInfo        `json:"users"`
	CuratorIDs       []onyxUUID            `json:"curator_ids"`
	CCPairs          []onyxPairDescriptor  `json:"cc_pairs"`
	DocumentSets     []onyxDocumentSet     `json:"document_sets"`
	Personas         []onyxPersonaSnapshot `json:"personas"`
	IsUpToDate       bool                  `json:"is_up_to_date"`
	IsUpForDeletion  bool                  `json:"is_up_for_deletion"`
	IsDefault        bool                  `json:"is_default"`
	IncognitoEnabled bool                  `json:"incognito_enabled"`
}

// onyxSetPermissionResponse mirrors SetPermissionResponse, the answer of
// PUT /manage/admin/user-group/{id}/permissions.
type onyxSetPermissionResponse struct {
	Permission onyxPermission `json:"permission"`
	Enabled    bool           `json:"enabled"`
}

// ---- backend/onyx/server/api_key/models.py, backend/onyx/auth/api_key.py ----

// onyxAPIKeyArgs mirrors APIKeyArgs, the body of POST /admin/api-key
// (APIKeyManager.create sends its model_dump()).
type onyxAPIKeyArgs struct {
	Name *string  `json:"name" onyx:"default"`
	Role onyxRole `json:"role" onyx:"default"`
}

// onyxAPIKeyDescriptor mirrors ApiKeyDescriptor, the answer of
// POST /admin/api-key.
type onyxAPIKeyDescriptor struct {
	APIKeyID      int64    `json:"api_key_id"`
	APIKeyDisplay string   `json:"api_key_display"`
	APIKey        *string  `json:"api_key" onyx:"default"`
	APIKeyName    *string  `json:"api_key_name" onyx:"default"`
	APIKeyRole    onyxRole `json:"api_key_role"`
	UserID        onyxUUID `json:"user_id"`
}

// ---- backend/onyx/server/features/tool/models.py ----

// onyxHeader mirrors Header, a custom header of a tool.
type onyxHeader struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// onyxToolSnapshot mirrors ToolSnapshot.
type onyxToolSnapshot struct {
	ID                      int64           `json:"id"`
	Name                    string          `json:"name"`
	Description             string          `json:"description"`
	Definition              *map[string]any `json:"definition"`
	DisplayName             string          `json:"display_name"`
	InCodeToolID            *string         `json:"in_code_tool_id"`
	CustomHeaders           *[]any          `json:"custom_headers"`
	PassthroughAuth         bool            `json:"passthrough_auth"`
	MCPServerID             *int64          `json:"mcp_server_id" onyx:"default"`
	UserID                  *string         `json:"user_id" onyx:"default"`
	OAuthConfigID           *int64          `json:"oauth_config_id" onyx:"default"`
	OAuthConfigName         *string         `json:"oauth_config_name" onyx:"default"`
	Enabled                 bool            `json:"enabled" onyx:"default"`
	ChatSelectable          bool            `json:"chat_selectable" onyx:"default"`
	AgentCreationSelectable bool            `json:"agent_creation_selectable" onyx:"default"`
	DefaultEnabled          bool            `json:"default_enabled" onyx:"default"`
}

// onyxToolStatusUpdated mirrors ToolStatusUpdateResponse
// (backend/onyx/server/features/tool/api.py), the answer of
// PATCH /admin/tool/status.
type onyxToolStatusUpdated struct {
	UpdatedCount int64   `json:"updated_count"`
	ToolIDs      []int64 `json:"tool_ids"`
}

// ---- backend/tests/integration/common_utils/test_models.py ----

// onyxDATestAPIKey mirrors DATestAPIKey, which APIKeyManager.get_all
// parses each listed key into. Its headers field is required and no
// server sends it, so get_all (and verify) raise a ValidationError
// whenever a key is listed, against Onyx too.
type onyxDATestAPIKey struct {
	APIKeyID      int64          `json:"api_key_id"`
	APIKeyDisplay string         `json:"api_key_display"`
	APIKey        *string        `json:"api_key" onyx:"default"`
	APIKeyName    *string        `json:"api_key_name" onyx:"default"`
	APIKeyRole    onyxRole       `json:"api_key_role"`
	UserID        onyxUUID       `json:"user_id"`
	Headers       map[string]any `json:"headers"`
}

// onyxDATestCredential mirrors DATestCredential; CredentialManager.edit
// sends its name and credential_json.
type onyxDATestCredential struct {
	ID             int64          `json:"id"`
	Name           string         `json:"name"`
	CredentialJSON map[string]any `json:"credential_json"`
	AdminPublic    bool           `json:"admin_public"`
	Source         onyxSource     `json:"source"`
	CuratorPublic  bool           `json:"curator_public"`
	Groups         []int64        `json:"groups"`
}

// onyxDATestConnector mirrors DATestConnector; ConnectorManager.edit sends
// all of it but the id.
type onyxDATestConnector struct {
	ID                      int64           `json:"id"`
	Name                    string          `json:"name"`
	Source                  onyxSource      `json:"source"`
	InputType               onyxInputType   `json:"input_type"`
	ConnectorSpecificConfig map[string]any  `json:"connector_specific_config"`
	Groups                  *[]int64        `json:"groups" onyx:"default"`
	AccessType              *onyxAccessType `json:"access_type" onyx:"default"`
}

// onyxDATestUserGroup mirrors DATestUserGroup; UserGroupManager.edit sends
// all of it.
type onyxDATestUserGroup struct {
	ID        int64    `json:"id"`
	Name      string   `json:"name"`
	UserIDs   []string `json:"user_ids"`
	CCPairIDs []int64  `json:"cc_pair_ids"`
}

// onyxDATestPAT mirrors DATestPAT, which PATManager.create and list parse
// each token into (its times are strings: the model reads them as such).
type onyxDATestPAT struct {
	ID           int64     `json:"id"`
	Name         string    `json:"name"`
	Token        *string   `json:"token" onyx:"default"`
	TokenDisplay string    `json:"token_display"`
	CreatedAt    string    `json:"created_at"`
	ExpiresAt    *string   `json:"expires_at" onyx:"default"`
	LastUsedAt   *string   `json:"last_used_at" onyx:"default"`
	Scopes       *[]string `json:"scopes" onyx:"default"`
}

// mirrors lists every mirror with the model of the table it stands for.
var mirrors = map[reflect.Type]onyxRef{
	reflect.TypeFor[onyxConnectorUpdateRequest]():   {Model: "ConnectorUpdateRequest"},
	reflect.TypeFor[onyxConnectorSnapshot]():        {Model: "ConnectorSnapshot"},
	reflect.TypeFor[onyxCredentialSnapshot]():       {Model: "CredentialSnapshot"},
	reflect.TypeFor[onyxObjectCreationID]():         {Model: "ObjectCreationIdResponse"},
	reflect.TypeFor[onyxDeletionAttemptSnapshot]():  {Model: "DeletionAttemptSnapshot"},
	reflect.TypeFor[onyxCCPairFullInfo]():           {Model: "CCPairFullInfo"},
	reflect.TypeFor[onyxConnectorStatus]():          {Model: "ConnectorStatus"},
	reflect.TypeFor[onyxIndexingStatusLite]():       {Model: "ConnectorIndexingStatusLite"},
	reflect.TypeFor[onyxSourceSummary]():            {Model: "SourceSummary"},
	reflect.TypeFor[onyxIndexingStatusResponse]():   {Model: "ConnectorIndexingStatusLiteResponse"},
	reflect.TypeFor[onyxSourceTag]():                {Model: "SourceTag"},
	reflect.TypeFor[onyxTagResponse]():              {Model: "TagResponse"},
	reflect.TypeFor[onyxFederatedConnectorStatus](): {Model: "FederatedConnectorStatus"},
	reflect.TypeFor[onyxCCPairIdentifier]():         {Model: "ConnectorCredentialPairIdentifier"},
	reflect.TypeFor[onyxPairDescriptor]():           {Model: "ConnectorCredentialPairDescriptor"},
	reflect.TypeFor[onyxPaginatedUsers](): {Model: "PaginatedReturn",
		Args: map[string]onyxType{"PaginatedType": {Name: "FullUserSnapshot"}}},
	reflect.TypeFor[onyxStatusResponse]():           {Model: "StatusResponse", Args: map[string]onyxType{"DataT": {Name: "int"}}},
	reflect.TypeFor[onyxUserGroupInfo]():            {Model: "UserGroupInfo"},
	reflect.TypeFor[onyxFullUserSnapshot]():         {Model: "FullUserSnapshot"},
	reflect.TypeFor[onyxInvitedUserSnapshot]():      {Model: "InvitedUserSnapshot"},
	reflect.TypeFor[onyxAssistantPreference]():      {Model: "UserSpecificAssistantPreference"},
	reflect.TypeFor[onyxUserPreferences]():          {Model: "UserPreferences"},
	reflect.TypeFor[onyxMemoryItem]():               {Model: "MemoryItem"},
	reflect.TypeFor[onyxUserPersonalization]():      {Model: "UserPersonalization"},
	reflect.TypeFor[onyxTenantSnapshot]():           {Model: "TenantSnapshot"},
	reflect.TypeFor[onyxTenantInfo]():               {Model: "TenantInfo"},
	reflect.TypeFor[onyxUserInfo]():                 {Model: "UserInfo"},
	reflect.TypeFor[onyxAllUsers]():                 {Model: "AllUsersResponse"},
	reflect.TypeFor[onyxUserRead]():                 {Model: "UserRead"},
	reflect.TypeFor[onyxUserGroup]():                {Model: "UserGroup"},
	reflect.TypeFor[onyxSetPermissionResponse]():    {Model: "SetPermissionResponse"},
	reflect.TypeFor[onyxAPIKeyArgs]():               {Model: "APIKeyArgs"},
	reflect.TypeFor[onyxAPIKeyDescriptor]():         {Model: "ApiKeyDescriptor"},
	reflect.TypeFor[onyxHeader]():                   {Model: "Header"},
	reflect.TypeFor[onyxToolSnapshot]():             {Model: "ToolSnapshot"},
	reflect.TypeFor[onyxToolStatusUpdated]():        {Model: "ToolStatusUpdateResponse"},
	reflect.TypeFor[onyxDATestAPIKey]():             {Model: "DATestAPIKey"},
	reflect.TypeFor[onyxDATestCredential]():         {Model: "DATestCredential"},
	reflect.TypeFor[onyxDATestConnector]():          {Model: "DATestConnector"},
	reflect.TypeFor[onyxDATestUserGroup]():          {Model: "DATestUserGroup"},
	reflect.TypeFor[onyxDATestPAT]():                {Model: "DATestPAT"},
	reflect.TypeFor[onyxModelConfigurationUpsert](): {Model: "ModelConfigurationUpsertRequest"},
	reflect.TypeFor[onyxLLMProviderUpsert]():        {Model: "LLMProviderUpsertRequest"},
	reflect.TypeFor[onyxModelConfigurationView]():   {Model: "ModelConfigurationView"},
	reflect.TypeFor[onyxLLMProviderView]():          {Model: "LLMProviderView"},
	reflect.TypeFor[onyxLLMProviderDescriptor]():    {Model: "LLMProviderDescriptor"},
	reflect.TypeFor[onyxDefaultModel]():             {Model: "DefaultModel"},
	reflect.TypeFor[onyxLLMProviderViews](): {Model: "LLMProviderResponse",
		Args: map[string]onyxType{"T": {Name: "LLMProviderView"}}},
	reflect.TypeFor[onyxLLMProviderDescriptors](): {Model: "LLMProviderResponse",
		Args: map[string]onyxType{"T": {Name: "LLMProviderDescriptor"}}},
	reflect.TypeFor[onyxDATestLLMProvider](): {Model: "DATestLLMProvider"},
}

// refFor returns the model of the table that typ (a mirror, or a slice of
// mirrors) stands for.
func refFor(typ reflect.Type) (onyxRef, bool) {
	if typ.Kind() == reflect.Slice {
		r, ok := refFor(typ.Elem())
		return onyxRef{List: &r}, ok
	}
	r, ok := mirrors[typ]
	return r, ok
}

// validationError is what a manager raises when it reads an answer that
// its model does not parse: pydantic's ValidationError (or a KeyError).
type validationError struct {
	Model string
	Err   error
	Body  []byte
}

func (e *validationError) Error() string {
	return fmt.Sprintf("Onyx's model %s does not parse the answer: %v\n%s", e.Model, e.Err, clip(e.Body))
}

// parse parses the body of r as Onyx's model mirrored by T does: checked
// against the mirror (onyxCheck) and against the table of Onyx's models
// (checkTable). It returns the body decoded as well as it decodes, and a
// *validationError when either check fails.
func parse[T any](r *Response) (T, error) {
	var v T
	typ := reflect.TypeFor[T]()
	ref, ok := refFor(typ)
	if !ok {
		panic(fmt.Sprintf("onyxtest: %v mirrors no model of the table", typ))
	}
	name := ref.String()
	if err := json.Unmarshal(r.Body, &v); err != nil {
		return v, &validationError{name, err, r.Body}
	}
	if err := onyxCheck("body", r.Body, typ); err != nil {
		return v, &validationError{name, err, r.Body}
	}
	if err := checkTable("body", r.Body, ref.tree(), ref.args()); err != nil {
		return v, &validationError{name, err, r.Body}
	}
	return v, nil
}

// args returns the type arguments of the model r names, or of its items.
func (r onyxRef) args() map[string]onyxType {
	if r.List != nil {
		return r.List.args()
	}
	return r.Args
}

// onyxParse checks that r answered status with a body that Onyx's model,
// mirrored by T, parses, and returns the parsed body. A body the model
// does not parse fails the test, but the replay goes on with what it
// decodes, so that one missing field does not hide the next difference.
func onyxParse[T any](t *testing.T, r *Response, status int) T {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status = %d, want %d: %s", r.Status, status, r.Body)
	}
	return reported(parse[T](r))(t)
}

// reported returns a function that returns v: a *validationError fails
// the test without ending it, any other error ends it:
// reported(c.getUserPage(...))(t).
func reported[T any](v T, err error) func(t *testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		var ve *validationError
		switch {
		case errors.As(err, &ve) && ve.Err != nil && !isDecodeError(ve.Err):
			t.Error(err)
		case err != nil:
			t.Fatal(err)
		}
		return v
	}
}

// isDecodeError reports whether err is a failure to decode JSON, after
// which nothing was decoded to go on with.
func isDecodeError(err error) bool {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	return errors.As(err, &syn) || errors.As(err, &typ)
}

// onyxCheck checks raw against type typ of a mirror model as pydantic
// checks a value against a field: the fields of a model must be there
// unless they have a default, null only where the type is a pointer,
// enumerations among their values, a union's value one of its members',
// and every value of its type.
func onyxCheck(loc string, raw json.RawMessage, typ reflect.Type) error {
	null := string(raw) == "null"
	switch {
	case typ.Kind() == reflect.Interface: // Any
		return nil
	case typ.Kind() == reflect.Pointer:
		if null {
			return nil
		}
		return onyxCheck(loc, raw, typ.Elem())
	case null:
		return fmt.Errorf("%s: null, but Onyx's type is %v", loc, typ)
	case typ.Implements(reflect.TypeFor[interface{ onyxUnion() []reflect.Type }]()):
		var errs []string
		for _, m := range reflect.Zero(typ).Interface().(interface{ onyxUnion() []reflect.Type }).onyxUnion() {
			err := onyxCheck(loc, raw, m)
			if err == nil {
				return nil
			}
			errs = append(errs, err.Error())
		}
		return fmt.Errorf("%s: matches no member of the union: %s", loc, strings.Join(errs, "; "))
	case reflect.PointerTo(typ).Implements(reflect.TypeFor[json.Unmarshaler]()):
	case typ.Kind() == reflect.Struct:
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil {
			return fmt.Errorf("%s: %v", loc, err)
		}
		var errs []error
		for i := range typ.NumField() {
			f := typ.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			v, ok := obj[name]
			if !ok {
				if f.Tag.Get("onyx") != onyxDefault {
					errs = append(errs, fmt.Errorf("%s.%s: missing", loc, name))
				}
				continue
			}
			if err := onyxCheck(loc+"."+name, v, f.Type); err != nil {
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	case typ.Kind() == reflect.Slice:
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return fmt.Errorf("%s: %v", loc, err)
		}
		for i, item := range items {
			if err := onyxCheck(fmt.Sprintf("%s[%d]", loc, i), item, typ.Elem()); err != nil {
				return err
			}
		}
		return nil
	case typ.Kind() == reflect.Map:
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil {
			return fmt.Errorf("%s: %v", loc, err)
		}
		if err := json.Unmarshal(raw, reflect.New(typ).Interface()); err != nil {
			return fmt.Errorf("%s: %v", loc, err)
		}
		for k, v := range obj {
			if err := onyxCheck(loc+"."+k, v, typ.Elem()); err != nil {
				return err
			}
		}
		return nil
	}
	v := reflect.New(typ)
	if err := json.Unmarshal(raw, v.Interface()); err != nil {
		return fmt.Errorf("%s: %v", loc, err)
	}
	if e, ok := v.Elem().Interface().(interface{ EnumValues() []string }); ok && !slices.Contains(e.EnumValues(), v.Elem().String()) {
		return fmt.Errorf("%s: %s is not one of Onyx's %v", loc, raw, e.EnumValues())
	}
	return nil
}
