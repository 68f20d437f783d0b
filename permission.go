package quarry

import (
	"math/bits"
	"slices"
)

// Permission is a token of the group permissions of Onyx v4.6.1
// (backend/onyx/db/enums.py, class Permission): user groups are granted
// permissions, and a user holds those of its groups, expanded by the
// tokens they imply (see Caller.Permissions). Quarry keeps Onyx's 26
// tokens so that Onyx's clients read and write the same values; the ones
// that name something Quarry has open its routes (see docs/decisions.md,
// "Group permissions").
type Permission string

// The permissions, in Onyx's order.
const (
	PermBasic                       Permission = "basic" // Granted to every group; every role but limited.
	PermReadConnectors              Permission = "read:connectors"
	PermReadDocumentSets            Permission = "read:document_sets"
	PermReadAgents                  Permission = "read:agents"
	PermReadUsers                   Permission = "read:users"
	PermReadSearch                  Permission = "read:search"
	PermReadChat                    Permission = "read:chat"
	PermWriteChat                   Permission = "write:chat"
	PermReadAdmin                   Permission = "read:admin"
	PermGenerateImage               Permission = "generate:image"
	PermUseLLMGateway               Permission = "use:llm_gateway"
	PermAddAgents                   Permission = "add:agents"
	PermManageAgents                Permission = "manage:agents"
	PermManageDocumentSets          Permission = "manage:document_sets"
	PermAddConnectors               Permission = "add:connectors"
	PermManageConnectors            Permission = "manage:connectors" // Connectors, credentials and cc-pairs, as an admin.
	PermManageLLMs                  Permission = "manage:llms"
	PermReadAgentAnalytics          Permission = "read:agent_analytics"
	PermManageActions               Permission = "manage:actions" // Custom tools, as an admin.
	PermReadQueryHistory            Permission = "read:query_history"
	PermManageUserGroups            Permission = "manage:user_groups" // User groups, as an admin.
	PermCreateUserAPIKeys           Permission = "create:user_api_keys"
	PermCreateServiceAccountAPIKeys Permission = "create:service_account_api_keys"
	PermCreateSlackDiscordBots      Permission = "create:slack_discord_bots"
	PermCraftSandbox                Permission = "craft_sandbox"
	PermAdmin                       Permission = "admin" // Everything: implies every other token.
	permCount                                  = 26
)

// permissions lists every Permission in Onyx's order; a PermissionSet's
// bit i stands for permissions[i].
var permissions = [permCount]Permission{
	PermBasic, PermReadConnectors, PermReadDocumentSets, PermReadAgents, PermReadUsers, PermReadSearch,
	PermReadChat, PermWriteChat, PermReadAdmin, PermGenerateImage, PermUseLLMGateway, PermAddAgents,
	PermManageAgents, PermManageDocumentSets, PermAddConnectors, PermManageConnectors, PermManageLLMs,
	PermReadAgentAnalytics, PermManageActions, PermReadQueryHistory, PermManageUserGroups,
	PermCreateUserAPIKeys, PermCreateServiceAccountAPIKeys, PermCreateSlackDiscordBots, PermCraftSandbox, PermAdmin,
}

// EnumValues returns every Permission, in Onyx's order.
func (Permission) EnumValues() []string {
	out := make([]string, len(permissions))
	for i, p := range permissions {
		out[i] = string(p)
	}
	return out
}

// index returns p's position in permissions, or -1.
func (p Permission) index() int { return slices.Index(permissions[:], p) }

// Valid reports whether p is one of the permissions.
func (p Permission) Valid() bool { return p.index() >= 0 }

// implied are the tokens that only ever come from others (Onyx's
// Permission.IMPLIED): no group is granted them.
var implied = setOf(PermReadConnectors, PermReadDocumentSets, PermReadAgents, PermReadUsers, PermReadSearch,
	PermReadChat, PermWriteChat, PermReadAdmin, PermGenerateImage, PermUseLLMGateway)

// notToggleable are the tokens that PUT
// /manage/admin/user-group/{id}/permissions cannot grant or revoke (Onyx's
// NON_TOGGLEABLE_PERMISSIONS): basic, which every group has, admin, which
// only the default group Admin has, craft_sandbox, and the implied ones.
var notToggleable = setOf(PermBasic, PermAdmin, PermCraftSandbox) | implied

