package api

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api/decode"
)

// The request models. Each is declared once, here, and package decode
// validates requests against it exactly as FastAPI and pydantic 2 would
// validate the Python model written beside it in scripts/pydantic_goldens.py.
//
// Field rules: a plain field is required; decode.Optional[T] is `T | None =
// None`; a `default` tag makes a plain field optional with that JSON default.
// json.RawMessage is `dict[str, Any]` (kept as the exact text the caller
// sent); quarry enumerations are Python enums; time.Time is `datetime`.

// header is one custom tool header, `{"key": .., "value": ..}`.
type header struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// ModelName returns the Python class name pydantic would print.
func (header) ModelName() string { return "Header" }

// credentialPatch is the body of PATCH /manage/credential/{credential_id}.
type credentialPatch struct {
	CredentialJSON decode.Optional[json.RawMessage]       `json:"credential_json"`
	AdminPublic    decode.Optional[bool]                  `json:"admin_public"`
	Name           decode.Optional[string]                `json:"name"`
	CuratorPublic  decode.Optional[bool]                  `json:"curator_public"`
	Groups         decode.Optional[[]int64]               `json:"groups" max_length:"1000"`
	Source         decode.Optional[quarry.DocumentSource] `json:"source"`
}

// credentialCreate is the body of POST /manage/credential.
type credentialCreate struct {
	CredentialJSON json.RawMessage         `json:"credential_json"`
	AdminPublic    bool                    `json:"admin_public"`
	Source         quarry.DocumentSource   `json:"source"`
	Name           decode.Optional[string] `json:"name"`
	CuratorPublic  bool                    `json:"curator_public" default:"false"`
	Groups         []int64                 `json:"groups" default:"[]" max_length:"1000"`
}

// toolUpdate is the body of PUT /admin/tool/custom/{tool_id}.
type toolUpdate struct {
	Name            decode.Optional[string]          `json:"name"`
	Description     decode.Optional[string]          `json:"description"`
	Definition      decode.Optional[json.RawMessage] `json:"definition"`
	CustomHeaders   decode.Optional[[]header]        `json:"custom_headers" max_length:"100"`
	PassthroughAuth decode.Optional[bool]            `json:"passthrough_auth"`
	OAuthConfigID   decode.Optional[int64]           `json:"oauth_config_id"`
}

// toolCreate is the body of POST /admin/tool/custom. passthrough_auth,
// which Onyx requires, defaults to false, so that clients written before
// Onyx had it keep working.
type toolCreate struct {
	Name            string                    `json:"name"`
	Description     decode.Optional[string]   `json:"description"`
	Definition      json.RawMessage           `json:"definition"`
	CustomHeaders   decode.Optional[[]header] `json:"custom_headers" max_length:"100"`
	PassthroughAuth bool                      `json:"passthrough_auth" default:"false"`
	OAuthConfigID   decode.Optional[int64]    `json:"oauth_config_id"`
}

// toolStatusUpdate is the body of PATCH /admin/tool/status: Onyx's
// ToolStatusUpdateRequest.
type toolStatusUpdate struct {
	ToolIDs []int64 `json:"tool_ids" max_length:"1000"`
	Enabled bool    `json:"enabled"`
}

// toolValidate is the body of POST /admin/tool/custom/validate.
type toolValidate struct {
	Definition json.RawMessage `json:"definition"`
}

// credentialDataUpdate is the body of PUT
// /manage/admin/credential/{credential_id}: Onyx's
// CredentialDataUpdateRequest, a new name and credential_json.
type credentialDataUpdate struct {
	Name           string          `json:"name"`
	CredentialJSON json.RawMessage `json:"credential_json"`
}

// connectorInput is the body of POST /manage/admin/connector and of
// PATCH /manage/admin/connector/{connector_id}.
type connectorInput struct {
	Name                    string                             `json:"name"`
	Source                  quarry.DocumentSource              `json:"source"`
	InputType               quarry.InputType                   `json:"input_type"`
	ConnectorSpecificConfig json.RawMessage                    `json:"connector_specific_config"`
	RefreshFreq             decode.Optional[int64]             `json:"refresh_freq"`
	PruneFreq               decode.Optional[int64]             `json:"prune_freq"`
	IndexingStart           decode.Optional[time.Time]         `json:"indexing_start"`
	AccessType              decode.Optional[quarry.AccessType] `json:"access_type"`
	Groups                  decode.Optional[[]int64]           `json:"groups" max_length:"1000"`
}

// ccPairCreate is the body of PUT /manage/connector/{connector_id}/credential/{credential_id}.
type ccPairCreate struct {
	Name       string            `json:"name"`
	AccessType quarry.AccessType `json:"access_type"`
	Groups     []int64           `json:"groups" default:"[]" max_length:"1000"`
}

// ccPairStatusUpdate is the body of PUT
// /manage/admin/cc-pair/{cc_pair_id}/status: Onyx's CCStatusUpdateRequest,
// with the statuses a control plane can set.
type ccPairStatusUpdate struct {
	Status quarry.CCPairStatusChange `json:"status"`
}

// ccPairRename holds the parameters of PUT
// /manage/admin/cc-pair/{cc_pair_id}/name: Onyx takes the new name in the
// query, not in a body.
type ccPairRename struct {
	ID      int64  `path:"cc_pair_id"`
	NewName string `query:"new_name"`
}

// ccPairIdentifier is the body of POST /manage/admin/deletion-attempt:
// Onyx's ConnectorCredentialPairIdentifier.
type ccPairIdentifier struct {
	ConnectorID  int64 `json:"connector_id"`
	CredentialID int64 `json:"credential_id"`
}

// userGroupCreate is the body of POST /manage/admin/user-group.
type userGroupCreate struct {
	Name      string   `json:"name"`
	UserIDs   []string `json:"user_ids" default:"[]" max_length:"10000"`
	CCPairIDs []int64  `json:"cc_pair_ids" default:"[]" max_length:"10000"`
}

// userGroupUpdate is the body of PATCH /manage/admin/user-group/{group_id}.
type userGroupUpdate struct {
	Name      decode.Optional[string]   `json:"name"`
	UserIDs   decode.Optional[[]string] `json:"user_ids" max_length:"10000"`
	CCPairIDs decode.Optional[[]int64]  `json:"cc_pair_ids" max_length:"10000"`
}

// documentSetCreation is the body of POST /manage/admin/document-set:
// Onyx's DocumentSetCreationRequest.
type documentSetCreation struct {
	Name                string                     `json:"name"`
	Description         string                     `json:"description"`
	CCPairIDs           []int64                    `json:"cc_pair_ids" max_length:"10000"`
	IsPublic            bool                       `json:"is_public"`
	Users               []uuid.UUID                `json:"users" default:"[]" max_length:"10000"`
	Groups              []int64                    `json:"groups" default:"[]" max_length:"1000"`
	FederatedConnectors []federatedConnectorConfig `json:"federated_connectors" default:"[]" max_length:"100"`
}

// documentSetUpdate is the body of PATCH /manage/admin/document-set:
// Onyx's DocumentSetUpdateRequest, the whole set.
type documentSetUpdate struct {
	ID                  int64                      `json:"id"`
	Name                string                     `json:"name"`
	Description         string                     `json:"description"`
	CCPairIDs           []int64                    `json:"cc_pair_ids" max_length:"10000"`
	IsPublic            bool                       `json:"is_public"`
	Users               []uuid.UUID                `json:"users" max_length:"10000"`
	Groups              []int64                    `json:"groups" max_length:"1000"`
	FederatedConnectors []federatedConnectorConfig `json:"federated_connectors" default:"[]" max_length:"100"`
}

// federatedConnectorConfig is a federated connector of a document set:
// Onyx's FederatedConnectorConfig. Quarry has none (the set's input
// counts them, and refuses any).
type federatedConnectorConfig struct {
	FederatedConnectorID int64           `json:"federated_connector_id"`
	Entities             json.RawMessage `json:"entities"`
}

// ModelName returns the Python class name pydantic would print.
func (federatedConnectorConfig) ModelName() string { return "FederatedConnectorConfig" }

// checkDocSetPublic is the body of GET /manage/document-set-public: Onyx's
// CheckDocSetPublicRequest.
type checkDocSetPublic struct {
	DocumentSetIDs []int64 `json:"document_set_ids" max_length:"1000"`
}

// addUsers is the body of POST /manage/admin/user-group/{group_id}/add-users:
// Onyx's AddUsersToUserGroupRequest.
type addUsers struct {
	UserIDs []string `json:"user_ids" max_length:"10000"`
}

// indexingStatusRequest is the body of POST
// /manage/admin/connector/indexing-status: Onyx's IndexingStatusRequest.
type indexingStatusRequest struct {
	SecondaryIndex    bool                                   `json:"secondary_index" default:"false"`
	Source            decode.Optional[quarry.DocumentSource] `json:"source"`
	AccessTypeFilters []quarry.AccessType                    `json:"access_type_filters" default:"[]" max_length:"100"`
	LastStatusFilters []quarry.IndexingStatus                `json:"last_status_filters" default:"[]" max_length:"100"`
	DocsCountOperator decode.Optional[docsCountOperator]     `json:"docs_count_operator"`
	DocsCountValue    decode.Optional[int64]                 `json:"docs_count_value"`
	NameFilter        decode.Optional[string]                `json:"name_filter"`
	SourceToPage      map[quarry.DocumentSource]int64        `json:"source_to_page" default:"{}"`
	GetAllConnectors  bool                                   `json:"get_all_connectors" default:"false"`
}

// docsCountOperator is Onyx's DocsCountOperator.
type docsCountOperator string

