package api_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/quarryhq/quarry"
)

// The routes of assistants (api/persona.go) and chat sessions made with
// them, on the real server and database.

// paBody is the body of an assistant to make.
func paBody(name string, public bool, extra ...any) map[string]any {
	b := map[string]any{"name": name, "description": name + " helps", "document_set_ids": []int64{}, "tool_ids": []int64{},
		"system_prompt": "Be " + name, "task_prompt": "", "datetime_aware": false, "is_public": public}
	for i := 0; i+1 < len(extra); i += 2 {
		b[extra[i].(string)] = extra[i+1]
	}
	return b
}

func TestPersonas(t *testing.T) {
	c := newFxCast(t)

	// The default assistant exists from the first start: persona 0.
	var all []struct {
		ID             int64  `json:"id"`
		Name           string `json:"name"`
		BuiltinPersona bool   `json:"builtin_persona"`
		IsFeatured     bool   `json:"is_featured"`
	}
	c.do(c.admin, "GET", "/admin/persona", nil).decode(t, &all)
	if len(all) != 1 || all[0].ID != 0 || all[0].Name != "Assistant" || !all[0].BuiltinPersona || !all[0].IsFeatured {
		t.Fatalf("the default assistant: %+v", all)
	}
	c.do(c.basic, "GET", "/admin/persona", nil).want(t, 403, fxNotCurator)

	// A person makes a private assistant: only they (and admins) see it.
	var made struct {
		ID            int64  `json:"id"`
		SharingStatus string `json:"sharing_status"`
		Owner         struct {
			ID string `json:"id"`
		} `json:"owner"`
	}
	c.do(c.basic, "POST", "/persona", paBody("HR", false)).decode(t, &made)
	if made.ID != 1 || made.SharingStatus != "PRIVATE" || made.Owner.ID != c.basic.id {
		t.Fatalf("made: %+v", made)
	}
	c.do(c.basic, "POST", "/persona", paBody("HR", true)).want(t, 400,
		`{"detail":"Assistant with name 'HR' already exists. Please rename your assistant."}`)
	c.do(c.basic, "POST", "/persona", paBody("Files", true, "user_file_ids", []string{"x"})).want(t, 400,
		`{"detail":"User Knowledge is disabled. Cannot create assistant with user files or projects."}`)
	c.do(c.basic, "POST", "/persona", paBody("Star", true, "is_featured", true)).want(t, 400, `{"detail":"Only admins can make a featured persona"}`)
	c.do(c.basic, "POST", "/persona", paBody("Sets", true, "document_set_ids", []int64{9})).want(t, 400, `{"detail":"document_sets not found"}`)
	c.do(c.basic, "POST", "/persona", paBody("Tools", true, "tool_ids", []int64{999})).want(t, 400, `{"detail":"Tool with ID 999 not found"}`)

	ids := func(u user, path string) []int64 {
		var ps []struct {
			ID int64 `json:"id"`
		}
		c.do(u, "GET", path, nil).decode(t, &ps)
		out := []int64{}
		for _, p := range ps {
			out = append(out, p.ID)
		}
		return out
	}
	if got := fmt.Sprint(ids(c.basic, "/persona")); got != "[0 1]" {
		t.Errorf("the maker's listing: %s", got)
	}
	if got := fmt.Sprint(ids(c.curator, "/persona")); got != "[0]" {
		t.Errorf("another's listing: %s", got)
	}
	if got := fmt.Sprint(ids(c.admin, "/persona")); got != "[0 1]" {
		t.Errorf("an admin's listing: %s", got)
	}
	c.do(c.curator, "GET", "/persona/1", nil).want(t, 404, `{"detail":"Persona with ID 1 does not exist or does not belong to user"}`)
	c.do(c.curator, "PATCH", "/persona/1", paBody("Mine", true)).want(t, 403,
		`{"detail":"Persona with ID 1 does not exist or user is not authorized to access it"}`)
	c.do(c.curator, "PATCH", "/persona/77", paBody("Mine", true)).want(t, 403,
		`{"detail":"Persona with ID 77 does not exist or user is not authorized to access it"}`)

	// Chat sessions: only with an assistant one may chat with (Onyx's 403).
	c.do(c.curator, "POST", "/chat/create-chat-session", map[string]any{"persona_id": 1}).want(t, 403,
		`{"detail":"User does not have access to persona"}`)
	c.do(c.curator, "POST", "/chat/create-chat-session", map[string]any{"persona_id": 77}).want(t, 403,
		`{"detail":"User does not have access to persona"}`)
	c.do(c.basic, "POST", "/chat/create-chat-session", map[string]any{"persona_id": 1}).decode(t, &struct{}{})

	// Shared with a group: its members see it and chat with it, at VIEWER.
	c.do(c.basic, "PATCH", "/persona/1/share", map[string]any{"group_ids": []int64{c.gA}}).want(t, 200, `null`)
	if got := fmt.Sprint(ids(c.curator, "/persona")); got != "[0 1]" {
		t.Errorf("a member's listing after sharing: %s", got)
	}
	c.do(c.curator, "POST", "/chat/create-chat-session", map[string]any{"persona_id": 1}).decode(t, &struct{}{})
	// Shared with a person: they chat with it, not before.
	c.do(c.other, "POST", "/chat/create-chat-session", map[string]any{"persona_id": 1}).want(t, 403,
		`{"detail":"User does not have access to persona"}`)
	c.do(c.basic, "PATCH", "/persona/1/share", map[string]any{"user_ids": []string{c.other.id}}).want(t, 200, `null`)
	c.do(c.other, "POST", "/chat/create-chat-session", map[string]any{"persona_id": 1}).decode(t, &struct{}{})
	c.do(c.basic, "PATCH", "/persona/1/share", map[string]any{"user_ids": []string{}}).want(t, 200, `null`)
	c.do(c.other, "POST", "/chat/create-chat-session", map[string]any{"persona_id": 1}).want(t, 403,
		`{"detail":"User does not have access to persona"}`)
	c.do(c.basic, "PATCH", "/persona/1/share", map[string]any{"group_ids": []int64{}, "group_shares": []any{}}).want(t, 422,
		`{"detail":[{"type":"value_error","loc":["body"],"msg":"Value error, Provide either group_ids or group_shares, not both",`+
			`"input":{"group_ids":[],"group_shares":[]},"ctx":{"error":{}}}]}`)

	// Labels: anyone makes them, admins rename and delete them.
	c.do(c.basic, "POST", "/persona/labels", map[string]any{"name": "HR"}).want(t, 200, `{"id":1,"name":"HR"}`)
	c.do(c.basic, "POST", "/persona/labels", map[string]any{"name": "HR"}).want(t, 400,
		`{"detail":"Label with name 'HR' already exists. Please choose a different name."}`)
	c.do(c.basic, "PATCH", "/admin/persona/label/1", map[string]any{"label_name": "People"}).want(t, 403, fxNotAdmin)
	c.do(c.admin, "PATCH", "/admin/persona/label/1", map[string]any{"label_name": "People"}).want(t, 200, `null`)
	c.do(c.basic, "GET", "/persona/labels", nil).want(t, 200, `[{"id":1,"name":"People"}]`)
	c.do(c.admin, "DELETE", "/admin/persona/label/2", nil).want(t, 404, `{"detail":"Persona label with ID 2 does not exist"}`)

	// Deleting: not the built-in one; another's only as its owner or admin.
	c.do(c.admin, "DELETE", "/persona/0", nil).want(t, 400, `{"detail":"Built-in agents cannot be deleted or change ownership"}`)
	c.do(c.other, "DELETE", "/persona/1", nil).want(t, 404, `{"detail":"Persona with ID 1 does not exist or does not belong to user"}`)
	c.do(c.global, "DELETE", "/persona/0", nil).want(t, 400, `{"detail":"Built-in agents cannot be deleted or change ownership"}`)
	c.do(c.basic, "DELETE", "/persona/1", nil).want(t, 200, `null`)
	if got := fmt.Sprint(ids(c.basic, "/persona")); got != "[0]" {
		t.Errorf("after deletion: %s", got)
	}
	c.do(c.curator, "POST", "/chat/create-chat-session", map[string]any{"persona_id": 1}).want(t, 403,
		`{"detail":"User does not have access to persona"}`)
	c.do(c.curator, "PATCH", "/admin/persona/1/undelete", nil).want(t, 403, fxNotAdmin)
	c.do(c.admin, "PATCH", "/admin/persona/1/undelete", nil).want(t, 200, `null`)
	c.do(c.admin, "PATCH", "/admin/persona/1/undelete", nil).want(t, 400, `{"detail":"Persona with ID 1 is not deleted."}`)

	// Paging, in display priority then id.
	c.do(c.admin, "PATCH", "/admin/agents/display-priorities", map[string]any{"display_priority_map": map[string]int{"1": -1}}).want(t, 200, `null`)
	var page struct {
		Items []struct {
			ID int64 `json:"id"`
		} `json:"items"`
		TotalItems int `json:"total_items"`
	}
	c.do(c.admin, "GET", "/agents?page_size=1", nil).decode(t, &page)
	if page.TotalItems != 2 || len(page.Items) != 1 || page.Items[0].ID != 1 {
		t.Errorf("the first page: %+v", page)
	}
}

