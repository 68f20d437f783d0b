package store_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/storetest"
)

// testSessions are the session lifetimes of these tests.
var testSessions = quarry.SessionPolicy{Idle: time.Hour, Absolute: 24 * time.Hour}

// clock is a settable clock for a test database.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// openClocked opens a test database on a settable clock.
func openClocked(t *testing.T) (*store.DB, *clock) {
	t.Helper()
	db := storetest.Open(t)
	c := &clock{now: time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)}
	db.Now = c.Now
	return db, c
}

// code returns the quarry error code and message of err, for comparisons.
func code(err error) string {
	if err == nil {
		return "ok"
	}
	return quarry.ErrorCode(err) + ": " + quarry.ErrorMessage(err)
}

func register(t *testing.T, db *store.DB, email string, p *quarry.RegistrationPolicy) *quarry.User {
	t.Helper()
	u, err := db.Register(ctx, email, nil, "$argon2id$fake", "", p)
	if err != nil {
		t.Fatalf("Register(%q): %v", email, err)
	}
	return u
}

func TestRegister(t *testing.T) {
	db, _ := openClocked(t)
	open := &quarry.RegistrationPolicy{Mode: quarry.RegistrationOpen}

	// Closed means closed, for the first person too.
	if _, err := db.Register(ctx, "first@example.com", nil, "h", "", &quarry.RegistrationPolicy{Mode: quarry.RegistrationClosed}); code(err) !=
		"forbidden: Registration is closed; sign in with single sign-on or ask an admin" {
		t.Errorf("the first person under closed registration: %s", code(err))
	}
	first := register(t, db, " First@Example.com ", &quarry.RegistrationPolicy{Mode: quarry.RegistrationInvite})
	if first.Role != quarry.RoleAdmin || first.Email != "First@Example.com" || !first.IsActive {
		t.Errorf("first person %+v; want an active admin, email trimmed", first)
	}
	second := register(t, db, "second@example.com", open)
	if second.Role != quarry.RoleBasic {
		t.Errorf("second person is %s, want basic", second.Role)
	}

	for _, tc := range []struct {
		name, email string
		policy      *quarry.RegistrationPolicy
		want        string
	}{
		{"email taken in another case", "FIRST@example.COM", open, "invalid: A user with this email already exists"},
		{"not an email", "first", open, `invalid: "first" is not a valid email address`},
		{"closed", "new@example.com", &quarry.RegistrationPolicy{Mode: quarry.RegistrationClosed},
			"forbidden: Registration is closed; sign in with single sign-on or ask an admin"},
		{"not invited", "new@example.com", &quarry.RegistrationPolicy{Mode: quarry.RegistrationInvite},
			"forbidden: Registration is by invitation only, and this email has not been invited"},
		{"other domain", "new@elsewhere.org", &quarry.RegistrationPolicy{Mode: quarry.RegistrationOpen, Domains: []string{"example.com"}},
			"forbidden: Accounts are for emails of these domains only: example.com"},
		{"not an email", "bad\xffbyte@example.com", open, `invalid: "bad\xffbyte@example.com" is not a valid email address`},
	} {
		_, err := db.Register(ctx, tc.email, nil, "$argon2id$fake", "", tc.policy)
		if got := code(err); got != tc.want {
			t.Errorf("%s: %s; want %s", tc.name, got, tc.want)
		}
	}

	// An invitation lets one person in once.
	admin := &quarry.Caller{User: *first}
	if n, err := db.Invite(ctx, admin, []string{"Invited@Example.com", "second@example.com"}); err != nil || n != 1 {
		t.Fatalf("Invite = %d, %v; want 1 (the other has an account)", n, err)
	}
	inv, err := db.Invitations(ctx)
	if err != nil || len(inv) != 1 || inv[0].Email != "Invited@Example.com" || *inv[0].InvitedBy != "First@Example.com" {
		t.Fatalf("Invitations = %+v, %v", inv, err)
	}
	invite := &quarry.RegistrationPolicy{Mode: quarry.RegistrationInvite}
	// Knowing the invited email is not enough: its link's token is.
	const noLink = "forbidden: Registration is by invitation only: register with the link of your invitation (if it has expired, ask an admin for a new one)"
	if _, err := db.Register(ctx, "invited@example.com", nil, "h", "", invite); code(err) != noLink {
		t.Errorf("an invited email without its token: %s", code(err))
	}
	links, err := db.IssueInvitations(ctx, admin, []string{"invited@example.com"}, time.Hour)
	if err != nil || len(links) != 1 || links[0].Email != "invited@example.com" || !strings.HasPrefix(links[0].Token, "qri_") {
		t.Fatalf("IssueInvitations = %+v, %v", links, err)
	}
	if _, err := db.Register(ctx, "invited@example.com", nil, "h", "qri_"+strings.Repeat("x", 43), invite); code(err) != noLink {
		t.Errorf("an invited email with another token: %s", code(err))
	}
	if _, err := db.Register(ctx, "invited@example.com", nil, "h", links[0].Token, invite); err != nil {
		t.Fatalf("with the invitation's token: %v", err)
	}
	if inv, _ := db.Invitations(ctx); len(inv) != 0 {
		t.Errorf("the invitation is still there after registering: %+v", inv)
	}
	if _, err := db.IssueInvitations(ctx, admin, []string{"INVITED@example.com"}, time.Hour); code(err) != "invalid: A user with this email already exists" {
		t.Errorf("a link for an email with an account: %s", code(err))
	}
	if err := db.RemoveInvitation(ctx, admin, "nobody@example.com"); code(err) != "not_found: No invitation for nobody@example.com" {
		t.Errorf("RemoveInvitation of none: %s", code(err))
	}

	events, _, err := db.AuditEvents(ctx, quarry.AuditFilter{ResourceType: ptr("user")})
	if err != nil {
		t.Fatal(err)
	}
	var registered []string
	for _, e := range events {
		if e.Action == "user.register" {
			registered = append(registered, *e.ActorEmail)
		}
	}
	if want := []string{"invited@example.com", "second@example.com", "First@Example.com"}; !cmp.Equal(registered, want) {
		t.Errorf("user.register entries by %v, want %v", registered, want)
	}
}

