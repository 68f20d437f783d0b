package onyxtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// Onyx v4.6.1's PersonaManager and PersonaLabelManager
// (common_utils/managers/persona.py) and the replays of its tests of
// assistants: personas/, chat/test_chat_session_persona_access.py and
// permissions/test_persona_permissions.py. The managers read each answer
// into FullPersonaSnapshot or a label; here the keys they read are read
// (a missing one is a KeyError), and api/onyx_test checks every answer
// against the OpenAPI document.
//
// Left out: personas/test_persona_file_context.py (user files attached to
// an assistant): Quarry has none, and refuses them with a 400
// (docs/decisions.md, "Assistants"). The avatars' tests are replayed in
// personaavatar.go.

// daPersona is Onyx's DATestPersona.
type daPersona struct {
	ID                          int64
	Name, Description           string
	IsPublic                    bool
	SystemPrompt, TaskPrompt    string
	DatetimeAware               bool
	DocumentSetIDs, ToolIDs     []int64
	DefaultModelConfigurationID *int64
	Users                       []string // ids as created, emails once edited, as the manager keeps them
	Groups, LabelIDs            []int64
	IsFeatured                  bool
}

// personaArgs are PersonaManager.create's arguments (is_public true
// unless IsPublic says otherwise) and, with nil or empty meaning "as
// before", PersonaManager.edit's.
type personaArgs struct {
	Name, Description, SystemPrompt, TaskPrompt string
	IsPublic                                    *bool
	DatetimeAware                               bool
	DocumentSetIDs, ToolIDs                     []int64
	Users                                       []string
	Groups, LabelIDs                            []int64
	DisplayPriority                             *int64
	Featured                                    *bool
}

// personaUpsert is the body model_dump(mode="json") makes of
// PersonaUpsertRequest: every field, with its default where not given.
func personaUpsert(p daPersona, isPublic *bool, labelIDs []int64, userFileIDs []string, featured bool, priority *int64) map[string]any {
	users := make([]string, len(p.Users))
	for i, u := range p.Users {
		users[i] = uuid.MustParse(u).String()
	}
	var files any
	if userFileIDs != nil {
		files = userFileIDs
	}
	var labels any
	if labelIDs != nil {
		labels = labelIDs
	}
	return map[string]any{"name": p.Name, "description": p.Description, "document_set_ids": orEmpty(p.DocumentSetIDs),
		"is_public": isPublic, "default_model_configuration_id": p.DefaultModelConfigurationID, "starter_messages": nil,
		"users": users, "groups": orEmpty(p.Groups), "tool_ids": orEmpty(p.ToolIDs), "remove_image": nil,
		"uploaded_image_id": nil, "icon_name": nil, "search_start_date": nil, "label_ids": labels, "is_featured": featured,
		"display_priority": priority, "user_file_ids": files, "hierarchy_node_ids": []int64{}, "document_ids": []string{},
		"system_prompt": p.SystemPrompt, "replace_base_system_prompt": false, "task_prompt": p.TaskPrompt,
		"datetime_aware": p.DatetimeAware}
}

// createPersona is PersonaManager.create: the name test-persona-<uuid4>
// unless given, and a description and prompts made from it.
func (c client) createPersona(by User, a personaArgs) (daPersona, error) {
	if a.Name == "" {
		a.Name = "test-persona-" + uuid.NewString()
	}
	p := daPersona{Name: a.Name, Description: or(a.Description, "Description for "+a.Name),
		SystemPrompt: or(a.SystemPrompt, "System prompt for "+a.Name), TaskPrompt: or(a.TaskPrompt, "Task prompt for "+a.Name),
		IsPublic: a.IsPublic == nil || *a.IsPublic, DatetimeAware: a.DatetimeAware, DocumentSetIDs: orEmpty(a.DocumentSetIDs),
		ToolIDs: orEmpty(a.ToolIDs), Users: orEmpty(a.Users), Groups: orEmpty(a.Groups), LabelIDs: orEmpty(a.LabelIDs),
		IsFeatured: a.Featured != nil && *a.Featured}
	r, err := c.do(by, "POST", "/persona", personaUpsert(p, &p.IsPublic, p.LabelIDs, []string{}, p.IsFeatured, a.DisplayPriority))
	if err != nil {
		return p, err
	}
	obj, err := keys(r, "id")
	if err != nil {
		return p, err
	}
	return p, json.Unmarshal(obj["id"], &p.ID)
}

// editPersona is PersonaManager.edit: p with what a changes, read back
// from the answer (users as emails).
func (c client) editPersona(p daPersona, by User, a personaArgs) (daPersona, error) {
	q := p
	q.Name, q.Description = or(a.Name, p.Name), or(a.Description, p.Description)
	q.SystemPrompt, q.TaskPrompt = or(a.SystemPrompt, "System prompt for "+p.Name), or(a.TaskPrompt, "Task prompt for "+p.Name)
	q.DatetimeAware = a.DatetimeAware
	if a.IsPublic != nil {
		q.IsPublic = *a.IsPublic
	}
	q.DocumentSetIDs, q.ToolIDs = orElse(a.DocumentSetIDs, p.DocumentSetIDs), orElse(a.ToolIDs, p.ToolIDs)
	q.Users, q.Groups, q.LabelIDs = orElse(a.Users, p.Users), orElse(a.Groups, p.Groups), orElse(a.LabelIDs, p.LabelIDs)
	if a.Featured != nil {
		q.IsFeatured = *a.Featured
	}
	r, err := c.do(by, "PATCH", fmt.Sprintf("/persona/%d", p.ID), personaUpsert(q, &q.IsPublic, q.LabelIDs, nil, q.IsFeatured, nil))
	if err != nil {
		return q, err
	}
	var s personaView
	if err := parseKeys(r, &s, "id", "name", "description", "is_public", "document_sets", "tools",
		"users", "groups", "labels", "is_featured"); err != nil {
		return q, err
	}
	out := daPersona{ID: s.ID, Name: s.Name, Description: s.Description, IsPublic: s.IsPublic, SystemPrompt: q.SystemPrompt,
		TaskPrompt: q.TaskPrompt, DatetimeAware: q.DatetimeAware, DefaultModelConfigurationID: s.DefaultModelConfigurationID,
		Groups: s.Groups, IsFeatured: s.IsFeatured}
	out.DocumentSetIDs, out.ToolIDs, out.LabelIDs, out.Users = s.ids()
	return out, nil
}

