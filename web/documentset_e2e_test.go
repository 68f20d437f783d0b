package web_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api"
)

// TestDocumentSetsInChromium tells the story of document sets in the
// console (issue 42, item 5), in headless Chromium
// (web/e2e/documentsets.mjs), on a new SQLite deployment: two public
// pairs of an ingestion API connector, "Granite wiki" and "Basalt wiki",
// each holding a document about rock; a group "Climbers" with the basic
// key "reader" in it; a basic key "keeper" in a group granted
// manage:document_sets. The reader does not see the Document sets page
// (and is told who may); the keeper does, by the grant. The admin, with
// the keyboard alone, meets the API's refusal of a set without pairs,
// makes a set of the granite pair shared with the reader and the group,
// changes it, and later deletes it; a curator of no group sees a public
// set the admin made, read-only; the reader narrows a search for rock
// to the set and sees the basalt document go, keeps the filter in the
// address through a reload, and after the deletion reads the server's
// refusal of the set's name. Every view is checked with axe-core. Then
// the API is asked what is left.
func TestDocumentSetsInChromium(t *testing.T) {
	node, e2eDir, db, admin, reader := storyDeployment(t)
	ctx := context.Background()
	srv := httptest.NewServer(api.NewServer(api.Config{MaskCredentials: true, Version: "e2e"}, db, slog.New(slog.DiscardHandler)))
	t.Cleanup(srv.Close)
	name := "keeper"
	_, keeper, err := db.CreateAPIKey(ctx, nil, &name, quarry.RoleBasic)
	if err != nil {
		t.Fatal(err)
	}
	name = "curator"
	_, curator, err := db.CreateAPIKey(ctx, nil, &name, quarry.RoleCurator)
	if err != nil {
		t.Fatal(err)
	}

	c := e2eClient{t, srv.URL, admin}
	var made struct {
		ID int64 `json:"id"`
	}
	c.do("POST", "/manage/admin/connector", map[string]any{"name": "pushed", "source": "ingestion_api", "input_type": "load_state",
		"connector_specific_config": map[string]any{}}, &made)
	connector := made.ID
	c.do("POST", "/manage/credential", map[string]any{"name": "pushed", "source": "ingestion_api", "admin_public": true,
		"credential_json": map[string]any{}}, &made)
	credential := made.ID
	for _, p := range []struct{ pair, id, title, text string }{
		{"Granite wiki", "granite", "Granite slab guide", "Granite is a rock of slabs and cracks."},
		{"Basalt wiki", "basalt", "Basalt columns", "Basalt is a rock that forms columns as lava cools."},
	} {
		var pair struct {
			Data int64 `json:"data"`
		}
		// One credential per pair: a connector and a credential make one pair.
		if p.id == "basalt" {
			c.do("POST", "/manage/credential", map[string]any{"name": "pushed too", "source": "ingestion_api", "admin_public": true,
				"credential_json": map[string]any{}}, &made)
			credential = made.ID
		}
		c.do("PUT", fmt.Sprintf("/manage/connector/%d/credential/%d", connector, credential),
			map[string]any{"name": p.pair, "access_type": "public"}, &pair)
		c.do("POST", "/onyx-api/ingestion", map[string]any{"cc_pair_id": pair.Data, "document": map[string]any{"id": p.id,
			"semantic_identifier": p.title, "source": "web", "metadata": map[string]any{},
			"sections": []any{map[string]any{"text": p.text, "link": "https://wiki.example.com/" + p.id}}}}, nil)
	}
	var me struct {
		ID string `json:"id"`
	}
	e2eClient{t, srv.URL, reader}.do("GET", "/me", nil, &me)
	c.do("POST", "/manage/admin/user-group", map[string]any{"name": "Climbers", "user_ids": []string{me.ID}, "cc_pair_ids": []int64{}}, &made)
	e2eClient{t, srv.URL, keeper}.do("GET", "/me", nil, &me)
	c.do("POST", "/manage/admin/user-group", map[string]any{"name": "Set keepers", "user_ids": []string{me.ID}, "cc_pair_ids": []int64{}}, &made)
	c.do("PUT", fmt.Sprintf("/manage/admin/user-group/%d/permissions", made.ID),
		map[string]any{"permission": "manage:document_sets", "enabled": true}, nil)

	runStory(ctx, t, node, e2eDir, "documentsets.mjs", srv.URL, admin, reader, keeper, curator)

	var sets []any
	c.do("GET", "/manage/document-set", nil, &sets)
	if len(sets) != 0 {
		t.Errorf("the sets left after the story deleted its set: %v", sets)
	}
}
