package quarry

import (
	"cmp"
	"slices"
	"strings"

	"github.com/quarryhq/quarry/internal/pyrepr"
)

// Assistants, as Onyx v4.6.1 has them (its personas, or agents:
// backend/onyx/db/persona.py, persona_sharing.py and, for groups,
// backend/ee/onyx/db/persona.py): each with its instructions, its tools
// (the only ones the model may call in its chats), its document sets (the
// only documents its searches read, of those its person may read), its
// model, labels, and whom it is shared with. The default assistant is
// persona 0, built in and ownerless, from the first start. An assistant
// narrows what its person may see and never widens it. Store keeps them
// (store/persona.go); these are their rules.

// DefaultPersonaID is the id of the default assistant (Onyx's persona 0).
const DefaultPersonaID = 0

// PersonaPermission is the level a share gives (Onyx's
// PersonaSharePermission): VIEWER uses the assistant, EDITOR also changes
// it and its shares.
type PersonaPermission string

// The share levels, in Onyx's order.
const (
	PersonaEditor PersonaPermission = "EDITOR"
	PersonaViewer PersonaPermission = "VIEWER"
)

// EnumValues returns the share levels, in Onyx's order.
func (PersonaPermission) EnumValues() []string {
	return []string{string(PersonaEditor), string(PersonaViewer)}
}

// ModelName returns the name of Onyx's enumeration.
func (PersonaPermission) ModelName() string { return "PersonaSharePermission" }

// PersonaAccess is what a person holds on an assistant (Onyx's
// PersonaAccessLevel): OWNER, EDITOR or VIEWER; "" for none.
type PersonaAccess string

// The access levels.
const (
	PersonaOwnerAccess  PersonaAccess = "OWNER"
	PersonaEditorAccess PersonaAccess = "EDITOR"
	PersonaViewerAccess PersonaAccess = "VIEWER"
)

// PersonaSharing is an assistant's sharing as its snapshot shows it
// (Onyx's PersonaSharingStatus).
type PersonaSharing string

// The sharing statuses.
const (
	PersonaPrivate PersonaSharing = "PRIVATE"
	PersonaShared  PersonaSharing = "SHARED"
	PersonaPublic  PersonaSharing = "PUBLIC"
)

// StarterMessage is a message an assistant offers to start a chat with
// (Onyx's StarterMessage).
type StarterMessage struct {
	Name    string `json:"name"`
	Message string `json:"message"`
}

// PersonaUserShare is a person an assistant is shared with, at a level.
type PersonaUserShare struct {
	UserID     string
	Email      string
	Permission PersonaPermission
}

// PersonaGroupShare is a group an assistant is shared with, at a level.
type PersonaGroupShare struct {
	GroupID    int64
	Name       string
	Permission PersonaPermission
}

// PersonaLabel is a label assistants are filed under (Onyx's
// PersonaLabel); names are unique.
type PersonaLabel struct {
	ID   int64
	Name string
}

// Persona is an assistant (Onyx's Persona).
type Persona struct {
	ID          int64
	Name        string
	Description string
	// OwnerID is the person who owns it, OwnerGroupID the group that does
	// (one at most); neither for the built-in one, or one whose owner is
	// gone (vacant: admins manage it).
	OwnerID        *string
	OwnerEmail     string
	OwnerGroupID   *int64
	OwnerGroupName string
	Builtin        bool
	// IsPublic assistants are used by everyone, at PublicPermission.
	IsPublic         bool
	PublicPermission PersonaPermission
	IsListed         bool // Shown in the listings of those it is shared with.
	IsFeatured       bool
	DisplayPriority  *int64
	Deleted          bool
	// SystemPrompt is its instructions (nil for the default assistant:
	// Quarry's, DefaultSystemPrompt); TaskPrompt what the model is reminded
	// of with each question.
	SystemPrompt      *string
	TaskPrompt        *string
	DatetimeAware     bool
	ReplaceBasePrompt bool
	StarterMessages   []StarterMessage // nil: none given.
	// ModelConfigurationID is the model it answers with, if not the
	// default one.
	ModelConfigurationID *int64
	IconName             *string
	// UploadedImageID is its avatar, a file of the file store uploaded as
	// one (avatar.go); nil for none.
	UploadedImageID *string
	SearchStartDate *Time
	ToolIDs         []int64 // Ascending.
	DocumentSetIDs  []int64 // Ascending.
	Labels          []PersonaLabel
	UserShares      []PersonaUserShare  // Ascending by person.
	GroupShares     []PersonaGroupShare // Ascending by group.
	CreatedAt       Time
	UpdatedAt       Time
}

