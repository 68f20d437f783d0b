package api_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api/onyxtest"
)

// Helpers of the supporting-API tests (support_*_test.go): fixtures made
// through the API itself, and the expected wire shapes of contract section
// 6. Their names start with fx so that they stay out of the way of other
// test files of the package.

// fx makes fixtures on a test server as its admin (or as a given user) and
// fails the test at once when one cannot be made.
type fx struct{ *env }

// fxWeb is the connector_specific_config of every fixture connector.
const fxWeb = `{"url":"https://example.com"}`

// fxOK decodes the {"id"} or StatusResponse {"data"} of a 200 answer.
func (f fx) fxOK(r *response) int64 {
	f.t.Helper()
	var out struct {
		ID   int64 `json:"id"`
		Data int64 `json:"data"`
	}
	r.decode(f.t, &out)
	return out.ID + out.Data
}

// connector creates a poll connector with config fxWeb as u and returns its
// id. extra adds fields to the body (access_type, groups).
func (f fx) connector(u user, name, source string, extra ...any) int64 {
	f.t.Helper()
	return f.fxOK(f.do(u, "POST", "/manage/admin/connector", fxConnectorBody(name, source, extra...)))
}

// fxConnectorBody is the body of POST /manage/admin/connector; extra holds
// key, value pairs.
func fxConnectorBody(name, source string, extra ...any) map[string]any {
	b := map[string]any{"name": name, "source": source, "input_type": "poll",
		"connector_specific_config": json.RawMessage(fxWeb)}
	for i := 0; i+1 < len(extra); i += 2 {
		b[extra[i].(string)] = extra[i+1]
	}
	return b
}

// credential creates a credential as u with the given secret JSON and
// returns its id. extra adds fields to the body.
func (f fx) credential(u user, source, secret string, extra ...any) int64 {
	f.t.Helper()
	return f.fxOK(f.do(u, "POST", "/manage/credential", fxCredentialBody(source, secret, extra...)))
}

// fxCredentialBody is the body of POST /manage/credential, admin_public
// false unless extra says otherwise.
func fxCredentialBody(source, secret string, extra ...any) map[string]any {
	b := map[string]any{"credential_json": json.RawMessage(secret), "admin_public": false, "source": source}
	for i := 0; i+1 < len(extra); i += 2 {
		b[extra[i].(string)] = extra[i+1]
	}
	return b
}

// pair pairs connector conn with credential cred as u and returns the
// cc-pair id.
func (f fx) pair(u user, conn, cred int64, name string, access quarry.AccessType, groups ...int64) int64 {
	f.t.Helper()
	return f.fxOK(f.do(u, "PUT", fxPairPath(conn, cred),
		map[string]any{"name": name, "access_type": access, "groups": fxIDs(groups)}))
}

func fxPairPath(conn, cred int64) string {
	return fmt.Sprintf("/manage/connector/%d/credential/%d", conn, cred)
}

// group creates a user group with members and returns its id; the curators
// (who must be members) get the curator flag.
func (f fx) group(name string, members []user, curators ...user) int64 {
	f.t.Helper()
	ids := []string{}
	for _, m := range members {
		ids = append(ids, m.id)
	}
	id := f.fxOK(f.do(f.admin, "POST", "/manage/admin/user-group", map[string]any{"name": name, "user_ids": ids}))
	for _, c := range curators {
		f.setCurator(id, c, true)
	}
	return id
}

// setCurator sets or clears u's curator flag on group id.
func (f fx) setCurator(id int64, u user, on bool) {
	f.t.Helper()
	f.do(f.admin, "POST", fmt.Sprintf("/manage/admin/user-group/%d/set-curator", id),
		map[string]any{"user_id": u.id, "is_curator": on}).want(f.t, 200, `null`)
}

// keyID returns the id of u's API key.
func (f fx) keyID(u user) int64 {
	f.t.Helper()
	var keys []struct {
		ID     int64  `json:"api_key_id"`
		UserID string `json:"user_id"`
	}
	f.do(f.admin, "GET", "/admin/api-key", nil).decode(f.t, &keys)
	for _, k := range keys {
		if k.UserID == u.id {
			return k.ID
		}
	}
	f.t.Fatalf("no API key for user %s", u.id)
	return 0
}

