package api

import (
	"context"
	"net/http"
	"slices"

	"github.com/google/uuid"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api/decode"
	"github.com/quarryhq/quarry/store"
)

// Assistants (Onyx's personas, or agents), with Onyx v4.6.1's routes
// (backend/onyx/server/features/persona/api.py) and models: everyone who
// may use Quarry makes assistants and changes those they may
// (store/persona.go, with the rules of persona.go); admins and curators
// list, feature and hide them; admins order them and keep their labels.
// A chat session is made with one (api/chat.go).

// personaAccess admits curators and those who manage assistants: Onyx's
// current_curator_or_admin_user.
var personaAccess = permitted(func(c *quarry.Caller) bool { return c.IsCurator() || c.ManagesPersonas() }, quarry.ErrNotCurator)

// minimalUser is Onyx's MinimalUserSnapshot.
type minimalUser struct {
	ID    string `json:"id"`
	Email string `json:"email"`
}

// personaOwnerGroup is Onyx's PersonaOwnerGroupSnapshot.
type personaOwnerGroup struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

// personaLabel is Onyx's PersonaLabelSnapshot (and PersonaLabelResponse).
type personaLabel struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

// personaUserShare is Onyx's PersonaUserShare.
type personaUserShare struct {
	User       minimalUser              `json:"user"`
	Permission quarry.PersonaPermission `json:"permission"`
}

// personaGroupShare is Onyx's PersonaGroupShare.
type personaGroupShare struct {
	GroupID    int64                    `json:"group_id"`
	GroupName  string                   `json:"group_name"`
	Permission quarry.PersonaPermission `json:"permission"`
}

// minimalPersona is Onyx's MinimalPersonaSnapshot. Quarry has no
// hierarchy nodes or attached documents: their counts are 0.
type minimalPersona struct {
	ID                          int64                   `json:"id"`
	Name                        string                  `json:"name"`
	Description                 string                  `json:"description"`
	Tools                       []toolRecord            `json:"tools"`
	StarterMessages             []quarry.StarterMessage `json:"starter_messages"`
	DocumentSets                []documentSetSummary    `json:"document_sets"`
	HierarchyNodeCount          int                     `json:"hierarchy_node_count"`
	AttachedDocumentCount       int                     `json:"attached_document_count"`
	KnowledgeSources            []quarry.DocumentSource `json:"knowledge_sources"`
	DefaultModelConfigurationID *int64                  `json:"default_model_configuration_id"`
	UploadedImageID             *string                 `json:"uploaded_image_id"`
	IconName                    *string                 `json:"icon_name"`
	IsPublic                    bool                    `json:"is_public"`
	IsListed                    bool                    `json:"is_listed"`
	DisplayPriority             *int64                  `json:"display_priority"`
	IsFeatured                  bool                    `json:"is_featured"`
	BuiltinPersona              bool                    `json:"builtin_persona"`
	Labels                      []personaLabel          `json:"labels"`
	Owner                       *minimalUser            `json:"owner"`
	OwnerGroup                  *personaOwnerGroup      `json:"owner_group"`
	UserPermission              *quarry.PersonaAccess   `json:"user_permission"`
}

// personaSnapshot is Onyx's PersonaSnapshot.
type personaSnapshot struct {
	ID                          int64                    `json:"id"`
	Name                        string                   `json:"name"`
	Description                 string                   `json:"description"`
	IsPublic                    bool                     `json:"is_public"`
	IsListed                    bool                     `json:"is_listed"`
	UploadedImageID             *string                  `json:"uploaded_image_id"`
	IconName                    *string                  `json:"icon_name"`
	UserFileIDs                 []string                 `json:"user_file_ids"`
	DisplayPriority             *int64                   `json:"display_priority"`
	IsFeatured                  bool                     `json:"is_featured"`
	BuiltinPersona              bool                     `json:"builtin_persona"`
	StarterMessages             []quarry.StarterMessage  `json:"starter_messages"`
	Tools                       []toolRecord             `json:"tools"`
	Labels                      []personaLabel           `json:"labels"`
	Owner                       *minimalUser             `json:"owner"`
	OwnerGroup                  *personaOwnerGroup       `json:"owner_group"`
	Users                       []minimalUser            `json:"users"`
	Groups                      []int64                  `json:"groups"`
	UserShares                  []personaUserShare       `json:"user_shares"`
	GroupShares                 []personaGroupShare      `json:"group_shares"`
	PublicPermission            quarry.PersonaPermission `json:"public_permission"`
	SharingStatus               quarry.PersonaSharing    `json:"sharing_status"`
	DocumentSets                []documentSetSummary     `json:"document_sets"`
	DefaultModelConfigurationID *int64                   `json:"default_model_configuration_id"`
	HierarchyNodes              []struct{}               `json:"hierarchy_nodes"`
	AttachedDocuments           []struct{}               `json:"attached_documents"`
	SystemPrompt                *string                  `json:"system_prompt"`
	ReplaceBaseSystemPrompt     bool                     `json:"replace_base_system_prompt"`
	TaskPrompt                  *string                  `json:"task_prompt"`
	DatetimeAware               bool                     `json:"datetime_aware"`
}

