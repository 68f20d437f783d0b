package api_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api"
)

// The tests of signing in with a local account (email and password), of
// sessions and their cookie, and of managing people.

// withLocalAccounts turns local accounts on, registration open.
func withLocalAccounts(c *api.Config) {
	c.SignIn.LocalAccounts = true
	c.SignIn.Registration.Mode = quarry.RegistrationOpen
}

const (
	formType   = "application/x-www-form-urlencoded"
	goodSecret = "correct horse battery staple"
)

// register registers a local account and returns its id.
func (e *env) register(email, password string) string {
	e.t.Helper()
	var u struct {
		ID string `json:"id"`
	}
	r := e.do(user{}, "POST", "/auth/register", map[string]any{"email": email, "password": password})
	if r.status != 201 {
		e.t.Fatalf("registering %s: %d %s", email, r.status, r.body)
	}
	r.decode(e.t, &u)
	return u.ID
}

// login posts the sign-in form.
func (e *env) login(email, password string, headers ...string) *response {
	e.t.Helper()
	form := url.Values{"username": {email}, "password": {password}}.Encode()
	return e.do(user{}, "POST", "/auth/login", form, append([]string{"Content-Type", formType}, headers...)...)
}

// sessionCookie returns the session cookie a response set, or nil.
func sessionCookie(r *response) *http.Cookie {
	for _, c := range (&http.Response{Header: r.header}).Cookies() {
		if c.Name == "fastapiusersauth" {
			return c
		}
	}
	return nil
}

// person registers email and signs it in: the user's requests carry the
// session cookie.
func (e *env) person(email string) user {
	e.t.Helper()
	id := e.register(email, goodSecret)
	r := e.login(email, goodSecret)
	c := sessionCookie(r)
	if r.status != 204 || c == nil {
		e.t.Fatalf("signing in %s: %d %s", email, r.status, r.body)
	}
	return user{cookie: c.Value, id: id, email: email}
}

// personJSON is the expected GET /me of a person made by e.person.
func personJSON(u user, role quarry.Role, groups ...int64) string {
	return fmt.Sprintf(`{"id":%q,"email":%q,"name":null,"role":%q,"is_active":true,"service_account":false,"created_at":%q,"groups":%s,
		"is_superuser":false,"is_verified":false,"preferences":{}}`,
		u.id, u.email, role, testNowJSON, fxJSON(fxIDs(groups)))
}

