package onyxtest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/uuid"
)

// Model providers: the mirrors of Onyx v4.6.1's models of
// backend/onyx/server/manage/llm/models.py, its LLMProviderManager
// (common_utils/managers/llm_provider.py), and the replays of
// tests/llm_provider/test_llm_provider.py. Where Quarry differs from Onyx
// on purpose (docs/decisions.md, "Model providers"), the replay asserts
// Quarry's answer at that point and says what Onyx's test asserts:
//
//   - the key is masked by Quarry's one rendering of a shortened secret
//     (sk-0...0000), where Onyx shows sk-0****0000;
//   - a model's context window, display fields and capabilities are what
//     the admin configured (null, false, [] otherwise), where Onyx reads
//     its LiteLLM tables for kind openai.

// ---- backend/onyx/server/manage/llm/models.py ----

// onyxReasoningEffort is Onyx's ReasoningEffort.
type onyxReasoningEffort string

func (onyxReasoningEffort) onyxName() string       { return "ReasoningEffort" }
func (e onyxReasoningEffort) EnumValues() []string { return enumValues(e.onyxName()) }

// onyxModelConfigurationUpsert mirrors ModelConfigurationUpsertRequest.
type onyxModelConfigurationUpsert struct {
	Name               string  `json:"name"`
	IsVisible          bool    `json:"is_visible"`
	MaxInputTokens     *int64  `json:"max_input_tokens" onyx:"default"`
	SupportsImageInput *bool   `json:"supports_image_input" onyx:"default"`
	SupportsReasoning  *bool   `json:"supports_reasoning" onyx:"default"`
	DisplayName        *string `json:"display_name" onyx:"default"`
	CustomDisplayName  *string `json:"custom_display_name" onyx:"default"`
}

// onyxLLMProviderUpsert mirrors LLMProviderUpsertRequest.
type onyxLLMProviderUpsert struct {
	Name                *string                        `json:"name" onyx:"default"`
	Provider            string                         `json:"provider"`
	APIKey              *string                        `json:"api_key" onyx:"default"`
	APIBase             *string                        `json:"api_base" onyx:"default"`
	APIVersion          *string                        `json:"api_version" onyx:"default"`
	CustomConfig        *map[string]string             `json:"custom_config" onyx:"default"`
	IsPublic            bool                           `json:"is_public" onyx:"default"`
	IsAutoMode          bool                           `json:"is_auto_mode" onyx:"default"`
	Groups              []int64                        `json:"groups" onyx:"default"`
	Personas            []int64                        `json:"personas" onyx:"default"`
	DeploymentName      *string                        `json:"deployment_name" onyx:"default"`
	ID                  *int64                         `json:"id" onyx:"default"`
	APIKeyChanged       bool                           `json:"api_key_changed" onyx:"default"`
	CustomConfigChanged bool                           `json:"custom_config_changed" onyx:"default"`
	ModelConfigurations []onyxModelConfigurationUpsert `json:"model_configurations" onyx:"default"`
}

// onyxModelConfigurationView mirrors ModelConfigurationView
// (configured_max_input_tokens is excluded from its dumps: never written).
type onyxModelConfigurationView struct {
	ID                        *int64                `json:"id" onyx:"default"`
	Name                      string                `json:"name"`
	IsVisible                 bool                  `json:"is_visible"`
	MaxInputTokens            *int64                `json:"max_input_tokens" onyx:"default"`
	ConfiguredMaxInputTokens  *int64                `json:"configured_max_input_tokens" onyx:"default"`
	SupportsImageInput        bool                  `json:"supports_image_input"`
	SupportsReasoning         bool                  `json:"supports_reasoning" onyx:"default"`
	SupportedReasoningEfforts []onyxReasoningEffort `json:"supported_reasoning_efforts" onyx:"default"`
	IsRecommendedDefault      bool                  `json:"is_recommended_default" onyx:"default"`
	DisplayName               *string               `json:"display_name" onyx:"default"`
	CustomDisplayName         *string               `json:"custom_display_name" onyx:"default"`
	ProviderDisplayName       *string               `json:"provider_display_name" onyx:"default"`
	Vendor                    *string               `json:"vendor" onyx:"default"`
	Version                   *string               `json:"version" onyx:"default"`
	Region                    *string               `json:"region" onyx:"default"`
}

