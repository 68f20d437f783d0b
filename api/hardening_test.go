package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api"
)

// The regression tests of the sign-in findings of an adversarial pass
// (issue 22): each sends the attacker's request, then checks the fixed
// answer.

// withProxy puts the test server behind a proxy that names the client's
// address in X-Forwarded-For, so that tests can come from many addresses.
func withProxy(c *api.Config) { c.SignIn.ClientIPHeader = "X-Forwarded-For" }

// from returns the headers of a request from address addr.
func from(addr string) []string { return []string{"X-Forwarded-For", addr} }

const (
	wrongPassword = `{"detail":"Wrong email or password"}`
	tooMany15     = `{"detail":"Too many failed sign-ins; try again in 15 minutes"}`
)

// TestNoLockoutByOthers: failing for somebody else's account, from any
// addresses, does not keep its owner out (finding 1).
func TestNoLockoutByOthers(t *testing.T) {
	e := newEnv(t, withLocalAccounts, withProxy)
	e.register("u5@corp.example", goodSecret)
	// The attacker fails ten times from one address, in every spelling of
	// the email.
	for i := range 10 {
		email := []string{"u5@corp.example", " U5@CORP.example ", "U5@corp.EXAMPLE"}[i%3]
		e.login(email, "guess guess guess", from("203.0.113.5")...).want(t, 400, wrongPassword)
	}
	// Its address is refused now, even with the right password...
	e.login("u5@corp.example", goodSecret, from("203.0.113.5")...).want(t, 429, tooMany15)
	// ...but the person, from their own address, signs in.
	if r := e.login("u5@corp.example", goodSecret, from("198.51.100.7")...); r.status != 204 {
		t.Fatalf("the owner from a clean address: %d %s", r.status, r.body)
	}
	// The attacker spreads over many addresses: the account is under
	// attack, so an address that failed for it waits, while a new one gets
	// its password checked (one guess each).
	for i := range 20 {
		e.login("u5@corp.example", "guess guess guess", from(fmt.Sprintf("203.0.113.%d", 100+i))...).want(t, 400, wrongPassword)
	}
	e.login("u5@corp.example", "guess guess guess", from("203.0.113.100")...).want(t, 429, tooMany15)
	e.login("u5@corp.example", goodSecret, from("203.0.113.101")...).want(t, 429, tooMany15)
	if r := e.login("u5@corp.example", goodSecret, from("198.51.100.7")...); r.status != 204 {
		t.Fatalf("the owner, under attack, from their address: %d %s", r.status, r.body)
	}
	if r := e.login("u5@corp.example", goodSecret, from("198.51.100.8")...); r.status != 204 {
		t.Fatalf("the owner, under attack, from a new address: %d %s", r.status, r.body)
	}
}

// TestIPv6Throttle: an IPv6 client cannot try again from each address of
// its /64 (finding 5).
func TestIPv6Throttle(t *testing.T) {
	e := newEnv(t, withLocalAccounts, withProxy)
	e.register("ada@example.com", goodSecret)
	for i := range 10 {
		e.login("ada@example.com", "guess guess guess", from(fmt.Sprintf("2001:db8:1:2::%x", i+1))...).want(t, 400, wrongPassword)
	}
	// Another address of the same /64 is the same client.
	e.login("ada@example.com", "guess guess guess", from("2001:db8:1:2:ffff::9")...).want(t, 429, tooMany15)
	e.login("ada@example.com", goodSecret, from("2001:db8:1:2:ffff::9")...).want(t, 429, tooMany15)
	// Another /64 is another client.
	if r := e.login("ada@example.com", goodSecret, from("2001:db8:1:3::1")...); r.status != 204 {
		t.Errorf("another /64: %d %s", r.status, r.body)
	}
	// Registrations are counted per /64 too.
	for i := range 20 {
		r := e.do(user{}, "POST", "/auth/register", map[string]any{"email": fmt.Sprintf("r%d@example.com", i), "password": goodSecret},
			from(fmt.Sprintf("2001:db8:9:9::%x", i+1))...)
		if r.status != 201 {
			t.Fatalf("registration %d: %d %s", i, r.status, r.body)
		}
	}
	e.do(user{}, "POST", "/auth/register", map[string]any{"email": "r99@example.com", "password": goodSecret},
		from("2001:db8:9:9:abcd::1")...).want(t, 429, `{"detail":"Too many registrations from this address; try again in 15 minutes"}`)
}