func ptr[T any](v T) *T { return &v }

// TestFirstPersonOnce registers people at once on two connections: exactly
// one becomes the admin.
func TestFirstPersonOnce(t *testing.T) {
	u, keys := storetest.URL(t), storetest.Key(t)
	dbs := []*store.DB{storetest.OpenURL(t, u, keys), storetest.OpenURL(t, u, keys)}
	var wg sync.WaitGroup
	roles := make([]quarry.Role, 8)
	for i := range roles {
		wg.Add(1)
		go func() {
			defer wg.Done()
			u, err := dbs[i%2].Register(ctx, fmt.Sprintf("p%d@example.com", i), nil, "h", "", &quarry.RegistrationPolicy{Mode: quarry.RegistrationOpen})
			if err != nil {
				t.Error(err)
				return
			}
			roles[i] = u.Role
		}()
	}
	wg.Wait()
	admins := 0
	for _, r := range roles {
		if r == quarry.RoleAdmin {
			admins++
		}
	}
	if admins != 1 {
		t.Errorf("roles %v: want exactly one admin", roles)
	}
}

// counts counts an attempt against keys and returns the counts alone.
func counts(t *testing.T, db *store.DB, keys ...string) []int {
	t.Helper()
	cs, _, err := db.CountAttempts(ctx, 15*time.Minute, keys...)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]int, len(cs))
	for i, c := range cs {
		out[i] = c.N
	}
	return out
}

