package quarry_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/quarryhq/quarry"
)

// documentSetCast are the callers of the document sets' table tests:
// an admin, a holder of manage:document_sets (basic), a curator of group
// 1 (a plain member of group 2), a global curator (member of group 2), a
// basic member of group 1, and a basic user in no group.
func documentSetCast() map[string]*quarry.Caller {
	manager := &quarry.Caller{User: quarry.User{ID: "manager", Role: quarry.RoleBasic}}
	manager.SetGrants([]quarry.Permission{quarry.PermManageDocumentSets})
	return map[string]*quarry.Caller{
		"admin":   {User: quarry.User{ID: "admin", Role: quarry.RoleAdmin}},
		"manager": manager,
		"curator": {User: quarry.User{ID: "curator", Role: quarry.RoleCurator},
			Memberships: []quarry.Membership{{GroupID: 1, IsCurator: true}, {GroupID: 2}}},
		"global": {User: quarry.User{ID: "global", Role: quarry.RoleGlobalCurator}, Memberships: []quarry.Membership{{GroupID: 2}}},
		"member": {User: quarry.User{ID: "member", Role: quarry.RoleBasic}, Memberships: []quarry.Membership{{GroupID: 1}}},
		"nobody": {User: quarry.User{ID: "nobody", Role: quarry.RoleBasic}},
	}
}

func TestDocumentSetAccess(t *testing.T) {
	cast := documentSetCast()
	curator := "curator"
	sets := map[string]*quarry.DocumentSet{
		"public":           {IsPublic: true},
		"group 1":          {Groups: []int64{1}},
		"groups 1 and 2":   {Groups: []int64{1, 2}},
		"group 2":          {Groups: []int64{2}},
		"shared with one":  {Users: []string{"nobody"}},
		"made by curator":  {OwnerID: &curator},
		"private, no one":  {},
		"public, group 1":  {IsPublic: true, Groups: []int64{1}},
		"public, by curat": {IsPublic: true, OwnerID: &curator},
	}
	// Who sees (and so may search by) each set, and who may change it.
	see := map[string][]string{
		"public":           {"admin", "manager", "curator", "global", "member", "nobody"},
		"group 1":          {"admin", "manager", "curator", "member"},
		"groups 1 and 2":   {"admin", "manager", "curator", "global", "member"},
		"group 2":          {"admin", "manager", "curator", "global"},
		"shared with one":  {"admin", "manager", "nobody"},
		"made by curator":  {"admin", "manager", "curator"},
		"private, no one":  {"admin", "manager"},
		"public, group 1":  {"admin", "manager", "curator", "global", "member", "nobody"},
		"public, by curat": {"admin", "manager", "curator", "global", "member", "nobody"},
	}
	edit := map[string][]string{
		"public":           {"admin", "manager"},
		"group 1":          {"admin", "manager", "curator"},
		"groups 1 and 2":   {"admin", "manager"}, // The curator is only a member of group 2.
		"group 2":          {"admin", "manager", "global"},
		"shared with one":  {"admin", "manager"},
		"made by curator":  {"admin", "manager", "curator"},
		"private, no one":  {"admin", "manager"},
		"public, group 1":  {"admin", "manager", "curator"},
		"public, by curat": {"admin", "manager", "curator"},
	}
	for name, s := range sets {
		for who, c := range cast {
			if got, want := c.CanSeeDocumentSet(s), slices.Contains(see[name], who); got != want {
				t.Errorf("%s sees %q: %t, want %t", who, name, got, want)
			}
			if got, want := c.CanEditDocumentSet(s), slices.Contains(edit[name], who); got != want {
				t.Errorf("%s edits %q: %t, want %t", who, name, got, want)
			}
			if err := c.CheckEditDocumentSet(s); (err == nil) != slices.Contains(edit[name], who) ||
				err != nil && err != quarry.ErrNotYourGroups {
				t.Errorf("%s: CheckEditDocumentSet(%q) = %v", who, name, err)
			}
		}
	}
	for who, want := range map[string]bool{"admin": true, "manager": true, "curator": true, "global": true, "member": false, "nobody": false} {
		if got := cast[who].CanReachDocumentSets(); got != want {
			t.Errorf("%s reaches the admin routes of document sets: %t, want %t", who, got, want)
		}
	}
}

