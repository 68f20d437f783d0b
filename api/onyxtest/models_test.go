package onyxtest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// unmirrored lists the models of the table that have no mirror, and why.
var unmirrored = map[string]string{
	"ConnectorBase":                   "a base class; its fields are checked in ConnectorSnapshot and ConnectorUpdateRequest",
	"CredentialBase":                  "CredentialManager.create sends a dict of its own; the answer of PUT /manage/admin/credential, which Onyx filters to CredentialBase, is not read",
	"CredentialDataUpdateRequest":     "CredentialManager.edit sends DATestCredential's name and credential_json",
	"ConnectorIndexingStatus":         "indexing-status answers ConnectorIndexingStatusLite in v4.6.1; no manager reads this model",
	"IndexAttemptSnapshot":            answers,
	"IndexAttemptErrorPydantic":       answers,
	"IngestionResult":                 answers,
	"FileUploadResponse":              answers,
	"ConnectorFilesResponse":          answers,
	"ConnectorFileInfo":               answers,
	"DocMinimalInfo":                  answers,
	"IndexedSourcesResponse":          answers,
	"SendSearchQueryRequest":          requests,
	"BaseFilters":                     requests,
	"TimeRange":                       requests,
	"Tag":                             requests,
	"SearchFullResponse":              answers,
	"SearchDocWithContent":            answers,
	"SearchRequest":                   requests,
	"ChatMinimalTextMessage":          requests,
	"SearchResponse":                  answers,
	"SearchResult":                    answers,
	"IndexingStatusRequest":           `the managers send {"get_all_connectors": true}`,
	"ConnectorCredentialPairMetadata": "CCPairManager sends a dict {name, access_type, groups}",
	"CCStatusUpdateRequest":           `pause_cc_pair and unpause_cc_pair send {"status": ...}`,
	"RunConnectorRequest":             "run_once sends a dict",
	"DocumentSyncStatus":              "get_doc_sync_statuses reads its fields by key (and Quarry answers the route 501)",
	"UserRoleUpdateRequest":           "set_role sends a dict",
	"UserByEmail":                     "set_status sends a dict",
	"UserGroupCreate":                 "UserGroupManager.create sends a dict",
	"UserGroupUpdate":                 "UserGroupManager.edit sends DATestUserGroup; the tests send a dict",
	"AddUsersToUserGroupRequest":      "add_users sends a dict",
	"SetCuratorRequest":               "set_curator_status sends a dict",
	"SetPermissionRequest":            "set_permission sends a dict",
	"CustomToolCreate":                "v4.6.1's ToolManager creates no tool",
	"CustomToolUpdate":                "v4.6.1's ToolManager changes no tool",
	"DATestUser":                      "built by the manager in memory, never sent or parsed",
	"DATestCCPair":                    "built by the manager in memory, never sent or parsed",
	"DATestTool":                      "built by the manager from fields it reads by key",
	"SimpleTestDocument":              "only in DATestCCPair",
	"CreateTokenRequest":              "PATManager.create_response sends a dict; " + requests,
	"TokenResponse":                   "PATManager parses DATestPAT; " + answers,
	"CreatedTokenResponse":            "PATManager parses DATestPAT; " + answers,
	"MCPServer":                       answers,
	"MCPServersResponse":              answers,
	"MCPServerCreateResponse":         answers,
	"MCPServerUpdateResponse":         answers,
	"MCPApiKeyResponse":               answers,
	"MCPUserOAuthConnectResponse":     answers,
	"MCPOAuthCallbackResponse":        answers,
	"ServerToolsResponse":             answers,
	"MCPToolDescription":              "only in ServerToolsResponse",
	"MCPToolCreateRequest":            requests,
	"MCPToolUpdateRequest":            requests,
	"MCPServerSimpleCreateRequest":    requests,
	"MCPServerSimpleUpdateRequest":    requests,
	"MCPUserCredentialsRequest":       requests,
	"MCPUserOAuthConnectRequest":      requests,
	"MCPAuthTemplate":                 requests + ", and answers hold it (CheckAnswer)",
	"TestLLMRequest":                  requests,
	"DocumentSetCreationRequest":      "DocumentSetManager.create sends a dict; " + requests,
	"DocumentSetUpdateRequest":        "DocumentSetManager.edit sends a dict; " + requests,
	"FederatedConnectorConfig":        requests,
	"CheckDocSetPublicRequest":        requests,
	"CheckDocSetPublicResponse":       answers,
	"DocumentSetSummary":              "DocumentSetManager.get_all reads its fields by key; " + answers,
	"CCPairSummary":                   "only in DocumentSetSummary",
	"FederatedConnectorSummary":       "only in DocumentSetSummary, where Quarry answers none",
}

// The reasons of unmirrored for the models of MCP servers and personal
// access tokens, which Onyx's managers neither send nor parse (but
// DATestPAT).
const (
	answers  = "no manager parses it: api's tests check every answer of its routes against the table (CheckAnswer, api/onyx_answers_test.go)"
	requests = "no manager sends it: api's TestRequestModelsMatchOnyx holds Quarry's request model to the table"
)