// TestChatPersonaDocumentSets: a session's assistant narrows its searches
// to its document sets, within what its person may read, whatever sets
// the request names.
func TestChatPersonaDocumentSets(t *testing.T) {
	c := newChatCast(t)
	c.do(c.curator, "POST", "/manage/admin/document-set", dsSet("rocks of A", []int64{c.privA}, false, []int64{c.gA})).want(t, 200, `1`)
	c.do(c.admin, "POST", "/manage/admin/document-set", dsSet("all rocks", []int64{c.privA, c.public}, true, nil)).want(t, 200, `2`)
	var tools []struct {
		ID     int64   `json:"id"`
		InCode *string `json:"in_code_tool_id"`
	}
	c.do(c.admin, "GET", "/tool", nil).decode(t, &tools)
	search := int64(0)
	for _, x := range tools {
		if x.InCode != nil && *x.InCode == "SearchTool" {
			search = x.ID
		}
	}
	var p struct {
		ID int64 `json:"id"`
	}
	c.do(c.admin, "POST", "/persona", paBody("Public rocks", true, "document_set_ids", []int64{2}, "tool_ids", []int64{search})).decode(t, &p)
	var ofA struct {
		ID int64 `json:"id"`
	}
	c.do(c.curator, "POST", "/persona", paBody("A's rocks", true, "document_set_ids", []int64{1}, "tool_ids", []int64{search})).decode(t, &ofA)
	found := func(u user, persona int64, sets []string) []string {
		t.Helper()
		var s struct {
			ID string `json:"chat_session_id"`
		}
		c.do(u, "POST", "/chat/create-chat-session", map[string]any{"persona_id": persona}).decode(t, &s)
		c.model.then(callTools(quarry.ModelToolCall{ID: "call_1", Name: "internal_search", Arguments: `{"queries": ["rock"]}`}), say("Rocks."))
		body := map[string]any{"message": "Which rocks?", "chat_session_id": s.ID}
		if sets != nil {
			body["internal_search_filters"] = map[string]any{"document_set": sets}
		}
		var ids []string
		for _, l := range lines(t, c.do(u, "POST", "/chat/send-chat-message", body)) {
			var p struct {
				Obj struct {
					Type      string `json:"type"`
					Documents []struct {
						ID string `json:"document_id"`
					} `json:"documents"`
				} `json:"obj"`
			}
			if json.Unmarshal([]byte(l), &p) == nil && p.Obj.Type == "search_tool_documents_delta" {
				for _, d := range p.Obj.Documents {
					ids = append(ids, d.ID)
				}
			}
		}
		slices.Sort(ids)
		return ids
	}
	for _, tc := range []struct {
		name    string
		u       user
		persona int64
		sets    []string
		want    []string
	}{
		{"the assistant's set", c.curator, p.ID, nil, []string{"basalt", "granite"}},
		{"the assistant's set, never wider than the person", c.basic, p.ID, nil, []string{"basalt"}},
		{"a set named within the assistant's", c.curator, p.ID, []string{"rocks of A"}, []string{"granite"}},
		{"an assistant of A's set alone", c.curator, ofA.ID, nil, []string{"granite"}},
		{"a set named beyond the assistant's finds nothing more", c.curator, ofA.ID, []string{"all rocks"}, []string{"granite"}},
	} {
		if got := found(tc.u, tc.persona, tc.sets); !slices.Equal(got, tc.want) {
			t.Errorf("%s: the search found %v, want %v", tc.name, got, tc.want)
		}
	}
}