func TestLocalAccounts(t *testing.T) {
	e := newEnv(t, withLocalAccounts)
	e.do(user{}, "GET", "/auth/type", nil).want(t, 200, `{"auth_type":"basic","requires_verification":false,
		"anonymous_user_enabled":false,"password_min_length":12,"local_accounts":true,"registration":"open","oidc":null}`)

	// The first person becomes an admin, the next ones basic users.
	first := e.do(user{}, "POST", "/auth/register", `{"email": " Ada@Example.com", "password": "`+goodSecret+`",
		"username": "ignored", "role": "admin", "is_superuser": true}`)
	var ada struct{ ID string }
	first.decode(t, &ada)
	first.want(t, 201, fmt.Sprintf(`{"id":%q,"email":"Ada@Example.com","is_active":true,"is_superuser":false,"is_verified":false,"role":"admin"}`, ada.ID))
	bob := e.person("bob@example.com")
	e.do(bob, "GET", "/me", nil).want(t, 200, personJSON(bob, quarry.RoleBasic))

	t.Run("register refusals", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			body any
			want string
		}{
			{"email taken in another case", map[string]any{"email": "ADA@example.COM", "password": goodSecret},
				`{"detail":"A user with this email already exists"}`},
			{"not an email", map[string]any{"email": "ada", "password": goodSecret}, `{"detail":"\"ada\" is not a valid email address"}`},
			{"short", map[string]any{"email": "c@example.com", "password": "short"},
				`{"detail":"The password must be at least 12 characters long"}`},
			{"common", map[string]any{"email": "c@example.com", "password": "1qaz2wsx3edc"},
				`{"detail":"The password is one of the most common passwords; choose another"}`},
			{"the email in it", map[string]any{"email": "carol@example.com", "password": "Carol's password!"},
				`{"detail":"The password must not contain the email address or its name part"}`},
			{"over 1024 bytes", map[string]any{"email": "c@example.com", "password": strings.Repeat("é", 600)},
				`{"detail":"The password is longer than 1024 bytes"}`},
		} {
			e.do(user{}, "POST", "/auth/register", tc.body).want(t, 400, tc.want)
		}
		e.do(user{}, "POST", "/auth/register", `{"email": "c@example.com"}`).want(t, 422,
			`{"detail":[{"type":"missing","loc":["body","password"],"msg":"Field required","input":{"email":"c@example.com"}}]}`)
		// A 10 MB password is refused before it is read.
		e.do(user{}, "POST", "/auth/register", `{"email": "c@example.com", "password": "`+strings.Repeat("x", 10<<20)+`"}`).
			want(t, 413, `{"detail":"Request body is larger than 1048576 bytes"}`)
		e.login("ada@example.com", strings.Repeat("x", 10<<20)).want(t, 413, `{"detail":"Request body is larger than 1048576 bytes"}`)
		e.do(e.admin, "GET", "/manage/users/accepted", nil).want(t, 200, fmt.Sprintf(`{"total_items":2,"items":[%s,%s]}`,
			snapshotJSON(ada.ID, "Ada@Example.com", "admin", true, nil), snapshotJSON(bob.id, "bob@example.com", "basic", true, nil)))
	})

	t.Run("sign in", func(t *testing.T) {
		r := e.login("ADA@example.com", goodSecret)
		if r.status != 204 || len(r.body) != 0 {
			t.Fatalf("sign-in: %d %s", r.status, r.body)
		}
		c := sessionCookie(r)
		if c == nil || !quarry.ValidSessionTokenFormat(c.Value) || !c.HttpOnly || c.Secure || c.SameSite != http.SameSiteLaxMode ||
			c.Path != "/" || c.MaxAge != 7*24*3600 {
			t.Fatalf("session cookie %+v: want an HttpOnly, SameSite=Lax session token on / for 7 days (not Secure over http)", c)
		}
		adaU := user{cookie: c.Value, id: ada.ID, email: "Ada@Example.com"}
		e.do(adaU, "GET", "/me", nil).want(t, 200, personJSON(adaU, quarry.RoleAdmin))
		// The same token works as a bearer token (Onyx's clients do that).
		e.do(user{token: c.Value}, "GET", "/me", nil).want(t, 200, personJSON(adaU, quarry.RoleAdmin))
		// The person works with the API as any caller does, and owns what
		// they make.
		cred := e.createCredential(adaU, `{"credential_json": {"token": "ada-secret-token-1234"}, "admin_public": false, "source": "web"}`)
		var got struct {
			UserEmail string `json:"user_email"`
		}
		e.do(adaU, "GET", fmt.Sprintf("/manage/credential/%d", cred), nil).decode(t, &got)
		if got.UserEmail != "Ada@Example.com" {
			t.Errorf("owner %q, want Ada@Example.com", got.UserEmail)
		}
		e.do(bob, "GET", "/manage/admin/connector/status", nil).want(t, 403, fxNotCurator)
	})

	t.Run("wrong credentials, the same answer", func(t *testing.T) {
		const bad = `{"detail":"Wrong email or password"}`
		e.login("ada@example.com", "not the password").want(t, 400, bad)
		e.login("nobody@example.com", goodSecret).want(t, 400, bad)
		e.login("", goodSecret).want(t, 422, `{"detail":[{"type":"missing","loc":["body","username"],"msg":"Field required","input":null}]}`)
		e.do(user{}, "POST", "/auth/login", "username=ada%40example.com", "Content-Type", formType).want(t, 422,
			`{"detail":[{"type":"missing","loc":["body","password"],"msg":"Field required","input":null}]}`)
		// A service account has no password.
		e.login(e.admin.email, goodSecret).want(t, 400, bad)
	})

	t.Run("sign out", func(t *testing.T) {
		u := e.person("dora@example.com")
		r := e.do(u, "POST", "/auth/logout", nil)
		if r.status != 204 {
			t.Fatalf("sign-out: %d %s", r.status, r.body)
		}
		if c := sessionCookie(r); c == nil || c.MaxAge >= 0 {
			t.Errorf("sign-out cookie %+v, want it cleared", c)
		}
		r = e.do(u, "GET", "/me", nil)
		r.want(t, 401, fxNotAuthed)
		if got := r.header.Get("WWW-Authenticate"); got != `Bearer error="invalid_token"` {
			t.Errorf("WWW-Authenticate %q", got)
		}
		// Signing out with an API key ends nothing.
		if r := e.do(e.admin, "POST", "/auth/logout", nil); r.status != 204 {
			t.Errorf("sign-out with a key: %d", r.status)
		}
		e.do(e.admin, "GET", "/me", nil).decode(t, new(any))
	})
}

