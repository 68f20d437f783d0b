package api_test

import (
	"net/http"
	"strings"
	"sync"

	"github.com/quarryhq/quarry/api/onyxtest"
)

// onyxAnswer is the response model of a route Quarry shares with Onyx
// v4.6.1 but Onyx's managers do not call (their answers are checked by
// the replay of the managers, package onyxtest): a model of the table of
// Onyx's models, or a list of one.
type onyxAnswer struct {
	model string
	list  bool
}

// onyxAnswers are the routes whose 2xx answers every API test checks
// against Onyx's response models (env.do): every field of the model, none
// other, each of its type. The routes left out answer what Onyx's models
// cannot say: the tools an MCP server lists (the MCP SDK's Tool), and the
// scopes a token may have (PatScopeOption's computed field).
var onyxAnswers = map[string]onyxAnswer{
	"GET /admin/mcp/servers":                            {"MCPServersResponse", false},
	"GET /mcp/servers":                                  {"MCPServersResponse", false},
	"GET /admin/mcp/servers/{server_id}":                {"MCPServer", false},
	"POST /admin/mcp/server":                            {"MCPServer", false},
	"PATCH /admin/mcp/server/{server_id}":               {"MCPServer", false},
	"POST /admin/mcp/servers/create":                    {"MCPServerCreateResponse", false},
	"POST /admin/mcp/servers/update":                    {"MCPServerUpdateResponse", false},
	"GET /admin/mcp/server/{server_id}/db-tools":        {"ServerToolsResponse", false},
	"GET /admin/mcp/server/{server_id}/tools/snapshots": {"ToolSnapshot", true},
	"GET /admin/mcp/tools":                              {"ToolSnapshot", true},
	"POST /mcp/user-credentials":                        {"MCPApiKeyResponse", false},
	"DELETE /mcp/user-credentials/{server_id}":          {"MCPApiKeyResponse", false},
	"POST /mcp/oauth/connect":                           {"MCPUserOAuthConnectResponse", false},
	"POST /admin/mcp/oauth/connect":                     {"MCPUserOAuthConnectResponse", false},
	"POST /mcp/oauth/callback":                          {"MCPOAuthCallbackResponse", false},
	"POST /user/pats":                                   {"CreatedTokenResponse", false},
	"GET /user/pats":                                    {"TokenResponse", true},
}

// onyxAnswerRoutes matches a request to its route of onyxAnswers.
var onyxAnswerRoutes = sync.OnceValue(func() *http.ServeMux {
	m := http.NewServeMux()
	for route := range onyxAnswers {
		m.HandleFunc(route, func(http.ResponseWriter, *http.Request) {})
	}
	return m
})

// conformOnyx checks a 2xx answer of a route of onyxAnswers against its
// Onyx model.
func (e *env) conformOnyx(req *http.Request, status int, body []byte) {
	e.t.Helper()
	if status/100 != 2 {
		return
	}
	r := req.Clone(req.Context())
	if bp := e.cfg.BasePath; bp != "" && strings.HasPrefix(r.URL.Path, bp+"/") {
		r.URL.Path = strings.TrimPrefix(r.URL.Path, bp)
	}
	_, pattern := onyxAnswerRoutes().Handler(r)
	a, ok := onyxAnswers[pattern]
	if !ok {
		return
	}
	if err := onyxtest.CheckAnswer(body, a.model, a.list); err != nil {
		e.t.Errorf("%s %s → %d is not Onyx's %s:\n%v\nbody: %s", req.Method, req.URL.RequestURI(), status, a.model, err, clipBody(body))
	}
}