// GroupIDs returns the groups p is shared with, ascending.
func (p *Persona) GroupIDs() []int64 {
	ids := make([]int64, len(p.GroupShares))
	for i, g := range p.GroupShares {
		ids[i] = g.GroupID
	}
	return ids
}

// Sharing returns p's sharing status (Onyx's derive_persona_sharing_status):
// public, else shared (with a person or group, or owned by a group), else
// private.
func (p *Persona) Sharing() PersonaSharing {
	switch {
	case p.IsPublic:
		return PersonaPublic
	case len(p.UserShares) > 0 || len(p.GroupShares) > 0 || p.OwnerGroupID != nil:
		return PersonaShared
	}
	return PersonaPrivate
}

// Vacant reports whether no one owns p (Onyx's
// persona_ownership_is_vacant): an assistant not built in whose owner is
// gone. Admins manage and may give away vacant assistants.
func (p *Persona) Vacant() bool { return !p.Builtin && p.OwnerID == nil && p.OwnerGroupID == nil }

// Prompt returns the instructions p gives the model: Quarry's own
// (DefaultSystemPrompt) for the default assistant without instructions of
// its own; p's alone when it replaces them; otherwise Quarry's, then p's
// (Onyx's custom agent prompt), then its task prompt.
func (p *Persona) Prompt() string {
	own := strings.TrimSpace(value(p.SystemPrompt))
	if p.ID == DefaultPersonaID && p.SystemPrompt != nil {
		return *p.SystemPrompt
	}
	parts := []string{}
	if !p.ReplaceBasePrompt || own == "" {
		parts = append(parts, DefaultSystemPrompt)
	}
	if own != "" {
		parts = append(parts, own)
	}
	if task := strings.TrimSpace(value(p.TaskPrompt)); task != "" {
		parts = append(parts, task)
	}
	return strings.Join(parts, "\n\n")
}

