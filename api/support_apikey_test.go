package api_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/quarryhq/quarry"
)

// API keys (contract sections 3 and 6; decisions.md "Users and keys").

// fxTokenRE is the shape of an API key: qry_ and 256 bits in base64url.
var fxTokenRE = regexp.MustCompile(`^qry_[A-Za-z0-9_-]{43}$`)

// fxDisplay is the form of a token that may be shown after creation.
func fxDisplay(token string) string {
	k := strings.TrimPrefix(token, "qry_")
	return "qry_" + k[:4] + "********" + k[len(k)-4:]
}

// fxKey is an API key record as the admin API returns it.
type fxKey struct {
	ID      int64   `json:"api_key_id"`
	Display string  `json:"api_key_display"`
	APIKey  *string `json:"api_key"`
	Name    *string `json:"api_key_name"`
	Role    string  `json:"api_key_role"`
	UserID  string  `json:"user_id"`
}

// fxKeyJSON renders the expected record; token is "" in listings.
func fxKeyJSON(id int64, token, display string, name any, role, userID string) string {
	var key any
	if token != "" {
		key = token
	}
	return fxJSON(map[string]any{"api_key_id": id, "api_key_display": display, "api_key": key,
		"api_key_name": name, "api_key_role": role, "user_id": userID})
}