// EnumValues returns the operators.
func (docsCountOperator) EnumValues() []string { return []string{">", "<", "="} }

// ModelName returns the Python class name pydantic would print.
func (docsCountOperator) ModelName() string { return "DocsCountOperator" }

// ModelName returns the name of the model in openapi.json.
func (indexingStatusRequest) ModelName() string { return "IndexingStatusRequest" }

// groupsQuery holds the query parameters of GET /manage/admin/user-group.
type groupsQuery struct {
	IncludeDefault bool `query:"include_default" default:"false"`
}

// connectorsQuery holds the query parameters of GET
// /manage/admin/connector (Onyx's credential: int | None).
type connectorsQuery struct {
	Credential decode.Optional[int64] `query:"credential"`
}

// setPermission is the body of PUT
// /manage/admin/user-group/{group_id}/permissions, and its answer: Onyx's
// SetPermissionRequest and SetPermissionResponse.
type setPermission struct {
	Permission quarry.Permission `json:"permission"`
	Enabled    bool              `json:"enabled"`
}

// ModelName returns the name of the model in openapi.json.
func (setPermission) ModelName() string { return "SetPermission" }

// setCurator is the body of POST /manage/admin/user-group/{group_id}/set-curator.
type setCurator struct {
	UserID    string `json:"user_id"`
	IsCurator bool   `json:"is_curator"`
}

// apiKeyCreate is the body of POST /admin/api-key and PATCH
// /admin/api-key/{api_key_id}: Onyx's APIKeyArgs.
type apiKeyCreate struct {
	Name decode.Optional[string] `json:"name"`
	Role quarry.Role             `json:"role" default:"\"basic\""`
}

// scimTokenCreate is the body of POST /admin/enterprise-settings/scim/token:
// Onyx's ScimTokenCreate.
type scimTokenCreate struct {
	Name string `json:"name"`
}

// oauthConfigCreate is the body of POST /admin/oauth-config (and of
// Onyx's POST /admin/oauth-config/create): Onyx's OAuthConfigCreate.
type oauthConfigCreate struct {
	Name             string                           `json:"name"`
	AuthorizationURL string                           `json:"authorization_url"`
	TokenURL         string                           `json:"token_url"`
	ClientID         string                           `json:"client_id"`
	ClientSecret     string                           `json:"client_secret"`
	Scopes           decode.Optional[[]string]        `json:"scopes" max_length:"100"`
	AdditionalParams decode.Optional[json.RawMessage] `json:"additional_params"`
}

// oauthConfigUpdate is the body of PUT /admin/oauth-config/{oauth_config_id}:
// Onyx's OAuthConfigUpdate.
type oauthConfigUpdate struct {
	Name              decode.Optional[string]          `json:"name"`
	AuthorizationURL  decode.Optional[string]          `json:"authorization_url"`
	TokenURL          decode.Optional[string]          `json:"token_url"`
	ClientID          decode.Optional[string]          `json:"client_id"`
	ClientSecret      decode.Optional[string]          `json:"client_secret"`
	Scopes            decode.Optional[[]string]        `json:"scopes" max_length:"100"`
	AdditionalParams  decode.Optional[json.RawMessage] `json:"additional_params"`
	ClearClientID     bool                             `json:"clear_client_id" default:"false"`
	ClearClientSecret bool                             `json:"clear_client_secret" default:"false"`
}

// oauthInitiate is the body of POST /oauth-config/initiate: Onyx's
// OAuthInitiateRequest, whose return_path defaults to the admin page
// rather than Onyx's /chat.
type oauthInitiate struct {
	OAuthConfigID int64  `json:"oauth_config_id"`
	ReturnPath    string `json:"return_path" default:"\"/\""`
}

// oauthCallbackQuery holds the query parameters of POST
// /oauth-config/callback, as Onyx takes them.
type oauthCallbackQuery struct {
	Code  string `query:"code"`
	State string `query:"state"`
}

// toolRun is the body of POST /tool/{tool_id}/run: the method to run (a
// name POST /admin/tool/custom/validate lists; a tool of an MCP server has
// one, its name, and needs none) and its arguments.
type toolRun struct {
	Method decode.Optional[string] `json:"method"`
	Args   json.RawMessage         `json:"args" default:"{}"`
}

// patCreate is the body of POST /user/pats: Onyx's CreateTokenRequest.
type patCreate struct {
	Name           string                               `json:"name" min_length:"1" max_length:"100"`
	ExpirationDays decode.Optional[int64]               `json:"expiration_days" ge:"1"`
	Scopes         decode.Optional[[]quarry.Permission] `json:"scopes" max_length:"100"`
}

// llmProviderUpsert is the body of PUT /admin/llm/provider: Onyx's
// LLMProviderUpsertRequest (LLMProvider's fields first). provider is read
// as Onyx normalizes it (quarry.NormalizeLLMProvider).
type llmProviderUpsert struct {
	Name                decode.Optional[string]            `json:"name"`
	Provider            string                             `json:"provider"`
	APIKey              decode.Optional[string]            `json:"api_key"`
	APIBase             decode.Optional[string]            `json:"api_base"`
	APIVersion          decode.Optional[string]            `json:"api_version"`
	CustomConfig        decode.Optional[map[string]string] `json:"custom_config"`
	IsPublic            bool                               `json:"is_public" default:"true"`
	IsAutoMode          bool                               `json:"is_auto_mode" default:"false"`
	Groups              []int64                            `json:"groups" default:"[]" max_length:"1000"`
	Personas            []int64                            `json:"personas" default:"[]" max_length:"1000"`
	DeploymentName      decode.Optional[string]            `json:"deployment_name"`
	ID                  decode.Optional[int64]             `json:"id"`
	APIKeyChanged       bool                               `json:"api_key_changed" default:"false"`
	CustomConfigChanged bool                               `json:"custom_config_changed" default:"false"`
	ModelConfigurations []modelConfigurationUpsert         `json:"model_configurations" default:"[]" max_length:"1000"`
}

// modelConfigurationUpsert is a model of llmProviderUpsert: Onyx's
// ModelConfigurationUpsertRequest.
type modelConfigurationUpsert struct {
	Name               string                  `json:"name"`
	IsVisible          bool                    `json:"is_visible"`
	MaxInputTokens     decode.Optional[int64]  `json:"max_input_tokens"`
	SupportsImageInput decode.Optional[bool]   `json:"supports_image_input"`
	SupportsReasoning  decode.Optional[bool]   `json:"supports_reasoning"`
	DisplayName        decode.Optional[string] `json:"display_name"`
	CustomDisplayName  decode.Optional[string] `json:"custom_display_name"`
}

// ModelName returns the Python class name pydantic would print.
func (modelConfigurationUpsert) ModelName() string { return "ModelConfigurationUpsertRequest" }

// defaultModelBody is the body of POST /admin/llm/default: Onyx's
// DefaultModel.
type defaultModelBody struct {
	ProviderID int64  `json:"provider_id"`
	ModelName  string `json:"model_name"`
}

// testLLM is the body of POST /admin/llm/test: Onyx's TestLLMRequest,
// whose api_key_changed and custom_config_changed are required.
type testLLM struct {
	ID                  decode.Optional[int64]             `json:"id"`
	Provider            string                             `json:"provider"`
	Model               string                             `json:"model"`
	APIKey              decode.Optional[string]            `json:"api_key"`
	APIBase             decode.Optional[string]            `json:"api_base"`
	APIVersion          decode.Optional[string]            `json:"api_version"`
	CustomConfig        decode.Optional[map[string]string] `json:"custom_config"`
	DeploymentName      decode.Optional[string]            `json:"deployment_name"`
	APIKeyChanged       bool                               `json:"api_key_changed"`
	CustomConfigChanged bool                               `json:"custom_config_changed"`
}

// mcpAuthTemplate is Onyx's MCPAuthTemplate: header names to values with
// {placeholders}, and the fields people supply (derived from the
// placeholders, whatever is sent).
type mcpAuthTemplate struct {
	Headers        map[string]string `json:"headers" default:"{}"`
	RequiredFields []string          `json:"required_fields" default:"[]" max_length:"100"`
}

// ModelName returns the Python class name pydantic would print.
func (mcpAuthTemplate) ModelName() string { return "MCPAuthTemplate" }

// mcpServerSetup is the body of POST /admin/mcp/servers/create: Onyx's
// MCPToolCreateRequest. users are UUIDs in Onyx; they are strings here,
// and only an empty list is accepted (access lists are not supported).
type mcpServerSetup struct {
	Name                       string                               `json:"name"`
	Description                decode.Optional[string]              `json:"description"`
	ServerURL                  string                               `json:"server_url"`
	AuthType                   quarry.MCPAuthType                   `json:"auth_type"`
	AuthPerformer              quarry.MCPPerformer                  `json:"auth_performer"`
	APIToken                   decode.Optional[string]              `json:"api_token"`
	APITokenChanged            bool                                 `json:"api_token_changed" default:"false"`
	OAuthClientID              decode.Optional[string]              `json:"oauth_client_id"`
	OAuthClientSecret          decode.Optional[string]              `json:"oauth_client_secret"`
	OAuthProviderMode          quarry.MCPProviderMode               `json:"oauth_provider_mode" default:"\"AUTO_DISCOVERY\""`
	OAuthAuthorizationEndpoint decode.Optional[string]              `json:"oauth_authorization_endpoint"`
	OAuthTokenEndpoint         decode.Optional[string]              `json:"oauth_token_endpoint"`
	OAuthScopesOverride        decode.Optional[[]string]            `json:"oauth_scopes_override" max_length:"100"`
	OAuthAdditionalAuthParams  decode.Optional[map[string]string]   `json:"oauth_additional_auth_params"`
	OAuthClientIDChanged       bool                                 `json:"oauth_client_id_changed" default:"false"`
	OAuthClientSecretChanged   bool                                 `json:"oauth_client_secret_changed" default:"false"`
	Transport                  decode.Optional[quarry.MCPTransport] `json:"transport"`
	AuthTemplate               decode.Optional[mcpAuthTemplate]     `json:"auth_template"`
	AuthTemplateHeadersChanged map[string]bool                      `json:"auth_template_headers_changed" default:"{}"`
	AdminCredentials           decode.Optional[map[string]string]   `json:"admin_credentials"`
	AdminCredentialsChanged    map[string]bool                      `json:"admin_credentials_changed" default:"{}"`
	ExistingServerID           decode.Optional[int64]               `json:"existing_server_id"`
	IsPublic                   decode.Optional[bool]                `json:"is_public"`
	Groups                     decode.Optional[[]int64]             `json:"groups" max_length:"1000"`
	Users                      decode.Optional[[]string]            `json:"users" max_length:"10000"`
}