func TestCountAttempts(t *testing.T) {
	db, clk := openClocked(t)
	pair, account, addr := quarry.AttemptKeys("p@example.com", "192.0.2.1")
	for i := 1; i <= 3; i++ {
		if got := counts(t, db, pair, account, addr); !cmp.Equal(got, []int{i, i, i}) {
			t.Fatalf("attempt %d counted %v", i, got)
		}
	}
	clk.advance(5 * time.Minute)
	cs, now, err := db.CountAttempts(ctx, 15*time.Minute, pair)
	if err != nil {
		t.Fatal(err)
	}
	if cs[0].N != 4 || now.Sub(cs[0].Start) != 5*time.Minute {
		t.Errorf("the 4th attempt: %+v at %v, want 4 in a window that started 5 minutes before", cs[0], now)
	}
	// Another account from the same address counts apart.
	other, _, _ := quarry.AttemptKeys("q@example.com", "192.0.2.1")
	if got := counts(t, db, other, addr); !cmp.Equal(got, []int{1, 4}) {
		t.Errorf("another account: %v", got)
	}
	// Past the window, counting starts again.
	clk.advance(10*time.Minute + time.Second)
	if got := counts(t, db, pair, account, addr); !cmp.Equal(got, []int{1, 1, 1}) {
		t.Errorf("after the window: %v", got)
	}
	// A successful sign-in clears the pair's count and takes its attempt
	// back from the account and the address.
	u := register(t, db, "p@example.com", &quarry.RegistrationPolicy{})
	counts(t, db, pair, account, addr)
	if _, err := db.OpenSession(ctx, u.ID, quarry.NewSession{Method: quarry.SignInPassword}, testSessions,
		store.Attempt{Clear: []string{pair}, TakeBack: []string{account, addr}}); err != nil {
		t.Fatal(err)
	}
	if got := counts(t, db, pair, account, addr); !cmp.Equal(got, []int{1, 2, 2}) {
		t.Errorf("after a success: %v, want the pair cleared and one attempt taken back from the others", got)
	}
	if err := db.RecordSignInFailure(ctx, "", "not an email, maybe a password", "password"); err != nil {
		t.Fatal(err)
	}
	db.RecordSignInFailure(ctx, "", "P@example.com", "password")
	events, _, _ := db.AuditEvents(ctx, quarry.AuditFilter{ResourceType: ptr("user")})
	var failed []string
	for _, e := range events {
		if e.Action == "user.sign_in_failed" {
			failed = append(failed, e.ResourceID)
		}
	}
	if want := []string{"p@example.com", ""}; !cmp.Equal(failed, want) {
		t.Errorf("sign_in_failed entries for %q, want %q (what is not an email is not kept)", failed, want)
	}
}

// TestCountAttemptsConcurrent: attempts made at once, on two replicas, are
// all counted, each once.
func TestCountAttemptsConcurrent(t *testing.T) {
	u, keys := storetest.URL(t), storetest.Key(t)
	dbs := []*store.DB{storetest.OpenURL(t, u, keys), storetest.OpenURL(t, u, keys)}
	pair, _, _ := quarry.AttemptKeys("p@example.com", "192.0.2.1")
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen := map[int]int{}
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cs, _, err := dbs[i%2].CountAttempts(ctx, 15*time.Minute, pair)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			seen[cs[0].N]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	for n := 1; n <= 40; n++ {
		if seen[n] != 1 {
			t.Errorf("count %d was seen %d times, want once: %v", n, seen[n], seen)
			break
		}
	}
}