// value returns *p, or the zero value for nil.
func value[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// ManagesPersonas reports whether c manages every assistant as Onyx's
// admins do: admins, and holders of manage:agents.
func (c *Caller) ManagesPersonas() bool { return c.Has(PermManageAgents) }

// ownsPersona reports whether c owns p: it is its owner, or a member of
// its owner group.
func (c *Caller) ownsPersona(p *Persona) bool {
	return p.OwnerID != nil && *p.OwnerID == c.ID || p.OwnerGroupID != nil && c.MemberOf(*p.OwnerGroupID)
}

// sharedPersona returns the best level p is shared with c at, through a
// share of its own, of a group it is a member of, or with everyone; ""
// when none.
func (c *Caller) sharedPersona(p *Persona) PersonaPermission {
	var best PersonaPermission
	note := func(level PersonaPermission) {
		if best != PersonaEditor {
			best = level
		}
	}
	for _, s := range p.UserShares {
		if s.UserID == c.ID {
			note(s.Permission)
		}
	}
	for _, g := range p.GroupShares {
		if c.MemberOf(g.GroupID) {
			note(g.Permission)
		}
	}
	if p.IsPublic {
		note(p.PublicPermission)
	}
	return best
}

// CanSeePersona reports whether c sees p in the listings of assistants
// and may start chats with it (Onyx's _add_user_filters without
// get_editable, which its create-chat-session asks): those who manage
// assistants every one; its owners always; others a listed one that is
// public or shared with them or with a group they are a member of.
func (c *Caller) CanSeePersona(p *Persona) bool {
	return c.ManagesPersonas() || c.ownsPersona(p) || p.IsListed && c.sharedPersona(p) != ""
}

// CanReadPersona reports whether c may read p by its id (Onyx's
// get_persona_by_id for reading): as CanSeePersona, but an unlisted one
// too, and the built-in ones.
func (c *Caller) CanReadPersona(p *Persona) bool {
	return c.ManagesPersonas() || c.ownsPersona(p) || p.Builtin && p.OwnerID == nil || c.sharedPersona(p) != ""
}

// CanEditPersona reports whether c may change p and its shares (Onyx's
// _add_user_filters with get_editable): those who manage assistants; its
// owners; those it is shared with as EDITOR (themselves, through a group,
// or everyone); and curators of every group it is shared with (at least
// one). The built-in assistant is changed by admins alone, through
// /admin/default-assistant or these routes.
func (c *Caller) CanEditPersona(p *Persona) bool {
	switch {
	case p.Builtin:
		return c.IsAdmin()
	case c.ManagesPersonas():
		return true
	case c.ownsPersona(p) || c.sharedPersona(p) == PersonaEditor:
		return true
	}
	groups := p.GroupIDs()
	return c.IsCurator() && len(groups) > 0 && c.CuratesAll(groups)
}

// PersonaAccessOf returns what c holds on p (Onyx's
// get_persona_access_level): OWNER for its owners, EDITOR for admins,
// else the best level it is shared with c at; "" for none.
func (c *Caller) PersonaAccessOf(p *Persona) PersonaAccess {
	switch {
	case c.ownsPersona(p):
		return PersonaOwnerAccess
	case c.IsAdmin():
		return PersonaEditorAccess
	}
	return PersonaAccess(c.sharedPersona(p))
}

// CanSeePersonaOwnerEmail reports whether c sees the email of p's owner
// in the listings (Onyx's _user_may_view_persona_owner_email: it is
// personal data): admins and its owner.
func (c *Caller) CanSeePersonaOwnerEmail(p *Persona) bool {
	return c.IsAdmin() || p.OwnerID != nil && *p.OwnerID == c.ID
}

// The refusals of assistants' own rules.
var (
	// ErrPersonaPublic answers a change of whether an assistant is public
	// by one who may edit it but does not own it (Onyx's 403).
	ErrPersonaPublic = Errorf(EFORBIDDEN, "You don't have permission to modify this persona")
	// ErrFeaturedPersona answers a new featured assistant of one who is
	// neither an admin nor a curator (Onyx's 400).
	ErrFeaturedPersona = Errorf(EINVALID, "Only admins can make a featured persona")
	// ErrBuiltinPersona answers a deletion, transfer or change of owner of
	// the built-in assistant (400).
	ErrBuiltinPersona = Errorf(EINVALID, "Built-in agents cannot be deleted or change ownership")
)

// ErrPersonaNotFound answers an assistant that does not exist, or that the
// caller may not read (404; Onyx's ValueError, a 400 there).
func ErrPersonaNotFound(id int64) error {
	return Errorf(ENOTFOUND, "Persona with ID %d does not exist or does not belong to user", id)
}

// ErrPersonaNotEditable answers a change of an assistant that does not
// exist or that the caller may not change (Onyx's 403 of
// fetch_persona_by_id_for_user: whether it exists does not leak).
func ErrPersonaNotEditable(id int64) error {
	return Errorf(EFORBIDDEN, "Persona with ID %d does not exist or user is not authorized to access it", id)
}

// ErrPersonaLabelNotFound answers a label that does not exist (404).
func ErrPersonaLabelNotFound(id int64) error {
	return Errorf(ENOTFOUND, "Persona label with ID %d does not exist", id)
}

// ErrPersonaLabelTaken answers a label named as another is (Onyx's 400).
func ErrPersonaLabelTaken(name string) error {
	return Errorf(EINVALID, "Label with name %s already exists. Please choose a different name.", pyrepr.Quote(name))
}

// CheckEditPersona reports why c may not change p (ErrPersonaNotEditable
// unless CanEditPersona).
func (c *Caller) CheckEditPersona(p *Persona) error {
	if !c.CanEditPersona(p) {
		return ErrPersonaNotEditable(p.ID)
	}
	return nil
}

// CheckDeletePersona reports why c may not delete p, which it may read:
// the built-in assistant is not deleted (Onyx lets anyone delete it, an
// oversight Quarry does not follow), and only those who manage
// assistants, its owners and curators of every group it is shared with
// delete one (Onyx's get_persona_by_id for edit: not those it is shared
// with as EDITOR).
func (c *Caller) CheckDeletePersona(p *Persona) error {
	groups := p.GroupIDs()
	switch {
	case p.Builtin:
		return ErrBuiltinPersona
	case c.ManagesPersonas() || c.ownsPersona(p):
		return nil
	case c.IsCurator() && len(groups) > 0 && c.CuratesAll(groups):
		return nil
	}
	return Errorf(EFORBIDDEN, "Persona with ID %d does not exist or does not belong to user", p.ID)
}

// CanSetPersonaPublic reports whether c decides whether p is public and at
// which level (Onyx: its owners and admins; its editors' changes of it
// are ignored by the share route, refused by the public one).
func (c *Caller) CanSetPersonaPublic(p *Persona) bool {
	if p.Builtin {
		return c.IsAdmin()
	}
	return c.ManagesPersonas() || c.ownsPersona(p)
}

// CanSetPersonaFlags reports whether c's changes of whether an assistant
// is listed or featured are kept (Onyx's ENG-4179: admins and curators;
// others' are ignored).
func (c *Caller) CanSetPersonaFlags() bool { return c.ManagesPersonas() || c.IsCurator() }

// CheckTransferPersona reports why c may not give p to another owner
// (Onyx's user_can_transfer_persona): only its owners, and admins a
// vacant one.
func (c *Caller) CheckTransferPersona(p *Persona) error {
	switch {
	case p.Builtin:
		return Errorf(EINVALID, "Built-in agents cannot change ownership")
	case c.ownsPersona(p) || c.IsAdmin() && p.Vacant():
		return nil
	}
	return Errorf(EFORBIDDEN, "Only the owner can transfer ownership of this agent")
}

// PersonaInput is an assistant to make, or what one is to become: Onyx's
// PersonaUpsertRequest. Nil fields are left as they are by a change.
type PersonaInput struct {
	ID                   int64 // The assistant to change; 0 for a new one.
	Name                 string
	Description          string
	DocumentSetIDs       []int64
	ToolIDs              []int64
	IsPublic             *bool
	ModelConfigurationID *int64
	StarterMessages      []StarterMessage
	Users                *[]string // Shared with, keeping each one's level (new ones VIEWER).
	Groups               *[]int64
	LabelIDs             *[]int64
	IsFeatured           *bool
	DisplayPriority      *int64
	IconName             *string
	SearchStartDate      *Time
	SystemPrompt         string
	TaskPrompt           string
	DatetimeAware        bool
	ReplaceBasePrompt    bool
	// UploadedImageID names its avatar (nil or "" for none; a change
	// keeps the one it has unless RemoveImage: PersonaImage).
	UploadedImageID *string
	RemoveImage     bool
	// What Quarry does not have: files of a person's own, hierarchy nodes,
	// single documents attached.
	UserFiles, HierarchyNodes, Documents int
}

// Check reports why in cannot be an assistant (400): it has no name, or
// asks for what Quarry does not have. It keeps each tool, set, person,
// group and label once, in ascending order.
func (in *PersonaInput) Check() error {
	in.DocumentSetIDs, in.ToolIDs = sortedSet(in.DocumentSetIDs), sortedSet(in.ToolIDs)
	for _, s := range []**[]string{&in.Users} {
		if *s != nil {
			v := sortedSet(**s)
			*s = &v
		}
	}
	for _, s := range []**[]int64{&in.Groups, &in.LabelIDs} {
		if *s != nil {
			v := sortedSet(**s)
			*s = &v
		}
	}
	action := "update"
	if in.ID == 0 {
		action = "create"
	}
	switch {
	case strings.TrimSpace(in.Name) == "":
		return Errorf(EINVALID, "An assistant needs a name")
	case in.UserFiles > 0:
		return Errorf(EINVALID, "User Knowledge is disabled. Cannot %s assistant with user files or projects.", action)
	case in.HierarchyNodes > 0:
		return Errorf(EINVALID, "Quarry has no hierarchy nodes: give the assistant document sets instead")
	case in.Documents > 0:
		return Errorf(EINVALID, "Quarry does not attach single documents to assistants: give the assistant document sets instead")
	}
	texts := []string{in.Name, in.Description, in.SystemPrompt, in.TaskPrompt}
	for _, t := range []*string{in.IconName, in.UploadedImageID} {
		if t != nil {
			texts = append(texts, *t)
		}
	}
	for _, m := range in.StarterMessages {
		texts = append(texts, m.Name, m.Message)
	}
	return CheckNoNUL(texts...)
}

// CheckPersonaDocumentSets reports why c may not give assistant in the sets
// sets (in's, by id; nil for one that does not exist) when old (nil for a
// new assistant) has sets before: each must exist (Onyx's
// "document_sets not found"), and each set added must be one c may see
// (Onyx's ENG-4180; those who manage assistants excepted), so that an
// assistant never reaches documents through a set its maker cannot see.
func (c *Caller) CheckPersonaDocumentSets(old *Persona, in *PersonaInput, sets map[int64]*DocumentSet) error {
	for _, id := range in.DocumentSetIDs {
		if sets[id] == nil {
			return Errorf(EINVALID, "document_sets not found")
		}
	}
	if c.ManagesPersonas() {
		return nil
	}
	for _, id := range in.DocumentSetIDs {
		if old != nil && slices.Contains(old.DocumentSetIDs, id) {
			continue
		}
		if !c.CanSeeDocumentSet(sets[id]) {
			return Errorf(EINVALID, "Cannot attach document sets you don't have access to")
		}
	}
	return nil
}

// CheckChatPersona reports why c may not chat with p (nil: no assistant of
// that id, or a deleted one): Onyx's 403 "User does not have access to
// persona" unless c may see it (CanSeePersona).
func (c *Caller) CheckChatPersona(p *Persona) error {
	if p == nil || p.Deleted || !c.CanSeePersona(p) {
		return ErrChatPersona
	}
	return nil
}

// CheckPersonaModels reports why c may not list the models it may use with
// assistant p (nil: no assistant of that id): one that does not exist or
// is deleted is Onyx's 404 "Persona not found", one c may not chat with
// (CanSeePersona) its 403.
func (c *Caller) CheckPersonaModels(p *Persona) error {
	switch {
	case p == nil || p.Deleted:
		return Errorf(ENOTFOUND, "Persona not found")
	case !c.CanSeePersona(p):
		return Errorf(EFORBIDDEN, "You don't have access to this assistant")
	}
	return nil
}

// PersonaShareInput is a change of whom an assistant is shared with
// (Onyx's PersonaShareRequest): nil fields are left as they are. Users
// and Groups keep each one's level (new ones VIEWER); UserShares and
// GroupShares give each its level.
type PersonaShareInput struct {
	Users            *[]string
	Groups           *[]int64
	UserShares       map[string]PersonaPermission
	GroupShares      map[int64]PersonaPermission
	IsPublic         *bool
	PublicPermission *PersonaPermission
	LabelIDs         *[]int64
}

// ApplyShares returns the shares of p after in, by c (Onyx's
// update_persona_shared): p's owner and owner group are left out of the
// shares; whether p is public, and at which level, changes only for its
// owners and admins (CanSetPersonaPublic), silently otherwise.
func (c *Caller) ApplyShares(p *Persona, in PersonaShareInput) (users []PersonaUserShare, groups []PersonaGroupShare, public bool, level PersonaPermission) {
	users, groups, public, level = p.UserShares, p.GroupShares, p.IsPublic, p.PublicPermission
	if c.CanSetPersonaPublic(p) {
		if in.IsPublic != nil {
			public = *in.IsPublic
		}
		if in.PublicPermission != nil {
			level = *in.PublicPermission
		}
	}
	userLevels := in.UserShares
	if userLevels == nil && in.Users != nil {
		userLevels = map[string]PersonaPermission{}
		for _, u := range *in.Users {
			userLevels[u] = PersonaViewer
			for _, s := range p.UserShares {
				if s.UserID == u {
					userLevels[u] = s.Permission
				}
			}
		}
	}
	if userLevels != nil {
		users = []PersonaUserShare{}
		for u, level := range userLevels {
			if p.OwnerID == nil || u != *p.OwnerID {
				users = append(users, PersonaUserShare{UserID: u, Permission: level})
			}
		}
		slices.SortFunc(users, func(a, b PersonaUserShare) int { return strings.Compare(a.UserID, b.UserID) })
	}
	groupLevels := in.GroupShares
	if groupLevels == nil && in.Groups != nil {
		groupLevels = map[int64]PersonaPermission{}
		for _, g := range *in.Groups {
			groupLevels[g] = PersonaViewer
			for _, s := range p.GroupShares {
				if s.GroupID == g {
					groupLevels[g] = s.Permission
				}
			}
		}
	}
	if groupLevels != nil {
		groups = []PersonaGroupShare{}
		for g, level := range groupLevels {
			if p.OwnerGroupID == nil || g != *p.OwnerGroupID {
				groups = append(groups, PersonaGroupShare{GroupID: g, Permission: level})
			}
		}
		slices.SortFunc(groups, func(a, b PersonaGroupShare) int { return cmp.Compare(a.GroupID, b.GroupID) })
	}
	return users, groups, public, level
}

// PersonaListing says which assistants a listing holds (Onyx's
// get_editable, include_default and include_deleted).
type PersonaListing struct {
	Editable       bool
	IncludeDefault bool
	IncludeDeleted bool
}

// Holds reports whether the listing of c holds p.
func (l PersonaListing) Holds(c *Caller, p *Persona) bool {
	switch {
	case p.Deleted && !l.IncludeDeleted, p.Builtin && !l.IncludeDefault:
		return false
	case l.Editable:
		return c.CanEditPersona(p)
	}
	return c.CanSeePersona(p)
}

// SortPersonas orders ps as Onyx's listings do: by display priority
// (ascending, those without last), then by id.
func SortPersonas(ps []*Persona) {
	slices.SortStableFunc(ps, func(a, b *Persona) int {
		switch {
		case a.DisplayPriority == nil && b.DisplayPriority != nil:
			return 1
		case a.DisplayPriority != nil && b.DisplayPriority == nil:
			return -1
		case a.DisplayPriority != nil && *a.DisplayPriority != *b.DisplayPriority:
			return cmp.Compare(*a.DisplayPriority, *b.DisplayPriority)
		}
		return cmp.Compare(abs(a.ID), abs(b.ID))
	})
}

// abs returns |n|.
func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}