// personaView holds the keys of a PersonaSnapshot (or
// FullPersonaSnapshot) that the managers and tests read.
type personaView struct {
	ID                          int64   `json:"id"`
	Name                        string  `json:"name"`
	Description                 string  `json:"description"`
	IsPublic                    bool    `json:"is_public"`
	IsListed                    bool    `json:"is_listed"`
	IsFeatured                  bool    `json:"is_featured"`
	DefaultModelConfigurationID *int64  `json:"default_model_configuration_id"`
	SystemPrompt                *string `json:"system_prompt"`
	TaskPrompt                  *string `json:"task_prompt"`
	DatetimeAware               bool    `json:"datetime_aware"`
	DocumentSets                []struct {
		ID int64 `json:"id"`
	} `json:"document_sets"`
	Tools []struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
	} `json:"tools"`
	Users []struct {
		Email string `json:"email"`
	} `json:"users"`
	Groups []int64 `json:"groups"`
	Labels []struct {
		ID int64 `json:"id"`
	} `json:"labels"`
	StarterMessages []json.RawMessage `json:"starter_messages"`
}

// ids returns the ids of v's document sets, tools and labels, and its
// users' emails.
func (v personaView) ids() (sets, tools, labels []int64, users []string) {
	sets, tools, labels, users = []int64{}, []int64{}, []int64{}, []string{}
	for _, s := range v.DocumentSets {
		sets = append(sets, s.ID)
	}
	for _, t := range v.Tools {
		tools = append(tools, t.ID)
	}
	for _, l := range v.Labels {
		labels = append(labels, l.ID)
	}
	for _, u := range v.Users {
		users = append(users, u.Email)
	}
	return sets, tools, labels, users
}

// parseKeys reads the object answer of r into v after checking that it
// has each of want (a KeyError otherwise).
func parseKeys(r *Response, v any, want ...string) error {
	if _, err := keys(r, want...); err != nil {
		return err
	}
	if err := json.Unmarshal(r.Body, v); err != nil {
		return &validationError{"FullPersonaSnapshot", err, r.Body}
	}
	return nil
}

// getAllPersonas is PersonaManager.get_all: GET /admin/persona.
func (c client) getAllPersonas(by User) ([]personaView, error) {
	r, err := c.do(by, "GET", "/admin/persona", nil)
	if err != nil {
		return nil, err
	}
	var out []personaView
	if err := json.Unmarshal(r.Body, &out); err != nil {
		return nil, &validationError{"list[FullPersonaSnapshot]", err, r.Body}
	}
	return out, nil
}

// getPersona is PersonaManager.get_one: GET /persona/{id}.
func (c client) getPersona(id int64, by User) (personaView, error) {
	var v personaView
	r, err := c.do(by, "GET", fmt.Sprintf("/persona/%d", id), nil)
	if err != nil {
		return v, err
	}
	return v, parseKeys(r, &v, "id", "name", "description", "is_public", "is_featured", "document_sets", "tools", "users",
		"groups", "labels", "system_prompt", "task_prompt", "datetime_aware", "default_model_configuration_id")
}

// verifyPersona is PersonaManager.verify: false, with the fields that
// differ logged (printed), unless GET /persona/{id} shows p. Its status
// error (raise_for_status) ends the test.
func (c client) verifyPersona(t *testing.T, p daPersona, by User) bool {
	t.Helper()
	v := must(c.getPersona(p.ID, by))(t)
	sets, tools, labels, users := v.ids()
	var diffs []string
	same := func(name string, want, got any) {
		if fmt.Sprint(want) != fmt.Sprint(got) {
			diffs = append(diffs, fmt.Sprintf("%s: expected %v, got %v", name, want, got))
		}
	}
	same("name", p.Name, v.Name)
	same("description", p.Description, v.Description)
	same("is_public", p.IsPublic, v.IsPublic)
	same("is_featured", p.IsFeatured, v.IsFeatured)
	same("default_model_configuration_id", deref(p.DefaultModelConfigurationID), deref(v.DefaultModelConfigurationID))
	same("system_prompt", p.SystemPrompt, deref(v.SystemPrompt))
	same("task_prompt", p.TaskPrompt, deref(v.TaskPrompt))
	same("datetime_aware", p.DatetimeAware, v.DatetimeAware)
	same("document_set_ids", sortedSet(p.DocumentSetIDs), sortedSet(sets))
	same("tool_ids", sortedSet(p.ToolIDs), sortedSet(tools))
	same("users", sortedSet(p.Users), sortedSet(users))
	same("groups", sortedSet(p.Groups), sortedSet(v.Groups))
	same("label_ids", sortedSet(p.LabelIDs), sortedSet(labels))
	if len(diffs) > 0 {
		t.Logf("Persona verification failed for id=%d. Fields mismatched: %s", p.ID, strings.Join(diffs, "; "))
		return false
	}
	return true
}