// mcpServerUpdate is the body of POST /admin/mcp/servers/update: Onyx's
// MCPToolUpdateRequest.
type mcpServerUpdate struct {
	ServerID      int64                     `json:"server_id"`
	Name          decode.Optional[string]   `json:"name"`
	Description   decode.Optional[string]   `json:"description"`
	SelectedTools decode.Optional[[]string] `json:"selected_tools" max_length:"1000"`
}

// mcpServerCreate is the body of POST /admin/mcp/server: Onyx's
// MCPServerSimpleCreateRequest.
type mcpServerCreate struct {
	Name        string                  `json:"name"`
	Description decode.Optional[string] `json:"description"`
	ServerURL   string                  `json:"server_url"`
	IsPublic    bool                    `json:"is_public" default:"true"`
	Groups      []int64                 `json:"groups" default:"[]" max_length:"1000"`
	Users       []string                `json:"users" default:"[]" max_length:"10000"`
}

// mcpServerPatch is the body of PATCH /admin/mcp/server/{server_id}:
// Onyx's MCPServerSimpleUpdateRequest. tool_policies (Craft's) is any
// object here; only null or {} is accepted.
type mcpServerPatch struct {
	Name             decode.Optional[string]          `json:"name"`
	Description      decode.Optional[string]          `json:"description"`
	ServerURL        decode.Optional[string]          `json:"server_url"`
	ToolPolicies     decode.Optional[json.RawMessage] `json:"tool_policies"`
	IsPublic         decode.Optional[bool]            `json:"is_public"`
	Groups           decode.Optional[[]int64]         `json:"groups" max_length:"1000"`
	Users            decode.Optional[[]string]        `json:"users" max_length:"10000"`
	AvailableInCraft decode.Optional[bool]            `json:"available_in_craft"`
}

// mcpOAuthConnect is the body of POST /mcp/oauth/connect and POST
// /admin/mcp/oauth/connect: Onyx's MCPUserOAuthConnectRequest.
type mcpOAuthConnect struct {
	ServerID                 int64                   `json:"server_id"`
	ReturnPath               string                  `json:"return_path"`
	IncludeResourceParam     bool                    `json:"include_resource_param"`
	ForceReauthentication    bool                    `json:"force_reauthentication" default:"false"`
	OAuthClientID            decode.Optional[string] `json:"oauth_client_id"`
	OAuthClientSecret        decode.Optional[string] `json:"oauth_client_secret"`
	OAuthClientIDChanged     bool                    `json:"oauth_client_id_changed" default:"false"`
	OAuthClientSecretChanged bool                    `json:"oauth_client_secret_changed" default:"false"`
}

// mcpOAuthCallbackQuery holds the query parameters of POST
// /mcp/oauth/callback, which Onyx reads without a model (a missing one is
// a 400 of its own).
type mcpOAuthCallbackQuery struct {
	Code  decode.Optional[string] `query:"code"`
	State decode.Optional[string] `query:"state"`
}

// mcpUserCredentials is the body of POST /mcp/user-credentials: Onyx's
// MCPUserCredentialsRequest.
type mcpUserCredentials struct {
	ServerID    int64             `json:"server_id"`
	Credentials map[string]string `json:"credentials"`
	Transport   string            `json:"transport"`
}

// mcpStatusQuery holds the query parameter of PATCH
// /admin/mcp/server/{server_id}/status.
type mcpStatusQuery struct {
	ID     int64                  `path:"server_id"`
	Status quarry.MCPServerStatus `query:"status"`
}

// mcpSnapshotSource is Onyx's ToolSnapshotSource: where GET
// /admin/mcp/server/{server_id}/tools/snapshots reads the tools.
type mcpSnapshotSource string

// EnumValues returns every mcpSnapshotSource.
func (mcpSnapshotSource) EnumValues() []string { return []string{"db", "mcp"} }

// ModelName returns the Python class name pydantic would print.
func (mcpSnapshotSource) ModelName() string { return "ToolSnapshotSource" }

// mcpSnapshotsQuery holds the parameters of GET
// /admin/mcp/server/{server_id}/tools/snapshots.
type mcpSnapshotsQuery struct {
	ID     int64             `path:"server_id"`
	Source mcpSnapshotSource `query:"source" default:"\"db\""`
}

// statusQuery holds the query parameters of GET /manage/admin/connector/status.
type statusQuery struct {
	Source     []quarry.DocumentSource `query:"source" max_length:"100"`
	AccessType []quarry.AccessType     `query:"access_type" max_length:"100"`
}

// auditQuery holds the query parameters of GET /admin/audit-log.
type auditQuery struct {
	ResourceType decode.Optional[string]    `query:"resource_type"`
	ResourceID   decode.Optional[string]    `query:"resource_id"`
	Actor        decode.Optional[string]    `query:"actor"`
	Action       decode.Optional[string]    `query:"action"`
	Since        decode.Optional[time.Time] `query:"since"`
	Until        decode.Optional[time.Time] `query:"until"`
	BeforeID     decode.Optional[int64]     `query:"before_id" ge:"1"`
	Offset       int64                      `query:"offset" default:"0" ge:"0" le:"1000000"`
	Limit        int64                      `query:"limit" default:"100" ge:"1" le:"1000"`
}

// registerRequest is the body of POST /auth/register: FastAPI-Users'
// UserCreate as Onyx's clients send it (their other fields, is_active,
// is_superuser, is_verified, role, are ignored: nobody chooses their own).
type registerRequest struct {
	Email    string                  `json:"email"`
	Password string                  `json:"password"`
	Name     decode.Optional[string] `json:"name"`
	// InvitationToken is the token of the invitation's link, which
	// registration by invitation requires.
	InvitationToken decode.Optional[string] `json:"invitation_token"`
}

// loginForm is the form of POST /auth/login: FastAPI's
// OAuth2PasswordRequestForm, which FastAPI-Users takes (username is the
// email).
type loginForm struct {
	GrantType    decode.Optional[string] `form:"grant_type" pattern:"^password$"`
	Username     string                  `form:"username"`
	Password     string                  `form:"password"`
	Scope        string                  `form:"scope" default:"\"\""`
	ClientID     decode.Optional[string] `form:"client_id"`
	ClientSecret decode.Optional[string] `form:"client_secret"`
}

// usersQuery holds the query parameters of GET /manage/users/accepted:
// Onyx's (q, page_num from 0, page_size, roles, is_active), and page (from
// 1) and status, which Onyx's test client sends.
type usersQuery struct {
	Q        decode.Optional[string]     `query:"q"`
	PageNum  int64                       `query:"page_num" default:"0" ge:"0" le:"1000000"`
	Page     decode.Optional[int64]      `query:"page" ge:"1" le:"1000000"`
	PageSize int64                       `query:"page_size" default:"10" ge:"1" le:"1000"`
	Roles    []quarry.Role               `query:"roles" max_length:"100"`
	IsActive decode.Optional[bool]       `query:"is_active"`
	Status   decode.Optional[userStatus] `query:"status"`
}

// userStatus is Onyx's UserStatus.
type userStatus string

// EnumValues returns the statuses, as Onyx names them.
func (userStatus) EnumValues() []string { return []string{"live", "invited", "deactivated"} }

// ModelName returns the Python class name pydantic would print.
func (userStatus) ModelName() string { return "UserStatus" }

// allUsersQuery holds the query parameters of GET /manage/users.
type allUsersQuery struct {
	Q              decode.Optional[string] `query:"q"`
	AcceptedPage   decode.Optional[int64]  `query:"accepted_page" ge:"0" le:"1000000"`
	SlackUsersPage decode.Optional[int64]  `query:"slack_users_page" ge:"0" le:"1000000"`
	InvitedPage    decode.Optional[int64]  `query:"invited_page" ge:"0" le:"1000000"`
	IncludeAPIKeys bool                    `query:"include_api_keys" default:"false"`
}

// setUserRole is the body of PATCH /manage/set-user-role.
type setUserRole struct {
	UserEmail        string      `json:"user_email"`
	NewRole          quarry.Role `json:"new_role"`
	ExplicitOverride bool        `json:"explicit_override" default:"false"`
}

// userEmail is the body of the routes that act on one user by email.
type userEmail struct {
	UserEmail string `json:"user_email"`
}

// inviteUsers is the body of PUT /manage/admin/users and POST
// /manage/admin/invitations.
type inviteUsers struct {
	Emails []string `json:"emails" max_length:"1000"`
}

