package onyxtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/textproto"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// The replays of Onyx v4.6.1's indexing tests that go through the API
// alone: permissions/test_file_connector_permissions.py (the files of a
// file connector) and search/test_search_api.py (POST /search). The other
// indexing tests need a worker and are replayed in package outbound (see
// docs/decisions.md, "Onyx's indexing tests").

// uploadConnectorFile is the test's _upload_connector_file: a text/plain
// file uploaded for the file connector, its file_paths[0] and
// file_names[0].
func (c client) uploadConnectorFile(by User, name string, content []byte) (id, fileName string, err error) {
	body, ct := multipartFiles(nil, uploadedFile{name, content})
	r, err := c.do(by, "POST", "/manage/admin/connector/file/upload", body, "Content-Type", ct)
	if err != nil {
		return "", "", err
	}
	var payload struct {
		FilePaths []string `json:"file_paths"`
		FileNames []string `json:"file_names"`
	}
	if err := json.Unmarshal(r.Body, &payload); err != nil || len(payload.FilePaths) == 0 || len(payload.FileNames) == 0 {
		return "", "", fmt.Errorf("the upload answered %s", clip(r.Body))
	}
	return payload.FilePaths[0], payload.FileNames[0], nil
}

// updateConnectorFiles is the test's _update_connector_files (not raised
// for): the ids to remove as the JSON form field file_ids_to_remove, and a
// new text/plain file.
func (c client) updateConnectorFiles(connectorID int64, by User, remove []string, name string, content []byte) *Response {
	ids, _ := json.Marshal(remove)
	body, ct := multipartFiles(map[string]string{"file_ids_to_remove": string(ids)}, uploadedFile{name, content})
	return c.tg.Do(by, "POST", fmt.Sprintf("/manage/admin/connector/%d/files/update", connectorID), body, "Content-Type", ct)
}

// listConnectorFiles is the test's _list_connector_files (not raised for).
func (c client) listConnectorFiles(connectorID int64, by User) *Response {
	return c.tg.Do(by, "GET", fmt.Sprintf("/manage/admin/connector/%d/files", connectorID), nil)
}

// uploadedFile is a file of a multipart form: its name and content.
type uploadedFile struct {
	name    string
	content []byte
}

