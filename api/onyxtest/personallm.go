package onyxtest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// Assistants and the models and tools they may use: the replays of Onyx
// v4.6.1's llm_provider/test_llm_provider_persona_access.py,
// llm_provider/test_provider_listing_cache.py and
// llm_workflows/test_tool_policy_enforcement.py, with what they need of
// PersonaManager (managers/persona.py: create and edit) and of
// ChatSessionManager.create with an assistant.

// ---- PersonaManager (persona.py), create and edit ----

// personaSpec is the arguments of PersonaManager.create, and what its
// DATestPersona keeps for edit.
type personaSpec struct {
	ID                          int64
	Name, Description           string // "" for the manager's defaults.
	IsPublic                    *bool  // nil: True.
	ToolIDs                     []int64
	Groups                      []int64
	DefaultModelConfigurationID *int64
}

// specUpsert is PersonaUpsertRequest as model_dump(mode="json") sends
// it for s, with the manager's defaults.
func specUpsert(s personaSpec) map[string]any {
	orEmpty := func(ids []int64) []int64 {
		if ids == nil {
			return []int64{}
		}
		return ids
	}
	return map[string]any{"name": s.Name, "description": s.Description, "document_set_ids": []int64{},
		"is_public": s.IsPublic == nil || *s.IsPublic, "default_model_configuration_id": s.DefaultModelConfigurationID,
		"starter_messages": nil, "users": []string{}, "groups": orEmpty(s.Groups), "tool_ids": orEmpty(s.ToolIDs),
		"remove_image": nil, "uploaded_image_id": nil, "icon_name": nil, "search_start_date": nil, "label_ids": []int64{},
		"is_featured": false, "display_priority": nil, "user_file_ids": []string{}, "hierarchy_node_ids": []int64{},
		"document_ids": []string{}, "system_prompt": "System prompt for " + s.Name, "replace_base_system_prompt": false,
		"task_prompt": "Task prompt for " + s.Name, "datetime_aware": false}
}

// makePersona is PersonaManager.create: POST /persona, raise_for_status,
// the id of the answer.
func (c client) makePersona(by User, s personaSpec) (personaSpec, error) {
	if s.Name == "" {
		s.Name = "test-persona-" + uuid.NewString()
	}
	if s.Description == "" {
		s.Description = "Description for " + s.Name
	}
	r, err := c.do(by, "POST", "/persona", specUpsert(s))
	if err != nil {
		return s, err
	}
	var out struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal(r.Body, &out); err != nil {
		return s, err
	}
	s.ID = out.ID
	return s, nil
}

// editPersonaSpec is PersonaManager.edit with default_model_configuration_id:
// PATCH /persona/{id} with the persona's fields and that change.
func (c client) editPersonaSpec(s personaSpec, by User, model *int64) (personaSpec, error) {
	if model != nil {
		s.DefaultModelConfigurationID = model
	}
	_, err := c.do(by, "PATCH", fmt.Sprintf("/persona/%d", s.ID), specUpsert(s))
	return s, err
}

// createPersonaChatSession is ChatSessionManager.create with persona_id.
func (c client) createPersonaChatSession(by User, personaID int64) (daChatSession, error) {
	var out struct {
		ID string `json:"chat_session_id"`
	}
	r, err := c.do(by, "POST", "/chat/create-chat-session", map[string]any{"persona_id": personaID, "description": "Test chat session", "project_id": nil})
	if err != nil {
		return daChatSession{}, err
	}
	if err := json.Unmarshal(r.Body, &out); err != nil {
		return daChatSession{}, err
	}
	return daChatSession{ID: out.ID, PersonaID: personaID, Description: "Test chat session"}, nil
}

// ---- llm_provider/test_llm_provider_persona_access.py ----

// personaProviders is the module's GET /llm/persona/{id}/providers, with
// the names of the providers of a 200.
func (c client) personaProviders(t *testing.T, by User, personaID int64) (*Response, []string) {
	t.Helper()
	r := c.tg.Do(by, "GET", fmt.Sprintf("/llm/persona/%d/providers", personaID), nil)
	var out struct {
		Providers []struct {
			Name *string `json:"name"`
		} `json:"providers"`
		DefaultText *onyxDefaultModel `json:"default_text"`
	}
	var names []string
	if r.Status == 200 {
		must(0, json.Unmarshal(r.Body, &out))(t)
		for _, p := range out.Providers {
			names = append(names, deref(p.Name))
		}
	}
	return r, names
}