func TestSessions(t *testing.T) {
	db, clk := openClocked(t)
	u := register(t, db, "p@example.com", &quarry.RegistrationPolicy{})
	token, err := db.OpenSession(ctx, u.ID, quarry.NewSession{Method: quarry.SignInPassword, IP: "192.0.2.7", UserAgent: "test"}, testSessions, store.Attempt{})
	if err != nil {
		t.Fatal(err)
	}
	hash := quarry.HashToken(token)
	if !quarry.ValidSessionTokenFormat(token) {
		t.Errorf("token %q is not a session token", token)
	}
	c, err := db.SessionCaller(ctx, hash, testSessions)
	if err != nil || c.ID != u.ID || c.SessionID == 0 || c.APIKeyID != 0 {
		t.Fatalf("SessionCaller = %+v, %v", c, err)
	}
	// Used every 50 minutes, it lives on past the idle time-out...
	for range 3 {
		clk.advance(50 * time.Minute)
		if _, err := db.SessionCaller(ctx, hash, testSessions); err != nil {
			t.Fatalf("a session in use: %v", err)
		}
	}
	// ...but not past an hour of idleness.
	clk.advance(61 * time.Minute)
	if _, err := db.SessionCaller(ctx, hash, testSessions); code(err) != "unauthorized: Not authenticated" {
		t.Errorf("an idle session: %s", code(err))
	}

	// The absolute lifetime ends a session in use.
	token, _ = db.OpenSession(ctx, u.ID, quarry.NewSession{Method: quarry.SignInPassword}, testSessions, store.Attempt{})
	for range 25 {
		clk.advance(59 * time.Minute)
		db.SessionCaller(ctx, quarry.HashToken(token), testSessions)
	}
	if _, err := db.SessionCaller(ctx, quarry.HashToken(token), testSessions); code(err) != "unauthorized: Not authenticated" {
		t.Errorf("a session past its absolute lifetime: %s", code(err))
	}

	// Sessions an admin lists and ends.
	t1, _ := db.OpenSession(ctx, u.ID, quarry.NewSession{Method: quarry.SignInPassword, IP: "192.0.2.8"}, testSessions, store.Attempt{})
	t2, _ := db.OpenSession(ctx, u.ID, quarry.NewSession{Method: quarry.SignInPassword, IP: "192.0.2.9\xff" + strings.Repeat("é", 40), UserAgent: strings.Repeat("a", 511) + "é\xe9"}, testSessions, store.Attempt{})
	ss, err := db.Sessions(ctx, "P@example.com", testSessions)
	// Invalid UTF-8 is replaced, and long values are cut between characters.
	if err != nil || len(ss) != 2 || ss[0].IP != "192.0.2.9\uFFFD"+strings.Repeat("é", 26) || ss[1].IP != "192.0.2.8" ||
		ss[0].UserAgent != strings.Repeat("a", 511) || ss[0].UserEmail != "p@example.com" {
		t.Fatalf("Sessions = %+v, %v; want the two open ones, newest first (the ended ones purged)", ss, err)
	}
	admin := &quarry.Caller{User: quarry.User{ID: u.ID, Role: quarry.RoleAdmin}}
	if err := db.EndSession(ctx, admin, ss[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SessionCaller(ctx, quarry.HashToken(t2), testSessions); err == nil {
		t.Error("an ended session still works")
	}
	if err := db.EndSession(ctx, admin, ss[0].ID); code(err) != fmt.Sprintf("not_found: Session %d does not exist", ss[0].ID) {
		t.Errorf("ending it again: %s", code(err))
	}
	if n, err := db.EndUserSessions(ctx, admin, u.Email); err != nil || n != 1 {
		t.Errorf("EndUserSessions = %d, %v; want 1", n, err)
	}
	if _, err := db.SessionCaller(ctx, quarry.HashToken(t1), testSessions); err == nil {
		t.Error("a session ended with all of its user's still works")
	}
}

func TestDeactivate(t *testing.T) {
	db, _ := openClocked(t)
	adminUser := register(t, db, "admin@example.com", &quarry.RegistrationPolicy{})
	admin := &quarry.Caller{User: *adminUser}
	p := register(t, db, "p@example.com", &quarry.RegistrationPolicy{Mode: quarry.RegistrationOpen})
	token, _ := db.OpenSession(ctx, p.ID, quarry.NewSession{Method: quarry.SignInPassword}, testSessions, store.Attempt{})
	key, apiToken, err := db.CreateAPIKey(ctx, admin, ptr("script"), quarry.RoleBasic)
	if err != nil {
		t.Fatal(err)
	}

	if err := db.SetActive(ctx, admin, "P@example.com", false); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SessionCaller(ctx, quarry.HashToken(token), testSessions); err == nil {
		t.Error("a deactivated person's session still works")
	}
	if _, err := db.OpenSession(ctx, p.ID, quarry.NewSession{Method: quarry.SignInPassword}, testSessions, store.Attempt{}); code(err) != "unauthorized: Not authenticated" {
		t.Errorf("a session for a deactivated person: %s", code(err))
	}
	// A service account (an API key's user) is deactivated by its email too.
	people, _, _ := db.People(ctx, quarry.UserFilter{Limit: 10})
	if len(people) != 2 {
		t.Errorf("People lists %d, want the 2 people (not the key's service account)", len(people))
	}
	var keyEmail string
	c, err := db.Authenticate(ctx, quarry.HashAPIKey(apiToken))
	if err != nil {
		t.Fatal(err)
	}
	keyEmail = c.Email
	if c.ID != key.UserID {
		t.Fatalf("key user %s, want %s", c.ID, key.UserID)
	}
	if err := db.SetActive(ctx, admin, keyEmail, false); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Authenticate(ctx, quarry.HashAPIKey(apiToken)); err == nil {
		t.Error("a deactivated service account's key still works")
	}
	if err := db.SetActive(ctx, admin, keyEmail, true); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Authenticate(ctx, quarry.HashAPIKey(apiToken)); err != nil {
		t.Errorf("the key after reactivation: %v", err)
	}

	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"deactivate yourself", db.SetActive(ctx, admin, "admin@example.com", false), "invalid: You cannot deactivate yourself"},
		{"demote the last admin", db.SetRole(ctx, admin, "admin@example.com", quarry.RoleBasic, false),
			"invalid: admin@example.com is the last active admin and cannot be demoted"},
		{"make a curator", db.SetRole(ctx, admin, "p@example.com", quarry.RoleCurator, false), "invalid: Curator role must be set via the User Group Menu"},
		{"a service account's role", db.SetRole(ctx, admin, keyEmail, quarry.RoleAdmin, false),
			"invalid: Cannot change the role of a service account user: make a new API key instead"},
		{"nobody", db.SetRole(ctx, admin, "nobody@example.com", quarry.RoleBasic, false), "not_found: User not found"},
	} {
		if got := code(tc.err); got != tc.want {
			t.Errorf("%s: %s; want %s", tc.name, got, tc.want)
		}
	}
	// An admin API key does not count for a person (issue 31: only people
	// can sort things out); a second person admin does.
	if _, _, err := db.CreateAPIKey(ctx, admin, ptr("admin script"), quarry.RoleAdmin); err != nil {
		t.Fatal(err)
	}
	if got := code(db.SetRole(ctx, admin, "admin@example.com", quarry.RoleGlobalCurator, false)); got != "invalid: admin@example.com is the last active admin and cannot be demoted" {
		t.Errorf("demoting the last person admin beside an admin key: %s", got)
	}
	if got := code(db.SetActive(ctx, &quarry.Caller{User: quarry.User{ID: "other", Role: quarry.RoleAdmin}}, "admin@example.com", false)); got != "invalid: admin@example.com is the last active admin and cannot be deactivated" {
		t.Errorf("deactivating the last person admin beside an admin key: %s", got)
	}
	if err := db.SetActive(ctx, admin, "p@example.com", true); err != nil {
		t.Fatal(err)
	}
	if err := db.SetRole(ctx, admin, "p@example.com", quarry.RoleAdmin, false); err != nil {
		t.Fatal(err)
	}
	if err := db.SetRole(ctx, admin, "admin@example.com", quarry.RoleGlobalCurator, false); err != nil {
		t.Errorf("demoting an admin who is not the last: %v", err)
	}
}

