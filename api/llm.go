package api

import (
	"errors"
	"net/http"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api/decode"
	"github.com/quarryhq/quarry/outbound"
)

// Model providers, with Onyx v4.6.1's routes and models
// (backend/onyx/server/manage/llm/api.py, models.py): admins list,
// create, change and delete them, choose the default model and test a
// configuration; people list those they may use, without keys. The rules
// are the root package's (llm.go), the writes the store's, the test
// outbound's (Service.TestModel). Errors carry Onyx's error_code, as
// Onyx's OnyxError does on these routes.

// llmAdmin admits holders of admin: Onyx's FULL_ADMIN_PANEL_ACCESS, which
// these routes require (manage:llms opens none of them in v4.6.1 either).
var llmAdmin = onyxGate(permitted(func(c *quarry.Caller) bool { return c.Has(quarry.PermAdmin) }, quarry.ErrNoPermission))

// llmUse admits those who may list the providers they may use
// (quarry.Caller.CanListLLMProviders).
var llmUse = onyxGate(permitted((*quarry.Caller).CanListLLMProviders, quarry.ErrNoPermission))

// llmCoded is onyxCoded with the codes Onyx's LLM routes use: a 400 is its
// VALIDATION_ERROR, a 409 its DUPLICATE_RESOURCE.
func llmCoded(h handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
		err := h(w, r, c)
		if oe := new(onyxCodedError); errors.As(err, oe) {
			return err // h gave its code.
		}
		switch quarry.ErrorCode(err) {
		case "":
			return nil
		case quarry.EINVALID:
			return onyxCodedError{err, "VALIDATION_ERROR"}
		case quarry.ECONFLICT:
			return onyxCodedError{err, "DUPLICATE_RESOURCE"}
		}
		return onyxCodedError{error: err}
	}
}

// llmTestTimeout is how long POST /admin/llm/test may take: the test's
// own bound, and the database's.
func (s *Server) llmTestTimeout() time.Duration { return outbound.TestModelTimeout + s.cfg.DBTimeout }

// llmProviderView is Onyx's LLMProviderView: a provider as admins see it,
// its key masked.
type llmProviderView struct {
	Name                *string                  `json:"name"`
	Provider            string                   `json:"provider"`
	APIKey              *string                  `json:"api_key"`
	APIBase             *string                  `json:"api_base"`
	APIVersion          *string                  `json:"api_version"`
	CustomConfig        map[string]string        `json:"custom_config"` // Always null: Quarry keeps none.
	IsPublic            bool                     `json:"is_public"`
	IsAutoMode          bool                     `json:"is_auto_mode"`
	Groups              []int64                  `json:"groups"`
	Personas            []int64                  `json:"personas"`
	DeploymentName      *string                  `json:"deployment_name"`
	ID                  int64                    `json:"id"`
	ModelConfigurations []modelConfigurationView `json:"model_configurations"`
}

// llmProviderDescriptor is Onyx's LLMProviderDescriptor: a provider as the
// people who may use it see it, without key or address.
type llmProviderDescriptor struct {
	ID                  int64                    `json:"id"`
	Name                *string                  `json:"name"`
	Provider            string                   `json:"provider"`
	ProviderDisplayName string                   `json:"provider_display_name"`
	ModelConfigurations []modelConfigurationView `json:"model_configurations"`
}

// modelConfigurationView is Onyx's ModelConfigurationView, as Onyx fills it
// for a provider whose models it does not know (a dynamic provider): what
// the admin configured, with no reasoning efforts, recommendation or
// vendor (which Onyx reads from LiteLLM's tables).
type modelConfigurationView struct {
	ID                        int64    `json:"id"`
	Name                      string   `json:"name"`
	IsVisible                 bool     `json:"is_visible"`
	MaxInputTokens            *int64   `json:"max_input_tokens"`
	SupportsImageInput        bool     `json:"supports_image_input"`
	SupportsReasoning         bool     `json:"supports_reasoning"`
	SupportedReasoningEfforts []string `json:"supported_reasoning_efforts"`
	IsRecommendedDefault      bool     `json:"is_recommended_default"`
	DisplayName               *string  `json:"display_name"`
	CustomDisplayName         *string  `json:"custom_display_name"`
	ProviderDisplayName       *string  `json:"provider_display_name"`
	Vendor                    *string  `json:"vendor"`
	Version                   *string  `json:"version"`
	Region                    *string  `json:"region"`
}