// fullPersona is Onyx's FullPersonaSnapshot.
type fullPersona struct {
	personaSnapshot
	SearchStartDate *string               `json:"search_start_date"`
	UserPermission  *quarry.PersonaAccess `json:"user_permission"`
	AdminCount      int64                 `json:"admin_count"`
	OwnershipVacant bool                  `json:"ownership_vacant"`
}

// personaViews renders assistants: it reads their tools and document sets
// once for all of them.
type personaViews struct {
	s     *Server
	c     *quarry.Caller // The reader.
	tools map[int64]*quarry.Tool
	sets  map[int64]*quarry.DocumentSet
}

// personaViewsOf reads what ps's snapshots show to c. A set of an
// assistant shows c what c's listing of sets shows of it (only the pairs c
// may see, DB.DocumentSets); a set c may not see, its id and name alone.
func (s *Server) personaViewsOf(ctx context.Context, c *quarry.Caller, ps []*quarry.Persona) (*personaViews, error) {
	v := &personaViews{s: s, c: c, tools: map[int64]*quarry.Tool{}, sets: map[int64]*quarry.DocumentSet{}}
	ts, err := s.db.Tools(ctx)
	if err != nil {
		return nil, err
	}
	for _, t := range ts {
		v.tools[t.ID] = t
	}
	var ids []int64
	for _, p := range ps {
		ids = append(ids, p.DocumentSetIDs...)
	}
	if len(ids) == 0 {
		return v, nil
	}
	sets, err := s.db.DocumentSetsByID(ctx, ids)
	if err != nil {
		return nil, err
	}
	seen, err := s.db.DocumentSets(ctx, c, false)
	if err != nil {
		return nil, err
	}
	for _, set := range sets {
		v.sets[set.ID] = &quarry.DocumentSet{ID: set.ID, Name: set.Name, Pairs: []quarry.DocumentSetPair{}, Users: []string{}, Groups: []int64{}}
	}
	for _, set := range seen {
		if v.sets[set.ID] != nil {
			v.sets[set.ID] = set
		}
	}
	return v, nil
}

// parts returns p's tools, sets, labels, owner and owner group as the
// snapshots show them, and the sources of its sets' pairs (sorted).
func (v *personaViews) parts(p *quarry.Persona) ([]toolRecord, []documentSetSummary, []personaLabel, *minimalUser, *personaOwnerGroup, []quarry.DocumentSource) {
	tools := []toolRecord{}
	for _, id := range p.ToolIDs {
		if t := v.tools[id]; t != nil {
			tools = append(tools, v.s.toolView(t))
		}
	}
	sets, sources := []documentSetSummary{}, []quarry.DocumentSource{}
	for _, id := range p.DocumentSetIDs {
		if set := v.sets[id]; set != nil {
			sets = append(sets, documentSetSummaryOf(set))
			for _, pair := range set.Pairs {
				if !slices.Contains(sources, pair.Source) {
					sources = append(sources, pair.Source)
				}
			}
		}
	}
	slices.Sort(sources)
	labels := make([]personaLabel, len(p.Labels))
	for i, l := range p.Labels {
		labels[i] = personaLabel(l)
	}
	var owner *minimalUser
	if p.OwnerID != nil {
		owner = &minimalUser{ID: *p.OwnerID, Email: p.OwnerEmail}
	}
	var group *personaOwnerGroup
	if p.OwnerGroupID != nil {
		group = &personaOwnerGroup{ID: *p.OwnerGroupID, Name: p.OwnerGroupName}
	}
	return tools, sets, labels, owner, group, sources
}