// onyxLLMProviderView mirrors LLMProviderView.
type onyxLLMProviderView struct {
	Name                *string                      `json:"name" onyx:"default"`
	Provider            string                       `json:"provider"`
	APIKey              *string                      `json:"api_key" onyx:"default"`
	APIBase             *string                      `json:"api_base" onyx:"default"`
	APIVersion          *string                      `json:"api_version" onyx:"default"`
	CustomConfig        *map[string]string           `json:"custom_config" onyx:"default"`
	IsPublic            bool                         `json:"is_public" onyx:"default"`
	IsAutoMode          bool                         `json:"is_auto_mode" onyx:"default"`
	Groups              []int64                      `json:"groups" onyx:"default"`
	Personas            []int64                      `json:"personas" onyx:"default"`
	DeploymentName      *string                      `json:"deployment_name" onyx:"default"`
	ID                  int64                        `json:"id"`
	ModelConfigurations []onyxModelConfigurationView `json:"model_configurations"`
}

// onyxLLMProviderDescriptor mirrors LLMProviderDescriptor.
type onyxLLMProviderDescriptor struct {
	ID                  int64                        `json:"id"`
	Name                *string                      `json:"name"`
	Provider            string                       `json:"provider"`
	ProviderDisplayName string                       `json:"provider_display_name"`
	ModelConfigurations []onyxModelConfigurationView `json:"model_configurations"`
}

// onyxDefaultModel mirrors DefaultModel.
type onyxDefaultModel struct {
	ProviderID int64  `json:"provider_id"`
	ModelName  string `json:"model_name"`
}

// onyxLLMProviderViews mirrors LLMProviderResponse[LLMProviderView], the
// answer of GET /admin/llm/provider.
type onyxLLMProviderViews struct {
	Providers         []onyxLLMProviderView `json:"providers"`
	DefaultText       *onyxDefaultModel     `json:"default_text" onyx:"default"`
	DefaultVision     *onyxDefaultModel     `json:"default_vision" onyx:"default"`
	DefaultChatNaming *onyxDefaultModel     `json:"default_chat_naming" onyx:"default"`
}

// onyxLLMProviderDescriptors mirrors
// LLMProviderResponse[LLMProviderDescriptor], the answer of GET
// /llm/provider.
type onyxLLMProviderDescriptors struct {
	Providers         []onyxLLMProviderDescriptor `json:"providers"`
	DefaultText       *onyxDefaultModel           `json:"default_text" onyx:"default"`
	DefaultVision     *onyxDefaultModel           `json:"default_vision" onyx:"default"`
	DefaultChatNaming *onyxDefaultModel           `json:"default_chat_naming" onyx:"default"`
}

// onyxDATestLLMProvider mirrors DATestLLMProvider, what
// LLMProviderManager.create returns.
type onyxDATestLLMProvider struct {
	ID                    int64   `json:"id"`
	Name                  *string `json:"name"`
	Provider              string  `json:"provider"`
	APIKey                string  `json:"api_key"`
	DefaultModelName      *string `json:"default_model_name" onyx:"default"`
	IsPublic              bool    `json:"is_public"`
	IsAutoMode            bool    `json:"is_auto_mode" onyx:"default"`
	Groups                []int64 `json:"groups"`
	Personas              []int64 `json:"personas"`
	APIBase               *string `json:"api_base" onyx:"default"`
	APIVersion            *string `json:"api_version" onyx:"default"`
	ModelConfigurationIDs []int64 `json:"model_configuration_ids" onyx:"default"`
}

// ---- LLMProviderManager (llm_provider.py) ----

// llmProviderArgs are the arguments of LLMProviderManager.create.
type llmProviderArgs struct {
	Name, APIKey, DefaultModelName string // "" for the manager's defaults.
	APIBase                        *string
	Groups                         []int64
	Personas                       []int64
	IsPublic                       *bool
	NoDefault                      bool // set_as_default=False.
}

// testOpenAIKey stands for the OPENAI_API_KEY of Onyx's test environment.
const testOpenAIKey = "sk-onyx-test-environment-key-0123456789"

