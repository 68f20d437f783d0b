package quarry_test

import (
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
)

// errText returns the message of err, "" for nil, with its code.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return quarry.ErrorCode(err) + ": " + quarry.ErrorMessage(err)
}

func TestRegistrationPolicy(t *testing.T) {
	const (
		closed   = "forbidden: Registration is closed; sign in with single sign-on or ask an admin"
		domain   = "forbidden: Accounts are for emails of these domains only: corp.example, lab.example"
		invite   = "forbidden: Registration is by invitation only, and this email has not been invited"
		noLink   = "forbidden: Registration is by invitation only: register with the link of your invitation (if it has expired, ask an admin for a new one)"
		taken    = "invalid: A user with this email already exists"
		lookLike = "invalid: This email looks like the email of an existing account; use another, or ask an admin"
	)
	domains := quarry.EmailDomains{"corp.example", "lab.example"}
	open := quarry.RegistrationPolicy{Mode: quarry.RegistrationOpen}
	byInvite := quarry.RegistrationPolicy{Mode: quarry.RegistrationInvite}
	for _, tt := range []struct {
		name string
		p    quarry.RegistrationPolicy
		key  string
		f    quarry.RegistrationFacts
		want string
	}{
		{"open", open, "a@x.example", quarry.RegistrationFacts{}, ""},
		{"open, the first", open, "a@x.example", quarry.RegistrationFacts{First: true}, ""},
		{"open, taken", open, "a@x.example", quarry.RegistrationFacts{Taken: true}, taken},
		{"open, a lookalike", open, "a@x.example", quarry.RegistrationFacts{Lookalike: true}, lookLike},
		{"invite, not invited", byInvite, "a@x.example", quarry.RegistrationFacts{}, invite},
		{"invite, invited without the link's token", byInvite, "a@x.example", quarry.RegistrationFacts{Invited: quarry.InvitationMismatch}, noLink},
		{"invite, with the link's token", byInvite, "a@x.example", quarry.RegistrationFacts{Invited: quarry.InvitationMatched}, ""},
		{"invite, the first", byInvite, "a@x.example", quarry.RegistrationFacts{First: true}, ""},
		{"invite, the link's token but taken", byInvite, "a@x.example", quarry.RegistrationFacts{Taken: true, Invited: quarry.InvitationMatched}, taken},
		{"closed binds the first", quarry.RegistrationPolicy{Mode: quarry.RegistrationClosed}, "a@x.example", quarry.RegistrationFacts{First: true}, closed},
		{"closed binds the invited", quarry.RegistrationPolicy{Mode: quarry.RegistrationClosed}, "a@x.example", quarry.RegistrationFacts{Invited: quarry.InvitationMatched}, closed},
		{"closed is told before taken", quarry.RegistrationPolicy{Mode: quarry.RegistrationClosed}, "a@x.example", quarry.RegistrationFacts{Taken: true}, closed},
		{"domain allowed", quarry.RegistrationPolicy{Mode: quarry.RegistrationOpen, Domains: domains}, "a@lab.example", quarry.RegistrationFacts{}, ""},
		{"domain binds the first", quarry.RegistrationPolicy{Mode: quarry.RegistrationOpen, Domains: domains}, "a@x.example", quarry.RegistrationFacts{First: true}, domain},
		{"domain binds the invited", quarry.RegistrationPolicy{Mode: quarry.RegistrationInvite, Domains: domains}, "a@x.example", quarry.RegistrationFacts{Invited: quarry.InvitationMatched}, domain},
		{"a subdomain is another domain", quarry.RegistrationPolicy{Mode: quarry.RegistrationOpen, Domains: domains}, "a@eu.corp.example", quarry.RegistrationFacts{}, domain},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := errText(tt.p.Check(tt.key, tt.f)); got != tt.want {
				t.Errorf("Check(%q, %+v) = %q, want %q", tt.key, tt.f, got, tt.want)
			}
		})
	}
	if quarry.NewAccountRole(true) != quarry.RoleAdmin || quarry.NewAccountRole(false) != quarry.RoleBasic {
		t.Error("NewAccountRole: the first person is an admin, everyone after basic")
	}
}