// minimal renders p as c lists it: the owner's email only for admins and
// the owner (Onyx keeps it from the others).
func (v *personaViews) minimal(c *quarry.Caller, p *quarry.Persona) minimalPersona {
	tools, sets, labels, owner, group, sources := v.parts(p)
	if owner != nil && !c.CanSeePersonaOwnerEmail(p) {
		owner.Email = ""
	}
	var access *quarry.PersonaAccess
	if a := c.PersonaAccessOf(p); a != "" {
		access = &a
	}
	return minimalPersona{ID: p.ID, Name: p.Name, Description: p.Description, Tools: tools, StarterMessages: p.StarterMessages,
		DocumentSets: sets, KnowledgeSources: sources, DefaultModelConfigurationID: p.ModelConfigurationID, IconName: p.IconName,
		UploadedImageID: p.UploadedImageID, IsPublic: p.IsPublic, IsListed: p.IsListed, DisplayPriority: p.DisplayPriority, IsFeatured: p.IsFeatured, BuiltinPersona: p.Builtin,
		Labels: labels, Owner: owner, OwnerGroup: group, UserPermission: access}
}

// snapshot renders p as Onyx's PersonaSnapshot.
func (v *personaViews) snapshot(p *quarry.Persona) personaSnapshot {
	tools, sets, labels, owner, group, _ := v.parts(p)
	if owner != nil && !v.c.CanSeePersonaOwnerEmail(p) {
		owner.Email = ""
	}
	// The emails of those it is shared with, for those who manage its
	// shares (personal data, as the owner's).
	emails := v.c.CanEditPersona(p)
	users, shares := make([]minimalUser, len(p.UserShares)), make([]personaUserShare, len(p.UserShares))
	for i, u := range p.UserShares {
		users[i] = minimalUser{ID: u.UserID}
		if emails || u.UserID == v.c.ID {
			users[i].Email = u.Email
		}
		shares[i] = personaUserShare{User: users[i], Permission: u.Permission}
	}
	groups := make([]personaGroupShare, len(p.GroupShares))
	for i, g := range p.GroupShares {
		groups[i] = personaGroupShare{GroupID: g.GroupID, GroupName: g.Name, Permission: g.Permission}
	}
	return personaSnapshot{ID: p.ID, Name: p.Name, Description: p.Description, IsPublic: p.IsPublic, IsListed: p.IsListed,
		IconName: p.IconName, UploadedImageID: p.UploadedImageID, UserFileIDs: []string{}, DisplayPriority: p.DisplayPriority, IsFeatured: p.IsFeatured, BuiltinPersona: p.Builtin,
		StarterMessages: p.StarterMessages, Tools: tools, Labels: labels, Owner: owner, OwnerGroup: group, Users: users, Groups: p.GroupIDs(),
		UserShares: shares, GroupShares: groups, PublicPermission: p.PublicPermission, SharingStatus: p.Sharing(), DocumentSets: sets,
		DefaultModelConfigurationID: p.ModelConfigurationID, HierarchyNodes: []struct{}{}, AttachedDocuments: []struct{}{},
		SystemPrompt: p.SystemPrompt, ReplaceBaseSystemPrompt: p.ReplaceBasePrompt, TaskPrompt: p.TaskPrompt, DatetimeAware: p.DatetimeAware}
}

// writeSnapshot answers p as Onyx's PersonaSnapshot, as c reads it.
func (s *Server) writeSnapshot(w http.ResponseWriter, r *http.Request, c *quarry.Caller, p *quarry.Persona) error {
	v, err := s.personaViewsOf(r.Context(), c, []*quarry.Persona{p})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, v.snapshot(p))
}

// handleCreatePersona serves POST /persona: the new assistant, c's.
func (s *Server) handleCreatePersona(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in createPersonaRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	p, err := s.db.CreatePersona(r.Context(), c, in.Body.input(0))
	if err != nil {
		return err
	}
	return s.writeSnapshot(w, r, c, p)
}

// handleUpdatePersona serves PATCH /persona/{persona_id}.
func (s *Server) handleUpdatePersona(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in updatePersonaRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	p, err := s.db.UpdatePersona(r.Context(), c, in.Body.input(in.ID))
	if err != nil {
		return err
	}
	return s.writeSnapshot(w, r, c, p)
}