// role returns u's current role, as GET /me tells it.
func (f fx) role(u user) string {
	f.t.Helper()
	var me struct {
		Role string `json:"role"`
	}
	f.do(u, "GET", "/me", nil).decode(f.t, &me)
	return me.Role
}

// fxJSON renders v as JSON, for expected bodies.
func fxJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// fxIDs returns ids, or an empty list for none, so that it renders as [].
func fxIDs(ids []int64) []int64 {
	if ids == nil {
		return []int64{}
	}
	return ids
}

// The ids of the default groups in a new database: migration 00008
// makes them before any other group.
const (
	adminGroupID int64 = 1
	basicGroupID int64 = 2
	// firstGroupID is the id of the first group a test makes.
	firstGroupID int64 = 3
)

// defaultGroupIDs are the ids of the default groups by name.
var defaultGroupIDs = map[string]int64{quarry.DefaultGroupAdmin: adminGroupID, quarry.DefaultGroupBasic: basicGroupID}

// fxLater is testNow plus n microseconds, as responses render it: with the
// clock fixed, each change of an object moves its time_updated on by one
// microsecond.
func fxLater(n int) string {
	return quarry.Time{Time: testNow.Add(time.Duration(n) * time.Microsecond)}.String()
}

// fxConnectorJSON is the expected ConnectorSnapshot of a fixture connector
// (config fxWeb, no frequencies) never changed since its creation.
func fxConnectorJSON(id int64, name, source string, credentialIDs ...int64) string {
	return fmt.Sprintf(`{"name":%q,"source":%q,"input_type":"poll","connector_specific_config":%s,
		"refresh_freq":null,"prune_freq":null,"indexing_start":null,"id":%d,"credential_ids":%s,
		"time_created":%q,"time_updated":%q}`,
		name, source, fxWeb, id, fxJSON(fxIDs(credentialIDs)), testNowJSON, testNowJSON)
}

// fxShared returns the JSON of a connector as the connector routes answer
// it: snapshot (a ConnectorSnapshot, see fxConnectorJSON) with how the
// connector is shared.
func fxShared(snapshot string, access quarry.AccessType, groups ...int64) string {
	return strings.TrimSuffix(strings.TrimSpace(snapshot), "}") +
		fmt.Sprintf(`,"access_type":%q,"groups":%s}`, access, fxJSON(fxIDs(groups)))
}

// fxCred describes the expected CredentialSnapshot of a credential.
type fxCred struct {
	id            int64
	owner         user
	source        string
	masked        string // credential_json as responses show it
	name          any    // nil or a string
	adminPublic   bool
	curatorPublic bool
	groups        []int64
}

// String renders the snapshot of a credential never changed since its
// creation.
func (k fxCred) String() string {
	return fxJSON(map[string]any{
		"credential_json": json.RawMessage(k.masked), "admin_public": k.adminPublic, "source": k.source,
		"name": k.name, "curator_public": k.curatorPublic, "groups": fxIDs(k.groups), "id": k.id,
		"user_id": k.owner.id, "user_email": k.owner.email, "time_created": testNowJSON, "time_updated": testNowJSON,
	})
}

// fxAudit is one entry of the audit log: onyxtest's, which the replay of
// Onyx's managers reads too.
type fxAudit = onyxtest.AuditEntry

// fxLoopback is the source_ip of the audit entries of the tests' requests.
const fxLoopback = "127.0.0.1"

// audit returns the audit log entries that query (e.g.
// "resource_type=connector") selects.
func (f fx) audit(query string) []fxAudit {
	f.t.Helper()
	var out []fxAudit
	f.do(f.admin, "GET", "/admin/audit-log?"+query, nil).decode(f.t, &out)
	return out
}

// fxCount returns how many of entries are of action.
func fxCount(entries []fxAudit, action string) int {
	n := 0
	for _, a := range entries {
		if a.Action == action {
			n++
		}
	}
	return n
}