// implies is Onyx's IMPLIED_PERMISSIONS: what holding a token brings
// besides itself (admin brings everything; see closure).
var implies = map[Permission][]Permission{
	PermAddAgents:          {PermReadAgents},
	PermManageAgents:       {PermAddAgents, PermReadAgents},
	PermManageDocumentSets: {PermReadDocumentSets, PermReadConnectors},
	PermAddConnectors:      {PermReadConnectors},
	PermManageConnectors:   {PermAddConnectors, PermReadConnectors},
	PermManageUserGroups:   {PermReadConnectors, PermReadDocumentSets, PermReadAgents, PermReadUsers},
	PermBasic:              {PermReadSearch, PermReadChat, PermWriteChat, PermGenerateImage, PermUseLLMGateway},
	PermWriteChat:          {PermReadChat},
	PermCraftSandbox:       {PermReadSearch, PermGenerateImage, PermUseLLMGateway},
}

// closure[i] is the set that holding permissions[i] amounts to: itself and
// everything it implies, to a fixed point.
var closure = func() (c [permCount]PermissionSet) {
	for i, p := range permissions {
		s := setOf(p)
		if p == PermAdmin {
			s = 1<<permCount - 1
		}
		for {
			next := s
			for _, q := range s.List() {
				next |= setOf(implies[q]...)
			}
			if next == s {
				break
			}
			s = next
		}
		c[i] = s
	}
	return c
}()

// Toggleable reports whether a group's grant of p may be given or taken
// away through the API.
func (p Permission) Toggleable() bool { return p.Valid() && !notToggleable.Has(p) }

// CheckToggle reports why a group's grant of p may not be set through the
// API (400).
func (p Permission) CheckToggle() error {
	if !p.Toggleable() {
		return Errorf(EINVALID, "Permission '%s' cannot be toggled via this endpoint", p)
	}
	return nil
}

// GrantList returns the permissions of grants once each, in Onyx's order.
func GrantList(grants []Permission) []Permission { return setOf(grants...).List() }

// PermissionSet is a set of permissions.
type PermissionSet uint32

// setOf returns the set of ps (unknown tokens are left out).
func setOf(ps ...Permission) PermissionSet {
	var s PermissionSet
	for _, p := range ps {
		if i := p.index(); i >= 0 {
			s |= 1 << i
		}
	}
	return s
}

// Has reports whether s holds p.
func (s PermissionSet) Has(p Permission) bool {
	i := p.index()
	return i >= 0 && s&(1<<i) != 0
}

// List returns the permissions of s in Onyx's order.
func (s PermissionSet) List() []Permission {
	out := make([]Permission, 0, bits.OnesCount32(uint32(s)))
	for i, p := range permissions {
		if s&(1<<i) != 0 {
			out = append(out, p)
		}
	}
	return out
}

// Sorted returns the values of s sorted as strings, as Onyx's GET
// /me/permissions lists them.
func (s PermissionSet) Sorted() []string {
	out := make([]string, 0, bits.OnesCount32(uint32(s)))
	for _, p := range s.List() {
		out = append(out, string(p))
	}
	slices.Sort(out)
	return out
}

// Expand returns s with everything its permissions imply.
func (s PermissionSet) Expand() PermissionSet {
	out := s
	for i := range permissions {
		if s&(1<<i) != 0 {
			out |= closure[i]
		}
	}
	return out
}

// RolePermissions returns what role r grants by itself, whatever the
// groups: admins admin (everything); global curators, curators and basic
// users basic; limited users nothing.
func RolePermissions(r Role) PermissionSet {
	switch r {
	case RoleAdmin:
		return setOf(PermAdmin)
	case RoleGlobalCurator, RoleCurator, RoleBasic:
		return setOf(PermBasic)
	}
	return 0
}

// EffectivePermissions returns the permissions of a user whose role is r
// and whose groups are granted grants: what the role grants and what the
// groups grant, expanded by what they imply. A limited user holds nothing,
// whatever its groups: the role is a cap. This is the one place where a
// user's rights are worked out; Caller.Permissions applies it.
func EffectivePermissions(r Role, grants []Permission) PermissionSet {
	if r == RoleLimited {
		return 0
	}
	return (RolePermissions(r) | setOf(grants...)).Expand()
}