// deletePersona is PersonaManager.delete: whether the answer is not an
// error.
func (c client) deletePersona(p daPersona, by User) bool {
	_, err := c.do(by, "DELETE", fmt.Sprintf("/persona/%d", p.ID), nil)
	return err == nil
}

// daPersonaLabel is Onyx's DATestPersonaLabel.
type daPersonaLabel struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

// createPersonaLabel is PersonaLabelManager.create.
func (c client) createPersonaLabel(l daPersonaLabel, by User) (daPersonaLabel, error) {
	r, err := c.do(by, "POST", "/persona/labels", map[string]any{"name": l.Name})
	if err != nil {
		return l, err
	}
	obj, err := keys(r, "id")
	if err != nil {
		return l, err
	}
	return l, json.Unmarshal(obj["id"], &l.ID)
}

// updatePersonaLabel is PersonaLabelManager.update.
func (c client) updatePersonaLabel(l daPersonaLabel, by User) (daPersonaLabel, error) {
	_, err := c.do(by, "PATCH", fmt.Sprintf("/admin/persona/label/%d", l.ID), map[string]any{"label_name": l.Name})
	return l, err
}

// deletePersonaLabel is PersonaLabelManager.delete: whether the answer is
// not an error.
func (c client) deletePersonaLabel(l daPersonaLabel, by User) bool {
	_, err := c.do(by, "DELETE", fmt.Sprintf("/admin/persona/label/%d", l.ID), nil)
	return err == nil
}

// verifyPersonaLabel is PersonaLabelManager.verify: the label is listed
// with its name.
func (c client) verifyPersonaLabel(l daPersonaLabel, by User) (bool, error) {
	r, err := c.do(by, "GET", "/persona/labels", nil)
	if err != nil {
		return false, err
	}
	var all []daPersonaLabel
	if err := json.Unmarshal(r.Body, &all); err != nil {
		return false, &validationError{"list[DATestPersonaLabel]", err, r.Body}
	}
	for _, f := range all {
		if f.ID == l.ID {
			return f.Name == l.Name, nil
		}
	}
	return false, nil
}

// or returns s, or def when s is empty (Python's `s or def`).
func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// orElse returns s, or def when s is empty (Python's `s or def`).
func orElse[T any](s, def []T) []T {
	if len(s) == 0 {
		return orEmpty(def)
	}
	return s
}

// sortedSet returns the distinct items of s, sorted.
func sortedSet[T int64 | string](s []T) []T {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}

// listPersonaIDs is the tests' _list_minimal_personas: the ids of GET
// /persona as by.
func (c client) listPersonaIDs(t *testing.T, by User) []int64 {
	t.Helper()
	r := must(c.do(by, "GET", "/persona", nil))(t)
	var ps []struct {
		ID int64 `json:"id"`
	}
	ok(t, json.Unmarshal(r.Body, &ps))
	ids := make([]int64, len(ps))
	for i, p := range ps {
		ids[i] = p.ID
	}
	return ids
}