// detail returns the detail of an error's body.
func detail(t *testing.T, r *Response) string {
	t.Helper()
	var out struct {
		Detail string `json:"detail"`
	}
	must(0, json.Unmarshal(r.Body, &out))(t)
	return out.Detail
}

// usersAndGroups is the module's users_and_groups fixture: admin, basic,
// group 1 with basic, group 2 without.
func usersAndGroups(t *testing.T, c client) (admin, basic User, group1, group2 int64) {
	t.Helper()
	a := adminUser(t, c)
	b := must(c.createUser("basic_user", ""))(t)
	g1 := must(c.createGroup(a.caller(), "test_group_1", []string{b.ID}, nil))(t)
	g2 := must(c.createGroup(a.caller(), "test_group_2", nil, nil))(t)
	return a.caller(), b.caller(), g1.ID, g2.ID
}

var llmPersonaReplays = []Replay{
	{Name: "llm_provider/test_llm_provider_persona_access.py/test_unauthorized_persona_access_returns_403", Run: func(t *testing.T, c client) {
		admin, basic, _, g2 := usersAndGroups(t, c)
		p := must(c.makePersona(admin, personaSpec{Name: "Restricted Persona", Description: "Only accessible to group2", IsPublic: ptr(false), Groups: []int64{g2}}))(t)
		r, _ := c.personaProviders(t, basic, p.ID)
		check(t, r.Status == 403, "status %d: %s", r.Status, clip(r.Body))
		check(t, strings.Contains(detail(t, r), "don't have access to this assistant"), "detail %s", clip(r.Body))
	}},
	{Name: "llm_provider/test_llm_provider_persona_access.py/test_authorized_persona_access_returns_filtered_providers", Run: func(t *testing.T, c client) {
		admin, basic, g1, _ := usersAndGroups(t, c)
		p := must(c.makePersona(admin, personaSpec{Name: "Accessible Persona", Description: "Accessible to group1", IsPublic: ptr(false), Groups: []int64{g1}}))(t)
		restricted := must(c.createLLMProvider(admin, llmProviderArgs{Name: "Restricted Provider", APIKey: "test-key", DefaultModelName: "gpt-4o",
			IsPublic: ptr(false), Groups: []int64{}, Personas: []int64{p.ID}}))(t)
		r, names := c.personaProviders(t, basic, p.ID)
		check(t, r.Status == 200, "status %d: %s", r.Status, clip(r.Body))
		check(t, slices.Contains(names, deref(restricted.Name)), "providers %v", names)
	}},
	{Name: "llm_provider/test_llm_provider_persona_access.py/test_persona_id_zero_applies_rbac", Run: func(t *testing.T, c client) {
		admin, basic, _, g2 := usersAndGroups(t, c)
		restricted := must(c.createLLMProvider(admin, llmProviderArgs{Name: "Group2 Only Provider", APIKey: "test-key", DefaultModelName: "gpt-4o",
			IsPublic: ptr(false), Groups: []int64{g2}, Personas: []int64{}}))(t)
		r, names := c.personaProviders(t, basic, 0)
		check(t, r.Status == 200, "status %d: %s", r.Status, clip(r.Body))
		check(t, !slices.Contains(names, deref(restricted.Name)), "providers %v", names)
	}},
	{Name: "llm_provider/test_llm_provider_persona_access.py/test_admin_can_query_any_persona", Run: func(t *testing.T, c client) {
		admin, _, _, g2 := usersAndGroups(t, c)
		p := must(c.makePersona(admin, personaSpec{Name: "Admin Test Persona", Description: "Only accessible to group2", IsPublic: ptr(false), Groups: []int64{g2}}))(t)
		restricted := must(c.createLLMProvider(admin, llmProviderArgs{Name: "Admin Test Provider", APIKey: "test-key", DefaultModelName: "gpt-4o",
			IsPublic: ptr(false), Groups: []int64{}, Personas: []int64{p.ID}}))(t)
		r, names := c.personaProviders(t, admin, p.ID)
		check(t, r.Status == 200, "status %d: %s", r.Status, clip(r.Body))
		check(t, slices.Contains(names, deref(restricted.Name)), "providers %v", names)
	}},
	{Name: "llm_provider/test_llm_provider_persona_access.py/test_public_persona_accessible_to_all", Run: func(t *testing.T, c client) {
		admin, basic, _, _ := usersAndGroups(t, c)
		public := must(c.createLLMProvider(admin, llmProviderArgs{Name: "Public Provider", APIKey: "test-key", DefaultModelName: "gpt-4o", IsPublic: ptr(true)}))(t)
		p := must(c.makePersona(admin, personaSpec{Name: "Public Persona", Description: "Accessible to everyone", IsPublic: ptr(true), Groups: []int64{}}))(t)
		r, names := c.personaProviders(t, basic, p.ID)
		check(t, r.Status == 200, "status %d: %s", r.Status, clip(r.Body))
		check(t, len(names) > 0 && slices.Contains(names, deref(public.Name)), "providers %v", names)
	}},
	{Name: "llm_provider/test_llm_provider_persona_access.py/test_nonexistent_persona_returns_404", Run: func(t *testing.T, c client) {
		_, basic, _, _ := usersAndGroups(t, c)
		r, _ := c.personaProviders(t, basic, 99999)
		check(t, r.Status == 404, "status %d: %s", r.Status, clip(r.Body))
		check(t, strings.Contains(detail(t, r), "Persona not found"), "detail %s", clip(r.Body))
	}},
	{Name: "llm_provider/test_provider_listing_cache.py/test_persona_default_model_edit_invalidates_listing_cache", Run: func(t *testing.T, c client) {
		admin := adminUser(t, c).caller()
		a := must(c.createLLMProvider(admin, llmProviderArgs{APIKey: "test-key", DefaultModelName: "gpt-4o-mini"}))(t)
		b := must(c.createLLMProvider(admin, llmProviderArgs{APIKey: "test-key", DefaultModelName: "gpt-4o", NoDefault: true}))(t)
		p := must(c.makePersona(admin, personaSpec{DefaultModelConfigurationID: &a.ModelConfigurationIDs[0]}))(t)
		defaultText := func() *onyxDefaultModel {
			r := must(c.do(admin, "GET", fmt.Sprintf("/llm/persona/%d/providers", p.ID), nil))(t)
			var out struct {
				DefaultText *onyxDefaultModel `json:"default_text"`
			}
			must(0, json.Unmarshal(r.Body, &out))(t)
			return out.DefaultText
		}
		d := defaultText()
		check(t, d != nil && *d == onyxDefaultModel{a.ID, "gpt-4o-mini"}, "default_text %+v, want provider %d gpt-4o-mini", d, a.ID)
		p = must(c.editPersonaSpec(p, admin, &b.ModelConfigurationIDs[0]))(t)
		d = defaultText()
		check(t, d != nil && *d == onyxDefaultModel{b.ID, "gpt-4o"}, "default_text %+v, want provider %d gpt-4o", d, b.ID)
	}},
}

