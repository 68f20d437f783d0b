package onyxtest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// The replays of Onyx v4.6.1's integration tests
// (backend/tests/integration/tests/) of connectors, credentials, cc-pairs,
// user groups, permissions, API keys and users: each test function's
// calls of the managers (managers.go), in its order, with its arguments,
// and its assertions. Each replay runs against a fresh server, as each
// Onyx test starts from a reset database (the first person to register is
// the admin).
//
// Where an Onyx test does something a replay cannot do over HTTP, the
// replay says so at that point: the test writes Onyx's database directly,
// or calls a route of a feature Quarry does not have (tags, user files), or
// acts as a kind of account Quarry does not have (Slack bots, users of
// permission syncing, which Onyx makes in its database and signs in with
// personal access tokens).

// Replay is the replay of one test function.
type Replay struct {
	// Name is the test's file under backend/tests/integration/tests/ and
	// its function (with pytest's parameter id, if any).
	Name string
	Run  func(t *testing.T, c client)
	// Excluded, if not empty, says why the test is out of Quarry's scope:
	// the replay is kept, to show what the test does, but skipped.
	Excluded string
}

// RunIntegration runs every replay as a subtest of t, each against the
// fresh server that fresh starts (with local accounts on, registration
// open, no person and no API key yet). An excluded replay is skipped,
// with its reason.
func RunIntegration(t *testing.T, fresh func(t *testing.T) Target) {
	for _, r := range Replays {
		t.Run(r.Name, func(t *testing.T) {
			if r.Excluded != "" {
				t.Skip("out of scope: " + r.Excluded)
			}
			r.Run(t, client{fresh(t)})
		})
	}
}

// excludedRoles is why the replays that give people Onyx's roles
// slack_user and ext_perm_user are excluded.
const excludedRoles = "it gives people Onyx's roles slack_user and ext_perm_user (Slack bot users and " +
	"permission-sync users, with password sign-up upgrading them), which Quarry does not have: its five roles " +
	"are admin, global_curator, curator, basic and limited (docs/decisions.md, \"Group permissions and default groups\")"

// raises asserts that a manager call raised httpx.HTTPStatusError, as
// pytest.raises(httpx.HTTPStatusError) does: any other error, or none,
// ends the test.
func raises(t *testing.T, err error, what string) {
	t.Helper()
	var se *statusError
	switch {
	case err == nil:
		t.Fatalf("%s: DID NOT RAISE HTTPStatusError", what)
	case !errors.As(err, &se):
		t.Fatalf("%s: raised %v, not HTTPStatusError", what, err)
	}
	t.Logf("%s: raised as expected: %v", what, err)
}

// check asserts a condition of the Onyx test (a Python assert).
func check(t *testing.T, cond bool, format string, args ...any) {
	t.Helper()
	if !cond {
		t.Fatalf("assert: "+format, args...)
	}
}

// adminUser is conftest's admin_user fixture: the person "admin_user",
// who must be an admin (Onyx resets and retries when it is not).
func adminUser(t *testing.T, c client) daUser {
	t.Helper()
	u := must(c.createUser("admin_user", ""))(t)
	check(t, must(c.isRole(u, "admin"))(t), "admin_user is not an admin")
	return u
}

// wantStatus asserts the status of a request made with client.request.
func wantStatus(t *testing.T, r *Response, method, path string, ok func(int) bool, want string) {
	t.Helper()
	if !ok(r.Status) {
		t.Errorf("%s %s: status %d, want %s: %s", method, path, r.Status, want, clip(r.Body))
	}
}

// permissionFixtures are permissions/conftest.py's module fixtures that
// Quarry can have: the first person (admin) "perm_admin", the second
// (basic) "perm_basic", and an API key of role limited "limited_svc_key"
// (a service account in no group). Its bot_user_headers and
// ext_perm_user_headers fixtures make a Slack bot and a permission-sync
// user in Onyx's database with personal access tokens: Quarry has neither
// kind of account, so no replay acts as them.
type permissionFixtures struct {
	admin, basic daUser
	limited      daAPIKey
}

func newPermissionFixtures(t *testing.T, c client, basic, limited bool) permissionFixtures {
	t.Helper()
	var f permissionFixtures
	f.admin = must(c.createUser("perm_admin", ""))(t)
	if basic {
		f.basic = must(c.createUser("perm_basic", ""))(t)
	}
	if limited {
		f.limited = must(c.createAPIKey(f.admin, "limited_svc_key", "limited"))(t)
	}
	return f
}

// gateReplays returns the replays of a permissions test module that sends
// each of paths (GET) as each kind of caller, with the statuses it
// accepts: admin (and basic, where allowed) below 400 or not 401/403,
// others 403, anonymous 401 or 403.
func gateReplays(file string, paths []string, adminOK func(int) bool, adminWant string, basicAllowed bool) []Replay {
	below400 := func(s int) bool { return s > 0 && s < 400 }
	is403 := func(s int) bool { return s == 403 }
	anon := func(s int) bool { return s == 401 || s == 403 }
	each := func(t *testing.T, c client, u User, ok func(int) bool, want string) {
		for _, p := range paths {
			wantStatus(t, c.tg.Do(u, "GET", p, nil), "GET", p, ok, want)
		}
	}
	out := []Replay{
		{Name: file + "/test_admin_user_allowed", Run: func(t *testing.T, c client) {
			f := newPermissionFixtures(t, c, false, false)
			each(t, c, f.admin.caller(), adminOK, adminWant)
		}},
	}
	if basicAllowed {
		out = append(out, Replay{Name: file + "/test_basic_user_allowed", Run: func(t *testing.T, c client) {
			f := newPermissionFixtures(t, c, true, false)
			each(t, c, f.basic.caller(), below400, "below 400")
		}})
	} else {
		out = append(out, Replay{Name: file + "/test_basic_user_denied", Run: func(t *testing.T, c client) {
			f := newPermissionFixtures(t, c, true, false)
			each(t, c, f.basic.caller(), is403, "403")
		}})
	}
	return append(out,
		Replay{Name: file + "/test_limited_service_account_denied", Run: func(t *testing.T, c client) {
			f := newPermissionFixtures(t, c, false, true)
			each(t, c, f.limited.caller(), is403, "403")
		}},
		Replay{Name: file + "/test_anonymous_denied", Run: func(t *testing.T, c client) {
			newPermissionFixtures(t, c, false, false)
			each(t, c, User{}, anon, "401 or 403")
		}},
	)
}