func TestSupportAPIKeys(t *testing.T) {
	e := newEnv(t)
	f := fx{e}
	curator := e.user(quarry.RoleCurator, "curator")
	me := func(token string) *response { return e.do(user{token: token}, "GET", "/me", nil) }
	meJSON := func(id, label string, name any, role string) string {
		return fmt.Sprintf(`{"id":%q,"email":"api_key__%s@%s.quarry.invalid","name":%s,"role":%q,"is_active":true,"service_account":true,"created_at":%q,
			"groups":%s,"is_superuser":false,"is_verified":false,"preferences":{}}`,
			id, label, id, fxJSON(name), role, testNowJSON, "[]")
	}

	// create checks a new key's record and that its token works, and
	// returns the record.
	create := func(t *testing.T, body string, name any, label, role string) fxKey {
		t.Helper()
		r := e.do(e.admin, "POST", "/admin/api-key", body)
		var k fxKey
		r.decode(t, &k)
		if k.APIKey == nil || !fxTokenRE.MatchString(*k.APIKey) {
			t.Fatalf("api_key = %v, want qry_ and 43 base64url characters", k.APIKey)
		}
		r.want(t, 200, fxKeyJSON(k.ID, *k.APIKey, fxDisplay(*k.APIKey), name, role, k.UserID))
		me(*k.APIKey).want(t, 200, meJSON(k.UserID, label, name, role))
		return k
	}
	var bot, anon, adm fxKey
	t.Run("create", func(t *testing.T) {
		bot = create(t, `{"name":"CI bot","role":"curator"}`, "CI bot", "ci_bot", "curator")
		anon = create(t, `{}`, nil, "unnamed", "basic")
		adm = create(t, `{"name":null,"role":"admin"}`, nil, "unnamed", "admin")
		if bot.UserID == anon.UserID || anon.UserID == adm.UserID {
			t.Error("keys share a user; each key is its own service account")
		}
		// The new admin key works on admin routes.
		e.do(user{token: *adm.APIKey}, "GET", "/admin/api-key", nil).decode(t, &[]fxKey{})
	})
	t.Run("list shows no token", func(t *testing.T) {
		r := e.do(e.admin, "GET", "/admin/api-key", nil)
		r.want(t, 200, "["+
			fxKeyJSON(f.keyID(e.admin), "", fxDisplay(e.admin.token), "admin", "admin", e.admin.id)+","+
			fxKeyJSON(f.keyID(curator), "", fxDisplay(curator.token), "curator", "curator", curator.id)+","+
			fxKeyJSON(bot.ID, "", bot.Display, "CI bot", "curator", bot.UserID)+","+
			fxKeyJSON(anon.ID, "", anon.Display, nil, "basic", anon.UserID)+","+
			fxKeyJSON(adm.ID, "", adm.Display, nil, "admin", adm.UserID)+"]")
		for _, tok := range []string{e.admin.token, *bot.APIKey, *anon.APIKey, *adm.APIKey} {
			if strings.Contains(string(r.body), strings.TrimPrefix(tok, "qry_")) {
				t.Errorf("the listing shows a token: %s", r.body)
			}
		}
	})
	t.Run("regenerate", func(t *testing.T) {
		r := e.do(e.admin, "POST", fmt.Sprintf("/admin/api-key/%d/regenerate", bot.ID), nil)
		var k fxKey
		r.decode(t, &k)
		if k.APIKey == nil || !fxTokenRE.MatchString(*k.APIKey) || *k.APIKey == *bot.APIKey {
			t.Fatalf("api_key = %v, want a new token", k.APIKey)
		}
		r.want(t, 200, fxKeyJSON(bot.ID, *k.APIKey, fxDisplay(*k.APIKey), "CI bot", "curator", bot.UserID))
		me(*bot.APIKey).want(t, 401, fxNotAuthed)
		me(*k.APIKey).want(t, 200, meJSON(bot.UserID, "ci_bot", "CI bot", "curator"))
		var keys []fxKey
		e.do(e.admin, "GET", "/admin/api-key", nil).decode(t, &keys)
		for _, l := range keys {
			if l.ID == bot.ID && l.Display != fxDisplay(*k.APIKey) {
				t.Errorf("listed display = %s, want %s", l.Display, fxDisplay(*k.APIKey))
			}
		}
		bot = k
	})
	t.Run("delete", func(t *testing.T) {
		// What the key's user owns keeps its owner.
		kid := f.credential(user{token: *adm.APIKey, id: adm.UserID}, "web", fxSecret, "admin_public", true)
		e.do(e.admin, "DELETE", fmt.Sprint("/admin/api-key/", adm.ID), nil).want(t, 200, `null`)
		me(*adm.APIKey).want(t, 401, fxNotAuthed)
		e.do(user{token: *adm.APIKey}, "GET", "/admin/api-key", nil).want(t, 401, fxNotAuthed)
		e.do(e.admin, "GET", fmt.Sprint("/manage/credential/", kid), nil).want(t, 200, fxCred{id: kid, source: "web", masked: fxMasked, adminPublic: true,
			owner: user{id: adm.UserID, email: fmt.Sprintf("api_key__unnamed@%s.quarry.invalid", adm.UserID)}}.String())
		e.do(e.admin, "DELETE", fmt.Sprint("/admin/api-key/", adm.ID), nil).
			want(t, 404, fmt.Sprintf(`{"detail":"API key with id %d does not exist"}`, adm.ID))
		e.do(e.admin, "POST", fmt.Sprintf("/admin/api-key/%d/regenerate", adm.ID), nil).
			want(t, 404, fmt.Sprintf(`{"detail":"API key with id %d does not exist"}`, adm.ID))
	})
	for _, tt := range []struct {
		name         string
		u            user
		method, path string
		body         any
		status       int
		want         string
	}{
		{"create, curator", curator, "POST", "/admin/api-key", `{}`, 403, fxNotAdmin},
		{"list, curator", curator, "GET", "/admin/api-key", nil, 403, fxNotAdmin},
		{"regenerate, curator", curator, "POST", fmt.Sprintf("/admin/api-key/%d/regenerate", bot.ID), nil, 403, fxNotAdmin},
		{"delete, curator", curator, "DELETE", fmt.Sprint("/admin/api-key/", bot.ID), nil, 403, fxNotAdmin},
		{"delete, curator, bad id", curator, "DELETE", "/admin/api-key/abc", nil, 403, fxNotAdmin},
		{"create, no token", user{}, "POST", "/admin/api-key", `{}`, 401, fxNotAuthed},
		{"list, no token", user{}, "GET", "/admin/api-key", nil, 401, fxNotAuthed},
		{"regenerate, no token", user{}, "POST", "/admin/api-key/abc/regenerate", nil, 401, fxNotAuthed},
		{"delete, no token", user{}, "DELETE", "/admin/api-key/abc", nil, 401, fxNotAuthed},
		{"create, no body", e.admin, "POST", "/admin/api-key", nil, 422, fxMissingBody},
		{"create, bad role", e.admin, "POST", "/admin/api-key", `{"name":"x","role":"owner"}`, 422,
			`{"detail":[{"type":"enum","loc":["body","role"],"msg":"Input should be 'admin', 'global_curator', 'curator', 'basic' or 'limited'","input":"owner","ctx":{"expected":"'admin', 'global_curator', 'curator', 'basic' or 'limited'"}}]}`},
		{"create, name not a string", e.admin, "POST", "/admin/api-key", `{"name":["x"]}`, 422,
			`{"detail":[{"type":"string_type","loc":["body","name"],"msg":"Input should be a valid string","input":["x"]}]}`},
		{"regenerate, bad id", e.admin, "POST", "/admin/api-key/abc/regenerate", nil, 422, `{"detail":[` + fxIntParsing("api_key_id", "abc") + `]}`},
		{"delete, bad id", e.admin, "DELETE", "/admin/api-key/1e3", nil, 422, `{"detail":[` + fxIntParsing("api_key_id", "1e3") + `]}`},
		{"regenerate, unknown", e.admin, "POST", "/admin/api-key/9999/regenerate", nil, 404, `{"detail":"API key with id 9999 does not exist"}`},
		{"delete, unknown", e.admin, "DELETE", "/admin/api-key/9999", nil, 404, `{"detail":"API key with id 9999 does not exist"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e.do(tt.u, tt.method, tt.path, tt.body).want(t, tt.status, tt.want)
		})
	}
	t.Run("golden 422 bodies", func(t *testing.T) {
		for _, g := range fxGoldens(t, "apiKeyCreate") {
			t.Run(g.Name, func(t *testing.T) { f.replay(t, e.admin, "POST", "", g) })
		}
	})
}
