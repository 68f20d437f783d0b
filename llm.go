package quarry

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Model providers: the servers of language models that answer in chat, as
// Onyx v4.6.1 keeps them (backend/onyx/server/manage/llm/models.py: an
// LLMProvider and its ModelConfigurations, one default model). Quarry
// speaks OpenAI's Chat Completions API only (model.go), so it offers two
// of Onyx's kinds: "openai", OpenAI's own API, and "openai_compatible",
// any server that speaks the same API at its api_base (Azure OpenAI's v1
// endpoint, vLLM, Ollama, LiteLLM, LM Studio and the like). A provider's
// key is a secret like a credential's: sealed at rest, masked in every
// answer (MaskString), never logged or audited.

// The kinds of provider Quarry offers (Onyx's LlmProviderNames).
const (
	LLMProviderOpenAI           = "openai"
	LLMProviderOpenAICompatible = "openai_compatible"
)

// OpenAIBaseURL is the api_base of a provider of kind "openai" that names
// none: OpenAI's API.
const OpenAIBaseURL = "https://api.openai.com/v1"

// DefaultMaxInputTokens is the context window assumed for a model whose
// configuration gives none: Onyx's GEN_AI_MODEL_FALLBACK_MAX_TOKENS.
const DefaultMaxInputTokens = 32000

// LLMProvider is a provider of language models and the models of it that
// people may use.
type LLMProvider struct {
	ID       int64
	Name     *string // Onyx's display name; not unique, may be nil.
	Provider string  // Its kind: LLMProviderOpenAI or LLMProviderOpenAICompatible.
	// APIKey is the key sent as a bearer token, in clear: never answered
	// (see MaskedKey); "" for a server that takes none.
	APIKey         string
	APIBase        *string // The URL of its Chat Completions API, without /chat/completions.
	APIVersion     *string // Kept for Onyx's clients; Quarry sends none.
	DeploymentName *string // Kept for Onyx's clients; Quarry sends none.
	IsPublic       bool    // Everyone may use it; otherwise Groups' members and admins.
	Groups         []int64 // Ascending.
	// Personas are the assistants in whose chats alone it may be used,
	// whatever IsPublic and Groups say; none: any assistant's. Ascending.
	Personas  []int64
	Models    []ModelConfiguration
	CreatedAt Time
	UpdatedAt Time
}

// ModelConfiguration is a model of a provider, as Onyx configures one.
type ModelConfiguration struct {
	ID                 int64
	Name               string // The model's name at the provider, sent as "model".
	IsVisible          bool   // Offered to people.
	MaxInputTokens     *int64 // Its context window, if the admin gave it.
	SupportsImageInput bool
	SupportsReasoning  bool
	DisplayName        *string
	CustomDisplayName  *string
}

// ContextWindow returns the tokens m takes in: its MaxInputTokens, or
// DefaultMaxInputTokens.
func (m *ModelConfiguration) ContextWindow() int64 {
	if m.MaxInputTokens != nil {
		return *m.MaxInputTokens
	}
	return DefaultMaxInputTokens
}

// BaseURL returns the URL requests to p go to (followed by
// /chat/completions): its api_base, or OpenAI's for kind "openai" without
// one.
func (p *LLMProvider) BaseURL() string {
	if p.APIBase != nil && *p.APIBase != "" {
		return *p.APIBase
	}
	if p.Provider == LLMProviderOpenAI {
		return OpenAIBaseURL
	}
	return ""
}

// MaskedKey returns p's key as answers show it (MaskString), or nil when
// it has none.
func (p *LLMProvider) MaskedKey() *string {
	if p.APIKey == "" {
		return nil
	}
	m := MaskString(p.APIKey)
	return &m
}

// Model returns p's configuration of model name, or nil.
func (p *LLMProvider) Model(name string) *ModelConfiguration {
	for i := range p.Models {
		if p.Models[i].Name == name {
			return &p.Models[i]
		}
	}
	return nil
}

// LLMProviderDisplayName returns the name Onyx v4.6.1 shows for a kind of
// provider (get_provider_display_name).
func LLMProviderDisplayName(kind string) string {
	switch kind {
	case LLMProviderOpenAI:
		return "ChatGPT (OpenAI)"
	case LLMProviderOpenAICompatible:
		return "OpenAI-Compatible"
	}
	return kind
}