// Replays lists every replay.
var Replays = slices.Concat(apiKeyReplays, connectorReplays, permissionReplays,
	gateReplays("permissions/test_connector_read_access.py", []string{"/manage/connector", "/manage/connector/1"},
		func(s int) bool { return s != 401 && s != 403 && s != 0 }, "not 401 or 403", false),
	// Of BASIC_ACCESS_ENDPOINTS, Quarry serves GET /manage/credential and GET /query/valid-tags.
	gateReplays("permissions/test_basic_access.py", []string{"/manage/credential", "/query/valid-tags"},
		func(s int) bool { return s > 0 && s < 400 }, "below 400", true),
	// Of ADMIN_ACCESS_ENDPOINTS, Quarry serves GET /manage/users/invited only.
	gateReplays("permissions/test_admin_access.py", []string{"/manage/users/invited"},
		func(s int) bool { return s > 0 && s < 400 }, "below 400", false),
	userGroupReplays, userReplays, patReplays, indexingReplays, llmProviderReplays, llmPersonaReplays, chatReplays, toolPolicyReplays,
	documentSetReplays, tagReplays, personaReplays, paginationReplays, personaAvatarReplays)

// ---- api_key/test_api_key.py ----

// serviceAccountType is _get_service_account_account_type: the
// account_type of the key's user in GET /manage/users?include_api_keys=true.
func serviceAccountType(t *testing.T, c client, admin daUser, userID onyxUUID) onyxAccountType {
	t.Helper()
	all := must(call[onyxAllUsers](c, admin.caller(), "GET", "/manage/users?include_api_keys=true", nil))(t)
	for _, u := range all.Accepted {
		if u.ID == userID {
			return u.AccountType
		}
	}
	t.Fatalf("Service account user %s not found in user listing", userID)
	return ""
}

// defaultGroupIDs is _get_default_group_user_ids: the members of the
// default groups Admin and Basic.
func defaultGroupIDs(t *testing.T, c client, admin daUser) (adminIDs, basicIDs []string) {
	t.Helper()
	adminIDs, _ = groupMembers(t, c, admin.caller(), "Admin")
	basicIDs, _ = groupMembers(t, c, admin.caller(), "Basic")
	return adminIDs, basicIDs
}

// groupMembers returns the ids and emails of the members of the default
// group name, as by reads them.
func groupMembers(t *testing.T, c client, by User, name string) (ids, emails []string) {
	t.Helper()
	ids, emails, err := c.defaultGroupMembers(by, name)
	ok(t, err)
	return ids, emails
}

var apiKeyReplays = []Replay{
	{Name: "api_key/test_api_key.py/test_limited", Run: func(t *testing.T, c client) {
		admin := must(c.createUser("admin_user", ""))(t)
		key := must(c.createAPIKey(admin, "", "limited"))(t)
		r := c.tg.Do(key.caller(), "GET", "/persona/0", nil)
		check(t, r.Status == 200, "GET /persona/0 as a limited key: %d %s", r.Status, r.Body)
		r = c.tg.Do(key.caller(), "GET", "/admin/api-key", nil)
		check(t, r.Status == 403, "GET /admin/api-key as a limited key: %d %s", r.Status, r.Body)
	}},
	{Name: "api_key/test_api_key.py/test_api_key_limited_service_account", Run: func(t *testing.T, c client) {
		admin := must(c.createUser("admin_user", ""))(t)
		key := must(c.createAPIKey(admin, "", "limited"))(t)
		typ := serviceAccountType(t, c, admin, key.UserID)
		check(t, typ == "SERVICE_ACCOUNT", "Expected account_type=SERVICE_ACCOUNT, got %s", typ)
		adminIDs, basicIDs := defaultGroupIDs(t, c, admin)
		check(t, !slices.Contains(adminIDs, string(key.UserID)), "LIMITED API key should NOT be in Admin default group")
		check(t, !slices.Contains(basicIDs, string(key.UserID)), "LIMITED API key should NOT be in Basic default group")
	}},
	{Name: "api_key/test_api_key.py/test_api_key_basic_service_account", Run: func(t *testing.T, c client) {
		admin := must(c.createUser("admin_user", ""))(t)
		key := must(c.createAPIKey(admin, "", "basic"))(t)
		typ := serviceAccountType(t, c, admin, key.UserID)
		check(t, typ == "SERVICE_ACCOUNT", "Expected account_type=SERVICE_ACCOUNT, got %s", typ)
		adminIDs, basicIDs := defaultGroupIDs(t, c, admin)
		check(t, slices.Contains(basicIDs, string(key.UserID)), "BASIC API key should be in Basic default group")
		check(t, !slices.Contains(adminIDs, string(key.UserID)), "BASIC API key should NOT be in Admin default group")
	}},
	{Name: "api_key/test_api_key.py/test_api_key_admin_service_account", Run: func(t *testing.T, c client) {
		admin := must(c.createUser("admin_user", ""))(t)
		key := must(c.createAPIKey(admin, "", "admin"))(t)
		typ := serviceAccountType(t, c, admin, key.UserID)
		check(t, typ == "SERVICE_ACCOUNT", "Expected account_type=SERVICE_ACCOUNT, got %s", typ)
		adminIDs, basicIDs := defaultGroupIDs(t, c, admin)
		check(t, slices.Contains(adminIDs, string(key.UserID)), "ADMIN API key should be in Admin default group")
		check(t, !slices.Contains(basicIDs, string(key.UserID)), "ADMIN API key should NOT be in Basic default group")
	}},
	{Name: "api_key/test_api_key.py/test_limited_key_blocked_by_current_user", Run: func(t *testing.T, c client) {
		admin := must(c.createUser("admin_user", ""))(t)
		key := must(c.createAPIKey(admin, "", "limited"))(t)
		// GET /persona/0 (200 for a limited key) is not replayed here:
		// assistants are issue 42's item 2.
		r := c.tg.Do(key.caller(), "GET", "/query/valid-tags", nil)
		check(t, r.Status == 403, "Limited key should be blocked from /query/valid-tags, got %d: %s", r.Status, r.Body)
	}},
	{Name: "api_key/test_api_key.py/test_basic_key_passes_current_user", Run: func(t *testing.T, c client) {
		admin := must(c.createUser("admin_user", ""))(t)
		key := must(c.createAPIKey(admin, "", "basic"))(t)
		r := c.tg.Do(key.caller(), "GET", "/query/valid-tags", nil)
		check(t, r.Status == 200, "Basic key should access /query/valid-tags, got %d: %s", r.Status, r.Body)
	}},
	{Name: "api_key/test_api_key.py/test_admin_key_passes_current_user", Run: func(t *testing.T, c client) {
		admin := must(c.createUser("admin_user", ""))(t)
		key := must(c.createAPIKey(admin, "", "admin"))(t)
		r := c.tg.Do(key.caller(), "GET", "/query/valid-tags", nil)
		check(t, r.Status == 200, "Admin key should access /query/valid-tags, got %d: %s", r.Status, r.Body)
	}},
	{Name: "api_key/test_api_key.py/test_delete_admin_api_key_with_group_membership", Run: func(t *testing.T, c client) {
		deleteKeyInGroup(t, c, "admin")
	}},
	{Name: "api_key/test_api_key.py/test_delete_basic_api_key_with_group_membership", Run: func(t *testing.T, c client) {
		deleteKeyInGroup(t, c, "basic")
	}},
}

