package quarry_test

import (
	"testing"

	"github.com/quarryhq/quarry"
)

func TestCanChangeConnector(t *testing.T) {
	admin := &quarry.Caller{User: quarry.User{ID: "admin", Role: quarry.RoleAdmin}}
	cur := &quarry.Caller{User: quarry.User{ID: "cur", Role: quarry.RoleCurator},
		Memberships: []quarry.Membership{{GroupID: 1, IsCurator: true}, {GroupID: 2}}}
	manager := &quarry.Caller{User: quarry.User{ID: "manager", Role: quarry.RoleBasic}}
	manager.SetGrants([]quarry.Permission{quarry.PermBasic, quarry.PermManageConnectors})
	adminID, curID := "admin", "cur"
	pair := func(groups ...int64) *quarry.CCPair {
		return &quarry.CCPair{AccessType: quarry.AccessPrivate, Groups: groups}
	}
	public := &quarry.CCPair{AccessType: quarry.AccessPublic}
	for _, tt := range []struct {
		name         string
		c            *quarry.Caller
		s            quarry.ConnectorSharing
		pairs        []*quarry.CCPair
		change, drop bool
	}{
		{"admin, another's public connector", admin, quarry.ConnectorSharing{CreatorID: &curID, AccessType: quarry.AccessPublic}, nil, true, true},
		{"manage:connectors, another's connector", manager, quarry.ConnectorSharing{CreatorID: &curID, AccessType: quarry.AccessPrivate, Groups: []int64{2}},
			[]*quarry.CCPair{pair(2)}, true, true},
		{"creator, public", cur, quarry.ConnectorSharing{CreatorID: &curID, AccessType: quarry.AccessPublic}, []*quarry.CCPair{public}, true, true},
		{"curated groups and pairs", cur, quarry.ConnectorSharing{CreatorID: &adminID, AccessType: quarry.AccessPrivate, Groups: []int64{1}},
			[]*quarry.CCPair{pair(1)}, true, false},
		{"public connector, curated pair", cur, quarry.ConnectorSharing{CreatorID: &adminID, AccessType: quarry.AccessPublic},
			[]*quarry.CCPair{pair(1)}, false, false},
		{"sync connector, curated pair", cur, quarry.ConnectorSharing{CreatorID: &adminID, AccessType: quarry.AccessSync, Groups: []int64{1}},
			[]*quarry.CCPair{pair(1)}, false, false},
		{"private, no group, curated pair", cur, quarry.ConnectorSharing{CreatorID: &adminID, AccessType: quarry.AccessPrivate},
			[]*quarry.CCPair{pair(1)}, false, false},
		{"a group only a member of", cur, quarry.ConnectorSharing{CreatorID: &adminID, AccessType: quarry.AccessPrivate, Groups: []int64{1, 2}},
			[]*quarry.CCPair{pair(1)}, false, false},
		{"curated groups, a pair not curated", cur, quarry.ConnectorSharing{CreatorID: &adminID, AccessType: quarry.AccessPrivate, Groups: []int64{1}},
			[]*quarry.CCPair{pair(1), pair(1, 2)}, false, false},
		{"curated groups, a public pair", cur, quarry.ConnectorSharing{CreatorID: &adminID, AccessType: quarry.AccessPrivate, Groups: []int64{1}},
			[]*quarry.CCPair{public}, false, false},
		{"curated groups, no pair", cur, quarry.ConnectorSharing{CreatorID: &adminID, AccessType: quarry.AccessPrivate, Groups: []int64{1}},
			nil, false, false},
		{"no creator (made before creators were kept)", cur, quarry.ConnectorSharing{AccessType: quarry.AccessPrivate}, []*quarry.CCPair{pair(1)}, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if want := map[bool]string{true: "", false: "forbidden: Curators can only delete the connectors they created"}[tt.drop]; errText(tt.c.CheckDeleteConnector(tt.s)) != want {
				t.Errorf("CheckDeleteConnector = %v", tt.c.CheckDeleteConnector(tt.s))
			}
			if got := tt.c.CanChangeConnector(tt.s, tt.pairs); got != tt.change {
				t.Errorf("CanChangeConnector = %t, want %t", got, tt.change)
			}
			if got := tt.c.CanDeleteConnector(tt.s); got != tt.drop {
				t.Errorf("CanDeleteConnector = %t, want %t", got, tt.drop)
			}
		})
	}
}