func TestDocumentSetSharing(t *testing.T) {
	cast := documentSetCast()
	curator := "curator"
	mine := &quarry.DocumentSet{OwnerID: &curator, Groups: []int64{1}}
	theirs := &quarry.DocumentSet{Groups: []int64{1}}
	for _, tt := range []struct {
		who    string
		old    *quarry.DocumentSet
		groups []int64
		public bool
		want   error
	}{
		{"admin", nil, nil, false, nil},
		{"admin", theirs, []int64{7}, false, nil},
		{"manager", nil, []int64{2}, false, nil},
		// Curators, making a set.
		{"curator", nil, []int64{1}, false, nil},
		{"curator", nil, nil, true, nil},
		{"curator", nil, nil, false, quarry.ErrCuratorNoGroup},
		{"curator", nil, []int64{2}, false, quarry.ErrCuratorGroups}, // A member of 2, not its curator.
		{"curator", nil, []int64{1, 2}, false, quarry.ErrCuratorGroups},
		{"curator", nil, []int64{2}, true, quarry.ErrCuratorGroups},
		{"global", nil, []int64{2}, false, nil},
		{"global", nil, []int64{1}, false, quarry.ErrCuratorGroups},
		// Changing one: public without groups only if it is theirs.
		{"curator", mine, nil, true, nil},
		{"curator", theirs, nil, true, quarry.ErrCuratorNoGroup},
		{"curator", theirs, []int64{1}, true, nil},
		{"curator", theirs, []int64{2}, false, quarry.ErrShareNotCurated},
		{"curator", mine, nil, false, quarry.ErrCuratorNoGroup},
		// Not reachable through the routes' gate, but refused all the same.
		{"member", nil, []int64{1}, false, quarry.ErrNotCurator},
	} {
		in := &quarry.DocumentSetInput{Groups: tt.groups, IsPublic: tt.public}
		if got := cast[tt.who].CheckDocumentSetSharing(tt.old, in); got != tt.want {
			t.Errorf("%s, old %v, groups %v, public %t: %v, want %v", tt.who, tt.old != nil, tt.groups, tt.public, got, tt.want)
		}
	}
}

func TestDocumentSetInputCheck(t *testing.T) {
	in := quarry.DocumentSetInput{Name: "HR", PairIDs: []int64{3, 1, 3}, Users: []string{"b", "a", "b"}, Groups: []int64{2, 2}}
	if err := in.Check(); err != nil || !slices.Equal(in.PairIDs, []int64{1, 3}) || !slices.Equal(in.Users, []string{"a", "b"}) ||
		!slices.Equal(in.Groups, []int64{2}) {
		t.Errorf("Check: %v, %+v", err, in)
	}
	for _, tt := range []struct {
		in   quarry.DocumentSetInput
		want string
	}{
		{quarry.DocumentSetInput{Name: "x", PairIDs: []int64{1}, FederatedConnectors: 1}, "Quarry has no federated connectors: federated_connectors must be empty"},
		{quarry.DocumentSetInput{Name: " ", PairIDs: []int64{1}}, "A document set needs a name"},
		{quarry.DocumentSetInput{Name: "x"}, "Cannot create a document set with no connectors"},
		{quarry.DocumentSetInput{ID: 4, Name: "x", PairIDs: []int64{}}, "Cannot update a document set with no connectors"},
	} {
		err := tt.in.Check()
		if quarry.ErrorCode(err) != quarry.EINVALID || quarry.ErrorMessage(err) != tt.want {
			t.Errorf("Check(%+v) = %v, want 400 %q", tt.in, err, tt.want)
		}
	}
}

