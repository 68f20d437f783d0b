package api_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/quarryhq/quarry"
)

// statusFixture is a realistic deployment: three groups, users in every
// role, private, public and sync pairs, and one connector with several
// credentials.
type statusFixture struct {
	e                             *env
	curator, global, basic, limit user
	g1, g2, g3                    int64
	conn                          map[string]int64 // connector name → id
	cred                          []int64          // credential ids, k1… as cred[1]…
	pair                          []int64          // pair ids, p1… as pair[1]…
}

func newStatusFixture(t *testing.T) *statusFixture {
	e := newEnv(t)
	f := &statusFixture{e: e, conn: map[string]int64{}, cred: make([]int64, 7), pair: make([]int64, 7)}
	f.curator = e.user(quarry.RoleCurator, "curator")
	f.global = e.user(quarry.RoleGlobalCurator, "global")
	f.basic = e.user(quarry.RoleBasic, "basic")
	f.limit = e.user(quarry.RoleLimited, "limited")
	f.g1 = e.createGroup("g1", []user{f.curator}, f.curator) // curated by curator
	f.g2 = e.createGroup("g2", []user{f.curator})            // curator is a plain member
	f.g3 = e.createGroup("g3", []user{f.global})
	for _, c := range []struct{ name, source string }{{"wiki", "confluence"}, {"chat", "slack"}, {"code", "github"}} {
		var out struct {
			ID int64 `json:"id"`
		}
		e.do(e.admin, "POST", "/manage/admin/connector", fmt.Sprintf(
			`{"name": %q, "source": %q, "input_type": "poll", "connector_specific_config": {"space": %q}, "refresh_freq": 600}`,
			c.name, c.source, c.name)).decode(t, &out)
		f.conn[c.name] = out.ID
	}
	sources := []string{"", "confluence", "confluence", "confluence", "slack", "github", "github"}
	for i := 1; i <= 6; i++ {
		owner, groups := e.admin, "[]"
		if i == 1 {
			groups = fmt.Sprintf("[%d]", f.g1)
		}
		if i == 6 {
			owner, groups = f.curator, fmt.Sprintf("[%d]", f.g1)
		}
		f.cred[i] = e.createCredential(owner, fmt.Sprintf(
			`{"credential_json": {"token": "secret-token-long-enough-number-%d", "user": "u%d"}, "admin_public": true, "source": %q, "name": "k%d", "groups": %s}`,
			i, i, sources[i], i, groups))
	}
	for i, p := range []struct {
		conn, access string
		groups       []int64
	}{
		{"wiki", "private", []int64{f.g1}},
		{"wiki", "public", []int64{}},
		{"wiki", "private", []int64{f.g3}},
		{"chat", "sync", []int64{}},
		{"code", "private", []int64{}},
		{"code", "private", []int64{f.g3, f.g2, f.g3}},
	} {
		k := i + 1
		var out struct {
			Data int64 `json:"data"`
		}
		e.do(e.admin, "PUT", fmt.Sprintf("/manage/connector/%d/credential/%d", f.conn[p.conn], f.cred[k]),
			map[string]any{"name": fmt.Sprintf("p%d", k), "access_type": p.access, "groups": p.groups}).decode(t, &out)
		f.pair[k] = out.Data
	}
	return f
}

// entry renders the expected ConnectorStatus of pair k as seen by someone
// who sees the credentials credIDs of its connector.
func (f *statusFixture) entry(k int, credIDs ...int) string {
	conns := []string{"", "wiki", "wiki", "wiki", "chat", "code", "code"}
	sources := map[string]string{"wiki": "confluence", "chat": "slack", "code": "github"}
	access := []string{"", "private", "public", "private", "sync", "private", "private"}
	groups := [][]int64{nil, {f.g1}, {}, {f.g3}, {}, {}, {f.g2, f.g3}}
	owner := f.e.admin
	credGroups := "[]"
	if k == 1 {
		credGroups = fmt.Sprintf("[%d]", f.g1)
	}
	if k == 6 {
		owner, credGroups = f.curator, fmt.Sprintf("[%d]", f.g1)
	}
	ids := make([]string, len(credIDs))
	for i, c := range credIDs {
		ids[i] = itoa(f.cred[c])
	}
	name := conns[k]
	return fmt.Sprintf(`{"cc_pair_id": %d, "name": "p%d",
		"connector": {"name": %q, "source": %q, "input_type": "poll", "connector_specific_config": {"space": %q},
			"refresh_freq": 600, "prune_freq": null, "indexing_start": null, "id": %d, "credential_ids": [%s],
			"time_created": %q, "time_updated": %q},
		"credential": {"credential_json": {"token": "secr...er-%d", "user": "••••••••••••"}, "admin_public": true,
			"source": %q, "name": "k%d", "curator_public": false, "groups": %s, "id": %d, "user_id": %q, "user_email": %q,
			"time_created": %q, "time_updated": %q},
		"access_type": %q, "groups": %s}`,
		f.pair[k], k, name, sources[name], name, f.conn[name], strings.Join(ids, ", "), testNowJSON, testNowJSON,
		k, sources[name], k, credGroups, f.cred[k], owner.id, owner.email, testNowJSON, testNowJSON,
		access[k], jsonInts(groups[k]))
}