// TestInvitationTokens: by invitation, knowing the invited email is not
// enough to take the account; the invitation's link is (finding 2).
func TestInvitationTokens(t *testing.T) {
	var mu sync.Mutex
	now := testNow
	e := newEnv(t, func(c *api.Config) {
		c.SignIn.LocalAccounts = true
		c.SignIn.Registration.Mode = quarry.RegistrationInvite
		c.SignIn.InvitationTTL = 48 * time.Hour
	})
	e.db.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	e.register("first@corp.example", goodSecret)

	kate := map[string]any{"email": "kate@corp.example", "password": goodSecret}
	withToken := func(token string) map[string]any {
		return map[string]any{"email": "kate@corp.example", "password": goodSecret, "invitation_token": token}
	}
	const noLink = `{"detail":"Registration is by invitation only: register with the link of your invitation (if it has expired, ask an admin for a new one)"}`
	// Onyx's invitation, which has no link yet: whoever knows the email
	// cannot register with it.
	e.do(e.admin, "PUT", "/manage/admin/users", `{"emails": ["kate@corp.example"]}`).want(t, 200, `1`)
	e.do(user{}, "POST", "/auth/register", kate).want(t, 403, noLink)
	e.do(user{}, "POST", "/auth/register", withToken("qri_"+strings.Repeat("A", 43))).want(t, 403, noLink)
	e.do(e.admin, "GET", "/manage/users/invited", nil).want(t, 200,
		fmt.Sprintf(`[{"email":"kate@corp.example","invited_by":%q,"created_at":%q,"expires_at":null}]`, e.admin.email, testNowJSON))

	// The admin issues a link, shown once.
	var links []struct {
		Email, Token, URL string
		ExpiresAt         string `json:"expires_at"`
	}
	e.do(e.admin, "POST", "/manage/admin/invitations", `{"emails": ["kate@corp.example"]}`).decode(t, &links)
	if len(links) != 1 || !strings.HasPrefix(links[0].Token, "qri_") || links[0].ExpiresAt != "2026-11-23T10:15:30.123456Z" ||
		links[0].URL != "/#register?email=kate%40corp.example&invitation="+links[0].Token {
		t.Fatalf("links %+v", links)
	}
	first := links[0].Token
	// A new link replaces the one before.
	e.do(e.admin, "POST", "/manage/admin/invitations", `{"emails": ["kate@corp.example"]}`).decode(t, &links)
	second := links[0].Token
	e.do(user{}, "POST", "/auth/register", withToken(first)).want(t, 403, noLink)
	// Another email with Kate's token is not invited.
	e.do(user{}, "POST", "/auth/register", map[string]any{"email": "mallory@corp.example", "password": goodSecret,
		"invitation_token": second}).want(t, 403, `{"detail":"Registration is by invitation only, and this email has not been invited"}`)
	// A link that has expired opens nothing.
	advance(49 * time.Hour)
	e.do(user{}, "POST", "/auth/register", withToken(second)).want(t, 403, noLink)
	e.do(e.admin, "POST", "/manage/admin/invitations", `{"emails": ["kate@corp.example"]}`).decode(t, &links)
	third := links[0].Token
	r := e.do(user{}, "POST", "/auth/register", withToken(third))
	if r.status != 201 {
		t.Fatalf("Kate with her link: %d %s", r.status, r.body)
	}
	// The link is used up.
	e.do(user{}, "POST", "/auth/register", withToken(third)).want(t, 400, `{"detail":"A user with this email already exists"}`)
	e.do(e.admin, "GET", "/manage/users/invited", nil).want(t, 200, `[]`)
	e.do(e.admin, "POST", "/manage/admin/invitations", `{"emails": ["KATE@corp.example"]}`).want(t, 400,
		`{"detail":"A user with this email already exists"}`)
	e.do(e.admin, "POST", "/manage/admin/invitations", `{"emails": []}`).want(t, 200, `[]`)
	// The admin's answer is not cached.
	if got := r.header.Get("Cache-Control"); got != "no-store" {
		t.Errorf("Cache-Control %q", got)
	}
}