// snapshotJSON is the expected FullUserSnapshot of a person made in a test.
func snapshotJSON(id, email, role string, active bool, groups []quarry.GroupBrief, issuers ...string) string {
	return namedSnapshotJSON(id, email, nil, role, active, groups, issuers...)
}

// namedSnapshotJSON is snapshotJSON for a person with a name (a string) or
// none (nil).
func namedSnapshotJSON(id, email string, name any, role string, active bool, groups []quarry.GroupBrief, issuers ...string) string {
	if d := quarry.DefaultGroupFor(quarry.Role(role)); d != "" {
		groups = append([]quarry.GroupBrief{{ID: defaultGroupIDs[d], Name: d}}, groups...)
	}
	if groups == nil {
		groups = []quarry.GroupBrief{}
	}
	if issuers == nil {
		issuers = []string{}
	}
	return fmt.Sprintf(`{"id":%q,"email":%q,"role":%q,"account_type":"STANDARD","is_active":%v,"password_configured":%v,
		"personal_name":%s,"created_at":%q,"updated_at":%q,"groups":%s,"is_scim_synced":false,"craft_enabled":null,"sso_issuers":%s,
		"scim_active":null}`,
		id, email, role, active, len(issuers) == 0, fxJSON(name), testNowJSON, testNowJSON, fxJSON(groups), fxJSON(issuers))
}

func TestCrossSiteRequests(t *testing.T) {
	e := newEnv(t, withLocalAccounts)
	ada := e.person("ada@example.com")
	const refused = `{"detail":"Cross-origin request refused"}`
	body := `{"credential_json": {"k": "cross-site-secret-1"}, "admin_public": false, "source": "web"}`
	for _, tc := range []struct {
		name    string
		headers []string
	}{
		{"another site", []string{"Sec-Fetch-Site", "cross-site"}},
		{"a sibling site", []string{"Sec-Fetch-Site", "same-site"}},
		{"another origin, older browser", []string{"Origin", "https://evil.example"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.do(ada, "POST", "/manage/credential", body, tc.headers...).want(t, 403, refused)
			e.do(ada, "POST", "/auth/logout", nil, tc.headers...).want(t, 403, refused)
			// Login cross-site request forgery (signing a browser in as
			// someone else) is refused too.
			e.login("ada@example.com", goodSecret, tc.headers...).want(t, 403, refused)
			// Reading is allowed: the browser keeps the answer from the
			// other site.
			e.do(ada, "GET", "/me", nil, tc.headers...).want(t, 200, personJSON(ada, quarry.RoleAdmin))
			// Non-browser clients and bearer tokens are not concerned.
			e.do(user{token: ada.cookie}, "POST", "/manage/credential", body, tc.headers...).decode(t, new(any))
		})
	}
	t.Run("same origin", func(t *testing.T) {
		e.do(ada, "POST", "/manage/credential", body, "Sec-Fetch-Site", "same-origin").decode(t, new(any))
		e.do(ada, "POST", "/manage/credential", body, "Origin", e.srv.URL).decode(t, new(any))
		e.do(ada, "POST", "/manage/credential", body).decode(t, new(any)) // curl
	})
}

