package api

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"iter"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api/decode"
)

// goldenCase is one request of api/testdata/goldens/requests_*.json, written
// by scripts/pydantic_goldens.py with FastAPI's answer to it.
type goldenCase struct {
	Name        string            `json:"name"`
	Model       string            `json:"model"`
	Method      string            `json:"method"`
	Path        string            `json:"path"`
	PathParams  map[string]string `json:"path_params"`
	Query       string            `json:"query"`
	ContentType *string           `json:"content_type"`
	Body        *string           `json:"body"`
	BodyBase64  string            `json:"body_base64"`
	Status      int               `json:"status"`
	Response    any               `json:"response"`
	Decoded     map[string]any    `json:"decoded"`
}

// goldenTargets makes, for each model, the destination decode.Request fills:
// the endpoint's path parameters, query and body.
var goldenTargets = map[string]func() any{
	"credentialPatch":          func() any { return &updateCredentialRequest{} },
	"credentialCreate":         func() any { return &createCredentialRequest{} },
	"toolUpdate":               func() any { return &updateToolRequest{} },
	"toolCreate":               func() any { return &createToolRequest{} },
	"toolValidate":             func() any { return &validateToolRequest{} },
	"connectorInput":           func() any { return &updateConnectorRequest{} },
	"ccPairCreate":             func() any { return &createCCPairRequest{} },
	"userGroupCreate":          func() any { return &createGroupRequest{} },
	"userGroupUpdate":          func() any { return &updateGroupRequest{} },
	"documentSetCreate":        func() any { return &createDocumentSetRequest{} },
	"documentSetUpdate":        func() any { return &updateDocumentSetRequest{} },
	"documentSetDelete":        func() any { return &deleteDocumentSetRequest{} },
	"documentSetsQuery":        func() any { return &documentSetsQuery{} },
	"documentSetPublic":        func() any { return &documentSetPublicRequest{} },
	"setCurator":               func() any { return &setCuratorRequest{} },
	"apiKeyCreate":             func() any { return &createAPIKeyRequest{} },
	"oauthConfigCreate":        func() any { return &createOAuthConfigRequest{} },
	"statusQuery":              func() any { return &statusQuery{} },
	"auditQuery":               func() any { return &auditQuery{} },
	"register":                 func() any { return &registerRoute{} },
	"login":                    func() any { return &loginForm{} },
	"setUserRole":              func() any { return &setUserRoleRequest{} },
	"userEmail":                func() any { return &setActiveRequest{} },
	"inviteUsers":              func() any { return &inviteUsersRequest{} },
	"changePassword":           func() any { return &changePasswordRequest{} },
	"usersQuery":               func() any { return &usersQuery{} },
	"sessionsQuery":            func() any { return &sessionsQuery{} },
	"toolStatusUpdate":         func() any { return &setToolsEnabledRequest{} },
	"credentialDataUpdate":     func() any { return &editCredentialRequest{} },
	"ccPairStatusUpdate":       func() any { return &setCCPairStatusRequest{} },
	"ccPairRename":             func() any { return &ccPairRename{} },
	"ccPairIdentifier":         func() any { return &deletionAttemptRequest{} },
	"scimTokenCreate":          func() any { return &createSCIMTokenRequest{} },
	"addUsers":                 func() any { return &addGroupUsersRequest{} },
	"setPermission":            func() any { return &setGroupPermissionRequest{} },
	"indexingStatus":           func() any { return &indexingStatusRoute{} },
	"groupsQuery":              func() any { return &groupsQuery{} },
	"uploadFilesQuery":         func() any { return &uploadConnectorFilesRequest{} },
	"connectorsQuery":          func() any { return &connectorsQuery{} },
	"allUsersQuery":            func() any { return &allUsersQuery{} },
	"oauthConfigUpdate":        func() any { return &updateOAuthConfigRequest{} },
	"oauthInitiate":            func() any { return &oauthInitiateRequest{} },
	"oauthCallbackQuery":       func() any { return &oauthCallbackQuery{} },
	"toolRun":                  func() any { return &runToolRequest{} },
	"patCreate":                func() any { return &createPATRequest{} },
	"llmProviderUpsert":        func() any { return &putLLMProviderRequest{} },
	"llmProvidersQuery":        func() any { return &llmProvidersQuery{} },
	"llmProviderDelete":        func() any { return &deleteLLMProviderRequest{} },
	"defaultModel":             func() any { return &setDefaultModelRequest{} },
	"testLLM":                  func() any { return &testLLMRequest{} },
	"chatSessionCreate":        func() any { return &createChatSessionRequest{} },
	"sendMessage":              func() any { return &sendMessageRequest{} },
	"chatSessionsQuery":        func() any { return &chatSessionsQuery{} },
	"getChatSession":           func() any { return &getChatSessionRequest{} },
	"chatRename":               func() any { return &renameChatSessionRequest{} },
	"chatSessionUpdate":        func() any { return &patchChatSessionRequest{} },
	"deleteChatSession":        func() any { return &deleteChatSessionRequest{} },
	"stopChatSession":          func() any { return &stopChatSessionRequest{} },
	"chatFeedback":             func() any { return &createChatFeedbackRequest{} },
	"removeChatFeedback":       func() any { return &removeChatFeedbackRequest{} },
	"defaultAssistantUpdate":   func() any { return &updateDefaultAssistantRequest{} },
	"personaCreate":            func() any { return &createPersonaRequest{} },
	"personaUpdate":            func() any { return &updatePersonaRequest{} },
	"personaGet":               func() any { return &personaRequest{} },
	"personasQuery":            func() any { return &personasQuery{} },
	"adminPersonasQuery":       func() any { return &adminPersonasQuery{} },
	"agentsQuery":              func() any { return &agentsQuery{} },
	"adminAgentsQuery":         func() any { return &agentsQuery{} },
	"personaListed":            func() any { return &personaListedRequest{} },
	"personaFeatured":          func() any { return &personaFeaturedRequest{} },
	"personaPublic":            func() any { return &personaPublicRequest{} },
	"displayPriorities":        func() any { return &displayPrioritiesRequest{} },
	"personaLabelCreate":       func() any { return &personaLabelCreateRequest{} },
	"personaLabelPatch":        func() any { return &personaLabelPatchRequest{} },
	"personaLabelDelete":       func() any { return &personaLabelRequest{} },
	"personaShare":             func() any { return &sharePersonaRequest{} },
	"personaTransfer":          func() any { return &transferPersonaRequest{} },
	"mcpServerSetup":           func() any { return &setUpMCPServerRequest{} },
	"mcpServerUpdate":          func() any { return &selectMCPToolsRequest{} },
	"mcpServerCreate":          func() any { return &createMCPServerSimpleRequest{} },
	"mcpServerPatch":           func() any { return &updateMCPServerSimpleRequest{} },
	"mcpOAuthConnect":          func() any { return &mcpOAuthConnectRequest{} },
	"mcpOAuthCallbackQuery":    func() any { return &mcpOAuthCallbackQuery{} },
	"mcpUserCredentials":       func() any { return &saveMCPCredentialsRequest{} },
	"mcpStatusQuery":           func() any { return &mcpStatusQuery{} },
	"mcpSnapshotsQuery":        func() any { return &mcpSnapshotsQuery{} },
	"runConnectorRequest":      func() any { return &runOnceRequest{} },
	"ingestionDocument":        func() any { return &ingestRequest{} },
	"sendSearchQuery":          func() any { return &sendSearchMessageRequest{} },
	"searchRequest":            func() any { return &searchRoute{} },
	"updateFiles":              func() any { return &updateConnectorFilesRequest{} },
	"indexAttemptsQuery":       func() any { return &indexAttemptsQuery{} },
	"pairDocumentsQuery":       func() any { return &pairDocumentsQuery{} },
	"attemptErrorsQuery":       func() any { return &attemptErrorsQuery{} },
	"workerRegistration":       func() any { return &registerWorkerRequest{} },
	"workerRegistrationCreate": func() any { return &createWorkerRegistrationRequest{} },
	"heartbeat":                func() any { return &heartbeatRequest{} },
	"attemptFinish":            func() any { return &finishAttemptRequest{} },
	"progressReport":           func() any { return &progressRequest{} },
	"attemptCredentialUpdate":  func() any { return &updateAttemptCredentialRequest{} },
}