// TestMirrorsMatchOnyx checks every mirror against the table of Onyx's
// models: the same fields in the same order, required where Onyx requires
// them, and of the same types; and that every model of the table is
// mirrored or listed in unmirrored with a reason.
func TestMirrorsMatchOnyx(t *testing.T) {
	tb := table()
	if tb.Onyx != "v4.6.1" {
		t.Errorf("the table is of Onyx %s, want v4.6.1", tb.Onyx)
	}
	mirrored := map[string]bool{}
	for typ, ref := range mirrors {
		mirrored[ref.Model] = true
		t.Run(ref.Model, func(t *testing.T) {
			for _, err := range compareMirror(typ, ref) {
				t.Error(err)
			}
		})
	}
	for name := range tb.Models {
		if _, ok := unmirrored[name]; ok == mirrored[name] {
			t.Errorf("model %s: mirrored %t, listed in unmirrored %t; want exactly one", name, mirrored[name], ok)
		}
	}
	for name := range unmirrored {
		if _, ok := tb.Models[name]; !ok {
			t.Errorf("unmirrored lists %s, which the table does not have", name)
		}
	}
}

// Quarry's extensions of Onyx's answer models are of models the table
// has, and are not fields of theirs.
func TestExtensions(t *testing.T) {
	for model, fields := range Extensions {
		m, ok := table().Models[model]
		if !ok {
			t.Errorf("Extensions lists %s, which the table does not have", model)
			continue
		}
		for _, f := range m.Fields {
			if slices.Contains(fields, f.Name) {
				t.Errorf("Extensions lists %s.%s, which is Onyx's", model, f.Name)
			}
		}
	}
	if err := CheckAnswer([]byte(`{"file_paths":[],"file_names":[],"zip_metadata_file_id":null,"unread_files":[],"other":1}`), "FileUploadResponse", false); err == nil ||
		!strings.Contains(err.Error(), "other not in Onyx's FileUploadResponse") || strings.Contains(err.Error(), "unread_files") {
		t.Errorf("an answer with an extension and another field: %v, want only the other refused", err)
	}
}

// compareMirror returns how the mirror typ differs from the model ref
// names.
func compareMirror(typ reflect.Type, ref onyxRef) []error {
	m, ok := table().Models[ref.Model]
	if !ok {
		return []error{fmt.Errorf("%v mirrors %s, which the table does not have", typ, ref.Model)}
	}
	var errs []error
	var goNames, onyxNames []string
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		goNames = append(goNames, name)
	}
	for _, f := range m.Fields {
		onyxNames = append(onyxNames, f.Name)
	}
	if !slices.Equal(goNames, onyxNames) {
		errs = append(errs, fmt.Errorf("%v has fields %v; Onyx's %s (%s) has %v", typ, goNames, ref.Model, m.File, onyxNames))
	}
	for _, f := range m.Fields {
		sf, ok := fieldByTag(typ, f.Name)
		if !ok {
			continue
		}
		if hasDefault := sf.Tag.Get("onyx") == onyxDefault; hasDefault == f.Required {
			errs = append(errs, fmt.Errorf("%v.%s: tagged default %t, but Onyx's field is required %t (%s)", typ, sf.Name, hasDefault, f.Required, f.Type))
		}
		got, err := goType(sf.Type)
		if err != nil {
			errs = append(errs, fmt.Errorf("%v.%s: %v", typ, sf.Name, err))
			continue
		}
		if want := f.Tree.subst(ref.Args); got.String() != want.String() {
			errs = append(errs, fmt.Errorf("%v.%s is %s; Onyx's %s.%s is %s (%s)", typ, sf.Name, got, ref.Model, f.Name, want, f.Type))
		}
	}
	return errs
}

// fieldByTag returns the field of struct typ whose JSON name is name.
func fieldByTag(typ reflect.Type, name string) (reflect.StructField, bool) {
	for i := range typ.NumField() {
		if n, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ","); n == name {
			return typ.Field(i), true
		}
	}
	return reflect.StructField{}, false
}

// goType returns the annotation a Go type of a mirror stands for.
func goType(typ reflect.Type) (onyxType, error) {
	if typ.Kind() == reflect.Pointer {
		e, err := goType(typ.Elem())
		return onyxType{Union: []onyxType{e, {Name: "None"}}}, err
	}
	if u, ok := reflect.Zero(typ).Interface().(interface{ onyxUnion() []reflect.Type }); ok {
		var out onyxType
		for _, m := range u.onyxUnion() {
			e, err := goType(m)
			if err != nil {
				return out, err
			}
			out.Union = append(out.Union, e)
		}
		return out, nil
	}
	if n, ok := reflect.Zero(typ).Interface().(interface{ onyxName() string }); ok {
		name := n.onyxName()
		if _, ok := table().Enums[name]; ok {
			if _, isEnum := reflect.Zero(typ).Interface().(interface{ EnumValues() []string }); !isEnum || typ.Kind() != reflect.String {
				return onyxType{}, fmt.Errorf("%v names enumeration %s but is not a string with EnumValues", typ, name)
			}
		}
		return onyxType{Name: name}, nil
	}
	switch typ.Kind() {
	case reflect.Struct:
		if ref, ok := mirrors[typ]; ok {
			return onyxType{Name: ref.Model}, nil
		}
		return onyxType{}, fmt.Errorf("%v is not a mirror", typ)
	case reflect.Slice:
		e, err := goType(typ.Elem())
		return onyxType{List: &e}, err
	case reflect.Map:
		k, err := goType(typ.Key())
		if err != nil {
			return onyxType{}, err
		}
		v, err := goType(typ.Elem())
		return onyxType{Dict: []onyxType{k, v}}, err
	case reflect.String:
		return onyxType{Name: "str"}, nil
	case reflect.Int64:
		return onyxType{Name: "int"}, nil
	case reflect.Bool:
		return onyxType{Name: "bool"}, nil
	case reflect.Float64:
		return onyxType{Name: "float"}, nil
	case reflect.Interface:
		return onyxType{Name: "Any"}, nil
	}
	return onyxType{}, fmt.Errorf("no Onyx type for %v", typ)
}