// createLLMProvider is LLMProviderManager.create: a provider of kind
// openai with one model (gpt-4o-mini unless named), api_key_changed, then
// set as the default unless NoDefault.
func (c client) createLLMProvider(by User, a llmProviderArgs) (onyxDATestLLMProvider, error) {
	name, key, model := a.Name, a.APIKey, a.DefaultModelName
	if name == "" {
		name = "test-provider-" + uuid.NewString()
	}
	if key == "" {
		key = testOpenAIKey
	}
	if model == "" {
		model = "gpt-4o-mini"
	}
	public := a.IsPublic == nil || *a.IsPublic
	groups := a.Groups
	if groups == nil {
		groups = []int64{}
	}
	personas := a.Personas
	if personas == nil {
		personas = []int64{}
	}
	body := onyxLLMProviderUpsert{Name: &name, Provider: "openai", APIKey: &key, APIBase: a.APIBase, IsPublic: public,
		Groups: groups, Personas: personas, APIKeyChanged: true,
		ModelConfigurations: []onyxModelConfigurationUpsert{{Name: model, IsVisible: true, DisplayName: &model, SupportsImageInput: ptr(true)}}}
	view, err := call[onyxLLMProviderView](c, by, "PUT", "/admin/llm/provider?is_creation=true", body)
	if err != nil {
		return onyxDATestLLMProvider{}, err
	}
	out := onyxDATestLLMProvider{ID: view.ID, Name: view.Name, Provider: view.Provider, DefaultModelName: &model,
		IsPublic: view.IsPublic, IsAutoMode: view.IsAutoMode, Groups: view.Groups, Personas: view.Personas,
		APIBase: view.APIBase, APIVersion: view.APIVersion, ModelConfigurationIDs: []int64{}}
	if view.APIKey == nil {
		return out, &validationError{"DATestLLMProvider", fmt.Errorf("api_key is null"), nil}
	}
	out.APIKey = *view.APIKey
	for _, m := range view.ModelConfigurations {
		if m.ID != nil {
			out.ModelConfigurationIDs = append(out.ModelConfigurationIDs, *m.ID)
		}
	}
	if !a.NoDefault {
		if _, err := c.do(by, "POST", "/admin/llm/default", onyxDefaultModel{ProviderID: view.ID, ModelName: model}); err != nil {
			return out, err
		}
	}
	return out, nil
}

// deleteLLMProvider is LLMProviderManager.delete.
func (c client) deleteLLMProvider(id int64, by User, force bool) error {
	path := fmt.Sprint("/admin/llm/provider/", id)
	if force {
		path += "?force=true"
	}
	_, err := c.do(by, "DELETE", path, nil)
	return err
}

// llmProviders is GET /admin/llm/provider parsed as Onyx's
// LLMProviderResponse[LLMProviderView] (LLMProviderManager.get_all reads
// its providers, get_default_model its default_text).
func (c client) llmProviders(by User) (onyxLLMProviderViews, error) {
	return call[onyxLLMProviderViews](c, by, "GET", "/admin/llm/provider", nil)
}

// usableLLMProviders is GET /llm/provider parsed as Onyx's
// LLMProviderResponse[LLMProviderDescriptor] (the tests'
// _get_providers_basic).
func (c client) usableLLMProviders(by User) (onyxLLMProviderDescriptors, error) {
	return call[onyxLLMProviderDescriptors](c, by, "GET", "/llm/provider", nil)
}

// verifyLLMProvider is LLMProviderManager.verify: the provider is listed
// (or, with verifyDeleted, not) with its groups, kind, visibility and
// assistants, and the default model among its models if there is one.
func (c client) verifyLLMProvider(p onyxDATestLLMProvider, by User, verifyDeleted bool) error {
	all, err := c.llmProviders(by)
	if err != nil {
		return err
	}
	for _, f := range all.Providers {
		if f.ID != p.ID {
			continue
		}
		if verifyDeleted {
			return fmt.Errorf("LLM Provider %d found but should be deleted", p.ID)
		}
		var names []string
		for _, m := range f.ModelConfigurations {
			names = append(names, m.Name)
		}
		if sameSet(f.Groups, p.Groups) && f.Provider == p.Provider && f.IsPublic == p.IsPublic && sameSet(f.Personas, p.Personas) &&
			(all.DefaultText == nil || slices.Contains(names, all.DefaultText.ModelName)) {
			return nil
		}
	}
	if !verifyDeleted {
		return fmt.Errorf("LLM Provider %d not found", p.ID)
	}
	return nil
}

// ---- tests/llm_provider/test_llm_provider.py ----

// onyxTestKey is the key the module's tests send.
const onyxTestKey = "sk-000000000000000000000000000000000000000000000000"

// llmUpsert is a body of PUT /admin/llm/provider as the module's tests
// send it: kind openai, its key, public, no groups.
func llmUpsert(name string, models ...onyxModelConfigurationUpsert) map[string]any {
	return map[string]any{"name": name, "provider": "openai", "api_key": onyxTestKey, "model_configurations": models,
		"is_public": true, "groups": []int64{}}
}

// visible is ModelConfigurationUpsertRequest(name=name, is_visible=True).
func visible(name string, maxTokens ...int64) onyxModelConfigurationUpsert {
	m := onyxModelConfigurationUpsert{Name: name, IsVisible: true}
	if len(maxTokens) > 0 {
		m.MaxInputTokens = &maxTokens[0]
	}
	return m
}

