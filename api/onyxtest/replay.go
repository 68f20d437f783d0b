package onyxtest

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
)

// Run replays the calls of Onyx's managers against tg, as subtests of t,
// one a manager. The server must have local accounts on, registration
// open (Onyx's default), and no person registered yet: the first one
// registered is the admin that the managers act as.
func Run(t *testing.T, tg Target) {
	c := client{tg}
	var adminU daUser
	var admin, basic User

	// UserManager: create (register, then login_as_user), is_role,
	// is_status, set_role, set_status, get_user_page, get_user_info.
	t.Run("UserManager", func(t *testing.T) {
		adminU = must(c.createUser("", "test_admin@test.com"))(t) // is_first_user: the first person is an admin
		admin = adminU.caller()
		if adminU.Role != "admin" || !must(c.isStatus(adminU, true))(t) {
			t.Fatalf("is_role/is_status of the first user: %+v", adminU)
		}
		basicU := must(c.createUser("", "test_basic@test.com"))(t)
		basic = basicU.caller()
		if !must(c.isRole(basicU, "basic"))(t) || !must(c.isStatus(basicU, true))(t) {
			t.Fatalf("is_role/is_status: %+v", basicU)
		}
		// create_test_users(role=global_curator): set_role, then
		// is_role. (Onyx, like Quarry, refuses curator here: that role
		// comes with a group's curator flag.)
		cur := must(c.createUser("", "test_curator@test.com"))(t)
		cur = must(c.setRole(cur, "global_curator", adminU, false))(t)
		if !must(c.isRole(cur, "global_curator"))(t) {
			t.Fatalf("is_role after set_role: %+v", cur)
		}
		// create_test_users(is_active=False): set_status, then is_role
		// and is_status expect an HTTP error.
		gone := must(c.createUser("", "test_gone@test.com"))(t)
		gone = must(c.setStatus(gone, false, adminU))(t)
		tg.Do(gone.caller(), "GET", "/me", nil).Want(t, 401, notAuthed)
		if !must(c.isStatus(gone, false))(t) {
			t.Fatalf("is_status(False) of %s", gone.Email)
		}
		gone = must(c.setStatus(gone, true, adminU))(t)
		gone = must(c.setStatus(gone, false, adminU))(t)
		// get_user_page: the manager asserts a full page.
		tr, f := true, false
		page := reported(c.getUserPage(adminU, userPage{PageNum: 0, PageSize: 2, Query: "test_", Roles: []onyxRole{"basic", "global_curator"},
			IsActive: &tr}))(t)
		if len(page.Items) != 2 || page.TotalItems != 2 || page.Items[0].Email != basic.Email || page.Items[1].Email != cur.Email {
			t.Fatalf("get_user_page(roles basic and global_curator, active): %+v", page)
		}
		page = reported(c.getUserPage(adminU, userPage{PageNum: 0, PageSize: 1, IsActive: &f}))(t)
		if len(page.Items) != 1 || page.Items[0].Email != gone.Email || page.Items[0].IsActive || !page.Items[0].PasswordConfigured {
			t.Fatalf("get_user_page(is_active=False): %+v", page)
		}
		// get_user_info: GET /me parsed as UserInfo.
		if info := reported(c.getUserInfo(admin))(t); info.ID != admin.ID || info.Role != "admin" || !info.IsActive {
			t.Fatalf("get_user_info: %+v", info)
		}
	})
	if admin.Cookie == "" {
		t.Fatal("no admin: the other managers need one")
	}

	t.Run("APIKeyManager", func(t *testing.T) {
		// create, with APIKeyArgs(name, role).model_dump(); the key then
		// signs the manager's requests.
		k := must(c.createAPIKey(adminU, "test", "admin"))(t)
		if k.APIKey == nil || k.APIKeyRole != "admin" {
			t.Fatalf("create: %+v", k)
		}
		if u := must(c.whoAmI(k.caller()))(t); u.Role != "admin" || u.ID != string(k.UserID) {
			t.Fatalf("the new key signs in as %+v", u)
		}
		// get_all and verify: listed with its name and role, without the
		// key. (The manager parses each key as DATestAPIKey, whose
		// required headers no server sends: that fails whenever a key is
		// listed, against Onyx too. The replay parses the route's model.)
		keys := onyxParse[[]onyxAPIKeyDescriptor](t, tg.Do(admin, "GET", "/admin/api-key", nil), 200)
		i := slices.IndexFunc(keys, func(x onyxAPIKeyDescriptor) bool { return x.APIKeyID == k.APIKeyID })
		if i < 0 || keys[i].APIKey != nil || keys[i].APIKeyName == nil || *keys[i].APIKeyName != "test-api-key" || keys[i].APIKeyRole != "admin" {
			t.Fatalf("verify: %+v", keys)
		}
		// delete, then verify(verify_deleted=True).
		ok(t, c.deleteAPIKey(k, adminU))
		keys = onyxParse[[]onyxAPIKeyDescriptor](t, tg.Do(admin, "GET", "/admin/api-key", nil), 200)
		if slices.ContainsFunc(keys, func(x onyxAPIKeyDescriptor) bool { return x.APIKeyID == k.APIKeyID }) {
			t.Fatalf("verify_deleted: key %d still listed", k.APIKeyID)
		}
		tg.Do(k.caller(), "GET", "/me", nil).Want(t, 401, notAuthed)
	})

	// The objects that CCPairManager.create_from_scratch makes, as the
	// other managers use them.
	var (
		connID, credID, pairID int64
		groupID                int64
	)
	fileConfig := map[string]any{"file_locations": []string{}, "file_names": []string{}, "zip_metadata_file_id": nil}
	secret := map[string]any{"api_token": "file-store-token-abcdefghijk-0123456789", "region": "eu"}

	t.Run("ConnectorManager", func(t *testing.T) {
		// create: ConnectorUpdateRequest(...).model_dump().
		body := onyxConnectorUpdateRequest{Name: "test-connector", Source: "file", InputType: "load_state",
			ConnectorSpecificConfig: fileConfig, AccessType: "public", Groups: []int64{}}
		connID = onyxParse[onyxObjectCreationID](t, tg.Do(admin, "POST", "/manage/admin/connector", body), 200).ID
		// get, get_all.
		c := onyxParse[onyxConnectorSnapshot](t, tg.Do(admin, "GET", fmt.Sprint("/manage/connector/", connID), nil), 200)
		if c.Name != "test-connector" || c.Source != "file" || c.InputType != "load_state" || len(c.ConnectorSpecificConfig) != 3 {
			t.Fatalf("get: %+v", c)
		}
		all := onyxParse[[]onyxConnectorSnapshot](t, tg.Do(admin, "GET", "/manage/connector", nil), 200)
		if !slices.ContainsFunc(all, func(x onyxConnectorSnapshot) bool { return x.ID == connID }) {
			t.Fatalf("get_all: %+v", all)
		}
		// edit: DATestConnector.model_dump(exclude={"id"}).
		public := onyxAccessType("public")
		edit := dump(onyxDATestConnector{ID: connID, Name: "test-connector", Source: "file", InputType: "load_state",
			ConnectorSpecificConfig: map[string]any{"file_locations": []string{"a.txt"}, "file_names": []string{"a.txt"},
				"zip_metadata_file_id": nil}, Groups: &[]int64{}, AccessType: &public}, "id")
		onyxParse[onyxConnectorSnapshot](t, tg.Do(admin, "PATCH", fmt.Sprint("/manage/admin/connector/", connID), edit), 200)
		// delete, on a connector of its own.
		other := onyxParse[onyxObjectCreationID](t, tg.Do(admin, "POST", "/manage/admin/connector",
			onyxConnectorUpdateRequest{Name: "test-connector-2", Source: "file", InputType: "load_state", ConnectorSpecificConfig: fileConfig,
				AccessType: "public", Groups: []int64{}}), 200).ID
		onyxParse[onyxStatusResponse](t, tg.Do(admin, "DELETE", fmt.Sprint("/manage/admin/connector/", other), nil), 200)
		tg.Do(admin, "GET", fmt.Sprint("/manage/connector/", other), nil).Want(t, 404, fmt.Sprintf(`{"detail":"Connector %d does not exist"}`, other))
	})

	t.Run("CredentialManager", func(t *testing.T) {
		// create: the manager's own body, admin_public and curator_public
		// true by default.
		body := map[string]any{"name": "test-credential", "credential_json": secret, "admin_public": true, "source": "file",
			"curator_public": true, "groups": []int64{}}
		credID = onyxParse[onyxObjectCreationID](t, tg.Do(admin, "POST", "/manage/credential", body), 200).ID
		// get, get_all and verify.
		k := onyxParse[onyxCredentialSnapshot](t, tg.Do(admin, "GET", fmt.Sprint("/manage/credential/", credID), nil), 200)
		if k.Name == nil || *k.Name != "test-credential" || !k.AdminPublic || !k.CuratorPublic || k.Source != "file" ||
			k.UserID == nil || string(*k.UserID) != admin.ID {
			t.Fatalf("get: %+v", k)
		}
		if k.CredentialJSON["api_token"] != "file...6789" || k.CredentialJSON["region"] != "••••••••••••" {
			t.Fatalf("get: credential_json %v, want it masked", k.CredentialJSON)
		}
		all := onyxParse[[]onyxCredentialSnapshot](t, tg.Do(admin, "GET", "/manage/credential", nil), 200)
		if !slices.ContainsFunc(all, func(x onyxCredentialSnapshot) bool { return x.ID == credID }) {
			t.Fatalf("verify: %+v", all)
		}
		// edit: model_dump(include={"name", "credential_json"}), sent to
		// PUT /manage/admin/credential/{id}: a new name and a new value, and
		// a value sent back as read keeps its secret.
		edit := map[string]any{"name": "test-credential-renamed",
			"credential_json": map[string]any{"api_token": "file...6789", "region": "us"}}
		k = onyxParse[onyxCredentialSnapshot](t, tg.Do(admin, "PUT", fmt.Sprint("/manage/admin/credential/", credID), edit), 200)
		if *k.Name != "test-credential-renamed" || !k.TimeUpdated.After(k.TimeCreated.Time) && !k.TimeUpdated.Equal(k.TimeCreated.Time) {
			t.Fatalf("edit: %+v", k)
		}
		tg.wantStored(t, credID, `{"api_token": "file-store-token-abcdefghijk-0123456789", "region": "us"}`)
		// delete, on a credential of its own.
		other := onyxParse[onyxObjectCreationID](t, tg.Do(admin, "POST", "/manage/credential",
			map[string]any{"name": "c2", "credential_json": map[string]any{}, "admin_public": true, "source": "file",
				"curator_public": true, "groups": []int64{}}), 200).ID
		onyxParse[onyxStatusResponse](t, tg.Do(admin, "DELETE", fmt.Sprint("/manage/credential/", other), nil), 200)
		all = onyxParse[[]onyxCredentialSnapshot](t, tg.Do(admin, "GET", "/manage/credential", nil), 200)
		if slices.ContainsFunc(all, func(x onyxCredentialSnapshot) bool { return x.ID == other }) {
			t.Fatalf("verify_deleted: %+v", all)
		}
	})

	statuses := func(t *testing.T) []onyxConnectorStatus {
		t.Helper()
		return onyxParse[[]onyxConnectorStatus](t, tg.Do(admin, "GET", "/manage/admin/connector/status", nil), 200)
	}
	t.Run("CCPairManager", func(t *testing.T) {
		// create: {name, access_type, groups}.
		r := tg.Do(admin, "PUT", fmt.Sprintf("/manage/connector/%d/credential/%d", connID, credID),
			map[string]any{"name": "test-cc-pair", "access_type": "public", "groups": []int64{}})
		res := onyxParse[onyxStatusResponse](t, r, 200)
		if !res.Success || res.Data == nil {
			t.Fatalf("create: %s", r.Body)
		}
		pairID = *res.Data
		// verify: through the status listing.
		verify := func(t *testing.T) {
			t.Helper()
			for _, s := range statuses(t) {
				if s.CCPairID == pairID && s.Name == "test-cc-pair" && s.Connector.ID == connID &&
					s.Credential.ID == credID && s.AccessType == "public" && len(s.Groups) == 0 {
					return
				}
			}
			t.Fatalf("verify: cc-pair %d not in the status listing", pairID)
		}
		verify(t)
		// get_single: CCPairFullInfo(**json). A new pair is SCHEDULED, as
		// in Onyx, until its first attempt starts (no scheduler runs here).
		info := onyxParse[onyxCCPairFullInfo](t, tg.Do(admin, "GET", fmt.Sprint("/manage/admin/cc-pair/", pairID), nil), 200)
		if info.Status != "SCHEDULED" || info.Name != "test-cc-pair" || info.Connector.ID != connID || info.Credential.ID != credID ||
			!info.IsEditableForCurrentUser || info.Creator == nil || string(*info.Creator) != admin.ID || info.NumDocsIndexed != 0 ||
			info.NumberOfIndexAttempts != 0 || info.Indexing || info.LastIndexed != nil || info.LatestDeletionAttempt != nil {
			t.Fatalf("get_single: %+v", info)
		}
		// pause_cc_pair, unpause_cc_pair: raise_for_status; a paused pair
		// stays in the status listing.
		tg.Do(admin, "PUT", fmt.Sprintf("/manage/admin/cc-pair/%d/status", pairID), map[string]any{"status": "PAUSED"}).
			Want(t, 200, `{"message":"200"}`)
		if info := onyxParse[onyxCCPairFullInfo](t, tg.Do(admin, "GET", fmt.Sprint("/manage/admin/cc-pair/", pairID), nil), 200); info.Status != "PAUSED" {
			t.Fatalf("after pause_cc_pair: status %s", info.Status)
		}
		verify(t)
		tg.Do(admin, "PUT", fmt.Sprintf("/manage/admin/cc-pair/%d/status", pairID), map[string]any{"status": "ACTIVE"}).
			Want(t, 200, `{"message":"200"}`)
		if info := onyxParse[onyxCCPairFullInfo](t, tg.Do(admin, "GET", fmt.Sprint("/manage/admin/cc-pair/", pairID), nil), 200); info.Status != "ACTIVE" {
			t.Fatalf("after unpause_cc_pair: status %s", info.Status)
		}
		// run_once marks the pair with an indexing trigger.
		tg.Do(admin, "POST", "/manage/admin/connector/run-once", map[string]any{"connector_id": connID, "credential_ids": []int64{credID},
			"from_beginning": true}).Want(t, 200, `{"success":true,"message":"Marked 1 index attempts with indexing triggers.","data":1}`)
		// prune asks for a prune (its run is outbound's TestWebPruning);
		// last_pruned is null until one ends.
		p := fmt.Sprintf("/manage/admin/cc-pair/%d", pairID)
		tg.Do(admin, "GET", p+"/last_pruned", nil).Want(t, 200, `null`)
		tg.Do(admin, "POST", p+"/prune", nil).Want(t, 200, `{"success":true,"message":"Successfully created the pruning task.","data":null}`)
		tg.Do(admin, "POST", p+"/prune", nil).Want(t, 409, `{"detail":"Pruning task already in progress."}`)
		// sync (both POSTs), get_doc_sync_task and get_group_sync_task:
		// null until a sync ends (their runs are outbound's
		// TestPermissionSyncThroughWorker); a second ask while one waits
		// is 409.
		tg.Do(admin, "GET", p+"/sync-permissions", nil).Want(t, 200, `null`)
		tg.Do(admin, "GET", p+"/sync-groups", nil).Want(t, 200, `null`)
		tg.Do(admin, "POST", p+"/sync-permissions", nil).Want(t, 200, `{"success":true,"message":"Successfully created the permissions sync task.","data":null}`)
		tg.Do(admin, "POST", p+"/sync-permissions", nil).Want(t, 409, `{"detail":"Permissions sync task already in progress."}`)
		tg.Do(admin, "POST", p+"/sync-groups", nil).Want(t, 200, `{"success":true,"message":"Successfully created the external group sync task.","data":null}`)
		tg.Do(admin, "POST", p+"/sync-groups", nil).Want(t, 409, `{"detail":"External group sync task already in progress."}`)
		// get_doc_sync_statuses, which Quarry does not serve yet: it
		// raises at once, with the reason.
		tg.Do(admin, "GET", p+"/get-docs-sync-status", nil).Want(t, 501, NotIndexing("report the sync status of documents"))
		// get_indexing_statuses, which the wait_for_* loops poll: the
		// pair, never indexed.
		st := must(c.getIndexingStatuses(admin))(t)
		if i := slices.IndexFunc(st, func(s onyxIndexingStatusLite) bool { return s.CCPairID == pairID }); i < 0 ||
			st[i].CCPairStatus != "ACTIVE" || st[i].InProgress || st[i].LastStatus != nil || st[i].DocsIndexed != 0 || !st[i].IsEditable {
			t.Fatalf("get_indexing_statuses: %+v", st)
		}
	})

	t.Run("UserGroupManager", func(t *testing.T) {
		// create: {name, user_ids, cc_pair_ids}; the manager reads
		// users[].id and cc_pairs[].id.
		g := onyxParse[onyxUserGroup](t, tg.Do(admin, "POST", "/manage/admin/user-group",
			map[string]any{"name": "test-user-group", "user_ids": []string{basic.ID}, "cc_pair_ids": []int64{pairID}}), 200)
		groupID = g.ID
		if len(g.Users) != 1 || g.Users[0].ID != basic.ID || len(g.CCPairs) != 1 || g.CCPairs[0].ID != pairID ||
			g.CCPairs[0].Connector.ID != connID || g.CCPairs[0].Credential.ID != credID || !g.IsUpToDate || g.IsUpForDeletion {
			t.Fatalf("create: %+v", g)
		}
		if g.CCPairs[0].Credential.CredentialJSON["api_token"] != "file...6789" {
			t.Fatalf("create: the pair's credential is not masked: %v", g.CCPairs[0].Credential.CredentialJSON)
		}
		// add_users.
		g = onyxParse[onyxUserGroup](t, tg.Do(admin, "POST", fmt.Sprintf("/manage/admin/user-group/%d/add-users", groupID),
			map[string]any{"user_ids": []string{admin.ID}}), 200)
		ids := []string{}
		for _, u := range g.Users {
			ids = append(ids, u.ID)
		}
		want := []string{basic.ID, admin.ID}
		slices.Sort(ids)
		slices.Sort(want)
		if !slices.Equal(ids, want) || len(g.CCPairs) != 1 || g.Name != "test-user-group" {
			t.Fatalf("add_users: %+v", g)
		}
		// edit: DATestUserGroup.model_dump(), the whole model.
		onyxParse[onyxUserGroup](t, tg.Do(admin, "PATCH", fmt.Sprint("/manage/admin/user-group/", groupID),
			map[string]any{"id": groupID, "name": "test-user-group", "user_ids": []string{admin.ID}, "cc_pair_ids": []int64{pairID}}), 200)
		// get_all, verify and wait_for_sync.
		all := onyxParse[[]onyxUserGroup](t, tg.Do(admin, "GET", "/manage/admin/user-group", nil), 200)
		i := slices.IndexFunc(all, func(x onyxUserGroup) bool { return x.ID == groupID })
		if i < 0 || len(all[i].Users) != 1 || all[i].Users[0].ID != admin.ID || len(all[i].CCPairs) != 1 || all[i].CCPairs[0].ID != pairID ||
			!all[i].IsUpToDate {
			t.Fatalf("verify: %+v", all)
		}
		// The pair is shared with the group now, as the status listing says.
		for _, s := range statuses(t) {
			if s.CCPairID == pairID && !slices.Equal(s.Groups, []int64{groupID}) {
				t.Fatalf("status listing: pair %d shared with %v", pairID, s.Groups)
			}
		}
	})

	t.Run("CCPairManager.delete", func(t *testing.T) {
		// delete: ConnectorCredentialPairIdentifier(...).model_dump(), then
		// verify(verify_deleted=True) through the status listing.
		tg.Do(admin, "POST", "/manage/admin/deletion-attempt", map[string]any{"connector_id": connID, "credential_id": credID}).
			Want(t, 200, `null`)
		if slices.ContainsFunc(statuses(t), func(s onyxConnectorStatus) bool { return s.CCPairID == pairID }) {
			t.Fatalf("verify_deleted: cc-pair %d still listed", pairID)
		}
		// As Onyx's deletion task does, the connector went with its last
		// pair; the credential stays, and the group lost the pair.
		tg.Do(admin, "GET", fmt.Sprint("/manage/connector/", connID), nil).Want(t, 404, fmt.Sprintf(`{"detail":"Connector %d does not exist"}`, connID))
		onyxParse[onyxCredentialSnapshot](t, tg.Do(admin, "GET", fmt.Sprint("/manage/credential/", credID), nil), 200)
		all := onyxParse[[]onyxUserGroup](t, tg.Do(admin, "GET", "/manage/admin/user-group", nil), 200)
		if i := slices.IndexFunc(all, func(x onyxUserGroup) bool { return x.ID == groupID }); i < 0 || len(all[i].CCPairs) != 0 {
			t.Fatalf("the group after the deletion: %+v", all)
		}
		tg.Do(admin, "POST", "/manage/admin/deletion-attempt", map[string]any{"connector_id": connID, "credential_id": credID}).
			Want(t, 404, fmt.Sprintf(`{"detail":"Connector with ID '%d' and credential ID '%d' does not exist. Has it already been deleted?"}`, connID, credID))
		// CredentialManager.delete, now that no pair uses it.
		onyxParse[onyxStatusResponse](t, tg.Do(admin, "DELETE", fmt.Sprint("/manage/credential/", credID), nil), 200)
	})

	t.Run("UserGroupManager.delete", func(t *testing.T) {
		// delete, then wait_for_deletion_completion and
		// verify(verify_deleted=True): gone at once.
		tg.Do(admin, "DELETE", fmt.Sprint("/manage/admin/user-group/", groupID), nil).Want(t, 200, `null`)
		all := onyxParse[[]onyxUserGroup](t, tg.Do(admin, "GET", "/manage/admin/user-group", nil), 200)
		if slices.ContainsFunc(all, func(x onyxUserGroup) bool { return x.ID == groupID }) {
			t.Fatalf("verify_deleted: group %d still listed", groupID)
		}
	})

	t.Run("ToolManager", func(t *testing.T) {
		def := map[string]any{}
		if err := json.Unmarshal([]byte(pingDefinition), &def); err != nil {
			t.Fatal(err)
		}
		// create: validate, then create without passthrough_auth (the
		// manager sends none).
		tg.Do(admin, "POST", "/admin/tool/custom/validate", map[string]any{"definition": def}).Decode(t, &struct{}{})
		tool := onyxParse[onyxToolSnapshot](t, tg.Do(admin, "POST", "/admin/tool/custom", map[string]any{"name": "test-tool",
			"description": "Description for test-tool", "definition": def,
			"custom_headers": []map[string]string{{"key": "X-Api-Key", "value": "tool-secret-abcdefghijklmn-0123456789"}}}), 200)
		if tool.PassthroughAuth || tool.CustomHeaders == nil || len(*tool.CustomHeaders) != 1 ||
			(*tool.CustomHeaders)[0].(map[string]any)["value"] != "tool...6789" {
			t.Fatalf("create: %+v", tool)
		}
		// edit: the whole tool again, custom_headers as read (masked).
		edited := onyxParse[onyxToolSnapshot](t, tg.Do(admin, "PUT", fmt.Sprint("/admin/tool/custom/", tool.ID), map[string]any{
			"name": "test-tool-edited", "description": tool.Description, "definition": *tool.Definition, "custom_headers": *tool.CustomHeaders}), 200)
		if edited.Name != "test-tool-edited" || edited.Description != tool.Description {
			t.Fatalf("edit: %+v", edited)
		}
		if h := tg.storedHeaders(t, tool.ID); len(h) != 1 || h[0].Value != "tool-secret-abcdefghijklmn-0123456789" {
			t.Fatalf("edit: stored headers %v, want the secret kept", h)
		}
		// list_tools, get_by_in_code_id, get_all and verify.
		tools := onyxParse[[]onyxToolSnapshot](t, tg.Do(admin, "GET", "/tool", nil), 200)
		if !slices.ContainsFunc(tools, func(x onyxToolSnapshot) bool { return x.InCodeToolID != nil && *x.InCodeToolID == "SearchTool" }) {
			t.Fatalf("get_by_in_code_id(SearchTool): %+v", tools)
		}
		i := slices.IndexFunc(tools, func(x onyxToolSnapshot) bool { return x.ID == tool.ID })
		if i < 0 || tools[i].Name != "test-tool-edited" || !tools[i].Enabled {
			t.Fatalf("verify: %+v", tools)
		}
		// set_enabled: PATCH /admin/tool/status, a custom and a built-in tool.
		search := tools[slices.IndexFunc(tools, func(x onyxToolSnapshot) bool { return x.InCodeToolID != nil && *x.InCodeToolID == "SearchTool" })]
		res := onyxParse[onyxToolStatusUpdated](t, tg.Do(admin, "PATCH", "/admin/tool/status",
			map[string]any{"tool_ids": []int64{tool.ID, search.ID}, "enabled": false}), 200)
		if res.UpdatedCount != 2 || !slices.Equal(res.ToolIDs, []int64{tool.ID, search.ID}) {
			t.Fatalf("set_enabled: %+v", res)
		}
		for _, x := range onyxParse[[]onyxToolSnapshot](t, tg.Do(admin, "GET", "/tool", nil), 200) {
			if (x.ID == tool.ID || x.ID == search.ID) && x.Enabled {
				t.Fatalf("after set_enabled(false): tool %d enabled", x.ID)
			}
		}
		onyxParse[onyxToolStatusUpdated](t, tg.Do(admin, "PATCH", "/admin/tool/status",
			map[string]any{"tool_ids": []int64{search.ID}, "enabled": true}), 200)
		// delete: response.ok.
		r := tg.Do(admin, "DELETE", fmt.Sprint("/admin/tool/custom/", tool.ID), nil)
		r.Want(t, 200, `null`)
		tools = onyxParse[[]onyxToolSnapshot](t, tg.Do(admin, "GET", "/tool", nil), 200)
		if slices.ContainsFunc(tools, func(x onyxToolSnapshot) bool { return x.ID == tool.ID }) {
			t.Fatalf("tool %d still listed after delete", tool.ID)
		}
	})

	// Every change the managers made is in the audit log, by the person
	// who made it.
	t.Run("audit", func(t *testing.T) {
		for _, want := range []struct{ resource, action string }{
			{"cc_pair", "cc_pair.update"}, {"cc_pair", "cc_pair.delete"}, {"connector", "connector.delete"},
			{"credential", "credential.update"}, {"user_group", "user_group.update"}, {"tool", "tool.update"},
		} {
			entries := tg.audit(t, "resource_type="+want.resource)
			if !slices.ContainsFunc(entries, func(a AuditEntry) bool {
				return a.Action == want.action && a.ActorID != nil && *a.ActorID == admin.ID
			}) {
				t.Errorf("no %s entry by %s among %+v", want.action, admin.Email, entries)
			}
		}
	})
}