func TestSignInThrottle(t *testing.T) {
	e := newEnv(t, withLocalAccounts)
	e.register("ada@example.com", goodSecret)
	const bad = `{"detail":"Wrong email or password"}`
	for range 10 {
		e.login("ada@example.com", "guess guess guess").want(t, 400, bad)
	}
	// Locked: even the right password is refused until the window ends.
	for _, pw := range []string{"guess guess guess", goodSecret} {
		r := e.login("Ada@example.com", pw)
		r.want(t, 429, `{"detail":"Too many failed sign-ins; try again in 15 minutes"}`)
		if got := r.header.Get("Retry-After"); got != "900" {
			t.Errorf("Retry-After %q, want 900", got)
		}
	}
	// The address is not locked for another account (its limit is 100).
	e.register("bob@example.com", goodSecret)
	if r := e.login("bob@example.com", goodSecret); r.status != 204 {
		t.Errorf("another account: %d %s", r.status, r.body)
	}
	// An unknown email is throttled the same way, so that throttling does
	// not tell which emails have accounts.
	for range 10 {
		e.login("nobody@example.com", "guess guess guess").want(t, 400, bad)
	}
	e.login("nobody@example.com", "guess guess guess").want(t, 429, `{"detail":"Too many failed sign-ins; try again in 15 minutes"}`)
	// Attempts made at once are all counted: no more than the limit get a
	// password checked.
	e.register("cat@example.com", goodSecret)
	var wg sync.WaitGroup
	statuses := make([]int, 40)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = e.login("cat@example.com", "guess guess guess").status
		}()
	}
	wg.Wait()
	checked := 0
	for _, st := range statuses {
		switch st {
		case 400:
			checked++
		case 429:
		default:
			t.Errorf("a sign-in at once answered %d", st)
		}
	}
	if checked != 10 {
		t.Errorf("%d of 40 sign-ins at once had their password checked, want 10", checked)
	}
	// The failures are in the audit log, without the passwords.
	if failed := fxCount(fx{e}.audit("resource_type=user&limit=1000"), "user.sign_in_failed"); failed != 30 {
		t.Errorf("%d sign_in_failed entries, want 30", failed)
	}
}

func TestRegistrationModes(t *testing.T) {
	for _, tc := range []struct {
		mode string
		want string
	}{
		{quarry.RegistrationInvite, `{"detail":"Registration is by invitation only, and this email has not been invited"}`},
		{quarry.RegistrationClosed, `{"detail":"Registration is closed; sign in with single sign-on or ask an admin"}`},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			e := newEnv(t, func(c *api.Config) {
				c.SignIn.LocalAccounts = true
				c.SignIn.Registration = quarry.RegistrationPolicy{Mode: tc.mode, Domains: []string{"example.com"}}
			})
			guest := map[string]any{"email": "guest@example.com", "password": goodSecret}
			if tc.mode == quarry.RegistrationClosed {
				// Closed means closed: for the first person, for the invited.
				e.do(user{}, "POST", "/auth/register", guest).want(t, 403, tc.want)
				e.do(e.admin, "PUT", "/manage/admin/users", `{"emails": ["guest@example.com"]}`).want(t, 200, `1`)
				e.do(user{}, "POST", "/auth/register", guest).want(t, 403, tc.want)
				return
			}
			e.register("first@example.com", goodSecret) // the first always may
			e.do(user{}, "POST", "/auth/register", guest).want(t, 403, tc.want)
			e.do(e.admin, "PUT", "/manage/admin/users", `{"emails": ["Guest@example.com", "first@example.com", "boss@example.com"]}`).want(t, 200, `2`)
			e.do(e.admin, "GET", "/manage/users/invited", nil).want(t, 200, fmt.Sprintf(`[
				{"email":"boss@example.com","invited_by":%q,"created_at":%q,"expires_at":null},
				{"email":"Guest@example.com","invited_by":%q,"created_at":%q,"expires_at":null}]`, e.admin.email, testNowJSON, e.admin.email, testNowJSON))
			// Registering takes the token of the invitation's link.
			var links []struct{ Token string }
			e.do(e.admin, "POST", "/manage/admin/invitations", `{"emails": ["Guest@example.com", "boss@example.com"]}`).decode(t, &links)
			guest["invitation_token"] = links[0].Token
			if r := e.do(user{}, "POST", "/auth/register", guest); r.status != 201 {
				t.Fatalf("the guest with its link: %d %s", r.status, r.body)
			}
			// Nobody becomes an admin by registering: a local account's email
			// is not proven.
			var boss string
			e.do(user{}, "POST", "/auth/register", map[string]any{"email": "boss@example.com", "password": goodSecret,
				"invitation_token": links[1].Token}).decode(t, &struct{ ID *string }{&boss})
			e.do(e.admin, "GET", "/manage/users/invited", nil).want(t, 200, `[]`)
			e.do(e.admin, "GET", "/manage/users/accepted?q=boss", nil).want(t, 200,
				`{"total_items":1,"items":[`+snapshotJSON(boss, "boss@example.com", "basic", true, nil)+`]}`)
			e.do(e.admin, "PATCH", "/manage/admin/remove-invited-user", `{"user_email": "x@example.com"}`).want(t, 404,
				`{"detail":"No invitation for x@example.com"}`)
			// Invited or not, an email of another domain is refused.
			e.do(e.admin, "PUT", "/manage/admin/users", `{"emails": ["out@elsewhere.org"]}`).want(t, 200, `1`)
			e.do(user{}, "POST", "/auth/register", map[string]any{"email": "out@elsewhere.org", "password": goodSecret}).want(t, 403,
				`{"detail":"Accounts are for emails of these domains only: example.com"}`)
		})
	}
	t.Run("local accounts off", func(t *testing.T) {
		e := newEnv(t)
		const off = `{"detail":"Signing in with a password is turned off; use single sign-on"}`
		e.do(user{}, "POST", "/auth/register", map[string]any{"email": "a@example.com", "password": goodSecret}).want(t, 403, off)
		e.login("a@example.com", goodSecret).want(t, 403, off)
		e.do(user{}, "GET", "/auth/type", nil).want(t, 200, `{"auth_type":"basic","requires_verification":false,
			"anonymous_user_enabled":false,"password_min_length":12,"local_accounts":false,"registration":"","oidc":null}`)
	})
}

