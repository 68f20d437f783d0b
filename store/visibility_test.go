package store_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/store/storetest"
)

// TestVisibilityAgreesWithCaller checks that the SQL of visibility lists
// exactly the connectors and cc-pairs that quarry.Caller's CanSeeConnector
// and CanSeePair allow, for callers of every role around every kind of
// sharing.
func TestVisibilityAgreesWithCaller(t *testing.T) {
	db := storetest.Open(t)
	tokens := map[string]string{}
	user := func(role quarry.Role, name string) *quarry.Caller {
		t.Helper()
		_, token, err := db.CreateAPIKey(ctx, nil, &name, role)
		if err != nil {
			t.Fatal(err)
		}
		c, err := db.Authenticate(ctx, quarry.HashAPIKey(token))
		if err != nil {
			t.Fatal(err)
		}
		tokens[c.ID] = token
		return c
	}
	// reauth returns c as authenticated now, with its memberships.
	reauth := func(c *quarry.Caller) *quarry.Caller {
		t.Helper()
		c, err := db.Authenticate(ctx, quarry.HashAPIKey(tokens[c.ID]))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	admin := user(quarry.RoleAdmin, "admin")
	curator := user(quarry.RoleCurator, "curator") // curates A, member of B
	other := user(quarry.RoleCurator, "other")     // curates B
	global := user(quarry.RoleGlobalCurator, "global")
	group := func(name string, members ...*quarry.Caller) int64 {
		t.Helper()
		var ids []string
		for _, m := range members {
			ids = append(ids, m.ID)
		}
		g, err := db.CreateGroup(ctx, admin, quarry.UserGroupInput{Name: &name, UserIDs: ids, CCPairIDs: []int64{}})
		if err != nil {
			t.Fatal(err)
		}
		return g.ID
	}
	gA, gB, gC := group("A", curator), group("B", curator, other, global), group("C")
	for _, s := range []struct {
		g int64
		u *quarry.Caller
	}{{gA, curator}, {gB, other}} {
		if err := db.SetCurator(ctx, admin, s.g, s.u.ID, true); err != nil {
			t.Fatal(err)
		}
	}
	curator, other, global = reauth(curator), reauth(other), reauth(global)

	// Connectors of every sharing, by the admin and by a curator; pairs
	// of every sharing on some of them.
	type conn struct {
		id      int64
		sharing quarry.ConnectorSharing
		pairs   []*quarry.CCPair
	}
	var conns []*conn
	n := 0
	newConnector := func(by *quarry.Caller, access quarry.AccessType, groups ...int64) *conn {
		t.Helper()
		n++
		id, err := db.CreateConnector(ctx, by, quarry.ConnectorInput{Name: fmt.Sprint("c", n), Source: "web", InputType: "poll",
			Config: json.RawMessage(`{}`), AccessType: access, Groups: &groups})
		if err != nil {
			t.Fatal(err)
		}
		c := &conn{id: id, sharing: quarry.ConnectorSharing{CreatorID: &by.ID, AccessType: access, Groups: groups}}
		conns = append(conns, c)
		return c
	}
	for _, access := range []quarry.AccessType{quarry.AccessPrivate, quarry.AccessPublic, quarry.AccessSync} {
		for _, groups := range [][]int64{nil, {gA}, {gB}, {gC}, {gA, gB}} {
			newConnector(admin, access, groups...)
		}
	}
	newConnector(curator, quarry.AccessPrivate, gA)
	newConnector(curator, quarry.AccessPublic)
	newConnector(other, quarry.AccessPrivate, gB)
	cred, err := db.CreateCredential(ctx, admin, quarry.CredentialInput{Source: "web", CredentialJSON: map[string]any{"k": "v"}, AdminPublic: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range []struct {
		access quarry.AccessType
		groups []int64
	}{{quarry.AccessPrivate, nil}, {quarry.AccessPrivate, []int64{gB}}, {quarry.AccessPrivate, []int64{gC}},
		{quarry.AccessPublic, nil}, {quarry.AccessSync, []int64{gC}}, {quarry.AccessPrivate, []int64{gA, gC}}} {
		c := conns[i] // admin's private connectors, with various groups
		cred2, err := db.CreateCredential(ctx, admin, quarry.CredentialInput{Source: "web", CredentialJSON: map[string]any{"k": "v"}, AdminPublic: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []int64{cred.ID, cred2.ID} {
			id, err := db.CreateCCPair(ctx, admin, c.id, k, quarry.CCPairInput{Name: fmt.Sprint("p", i, k), AccessType: p.access, Groups: p.groups})
			if err != nil {
				t.Fatal(err)
			}
			c.pairs = append(c.pairs, &quarry.CCPair{ID: id, ConnectorID: c.id, CredentialID: k, AccessType: p.access, Groups: p.groups, CreatorID: &admin.ID})
			p.access, p.groups = quarry.AccessPrivate, []int64{gC} // the second pair is one few see
		}
	}

	for _, caller := range []struct {
		name string
		c    *quarry.Caller
	}{{"admin", admin}, {"curator of A, member of B", curator}, {"curator of B", other}, {"global curator, member of B", global}} {
		c := caller.c
		t.Run(caller.name, func(t *testing.T) {
			type seen struct {
				ID          int64
				Credentials []int64
			}
			var want []seen
			for _, conn := range conns {
				var creds []int64
				for _, p := range conn.pairs {
					if c.CanSeePair(p) {
						creds = append(creds, p.CredentialID)
					}
				}
				if c.CanSeeConnector(conn.sharing, len(creds) > 0) {
					slices.Sort(creds)
					want = append(want, seen{conn.id, append([]int64{}, creds...)})
				}
			}
			list, err := db.Connectors(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			var got []seen
			for _, conn := range list {
				got = append(got, seen{conn.ID, conn.CredentialIDs})
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("connectors seen (-Caller's rules +SQL):\n%s", diff)
			}
		})
	}
}