// multipartFiles returns a multipart/form-data body of fields and files
// (field "files", text/plain, as httpx sends the tests' files), and its
// content type.
func multipartFiles(fields map[string]string, files ...uploadedFile) (string, string) {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range fields {
			if !yield(k) {
				return
			}
		}
	}) {
		mw.WriteField(k, fields[k])
	}
	for _, f := range files {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="files"; filename="%s"`, f.name))
		h.Set("Content-Type", "text/plain")
		w, _ := mw.CreatePart(h)
		w.Write(f.content)
	}
	mw.Close()
	return b.String(), mw.FormDataContentType()
}

// fileIDs returns the file_id of each file of a ConnectorFilesResponse.
func fileIDs(t *testing.T, r *Response) []string {
	t.Helper()
	check(t, r.Status == 200, "the listing: %d %s", r.Status, clip(r.Body))
	var payload struct {
		Files []struct {
			FileID string `json:"file_id"`
		} `json:"files"`
	}
	if err := json.Unmarshal(r.Body, &payload); err != nil {
		t.Fatalf("the listing %s: %v", clip(r.Body), err)
	}
	var ids []string
	for _, f := range payload.Files {
		ids = append(ids, f.FileID)
	}
	return ids
}

// fileConnectorConfig is the configuration the test gives its file
// connectors: the file uploaded, by id and name.
func fileConnectorConfig(id, name string) map[string]any {
	return map[string]any{"file_locations": []string{id}, "file_names": []string{name}, "zip_metadata_file_id": nil}
}

// noLLMProvider is what the search replays do with the test's llm_provider
// fixture (LLMProviderManager.create): nothing, as Quarry has no LLM
// providers and its search needs none.
const noLLMProvider = "the llm_provider fixture is not made: Quarry has no LLM providers, and its search needs none"

// seedDocWithContent is DocumentManager.seed_doc_with_content: a document
// of content pushed into the pair through the ingestion API with the API
// key, as _generate_dummy_document makes it; it returns the document's id.
func (c client) seedDocWithContent(p daCCPair, content string, key daAPIKey) (string, error) {
	id := "test-doc-" + uuid.NewString()
	return id, c.ingestDummy(p, id, content, key)
}

// ingestDummy pushes the document _generate_dummy_document makes of id and
// content into the pair through the ingestion API, with the API key.
func (c client) ingestDummy(p daCCPair, id, content string, key daAPIKey) error {
	_, err := c.do(key.caller(), "POST", "/onyx-api/ingestion", map[string]any{
		"document": map[string]any{
			"id":                  id,
			"sections":            []map[string]any{{"text": content, "link": id}},
			"source":              "not_applicable",
			"metadata":            map[string]any{"document_id": id},
			"semantic_identifier": "Test Document " + id,
			"from_ingestion_api":  true,
		},
		"cc_pair_id": p.ID,
	})
	return err
}

// searchResult is what the tests read of a result of POST /search.
type searchResult struct {
	CitationID *int64 `json:"citation_id"`
	Content    string `json:"content"`
	SourceType string `json:"source_type"`
}

// search is the test's _search: POST /search with the query, as u.
func (c client) search(query string, u User, extra map[string]any) (*Response, []searchResult) {
	body := map[string]any{"query": query}
	for k, v := range extra {
		body[k] = v
	}
	r := c.tg.Do(u, "POST", "/search", body)
	var payload struct {
		Results []searchResult `json:"results"`
	}
	json.Unmarshal(r.Body, &payload)
	return r, payload.Results
}

// containing returns the results whose content holds s.
func containing(results []searchResult, s string) []searchResult {
	var out []searchResult
	for _, r := range results {
		if strings.Contains(r.Content, s) {
			out = append(out, r)
		}
	}
	return out
}

var indexingReplays = []Replay{
	// ---- permissions/test_file_connector_permissions.py ----
	{Name: "permissions/test_file_connector_permissions.py/test_only_global_curator_can_update_public_file_connector_files", Run: func(t *testing.T, c client) {
		admin := must(c.createUser("admin_user", ""))(t)
		creator := must(c.createUser("global_curator_creator", ""))(t)
		creator = must(c.setRole(creator, "global_curator", admin, false))(t)
		editor := must(c.createUser("global_curator_editor", ""))(t)
		editor = must(c.setRole(editor, "global_curator", admin, false))(t)
		curator := must(c.createUser("curator_user", ""))(t)
		curatorGroup := must(c.createGroup(admin.caller(), "curator_group", []string{curator.ID}, []int64{}))(t)
		ok(t, c.waitForGroupSync(admin.caller(), curatorGroup))
		ok(t, c.setCurator(curatorGroup, curator, admin.caller(), true))

		initialID, initialName, err := c.uploadConnectorFile(creator.caller(), "initial-file.txt", []byte("initial file content"))
		ok(t, err)
		conn := must(c.createConnector(creator.caller(), connectorArgs{Name: "public_file_connector", Source: "file",
			Config: fileConnectorConfig(initialID, initialName), AccessType: "public", Groups: []int64{}}))(t)
		cred := must(c.createCredential(creator.caller(), credentialArgs{Source: "file", CuratorPublic: ptr(true), Groups: []int64{},
			Name: "public_file_connector_credential"}))(t)
		must(c.createCCPair(conn.ID, cred.ID, creator.caller(), "public_file_connector_cc_pair", "public", []int64{}))(t)

		check(t, slices.Contains(fileIDs(t, c.listConnectorFiles(conn.ID, curator.caller())), initialID),
			"the curator's listing does not hold the initial file")
		check(t, slices.Contains(fileIDs(t, c.listConnectorFiles(conn.ID, editor.caller())), initialID),
			"the global curator's listing does not hold the initial file")

		denied := c.updateConnectorFiles(conn.ID, curator.caller(), []string{initialID}, "curator-file.txt", []byte("curator updated file"))
		check(t, denied.Status == 403, "the curator's update: %d %s", denied.Status, clip(denied.Body))
		allowed := c.updateConnectorFiles(conn.ID, editor.caller(), []string{initialID}, "global-curator-file.txt", []byte("global curator updated file"))
		ok(t, raiseForStatus("POST", "files/update", allowed))
		var payload struct {
			FilePaths []string `json:"file_paths"`
			FileNames []string `json:"file_names"`
		}
		ok(t, json.Unmarshal(allowed.Body, &payload))
		check(t, !slices.Contains(payload.FilePaths, initialID), "the initial file is still in file_paths %v", payload.FilePaths)
		check(t, slices.Contains(payload.FileNames, "global-curator-file.txt"), "file_names %v", payload.FileNames)

		creatorGroup := must(c.createGroup(admin.caller(), "creator_group", []string{creator.ID}, []int64{}))(t)
		ok(t, c.waitForGroupSync(admin.caller(), creatorGroup))
		privateID, privateName, err := c.uploadConnectorFile(creator.caller(), "private-initial-file.txt", []byte("private initial file content"))
		ok(t, err)
		private := must(c.createConnector(creator.caller(), connectorArgs{Name: "private_file_connector", Source: "file",
			Config: fileConnectorConfig(privateID, privateName), AccessType: "private", Groups: []int64{creatorGroup.ID}}))(t)
		privateCred := must(c.createCredential(creator.caller(), credentialArgs{Source: "file", CuratorPublic: ptr(false),
			Groups: []int64{creatorGroup.ID}, Name: "private_file_connector_credential"}))(t)
		must(c.createCCPair(private.ID, privateCred.ID, creator.caller(), "private_file_connector_cc_pair", "private", []int64{creatorGroup.ID}))(t)

		privateDenied := c.updateConnectorFiles(private.ID, editor.caller(), []string{privateID}, "global-curator-private-file.txt",
			[]byte("global curator private update"))
		check(t, privateDenied.Status == 403, "the global curator's update of the private connector: %d %s", privateDenied.Status, clip(privateDenied.Body))
	}},

	// ---- search/test_search_api.py ----
	{Name: "search/test_search_api.py/test_basic_search_returns_results", Run: func(t *testing.T, c client) {
		admin := adminUser(t, c)
		t.Log(noLLMProvider)
		key := must(c.createAPIKey(admin, "", "admin"))(t)
		p := must(c.createCCPairFromScratch(admin.caller(), "", "", nil, ""))(t)
		content := "search api integration test unique document"
		must(c.seedDocWithContent(p, content, key))(t)
		r, results := c.search(content, admin.caller(), nil)
		check(t, r.Status == 200, "search: %d %s", r.Status, clip(r.Body))
		matches := containing(results, content)
		check(t, len(matches) == 1, "%d results hold the document, want 1: %s", len(matches), clip(r.Body))
		check(t, matches[0].CitationID != nil, "citation_id is None")
		check(t, matches[0].SourceType != "", "no source_type")
	}},
	{Name: "search/test_search_api.py/test_document_set_filtering", Run: func(t *testing.T, c client) {
		admin := adminUser(t, c)
		t.Log(noLLMProvider)
		key := must(c.createAPIKey(admin, "", "admin"))(t)
		in := must(c.createCCPairFromScratch(admin.caller(), "", "", nil, ""))(t)
		out := must(c.createCCPairFromScratch(admin.caller(), "", "", nil, ""))(t)
		shared := "docset-filter-unique-phrase"
		included, excluded := shared+" included", shared+" excluded"
		must(c.seedDocWithContent(in, included, key))(t)
		must(c.seedDocWithContent(out, excluded, key))(t)
		set := must(c.createDocumentSet(admin.caller(), docSetArgs{CCPairIDs: []int64{in.ID}}))(t)
		ok(t, c.waitForDocumentSetSync(admin.caller(), set))
		r, results := c.search(shared, admin.caller(), map[string]any{"document_sets": []string{set.Name}})
		check(t, r.Status == 200, "search: %d %s", r.Status, clip(r.Body))
		check(t, len(containing(results, included)) > 0, "the set's document is not found: %s", clip(r.Body))
		check(t, len(containing(results, excluded)) == 0, "the other pair's document is found: %s", clip(r.Body))
	}},
	{Name: "search/test_search_api.py/test_acl_enforcement", Run: func(t *testing.T, c client) {
		admin := adminUser(t, c)
		t.Log(noLLMProvider)
		key := must(c.createAPIKey(admin, "", "admin"))(t)
		privileged := must(c.createUser("search-acl-allowed", ""))(t)
		blocked := must(c.createUser("search-acl-blocked", ""))(t)
		restricted := must(c.createCCPairFromScratch(admin.caller(), "", "private", nil, ""))(t)
		g := must(c.createGroup(admin.caller(), "", []string{privileged.ID}, []int64{restricted.ID}))(t)
		ok(t, c.waitForGroupSync(admin.caller(), g))
		content := "restricted acl search document"
		must(c.seedDocWithContent(restricted, content, key))(t)
		r, results := c.search(content, privileged.caller(), nil)
		check(t, r.Status == 200, "the privileged user's search: %d %s", r.Status, clip(r.Body))
		check(t, len(containing(results, content)) > 0, "the privileged user does not find the document: %s", clip(r.Body))
		r, results = c.search(content, blocked.caller(), nil)
		check(t, r.Status == 200, "the blocked user's search: %d %s", r.Status, clip(r.Body))
		check(t, len(containing(results, content)) == 0, "the blocked user finds the document: %s", clip(r.Body))
	}},
	{Name: "search/test_search_api.py/test_persona_scoped_search", Run: func(t *testing.T, c client) {
		admin := adminUser(t, c)
		t.Log(noLLMProvider)
		key := must(c.createAPIKey(admin, "", "admin"))(t)
		in := must(c.createCCPairFromScratch(admin.caller(), "", "", nil, ""))(t)
		out := must(c.createCCPairFromScratch(admin.caller(), "", "", nil, ""))(t)
		shared := "persona-scope-unique-phrase"
		included, excluded := shared+" in scope", shared+" out of scope"
		must(c.seedDocWithContent(in, included, key))(t)
		must(c.seedDocWithContent(out, excluded, key))(t)
		set := must(c.createDocumentSet(admin.caller(), docSetArgs{CCPairIDs: []int64{in.ID}}))(t)
		ok(t, c.waitForDocumentSetSync(admin.caller(), set))
		p := must(c.createPersona(admin.caller(), personaArgs{DocumentSetIDs: []int64{set.ID}, IsPublic: ptr(true)}))(t)
		r, results := c.search(shared, admin.caller(), map[string]any{"persona_id": p.ID})
		check(t, r.Status == 200, "search: %d %s", r.Status, clip(r.Body))
		check(t, len(containing(results, included)) > 0, "the assistant's set's document is not found: %s", clip(r.Body))
		check(t, len(containing(results, excluded)) == 0, "the other pair's document is found: %s", clip(r.Body))
	}},
	{Name: "search/test_search_api.py/test_invalid_persona_returns_404", Run: func(t *testing.T, c client) {
		admin := adminUser(t, c)
		t.Log(noLLMProvider)
		r, _ := c.search("test", admin.caller(), map[string]any{"persona_id": 99999})
		check(t, r.Status == 404, "persona 99999: %d %s", r.Status, clip(r.Body))
		// Beyond Onyx's test: its OnyxError's code.
		var body struct {
			ErrorCode string `json:"error_code"`
		}
		json.Unmarshal(r.Body, &body)
		check(t, body.ErrorCode == "PERSONA_NOT_FOUND", "error_code %q, want Onyx's PERSONA_NOT_FOUND: %s", body.ErrorCode, clip(r.Body))
	}},
	{Name: "search/test_search_api.py/test_unauthenticated_returns_401", Run: func(t *testing.T, c client) {
		// Onyx answers 403 (its test asserts it, despite its name);
		// Quarry answers a call without credentials 401, on every route
		// (the contract, section 3), as the replays of the tests of
		// personal access tokens show too.
		r, _ := c.search("test", User{}, nil)
		check(t, r.Status == 401, "without credentials: %d %s, want 401 (Onyx: 403)", r.Status, clip(r.Body))
	}},
	{Name: "search/test_search_api.py/test_read_search_scoped_pat_can_search", Run: func(t *testing.T, c client) {
		admin := adminUser(t, c)
		t.Log(noLLMProvider)
		key := must(c.createAPIKey(admin, "", "admin"))(t)
		p := must(c.createCCPairFromScratch(admin.caller(), "", "", nil, ""))(t)
		content := "scoped pat search api unique document"
		must(c.seedDocWithContent(p, content, key))(t)
		// PATManager.create_scoped mints the token in Onyx's database; the
		// replay asks Quarry's route for one with the same scope.
		pat := must(c.createPAT("search-scoped-pat", ptr(7), admin, []string{"read:search"}))(t)
		r, results := c.search(content, User{Token: deref(pat.Token)}, nil)
		check(t, r.Status == 200, "search with the token: %d %s", r.Status, clip(r.Body))
		check(t, len(containing(results, content)) == 1, "%d results hold the document, want 1: %s", len(containing(results, content)), clip(r.Body))
	}},
}