// sessionsQuery holds the query parameters of GET /manage/admin/sessions.
type sessionsQuery struct {
	UserEmail decode.Optional[string] `query:"user_email"`
}

// changePassword is the body of POST /auth/change-password.
type changePassword struct {
	CurrentPassword string `json:"current_password"`
	NewPassword     string `json:"new_password"`
}

// The requests of the routes whose handlers decode more than a body: each
// route's path and query parameters, with its body model.

// createAPIKeyRequest is the request of POST /admin/api-key.
type createAPIKeyRequest struct {
	Body apiKeyCreate `body:""`
}

// deleteAPIKeyRequest is the request of DELETE /admin/api-key/{api_key_id}.
type deleteAPIKeyRequest struct {
	ID int64 `path:"api_key_id"`
}

// updateAPIKeyRequest is the request of PATCH /admin/api-key/{api_key_id}.
type updateAPIKeyRequest struct {
	ID   int64        `path:"api_key_id"`
	Body apiKeyCreate `body:""`
}

// regenerateAPIKeyRequest is the request of
// POST /admin/api-key/{api_key_id}/regenerate.
type regenerateAPIKeyRequest struct {
	ID int64 `path:"api_key_id"`
}

// getCCPairRequest is the request of GET /manage/admin/cc-pair/{cc_pair_id}.
type getCCPairRequest struct {
	ID int64 `path:"cc_pair_id"`
}

// setCCPairStatusRequest is the request of
// PUT /manage/admin/cc-pair/{cc_pair_id}/status.
type setCCPairStatusRequest struct {
	ID   int64              `path:"cc_pair_id"`
	Body ccPairStatusUpdate `body:""`
}

// deletionAttemptRequest is the request of
// POST /manage/admin/deletion-attempt.
type deletionAttemptRequest struct {
	Body ccPairIdentifier `body:""`
}

// createConnectorRequest is the request of POST /manage/admin/connector.
type createConnectorRequest struct {
	Body connectorInput `body:""`
}

// getConnectorRequest is the request of GET /manage/connector/{connector_id}.
type getConnectorRequest struct {
	ID int64 `path:"connector_id"`
}

// updateConnectorRequest is the request of
// PATCH /manage/admin/connector/{connector_id}.
type updateConnectorRequest struct {
	ID   int64          `path:"connector_id"`
	Body connectorInput `body:""`
}

// deleteConnectorRequest is the request of
// DELETE /manage/admin/connector/{connector_id}.
type deleteConnectorRequest struct {
	ID int64 `path:"connector_id"`
}

// createCCPairRequest is the request of
// PUT /manage/connector/{connector_id}/credential/{credential_id}.
type createCCPairRequest struct {
	ConnectorID  int64        `path:"connector_id"`
	CredentialID int64        `path:"credential_id"`
	Body         ccPairCreate `body:""`
}

// updateCredentialRequest is the request of
// PATCH /manage/credential/{credential_id}.
type updateCredentialRequest struct {
	ID   int64           `path:"credential_id"`
	Body credentialPatch `body:""`
}

// editCredentialRequest is the request of
// PUT /manage/admin/credential/{credential_id}.
type editCredentialRequest struct {
	ID   int64                `path:"credential_id"`
	Body credentialDataUpdate `body:""`
}

// createCredentialRequest is the request of POST /manage/credential.
type createCredentialRequest struct {
	Body credentialCreate `body:""`
}

// getCredentialRequest is the request of
// GET /manage/credential/{credential_id}.
type getCredentialRequest struct {
	ID int64 `path:"credential_id"`
}

// deleteCredentialRequest is the request of
// DELETE /manage/credential/{credential_id}.
type deleteCredentialRequest struct {
	ID int64 `path:"credential_id"`
}

// createGroupRequest is the request of POST /manage/admin/user-group.
type createGroupRequest struct {
	Body userGroupCreate `body:""`
}

// updateGroupRequest is the request of
// PATCH /manage/admin/user-group/{group_id}.
type updateGroupRequest struct {
	ID   int64           `path:"group_id"`
	Body userGroupUpdate `body:""`
}

// addGroupUsersRequest is the request of
// POST /manage/admin/user-group/{group_id}/add-users.
type addGroupUsersRequest struct {
	ID   int64    `path:"group_id"`
	Body addUsers `body:""`
}

// createDocumentSetRequest is the request of POST
// /manage/admin/document-set.
type createDocumentSetRequest struct {
	Body documentSetCreation `body:""`
}

// updateDocumentSetRequest is the request of PATCH
// /manage/admin/document-set.
type updateDocumentSetRequest struct {
	Body documentSetUpdate `body:""`
}

// deleteDocumentSetRequest is the request of DELETE
// /manage/admin/document-set/{document_set_id}.
type deleteDocumentSetRequest struct {
	ID int64 `path:"document_set_id"`
}

// documentSetsQuery is the query of GET /manage/document-set.
type documentSetsQuery struct {
	GetEditable bool `query:"get_editable" default:"false"`
}

// documentSetPublicRequest is the request of GET
// /manage/document-set-public, whose body Onyx reads on a GET.
type documentSetPublicRequest struct {
	Body checkDocSetPublic `body:""`
}

// deleteGroupRequest is the request of
// DELETE /manage/admin/user-group/{group_id}.
type deleteGroupRequest struct {
	ID int64 `path:"group_id"`
}

// setCuratorRequest is the request of
// POST /manage/admin/user-group/{group_id}/set-curator.
type setCuratorRequest struct {
	ID   int64      `path:"group_id"`
	Body setCurator `body:""`
}

// groupPermissionsRequest is the request of
// GET /manage/admin/user-group/{group_id}/permissions.
type groupPermissionsRequest struct {
	ID int64 `path:"group_id"`
}

// setGroupPermissionRequest is the request of
// PUT /manage/admin/user-group/{group_id}/permissions.
type setGroupPermissionRequest struct {
	ID   int64         `path:"group_id"`
	Body setPermission `body:""`
}

// pruneCCPairRequest is the request of POST
// /manage/admin/cc-pair/{cc_pair_id}/prune.
type pruneCCPairRequest struct {
	ID int64 `path:"cc_pair_id"`
}

// getLastPrunedRequest is the request of GET
// /manage/admin/cc-pair/{cc_pair_id}/last_pruned.
type getLastPrunedRequest struct {
	ID int64 `path:"cc_pair_id"`
}

// syncCCPairRequest is the request of POST and GET
// /manage/admin/cc-pair/{cc_pair_id}/sync-permissions and …/sync-groups.
type syncCCPairRequest struct {
	ID int64 `path:"cc_pair_id"`
}

// ccPairIDPath is the request of the cc-pair routes that need an indexer
// (notIndexingPair): their path.
type ccPairIDPath struct {
	ID int64 `path:"cc_pair_id"`
}

// indexingStatusRoute is the request of
// POST /manage/admin/connector/indexing-status.
type indexingStatusRoute struct {
	Body indexingStatusRequest `body:""`
}

// createMCPServerSimpleRequest is the request of POST /admin/mcp/server.
type createMCPServerSimpleRequest struct {
	Body mcpServerCreate `body:""`
}

// setUpMCPServerRequest is the request of POST /admin/mcp/servers/create.
type setUpMCPServerRequest struct {
	Body mcpServerSetup `body:""`
}

// updateMCPServerSimpleRequest is the request of
// PATCH /admin/mcp/server/{server_id}.
type updateMCPServerSimpleRequest struct {
	ID   int64          `path:"server_id"`
	Body mcpServerPatch `body:""`
}

// selectMCPToolsRequest is the request of POST /admin/mcp/servers/update.
type selectMCPToolsRequest struct {
	Body mcpServerUpdate `body:""`
}

// saveMCPCredentialsRequest is the request of POST /mcp/user-credentials.
type saveMCPCredentialsRequest struct {
	Body mcpUserCredentials `body:""`
}

// mcpOAuthConnectRequest is the request of POST /mcp/oauth/connect.
type mcpOAuthConnectRequest struct {
	Body mcpOAuthConnect `body:""`
}

// createOAuthConfigRequest is the request of POST /admin/oauth-config.
type createOAuthConfigRequest struct {
	Body oauthConfigCreate `body:""`
}

// getOAuthConfigRequest is the request of
// GET /admin/oauth-config/{oauth_config_id}.
type getOAuthConfigRequest struct {
	ID int64 `path:"oauth_config_id"`
}

// updateOAuthConfigRequest is the request of
// PUT /admin/oauth-config/{oauth_config_id}.
type updateOAuthConfigRequest struct {
	ID   int64             `path:"oauth_config_id"`
	Body oauthConfigUpdate `body:""`
}

// oauthInitiateRequest is the request of POST /oauth-config/initiate.
type oauthInitiateRequest struct {
	Body oauthInitiate `body:""`
}

// revokeOAuthTokenRequest is the request of
// DELETE /oauth-config/{oauth_config_id}/token.
type revokeOAuthTokenRequest struct {
	ID int64 `path:"oauth_config_id"`
}

// createPATRequest is the request of POST /user/pats.
type createPATRequest struct {
	Body patCreate `body:""`
}

// llmProvidersQuery is the request of GET /admin/llm/provider: Quarry
// keeps no providers of images, so include_image_gen changes nothing.
type llmProvidersQuery struct {
	IncludeImageGen bool `query:"include_image_gen" default:"false"`
}

// putLLMProviderRequest is the request of PUT /admin/llm/provider.
type putLLMProviderRequest struct {
	IsCreation bool              `query:"is_creation" default:"false"`
	Body       llmProviderUpsert `body:""`
}