func TestMatchInvitation(t *testing.T) {
	token, hash := quarry.NewInvitationToken()
	now := quarry.TimeFromMicros(1_000_000)
	later, earlier := quarry.TimeFromMicros(2_000_000), quarry.TimeFromMicros(999_999)
	other, _ := quarry.NewInvitationToken()
	for _, tt := range []struct {
		name    string
		exists  bool
		hash    *string
		expires *quarry.Time
		token   string
		want    quarry.InviteMatch
	}{
		{"no invitation", false, nil, nil, token, quarry.NotInvited},
		{"no link issued", true, nil, nil, token, quarry.InvitationMismatch},
		{"no token given", true, &hash, &later, "", quarry.InvitationMismatch},
		{"another token", true, &hash, &later, other, quarry.InvitationMismatch},
		{"expired", true, &hash, &earlier, token, quarry.InvitationMismatch},
		{"expires now", true, &hash, &now, token, quarry.InvitationMismatch},
		{"the token, in time", true, &hash, &later, token, quarry.InvitationMatched},
	} {
		if got := quarry.MatchInvitation(tt.exists, tt.hash, tt.expires, tt.token, now); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
	if !strings.HasPrefix(token, "qri_") || len(token) != 47 || hash != quarry.HashToken(token) {
		t.Errorf("token %q, hash %q", token, hash)
	}
}

func TestEmails(t *testing.T) {
	for _, tt := range []struct {
		in, email, key, err string
	}{
		{" Kate@Corp.Example ", "Kate@Corp.Example", "kate@corp.example", ""},
		{"\u212Aate@corp.example", "Kate@corp.example", "kate@corp.example", ""},
		{"\uff4b\uff41\uff54\uff45@corp.example", "kate@corp.example", "kate@corp.example", ""},
		{"STRASSE@corp.example", "STRASSE@corp.example", "strasse@corp.example", ""},
		{"stra\u00dfe@corp.example", "stra\u00dfe@corp.example", "strasse@corp.example", ""}, // case folding: ß is ss
		{"kate", "", "", `invalid: "kate" is not a valid email address`},
		{"ka te@corp.example", "", "", `invalid: "ka te@corp.example" is not a valid email address`},
	} {
		email, key, err := quarry.ParseEmail(tt.in)
		if email != tt.email || key != tt.key || errText(err) != tt.err {
			t.Errorf("ParseEmail(%q) = %q, %q, %q; want %q, %q, %q", tt.in, email, key, errText(err), tt.email, tt.key, tt.err)
		}
	}
	const mixed = "invalid: The email's name part mixes scripts (such as Latin and Cyrillic letters); use an address in one script"
	for _, tt := range []struct{ email, want string }{
		{"kate@corp.example", ""},
		{"k\u0430te@corp.example", mixed}, // a Cyrillic a
		{"c\u03bfp@corp.example", mixed},  // a Greek omicron
		{"\u043a\u0430\u0442\u044f@corp.example", ""},
		{"\u5c71\u7530.\u592a\u90ce@corp.example", ""},
		{"\u5c71\u7530\u3042@corp.example", ""}, // Han and Hiragana
		{"tanaka\u5c71\u7530@corp.example", ""}, // Latin and Han
		{"\ud55c\uad6d\u5c71@corp.example", ""}, // Hangul and Han
		{"\u0430\u3042@corp.example", mixed},    // Cyrillic and Hiragana
		{"kate.2026_x-y@c\u043erp.example", ""}, // the domain is not the name part
		{"ta\u0301ro@corp.example", ""},         // a combining accent is of every script
	} {
		if got := errText(quarry.CheckNewEmail(tt.email)); got != tt.want {
			t.Errorf("CheckNewEmail(%q) = %q, want %q", tt.email, got, tt.want)
		}
	}
	if quarry.EmailSkeleton("\u0441\u043e\u0440@corp.example") != quarry.EmailSkeleton("cop@corp.example") {
		t.Error("a Cyrillic сор does not look like cop")
	}
	if quarry.EmailSkeleton("kate@corp.example") == quarry.EmailSkeleton("kathy@corp.example") {
		t.Error("kate looks like kathy")
	}
}

func TestPasswordPolicy(t *testing.T) {
	p := quarry.NewPasswordPolicy(12)
	for _, tc := range []struct{ password, email, want string }{
		{"correct horse battery staple", "ann@example.com", ""},
		{"short", "ann@example.com", "The password must be at least 12 characters long"},
		{"éééééééééééé", "ann@example.com", ""}, // characters, not bytes
		{"1qaz2wsx3edc", "ann@example.com", "The password is one of the most common passwords; choose another"},
		{"1QAZ2WSX3EDC", "ann@example.com", "The password is one of the most common passwords; choose another"},
		{"Annabelle@Example.com", "annabelle@example.com", "The password must not contain the email address or its name part"},
		{"my name is annabelle!", "Annabelle@example.com", "The password must not contain the email address or its name part"},
		{"ann's long password", "ann@example.com", ""}, // a name part under 4 characters is not looked for
		{strings.Repeat("x", 1025), "ann@example.com", "The password is longer than 1024 bytes"},
	} {
		got := ""
		if err := p.Check(tc.password, tc.email); err != nil {
			got = quarry.ErrorMessage(err)
		}
		if got != tc.want {
			t.Errorf("Check(%.30q) = %q, want %q", tc.password, got, tc.want)
		}
	}
	// The list of common passwords is all there: a few from its start,
	// middle and end.
	for _, common := range []string{"123456", "password", "qwerty123456"} {
		if quarry.ErrorMessage(quarry.NewPasswordPolicy(6).Check(common, "x@example.com")) == "" {
			t.Errorf("%q is not refused as common", common)
		}
	}
}

func TestRolePolicy(t *testing.T) {
	p := quarry.RolePolicy{AdminEmails: []string{"boss@example.com"}, Claim: "roles",
		Map: map[string]quarry.Role{"readers": quarry.RoleBasic, "curators": quarry.RoleCurator, "leads": quarry.RoleGlobalCurator,
			"contractors": quarry.RoleLimited}}
	for _, tt := range []struct {
		key      string
		verified bool
		values   []string
		want     quarry.Role
	}{
		{"a@example.com", true, []string{"readers", "leads", "curators"}, quarry.RoleGlobalCurator},
		{"a@example.com", true, []string{"contractors"}, quarry.RoleLimited},
		{"a@example.com", true, []string{"contractors", "readers"}, quarry.RoleBasic},
		{"a@example.com", true, []string{"unknown"}, quarry.RoleBasic},
		{"a@example.com", true, nil, quarry.RoleBasic},
		{"boss@example.com", true, []string{"contractors"}, quarry.RoleAdmin},
		{"boss@example.com", false, nil, quarry.RoleBasic}, // an admin email counts only when verified
	} {
		if got, from := p.Role(tt.key, tt.verified, tt.values); got != tt.want || !from {
			t.Errorf("Role(%s, %t, %v) = %s, %t; want %s, true", tt.key, tt.verified, tt.values, got, from, tt.want)
		}
	}
	if _, from := (&quarry.RolePolicy{}).Role("a@example.com", true, nil); from {
		t.Error("without a claim the provider does not decide roles")
	}
	order := []quarry.Role{quarry.RoleLimited, quarry.RoleBasic, quarry.RoleCurator, quarry.RoleGlobalCurator, quarry.RoleAdmin}
	for i, r := range order {
		if r.Rank() != i {
			t.Errorf("%s.Rank() = %d, want %d", r, r.Rank(), i)
		}
	}
	if quarry.Role("owner").Rank() != -1 {
		t.Error("an unknown role has a rank")
	}
}

func TestIdentityRules(t *testing.T) {
	for _, tt := range []struct {
		name     string
		id       quarry.Identity
		role     quarry.Role
		outdated bool
	}{
		{"provider decides, differs", quarry.Identity{Role: quarry.RoleAdmin, RoleFromProvider: true}, quarry.RoleBasic, true},
		{"provider decides, same", quarry.Identity{Role: quarry.RoleBasic, RoleFromProvider: true}, quarry.RoleBasic, false},
		{"provider does not decide", quarry.Identity{Role: quarry.RoleAdmin}, quarry.RoleBasic, false},
		{"a curator by flags stays one", quarry.Identity{Role: quarry.RoleBasic, RoleFromProvider: true}, quarry.RoleCurator, false},
		{"a curator the provider makes admin", quarry.Identity{Role: quarry.RoleAdmin, RoleFromProvider: true}, quarry.RoleCurator, true},
	} {
		if got := tt.id.RoleOutOfDate(tt.role); got != tt.outdated {
			t.Errorf("%s: RoleOutOfDate = %t, want %t", tt.name, got, tt.outdated)
		}
	}
}

func TestCheckLink(t *testing.T) {
	basic := &quarry.User{Role: quarry.RoleBasic}
	ext := func(s string) *string { return &s }
	okta := &quarry.Identity{Subject: "00u1"}
	entra := &quarry.Identity{Subject: "pairwise", ObjectID: "oid-1"}
	for _, tt := range []struct {
		name     string
		id       *quarry.Identity
		u        *quarry.User
		external *string
		linked   bool
	}{
		{"verified email", &quarry.Identity{EmailVerified: true}, basic, nil, true},
		{"verified email, admin", &quarry.Identity{EmailVerified: true}, &quarry.User{Role: quarry.RoleAdmin}, nil, true},
		{"unverified email", &quarry.Identity{}, basic, nil, false},
		{"unverified, not a directory person", okta, basic, nil, false},
		{"directory externalId is the subject", okta, basic, ext("00u1"), true},
		{"directory externalId is the object id", entra, basic, ext("oid-1"), true},
		{"limited user", okta, &quarry.User{Role: quarry.RoleLimited}, ext("00u1"), true},
		{"another externalId", okta, basic, ext("00u2"), false},
		{"empty externalId", &quarry.Identity{}, basic, ext(""), false},
		{"no object id does not match an empty one", &quarry.Identity{Subject: "s"}, basic, ext(""), false},
		{"admin", okta, &quarry.User{Role: quarry.RoleAdmin}, ext("00u1"), false},
		{"curator", okta, &quarry.User{Role: quarry.RoleCurator}, ext("00u1"), false},
		{"global curator", entra, &quarry.User{Role: quarry.RoleGlobalCurator}, ext("oid-1"), false},
	} {
		err := tt.id.CheckLink(tt.u, tt.external)
		if (err == nil) != tt.linked || (err != nil && err != quarry.ErrNotLinkable) {
			t.Errorf("%s: CheckLink = %v, want linked %t", tt.name, err, tt.linked)
		}
	}
}

func TestSignInLimits(t *testing.T) {
	start := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	l := quarry.DefaultSignInLimits()
	at := func(n int) quarry.AttemptCount { return quarry.AttemptCount{N: n, Start: start} }
	const refused14 = "too_many: Too many failed sign-ins; try again in 14 minutes"
	for _, tt := range []struct {
		name                string
		pair, account, addr int
		now                 time.Duration
		want                string
		wait                time.Duration
	}{
		{"first attempt", 1, 1, 1, time.Minute, "", 0},
		{"10th from one address", 10, 10, 10, time.Minute, "", 0},
		{"11th from one address", 11, 11, 11, time.Minute, refused14, 14 * time.Minute},
		{"the account under attack, a clean address", 1, 500, 3, time.Minute, "", 0},
		{"the account under attack, an address that failed for it", 2, 11, 2, time.Minute, refused14, 14 * time.Minute},
		{"the account not under attack, an address that failed", 5, 10, 5, time.Minute, "", 0},
		{"an address spraying accounts", 1, 1, 101, time.Minute, refused14, 14 * time.Minute},
		{"half a minute left", 11, 11, 11, 14*time.Minute + 30*time.Second, "too_many: Too many failed sign-ins; try again in 1 minute", 30 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := l.CheckSignIn(at(tt.pair), at(tt.account), at(tt.addr), start.Add(tt.now))
			if got := errText(err); got != tt.want {
				t.Fatalf("CheckSignIn = %q, want %q", got, tt.want)
			}
			var qe *quarry.Error
			if err != nil && (!asError(err, &qe) || qe.RetryAfter != tt.wait) {
				t.Errorf("RetryAfter %v, want %v", qe.RetryAfter, tt.wait)
			}
		})
	}
	if err := l.CheckRegistration(at(20), start); err != nil {
		t.Errorf("20 registrations: %v", err)
	}
	if got := errText(l.CheckRegistration(at(21), start)); got != "too_many: Too many registrations from this address; try again in 15 minutes" {
		t.Errorf("21 registrations: %q", got)
	}
	d := quarry.DefaultSignInLimits()
	if d.Window != 15*time.Minute || d.PerAccountAddress != 10 || d.PerAccount != 10 || d.PerAddress != 100 || d.Registrations != 20 {
		t.Errorf("DefaultSignInLimits() = %+v", d)
	}
}