func TestOIDCSignIn(t *testing.T) {
	db, clk := openClocked(t)
	const iss = "https://idp.example.com"
	ns := quarry.NewSession{Method: quarry.SignInOIDC, IP: "192.0.2.1", IDToken: "a.b.c"}
	id := &quarry.Identity{Issuer: iss, Subject: "sub-1", Email: "Pat@Example.com", EmailVerified: true, Name: ptr("Pat"), Role: quarry.RoleBasic}
	token, u, err := db.SignInOIDC(ctx, id, ns, testSessions)
	if err != nil {
		t.Fatal(err)
	}
	if u.Email != "Pat@Example.com" || *u.Name != "Pat" || u.Role != quarry.RoleBasic {
		t.Errorf("new user %+v", u)
	}
	if _, err := db.SessionCaller(ctx, quarry.HashToken(token), testSessions); err != nil {
		t.Errorf("the new session: %v", err)
	}
	// The same subject with another email is the same person.
	_, again, err := db.SignInOIDC(ctx, &quarry.Identity{Issuer: iss, Subject: "sub-1", Email: "pat.new@example.com", Role: quarry.RoleBasic}, ns, testSessions)
	if err != nil || again.ID != u.ID {
		t.Errorf("second sign-in: %+v, %v; want user %s", again, err, u.ID)
	}
	// A local account with the email is linked, not duplicated, when the
	// provider says the email is verified; its password (which proved
	// nothing) and its sessions end.
	local := register(t, db, "lee@example.com", &quarry.RegistrationPolicy{Mode: quarry.RegistrationOpen})
	squatter, _ := db.OpenSession(ctx, local.ID, quarry.NewSession{Method: quarry.SignInPassword}, testSessions, store.Attempt{})
	unverified := &quarry.Identity{Issuer: iss, Subject: "sub-2", Email: "LEE@example.com", Role: quarry.RoleBasic}
	if _, _, err := db.SignInOIDC(ctx, unverified, ns, testSessions); code(err) !=
		"forbidden: An account with this email exists, and the provider does not confirm the email is yours; ask an admin" {
		t.Errorf("linking an unverified email: %s", code(err))
	}
	verified := *unverified
	verified.EmailVerified = true
	_, linked, err := db.SignInOIDC(ctx, &verified, ns, testSessions)
	if err != nil || linked.ID != local.ID {
		t.Errorf("linking by email: %+v, %v; want user %s", linked, err, local.ID)
	}
	if id, hash, _, _ := db.PasswordAccount(ctx, "lee@example.com"); id != "" || hash != "" {
		t.Errorf("the linked account still has a password")
	}
	if _, err := db.SessionCaller(ctx, quarry.HashToken(squatter), testSessions); err == nil {
		t.Error("a session of the local account survived the link")
	}
	// The provider decides roles when a role claim is set up.
	_, promoted, err := db.SignInOIDC(ctx, &quarry.Identity{Issuer: iss, Subject: "sub-1", Email: "Pat@Example.com", Role: quarry.RoleGlobalCurator, RoleFromProvider: true}, ns, testSessions)
	if err != nil || promoted.Role != quarry.RoleGlobalCurator {
		t.Errorf("role from the provider: %+v, %v", promoted, err)
	}
	// A bearer token of the provider: the same person, no session.
	c, err := db.IdentityCaller(ctx, &quarry.Identity{Issuer: iss, Subject: "sub-1"})
	if err != nil || c.ID != u.ID || c.Role != quarry.RoleGlobalCurator || c.SessionID != 0 {
		t.Errorf("IdentityCaller = %+v, %v", c, err)
	}
	// An unknown subject without an email opens nothing; with one, it is a
	// first sign-in.
	if _, err := db.IdentityCaller(ctx, &quarry.Identity{Issuer: iss, Subject: "sub-3"}); code(err) != "unauthorized: Not authenticated" {
		t.Errorf("unknown subject without an email: %s", code(err))
	}
	c3, err := db.IdentityCaller(ctx, &quarry.Identity{Issuer: iss, Subject: "sub-3", Email: "kim@example.com", EmailVerified: true, Role: quarry.RoleBasic})
	if err != nil || c3.Email != "kim@example.com" {
		t.Errorf("first sign-in by token: %+v, %v", c3, err)
	}

	// Deactivated: refused, by either way in.
	admin := &quarry.Caller{User: quarry.User{ID: "00000000-0000-0000-0000-000000000000", Role: quarry.RoleAdmin}}
	if err := db.SetActive(ctx, admin, "pat@example.com", false); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.SignInOIDC(ctx, id, ns, testSessions); code(err) != "forbidden: This account is deactivated; ask an admin" {
		t.Errorf("deactivated sign-in: %s", code(err))
	}
	// A token that would bring the role up to date opens nothing either.
	if _, err := db.IdentityCaller(ctx, &quarry.Identity{Issuer: iss, Subject: "sub-1", Email: "pat@example.com", EmailVerified: true,
		Role: quarry.RoleAdmin, RoleFromProvider: true}); code(err) != "unauthorized: Not authenticated" {
		t.Errorf("deactivated token with a role: %s", code(err))
	}
	if _, err := db.IdentityCaller(ctx, &quarry.Identity{Issuer: iss, Subject: "sub-1"}); code(err) != "unauthorized: Not authenticated" {
		t.Errorf("deactivated token: %s", code(err))
	}

	// A sign-in in progress is taken once, and not after it expired.
	type secret struct{ Nonce string }
	if err := db.BeginOIDCLogin(ctx, "state-1", secret{"n1"}, "/next"); err != nil {
		t.Fatal(err)
	}
	var got secret
	next, err := db.TakeOIDCLogin(ctx, "state-1", &got)
	if err != nil || next != "/next" || got.Nonce != "n1" {
		t.Errorf("TakeOIDCLogin = %q, %+v, %v", next, got, err)
	}
	if _, err := db.TakeOIDCLogin(ctx, "state-1", &got); code(err) != "invalid: The sign-in is unknown, over or too old; start again" {
		t.Errorf("replayed state: %s", code(err))
	}
	db.BeginOIDCLogin(ctx, "state-2", secret{"n2"}, "/")
	clk.advance(11 * time.Minute)
	if _, err := db.TakeOIDCLogin(ctx, "state-2", &got); code(err) != "invalid: The sign-in is unknown, over or too old; start again" {
		t.Errorf("expired state: %s", code(err))
	}
}

