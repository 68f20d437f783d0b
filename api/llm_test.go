package api_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/internal/llmtest"
)

// The routes of model providers (api/llm.go), on the real database, with
// whole bodies.

// llmKey is the key of the tests' providers: 40 characters, so its mask
// shows its ends.
const llmKey = "sk-llm-test-key-0123456789abcdefghijklmn"

// llmKeyMask is llmKey as answers show it.
var llmKeyMask = quarry.MaskString(llmKey)

// The 403 of the admin routes of model providers, and of GET /llm/provider
// for those who may not chat: Onyx's.
const fxNoLLMPermission = `{"error_code":"INSUFFICIENT_PERMISSIONS","detail":"You do not have the required permissions for this action."}`

// llmView is the expected LLMProviderView of a provider.
func llmView(id int64, name any, kind string, key, base any, public bool, groups []int64, models string) string {
	return fxJSON(map[string]any{"name": name, "provider": kind, "api_key": key, "api_base": base, "api_version": nil,
		"custom_config": nil, "is_public": public, "is_auto_mode": false, "groups": fxIDs(groups), "personas": []int64{},
		"deployment_name": nil, "id": id, "model_configurations": rawJSON(models)})
}

// llmModel is the expected ModelConfigurationView of a model.
func llmModel(id int64, name string, visible bool, maxTokens any) string {
	return fxJSON(map[string]any{"id": id, "name": name, "is_visible": visible, "max_input_tokens": maxTokens,
		"supports_image_input": false, "supports_reasoning": false, "supported_reasoning_efforts": []string{},
		"is_recommended_default": false, "display_name": nil, "custom_display_name": nil, "provider_display_name": nil,
		"vendor": nil, "version": nil, "region": nil})
}

type rawJSON string

func (r rawJSON) MarshalJSON() ([]byte, error) { return []byte(r), nil }

// putProvider sends PUT /admin/llm/provider as u.
func (e *env) putProvider(u user, creation bool, body string) *response {
	e.t.Helper()
	return e.do(u, "PUT", fmt.Sprintf("/admin/llm/provider?is_creation=%t", creation), body)
}