func TestAttemptKeys(t *testing.T) {
	pair, account, address := quarry.AttemptKeys("ann@example.com", "192.0.2.1")
	for _, k := range []string{pair, account} {
		if strings.Contains(k, "ann") {
			t.Errorf("key %q shows the email", k)
		}
	}
	if !strings.HasPrefix(pair, "pair:") || !strings.HasSuffix(pair, " 192.0.2.1") || !strings.HasPrefix(account, "account:") || address != "address:192.0.2.1" {
		t.Errorf("AttemptKeys = %q, %q, %q", pair, account, address)
	}
	other, account2, _ := quarry.AttemptKeys("ann@example.com", "192.0.2.2")
	if other == pair || account2 != account {
		t.Error("two addresses share a pair key, or the account's key depends on the address")
	}
	if quarry.RegistrationKey("2001:db8:1:2:aaaa::1") != "register:2001:db8:1:2::/64" {
		t.Errorf("RegistrationKey = %q", quarry.RegistrationKey("2001:db8:1:2:aaaa::1"))
	}
	for _, tt := range []struct{ in, want string }{
		{"192.0.2.1", "192.0.2.1"},
		{"::ffff:192.0.2.1", "192.0.2.1"},
		{"2001:db8:1:2:aaaa:bbbb:cccc:dddd", "2001:db8:1:2::/64"},
		{"2001:db8:1:2::1", "2001:db8:1:2::/64"},
		{"2001:db8:1:3::1", "2001:db8:1:3::/64"},
		{"fe80::1%eth0", "fe80::/64"},
		{"::1", "::/64"},
		{"not an address", "not an address"},
	} {
		if got := quarry.ThrottleAddress(tt.in); got != tt.want {
			t.Errorf("ThrottleAddress(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func asError(err error, target **quarry.Error) bool {
	e, ok := err.(*quarry.Error)
	*target = e
	return ok
}