func TestPeople(t *testing.T) {
	db, _ := openClocked(t)
	adminUser := register(t, db, "admin@example.com", &quarry.RegistrationPolicy{})
	admin := &quarry.Caller{User: *adminUser}
	open := &quarry.RegistrationPolicy{Mode: quarry.RegistrationOpen}
	for i := range 12 {
		db.Register(ctx, fmt.Sprintf("user%02d@example.com", i), ptr(fmt.Sprintf("User 100%% %d", i)), "h", "", open)
	}
	db.SetActive(ctx, admin, "user03@example.com", false)
	db.SetRole(ctx, admin, "user04@example.com", quarry.RoleGlobalCurator, false)
	db.CreateAPIKey(ctx, admin, ptr("not a person"), quarry.RoleAdmin)
	g, err := db.CreateGroup(ctx, admin, quarry.UserGroupInput{Name: ptr("G"), UserIDs: []string{adminUser.ID}})
	if err != nil {
		t.Fatal(err)
	}

	emails := func(f quarry.UserFilter) ([]string, int) {
		t.Helper()
		ps, total, err := db.People(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for _, p := range ps {
			out = append(out, p.Email)
		}
		return out, total
	}
	for _, tc := range []struct {
		name  string
		f     quarry.UserFilter
		want  []string
		total int
	}{
		{"first page", quarry.UserFilter{Limit: 3}, []string{"admin@example.com", "user00@example.com", "user01@example.com"}, 13},
		{"last page", quarry.UserFilter{Limit: 5, Offset: 10}, []string{"user09@example.com", "user10@example.com", "user11@example.com"}, 13},
		{"query on the email, any case", quarry.UserFilter{Query: "USER1", Limit: 10}, []string{"user10@example.com", "user11@example.com"}, 2},
		{"query on the name, % literal", quarry.UserFilter{Query: "100% 7", Limit: 10}, []string{"user07@example.com"}, 1},
		{"_ is not a wildcard", quarry.UserFilter{Query: "user_1", Limit: 10}, []string{}, 0},
		{"roles", quarry.UserFilter{Roles: []quarry.Role{quarry.RoleAdmin, quarry.RoleGlobalCurator}, Limit: 10},
			[]string{"admin@example.com", "user04@example.com"}, 2},
		{"deactivated", quarry.UserFilter{Active: ptr(false), Limit: 10}, []string{"user03@example.com"}, 1},
	} {
		got, total := emails(tc.f)
		if !cmp.Equal(got, tc.want) || total != tc.total {
			t.Errorf("%s: %v (total %d); want %v (total %d)", tc.name, got, total, tc.want, tc.total)
		}
	}
	ps, _, _ := db.People(ctx, quarry.UserFilter{Query: "admin@", Limit: 1})
	// The default group of its role first (migration 00008 makes Admin
	// first, id 1), then G.
	if want := []quarry.GroupBrief{{ID: 1, Name: "Admin"}, {ID: g.ID, Name: "G"}}; !cmp.Equal(ps[0].Groups, want) || !ps[0].PasswordConfigured {
		t.Errorf("admin's groups %+v, password %v", ps[0].Groups, ps[0].PasswordConfigured)
	}
}

// TestFirstSignInsAtOnce: the first sign-ins of one person at once (two
// tabs, a client's parallel requests) all succeed, with one account.
func TestFirstSignInsAtOnce(t *testing.T) {
	for round := range 5 {
		u, keys := storetest.URL(t), storetest.Key(t)
		dbs := []*store.DB{storetest.OpenURL(t, u, keys), storetest.OpenURL(t, u, keys)}
		id := &quarry.Identity{Issuer: "https://idp.example.com", Subject: "s", Email: "p@example.com", EmailVerified: true, Role: quarry.RoleBasic}
		var wg sync.WaitGroup
		users := make([]string, 6)
		for i := range users {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if i%2 == 0 {
					_, u, err := dbs[i%2].SignInOIDC(ctx, id, quarry.NewSession{Method: quarry.SignInOIDC}, testSessions)
					if err != nil {
						t.Errorf("round %d: sign-in %d: %v", round, i, err)
						return
					}
					users[i] = u.ID
					return
				}
				c, err := dbs[i%2].IdentityCaller(ctx, id)
				if err != nil {
					t.Errorf("round %d: token %d: %v", round, i, err)
					return
				}
				users[i] = c.ID
			}()
		}
		wg.Wait()
		for _, u := range users {
			if u != users[0] {
				t.Fatalf("round %d: accounts %v, want one", round, users)
			}
		}
	}
}