func TestDocumentSetPairs(t *testing.T) {
	cast := documentSetCast()
	pairs := map[int64]*quarry.CCPair{
		1: {ID: 1, AccessType: quarry.AccessPublic},
		2: {ID: 2, AccessType: quarry.AccessPrivate, Groups: []int64{1}},
		3: {ID: 3, AccessType: quarry.AccessPrivate, Groups: []int64{1, 2}},
		4: {ID: 4, AccessType: quarry.AccessSync},
		5: {ID: 5, AccessType: quarry.AccessPrivate, Groups: []int64{9}},
	}
	held5 := &quarry.DocumentSet{ID: 7, Pairs: []quarry.DocumentSetPair{{PairRef: quarry.PairRef{ID: 5}}}}
	for _, tt := range []struct {
		who    string
		ids    []int64
		groups []int64
		public bool
		old    *quarry.DocumentSet // The set changed; nil for a new one.
		want   string
	}{
		{"admin", []int64{1, 2, 3, 4}, []int64{1}, false, nil, ""},
		{"admin", []int64{3}, []int64{1, 2}, false, nil, ""},
		{"admin", []int64{2}, []int64{1, 2}, false, nil, "Connector Credential Pair with ID: '2' is not owned by the specified groups"},
		{"admin", []int64{5}, nil, false, nil, ""},          // No group: nothing to own it (Onyx).
		{"admin", []int64{2, 5}, []int64{1}, true, nil, ""}, // A public set holds any pair.
		{"admin", []int64{8}, nil, true, nil, "CC pair 8 does not exist"},
		{"curator", []int64{1, 2}, []int64{1}, false, nil, ""},
		{"curator", []int64{5}, []int64{1}, true, nil, "CC pair 5 does not exist"}, // Not the curator's to see.
		{"curator", []int64{1, 5}, nil, true, held5, ""},                           // Held already: kept unseen.
		{"curator", []int64{5}, []int64{1}, false, held5, "Connector Credential Pair with ID: '5' is not owned by the specified groups"},
		{"member", []int64{2, 4}, []int64{1}, false, nil, ""},
	} {
		in := quarry.DocumentSetInput{PairIDs: tt.ids, Groups: tt.groups, IsPublic: tt.public}
		err := in.CheckPairs(cast[tt.who], tt.old, pairs)
		if tt.want == "" && err != nil || tt.want != "" && (quarry.ErrorCode(err) != quarry.EINVALID || quarry.ErrorMessage(err) != tt.want) {
			t.Errorf("%s, pairs %v, groups %v, public %t: %v, want %q", tt.who, tt.ids, tt.groups, tt.public, err, tt.want)
		}
	}
}

func TestKeepUnseenPairs(t *testing.T) {
	cast := documentSetCast()
	pairs := map[int64]*quarry.CCPair{
		1: {ID: 1, AccessType: quarry.AccessPublic},
		5: {ID: 5, AccessType: quarry.AccessPrivate, Groups: []int64{9}},
		6: {ID: 6, AccessType: quarry.AccessPrivate, Groups: []int64{1}},
	}
	ref := func(id int64) quarry.DocumentSetPair { return quarry.DocumentSetPair{PairRef: quarry.PairRef{ID: id}} }
	old := &quarry.DocumentSet{ID: 7, Pairs: []quarry.DocumentSetPair{ref(1), ref(5), ref(6)}}
	for _, tt := range []struct {
		who  string
		want []int64
	}{
		{"admin", []int64{1}},      // Sees every pair: drops what it left out.
		{"curator", []int64{1, 5}}, // Does not see 5: keeps it; sees 6: drops it.
	} {
		in := quarry.DocumentSetInput{ID: 7, PairIDs: []int64{1}}
		in.KeepUnseenPairs(cast[tt.who], old, pairs)
		if !slices.Equal(in.PairIDs, tt.want) {
			t.Errorf("%s: pairs %v, want %v", tt.who, in.PairIDs, tt.want)
		}
	}
}