// personaReplays are the replays of Onyx's tests of assistants.
var personaReplays = []Replay{
	{Name: "personas/test_persona_creation.py/test_persona_create_update_share_delete", Run: func(t *testing.T, c client) {
		admin, basic := adminUser(t, c), must(c.createUser("basic_user", ""))(t)
		expected := must(c.createPersona(admin.caller(), personaArgs{}))(t)
		c.verifyPersona(t, expected, admin.caller())
		updated := must(c.editPersona(expected, admin.caller(), personaArgs{Name: "updated-" + expected.Name,
			Description: "updated-" + expected.Description, IsPublic: ptr(false)}))(t)
		check(t, c.verifyPersona(t, updated, admin.caller()), "verify the updated persona")
		check(t, slices.Contains(c.listPersonaIDs(t, admin.caller()), updated.ID), "the creator does not list it")
		check(t, !slices.Contains(c.listPersonaIDs(t, basic.caller()), updated.ID), "a regular user lists a private persona")
		must(c.do(admin.caller(), "PATCH", fmt.Sprintf("/persona/%d/share", updated.ID), map[string]any{"user_ids": []string{basic.ID}}))(t)
		check(t, slices.Contains(c.listPersonaIDs(t, basic.caller()), updated.ID), "the user it is shared with does not list it")
		check(t, c.deletePersona(updated, admin.caller()), "delete")
		check(t, !slices.Contains(c.listPersonaIDs(t, admin.caller()), updated.ID), "the creator lists it after deletion")
		check(t, !slices.Contains(c.listPersonaIDs(t, basic.caller()), updated.ID), "the regular user lists it after deletion")
	}},
	{Name: "personas/test_persona_label_updates.py/test_update_persona_with_null_label_ids_preserves_labels", Run: func(t *testing.T, c client) {
		admin := adminUser(t, c)
		label := must(c.createPersonaLabel(daPersonaLabel{Name: "Test label " + uuid.NewString()}, admin.caller()))(t)
		check(t, label.ID != 0, "the label has no id")
		p := must(c.createPersona(admin.caller(), personaArgs{LabelIDs: []int64{label.ID}}))(t)
		description := p.Description + "-updated"
		q := p
		q.Description, q.Users, q.Groups = description, []string{}, []int64{}
		// PersonaUpsertRequest(..., label_ids=None).model_dump(exclude_none=False).
		must(c.do(admin.caller(), "PATCH", fmt.Sprintf("/persona/%d", p.ID), personaUpsert(q, &q.IsPublic, nil, nil, false, nil)))(t)
		v := must(c.getPersona(p.ID, admin.caller()))(t)
		check(t, v.Description == description, "description %q", v.Description)
		_, _, labels, _ := v.ids()
		check(t, slices.Contains(labels, label.ID), "the label is gone: %v", labels)
	}},
	{Name: "personas/test_persona_categories.py/test_persona_label_management", Run: func(t *testing.T, c client) {
		admin := must(c.createUser("admin_user", ""))(t)
		label := must(c.createPersonaLabel(daPersonaLabel{Name: "Test label " + uuid.NewString()}, admin.caller()))(t)
		check(t, must(c.verifyPersonaLabel(label, admin.caller()))(t), "Persona label was not found after creation")
		regular := must(c.createUser("regular_user", ""))(t)
		updated := daPersonaLabel{ID: label.ID, Name: "Updated " + label.Name}
		_, err := c.updatePersonaLabel(updated, regular.caller())
		raises(t, err, "a regular user renames the label")
		var se *statusError
		check(t, errors.As(err, &se) && se.Status == 403, "status: %v", err)
		check(t, must(c.verifyPersonaLabel(label, admin.caller()))(t), "Persona label should not have been updated by non-admin user")
		check(t, !c.deletePersonaLabel(label, regular.caller()), "Regular user should not be able to delete the persona label")
		check(t, must(c.verifyPersonaLabel(label, admin.caller()))(t), "Persona label should not have been deleted by non-admin user")
		updated.Name = "Updated " + label.Name
		updated = must(c.updatePersonaLabel(updated, admin.caller()))(t)
		check(t, must(c.verifyPersonaLabel(updated, admin.caller()))(t), "Persona label was not updated by admin")
		check(t, c.deletePersonaLabel(label, admin.caller()), "Admin user should be able to delete the persona label")
		check(t, !must(c.verifyPersonaLabel(label, admin.caller()))(t), "Persona label should not exist after deletion by admin")
	}},
	{Name: "personas/test_unified_assistant.py/test_unified_assistant", Run: func(t *testing.T, c client) {
		admin := adminUser(t, c)
		personas := must(c.getAllPersonas(admin.caller()))(t)
		check(t, len(personas) == 1, "Expected only the unified assistant, found %d personas", len(personas))
		unified := personas[0]
		check(t, unified.ID == 0, "Unified assistant (ID 0) not found")
		check(t, unified.Name == "Assistant", "name %q", unified.Name)
		// Onyx's description names "search, web browsing, and image
		// generation", and its tools internal_search, generate_image and
		// web_search: Quarry runs no web search and no image generation,
		// and says so (docs/decisions.md, "Assistants"). The replay
		// asserts Quarry's description and its built-in search tool.
		check(t, strings.Contains(strings.ToLower(unified.Description), "search"), "description %q", unified.Description)
		check(t, !strings.Contains(strings.ToLower(unified.Description), "image generation"), "description %q", unified.Description)
		check(t, unified.IsFeatured && unified.IsListed, "featured %v, listed %v", unified.IsFeatured, unified.IsListed)
		var names []string
		for _, tool := range unified.Tools {
			names = append(names, tool.Name)
		}
		check(t, slices.Contains(names, "internal_search"), "SearchTool not found in unified assistant: %v", names)
		check(t, len(unified.StarterMessages) == 0, "Starter messages found")
	}},
	{Name: "permissions/test_persona_permissions.py/test_persona_permissions", Run: func(t *testing.T, c client) {
		admin := must(c.createUser("admin_user", ""))(t)
		curator := must(c.createUser("curator", ""))(t)
		basic := must(c.createUser("basic_user", ""))(t)
		g1 := must(c.createGroup(admin.caller(), "curated_user_group", []string{curator.ID}, []int64{}))(t)
		ok(t, c.waitForGroupSync(admin.caller(), g1))
		ok(t, c.setCurator(g1, curator, admin.caller(), true))
		g2 := must(c.createGroup(admin.caller(), "uncurated_user_group", []string{curator.ID}, []int64{}))(t)
		ok(t, c.waitForGroupSync(admin.caller(), g2))
		private := ptr(false)
		basicPersona := must(c.createPersona(basic.caller(), personaArgs{Name: "basic_user_persona",
			Description: "A persona created by basic user", IsPublic: private, Users: []string{admin.ID}}))(t)
		c.verifyPersona(t, basicPersona, basic.caller())
		curatorPersona := must(c.createPersona(curator.caller(), personaArgs{Name: "curator_persona",
			Description: "A persona created by curator", IsPublic: private}))(t)
		c.verifyPersona(t, curatorPersona, curator.caller())
		group1 := must(c.createPersona(admin.caller(), personaArgs{Name: "admin_persona_group_1", Description: "A persona for group 1",
			IsPublic: private, Groups: []int64{g1.ID}}))(t)
		group2 := must(c.createPersona(admin.caller(), personaArgs{Name: "admin_persona_group_2", Description: "A persona for group 2",
			IsPublic: private, Groups: []int64{g2.ID}}))(t)
		both := must(c.createPersona(admin.caller(), personaArgs{Name: "admin_persona_both_groups", Description: "A persona for both groups",
			IsPublic: private, Groups: []int64{g1.ID, g2.ID}}))(t)

		// Users edit their own.
		must(c.editPersona(basicPersona, basic.caller(), personaArgs{Description: "Updated description by basic user"}))(t)
		c.verifyPersona(t, basicPersona, basic.caller())
		_, err := c.editPersona(curatorPersona, basic.caller(), personaArgs{Description: "Invalid edit by basic user"})
		raises(t, err, "a basic user edits the curator's persona")

		// Curators edit those of only the groups they curate.
		must(c.editPersona(group1, curator.caller(), personaArgs{Description: "Updated by curator"}))(t)
		c.verifyPersona(t, group1, curator.caller())
		_, err = c.editPersona(group2, curator.caller(), personaArgs{Description: "Invalid edit by curator"})
		raises(t, err, "the curator edits group 2's persona")
		_, err = c.editPersona(both, curator.caller(), personaArgs{Description: "Invalid edit by curator"})
		raises(t, err, "the curator edits the persona of both groups")

		// Admins edit every one.
		must(c.editPersona(basicPersona, admin.caller(), personaArgs{Description: "Updated by admin 2", Users: []string{admin.ID, admin.ID}}))(t)
		c.verifyPersona(t, basicPersona, admin.caller())
		for _, p := range []daPersona{curatorPersona, group1, group2, both} {
			must(c.editPersona(p, admin.caller(), personaArgs{Description: "Updated by admin"}))(t)
			c.verifyPersona(t, p, admin.caller())
		}
	}},
}