// SetGrants records grants, the permissions granted to the groups c is a
// member of (as authenticated, with its Memberships), and works out c's
// permissions once (see Permissions).
func (c *Caller) SetGrants(grants []Permission) {
	c.Grants = grants
	c.permissions = EffectivePermissions(c.Role, grants) | AccountPermissions(c.Role, c.ServiceAccount)
	c.resolved = true
}

// Permissions returns what c may do: EffectivePermissions of its role and
// its groups' grants, and what its kind of account brings
// (AccountPermissions).
func (c *Caller) Permissions() PermissionSet {
	if c.resolved {
		return c.permissions
	}
	return EffectivePermissions(c.Role, c.Grants) | AccountPermissions(c.Role, c.ServiceAccount)
}

// AccountPermissions returns what a user holds by what it is, whatever its
// groups (Onyx v4.6.1's role_derived_permissions): the service account of
// an API key of the limited role, which joins no group, may chat
// (write:chat and the read:chat it implies), as a bot's key does in Onyx;
// every other user nothing.
func AccountPermissions(r Role, serviceAccount bool) PermissionSet {
	if serviceAccount && r == RoleLimited {
		return setOf(PermWriteChat).Expand()
	}
	return 0
}

// Has reports whether c holds permission p.
func (c *Caller) Has(p Permission) bool { return c.Permissions().Has(p) }

// ManagesConnectors reports whether c manages connectors, credentials and
// cc-pairs as an admin does: admins, and holders of manage:connectors.
// Curators manage those of the groups they curate (the rules of
// connector.go, credential.go and ccpair.go).
func (c *Caller) ManagesConnectors() bool { return c.Has(PermManageConnectors) }

// ManagesGroups reports whether c manages user groups as an admin does:
// admins, and holders of manage:user_groups. Curators change the groups
// they curate (see CanChangeGroup).
func (c *Caller) ManagesGroups() bool { return c.Has(PermManageUserGroups) }

// ManagesActions reports whether c manages custom tools (Onyx's actions)
// as an admin does: admins, and holders of manage:actions. Curators
// change the tools they own (see CanEditTool).
func (c *Caller) ManagesActions() bool { return c.Has(PermManageActions) }

// The doors of Quarry's routes (the gates of api/handler.go): each says
// whether c may call a family of routes at all; what it may then do is the
// business of the rules of each object.

// CanReachConnectors reports whether c may call the routes of connectors,
// cc-pairs, the status listing and indexing: curators (for the groups they
// curate) and those who manage connectors.
func (c *Caller) CanReachConnectors() bool { return c.IsCurator() || c.ManagesConnectors() }

// CanReachGroups reports whether c may call the routes that change a
// group's members and cc-pairs: curators (for the groups they curate) and
// those who manage groups.
func (c *Caller) CanReachGroups() bool { return c.IsCurator() || c.ManagesGroups() }

// CanReachActions reports whether c may call the routes that make and
// change custom tools: curators (for the tools they own) and those who
// manage actions.
func (c *Caller) CanReachActions() bool { return c.IsCurator() || c.ManagesActions() }

// CanListUsers reports whether c may list the users (GET /manage/users),
// as Onyx lets curators and admins: curators, and holders of read:users
// (admins and those who manage groups).
func (c *Caller) CanListUsers() bool { return c.IsCurator() || c.Has(PermReadUsers) }

// The refusals of the gates that admit callers to routes (403), one each
// (contract section 3.1).
var (
	// ErrLimited refuses limited callers every route closed to them, and
	// the run of a tool (Caller.CheckToolRun).
	ErrLimited = Errorf(EFORBIDDEN, "Access denied. User has limited permissions.")
	// ErrNotAdmin refuses the admins' routes to the others.
	ErrNotAdmin = Errorf(EFORBIDDEN, "Access denied. User is not an admin.")
	// ErrNotCurator refuses the routes that admit curators too to the
	// others.
	ErrNotCurator = Errorf(EFORBIDDEN, "Access denied. User is not a curator or admin.")
)
