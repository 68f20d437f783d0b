package quarry_test

import (
	"testing"

	"github.com/quarryhq/quarry"
)

func TestLLMProviderUpsertCheckExists(t *testing.T) {
	id, zero := int64(7), int64(0)
	name := "gpt"
	for _, tt := range []struct {
		u      quarry.LLMProviderUpsert
		exists bool
		want   string
	}{
		{quarry.LLMProviderUpsert{IsCreation: true}, false, ""},
		{quarry.LLMProviderUpsert{IsCreation: true, ID: &zero}, false, ""},
		{quarry.LLMProviderUpsert{IsCreation: true, ID: &id, Name: &name}, true, "conflict: LLM Provider with name gpt and id=7 already exists"},
		{quarry.LLMProviderUpsert{IsCreation: true, ID: &id}, false, "invalid: LLM provider with id 7 not found"},
		{quarry.LLMProviderUpsert{ID: &id}, true, ""},
		{quarry.LLMProviderUpsert{ID: &id}, false, "not_found: LLM Provider with name None and id=7 does not exist"},
		{quarry.LLMProviderUpsert{Name: &name}, false, "not_found: LLM Provider with name gpt and id=None does not exist"},
		{quarry.LLMProviderUpsert{ID: &zero}, false, "not_found: LLM Provider with name None and id=0 does not exist"},
	} {
		if got := errText(tt.u.CheckExists(tt.exists)); got != tt.want {
			t.Errorf("%+v (exists %v): %q, want %q", tt.u, tt.exists, got, tt.want)
		}
	}
}