// handleGetPersona serves GET /persona/{persona_id}: Onyx's
// FullPersonaSnapshot, with what c holds on it.
func (s *Server) handleGetPersona(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in personaRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	ctx := r.Context()
	p, err := s.db.Persona(ctx, c, in.ID)
	if err != nil {
		return err
	}
	admins, err := s.db.ActiveAdminCount(ctx)
	if err != nil {
		return err
	}
	v, err := s.personaViewsOf(ctx, c, []*quarry.Persona{p})
	if err != nil {
		return err
	}
	out := fullPersona{personaSnapshot: v.snapshot(p), AdminCount: admins, OwnershipVacant: p.Vacant()}
	if a := c.PersonaAccessOf(p); a != "" {
		out.UserPermission = &a
	}
	if p.SearchStartDate != nil {
		d := pythonISO(p.SearchStartDate.Time)
		out.SearchStartDate = &d
	}
	return writeJSON(w, http.StatusOK, out)
}

// handleListPersonas serves GET /persona: the assistants c sees, minimal,
// those of persona_ids when given.
func (s *Server) handleListPersonas(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in personasQuery
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	ps, err := s.db.Personas(r.Context(), c, quarry.PersonaListing{IncludeDefault: true, IncludeDeleted: in.IncludeDeleted})
	if err != nil {
		return err
	}
	if len(in.PersonaIDs) > 0 {
		ps = slices.DeleteFunc(ps, func(p *quarry.Persona) bool { return !slices.Contains(in.PersonaIDs, p.ID) })
	}
	v, err := s.personaViewsOf(r.Context(), c, ps)
	if err != nil {
		return err
	}
	out := make([]minimalPersona, len(ps))
	for i, p := range ps {
		out[i] = v.minimal(c, p)
	}
	return writeJSON(w, http.StatusOK, out)
}

// handleAdminPersonas serves GET /admin/persona: the assistants c sees (or
// may change, with get_editable), as PersonaSnapshot.
func (s *Server) handleAdminPersonas(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in adminPersonasQuery
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	ps, err := s.db.Personas(r.Context(), c, quarry.PersonaListing{Editable: in.GetEditable, IncludeDefault: true, IncludeDeleted: in.IncludeDeleted})
	if err != nil {
		return err
	}
	v, err := s.personaViewsOf(r.Context(), c, ps)
	if err != nil {
		return err
	}
	out := make([]personaSnapshot, len(ps))
	for i, p := range ps {
		out[i] = v.snapshot(p)
	}
	return writeJSON(w, http.StatusOK, out)
}

// agentsPage returns the page in asks for of c's listing, and the
// listing's length.
func (s *Server) agentsPage(r *http.Request, c *quarry.Caller, in agentsQuery) ([]*quarry.Persona, int64, *personaViews, error) {
	ps, err := s.db.Personas(r.Context(), c, quarry.PersonaListing{Editable: in.GetEditable, IncludeDefault: in.IncludeDefault,
		IncludeDeleted: in.IncludeDeleted})
	if err != nil {
		return nil, 0, nil, err
	}
	total := int64(len(ps))
	from := total // A page past the end, however far (page_num*page_size may overflow).
	if in.PageNum < total/in.PageSize+1 {
		from = min(in.PageNum*in.PageSize, total)
	}
	page := ps[from:min(from+in.PageSize, total)]
	v, err := s.personaViewsOf(r.Context(), c, page)
	return page, total, v, err
}

// handleAgents serves GET /agents: a page of the assistants c sees,
// minimal, with their number.
func (s *Server) handleAgents(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in agentsQuery
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	page, total, v, err := s.agentsPage(r, c, in)
	if err != nil {
		return err
	}
	out := paginated[minimalPersona]{Items: make([]minimalPersona, len(page)), TotalItems: int(total)}
	for i, p := range page {
		out.Items[i] = v.minimal(c, p)
	}
	return writeJSON(w, http.StatusOK, out)
}

// handleAdminAgents serves GET /admin/agents: a page of the assistants c
// sees, as PersonaSnapshot, with their number.
func (s *Server) handleAdminAgents(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in agentsQuery
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	page, total, v, err := s.agentsPage(r, c, in)
	if err != nil {
		return err
	}
	out := paginated[personaSnapshot]{Items: make([]personaSnapshot, len(page)), TotalItems: int(total)}
	for i, p := range page {
		out.Items[i] = v.snapshot(p)
	}
	return writeJSON(w, http.StatusOK, out)
}

// handleDeletePersona serves DELETE /persona/{persona_id}: null.
func (s *Server) handleDeletePersona(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in personaRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	if err := s.db.DeletePersona(r.Context(), c, in.ID); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, nil)
}