// TestSessionLifetimes moves the clock past the idle and absolute ends of
// sessions.
func TestSessionLifetimes(t *testing.T) {
	var mu sync.Mutex
	now := testNow
	e := newEnv(t, withLocalAccounts, func(c *api.Config) {
		c.SignIn.Sessions = quarry.SessionPolicy{Idle: time.Hour, Absolute: 3 * time.Hour}
	})
	e.db.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	u := e.person("ada@example.com")
	for range 4 {
		advance(50 * time.Minute)
		if r := e.do(u, "GET", "/me", nil); r.status != 200 && now.Sub(testNow) < 3*time.Hour {
			t.Fatalf("a session in use after %v: %d", now.Sub(testNow), r.status)
		}
	}
	// 200 minutes after sign-in: past the absolute end.
	e.do(u, "GET", "/me", nil).want(t, 401, fxNotAuthed)

	u = e.person("bob@example.com")
	advance(61 * time.Minute)
	e.do(u, "GET", "/me", nil).want(t, 401, fxNotAuthed)
}

func TestManagePeople(t *testing.T) {
	e := newEnv(t, withLocalAccounts)
	ada := e.person("ada@example.com") // the first: admin
	bob := e.person("bob@example.com")
	cat := e.person("cat@example.com")
	f := fx{e}

	t.Run("listing", func(t *testing.T) {
		for _, tc := range []struct{ query, want string }{
			{"page_size=2", `{"total_items":3,"items":[` + snapshotJSON(ada.id, ada.email, "admin", true, nil) + `,` +
				snapshotJSON(bob.id, bob.email, "basic", true, nil) + `]}`},
			{"page_size=2&page_num=1", `{"total_items":3,"items":[` + snapshotJSON(cat.id, cat.email, "basic", true, nil) + `]}`},
			{"page=2&page_size=2", `{"total_items":3,"items":[` + snapshotJSON(cat.id, cat.email, "basic", true, nil) + `]}`},
			{"roles=admin", `{"total_items":1,"items":[` + snapshotJSON(ada.id, ada.email, "admin", true, nil) + `]}`},
			{"q=CAT&status=live", `{"total_items":1,"items":[` + snapshotJSON(cat.id, cat.email, "basic", true, nil) + `]}`},
			{"status=invited", `{"total_items":0,"items":[]}`},
			{"is_active=false", `{"total_items":0,"items":[]}`},
		} {
			e.do(ada, "GET", "/manage/users/accepted?"+tc.query, nil).want(t, 200, tc.want)
		}
		e.do(bob, "GET", "/manage/users/accepted", nil).want(t, 403, fxNotAdmin)
		e.do(ada, "GET", "/manage/users/accepted?page_size=0", nil).want(t, 422, `{"detail":[{"type":"greater_than_equal",
			"loc":["query","page_size"],"msg":"Input should be greater than or equal to 1","input":"0","ctx":{"ge":1}}]}`)
	})

	t.Run("roles", func(t *testing.T) {
		for _, tc := range []struct {
			body   string
			status int
			want   string
		}{
			{`{"user_email": "BOB@example.com", "new_role": "global_curator"}`, 200, `null`},
			{`{"user_email": "cat@example.com", "new_role": "curator"}`, 400, `{"detail":"Curator role must be set via the User Group Menu"}`},
			{fmt.Sprintf(`{"user_email": %q, "new_role": "basic"}`, e.admin.email), 400,
				`{"detail":"Cannot change the role of a service account user: make a new API key instead"}`},
			{`{"user_email": "nobody@example.com", "new_role": "basic"}`, 404, `{"detail":"User not found"}`},
		} {
			e.do(ada, "PATCH", "/manage/set-user-role", tc.body).want(t, tc.status, tc.want)
		}
		e.do(bob, "GET", "/me", nil).want(t, 200, personJSON(bob, quarry.RoleGlobalCurator))
		// Onyx's UserManager reads role and is_active from /me.
		f.role(bob)
		// Onyx's explicit_override makes a curator of no group directly.
		eve := e.person("eve@example.com")
		e.do(ada, "PATCH", "/manage/set-user-role", `{"user_email": "eve@example.com", "new_role": "curator", "explicit_override": true}`).want(t, 200, `null`)
		e.do(eve, "GET", "/me", nil).want(t, 200, personJSON(eve, quarry.RoleCurator))
	})

	t.Run("groups and curators, as for service accounts", func(t *testing.T) {
		conn := f.connector(e.admin, "wiki", "web")
		cred := f.credential(e.admin, "web", `{"k":"group-test-secret"}`, "admin_public", true)
		cred2 := f.credential(e.admin, "web", `{"k":"group-test-secret-2"}`, "admin_public", true)
		g := f.group("people", []user{cat, ada})
		f.setCurator(g, cat, true)
		e.do(cat, "GET", "/me", nil).want(t, 200, personJSON(cat, quarry.RoleCurator, g))
		inGroup := f.pair(e.admin, conn, cred, "in group", quarry.AccessPrivate, g)
		f.pair(e.admin, conn, cred2, "private elsewhere", quarry.AccessPrivate)
		var rows []struct {
			ID int64 `json:"cc_pair_id"`
		}
		e.do(cat, "GET", "/manage/admin/connector/status", nil).decode(t, &rows)
		if len(rows) != 1 || rows[0].ID != inGroup {
			t.Errorf("the curator sees %+v, want only pair %d", rows, inGroup)
		}
		e.do(ada, "GET", "/manage/users/accepted?q=cat", nil).want(t, 200, `{"total_items":1,"items":[`+
			snapshotJSON(cat.id, cat.email, "curator", true, []quarry.GroupBrief{{ID: g, Name: "people"}})+`]}`)
	})

	t.Run("sessions", func(t *testing.T) {
		second := e.login("cat@example.com", goodSecret, "User-Agent", "second browser")
		var sessions []quarry.Session
		e.do(ada, "GET", "/manage/admin/sessions?user_email=Cat@example.com", nil).decode(t, &sessions)
		if len(sessions) != 2 || sessions[0].UserAgent != "second browser" || sessions[0].UserEmail != cat.email ||
			sessions[0].Method != "password" || sessions[0].IP != fxLoopback {
			t.Fatalf("cat's sessions %+v", sessions)
		}
		e.do(ada, "DELETE", fmt.Sprintf("/manage/admin/sessions/%d", sessions[0].ID), nil).want(t, 200, `null`)
		e.do(user{cookie: sessionCookie(second).Value}, "GET", "/me", nil).want(t, 401, fxNotAuthed)
		e.do(cat, "GET", "/me", nil).decode(t, new(any))
		e.do(ada, "DELETE", fmt.Sprintf("/manage/admin/sessions/%d", sessions[0].ID), nil).want(t, 404,
			fmt.Sprintf(`{"detail":"Session %d does not exist"}`, sessions[0].ID))
		e.do(ada, "POST", "/manage/admin/end-user-sessions", `{"user_email": "cat@example.com"}`).want(t, 200, `{"ended":1}`)
		e.do(cat, "GET", "/me", nil).want(t, 401, fxNotAuthed)
		cat = user{cookie: sessionCookie(e.login("cat@example.com", goodSecret)).Value, id: cat.id, email: cat.email}
	})

	t.Run("deactivation", func(t *testing.T) {
		key := e.user(quarry.RoleBasic, "cat's script")
		e.do(ada, "PATCH", "/manage/admin/deactivate-user", `{"user_email": "cat@example.com"}`).want(t, 200, `null`)
		e.do(ada, "PATCH", "/manage/admin/deactivate-user", fmt.Sprintf(`{"user_email": %q}`, key.email)).want(t, 200, `null`)
		// At once: the session and the key open nothing, and signing in
		// again gets the answer of a wrong password.
		e.do(cat, "GET", "/me", nil).want(t, 401, fxNotAuthed)
		e.do(key, "GET", "/me", nil).want(t, 401, fxNotAuthed)
		e.login("cat@example.com", goodSecret).want(t, 400, `{"detail":"Wrong email or password"}`)
		e.do(ada, "GET", "/manage/users/accepted?status=deactivated", nil).want(t, 200, `{"total_items":1,"items":[`+
			snapshotJSON(cat.id, cat.email, "curator", false, []quarry.GroupBrief{{ID: firstGroupID, Name: "people"}})+`]}`)
		// What they own keeps its owner; reactivated, they sign in again.
		e.do(ada, "PATCH", "/manage/admin/activate-user", `{"user_email": "cat@example.com"}`).want(t, 200, `null`)
		e.do(ada, "PATCH", "/manage/admin/activate-user", fmt.Sprintf(`{"user_email": %q}`, key.email)).want(t, 200, `null`)
		e.do(cat, "GET", "/me", nil).want(t, 401, fxNotAuthed) // the old session ended for good
		e.do(key, "GET", "/me", nil).decode(t, new(any))
		if r := e.login("cat@example.com", goodSecret); r.status != 204 {
			t.Errorf("sign-in after reactivation: %d %s", r.status, r.body)
		}
		e.do(ada, "PATCH", "/manage/admin/deactivate-user", `{"user_email": "ada@example.com"}`).want(t, 400, `{"detail":"You cannot deactivate yourself"}`)
		e.do(ada, "PATCH", "/manage/admin/deactivate-user", `{"user_email": "nobody@example.com"}`).want(t, 404, `{"detail":"User not found"}`)
	})

	t.Run("the last active admin", func(t *testing.T) {
		// The env's admin key is an admin too: revoke it, and ada is the
		// last one who can sign in.
		e.do(ada, "DELETE", fmt.Sprintf("/admin/api-key/%d", f.keyID(e.admin)), nil).want(t, 200, `null`)
		e.do(ada, "PATCH", "/manage/set-user-role", `{"user_email": "bob@example.com", "new_role": "admin"}`).want(t, 200, `null`)
		e.do(bob, "PATCH", "/manage/admin/deactivate-user", `{"user_email": "ada@example.com"}`).want(t, 200, `null`)
		e.do(bob, "PATCH", "/manage/set-user-role", `{"user_email": "bob@example.com", "new_role": "basic"}`).want(t, 400,
			`{"detail":"bob@example.com is the last active admin and cannot be demoted"}`)
	})

	t.Run("audit", func(t *testing.T) {
		got := map[string]int{}
		var entries []fxAudit
		e.do(bob, "GET", "/admin/audit-log?limit=1000", nil).decode(t, &entries)
		for _, a := range entries {
			got[a.Action]++
		}
		// Eve, made a curator by explicit override, registered, signed in
		// and changed role too.
		for action, n := range map[string]int{"user.register": 4, "user.sign_in": 7, "user.sign_in_failed": 1, "user.role_change": 4, "user.deactivate": 3,
			"user.activate": 2, "session.end": 1, "user.end_sessions": 1} {
			if got[action] != n {
				t.Errorf("%d %s entries, want %d (all: %v)", got[action], action, n, got)
			}
		}
	})
}