// ---- llm_workflows/test_tool_policy_enforcement.py ----

// toolPolicySetup is each test's setup: a connector for the search tool
// (_seed_connector_for_search_tool), the provider of the module's dummy
// key on the Target's scripted server (_ensure_llm_provider), the search
// tool's id, an assistant of the admin's with tools, and a session with
// it.
func (c client) toolPolicySetup(t *testing.T, withSearch bool) (admin User, search int64, s daChatSession) {
	t.Helper()
	admin = adminUser(t, c).caller()
	must(c.createCCPairFromScratch(admin, "", "", nil, "ingestion_api"))(t)
	base := c.tg.ModelBase
	must(c.createLLMProvider(admin, llmProviderArgs{APIKey: "sk-mock-tool-policy-tests", APIBase: &base}))(t)
	search = c.searchToolID(t, admin)
	tools := []int64{}
	if withSearch {
		tools = []int64{search}
	}
	p := must(c.makePersona(admin, personaSpec{ToolIDs: tools}))(t)
	return admin, search, must(c.createPersonaChatSession(admin, p.ID))(t)
}

// sendOrRefused is send_message read as the tests read it. Onyx answers a
// forced tool that is not offered with a 200 whose stream holds the error
// line; Quarry refuses it before the stream, with a 400 whose detail is
// Onyx's error (docs/decisions.md, "Chat"): the replay reads that detail
// as analyze_response reads the line, and asserts the 400.
func (c client) sendOrRefused(t *testing.T, s daChatSession, message string, by User, a sendArgs) streamedResponse {
	t.Helper()
	r := c.postChatMessage(s.ID, message, by, a)
	if r.Status != 200 {
		check(t, r.Status == 400, "status %d: %s", r.Status, clip(r.Body))
		e := detail(t, r)
		return streamedResponse{Error: &e}
	}
	return must(analyzeResponse(r))(t)
}