// deleteLLMProviderRequest is the request of DELETE
// /admin/llm/provider/{provider_id}.
type deleteLLMProviderRequest struct {
	ID    int64 `path:"provider_id"`
	Force bool  `query:"force" default:"false"`
}

// personaLLMProvidersRequest is the request of GET
// /llm/persona/{persona_id}/providers.
type personaLLMProvidersRequest struct {
	PersonaID int64 `path:"persona_id"`
}

// setDefaultModelRequest is the request of POST /admin/llm/default.
type setDefaultModelRequest struct {
	Body defaultModelBody `body:""`
}

// testLLMRequest is the request of POST /admin/llm/test.
type testLLMRequest struct {
	Body testLLM `body:""`
}

// revokePATRequest is the request of DELETE /user/pats/{token_id}.
type revokePATRequest struct {
	ID int64 `path:"token_id"`
}

// setUserRoleRequest is the request of PATCH /manage/set-user-role.
type setUserRoleRequest struct {
	Body setUserRole `body:""`
}

// setActiveRequest is the request of PATCH /manage/admin/activate-user.
type setActiveRequest struct {
	Body userEmail `body:""`
}

// inviteUsersRequest is the request of PUT /manage/admin/users.
type inviteUsersRequest struct {
	Body inviteUsers `body:""`
}

// issueInvitationsRequest is the request of POST /manage/admin/invitations.
type issueInvitationsRequest struct {
	Body inviteUsers `body:""`
}

// removeInvitationRequest is the request of
// PATCH /manage/admin/remove-invited-user.
type removeInvitationRequest struct {
	Body userEmail `body:""`
}

// endSessionRequest is the request of
// DELETE /manage/admin/sessions/{session_id}.
type endSessionRequest struct {
	ID int64 `path:"session_id"`
}

// endUserSessionsRequest is the request of
// POST /manage/admin/end-user-sessions.
type endUserSessionsRequest struct {
	Body userEmail `body:""`
}

// createSCIMTokenRequest is the request of
// POST /admin/enterprise-settings/scim/token.
type createSCIMTokenRequest struct {
	Body scimTokenCreate `body:""`
}

// registerRoute is the request of POST /auth/register.
type registerRoute struct {
	Body registerRequest `body:""`
}

// changePasswordRequest is the request of POST /auth/change-password.
type changePasswordRequest struct {
	Body changePassword `body:""`
}

// resetPasswordRequest is the request of POST /manage/admin/reset-password.
type resetPasswordRequest struct {
	Body userEmail `body:""`
}

// updateToolRequest is the request of PUT /admin/tool/custom/{tool_id}.
type updateToolRequest struct {
	ID   int64      `path:"tool_id"`
	Body toolUpdate `body:""`
}

// createToolRequest is the request of POST /admin/tool/custom.
type createToolRequest struct {
	Body toolCreate `body:""`
}

// validateToolRequest is the request of POST /admin/tool/custom/validate.
type validateToolRequest struct {
	Body toolValidate `body:""`
}

// getToolRequest is the request of GET /tool/{tool_id}.
type getToolRequest struct {
	ID int64 `path:"tool_id"`
}

// deleteToolRequest is the request of DELETE /admin/tool/custom/{tool_id}.
type deleteToolRequest struct {
	ID int64 `path:"tool_id"`
}

// setToolsEnabledRequest is the request of PATCH /admin/tool/status.
type setToolsEnabledRequest struct {
	Body toolStatusUpdate `body:""`
}

// deleteOAuthConfigRequest is the request of
// DELETE /admin/oauth-config/{oauth_config_id}.
type deleteOAuthConfigRequest struct {
	ID int64 `path:"oauth_config_id"`
}

// runToolRequest is the request of POST /tool/{tool_id}/run.
type runToolRequest struct {
	ID   int64   `path:"tool_id"`
	Body toolRun `body:""`
}

// runConnectorRequest is the body of POST /manage/admin/connector/run-once:
// Onyx's RunConnectorRequest.
type runConnectorRequest struct {
	ConnectorID   int64                    `json:"connector_id"`
	CredentialIDs decode.Optional[[]int64] `json:"credential_ids" max_length:"1000"`
	FromBeginning bool                     `json:"from_beginning" default:"false"`
}

// indexAttemptsQuery holds the parameters of GET
// /manage/admin/cc-pair/{cc_pair_id}/index-attempts, with Onyx's bounds.
type indexAttemptsQuery struct {
	ID       int64 `path:"cc_pair_id"`
	PageNum  int64 `query:"page_num" default:"0" ge:"0" le:"1000000"`
	PageSize int64 `query:"page_size" default:"10" ge:"1" le:"1000"`
}

// attemptErrorsQuery holds the parameters of GET
// /manage/admin/cc-pair/{cc_pair_id}/errors, with Onyx's bounds.
type attemptErrorsQuery struct {
	ID              int64 `path:"cc_pair_id"`
	IncludeResolved bool  `query:"include_resolved" default:"false"`
	PageNum         int64 `query:"page_num" default:"0" ge:"0" le:"1000000"`
	PageSize        int64 `query:"page_size" default:"10" ge:"1" le:"100"`
}

// runOnceRequest is the request of POST /manage/admin/connector/run-once.
type runOnceRequest struct {
	Body runConnectorRequest `body:""`
}

// registerWorkerRequest is the request of POST /worker/register.
type registerWorkerRequest struct {
	Body workerRegistration `body:""`
}

// heartbeatRequest is the request of POST /worker/heartbeat.
type heartbeatRequest struct {
	Body heartbeat `body:""`
}

// updateAttemptCredentialRequest is the request of
// PUT /worker/attempts/{attempt_id}/credential.
type updateAttemptCredentialRequest struct {
	ID   int64                   `path:"attempt_id"`
	Body attemptCredentialUpdate `body:""`
}

// progressRequest is the request of
// POST /worker/attempts/{attempt_id}/progress.
type progressRequest struct {
	ID   int64          `path:"attempt_id"`
	Body progressReport `body:""`
}

// finishAttemptRequest is the request of
// POST /worker/attempts/{attempt_id}/finish.
type finishAttemptRequest struct {
	ID   int64         `path:"attempt_id"`
	Body attemptFinish `body:""`
}

// createWorkerRegistrationRequest is the request of
// POST /admin/worker/registration-token.
type createWorkerRegistrationRequest struct {
	Body workerRegistrationCreate `body:""`
}

// revokeWorkerRegistrationRequest is the request of
// DELETE /admin/worker/registration-token/{registration_id}.
type revokeWorkerRegistrationRequest struct {
	ID int64 `path:"registration_id"`
}

// revokeWorkerRequest is the request of DELETE /admin/worker/{worker_id}.
type revokeWorkerRequest struct {
	ID int64 `path:"worker_id"`
}

// ingestionDocument is the body of POST /onyx-api/ingestion: Onyx's
// IngestionDocument.
type ingestionDocument struct {
	Document documentBase           `json:"document"`
	CCPairID decode.Optional[int64] `json:"cc_pair_id"`
}

// documentBase is Onyx's DocumentBase, as a pushed document: sections are
// read as Onyx's TextSection (text sections only: Quarry keeps no files
// for image or tabular ones), metadata values are made strings or lists of
// strings, external_access is who may read it in a sync pair, and the
// fields Quarry does not keep (chunk_count, additional_info, doc_metadata,
// the hierarchy, file_id) are accepted and left.
type documentBase struct {
	ID                 decode.Optional[string]                `json:"id"`
	Sections           []json.RawMessage                      `json:"sections" max_length:"10000"`
	Source             decode.Optional[quarry.DocumentSource] `json:"source"`
	SemanticIdentifier string                                 `json:"semantic_identifier"`
	Metadata           json.RawMessage                        `json:"metadata"`
	DocUpdatedAt       decode.Optional[time.Time]             `json:"doc_updated_at"`
	DocCreatedAt       decode.Optional[time.Time]             `json:"doc_created_at"`
	PrimaryOwners      decode.Optional[[]json.RawMessage]     `json:"primary_owners" max_length:"1000"`
	SecondaryOwners    decode.Optional[[]json.RawMessage]     `json:"secondary_owners" max_length:"1000"`
	Title              decode.Optional[string]                `json:"title"`
	FromIngestionAPI   bool                                   `json:"from_ingestion_api" default:"false"`
	ExternalAccess     decode.Optional[externalAccess]        `json:"external_access"`
}

// externalAccess is Onyx's ExternalAccess (access/models.py), a dataclass
// of sets.
type externalAccess struct {
	ExternalUserEmails   []string `json:"external_user_emails" set:"" max_length:"10000"`
	ExternalUserGroupIDs []string `json:"external_user_group_ids" set:"" max_length:"10000"`
	IsPublic             bool     `json:"is_public"`
}

// DataclassName returns the Python class name pydantic would print.
func (externalAccess) DataclassName() string { return "ExternalAccess" }

// ModelName returns the Python class name pydantic would print.
func (documentBase) ModelName() string { return "DocumentBase" }

// ingestRequest is the request of POST /onyx-api/ingestion.
type ingestRequest struct {
	Body ingestionDocument `body:""`
}

// getSearchDocumentRequest is the request of
// GET /search/document/{document_id}: the document, and the pair whose
// copy is asked for.
type getSearchDocumentRequest struct {
	ID       string                 `path:"document_id"`
	CCPairID decode.Optional[int64] `query:"cc_pair_id"`
}

