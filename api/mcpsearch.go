package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/quarryhq/quarry"
)

// Search over /mcp: the tool and the resources of Onyx v4.6.1's MCP server
// (search_indexed_documents, resource://indexed_sources,
// resource://document_sets), and the search
// and fetch pair that ChatGPT's connectors and deep research call. Each
// runs with the caller's rights, as POST /search/send-search-message does:
// a document of a pair the caller may not search is neither found nor
// fetched. The tools are offered to whoever may search (read:search),
// beside the catalog of custom and MCP server tools.

// Names of the search tools and the resource.
const (
	mcpSearchIndexed   = "search_indexed_documents"
	mcpSearch          = "search"
	mcpFetch           = "fetch"
	indexedSourcesURI  = "resource://indexed_sources"
	documentSetsURI    = "resource://document_sets"
	mcpSearchResults   = 10 // Results of search_indexed_documents and search, as many as a page of Onyx's search shows.
	noSourcesIndexed   = "No document sources are indexed yet. Add connectors or upload data through Onyx before calling search_indexed_documents."
	mcpSearchIndexDesc = "Search the user's knowledge base indexed in Quarry (Onyx's search_indexed_documents).\n" +
		"Use this tool for information that is not public knowledge and specific to the user, their team, their work, or their organization/company.\n\n" +
		"Runs Quarry's keyword search (BM25 over the indexed chunks) with the caller's rights; there is no LLM query expansion or selection, " +
		"so skip_query_expansion changes nothing.\n\n" +
		"To find a list of available sources, use the `indexed_sources` resource. `document_set_names` restricts results to documents belonging " +
		"to the named Document Sets (a set you may not see is refused); use the `document_sets` resource to discover accessible set names. `time_cutoff` accepts an ISO 8601 timestamp; only documents " +
		"updated on or after that moment are returned. Naive (timezone-less) timestamps are treated as UTC.\n\n" +
		"Returns {\"results\": [{title, url, source_type, content, updated_at, cc_pair_id, cc_pair_name, cc_pair_access_type}, ...]}, best first; " +
		"content is the matching chunk of the document, and cc_pair_* name the source (cc_pair) whose copy of the document it is."
	mcpSearchDesc = "Search the company's documents indexed in Quarry, with your rights, for the words of query (keyword search: " +
		"\"quoted phrases\" match as phrases, the last word also as a prefix). Returns {\"results\": [{id, title, url, cc_pair_id, " +
		"cc_pair_name, cc_pair_access_type}]}, best first: each result is one source's copy of a document (a document several sources " +
		"hold is a result for each), and says which source (cc_pair) it is from. Pass an id to fetch for that copy's text."
	mcpFetchDesc = "Fetch a document found by search: its whole text, title, URL and metadata (with the source it is from), by the id search gave."
)

// mcpSearchTools returns the search tools, by name.
func mcpSearchTools() []*mcp.Tool {
	strList := json.RawMessage(`{"anyOf":[{"type":"array","items":{"type":"string"}},{"type":"null"}],"default":null}`)
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(bool)}
	return []*mcp.Tool{
		{Name: mcpFetch, Title: "Fetch a document", Description: mcpFetchDesc, Annotations: readOnly,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","description":"The id of a result of search"}},"required":["id"]}`)},
		{Name: mcpSearch, Title: "Search documents", Description: mcpSearchDesc, Annotations: readOnly,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"What to search for"}},"required":["query"]}`)},
		{Name: mcpSearchIndexed, Title: "Search indexed documents", Description: mcpSearchIndexDesc, Annotations: readOnly,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"},"source_types":` + string(strList) +
				`,"document_set_names":` + string(strList) + `,"time_cutoff":{"anyOf":[{"type":"string"},{"type":"null"}],"default":null},` +
				`"skip_query_expansion":{"type":"boolean","default":false}},"required":["query"]}`),
			OutputSchema: json.RawMessage(`{"type":"object","additionalProperties":true}`)},
	}
}