// CanUseLLMProvider reports whether c may use p outside the chat of an
// assistant (GET /llm/provider): CanUseLLMProviderWith without an
// assistant, so a provider restricted to assistants is never one.
func (c *Caller) CanUseLLMProvider(p *LLMProvider) bool { return c.canUseLLMProvider(p, nil) }

// CanUseLLMProviderWith reports whether c may use p in a chat with
// assistant personaID, as Onyx v4.6.1's can_user_access_llm_provider: a
// provider restricted to assistants (Personas) only with one of them,
// whoever c is; then everyone a public provider, the members of its
// groups (and admins) one that is not; a provider neither public nor
// shared with a group is the admins' alone, unless it is restricted to
// assistants, when it is everyone's with them. Only the groups things are
// shared through count (SharingGroupIDs).
func (c *Caller) CanUseLLMProviderWith(p *LLMProvider, personaID int64) bool {
	return c.canUseLLMProvider(p, &personaID)
}

// canUseLLMProvider is CanUseLLMProviderWith; persona nil is no assistant.
func (c *Caller) canUseLLMProvider(p *LLMProvider, persona *int64) bool {
	restricted := len(p.Personas) > 0
	switch {
	case restricted && (persona == nil || !slices.Contains(p.Personas, *persona)):
		return false
	case p.IsPublic:
		return true
	case len(p.Groups) > 0:
		if c.IsAdmin() {
			return true
		}
		for _, g := range c.SharingGroupIDs() {
			if slices.Contains(p.Groups, g) {
				return true
			}
		}
		return false
	}
	return restricted || c.IsAdmin()
}

// CanListLLMProviders reports whether c may list the providers it may
// use (GET /llm/provider): holders of read:chat, which basic implies
// (every role but limited; a personal access token scoped to basic,
// read:chat or write:chat; a limited API key, which chats:
// AccountPermissions). Onyx lets every signed-in person list them,
// limited ones included; Quarry's limited person holds nothing.
func (c *Caller) CanListLLMProviders() bool { return c.Directory == nil && c.Has(PermReadChat) }

// LLMProviderUpsert is a creation or change of a provider: Onyx's
// LLMProviderUpsertRequest and its is_creation.
type LLMProviderUpsert struct {
	IsCreation bool
	ID         *int64 // The provider to change; 0 counts as none, as in Onyx.
	// NameSet says the request holds name: absent leaves a provider's name
	// as it is, null clears it.
	NameSet        bool
	Name           *string
	Provider       string
	APIKey         *string
	APIKeyChanged  bool // False keeps the stored key whatever APIKey holds, as in Onyx.
	APIBase        *string
	APIVersion     *string
	DeploymentName *string
	CustomConfig   map[string]string
	IsPublic       bool
	IsAutoMode     bool
	Groups         []int64
	Personas       []int64
	Models         []ModelConfigurationUpsert
}

// ModelConfigurationUpsert is a model of an upsert: Onyx's
// ModelConfigurationUpsertRequest.
type ModelConfigurationUpsert struct {
	Name               string
	IsVisible          bool
	MaxInputTokens     *int64
	SupportsImageInput *bool
	SupportsReasoning  *bool
	DisplayName        *string
	CustomDisplayName  *string
}

// ChangesID returns the provider u changes, or 0 (an id of 0 is none, as
// Onyx reads it).
func (u *LLMProviderUpsert) ChangesID() int64 {
	if u.ID == nil {
		return 0
	}
	return *u.ID
}

// pyOptional renders an optional value as Python's f-string does.
func pyOptional[T any](v *T) string {
	if v == nil {
		return "None"
	}
	return fmt.Sprint(*v)
}

// CheckExists applies Onyx's is_creation rules to u, given whether the
// provider it names exists: a creation of one that exists is 409, a change
// of one that does not is 404, and a creation that names a missing
// provider is 400 (Onyx's words in each).
func (u *LLMProviderUpsert) CheckExists(exists bool) error {
	switch {
	case exists && u.IsCreation:
		return Errorf(ECONFLICT, "LLM Provider with name %s and id=%s already exists", pyOptional(u.Name), pyOptional(u.ID))
	case !exists && !u.IsCreation:
		return Errorf(ENOTFOUND, "LLM Provider with name %s and id=%s does not exist", pyOptional(u.Name), pyOptional(u.ID))
	case !exists && u.ChangesID() != 0:
		return Errorf(EINVALID, "LLM provider with id %d not found", *u.ID)
	}
	return nil
}