// fxGolden is one request of api/testdata/goldens/requests_<model>.json
// with FastAPI's answer to it.
type fxGolden struct {
	Name        string            `json:"name"`
	Method      string            `json:"method"`
	Path        string            `json:"path"`
	PathParams  map[string]string `json:"path_params"`
	Query       string            `json:"query"`
	ContentType *string           `json:"content_type"`
	Body        *string           `json:"body"`
	BodyBase64  string            `json:"body_base64"` // The body, when it is long or not UTF-8.
	Status      int               `json:"status"`
	Response    json.RawMessage   `json:"response"`
}

// fxGoldens returns the cases of a golden file that FastAPI answers with
// 422, each with its path filled in from its path parameters.
func fxGoldens(t *testing.T, model string) []fxGolden {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "goldens", "requests_"+model+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var all, out []fxGolden
	if err := json.Unmarshal(data, &all); err != nil {
		t.Fatal(err)
	}
	for _, c := range all {
		if c.Status != 422 {
			continue
		}
		if c.Body == nil && c.BodyBase64 != "" {
			b, err := base64.StdEncoding.DecodeString(c.BodyBase64)
			if err != nil {
				t.Fatal(err)
			}
			body := string(b)
			c.Body = &body
		}
		for k, v := range c.PathParams {
			c.Path = strings.ReplaceAll(c.Path, "{"+k+"}", v)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		t.Fatalf("no 422 cases for %s", model)
	}
	return out
}

// replay sends golden case c as u to method path (path defaults to the
// golden's own) and asserts FastAPI's answer.
func (f fx) replay(t *testing.T, u user, method, path string, c fxGolden) {
	t.Helper()
	if path == "" {
		path = c.Path
	}
	if c.Query != "" {
		path += "?" + c.Query
	}
	var body any
	var headers []string
	if c.Body != nil && (*c.Body != "" || method != "GET") {
		body = *c.Body
	}
	if c.ContentType != nil {
		headers = []string{"Content-Type", *c.ContentType}
	}
	f.do(u, method, path, body, headers...).want(t, c.Status, string(c.Response))
}

// fxIntParsing is the 422 entry of a path parameter that is not an integer.
func fxIntParsing(name, input string) string {
	return fmt.Sprintf(`{"type":"int_parsing","loc":["path",%q],"msg":"Input should be a valid integer, unable to parse string as an integer","input":%q}`,
		name, input)
}

// The 403 bodies of the role gates (api/handler.go).
const (
	fxNotCurator = `{"detail":"Access denied. User is not a curator or admin."}`
	fxNotAdmin   = `{"detail":"Access denied. User is not an admin."}`
	fxLimited    = `{"detail":"Access denied. User has limited permissions."}`
	fxNotAuthed  = `{"detail":"Not authenticated"}`
)

// fxMissingBody is the 422 of a required body that is absent.
const fxMissingBody = `{"detail":[{"type":"missing","loc":["body"],"msg":"Field required","input":null}]}`

// fxCast is the cast of the sharing tests: an admin, curators and plain
// users around three groups.
type fxCast struct {
	fx
	curator user // curator of gA, plain member of gB
	other   user // curator of gB
	global  user // global_curator, member of gB
	basic   user
	limited user
	gA      int64
	gB      int64
	gC      int64 // no member of the cast
}

func newFxCast(t *testing.T) *fxCast {
	t.Helper()
	e := newEnv(t)
	c := &fxCast{fx: fx{e}}
	c.curator = e.user(quarry.RoleCurator, "curator")
	c.other = e.user(quarry.RoleCurator, "other")
	c.global = e.user(quarry.RoleGlobalCurator, "global")
	c.basic = e.user(quarry.RoleBasic, "basic")
	c.limited = e.user(quarry.RoleLimited, "limited")
	c.gA = c.group("A", []user{c.curator}, c.curator)
	c.gB = c.group("B", []user{c.curator, c.other, c.global}, c.other)
	c.gC = c.group("C", nil)
	return c
}