// defaultModelView is Onyx's DefaultModel.
type defaultModelView struct {
	ProviderID int64  `json:"provider_id"`
	ModelName  string `json:"model_name"`
}

// llmProviderResponse is Onyx's LLMProviderResponse of views or
// descriptors. Quarry keeps one default, the text one.
type llmProviderResponse[T any] struct {
	Providers         []T               `json:"providers"`
	DefaultText       *defaultModelView `json:"default_text"`
	DefaultVision     *defaultModelView `json:"default_vision"`
	DefaultChatNaming *defaultModelView `json:"default_chat_naming"`
}

func modelViews(p *quarry.LLMProvider) []modelConfigurationView {
	out := make([]modelConfigurationView, len(p.Models))
	for i, m := range p.Models {
		out[i] = modelConfigurationView{ID: m.ID, Name: m.Name, IsVisible: m.IsVisible, MaxInputTokens: m.MaxInputTokens,
			SupportsImageInput: m.SupportsImageInput, SupportsReasoning: m.SupportsReasoning, SupportedReasoningEfforts: []string{},
			DisplayName: m.DisplayName, CustomDisplayName: m.CustomDisplayName}
	}
	return out
}

func providerView(p *quarry.LLMProvider) llmProviderView {
	return llmProviderView{Name: p.Name, Provider: p.Provider, APIKey: p.MaskedKey(), APIBase: p.APIBase, APIVersion: p.APIVersion,
		IsPublic: p.IsPublic, Groups: p.Groups, Personas: p.Personas, DeploymentName: p.DeploymentName, ID: p.ID,
		ModelConfigurations: modelViews(p)}
}

func defaultView(d *quarry.DefaultModel) *defaultModelView {
	if d == nil {
		return nil
	}
	return &defaultModelView{ProviderID: d.ProviderID, ModelName: d.ModelName}
}

// handleListLLMProviders serves GET /admin/llm/provider: every provider,
// keys masked, and the default model.
func (s *Server) handleListLLMProviders(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in llmProvidersQuery
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	ps, def, err := s.db.LLMProviders(r.Context())
	if err != nil {
		return err
	}
	out := llmProviderResponse[llmProviderView]{Providers: make([]llmProviderView, len(ps)), DefaultText: defaultView(def)}
	for i, p := range ps {
		out.Providers[i] = providerView(p)
	}
	return writeJSON(w, http.StatusOK, out)
}

// handleListUsableLLMProviders serves GET /llm/provider: the providers the
// caller may use outside an assistant's chat
// (quarry.Caller.CanUseLLMProvider), without keys, and the default model.
func (s *Server) handleListUsableLLMProviders(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	ps, def, err := s.db.LLMProviders(r.Context())
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, usableProviders(ps, c.CanUseLLMProvider, defaultView(def)))
}

// handleListPersonaLLMProviders serves GET /llm/persona/{persona_id}/providers:
// the providers the caller may use in a chat with that assistant
// (quarry.Caller.CanUseLLMProviderWith), without keys; its default_text
// is the assistant's own model when the caller may use its provider with
// it, else the default model. An assistant that does not exist (or is
// deleted) is Onyx's 404, one the caller may not chat with its 403.
func (s *Server) handleListPersonaLLMProviders(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in personaLLMProvidersRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	p, err := s.db.ModelPersona(r.Context(), c, in.PersonaID)
	if err != nil {
		if quarry.ErrorCode(err) == quarry.ENOTFOUND {
			return onyxCodedError{err, "PERSONA_NOT_FOUND"}
		}
		return err
	}
	ps, def, err := s.db.LLMProviders(r.Context())
	if err != nil {
		return err
	}
	usable := func(lp *quarry.LLMProvider) bool { return c.CanUseLLMProviderWith(lp, p.ID) }
	text := defaultView(def)
	if p.ModelConfigurationID != nil {
		for _, lp := range ps {
			for _, m := range lp.Models {
				if m.ID == *p.ModelConfigurationID && usable(lp) {
					text = &defaultModelView{ProviderID: lp.ID, ModelName: m.Name}
				}
			}
		}
	}
	return writeJSON(w, http.StatusOK, usableProviders(ps, usable, text))
}

