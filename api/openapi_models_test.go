package api

import (
	"encoding/json"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/quarryhq/quarry/api/decode"
)

// TestOpenAPIRequestModels holds the request schemas of openapi.json to the
// request models of models.go: the same fields, required exactly when the
// model requires them, nullable exactly when they are decode.Optional, with
// the model's defaults and types; and each body and query is the one of its
// route. (openapi_test.go checks the routes and validates every exchange of
// the API tests.)
func TestOpenAPIRequestModels(t *testing.T) {
	doc := oasRead(t)
	bodies := []struct {
		route  string
		schema string
		model  any
	}{
		{"PATCH /manage/credential/{credential_id}", "CredentialPatch", credentialPatch{}},
		{"POST /manage/credential", "CredentialCreate", credentialCreate{}},
		{"PUT /admin/tool/custom/{tool_id}", "ToolUpdate", toolUpdate{}},
		{"POST /admin/tool/custom", "ToolCreate", toolCreate{}},
		{"POST /admin/tool/custom/validate", "ToolValidate", toolValidate{}},
		{"POST /manage/admin/connector", "ConnectorInput", connectorInput{}},
		{"PATCH /manage/admin/connector/{connector_id}", "ConnectorInput", connectorInput{}},
		{"PUT /manage/connector/{connector_id}/credential/{credential_id}", "CCPairCreate", ccPairCreate{}},
		{"POST /manage/admin/user-group", "UserGroupCreate", userGroupCreate{}},
		{"PATCH /manage/admin/user-group/{group_id}", "UserGroupUpdate", userGroupUpdate{}},
		{"POST /manage/admin/document-set", "DocumentSetCreationRequest", documentSetCreation{}},
		{"PATCH /manage/admin/document-set", "DocumentSetUpdateRequest", documentSetUpdate{}},
		{"GET /manage/document-set-public", "CheckDocSetPublicRequest", checkDocSetPublic{}},
		{"POST /manage/admin/user-group/{group_id}/set-curator", "SetCurator", setCurator{}},
		{"POST /admin/api-key", "APIKeyCreate", apiKeyCreate{}},
		{"PATCH /admin/api-key/{api_key_id}", "APIKeyCreate", apiKeyCreate{}},
		{"POST /admin/oauth-config", "OAuthConfigCreate", oauthConfigCreate{}},
		{"POST /admin/oauth-config/create", "OAuthConfigCreate", oauthConfigCreate{}},
		{"PUT /admin/oauth-config/{oauth_config_id}", "OAuthConfigUpdate", oauthConfigUpdate{}},
		{"POST /oauth-config/initiate", "OAuthInitiateRequest", oauthInitiate{}},
		{"POST /tool/{tool_id}/run", "ToolRun", toolRun{}},
		{"POST /auth/register", "RegisterRequest", registerRequest{}},
		{"POST /auth/login", "LoginForm", loginForm{}},
		{"PATCH /manage/set-user-role", "SetUserRole", setUserRole{}},
		{"PATCH /manage/admin/activate-user", "UserEmail", userEmail{}},
		{"PATCH /manage/admin/deactivate-user", "UserEmail", userEmail{}},
		{"PATCH /manage/admin/remove-invited-user", "UserEmail", userEmail{}},
		{"POST /manage/admin/end-user-sessions", "UserEmail", userEmail{}},
		{"PUT /manage/admin/users", "InviteUsers", inviteUsers{}},
		{"POST /manage/admin/invitations", "InviteUsers", inviteUsers{}},
		{"POST /auth/change-password", "ChangePassword", changePassword{}},
		{"POST /manage/admin/reset-password", "UserEmail", userEmail{}},
		{"PUT /manage/admin/credential/{credential_id}", "CredentialDataUpdate", credentialDataUpdate{}},
		{"PUT /manage/admin/cc-pair/{cc_pair_id}/status", "CCPairStatusUpdate", ccPairStatusUpdate{}},
		{"POST /manage/admin/connector/run-once", "RunConnectorRequest", runConnectorRequest{}},
		{"POST /onyx-api/ingestion", "IngestionDocument", ingestionDocument{}},
		{"POST /search/send-search-message", "SendSearchQueryRequest", sendSearchQuery{}},
		{"POST /search", "SearchRequest", searchAPIRequest{}},
		{"POST /worker/register", "WorkerRegister", workerRegistration{}},
		{"POST /worker/heartbeat", "WorkerHeartbeat", heartbeat{}},
		{"PUT /worker/attempts/{attempt_id}/credential", "AttemptCredential", attemptCredentialUpdate{}},
		{"POST /worker/attempts/{attempt_id}/progress", "AttemptProgress", progressReport{}},
		{"POST /worker/attempts/{attempt_id}/finish", "AttemptFinish", attemptFinish{}},
		{"POST /admin/worker/registration-token", "WorkerRegistrationCreate", workerRegistrationCreate{}},
		{"POST /manage/admin/deletion-attempt", "CCPairIdentifier", ccPairIdentifier{}},
		{"POST /manage/admin/user-group/{group_id}/add-users", "AddUsers", addUsers{}},
		{"PATCH /admin/tool/status", "ToolStatusUpdate", toolStatusUpdate{}},
		{"POST /user/pats", "CreateTokenRequest", patCreate{}},
		{"PUT /admin/llm/provider", "LLMProviderUpsertRequest", llmProviderUpsert{}},
		{"POST /admin/llm/default", "DefaultModel", defaultModelBody{}},
		{"POST /admin/llm/test", "TestLLMRequest", testLLM{}},
		{"POST /admin/mcp/server", "MCPServerSimpleCreateRequest", mcpServerCreate{}},
		{"POST /admin/mcp/servers/create", "MCPToolCreateRequest", mcpServerSetup{}},
		{"POST /admin/mcp/servers/update", "MCPToolUpdateRequest", mcpServerUpdate{}},
		{"PATCH /admin/mcp/server/{server_id}", "MCPServerSimpleUpdateRequest", mcpServerPatch{}},
		{"POST /admin/mcp/oauth/connect", "MCPUserOAuthConnectRequest", mcpOAuthConnect{}},
		{"POST /mcp/oauth/connect", "MCPUserOAuthConnectRequest", mcpOAuthConnect{}},
		{"POST /mcp/user-credentials", "MCPUserCredentialsRequest", mcpUserCredentials{}},
		{"PUT /manage/admin/user-group/{group_id}/permissions", "SetPermission", setPermission{}},
		{"POST /manage/admin/connector/indexing-status", "IndexingStatusRequest", indexingStatusRequest{}},
		{"POST /admin/enterprise-settings/scim/token", "ScimTokenCreate", scimTokenCreate{}},
		{"POST /chat/create-chat-session", "ChatSessionCreationRequest", chatSessionCreation{}},
		{"POST /chat/send-chat-message", "SendMessageRequest", sendMessage{}},
		{"PUT /chat/rename-chat-session", "ChatRenameRequest", chatRename{}},
		{"PATCH /chat/chat-session/{session_id}", "ChatSessionUpdateRequest", chatSessionUpdate{}},
		{"POST /chat/create-chat-message-feedback", "ChatFeedbackRequest", chatFeedback{}},
		{"PATCH /admin/default-assistant", "DefaultAssistantUpdateRequest", defaultAssistantUpdate{}},
		{"POST /persona", "PersonaUpsertRequest", personaUpsert{}},
		{"PATCH /persona/{persona_id}", "PersonaUpsertRequest", personaUpsert{}},
		{"PATCH /persona/{persona_id}/share", "PersonaShareRequest", personaShare{}},
		{"PATCH /persona/{persona_id}/public", "IsPublicRequest", isPublic{}},
		{"POST /persona/{persona_id}/transfer-ownership", "TransferPersonaOwnershipRequest", transferOwnership{}},
		{"POST /persona/labels", "PersonaLabelCreate", personaLabelCreate{}},
		{"PATCH /admin/persona/label/{label_id}", "PersonaLabelPatchRequest", personaLabelPatch{}},
		{"PATCH /admin/agents/display-priorities", "DisplayPriorityRequest", displayPriorities{}},
	}
	withBody, checked := map[string]bool{}, map[string]bool{}
	// The JSON-RPC messages of Quarry's MCP endpoint are the SDK's, not a
	// request model.
	withBody["POST /mcp"] = true
	// The SCIM routes' bodies are read by package scim (not decode, not as
	// pydantic would): their schemas are checked by the SCIM tests that
	// send them; here, that each route has its own, in both of the JSON
	// media types SCIM clients send.
	for route, schema := range map[string]string{
		"POST /scim/v2/Users": "ScimUserInput", "PUT /scim/v2/Users/{user_id}": "ScimUserInput",
		"PATCH /scim/v2/Users/{user_id}": "ScimPatchOp", "POST /scim/v2/Groups": "ScimGroupInput",
		"PUT /scim/v2/Groups/{group_id}": "ScimGroupInput", "PATCH /scim/v2/Groups/{group_id}": "ScimPatchOp",
	} {
		withBody[route] = true
		op := doc.operation(t, route)
		for _, mediaType := range []string{"application/scim+json", "application/json"} {
			ref, _ := oasDig(op, "requestBody", "content", mediaType, "schema", "$ref").(string)
			if want := "#/components/schemas/" + schema; ref != want {
				t.Errorf("%s: %s request body is %q, want %q", route, mediaType, ref, want)
			}
		}
	}
	for _, b := range bodies {
		withBody[b.route] = true
		op := doc.operation(t, b.route)
		mediaType := "application/json"
		if oasIsForm(reflect.TypeOf(b.model)) {
			mediaType = "application/x-www-form-urlencoded"
		}
		ref, _ := oasDig(op, "requestBody", "content", mediaType, "schema", "$ref").(string)
		if want := "#/components/schemas/" + b.schema; ref != want {
			t.Errorf("%s: request body is %q, want %q", b.route, ref, want)
		}
		if required, _ := oasDig(op, "requestBody", "required").(bool); !required {
			t.Errorf("%s: request body not required", b.route)
		}
		if checked[b.schema] {
			continue
		}
		checked[b.schema] = true
		schema, _ := oasDig(doc.m, "components", "schemas", b.schema).(map[string]any)
		oasCheckModel(t, b.schema, reflect.TypeOf(b.model), schema)
	}
	// The models inside bodies, held to their schemas the same way.
	for schema, model := range map[string]any{"DocumentBase": documentBase{}, "ExternalAccess": externalAccess{},
		"BaseFilters": baseFilters{}, "MCPAuthTemplate": mcpAuthTemplate{}, "Header": header{}, "Tag": searchTag{}, "LLMOverride": llmOverride{},
		"ModelConfigurationUpsertRequest": modelConfigurationUpsert{}, "FederatedConnectorConfig": federatedConnectorConfig{}} {
		s, _ := oasDig(doc.m, "components", "schemas", schema).(map[string]any)
		oasCheckModel(t, schema, reflect.TypeOf(model), s)
	}
	// The multipart bodies of the upload, of a change of a file
	// connector's files and of an assistant's avatar are read by their
	// handlers (api/file.go, api/avatar.go), not decoded from a model.
	withBody["POST /manage/admin/connector/file/upload"] = true
	withBody["POST /manage/admin/connector/{connector_id}/files/update"] = true
	withBody["POST /admin/persona/upload-image"] = true
	for route, op := range doc.operations() {
		if _, ok := op["requestBody"]; ok && !withBody[route] {
			t.Errorf("%s: has a request body that this test does not check against its model", route)
		}
	}
	for route, model := range map[string]any{
		"GET /manage/admin/connector/status":                statusQuery{},
		"GET /query/valid-tags":                             validTagsRequest{},
		"GET /admin/audit-log":                              auditQuery{},
		"GET /manage/users/accepted":                        usersQuery{},
		"GET /manage/admin/sessions":                        sessionsQuery{},
		"PUT /manage/admin/cc-pair/{cc_pair_id}/name":       ccPairRename{},
		"GET /manage/users":                                 allUsersQuery{},
		"GET /manage/admin/user-group":                      groupsQuery{},
		"POST /oauth-config/callback":                       oauthCallbackQuery{},
		"POST /mcp/oauth/callback":                          mcpOAuthCallbackQuery{},
		"PATCH /admin/mcp/server/{server_id}/status":        mcpStatusQuery{},
		"GET /admin/mcp/server/{server_id}/tools/snapshots": mcpSnapshotsQuery{},
		// The requests of the other routes that decode path parameters or a
		// body (models.go): no query parameter that the document lacks, or
		// has beside them.
		"POST /admin/api-key":                                             createAPIKeyRequest{},
		"DELETE /admin/api-key/{api_key_id}":                              deleteAPIKeyRequest{},
		"PATCH /admin/api-key/{api_key_id}":                               updateAPIKeyRequest{},
		"POST /admin/api-key/{api_key_id}/regenerate":                     regenerateAPIKeyRequest{},
		"GET /manage/admin/cc-pair/{cc_pair_id}":                          getCCPairRequest{},
		"POST /manage/admin/cc-pair/{cc_pair_id}/prune":                   pruneCCPairRequest{},
		"GET /manage/admin/cc-pair/{cc_pair_id}/documents":                pairDocumentsQuery{},
		"GET /manage/admin/cc-pair/{cc_pair_id}/documents/{document_id}":  getPairDocumentRequest{},
		"GET /manage/admin/cc-pair/{cc_pair_id}/last_pruned":              getLastPrunedRequest{},
		"POST /manage/admin/cc-pair/{cc_pair_id}/sync-permissions":        syncCCPairRequest{},
		"GET /manage/admin/cc-pair/{cc_pair_id}/sync-permissions":         syncCCPairRequest{},
		"POST /manage/admin/cc-pair/{cc_pair_id}/sync-groups":             syncCCPairRequest{},
		"GET /manage/admin/cc-pair/{cc_pair_id}/sync-groups":              syncCCPairRequest{},
		"PUT /manage/admin/cc-pair/{cc_pair_id}/status":                   setCCPairStatusRequest{},
		"POST /manage/admin/deletion-attempt":                             deletionAttemptRequest{},
		"POST /manage/admin/connector":                                    createConnectorRequest{},
		"GET /manage/connector/{connector_id}":                            getConnectorRequest{},
		"PATCH /manage/admin/connector/{connector_id}":                    updateConnectorRequest{},
		"DELETE /manage/admin/connector/{connector_id}":                   deleteConnectorRequest{},
		"POST /manage/admin/connector/file/upload":                        uploadConnectorFilesRequest{},
		"GET /worker/attempts/{attempt_id}/files/{file_id}":               attemptFileRequest{},
		"PUT /manage/connector/{connector_id}/credential/{credential_id}": createCCPairRequest{},
		"PATCH /manage/credential/{credential_id}":                        updateCredentialRequest{},
		"PUT /manage/admin/credential/{credential_id}":                    editCredentialRequest{},
		"POST /manage/credential":                                         createCredentialRequest{},
		"GET /manage/credential/{credential_id}":                          getCredentialRequest{},
		"DELETE /manage/credential/{credential_id}":                       deleteCredentialRequest{},
		"POST /manage/admin/user-group":                                   createGroupRequest{},
		"PATCH /manage/admin/user-group/{group_id}":                       updateGroupRequest{},
		"POST /manage/admin/user-group/{group_id}/add-users":              addGroupUsersRequest{},
		"DELETE /manage/admin/user-group/{group_id}":                      deleteGroupRequest{},
		"POST /manage/admin/document-set":                                 createDocumentSetRequest{},
		"PATCH /manage/admin/document-set":                                updateDocumentSetRequest{},
		"DELETE /manage/admin/document-set/{document_set_id}":             deleteDocumentSetRequest{},
		"GET /manage/document-set":                                        documentSetsQuery{},
		"GET /manage/document-set-public":                                 documentSetPublicRequest{},
		"POST /manage/admin/user-group/{group_id}/set-curator":            setCuratorRequest{},
		"GET /manage/admin/user-group/{group_id}/permissions":             groupPermissionsRequest{},
		"PUT /manage/admin/user-group/{group_id}/permissions":             setGroupPermissionRequest{},
		"POST /manage/admin/connector/indexing-status":                    indexingStatusRoute{},
		"POST /admin/mcp/server":                                          createMCPServerSimpleRequest{},
		"POST /admin/mcp/servers/create":                                  setUpMCPServerRequest{},
		"PATCH /admin/mcp/server/{server_id}":                             updateMCPServerSimpleRequest{},
		"POST /admin/mcp/servers/update":                                  selectMCPToolsRequest{},
		"POST /mcp/user-credentials":                                      saveMCPCredentialsRequest{},
		"POST /mcp/oauth/connect":                                         mcpOAuthConnectRequest{},
		"POST /admin/oauth-config":                                        createOAuthConfigRequest{},
		"GET /admin/oauth-config/{oauth_config_id}":                       getOAuthConfigRequest{},
		"PUT /admin/oauth-config/{oauth_config_id}":                       updateOAuthConfigRequest{},
		"POST /oauth-config/initiate":                                     oauthInitiateRequest{},
		"DELETE /oauth-config/{oauth_config_id}/token":                    revokeOAuthTokenRequest{},
		"POST /user/pats":                                                 createPATRequest{},
		"DELETE /user/pats/{token_id}":                                    revokePATRequest{},
		"PATCH /manage/set-user-role":                                     setUserRoleRequest{},
		"PATCH /manage/admin/activate-user":                               setActiveRequest{},
		"PUT /manage/admin/users":                                         inviteUsersRequest{},
		"POST /manage/admin/invitations":                                  issueInvitationsRequest{},
		"PATCH /manage/admin/remove-invited-user":                         removeInvitationRequest{},
		"DELETE /manage/admin/sessions/{session_id}":                      endSessionRequest{},
		"POST /manage/admin/end-user-sessions":                            endUserSessionsRequest{},
		"POST /admin/enterprise-settings/scim/token":                      createSCIMTokenRequest{},
		"POST /auth/register":                                             registerRoute{},
		"POST /auth/change-password":                                      changePasswordRequest{},
		"POST /manage/admin/reset-password":                               resetPasswordRequest{},
		"PUT /admin/tool/custom/{tool_id}":                                updateToolRequest{},
		"POST /admin/tool/custom":                                         createToolRequest{},
		"POST /admin/tool/custom/validate":                                validateToolRequest{},
		"GET /tool/{tool_id}":                                             getToolRequest{},
		"DELETE /admin/tool/custom/{tool_id}":                             deleteToolRequest{},
		"PATCH /admin/tool/status":                                        setToolsEnabledRequest{},
		"DELETE /admin/oauth-config/{oauth_config_id}":                    deleteOAuthConfigRequest{},
		"POST /tool/{tool_id}/run":                                        runToolRequest{},
		"GET /chat/get-user-chat-sessions":                                chatSessionsQuery{},
		"GET /chat/get-chat-session/{session_id}":                         getChatSessionRequest{},
		"DELETE /chat/delete-chat-session/{session_id}":                   deleteChatSessionRequest{},
		"POST /chat/stop-chat-session/{chat_session_id}":                  stopChatSessionRequest{},
		"DELETE /chat/remove-chat-message-feedback":                       removeChatFeedbackRequest{},
		"POST /chat/send-chat-message":                                    sendMessageRequest{},
		"PATCH /chat/chat-session/{session_id}":                           patchChatSessionRequest{},
		"GET /admin/llm/provider":                                         llmProvidersQuery{},
		"PUT /admin/llm/provider":                                         putLLMProviderRequest{},
		"DELETE /admin/llm/provider/{provider_id}":                        deleteLLMProviderRequest{},
		"POST /admin/llm/default":                                         setDefaultModelRequest{},
		"POST /admin/llm/test":                                            testLLMRequest{},
	} {
		oasCheckQuery(t, route, reflect.TypeOf(model), doc.operation(t, route))
	}
}