// deleteKeyInGroup is the test of deleting a key of role (admin or
// basic), whose service account is in that role's default group.
func deleteKeyInGroup(t *testing.T, c client, role onyxRole) {
	admin := must(c.createUser("admin_user", ""))(t)
	key := must(c.createAPIKey(admin, "", role))(t)
	group := map[onyxRole]string{"admin": "Admin", "basic": "Basic"}[role]
	before, _ := groupMembers(t, c, admin.caller(), group)
	check(t, slices.Contains(before, string(key.UserID)), "the key's user is not in %s before the deletion", group)
	ok(t, c.deleteAPIKey(key, admin))
	ok(t, c.verifyAPIKey(key, admin, true))
	after, _ := groupMembers(t, c, admin.caller(), group)
	check(t, !slices.Contains(after, string(key.UserID)), "the key's user is still in %s after the deletion", group)
}

// ---- connector/test_connector_creation.py ----

var connectorReplays = []Replay{
	// test_overlapping_connector_creation and
	// test_connector_pause_while_indexing index Confluence: out of scope.
	{Name: "connector/test_connector_creation.py/test_connector_creation", Run: func(t *testing.T, c client) {
		admin := must(c.createUser("admin_user", ""))(t)
		p := must(c.createCCPairFromScratch(admin.caller(), "", "", nil, "ingestion_api"))(t)
		info := must(c.getCCPair(p.ID, admin.caller()))(t)
		check(t, info.Creator != nil, "cc_pair_info.creator is None")
		check(t, string(*info.Creator) == admin.ID, "creator %s, want %s", *info.Creator, admin.ID)
		check(t, deref(info.CreatorEmail) == admin.Email, "creator_email %v, want %s", info.CreatorEmail, admin.Email)
	}},
}

// ---- permissions/ ----

// curatorSetUp is the happy path the curator tests share: an admin, a
// person "curator" made curator of group 1 (named name1) and a plain
// member of group 2 (named name2).
func curatorSetUp(t *testing.T, c client, name1, name2 string) (admin, curator daUser, g1, g2 onyxDATestUserGroup) {
	t.Helper()
	admin = must(c.createUser("admin_user", ""))(t)
	curator = must(c.createUser("curator", ""))(t)
	g1 = must(c.createGroup(admin.caller(), name1, []string{curator.ID}, []int64{}))(t)
	ok(t, c.waitForGroupSync(admin.caller(), g1))
	ok(t, c.setCurator(g1, curator, admin.caller(), true))
	g2 = must(c.createGroup(admin.caller(), name2, []string{curator.ID}, []int64{}))(t)
	ok(t, c.waitForGroupSync(admin.caller(), g1))
	return admin, curator, g1, g2
}

