package onyxtest

import (
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// The managers of Onyx v4.6.1's integration tests
// (backend/tests/integration/common_utils/managers/: user.py, api_key.py,
// connector.py, credential.py, cc_pair.py, user_group.py), as methods of
// client: each makes the manager's HTTP requests, with its paths, methods
// and bodies, and reads each answer as the manager does (a model parsed
// with parse, or keys read), returning what the manager returns, or the
// error it raises: a *statusError for raise_for_status, a
// *validationError for a model or a key it cannot read.

// client replays the managers against a server.
type client struct{ tg Target }

// statusError is httpx's HTTPStatusError, which raise_for_status raises
// for a 4xx or 5xx answer (and the replay for a request it could not send).
type statusError struct {
	Method, Path string
	Status       int
	Body         string
}

func (e *statusError) Error() string {
	return fmt.Sprintf("%s %s: %d %s", e.Method, e.Path, e.Status, e.Body)
}

// raiseForStatus returns a *statusError for an answer that is not 1xx-3xx.
func raiseForStatus(method, path string, r *Response) error {
	if r.Status >= 400 || r.Status == 0 {
		return &statusError{method, path, r.Status, clip(r.Body)}
	}
	return nil
}

// do sends a request as u and raises for its status.
func (c client) do(u User, method, path string, body any, headers ...string) (*Response, error) {
	r := c.tg.Do(u, method, path, body, headers...)
	return r, raiseForStatus(method, path, r)
}

// call sends a request as u, raises for its status, and parses the answer
// as the model T mirrors.
func call[T any](c client, u User, method, path string, body any) (T, error) {
	r, err := c.do(u, method, path, body)
	if err != nil {
		var zero T
		return zero, err
	}
	return parse[T](r)
}

// keys reads the keys of a JSON object answer as the managers do with
// response.json()["key"]: a missing key is a KeyError.
func keys(r *Response, want ...string) (map[string]json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(r.Body, &obj); err != nil {
		return nil, &validationError{"a JSON object", err, r.Body}
	}
	for _, k := range want {
		if _, ok := obj[k]; !ok {
			return nil, &validationError{"a JSON object", fmt.Errorf("KeyError: %q", k), r.Body}
		}
	}
	return obj, nil
}

// ---- UserManager (user.py) ----

// daUser is Onyx's DATestUser: a person the managers act as, with the
// session cookie login_as_user got.
type daUser struct {
	ID       string
	Email    string
	Password string
	Role     onyxRole
	IsActive bool
	Cookie   string
}

// caller returns the credentials the manager sends for u.
func (u daUser) caller() User { return User{Cookie: u.Cookie, ID: u.ID, Email: u.Email} }

// buildEmail is build_email.
func buildEmail(name string) string { return name + "@example.com" }

// createUser is UserManager.create(name, email): register, then
// login_as_user. An empty name is test<uuid4>.
func (c client) createUser(name, email string) (daUser, error) {
	if name == "" {
		name = "test" + uuid.NewString()
	}
	if email == "" {
		email = buildEmail(name)
	}
	r, err := c.do(User{}, "POST", "/auth/register", map[string]any{"email": email, "username": email, "password": onyxPassword})
	if err != nil {
		return daUser{}, err
	}
	obj, err := keys(r, "id")
	if err != nil {
		return daUser{}, err
	}
	if _, err := parse[onyxUserRead](r); err != nil {
		return daUser{}, err
	}
	u := daUser{Email: email, Password: onyxPassword, Role: "basic", IsActive: true}
	json.Unmarshal(obj["id"], &u.ID)
	return c.loginAsUser(u)
}

// loginAsUser is UserManager.login_as_user: log in with the form, keep
// the session cookie, and read id and role from GET /me.
func (c client) loginAsUser(u daUser) (daUser, error) {
	form := url.Values{"username": {u.Email}, "password": {u.Password}}.Encode()
	r, err := c.do(User{}, "POST", "/auth/login", form, "Content-Type", "application/x-www-form-urlencoded")
	if err != nil {
		return u, err
	}
	ck := r.sessionCookie()
	if ck == nil {
		return u, fmt.Errorf("Failed to login")
	}
	u.Cookie = ck.Value
	me, err := c.whoAmI(u.caller())
	u.ID, u.Role = me.ID, me.Role
	return u, err
}

// whoAmI reads id and role from GET /me as login_as_user does
// (me_response_json["id"], UserRole(me_response_json["role"])).
func (c client) whoAmI(u User) (daUser, error) {
	var me daUser
	r, err := c.do(u, "GET", "/me", nil)
	if err != nil {
		return me, err
	}
	obj, err := keys(r, "id", "role")
	if err != nil {
		return me, err
	}
	json.Unmarshal(obj["id"], &me.ID)
	if err := onyxCheck("body.role", obj["role"], reflect.TypeFor[onyxRole]()); err != nil {
		return me, &validationError{"UserRole", err, r.Body}
	}
	json.Unmarshal(obj["role"], &me.Role)
	return me, nil
}

// getPermissions is UserManager.get_permissions: GET /me/permissions.
func (c client) getPermissions(u User) ([]string, error) {
	r, err := c.do(u, "GET", "/me/permissions", nil)
	if err != nil {
		return nil, err
	}
	var out []string
	if err := json.Unmarshal(r.Body, &out); err != nil {
		return nil, &validationError{"list[str]", err, r.Body}
	}
	return out, nil
}

// isRole is UserManager.is_role: GET /me, which must fail for an inactive
// person (pytest.raises).
func (c client) isRole(u daUser, role onyxRole) (bool, error) {
	r := c.tg.Do(u.caller(), "GET", "/me", nil)
	err := raiseForStatus("GET", "/me", r)
	if !u.IsActive {
		if err == nil {
			return false, fmt.Errorf("GET /me of inactive %s: %d, want an error (pytest.raises)", u.Email, r.Status)
		}
		return u.Role == role, nil
	}
	if err != nil {
		return false, err
	}
	obj, err := keys(r)
	if err != nil {
		return false, err
	}
	got, ok := obj["role"]
	if !ok || string(got) == "null" {
		return u.Role == role, nil
	}
	var have onyxRole
	json.Unmarshal(got, &have)
	return have == role, nil
}

// isStatus is UserManager.is_status: GET /me, which must fail when
// status is false.
func (c client) isStatus(u daUser, status bool) (bool, error) {
	r := c.tg.Do(u.caller(), "GET", "/me", nil)
	err := raiseForStatus("GET", "/me", r)
	if !status {
		if err == nil {
			return false, fmt.Errorf("GET /me of %s: %d, want an error (pytest.raises)", u.Email, r.Status)
		}
	} else if err != nil {
		return false, err
	}
	var obj map[string]json.RawMessage
	json.Unmarshal(r.Body, &obj)
	var active *bool
	json.Unmarshal(obj["is_active"], &active)
	if active == nil {
		return u.IsActive == status, nil
	}
	return *active == status, nil
}

// setRole is UserManager.set_role.
func (c client) setRole(u daUser, role onyxRole, by daUser, explicitOverride bool) (daUser, error) {
	_, err := c.do(by.caller(), "PATCH", "/manage/set-user-role",
		map[string]any{"user_email": u.Email, "new_role": role, "explicit_override": explicitOverride})
	if err != nil {
		return u, err
	}
	u.Role = role
	return u, nil
}

// setStatus is UserManager.set_status.
func (c client) setStatus(u daUser, active bool, by daUser) (daUser, error) {
	path := "/manage/admin/deactivate-user"
	if active {
		path = "/manage/admin/activate-user"
	}
	if _, err := c.do(by.caller(), "PATCH", path, map[string]any{"user_email": u.Email}); err != nil {
		return u, err
	}
	u.IsActive = active
	return u, nil
}

// createTestUsers is UserManager.create_test_users.
func (c client) createTestUsers(by daUser, prefix string, count int, role onyxRole, active *bool) ([]daUser, error) {
	var out []daUser
	for i := 1; i <= count; i++ {
		u, err := c.createUser(fmt.Sprintf("%s_%d", prefix, i), "")
		if err != nil {
			return nil, err
		}
		if role != "basic" {
			if u, err = c.setRole(u, role, by, false); err != nil {
				return nil, err
			}
		}
		if active != nil {
			if u, err = c.setStatus(u, *active, by); err != nil {
				return nil, err
			}
		}
		out = append(out, u)
	}
	return out, nil
}

// userPage is the query of UserManager.get_user_page.
type userPage struct {
	PageNum, PageSize int
	Query             string
	Roles             []onyxRole
	IsActive          *bool
}

// getUserPage is UserManager.get_user_page: the query urlencoded with
// doseq, Python's booleans rendered True and False.
func (c client) getUserPage(by daUser, p userPage) (onyxPaginatedUsers, error) {
	q := url.Values{"page_num": {fmt.Sprint(p.PageNum)}, "page_size": {fmt.Sprint(p.PageSize)}}
	if p.Query != "" {
		q.Set("q", p.Query)
	}
	for _, r := range p.Roles {
		q.Add("roles", string(r))
	}
	if p.IsActive != nil {
		q.Set("is_active", map[bool]string{true: "True", false: "False"}[*p.IsActive])
	}
	return call[onyxPaginatedUsers](c, by.caller(), "GET", "/manage/users/accepted?"+pyEncode(q, "page_num", "page_size", "q", "roles", "is_active"), nil)
}

// pyEncode renders q as urlencode renders a dict: keys in insertion order.
func pyEncode(q url.Values, order ...string) string {
	var parts []string
	for _, k := range order {
		for _, v := range q[k] {
			parts = append(parts, url.QueryEscape(k)+"="+url.QueryEscape(v))
		}
	}
	return strings.Join(parts, "&")
}

// getUserInfo is UserManager.get_user_info: GET /me parsed as UserInfo.
func (c client) getUserInfo(u User) (onyxUserInfo, error) {
	return call[onyxUserInfo](c, u, "GET", "/me", nil)
}

// ---- APIKeyManager (api_key.py) ----

// daAPIKey is Onyx's DATestAPIKey with the key it signs requests with.
type daAPIKey struct {
	onyxAPIKeyDescriptor
	Token string
}

// caller returns the credentials the manager sends for k.
func (k daAPIKey) caller() User { return User{Token: k.Token, ID: string(k.UserID)} }

// createAPIKey is APIKeyManager.create: APIKeyArgs(name, role).model_dump();
// name is "<name>-api-key", or test-api-key-<uuid4> when empty.
func (c client) createAPIKey(by daUser, name string, role onyxRole) (daAPIKey, error) {
	if name == "" {
		name = "test-api-key-" + uuid.NewString()
	} else {
		name += "-api-key"
	}
	r, err := c.do(by.caller(), "POST", "/admin/api-key", onyxAPIKeyArgs{Name: &name, Role: role})
	if err != nil {
		return daAPIKey{}, err
	}
	if _, err := keys(r, "api_key_id", "api_key_display", "api_key", "user_id"); err != nil {
		return daAPIKey{}, err
	}
	d, err := parse[onyxAPIKeyDescriptor](r)
	if err != nil {
		return daAPIKey{}, err
	}
	k := daAPIKey{onyxAPIKeyDescriptor: d}
	k.APIKeyName, k.APIKeyRole = &name, role
	if d.APIKey != nil {
		k.Token = *d.APIKey
	}
	return k, nil
}

// deleteAPIKey is APIKeyManager.delete.
func (c client) deleteAPIKey(k daAPIKey, by daUser) error {
	_, err := c.do(by.caller(), "DELETE", fmt.Sprint("/admin/api-key/", k.APIKeyID), nil)
	return err
}

// getAllAPIKeys is APIKeyManager.get_all: each key parsed as DATestAPIKey.
func (c client) getAllAPIKeys(by daUser) ([]onyxDATestAPIKey, error) {
	return call[[]onyxDATestAPIKey](c, by.caller(), "GET", "/admin/api-key", nil)
}

// verifyAPIKey is APIKeyManager.verify.
func (c client) verifyAPIKey(k daAPIKey, by daUser, verifyDeleted bool) error {
	all, err := c.getAllAPIKeys(by)
	if err != nil {
		return err
	}
	for _, x := range all {
		if x.APIKeyID != k.APIKeyID {
			continue
		}
		if verifyDeleted {
			return fmt.Errorf("API Key found when it should have been deleted")
		}
		if deref(x.APIKeyName) == deref(k.APIKeyName) && x.APIKeyRole == k.APIKeyRole {
			return nil
		}
	}
	if !verifyDeleted {
		return fmt.Errorf("API Key not found")
	}
	return nil
}

// ---- ConnectorManager (connector.py) ----

// connectorArgs are the arguments of ConnectorManager.create; zero values
// are its defaults (source file, input_type load_state, access_type
// public).
type connectorArgs struct {
	Name        string
	Source      onyxSource
	InputType   onyxInputType
	Config      map[string]any
	AccessType  onyxAccessType
	Groups      []int64
	RefreshFreq *int64
}

// createConnector is ConnectorManager.create: ConnectorUpdateRequest(...)
// .model_dump(), and the DATestConnector it returns.
func (c client) createConnector(by User, a connectorArgs) (onyxDATestConnector, error) {
	name := "test-connector-" + uuid.NewString()
	if a.Name != "" {
		name = a.Name + "-connector"
	}
	if a.Source == "" {
		a.Source = "file"
	}
	if a.InputType == "" {
		a.InputType = "load_state"
	}
	if a.AccessType == "" {
		a.AccessType = "public"
	}
	config := a.Config
	if config == nil {
		config = map[string]any{}
		if a.Source == "file" {
			config = map[string]any{"file_locations": []string{}, "file_names": []string{}, "zip_metadata_file_id": nil}
		}
	}
	req := onyxConnectorUpdateRequest{Name: name, Source: a.Source, InputType: a.InputType, ConnectorSpecificConfig: config,
		RefreshFreq: a.RefreshFreq, AccessType: a.AccessType, Groups: orEmpty(a.Groups)}
	r, err := c.do(by, "POST", "/manage/admin/connector", req)
	if err != nil {
		return onyxDATestConnector{}, err
	}
	created, err := parse[onyxObjectCreationID](r)
	if err != nil {
		return onyxDATestConnector{}, err
	}
	out := onyxDATestConnector{ID: created.ID, Name: name, Source: a.Source, InputType: a.InputType,
		ConnectorSpecificConfig: a.Config, AccessType: &a.AccessType}
	if out.ConnectorSpecificConfig == nil {
		out.ConnectorSpecificConfig = map[string]any{}
	}
	if a.Groups != nil {
		out.Groups = &a.Groups
	}
	return out, nil
}

// editConnector is ConnectorManager.edit: the DATestConnector but its id.
func (c client) editConnector(conn onyxDATestConnector, by User) error {
	_, err := c.do(by, "PATCH", fmt.Sprint("/manage/admin/connector/", conn.ID), dump(conn, "id"))
	return err
}

// deleteConnector is ConnectorManager.delete.
func (c client) deleteConnector(conn onyxDATestConnector, by User) error {
	_, err := c.do(by, "DELETE", fmt.Sprint("/manage/admin/connector/", conn.ID), nil)
	return err
}

// getConnector is ConnectorManager.get (it reads keys with .get, so any
// object passes; the answer is parsed as the route's ConnectorSnapshot).
func (c client) getConnector(id int64, by User) (onyxConnectorSnapshot, error) {
	return call[onyxConnectorSnapshot](c, by, "GET", fmt.Sprint("/manage/connector/", id), nil)
}

// getAllConnectors is ConnectorManager.get_all.
func (c client) getAllConnectors(by User) ([]onyxConnectorSnapshot, error) {
	return call[[]onyxConnectorSnapshot](c, by, "GET", "/manage/connector", nil)
}

// ---- CredentialManager (credential.py) ----

// credentialArgs are the arguments of CredentialManager.create; its
// defaults are admin_public and curator_public true, source file.
type credentialArgs struct {
	Name           string
	CredentialJSON map[string]any
	Source         onyxSource
	AdminPublic    *bool
	CuratorPublic  *bool
	Groups         []int64
}

// createCredential is CredentialManager.create.
func (c client) createCredential(by User, a credentialArgs) (onyxDATestCredential, error) {
	name := "test-credential-" + uuid.NewString()
	if a.Name != "" {
		name = a.Name + "-credential"
	}
	if a.Source == "" {
		a.Source = "file"
	}
	if a.CredentialJSON == nil {
		a.CredentialJSON = map[string]any{}
	}
	k := onyxDATestCredential{Name: name, CredentialJSON: a.CredentialJSON, AdminPublic: a.AdminPublic == nil || *a.AdminPublic,
		Source: a.Source, CuratorPublic: a.CuratorPublic == nil || *a.CuratorPublic, Groups: orEmpty(a.Groups)}
	r, err := c.do(by, "POST", "/manage/credential", map[string]any{"name": k.Name, "credential_json": k.CredentialJSON,
		"admin_public": k.AdminPublic, "source": k.Source, "curator_public": k.CuratorPublic, "groups": k.Groups})
	if err != nil {
		return k, err
	}
	obj, err := keys(r, "id")
	if err != nil {
		return k, err
	}
	if _, err := parse[onyxObjectCreationID](r); err != nil {
		return k, err
	}
	json.Unmarshal(obj["id"], &k.ID)
	return k, nil
}

// editCredential is CredentialManager.edit: its name and credential_json,
// to PUT /manage/admin/credential/{id}.
func (c client) editCredential(k onyxDATestCredential, by User) error {
	_, err := c.do(by, "PUT", fmt.Sprint("/manage/admin/credential/", k.ID), map[string]any{"name": k.Name, "credential_json": k.CredentialJSON})
	return err
}

// deleteCredential is CredentialManager.delete.
func (c client) deleteCredential(k onyxDATestCredential, by User) error {
	_, err := c.do(by, "DELETE", fmt.Sprint("/manage/credential/", k.ID), nil)
	return err
}

// getAllCredentials is CredentialManager.get_all.
func (c client) getAllCredentials(by User) ([]onyxCredentialSnapshot, error) {
	return call[[]onyxCredentialSnapshot](c, by, "GET", "/manage/credential", nil)
}

// verifyCredential is CredentialManager.verify.
func (c client) verifyCredential(k onyxDATestCredential, by User, verifyDeleted bool) error {
	all, err := c.getAllCredentials(by)
	if err != nil {
		return err
	}
	for _, x := range all {
		if x.ID != k.ID {
			continue
		}
		if verifyDeleted {
			return fmt.Errorf("Credential %d found but should be deleted", k.ID)
		}
		if deref(x.Name) == k.Name && x.AdminPublic == k.AdminPublic && x.Source == k.Source && x.CuratorPublic == k.CuratorPublic {
			return nil
		}
	}
	if !verifyDeleted {
		return fmt.Errorf("Credential %d not found", k.ID)
	}
	return nil
}

// ---- CCPairManager (cc_pair.py) ----

// daCCPair is Onyx's DATestCCPair.
type daCCPair struct {
	ID           int64
	Name         string
	ConnectorID  int64
	CredentialID int64
	AccessType   onyxAccessType
	Groups       []int64
}

// createCCPair is CCPairManager.create (_cc_pair_creator): the name is
// "<name>-cc-pair", or test-cc-pair-<uuid4>; access_type public by default.
func (c client) createCCPair(connectorID, credentialID int64, by User, name string, access onyxAccessType, groups []int64) (daCCPair, error) {
	if name == "" {
		name = "test-cc-pair-" + uuid.NewString()
	} else {
		name += "-cc-pair"
	}
	if access == "" {
		access = "public"
	}
	p := daCCPair{Name: name, ConnectorID: connectorID, CredentialID: credentialID, AccessType: access, Groups: orEmpty(groups)}
	r, err := c.do(by, "PUT", fmt.Sprintf("/manage/connector/%d/credential/%d", connectorID, credentialID),
		map[string]any{"name": name, "access_type": access, "groups": p.Groups})
	if err != nil {
		return p, err
	}
	obj, err := keys(r, "data")
	if err != nil {
		return p, err
	}
	if _, err := parse[onyxStatusResponse](r); err != nil {
		return p, err
	}
	if err := json.Unmarshal(obj["data"], &p.ID); err != nil {
		return p, &validationError{"int(payload[\"data\"])", err, r.Body}
	}
	return p, nil
}

// createCCPairFromScratch is CCPairManager.create_from_scratch: a
// connector, a credential (curator_public when the pair is public) and
// the pair, all named name.
func (c client) createCCPairFromScratch(by User, name string, access onyxAccessType, groups []int64, source onyxSource) (daCCPair, error) {
	if access == "" {
		access = "public"
	}
	conn, err := c.createConnector(by, connectorArgs{Name: name, Source: source, AccessType: access, Groups: groups})
	if err != nil {
		return daCCPair{}, err
	}
	public := access == "public"
	k, err := c.createCredential(by, credentialArgs{Name: name, Source: source, CuratorPublic: &public, Groups: groups})
	if err != nil {
		return daCCPair{}, err
	}
	return c.createCCPair(conn.ID, k.ID, by, name, access, groups)
}

// setCCPairStatus is CCPairManager.pause_cc_pair ("PAUSED") and
// unpause_cc_pair ("ACTIVE").
func (c client) setCCPairStatus(p daCCPair, status string, by User) error {
	_, err := c.do(by, "PUT", fmt.Sprintf("/manage/admin/cc-pair/%d/status", p.ID), map[string]any{"status": status})
	return err
}

// deleteCCPair is CCPairManager.delete: a deletion attempt.
func (c client) deleteCCPair(p daCCPair, by User) error {
	_, err := c.do(by, "POST", "/manage/admin/deletion-attempt", onyxCCPairIdentifier{ConnectorID: p.ConnectorID, CredentialID: p.CredentialID})
	return err
}

// getCCPair is CCPairManager.get_single.
func (c client) getCCPair(id int64, by User) (onyxCCPairFullInfo, error) {
	return call[onyxCCPairFullInfo](c, by, "GET", fmt.Sprint("/manage/admin/cc-pair/", id), nil)
}

// getIndexingStatuses is CCPairManager.get_indexing_statuses: every entry
// of every source of indexing-status, parsed as ConnectorIndexingStatusLite.
func (c client) getIndexingStatuses(by User) ([]onyxIndexingStatusLite, error) {
	bySource, err := call[[]onyxIndexingStatusResponse](c, by, "POST", "/manage/admin/connector/indexing-status", map[string]any{"get_all_connectors": true})
	if err != nil {
		return nil, err
	}
	var out []onyxIndexingStatusLite
	for _, s := range bySource {
		for _, e := range s.IndexingStatuses {
			if e.Lite == nil {
				return nil, &validationError{"ConnectorIndexingStatusLite", fmt.Errorf("a federated connector: %+v", e.Federated), nil}
			}
			out = append(out, *e.Lite)
		}
	}
	return out, nil
}

// getConnectorStatuses is CCPairManager.get_connector_statuses.
func (c client) getConnectorStatuses(by User) ([]onyxConnectorStatus, error) {
	return call[[]onyxConnectorStatus](c, by, "GET", "/manage/admin/connector/status", nil)
}

// verifyCCPair is CCPairManager.verify, through the status listing.
func (c client) verifyCCPair(p daCCPair, by User, verifyDeleted bool) error {
	all, err := c.getConnectorStatuses(by)
	if err != nil {
		return err
	}
	for _, s := range all {
		if s.CCPairID != p.ID {
			continue
		}
		if verifyDeleted {
			return fmt.Errorf("CC pair %d found but should be deleted", p.ID)
		}
		if s.Name == p.Name && s.Connector.ID == p.ConnectorID && s.Credential.ID == p.CredentialID && s.AccessType == p.AccessType &&
			sameSet(s.Groups, p.Groups) {
			return nil
		}
	}
	if !verifyDeleted {
		return fmt.Errorf("CC pair %d not found", p.ID)
	}
	return nil
}

// pollLimit bounds the managers' waiting loops (wait_for_sync,
// wait_for_deletion_completion), which poll for up to 300 seconds in
// Onyx. Quarry answers when a change is done, so there is nothing to wait
// for: the replay polls a few times, without sleeping, and then reports
// the time-out the manager would raise.
const pollLimit = 3

// waitForCCPairDeletion is CCPairManager.wait_for_deletion_completion
// with a cc_pair_id: poll indexing-status until the pair is gone.
func (c client) waitForCCPairDeletion(by User, id int64) error {
	for range pollLimit {
		all, err := c.getIndexingStatuses(by)
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(all, func(s onyxIndexingStatusLite) bool { return s.CCPairID == id }) {
			return nil
		}
	}
	return fmt.Errorf("TimeoutError: CC pairs deletion was not completed (pair %d still listed by indexing-status)", id)
}

// ---- UserGroupManager (user_group.py) ----

// createGroup is UserGroupManager.create: the name is "<name>-user-group",
// or test-user-group-<uuid4>; the DATestUserGroup is read from the answer.
func (c client) createGroup(by User, name string, userIDs []string, ccPairIDs []int64) (onyxDATestUserGroup, error) {
	if name == "" {
		name = "test-user-group-" + uuid.NewString()
	} else {
		name += "-user-group"
	}
	if userIDs == nil {
		userIDs = []string{}
	}
	r, err := c.do(by, "POST", "/manage/admin/user-group", map[string]any{"name": name, "user_ids": userIDs, "cc_pair_ids": orEmpty(ccPairIDs)})
	if err != nil {
		return onyxDATestUserGroup{}, err
	}
	return groupFromAnswer(r)
}

// groupFromAnswer reads a DATestUserGroup from the keys of a UserGroup
// answer, as create and add_users do.
func groupFromAnswer(r *Response) (onyxDATestUserGroup, error) {
	obj, err := keys(r, "id", "name", "users", "cc_pairs")
	if err != nil {
		return onyxDATestUserGroup{}, err
	}
	var g onyxDATestUserGroup
	var users, pairs []map[string]json.RawMessage
	json.Unmarshal(obj["id"], &g.ID)
	json.Unmarshal(obj["name"], &g.Name)
	if json.Unmarshal(obj["users"], &users) != nil || json.Unmarshal(obj["cc_pairs"], &pairs) != nil {
		return g, &validationError{"UserGroup", fmt.Errorf("users or cc_pairs is not a list of objects"), r.Body}
	}
	g.UserIDs, g.CCPairIDs = []string{}, []int64{}
	for _, u := range users {
		var id string
		if _, ok := u["id"]; !ok {
			return g, &validationError{"UserGroup", fmt.Errorf(`KeyError: "id" in users`), r.Body}
		}
		json.Unmarshal(u["id"], &id)
		g.UserIDs = append(g.UserIDs, id)
	}
	for _, p := range pairs {
		var id int64
		if _, ok := p["id"]; !ok {
			return g, &validationError{"UserGroup", fmt.Errorf(`KeyError: "id" in cc_pairs`), r.Body}
		}
		json.Unmarshal(p["id"], &id)
		g.CCPairIDs = append(g.CCPairIDs, id)
	}
	return g, nil
}

// editGroup is UserGroupManager.edit: the whole DATestUserGroup.
func (c client) editGroup(g onyxDATestUserGroup, by User) error {
	_, err := c.do(by, "PATCH", fmt.Sprint("/manage/admin/user-group/", g.ID), g)
	return err
}

// deleteGroup is UserGroupManager.delete.
func (c client) deleteGroup(g onyxDATestUserGroup, by User) error {
	_, err := c.do(by, "DELETE", fmt.Sprint("/manage/admin/user-group/", g.ID), nil)
	return err
}

// addUsers is UserGroupManager.add_users.
func (c client) addUsers(g onyxDATestUserGroup, userIDs []string, by User) (onyxDATestUserGroup, error) {
	r, err := c.do(by, "POST", fmt.Sprintf("/manage/admin/user-group/%d/add-users", g.ID), map[string]any{"user_ids": userIDs})
	if err != nil {
		return g, err
	}
	return groupFromAnswer(r)
}

// setCurator is UserGroupManager.set_curator_status.
func (c client) setCurator(g onyxDATestUserGroup, u daUser, by User, isCurator bool) error {
	_, err := c.do(by, "POST", fmt.Sprintf("/manage/admin/user-group/%d/set-curator", g.ID), map[string]any{"user_id": u.ID, "is_curator": isCurator})
	return err
}

// getGroupPermissions is UserGroupManager.get_permissions.
func (c client) getGroupPermissions(g onyxDATestUserGroup, by User) ([]string, error) {
	r, err := c.do(by, "GET", fmt.Sprintf("/manage/admin/user-group/%d/permissions", g.ID), nil)
	if err != nil {
		return nil, err
	}
	var out []string
	if err := json.Unmarshal(r.Body, &out); err != nil {
		return nil, &validationError{"list[Permission]", err, r.Body}
	}
	return out, nil
}

// setPermission is UserGroupManager.set_permission: the answer as is (the
// manager does not raise for its status).
func (c client) setPermission(g onyxDATestUserGroup, permission string, enabled bool, by User) *Response {
	return c.tg.Do(by, "PUT", fmt.Sprintf("/manage/admin/user-group/%d/permissions", g.ID), map[string]any{"permission": permission, "enabled": enabled})
}

// getAllGroups is UserGroupManager.get_all, with ?include_default=true
// when includeDefault.
func (c client) getAllGroups(by User, includeDefault bool) ([]onyxUserGroup, error) {
	path := "/manage/admin/user-group"
	if includeDefault {
		path += "?include_default=true"
	}
	return call[[]onyxUserGroup](c, by, "GET", path, nil)
}

// verifyGroup is UserGroupManager.verify.
func (c client) verifyGroup(g onyxDATestUserGroup, by User, verifyDeleted bool) error {
	all, err := c.getAllGroups(by, false)
	if err != nil {
		return err
	}
	for _, x := range all {
		if x.ID != g.ID {
			continue
		}
		if verifyDeleted {
			return fmt.Errorf("User group %d found but should be deleted", g.ID)
		}
		var pairs []int64
		var users []string
		for _, p := range x.CCPairs {
			pairs = append(pairs, p.ID)
		}
		for _, u := range x.Users {
			users = append(users, u.ID)
		}
		if sameSet(pairs, g.CCPairIDs) && sameSet(users, g.UserIDs) {
			return nil
		}
	}
	if !verifyDeleted {
		return fmt.Errorf("User group %d not found", g.ID)
	}
	return nil
}

// waitForGroupSync is UserGroupManager.wait_for_sync: poll until every
// group (of check, when given) is up to date.
func (c client) waitForGroupSync(by User, check ...onyxDATestUserGroup) error {
	for range pollLimit {
		all, err := c.getAllGroups(by, false)
		if err != nil {
			return err
		}
		if len(check) > 0 {
			var ids []int64
			for _, g := range check {
				ids = append(ids, g.ID)
			}
			all = slices.DeleteFunc(all, func(g onyxUserGroup) bool { return !slices.Contains(ids, g.ID) })
			if len(all) < len(ids) {
				return fmt.Errorf("RuntimeError: User group not found")
			}
		}
		if !slices.ContainsFunc(all, func(g onyxUserGroup) bool { return !g.IsUpToDate }) {
			return nil
		}
	}
	return fmt.Errorf("TimeoutError: User groups were not synced")
}

// defaultGroupMembers returns the ids and emails of the members of the
// default group named name, as the tests read it from
// get_all(include_default=True).
func (c client) defaultGroupMembers(by User, name string) (ids, emails []string, err error) {
	all, err := c.getAllGroups(by, true)
	if err != nil {
		return nil, nil, err
	}
	i := slices.IndexFunc(all, func(g onyxUserGroup) bool { return g.Name == name && g.IsDefault })
	if i < 0 {
		return nil, nil, fmt.Errorf("%s default group not found", name)
	}
	for _, u := range all[i].Users {
		ids = append(ids, u.ID)
		emails = append(emails, u.Email)
	}
	return ids, emails, nil
}

// ---- PATManager (pat.py) ----

// createPATResponse is PATManager.create_response: name and
// expiration_days (None sent as null), and scopes when given; the answer
// is not raised for.
func (c client) createPATResponse(name string, expirationDays *int, by daUser, scopes []string) *Response {
	body := map[string]any{"name": name, "expiration_days": expirationDays}
	if scopes != nil {
		body["scopes"] = scopes
	}
	return c.tg.Do(by.caller(), "POST", "/user/pats", body)
}

// createPAT is PATManager.create: create_response raised for, parsed as
// DATestPAT.
func (c client) createPAT(name string, expirationDays *int, by daUser, scopes []string) (onyxDATestPAT, error) {
	r := c.createPATResponse(name, expirationDays, by, scopes)
	if err := raiseForStatus("POST", "/user/pats", r); err != nil {
		return onyxDATestPAT{}, err
	}
	return parse[onyxDATestPAT](r)
}

// selectableScopes is PATManager.selectable_scopes: the answer's JSON,
// read by key.
func (c client) selectableScopes(by daUser) ([]map[string]any, error) {
	r, err := c.do(by.caller(), "GET", "/user/pats/scopes", nil)
	if err != nil {
		return nil, err
	}
	var out []map[string]any
	if err := json.Unmarshal(r.Body, &out); err != nil {
		return nil, &validationError{"list[dict]", err, r.Body}
	}
	return out, nil
}

// listPATs is PATManager.list: each token parsed as DATestPAT.
func (c client) listPATs(by daUser) ([]onyxDATestPAT, error) {
	return call[[]onyxDATestPAT](c, by.caller(), "GET", "/user/pats", nil)
}

// revokePAT is PATManager.revoke.
func (c client) revokePAT(id int64, by daUser) error {
	_, err := c.do(by.caller(), "DELETE", fmt.Sprint("/user/pats/", id), nil)
	return err
}

// authenticatePAT is PATManager.authenticate: GET /me with the token
// alone, not raised for.
func (c client) authenticatePAT(token string) *Response {
	return c.tg.Do(User{Token: token}, "GET", "/me", nil)
}

// ---- helpers ----

// must returns a function that returns v, or ends the test with err (an
// exception the Onyx test does not expect): must(c.createUser(...))(t).
func must[T any](v T, err error) func(t *testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// ok ends the test with err, if any.
func ok(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// dump returns v as model_dump() does (v's JSON object), less the keys
// in exclude.
func dump(v any, exclude ...string) map[string]any {
	var m map[string]any
	if err := json.Unmarshal(mustJSON(v), &m); err != nil {
		panic(err)
	}
	for _, k := range exclude {
		delete(m, k)
	}
	return m
}

// orEmpty returns s, or an empty slice for nil (Python's `x or []`).
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// deref returns *p, or the zero value for nil.
func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// sameSet reports whether a and b hold the same elements (Python's set(a) == set(b)).
func sameSet[T comparable](a, b []T) bool {
	in := func(x []T, y []T) bool {
		for _, v := range x {
			if !slices.Contains(y, v) {
				return false
			}
		}
		return true
	}
	return in(a, b) && in(b, a)
}