// chatPersonaAccessReplays are chat/test_chat_session_persona_access.py's
// (but its default persona's test, in chat.go).
var chatPersonaAccessReplays = []Replay{
	{Name: "chat/test_chat_session_persona_access.py/test_create_chat_session_with_unauthorized_persona_returns_403", Run: func(t *testing.T, c client) {
		admin, basic := chatFixtures(t, c)
		g := must(c.createGroup(admin.caller(), "restricted_group", []string{}, nil))(t)
		p := must(c.createPersona(admin.caller(), personaArgs{Name: "Restricted Persona", Description: "Only accessible to restricted_group",
			IsPublic: ptr(false), Groups: []int64{g.ID}}))(t)
		r := c.tg.Do(basic.caller(), "POST", "/chat/create-chat-session", map[string]any{"persona_id": p.ID, "description": "Attempted bypass"})
		check(t, r.Status == 403, "status %d: %s", r.Status, clip(r.Body))
		var body struct{ Detail string }
		ok(t, json.Unmarshal(r.Body, &body))
		check(t, strings.Contains(strings.ToLower(body.Detail), "persona"), "detail %q", body.Detail)
	}},
	{Name: "chat/test_chat_session_persona_access.py/test_create_chat_session_with_authorized_persona_succeeds", Run: func(t *testing.T, c client) {
		admin, basic := chatFixtures(t, c)
		g := must(c.createGroup(admin.caller(), "allowed_group", []string{basic.ID}, nil))(t)
		p := must(c.createPersona(admin.caller(), personaArgs{Name: "Allowed Persona", Description: "Accessible to basic_user",
			IsPublic: ptr(false), Groups: []int64{g.ID}}))(t)
		r := c.tg.Do(basic.caller(), "POST", "/chat/create-chat-session", map[string]any{"persona_id": p.ID, "description": "Authorized"})
		check(t, r.Status == 200, "status %d: %s", r.Status, clip(r.Body))
		must(keys(r, "chat_session_id"))(t)
	}},
	{Name: "chat/test_chat_session_persona_access.py/test_create_chat_session_with_public_persona_succeeds", Run: func(t *testing.T, c client) {
		admin, basic := chatFixtures(t, c)
		p := must(c.createPersona(admin.caller(), personaArgs{Name: "Public Persona", Description: "Visible to all", IsPublic: ptr(true)}))(t)
		r := c.tg.Do(basic.caller(), "POST", "/chat/create-chat-session", map[string]any{"persona_id": p.ID, "description": "Public access"})
		check(t, r.Status == 200, "status %d: %s", r.Status, clip(r.Body))
	}},
	{Name: "chat/test_chat_session_persona_access.py/test_send_chat_message_with_unauthorized_persona_in_session_info_is_blocked", Run: func(t *testing.T, c client) {
		admin, basic := chatFixtures(t, c)
		g := must(c.createGroup(admin.caller(), "restricted_group_send", []string{}, nil))(t)
		p := must(c.createPersona(admin.caller(), personaArgs{Name: "Restricted Persona For Send",
			Description: "Only accessible to restricted_group_send", IsPublic: ptr(false), Groups: []int64{g.ID}}))(t)
		r := c.tg.Do(basic.caller(), "POST", "/chat/send-chat-message", map[string]any{"message": "hello",
			"chat_session_info": map[string]any{"persona_id": p.ID, "description": "Attempted bypass via message send"}, "stream": true})
		// Onyx streams the refusal as a line whose "error" names the
		// persona; Quarry refuses before any stream, with a 403 whose
		// detail names it, as it does every refusal of a chat
		// (docs/decisions.md, "Chat" and "Document sets"). The replay
		// asserts Quarry's refusal, and that no session was made.
		check(t, r.Status == 403, "status %d: %s", r.Status, clip(r.Body))
		var body struct{ Detail string }
		ok(t, json.Unmarshal(r.Body, &body))
		check(t, strings.Contains(strings.ToLower(body.Detail), "persona"), "detail %q", body.Detail)
		sessions := must(c.do(basic.caller(), "GET", "/chat/get-user-chat-sessions", nil))(t)
		var list struct {
			Sessions []json.RawMessage `json:"sessions"`
		}
		ok(t, json.Unmarshal(sessions.Body, &list))
		check(t, len(list.Sessions) == 0, "a session was made: %s", clip(sessions.Body))
	}},
}