// ErrLLMProviderKind refuses a kind of provider Quarry does not speak.
func ErrLLMProviderKind(kind string) error {
	return Errorf(EINVALID, "Provider %q is not one Quarry offers: it speaks OpenAI's Chat Completions API, as provider %q "+
		"(OpenAI's own API) or %q (any server that speaks it at its api_base: Azure OpenAI's v1 endpoint, vLLM, Ollama, LiteLLM, LM Studio)",
		kind, LLMProviderOpenAI, LLMProviderOpenAICompatible)
}

// CheckLLMProviderKind refuses a kind Quarry does not speak, or an
// OpenAI-compatible provider with no api_base (to whom would it go?).
func CheckLLMProviderKind(kind string, apiBase *string) error {
	switch kind {
	case LLMProviderOpenAI:
	case LLMProviderOpenAICompatible:
		if apiBase == nil || *apiBase == "" {
			return Errorf(EINVALID, "An OpenAI-compatible provider needs its api_base: the URL of its Chat Completions API, such as http://vllm.internal:8000/v1")
		}
	default:
		return ErrLLMProviderKind(kind)
	}
	if apiBase != nil && *apiBase != "" {
		return CheckAPIBase(*apiBase)
	}
	return nil
}

// CheckAPIBase reports why s cannot be a provider's api_base: it must be
// an absolute http:// or https:// URL with a host, and no user name,
// password, query or fragment (a key goes in api_key; Quarry appends
// /chat/completions to the path). The message does not show s.
func CheckAPIBase(s string) error {
	const want = "api_base must be an absolute http:// or https:// URL of the server's OpenAI-compatible API, such as https://api.openai.com/v1"
	u, err := url.Parse(s)
	if err != nil || u.Opaque != "" || u.Hostname() == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return Errorf(EINVALID, "%s", want)
	}
	switch {
	case u.User != nil:
		return Errorf(EINVALID, "api_base must not contain a user name or password: give the key as api_key")
	case u.RawQuery != "" || u.ForceQuery:
		return Errorf(EINVALID, "api_base must not contain a query (?…): Quarry sends requests to its path followed by /chat/completions")
	case u.Fragment != "" || strings.HasSuffix(s, "#"):
		return Errorf(EINVALID, "api_base must not contain a fragment (#…)")
	}
	return nil
}

// CheckPersonas reports why u may not restrict its provider to its
// assistants (Personas): each must exist, deleted or not (Onyx's
// validate_persona_ids_exist); those that do not are Onyx's "Invalid
// persona IDs", ascending.
func (u *LLMProviderUpsert) CheckPersonas(exists func(id int64) bool) error {
	var missing []string
	for _, id := range sortedSet(u.Personas) {
		if !exists(id) {
			missing = append(missing, strconv.FormatInt(id, 10))
		}
	}
	if len(missing) > 0 {
		return Errorf(EINVALID, "Invalid persona IDs: %s", strings.Join(missing, ", "))
	}
	return nil
}

// Check applies the rules of u's fields that need nothing stored, in
// Onyx's order where Onyx has them: the kind of provider, auto mode and
// custom_config (Quarry offers neither), api_base, and the models' names
// and context windows.
func (u *LLMProviderUpsert) Check() error {
	if err := CheckLLMProviderKind(u.Provider, u.APIBase); err != nil {
		return err
	}
	if u.IsAutoMode {
		return Errorf(EINVALID, "Quarry has no auto mode (models kept in step with Onyx's recommendations): list the provider's models in model_configurations")
	}
	if len(u.CustomConfig) > 0 {
		return Errorf(EINVALID, "custom_config is not used by Quarry's providers: give the key as api_key and the server's URL as api_base")
	}
	for _, m := range u.Models {
		if strings.TrimSpace(m.Name) == "" {
			return Errorf(EINVALID, "A model configuration needs the model's name")
		}
		if m.MaxInputTokens != nil && *m.MaxInputTokens <= 0 {
			return Errorf(EINVALID, "max_input_tokens of model %q must be a positive number of tokens", m.Name)
		}
	}
	return nil
}

