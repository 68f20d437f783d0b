package store_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/storetest"
)

// TestReadCacheAcrossReplicas: two stores on one database, as two
// replicas. One keeps callers and tools between requests; every change
// the other makes to what they are read from shows on the first at once:
// a key revoked, its person deactivated, a group joined, a permission
// granted, a tool's headers changed or the tool disabled. A hit reads the
// version only.
func TestReadCacheAcrossReplicas(t *testing.T) {
	u, keys := storetest.URL(t), storetest.Key(t)
	a, b := storetest.OpenURL(t, u, keys), storetest.OpenURL(t, u, keys)
	if !a.KeepsCopies() {
		t.Fatal("a migrated store keeps no copies")
	}
	admin := adminOf(t, b)
	key := func(name string) (*quarry.APIKey, string) {
		t.Helper()
		k, token, err := b.CreateAPIKey(ctx, admin, ptr(name), quarry.RoleBasic)
		if err != nil {
			t.Fatal(err)
		}
		return k, quarry.HashAPIKey(token)
	}
	authenticate := func(hash string) *quarry.Caller {
		t.Helper()
		c, err := a.Authenticate(ctx, hash)
		if err != nil {
			t.Fatalf("authenticating: %v", err)
		}
		return c
	}
	refused := func(hash, after string) {
		t.Helper()
		if c, err := a.Authenticate(ctx, hash); err == nil {
			t.Errorf("after %s, the key still opens as %s", after, c.Email)
		}
	}

	k1, h1 := key("one")
	authenticate(h1)
	before := a.Statements()
	c := authenticate(h1)
	if n := a.Statements() - before; n != 1 {
		t.Errorf("a cached caller took %d statements, want 1 (the version)", n)
	}
	// A caller given out cannot change the one kept.
	c.Memberships = append(c.Memberships, quarry.Membership{GroupID: 999})
	if got := authenticate(h1); slices.ContainsFunc(got.Memberships, func(m quarry.Membership) bool { return m.GroupID == 999 }) {
		t.Error("a change to a caller given out changed the copy kept")
	}

	g, err := b.CreateGroup(ctx, admin, quarry.UserGroupInput{Name: ptr("cached"), UserIDs: []string{k1.UserID}})
	if err != nil {
		t.Fatal(err)
	}
	if got := authenticate(h1); !slices.ContainsFunc(got.Memberships, func(m quarry.Membership) bool { return m.GroupID == g.ID }) {
		t.Errorf("joining a group on the other replica: memberships %v", got.Memberships)
	}
	if err := b.SetGroupPermission(ctx, admin, g.ID, quarry.PermManageConnectors, true); err != nil {
		t.Fatal(err)
	}
	if got := authenticate(h1); !got.Has(quarry.PermManageConnectors) {
		t.Errorf("a permission granted on the other replica: grants %v", got.Grants)
	}
	if err := b.DeleteAPIKey(ctx, admin, k1.ID); err != nil {
		t.Fatal(err)
	}
	refused(h1, "its revocation on the other replica")

	_, h2 := key("two")
	email := authenticate(h2).Email
	if err := b.SetActive(ctx, admin, email, false); err != nil {
		t.Fatal(err)
	}
	refused(h2, "its person's deactivation on the other replica")

	o, err := b.CreateOAuthConfig(ctx, admin, quarry.OAuthConfig{Name: "first name", AuthorizationURL: "https://a.example.com",
		TokenURL: "https://a.example.com/token", ClientID: "cached", ClientSecret: "cached-client-secret"})
	if err != nil {
		t.Fatal(err)
	}
	tool, err := b.CreateTool(ctx, admin, quarry.ToolInput{Name: "cached", Definition: json.RawMessage(`{}`), OAuthConfigID: &o.ID,
		Headers: []quarry.Header{{Key: "X-Api-Key", Value: "first-cached-secret"}}})
	if err != nil {
		t.Fatal(err)
	}
	read := func() *quarry.Tool {
		t.Helper()
		got, err := a.Tool(ctx, tool.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	read()
	before = a.Statements()
	read().Headers[0].Value = "changed by a reader"
	if n := a.Statements() - before; n != 1 {
		t.Errorf("a cached tool took %d statements, want 1 (the version)", n)
	}
	if got := read().Headers[0].Value; got != "first-cached-secret" {
		t.Errorf("a change to a tool given out changed the copy kept: %q", got)
	}
	headers := []quarry.Header{{Key: "X-Api-Key", Value: "second-cached-secret"}}
	if _, err := b.UpdateTool(ctx, admin, tool.ID, quarry.ToolUpdate{Headers: &headers}); err != nil {
		t.Fatal(err)
	}
	if got := read().Headers[0].Value; got != "second-cached-secret" {
		t.Errorf("headers changed on the other replica: %q", got)
	}
	if _, err := b.UpdateOAuthConfig(ctx, admin, o.ID, quarry.OAuthConfigUpdate{Name: ptr("second name")}); err != nil {
		t.Fatal(err)
	}
	if got := read().OAuthConfigName; got == nil || *got != "second name" {
		t.Errorf("its OAuth configuration renamed on the other replica: %v", got)
	}
	if _, err := b.SetToolsEnabled(ctx, admin, []int64{tool.ID}, false); err != nil {
		t.Fatal(err)
	}
	if read().Enabled {
		t.Error("a tool disabled on the other replica is still enabled")
	}
	if _, err := a.Tool(ctx, 999_999); quarry.ErrorCode(err) != quarry.ENOTFOUND {
		t.Errorf("a missing tool: %v", err)
	}
}

// TestReadCacheNeedsEveryTrigger: a store whose database lost one of the
// triggers that move cache_version keeps no copies, and so still sees
// every change at once.
func TestReadCacheNeedsEveryTrigger(t *testing.T) {
	u, keys := storetest.URL(t), storetest.Key(t)
	a, b := storetest.OpenURL(t, u, keys), storetest.OpenURL(t, u, keys)
	drop := `DROP TRIGGER api_keys_delete_bumps_cache`
	if b.Dialect() == store.Postgres {
		drop = `DROP TRIGGER api_keys_bumps_cache ON api_keys`
	}
	if err := b.ExecForTest(ctx, drop); err != nil {
		t.Fatal(err)
	}
	if err := a.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if a.KeepsCopies() {
		t.Fatal("a store keeps copies without every trigger")
	}
	admin := adminOf(t, b)
	k, token, err := b.CreateAPIKey(ctx, admin, ptr("k"), quarry.RoleBasic)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Authenticate(ctx, quarry.HashAPIKey(token)); err != nil {
		t.Fatal(err)
	}
	if err := b.DeleteAPIKey(ctx, admin, k.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Authenticate(ctx, quarry.HashAPIKey(token)); err == nil {
		t.Error("a revoked key still opens")
	}
}

// TestReadCacheChatSettings: what each message of a chat reads (the model
// providers with the default model, the default assistant) is kept like
// callers and tools: a hit reads the version only, a copy given out
// cannot change the one kept, and every change another replica makes
// shows at once: a provider's key, its models and groups, the default
// model, a provider deleted, the assistant's instructions and tools, its
// search tool disabled, a tool of its deleted.
func TestReadCacheChatSettings(t *testing.T) {
	u, keys := storetest.URL(t), storetest.Key(t)
	a, b := storetest.OpenURL(t, u, keys), storetest.OpenURL(t, u, keys)
	admin := adminOf(t, b)
	providers := func() ([]*quarry.LLMProvider, *quarry.DefaultModel) {
		t.Helper()
		ps, def, err := a.LLMProviders(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return ps, def
	}
	assistant := func() *quarry.DefaultAssistant {
		t.Helper()
		x, err := a.DefaultAssistant(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	hit := func(what string, read func()) {
		t.Helper()
		read()
		before := a.Statements()
		read()
		if n := a.Statements() - before; n != 1 {
			t.Errorf("%s, kept, took %d statements, want 1 (the version)", what, n)
		}
	}

	up := quarry.LLMProviderUpsert{IsCreation: true, Provider: quarry.LLMProviderOpenAICompatible, APIKey: ptr("sk-cache-first-0123456789"),
		APIKeyChanged: true, APIBase: ptr("http://models.internal/v1"), IsPublic: true,
		Models: []quarry.ModelConfigurationUpsert{{Name: "first", IsVisible: true}}}
	p, err := b.UpsertLLMProvider(ctx, admin, up)
	if err != nil {
		t.Fatal(err)
	}
	hit("the providers", func() { providers() })
	ps, def := providers()
	if len(ps) != 1 || ps[0].APIKey != "sk-cache-first-0123456789" || def != nil {
		t.Fatalf("providers %+v, default %+v", ps, def)
	}
	ps[0].Models[0].Name, ps[0].APIKey = "changed by a reader", "changed"
	if ps, _ := providers(); ps[0].Models[0].Name != "first" || ps[0].APIKey != "sk-cache-first-0123456789" {
		t.Error("a change to the providers given out changed the copy kept")
	}
	if err := b.SetDefaultModel(ctx, admin, quarry.DefaultModel{ProviderID: p.ID, ModelName: "first"}); err != nil {
		t.Fatal(err)
	}
	if _, def := providers(); def == nil || def.ModelName != "first" {
		t.Errorf("the default model set on the other replica: %+v", def)
	}
	g, err := b.CreateGroup(ctx, admin, quarry.UserGroupInput{Name: ptr("models")})
	if err != nil {
		t.Fatal(err)
	}
	up.IsCreation, up.ID, up.APIKey, up.IsPublic, up.Groups = false, &p.ID, ptr("sk-cache-second-0123456789"), false, []int64{g.ID}
	up.Models = append(up.Models, quarry.ModelConfigurationUpsert{Name: "second", IsVisible: true})
	if _, err := b.UpsertLLMProvider(ctx, admin, up); err != nil {
		t.Fatal(err)
	}
	if ps, _ := providers(); ps[0].APIKey != "sk-cache-second-0123456789" || len(ps[0].Models) != 2 || ps[0].IsPublic ||
		!slices.Equal(ps[0].Groups, []int64{g.ID}) {
		t.Errorf("the provider changed on the other replica: %+v", ps[0])
	}
	other, err := b.UpsertLLMProvider(ctx, admin, quarry.LLMProviderUpsert{IsCreation: true, Provider: quarry.LLMProviderOpenAICompatible,
		APIBase: ptr("http://other.internal/v1"), IsPublic: true, Models: []quarry.ModelConfigurationUpsert{{Name: "third", IsVisible: true}}})
	if err != nil {
		t.Fatal(err)
	}
	if ps, _ := providers(); len(ps) != 2 {
		t.Fatalf("a provider added on the other replica: %d providers", len(ps))
	}
	if err := b.DeleteLLMProvider(ctx, admin, other.ID, false); err != nil {
		t.Fatal(err)
	}
	if ps, _ := providers(); len(ps) != 1 {
		t.Errorf("a provider deleted on the other replica: %d providers", len(ps))
	}

	hit("the default assistant", func() { assistant() })
	x := assistant()
	if !x.Search || x.SearchToolID == 0 || !slices.Equal(x.ToolIDs, []int64{x.SearchToolID}) || x.SystemPrompt != nil {
		t.Fatalf("the default assistant %+v", x)
	}
	x.ToolIDs[0] = 999
	if got := assistant(); got.ToolIDs[0] != got.SearchToolID {
		t.Error("a change to the assistant given out changed the copy kept")
	}
	tool, err := b.CreateTool(ctx, admin, quarry.ToolInput{Name: "cached", Definition: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.UpdateDefaultAssistant(ctx, admin, quarry.DefaultAssistantUpdate{ToolIDs: []int64{x.SearchToolID, tool.ID}, SetPrompt: true,
		SystemPrompt: ptr("be brief")}); err != nil {
		t.Fatal(err)
	}
	if got := assistant(); !slices.Equal(got.ToolIDs, []int64{x.SearchToolID, tool.ID}) || got.SystemPrompt == nil || *got.SystemPrompt != "be brief" {
		t.Errorf("the assistant changed on the other replica: %+v", got)
	}
	if _, err := b.SetToolsEnabled(ctx, admin, []int64{x.SearchToolID}, false); err != nil {
		t.Fatal(err)
	}
	if assistant().Search {
		t.Error("the search tool disabled on the other replica is still offered")
	}
	if err := b.DeleteTool(ctx, admin, tool.ID); err != nil {
		t.Fatal(err)
	}
	if got := assistant(); !slices.Equal(got.ToolIDs, []int64{x.SearchToolID}) {
		t.Errorf("a tool deleted on the other replica is still the assistant's: %v", got.ToolIDs)
	}
}

// TestShareVersion: the reads of copies made with one context of
// ShareVersion read their version once, and a change on another replica
// shows in them once the shared version is older than a second (at once
// in a new request).
func TestShareVersion(t *testing.T) {
	u, keys := storetest.URL(t), storetest.Key(t)
	a, b := storetest.OpenURL(t, u, keys), storetest.OpenURL(t, u, keys)
	admin := adminOf(t, b)
	_, token, err := b.CreateAPIKey(ctx, admin, ptr("shared"), quarry.RoleBasic)
	if err != nil {
		t.Fatal(err)
	}
	hash := quarry.HashAPIKey(token)
	reads := func(ctx context.Context) {
		t.Helper()
		if _, err := a.Authenticate(ctx, hash); err != nil {
			t.Fatal(err)
		}
		if _, _, err := a.LLMProviders(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := a.DefaultAssistant(ctx); err != nil {
			t.Fatal(err)
		}
	}
	reads(ctx) // Keeps the copies.
	before := a.Statements()
	reads(store.ShareVersion(ctx))
	if n := a.Statements() - before; n != 1 {
		t.Errorf("three kept copies in one request took %d statements, want 1 (the version)", n)
	}
	before = a.Statements()
	reads(ctx)
	if n := a.Statements() - before; n != 3 {
		t.Errorf("without a shared version, %d statements, want 3", n)
	}

	// A change on the other replica shows in a new request at once.
	shared := store.ShareVersion(ctx)
	reads(shared)
	if _, err := b.UpdateDefaultAssistant(ctx, admin, quarry.DefaultAssistantUpdate{SetPrompt: true, SystemPrompt: ptr("shared")}); err != nil {
		t.Fatal(err)
	}
	if x, err := a.DefaultAssistant(store.ShareVersion(ctx)); err != nil || x.SystemPrompt == nil || *x.SystemPrompt != "shared" {
		t.Errorf("a new request after the change: %+v %v", x, err)
	}
	// A request that still shares the version from before the change
	// misses, and leaves the copies of the newer version to the others.
	reads(ctx)
	if _, err := a.DefaultAssistant(shared); err != nil {
		t.Fatal(err)
	}
	before = a.Statements()
	reads(store.ShareVersion(ctx))
	if n := a.Statements() - before; n != 1 {
		t.Errorf("after a read at an older version, a new request took %d statements, want 1 (the version)", n)
	}
	// A request sees what it changed itself.
	own := store.ShareVersion(ctx)
	reads(own)
	if _, err := a.UpdateDefaultAssistant(own, admin, quarry.DefaultAssistantUpdate{SetPrompt: true, SystemPrompt: ptr("own")}); err != nil {
		t.Fatal(err)
	}
	if x, err := a.DefaultAssistant(own); err != nil || x.SystemPrompt == nil || *x.SystemPrompt != "own" {
		t.Errorf("the request's own change: %+v %v", x, err)
	}
	if _, err := b.UpdateDefaultAssistant(ctx, admin, quarry.DefaultAssistantUpdate{SetPrompt: true, SystemPrompt: ptr("shared")}); err != nil {
		t.Fatal(err)
	}
	// The request that shared the version before the change sees it once
	// its version is older than a second.
	time.Sleep(1100 * time.Millisecond)
	if x, err := a.DefaultAssistant(shared); err != nil || x.SystemPrompt == nil || *x.SystemPrompt != "shared" {
		t.Errorf("the earlier request a second later: %+v %v", x, err)
	}
}