func TestPasswords(t *testing.T) {
	e := newEnv(t, withLocalAccounts)
	ada := e.person("ada@example.com")
	other := e.login("ada@example.com", goodSecret) // a second browser
	const newSecret = "a long and quiet river"
	for _, tc := range []struct {
		body   string
		status int
		want   string
	}{
		{`{"current_password": "wrong wrong wrong", "new_password": "` + newSecret + `"}`, 400, `{"detail":"The current password is wrong"}`},
		{`{"current_password": "` + goodSecret + `", "new_password": "short"}`, 400, `{"detail":"The password must be at least 12 characters long"}`},
		{`{"current_password": "` + goodSecret + `"}`, 422, `{"detail":[{"type":"missing","loc":["body","new_password"],"msg":"Field required",
			"input":{"current_password":"` + goodSecret + `"}}]}`},
	} {
		e.do(ada, "POST", "/auth/change-password", tc.body).want(t, tc.status, tc.want)
	}
	r := e.do(ada, "POST", "/auth/change-password", `{"current_password": "`+goodSecret+`", "new_password": "`+newSecret+`"}`)
	if r.status != 204 {
		t.Fatalf("change: %d %s", r.status, r.body)
	}
	// This session goes on; the other browser's ends; the new password works.
	e.do(ada, "GET", "/me", nil).decode(t, new(any))
	e.do(user{cookie: sessionCookie(other).Value}, "GET", "/me", nil).want(t, 401, fxNotAuthed)
	e.login("ada@example.com", goodSecret).want(t, 400, `{"detail":"Wrong email or password"}`)
	if r := e.login("ada@example.com", newSecret); r.status != 204 {
		t.Errorf("the new password: %d %s", r.status, r.body)
	}
	e.do(e.admin, "POST", "/auth/change-password", `{"current_password": "x", "new_password": "y"}`).want(t, 400,
		`{"detail":"An API key has no password"}`)

	// An admin resets Bob's password: Bob's sessions end, the new one works.
	bob := e.person("bob@example.com")
	var reset struct {
		UserEmail   string `json:"user_email"`
		NewPassword string `json:"new_password"`
	}
	r = e.do(e.admin, "POST", "/manage/admin/reset-password", `{"user_email": "Bob@example.com"}`)
	r.decode(t, &reset)
	if len(reset.NewPassword) != 20 || reset.UserEmail != "Bob@example.com" || r.header.Get("Cache-Control") != "no-store" {
		t.Errorf("reset: %s %v", r.body, r.header)
	}
	secretsOf(t).add(reset.NewPassword)
	e.do(bob, "GET", "/me", nil).want(t, 401, fxNotAuthed)
	if r := e.login("bob@example.com", reset.NewPassword); r.status != 204 {
		t.Errorf("the reset password: %d %s", r.status, r.body)
	}
	e.do(ada, "POST", "/manage/admin/reset-password", `{"user_email": "bob@example.com"}`).decode(t, &reset) // ada is an admin
	secretsOf(t).add(reset.NewPassword)
	bob.cookie = sessionCookie(e.login("bob@example.com", reset.NewPassword)).Value
	e.do(bob, "POST", "/manage/admin/reset-password", `{"user_email": "ada@example.com"}`).want(t, 403, fxNotAdmin)
	e.do(e.admin, "POST", "/manage/admin/reset-password", fmt.Sprintf(`{"user_email": %q}`, e.admin.email)).want(t, 400,
		`{"detail":"A service account has no password: regenerate its API key instead"}`)
}

// TestSignInOverASession: signing in ends the session the browser had, and
// odd bytes in what a browser sends are stored as text, never refused.
func TestSignInOverASession(t *testing.T) {
	e := newEnv(t, withLocalAccounts)
	ada := e.person("ada@example.com")
	r := e.login("ada@example.com", goodSecret, "Cookie", "fastapiusersauth="+ada.cookie, "User-Agent", "Mozilla \xe9\xff "+strings.Repeat("é", 300))
	if r.status != 204 {
		t.Fatalf("sign-in over a session: %d %s", r.status, r.body)
	}
	e.do(ada, "GET", "/me", nil).want(t, 401, fxNotAuthed)
	var ss []quarry.Session
	e.do(e.admin, "GET", "/manage/admin/sessions", nil).decode(t, &ss)
	if len(ss) != 1 || !strings.HasPrefix(ss[0].UserAgent, "Mozilla \uFFFD éé") || len(ss[0].UserAgent) > 512 {
		t.Errorf("sessions %+v", ss)
	}
}