// mcpCanSearch reports whether c may use the search tools and resource.
func mcpCanSearch(c *quarry.Caller) bool { return c.CanSearch() }

// mcpCallSearch answers tools/call of a search tool; ok is false for
// another name.
func (s *Server) mcpCallSearch(ctx context.Context, call *mcpCall, req *mcp.CallToolRequest) (res *mcp.CallToolResult, ok bool, err error) {
	name := req.Params.Name
	if name != mcpSearchIndexed && name != mcpSearch && name != mcpFetch {
		return nil, false, nil
	}
	if !mcpCanSearch(call.c) {
		return nil, true, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown tool " + strconv.Quote(name)}
	}
	args := req.Params.Arguments
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	switch name {
	case mcpSearchIndexed:
		res, err = s.mcpSearchIndexed(ctx, call.c, args)
	case mcpSearch:
		res, err = s.mcpSearchPlain(ctx, call.c, args)
	default:
		res, err = s.mcpFetch(ctx, call.c, args)
	}
	if err != nil {
		return nil, true, s.internalError(ctx, err)
	}
	return res, true, nil
}

// searchIndexedArgs are the arguments of search_indexed_documents.
type searchIndexedArgs struct {
	Query              *string  `json:"query"`
	SourceTypes        []string `json:"source_types"`
	DocumentSetNames   []string `json:"document_set_names"`
	TimeCutoff         *string  `json:"time_cutoff"`
	SkipQueryExpansion *bool    `json:"skip_query_expansion"` // No LLM expands queries here: it changes nothing.
}

// jsonResult is a tools/call result of a JSON object: its text, and the
// object as structured content.
func jsonResult(v any) *mcp.CallToolResult {
	b, _ := json.Marshal(v)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: json.RawMessage(b)}
}

// mcpIndexedResult is a result of search_indexed_documents, and the pair
// its copy is of.
type mcpIndexedResult struct {
	Title      string  `json:"title"`
	URL        *string `json:"url"`
	SourceType string  `json:"source_type"`
	Content    string  `json:"content"`
	UpdatedAt  *string `json:"updated_at"`
	copyPair
}