// pairDocumentsQuery is the request of GET
// /manage/admin/cc-pair/{cc_pair_id}/documents: a page of the pair's
// documents.
type pairDocumentsQuery struct {
	ID       int64 `path:"cc_pair_id"`
	PageNum  int64 `query:"page_num" default:"0" ge:"0" le:"1000000"`
	PageSize int64 `query:"page_size" default:"10" ge:"1" le:"1000"`
}

// getPairDocumentRequest is the request of GET
// /manage/admin/cc-pair/{cc_pair_id}/documents/{document_id}.
type getPairDocumentRequest struct {
	ID         int64  `path:"cc_pair_id"`
	DocumentID string `path:"document_id"`
}

// deleteIngestedRequest is the request of
// DELETE /onyx-api/ingestion/{document_id}.
type deleteIngestedRequest struct {
	ID string `path:"document_id"`
}

// sendSearchQuery is the body of POST /search/send-search-message: Onyx's
// SendSearchQueryRequest.
type sendSearchQuery struct {
	SearchQuery              string                       `json:"search_query"`
	Filters                  decode.Optional[baseFilters] `json:"filters"`
	NumDocsFedToLLMSelection decode.Optional[int64]       `json:"num_docs_fed_to_llm_selection"`
	RunQueryExpansion        bool                         `json:"run_query_expansion" default:"false"`
	NumHits                  int64                        `json:"num_hits" default:"30"`
	HybridAlpha              decode.Optional[float64]     `json:"hybrid_alpha"`
	IncludeContent           bool                         `json:"include_content" default:"false"`
	Stream                   bool                         `json:"stream" default:"false"`
}

// ModelName returns the Python class name pydantic would print.
func (sendSearchQuery) ModelName() string { return "SendSearchQueryRequest" }

// baseFilters is Onyx's BaseFilters (time_cutoff is its deprecated name
// for updated_at_range's start).
type baseFilters struct {
	SourceType     decode.Optional[[]quarry.DocumentSource] `json:"source_type" max_length:"100"`
	DocumentSet    decode.Optional[[]string]                `json:"document_set" max_length:"100"`
	CreatedAtRange decode.Optional[timeRange]               `json:"created_at_range"`
	UpdatedAtRange decode.Optional[timeRange]               `json:"updated_at_range"`
	Tags           decode.Optional[[]searchTag]             `json:"tags" max_length:"100"`
	TimeCutoff     decode.Optional[time.Time]               `json:"time_cutoff"`
}

// ModelName returns the Python class name pydantic would print.
func (baseFilters) ModelName() string { return "BaseFilters" }

// timeRange is Onyx's TimeRange: an inclusive window, either bound open.
type timeRange struct {
	Start decode.Optional[time.Time] `json:"start"`
	End   decode.Optional[time.Time] `json:"end"`
}

// ModelName returns the Python class name pydantic would print.
func (timeRange) ModelName() string { return "TimeRange" }

// searchTag is Onyx's Tag.
type searchTag struct {
	TagKey   string `json:"tag_key"`
	TagValue string `json:"tag_value"`
}

// ModelName returns the Python class name pydantic would print.
func (searchTag) ModelName() string { return "Tag" }

// sendSearchMessageRequest is the request of POST
// /search/send-search-message.
type sendSearchMessageRequest struct {
	Body sendSearchQuery `body:""`
}

// validTagsRequest is the request of GET /query/valid-tags: Onyx's
// get_tags' query (query_and_chat/query_backend.py).
type validTagsRequest struct {
	MatchPattern decode.Optional[string] `query:"match_pattern"`
	Sources      []quarry.DocumentSource `query:"sources" max_length:"100"`
	AllowPrefix  bool                    `query:"allow_prefix" default:"true"`
	Limit        int64                   `query:"limit" default:"50" ge:"0"`
}

// sourceTag is Onyx's SourceTag: a tag and its source.
type sourceTag struct {
	TagKey   string                `json:"tag_key"`
	TagValue string                `json:"tag_value"`
	Source   quarry.DocumentSource `json:"source"`
}

// tagResponse is Onyx's TagResponse.
type tagResponse struct {
	Tags []sourceTag `json:"tags"`
}

// searchAPIRequest is the body of POST /search: Onyx's SearchRequest
// (backend/onyx/server/features/search/models.py).
type searchAPIRequest struct {
	Query              string                                    `json:"query" min_length:"1" max_length:"2048"`
	Sources            decode.Optional[[]quarry.DocumentSource]  `json:"sources"`
	DocumentSets       decode.Optional[[]string]                 `json:"document_sets"`
	Tags               decode.Optional[[]searchTag]              `json:"tags"`
	TimeCutoff         decode.Optional[time.Time]                `json:"time_cutoff"`
	PersonaID          decode.Optional[int64]                    `json:"persona_id"`
	Provider           decode.Optional[string]                   `json:"provider"`
	Model              decode.Optional[string]                   `json:"model"`
	SkipQueryExpansion bool                                      `json:"skip_query_expansion" default:"false"`
	MessageHistory     decode.Optional[[]chatMinimalTextMessage] `json:"message_history"`
}

// ModelName returns the Python class name pydantic would print.
func (searchAPIRequest) ModelName() string { return "SearchRequest" }

// CheckModel is SearchRequest's validate_provider_model_pair: a model
// needs its provider and a provider its model (empty strings are none, as
// Python's truth).
func (r *searchAPIRequest) CheckModel() string {
	model, provider := r.Model.Set() && r.Model.Value != "", r.Provider.Set() && r.Provider.Value != ""
	switch {
	case model && !provider:
		return "provider is required when model is specified"
	case provider && !model:
		return "model is required when provider is specified"
	}
	return ""
}

// chatMinimalTextMessage is Onyx's ChatMinimalTextMessage: a message of
// the history a search may be given.
type chatMinimalTextMessage struct {
	Message     string      `json:"message"`
	MessageType messageType `json:"message_type"`
}

// ModelName returns the Python class name pydantic would print.
func (chatMinimalTextMessage) ModelName() string { return "ChatMinimalTextMessage" }

// messageType is Onyx's MessageType.
type messageType string

// ModelName returns the Python class name pydantic would print.
func (messageType) ModelName() string { return "MessageType" }

// EnumValues returns every messageType, in Onyx's order.
func (messageType) EnumValues() []string {
	return []string{"system", "user", "assistant", "tool_call_response", "user_reminder"}
}

// searchRoute is the request of POST /search.
type searchRoute struct {
	Body searchAPIRequest `body:""`
}

// uploadConnectorFilesRequest is the request of
// POST /manage/admin/connector/file/upload; its files (multipart field
// "files") are read by the handler as a stream.
type uploadConnectorFilesRequest struct {
	Unzip bool `query:"unzip" default:"true"`
}

// connectorFilesRequest is the request of GET
// /manage/admin/connector/{connector_id}/files.
type connectorFilesRequest struct {
	ID int64 `path:"connector_id"`
}

// updateConnectorFilesRequest is the request of POST
// /manage/admin/connector/{connector_id}/files/update; its form (files,
// file_ids_to_remove) is read by the handler as a stream.
type updateConnectorFilesRequest struct {
	ID int64 `path:"connector_id"`
}

// attemptFileRequest is the request of
// GET /worker/attempts/{attempt_id}/files/{file_id}.
type attemptFileRequest struct {
	ID     int64  `path:"attempt_id"`
	FileID string `path:"file_id"`
}

// Chat (api/chat.go): Onyx v4.6.1's models of
// backend/onyx/server/query_and_chat/models.py.

// chatSessionCreation is Onyx's ChatSessionCreationRequest.
type chatSessionCreation struct {
	PersonaID          int64                      `json:"persona_id" default:"0"`
	Description        decode.Optional[string]    `json:"description"`
	ProjectID          decode.Optional[int64]     `json:"project_id"`
	Incognito          bool                       `json:"incognito" default:"false"`
	IncognitoSessionID decode.Optional[uuid.UUID] `json:"incognito_session_id"`
}

// ModelName returns the Python class name pydantic would print.
func (chatSessionCreation) ModelName() string { return "ChatSessionCreationRequest" }

// input returns the session to make.
func (r *chatSessionCreation) input() quarry.ChatSessionInput {
	in := quarry.ChatSessionInput{PersonaID: r.PersonaID, Description: value(r.Description), Incognito: r.Incognito}
	in.ProjectID = value(r.ProjectID)
	return in
}

// createChatSessionRequest is the request of POST
// /chat/create-chat-session.
type createChatSessionRequest struct {
	Body chatSessionCreation `body:""`
}

// llmOverride is Onyx's LLMOverride: which model answers, and how.
type llmOverride struct {
	ModelConfigurationID decode.Optional[int64]   `json:"model_configuration_id"`
	ModelProvider        decode.Optional[string]  `json:"model_provider"`
	ModelVersion         decode.Optional[string]  `json:"model_version"`
	Temperature          decode.Optional[float64] `json:"temperature"`
	DisplayName          decode.Optional[string]  `json:"display_name"`
}

// ModelName returns the Python class name pydantic would print.
func (llmOverride) ModelName() string { return "LLMOverride" }

// messageOrigin is Onyx's MessageOrigin.
type messageOrigin string

// ModelName returns the Python class name pydantic would print.
func (messageOrigin) ModelName() string { return "MessageOrigin" }

// EnumValues returns every messageOrigin, in Onyx's order.
func (messageOrigin) EnumValues() []string {
	return []string{"webapp", "chrome_extension", "api", "slackbot", "widget", "discordbot", "mobile", "unknown", "unset"}
}