// usableProviders returns the descriptors of the providers of ps that
// usable admits, with text as the default model.
func usableProviders(ps []*quarry.LLMProvider, usable func(*quarry.LLMProvider) bool, text *defaultModelView) llmProviderResponse[llmProviderDescriptor] {
	out := llmProviderResponse[llmProviderDescriptor]{Providers: []llmProviderDescriptor{}, DefaultText: text}
	for _, p := range ps {
		if usable(p) {
			out.Providers = append(out.Providers, llmProviderDescriptor{ID: p.ID, Name: p.Name, Provider: p.Provider,
				ProviderDisplayName: quarry.LLMProviderDisplayName(p.Provider), ModelConfigurations: modelViews(p)})
		}
	}
	return out
}

// handlePutLLMProvider serves PUT /admin/llm/provider: it creates
// (is_creation=true) or changes a provider (store.DB.UpsertLLMProvider)
// and answers it, its key masked.
func (s *Server) handlePutLLMProvider(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in putLLMProviderRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	b := &in.Body
	u := quarry.LLMProviderUpsert{IsCreation: in.IsCreation, ID: value(b.ID), NameSet: b.Name.Present, Name: value(b.Name),
		Provider: quarry.NormalizeLLMProvider(b.Provider), APIKey: value(b.APIKey), APIKeyChanged: b.APIKeyChanged,
		APIBase: value(b.APIBase), APIVersion: value(b.APIVersion), DeploymentName: value(b.DeploymentName), CustomConfig: b.CustomConfig.Value,
		IsPublic: b.IsPublic, IsAutoMode: b.IsAutoMode, Groups: b.Groups, Personas: b.Personas}
	for _, m := range b.ModelConfigurations {
		u.Models = append(u.Models, quarry.ModelConfigurationUpsert{Name: m.Name, IsVisible: m.IsVisible, MaxInputTokens: value(m.MaxInputTokens),
			SupportsImageInput: value(m.SupportsImageInput), SupportsReasoning: value(m.SupportsReasoning),
			DisplayName: value(m.DisplayName), CustomDisplayName: value(m.CustomDisplayName)})
	}
	p, err := s.db.UpsertLLMProvider(r.Context(), c, u)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, providerView(p))
}

// handleDeleteLLMProvider serves DELETE /admin/llm/provider/{provider_id}.
func (s *Server) handleDeleteLLMProvider(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in deleteLLMProviderRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	if err := s.db.DeleteLLMProvider(r.Context(), c, in.ID, in.Force); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, nil)
}

// handleSetDefaultModel serves POST /admin/llm/default.
func (s *Server) handleSetDefaultModel(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in setDefaultModelRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	if err := s.db.SetDefaultModel(r.Context(), c, quarry.DefaultModel{ProviderID: in.Body.ProviderID, ModelName: in.Body.ModelName}); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, nil)
}

// handleTestLLM serves POST /admin/llm/test (outbound.Service.TestModel):
// null when the model answered, 400 with why not.
func (s *Server) handleTestLLM(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in testLLMRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	b := &in.Body
	t := quarry.LLMTest{ID: value(b.ID), Provider: quarry.NormalizeLLMProvider(b.Provider), Model: b.Model, APIKey: value(b.APIKey),
		APIBase: value(b.APIBase), APIVersion: value(b.APIVersion), CustomConfig: b.CustomConfig.Value,
		DeploymentName: value(b.DeploymentName), APIKeyChanged: b.APIKeyChanged}
	if err := s.out.TestModel(r.Context(), t); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, nil)
}