func loadGoldenCases(t testing.TB) []goldenCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "goldens", "requests_*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	var all []goldenCase
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var cases []goldenCase
		if err := json.Unmarshal(data, &cases); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		all = append(all, cases...)
	}
	return all
}

// body returns the raw body of a golden case.
func (c *goldenCase) body(t testing.TB) []byte {
	t.Helper()
	if c.Body != nil {
		return []byte(*c.Body)
	}
	body, err := base64.StdEncoding.DecodeString(c.BodyBase64)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// request builds the httptest request of a golden case.
func (c *goldenCase) request(t *testing.T) *http.Request {
	t.Helper()
	body := c.body(t)
	target := c.Path
	for k := range c.PathParams {
		target = strings.ReplaceAll(target, "{"+k+"}", "x")
	}
	if c.Query != "" {
		target += "?" + c.Query
	}
	req := httptest.NewRequest(c.Method, target, strings.NewReader(string(body)))
	if c.ContentType != nil {
		req.Header.Set("Content-Type", *c.ContentType)
	}
	for k, v := range c.PathParams {
		req.SetPathValue(k, v)
	}
	return req
}

func TestGoldenRequests(t *testing.T) {
	cases := loadGoldenCases(t)
	if len(cases) < 150 {
		t.Fatalf("only %d golden cases", len(cases))
	}
	for _, c := range cases {
		if c.Model == "uploadFiles" {
			continue // The upload's multipart files are api/file.go's: TestUploadMissingFiles replays them.
		}
		t.Run(c.Model+"/"+c.Name, func(t *testing.T) {
			newDst, ok := goldenTargets[c.Model]
			if !ok {
				t.Fatalf("unknown model %q", c.Model)
			}
			dst := newDst()
			err := decode.Request(c.request(t), dst)
			status, got := answer(t, err)
			if status != c.Status {
				t.Fatalf("status %d, want %d (got %s)", status, c.Status, mustJSON(got))
			}
			if diff := cmp.Diff(normalize(t, c.Response), normalize(t, got)); diff != "" {
				t.Fatalf("response mismatch (-want +got):\n%s", diff)
			}
			if c.Status == 200 {
				checkDecoded(t, c.Decoded, dst)
			}
		})
	}
}

// answer renders the outcome of decode.Request as the service would.
func answer(t *testing.T, err error) (int, any) {
	t.Helper()
	var errs decode.Errors
	var qe *quarry.Error
	switch {
	case err == nil:
		return 200, map[string]any{"ok": true}
	case errors.As(err, &errs):
		return 422, map[string]any{"detail": errs}
	case errors.As(err, &qe) && qe.Code == quarry.EINVALID:
		return 400, map[string]any{"detail": qe.Message}
	}
	t.Fatalf("unexpected error %T: %v", err, err)
	return 0, nil
}

// normalize turns v into plain JSON values (numbers as float64).
func normalize(t *testing.T, v any) any {
	t.Helper()
	var out any
	if err := json.Unmarshal([]byte(mustJSON(v)), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// checkDecoded compares the values decode.Request stored with pydantic's.
func checkDecoded(t *testing.T, want map[string]any, dst any) {
	t.Helper()
	v := reflect.ValueOf(dst).Elem()
	got := map[string]any{}
	for i := 0; i < v.NumField(); i++ {
		sf := v.Type().Field(i)
		switch {
		case sf.Tag.Get("path") != "" && sf.Type == reflect.TypeFor[uuid.UUID]():
			got[sf.Tag.Get("path")] = v.Field(i).Interface().(uuid.UUID).String()
		case sf.Tag.Get("path") != "":
			got[sf.Tag.Get("path")] = v.Field(i).Int()
		case sf.Tag.Get("body") == "" && hasTag(sf, "body"):
			got["body"] = modelValue(v.Field(i))
		}
	}
	if slices.ContainsFunc(slices.Collect(fields(v.Type())), func(sf reflect.StructField) bool {
		return hasTag(sf, "query")
	}) {
		got["query"] = modelValue(v)
	}
	if v.Type().NumField() > 0 && hasTag(v.Type().Field(0), "form") {
		got["form"] = modelValue(v)
	}
	if diff := cmp.Diff(normalize(t, want), normalize(t, got)); diff != "" {
		t.Fatalf("decoded values mismatch (-pydantic +go):\n%s", diff)
	}
}

// fields yields the fields of struct type t.
func fields(t reflect.Type) iter.Seq[reflect.StructField] {
	return func(yield func(reflect.StructField) bool) {
		for i := 0; i < t.NumField(); i++ {
			if !yield(t.Field(i)) {
				return
			}
		}
	}
}

func hasTag(sf reflect.StructField, key string) bool {
	_, ok := sf.Tag.Lookup(key)
	return ok
}

// modelValue renders a decoded model as scripts/pydantic_goldens.py dumps
// the pydantic model: its values, and which Optional fields were sent
// (sorted, as Go declares them in the Python field order). Path parameters
// and the body beside query parameters are not part of the query model.
func modelValue(v reflect.Value) map[string]any {
	values := map[string]any{}
	set := []string{}
	for i := 0; i < v.NumField(); i++ {
		sf := v.Type().Field(i)
		if hasTag(sf, "path") || hasTag(sf, "body") {
			continue
		}
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "" {
			name = sf.Tag.Get("query")
		}
		if name == "" {
			name = sf.Tag.Get("form")
		}
		f := v.Field(i)
		if strings.HasPrefix(f.Type().Name(), "Optional[") {
			if f.Field(0).Bool() {
				set = append(set, name)
			}
			if !f.Field(0).Bool() || f.Field(1).Bool() {
				values[name] = nil
				continue
			}
			f = f.Field(2)
		}
		values[name] = plainValue(f)
		if hasTag(sf, "set") { // pydantic's sets are dumped sorted
			slices.SortFunc(values[name].([]any), func(a, b any) int { return strings.Compare(a.(string), b.(string)) })
		}
	}
	return map[string]any{"values": values, "fields_set": set}
}

func plainValue(f reflect.Value) any {
	switch x := f.Interface().(type) {
	case json.RawMessage:
		var m any
		if err := json.Unmarshal(x, &m); err != nil {
			return "invalid raw: " + string(x)
		}
		return m
	case time.Time:
		return x.UTC().Format("2006-01-02T15:04:05.000000Z")
	case uuid.UUID:
		return x.String()
	}
	switch f.Kind() {
	case reflect.Slice:
		s := []any{}
		for i := 0; i < f.Len(); i++ {
			s = append(s, plainValue(f.Index(i)))
		}
		return s
	case reflect.Struct:
		return modelValue(f)
	case reflect.String:
		return f.String()
	case reflect.Bool:
		return f.Bool()
	case reflect.Int64:
		return f.Int()
	}
	return f.Interface()
}

// FuzzRequest feeds arbitrary bodies, query strings, path values and
// content types to the request models: decode.Request must not panic and
// must answer nil, well-formed Errors, or a *quarry.Error. Each input names
// its model (an index into the sorted names, taken modulo their number), so
// that one execution decodes once; the first golden case of each model
// seeds it (all of them would take the fuzzing time to replay).
func FuzzRequest(f *testing.F) {
	models := make([]string, 0, len(goldenTargets))
	for m := range goldenTargets {
		models = append(models, m)
	}
	sort.Strings(models)
	seeded := make(map[string]bool)
	for _, c := range loadGoldenCases(f) {
		i := slices.Index(models, c.Model)
		if i < 0 || seeded[c.Model] {
			continue
		}
		seeded[c.Model] = true
		ct := ""
		if c.ContentType != nil {
			ct = *c.ContentType
		}
		f.Add(uint16(i), c.body(f), c.Query, "7", ct)
	}
	f.Fuzz(func(t *testing.T, model uint16, body []byte, query, pathValue, contentType string) {
		m := models[int(model)%len(models)]
		req := httptest.NewRequest("POST", "/", bytes.NewReader(body))
		req.URL.RawQuery = query
		for _, p := range []string{"tool_id", "credential_id", "connector_id", "group_id", "cc_pair_id"} {
			req.SetPathValue(p, pathValue)
		}
		req.Header.Set("Content-Type", contentType)
		checkOutcome(t, m, decode.Request(req, goldenTargets[m]()))
	})
}

// checkOutcome fails unless err is nil, well-formed Errors, or a
// *quarry.Error for an undecodable body.
func checkOutcome(t *testing.T, model string, err error) {
	var errs decode.Errors
	var qe *quarry.Error
	switch {
	case err == nil:
	case errors.As(err, &errs):
		if len(errs) == 0 {
			t.Fatalf("%s: empty Errors", model)
		}
		for _, e := range errs {
			if len(e.Loc) == 0 {
				t.Fatalf("%s: no loc in %+v", model, e)
			}
			l, _ := e.Loc[0].(string)
			if e.Type == "" || e.Msg == "" || l != "body" && l != "path" && l != "query" {
				t.Fatalf("%s: malformed %+v", model, e)
			}
		}
		if _, err := json.Marshal(map[string]any{"detail": errs}); err != nil {
			t.Fatalf("%s: cannot render %+v: %v", model, errs, err)
		}
	case errors.As(err, &qe) && qe.Code == quarry.EINVALID:
	default:
		t.Fatalf("%s: unexpected error %T %v", model, err, err)
	}
}