// ErrKeyElsewhere refuses to send a stored key to another api_base than
// the one it was given for (Onyx's words; Onyx checks it only when it
// serves many tenants). An admin cannot read the key back, so it must not
// be able to send it elsewhere either.
var ErrKeyElsewhere = Errorf(EINVALID, "API base and/or custom config cannot be changed without changing the API key")

// sameBase reports whether two base URLs (LLMProvider.BaseURL) are the
// same, ignoring spaces and trailing slashes (Onyx's comparison).
func sameBase(a, b string) bool {
	norm := func(s string) string { return strings.TrimRight(strings.TrimSpace(s), "/") }
	return norm(a) == norm(b)
}

// keepsKey reports whether a request that holds key (nil if absent) and
// says keyChanged keeps the stored key stored: Onyx keeps it unless the
// request says the key changed, and Quarry also keeps it when the new key
// is the stored one's mask (IsMaskOf), as a client that sends back what
// it read does.
func keepsKey(key *string, keyChanged bool, stored string) bool {
	if stored == "" {
		return !keyChanged
	}
	return !keyChanged || key != nil && IsMaskOf(*key, stored)
}

// Apply returns the provider old becomes under u (old is nil for a
// creation), with the key in clear: the stored one when u keeps it (see
// keepsKey), which may then go only to the api_base it was given for
// (ErrKeyElsewhere). Models keep their order, the first of each name
// counting; a model that old has keeps its id.
func (u *LLMProviderUpsert) Apply(old *LLMProvider) (LLMProvider, error) {
	p := LLMProvider{Provider: u.Provider, APIBase: emptyNil(u.APIBase), APIVersion: u.APIVersion,
		DeploymentName: u.DeploymentName, IsPublic: u.IsPublic, Groups: sortedSet(u.Groups), Personas: sortedSet(u.Personas)}
	if old != nil {
		p.ID, p.Name, p.CreatedAt = old.ID, old.Name, old.CreatedAt
	}
	if u.NameSet {
		p.Name = u.Name
	}
	if u.APIKey != nil {
		p.APIKey = *u.APIKey
	}
	if old != nil && keepsKey(u.APIKey, u.APIKeyChanged, old.APIKey) {
		p.APIKey = old.APIKey
		if old.APIKey != "" && !sameBase(old.BaseURL(), p.BaseURL()) {
			return p, ErrKeyElsewhere
		}
	}
	seen := map[string]bool{}
	for _, m := range u.Models {
		if seen[m.Name] {
			continue
		}
		seen[m.Name] = true
		c := ModelConfiguration{Name: m.Name, IsVisible: m.IsVisible, MaxInputTokens: m.MaxInputTokens,
			SupportsImageInput: m.SupportsImageInput != nil && *m.SupportsImageInput,
			SupportsReasoning:  m.SupportsReasoning != nil && *m.SupportsReasoning,
			DisplayName:        m.DisplayName, CustomDisplayName: m.CustomDisplayName}
		if old != nil {
			if o := old.Model(m.Name); o != nil {
				c.ID = o.ID
			}
		}
		p.Models = append(p.Models, c)
	}
	return p, nil
}

// emptyNil returns nil for a nil or empty string (Onyx stores
// `api_base or None`).
func emptyNil(s *string) *string {
	if s == nil || *s == "" {
		return nil
	}
	return s
}

// CheckKeepsDefault refuses a change that would remove or hide the
// default model (named defaultModel, of next's provider), as Onyx does.
func (p *LLMProvider) CheckKeepsDefault(defaultModel string) error {
	m := p.Model(defaultModel)
	if m == nil {
		return Errorf(EINVALID, "Cannot remove the default model '%s'. Please change the default model before removing.", defaultModel)
	}
	if !m.IsVisible {
		return Errorf(EINVALID, "Cannot hide the default model '%s'. Please change the default model before hiding.", defaultModel)
	}
	return nil
}