// mcpSearchIndexed runs search_indexed_documents, with the arguments and
// the answers of Onyx's tool: bad arguments are a tool error, no indexed
// source is {"error":"No document sources…","results":[]}, source types
// Onyx does not know are skipped (none left finds nothing), a time cutoff
// that does not parse is no cutoff, and document sets the caller may not
// see are {"error":"User does not have access to document sets: […]",
// "results":[]} (the detail of POST /search's 403, which Onyx's tool
// answers).
func (s *Server) mcpSearchIndexed(ctx context.Context, c *quarry.Caller, raw json.RawMessage) (*mcp.CallToolResult, error) {
	var a searchIndexedArgs
	if err := json.Unmarshal(raw, &a); err != nil {
		return toolError("Error executing tool search_indexed_documents: the arguments do not fit its input schema (" + err.Error() + ")"), nil
	}
	if a.Query == nil {
		return toolError("Error executing tool search_indexed_documents: query is required"), nil
	}
	sources, err := s.db.SearchSources(ctx, c)
	if err != nil {
		return nil, err
	}
	if len(sources) == 0 {
		return jsonResult(map[string]any{"error": noSourcesIndexed, "results": []any{}}), nil
	}
	q := docSearch{Query: *a.Query, Limit: mcpSearchResults}
	if len(a.SourceTypes) > 0 {
		q.Sources = []quarry.DocumentSource{}
		for _, st := range a.SourceTypes {
			if src := quarry.DocumentSource(strings.ToLower(st)); src.Valid() {
				q.Sources = append(q.Sources, src)
			}
		}
	}
	if a.TimeCutoff != nil {
		if t, ok := parseTimeCutoff(*a.TimeCutoff); ok {
			q.Since = &t
		}
	}
	if n := len([]rune(q.Query)); n < 1 || n > 2048 {
		// Onyx's SearchRequest takes 1 to 2048 characters: its validation
		// error becomes the tool's.
		what, kind := "at least 1 character", "string_too_short"
		if n > 2048 {
			what, kind = "at most 2048 characters", "string_too_long"
		}
		return jsonResult(map[string]any{"error": "Document search failed: 1 validation error for SearchRequest\nquery\n  String should have " +
			what + " [type=" + kind + ", input_type=str]", "results": []any{}}), nil
	}
	// Sets the caller may not see are POST /search's 403, whose detail
	// Onyx's tool answers; an empty list is no filter, as in Onyx.
	q.DocumentSets = a.DocumentSetNames
	if err := s.db.CheckDocumentSetNames(ctx, c, q.DocumentSets); quarry.ErrorCode(err) == quarry.EFORBIDDEN || quarry.ErrorCode(err) == quarry.EINVALID {
		return jsonResult(map[string]any{"error": quarry.ErrorMessage(err), "results": []any{}}), nil
	} else if err != nil {
		return nil, err
	}
	if (q.Sources != nil && len(q.Sources) == 0) || strings.TrimSpace(q.Query) == "" {
		// No known source named matches nothing; nor do blanks.
		return jsonResult(map[string]any{"results": []any{}}), nil
	}
	hits, err := s.searchDocuments(ctx, c, q)
	if err != nil {
		if code := quarry.ErrorCode(err); code == quarry.EINVALID || code == quarry.EFORBIDDEN {
			return jsonResult(map[string]any{"error": quarry.ErrorMessage(err), "results": []any{}}), nil
		}
		return nil, err
	}
	out := make([]mcpIndexedResult, 0, len(hits))
	for _, h := range hits {
		r := mcpIndexedResult{Title: h.SemanticIdentifier, URL: h.Link, SourceType: string(h.Source), Content: h.Content, copyPair: pairOf(h.Pair)}
		if h.UpdatedAt != nil {
			u := pythonISO(h.UpdatedAt.Time)
			r.UpdatedAt = &u
		}
		out = append(out, r)
	}
	return jsonResult(map[string]any{"results": out}), nil
}

// mcpSearchPlain runs search: one result per copy of a document, {id,
// title, url} and its pair, in one text content item (and as structured
// content), as OpenAI's connectors and deep research read it. The id names
// the copy (copyID), which fetch reads.
func (s *Server) mcpSearchPlain(ctx context.Context, c *quarry.Caller, raw json.RawMessage) (*mcp.CallToolResult, error) {
	var a struct {
		Query *string `json:"query"`
	}
	if err := json.Unmarshal(raw, &a); err != nil || a.Query == nil {
		return toolError("search needs a query: {\"query\": \"…\"}"), nil
	}
	type result struct {
		ID    string `json:"id"`
		Title string `json:"title"`
		URL   string `json:"url"`
		copyPair
	}
	out := []result{}
	if strings.TrimSpace(*a.Query) != "" {
		hits, err := s.searchDocuments(ctx, c, docSearch{Query: *a.Query, Limit: mcpSearchResults})
		if err != nil {
			if quarry.ErrorCode(err) == quarry.EINVALID {
				return toolError(quarry.ErrorMessage(err)), nil
			}
			return nil, err
		}
		for _, h := range hits {
			out = append(out, result{ID: copyID(h.Pair.ID, h.DocumentID), Title: h.SemanticIdentifier, URL: deref(h.Link), copyPair: pairOf(h.Pair)})
		}
	}
	return jsonResult(map[string]any{"results": out}), nil
}

// copyIDPrefix begins the id of a copy of a document, as search gives it
// and fetch reads it: cc_pair:<cc_pair_id>:<document_id>.
const copyIDPrefix = "cc_pair:"

// copyID returns the id of pair's copy of document doc.
func copyID(pair int64, doc string) string {
	return copyIDPrefix + strconv.FormatInt(pair, 10) + ":" + doc
}