// minimalUserT is Onyx's MinimalUserSnapshot as the tests read it.
type minimalUserT struct {
	ID    string `json:"id"`
	Email string `json:"email"`
}

// TestPersonaGuards: who may make an assistant public or change the
// built-in one, a set an assistant searches, and text PostgreSQL cannot
// keep.
func TestPersonaGuards(t *testing.T) {
	c := newFxCast(t)
	nul := `{"detail":"Text may not contain the NUL character (\\u0000)"}`
	c.do(c.basic, "POST", "/persona", paBody("HR", false)).decode(t, new(any))
	c.do(c.basic, "PATCH", "/persona/1/share", map[string]any{"user_shares": []map[string]any{{"user_id": c.curator.id, "permission": "EDITOR"}}}).
		want(t, 200, `null`)
	// An editor changes the assistant, but does not make it public.
	c.do(c.curator, "PATCH", "/persona/1", paBody("HR", true)).want(t, 403, `{"detail":"You don't have permission to modify this persona"}`)
	c.do(c.curator, "PATCH", "/persona/1", paBody("HR", false, "description", "Answers HR")).decode(t, new(any))
	c.do(c.curator, "GET", "/persona/1", nil).decode(t, new(any))
	c.do(c.other, "GET", "/persona/1", nil).want(t, 404, `{"detail":"Persona with ID 1 does not exist or does not belong to user"}`)

	// The built-in assistant is changed by admins alone, not by those
	// granted manage:agents.
	c.grant(c.gB, quarry.PermManageAgents, true)
	c.do(c.other, "PATCH", "/persona/0", paBody("Mine", true)).want(t, 403, `{"detail":"Persona with ID 0 does not exist or user is not authorized to access it"}`)
	c.do(c.other, "PATCH", "/persona/0/public", map[string]any{"is_public": false}).want(t, 403, `{"detail":"Persona with ID 0 does not exist or user is not authorized to access it"}`)
	c.do(c.other, "PATCH", "/admin/persona/0/listed", map[string]any{"is_listed": false}).want(t, 403, `{"detail":"Persona with ID 0 does not exist or user is not authorized to access it"}`)
	c.do(c.basic, "POST", "/chat/create-chat-session", map[string]any{"persona_id": 0}).decode(t, new(any))

	// A set an assistant searches is not deleted; once no assistant that
	// is not deleted searches it, it is.
	conn := c.connector(c.admin, "pushed", "file", "access_type", "public")
	pub := c.pair(c.admin, conn, c.credential(c.admin, "file", fxSecret, "admin_public", true), "public", quarry.AccessPublic)
	c.do(c.admin, "POST", "/manage/admin/document-set", dsSet("Handbook", []int64{pub}, true, nil)).want(t, 200, `1`)
	c.do(c.basic, "POST", "/persona", paBody("Handbook", true, "document_set_ids", []int64{1})).decode(t, new(any))
	c.do(c.admin, "DELETE", "/manage/admin/document-set/1", nil).want(t, 400,
		`{"detail":"This document set is searched by 1 assistant(s): take it out of them before deleting it"}`)
	c.do(c.basic, "DELETE", "/persona/2", nil).decode(t, new(any))
	c.do(c.admin, "DELETE", "/manage/admin/document-set/1", nil).want(t, 200, `null`)

	// A reader sees of an assistant's sets what their listing of sets
	// shows (a set they may not see: its id and name), and no email but
	// their own unless they manage the assistant's shares.
	privC := c.pair(c.admin, conn, c.credential(c.admin, "file", fxSecret, "admin_public", true), "of C", quarry.AccessPrivate, c.gC)
	c.do(c.admin, "POST", "/manage/admin/document-set", dsSet("C only", []int64{privC}, false, []int64{c.gC})).want(t, 200, `2`)
	var helper struct {
		ID int64 `json:"id"`
	}
	c.do(c.admin, "POST", "/persona", paBody("C helper", true, "document_set_ids", []int64{2}, "users", []string{c.basic.id})).decode(t, &helper)
	var read struct {
		Owner        minimalUserT `json:"owner"`
		Users        []minimalUserT
		DocumentSets []struct {
			ID              int64  `json:"id"`
			Name            string `json:"name"`
			CCPairSummaries []any  `json:"cc_pair_summaries"`
			Groups          []any  `json:"groups"`
		} `json:"document_sets"`
	}
	c.do(c.basic, "GET", fmt.Sprintf("/persona/%d", helper.ID), nil).decode(t, &read)
	if read.Owner.Email != "" || len(read.Users) != 1 || read.Users[0].Email == "" || len(read.DocumentSets) != 1 ||
		read.DocumentSets[0].Name != "C only" || len(read.DocumentSets[0].CCPairSummaries) != 0 || len(read.DocumentSets[0].Groups) != 0 {
		t.Errorf("the basic person's read: %+v", read)
	}
	c.do(c.admin, "GET", fmt.Sprintf("/persona/%d", helper.ID), nil).decode(t, &read)
	if read.Owner.Email == "" || len(read.DocumentSets[0].CCPairSummaries) != 1 || len(read.DocumentSets[0].Groups) != 1 {
		t.Errorf("the admin's read: %+v", read)
	}

	// Text PostgreSQL cannot keep is refused on both databases.
	c.do(c.basic, "POST", "/persona", paBody("a\x00b", true)).want(t, 400, nul)
	c.do(c.basic, "POST", "/persona", paBody("Starter", true, "starter_messages", []map[string]any{{"name": "x", "message": "a\x00"}})).want(t, 400, nul)
	c.do(c.basic, "POST", "/persona/labels", map[string]any{"name": "a\x00b"}).want(t, 400, nul)
	// A page past any count is empty, not a 500 (page_num*page_size
	// overflowed).
	c.do(c.basic, "GET", "/agents?page_num=9223372036854775807&page_size=2", nil).want(t, 200, `{"items":[],"total_items":3}`)
}

// TestPersonaGoldens replays against the server the 422 cases of the
// assistants' requests, generated by scripts/pydantic_goldens.py with
// pydantic.
func TestPersonaGoldens(t *testing.T) {
	e := newEnv(t)
	f := fx{e}
	for _, model := range []string{"personaCreate", "personaUpdate", "personaGet", "personasQuery", "adminPersonasQuery",
		"agentsQuery", "adminAgentsQuery", "personaListed", "personaFeatured", "personaPublic", "displayPriorities",
		"personaLabelCreate", "personaLabelPatch", "personaLabelDelete", "personaShare", "personaTransfer"} {
		for _, c := range fxGoldens(t, model) {
			t.Run(model+"/"+c.Name, func(t *testing.T) { f.replay(t, e.admin, c.Method, "", c) })
		}
	}
}