// providerByID is the module's _get_provider_by_id.
func (c client) providerByID(t *testing.T, by User, id int64) *onyxLLMProviderView {
	t.Helper()
	all := must(c.llmProviders(by))(t)
	for _, p := range all.Providers {
		if p.ID == id {
			return &p
		}
	}
	return nil
}

// checkModels is the module's assert_response_is_equivalent, as Quarry
// answers: the models by name, each with what was configured (Onyx fills
// the context window, display names and capabilities from LiteLLM's
// tables for kind openai), and the key masked (Onyx: sk-0****0000).
func (c client) checkModels(t *testing.T, by User, r *Response, want []onyxModelConfigurationUpsert, key string) {
	t.Helper()
	created := must(parse[onyxLLMProviderView](r))(t)
	got := c.providerByID(t, by, created.ID)
	if got == nil {
		t.Fatalf("provider %d is not listed", created.ID)
	}
	check(t, len(got.Personas) == 0, "personas %v", got.Personas)
	byName := map[string]onyxModelConfigurationView{}
	for _, m := range got.ModelConfigurations {
		byName[m.Name] = m
	}
	check(t, len(byName) == len(want), "models %+v, want %+v", got.ModelConfigurations, want)
	for _, w := range want {
		m, ok := byName[w.Name]
		check(t, ok && m.IsVisible == w.IsVisible && ptrEqual(m.MaxInputTokens, w.MaxInputTokens) && !m.SupportsImageInput &&
			!m.SupportsReasoning && len(m.SupportedReasoningEfforts) == 0 && !m.IsRecommendedDefault && m.DisplayName == nil &&
			m.Vendor == nil, "model %s: %+v, want %+v", w.Name, m, w)
	}
	if key != "" {
		check(t, got.APIKey != nil && *got.APIKey == key, "api_key %v, want %q (Onyx: its own mask)", got.APIKey, key)
	}
}

func ptrEqual[T comparable](a, b *T) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

// onyxTestKeyMask is onyxTestKey as Quarry masks it (Onyx: sk-0****0000).
const onyxTestKeyMask = "sk-0...0000"

