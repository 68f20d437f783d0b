package api_test

import (
	"fmt"
	"testing"

	"github.com/quarryhq/quarry"
)

// TestValidTags covers GET /query/valid-tags (Onyx's get_tags) through the
// real server and database: the whole answer, the pattern's forms, the
// sources and the limit, the refusals, and the rights: a tag is listed
// only to those who may find a document carrying it (Onyx lists every tag
// to everyone).
func TestValidTags(t *testing.T) {
	c := newFxCast(t)
	conn := c.connector(c.admin, "pushed", "file", "access_type", "public")
	pub := c.pair(c.admin, conn, c.credential(c.admin, "file", fxSecret, "admin_public", true), "public", quarry.AccessPublic)
	privA := c.pair(c.curator, conn, c.credential(c.curator, "file", fxSecret, "groups", []int64{c.gA}), "of A", quarry.AccessPrivate, c.gA)
	push := func(pair int64, id, source, metadata string) {
		t.Helper()
		c.do(c.admin, "POST", "/onyx-api/ingestion", fmt.Sprintf(`{"document":{"id":%q,"semantic_identifier":%q,"source":%q,
			"sections":[{"text":"granite"}],"metadata":%s},"cc_pair_id":%d}`, id, id, source, metadata, pair)).decode(t, new(any))
	}
	push(pub, "granite", "web", `{"team":"ops","kind":["rock","Stone"]}`)
	push(pub, "memo", "slack", `{"Team":"ops"}`)
	push(privA, "safety", "file", `{"team":"safety","secret":"hard hats"}`)

	tag := func(k, v, source string) string {
		return fmt.Sprintf(`{"tag_key":%q,"tag_value":%q,"source":%q}`, k, v, source)
	}
	public := `{"tags":[` + tag("kind", "rock", "web") + `,` + tag("kind", "Stone", "web") + `,` + tag("team", "ops", "web") + `,` +
		tag("Team", "ops", "slack") + `]}`
	for _, tc := range []struct {
		name   string
		u      user
		query  string
		status int
		want   string
	}{
		{"everything a basic person may find", c.basic, "", 200, public},
		// Being an admin opens nothing more than in search: A's pair is
		// shared with A and made with its curator's credential.
		{"an admin", c.admin, "", 200, public},
		{"A's curator finds A's documents too", c.curator, "", 200, `{"tags":[` + tag("kind", "rock", "web") + `,` + tag("kind", "Stone", "web") + `,` +
			tag("secret", "hard hats", "file") + `,` + tag("team", "ops", "web") + `,` + tag("Team", "ops", "slack") + `,` +
			tag("team", "safety", "file") + `]}`},
		{"not A's metadata", c.basic, "?match_pattern=se", 200, `{"tags":[]}`},
		{"a key's prefix, whatever its case, then a value's", c.curator, "?match_pattern=S", 200,
			`{"tags":[` + tag("secret", "hard hats", "file") + `,` + tag("team", "safety", "file") + `,` + tag("kind", "Stone", "web") + `]}`},
		{"key=value", c.basic, "?match_pattern=TEAM%3Do", 200, `{"tags":[` + tag("team", "ops", "web") + `,` + tag("Team", "ops", "slack") + `]}`},
		{"=value", c.basic, "?match_pattern=%3Dst", 200, `{"tags":[` + tag("kind", "Stone", "web") + `]}`},
		{"sources", c.basic, "?sources=slack&sources=file", 200, `{"tags":[` + tag("Team", "ops", "slack") + `]}`},
		{"a limit", c.basic, "?limit=1", 200, `{"tags":[` + tag("kind", "rock", "web") + `]}`},
		{"no limit (Onyx's 0)", c.basic, "?limit=0&allow_prefix=true", 200, public},
		{"allow_prefix=false", c.basic, "?allow_prefix=false", 400, `{"detail":"Cannot disable prefix match for now"}`},
		{"a negative limit", c.basic, "?limit=-1", 422,
			`{"detail":[{"type":"greater_than_equal","loc":["query","limit"],"msg":"Input should be greater than or equal to 0","input":"-1","ctx":{"ge":0}}]}`},
		{"not a limit", c.basic, "?limit=ten", 422,
			`{"detail":[{"type":"int_parsing","loc":["query","limit"],"msg":"Input should be a valid integer, unable to parse string as an integer","input":"ten"}]}`},
		{"limited", c.limited, "", 403, fxNoLLMPermission},
		{"no token", user{}, "", 401, fxNotAuthed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c.do(tc.u, "GET", "/query/valid-tags"+tc.query, nil).want(t, tc.status, tc.want)
		})
	}

	// A paused pair's tags are listed no more, as its documents are not
	// found; a document deleted takes its tags along.
	c.do(c.admin, "PUT", fmt.Sprintf("/manage/admin/cc-pair/%d/status", privA), `{"status":"PAUSED"}`).decode(t, new(any))
	c.do(c.curator, "GET", "/query/valid-tags?match_pattern=se", nil).want(t, 200, `{"tags":[]}`)
	c.do(c.admin, "DELETE", "/onyx-api/ingestion/memo", nil).want(t, 200, `null`)
	c.do(c.basic, "GET", "/query/valid-tags?match_pattern=team", nil).want(t, 200, `{"tags":[`+tag("team", "ops", "web")+`]}`)
}
