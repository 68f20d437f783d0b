package quarry_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quarryhq/quarry"
)

func TestCredentialAccess(t *testing.T) {
	owner, other := "owner", "other"
	admin := &quarry.Caller{User: quarry.User{ID: "admin", Role: quarry.RoleAdmin}}
	cur := &quarry.Caller{User: quarry.User{ID: "cur", Role: quarry.RoleCurator},
		Memberships: []quarry.Membership{{GroupID: 1, IsCurator: true}, {GroupID: 2}}}
	basic := &quarry.Caller{User: quarry.User{ID: "owner", Role: quarry.RoleBasic}, Memberships: []quarry.Membership{{GroupID: 1}}}
	limited := &quarry.Caller{User: quarry.User{ID: "owner", Role: quarry.RoleLimited}}
	// A basic user whose group is granted manage:connectors: an admin's
	// rules.
	manager := &quarry.Caller{User: quarry.User{ID: "manager", Role: quarry.RoleBasic}}
	manager.SetGrants([]quarry.Permission{quarry.PermBasic, quarry.PermManageConnectors})
	global := &quarry.Caller{User: quarry.User{ID: "global", Role: quarry.RoleGlobalCurator}, Memberships: []quarry.Membership{{GroupID: 2}}}
	// A curator granted manage:connectors: an admin's rules, and its own.
	curManager := &quarry.Caller{User: quarry.User{ID: "cur", Role: quarry.RoleCurator},
		Memberships: []quarry.Membership{{GroupID: 1, IsCurator: true}, {GroupID: 2}}}
	curManager.SetGrants([]quarry.Permission{quarry.PermBasic, quarry.PermManageConnectors})
	mine := &quarry.Credential{UserID: &owner}
	private := &quarry.Credential{UserID: &other}
	ownerless := &quarry.Credential{}
	adminPublic := &quarry.Credential{UserID: &other, AdminPublic: true}
	curated := &quarry.Credential{UserID: &other, Groups: []int64{1}}
	memberOnly := &quarry.Credential{UserID: &other, Groups: []int64{1, 2}}
	curatorPublic := &quarry.Credential{UserID: &other, CuratorPublic: true}
	for _, tt := range []struct {
		name                   string
		c                      *quarry.Caller
		k                      *quarry.Credential
		see, edit, delete, use bool
	}{
		{"admin, another's private", admin, private, false, false, false, false},
		{"admin, ownerless", admin, ownerless, true, true, true, true},
		{"admin, admin_public", admin, adminPublic, true, true, true, true},
		{"manage:connectors, another's private", manager, private, false, false, false, false},
		{"manage:connectors, admin_public", manager, adminPublic, true, true, true, true},
		{"manage:connectors, ownerless", manager, ownerless, true, true, true, true},
		{"a curator with manage:connectors, its curated groups", curManager, curated, true, true, false, true},
		{"a curator with manage:connectors, admin_public", curManager, adminPublic, true, true, true, true},
		{"a curator with manage:connectors, a group only a member of", curManager, &quarry.Credential{UserID: &other, Groups: []int64{2}}, true, false, false, false},
		{"curator, curated groups", cur, curated, true, true, false, true},
		// Onyx v4.6.1's pairing rule: a curator reads a credential of a
		// group it is only a member of, but does not pair it.
		{"curator, a group only a member of", cur, &quarry.Credential{UserID: &other, Groups: []int64{2}}, true, false, false, false},
		{"curator, one of its groups curated", cur, memberOnly, true, false, false, true},
		{"curator, curator_public", cur, curatorPublic, true, false, false, true},
		{"curator, another's private", cur, private, false, false, false, false},
		{"global curator, a group it is a member of", global, &quarry.Credential{UserID: &other, Groups: []int64{2}}, true, true, false, true},
		{"basic, its own", basic, mine, true, true, true, true},
		{"basic, shared with its group", basic, curated, false, false, false, false},
		{"limited, its own", limited, mine, false, false, true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.c.CanSeeCredential(tt.k); got != tt.see {
				t.Errorf("CanSeeCredential = %t", got)
			}
			if got := tt.c.CanEditCredential(tt.k); got != tt.edit {
				t.Errorf("CanEditCredential = %t", got)
			}
			if got := tt.c.CanDeleteCredential(tt.k); got != tt.delete {
				t.Errorf("CanDeleteCredential = %t", got)
			}
			if got := tt.c.CanUseCredential(tt.k); got != tt.use {
				t.Errorf("CanUseCredential = %t", got)
			}
		})
	}
}