// TestMirrorCheckFindsMissingFields shows that a mirror lacking a field
// Onyx requires is caught, and that answers lacking one are refused by the
// table check as by the mirror check.
func TestMirrorCheckFindsMissingFields(t *testing.T) {
	// A UserGroup mirror without incognito_enabled, as the mirror was.
	type staleUserGroup struct {
		ID              int64                 `json:"id"`
		Name            string                `json:"name"`
		Users           []onyxUserInfo        `json:"users"`
		CuratorIDs      []onyxUUID            `json:"curator_ids"`
		CCPairs         []onyxPairDescriptor  `json:"cc_pairs"`
		DocumentSets    []onyxDocumentSet     `json:"document_sets"`
		Personas        []onyxPersonaSnapshot `json:"personas"`
		IsUpToDate      bool                  `json:"is_up_to_date"`
		IsUpForDeletion bool                  `json:"is_up_for_deletion"`
		IsDefault       bool                  `json:"is_default"`
	}
	if errs := compareMirror(reflect.TypeFor[staleUserGroup](), onyxRef{Model: "UserGroup"}); len(errs) == 0 {
		t.Error("a UserGroup mirror without incognito_enabled passes")
	}
	// A field made optional, and a field of the wrong type.
	type looseStatus struct {
		Success bool    `json:"success" onyx:"default"`
		Message *string `json:"message" onyx:"default"`
		Data    *string `json:"data" onyx:"default"`
	}
	if errs := compareMirror(reflect.TypeFor[looseStatus](), onyxRef{Model: "StatusResponse", Args: map[string]onyxType{"DataT": {Name: "int"}}}); len(errs) != 2 {
		t.Errorf("a loose StatusResponse mirror: %v, want 2 differences", errs)
	}

	group := `{"id":1,"name":"g","users":[],"curator_ids":[],"cc_pairs":[],"document_sets":[],"personas":[],
		"is_up_to_date":true,"is_up_for_deletion":false,"is_default":false,"incognito_enabled":false}`
	for _, tt := range []struct {
		name, body string
		ok         bool
	}{
		{"whole", group, true},
		{"without incognito_enabled", strings.Replace(group, `,"incognito_enabled":false`, "", 1), false},
		{"a null name", strings.Replace(group, `"name":"g"`, `"name":null`, 1), false},
		{"a member without preferences", strings.Replace(group, `"users":[]`,
			`"users":[{"id":"u","email":"e","is_active":true,"is_superuser":false,"is_verified":false,"role":"basic"}]`, 1), false},
		{"a member with a role Onyx does not have", strings.Replace(group, `"users":[]`,
			`"users":[{"id":"u","email":"e","is_active":true,"is_superuser":false,"is_verified":false,"role":"owner","preferences":{}}]`, 1), false},
		{"a curator id that is not a UUID", strings.Replace(group, `"curator_ids":[]`, `"curator_ids":["x"]`, 1), false},
		{"extra fields", strings.Replace(group, `"id":1`, `"id":1,"cc_pair_ids":[]`, 1), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			errMirror := onyxCheck("body", json.RawMessage(tt.body), reflect.TypeFor[onyxUserGroup]())
			errTable := checkTable("body", json.RawMessage(tt.body), onyxType{Name: "UserGroup"}, nil)
			if (errMirror == nil) != tt.ok || (errTable == nil) != tt.ok {
				t.Errorf("mirror check: %v; table check: %v; want ok %t", errMirror, errTable, tt.ok)
			}
		})
	}
}

// TestExtensionsAreQuarrys checks Quarry's extensions of Onyx's answer
// models: each of a model of the table, none a field Onyx's model has.
func TestExtensionsAreQuarrys(t *testing.T) {
	for model, names := range Extensions {
		fields, ok := Fields(model)
		if !ok {
			t.Errorf("the table of Onyx's models has no %s", model)
			continue
		}
		for _, n := range names {
			if slices.ContainsFunc(fields, func(f Field) bool { return f.Name == n }) {
				t.Errorf("%s.%s is Onyx's own field, not an extension", model, n)
			}
		}
	}
}