func TestDocumentSetNames(t *testing.T) {
	cast := documentSetCast()
	sets := []*quarry.DocumentSet{{ID: 1, Name: "Everyone", IsPublic: true}, {ID: 2, Name: "HR", Groups: []int64{1}}}
	got, err := cast["member"].CheckDocumentSetNames([]string{"HR", "Everyone", "HR"}, sets)
	if err != nil || len(got) != 2 || got["HR"].ID != 2 || got["Everyone"].ID != 1 {
		t.Errorf("the member's sets: %v, %v", got, err)
	}
	// Names of sets one may not see, and of no set, are refused alike,
	// sorted as Python sorts them, each as often as it was asked.
	_, err = cast["nobody"].CheckDocumentSetNames([]string{"zz", "HR", "Everyone", "it's", "HR"}, sets)
	if want := `User does not have access to document sets: ['HR', 'HR', "it's", 'zz']`; quarry.ErrorCode(err) != quarry.EFORBIDDEN ||
		quarry.ErrorMessage(err) != want {
		t.Errorf("nobody's sets: %v, want 403 %q", err, want)
	}
}

func TestDocumentSetsPublic(t *testing.T) {
	pub := quarry.DocumentSetPair{PairRef: quarry.PairRef{ID: 1, AccessType: quarry.AccessPublic}}
	sync := quarry.DocumentSetPair{PairRef: quarry.PairRef{ID: 2, AccessType: quarry.AccessSync}}
	for _, tt := range []struct {
		sets []*quarry.DocumentSet
		want bool
	}{
		{nil, true},
		{[]*quarry.DocumentSet{{}}, true},
		{[]*quarry.DocumentSet{{Pairs: []quarry.DocumentSetPair{pub}}}, true},
		{[]*quarry.DocumentSet{{Pairs: []quarry.DocumentSetPair{pub}}, {Pairs: []quarry.DocumentSetPair{pub, sync}}}, false},
	} {
		if got := quarry.DocumentSetsPublic(tt.sets); got != tt.want {
			t.Errorf("DocumentSetsPublic(%d sets) = %t", len(tt.sets), got)
		}
	}
}

func TestDocumentSetChangedFields(t *testing.T) {
	in := &quarry.DocumentSetInput{Name: "HR", Description: "d", PairIDs: []int64{1}, Users: []string{}, Groups: []int64{}}
	if got := quarry.DocumentSetChangedFields(nil, in); !slices.Equal(got, []string{"name", "description", "cc_pair_ids", "is_public", "users", "groups"}) {
		t.Errorf("a new set: %v", got)
	}
	old := &quarry.DocumentSet{Name: "HR", Description: "d", Pairs: []quarry.DocumentSetPair{{PairRef: quarry.PairRef{ID: 1}}}, Users: []string{}, Groups: []int64{}}
	if got := quarry.DocumentSetChangedFields(old, in); len(got) != 0 {
		t.Errorf("no change: %v", got)
	}
	in.Name, in.PairIDs, in.Groups = "People", []int64{1, 2}, []int64{3}
	if got := quarry.DocumentSetChangedFields(old, in); !slices.Equal(got, []string{"name", "cc_pair_ids", "groups"}) {
		t.Errorf("a change: %v", got)
	}
}

func TestSearchFiltersDocumentSetLimit(t *testing.T) {
	names := make([]string, quarry.MaxSearchDocumentSets)
	for i := range names {
		names[i] = fmt.Sprint("set ", i)
	}
	if f, err := (quarry.SearchFilters{DocumentSets: names}).Normalized(); err != nil || len(f.DocumentSets) != 100 {
		t.Errorf("100 sets: %v", err)
	}
	_, err := quarry.SearchFilters{DocumentSets: names, DocumentSetIDs: []int64{1}}.Normalized()
	if quarry.ErrorCode(err) != quarry.EINVALID || quarry.ErrorMessage(err) != "A search filters by 100 document sets at most; this one names 101" {
		t.Errorf("101 sets: %v", err)
	}
}
