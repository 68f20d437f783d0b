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
		closed = "forbidden: Registration is closed; sign in with single sign-on or ask an admin"
		domain = "forbidden: Accounts are for emails of these domains only: corp.example, lab.example"
		invite = "forbidden: Registration is by invitation only, and this email has not been invited"
	)
	domains := quarry.EmailDomains{"corp.example", "lab.example"}
	for _, tt := range []struct {
		name           string
		p              quarry.RegistrationPolicy
		key            string
		first, invited bool
		want           string
	}{
		{"open", quarry.RegistrationPolicy{Mode: quarry.RegistrationOpen}, "a@x.example", false, false, ""},
		{"open, the first", quarry.RegistrationPolicy{Mode: quarry.RegistrationOpen}, "a@x.example", true, false, ""},
		{"invite, not invited", quarry.RegistrationPolicy{Mode: quarry.RegistrationInvite}, "a@x.example", false, false, invite},
		{"invite, invited", quarry.RegistrationPolicy{Mode: quarry.RegistrationInvite}, "a@x.example", false, true, ""},
		{"invite, the first", quarry.RegistrationPolicy{Mode: quarry.RegistrationInvite}, "a@x.example", true, false, ""},
		{"closed binds the first", quarry.RegistrationPolicy{Mode: quarry.RegistrationClosed}, "a@x.example", true, false, closed},
		{"closed binds the invited", quarry.RegistrationPolicy{Mode: quarry.RegistrationClosed}, "a@x.example", false, true, closed},
		{"domain allowed", quarry.RegistrationPolicy{Mode: quarry.RegistrationOpen, Domains: domains}, "a@lab.example", false, false, ""},
		{"domain binds the first", quarry.RegistrationPolicy{Mode: quarry.RegistrationOpen, Domains: domains}, "a@x.example", true, false, domain},
		{"domain binds the invited", quarry.RegistrationPolicy{Mode: quarry.RegistrationInvite, Domains: domains}, "a@x.example", false, true, domain},
		{"a subdomain is another domain", quarry.RegistrationPolicy{Mode: quarry.RegistrationOpen, Domains: domains}, "a@eu.corp.example", false, false, domain},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := errText(tt.p.Check(tt.key, tt.first, tt.invited)); got != tt.want {
				t.Errorf("Check(%q, first %t, invited %t) = %q, want %q", tt.key, tt.first, tt.invited, got, tt.want)
			}
		})
	}
	if quarry.NewAccountRole(true) != quarry.RoleAdmin || quarry.NewAccountRole(false) != quarry.RoleBasic {
		t.Error("NewAccountRole: the first person is an admin, everyone after basic")
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
	if err := (&quarry.Identity{EmailVerified: true}).CheckLink(); err != nil {
		t.Errorf("a verified email is linked: %v", err)
	}
	if err := (&quarry.Identity{}).CheckLink(); err != quarry.ErrNotLinkable {
		t.Errorf("an email the provider does not vouch for is linked: %v", err)
	}
}

func TestThrottle(t *testing.T) {
	start := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	window := 15 * time.Minute
	th := quarry.Throttle{Key: quarry.ThrottleKey("account", "ann@example.com"), Limit: 10}
	for _, tt := range []struct {
		count int
		now   time.Time
		want  string
		wait  time.Duration
	}{
		{10, start.Add(time.Minute), "", 0},
		{11, start.Add(time.Minute), "too_many: Too many failed sign-ins; try again in 14 minutes", 14 * time.Minute},
		{11, start.Add(14*time.Minute + 30*time.Second), "too_many: Too many failed sign-ins; try again in 1 minute", 30 * time.Second},
	} {
		err := th.Check(tt.count, start, tt.now, window)
		if got := errText(err); got != tt.want {
			t.Errorf("Check(%d at %s) = %q, want %q", tt.count, tt.now.Sub(start), got, tt.want)
		}
		var qe *quarry.Error
		if err != nil && (!asError(err, &qe) || qe.RetryAfter != tt.wait) {
			t.Errorf("Check(%d): RetryAfter %v, want %v", tt.count, qe.RetryAfter, tt.wait)
		}
	}
	if k := quarry.ThrottleKey("account", "ann@example.com"); !strings.HasPrefix(k, "account:") || strings.Contains(k, "ann") || len(k) != len("account:")+32 {
		t.Errorf("an account's key %q shows its email or is not a hash", k)
	}
	if k := quarry.ThrottleKey("address", "192.0.2.1"); k != "address:192.0.2.1" {
		t.Errorf("an address's key is %q", k)
	}
	d := quarry.DefaultSignInLimits()
	if d.Window != 15*time.Minute || d.PerAccount != 10 || d.PerAddress != 100 || d.Registrations != 20 {
		t.Errorf("DefaultSignInLimits() = %+v", d)
	}
}

func asError(err error, target **quarry.Error) bool {
	e, ok := err.(*quarry.Error)
	*target = e
	return ok
}
