package api

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/quarryhq/quarry/api/onyxtest"
)

// TestRequestModelsMatchOnyx holds the request models of the routes
// Quarry shares with Onyx v4.6.1 but Onyx's managers do not send (MCP
// servers, personal access tokens) to Onyx's models, as the table of
// api/onyxtest has them: the same fields in the same order, each required
// exactly where Onyx requires it. (The answers of these routes are checked
// against Onyx's models in every API test: onyxAnswers, in
// onyx_answers_test.go.)
func TestRequestModelsMatchOnyx(t *testing.T) {
	for _, tt := range []struct {
		onyx  string
		model any
	}{
		{"MCPToolCreateRequest", mcpServerSetup{}},
		{"MCPToolUpdateRequest", mcpServerUpdate{}},
		{"MCPServerSimpleCreateRequest", mcpServerCreate{}},
		{"MCPServerSimpleUpdateRequest", mcpServerPatch{}},
		{"MCPUserCredentialsRequest", mcpUserCredentials{}},
		{"MCPUserOAuthConnectRequest", mcpOAuthConnect{}},
		{"MCPAuthTemplate", mcpAuthTemplate{}},
		{"CreateTokenRequest", patCreate{}},
		{"RunConnectorRequest", runConnectorRequest{}},
		{"LLMProviderUpsertRequest", llmProviderUpsert{}},
		{"ModelConfigurationUpsertRequest", modelConfigurationUpsert{}},
		{"DefaultModel", defaultModelBody{}},
		{"TestLLMRequest", testLLM{}},
		{"DocumentSetCreationRequest", documentSetCreation{}},
		{"DocumentSetUpdateRequest", documentSetUpdate{}},
		{"FederatedConnectorConfig", federatedConnectorConfig{}},
		{"CheckDocSetPublicRequest", checkDocSetPublic{}},
	} {
		t.Run(tt.onyx, func(t *testing.T) {
			want, ok := onyxtest.Fields(tt.onyx)
			if !ok {
				t.Fatalf("the table of Onyx's models has no %s", tt.onyx)
			}
			typ := reflect.TypeOf(tt.model)
			var got []onyxtest.Field
			for i := range typ.NumField() {
				f := typ.Field(i)
				name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
				_, optional := oasOptionalOf(f.Type)
				_, hasDefault := f.Tag.Lookup("default")
				got = append(got, onyxtest.Field{Name: name, Required: !optional && !hasDefault})
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s does not mirror Onyx's %s:\n got %v\nwant %v", typ.Name(), tt.onyx, got, want)
			}
		})
	}
}