// TestLookalikeEmails: an email is compared in NFKC case-folded form, an
// email's name part may not mix scripts, and none may look like an
// existing account's (finding 3).
func TestLookalikeEmails(t *testing.T) {
	e := newEnv(t, withLocalAccounts)
	e.register("kate@corp.example", goodSecret)
	e.register("cop@corp.example", goodSecret)
	const (
		taken     = `{"detail":"A user with this email already exists"}`
		mixed     = `{"detail":"The email's name part mixes scripts (such as Latin and Cyrillic letters); use an address in one script"}`
		lookalike = `{"detail":"This email looks like the email of an existing account; use another, or ask an admin"}`
	)
	for _, tc := range []struct {
		name, email string
		status      int
		want        string
	}{
		{"Kelvin sign", "\u212Aate@corp.example", 400, taken},
		{"full-width letters", "\uff4b\uff41\uff54\uff45@corp.example", 400, taken},
		{"a Cyrillic a among Latin letters", "k\u0430te@corp.example", 400, mixed},
		{"all Cyrillic, like cop", "\u0441\u043e\u0440@corp.example", 400, lookalike},
		{"a Greek omicron among Latin letters", "c\u03bfp@corp.example", 400, mixed},
		{"a lookalike domain", "kate@c\u043erp.example", 400, lookalike},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.do(user{}, "POST", "/auth/register", map[string]any{"email": tc.email, "password": goodSecret}).want(t, tc.status, tc.want)
		})
	}
	// One script, and like no account: welcome.
	for _, email := range []string{"\u043a\u0430\u0442\u044f@corp.example", "\u5c71\u7530\u592a\u90ce@corp.example", "tar\u014d@corp.example"} {
		if r := e.do(user{}, "POST", "/auth/register", map[string]any{"email": email, "password": goodSecret}); r.status != 201 {
			t.Errorf("%s: %d %s", email, r.status, r.body)
		}
	}
	// The same rules hold for invitations: the Kelvin-sign Kate is Kate,
	// who has an account (skipped); a lookalike is refused.
	e.do(e.admin, "PUT", "/manage/admin/users", `{"emails": ["\u212Aate@corp.example"]}`).want(t, 200, `0`)
	e.do(e.admin, "PUT", "/manage/admin/users", `{"emails": ["\u0441\u043e\u0440@corp.example"]}`).want(t, 400, lookalike)
	e.do(e.admin, "POST", "/manage/admin/invitations", `{"emails": ["k\u0430te@corp.example"]}`).want(t, 400, mixed)
	// Kate signs in whatever way her email is typed.
	for _, email := range []string{"KATE@corp.example", "\u212Aate@corp.example", " \uff4bate@CORP.example"} {
		if r := e.login(email, goodSecret); r.status != 204 {
			t.Errorf("signing in as %q: %d %s", email, r.status, r.body)
		}
	}
}

// TestLastAdminKey: the last admin's key can be neither revoked nor given
// another role (finding 4), and an admin key does not count as an admin
// for a person: it cannot demote or deactivate the last person admin
// (issue 31).
func TestLastAdminKey(t *testing.T) {
	e := newEnv(t, withLocalAccounts)
	keyID := fx{e}.keyID(e.admin)
	// Before any person, the key is the last way in as an admin.
	last := fmt.Sprintf(`{"detail":"API key %d is the last active admin and cannot be %%s: make another admin first"}`, keyID)
	e.do(e.admin, "DELETE", "/admin/api-key/"+itoa(keyID), nil).want(t, 400, fmt.Sprintf(last, "revoked"))
	e.do(e.admin, "PATCH", "/admin/api-key/"+itoa(keyID), `{"name": "admin", "role": "basic"}`).want(t, 400,
		fmt.Sprintf(last, "given another role"))
	// Onyx's APIKeyArgs: a role left out is basic.
	e.do(e.admin, "PATCH", "/admin/api-key/"+itoa(keyID), `{"name": "admin"}`).want(t, 400, fmt.Sprintf(last, "given another role"))
	ada := e.person("ada@example.com") // the first person: an admin
	// The key cannot take the only person admin's rights away.
	e.do(e.admin, "PATCH", "/manage/set-user-role", `{"user_email": "ada@example.com", "new_role": "basic"}`).want(t, 400,
		`{"detail":"ada@example.com is the last active admin and cannot be demoted"}`)
	e.do(e.admin, "PATCH", "/manage/admin/deactivate-user", `{"user_email": "ada@example.com"}`).want(t, 400,
		`{"detail":"ada@example.com is the last active admin and cannot be deactivated"}`)
	e.do(ada, "GET", "/me", nil).want(t, 200, personJSON(ada, quarry.RoleAdmin))
	// Renaming is fine, and so is everything once another admin exists.
	var k struct {
		Name  string `json:"api_key_name"`
		Role  string `json:"api_key_role"`
		Email string
	}
	e.do(e.admin, "PATCH", "/admin/api-key/"+itoa(keyID), `{"name": "root", "role": "admin"}`).decode(t, &k)
	if k.Name != "root" || k.Role != "admin" {
		t.Errorf("renamed: %+v", k)
	}
	e.do(ada, "PATCH", "/admin/api-key/"+itoa(keyID), `{"name": "root"}`).decode(t, &k)
	if k.Role != "basic" {
		t.Errorf("role %s, want basic", k.Role)
	}
	e.do(ada, "DELETE", "/admin/api-key/"+itoa(keyID), nil).want(t, 200, `null`)
	e.do(ada, "PATCH", "/admin/api-key/999", `{"name": "x"}`).want(t, 404, `{"detail":"API key with id 999 does not exist"}`)
	e.do(ada, "PATCH", "/admin/api-key/"+itoa(keyID), `{"role": "owner"}`).want(t, 422, `{"detail":[{"type":"enum","loc":["body","role"],
		"msg":"Input should be 'admin', 'global_curator', 'curator', 'basic' or 'limited'","input":"owner",
		"ctx":{"expected":"'admin', 'global_curator', 'curator', 'basic' or 'limited'"}}]}`)
	// Each change is in the audit log.
	var entries []fxAudit
	e.do(ada, "GET", "/admin/audit-log?resource_type=api_key", nil).decode(t, &entries)
	if n := fxCount(entries, "api_key.update"); n != 2 {
		t.Errorf("%d api_key.update entries, want 2", n)
	}
}