// wantSearchForced asserts test_forced_tool_executes_when_available's
// and test_run_search_always_maps_to_forced_search_tool's answer.
func wantSearchForced(t *testing.T, r streamedResponse, args string) {
	t.Helper()
	check(t, r.Error == nil, "Unexpected stream error: %v", r.Error)
	used := false
	for _, name := range r.UsedTools {
		used = used || name == "internal_search"
	}
	check(t, used, "used_tools %v", r.UsedTools)
	check(t, len(r.ToolCallDebug) == 1, "%d tool_call_debug", len(r.ToolCallDebug))
	got, _ := json.Marshal(r.ToolCallDebug[0].ToolArgs)
	check(t, r.ToolCallDebug[0].ToolName == "internal_search" && string(got) == args, "tool_call_debug %+v", r.ToolCallDebug[0])
}

var toolPolicyReplays = []Replay{
	{Name: "llm_workflows/test_tool_policy_enforcement.py/test_forced_tool_executes_when_available", Run: func(t *testing.T, c client) {
		admin, search, s := c.toolPolicySetup(t, true)
		mock := `{"name":"internal_search","arguments":{"queries":["alpha"]}}`
		r := c.sendOrRefused(t, s, "force the search tool", admin, sendArgs{ForcedToolIDs: []int64{search}, MockLLMResponse: &mock})
		wantSearchForced(t, r, `{"queries":["alpha"]}`)
	}},
	{Name: "llm_workflows/test_tool_policy_enforcement.py/test_forced_tool_rejected_when_not_in_persona_tools", Run: func(t *testing.T, c client) {
		admin, search, s := c.toolPolicySetup(t, false)
		r := c.sendOrRefused(t, s, "try forcing a missing tool", admin, sendArgs{ForcedToolIDs: []int64{search}})
		check(t, r.Error != nil && *r.Error == fmt.Sprintf("Forced tool %d not found in tools", search), "error %v", r.Error)
		check(t, len(r.UsedTools) == 0, "used_tools %v", r.UsedTools)
	}},
	{Name: "llm_workflows/test_tool_policy_enforcement.py/test_allowed_tool_ids_excludes_tools_outside_allowlist", Run: func(t *testing.T, c client) {
		admin, _, s := c.toolPolicySetup(t, true)
		mock := `{"name":"internal_search","arguments":{"queries":["beta"]}}`
		r := c.sendOrRefused(t, s, "attempt tool use with empty allowlist", admin, sendArgs{AllowedToolIDs: []int64{}, MockLLMResponse: &mock})
		check(t, r.Error == nil, "Unexpected stream error: %v", r.Error)
		check(t, len(r.UsedTools) == 0, "used_tools %v", r.UsedTools)
		check(t, len(r.ToolCallDebug) == 0, "tool_call_debug %+v", r.ToolCallDebug)
	}},
	{Name: "llm_workflows/test_tool_policy_enforcement.py/test_forced_and_allowlist_conflict_returns_validation_error", Run: func(t *testing.T, c client) {
		admin, search, s := c.toolPolicySetup(t, true)
		r := c.sendOrRefused(t, s, "force a tool blocked by allowlist", admin, sendArgs{AllowedToolIDs: []int64{}, ForcedToolIDs: []int64{search}})
		check(t, r.Error != nil && *r.Error == fmt.Sprintf("Forced tool %d not found in tools", search), "error %v", r.Error)
		check(t, len(r.UsedTools) == 0, "used_tools %v", r.UsedTools)
	}},
	{Name: "llm_workflows/test_tool_policy_enforcement.py/test_run_search_always_maps_to_forced_search_tool", Run: func(t *testing.T, c client) {
		admin, search, s := c.toolPolicySetup(t, true)
		mock := `{"name":"internal_search","arguments":{"queries":["gamma"]}}`
		r := c.sendOrRefused(t, s, "always run search", admin, sendArgs{ForcedToolIDs: []int64{search}, MockLLMResponse: &mock})
		wantSearchForced(t, r, `{"queries":["gamma"]}`)
	}},
}