func TestLLMProviderUpsertCheck(t *testing.T) {
	base := func(s string) *string { return &s }
	neg, zero := int64(-1), int64(0)
	for _, tt := range []struct {
		name string
		u    quarry.LLMProviderUpsert
		want string
	}{
		{"openai", quarry.LLMProviderUpsert{Provider: "openai"}, ""},
		{"openai elsewhere", quarry.LLMProviderUpsert{Provider: "openai", APIBase: base("https://proxy.example.com/v1/")}, ""},
		{"compatible", quarry.LLMProviderUpsert{Provider: "openai_compatible", APIBase: base("http://localhost:11434/v1")}, ""},
		{"compatible without base", quarry.LLMProviderUpsert{Provider: "openai_compatible"},
			"invalid: An OpenAI-compatible provider needs its api_base: the URL of its Chat Completions API, such as http://vllm.internal:8000/v1"},
		{"anthropic", quarry.LLMProviderUpsert{Provider: "anthropic"}, "invalid: " + quarry.ErrorMessage(quarry.ErrLLMProviderKind("anthropic"))},
		{"auto mode", quarry.LLMProviderUpsert{Provider: "openai", IsAutoMode: true},
			"invalid: Quarry has no auto mode (models kept in step with Onyx's recommendations): list the provider's models in model_configurations"},
		{"custom config", quarry.LLMProviderUpsert{Provider: "openai", CustomConfig: map[string]string{"X": "y"}},
			"invalid: custom_config is not used by Quarry's providers: give the key as api_key and the server's URL as api_base"},
		{"empty custom config", quarry.LLMProviderUpsert{Provider: "openai", CustomConfig: map[string]string{}}, ""},
		{"ftp", quarry.LLMProviderUpsert{Provider: "openai_compatible", APIBase: base("ftp://h/v1")},
			"invalid: api_base must be an absolute http:// or https:// URL of the server's OpenAI-compatible API, such as https://api.openai.com/v1"},
		{"relative", quarry.LLMProviderUpsert{Provider: "openai_compatible", APIBase: base("/v1")},
			"invalid: api_base must be an absolute http:// or https:// URL of the server's OpenAI-compatible API, such as https://api.openai.com/v1"},
		{"password", quarry.LLMProviderUpsert{Provider: "openai_compatible", APIBase: base("https://u:secret@h/v1")},
			"invalid: api_base must not contain a user name or password: give the key as api_key"},
		{"query", quarry.LLMProviderUpsert{Provider: "openai_compatible", APIBase: base("https://h/v1?api-version=1")},
			"invalid: api_base must not contain a query (?…): Quarry sends requests to its path followed by /chat/completions"},
		{"fragment", quarry.LLMProviderUpsert{Provider: "openai_compatible", APIBase: base("https://h/v1#x")},
			"invalid: api_base must not contain a fragment (#…)"},
		{"model without name", quarry.LLMProviderUpsert{Provider: "openai", Models: []quarry.ModelConfigurationUpsert{{Name: " "}}},
			"invalid: A model configuration needs the model's name"},
		{"no context", quarry.LLMProviderUpsert{Provider: "openai", Models: []quarry.ModelConfigurationUpsert{{Name: "m", MaxInputTokens: &zero}}},
			`invalid: max_input_tokens of model "m" must be a positive number of tokens`},
		{"negative context", quarry.LLMProviderUpsert{Provider: "openai", Models: []quarry.ModelConfigurationUpsert{{Name: "m", MaxInputTokens: &neg}}},
			`invalid: max_input_tokens of model "m" must be a positive number of tokens`},
	} {
		if got := errText(tt.u.Check()); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestLLMProviderUpsertApply checks which key a change keeps, and that a
// kept key goes only to the api_base it was given for.
func TestLLMProviderUpsertApply(t *testing.T) {
	const key = "sk-stored-key-0123456789abcdefghij" // 34 characters: its mask shows its ends.
	s := func(v string) *string { return &v }
	old := &quarry.LLMProvider{ID: 3, Name: s("old"), Provider: "openai_compatible", APIKey: key, APIBase: s("http://vllm:8000/v1"),
		Models: []quarry.ModelConfiguration{{ID: 11, Name: "a", IsVisible: true}}}
	for _, tt := range []struct {
		name    string
		u       quarry.LLMProviderUpsert
		wantKey string
		wantErr string
	}{
		{"key not changed", quarry.LLMProviderUpsert{APIKey: s("sk-new-key"), APIBase: s("http://vllm:8000/v1")}, key, ""},
		{"key changed", quarry.LLMProviderUpsert{APIKey: s("sk-new-key"), APIKeyChanged: true, APIBase: s("http://vllm:8000/v1")}, "sk-new-key", ""},
		{"key changed to none", quarry.LLMProviderUpsert{APIKeyChanged: true, APIBase: s("http://vllm:8000/v1")}, "", ""},
		{"masked echo", quarry.LLMProviderUpsert{APIKey: s(quarry.MaskString(key)), APIKeyChanged: true, APIBase: s("http://vllm:8000/v1/")}, key, ""},
		{"Onyx's mask is a new key", quarry.LLMProviderUpsert{APIKey: s("sk-s****ghij"), APIKeyChanged: true, APIBase: s("http://vllm:8000/v1")}, "sk-s****ghij", ""},
		{"kept key elsewhere", quarry.LLMProviderUpsert{APIBase: s("http://evil.example.com/v1")}, key,
			"invalid: API base and/or custom config cannot be changed without changing the API key"},
		{"echoed key elsewhere", quarry.LLMProviderUpsert{APIKey: s(quarry.MaskString(key)), APIKeyChanged: true, APIBase: s("http://evil.example.com/v1")}, key,
			"invalid: API base and/or custom config cannot be changed without changing the API key"},
		{"new key elsewhere", quarry.LLMProviderUpsert{APIKey: s("sk-other"), APIKeyChanged: true, APIBase: s("http://elsewhere/v1")}, "sk-other", ""},
	} {
		tt.u.Provider = "openai_compatible"
		p, err := tt.u.Apply(old)
		if got := errText(err); got != tt.wantErr || p.APIKey != tt.wantKey {
			t.Errorf("%s: key %q, %q; want %q, %q", tt.name, p.APIKey, got, tt.wantKey, tt.wantErr)
		}
	}
	// The name: kept when absent, cleared by null, set by a string.
	for _, tt := range []struct {
		set  bool
		name *string
		want *string
	}{{false, nil, s("old")}, {true, nil, nil}, {true, s("new"), s("new")}} {
		u := quarry.LLMProviderUpsert{Provider: "openai_compatible", APIBase: old.APIBase, NameSet: tt.set, Name: tt.name}
		if p, _ := u.Apply(old); !quarry.PtrEqual(p.Name, tt.want) {
			t.Errorf("name set %v %v: %v, want %v", tt.set, tt.name, p.Name, tt.want)
		}
	}
	// Models: the first of each name counts; one that old has keeps its id.
	u := quarry.LLMProviderUpsert{Provider: "openai_compatible", APIBase: old.APIBase, Groups: []int64{5, 2, 5},
		Models: []quarry.ModelConfigurationUpsert{{Name: "b", IsVisible: true}, {Name: "a"}, {Name: "b"}}}
	p, err := u.Apply(old)
	if err != nil || len(p.Models) != 2 || p.Models[0].Name != "b" || p.Models[0].ID != 0 || !p.Models[0].IsVisible ||
		p.Models[1].ID != 11 || p.Models[1].IsVisible || len(p.Groups) != 2 || p.Groups[0] != 2 {
		t.Errorf("models and groups: %+v, %v", p, err)
	}
	if f := quarry.LLMProviderChangedFields(old, &p); len(f) != 2 || f[0] != "groups" || f[1] != "model_configurations" {
		t.Errorf("changed fields %v", f)
	}
}

// TestCanUseLLMProvider checks Onyx v4.6.1's decision matrix of
// can_user_access_llm_provider: without an assistant, with one the
// provider is restricted to, and with another, for a member of group 4,
// someone in no group, and an admin.
func TestCanUseLLMProvider(t *testing.T) {
	member := &quarry.Caller{User: quarry.User{Role: quarry.RoleBasic}, Memberships: []quarry.Membership{{GroupID: 4}, {GroupID: 2, IsDefault: true}}}
	other := &quarry.Caller{User: quarry.User{Role: quarry.RoleBasic}}
	admin := &quarry.Caller{User: quarry.User{Role: quarry.RoleAdmin}}
	admin.SetGrants([]quarry.Permission{quarry.PermAdmin})
	member.SetGrants(nil)
	other.SetGrants(nil)
	// want is, for each of member, other and admin: without an assistant,
	// with assistant 7, with assistant 0.
	type uses [3][3]bool
	for _, tt := range []struct {
		name string
		p    quarry.LLMProvider
		want uses
	}{
		{"public", quarry.LLMProvider{IsPublic: true}, uses{{true, true, true}, {true, true, true}, {true, true, true}}},
		{"public with groups", quarry.LLMProvider{IsPublic: true, Groups: []int64{9}}, uses{{true, true, true}, {true, true, true}, {true, true, true}}},
		{"their group", quarry.LLMProvider{Groups: []int64{4}}, uses{{true, true, true}, {false, false, false}, {true, true, true}}},
		{"another group", quarry.LLMProvider{Groups: []int64{9}}, uses{{false, false, false}, {false, false, false}, {true, true, true}}},
		{"through a default group", quarry.LLMProvider{Groups: []int64{2}}, uses{{false, false, false}, {false, false, false}, {true, true, true}}},
		{"locked", quarry.LLMProvider{}, uses{{false, false, false}, {false, false, false}, {true, true, true}}},
		// Restricted to assistant 7: only with it, whoever the person.
		{"public, one assistant's", quarry.LLMProvider{IsPublic: true, Personas: []int64{7}}, uses{{false, true, false}, {false, true, false}, {false, true, false}}},
		{"their group and one assistant's", quarry.LLMProvider{Groups: []int64{4}, Personas: []int64{7}}, uses{{false, true, false}, {false, false, false}, {false, true, false}}},
		{"another group and one assistant's", quarry.LLMProvider{Groups: []int64{9}, Personas: []int64{7}}, uses{{false, false, false}, {false, false, false}, {false, true, false}}},
		{"one assistant's alone", quarry.LLMProvider{Personas: []int64{7}}, uses{{false, true, false}, {false, true, false}, {false, true, false}}},
		{"the default assistant's", quarry.LLMProvider{Personas: []int64{0}}, uses{{false, false, true}, {false, false, true}, {false, false, true}}},
	} {
		for i, c := range []*quarry.Caller{member, other, admin} {
			got := [3]bool{c.CanUseLLMProvider(&tt.p), c.CanUseLLMProviderWith(&tt.p, 7), c.CanUseLLMProviderWith(&tt.p, 0)}
			if got != tt.want[i] {
				t.Errorf("%s: caller %d (member, other, admin) uses it %v (no assistant, 7, 0), want %v", tt.name, i, got, tt.want[i])
			}
		}
	}
}

func TestLLMProviderUpsertCheckPersonas(t *testing.T) {
	exists := func(id int64) bool { return id == 0 || id == 5 }
	for _, tt := range []struct {
		ids  []int64
		want string
	}{
		{nil, ""},
		{[]int64{5, 0, 5}, ""},
		{[]int64{4, 5, 2, 4}, "invalid: Invalid persona IDs: 2, 4"},
	} {
		u := quarry.LLMProviderUpsert{Provider: "openai", Personas: tt.ids}
		if got := errText(u.CheckPersonas(exists)); got != tt.want {
			t.Errorf("%v: %q, want %q", tt.ids, got, tt.want)
		}
	}
}

func TestLLMTestTarget(t *testing.T) {
	s := func(v string) *string { return &v }
	stored := &quarry.LLMProvider{Provider: "openai", APIKey: "sk-stored-0123456789"}
	for _, tt := range []struct {
		name    string
		test    quarry.LLMTest
		stored  *quarry.LLMProvider
		wantKey string
		wantErr string
	}{
		{"new", quarry.LLMTest{Provider: "openai", Model: "m", APIKey: s("sk-typed"), APIKeyChanged: true}, nil, "sk-typed", ""},
		{"stored key", quarry.LLMTest{Provider: "openai", Model: "m", APIKey: s("sk-s...6789")}, stored, "sk-stored-0123456789", ""},
		{"stored key to its base", quarry.LLMTest{Provider: "openai", Model: "m", APIBase: s("https://api.openai.com/v1/")}, stored, "sk-stored-0123456789", ""},
		{"stored key elsewhere", quarry.LLMTest{Provider: "openai", Model: "m", APIBase: s("https://evil.example.com")}, stored, "sk-stored-0123456789",
			"invalid: API base and/or custom config cannot be changed without changing the API key"},
		{"no model", quarry.LLMTest{Provider: "openai"}, nil, "", "invalid: A test needs the model's name"},
		{"azure", quarry.LLMTest{Provider: "azure", Model: "m"}, nil, "", "invalid: " + quarry.ErrorMessage(quarry.ErrLLMProviderKind("azure"))},
	} {
		p, err := tt.test.Target(tt.stored)
		if got := errText(err); got != tt.wantErr || (err == nil && p.APIKey != tt.wantKey) {
			t.Errorf("%s: key %q, %q; want %q, %q", tt.name, p.APIKey, got, tt.wantKey, tt.wantErr)
		}
	}
}

func TestChooseChatModel(t *testing.T) {
	name := func(s string) *string { return &s }
	id := func(n int64) *int64 { return &n }
	public := &quarry.LLMProvider{ID: 1, Name: name("public"), IsPublic: true,
		Models: []quarry.ModelConfiguration{{ID: 10, Name: "small", MaxInputTokens: id(8192)}, {ID: 11, Name: "large"}}}
	shared := &quarry.LLMProvider{ID: 2, Name: name("shared"), Groups: []int64{4},
		Models: []quarry.ModelConfiguration{{ID: 20, Name: "private", MaxInputTokens: id(4096)}}}
	twin := &quarry.LLMProvider{ID: 3, Name: name("shared"), IsPublic: true}
	// sevens is restricted to assistant 7.
	sevens := &quarry.LLMProvider{ID: 4, Name: name("sevens"), IsPublic: true, Personas: []int64{7},
		Models: []quarry.ModelConfiguration{{ID: 40, Name: "seven", MaxInputTokens: id(7000)}}}
	providers := []*quarry.LLMProvider{public, shared, twin, sevens}
	member := &quarry.Caller{User: quarry.User{Role: quarry.RoleBasic}, Memberships: []quarry.Membership{{GroupID: 4}}}
	member.SetGrants(nil)
	other := &quarry.Caller{User: quarry.User{Role: quarry.RoleBasic}}
	other.SetGrants(nil)
	def := &quarry.DefaultModel{ProviderID: 1, ModelName: "small"}
	for _, tt := range []struct {
		name     string
		c        *quarry.Caller
		def      *quarry.DefaultModel
		choice   quarry.ModelChoice
		provider int64
		model    string
		window   int64
	}{
		{"the default", member, def, quarry.ModelChoice{}, 1, "small", 8192},
		{"the default for no one", nil, def, quarry.ModelChoice{}, 1, "small", 8192},
		{"a configured model", member, def, quarry.ModelChoice{ModelConfigurationID: id(20)}, 2, "private", 4096},
		{"one of a provider c may not use", other, def, quarry.ModelChoice{ModelConfigurationID: id(20)}, 1, "small", 8192},
		{"a model id that is none", member, def, quarry.ModelChoice{ModelConfigurationID: id(99)}, 1, "small", 8192},
		{"the id wins over the names", member, def, quarry.ModelChoice{ModelConfigurationID: id(11), ProviderName: "shared", ModelVersion: "x"}, 1, "large", quarry.DefaultMaxInputTokens},
		{"by names: the first of the name", member, def, quarry.ModelChoice{ProviderName: "shared", ModelVersion: "private"}, 2, "private", 4096},
		{"by names: a model it does not configure", member, def, quarry.ModelChoice{ProviderName: "shared", ModelVersion: "other"}, 2, "other", quarry.DefaultMaxInputTokens},
		{"by names: the first it may not use", other, def, quarry.ModelChoice{ProviderName: "shared", ModelVersion: "private"}, 1, "small", 8192},
		{"a provider without model", member, def, quarry.ModelChoice{ProviderName: "shared"}, 1, "small", 8192},
		{"no such provider", member, def, quarry.ModelChoice{ProviderName: "nope", ModelVersion: "m"}, 1, "small", 8192},
		{"a default model the provider lost", member, &quarry.DefaultModel{ProviderID: 1, ModelName: "gone"}, quarry.ModelChoice{}, 1, "gone", quarry.DefaultMaxInputTokens},
		// An assistant's model, and what the person's choice does to it.
		{"the assistant's model", other, def, quarry.ModelChoice{PersonaID: 7, PersonaModelID: id(40)}, 4, "seven", 7000},
		{"the assistant's model, another name", other, def, quarry.ModelChoice{PersonaID: 7, PersonaModelID: id(40), ModelVersion: "eight"}, 4, "eight", quarry.DefaultMaxInputTokens},
		{"the assistant's model it may not use", other, def, quarry.ModelChoice{PersonaID: 7, PersonaModelID: id(20)}, 1, "small", 8192},
		{"the assistant's model that is gone", member, def, quarry.ModelChoice{PersonaID: 7, PersonaModelID: id(99)}, 1, "small", 8192},
		{"a chosen model wins over the assistant's", member, def, quarry.ModelChoice{PersonaID: 7, PersonaModelID: id(40), ModelConfigurationID: id(20)}, 2, "private", 4096},
		{"a provider named takes the assistant's model's name", member, def, quarry.ModelChoice{PersonaID: 7, PersonaModelID: id(40), ProviderName: "shared"}, 2, "seven", quarry.DefaultMaxInputTokens},
		{"an assistant's provider in another's chat", member, def, quarry.ModelChoice{PersonaID: 8, ModelConfigurationID: id(40)}, 1, "small", 8192},
		{"an assistant's provider without assistant's model", member, def, quarry.ModelChoice{PersonaID: 7, ModelConfigurationID: id(40)}, 4, "seven", 7000},
	} {
		got, err := quarry.ChooseChatModel(tt.c, providers, tt.def, tt.choice)
		if err != nil || got.Provider.ID != tt.provider || got.Model != tt.model || got.MaxInputTokens != tt.window {
			t.Errorf("%s: %+v %v, want provider %d model %s window %d", tt.name, got, err, tt.provider, tt.model, tt.window)
		}
	}
	for _, def := range []*quarry.DefaultModel{nil, {ProviderID: 9, ModelName: "small"}} {
		if got, err := quarry.ChooseChatModel(other, providers, def, quarry.ModelChoice{ModelConfigurationID: id(20)}); err != quarry.ErrNoDefaultModel {
			t.Errorf("no default (%+v): %+v %v", def, got, err)
		}
	}
}