// sendMessage is Onyx's SendMessageRequest. parent_message_id is -1 (after
// the latest message) when absent and the root when null.
type sendMessage struct {
	Message               string                               `json:"message"`
	LLMOverride           decode.Optional[llmOverride]         `json:"llm_override"`
	LLMOverrides          decode.Optional[[]llmOverride]       `json:"llm_overrides" max_length:"100"`
	MockLLMResponse       decode.Optional[string]              `json:"mock_llm_response"`
	AllowedToolIDs        decode.Optional[[]int64]             `json:"allowed_tool_ids" max_length:"1000"`
	ForcedToolID          decode.Optional[int64]               `json:"forced_tool_id"`
	FileDescriptors       []json.RawMessage                    `json:"file_descriptors" default:"[]" max_length:"100"`
	InternalSearchFilters decode.Optional[baseFilters]         `json:"internal_search_filters"`
	DeepResearch          bool                                 `json:"deep_research" default:"false"`
	MCPHeaders            decode.Optional[map[string]string]   `json:"mcp_headers"`
	Origin                messageOrigin                        `json:"origin" default:"\"unset\""`
	ParentMessageID       decode.Optional[int64]               `json:"parent_message_id"`
	ChatSessionID         decode.Optional[uuid.UUID]           `json:"chat_session_id"`
	ChatSessionInfo       decode.Optional[chatSessionCreation] `json:"chat_session_info"`
	Stream                bool                                 `json:"stream" default:"true"`
	IncludeCitations      bool                                 `json:"include_citations" default:"true"`
	AdditionalContext     decode.Optional[string]              `json:"additional_context"`
}

// ModelName returns the Python class name pydantic would print.
func (sendMessage) ModelName() string { return "SendMessageRequest" }

// CheckModel is SendMessageRequest's check_chat_session_id_or_info.
func (r *sendMessage) CheckModel() string {
	if r.ChatSessionID.Set() && r.ChatSessionInfo.Set() {
		return "Only one of chat_session_id or chat_session_info should be provided, not both."
	}
	return ""
}

// override returns the model the question asks for: llm_override, or the
// one entry of llm_overrides (more are refused), or nil.
func (r *sendMessage) override() *llmOverride {
	if o := value(r.LLMOverride); o != nil {
		return o
	}
	if r.LLMOverrides.Set() && len(r.LLMOverrides.Value) == 1 {
		return &r.LLMOverrides.Value[0]
	}
	return nil
}

// parent returns where the message goes (quarry.PlaceChatMessage).
func (r *sendMessage) parent() *int64 {
	if !r.ParentMessageID.Present {
		auto := int64(quarry.AutoPlaceMessage)
		return &auto
	}
	return value(r.ParentMessageID)
}

// sendMessageRequest is the request of POST /chat/send-chat-message.
type sendMessageRequest struct {
	Body sendMessage `body:""`
}

// chatSessionsQuery is the request of GET /chat/get-user-chat-sessions.
type chatSessionsQuery struct {
	ProjectID           decode.Optional[int64]  `query:"project_id"`
	OnlyNonProjectChats bool                    `query:"only_non_project_chats" default:"true"`
	IncludeFailedChats  bool                    `query:"include_failed_chats" default:"false"`
	PageSize            int64                   `query:"page_size" default:"50" ge:"1" le:"100"`
	Before              decode.Optional[string] `query:"before"`
}

// getChatSessionRequest is the request of GET
// /chat/get-chat-session/{session_id}.
type getChatSessionRequest struct {
	ID             uuid.UUID `path:"session_id"`
	IsShared       bool      `query:"is_shared" default:"false"`
	IncludeDeleted bool      `query:"include_deleted" default:"false"`
}

// chatRename is Onyx's ChatRenameRequest.
type chatRename struct {
	ChatSessionID uuid.UUID               `json:"chat_session_id"`
	Name          decode.Optional[string] `json:"name"`
}

// ModelName returns the Python class name pydantic would print.
func (chatRename) ModelName() string { return "ChatRenameRequest" }

// renameChatSessionRequest is the request of PUT
// /chat/rename-chat-session.
type renameChatSessionRequest struct {
	Body chatRename `body:""`
}

// chatSessionUpdate is Onyx's ChatSessionUpdateRequest.
type chatSessionUpdate struct {
	SharingStatus quarry.ChatSharing `json:"sharing_status"`
}

// ModelName returns the Python class name pydantic would print.
func (chatSessionUpdate) ModelName() string { return "ChatSessionUpdateRequest" }

// patchChatSessionRequest is the request of PATCH
// /chat/chat-session/{session_id}.
type patchChatSessionRequest struct {
	ID   uuid.UUID         `path:"session_id"`
	Body chatSessionUpdate `body:""`
}

// deleteChatSessionRequest is the request of DELETE
// /chat/delete-chat-session/{session_id}.
type deleteChatSessionRequest struct {
	ID         uuid.UUID             `path:"session_id"`
	HardDelete decode.Optional[bool] `query:"hard_delete"`
}

// stopChatSessionRequest is the request of POST
// /chat/stop-chat-session/{chat_session_id}.
type stopChatSessionRequest struct {
	ID uuid.UUID `path:"chat_session_id"`
}

// chatFeedback is Onyx's ChatFeedbackRequest.
type chatFeedback struct {
	ChatMessageID      int64                   `json:"chat_message_id"`
	IsPositive         decode.Optional[bool]   `json:"is_positive"`
	FeedbackText       decode.Optional[string] `json:"feedback_text"`
	PredefinedFeedback decode.Optional[string] `json:"predefined_feedback"`
}

// ModelName returns the Python class name pydantic would print.
func (chatFeedback) ModelName() string { return "ChatFeedbackRequest" }

// CheckModel is ChatFeedbackRequest's check_is_positive_or_feedback_text.
func (r *chatFeedback) CheckModel() string {
	if !r.IsPositive.Set() && !r.FeedbackText.Set() {
		return "Empty feedback received."
	}
	return ""
}

// createChatFeedbackRequest is the request of POST
// /chat/create-chat-message-feedback.
type createChatFeedbackRequest struct {
	Body chatFeedback `body:""`
}

// removeChatFeedbackRequest is the request of DELETE
// /chat/remove-chat-message-feedback.
type removeChatFeedbackRequest struct {
	ChatMessageID int64 `query:"chat_message_id"`
}

// defaultAssistantUpdate is Onyx's DefaultAssistantUpdateRequest: a
// system_prompt sent as null resets the instructions to Quarry's own.
type defaultAssistantUpdate struct {
	ToolIDs      decode.Optional[[]int64] `json:"tool_ids" max_length:"1000"`
	SystemPrompt decode.Optional[string]  `json:"system_prompt"`
}

// ModelName returns the Python class name pydantic would print.
func (defaultAssistantUpdate) ModelName() string { return "DefaultAssistantUpdateRequest" }

// updateDefaultAssistantRequest is the request of PATCH
// /admin/default-assistant.
type updateDefaultAssistantRequest struct {
	Body defaultAssistantUpdate `body:""`
}

// personaUpsert is the body of POST /persona and PATCH
// /persona/{persona_id}: Onyx's PersonaUpsertRequest, with Quarry's
// bounds on its lists.
type personaUpsert struct {
	Name                        string                            `json:"name"`
	Description                 string                            `json:"description"`
	DocumentSetIDs              []int64                           `json:"document_set_ids" max_length:"1000"`
	IsPublic                    decode.Optional[bool]             `json:"is_public"`
	DefaultModelConfigurationID decode.Optional[int64]            `json:"default_model_configuration_id"`
	StarterMessages             decode.Optional[[]starterMessage] `json:"starter_messages" max_length:"100"`
	Users                       decode.Optional[[]uuid.UUID]      `json:"users" max_length:"10000"`
	Groups                      decode.Optional[[]int64]          `json:"groups" max_length:"1000"`
	ToolIDs                     []int64                           `json:"tool_ids" max_length:"1000"`
	RemoveImage                 decode.Optional[bool]             `json:"remove_image"`
	UploadedImageID             decode.Optional[string]           `json:"uploaded_image_id"`
	IconName                    decode.Optional[string]           `json:"icon_name"`
	SearchStartDate             decode.Optional[time.Time]        `json:"search_start_date"`
	LabelIDs                    decode.Optional[[]int64]          `json:"label_ids" max_length:"1000"`
	IsFeatured                  decode.Optional[bool]             `json:"is_featured"`
	DisplayPriority             decode.Optional[int64]            `json:"display_priority"`
	UserFileIDs                 decode.Optional[[]string]         `json:"user_file_ids" max_length:"1000"`
	HierarchyNodeIDs            []int64                           `json:"hierarchy_node_ids" default:"[]" max_length:"1000"`
	DocumentIDs                 []string                          `json:"document_ids" default:"[]" max_length:"1000"`
	SystemPrompt                string                            `json:"system_prompt"`
	ReplaceBaseSystemPrompt     bool                              `json:"replace_base_system_prompt" default:"false"`
	TaskPrompt                  string                            `json:"task_prompt"`
	DatetimeAware               bool                              `json:"datetime_aware"`
}

// ModelName returns the Python class name pydantic would print.
func (personaUpsert) ModelName() string { return "PersonaUpsertRequest" }