var permissionReplays = []Replay{
	{Name: "permissions/test_cc_pair_permissions.py/test_cc_pair_permissions", Run: func(t *testing.T, c client) {
		admin, curator, g1, g2 := curatorSetUp(t, c, "curated_user_group", "uncurated_user_group")
		f := false
		conn1 := must(c.createConnector(admin.caller(), connectorArgs{Name: "admin_owned_connector", Source: "confluence",
			Groups: []int64{g1.ID}, AccessType: "private"}))(t)
		k1 := must(c.createCredential(admin.caller(), credentialArgs{Name: "curator_owned_credential", Source: "confluence",
			Groups: []int64{g1.ID}, CuratorPublic: &f}))(t)
		k2 := must(c.createCredential(admin.caller(), credentialArgs{Name: "curator_visible_credential", Source: "confluence",
			Groups: []int64{g2.ID}, CuratorPublic: &f}))(t)
		// Not for a group it does not curate.
		_, err := c.createCCPair(conn1.ID, k1.ID, curator.caller(), "invalid_cc_pair_2", "private", []int64{g1.ID, g2.ID})
		raises(t, err, "a pair for groups 1 and 2")
		// Not without a group.
		_, err = c.createCCPair(conn1.ID, k1.ID, curator.caller(), "invalid_cc_pair_2", "private", []int64{})
		raises(t, err, "a private pair without a group")
		// Not with a credential of a group it does not curate.
		_, err = c.createCCPair(conn1.ID, k2.ID, curator.caller(), "invalid_cc_pair_4", "private", []int64{g1.ID})
		raises(t, err, "a pair with the credential of group 2")
		// The test re-creates the connector (it expects the error above to
		// have deleted it).
		conn1 = must(c.createConnector(admin.caller(), connectorArgs{Name: "admin_owned_connector_2", Source: "confluence",
			Groups: []int64{g1.ID}, AccessType: "private"}))(t)
		p := must(c.createCCPair(conn1.ID, k1.ID, curator.caller(), "valid_cc_pair", "private", []int64{g1.ID}))(t)
		ok(t, c.verifyCCPair(p, curator.caller(), false))
		ok(t, c.setCCPairStatus(p, "PAUSED", curator.caller()))
		ok(t, c.deleteCCPair(p, curator.caller()))
		ok(t, c.waitForCCPairDeletion(curator.caller(), p.ID))
		ok(t, c.verifyCCPair(p, curator.caller(), true))
	}},
	{Name: "permissions/test_connector_permissions.py/test_connector_permissions", Run: func(t *testing.T, c client) {
		_, curator, g1, g2 := curatorSetUp(t, c, "user_group_1", "user_group_2")
		_, err := c.createConnector(curator.caller(), connectorArgs{Name: "invalid_connector_2", Source: "confluence",
			Groups: []int64{g1.ID, g2.ID}, AccessType: "private"})
		raises(t, err, "a connector for groups 1 and 2")
		valid := must(c.createConnector(curator.caller(), connectorArgs{Name: "valid_connector", Source: "confluence",
			Groups: []int64{g1.ID}, AccessType: "private"}))(t)
		got := must(c.getConnector(valid.ID, curator.caller()))(t)
		check(t, got.Name == valid.Name && got.Source == valid.Source, "get: %+v", got)
		all := must(c.getAllConnectors(curator.caller()))(t)
		check(t, slices.ContainsFunc(all, func(x onyxConnectorSnapshot) bool { return x.ID == valid.ID }), "get_all lacks %d", valid.ID)
		valid.Name = "updated_valid_connector"
		ok(t, c.editConnector(valid, curator.caller()))
		got = must(c.getConnector(valid.ID, curator.caller()))(t)
		check(t, got.Name == "updated_valid_connector", "name after edit: %s", got.Name)
		ok(t, c.deleteConnector(valid, curator.caller()))
		all = must(c.getAllConnectors(curator.caller()))(t)
		check(t, !slices.ContainsFunc(all, func(x onyxConnectorSnapshot) bool { return x.ID == valid.ID }), "get_all still lists %d", valid.ID)
		_, err = c.createConnector(curator.caller(), connectorArgs{Name: "invalid_connector_3", Source: "confluence",
			Groups: []int64{g2.ID}, AccessType: "private"})
		raises(t, err, "a connector for group 2")
		public := must(c.createConnector(curator.caller(), connectorArgs{Name: "curator_public_connector", Source: "confluence",
			Groups: []int64{g1.ID}, AccessType: "public"}))(t)
		check(t, public.ID != 0, "no id")
	}},
	{Name: "permissions/test_credential_permissions.py/test_credential_permissions", Run: func(t *testing.T, c client) {
		_, curator, g1, g2 := curatorSetUp(t, c, "user_group_1", "user_group_2")
		f, tr := false, true
		_, err := c.createCredential(curator.caller(), credentialArgs{Name: "invalid_credential_2", Source: "confluence",
			Groups: []int64{g1.ID, g2.ID}, CuratorPublic: &f})
		raises(t, err, "a credential for groups 1 and 2")
		valid := must(c.createCredential(curator.caller(), credentialArgs{Name: "valid_credential", Source: "confluence",
			Groups: []int64{g1.ID}, CuratorPublic: &f}))(t)
		ok(t, c.verifyCredential(valid, curator.caller(), false))
		valid.Name = "updated_valid_credential"
		ok(t, c.editCredential(valid, curator.caller()))
		ok(t, c.verifyCredential(valid, curator.caller(), false))
		ok(t, c.deleteCredential(valid, curator.caller()))
		ok(t, c.verifyCredential(valid, curator.caller(), true))
		public := must(c.createCredential(curator.caller(), credentialArgs{Name: "curator_public_credential", Source: "confluence",
			Groups: []int64{g1.ID}, CuratorPublic: &tr}))(t)
		ok(t, c.verifyCredential(public, curator.caller(), false))
	}},
	{Name: "permissions/test_whole_curator_flow.py/test_whole_curator_flow", Run: func(t *testing.T, c client) {
		admin := must(c.createUser("admin_user", ""))(t)
		check(t, must(c.isRole(admin, "admin"))(t), "admin_user is not an admin")
		curator := must(c.createUser("curator", ""))(t)
		g1 := must(c.createGroup(admin.caller(), "user_group_1", []string{curator.ID}, []int64{}))(t)
		ok(t, c.waitForGroupSync(admin.caller(), g1))
		ok(t, c.setCurator(g1, curator, admin.caller(), true))
		check(t, must(c.isRole(curator, "curator"))(t), "the curator's role is not curator")
		curatorFlow(t, c, admin, curator, g1)
	}},
	{Name: "permissions/test_whole_curator_flow.py/test_global_curator_flow", Run: func(t *testing.T, c client) {
		admin := must(c.createUser("admin_user", ""))(t)
		check(t, must(c.isRole(admin, "admin"))(t), "admin_user is not an admin")
		gc := must(c.createUser("global_curator", ""))(t)
		check(t, must(c.isRole(gc, "basic"))(t), "the new person is not basic")
		gc = must(c.setRole(gc, "global_curator", admin, false))(t)
		check(t, must(c.isRole(gc, "global_curator"))(t), "the role is not global_curator")
		g1 := must(c.createGroup(admin.caller(), "user_group_1", []string{gc.ID}, []int64{}))(t)
		ok(t, c.waitForGroupSync(admin.caller(), g1))
		curatorFlow(t, c, admin, gc, g1)
	}},
	{Name: "permissions/test_user_role_permissions.py/test_user_role_setting_permissions", Run: func(t *testing.T, c client) {
		admin := must(c.createUser("admin_user", ""))(t)
		check(t, must(c.isRole(admin, "admin"))(t), "admin_user is not an admin")
		basic := must(c.createUser("basic_user", ""))(t)
		check(t, must(c.isRole(basic, "basic"))(t), "basic_user is not basic")
		curator := must(c.createUser("curator", ""))(t)
		check(t, must(c.isRole(curator, "basic"))(t), "curator is not basic")
		_, err := c.setRole(curator, "curator", admin, false)
		raises(t, err, "the curator role set without a group")
		gc := must(c.createUser("global_curator", ""))(t)
		check(t, must(c.isRole(gc, "basic"))(t), "global_curator is not basic")
		_, err = c.setRole(gc, "global_curator", basic, false)
		raises(t, err, "a role set by a basic user")
		gc = must(c.setRole(gc, "global_curator", admin, false))(t)
		check(t, must(c.isRole(gc, "global_curator"))(t), "the role is not global_curator")
		_, err = c.setRole(gc, "basic", gc, false)
		raises(t, err, "a role set by a global curator")
		check(t, must(c.isRole(gc, "global_curator"))(t), "the role is not global_curator")
		g1 := must(c.createGroup(admin.caller(), "user_group_1", []string{}, []int64{}))(t)
		ok(t, c.waitForGroupSync(admin.caller(), g1))
		err = c.setCurator(g1, curator, admin.caller(), true)
		raises(t, err, "set-curator for a person not in the group")
		g1.UserIDs = []string{curator.ID}
		ok(t, c.editGroup(g1, admin.caller()))
		ok(t, c.waitForGroupSync(admin.caller(), g1))
		ok(t, c.setCurator(g1, curator, admin.caller(), true))
	}},
	{Name: "permissions/test_auth_permission_propagation.py/test_basic_permission_granted_on_registration", Run: func(t *testing.T, c client) {
		admin := must(c.createUser("", "admin@example.com"))(t)
		basic := must(c.createUser("", "basic@example.com"))(t)
		check(t, slices.Contains(must(c.getPermissions(admin.caller()))(t), "basic"), "the admin lacks basic")
		check(t, slices.Contains(must(c.getPermissions(basic.caller()))(t), "basic"), "the basic user lacks basic")
		_, emails := groupMembers(t, c, admin.caller(), "Basic")
		check(t, slices.Contains(emails, basic.Email), "%s is not in the Basic group", basic.Email)
	}},
	{Name: "permissions/test_auth_permission_propagation.py/test_role_downgrade_removes_basic_group_and_permission", Excluded: excludedRoles, Run: func(t *testing.T, c client) {
		// Sets Onyx's roles ext_perm_user and slack_user, which Quarry does
		// not have.
		admin := must(c.createUser("", "admin@example.com"))(t)
		for _, x := range []struct {
			role  onyxRole
			email string
		}{{"ext_perm_user", "ext@example.com"}, {"slack_user", "slack@example.com"}} {
			role := x.role
			u := must(c.createUser("", x.email))(t)
			_, emails := groupMembers(t, c, admin.caller(), "Basic")
			check(t, slices.Contains(emails, u.Email), "%s is not in the Basic group", u.Email)
			must(c.setRole(u, role, admin, true))(t)
			_, emails = groupMembers(t, c, admin.caller(), "Basic")
			check(t, !slices.Contains(emails, u.Email), "%s (%s) is still in the Basic group", u.Email, role)
		}
	}},
}