// LLMProviderChangedFields returns the names of the fields (the API's)
// whose values differ between old and next, for the audit log: never the
// key's value, only that it changed. For a creation (old nil), the fields
// it sets: those with a value, and is_public.
func LLMProviderChangedFields(old, next *LLMProvider) []string {
	if old == nil {
		old = &LLMProvider{IsPublic: !next.IsPublic}
	}
	fields := []string{}
	add := func(changed bool, name string) {
		if changed {
			fields = append(fields, name)
		}
	}
	add(!PtrEqual(old.Name, next.Name), "name")
	add(old.Provider != next.Provider, "provider")
	add(old.APIKey != next.APIKey, "api_key")
	add(!PtrEqual(old.APIBase, next.APIBase), "api_base")
	add(!PtrEqual(old.APIVersion, next.APIVersion), "api_version")
	add(!PtrEqual(old.DeploymentName, next.DeploymentName), "deployment_name")
	add(old.IsPublic != next.IsPublic, "is_public")
	add(!slices.Equal(old.Groups, next.Groups), "groups")
	add(!slices.Equal(old.Personas, next.Personas), "personas")
	add(!slices.EqualFunc(old.Models, next.Models, func(a, b ModelConfiguration) bool {
		return a.Name == b.Name && a.IsVisible == b.IsVisible && PtrEqual(a.MaxInputTokens, b.MaxInputTokens) &&
			a.SupportsImageInput == b.SupportsImageInput && a.SupportsReasoning == b.SupportsReasoning &&
			PtrEqual(a.DisplayName, b.DisplayName) && PtrEqual(a.CustomDisplayName, b.CustomDisplayName)
	}), "model_configurations")
	return fields
}

// ErrLLMProviderNotFound answers a provider id that names none (Onyx's
// words on its deletion).
var ErrLLMProviderNotFound = Errorf(ENOTFOUND, "LLM Provider not found")

// CheckDeleteLLMProvider refuses to delete provider id while it holds the
// default model (its provider is defaultProvider, 0 for none), unless
// force, as Onyx does.
func CheckDeleteLLMProvider(id, defaultProvider int64, force bool) error {
	if !force && id == defaultProvider {
		return Errorf(EINVALID, "Cannot delete the default LLM provider")
	}
	return nil
}

// DefaultModel is the model chat uses when a person names none: Onyx's
// DefaultModel.
type DefaultModel struct {
	ProviderID int64
	ModelName  string
}

// ErrNotAModel refuses a default model that provider id does not
// configure (Onyx's words, for a missing provider too).
func ErrNotAModel(model string, providerID int64) error {
	return Errorf(EINVALID, "Model '%s' is not a valid model for provider_id=%d", model, providerID)
}

// LLMTest is a test of a provider's configuration: Onyx's TestLLMRequest.
type LLMTest struct {
	ID             *int64 // A stored provider whose key it may use; 0 counts as none.
	Provider       string
	Model          string
	APIKey         *string
	APIBase        *string
	APIVersion     *string
	CustomConfig   map[string]string
	DeploymentName *string
	APIKeyChanged  bool
}

// Target returns the provider t calls: t's fields, with the stored
// provider's key when t does not change it (see keepsKey), which may then
// go only to its own api_base (ErrKeyElsewhere). stored is nil when t
// names no stored provider (or one that does not exist, as in Onyx).
func (t *LLMTest) Target(stored *LLMProvider) (LLMProvider, error) {
	p := LLMProvider{Provider: t.Provider, APIBase: emptyNil(t.APIBase), APIVersion: t.APIVersion, DeploymentName: t.DeploymentName}
	if err := CheckLLMProviderKind(p.Provider, p.APIBase); err != nil {
		return p, err
	}
	if len(t.CustomConfig) > 0 {
		return p, Errorf(EINVALID, "custom_config is not used by Quarry's providers: give the key as api_key and the server's URL as api_base")
	}
	if strings.TrimSpace(t.Model) == "" {
		return p, Errorf(EINVALID, "A test needs the model's name")
	}
	if t.APIKey != nil {
		p.APIKey = *t.APIKey
	}
	if stored != nil && keepsKey(t.APIKey, t.APIKeyChanged, stored.APIKey) {
		p.APIKey = stored.APIKey
		if stored.APIKey != "" && !sameBase(stored.BaseURL(), p.BaseURL()) {
			return p, ErrKeyElsewhere
		}
	}
	return p, nil
}