var llmProviderReplays = []Replay{
	{Name: "llm_provider/test_llm_provider.py/test_create_llm_provider[basic]", Run: func(t *testing.T, c client) {
		admin := adminUser(t, c).caller()
		r := must(c.do(admin, "PUT", "/admin/llm/provider?is_creation=true", llmUpsert(uuid.NewString(), visible("gpt-4", 4096))))(t)
		c.checkModels(t, admin, r, []onyxModelConfigurationUpsert{visible("gpt-4", 4096)}, onyxTestKeyMask)
	}},
	{Name: "llm_provider/test_llm_provider.py/test_create_llm_provider[multiple]", Run: func(t *testing.T, c client) {
		admin := adminUser(t, c).caller()
		r := must(c.do(admin, "PUT", "/admin/llm/provider?is_creation=true", llmUpsert(uuid.NewString(), visible("gpt-4"), visible("gpt-4o"))))(t)
		c.checkModels(t, admin, r, []onyxModelConfigurationUpsert{visible("gpt-4"), visible("gpt-4o")}, onyxTestKeyMask)
	}},
	{Name: "llm_provider/test_llm_provider.py/test_create_llm_provider[duplicates]", Run: func(t *testing.T, c client) {
		admin := adminUser(t, c).caller()
		m := visible("gpt-4")
		r := must(c.do(admin, "PUT", "/admin/llm/provider?is_creation=true", llmUpsert(uuid.NewString(), m, m, m, m)))(t)
		c.checkModels(t, admin, r, []onyxModelConfigurationUpsert{m}, onyxTestKeyMask)
	}},
	{Name: "llm_provider/test_llm_provider.py/test_update_model_configurations[no max tokens]", Run: func(t *testing.T, c client) {
		c.updateModels(t, []onyxModelConfigurationUpsert{visible("gpt-4", 4096)}, []onyxModelConfigurationUpsert{visible("gpt-4")})
	}},
	{Name: "llm_provider/test_llm_provider.py/test_update_model_configurations[one removed]", Run: func(t *testing.T, c client) {
		c.updateModels(t, []onyxModelConfigurationUpsert{visible("gpt-4"), visible("gpt-4o", 4096)}, []onyxModelConfigurationUpsert{visible("gpt-4", 4096)})
	}},
	{Name: "llm_provider/test_llm_provider.py/test_delete_llm_provider", Run: func(t *testing.T, c client) {
		admin := adminUser(t, c).caller()
		for _, models := range [][]onyxModelConfigurationUpsert{{visible("gpt-4", 4096)}, {visible("gpt-4o"), visible("gpt-4")}} {
			created := must(call[onyxLLMProviderView](c, admin, "PUT", "/admin/llm/provider?is_creation=true", llmUpsert("test-provider-delete", models...)))(t)
			ok(t, c.deleteLLMProvider(created.ID, admin, false))
			check(t, c.providerByID(t, admin, created.ID) == nil, "provider %d still listed", created.ID)
		}
	}},
	{Name: "llm_provider/test_llm_provider.py/test_delete_default_llm_provider_rejected", Run: func(t *testing.T, c client) {
		admin := adminUser(t, c).caller()
		created := must(call[onyxLLMProviderView](c, admin, "PUT", "/admin/llm/provider?is_creation=true", llmUpsert("d", visible("gpt-4o-mini"))))(t)
		must(c.do(admin, "POST", "/admin/llm/default", onyxDefaultModel{created.ID, "gpt-4o-mini"}))(t)
		r := c.tg.Do(admin, "DELETE", fmt.Sprint("/admin/llm/provider/", created.ID), nil)
		check(t, r.Status == 400 && string(must(keys(r, "detail"))(t)["detail"]) == `"Cannot delete the default LLM provider"`, "%d %s", r.Status, r.Body)
		check(t, c.providerByID(t, admin, created.ID) != nil, "the provider is gone")
	}},
	{Name: "llm_provider/test_llm_provider.py/test_delete_non_default_llm_provider_with_default_set", Run: func(t *testing.T, c client) {
		admin := adminUser(t, c).caller()
		def := must(call[onyxLLMProviderView](c, admin, "PUT", "/admin/llm/provider?is_creation=true", llmUpsert("default-provider", visible("gpt-4o-mini"))))(t)
		other := must(call[onyxLLMProviderView](c, admin, "PUT", "/admin/llm/provider?is_creation=true", llmUpsert("other-provider", visible("gpt-4o"))))(t)
		must(c.do(admin, "POST", "/admin/llm/default", onyxDefaultModel{def.ID, "gpt-4o-mini"}))(t)
		ok(t, c.deleteLLMProvider(other.ID, admin, false))
		check(t, c.providerByID(t, admin, other.ID) == nil && c.providerByID(t, admin, def.ID) != nil, "after the deletion")
	}},
	{Name: "llm_provider/test_llm_provider.py/test_force_delete_default_llm_provider", Run: func(t *testing.T, c client) {
		admin := adminUser(t, c).caller()
		created := must(call[onyxLLMProviderView](c, admin, "PUT", "/admin/llm/provider?is_creation=true", llmUpsert("f", visible("gpt-4o-mini"))))(t)
		must(c.do(admin, "POST", "/admin/llm/default", onyxDefaultModel{created.ID, "gpt-4o-mini"}))(t)
		check(t, c.tg.Do(admin, "DELETE", fmt.Sprint("/admin/llm/provider/", created.ID), nil).Status == 400, "deleted without force")
		ok(t, c.deleteLLMProvider(created.ID, admin, true))
		check(t, c.providerByID(t, admin, created.ID) == nil, "still listed")
	}},
	{Name: "llm_provider/test_llm_provider.py/test_delete_default_vision_provider_clears_vision_default", Excluded: excludedVision, Run: func(t *testing.T, c client) {}},
	{Name: "llm_provider/test_llm_provider.py/test_duplicate_provider_name_allowed", Run: func(t *testing.T, c client) {
		admin := adminUser(t, c).caller()
		body := llmUpsert("shared-name-"+uuid.NewString(), visible("gpt-4o-mini"))
		first := must(call[onyxLLMProviderView](c, admin, "PUT", "/admin/llm/provider?is_creation=true", body))(t)
		second := must(call[onyxLLMProviderView](c, admin, "PUT", "/admin/llm/provider?is_creation=true", body))(t)
		check(t, first.ID != second.ID, "ids %d and %d", first.ID, second.ID)
	}},
	{Name: "llm_provider/test_llm_provider.py/test_rename_provider_allowed", Run: func(t *testing.T, c client) {
		admin := adminUser(t, c).caller()
		body := llmUpsert("original-name-"+uuid.NewString(), visible("gpt-4o-mini"))
		created := must(call[onyxLLMProviderView](c, admin, "PUT", "/admin/llm/provider?is_creation=true", body))(t)
		newName := "renamed-provider-" + uuid.NewString()
		body["id"], body["name"] = created.ID, newName
		renamed := must(call[onyxLLMProviderView](c, admin, "PUT", "/admin/llm/provider?is_creation=false", body))(t)
		check(t, renamed.Name != nil && *renamed.Name == newName, "name %v", renamed.Name)
		got := c.providerByID(t, admin, created.ID)
		check(t, got != nil && *got.Name == newName, "listed %+v", got)
	}},
	{Name: "llm_provider/test_llm_provider.py/test_model_visibility_preserved_on_edit", Run: func(t *testing.T, c client) {
		admin := adminUser(t, c).caller()
		hidden := func(name string) onyxModelConfigurationUpsert { return onyxModelConfigurationUpsert{Name: name} }
		body := llmUpsert("test-visibility-provider", visible("gpt-4o"), visible("gpt-4o-mini"), hidden("gpt-4-turbo"))
		body["personas"] = []int64{}
		created := must(call[onyxLLMProviderView](c, admin, "PUT", "/admin/llm/provider?is_creation=true", body))(t)
		visibleNames := func() []string {
			var out []string
			for _, m := range c.providerByID(t, admin, created.ID).ModelConfigurations {
				if m.IsVisible {
					out = append(out, m.Name)
				}
			}
			return out
		}
		check(t, slices.Equal(visibleNames(), []string{"gpt-4o", "gpt-4o-mini"}), "visible %v", visibleNames())
		body["id"] = created.ID
		for _, step := range []struct {
			models []onyxModelConfigurationUpsert
			want   []string
		}{
			{[]onyxModelConfigurationUpsert{visible("gpt-4o"), visible("gpt-4o-mini"), visible("gpt-4-turbo")}, []string{"gpt-4o", "gpt-4o-mini", "gpt-4-turbo"}},
			{[]onyxModelConfigurationUpsert{visible("gpt-4o"), hidden("gpt-4o-mini"), hidden("gpt-4-turbo")}, []string{"gpt-4o"}},
			{[]onyxModelConfigurationUpsert{hidden("gpt-4o"), hidden("gpt-4o-mini"), hidden("gpt-4-turbo")}, nil},
		} {
			body["model_configurations"] = step.models
			must(c.do(admin, "PUT", "/admin/llm/provider?is_creation=false", body))(t)
			check(t, slices.Equal(visibleNames(), step.want), "visible %v, want %v", visibleNames(), step.want)
		}
		// Making a hidden model the default shows it.
		must(c.do(admin, "POST", "/admin/llm/default", onyxDefaultModel{created.ID, "gpt-4o"}))(t)
		check(t, slices.Equal(visibleNames(), []string{"gpt-4o"}), "visible %v", visibleNames())
	}},
	{Name: "llm_provider/test_llm_provider.py/test_default_model_persistence_and_update", Run: func(t *testing.T, c client) {
		admin := adminUser(t, c)
		basic := must(c.createUser("basic_user", ""))(t)
		name := "test-default-model-" + uuid.NewString()
		body := llmUpsert(name, visible("gpt-4"), visible("gpt-4o"))
		body["personas"] = []int64{}
		created := must(call[onyxLLMProviderView](c, admin.caller(), "PUT", "/admin/llm/provider?is_creation=true", body))(t)
		// Quarry makes no default of its own (Onyx's setup may): none yet.
		for _, u := range []User{admin.caller(), basic.caller()} {
			d := must(c.usableLLMProviders(u))(t)
			check(t, d.DefaultText == nil && d.DefaultVision == nil, "defaults %+v %+v", d.DefaultText, d.DefaultVision)
			check(t, slices.ContainsFunc(d.Providers, func(p onyxLLMProviderDescriptor) bool {
				return p.ID == created.ID && *p.Name == name && p.Provider == "openai" && len(p.ModelConfigurations) == 2
			}), "providers %+v", d.Providers)
		}
		body["id"] = created.ID
		must(c.do(admin.caller(), "PUT", "/admin/llm/provider?is_creation=false", body))(t)
		must(c.do(admin.caller(), "POST", "/admin/llm/default", onyxDefaultModel{created.ID, "gpt-4o"}))(t)
		want := onyxDefaultModel{created.ID, "gpt-4o"}
		a := must(c.llmProviders(admin.caller()))(t)
		check(t, a.DefaultText != nil && *a.DefaultText == want && a.DefaultVision == nil, "admin's defaults %+v %+v", a.DefaultText, a.DefaultVision)
		for _, u := range []User{admin.caller(), basic.caller()} {
			d := must(c.usableLLMProviders(u))(t)
			check(t, d.DefaultText != nil && *d.DefaultText == want && d.DefaultVision == nil, "defaults %+v %+v", d.DefaultText, d.DefaultVision)
		}
	}},
	{Name: "llm_provider/test_llm_provider.py/test_multiple_providers_default_switching", Run: func(t *testing.T, c client) {
		admin := adminUser(t, c)
		basic := must(c.createUser("basic_user", ""))(t)
		name1, name2 := "test-provider-1-"+uuid.NewString(), "test-provider-2-"+uuid.NewString()
		body1, body2 := llmUpsert(name1, visible("gpt-4"), visible("gpt-4o")), llmUpsert(name2, visible("gpt-4"), visible("gpt-4-turbo"))
		body1["api_key"], body2["api_key"] = "sk-000000000000000000000000000000000000000000000001", "sk-000000000000000000000000000000000000000000000002"
		p1 := must(call[onyxLLMProviderView](c, admin.caller(), "PUT", "/admin/llm/provider?is_creation=true", body1))(t)
		must(c.do(admin.caller(), "POST", "/admin/llm/default", onyxDefaultModel{p1.ID, "gpt-4"}))(t)
		p2 := must(call[onyxLLMProviderView](c, admin.caller(), "PUT", "/admin/llm/provider?is_creation=true", body2))(t)
		must(c.do(admin.caller(), "POST", "/admin/llm/default", onyxDefaultModel{p1.ID, "gpt-4"}))(t)
		seen := func(want onyxDefaultModel) {
			t.Helper()
			a := must(c.llmProviders(admin.caller()))(t)
			check(t, a.DefaultText != nil && *a.DefaultText == want && a.DefaultVision == nil, "admin's defaults %+v %+v", a.DefaultText, a.DefaultVision)
			check(t, len(a.Providers) == 2, "admin sees %d providers", len(a.Providers))
			for _, u := range []User{basic.caller(), admin.caller()} {
				d := must(c.usableLLMProviders(u))(t)
				check(t, d.DefaultText != nil && *d.DefaultText == want && d.DefaultVision == nil, "defaults %+v %+v", d.DefaultText, d.DefaultVision)
				for _, p := range d.Providers {
					names := []string{p.ModelConfigurations[0].Name, p.ModelConfigurations[1].Name}
					check(t, p.ID == p1.ID && *p.Name == name1 && slices.Equal(names, []string{"gpt-4", "gpt-4o"}) ||
						p.ID == p2.ID && *p.Name == name2 && slices.Equal(names, []string{"gpt-4", "gpt-4-turbo"}), "provider %+v", p)
				}
			}
		}
		seen(onyxDefaultModel{p1.ID, "gpt-4"})
		body2["id"] = p2.ID
		must(c.do(admin.caller(), "PUT", "/admin/llm/provider?is_creation=false", body2))(t)
		must(c.do(admin.caller(), "POST", "/admin/llm/default", onyxDefaultModel{p2.ID, "gpt-4-turbo"}))(t)
		seen(onyxDefaultModel{p2.ID, "gpt-4-turbo"})
		// A model of the same name at the other provider.
		must(c.do(admin.caller(), "POST", "/admin/llm/default", onyxDefaultModel{p1.ID, "gpt-4"}))(t)
		seen(onyxDefaultModel{p1.ID, "gpt-4"})
		must(c.do(admin.caller(), "POST", "/admin/llm/default", onyxDefaultModel{p2.ID, "gpt-4"}))(t)
		seen(onyxDefaultModel{p2.ID, "gpt-4"})
	}},
	{Name: "llm_provider/test_llm_provider.py/test_default_provider_and_vision_provider_selection", Excluded: excludedVision, Run: func(t *testing.T, c client) {}},
	{Name: "llm_provider/test_llm_provider.py/test_default_provider_is_not_default_vision_provider", Excluded: excludedVision, Run: func(t *testing.T, c client) {}},
	{Name: "llm_provider/test_llm_provider.py/test_all_three_provider_types_no_mixup", Excluded: excludedVision, Run: func(t *testing.T, c client) {}},
	// The other tests of test_llm_provider_access_control.py write Onyx's
	// tables directly and call its functions in process (Quarry's
	// TestCanUseLLMProvider and TestChooseChatModel check the same rules).
	// test_llm_provider_persona_access.py and test_provider_listing_cache.py
	// are replayed in personallm.go (llmPersonaReplays).
	{Name: "llm_provider/test_llm_provider_access_control.py/test_can_user_access_llm_provider_or_logic", Excluded: excludedPersonas, Run: func(t *testing.T, c client) {}},
	{Name: "llm_provider/test_llm_provider_access_control.py/test_public_provider_with_persona_restrictions", Excluded: excludedPersonas, Run: func(t *testing.T, c client) {}},
	{Name: "llm_provider/test_llm_provider_access_control.py/test_public_provider_without_persona_restrictions", Excluded: excludedPersonas, Run: func(t *testing.T, c client) {}},
	{Name: "llm_provider/test_llm_provider_access_control.py/test_get_llm_for_persona_falls_back_when_access_denied", Excluded: excludedPersonas, Run: func(t *testing.T, c client) {}},
	{Name: "llm_provider/test_llm_provider_access_control.py/test_provider_delete_clears_persona_references", Excluded: excludedPersonas, Run: func(t *testing.T, c client) {}},
	{Name: "llm_provider/test_llm_provider_access_control.py/test_list_llm_provider_basics_excludes_non_public_unrestricted", Run: func(t *testing.T, c client) {
		admin := adminUser(t, c)
		basic := must(c.createUser("basic_user", ""))(t)
		public := must(c.createLLMProvider(admin.caller(), llmProviderArgs{Name: "public-provider", DefaultModelName: "gpt-4o"}))(t)
		locked := must(c.createLLMProvider(admin.caller(), llmProviderArgs{Name: "non-public-unrestricted", IsPublic: ptr(false), NoDefault: true}))(t)
		names := func(u User) []string {
			var out []string
			for _, p := range must(c.usableLLMProviders(u))(t).Providers {
				out = append(out, *p.Name)
			}
			return out
		}
		check(t, slices.Equal(names(basic.caller()), []string{*public.Name}), "the basic user sees %v", names(basic.caller()))
		check(t, slices.Equal(names(admin.caller()), []string{*public.Name, *locked.Name}), "the admin sees %v", names(admin.caller()))
	}},
	{Name: "llm_provider/manager: LLMProviderManager", Run: func(t *testing.T, c client) {
		admin := adminUser(t, c).caller()
		p := must(c.createLLMProvider(admin, llmProviderArgs{}))(t)
		ok(t, c.verifyLLMProvider(p, admin, false))
		check(t, p.APIKey == "sk-o...6789" && *p.DefaultModelName == "gpt-4o-mini" && len(p.ModelConfigurationIDs) == 1,
			"created %+v (Onyx masks the key as sk-o****6789)", p)
		d := must(c.llmProviders(admin))(t)
		check(t, d.DefaultText != nil && *d.DefaultText == onyxDefaultModel{p.ID, "gpt-4o-mini"}, "default %+v", d.DefaultText)
		ok(t, c.deleteLLMProvider(p.ID, admin, true))
		ok(t, c.verifyLLMProvider(p, admin, true))
	}},
}

