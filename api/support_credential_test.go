package api_test

import (
	"fmt"
	"testing"

	"github.com/quarryhq/quarry/api"
)

// Credentials: create, read and delete (contract section 6; who sees what:
// decisions.md "Credential reads"). PATCH has its own tests.

// fxSecret is a credential_json with every kind of value, and fxMasked what
// responses show of it.
const (
	fxSecret = `{"api_key":"sk-live-0123456789abcdef-0123456789abcdef","password":"hunter2","port":5432,"authentication_method":"token","nested":{"pin":"1234"}}`
	fxMasked = `{"api_key":"sk-l...cdef","password":"••••••••••••","port":"*****","authentication_method":"token","nested":{"pin":"••••••••••••"}}`
)

func TestSupportCredentialCreate(t *testing.T) {
	c := newFxCast(t)
	for _, tt := range []struct {
		name   string
		u      user
		body   any
		status int
		want   fxCred // for 200; id and owner are filled in
		detail string // for other statuses: the whole body
	}{
		{"admin, every field", c.admin, fxCredentialBody("confluence", fxSecret, "name", "wiki", "admin_public", true, "curator_public", true), 200,
			fxCred{source: "confluence", masked: fxMasked, name: "wiki", adminPublic: true, curatorPublic: true}, ""},
		{"admin, any group", c.admin, fxCredentialBody("web", `{}`, "groups", []int64{c.gC, c.gA, c.gC}), 200,
			fxCred{source: "web", masked: `{}`, groups: []int64{c.gA, c.gC}}, ""},
		{"curator, curated group", c.curator, fxCredentialBody("web", fxSecret, "groups", []int64{c.gA}), 200,
			fxCred{source: "web", masked: fxMasked, groups: []int64{c.gA}}, ""},
		{"curator, curator_public without groups", c.curator, fxCredentialBody("web", fxSecret, "curator_public", true), 200,
			fxCred{source: "web", masked: fxMasked, curatorPublic: true}, ""},
		{"global curator, group it is a member of", c.global, fxCredentialBody("web", fxSecret, "groups", []int64{c.gB}), 200,
			fxCred{source: "web", masked: fxMasked, groups: []int64{c.gB}}, ""},
		{"basic, private", c.basic, fxCredentialBody("slack", fxSecret, "name", nil), 200,
			fxCred{source: "slack", masked: fxMasked}, ""},
		{"basic, admin_public", c.basic, fxCredentialBody("slack", fxSecret, "admin_public", true), 200,
			fxCred{source: "slack", masked: fxMasked, adminPublic: true}, ""},
		{"curator, no groups", c.curator, fxCredentialBody("web", fxSecret), 400, fxCred{}, `{"detail":"Curators must specify 1+ groups"}`},
		{"curator, admin_public is not public", c.curator, fxCredentialBody("web", fxSecret, "admin_public", true), 400, fxCred{}, `{"detail":"Curators must specify 1+ groups"}`},
		{"curator, group not curated", c.curator, fxCredentialBody("web", fxSecret, "groups", []int64{c.gB}), 400, fxCred{}, `{"detail":"Curators cannot control groups they don't curate"}`},
		{"curator, public with a group not curated", c.curator, fxCredentialBody("web", fxSecret, "curator_public", true, "groups", []int64{c.gC}), 400, fxCred{}, `{"detail":"Curators cannot control groups they don't curate"}`},
		{"curator, unknown group", c.curator, fxCredentialBody("web", fxSecret, "groups", []int64{c.gA, 9999}), 400, fxCred{}, `{"detail":"User group 9999 does not exist"}`},
		{"global curator, group it is not in", c.global, fxCredentialBody("web", fxSecret, "groups", []int64{c.gA}), 400, fxCred{}, `{"detail":"Curators cannot control groups they don't curate"}`},
		{"basic, groups", c.basic, fxCredentialBody("web", fxSecret, "groups", []int64{c.gA}), 400, fxCred{}, `{"detail":"Basic users can only create private credentials"}`},
		{"basic, curator_public", c.basic, fxCredentialBody("web", fxSecret, "curator_public", true), 400, fxCred{}, `{"detail":"Basic users can only create private credentials"}`},
		{"basic, unknown group", c.basic, fxCredentialBody("web", fxSecret, "groups", []int64{9999}), 400, fxCred{}, `{"detail":"User group 9999 does not exist"}`},
		{"limited", c.limited, fxCredentialBody("web", fxSecret), 403, fxCred{}, fxLimited},
		{"limited, bad body", c.limited, `[`, 403, fxCred{}, fxLimited},
		{"no token", user{}, fxCredentialBody("web", fxSecret), 401, fxCred{}, fxNotAuthed},
		{"missing fields", c.admin, `{"name":"n"}`, 422, fxCred{}, `{"detail":[
			{"type":"missing","loc":["body","credential_json"],"msg":"Field required","input":{"name":"n"}},
			{"type":"missing","loc":["body","admin_public"],"msg":"Field required","input":{"name":"n"}},
			{"type":"missing","loc":["body","source"],"msg":"Field required","input":{"name":"n"}}]}`},
		{"credential_json not an object", c.basic, fxCredentialBody("web", `"secret"`), 422, fxCred{},
			`{"detail":[{"type":"dict_type","loc":["body","credential_json"],"msg":"Input should be a valid dictionary","input":"secret"}]}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := c.do(tt.u, "POST", "/manage/credential", tt.body)
			if tt.status != 200 {
				r.want(t, tt.status, tt.detail)
				return
			}
			var out struct{ ID int64 }
			r.decode(t, &out)
			k := tt.want
			k.id, k.owner = out.ID, tt.u
			r.want(t, 200, fmt.Sprintf(`{"id":%d,"credential":%s}`, out.ID, k))
			if got := r.header.Get("ETag"); got != `"1"` {
				t.Errorf("ETag = %s, want \"1\"", got)
			}
			c.do(tt.u, "GET", fmt.Sprint("/manage/credential/", out.ID), nil).want(t, 200, k.String())
		})
	}
	t.Run("golden 422 bodies", func(t *testing.T) {
		for _, g := range fxGoldens(t, "credentialCreate") {
			t.Run(g.Name, func(t *testing.T) { c.replay(t, c.admin, "POST", "", g) })
		}
	})
}

func TestSupportCredentialRead(t *testing.T) {
	c := newFxCast(t)
	mk := func(u user, source string, extra ...any) fxCred {
		k := fxCred{owner: u, source: source, masked: fxMasked}
		for i := 0; i+1 < len(extra); i += 2 {
			switch extra[i] {
			case "admin_public":
				k.adminPublic = extra[i+1].(bool)
			case "curator_public":
				k.curatorPublic = extra[i+1].(bool)
			case "groups":
				k.groups = extra[i+1].([]int64)
			}
		}
		k.id = c.credential(u, source, fxSecret, extra...)
		return k
	}
	admin := mk(c.admin, "web")                                                  // the admin's own
	curA := mk(c.curator, "web", "groups", []int64{c.gA})                        // shared with gA
	curPub := mk(c.curator, "web", "curator_public", true, "admin_public", true) // public to curators and admins
	otherB := mk(c.other, "web", "groups", []int64{c.gB})                        // shared with gB
	otherC := mk(c.other, "web", "curator_public", true)                         // public to curators
	basic := mk(c.basic, "slack")                                                // private
	list := func(ks ...fxCred) string {
		s := "["
		for i, k := range ks {
			if i > 0 {
				s += ","
			}
			s += k.String()
		}
		return s + "]"
	}
	t.Run("list", func(t *testing.T) {
		for _, tt := range []struct {
			name string
			u    user
			want string
		}{
			// Admins: their own, ownerless and admin_public credentials.
			{"admin", c.admin, list(admin, curPub)},
			// Curators: what they may edit, curator_public ones, and those of
			// their groups.
			{"curator", c.curator, list(curA, curPub, otherB, otherC)},
			{"other curator", c.other, list(curPub, otherB, otherC)},
			{"global curator", c.global, list(curPub, otherB, otherC)},
			{"basic", c.basic, list(basic)},
			{"basic without credentials", c.fx.env.user("basic", "nobody"), `[]`},
		} {
			t.Run(tt.name, func(t *testing.T) {
				c.do(tt.u, "GET", "/manage/credential", nil).want(t, 200, tt.want)
			})
		}
	})
	hidden := func(id int64) string {
		return fmt.Sprintf(`{"detail":"Credential %d does not exist or does not belong to user"}`, id)
	}
	for _, tt := range []struct {
		name   string
		u      user
		path   string
		status int
		want   string
	}{
		{"admin, own", c.admin, fmt.Sprint("/manage/credential/", admin.id), 200, admin.String()},
		{"admin, admin_public", c.admin, fmt.Sprint("/manage/credential/", curPub.id), 200, curPub.String()},
		{"admin, a curator's group credential", c.admin, fmt.Sprint("/manage/credential/", curA.id), 404, hidden(curA.id)},
		{"admin, a basic user's", c.admin, fmt.Sprint("/manage/credential/", basic.id), 404, hidden(basic.id)},
		{"curator, own", c.curator, fmt.Sprint("/manage/credential/", curA.id), 200, curA.String()},
		{"curator, member of its group", c.curator, fmt.Sprint("/manage/credential/", otherB.id), 200, otherB.String()},
		{"curator, curator_public", c.curator, fmt.Sprint("/manage/credential/", otherC.id), 200, otherC.String()},
		{"curator, admin's private", c.curator, fmt.Sprint("/manage/credential/", admin.id), 404, hidden(admin.id)},
		{"other curator, group it is not in", c.other, fmt.Sprint("/manage/credential/", curA.id), 404, hidden(curA.id)},
		{"global curator, its group", c.global, fmt.Sprint("/manage/credential/", otherB.id), 200, otherB.String()},
		{"basic, own", c.basic, fmt.Sprint("/manage/credential/", basic.id), 200, basic.String()},
		{"basic, curator_public", c.basic, fmt.Sprint("/manage/credential/", otherC.id), 404, hidden(otherC.id)},
		{"basic, admin_public", c.basic, fmt.Sprint("/manage/credential/", curPub.id), 404, hidden(curPub.id)},
		{"unknown", c.admin, "/manage/credential/9999", 404, hidden(9999)},
		{"bad id", c.basic, "/manage/credential/abc", 422, `{"detail":[` + fxIntParsing("credential_id", "abc") + `]}`},
		{"limited", c.limited, fmt.Sprint("/manage/credential/", admin.id), 403, fxLimited},
		{"limited list", c.limited, "/manage/credential", 403, fxLimited},
		{"no token", user{}, "/manage/credential/abc", 401, fxNotAuthed},
		{"no token list", user{}, "/manage/credential", 401, fxNotAuthed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c.do(tt.u, "GET", tt.path, nil).want(t, tt.status, tt.want)
		})
	}
	t.Run("masking off", func(t *testing.T) {
		e := newEnv(t, func(cfg *api.Config) { cfg.MaskCredentials = false })
		f := fx{e}
		id := f.credential(e.admin, "web", fxSecret)
		e.do(e.admin, "GET", fmt.Sprint("/manage/credential/", id), nil).
			want(t, 200, fxCred{id: id, owner: e.admin, source: "web", masked: fxSecret}.String())
	})
}

func TestSupportCredentialDelete(t *testing.T) {
	c := newFxCast(t)
	used := c.credential(c.admin, "web", fxSecret)
	conn := c.connector(c.admin, "conn", "web")
	c.pair(c.admin, conn, used, "p", "public")
	curA := c.credential(c.curator, "web", fxSecret, "groups", []int64{c.gA})
	otherB := c.credential(c.other, "web", fxSecret, "groups", []int64{c.gB})
	basic := c.credential(c.basic, "web", fxSecret)
	basic2 := c.credential(c.basic, "web", fxSecret)
	pub := c.credential(c.other, "web", fxSecret, "curator_public", true, "admin_public", true)
	path := func(id int64) string { return fmt.Sprint("/manage/credential/", id) }
	hidden := func(id int64) string {
		return fmt.Sprintf(`{"detail":"Credential %d does not exist or does not belong to user"}`, id)
	}
	deleted := func(id int64) string {
		return fmt.Sprintf(`{"success":true,"message":"Credential deleted successfully","data":%d}`, id)
	}
	for _, tt := range []struct {
		name   string
		u      user
		path   string
		status int
		want   string
	}{
		{"another basic user", c.fx.env.user("basic", "basic 2"), path(basic), 404, hidden(basic)},
		{"curator, another's credential", c.curator, path(basic), 404, hidden(basic)},
		// A curator may see (and edit) otherB through its group, but only the
		// owner or an admin deletes.
		{"global curator, editable but not its own", c.global, path(otherB), 404, hidden(otherB)},
		{"curator, curator_public", c.curator, path(pub), 404, hidden(pub)},
		{"unknown", c.admin, path(9999), 404, hidden(9999)},
		{"bad id", c.basic, "/manage/credential/abc", 422, `{"detail":[` + fxIntParsing("credential_id", "abc") + `]}`},
		{"limited", c.limited, path(basic), 403, fxLimited},
		{"no token", user{}, path(basic), 401, fxNotAuthed},
		{"in use", c.admin, path(used), 409, `{"detail":"Cannot delete credential as it is still associated with 1 connector(s)"}`},
		{"owner, basic", c.basic, path(basic), 200, deleted(basic)},
		{"owner, deleted", c.basic, path(basic), 404, hidden(basic)},
		{"owner, curator", c.curator, path(curA), 200, deleted(curA)},
		// Admins delete what they may edit: another user's private
		// credential does not exist for them.
		{"admin, another's private credential", c.admin, path(basic2), 404, hidden(basic2)},
		{"owner, after the admin could not", c.basic, path(basic2), 200, deleted(basic2)},
		{"admin, admin_public", c.admin, path(pub), 200, deleted(pub)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c.do(tt.u, "DELETE", tt.path, nil).want(t, tt.status, tt.want)
		})
	}
	t.Run("gone from reads", func(t *testing.T) {
		c.do(c.basic, "GET", "/manage/credential", nil).want(t, 200, `[]`)
		c.do(c.curator, "GET", path(curA), nil).want(t, 404, hidden(curA))
	})
	t.Run("in use by two pairs", func(t *testing.T) {
		conn2 := c.connector(c.admin, "conn 2", "web")
		c.pair(c.admin, conn2, used, "p2", "public")
		c.do(c.admin, "DELETE", path(used), nil).want(t, 409, `{"detail":"Cannot delete credential as it is still associated with 2 connector(s)"}`)
	})
}