// TestLastAdminAtOnce: two admins stepping down at once cannot both.
func TestLastAdminAtOnce(t *testing.T) {
	u, keys := storetest.URL(t), storetest.Key(t)
	dbs := []*store.DB{storetest.OpenURL(t, u, keys), storetest.OpenURL(t, u, keys)}
	open := &quarry.RegistrationPolicy{Mode: quarry.RegistrationOpen}
	a := register(t, dbs[0], "a@example.com", open) // the first: admin
	b := register(t, dbs[0], "b@example.com", open)
	ca := &quarry.Caller{User: *a}
	for round := range 10 {
		for _, email := range []string{"a@example.com", "b@example.com"} {
			if err := dbs[0].SetRole(ctx, ca, email, quarry.RoleAdmin, false); err != nil {
				t.Fatal(err)
			}
		}
		var wg sync.WaitGroup
		for i, email := range []string{"a@example.com", "b@example.com"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				dbs[i].SetRole(ctx, &quarry.Caller{User: quarry.User{ID: []string{a.ID, b.ID}[i], Role: quarry.RoleAdmin}}, email, quarry.RoleBasic, false)
			}()
		}
		wg.Wait()
		people, _, err := dbs[0].People(ctx, quarry.UserFilter{Roles: []quarry.Role{quarry.RoleAdmin}, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(people) != 1 {
			t.Fatalf("round %d: %d admins left, want 1", round, len(people))
		}
	}
}

// TestFillEmailKeys: accounts made before the migration that adds email
// skeletons get theirs at the next Migrate, and their keys in the
// NFKC case-folded form; a key another account has already stays as it
// was.
func TestFillEmailKeys(t *testing.T) {
	db, _ := openClocked(t)
	open := &quarry.RegistrationPolicy{Mode: quarry.RegistrationOpen}
	kate := register(t, db, "kate@corp.example", open)
	// As an earlier build made them: a full-width Kate had a key of her
	// own, lower-cased only; nobody had a skeleton.
	wide := register(t, db, "zed@corp.example", open)
	if err := db.ExecForTest(ctx, `UPDATE users SET email = $1, email_key = $2 WHERE id = $3`,
		"\uff2bate@corp.example", strings.ToLower("\uff2bate@corp.example"), wide.ID); err != nil {
		t.Fatal(err)
	}
	full := register(t, db, "yan@corp.example", open)
	if err := db.ExecForTest(ctx, `UPDATE users SET email = $1, email_key = $2 WHERE id = $3`,
		"\uff39an@corp.example", strings.ToLower("\uff39an@corp.example"), full.ID); err != nil {
		t.Fatal(err)
	}
	if err := db.ExecForTest(ctx, `UPDATE users SET email_skeleton = NULL`); err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ id, key string }{
		{kate.ID, "kate@corp.example"},
		{wide.ID, "\uff4bate@corp.example"}, // kate's key is taken: kept as it was
		{full.ID, "yan@corp.example"},
	} {
		var key, skeleton string
		if err := db.QueryRowForTest(ctx, fmt.Sprintf(`SELECT email_key, email_skeleton FROM users WHERE id = '%s'`, tc.id), &key, &skeleton); err != nil {
			t.Fatal(err)
		}
		if key != tc.key || skeleton != quarry.EmailSkeleton(key) {
			t.Errorf("user %s: key %q, skeleton %q; want %q", tc.id, key, skeleton, tc.key)
		}
	}
	// Yan signs in as yan@ now; a lookalike of Yan is refused.
	if id, _, _, _ := db.PasswordAccount(ctx, "yan@corp.example"); id != full.ID {
		t.Errorf("yan@ opens %q", id)
	}
	if _, err := db.Register(ctx, "\u0443an@corp.example", nil, "h", "", open); code(err) != "invalid: The email's name part mixes scripts (such as Latin and Cyrillic letters); use an address in one script" {
		t.Errorf("a mixed lookalike: %s", code(err))
	}
	if _, err := db.Register(ctx, "\u0443\u0430n@corp.example", nil, "h", "", open); code(err) != "invalid: The email's name part mixes scripts (such as Latin and Cyrillic letters); use an address in one script" {
		t.Errorf("a mixed lookalike: %s", code(err))
	}
	register(t, db, "cop@corp.example", open)
	if _, err := db.Register(ctx, "\u0441\u043e\u0440@corp.example", nil, "h", "", open); code(err) != "invalid: This email looks like the email of an existing account; use another, or ask an admin" {
		t.Errorf("a Cyrillic lookalike: %s", code(err))
	}
}