// curatorFlow is the rest of test_whole_curator_flow and
// test_global_curator_flow: the curator makes a credential, a connector
// (renamed) and a pair in group g1, pauses and deletes the pair.
func curatorFlow(t *testing.T, c client, admin, curator daUser, g1 onyxDATestUserGroup) {
	t.Helper()
	f := false
	k := must(c.createCredential(curator.caller(), credentialArgs{Name: "curator_test_credential", Source: "file",
		CuratorPublic: &f, Groups: []int64{g1.ID}}))(t)
	conn := must(c.createConnector(curator.caller(), connectorArgs{Name: "curator_test_connector", Source: "file",
		AccessType: "private", Groups: []int64{g1.ID}}))(t)
	conn.Name = "updated_test_connector"
	ok(t, c.editConnector(conn, curator.caller()))
	p := must(c.createCCPair(conn.ID, k.ID, curator.caller(), "curator_test_cc_pair", "private", []int64{g1.ID}))(t)
	ok(t, c.verifyCCPair(p, admin.caller(), false))
	ok(t, c.setCCPairStatus(p, "PAUSED", curator.caller()))
	ok(t, c.deleteCCPair(p, curator.caller()))
	ok(t, c.waitForCCPairDeletion(curator.caller(), p.ID))
	ok(t, c.verifyCCPair(p, admin.caller(), true))
}

// ---- usergroup/ ----