// oasDocument is openapi.json as plain JSON values.
type oasDocument struct{ m map[string]any }

func oasRead(t *testing.T) oasDocument {
	t.Helper()
	b, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return oasDocument{m}
}

// operations returns the operations by route, "METHOD /path".
func (d oasDocument) operations() map[string]map[string]any {
	ops := map[string]map[string]any{}
	paths, _ := d.m["paths"].(map[string]any)
	for path, item := range paths {
		for method, op := range item.(map[string]any) {
			if o, ok := op.(map[string]any); ok && method == strings.ToLower(method) && method != "parameters" {
				ops[strings.ToUpper(method)+" "+path] = o
			}
		}
	}
	return ops
}

func (d oasDocument) operation(t *testing.T, route string) map[string]any {
	t.Helper()
	op := d.operations()[route]
	if op == nil {
		t.Fatalf("openapi.json has no operation %s", route)
	}
	return op
}

// oasDig walks nested JSON objects by key.
func oasDig(v any, oasKeys ...string) any {
	for _, k := range oasKeys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// oasCheckModel compares the schema of a request body with its model.
func oasCheckModel(t *testing.T, name string, model reflect.Type, schema map[string]any) {
	t.Helper()
	if schema == nil {
		t.Errorf("openapi.json has no schema %s", name)
		return
	}
	props, _ := schema["properties"].(map[string]any)
	var fields, required []string
	for i := range model.NumField() {
		f := model.Field(i)
		field, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if form, ok := f.Tag.Lookup("form"); ok {
			field = form
		}
		fields = append(fields, field)
		prop, _ := props[field].(map[string]any)
		if prop == nil {
			t.Errorf("%s: no property %s (%s.%s)", name, field, model.Name(), f.Name)
			continue
		}
		typ, isOptional := oasOptionalOf(f.Type)
		def, hasDefault := f.Tag.Lookup("default")
		switch {
		case isOptional:
			def, hasDefault = "null", true
		case !hasDefault:
			required = append(required, field)
		}
		want := oasSchemaOf(typ)
		if pattern, ok := f.Tag.Lookup("pattern"); ok {
			want["pattern"] = pattern
		}
		if n, ok := f.Tag.Lookup("min_length"); ok {
			want["minLength"] = oasJSON(n)
		}
		if _, ok := f.Tag.Lookup("set"); ok {
			want["uniqueItems"] = true
		}
		if n, ok := f.Tag.Lookup("max_length"); ok && typ.Kind() == reflect.Slice {
			want["maxItems"] = oasJSON(n)
		} else if ok {
			want["maxLength"] = oasJSON(n)
		}
		if n, ok := f.Tag.Lookup("ge"); ok {
			want["minimum"] = oasJSON(n)
		}
		oasCheckProperty(t, name+"."+field, want, isOptional, def, hasDefault, prop)
	}
	if extra := oasMissing(oasKeys(props), fields); len(extra) > 0 {
		t.Errorf("%s: properties %v are not fields of %s", name, extra, model.Name())
	}
	var got []string
	for _, r := range oasSlice(schema["required"]) {
		got = append(got, r.(string))
	}
	if !oasSameSet(got, required) {
		t.Errorf("%s: required = %v, want %v", name, got, required)
	}
}

// oasCheckQuery compares the query parameters of an operation with its model.
func oasCheckQuery(t *testing.T, route string, model reflect.Type, op map[string]any) {
	t.Helper()
	params := map[string]map[string]any{}
	for _, p := range oasSlice(op["parameters"]) {
		if p := p.(map[string]any); p["in"] == "query" {
			params[p["name"].(string)] = p
		}
	}
	var names []string
	for i := range model.NumField() {
		f := model.Field(i)
		name, ok := f.Tag.Lookup("query")
		if !ok {
			continue // A path parameter, checked with the route.
		}
		names = append(names, name)
		p := params[name]
		if p == nil {
			t.Errorf("%s: no query parameter %s", route, name)
			continue
		}
		typ, optional := oasOptionalOf(f.Type)
		schema, _ := p["schema"].(map[string]any)
		def, hasDefault := f.Tag.Lookup("default")
		if required := !optional && !hasDefault && typ.Kind() != reflect.Slice; (p["required"] == true) != required {
			t.Errorf("%s: query parameter %s: required is %v, want %v", route, name, p["required"], required)
		}
		got := oasStrip(schema)
		want := oasSchemaOf(typ)
		if ge, ok := f.Tag.Lookup("ge"); ok {
			want["minimum"] = oasJSON(ge)
		}
		if le, ok := f.Tag.Lookup("le"); ok {
			want["maximum"] = oasJSON(le)
		}
		if n, ok := f.Tag.Lookup("max_length"); ok {
			want["maxItems"] = oasJSON(n)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: query parameter %s (-model +document):\n%s", route, name, diff)
		}
		oasCheckDefault(t, route+" ?"+name, def, hasDefault, schema)
	}
	if extra := oasMissing(oasKeys(params), names); len(extra) > 0 {
		t.Errorf("%s: query parameters %v are not fields of %s", route, extra, model.Name())
	}
}

// oasIsForm reports whether model is a form (its fields are form fields).
func oasIsForm(model reflect.Type) bool {
	_, ok := model.Field(0).Tag.Lookup("form")
	return ok
}

// oasCheckProperty compares one property with the schema of its field.
func oasCheckProperty(t *testing.T, name string, want map[string]any, nullable bool, def string, hasDefault bool, prop map[string]any) {
	t.Helper()
	got, gotNullable := oasUnwrapNullable(oasStrip(prop))
	if gotNullable != nullable {
		t.Errorf("%s: nullable = %v, want %v", name, gotNullable, nullable)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s: type differs (-model +document):\n%s", name, diff)
	}
	oasCheckDefault(t, name, def, hasDefault, prop)
}

func oasCheckDefault(t *testing.T, name, def string, hasDefault bool, schema map[string]any) {
	t.Helper()
	got, ok := schema["default"]
	switch {
	case hasDefault && !ok:
		t.Errorf("%s: no default, want %s", name, def)
	case !hasDefault && ok:
		t.Errorf("%s: default %v, but the field is required", name, got)
	case hasDefault && !reflect.DeepEqual(got, oasJSON(def)):
		t.Errorf("%s: default %v, want %s", name, got, def)
	}
}

var (
	oasRawMessage = reflect.TypeFor[json.RawMessage]()
	oasTime       = reflect.TypeFor[time.Time]()
	oasUUID       = reflect.TypeFor[uuid.UUID]()
)

// oasSchemaOf returns the schema the oasDocument should give a Go type of a
// request model (package decode's mapping of Go types to Python ones).
func oasSchemaOf(typ reflect.Type) map[string]any {
	if _, ok := reflect.New(typ).Interface().(interface{ EnumValues() []string }); ok {
		name := typ.Name()
		if m, ok := reflect.New(typ).Interface().(interface{ ModelName() string }); ok {
			name = m.ModelName()
		}
		return map[string]any{"$ref": "#/components/schemas/" + name}
	}
	switch {
	case typ == oasRawMessage:
		return map[string]any{"type": "object", "additionalProperties": true}
	case typ == oasTime:
		return map[string]any{"type": "string", "format": "date-time"}
	case typ == oasUUID:
		return map[string]any{"type": "string", "format": "uuid"}
	}
	switch typ.Kind() {
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Int64:
		return map[string]any{"type": "integer", "format": "int64"}
	case reflect.Slice:
		return map[string]any{"type": "array", "items": oasSchemaOf(typ.Elem())}
	case reflect.Map:
		key := oasSchemaOf(typ.Key())
		if typ.Key().Kind() == reflect.Int64 {
			key = map[string]any{"type": "string"} // an object's names are strings; integers there are read from them
		}
		return map[string]any{"type": "object", "propertyNames": key, "additionalProperties": oasSchemaOf(typ.Elem())}
	case reflect.Struct:
		name := typ.Name()
		if m, ok := reflect.New(typ).Interface().(interface{ ModelName() string }); ok {
			name = m.ModelName()
		} else if m, ok := reflect.New(typ).Interface().(interface{ DataclassName() string }); ok {
			name = m.DataclassName()
		}
		return map[string]any{"$ref": "#/components/schemas/" + name}
	}
	return map[string]any{"unsupported Go type": typ.String()}
}

// oasOptionalOf returns T and true for a decode.Optional[T], typ and false
// otherwise.
func oasOptionalOf(typ reflect.Type) (reflect.Type, bool) {
	if typ.Kind() == reflect.Struct && typ.PkgPath() == reflect.TypeFor[decode.Optional[int]]().PkgPath() &&
		strings.HasPrefix(typ.Name(), "Optional[") {
		return typ.Field(2).Type, true // Present, Null, Value
	}
	return typ, false
}

// oasUnwrapNullable returns the schema s allows besides null, and whether it
// allows null: {"type": [T, "null"], ...} or {"anyOf": [S, {"type": "null"}]}.
func oasUnwrapNullable(s map[string]any) (map[string]any, bool) {
	if types, ok := s["type"].([]any); ok && len(types) == 2 && types[1] == "null" {
		out := maps.Clone(s)
		out["type"] = types[0]
		return out, true
	}
	if alts, ok := s["anyOf"].([]any); ok && len(alts) == 2 && reflect.DeepEqual(alts[1], map[string]any{"type": "null"}) {
		return oasStrip(alts[0].(map[string]any)), true
	}
	return s, false
}

// oasStrip returns s without the oasKeys that oasDocument rather than constrain.
func oasStrip(s map[string]any) map[string]any {
	out := maps.Clone(s)
	for _, k := range []string{"description", "default", "title", "examples"} {
		delete(out, k)
	}
	return out
}

func oasJSON(text string) any {
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		return "invalid JSON: " + text
	}
	return v
}

func oasSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

func oasKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func oasMissing(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	slices.Sort(out)
	return out
}

func oasSameSet(a, b []string) bool { return len(oasMissing(a, b)) == 0 && len(oasMissing(b, a)) == 0 }