// handleAdminPersonaChange serves PATCH /admin/persona/{persona_id}/listed,
// /featured and /undelete (admins only): one pattern, as Go's mux cannot
// tell Onyx's three apart from PATCH /admin/persona/label/{label_id}
// otherwise. Another change is not found.
func (s *Server) handleAdminPersonaChange(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	switch r.PathValue("change") {
	case "listed":
		return s.handlePersonaListed(w, r, c)
	case "featured":
		return s.handlePersonaFeatured(w, r, c)
	case "undelete":
		if !c.IsAdmin() {
			return quarry.ErrNotAdmin
		}
		return s.handleUndeletePersona(w, r, c)
	}
	return quarry.Errorf(quarry.ENOTFOUND, "Not Found")
}

// handleUndeletePersona serves PATCH /admin/persona/{persona_id}/undelete:
// null.
func (s *Server) handleUndeletePersona(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in personaRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	if err := s.db.UndeletePersona(r.Context(), c, in.ID); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, nil)
}

// handlePersonaListed serves PATCH /admin/persona/{persona_id}/listed.
func (s *Server) handlePersonaListed(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in personaListedRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	return s.setPersonaFlag(w, r, c, in.ID, store.PersonaFlagListed, in.Body.IsListed)
}

// handlePersonaFeatured serves PATCH /admin/persona/{persona_id}/featured.
func (s *Server) handlePersonaFeatured(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in personaFeaturedRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	return s.setPersonaFlag(w, r, c, in.ID, store.PersonaFlagFeatured, in.Body.IsFeatured)
}

// handlePersonaPublic serves PATCH /persona/{persona_id}/public.
func (s *Server) handlePersonaPublic(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in personaPublicRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	return s.setPersonaFlag(w, r, c, in.ID, store.PersonaFlagPublic, in.Body.IsPublic)
}

// setPersonaFlag sets flag f of assistant id: null.
func (s *Server) setPersonaFlag(w http.ResponseWriter, r *http.Request, c *quarry.Caller, id int64, f store.PersonaFlag, on bool) error {
	if err := s.db.SetPersonaFlag(r.Context(), c, id, f, on); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, nil)
}

// handleDisplayPriorities serves PATCH /admin/agents/display-priorities:
// null.
func (s *Server) handleDisplayPriorities(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in displayPrioritiesRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	if err := s.db.SetPersonaPriorities(r.Context(), c, in.Body.DisplayPriorityMap); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, nil)
}

// handleSharePersona serves PATCH /persona/{persona_id}/share: null.
func (s *Server) handleSharePersona(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in sharePersonaRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	if err := s.db.SharePersona(r.Context(), c, in.ID, in.Body.input()); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, nil)
}

// handleTransferPersona serves POST
// /persona/{persona_id}/transfer-ownership: null.
func (s *Server) handleTransferPersona(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in transferPersonaRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	var user *string
	if u := value(in.Body.NewOwnerUserID); u != nil {
		id := uuid.UUID(*u).String()
		user = &id
	}
	if err := s.db.TransferPersona(r.Context(), c, in.ID, user, value(in.Body.NewOwnerGroupID)); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, nil)
}

// handleLeavePersona serves DELETE /persona/{persona_id}/share/me: null.
func (s *Server) handleLeavePersona(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in personaRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	if err := s.db.LeavePersona(r.Context(), c, in.ID); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, nil)
}

// handlePersonaLabels serves GET /persona/labels.
func (s *Server) handlePersonaLabels(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	ls, err := s.db.PersonaLabels(r.Context())
	if err != nil {
		return err
	}
	out := make([]personaLabel, len(ls))
	for i, l := range ls {
		out[i] = personaLabel(l)
	}
	return writeJSON(w, http.StatusOK, out)
}

// handleCreatePersonaLabel serves POST /persona/labels: the new label.
func (s *Server) handleCreatePersonaLabel(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in personaLabelCreateRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	l, err := s.db.CreatePersonaLabel(r.Context(), c, in.Body.Name)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, personaLabel(l))
}

// handleRenamePersonaLabel serves PATCH /admin/persona/label/{label_id}:
// null.
func (s *Server) handleRenamePersonaLabel(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in personaLabelPatchRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	if err := s.db.RenamePersonaLabel(r.Context(), c, in.ID, in.Body.LabelName); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, nil)
}

// handleDeletePersonaLabel serves DELETE /admin/persona/label/{label_id}:
// null.
func (s *Server) handleDeletePersonaLabel(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in personaLabelRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	if err := s.db.DeletePersonaLabel(r.Context(), c, in.ID); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, nil)
}