func TestCredentialUpdate(t *testing.T) {
	name, other := "wiki", "other"
	stored := map[string]any{"token": "ATATT3x-0123456789", "user": "bot"}
	cred := &quarry.Credential{Name: &name, Source: "confluence", Groups: []int64{1}}
	cur := &quarry.Caller{User: quarry.User{ID: "cur", Role: quarry.RoleCurator},
		Memberships: []quarry.Membership{{GroupID: 1, IsCurator: true}, {GroupID: 2}}}
	slack := quarry.DocumentSource("slack")
	confluence := quarry.DocumentSource("confluence")
	if got := errText((&quarry.CredentialUpdate{Source: &slack}).CheckSource(cred)); got != "invalid: The source of a credential cannot be changed" {
		t.Errorf("another source: %q", got)
	}
	if err := (&quarry.CredentialUpdate{Source: &confluence}).CheckSource(cred); err != nil {
		t.Errorf("the same source: %v", err)
	}
	t.Run("sharing", func(t *testing.T) {
		yes := true
		for _, tt := range []struct {
			name string
			u    quarry.CredentialUpdate
			want error
		}{
			{"no sharing field", quarry.CredentialUpdate{Name: new(&other)}, nil},
			{"curated groups", quarry.CredentialUpdate{Groups: &[]int64{1}}, nil},
			{"a group only a member of", quarry.CredentialUpdate{Groups: &[]int64{1, 2}}, quarry.ErrShareNotCurated},
			{"no group left", quarry.CredentialUpdate{Groups: &[]int64{}}, quarry.ErrCuratorNoGroup},
			{"no group left, public instead", quarry.CredentialUpdate{Groups: &[]int64{}, CuratorPublic: &yes}, nil},
		} {
			if got := tt.u.CheckSharing(cur, cred); got != tt.want {
				t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
			}
		}
	})
	t.Run("apply", func(t *testing.T) {
		no := false
		for _, tt := range []struct {
			name     string
			u        quarry.CredentialUpdate
			wantJSON map[string]any
			fields   []string
		}{
			{"nothing", quarry.CredentialUpdate{}, stored, nil},
			{"masked echo kept", quarry.CredentialUpdate{KeepEchoes: true,
				CredentialJSON: map[string]any{"token": quarry.MaskString("ATATT3x-0123456789"), "user": "bot2"}},
				map[string]any{"token": "ATATT3x-0123456789", "user": "bot2"}, []string{"credential_json"}},
			{"masking off: the mask is a new value", quarry.CredentialUpdate{
				CredentialJSON: map[string]any{"token": quarry.MaskString("ATATT3x-0123456789"), "user": "bot"}},
				map[string]any{"token": quarry.MaskString("ATATT3x-0123456789"), "user": "bot"}, []string{"credential_json"}},
			{"the same object", quarry.CredentialUpdate{CredentialJSON: map[string]any{"user": "bot", "token": "ATATT3x-0123456789"}},
				stored, nil},
			{"name cleared, same groups", quarry.CredentialUpdate{Name: new((*string)(nil)), Groups: &[]int64{1}, AdminPublic: &no},
				stored, []string{"name"}},
			{"groups and name", quarry.CredentialUpdate{Name: new(&other), Groups: &[]int64{1, 2}},
				stored, []string{"name", "groups"}},
		} {
			t.Run(tt.name, func(t *testing.T) {
				next, gotJSON, fields := tt.u.Apply(cred, stored)
				if diff := cmp.Diff(tt.wantJSON, gotJSON); diff != "" {
					t.Errorf("credential_json (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(tt.fields, fields); diff != "" {
					t.Errorf("fields (-want +got):\n%s", diff)
				}
				if tt.u.Groups != nil && !cmp.Equal(next.Groups, *tt.u.Groups) {
					t.Errorf("groups %v", next.Groups)
				}
			})
		}
	})
	if quarry.CheckVersion(nil, 3) != nil || quarry.CheckVersion([]int64{2, 3}, 3) != nil {
		t.Error("CheckVersion refuses a version it holds")
	}
	if quarry.CheckVersion([]int64{}, 3) != quarry.ErrPrecondition || quarry.CheckVersion([]int64{2}, 3) != quarry.ErrPrecondition {
		t.Error("CheckVersion accepts a stale version")
	}
	if got := errText(quarry.CheckCredentialUnused(2)); got != "conflict: Cannot delete credential as it is still associated with 2 connector(s)" {
		t.Errorf("CheckCredentialUnused: %q", got)
	}
}

func TestPairRules(t *testing.T) {
	curID := "cur"
	cur := &quarry.Caller{User: quarry.User{ID: curID, Role: quarry.RoleCurator},
		Memberships: []quarry.Membership{{GroupID: 1, IsCurator: true}, {GroupID: 2}}}
	// Those who manage connectors see and change every pair; the others'
	// sight depends on their memberships only (the status listing's cache
	// relies on it).
	manager := &quarry.Caller{User: quarry.User{ID: "manager", Role: quarry.RoleBasic}}
	manager.SetGrants([]quarry.Permission{quarry.PermManageConnectors})
	hidden := &quarry.CCPair{AccessType: quarry.AccessPrivate, Groups: []int64{5}}
	if !manager.CanSeePair(hidden) || !manager.CanChangePair(hidden) || cur.CanSeePair(hidden) {
		t.Error("manage:connectors does not open every pair, or a curator sees a pair of another group")
	}
	basic := &quarry.Caller{User: quarry.User{ID: "basic", Role: quarry.RoleBasic}, Memberships: []quarry.Membership{{GroupID: 5}}}
	if !basic.CanSeePair(hidden) || basic.CanChangePair(hidden) {
		t.Error("a basic member sees the pairs of its group, and changes none")
	}
	// Nothing reaches anyone through a default group (nothing is shared
	// with one; the SQL twin of the rule reads SharingGroupIDs).
	inDefault := &quarry.Caller{User: quarry.User{ID: "g", Role: quarry.RoleGlobalCurator}, Memberships: []quarry.Membership{{GroupID: 5, IsDefault: true}}}
	if inDefault.CanSeePair(hidden) || inDefault.CanSeeConnector(quarry.ConnectorSharing{AccessType: quarry.AccessPrivate, Groups: []int64{5}}, false) ||
		len(inDefault.SharingGroupIDs()) != 0 || len(inDefault.CuratedGroupIDs()) != 0 || !inDefault.MemberOf(5) {
		t.Error("a default group's members see what is shared with it")
	}
	for _, tt := range []struct {
		name string
		p    *quarry.CCPair
		want error
	}{
		{"its own", &quarry.CCPair{CreatorID: &curID, AccessType: quarry.AccessPublic}, nil},
		{"curated groups", &quarry.CCPair{Groups: []int64{1}}, nil},
		{"a group only a member of", &quarry.CCPair{Groups: []int64{1, 2}}, quarry.ErrNotYourGroups},
		{"public, another's", &quarry.CCPair{AccessType: quarry.AccessPublic}, quarry.ErrNotYourGroups},
	} {
		if got := cur.CheckChangePair(tt.p); got != tt.want {
			t.Errorf("%s: CheckChangePair = %v, want %v", tt.name, got, tt.want)
		}
	}
	for _, tt := range []struct {
		source, cred quarry.DocumentSource
		want         string
	}{
		{"confluence", "confluence", ""},
		{"confluence", "not_applicable", ""},
		{"confluence", "slack", "invalid: Credential 7 is for slack, but connector 3 reads confluence"},
	} {
		if got := errText(quarry.CheckPairSources(3, tt.source, &quarry.Credential{ID: 7, Source: tt.cred})); got != tt.want {
			t.Errorf("CheckPairSources(%s, %s) = %q", tt.source, tt.cred, got)
		}
	}
}

func TestConnectorChangedFields(t *testing.T) {
	one, two := int64(1), int64(2)
	at := quarry.TimeFromMicros(5)
	old := &quarry.Connector{Name: "wiki", Source: "confluence", InputType: "poll", Config: []byte(`{"a": 1}`), RefreshFreq: &one}
	sharing := quarry.ConnectorSharing{AccessType: quarry.AccessPrivate, Groups: []int64{1, 2}}
	for _, tt := range []struct {
		name string
		in   quarry.ConnectorInput
		next quarry.ConnectorSharing
		want []string
	}{
		{"nothing", quarry.ConnectorInput{Name: "wiki", Source: "confluence", InputType: "poll", Config: []byte(`{"a":1}`), RefreshFreq: &one},
			quarry.ConnectorSharing{AccessType: quarry.AccessPrivate, Groups: []int64{2, 1, 1}}, nil},
		{"everything", quarry.ConnectorInput{Name: "w", Source: "slack", InputType: "load_state", Config: []byte(`{}`), RefreshFreq: &two,
			PruneFreq: &one, IndexingStart: &at}, quarry.ConnectorSharing{AccessType: quarry.AccessPublic},
			[]string{"name", "source", "input_type", "connector_specific_config", "refresh_freq", "prune_freq", "indexing_start", "access_type", "groups"}},
	} {
		if diff := cmp.Diff(tt.want, tt.in.ChangedFields(old, sharing, tt.next)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
	if got := errText(quarry.CheckConnectorUnused(4, 2)); got != "conflict: Connector 4 is still used by 2 cc-pair(s); remove them first" {
		t.Errorf("CheckConnectorUnused: %q", got)
	}
}

func TestToolUpdateApply(t *testing.T) {
	desc := "d"
	cfg := int64(3)
	old := &quarry.Tool{Name: "t", Description: &desc, Headers: []quarry.Header{{Key: "X-Key", Value: "secret-value-12345"}}, OAuthConfigID: &cfg}
	echo := []quarry.Header{{Key: "x-key", Value: quarry.MaskString("secret-value-12345")}, {Key: "X-New", Value: "v"}}
	u := quarry.ToolUpdate{Name: new("t2"), Description: new((*string)(nil)), Headers: &echo, OAuthConfigID: new((*int64)(nil)), KeepEchoes: true}
	next := u.Apply(old)
	want := []quarry.Header{{Key: "x-key", Value: "secret-value-12345"}, {Key: "X-New", Value: "v"}}
	if next.Name != "t2" || next.Description != nil || next.OAuthConfigID != nil || !cmp.Equal(next.Headers, want) {
		t.Errorf("Apply = %+v", next)
	}
	if old.Name != "t" || old.Description == nil || old.Headers[0].Key != "X-Key" {
		t.Error("Apply changed the old tool")
	}
	if diff := cmp.Diff([]string{"name", "description", "custom_headers", "oauth_config_id"}, u.ChangedFields(old, next)); diff != "" {
		t.Errorf("ChangedFields (-want +got):\n%s", diff)
	}
	u.KeepEchoes = false
	if got := u.Apply(old).Headers[0].Value; got != quarry.MaskString("secret-value-12345") {
		t.Errorf("with masking off the mask is stored as sent: %q", got)
	}
	builtin, owner := "SearchTool", "cur"
	cur := &quarry.Caller{User: quarry.User{ID: owner, Role: quarry.RoleCurator}}
	admin := &quarry.Caller{User: quarry.User{ID: "a", Role: quarry.RoleAdmin}}
	for _, tt := range []struct {
		name         string
		c            *quarry.Caller
		t            *quarry.Tool
		edit, enable string
	}{
		{"curator, its own", cur, &quarry.Tool{UserID: &owner}, "", ""},
		{"curator, another's", cur, &quarry.Tool{}, "forbidden: You can only modify actions that you created.", "forbidden: You can only modify actions that you created."},
		{"curator, a built-in", cur, &quarry.Tool{InCodeToolID: &builtin}, "invalid: Built-in tools cannot be modified through this endpoint.", "forbidden: You can only modify actions that you created."},
		{"admin, a built-in", admin, &quarry.Tool{InCodeToolID: &builtin}, "invalid: Built-in tools cannot be modified through this endpoint.", ""},
	} {
		if got := errText(tt.c.CheckToolEdit(tt.t)); got != tt.edit {
			t.Errorf("%s: CheckToolEdit = %q", tt.name, got)
		}
		if got := errText(tt.c.CheckEnableTool(tt.t)); got != tt.enable {
			t.Errorf("%s: CheckEnableTool = %q", tt.name, got)
		}
	}
	if got := errText(quarry.CheckOAuthConfigUnused(3, 1)); got != "conflict: OAuth config 3 is still used by 1 tool(s)" {
		t.Errorf("CheckOAuthConfigUnused: %q", got)
	}
}