// input returns the assistant b asks for, assistant id (0 for a new one).
func (b *personaUpsert) input(id int64) quarry.PersonaInput {
	in := quarry.PersonaInput{ID: id, Name: b.Name, Description: b.Description, DocumentSetIDs: b.DocumentSetIDs, ToolIDs: b.ToolIDs,
		IsPublic: value(b.IsPublic), ModelConfigurationID: value(b.DefaultModelConfigurationID), Groups: value(b.Groups),
		LabelIDs: value(b.LabelIDs), IsFeatured: value(b.IsFeatured), DisplayPriority: value(b.DisplayPriority), IconName: value(b.IconName),
		SystemPrompt: b.SystemPrompt, TaskPrompt: b.TaskPrompt, DatetimeAware: b.DatetimeAware, ReplaceBasePrompt: b.ReplaceBaseSystemPrompt,
		UserFiles: len(b.UserFileIDs.Value), HierarchyNodes: len(b.HierarchyNodeIDs), Documents: len(b.DocumentIDs),
		UploadedImageID: value(b.UploadedImageID), RemoveImage: b.RemoveImage.Set() && b.RemoveImage.Value}
	if u := value(b.Users); u != nil {
		ids := userIDs(*u)
		in.Users = &ids
	}
	if m := value(b.StarterMessages); m != nil {
		in.StarterMessages = make([]quarry.StarterMessage, len(*m))
		for i, s := range *m {
			in.StarterMessages[i] = quarry.StarterMessage(s)
		}
	}
	if t := value(b.SearchStartDate); t != nil {
		in.SearchStartDate = &quarry.Time{Time: *t}
	}
	return in
}

// starterMessage is Onyx's StarterMessage.
type starterMessage struct {
	Name    string `json:"name"`
	Message string `json:"message"`
}

// ModelName returns the Python class name pydantic would print.
func (starterMessage) ModelName() string { return "StarterMessage" }

// createPersonaRequest is the request of POST /persona.
type createPersonaRequest struct {
	Body personaUpsert `body:""`
}

// updatePersonaRequest is the request of PATCH /persona/{persona_id}.
type updatePersonaRequest struct {
	ID   int64         `path:"persona_id"`
	Body personaUpsert `body:""`
}

// personaRequest is a request of one assistant's route without a body.
type personaRequest struct {
	ID int64 `path:"persona_id"`
}

// personasQuery is the query of GET /persona.
type personasQuery struct {
	IncludeDeleted bool    `query:"include_deleted" default:"false"`
	PersonaIDs     []int64 `query:"persona_ids"`
}

// adminPersonasQuery is the query of GET /admin/persona.
type adminPersonasQuery struct {
	IncludeDeleted bool `query:"include_deleted" default:"false"`
	GetEditable    bool `query:"get_editable" default:"false"`
}

// agentsQuery is the query of GET /agents and GET /admin/agents.
type agentsQuery struct {
	PageNum        int64 `query:"page_num" default:"0" ge:"0"`
	PageSize       int64 `query:"page_size" default:"10" ge:"1" le:"1000"`
	IncludeDeleted bool  `query:"include_deleted" default:"false"`
	GetEditable    bool  `query:"get_editable" default:"false"`
	IncludeDefault bool  `query:"include_default" default:"true"`
}

// personaListedRequest is the request of PATCH
// /admin/persona/{persona_id}/listed.
type personaListedRequest struct {
	ID   int64    `path:"persona_id"`
	Body isListed `body:""`
}

// personaFeaturedRequest is the request of PATCH
// /admin/persona/{persona_id}/featured.
type personaFeaturedRequest struct {
	ID   int64      `path:"persona_id"`
	Body isFeatured `body:""`
}

// personaPublicRequest is the request of PATCH
// /persona/{persona_id}/public.
type personaPublicRequest struct {
	ID   int64    `path:"persona_id"`
	Body isPublic `body:""`
}

// displayPriorities is Onyx's DisplayPriorityRequest: its map's keys are
// assistants' ids.
type displayPriorities struct {
	DisplayPriorityMap map[int64]int64 `json:"display_priority_map"`
}

// ModelName returns the Python class name pydantic would print.
func (displayPriorities) ModelName() string { return "DisplayPriorityRequest" }

// displayPrioritiesRequest is the request of PATCH
// /admin/agents/display-priorities.
type displayPrioritiesRequest struct {
	Body displayPriorities `body:""`
}

// personaLabelCreateRequest is the request of POST /persona/labels:
// Onyx's PersonaLabelCreate.
type personaLabelCreateRequest struct {
	Body personaLabelCreate `body:""`
}

// personaLabelPatchRequest is the request of PATCH
// /admin/persona/label/{label_id}: Onyx's PersonaLabelPatchRequest.
type personaLabelPatchRequest struct {
	ID   int64             `path:"label_id"`
	Body personaLabelPatch `body:""`
}

// personaLabelRequest is the request of DELETE
// /admin/persona/label/{label_id}.
type personaLabelRequest struct {
	ID int64 `path:"label_id"`
}

// personaUserShareRequest is Onyx's PersonaUserShareRequest.
type personaUserShareRequest struct {
	UserID     uuid.UUID                `json:"user_id"`
	Permission quarry.PersonaPermission `json:"permission"`
}

// ModelName returns the Python class name pydantic would print.
func (personaUserShareRequest) ModelName() string { return "PersonaUserShareRequest" }

// personaGroupShareRequest is Onyx's PersonaGroupShareRequest.
type personaGroupShareRequest struct {
	GroupID    int64                    `json:"group_id"`
	Permission quarry.PersonaPermission `json:"permission"`
}

// ModelName returns the Python class name pydantic would print.
func (personaGroupShareRequest) ModelName() string { return "PersonaGroupShareRequest" }

// personaShare is Onyx's PersonaShareRequest.
type personaShare struct {
	UserIDs          decode.Optional[[]uuid.UUID]                `json:"user_ids" max_length:"10000"`
	GroupIDs         decode.Optional[[]int64]                    `json:"group_ids" max_length:"1000"`
	UserShares       decode.Optional[[]personaUserShareRequest]  `json:"user_shares" max_length:"10000"`
	GroupShares      decode.Optional[[]personaGroupShareRequest] `json:"group_shares" max_length:"1000"`
	IsPublic         decode.Optional[bool]                       `json:"is_public"`
	PublicPermission decode.Optional[quarry.PersonaPermission]   `json:"public_permission"`
	LabelIDs         decode.Optional[[]int64]                    `json:"label_ids" max_length:"1000"`
}

// ModelName returns the Python class name pydantic would print.
func (personaShare) ModelName() string { return "PersonaShareRequest" }

// CheckModel is PersonaShareRequest's _reject_legacy_and_leveled: both
// forms of the same shares are refused.
func (b *personaShare) CheckModel() string {
	switch {
	case b.UserIDs.Set() && b.UserShares.Set():
		return "Provide either user_ids or user_shares, not both"
	case b.GroupIDs.Set() && b.GroupShares.Set():
		return "Provide either group_ids or group_shares, not both"
	}
	return ""
}

// input returns the change b asks for.
func (b *personaShare) input() quarry.PersonaShareInput {
	var in quarry.PersonaShareInput
	if u := value(b.UserIDs); u != nil {
		ids := userIDs(*u)
		in.Users = &ids
	}
	in.Groups, in.IsPublic, in.PublicPermission, in.LabelIDs = value(b.GroupIDs), value(b.IsPublic), value(b.PublicPermission), value(b.LabelIDs)
	if s := value(b.UserShares); s != nil {
		in.UserShares = map[string]quarry.PersonaPermission{}
		for _, u := range *s {
			in.UserShares[u.UserID.String()] = u.Permission
		}
	}
	if s := value(b.GroupShares); s != nil {
		in.GroupShares = map[int64]quarry.PersonaPermission{}
		for _, g := range *s {
			in.GroupShares[g.GroupID] = g.Permission
		}
	}
	return in
}

// sharePersonaRequest is the request of PATCH /persona/{persona_id}/share.
type sharePersonaRequest struct {
	ID   int64        `path:"persona_id"`
	Body personaShare `body:""`
}

// transferPersonaRequest is the request of POST
// /persona/{persona_id}/transfer-ownership: Onyx's
// TransferPersonaOwnershipRequest.
type transferPersonaRequest struct {
	ID   int64             `path:"persona_id"`
	Body transferOwnership `body:""`
}

// isListed is Onyx's IsListedRequest.
type isListed struct {
	IsListed bool `json:"is_listed"`
}

// ModelName returns the Python class name pydantic would print.
func (isListed) ModelName() string { return "IsListedRequest" }

// isFeatured is Onyx's IsFeaturedRequest.
type isFeatured struct {
	IsFeatured bool `json:"is_featured"`
}

// ModelName returns the Python class name pydantic would print.
func (isFeatured) ModelName() string { return "IsFeaturedRequest" }

// isPublic is Onyx's IsPublicRequest.
type isPublic struct {
	IsPublic bool `json:"is_public"`
}

// ModelName returns the Python class name pydantic would print.
func (isPublic) ModelName() string { return "IsPublicRequest" }

// personaLabelCreate is Onyx's PersonaLabelCreate.
type personaLabelCreate struct {
	Name string `json:"name"`
}

// ModelName returns the Python class name pydantic would print.
func (personaLabelCreate) ModelName() string { return "PersonaLabelCreate" }

// personaLabelPatch is Onyx's PersonaLabelPatchRequest.
type personaLabelPatch struct {
	LabelName string `json:"label_name"`
}

// ModelName returns the Python class name pydantic would print.
func (personaLabelPatch) ModelName() string { return "PersonaLabelPatchRequest" }

// transferOwnership is Onyx's TransferPersonaOwnershipRequest.
type transferOwnership struct {
	NewOwnerUserID  decode.Optional[uuid.UUID] `json:"new_owner_user_id"`
	NewOwnerGroupID decode.Optional[int64]     `json:"new_owner_group_id"`
}

// ModelName returns the Python class name pydantic would print.
func (transferOwnership) ModelName() string { return "TransferPersonaOwnershipRequest" }