// parseCopyID returns the pair and the document that id names, if it is
// of copyID's form; any other id is a document's id alone.
func parseCopyID(id string) (pair int64, doc string, ok bool) {
	rest, ok := strings.CutPrefix(id, copyIDPrefix)
	if !ok {
		return 0, "", false
	}
	n, doc, ok := strings.Cut(rest, ":")
	if !ok || doc == "" || n == "" || strings.TrimLeft(n, "0123456789") != "" {
		return 0, "", false
	}
	pair, err := strconv.ParseInt(n, 10, 64)
	return pair, doc, err == nil
}

// mcpFetch runs fetch: the copy of a document that the id names (copyID),
// if the caller may search it, or, for a document's id alone, the one copy
// the caller may search; any other id is "not found", with no more said,
// and an id alone that several pairs the caller may search hold is a tool
// error naming the ids of their copies.
func (s *Server) mcpFetch(ctx context.Context, c *quarry.Caller, raw json.RawMessage) (*mcp.CallToolResult, error) {
	var a struct {
		ID *string `json:"id"`
	}
	if err := json.Unmarshal(raw, &a); err != nil || a.ID == nil {
		return toolError("fetch needs the id of a search result: {\"id\": \"…\"}"), nil
	}
	var pair *int64
	doc := *a.ID
	if p, d, ok := parseCopyID(doc); ok {
		pair, doc = &p, d
	}
	d, err := s.db.SearchDocument(ctx, c, doc, pair)
	var ambiguous *quarry.AmbiguousDocumentError
	switch {
	case quarry.ErrorCode(err) == quarry.ENOTFOUND:
		return toolError("Document not found: " + strconv.Quote(quarry.ClipText(*a.ID, 200))), nil
	case errors.As(err, &ambiguous):
		ids := make([]string, len(ambiguous.Pairs))
		for i, p := range ambiguous.Pairs {
			ids[i] = fmt.Sprintf("%q (%q, %s)", copyID(p.ID, doc), p.Name, p.AccessType)
		}
		return toolError(fmt.Sprintf("Document %q is in %d pairs you may search; fetch one of their copies by id: %s",
			quarry.ClipText(doc, 200), len(ids), strings.Join(ids, ", "))), nil
	case err != nil:
		return nil, err
	}
	return jsonResult(fetchedDocument(d, copyID(d.Pair.ID, doc))), nil
}

// fetchedJSON is the answer of fetch, as OpenAI documents it.
type fetchedJSON struct {
	ID       string         `json:"id"`
	Title    string         `json:"title"`
	Text     string         `json:"text"`
	URL      string         `json:"url"`
	Metadata map[string]any `json:"metadata"`
}

// fetchedDocument is the answer of fetch for copy cp, named id: its title
// (else its semantic identifier), the text of its sections one after
// another, its first link, and its metadata with its source, semantic
// identifier, time of update and pair (copyPair's fields) beside.
func fetchedDocument(cp *quarry.DocumentCopy, id string) fetchedJSON {
	d := cp.Document
	title := d.SemanticIdentifier
	if d.Title != nil && *d.Title != "" {
		title = *d.Title
	}
	var text strings.Builder
	for i, sec := range d.Sections {
		if i > 0 {
			text.WriteString("\n")
		}
		text.WriteString(sec.Text)
	}
	md := map[string]any{}
	for k, v := range d.Metadata {
		md[k] = v
	}
	md["source_type"] = string(d.Source)
	md["semantic_identifier"] = d.SemanticIdentifier
	if d.DocUpdatedAt != nil {
		md["updated_at"] = pythonISO(d.DocUpdatedAt.Time)
	}
	p := pairOf(cp.Pair)
	md["cc_pair_id"], md["cc_pair_name"], md["cc_pair_access_type"] = p.CCPairID, p.CCPairName, p.CCPairAccessType
	return fetchedJSON{ID: id, Title: title, Text: text.String(), URL: deref(d.Link()), Metadata: md}
}