// agentsPage is the tests' _get_agents_paginated (path /agents) and
// _get_agents_admin_paginated (/admin/agents, which raises for its status):
// the page's items (the keys the tests read), total_items, and the status.
type agentsPage struct {
	Items []struct {
		ID          int64           `json:"id"`
		Users       json.RawMessage `json:"users"`
		Groups      json.RawMessage `json:"groups"`
		UserFileIDs json.RawMessage `json:"user_file_ids"`
	} `json:"items"`
	TotalItems int `json:"total_items"`
	status     int
}

// ids returns the ids of the page's items.
func (p agentsPage) ids() []int64 {
	out := make([]int64, len(p.Items))
	for i, it := range p.Items {
		out[i] = it.ID
	}
	return out
}

// agents gets a page of path as by, with include_default true and
// get_editable false, as the tests' helpers send them.
func (c client) agents(t *testing.T, by User, path string, pageNum, pageSize int, includeDeleted bool) agentsPage {
	t.Helper()
	q := fmt.Sprintf("%s?page_num=%d&page_size=%d&include_deleted=%t&get_editable=false&include_default=true", path, pageNum, pageSize,
		includeDeleted)
	r := c.tg.Do(by, "GET", q, nil)
	if path == "/admin/agents" {
		ok(t, raiseForStatus("GET", q, r))
	}
	p := agentsPage{status: r.Status}
	if r.Status == 200 {
		must(keys(r, "items", "total_items"))(t)
		ok(t, json.Unmarshal(r.Body, &p))
	}
	return p
}