var userGroupReplays = []Replay{
	{Name: "usergroup/test_add_users_to_group.py/test_add_users_to_group", Run: func(t *testing.T, c client) {
		admin := adminUser(t, c)
		add := must(c.createUser("", ""))(t)
		g := must(c.createGroup(admin.caller(), "add-user-test-group", []string{admin.ID}, nil))(t)
		ok(t, c.waitForGroupSync(admin.caller(), g))
		g = must(c.addUsers(g, []string{add.ID}, admin.caller()))(t)
		all := must(c.getAllGroups(admin.caller(), false))(t)
		i := slices.IndexFunc(all, func(x onyxUserGroup) bool { return x.ID == g.ID })
		check(t, i >= 0, "group %d not listed", g.ID)
		ids := memberIDs(all[i])
		check(t, slices.Contains(ids, admin.ID) && slices.Contains(ids, add.ID), "members %v", ids)
	}},
	{Name: "usergroup/test_add_users_to_group.py/test_add_users_to_group_invalid_user", Run: func(t *testing.T, c client) {
		admin := adminUser(t, c)
		g := must(c.createGroup(admin.caller(), "add-user-invalid-test-group", []string{admin.ID}, nil))(t)
		r := c.tg.Do(admin.caller(), "POST", fmt.Sprintf("/manage/admin/user-group/%d/add-users", g.ID),
			map[string]any{"user_ids": []string{uuid.NewString()}})
		check(t, r.Status == 404, "status %d, want 404: %s", r.Status, r.Body)
		check(t, strings.Contains(strings.ToLower(string(r.Body)), "not found"), "body %s lacks \"not found\"", r.Body)
	}},
	{Name: "usergroup/test_curator_group_scope.py/test_curator_cannot_modify_unscoped_group", Run: func(t *testing.T, c client) {
		admin := must(c.createUser("admin_user", ""))(t)
		check(t, must(c.isRole(admin, "admin"))(t), "admin_user is not an admin")
		curator := must(c.createUser("curator", ""))(t)
		other := must(c.createUser("other_user", ""))(t)
		ga := must(c.createGroup(admin.caller(), "group_a", []string{curator.ID}, []int64{}))(t)
		gb := must(c.createGroup(admin.caller(), "group_b", []string{}, []int64{}))(t)
		ok(t, c.waitForGroupSync(admin.caller(), ga, gb))
		ok(t, c.setCurator(ga, curator, admin.caller(), true))
		check(t, must(c.isRole(curator, "curator"))(t), "the curator's role is not curator")
		groupScope(t, c, admin, curator, other, ga, gb, true)
	}},
	{Name: "usergroup/test_curator_group_scope.py/test_global_curator_scoped_to_member_groups", Run: func(t *testing.T, c client) {
		admin := must(c.createUser("admin_user", ""))(t)
		check(t, must(c.isRole(admin, "admin"))(t), "admin_user is not an admin")
		gc := must(c.createUser("global_curator", ""))(t)
		other := must(c.createUser("other_user", ""))(t)
		gc = must(c.setRole(gc, "global_curator", admin, false))(t)
		check(t, must(c.isRole(gc, "global_curator"))(t), "the role is not global_curator")
		ga := must(c.createGroup(admin.caller(), "group_a", []string{gc.ID}, []int64{}))(t)
		gb := must(c.createGroup(admin.caller(), "group_b", []string{}, []int64{}))(t)
		ok(t, c.waitForGroupSync(admin.caller(), ga, gb))
		groupScope(t, c, admin, gc, other, ga, gb, false)
	}},
	{Name: "usergroup/test_group_membership_updates_user_permissions.py/test_user_gets_permissions_when_added_to_group", Run: func(t *testing.T, c client) {
		admin := adminUser(t, c)
		basic := must(c.createUser("", ""))(t)
		perms := must(c.getPermissions(basic.caller()))(t)
		check(t, slices.Contains(perms, "basic") && !slices.Contains(perms, "add:agents"), "permissions %v", perms)
		g := must(c.createGroup(admin.caller(), "perm-test-group", []string{admin.ID, basic.ID}, nil))(t)
		// The test inserts a PermissionGrant (add:agents) into Onyx's
		// database and recomputes the member's permissions; the replay
		// grants it with the group-permission route.
		grant(t, c, g, "add:agents", true, admin)
		perms = must(c.getPermissions(basic.caller()))(t)
		check(t, slices.Contains(perms, "add:agents"), "no add:agents after the grant: %v", perms)
		check(t, slices.Contains(perms, "read:agents"), "no implied read:agents: %v", perms)
		check(t, slices.Contains(perms, "basic"), "no basic: %v", perms)
	}},
	{Name: "usergroup/test_group_membership_updates_user_permissions.py/test_group_permission_change_propagates_to_all_members", Run: func(t *testing.T, c client) {
		admin := adminUser(t, c)
		a := must(c.createUser("", ""))(t)
		b := must(c.createUser("", ""))(t)
		g := must(c.createGroup(admin.caller(), "propagate-test-group", []string{admin.ID, a.ID, b.ID}, nil))(t)
		for _, u := range []daUser{a, b} {
			check(t, !slices.Contains(must(c.getPermissions(u.caller()))(t), "add:agents"), "%s has add:agents", u.Email)
		}
		// The test inserts, then soft-deletes, the grant in Onyx's
		// database; the replay uses the group-permission route.
		grant(t, c, g, "add:agents", true, admin)
		for _, u := range []daUser{a, b} {
			perms := must(c.getPermissions(u.caller()))(t)
			check(t, slices.Contains(perms, "add:agents") && slices.Contains(perms, "read:agents"), "%s: %v", u.Email, perms)
		}
		grant(t, c, g, "add:agents", false, admin)
		for _, u := range []daUser{a, b} {
			check(t, !slices.Contains(must(c.getPermissions(u.caller()))(t), "add:agents"), "%s still has add:agents", u.Email)
		}
	}},
	{Name: "usergroup/test_group_permission_toggle.py/test_grant_permission_via_toggle", Run: func(t *testing.T, c client) {
		admin := must(c.createUser("admin_grant", ""))(t)
		basic := must(c.createUser("basic_grant", ""))(t)
		g := must(c.createGroup(admin.caller(), "grant-toggle-group", []string{admin.ID, basic.ID}, nil))(t)
		r := c.setPermission(g, "manage:llms", true, admin.caller())
		ok(t, raiseForStatus("PUT", "permissions", r))
		res := must(parse[onyxSetPermissionResponse](r))(t)
		check(t, res == onyxSetPermissionResponse{Permission: "manage:llms", Enabled: true}, "answer %s", r.Body)
		check(t, slices.Contains(must(c.getGroupPermissions(g, admin.caller()))(t), "manage:llms"), "the group lacks manage:llms")
		check(t, slices.Contains(must(c.getPermissions(basic.caller()))(t), "manage:llms"), "the member lacks manage:llms")
	}},
	{Name: "usergroup/test_group_permission_toggle.py/test_revoke_permission_via_toggle", Run: func(t *testing.T, c client) {
		admin := must(c.createUser("admin_revoke", ""))(t)
		basic := must(c.createUser("basic_revoke", ""))(t)
		g := must(c.createGroup(admin.caller(), "revoke-toggle-group", []string{admin.ID, basic.ID}, nil))(t)
		grant(t, c, g, "manage:llms", true, admin)
		grant(t, c, g, "manage:llms", false, admin)
		check(t, !slices.Contains(must(c.getGroupPermissions(g, admin.caller()))(t), "manage:llms"), "the group still has manage:llms")
		check(t, !slices.Contains(must(c.getPermissions(basic.caller()))(t), "manage:llms"), "the member still has manage:llms")
	}},
	{Name: "usergroup/test_group_permission_toggle.py/test_idempotent_grant", Run: func(t *testing.T, c client) {
		admin := must(c.createUser("admin_idempotent_grant", ""))(t)
		g := must(c.createGroup(admin.caller(), "idempotent-grant-group", []string{admin.ID}, nil))(t)
		grant(t, c, g, "manage:llms", true, admin)
		grant(t, c, g, "manage:llms", true, admin)
		perms := must(c.getGroupPermissions(g, admin.caller()))(t)
		n := 0
		for _, p := range perms {
			if p == "manage:llms" {
				n++
			}
		}
		check(t, n == 1, "manage:llms appears %d times: %v", n, perms)
	}},
	{Name: "usergroup/test_group_permission_toggle.py/test_idempotent_revoke", Run: func(t *testing.T, c client) {
		admin := must(c.createUser("admin_idempotent_revoke", ""))(t)
		g := must(c.createGroup(admin.caller(), "idempotent-revoke-group", []string{admin.ID}, nil))(t)
		grant(t, c, g, "manage:llms", false, admin)
	}},
	{Name: "usergroup/test_group_permission_toggle.py/test_cannot_toggle_basic_access", Run: func(t *testing.T, c client) {
		admin := must(c.createUser("admin_basic_block", ""))(t)
		g := must(c.createGroup(admin.caller(), "basic-block-group", []string{admin.ID}, nil))(t)
		r := c.setPermission(g, "basic", true, admin.caller())
		check(t, r.Status == 400, "Expected 400, got %d: %s", r.Status, r.Body)
	}},
	{Name: "usergroup/test_group_permission_toggle.py/test_cannot_toggle_admin", Run: func(t *testing.T, c client) {
		admin := must(c.createUser("admin_admin_block", ""))(t)
		g := must(c.createGroup(admin.caller(), "admin-block-group", []string{admin.ID}, nil))(t)
		r := c.setPermission(g, "admin", true, admin.caller())
		check(t, r.Status == 400, "Expected 400, got %d: %s", r.Status, r.Body)
	}},
	{Name: "usergroup/test_group_permission_toggle.py/test_implied_permissions_expand", Run: func(t *testing.T, c client) {
		admin := must(c.createUser("admin_implied", ""))(t)
		basic := must(c.createUser("basic_implied", ""))(t)
		g := must(c.createGroup(admin.caller(), "implied-expand-group", []string{admin.ID, basic.ID}, nil))(t)
		grant(t, c, g, "manage:agents", true, admin)
		perms := must(c.getPermissions(basic.caller()))(t)
		for _, p := range []string{"manage:agents", "add:agents", "read:agents"} {
			check(t, slices.Contains(perms, p), "missing %s: %v", p, perms)
		}
	}},
	{Name: "usergroup/test_new_group_gets_basic_permission.py/test_new_group_gets_basic_permission", Run: func(t *testing.T, c client) {
		admin := must(c.createUser("admin_for_basic_perm", ""))(t)
		g := must(c.createGroup(admin.caller(), "basic-perm-test-group", []string{admin.ID}, nil))(t)
		perms := must(c.getGroupPermissions(g, admin.caller()))(t)
		check(t, slices.Contains(perms, "basic"), "New group should have 'basic' permission, got: %v", perms)
	}},
}

