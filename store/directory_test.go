package store_test

import (
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/storetest"
)

func sp(s string) *string { return &s }

// directory returns the caller of a new SCIM token of db.
func directory(t *testing.T, db *store.DB) *quarry.Caller {
	t.Helper()
	admin := &quarry.Caller{User: quarry.User{ID: "", Role: quarry.RoleAdmin}}
	_, token, err := db.CreateSCIMToken(ctx, admin, "okta")
	if err != nil {
		t.Fatal(err)
	}
	c, err := db.SCIMCaller(ctx, quarry.HashToken(token))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestSCIMTokens(t *testing.T) {
	db, clk := openClocked(t)
	admin := &quarry.Caller{User: quarry.User{Role: quarry.RoleAdmin}}
	if got, err := db.ActiveSCIMToken(ctx); got != nil || err != nil {
		t.Fatalf("no token yet: %v, %v", got, err)
	}
	first, token1, err := db.CreateSCIMToken(ctx, admin, "first")
	if err != nil {
		t.Fatal(err)
	}
	if !quarry.ValidSCIMTokenFormat(token1) || first.Display != "qrd_****"+token1[len(token1)-4:] {
		t.Errorf("token %q, display %q", token1, first.Display)
	}
	if _, err := db.SCIMCaller(ctx, quarry.HashToken(token1)); err != nil {
		t.Fatal(err)
	}
	got, err := db.ActiveSCIMToken(ctx)
	if err != nil || got.LastUsedAt == nil || !got.LastUsedAt.Equal(clk.Now()) {
		t.Fatalf("last use not recorded: %+v, %v", got, err)
	}
	// Used again within the minute: not written again.
	clk.advance(30e9)
	db.SCIMCaller(ctx, quarry.HashToken(token1))
	if got, _ := db.ActiveSCIMToken(ctx); got.LastUsedAt.Equal(clk.Now()) {
		t.Errorf("last use written twice within a minute")
	}
	second, token2, err := db.CreateSCIMToken(ctx, admin, "second")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.SCIMCaller(ctx, quarry.HashToken(token1)); code(err) != "unauthorized: Not authenticated" {
		t.Errorf("the first token after the second was made: %s", code(err))
	}
	c, err := db.SCIMCaller(ctx, quarry.HashToken(token2))
	if err != nil || c.Directory.ID != second.ID || c.ID != "" || c.IsAdmin() {
		t.Fatalf("the second token: %+v, %v", c, err)
	}
	if err := db.RevokeSCIMToken(ctx, admin); err != nil {
		t.Fatal(err)
	}
	if err := db.RevokeSCIMToken(ctx, admin); code(err) != "not_found: There is no active SCIM token" {
		t.Errorf("revoking none: %s", code(err))
	}
	if _, err := db.SCIMCaller(ctx, quarry.HashToken(token2)); err == nil {
		t.Errorf("a revoked token opens SCIM")
	}
	_ = first
}

func TestSCIMTokensAtOnce(t *testing.T) {
	u, keys := storetest.URL(t), storetest.Key(t)
	dbs := []*store.DB{storetest.OpenURL(t, u, keys), storetest.OpenURL(t, u, keys)}
	admin := &quarry.Caller{User: quarry.User{Role: quarry.RoleAdmin}}
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, _, err := dbs[i%2].CreateSCIMToken(ctx, admin, strconv.Itoa(i)); err != nil {
				t.Errorf("token %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	if got, err := dbs[0].ActiveSCIMToken(ctx); got == nil || err != nil {
		t.Errorf("no active token: %v", err)
	}
}

// okta is a person as Okta provisions them.
func okta(userName, given, family string) *quarry.DirectoryUser {
	return &quarry.DirectoryUser{UserName: userName, GivenName: &given, FamilyName: &family,
		Emails: []quarry.DirectoryEmail{{Value: userName, Type: sp("work"), Primary: true}}, Active: true}
}

func TestDirectoryUsers(t *testing.T) {
	db, _ := openClocked(t)
	dir := directory(t, db)
	open := &quarry.RegistrationPolicy{Mode: quarry.RegistrationOpen}
	admin := register(t, db, "boss@corp.example", open) // the first: admin

	ann, err := db.CreateDirectoryUser(ctx, dir, okta("ann@corp.example", "Ann", "Lee"), nil)
	if err != nil {
		t.Fatal(err)
	}
	// A new person joins the default group of their role (basic), which
	// the directory sees as it sees every group.
	if ann.Email != "ann@corp.example" || *ann.Name != "Ann Lee" || !ann.Active || len(ann.Groups) != 1 || ann.Groups[0].Name != quarry.DefaultGroupBasic {
		t.Errorf("created: %+v", ann)
	}
	// The same userName (any case), email or externalId again: 409.
	for _, in := range []*quarry.DirectoryUser{
		okta("ANN@corp.example", "A", "L"),
		{UserName: "ann2", Emails: []quarry.DirectoryEmail{{Value: "Ann@Corp.Example", Primary: true}}, Active: true},
	} {
		if _, err := db.CreateDirectoryUser(ctx, dir, in, nil); quarry.ErrorCode(err) != quarry.ECONFLICT {
			t.Errorf("%s again: %s", in.UserName, code(err))
		}
	}
	// A person who registered is adopted, not duplicated.
	bob := register(t, db, "bob@corp.example", open)
	got, err := db.CreateDirectoryUser(ctx, dir, okta("bob@corp.example", "Bob", "Ray"), nil)
	if err != nil || got.ID != bob.ID || *got.Name != "Bob Ray" {
		t.Fatalf("adopting Bob: %+v, %v", got, err)
	}
	// A lookalike of an account, or a domain not allowed: refused.
	if _, err := db.CreateDirectoryUser(ctx, dir, okta("b\u043eb@corp.example", "B", "R"), nil); quarry.ErrorCode(err) != quarry.EINVALID {
		t.Errorf("a lookalike: %s", code(err))
	}
	if _, err := db.CreateDirectoryUser(ctx, dir, okta("eve@other.example", "E", "V"), quarry.EmailDomains{"corp.example"}); quarry.ErrorCode(err) != quarry.EFORBIDDEN {
		t.Errorf("another domain: %s", code(err))
	}

	// A change that changes nothing writes nothing.
	_, before, _ := db.AuditEvents(ctx, quarry.AuditFilter{Limit: 1000})
	same, err := db.UpdateDirectoryUser(ctx, dir, ann.ID, nil, nil, func(u *quarry.DirectoryUser) error { u.Active = true; return nil })
	if err != nil || same.Version() != ann.Version() || !same.UpdatedAt.Equal(ann.UpdatedAt.Time) {
		t.Errorf("a no-op change: %+v, %v", same, err)
	}
	if _, after, _ := db.AuditEvents(ctx, quarry.AuditFilter{Limit: 1000}); after != before {
		t.Errorf("a no-op change was audited")
	}
	// If-Match.
	if _, err := db.UpdateDirectoryUser(ctx, dir, ann.ID, []string{`W/"nope"`}, nil, func(*quarry.DirectoryUser) error { return nil }); quarry.ErrorCode(err) != quarry.EPRECONDITION {
		t.Errorf("a stale If-Match: %s", code(err))
	}
	// Deactivation ends sessions.
	if _, err := db.OpenSession(ctx, ann.ID, quarry.NewSession{Method: quarry.SignInOIDC}, testSessions, store.Attempt{}); err != nil {
		t.Fatal(err)
	}
	off, err := db.UpdateDirectoryUser(ctx, dir, ann.ID, []string{`W/"` + ann.Version() + `"`}, nil, func(u *quarry.DirectoryUser) error { u.Active = false; return nil })
	if err != nil || off.Active || off.Version() == ann.Version() {
		t.Fatalf("deactivating: %+v, %v", off, err)
	}
	if ss, _ := db.Sessions(ctx, "ann@corp.example", testSessions); len(ss) != 0 {
		t.Errorf("Ann's sessions after deactivation: %d", len(ss))
	}
	// An admin cannot activate a person the directory deactivated; may
	// deactivate one it says is active, and undo that.
	ca := &quarry.Caller{User: *admin}
	if err := db.SetActive(ctx, ca, "ann@corp.example", true); quarry.ErrorCode(err) != quarry.ECONFLICT {
		t.Errorf("activating Ann by hand: %s", code(err))
	}
	if err := db.SetActive(ctx, ca, "bob@corp.example", false); err != nil {
		t.Errorf("deactivating Bob by hand: %v", err)
	}
	// The directory changes something else of Bob meanwhile: his
	// deactivation stays, and stays the admin's to undo.
	if _, err := db.UpdateDirectoryUser(ctx, dir, bob.ID, nil, nil, func(u *quarry.DirectoryUser) error { u.DisplayName = sp("Bobby"); return nil }); err != nil {
		t.Fatal(err)
	}
	if err := db.SetActive(ctx, ca, "bob@corp.example", true); err != nil {
		t.Errorf("undoing it: %v", err)
	}
	// The directory cannot move an admin's email.
	adminDir, err := db.CreateDirectoryUser(ctx, dir, okta("boss@corp.example", "The", "Boss"), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.UpdateDirectoryUser(ctx, dir, adminDir.ID, nil, nil, func(u *quarry.DirectoryUser) error {
		u.Emails[0].Value, u.UserName = "mallory@corp.example", "mallory@corp.example"
		return nil
	})
	if quarry.ErrorCode(err) != quarry.EFORBIDDEN {
		t.Errorf("moving the admin's email: %s", code(err))
	}
	// ... and deactivates no admin or curator, last or not, by active
	// false or by a deletion (issue 31: 403, as for renames).
	second := register(t, db, "second@corp.example", open)
	if err := db.SetRole(ctx, &quarry.Caller{User: *admin}, second.Email, quarry.RoleAdmin, false); err != nil {
		t.Fatal(err)
	}
	refusedDeactivation := "forbidden: The directory cannot deactivate an admin or curator (boss@corp.example): deactivate them in Quarry, or demote them first"
	if _, err := db.UpdateDirectoryUser(ctx, dir, adminDir.ID, nil, nil, func(u *quarry.DirectoryUser) error { u.Active = false; return nil }); code(err) != refusedDeactivation {
		t.Errorf("deactivating an admin: %s", code(err))
	}
	if err := db.DeleteDirectoryUser(ctx, dir, adminDir.ID, nil); code(err) != refusedDeactivation {
		t.Errorf("deleting an admin: %s", code(err))
	}
	// Adopting the second admin's account inactive is refused too.
	in := okta("second@corp.example", "Sec", "Ond")
	in.Active = false
	if _, err := db.CreateDirectoryUser(ctx, dir, in, nil); code(err) != strings.ReplaceAll(refusedDeactivation, "boss@", "second@") {
		t.Errorf("adopting an admin inactive: %s", code(err))
	}
	if u, err := db.DirectoryUser(ctx, adminDir.ID); err != nil || !u.Active {
		t.Errorf("the admin after the directory's attempts: %+v, %v", u, err)
	}

	// Filters.
	for _, tt := range []struct {
		f    *quarry.DirectoryFilter
		want []string
	}{
		{nil, []string{ann.ID, bob.ID, adminDir.ID}},
		{&quarry.DirectoryFilter{Op: quarry.FilterEq, Attr: "userName", Value: "ANN@CORP.EXAMPLE"}, []string{ann.ID}},
		{&quarry.DirectoryFilter{Op: quarry.FilterStartsWith, Attr: "userName", Value: "b"}, []string{bob.ID, adminDir.ID}},
		{&quarry.DirectoryFilter{Op: quarry.FilterContains, Attr: "emails.value", Value: "OB@"}, []string{bob.ID}},
		{&quarry.DirectoryFilter{Op: quarry.FilterEndsWith, Attr: "displayName", Value: "BBY"}, []string{bob.ID}},
		{&quarry.DirectoryFilter{Op: quarry.FilterEq, Attr: "active", Value: "false"}, []string{ann.ID}},
		{&quarry.DirectoryFilter{Op: quarry.FilterPresent, Attr: "externalId"}, nil},
		{&quarry.DirectoryFilter{Op: quarry.FilterNot, Left: &quarry.DirectoryFilter{Op: quarry.FilterEq, Attr: "externalId", Value: "x"}}, []string{ann.ID, bob.ID, adminDir.ID}},
		{&quarry.DirectoryFilter{Op: quarry.FilterOr,
			Left:  &quarry.DirectoryFilter{Op: quarry.FilterEq, Attr: "id", Value: ann.ID},
			Right: &quarry.DirectoryFilter{Op: quarry.FilterEq, Attr: "userName", Value: "bob@corp.example"}}, []string{ann.ID, bob.ID}},
	} {
		us, total, err := db.DirectoryUsers(ctx, tt.f, 1, 100)
		if err != nil {
			t.Errorf("%v: %v", tt.f, err)
			continue
		}
		var ids []string
		for _, u := range us {
			ids = append(ids, u.ID)
		}
		if !slices.Equal(ids, tt.want) || total != len(tt.want) {
			t.Errorf("%v: %v (%d), want %v", tt.f, ids, total, tt.want)
		}
	}
	if us, total, _ := db.DirectoryUsers(ctx, nil, 2, 1); total != 3 || len(us) != 1 || us[0].ID != bob.ID {
		t.Errorf("page 2 of 1: %d of %d", len(us), total)
	}

	// Deleting: deactivated, no longer the directory's; a second time 404.
	if err := db.DeleteDirectoryUser(ctx, dir, bob.ID, nil); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteDirectoryUser(ctx, dir, bob.ID, nil); quarry.ErrorCode(err) != quarry.ENOTFOUND {
		t.Errorf("deleting twice: %s", code(err))
	}
	people, _, _ := db.People(ctx, quarry.UserFilter{Query: "bob@", Limit: 10})
	if len(people) != 1 || people[0].IsActive || people[0].SCIMSynced {
		t.Errorf("Bob after deletion: %+v", people)
	}
}

// TestDirectoryCreateAtOnce: identical creations at once (a provider's
// retries) make one person; the others get 409.
func TestDirectoryCreateAtOnce(t *testing.T) {
	u, keys := storetest.URL(t), storetest.Key(t)
	dbs := []*store.DB{storetest.OpenURL(t, u, keys), storetest.OpenURL(t, u, keys)}
	dir := directory(t, dbs[0])
	for round := range 5 {
		name := "p" + strconv.Itoa(round) + "@corp.example"
		var (
			wg       sync.WaitGroup
			mu       sync.Mutex
			ids      []string
			conflict int
		)
		for i := range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got, err := dbs[i%2].CreateDirectoryUser(ctx, dir, okta(name, "P", "Q"), nil)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					ids = append(ids, got.ID)
				case quarry.ErrorCode(err) == quarry.ECONFLICT:
					conflict++
				default:
					t.Errorf("round %d: %v", round, err)
				}
			}()
		}
		wg.Wait()
		if len(ids) != 1 || conflict != 5 {
			t.Errorf("round %d: %d made, %d conflicts", round, len(ids), conflict)
		}
	}
}