// paginationReplays are personas/test_persona_pagination.py's and
// test_persona_knowledge_sources.py's.
var paginationReplays = []Replay{
	{Name: "personas/test_persona_pagination.py/test_persona_pagination_basic", Run: func(t *testing.T, c client) {
		admin := adminUser(t, c)
		for i := range 25 {
			must(c.createPersona(admin.caller(), personaArgs{Name: fmt.Sprintf("Test Persona %d", i)}))(t)
		}
		page0 := c.agents(t, admin.caller(), "/agents", 0, 10, false)
		check(t, len(page0.Items) == 10 && page0.TotalItems >= 25, "page 0: %d items of %d", len(page0.Items), page0.TotalItems)
		page2 := c.agents(t, admin.caller(), "/agents", 2, 10, false)
		check(t, len(page2.Items) >= 5 && page2.TotalItems >= 25, "page 2: %d items of %d", len(page2.Items), page2.TotalItems)
		beyond := c.agents(t, admin.caller(), "/agents", 10, 10, false)
		check(t, len(beyond.Items) == 0 && beyond.TotalItems >= 25, "page 10: %d items of %d", len(beyond.Items), beyond.TotalItems)
	}},
	{Name: "personas/test_persona_pagination.py/test_persona_pagination_ordering", Run: func(t *testing.T, c client) {
		admin := adminUser(t, c)
		a := must(c.createPersona(admin.caller(), personaArgs{Name: "Persona A", Description: "This should be second", DisplayPriority: ptr[int64](2)}))(t)
		b := must(c.createPersona(admin.caller(), personaArgs{Name: "Persona B", Description: "This should be first", DisplayPriority: ptr[int64](1)}))(t)
		cc := must(c.createPersona(admin.caller(), personaArgs{Name: "Persona C", Description: "This should be third", DisplayPriority: ptr[int64](3)}))(t)
		d := must(c.createPersona(admin.caller(), personaArgs{Name: "Persona D", Description: "This should be fourth", DisplayPriority: ptr[int64](3)}))(t)
		want := []int64{b.ID, a.ID, cc.ID, d.ID}
		var got []int64
		for _, id := range c.agents(t, admin.caller(), "/agents", 0, 100, false).ids() {
			if slices.Contains(want, id) {
				got = append(got, id)
			}
		}
		check(t, slices.Equal(got, want), "order %v, want %v", got, want)
	}},
	{Name: "personas/test_persona_pagination.py/test_persona_pagination_admin_endpoint", Run: func(t *testing.T, c client) {
		admin := adminUser(t, c)
		for i := range 5 {
			must(c.createPersona(admin.caller(), personaArgs{Name: fmt.Sprintf("Admin Test Persona %d", i)}))(t)
		}
		page0 := c.agents(t, admin.caller(), "/admin/agents", 0, 10, false)
		check(t, len(page0.Items) >= 5 && page0.TotalItems >= 5, "page 0: %d items of %d", len(page0.Items), page0.TotalItems)
		first := page0.Items[0]
		check(t, first.Users != nil && first.Groups != nil && first.UserFileIDs != nil, "users, groups or user_file_ids missing")
	}},
	{Name: "personas/test_persona_pagination.py/test_persona_pagination_with_deleted", Run: func(t *testing.T, c client) {
		admin := adminUser(t, c)
		p := must(c.createPersona(admin.caller(), personaArgs{Name: "To Be Deleted"}))(t)
		c.deletePersona(p, admin.caller())
		without := c.agents(t, admin.caller(), "/agents", 0, 100, false)
		check(t, !slices.Contains(without.ids(), p.ID), "listed without include_deleted")
		with := c.agents(t, admin.caller(), "/agents", 0, 100, true)
		check(t, slices.Contains(with.ids(), p.ID), "not listed with include_deleted")
		check(t, with.TotalItems > without.TotalItems, "totals %d, %d", with.TotalItems, without.TotalItems)
	}},
	{Name: "personas/test_persona_pagination.py/test_persona_pagination_page_size_limits", Run: func(t *testing.T, c client) {
		admin := adminUser(t, c)
		for i := range 5 {
			must(c.createPersona(admin.caller(), personaArgs{Name: fmt.Sprintf("Size Limit Test %d", i)}))(t)
		}
		check(t, len(c.agents(t, admin.caller(), "/agents", 0, 1, false).Items) <= 1, "page_size 1")
		all := c.agents(t, admin.caller(), "/agents", 0, 1000, false)
		check(t, len(all.Items) == all.TotalItems, "page_size 1000: %d items of %d", len(all.Items), all.TotalItems)
		for _, size := range []int{1001, 0} {
			s := c.agents(t, admin.caller(), "/agents", 0, size, false).status
			check(t, s == 422, "page_size %d: status %d", size, s)
		}
	}},
	{Name: "personas/test_persona_pagination.py/test_persona_pagination_count_accuracy", Run: func(t *testing.T, c client) {
		admin := adminUser(t, c)
		var ours []int64
		for i := range 15 {
			ours = append(ours, must(c.createPersona(admin.caller(), personaArgs{Name: fmt.Sprintf("Count Test %d", i)}))(t).ID)
		}
		total := c.agents(t, admin.caller(), "/agents", 0, 5, false).TotalItems
		check(t, total >= 15, "total %d", total)
		var seen []int64
		for n := range (total + 4) / 5 {
			page := c.agents(t, admin.caller(), "/agents", n, 5, false)
			check(t, page.TotalItems == total, "Page %d has inconsistent total_items", n)
			seen = append(seen, page.ids()...)
		}
		for _, id := range ours {
			check(t, slices.Contains(seen, id), "All created personas should appear in paginated results: %d", id)
		}
	}},
	{Name: "personas/test_persona_pagination.py/test_persona_pagination_user_permissions", Run: func(t *testing.T, c client) {
		admin, basic := adminUser(t, c), must(c.createUser("basic_user", ""))(t)
		private := must(c.createPersona(admin.caller(), personaArgs{Name: "Private Persona", Description: "Not shared", IsPublic: ptr(false)}))(t)
		public := must(c.createPersona(admin.caller(), personaArgs{Name: "Public Persona", Description: "Shared with all", IsPublic: ptr(true)}))(t)
		adminPage := c.agents(t, admin.caller(), "/agents", 0, 100, false)
		check(t, slices.Contains(adminPage.ids(), private.ID) && slices.Contains(adminPage.ids(), public.ID), "the admin's page: %v", adminPage.ids())
		userPage := c.agents(t, basic.caller(), "/agents", 0, 100, false)
		check(t, !slices.Contains(userPage.ids(), private.ID) && slices.Contains(userPage.ids(), public.ID), "the user's page: %v", userPage.ids())
		check(t, adminPage.TotalItems > userPage.TotalItems, "totals %d, %d", adminPage.TotalItems, userPage.TotalItems)
	}},
	{Name: "personas/test_persona_knowledge_sources.py/test_persona_with_user_files_includes_user_file_source", Excluded: excludedUserFiles,
		Run: func(t *testing.T, c client) {}},
	{Name: "personas/test_persona_knowledge_sources.py/test_persona_without_user_files_excludes_user_file_source", Run: func(t *testing.T, c client) {
		admin := adminUser(t, c)
		p := must(c.createPersona(admin.caller(), personaArgs{Name: "KS No Files Agent", Description: "Agent without files for knowledge_sources test",
			SystemPrompt: "You are a helpful assistant."}))(t)
		r := must(c.do(admin.caller(), "GET", fmt.Sprintf("/persona?persona_ids=%d", p.ID), nil))(t)
		var ps []struct {
			ID               int64    `json:"id"`
			KnowledgeSources []string `json:"knowledge_sources"`
		}
		ok(t, json.Unmarshal(r.Body, &ps))
		check(t, len(ps) == 1 && ps[0].ID == p.ID, "Expected 1 persona with id=%d, got %s", p.ID, clip(r.Body))
		check(t, ps[0].KnowledgeSources != nil && !slices.Contains(ps[0].KnowledgeSources, "user_file"),
			"Unexpected 'user_file' in knowledge_sources: %v", ps[0].KnowledgeSources)
	}},
}

// excludedUserFiles is why the tests of user files attached to an
// assistant are excluded (with test_persona_file_context.py, not
// replayed at all).
const excludedUserFiles = "it uploads a user file (FileManager.upload_files) and attaches it to an assistant: Quarry has no " +
	"user files, and refuses user_file_ids on an assistant with a 400 (docs/decisions.md, \"Assistants\")"

// chatDocSetSetup is test_chat_document_set_access.py's
// _setup_search_infrastructure: an admin, a basic user, a provider, a
// pair of the ingestion API and the search tool's id.
func (c client) chatDocSetSetup(t *testing.T) (admin, basic daUser, pairID, searchID int64) {
	t.Helper()
	admin, basic = chatFixtures(t, c)
	p := must(c.createCCPairFromScratch(admin.caller(), "", "", nil, "ingestion_api"))(t)
	return admin, basic, p.ID, c.searchToolID(t, admin.caller())
}