// grant sets permission of g to enabled as by, raising for the status.
func grant(t *testing.T, c client, g onyxDATestUserGroup, permission string, enabled bool, by daUser) {
	t.Helper()
	ok(t, raiseForStatus("PUT", fmt.Sprintf("/manage/admin/user-group/%d/permissions", g.ID), c.setPermission(g, permission, enabled, by.caller())))
}

// memberIDs returns the ids of g's members.
func memberIDs(g onyxUserGroup) []string {
	var out []string
	for _, u := range g.Users {
		out = append(out, u.ID)
	}
	return out
}

// groupScope is the rest of the two tests of test_curator_group_scope.py:
// cur may not change group gb (PATCH, add-users: 403) and may change ga;
// an admin may change any group.
func groupScope(t *testing.T, c client, admin, cur, other daUser, ga, gb onyxDATestUserGroup, adminAddsToB bool) {
	t.Helper()
	r := c.tg.Do(cur.caller(), "PATCH", fmt.Sprint("/manage/admin/user-group/", gb.ID), map[string]any{"user_ids": []string{cur.ID}, "cc_pair_ids": []int64{}})
	check(t, r.Status == 403, "PATCH group_b: %d %s", r.Status, r.Body)
	r = c.tg.Do(cur.caller(), "POST", fmt.Sprintf("/manage/admin/user-group/%d/add-users", gb.ID), map[string]any{"user_ids": []string{cur.ID}})
	check(t, r.Status == 403, "add-users to group_b: %d %s", r.Status, r.Body)
	all := must(c.getAllGroups(admin.caller(), false))(t)
	i := slices.IndexFunc(all, func(x onyxUserGroup) bool { return x.ID == gb.ID })
	check(t, i >= 0 && !slices.Contains(memberIDs(all[i]), cur.ID), "group_b: %+v", all)
	r = c.tg.Do(cur.caller(), "PATCH", fmt.Sprint("/manage/admin/user-group/", ga.ID), map[string]any{"user_ids": []string{cur.ID}, "cc_pair_ids": []int64{}})
	check(t, r.Status == 200, "PATCH group_a: %d %s", r.Status, r.Body)
	must(c.addUsers(ga, []string{other.ID}, cur.caller()))(t)
	all = must(c.getAllGroups(admin.caller(), false))(t)
	i = slices.IndexFunc(all, func(x onyxUserGroup) bool { return x.ID == ga.ID })
	check(t, i >= 0 && slices.Contains(memberIDs(all[i]), other.ID), "group_a: %+v", all)
	if adminAddsToB {
		r = c.tg.Do(admin.caller(), "POST", fmt.Sprintf("/manage/admin/user-group/%d/add-users", gb.ID), map[string]any{"user_ids": []string{other.ID}})
		check(t, r.Status == 200, "the admin's add-users to group_b: %d %s", r.Status, r.Body)
	}
}

// ---- users/ ----