// pythonISO formats t in UTC as Python's datetime.isoformat does
// (2025-01-02T03:04:05+00:00, with .ffffff when there are microseconds):
// the updated_at of Onyx's search results.
func pythonISO(t time.Time) string {
	t = t.UTC()
	if t.Nanosecond()/1000 != 0 {
		return t.Format("2006-01-02T15:04:05.000000") + "+00:00"
	}
	return t.Format("2006-01-02T15:04:05") + "+00:00"
}

// parseTimeCutoff reads an ISO 8601 time (a date alone, a time with or
// without seconds and fraction, with T or a space, a zone or none for
// UTC) or Unix seconds, as pydantic reads a datetime.
func parseTimeCutoff(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n > 2e10 || n < -2e10 { // pydantic: beyond that, milliseconds.
			return time.UnixMilli(n).UTC(), true
		}
		return time.Unix(n, 0).UTC(), true
	}
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t, true
	}
	s = strings.Replace(s, " ", "T", 1)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04Z07:00", "2006-01-02T15:04:05.999999999", "2006-01-02T15:04"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// mcpIndexedSourcesResource is the indexed_sources resource, as Onyx's MCP
// server lists it.
func mcpIndexedSourcesResource() *mcp.Resource {
	return &mcp.Resource{URI: indexedSourcesURI, Name: "indexed_sources", MIMEType: "application/json",
		Description: "Enumerate the user's document sources that are currently indexed in Onyx." +
			"This can be used to discover filters for the `search_indexed_documents` tool."}
}

// mcpReadIndexedSources answers resources/read of indexed_sources: the
// sources the caller may search, sorted, as Python's json.dumps writes a
// list of strings.
func (s *Server) mcpReadIndexedSources(ctx context.Context, c *quarry.Caller) (*mcp.ReadResourceResult, error) {
	sources, err := s.db.SearchSources(ctx, c)
	if err != nil {
		return nil, s.internalError(ctx, err)
	}
	var b strings.Builder
	b.WriteByte('[')
	for i, src := range sources {
		if i > 0 {
			b.WriteString(", ")
		}
		q, _ := json.Marshal(string(src))
		b.Write(q)
	}
	b.WriteByte(']')
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: indexedSourcesURI, MIMEType: "application/json", Text: b.String()}}}, nil
}

// mcpDocumentSetsResource is the document_sets resource, as Onyx's MCP
// server lists it.
func mcpDocumentSetsResource() *mcp.Resource {
	return &mcp.Resource{URI: documentSetsURI, Name: "document_sets", MIMEType: "application/json",
		Description: "Enumerate the Document Sets accessible to the current user. Use the returned `name` values with the " +
			"`document_set_names` filter of the `search_indexed_documents` tool to scope searches to a specific set."}
}

// mcpReadDocumentSets answers resources/read of document_sets: the sets
// the caller may see (GET /manage/document-set), by name, each with its
// name and description (Onyx's DocumentSetEntry), as Python's json.dumps
// writes them.
func (s *Server) mcpReadDocumentSets(ctx context.Context, c *quarry.Caller) (*mcp.ReadResourceResult, error) {
	sets, err := s.db.DocumentSets(ctx, c, false)
	if err != nil {
		return nil, s.internalError(ctx, err)
	}
	type entry struct {
		Name        string  `json:"name"`
		Description *string `json:"description"`
	}
	entries := make([]entry, len(sets))
	for i, set := range sets {
		entries[i] = entry{set.Name, &set.Description}
	}
	slices.SortStableFunc(entries, func(a, b entry) int { return strings.Compare(a.Name, b.Name) })
	line, err := pythonJSONLine(entries)
	if err != nil {
		return nil, s.internalError(ctx, err)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: documentSetsURI, MIMEType: "application/json",
		Text: strings.TrimSuffix(string(line), "\n")}}}, nil
}