// TestSecurityHeaders: every API answer says nosniff and no-store, the
// answer that holds a new API key included (finding 6).
func TestSecurityHeaders(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name string
		r    *response
	}{
		{"a new API key", e.do(e.admin, "POST", "/admin/api-key", `{"name": "k", "role": "basic"}`)},
		{"the status listing", e.do(e.admin, "GET", "/manage/admin/connector/status", nil)},
		{"401", e.do(user{}, "GET", "/me", nil)},
		{"404", e.do(e.admin, "GET", "/nowhere", nil)},
		{"422", e.do(e.admin, "GET", "/manage/credential/x", nil)},
		{"the API's description", e.do(user{}, "GET", "/openapi.json", nil)},
		{"health", e.do(user{}, "GET", "/health", nil)},
	} {
		if got := tc.r.header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s: X-Content-Type-Options %q", tc.name, got)
		}
		if got := tc.r.header.Get("Cache-Control"); got != "no-store" {
			t.Errorf("%s: Cache-Control %q", tc.name, got)
		}
	}
	// The console's files may be kept, if checked again.
	res, err := e.srv.Client().Get(e.srv.URL + "/assets/app.js")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("X-Content-Type-Options") != "nosniff" || res.Header.Get("Cache-Control") != "no-cache" {
		t.Errorf("a console file: %d %v", res.StatusCode, res.Header)
	}
}

// TestSecureCookieBehindProxy: without QUARRY_PUBLIC_URL, the session
// cookie is Secure when the proxy in front says the browser came over
// https (finding 7).
func TestSecureCookieBehindProxy(t *testing.T) {
	e := newEnv(t, withLocalAccounts)
	e.register("ada@example.com", goodSecret)
	for _, tc := range []struct {
		headers []string
		secure  bool
	}{
		{nil, false},
		{[]string{"X-Forwarded-Proto", "https"}, true},
		{[]string{"X-Forwarded-Proto", "HTTPS, http"}, true},
		{[]string{"X-Forwarded-Proto", "http"}, false},
		{[]string{"Forwarded", `for=192.0.2.1;proto=https;by=203.0.113.1`}, true},
		{[]string{"Forwarded", `proto="https"`}, true},
		{[]string{"Forwarded", `proto=http`}, false},
	} {
		c := sessionCookie(e.login("ada@example.com", goodSecret, tc.headers...))
		if c == nil || c.Secure != tc.secure || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode {
			t.Errorf("%v: cookie %+v, want Secure %t", tc.headers, c, tc.secure)
		}
	}
}

// TestShortIdleTimeout: a session in use outlives an idle time-out under
// a minute (finding 8).
func TestShortIdleTimeout(t *testing.T) {
	var mu sync.Mutex
	now := testNow
	e := newEnv(t, withLocalAccounts, func(c *api.Config) {
		c.SignIn.Sessions = quarry.SessionPolicy{Idle: 20 * time.Second, Absolute: time.Hour}
	})
	e.db.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	u := e.person("ada@example.com")
	for i := range 12 { // two minutes, a request every 10 seconds
		advance(10 * time.Second)
		if r := e.do(u, "GET", "/me", nil); r.status != 200 {
			t.Fatalf("a session in use, request %d after %v: %d", i, now.Sub(testNow), r.status)
		}
	}
	advance(21 * time.Second)
	e.do(u, "GET", "/me", nil).want(t, 401, fxNotAuthed)
}