var userReplays = []Replay{
	{Name: "users/test_default_group_assignment.py/test_default_group_assignment_on_registration", Run: func(t *testing.T, c client) {
		admin := must(c.createUser("first_user", ""))(t)
		check(t, admin.Role == "admin", "the first user's role is %s", admin.Role)
		basic := must(c.createUser("second_user", ""))(t)
		check(t, basic.Role == "basic", "the second user's role is %s", basic.Role)
		adminIDs, basicIDs := defaultGroupIDs(t, c, admin)
		check(t, slices.Contains(adminIDs, admin.ID) && !slices.Contains(basicIDs, admin.ID), "the first user: Admin %v, Basic %v", adminIDs, basicIDs)
		check(t, slices.Contains(basicIDs, basic.ID) && !slices.Contains(adminIDs, basic.ID), "the second user: Admin %v, Basic %v", adminIDs, basicIDs)
		page := must(c.getUserPage(admin, userPage{PageNum: 0, PageSize: 10}))(t)
		for _, u := range []daUser{admin, basic} {
			i := slices.IndexFunc(page.Items, func(x onyxFullUserSnapshot) bool { return string(x.ID) == u.ID })
			check(t, i >= 0, "%s not in the user listing", u.Email)
			check(t, page.Items[i].AccountType == "STANDARD", "%s: account_type %s", u.Email, page.Items[i].AccountType)
		}
	}},
	{Name: "users/test_reactivation_groups.py/test_reactivated_user_retains_default_group", Run: func(t *testing.T, c client) {
		admin := must(c.createUser("admin_user", ""))(t)
		basic := must(c.createUser("basic_user", ""))(t)
		_, emails := groupMembers(t, c, admin.caller(), "Basic")
		check(t, slices.Contains(emails, basic.Email), "%s not in Basic", basic.Email)
		basic = must(c.setStatus(basic, false, admin))(t)
		basic = must(c.setStatus(basic, true, admin))(t)
		_, emails = groupMembers(t, c, admin.caller(), "Basic")
		check(t, slices.Contains(emails, basic.Email), "Reactivated user should still be in Basic default group")
	}},
	{Name: "users/test_user_pagination.py/test_user_pagination", Run: userPagination},
	{Name: "users/test_password_signup_upgrade.py/test_password_signup_upgrade[ext_perm_user]", Excluded: excludedRoles, Run: func(t *testing.T, c client) {
		passwordSignupUpgrade(t, c, "ext_perm_user")
	}},
	{Name: "users/test_password_signup_upgrade.py/test_password_signup_upgrade[slack_user]", Excluded: excludedRoles, Run: func(t *testing.T, c client) {
		passwordSignupUpgrade(t, c, "slack_user")
	}},
	{Name: "users/test_password_signup_upgrade.py/test_password_signup_upgrade_propagates_permissions", Excluded: excludedRoles, Run: func(t *testing.T, c client) {
		admin := must(c.createUser("", "admin@example.com"))(t)
		for _, x := range []struct {
			role  onyxRole
			email string
		}{{"ext_perm_user", "ext_perms_check@example.com"}, {"slack_user", "slack_perms_check@example.com"}} {
			u := must(c.createUser("", x.email))(t)
			if x.role == "ext_perm_user" {
				check(t, slices.Contains(must(c.getPermissions(u.caller()))(t), "basic"), "%s lacks basic", x.email)
			}
			must(c.setRole(u, x.role, admin, true))(t)
			_, emails := groupMembers(t, c, admin.caller(), "Basic")
			check(t, !slices.Contains(emails, x.email), "%s (%s) is still in Basic", x.email, x.role)
			up := must(c.createUser("", x.email))(t)
			check(t, up.Role == "basic", "role after the upgrade: %s", up.Role)
			check(t, slices.Contains(must(c.getPermissions(up.caller()))(t), "basic"), "the upgraded %s lacks basic", x.role)
		}
	}},
	{Name: "anonymous_user/test_anonymous_user.py/test_me_endpoint_returns_authenticated_user_info", Run: func(t *testing.T, c client) {
		admin := must(c.createUser("admin_user", ""))(t)
		r := c.tg.Do(admin.caller(), "GET", "/me", nil)
		check(t, r.Status == 200, "GET /me: %d %s", r.Status, r.Body)
		obj := must(keys(r, "email", "role"))(t)
		check(t, string(obj["is_anonymous_user"]) != "true", "is_anonymous_user is true")
		check(t, string(obj["email"]) == fmt.Sprintf("%q", admin.Email) && string(obj["role"]) == `"admin"`, "GET /me: %s", r.Body)
	}},
}

// passwordSignupUpgrade is test_password_signup_upgrade: a person made a
// Slack bot or a permission-sync user (roles Quarry does not have) leaves
// the Basic group, and registering again with a password makes them a
// basic STANDARD account in it.
func passwordSignupUpgrade(t *testing.T, c client, role onyxRole) {
	admin := must(c.createUser("", "admin@example.com"))(t)
	email := string(role) + "_upgrade@example.com"
	u := must(c.createUser("", email))(t)
	must(c.setRole(u, role, admin, true))(t)
	_, emails := groupMembers(t, c, admin.caller(), "Basic")
	check(t, !slices.Contains(emails, email), "%s should not be in Basic default group", role)
	up := must(c.createUser("", email))(t)
	check(t, up.Role == "basic", "role after the upgrade: %s", up.Role)
	page := must(c.getUserPage(admin, userPage{PageNum: 0, PageSize: 10}))(t)
	i := slices.IndexFunc(page.Items, func(x onyxFullUserSnapshot) bool { return string(x.ID) == up.ID })
	check(t, i >= 0 && page.Items[i].AccountType == "STANDARD", "the upgraded user in the listing: %+v", page.Items)
	_, emails = groupMembers(t, c, admin.caller(), "Basic")
	check(t, slices.Contains(emails, email), "Upgraded user %s not found in Basic default group", email)
}

// userPagination is test_user_pagination: 50 people in five kinds, paged
// five at a time under several filters.
func userPagination(t *testing.T, c client) {
	me := must(c.createUser("admin_performing_action", ""))(t)
	f := false
	admins := must(c.createTestUsers(me, "admin", 9, "admin", nil))(t)
	admins = append(admins, me)
	basics := must(c.createTestUsers(me, "basic", 10, "basic", nil))(t)
	gcs := must(c.createTestUsers(me, "global_curator", 10, "global_curator", nil))(t)
	inactive := must(c.createTestUsers(me, "inactive_admin", 10, "admin", &f))(t)
	searchable := must(c.createTestUsers(me, "search_curator", 10, "global_curator", nil))(t)
	all := slices.Concat(admins, basics, gcs, inactive, searchable)
	for _, u := range all {
		check(t, must(c.isRole(u, u.Role))(t), "%s: role is not %s", u.Email, u.Role)
		check(t, must(c.isStatus(u, u.IsActive))(t), "%s: is_active is not %t", u.Email, u.IsActive)
	}
	verify := func(users []daUser, p userPage) {
		t.Helper()
		p.PageSize = 5
		var got []string
		for i := 0; i < len(users); i += p.PageSize {
			p.PageNum = i / p.PageSize
			page := must(c.getUserPage(me, p))(t)
			check(t, page.TotalItems == int64(len(users)), "%+v: total_items %d, want %d", p, page.TotalItems, len(users))
			check(t, len(page.Items) == p.PageSize, "%+v: %d items on page %d", p, len(page.Items), p.PageNum)
			for _, x := range page.Items {
				got = append(got, x.Email)
			}
		}
		var want []string
		for _, u := range users {
			want = append(want, u.Email)
		}
		check(t, sameSet(got, want), "%+v: emails %v, want %v", p, got, want)
	}
	verify(all, userPage{})
	verify(slices.Concat(admins, inactive), userPage{Roles: []onyxRole{"admin"}})
	verify(inactive, userPage{IsActive: &f})
	verify(searchable, userPage{Query: "search"})
	verify(inactive, userPage{Roles: []onyxRole{"admin"}, IsActive: &f})
	verify(searchable, userPage{Roles: []onyxRole{"global_curator"}, Query: "search"})
	verify(inactive, userPage{Roles: []onyxRole{"admin"}, IsActive: &f, Query: "inactive_ad"})
	verify(slices.Concat(admins, gcs, inactive, searchable), userPage{Roles: []onyxRole{"admin", "global_curator"}})
}