// excludedVision is why the replays of vision, chat-naming and auto-mode
// defaults are excluded.
const excludedVision = "it sets the default vision model (POST /admin/llm/default-vision) or reads providers of kinds Quarry " +
	"does not offer (anthropic, vertex_ai) and LiteLLM's model tables: Quarry keeps one default, the text one, and speaks " +
	"OpenAI's Chat Completions only (docs/decisions.md, \"Model providers\")"

// excludedPersonas is why the replays of test_llm_provider_access_control.py
// that restrict providers to assistants are excluded.
const excludedPersonas = "it writes Onyx's tables (llm_provider, persona, user_group) and calls can_user_access_llm_provider and " +
	"get_llm_for_persona in process, which a client cannot; quarry's TestCanUseLLMProvider and TestChooseChatModel check the same " +
	"decision matrix and fallbacks, and api's TestLLMProviderPersonas and TestChatPersonaModel the routes and chat"

// updateModels is test_update_model_configurations: a provider created
// with initial, made the default's provider, changed to updated twice:
// without api_key_changed the new key is not taken, with it it is.
func (c client) updateModels(t *testing.T, initial, updated []onyxModelConfigurationUpsert) {
	admin := adminUser(t, c).caller()
	name := uuid.NewString()
	body := llmUpsert(name, initial...)
	body["api_key_changed"] = true
	r := must(c.do(admin, "PUT", "/admin/llm/provider?is_creation=true", body))(t)
	c.checkModels(t, admin, r, initial, "")
	created := must(parse[onyxLLMProviderView](r))(t)
	must(c.do(admin, "POST", "/admin/llm/default", onyxDefaultModel{created.ID, "gpt-4"}))(t)
	change := map[string]any{"id": created.ID, "name": name, "provider": created.Provider,
		"api_key": "sk-000000000000000000000000000000000000000000000001", "model_configurations": updated, "is_public": true, "groups": []int64{}}
	c.checkModels(t, admin, must(c.do(admin, "PUT", "/admin/llm/provider", change))(t), updated, onyxTestKeyMask)
	must(c.do(admin, "POST", "/admin/llm/default", onyxDefaultModel{created.ID, "gpt-4"}))(t)
	change["api_key_changed"] = true
	c.checkModels(t, admin, must(c.do(admin, "PUT", "/admin/llm/provider", change))(t), updated, "sk-0...0001")
}
