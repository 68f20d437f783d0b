package store_test

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/store/storetest"
)

// TestLLMProviders checks what the store keeps of model providers: the
// key sealed at rest and kept across changes that do not change it, the
// models changed in place, the groups, the default model and what
// deleting takes with it.
func TestLLMProviders(t *testing.T) {
	url, keys := storetest.URL(t), storetest.Key(t)
	db := storetest.OpenURL(t, url, keys)
	admin := adminOf(t, db)
	g, err := db.CreateGroup(ctx, admin, quarry.UserGroupInput{Name: ptr("models")})
	if err != nil {
		t.Fatal(err)
	}
	const key = "sk-store-test-key-0123456789"
	up := quarry.LLMProviderUpsert{IsCreation: true, NameSet: true, Name: ptr("vllm"), Provider: quarry.LLMProviderOpenAICompatible,
		APIKey: ptr(key), APIBase: ptr("http://vllm.internal:8000/v1"), Groups: []int64{g.ID, g.ID},
		Models: []quarry.ModelConfigurationUpsert{{Name: "llama", IsVisible: true, MaxInputTokens: ptr(int64(8192))}, {Name: "qwen", IsVisible: false},
			{Name: "llama", IsVisible: false}}}
	p, err := db.UpsertLLMProvider(ctx, admin, up)
	if err != nil {
		t.Fatal(err)
	}
	if p.APIKey != key || !cmp.Equal(p.Groups, []int64{g.ID}) || len(p.Models) != 2 || p.Models[0].Name != "llama" ||
		!p.Models[0].IsVisible || *p.Models[0].MaxInputTokens != 8192 || p.Models[1].Name != "qwen" {
		t.Fatalf("created %+v", p)
	}
	// The key is sealed at rest.
	raw := storetest.OpenURL(t, url, keys)
	var sealed []byte
	if err := raw.QueryRowForTest(ctx, `SELECT api_key FROM llm_providers WHERE id = `+strconv.FormatInt(p.ID, 10), &sealed); err != nil {
		t.Fatal(err)
	}
	if len(sealed) == 0 || bytes.Contains(sealed, []byte(key)) || bytes.Contains(sealed, []byte("store-test")) {
		t.Errorf("the key is not sealed at rest: %q", sealed)
	}

	if m, err := db.DefaultModel(ctx); err != quarry.ErrNoDefaultModel {
		t.Errorf("the default model before there is one: %+v %v", m, err)
	}
	if err := db.SetDefaultModel(ctx, admin, quarry.DefaultModel{ProviderID: p.ID, ModelName: "qwen"}); err != nil {
		t.Fatal(err)
	}
	// What chat gets: the default model with its provider's key in clear,
	// or the model a person chose from a provider they may use.
	if m, err := db.DefaultModel(ctx); err != nil || m.Provider.ID != p.ID || m.Provider.APIKey != key ||
		m.Provider.BaseURL() != "http://vllm.internal:8000/v1" || m.Model != "qwen" || m.MaxInputTokens != quarry.DefaultMaxInputTokens {
		t.Errorf("the default model: %+v %v", m, err)
	}
	if m, err := db.ChatModel(ctx, admin, quarry.ModelChoice{ModelConfigurationID: &p.Models[0].ID}); err != nil ||
		m.Provider.APIKey != key || m.Model != "llama" || m.MaxInputTokens != 8192 {
		t.Errorf("a chosen model: %+v %v", m, err)
	}
	ps, def, err := db.LLMProviders(ctx)
	if err != nil || len(ps) != 1 || def == nil || *def != (quarry.DefaultModel{ProviderID: p.ID, ModelName: "qwen"}) || !ps[0].Models[1].IsVisible {
		t.Fatalf("after setting the default: %+v %+v %v", ps, def, err)
	}
	if err := db.SetDefaultModel(ctx, admin, quarry.DefaultModel{ProviderID: p.ID, ModelName: "nope"}); quarry.ErrorMessage(err) !=
		"Model 'nope' is not a valid model for provider_id="+strconv.FormatInt(p.ID, 10) {
		t.Errorf("a default that is no model: %v", err)
	}

	// A change that sends the key's mask, without api_key_changed, keeps
	// the key; the models keep their ids.
	change := up
	change.IsCreation, change.ID, change.NameSet = false, &p.ID, false
	change.APIKey = ptr(quarry.MaskString(key))
	change.Models = []quarry.ModelConfigurationUpsert{{Name: "qwen", IsVisible: true}, {Name: "mistral", IsVisible: true}}
	q, err := db.UpsertLLMProvider(ctx, admin, change)
	if err != nil {
		t.Fatal(err)
	}
	if q.APIKey != key || *q.Name != "vllm" || len(q.Models) != 2 || q.Models[0].ID != p.Models[1].ID || q.Models[1].Name != "mistral" {
		t.Errorf("changed %+v", q)
	}
	// Removing or hiding the default model is refused.
	hide := change
	hide.Models = []quarry.ModelConfigurationUpsert{{Name: "qwen", IsVisible: false}}
	if _, err := db.UpsertLLMProvider(ctx, admin, hide); quarry.ErrorMessage(err) != "Cannot hide the default model 'qwen'. Please change the default model before hiding." {
		t.Errorf("hiding the default: %v", err)
	}
	hide.Models = nil
	if _, err := db.UpsertLLMProvider(ctx, admin, hide); quarry.ErrorMessage(err) != "Cannot remove the default model 'qwen'. Please change the default model before removing." {
		t.Errorf("removing the default: %v", err)
	}
	// Deleting the group takes the provider's share with it.
	if err := db.DeleteGroup(ctx, admin, g.ID); err != nil {
		t.Fatal(err)
	}
	if p, err := db.LLMProvider(ctx, p.ID); err != nil || len(p.Groups) != 0 {
		t.Errorf("after the group's deletion: %+v %v", p, err)
	}
	// The default's provider is deleted only with force, which leaves no
	// default.
	if err := db.DeleteLLMProvider(ctx, admin, p.ID, false); quarry.ErrorMessage(err) != "Cannot delete the default LLM provider" {
		t.Errorf("deleting the default's provider: %v", err)
	}
	if err := db.DeleteLLMProvider(ctx, admin, p.ID, true); err != nil {
		t.Fatal(err)
	}
	ps, def, err = db.LLMProviders(ctx)
	if err != nil || len(ps) != 0 || def != nil {
		t.Errorf("after the deletion: %+v %+v %v", ps, def, err)
	}
	var models int
	if err := raw.QueryRowForTest(ctx, `SELECT COUNT(*) FROM llm_models`, &models); err != nil || models != 0 {
		t.Errorf("%d models left, %v", models, err)
	}
	if err := db.DeleteLLMProvider(ctx, admin, p.ID, true); err != quarry.ErrLLMProviderNotFound {
		t.Errorf("deleting it again: %v", err)
	}
}