// NormalizeLLMProvider is Onyx's normalize_provider: the kind without
// surrounding spaces, in lower case.
func NormalizeLLMProvider(kind string) string { return strings.ToLower(strings.TrimSpace(kind)) }

// ChatModel is the model an answer goes to: its provider, its key in clear
// (never to be answered or logged), the model's name sent as "model", and
// its context window.
type ChatModel struct {
	Provider *LLMProvider
	Model    string
	// MaxInputTokens is the model's context window: its configuration's
	// (ModelConfiguration.ContextWindow), or DefaultMaxInputTokens for a
	// model the provider does not configure.
	MaxInputTokens int64
}

// ModelChoice is how the model of an answer is chosen: the assistant
// whose chat it is, its own model, and the person's choice (Onyx v4.6.1's
// LLMOverride without its temperature). The zero value chooses the
// default model in a chat with the default assistant.
type ModelChoice struct {
	// PersonaID is the assistant whose chat it is: a provider restricted
	// to assistants is used only in the chats of those
	// (CanUseLLMProviderWith).
	PersonaID int64
	// PersonaModelID is the assistant's own model (its
	// default_model_configuration_id), if it has one.
	PersonaModelID       *int64
	ModelConfigurationID *int64 // A configured model, by id: it wins over the names.
	ProviderName         string // A provider by name (Onyx's model_provider; the first of that name).
	ModelVersion         string // The model's name at that provider (Onyx's model_version).
}

// ErrNoDefaultModel answers a choice that falls back to the default model
// when there is none (Onyx's words).
var ErrNoDefaultModel = Errorf(EINVALID, "No default LLM model found")

// ChooseChatModel returns the model an answer of c goes to, as Onyx
// v4.6.1's get_llm_for_persona: the model the person chose by
// configuration id; else the provider they named, with the model they
// named or, without one, the assistant's model's name; else the
// assistant's model (its name replaced by the model they named, if any).
// That model is used when it exists and c may use its provider with the
// assistant (CanUseLLMProviderWith); otherwise the default model def
// (ErrNoDefaultModel when nil), whoever c is, as in Onyx. providers are
// all the providers, def the default model (LLMProviders' answers).
func ChooseChatModel(c *Caller, providers []*LLMProvider, def *DefaultModel, choice ModelChoice) (*ChatModel, error) {
	chosen, name := choice.resolve(providers)
	if chosen != nil && c != nil && c.CanUseLLMProviderWith(chosen, choice.PersonaID) {
		return chatModel(chosen, name), nil
	}
	if def != nil {
		for _, p := range providers {
			if p.ID == def.ProviderID {
				return chatModel(p, def.ModelName), nil
			}
		}
	}
	return nil, ErrNoDefaultModel
}

// resolve returns the provider and model's name ch names among providers
// (Onyx's _resolve_provider_and_model), or nil when it names none or one
// that is not there.
func (ch ModelChoice) resolve(providers []*LLMProvider) (*LLMProvider, string) {
	byID := func(id *int64) (*LLMProvider, string) {
		if id == nil {
			return nil, ""
		}
		for _, p := range providers {
			for _, m := range p.Models {
				if m.ID == *id {
					return p, m.Name
				}
			}
		}
		return nil, ""
	}
	switch {
	case ch.ModelConfigurationID != nil:
		return byID(ch.ModelConfigurationID)
	case ch.ProviderName != "":
		i := slices.IndexFunc(providers, func(p *LLMProvider) bool { return p.Name != nil && *p.Name == ch.ProviderName })
		if i < 0 {
			return nil, ""
		}
		name := ch.ModelVersion
		if name == "" {
			_, name = byID(ch.PersonaModelID)
		}
		if name == "" {
			return nil, ""
		}
		return providers[i], name
	}
	p, name := byID(ch.PersonaModelID)
	if p != nil && ch.ModelVersion != "" {
		name = ch.ModelVersion
	}
	return p, name
}

// chatModel returns model name of p as a ChatModel.
func chatModel(p *LLMProvider, name string) *ChatModel {
	window := int64(DefaultMaxInputTokens)
	if m := p.Model(name); m != nil {
		window = m.ContextWindow()
	}
	return &ChatModel{Provider: p, Model: name, MaxInputTokens: window}
}