func jsonInts(ids []int64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = itoa(id)
	}
	return "[" + strings.Join(s, ", ") + "]"
}

func TestConnectorStatusVisibility(t *testing.T) {
	f := newStatusFixture(t)
	e := f.e
	list := func(entries ...string) string { return "[" + strings.Join(entries, ",") + "]" }
	all := list(f.entry(1, 1, 2, 3), f.entry(2, 1, 2, 3), f.entry(3, 1, 2, 3), f.entry(4, 4), f.entry(5, 5, 6), f.entry(6, 5, 6))
	for _, tt := range []struct {
		name   string
		u      user
		status int
		want   string
	}{
		{"admin sees every pair", e.admin, 200, all},
		// Member of g1 (curated) and g2: p1 (g1), p2 (public), p4 (sync), p6 (g2).
		{"curator", f.curator, 200, list(f.entry(1, 1, 2), f.entry(2, 1, 2), f.entry(4, 4), f.entry(6, 6))},
		// Member of g3: p2 (public), p3 (g3), p4 (sync), p6 (g3).
		{"global curator", f.global, 200, list(f.entry(2, 2, 3), f.entry(3, 2, 3), f.entry(4, 4), f.entry(6, 6))},
		{"basic", f.basic, 403, `{"detail":"Access denied. User is not a curator or admin."}`},
		{"limited", f.limit, 403, `{"detail":"Access denied. User is not a curator or admin."}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e.do(tt.u, "GET", "/manage/admin/connector/status", nil).want(t, tt.status, tt.want)
			// A second request is served from the cache, with the same body.
			e.do(tt.u, "GET", "/manage/admin/connector/status", nil).want(t, tt.status, tt.want)
		})
	}
}

func TestConnectorStatusFilters(t *testing.T) {
	f := newStatusFixture(t)
	e := f.e
	list := func(entries ...string) string { return "[" + strings.Join(entries, ",") + "]" }
	for _, tt := range []struct {
		name, query string
		u           user
		want        string
	}{
		{"source", "?source=confluence", e.admin, list(f.entry(1, 1, 2, 3), f.entry(2, 1, 2, 3), f.entry(3, 1, 2, 3))},
		{"sources", "?source=slack&source=github", e.admin, list(f.entry(4, 4), f.entry(5, 5, 6), f.entry(6, 5, 6))},
		// credential_ids lists every visible pair's credential, whatever the filter.
		{"access types", "?access_type=sync&access_type=public", e.admin, list(f.entry(2, 1, 2, 3), f.entry(4, 4))},
		{"both", "?source=confluence&access_type=private", e.admin, list(f.entry(1, 1, 2, 3), f.entry(3, 1, 2, 3))},
		{"no match", "?source=gmail", e.admin, `[]`},
		{"curator and filter", "?access_type=private", f.curator, list(f.entry(1, 1, 2), f.entry(6, 6))},
		{"unknown parameters are ignored", "?sort=desc", f.curator, list(f.entry(1, 1, 2), f.entry(2, 1, 2), f.entry(4, 4), f.entry(6, 6))},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e.do(tt.u, "GET", "/manage/admin/connector/status"+tt.query, nil).want(t, 200, tt.want)
		})
	}
	t.Run("bad values", func(t *testing.T) {
		e.do(e.admin, "GET", "/manage/admin/connector/status?source=slack&source=nowhere&access_type=secret", nil).want(t, 422,
			`{"detail":[
				{"type":"enum","loc":["query","source",1],"msg":"`+enumMsg+`","input":"nowhere","ctx":{"expected":"`+enumExpected+`"}},
				{"type":"enum","loc":["query","access_type",0],"msg":"Input should be 'public', 'private' or 'sync'","input":"secret","ctx":{"expected":"'public', 'private' or 'sync'"}}]}`)
	})
}

// TestConnectorStatusStatements shows that a listing after a write costs a
// fixed number of SQL statements, whatever the number of pairs: it reads
// only what the write changed.
func TestConnectorStatusStatements(t *testing.T) {
	f := newStatusFixture(t)
	e := f.e
	count := func() int64 {
		// The listing is read once, then a write, so that the listing is
		// brought up to date from the change log.
		e.do(e.admin, "GET", "/manage/admin/connector/status", nil).decode(t, &[]any{})
		e.do(e.admin, "PATCH", "/manage/credential/"+itoa(f.cred[2]), `{"name": "k2"}`).decode(t, &struct{}{})
		before := e.db.Statements()
		var list []any
		e.do(e.admin, "GET", "/manage/admin/connector/status", nil).decode(t, &list)
		return e.db.Statements() - before
	}
	small := count()
	for i := range 40 {
		k := e.createCredential(e.admin, fmt.Sprintf(`{"credential_json": {"a": %d}, "admin_public": true, "source": "github"}`, i))
		e.do(e.admin, "PUT", fmt.Sprintf("/manage/connector/%d/credential/%d", f.conn["code"], k),
			map[string]any{"name": "bulk", "access_type": "private", "groups": []int64{f.g1, f.g2}}).decode(t, &struct{}{})
	}
	large := count()
	// Authentication and the data version; then, in one snapshot, the
	// data version, the change log, the pairs that use the changed
	// credential and the credential.
	if small != large || small != 6 {
		t.Errorf("the listing after a write ran %d statements for 6 pairs and %d for 46; want 6 for both", small, large)
	}
	cached := e.db.Statements()
	e.do(e.admin, "GET", "/manage/admin/connector/status", nil).decode(t, &[]any{})
	if n := e.db.Statements() - cached; n != 2 {
		t.Errorf("a cached listing ran %d statements, want 2 (authentication and the data version)", n)
	}
}

// TestConnectorStatusFresh checks that no write is ever hidden by the
// cache, on the server that made it or on another replica.
func TestConnectorStatusFresh(t *testing.T) {
	f := newStatusFixture(t)
	e, other := f.e, f.e.replica()
	names := func(s *env, u user) []string {
		var list []struct {
			Name       string `json:"name"`
			Credential struct {
				Name string `json:"name"`
			} `json:"credential"`
			Groups []int64 `json:"groups"`
		}
		s.do(u, "GET", "/manage/admin/connector/status", nil).decode(t, &list)
		var out []string
		for _, p := range list {
			out = append(out, p.Name+"/"+p.Credential.Name+fmt.Sprint(p.Groups))
		}
		return out
	}
	for _, s := range []*env{e, other} {
		names(s, e.admin) // warm both caches
		names(s, f.curator)
	}
	steps := []struct {
		name  string
		write func()
		check func(t *testing.T, got []string, u user)
	}{
		{"credential renamed on the other replica", func() {
			other.do(e.admin, "PATCH", "/manage/credential/"+itoa(f.cred[4]), `{"name": "renamed"}`).decode(t, &struct{}{})
		}, func(t *testing.T, got []string, u user) {
			if !slices.Contains(got, "p4/renamed[]") {
				t.Errorf("%v: want p4 with credential renamed", got)
			}
		}},
		{"pair removed", func() {
			e.do(e.admin, "DELETE", fmt.Sprintf("/manage/connector/%d/credential/%d", f.conn["chat"], f.cred[4]), nil).decode(t, &struct{}{})
		}, func(t *testing.T, got []string, u user) {
			for _, n := range got {
				if strings.HasPrefix(n, "p4/") {
					t.Errorf("%v: p4 still listed after its removal", got)
				}
			}
		}},
		{"curator joins g3", func() {
			other.do(e.admin, "PATCH", fmt.Sprintf("/manage/admin/user-group/%d", f.g3), map[string]any{"user_ids": []string{f.global.id, f.curator.id}}).decode(t, &struct{}{})
		}, func(t *testing.T, got []string, u user) {
			if u == f.curator && !slices.Contains(got, fmt.Sprintf("p3/k3[%d]", f.g3)) {
				t.Errorf("%v: curator does not see p3 after joining g3", got)
			}
		}},
	}
	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			step.write()
			for _, s := range []*env{e, other} {
				for _, u := range []user{e.admin, f.curator} {
					step.check(t, names(s, u), u)
				}
			}
		})
	}
}

// TestConnectorStatusPermissions: a grant of manage:connectors shows the
// listing as an admin sees it, to a basic user (whom the role gate refuses
// otherwise) and to a curator (who otherwise sees what its memberships
// show it); taken back, each sees what it did before. The data does not
// change meanwhile: the cached listing must answer each caller by its
// permissions as authenticated for the request.
func TestConnectorStatusPermissions(t *testing.T) {
	f := newStatusFixture(t)
	e := f.e
	list := func(entries ...string) string { return "[" + strings.Join(entries, ",") + "]" }
	all := list(f.entry(1, 1, 2, 3), f.entry(2, 1, 2, 3), f.entry(3, 1, 2, 3), f.entry(4, 4), f.entry(5, 5, 6), f.entry(6, 5, 6))
	curators := list(f.entry(1, 1, 2), f.entry(2, 1, 2), f.entry(4, 4), f.entry(6, 6))
	managers := e.createGroup("connector managers", []user{f.basic, f.curator})
	grant := func(enabled bool) {
		e.do(e.admin, "PUT", fmt.Sprintf("/manage/admin/user-group/%d/permissions", managers),
			map[string]any{"permission": "manage:connectors", "enabled": enabled}).decode(t, new(any))
	}
	status := func(u user) *response { return e.do(u, "GET", "/manage/admin/connector/status", nil) }
	status(e.admin).want(t, 200, all)
	status(f.curator).want(t, 200, curators)
	status(f.basic).want(t, 403, fxNotCurator)
	grant(true)
	status(f.curator).want(t, 200, all)
	status(f.basic).want(t, 200, all)
	status(f.global).want(t, 200, list(f.entry(2, 2, 3), f.entry(3, 2, 3), f.entry(4, 4), f.entry(6, 6)))
	grant(false)
	status(f.curator).want(t, 200, curators)
	status(f.basic).want(t, 403, fxNotCurator)
	status(e.admin).want(t, 200, all)
}