func TestLLMProviders(t *testing.T) {
	e := newEnv(t)
	f := fx{e}
	member := e.user(quarry.RoleBasic, "member")
	g := f.group("models", []user{member})
	model := llmtest.New(t)
	base := model.BaseURL()

	// Create: the key masked, the first of each model name kept, groups
	// once each.
	r := e.putProvider(e.admin, true, fmt.Sprintf(`{"name": "vLLM", "provider": " OpenAI_Compatible ", "api_key": %q, "api_base": %q,
		"is_public": false, "groups": [%d, %d], "model_configurations": [
			{"name": "llama", "is_visible": true, "max_input_tokens": 8192},
			{"name": "qwen", "is_visible": false},
			{"name": "llama", "is_visible": false}]}`, llmKey, base, g, g))
	models := "[" + llmModel(1, "llama", true, 8192) + "," + llmModel(2, "qwen", false, nil) + "]"
	r.want(t, 200, llmView(1, "vLLM", "openai_compatible", llmKeyMask, base, false, []int64{g}, models))
	// OpenAI's own, with no key yet.
	e.putProvider(e.admin, true, `{"provider": "openai", "model_configurations": [{"name": "gpt-4o-mini", "is_visible": true}]}`).
		want(t, 200, llmView(2, nil, "openai", nil, nil, true, nil, "["+llmModel(3, "gpt-4o-mini", true, nil)+"]"))

	list := func(def any) string {
		return fxJSON(map[string]any{"providers": []rawJSON{
			rawJSON(llmView(1, "vLLM", "openai_compatible", llmKeyMask, base, false, []int64{g}, models)),
			rawJSON(llmView(2, nil, "openai", nil, nil, true, nil, "["+llmModel(3, "gpt-4o-mini", true, nil)+"]"))},
			"default_text": def, "default_vision": nil, "default_chat_naming": nil})
	}
	e.do(e.admin, "GET", "/admin/llm/provider", nil).want(t, 200, list(nil))
	e.do(e.admin, "GET", "/admin/llm/provider?include_image_gen=true", nil).want(t, 200, list(nil))

	// The default model: one the provider configures, made visible.
	e.do(e.admin, "POST", "/admin/llm/default", `{"provider_id": 1, "model_name": "nope"}`).
		want(t, 400, `{"error_code":"VALIDATION_ERROR","detail":"Model 'nope' is not a valid model for provider_id=1"}`)
	e.do(e.admin, "POST", "/admin/llm/default", `{"provider_id": 1, "model_name": "qwen"}`).want(t, 200, `null`)
	models = "[" + llmModel(1, "llama", true, 8192) + "," + llmModel(2, "qwen", true, nil) + "]"
	e.do(e.admin, "GET", "/admin/llm/provider", nil).want(t, 200, list(map[string]any{"provider_id": 1, "model_name": "qwen"}))

	// People see what they may use, without key or address.
	descriptor := func(id int64, name any, kind, display, models string) rawJSON {
		return rawJSON(fxJSON(map[string]any{"id": id, "name": name, "provider": kind, "provider_display_name": display,
			"model_configurations": rawJSON(models)}))
	}
	openai := descriptor(2, nil, "openai", "ChatGPT (OpenAI)", "["+llmModel(3, "gpt-4o-mini", true, nil)+"]")
	vllm := descriptor(1, "vLLM", "openai_compatible", "OpenAI-Compatible", models)
	usable := func(ps ...rawJSON) string {
		return fxJSON(map[string]any{"providers": ps, "default_text": map[string]any{"provider_id": 1, "model_name": "qwen"},
			"default_vision": nil, "default_chat_naming": nil})
	}
	e.do(member, "GET", "/llm/provider", nil).want(t, 200, usable(vllm, openai))
	e.do(e.admin, "GET", "/llm/provider", nil).want(t, 200, usable(vllm, openai))
	other := e.user(quarry.RoleCurator, "other")
	e.do(other, "GET", "/llm/provider", nil).want(t, 200, usable(openai))
	// A limited API key chats (Onyx's role_derived_permissions): it lists
	// the public providers.
	e.do(e.user(quarry.RoleLimited, "limited"), "GET", "/llm/provider", nil).want(t, 200, usable(openai))

	// A change that sends back the masked key, or a new one without
	// api_key_changed, keeps the stored key; a kept key goes to no other
	// api_base.
	change := func(key string, changed bool, base string) string {
		return fmt.Sprintf(`{"id": 1, "provider": "openai_compatible", "api_key": %q, "api_key_changed": %t, "api_base": %q,
			"is_public": false, "groups": [%d], "model_configurations": [
				{"name": "llama", "is_visible": true, "max_input_tokens": 8192}, {"name": "qwen", "is_visible": true}]}`, key, changed, base, g)
	}
	kept := llmView(1, "vLLM", "openai_compatible", llmKeyMask, base, false, []int64{g}, models)
	e.putProvider(e.admin, false, change(llmKeyMask, true, base)).want(t, 200, kept)
	e.putProvider(e.admin, false, change("sk-another-key-that-is-not-sent", false, base+"/")).want(t, 200,
		llmView(1, "vLLM", "openai_compatible", llmKeyMask, base+"/", false, []int64{g}, models))
	if p, err := e.db.LLMProvider(context.Background(), 1); err != nil || p.APIKey != llmKey {
		t.Errorf("the stored key after masked echoes: %q, %v", p.APIKey, err)
	}
	e.putProvider(e.admin, false, change(llmKeyMask, true, "https://elsewhere.example.com/v1")).
		want(t, 400, `{"error_code":"VALIDATION_ERROR","detail":"API base and/or custom config cannot be changed without changing the API key"}`)
	newKey := "sk-new-key-0123456789abcdefghijklmnopqrstu"
	e.putProvider(e.admin, false, change(newKey, true, "https://elsewhere.example.com/v1")).want(t, 200,
		llmView(1, "vLLM", "openai_compatible", quarry.MaskString(newKey), "https://elsewhere.example.com/v1", false, []int64{g}, models))

	// Onyx's is_creation rules, and what a change may not do.
	e.putProvider(e.admin, true, `{"id": 1, "name": "x", "provider": "openai"}`).
		want(t, 409, `{"error_code":"DUPLICATE_RESOURCE","detail":"LLM Provider with name x and id=1 already exists"}`)
	e.putProvider(e.admin, false, `{"id": 99, "provider": "openai"}`).
		want(t, 404, `{"error_code":"NOT_FOUND","detail":"LLM Provider with name None and id=99 does not exist"}`)
	e.putProvider(e.admin, false, `{"provider": "openai"}`).
		want(t, 404, `{"error_code":"NOT_FOUND","detail":"LLM Provider with name None and id=None does not exist"}`)
	e.putProvider(e.admin, true, `{"id": 99, "provider": "openai"}`).
		want(t, 400, `{"error_code":"VALIDATION_ERROR","detail":"LLM provider with id 99 not found"}`)
	for _, tt := range []struct{ body, detail string }{
		{`{"provider": "anthropic"}`, quarry.ErrorMessage(quarry.ErrLLMProviderKind("anthropic"))},
		{`{"provider": "openai", "personas": [4, 2]}`, "Invalid persona IDs: 2, 4"},
		{`{"provider": "openai", "groups": [999]}`, "User group 999 does not exist"},
		{fmt.Sprintf(`{"provider": "openai", "groups": [%d]}`, basicGroupID), "Cannot share with the default system group(s): Basic. Make the resource public instead."},
		{`{"provider": "openai_compatible", "api_base": "https://user:pw@h/v1"}`, "api_base must not contain a user name or password: give the key as api_key"},
		{`{"provider": "openai", "model_configurations": [{"name": "m", "is_visible": true, "max_input_tokens": 0}]}`, `max_input_tokens of model "m" must be a positive number of tokens`},
	} {
		e.putProvider(e.admin, true, tt.body).want(t, 400, fxJSON(map[string]string{"error_code": "VALIDATION_ERROR", "detail": tt.detail}))
	}
	hide := fmt.Sprintf(`{"id": 1, "provider": "openai_compatible", "api_base": "https://elsewhere.example.com/v1", "groups": [%d],
		"model_configurations": [{"name": "llama", "is_visible": true}, {"name": "qwen", "is_visible": false}]}`, g)
	e.putProvider(e.admin, false, hide).want(t, 400,
		`{"error_code":"VALIDATION_ERROR","detail":"Cannot hide the default model 'qwen'. Please change the default model before hiding."}`)

	// Deleting: the default's provider only with force.
	e.do(e.admin, "DELETE", "/admin/llm/provider/1", nil).want(t, 400, `{"error_code":"VALIDATION_ERROR","detail":"Cannot delete the default LLM provider"}`)
	e.do(e.admin, "DELETE", "/admin/llm/provider/2", nil).want(t, 200, `null`)
	e.do(e.admin, "DELETE", "/admin/llm/provider/2", nil).want(t, 404, `{"error_code":"NOT_FOUND","detail":"LLM Provider not found"}`)
	e.do(e.admin, "DELETE", "/admin/llm/provider/1?force=true", nil).want(t, 200, `null`)
	e.do(e.admin, "GET", "/admin/llm/provider", nil).want(t, 200, `{"providers":[],"default_text":null,"default_vision":null,"default_chat_naming":null}`)

	// The audit log names the fields, never the key.
	entries := f.audit("resource_type=llm_provider")
	var got []string
	for i := len(entries) - 1; i >= 0; i-- {
		a := entries[i]
		got = append(got, fmt.Sprintf("%s %s %v", a.Action, a.ResourceID, a.Fields))
	}
	want := []string{
		"llm_provider.create 1 [name provider api_key api_base is_public groups model_configurations]",
		"llm_provider.create 2 [provider is_public model_configurations]",
		"llm_provider.set_default 1 [default_text model_configurations]",
		"llm_provider.update 1 []",
		"llm_provider.update 1 [api_base]",
		"llm_provider.update 1 [api_key api_base]",
		"llm_provider.delete 2 []",
		"llm_provider.delete 1 [default_text]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("audit entries:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, a := range entries {
		if b := fxJSON(a); strings.Contains(b, "sk-") {
			t.Errorf("an audit entry holds a key: %s", b)
		}
	}
}

// TestLLMProviderGates checks who may call the routes of model providers.
func TestLLMProviderGates(t *testing.T) {
	e := newEnv(t, withLocalAccounts)
	routes := []struct{ method, path, body string }{
		{"GET", "/admin/llm/provider", ""},
		{"PUT", "/admin/llm/provider?is_creation=true", `{"provider": "openai"}`},
		{"DELETE", "/admin/llm/provider/1", ""},
		{"POST", "/admin/llm/default", `{"provider_id": 1, "model_name": "m"}`},
		{"POST", "/admin/llm/test", `{"provider": "openai", "model": "m", "api_key_changed": true, "custom_config_changed": false}`},
	}
	for _, role := range []quarry.Role{quarry.RoleGlobalCurator, quarry.RoleCurator, quarry.RoleBasic, quarry.RoleLimited} {
		u := e.user(role, string(role))
		for _, rt := range routes {
			var body any
			if rt.body != "" {
				body = rt.body
			}
			e.do(u, rt.method, rt.path, body).want(t, 403, fxNoLLMPermission)
		}
	}
	for _, rt := range append(routes, struct{ method, path, body string }{"GET", "/llm/provider", ""}) {
		e.do(user{}, rt.method, rt.path, nil).want(t, 401, fxNotAuthed)
	}
	// A personal access token scoped to search alone lists no provider; one
	// scoped to chat does.
	basic := e.person("chatter@example.com")
	_, search := e.makePAT(t, basic, `{"name":"s","scopes":["read:search"]}`)
	e.do(user{token: search}, "GET", "/llm/provider", nil).want(t, 403, fxNoLLMPermission)
	_, chat := e.makePAT(t, basic, `{"name":"c","scopes":["read:chat"]}`)
	e.do(user{token: chat}, "GET", "/llm/provider", nil).want(t, 200, `{"providers":[],"default_text":null,"default_vision":null,"default_chat_naming":null}`)
}

// TestLLMProviderGoldens replays the 422s of the request models of model
// providers, generated by scripts/pydantic_goldens.py with pydantic.
func TestLLMProviderGoldens(t *testing.T) {
	e := newEnv(t)
	f := fx{e}
	for _, tt := range []struct{ model, method string }{
		{"llmProviderUpsert", "PUT"}, {"llmProvidersQuery", "GET"}, {"llmProviderDelete", "DELETE"},
		{"defaultModel", "POST"}, {"testLLM", "POST"},
	} {
		for _, c := range fxGoldens(t, tt.model) {
			t.Run(tt.model+"/"+c.Name, func(t *testing.T) {
				f.replay(t, e.admin, tt.method, "", c)
			})
		}
	}
}

// TestLLMProviderTest checks POST /admin/llm/test against the scripted
// model server: a new key, the stored one, the provider's refusals, and
// the egress guard.
func TestLLMProviderTest(t *testing.T) {
	model := llmtest.New(t)
	model.SetKey(llmKey)
	model.SetModels("llama")
	base := model.BaseURL()
	e := newEnv(t, allowLoopback)
	test := func(body string) *response { return e.do(e.admin, "POST", "/admin/llm/test", body) }
	bad := func(detail string) string {
		return fxJSON(map[string]string{"error_code": "VALIDATION_ERROR", "detail": detail})
	}
	test(fmt.Sprintf(`{"provider": "openai_compatible", "model": "llama", "api_key": %q, "api_base": %q,
		"api_key_changed": true, "custom_config_changed": false}`, llmKey, base)).want(t, 200, `null`)
	got := model.Requests()
	if len(got) != 1 || got[0].Model != "llama" || len(got[0].Messages) != 1 || got[0].Messages[0].Content != "Do not respond" ||
		*got[0].MaxTokens != 50 || got[0].Header.Get("Authorization") != "Bearer "+llmKey {
		t.Errorf("what reached the model: %+v", got)
	}
	test(fmt.Sprintf(`{"provider": "openai_compatible", "model": "llama", "api_key": "sk-wrong-0123456789", "api_base": %q,
		"api_key_changed": true, "custom_config_changed": false}`, base)).
		want(t, 400, bad("the model's provider answered 401: the provider refused the key"))

	// The stored provider's key, when the test does not change it.
	e.putProvider(e.admin, true, fmt.Sprintf(`{"provider": "openai_compatible", "api_key": %q, "api_base": %q,
		"model_configurations": [{"name": "llama", "is_visible": true}]}`, llmKey, base)).decode(t, &struct{}{})
	test(fmt.Sprintf(`{"id": 1, "provider": "openai_compatible", "model": "llama", "api_key": %q, "api_base": %q,
		"api_key_changed": false, "custom_config_changed": false}`, llmKeyMask, base)).want(t, 200, `null`)
	test(fmt.Sprintf(`{"id": 1, "provider": "openai_compatible", "model": "mistral", "api_key": %q, "api_base": %q,
		"api_key_changed": true, "custom_config_changed": false}`, llmKeyMask, base)).
		want(t, 400, bad("the model's provider answered 404: the provider has no such model, or api_base is not the URL of its OpenAI-compatible API: The model `mistral` does not exist or you do not have access to it."))
	test(`{"id": 1, "provider": "openai_compatible", "model": "llama", "api_base": "http://127.0.0.2:9/v1",
		"api_key_changed": false, "custom_config_changed": false}`).
		want(t, 400, bad("API base and/or custom config cannot be changed without changing the API key"))
	model.On("Do not respond", llmtest.Script{Status: 429, Headers: llmtest.RetryAfter(7), Error: llmtest.APIError{Message: "Slow down."}})
	test(fmt.Sprintf(`{"id": 1, "provider": "openai_compatible", "model": "llama", "api_base": %q,
		"api_key_changed": false, "custom_config_changed": false}`, base)).
		want(t, 400, bad("the model's provider answered 429: the provider is limiting requests; retry after 7s: Slow down."))

	// Without the operator's leave, a server on loopback is not called.
	guarded := newEnv(t)
	guarded.do(guarded.admin, "POST", "/admin/llm/test", fmt.Sprintf(`{"provider": "openai_compatible", "model": "llama",
		"api_key": %q, "api_base": %q, "api_key_changed": true, "custom_config_changed": false}`, llmKey, base)).
		want(t, 400, bad("the model's provider failed: Quarry does not call 127.0.0.1: it is a loopback address. To call internal APIs, add the host or its network to QUARRY_TOOL_EGRESS_ALLOW"))
	// The two tests that passed and the one limited: the server refused
	// the others before they reached the model (key, model), or Quarry
	// did not send them (the key elsewhere, the guard).
	if n := len(model.Requests()); n != 3 {
		t.Errorf("%d requests reached the model, want 3", n)
	}
}

// TestLLMProviderPersonas checks providers restricted to assistants: the
// admin's view keeps them, GET /llm/provider leaves them out, and GET
// /llm/persona/{id}/providers lists what a person may use with an
// assistant (Onyx v4.6.1's can_user_access_llm_provider), with whole
// bodies.
func TestLLMProviderPersonas(t *testing.T) {
	e := newEnv(t)
	f := fx{e}
	member := e.user(quarry.RoleBasic, "member")
	outsider := e.user(quarry.RoleBasic, "outsider")
	g1 := f.group("one", []user{member})
	g2 := f.group("two", nil)
	var mine, theirs, hidden struct {
		ID int64 `json:"id"`
	}
	e.do(e.admin, "POST", "/persona", paBody("Mine", false, "groups", []int64{g1})).decode(t, &mine)
	e.do(e.admin, "POST", "/persona", paBody("Theirs", false, "groups", []int64{g2})).decode(t, &theirs)
	e.do(e.admin, "POST", "/persona", paBody("Hidden", true)).decode(t, &hidden)
	e.do(e.admin, "DELETE", fmt.Sprintf("/persona/%d", hidden.ID), nil).want(t, 200, `null`)

	model := func(id int64, name string) string { return "[" + llmModel(id, name, true, nil) + "]" }
	provider := func(name string, public bool, groups, personas []int64) string {
		return fmt.Sprintf(`{"name": %q, "provider": "openai", "api_key": %q, "is_public": %t, "groups": %s, "personas": %s,
			"model_configurations": [{"name": %q, "is_visible": true}]}`, name, llmKey, public, fxJSON(fxIDs(groups)), fxJSON(fxIDs(personas)), name)
	}
	view := func(id int64, name string, public bool, groups, personas []int64) string {
		return fxJSON(map[string]any{"name": name, "provider": "openai", "api_key": llmKeyMask, "api_base": nil, "api_version": nil,
			"custom_config": nil, "is_public": public, "is_auto_mode": false, "groups": fxIDs(groups), "personas": fxIDs(personas),
			"deployment_name": nil, "id": id, "model_configurations": rawJSON(model(id, name))})
	}
	// The provider's assistants exist, deleted or not; their ids are kept
	// once, ascending.
	e.putProvider(e.admin, true, provider("open", true, nil, nil)).want(t, 200, view(1, "open", true, nil, nil))
	e.putProvider(e.admin, true, provider("mine", false, nil, []int64{mine.ID, 0, mine.ID})).want(t, 200, view(2, "mine", false, nil, []int64{0, mine.ID}))
	e.putProvider(e.admin, true, provider("theirs", true, nil, []int64{theirs.ID, hidden.ID})).want(t, 200, view(3, "theirs", true, nil, []int64{theirs.ID, hidden.ID}))
	e.putProvider(e.admin, true, provider("group two", false, []int64{g2}, nil)).want(t, 200, view(4, "group two", false, []int64{g2}, nil))
	e.putProvider(e.admin, true, provider("x", true, nil, []int64{999, mine.ID, 998})).
		want(t, 400, `{"error_code":"VALIDATION_ERROR","detail":"Invalid persona IDs: 998, 999"}`)
	e.do(e.admin, "POST", "/admin/llm/default", `{"provider_id": 1, "model_name": "open"}`).want(t, 200, `null`)
	e.do(e.admin, "GET", "/admin/llm/provider", nil).want(t, 200, fmt.Sprintf(`{"providers":[%s,%s,%s,%s],
		"default_text":{"provider_id":1,"model_name":"open"},"default_vision":null,"default_chat_naming":null}`,
		view(1, "open", true, nil, nil), view(2, "mine", false, nil, []int64{0, mine.ID}),
		view(3, "theirs", true, nil, []int64{theirs.ID, hidden.ID}), view(4, "group two", false, []int64{g2}, nil)))

	descriptor := func(id int64, name string) string {
		return fxJSON(map[string]any{"id": id, "name": name, "provider": "openai", "provider_display_name": "ChatGPT (OpenAI)",
			"model_configurations": rawJSON(model(id, name))})
	}
	listing := func(text string, ids ...int64) string {
		names := map[int64]string{1: "open", 2: "mine", 3: "theirs", 4: "group two"}
		ds := []string{}
		for _, id := range ids {
			ds = append(ds, descriptor(id, names[id]))
		}
		return fmt.Sprintf(`{"providers":[%s],"default_text":%s,"default_vision":null,"default_chat_naming":null}`, strings.Join(ds, ","), text)
	}
	def := `{"provider_id":1,"model_name":"open"}`
	for _, tt := range []struct {
		name   string
		u      user
		path   string
		status int
		body   string
	}{
		{"no assistant: none restricted to one", member, "/llm/provider", 200, listing(def, 1)},
		{"no assistant, the admin", e.admin, "/llm/provider", 200, listing(def, 1, 4)},
		{"the default assistant", member, "/llm/persona/0/providers", 200, listing(def, 1, 2)},
		{"an assistant of the member's group", member, fmt.Sprintf("/llm/persona/%d/providers", mine.ID), 200, listing(def, 1, 2)},
		{"the admin with another's", e.admin, fmt.Sprintf("/llm/persona/%d/providers", theirs.ID), 200, listing(def, 1, 3, 4)},
		{"one the member may not chat with", member, fmt.Sprintf("/llm/persona/%d/providers", theirs.ID), 403,
			`{"error_code":"INSUFFICIENT_PERMISSIONS","detail":"You don't have access to this assistant"}`},
		{"one shared with no one", outsider, fmt.Sprintf("/llm/persona/%d/providers", mine.ID), 403,
			`{"error_code":"INSUFFICIENT_PERMISSIONS","detail":"You don't have access to this assistant"}`},
		{"a deleted one", e.admin, fmt.Sprintf("/llm/persona/%d/providers", hidden.ID), 404, `{"error_code":"PERSONA_NOT_FOUND","detail":"Persona not found"}`},
		{"none", member, "/llm/persona/99999/providers", 404, `{"error_code":"PERSONA_NOT_FOUND","detail":"Persona not found"}`},
	} {
		t.Run(tt.name, func(t *testing.T) { e.do(tt.u, "GET", tt.path, nil).want(t, tt.status, tt.body) })
	}

	// An assistant's own model is its listing's default_text, for those
	// who may use its provider with it; the default model for others.
	var all struct {
		Providers []struct {
			Models []struct {
				ID int64 `json:"id"`
			} `json:"model_configurations"`
		} `json:"providers"`
	}
	e.do(e.admin, "GET", "/admin/llm/provider", nil).decode(t, &all)
	mineModel, groupTwoModel := all.Providers[1].Models[0].ID, all.Providers[3].Models[0].ID
	var ours struct {
		ID int64 `json:"id"`
	}
	e.do(e.admin, "PATCH", fmt.Sprintf("/persona/%d", mine.ID),
		paBody("Mine", false, "groups", []int64{g1}, "default_model_configuration_id", mineModel)).decode(t, &struct{}{})
	e.do(e.admin, "POST", "/persona", paBody("Ours", true, "default_model_configuration_id", groupTwoModel)).decode(t, &ours)
	e.do(member, "GET", fmt.Sprintf("/llm/persona/%d/providers", mine.ID), nil).want(t, 200, listing(`{"provider_id":2,"model_name":"mine"}`, 1, 2))
	e.do(member, "GET", fmt.Sprintf("/llm/persona/%d/providers", ours.ID), nil).want(t, 200, listing(def, 1))
	e.do(e.admin, "GET", fmt.Sprintf("/llm/persona/%d/providers", ours.ID), nil).want(t, 200, listing(`{"provider_id":4,"model_name":"group two"}`, 1, 4))

	// Deleting a provider leaves the assistants that answered with its
	// models the default one (Onyx's delete_llm_provider).
	e.do(e.admin, "DELETE", "/admin/llm/provider/2", nil).want(t, 200, `null`)
	var got struct {
		Model *int64 `json:"default_model_configuration_id"`
	}
	e.do(e.admin, "GET", fmt.Sprintf("/persona/%d", mine.ID), nil).decode(t, &got)
	if got.Model != nil {
		t.Errorf("the assistant of a deleted provider's model still answers with model %d", *got.Model)
	}
}
