package api

import (
	"net/http"

	"github.com/quarryhq/quarry/web"
)

// routes registers every route of the API. It is the one place to read to
// know what the service answers, and who may call what.
func (s *Server) routes() {
	m := s.mux

	// The three operations of interface.md.
	m.Handle("GET /manage/admin/connector/status", s.authed(connectorAccess, s.handleConnectorStatus))
	m.Handle("PUT /admin/tool/custom/{tool_id}", s.authed(actionAccess, s.handleUpdateTool))
	m.Handle("PATCH /manage/credential/{credential_id}", s.authed(basicAccess, s.handleUpdateCredential))

	// Connectors.
	m.Handle("POST /manage/admin/connector", s.authed(connectorAccess, s.handleCreateConnector))
	m.Handle("GET /manage/connector", s.authed(connectorAccess, s.handleListConnectors))
	m.Handle("GET /manage/admin/connector", s.authed(connectorAccess, s.handleListConnectors))
	m.Handle("GET /manage/connector/{connector_id}", s.authed(connectorAccess, s.handleGetConnector))
	m.Handle("PATCH /manage/admin/connector/{connector_id}", s.authed(connectorAccess, s.handleUpdateConnector))
	m.Handle("DELETE /manage/admin/connector/{connector_id}", s.authed(connectorAccess, s.handleDeleteConnector))
	m.Handle("POST /manage/admin/connector/file/upload", s.authedFor(uploadTimeout, connectorAccess, s.handleUploadConnectorFiles))
	m.Handle("GET /manage/connector-sources", s.authed(connectorAccess, s.handleConnectorSources))
	m.Handle("GET /manage/admin/connector/{connector_id}/files", s.authed(connectorAccess, s.handleConnectorFiles))
	m.Handle("POST /manage/admin/connector/{connector_id}/files/update", s.authedFor(uploadTimeout, connectorAccess, s.handleUpdateConnectorFiles))

	// Credentials.
	m.Handle("POST /manage/credential", s.authed(basicAccess, s.handleCreateCredential))
	m.Handle("GET /manage/credential", s.authed(basicAccess, s.handleListCredentials))
	m.Handle("GET /manage/credential/{credential_id}", s.authed(basicAccess, s.handleGetCredential))
	m.Handle("DELETE /manage/credential/{credential_id}", s.authed(basicAccess, s.handleDeleteCredential))
	m.Handle("PUT /manage/admin/credential/{credential_id}", s.authed(basicAccess, s.handleEditCredential))

	// Connector/credential pairs.
	m.Handle("PUT /manage/connector/{connector_id}/credential/{credential_id}", s.authed(connectorAccess, s.handleCreateCCPair))
	m.Handle("DELETE /manage/connector/{connector_id}/credential/{credential_id}", s.authed(connectorAccess, s.handleDeleteCCPair))
	m.Handle("GET /manage/admin/cc-pair/{cc_pair_id}", s.authed(connectorAccess, s.handleGetCCPair))
	m.Handle("PUT /manage/admin/cc-pair/{cc_pair_id}/status", s.authed(connectorAccess, s.handleSetCCPairStatus))
	m.Handle("PUT /manage/admin/cc-pair/{cc_pair_id}/name", s.authed(connectorAccess, s.handleRenameCCPair))
	m.Handle("POST /manage/admin/deletion-attempt", s.authed(connectorAccess, s.handleDeletionAttempt))

	// Indexing (api/indexing.go): runs asked for, and what attempts did.
	m.Handle("POST /manage/admin/connector/indexing-status", s.authed(connectorAccess, s.handleIndexingStatus))
	m.Handle("POST /manage/admin/connector/run-once", s.authed(connectorAccess, s.handleRunOnce))
	m.Handle("GET /manage/admin/cc-pair/{cc_pair_id}/index-attempts", s.authed(connectorAccess, s.handleIndexAttempts))
	m.Handle("GET /manage/admin/cc-pair/{cc_pair_id}/errors", s.authed(connectorAccess, s.handleAttemptErrors))
	// Onyx's search API (api/search.go): the documents each caller may see.
	m.Handle("POST /search/send-search-message", s.authed(onyxGate(searchAccess), s.handleSendSearchMessage))
	m.Handle("POST /search", s.authed(onyxGate(searchAccess), s.handleSearch))
	// The tags to filter a search by (api/tag.go), those of documents the caller may find.
	m.Handle("GET /query/valid-tags", s.authed(onyxGate(searchAccess), s.handleValidTags))

	// Onyx's chat API (api/chat.go, api/chatsend.go): each person's
	// sessions with the assistant. An answer may take the chat's time-out.
	m.Handle("POST /chat/create-chat-session", s.authed(onyxGate(chatWrite), s.handleCreateChatSession))
	m.Handle("POST /chat/send-chat-message", s.authedFor(s.chatTimeout(), onyxGate(chatWrite), s.handleSendChatMessage))
	m.Handle("GET /chat/get-user-chat-sessions", s.authed(onyxGate(chatRead), s.handleChatSessions))
	m.Handle("GET /chat/get-chat-session/{session_id}", s.authed(onyxGate(chatRead), s.handleGetChatSession))
	m.Handle("PUT /chat/rename-chat-session", s.authed(basicAccess, s.handleRenameChatSession))
	m.Handle("PATCH /chat/chat-session/{session_id}", s.authed(basicAccess, s.handlePatchChatSession))
	m.Handle("DELETE /chat/delete-chat-session/{session_id}", s.authed(basicAccess, s.handleDeleteChatSession))
	m.Handle("DELETE /chat/delete-all-chat-sessions", s.authed(basicAccess, s.handleDeleteAllChatSessions))
	m.Handle("POST /chat/stop-chat-session/{chat_session_id}", s.authed(onyxGate(chatWrite), s.handleStopChatSession))
	m.Handle("POST /chat/create-chat-message-feedback", s.authed(chatWrite, s.handleCreateChatFeedback))
	m.Handle("DELETE /chat/remove-chat-message-feedback", s.authed(chatWrite, s.handleRemoveChatFeedback))
	m.Handle("POST /persona", s.authed(basicAccess, s.handleCreatePersona))
	m.Handle("GET /persona", s.authed(basicAccess, s.handleListPersonas))
	m.Handle("GET /persona/labels", s.authed(basicAccess, s.handlePersonaLabels))
	m.Handle("POST /persona/labels", s.authed(basicAccess, s.handleCreatePersonaLabel))
	m.Handle("GET /persona/{persona_id}", s.authed(anyUser, s.handleGetPersona)) // Onyx: current_limited_user
	m.Handle("PATCH /persona/{persona_id}", s.authed(basicAccess, s.handleUpdatePersona))
	m.Handle("DELETE /persona/{persona_id}", s.authed(basicAccess, s.handleDeletePersona))
	m.Handle("PATCH /persona/{persona_id}/public", s.authed(basicAccess, s.handlePersonaPublic))
	m.Handle("PATCH /persona/{persona_id}/share", s.authed(basicAccess, s.handleSharePersona))
	m.Handle("DELETE /persona/{persona_id}/share/me", s.authed(basicAccess, s.handleLeavePersona))
	m.Handle("POST /persona/{persona_id}/transfer-ownership", s.authed(basicAccess, s.handleTransferPersona))
	// Assistants' avatars (api/avatar.go).
	m.Handle("GET /persona/{persona_id}/avatar", s.authed(basicAccess, s.handlePersonaAvatar))
	m.Handle("POST /admin/persona/upload-image", s.authedFor(uploadTimeout, basicAccess, s.handleUploadAvatar))
	m.Handle("GET /agents", s.authed(basicAccess, s.handleAgents))
	m.Handle("GET /admin/persona", s.authed(personaAccess, s.handleAdminPersonas))
	m.Handle("GET /admin/agents", s.authed(personaAccess, s.handleAdminAgents))
	m.Handle("PATCH /admin/persona/{persona_id}/{change}", s.authed(personaAccess, s.handleAdminPersonaChange))
	m.Handle("PATCH /admin/persona/label/{label_id}", s.authed(adminOnly, s.handleRenamePersonaLabel))
	m.Handle("DELETE /admin/persona/label/{label_id}", s.authed(adminOnly, s.handleDeletePersonaLabel))
	m.Handle("PATCH /admin/agents/display-priorities", s.authed(adminOnly, s.handleDisplayPriorities))
	m.Handle("GET /admin/default-assistant/configuration", s.authed(adminOnly, s.handleDefaultAssistant))
	m.Handle("PATCH /admin/default-assistant", s.authed(adminOnly, s.handleUpdateDefaultAssistant))

	// Onyx's ingestion API (api/ingestion.go): other systems push documents.
	m.Handle("POST /onyx-api/ingestion", s.authed(connectorAccess, s.handleIngest))
	m.Handle("GET /onyx-api/ingestion", s.authed(connectorAccess, s.handleIngestedDocuments))
	m.Handle("DELETE /onyx-api/ingestion/{document_id}", s.authed(connectorAccess, s.handleDeleteIngested))
	m.Handle("GET /onyx-api/connector-docs/{cc_pair_id}", s.authed(connectorAccess, s.handlePairDocuments))
	// The sources to filter a search by (api/searchseam.go), as Onyx's MCP server reads them.
	m.Handle("GET /manage/indexed-sources", s.authed(basicAccess, s.handleIndexedSources))
	m.Handle("GET /search/document/{document_id}", s.authed(searchAccess, s.handleSearchDocument))
	// A pair's documents, a page at a time, and one with its text
	// (api/prune.go): Quarry's, for the console.
	m.Handle("GET /manage/admin/cc-pair/{cc_pair_id}/documents", s.authed(connectorAccess, s.handlePairDocumentPage))
	m.Handle("GET /manage/admin/cc-pair/{cc_pair_id}/documents/{document_id}", s.authed(connectorAccess, s.handlePairDocumentText))
	// Pruning (api/prune.go).
	m.Handle("POST /manage/admin/cc-pair/{cc_pair_id}/prune", s.authed(connectorAccess, s.handlePrune))
	m.Handle("GET /manage/admin/cc-pair/{cc_pair_id}/last_pruned", s.authed(connectorAccess, s.handleLastPruned))
	// Permission syncing (api/permsync.go).
	m.Handle("POST /manage/admin/cc-pair/{cc_pair_id}/sync-permissions", s.authed(connectorAccess, s.handleSyncPermissions))
	m.Handle("GET /manage/admin/cc-pair/{cc_pair_id}/sync-permissions", s.authed(connectorAccess, s.handleLastPermissionSync))
	m.Handle("POST /manage/admin/cc-pair/{cc_pair_id}/sync-groups", s.authed(connectorAccess, s.handleSyncGroups))
	m.Handle("GET /manage/admin/cc-pair/{cc_pair_id}/sync-groups", s.authed(connectorAccess, s.handleLastGroupSync))
	// Not yet: 501.
	m.Handle("GET /manage/admin/cc-pair/{cc_pair_id}/get-docs-sync-status", s.authed(connectorAccess, notIndexingPair("report the sync status of documents")))

	// User groups and their permissions.
	m.Handle("POST /manage/admin/user-group", s.authed(groupAdmin, s.handleCreateGroup))
	m.Handle("GET /manage/admin/user-group", s.authed(groupAdmin, s.handleListGroups))
	m.Handle("PATCH /manage/admin/user-group/{group_id}", s.authed(groupAccess, s.handleUpdateGroup))
	m.Handle("DELETE /manage/admin/user-group/{group_id}", s.authed(groupAdmin, s.handleDeleteGroup))
	m.Handle("POST /manage/admin/user-group/{group_id}/set-curator", s.authed(groupAdmin, s.handleSetCurator))
	m.Handle("POST /manage/admin/user-group/{group_id}/add-users", s.authed(groupAccess, s.handleAddGroupUsers))
	m.Handle("GET /manage/admin/user-group/{group_id}/permissions", s.authed(adminOnly, s.handleGroupPermissions))
	m.Handle("PUT /manage/admin/user-group/{group_id}/permissions", s.authed(adminOnly, s.handleSetGroupPermission))

	// Document sets (api/documentset.go), with Onyx's routes: admins and
	// curators make, change and delete them; people list those they may
	// see, and narrow searches to them (filters.document_set).
	m.Handle("POST /manage/admin/document-set", s.authed(documentSetAccess, s.handleCreateDocumentSet))
	m.Handle("PATCH /manage/admin/document-set", s.authed(documentSetAccess, s.handleUpdateDocumentSet))
	m.Handle("DELETE /manage/admin/document-set/{document_set_id}", s.authed(documentSetAccess, s.handleDeleteDocumentSet))
	m.Handle("GET /manage/document-set", s.authed(basicAccess, s.handleListDocumentSets))
	m.Handle("GET /manage/document-set-public", s.authed(basicAccess, s.handleDocumentSetsPublic))

	// API keys and the caller's own account.
	m.Handle("POST /admin/api-key", s.authed(minting(adminOnly), s.handleCreateAPIKey))
	m.Handle("GET /admin/api-key", s.authed(adminOnly, s.handleListAPIKeys))
	m.Handle("DELETE /admin/api-key/{api_key_id}", s.authed(adminOnly, s.handleDeleteAPIKey))
	m.Handle("PATCH /admin/api-key/{api_key_id}", s.authed(adminOnly, s.handleUpdateAPIKey))
	m.Handle("POST /admin/api-key/{api_key_id}/regenerate", s.authed(minting(adminOnly), s.handleRegenerateAPIKey))
	m.Handle("GET /me", s.authed(anyUser, s.handleMe))
	m.Handle("GET /me/permissions", s.authed(basicAccess, s.handleMyPermissions))

	// Tools and their OAuth configurations.
	m.Handle("POST /admin/tool/custom", s.authed(actionAccess, s.handleCreateTool))
	m.Handle("POST /admin/tool/custom/validate", s.authed(actionAccess, s.handleValidateTool))
	m.Handle("DELETE /admin/tool/custom/{tool_id}", s.authed(actionAccess, s.handleDeleteTool))
	m.Handle("PATCH /admin/tool/status", s.authed(actionAccess, s.handleSetToolsEnabled))
	m.Handle("GET /tool", s.authed(basicAccess, s.handleListTools))
	m.Handle("GET /tool/{tool_id}", s.authed(basicAccess, s.handleGetTool))
	m.Handle("POST /admin/oauth-config", s.authed(adminOnly, s.handleCreateOAuthConfig))
	m.Handle("POST /admin/oauth-config/create", s.authed(adminOnly, s.handleCreateOAuthConfig)) // Onyx's path
	m.Handle("GET /admin/oauth-config", s.authed(adminOnly, s.handleListOAuthConfigs))
	m.Handle("GET /admin/oauth-config/{oauth_config_id}", s.authed(adminOnly, s.handleGetOAuthConfig))
	m.Handle("PUT /admin/oauth-config/{oauth_config_id}", s.authed(adminOnly, s.handleUpdateOAuthConfig))
	m.Handle("DELETE /admin/oauth-config/{oauth_config_id}", s.authed(adminOnly, s.handleDeleteOAuthConfig))

	// Model providers (api/llm.go), with Onyx's routes: admins manage
	// them and test a configuration against its server; people list those
	// they may use.
	m.Handle("GET /admin/llm/provider", s.authed(llmAdmin, llmCoded(s.handleListLLMProviders)))
	m.Handle("PUT /admin/llm/provider", s.authed(llmAdmin, llmCoded(s.handlePutLLMProvider)))
	m.Handle("DELETE /admin/llm/provider/{provider_id}", s.authed(llmAdmin, llmCoded(s.handleDeleteLLMProvider)))
	m.Handle("POST /admin/llm/default", s.authed(llmAdmin, llmCoded(s.handleSetDefaultModel)))
	m.Handle("POST /admin/llm/test", s.authedFor(s.llmTestTimeout(), llmAdmin, llmCoded(s.handleTestLLM)))
	m.Handle("GET /llm/provider", s.authed(llmUse, llmCoded(s.handleListUsableLLMProviders)))
	m.Handle("GET /llm/persona/{persona_id}/providers", s.authed(llmUse, llmCoded(s.handleListPersonaLLMProviders)))

	// Running custom tools (api/toolrun.go), and each person's OAuth
	// connections for them (api/oauthflow.go). A run may take the tool's
	// whole time-out, beyond the database's.
	m.Handle("POST /tool/{tool_id}/run", s.authedFor(s.runTimeout(), basicAccess, s.handleRunTool))
	m.Handle("POST /oauth-config/initiate", s.authed(basicAccess, s.handleOAuthInitiate))
	m.Handle("GET /oauth-config/callback", s.publicFor(s.runTimeout(), s.handleOAuthCallbackPage))
	m.Handle("POST /oauth-config/callback", s.authedFor(s.runTimeout(), basicAccess, s.handleOAuthCallback))
	m.Handle("DELETE /oauth-config/{oauth_config_id}/token", s.authed(basicAccess, s.handleRevokeOAuthToken))
	m.Handle("GET /user-oauth-token/status", s.authed(basicAccess, s.handleOAuthTokenStatus))

	// MCP servers as sources of tools, with Onyx's routes (api/mcp.go,
	// api/mcpoauth.go): admins and curators register and configure them,
	// and list and pick their tools; each person gives their own
	// credentials or connects their own account.
	m.Handle("POST /admin/mcp/server", s.authed(actionAccess, s.handleCreateMCPServerSimple))
	m.Handle("POST /admin/mcp/servers/create", s.authed(actionAccess, s.handleSetUpMCPServer))
	m.Handle("POST /admin/mcp/servers/update", s.authed(actionAccess, s.handleSelectMCPTools))
	m.Handle("GET /admin/mcp/servers", s.authed(actionAccess, s.handleListMCPServers(true)))
	m.Handle("GET /admin/mcp/servers/{server_id}", s.authed(actionAccess, s.handleGetMCPServer))
	m.Handle("PATCH /admin/mcp/server/{server_id}", s.authed(actionAccess, s.handleUpdateMCPServerSimple))
	m.Handle("DELETE /admin/mcp/server/{server_id}", s.authed(actionAccess, s.handleDeleteMCPServer))
	m.Handle("PATCH /admin/mcp/server/{server_id}/status", s.authed(actionAccess, s.handleSetMCPServerStatus))
	m.Handle("GET /admin/mcp/server/{server_id}/tools", s.authedFor(s.runTimeout(), actionAccess, s.handleListMCPToolsAdmin))
	m.Handle("GET /admin/mcp/server/{server_id}/tools/snapshots", s.authedFor(s.runTimeout(), actionAccess, s.handleMCPToolSnapshots))
	m.Handle("GET /admin/mcp/server/{server_id}/db-tools", s.authed(actionAccess, s.handleMCPDBTools))
	m.Handle("GET /admin/mcp/tools", s.authed(actionAccess, s.handleAllMCPTools))
	m.Handle("POST /admin/mcp/oauth/connect", s.authedFor(s.runTimeout(), actionAccess, s.handleMCPOAuthConnect(true)))
	m.Handle("GET /mcp/servers", s.authed(basicAccess, s.handleListMCPServers(false)))
	m.Handle("GET /mcp/server/{server_id}/tools", s.authedFor(s.runTimeout(), basicAccess, s.handleListMCPToolsUser))
	m.Handle("POST /mcp/user-credentials", s.authedFor(s.runTimeout(), basicAccess, s.handleSaveMCPCredentials))
	m.Handle("DELETE /mcp/user-credentials/{server_id}", s.authed(basicAccess, s.handleDeleteMCPCredentials))
	m.Handle("POST /mcp/oauth/connect", s.authedFor(s.runTimeout(), basicAccess, s.handleMCPOAuthConnect(false)))
	m.Handle("GET /mcp/oauth/callback", s.publicFor(s.runTimeout(), s.handleMCPOAuthCallbackPage))
	m.Handle("POST /mcp/oauth/callback", s.authedFor(s.runTimeout(), basicAccess, s.handleMCPOAuthCallback))

	// Each person's personal access tokens (api/pat.go), for scripts and
	// MCP clients. Their errors carry Onyx's error_code, as Onyx's do.
	m.Handle("POST /user/pats", s.authed(onyxGate(basicAccess), onyxCoded(s.handleCreatePAT)))
	m.Handle("GET /user/pats", s.authed(onyxGate(basicAccess), onyxCoded(s.handleListPATs)))
	m.Handle("DELETE /user/pats/{token_id}", s.authed(onyxGate(basicAccess), onyxCoded(s.handleRevokePAT)))
	m.Handle("GET /user/pats/scopes", s.authed(onyxGate(basicAccess), onyxCoded(s.handlePATScopes)))

	// Quarry's own MCP endpoint (api/mcpendpoint.go): bearer tokens only,
	// its protected resource metadata public.
	m.HandleFunc("POST /mcp", s.handleMCP)
	m.HandleFunc("GET /mcp", s.handleMCP)
	m.HandleFunc("DELETE /mcp", s.handleMCP)
	m.HandleFunc("GET /.well-known/oauth-protected-resource", s.handleResourceMetadata)
	m.HandleFunc("GET /.well-known/oauth-protected-resource/", s.handleResourceMetadata)

	// Workers (api/worker.go): admins make registration tokens and revoke
	// workers; workers register, then lease, beat, report and finish index
	// attempts with a token of their own, which opens these routes only.
	m.Handle("POST /admin/worker/registration-token", s.authed(minting(adminOnly), s.handleCreateWorkerRegistration))
	m.Handle("GET /admin/worker/registration-tokens", s.authed(adminOnly, s.handleListWorkerRegistrations))
	m.Handle("DELETE /admin/worker/registration-token/{registration_id}", s.authed(adminOnly, s.handleRevokeWorkerRegistration))
	m.Handle("GET /admin/workers", s.authed(adminOnly, s.handleListWorkers))
	m.Handle("DELETE /admin/worker/{worker_id}", s.authed(adminOnly, s.handleRevokeWorker))
	m.Handle("POST /worker/register", s.public(s.handleRegisterWorker))
	m.Handle("POST /worker/lease", s.workerAuthed(s.handleLease))
	m.Handle("POST /worker/heartbeat", s.workerAuthed(s.handleHeartbeat))
	m.Handle("GET /worker/attempts/{attempt_id}/credential", s.workerAuthed(s.handleAttemptCredential))
	m.Handle("PUT /worker/attempts/{attempt_id}/credential", s.workerAuthed(s.handleUpdateAttemptCredential))
	m.Handle("GET /worker/attempts/{attempt_id}/files/{file_id}", s.workerAuthed(s.handleAttemptFile))
	m.Handle("POST /worker/attempts/{attempt_id}/progress", s.workerAuthed(s.handleProgress))
	m.Handle("POST /worker/attempts/{attempt_id}/finish", s.workerAuthed(s.handleFinish))

	// The audit log.
	m.Handle("GET /admin/audit-log", s.authed(adminOnly, s.handleAuditLog))

	// Signing in (public, but for signing out): local accounts, single
	// sign-on at the OpenID provider, and how the sign-in screen looks.
	m.Handle("POST /auth/register", s.public(s.handleRegister))
	m.Handle("POST /auth/login", s.public(s.handleLogin))
	m.Handle("POST /auth/logout", s.authed(anyUser, s.handleLogout))
	m.Handle("POST /auth/change-password", s.authed(minting(anyUser), s.handleChangePassword))
	m.Handle("GET /auth/type", s.public(s.handleAuthType))
	m.Handle("GET /auth/oidc/login", s.public(s.handleOIDCLogin))
	m.Handle("GET /auth/oidc/callback", s.public(s.handleOIDCCallback))

	// People, their invitations and their sessions.
	m.Handle("GET /manage/users", s.authed(userDirectory, s.handleAllUsers))
	m.Handle("GET /manage/users/accepted", s.authed(adminOnly, s.handleAcceptedUsers))
	m.Handle("PATCH /manage/set-user-role", s.authed(adminOnly, s.handleSetUserRole))
	m.Handle("PATCH /manage/admin/activate-user", s.authed(adminOnly, s.handleSetActive(true)))
	m.Handle("PATCH /manage/admin/deactivate-user", s.authed(adminOnly, s.handleSetActive(false)))
	m.Handle("GET /manage/users/invited", s.authed(adminOnly, s.handleInvitedUsers))
	m.Handle("PUT /manage/admin/users", s.authed(minting(adminOnly), s.handleInviteUsers))
	m.Handle("POST /manage/admin/invitations", s.authed(minting(adminOnly), s.handleIssueInvitations))
	m.Handle("PATCH /manage/admin/remove-invited-user", s.authed(adminOnly, s.handleRemoveInvitation))
	m.Handle("GET /manage/admin/sessions", s.authed(adminOnly, s.handleSessions))
	m.Handle("DELETE /manage/admin/sessions/{session_id}", s.authed(adminOnly, s.handleEndSession))
	m.Handle("POST /manage/admin/end-user-sessions", s.authed(adminOnly, s.handleEndUserSessions))
	m.Handle("POST /manage/admin/reset-password", s.authed(minting(adminOnly), s.handleResetPassword))

	// The company's directory (SCIM 2.0, api/scim.go): discovery is public;
	// the rest takes the directory's SCIM token, which opens nothing else,
	// and nothing else opens it. Admins manage the token.
	m.Handle("GET /scim/v2/ServiceProviderConfig", s.scimPublic(s.handleSCIMServiceProviderConfig))
	m.Handle("GET /scim/v2/ResourceTypes", s.scimPublic(s.handleSCIMResourceTypes))
	m.Handle("GET /scim/v2/ResourceTypes/{name}", s.scimPublic(s.handleSCIMResourceType))
	m.Handle("GET /scim/v2/Schemas", s.scimPublic(s.handleSCIMSchemas))
	m.Handle("GET /scim/v2/Schemas/{id}", s.scimPublic(s.handleSCIMSchema))
	users, groups := s.scimUsers(), s.scimGroups()
	m.Handle("GET /scim/v2/Users", s.scimAuthed(users.handleList))
	m.Handle("POST /scim/v2/Users", s.scimAuthed(users.handleCreate))
	m.Handle("GET /scim/v2/Users/{user_id}", s.scimAuthed(users.handleGet))
	m.Handle("PUT /scim/v2/Users/{user_id}", s.scimAuthed(users.handleReplace))
	m.Handle("PATCH /scim/v2/Users/{user_id}", s.scimAuthed(users.handlePatch))
	m.Handle("DELETE /scim/v2/Users/{user_id}", s.scimAuthed(users.handleDelete))
	m.Handle("GET /scim/v2/Groups", s.scimAuthed(groups.handleList))
	m.Handle("POST /scim/v2/Groups", s.scimAuthed(groups.handleCreate))
	m.Handle("GET /scim/v2/Groups/{group_id}", s.scimAuthed(groups.handleGet))
	m.Handle("PUT /scim/v2/Groups/{group_id}", s.scimAuthed(groups.handleReplace))
	m.Handle("PATCH /scim/v2/Groups/{group_id}", s.scimAuthed(groups.handlePatch))
	m.Handle("DELETE /scim/v2/Groups/{group_id}", s.scimAuthed(groups.handleDelete))
	m.Handle("POST /scim/v2/.search", s.scimAuthed(s.handleSCIMSearch)) // 501 (api/scimsearch.go)
	m.Handle("POST /scim/v2/Users/.search", s.scimAuthed(s.handleSCIMSearch))
	m.Handle("POST /scim/v2/Groups/.search", s.scimAuthed(s.handleSCIMSearch))
	m.Handle("GET /admin/enterprise-settings/scim/token", s.authed(adminOnly, s.handleGetSCIMToken))
	m.Handle("POST /admin/enterprise-settings/scim/token", s.authed(minting(adminOnly), s.handleCreateSCIMToken))
	m.Handle("DELETE /admin/enterprise-settings/scim/token", s.authed(adminOnly, s.handleRevokeSCIMToken))

	m.HandleFunc("GET /openapi.json", s.handleOpenAPI) // public: this API's description
	m.HandleFunc("GET /docs", s.handleDocs)            // public: the description as a page

	// Operations (contract section 8), public: liveness, readiness, metrics,
	// the build.
	m.HandleFunc("GET /health", s.handleHealth)
	m.HandleFunc("GET /ready", s.handleReady)
	m.HandleFunc("GET /metrics", s.handleMetrics)
	m.HandleFunc("GET /version", s.handleVersion)

	// The admin page (package web), public; the page's API calls carry the
	// session cookie (or an API key).
	page := web.Handler()
	m.Handle("GET /{$}", page)
	m.Handle("GET /assets/", page)

	// Everything else: 404, or 405 when the path exists for other methods.
	m.Handle("/", http.HandlerFunc(s.handleNoRoute))
}
