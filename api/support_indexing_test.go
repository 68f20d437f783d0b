package api_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/quarryhq/quarry"
)

// fxIndexingLite is the expected ConnectorIndexingStatusLite of a pair
// that was never indexed (no scheduler runs in these tests: new pairs stay
// SCHEDULED, and none counts as active).
func fxIndexingLite(id int64, name, source string, access quarry.AccessType, status string, editable bool) string {
	return fmt.Sprintf(`{"cc_pair_id":%d,"name":%q,"source":%q,"access_type":%q,"cc_pair_status":%q,"in_progress":false,
		"in_repeated_error_state":false,"last_finished_status":null,"last_status":null,"last_success":null,"is_editable":%t,
		"docs_indexed":0,"latest_index_attempt_docs_indexed":null}`, id, name, source, access, status, editable)
}

// fxIndexingPage is the expected ConnectorIndexingStatusLiteResponse of a
// source: total, active and public count its pairs that the filters keep.
func fxIndexingPage(source string, total, active, public, page, pages int, entries ...string) string {
	return fmt.Sprintf(`{"source":%q,"summary":{"total_connectors":%d,"active_connectors":%d,"public_connectors":%d,"total_docs_indexed":0},
		"current_page":%d,"total_pages":%d,"indexing_statuses":[%s]}`, source, total, active, public, page, pages, strings.Join(entries, ","))
}

func TestSupportIndexingStatus(t *testing.T) {
	c := newFxCast(t)
	web := c.connector(c.admin, "web", "web")
	slack := c.connector(c.admin, "chat", "slack")
	k := func() int64 { return c.credential(c.admin, "not_applicable", fxSecret, "admin_public", true) }
	alpha := c.pair(c.admin, web, k(), "alpha", quarry.AccessPublic)
	beta := c.pair(c.admin, web, k(), "beta", quarry.AccessPrivate, c.gA)
	gamma := c.pair(c.admin, web, k(), "gamma", quarry.AccessPrivate, c.gB)
	delta := c.pair(c.admin, slack, k(), "delta", quarry.AccessPrivate, c.gC)
	c.do(c.admin, "PUT", fmt.Sprintf("/manage/admin/cc-pair/%d/status", beta), `{"status":"PAUSED"}`).want(t, 200, `{"message":"200"}`)
	lite := func(id int64, editable bool) string {
		switch id {
		case alpha:
			return fxIndexingLite(id, "alpha", "web", quarry.AccessPublic, "SCHEDULED", editable)
		case beta:
			return fxIndexingLite(id, "beta", "web", quarry.AccessPrivate, "PAUSED", editable)
		case gamma:
			return fxIndexingLite(id, "gamma", "web", quarry.AccessPrivate, "SCHEDULED", editable)
		}
		return fxIndexingLite(id, "delta", "slack", quarry.AccessPrivate, "SCHEDULED", editable)
	}
	list := func(pages ...string) string { return "[" + strings.Join(pages, ",") + "]" }
	adminAll := list(fxIndexingPage("slack", 1, 0, 0, 1, 1, lite(delta, true)),
		fxIndexingPage("web", 3, 0, 1, 1, 1, lite(gamma, true), lite(beta, true), lite(alpha, true)))
	const path = "/manage/admin/connector/indexing-status"
	for _, tt := range []struct {
		name   string
		u      user
		body   any
		status int
		want   string
	}{
		// Onyx's managers send this.
		{"admin, every pair", c.admin, `{"get_all_connectors": true}`, 200, adminAll},
		{"admin, first pages", c.admin, `{}`, 200, adminAll},
		// The curator sees the public pair and those of its groups A
		// (curated: it may change beta) and B (a member); not delta.
		{"curator", c.curator, `{"get_all_connectors": true}`, 200, list(
			fxIndexingPage("web", 3, 0, 1, 1, 1, lite(beta, true), lite(gamma, false), lite(alpha, false)))},
		{"global curator", c.global, `{}`, 200, list(fxIndexingPage("web", 2, 0, 1, 1, 1, lite(gamma, true), lite(alpha, false)))},
		{"one source", c.admin, `{"source": "slack"}`, 200, list(fxIndexingPage("slack", 1, 0, 0, 1, 1, lite(delta, true)))},
		{"access types", c.admin, `{"access_type_filters": ["public"]}`, 200, list(fxIndexingPage("web", 1, 0, 1, 1, 1, lite(alpha, true)))},
		{"last statuses: none has an attempt", c.admin, `{"last_status_filters": ["success"]}`, 200, `[]`},
		{"documents, = 0", c.admin, `{"docs_count_operator": "=", "docs_count_value": 0}`, 200, adminAll},
		{"documents, > 0", c.admin, `{"docs_count_operator": ">", "docs_count_value": 0}`, 200, `[]`},
		{"documents, an operator alone", c.admin, `{"docs_count_operator": ">"}`, 200, adminAll},
		{"a part of the name", c.admin, `{"name_filter": "AL"}`, 200, list(fxIndexingPage("web", 1, 0, 1, 1, 1, lite(alpha, true)))},
		{"a page past the end", c.admin, `{"source_to_page": {"web": 2}}`, 200, list(fxIndexingPage("slack", 1, 0, 0, 1, 1, lite(delta, true)))},
		{"every pair whatever the page", c.admin, `{"source_to_page": {"web": 2}, "get_all_connectors": true}`, 200,
			list(fxIndexingPage("slack", 1, 0, 0, 1, 1, lite(delta, true)), fxIndexingPage("web", 3, 0, 1, 2, 1, lite(gamma, true), lite(beta, true), lite(alpha, true)))},
		// Python's slice of page 0: statuses[-10:0], nothing.
		{"page 0", c.admin, `{"source_to_page": {"slack": 0}}`, 200, list(
			fxIndexingPage("web", 3, 0, 1, 1, 1, lite(gamma, true), lite(beta, true), lite(alpha, true)))},
		{"basic", c.basic, `{}`, 403, fxNotCurator},
		{"limited", c.limited, `{`, 403, fxNotCurator},
		{"no token", user{}, `{}`, 401, fxNotAuthed},
		{"no body", c.admin, nil, 422, fxMissingBody},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c.do(tt.u, "POST", path, tt.body).want(t, tt.status, tt.want)
		})
	}
	t.Run("golden 422 bodies", func(t *testing.T) {
		for _, g := range fxGoldens(t, "indexingStatus") {
			t.Run(g.Name, func(t *testing.T) { c.replay(t, c.admin, "POST", "", g) })
		}
	})
	t.Run("pages of 10", func(t *testing.T) {
		conn := c.connector(c.admin, "many", "github")
		var ids []int64
		for i := range 12 {
			ids = append(ids, c.pair(c.admin, conn, k(), fmt.Sprintf("p%02d", i), quarry.AccessPublic))
		}
		var pages []struct {
			Source   string `json:"source"`
			Current  int    `json:"current_page"`
			Total    int    `json:"total_pages"`
			Statuses []struct {
				ID int64 `json:"cc_pair_id"`
			} `json:"indexing_statuses"`
		}
		c.do(c.admin, "POST", path, `{"source": "github", "source_to_page": {"github": 2}}`).decode(t, &pages)
		if len(pages) != 1 || pages[0].Current != 2 || pages[0].Total != 2 || len(pages[0].Statuses) != 2 ||
			pages[0].Statuses[0].ID != ids[1] || pages[0].Statuses[1].ID != ids[0] {
			t.Errorf("the second page of 12 pairs, descending by id: %+v; ids %v", pages, ids)
		}
	})
}