func TestDirectoryGroups(t *testing.T) {
	db, _ := openClocked(t)
	dir := directory(t, db)
	open := &quarry.RegistrationPolicy{Mode: quarry.RegistrationOpen}
	admin := register(t, db, "boss@corp.example", open)
	ca := &quarry.Caller{User: *admin}
	ann, _ := db.CreateDirectoryUser(ctx, dir, okta("ann@corp.example", "Ann", "Lee"), nil)
	cat, _ := db.CreateDirectoryUser(ctx, dir, okta("cat@corp.example", "Cat", "Ng"), nil)
	key, _, err := db.CreateAPIKey(ctx, nil, sp("bot"), quarry.RoleBasic)
	if err != nil {
		t.Fatal(err)
	}

	// Members must be the directory's people.
	if _, err := db.CreateDirectoryGroup(ctx, dir, &quarry.DirectoryGroup{DisplayName: "Eng",
		Members: []quarry.DirectoryMember{{ID: key.UserID}}}); code(err) != "invalid: Member(s) not found: "+key.UserID {
		t.Errorf("a service account as a member: %s", code(err))
	}
	for _, name := range []string{"Admin", "basic"} {
		if _, err := db.CreateDirectoryGroup(ctx, dir, &quarry.DirectoryGroup{DisplayName: name}); quarry.ErrorCode(err) != quarry.ECONFLICT {
			t.Errorf("a group named %s: %s", name, code(err))
		}
	}
	eng, err := db.CreateDirectoryGroup(ctx, dir, &quarry.DirectoryGroup{DisplayName: "Eng", ExternalID: sp("g1"),
		Members: []quarry.DirectoryMember{{ID: ann.ID}}})
	if err != nil {
		t.Fatal(err)
	}
	want := []quarry.DirectoryMember{{ID: ann.ID, Email: "ann@corp.example"}}
	if !eng.Managed || !cmp.Equal(eng.Members, want) {
		t.Errorf("Eng: %+v", eng)
	}
	if _, err := db.CreateDirectoryGroup(ctx, dir, &quarry.DirectoryGroup{DisplayName: "Eng"}); code(err) != "conflict: Group with name 'Eng' already exists" {
		t.Errorf("Eng again: %s", code(err))
	}
	// An admin adds the bot (fine), but not Cat (the directory's), and
	// neither renames nor deletes the group.
	if _, err := db.AddGroupMembers(ctx, ca, eng.ID, []string{key.UserID}); err != nil {
		t.Errorf("adding the bot by hand: %v", err)
	}
	if _, err := db.AddGroupMembers(ctx, ca, eng.ID, []string{cat.ID}); quarry.ErrorCode(err) != quarry.ECONFLICT {
		t.Errorf("adding Cat by hand: %s", code(err))
	}
	if _, err := db.UpdateGroup(ctx, ca, eng.ID, quarry.UserGroupInput{Name: sp("Engineering")}); quarry.ErrorCode(err) != quarry.ECONFLICT {
		t.Errorf("renaming by hand: %s", code(err))
	}
	if err := db.DeleteGroup(ctx, ca, eng.ID); quarry.ErrorCode(err) != quarry.ECONFLICT {
		t.Errorf("deleting by hand: %s", code(err))
	}
	// The directory replaces its members: the bot stays.
	id := strconv.FormatInt(eng.ID, 10)
	eng2, err := db.UpdateDirectoryGroup(ctx, dir, id, nil, func(g *quarry.DirectoryGroup) error {
		g.Members = []quarry.DirectoryMember{{ID: cat.ID}}
		return nil
	})
	if err != nil || !cmp.Equal(eng2.Members, []quarry.DirectoryMember{{ID: cat.ID, Email: "cat@corp.example"}}) {
		t.Fatalf("replacing members: %+v, %v", eng2, err)
	}
	g, _ := db.Group(ctx, ca, eng.ID)
	if len(g.Users) != 2 || !slices.Equal(g.SCIMMemberIDs, []string{cat.ID}) {
		t.Errorf("Eng's members: %+v", g.Users)
	}
	// Cat's groups follow.
	if u, _ := db.DirectoryUser(ctx, cat.ID); len(u.Groups) != 2 || u.Groups[0].Name != quarry.DefaultGroupBasic || u.Groups[1].Name != "Eng" {
		t.Errorf("Cat's groups: %+v", u.Groups)
	}
	// A no-op change: nothing written.
	same, err := db.UpdateDirectoryGroup(ctx, dir, id, nil, func(g *quarry.DirectoryGroup) error { return nil })
	if err != nil || !same.UpdatedAt.Equal(eng2.UpdatedAt.Time) {
		t.Errorf("no-op: %+v %v", same, err)
	}
	// A group made by hand becomes the directory's when it changes it.
	ops, err := db.CreateGroup(ctx, ca, quarry.UserGroupInput{Name: sp("Ops"), UserIDs: []string{}, CCPairIDs: []int64{}})
	if err != nil {
		t.Fatal(err)
	}
	if gs, total, _ := db.DirectoryGroups(ctx, &quarry.DirectoryFilter{Op: quarry.FilterEq, Attr: "displayName", Value: "OPS"}, 1, 10, true); total != 1 || gs[0].Managed {
		t.Errorf("Ops before: %+v", gs)
	}
	if _, err := db.UpdateDirectoryGroup(ctx, dir, strconv.FormatInt(ops.ID, 10), nil, func(g *quarry.DirectoryGroup) error {
		g.Members = append(g.Members, quarry.DirectoryMember{ID: ann.ID})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// Ann is in Basic (by her role) and now in Ops.
	if gs, _, _ := db.DirectoryGroups(ctx, &quarry.DirectoryFilter{Op: quarry.FilterEq, Attr: "members.value", Value: ann.ID}, 1, 10, false); len(gs) != 2 ||
		gs[0].DisplayName != quarry.DefaultGroupBasic || gs[1].ID != ops.ID || !gs[1].Managed {
		t.Errorf("Ops after: %+v", gs)
	}
	// A group granted more than basic (by an admin) takes no one from the
	// directory (issue 31): 403, and nothing changes; the directory may
	// still adopt it and remove people, and add them once the grant is
	// taken back.
	leads, err := db.CreateGroup(ctx, ca, quarry.UserGroupInput{Name: sp("Leads"), UserIDs: []string{cat.ID}, CCPairIDs: []int64{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SetGroupPermission(ctx, ca, leads.ID, quarry.PermManageUserGroups, true); err != nil {
		t.Fatal(err)
	}
	leadsID := strconv.FormatInt(leads.ID, 10)
	addAnn := func(g *quarry.DirectoryGroup) error {
		g.Members = append(g.Members, quarry.DirectoryMember{ID: ann.ID})
		return nil
	}
	if _, err := db.UpdateDirectoryGroup(ctx, dir, leadsID, nil, addAnn); code(err) != "forbidden: Group 'Leads' is granted manage:user_groups beyond basic: the directory cannot add people to it (grant such permissions to a group made in Quarry, and add people there; or take them back from this group)" {
		t.Errorf("adding Ann to a group granted manage:user_groups: %s", code(err))
	}
	if g, _ := db.Group(ctx, ca, leads.ID); len(g.Users) != 1 || g.SCIMSynced {
		t.Errorf("Leads after the refusal: %+v", g)
	}
	if _, err := db.UpdateDirectoryGroup(ctx, dir, leadsID, nil, func(g *quarry.DirectoryGroup) error {
		g.Members = nil
		return nil
	}); err != nil {
		t.Errorf("the directory removing Cat from Leads: %v", err)
	}
	if err := db.SetGroupPermission(ctx, ca, leads.ID, quarry.PermManageUserGroups, false); err != nil {
		t.Fatal(err)
	}
	if _, err := db.UpdateDirectoryGroup(ctx, dir, leadsID, nil, addAnn); err != nil {
		t.Errorf("adding Ann once Leads holds basic alone: %v", err)
	}
	// The directory deletes its group.
	if err := db.DeleteDirectoryGroup(ctx, dir, id, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := db.DirectoryGroup(ctx, id, true); quarry.ErrorCode(err) != quarry.ENOTFOUND {
		t.Errorf("after deletion: %s", code(err))
	}
}
