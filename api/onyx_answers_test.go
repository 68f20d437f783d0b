package api_test

import (
	"bytes"
	"encoding/json"
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
	// paginated: the answer is Onyx's PaginatedReturn of the model
	// ({"items": [...], "total_items": n}).
	paginated bool
	// packets: the route may stream Onyx's packets instead, one JSON object
	// a line; the lists of results they carry (search_docs) are checked as
	// lists of this model.
	packets string
}

// onyxAnswers are the routes whose 2xx answers every API test checks
// against Onyx's response models (env.do): every field of the model, none
// other, each of its type. The routes left out answer what Onyx's models
// cannot say: the tools an MCP server lists (the MCP SDK's Tool), and the
// scopes a token may have (PatScopeOption's computed field).
var onyxAnswers = map[string]onyxAnswer{
	"GET /admin/mcp/servers":                                   {model: "MCPServersResponse", list: false},
	"GET /mcp/servers":                                         {model: "MCPServersResponse", list: false},
	"GET /admin/mcp/servers/{server_id}":                       {model: "MCPServer", list: false},
	"POST /admin/mcp/server":                                   {model: "MCPServer", list: false},
	"PATCH /admin/mcp/server/{server_id}":                      {model: "MCPServer", list: false},
	"POST /admin/mcp/servers/create":                           {model: "MCPServerCreateResponse", list: false},
	"POST /admin/mcp/servers/update":                           {model: "MCPServerUpdateResponse", list: false},
	"GET /admin/mcp/server/{server_id}/db-tools":               {model: "ServerToolsResponse", list: false},
	"GET /admin/mcp/server/{server_id}/tools/snapshots":        {model: "ToolSnapshot", list: true},
	"GET /admin/mcp/tools":                                     {model: "ToolSnapshot", list: true},
	"POST /mcp/user-credentials":                               {model: "MCPApiKeyResponse", list: false},
	"DELETE /mcp/user-credentials/{server_id}":                 {model: "MCPApiKeyResponse", list: false},
	"POST /mcp/oauth/connect":                                  {model: "MCPUserOAuthConnectResponse", list: false},
	"POST /admin/mcp/oauth/connect":                            {model: "MCPUserOAuthConnectResponse", list: false},
	"POST /mcp/oauth/callback":                                 {model: "MCPOAuthCallbackResponse", list: false},
	"POST /user/pats":                                          {model: "CreatedTokenResponse", list: false},
	"GET /user/pats":                                           {model: "TokenResponse", list: true},
	"GET /manage/admin/cc-pair/{cc_pair_id}/index-attempts":    {model: "IndexAttemptSnapshot", paginated: true},
	"GET /manage/admin/cc-pair/{cc_pair_id}/errors":            {model: "IndexAttemptErrorPydantic", paginated: true},
	"POST /onyx-api/ingestion":                                 {model: "IngestionResult"},
	"POST /manage/admin/connector/file/upload":                 {model: "FileUploadResponse"},
	"POST /manage/admin/connector/{connector_id}/files/update": {model: "FileUploadResponse"},
	"GET /manage/admin/connector/{connector_id}/files":         {model: "ConnectorFilesResponse"},
	"POST /search":                                             {model: "SearchResponse"},
	"GET /onyx-api/ingestion":                                  {model: "DocMinimalInfo", list: true},
	"POST /search/send-search-message":                         {model: "SearchFullResponse", packets: "SearchDocWithContent"},
	"GET /onyx-api/connector-docs/{cc_pair_id}":                {model: "DocMinimalInfo", list: true},
	"GET /manage/indexed-sources":                              {model: "IndexedSourcesResponse"},
	"GET /admin/llm/provider":                                  {model: "LLMProviderResponse[LLMProviderView]"},
	"PUT /admin/llm/provider":                                  {model: "LLMProviderView"},
	"GET /llm/provider":                                        {model: "LLMProviderResponse[LLMProviderDescriptor]"},
	"GET /manage/document-set":                                 {model: "DocumentSetSummary", list: true},
	"GET /manage/document-set-public":                          {model: "CheckDocSetPublicResponse"},
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
	if a.packets != "" && bytes.HasPrefix(body, []byte(`{"type": `)) {
		for _, line := range bytes.Split(bytes.TrimSuffix(body, []byte("\n")), []byte("\n")) {
			var p map[string]json.RawMessage
			if err := json.Unmarshal(line, &p); err != nil {
				e.t.Errorf("%s %s → %d: a packet is not a JSON object: %s", req.Method, req.URL.RequestURI(), status, clipBody(line))
				continue
			}
			if docs, ok := p["search_docs"]; ok {
				if err := onyxtest.CheckAnswer(docs, a.packets, true); err != nil {
					e.t.Errorf("%s %s → %d: search_docs are not Onyx's %s:\n%v", req.Method, req.URL.RequestURI(), status, a.packets, err)
				}
			}
		}
		return
	}
	if a.paginated {
		var page map[string]json.RawMessage
		if err := json.Unmarshal(body, &page); err != nil || len(page) != 2 || page["items"] == nil || page["total_items"] == nil {
			e.t.Errorf("%s %s → %d is not Onyx's PaginatedReturn: %s", req.Method, req.URL.RequestURI(), status, clipBody(body))
			return
		}
		body, a.list = page["items"], true
	}
	if err := onyxtest.CheckAnswer(body, a.model, a.list); err != nil {
		e.t.Errorf("%s %s → %d is not Onyx's %s:\n%v\nbody: %s", req.Method, req.URL.RequestURI(), status, a.model, err, clipBody(body))
	}
}