// searchPersonaSession is the test's _create_search_persona_chat_session:
// an assistant with the search tool, and basic's session with it
// (ChatSessionManager.create).
func (c client) searchPersonaSession(t *testing.T, admin, basic daUser, searchID int64) string {
	t.Helper()
	p := must(c.createPersona(admin.caller(), personaArgs{Name: "search_persona", ToolIDs: []int64{searchID}}))(t)
	r := must(c.do(basic.caller(), "POST", "/chat/create-chat-session", map[string]any{"persona_id": p.ID,
		"description": "Test chat session", "project_id": nil}))(t)
	var s struct {
		ID string `json:"chat_session_id"`
	}
	ok(t, json.Unmarshal(r.Body, &s))
	return s.ID
}

// sendWithSetFilter is the test's _send_message_with_document_set_filter:
// the search forced, the model's answer a call of it, filtered to names.
func (c client) sendWithSetFilter(by daUser, session string, names []string, searchID int64) *Response {
	return c.tg.Do(by.caller(), "POST", "/chat/send-chat-message", map[string]any{"message": "hello", "chat_session_id": session,
		"stream": true, "internal_search_filters": map[string]any{"document_set": names}, "forced_tool_id": searchID,
		"mock_llm_response": `{"name":"internal_search","arguments":{"queries":["test query"]}}`})
}

// streamContainsError is the test's _stream_contains_error: a JSON line
// of the answer whose "error" holds needle.
func streamContainsError(r *Response, needle string) bool {
	for _, line := range strings.Split(string(r.Body), "\n") {
		var payload map[string]any
		if json.Unmarshal([]byte(line), &payload) != nil {
			continue
		}
		if e, isStr := payload["error"].(string); isStr && strings.Contains(strings.ToLower(e), strings.ToLower(needle)) {
			return true
		}
	}
	return false
}

// refusedSets asserts Quarry's refusal of a chat filtered to document sets
// the person may not see. Onyx streams it as an error line naming the
// document sets; Quarry refuses before any stream, with a 403 whose detail
// names them, as it does every refusal of a chat (docs/decisions.md,
// "Document sets" and "Chat"): the replays assert that.
func refusedSets(t *testing.T, r *Response) {
	t.Helper()
	check(t, r.Status == 403, "status %d: %s", r.Status, clip(r.Body))
	var body struct{ Detail string }
	ok(t, json.Unmarshal(r.Body, &body))
	check(t, strings.Contains(strings.ToLower(body.Detail), "document set"), "detail %q", body.Detail)
}

// chatDocumentSetReplays are chat/test_chat_document_set_access.py's.
var chatDocumentSetReplays = []Replay{
	{Name: "chat/test_chat_document_set_access.py/test_document_set_filter_blocks_unauthorized_names", Run: func(t *testing.T, c client) {
		admin, basic, pairID, searchID := c.chatDocSetSetup(t)
		g := must(c.createGroup(admin.caller(), "restricted_doc_set_group", []string{}, nil))(t)
		set := must(c.createDocumentSet(admin.caller(), docSetArgs{Name: "restricted_doc_set", IsPublic: ptr(false), Groups: []int64{g.ID},
			CCPairIDs: []int64{pairID}}))(t)
		session := c.searchPersonaSession(t, admin, basic, searchID)
		refusedSets(t, c.sendWithSetFilter(basic, session, []string{set.Name}, searchID))
	}},
	{Name: "chat/test_chat_document_set_access.py/test_document_set_filter_allows_authorized_names", Run: func(t *testing.T, c client) {
		admin, basic, pairID, searchID := c.chatDocSetSetup(t)
		g := must(c.createGroup(admin.caller(), "allowed_doc_set_group", []string{basic.ID}, nil))(t)
		set := must(c.createDocumentSet(admin.caller(), docSetArgs{Name: "allowed_doc_set", IsPublic: ptr(false), Groups: []int64{g.ID},
			CCPairIDs: []int64{pairID}}))(t)
		session := c.searchPersonaSession(t, admin, basic, searchID)
		r := c.sendWithSetFilter(basic, session, []string{set.Name}, searchID)
		check(t, r.Status == 200 && !streamContainsError(r, "document set"),
			"Did not expect an access-denied error for an authorized document set: %d %s", r.Status, clip(r.Body))
	}},
	{Name: "chat/test_chat_document_set_access.py/test_public_document_set_is_accessible_to_any_user", Run: func(t *testing.T, c client) {
		admin, basic, pairID, searchID := c.chatDocSetSetup(t)
		set := must(c.createDocumentSet(admin.caller(), docSetArgs{Name: "public_doc_set", IsPublic: ptr(true), CCPairIDs: []int64{pairID}}))(t)
		session := c.searchPersonaSession(t, admin, basic, searchID)
		r := c.sendWithSetFilter(basic, session, []string{set.Name}, searchID)
		check(t, r.Status == 200 && !streamContainsError(r, "document set"), "%d %s", r.Status, clip(r.Body))
	}},
	{Name: "chat/test_chat_document_set_access.py/test_nonexistent_document_set_name_is_blocked", Run: func(t *testing.T, c client) {
		admin, basic, _, searchID := c.chatDocSetSetup(t)
		session := c.searchPersonaSession(t, admin, basic, searchID)
		refusedSets(t, c.sendWithSetFilter(basic, session, []string{"this_document_set_does_not_exist"}, searchID))
	}},
}
