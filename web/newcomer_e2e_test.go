package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry/api"
	"github.com/quarryhq/quarry/outbound"
	"github.com/quarryhq/quarry/toolrun"
)

// TestNewcomerInChromium is what a newcomer met (issue 39, item 6), in
// headless Chromium (web/e2e/newcomer.mjs), on a server as quarry serve
// starts it: its bootstrap admin key, a worker in the process, and a
// scheduler the story runs when it needs a pass. The story checks that
// the connector picker and a pair's page say which sources Quarry
// indexes, that the IMAP form has its security and CA certificate, that a
// new credential is offered its source's keys, that a short password
// shows nothing, that a new pair's page follows its first attempt without
// a reload and then stops asking, that the search page's count is its
// filters' count, that a basic user sees neither "Quarry admin" nor a
// bare 403, and that what the bootstrap key made is named by the key's
// name. Every view is checked with axe-core.
func TestNewcomerInChromium(t *testing.T) {
	node, e2eDir, db, admin, basic := storyDeployment(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := slog.New(slog.DiscardHandler)
	handler := api.NewServer(api.Config{MaskCredentials: true, Version: "e2e"}, db, log)
	mux := http.NewServeMux()
	mux.Handle("/", handler)
	mux.HandleFunc("POST /_e2e/schedule", func(w http.ResponseWriter, r *http.Request) {
		res, err := db.Schedule(r.Context())
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]int{"created": res.Created})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	// The worker of the process, as quarry serve starts it.
	token, _, err := db.StartInProcessWorker(ctx, "in-process e2e")
	if err != nil {
		t.Fatal(err)
	}
	egress := toolrun.NewRunner(toolrun.Policy{})
	w := outbound.NewWorker(outbound.WorkerConfig{
		API:           outbound.NewWorkerAPI(&http.Client{Transport: &outbound.InProcessTransport{Handler: handler}}, "http://in-process", token),
		ConnectorHTTP: egress.Client(),
		ConnectorDial: egress.Dial,
		PollInterval:  200 * time.Millisecond,
		Log:           log,
	})
	stopped := make(chan error, 1)
	go func() { stopped <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-stopped
	})

	// What the bootstrap key made before the story: a file connector of an
	// uploaded file and its credential, a Notion connector, and the
	// pair of an ingestion API connector with 120 documents pushed to it.
	c := e2eClient{t, srv.URL, admin}
	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	part, _ := mw.CreateFormFile("files", "climbing.txt")
	part.Write([]byte("Rope and belay checklist for the north face.\n"))
	mw.Close()
	req, _ := http.NewRequest("POST", srv.URL+"/manage/admin/connector/file/upload", &form)
	req.Header.Set("Authorization", "Bearer "+admin)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var uploaded struct {
		FilePaths []string `json:"file_paths"`
	}
	json.NewDecoder(res.Body).Decode(&uploaded)
	res.Body.Close()
	if len(uploaded.FilePaths) != 1 {
		t.Fatalf("upload: %d %+v", res.StatusCode, uploaded)
	}
	var made struct {
		ID int64 `json:"id"`
	}
	c.do("POST", "/manage/admin/connector", map[string]any{"name": "notes", "source": "file", "input_type": "load_state",
		"connector_specific_config": map[string]any{"file_locations": uploaded.FilePaths, "file_names": []string{"climbing.txt"}}}, nil)
	c.do("POST", "/manage/credential", map[string]any{"name": "no secrets", "source": "file", "admin_public": true, "credential_json": map[string]any{}}, nil)
	c.do("POST", "/manage/admin/connector", map[string]any{"name": "team wiki", "source": "notion", "input_type": "poll",
		"connector_specific_config": map[string]any{}}, &made)
	wiki := made.ID
	c.do("POST", "/manage/credential", map[string]any{"name": "wiki bot", "source": "notion", "admin_public": true,
		"credential_json": map[string]any{"notion_integration_token": "secret_0123456789-a-longer-secret"}}, &made)
	var pair struct {
		Data int64 `json:"data"`
	}
	c.do("PUT", fmt.Sprintf("/manage/connector/%d/credential/%d", wiki, made.ID), map[string]any{"name": "team wiki", "access_type": "public"}, &pair)
	wikiPair := pair.Data
	c.do("POST", "/manage/admin/connector", map[string]any{"name": "pushed", "source": "ingestion_api", "input_type": "load_state",
		"connector_specific_config": map[string]any{}}, &made)
	pushed := made.ID
	c.do("POST", "/manage/credential", map[string]any{"name": "pushed", "source": "ingestion_api", "admin_public": true, "credential_json": map[string]any{}}, &made)
	c.do("PUT", fmt.Sprintf("/manage/connector/%d/credential/%d", pushed, made.ID), map[string]any{"name": "pushed", "access_type": "public"}, &pair)
	for i := range 89 {
		doc := map[string]any{"semantic_identifier": fmt.Sprintf("Granite note %d", i), "source": "web", "metadata": map[string]any{},
			"sections": []any{map[string]any{"text": fmt.Sprintf("Granite rock slab number %d, climbed in the rain.", i)}}}
		if i >= 60 { // 29 of them from a wiki, two years old.
			doc["source"] = "confluence"
			doc["doc_updated_at"] = time.Now().AddDate(-2, 0, 0).UTC().Format(time.RFC3339)
		}
		c.do("POST", "/onyx-api/ingestion", map[string]any{"document": doc, "cc_pair_id": pair.Data}, nil)
	}
	for i := range 31 { // 120 documents about rock: more than a search page holds.
		c.do("POST", "/onyx-api/ingestion", map[string]any{"document": map[string]any{"semantic_identifier": fmt.Sprintf("Basalt note %d", i),
			"source": "web", "metadata": map[string]any{}, "sections": []any{map[string]any{"text": fmt.Sprintf("Basalt rock column %d.", i)}}},
			"cc_pair_id": pair.Data}, nil)
	}

	runStory(ctx, t, node, e2eDir, "newcomer.mjs", srv.URL, admin, basic, fmt.Sprint(wikiPair))

	// Through the API, unmasked: what the page saved.
	plain := httptest.NewServer(api.NewServer(api.Config{MaskCredentials: false}, db, log))
	t.Cleanup(plain.Close)
	reader := e2eClient{t, plain.URL, admin}
	var conns []struct {
		Name   string         `json:"name"`
		Config map[string]any `json:"connector_specific_config"`
	}
	reader.do("GET", "/manage/connector", nil, &conns)
	var mail map[string]any
	for _, k := range conns {
		if k.Name == "mail" {
			mail = k.Config
		}
	}
	if mail == nil || mail["host"] != "imap.example.com" || mail["security"] != "starttls" || mail["port"] != 143.0 ||
		!strings.HasPrefix(fmt.Sprint(mail["ca_certificate"]), "-----BEGIN CERTIFICATE-----") {
		t.Errorf("the IMAP connector the page made: %v", mail)
	}
	var creds []struct {
		Name string         `json:"name"`
		JSON map[string]any `json:"credential_json"`
	}
	reader.do("GET", "/manage/credential", nil, &creds)
	var mailbox map[string]any
	for _, k := range creds {
		if k.Name == "mailbox" {
			mailbox = k.JSON
		}
	}
	if want := (map[string]any{"imap_username": "ada@example.com", "imap_password": "imap-pass--2026!"}); fmt.Sprint(mailbox) != fmt.Sprint(want) {
		t.Errorf("the IMAP credential the page made: %v, want %v", mailbox, want)
	}
}
