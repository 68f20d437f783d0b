package scim_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/scim"
)

func sp(s string) *string { return &s }

func TestParseFilter(t *testing.T) {
	eq := func(attr, v string) *quarry.DirectoryFilter {
		return &quarry.DirectoryFilter{Op: quarry.FilterEq, Attr: attr, Value: v}
	}
	for _, tt := range []struct {
		filter string
		kind   scim.Kind
		want   *quarry.DirectoryFilter
		err    string
	}{
		{"", scim.Users, nil, ""},
		{`userName eq "a@b.c"`, scim.Users, eq("userName", "a@b.c"), ""},
		{`USERNAME Eq "a"`, scim.Users, eq("userName", "a"), ""},
		{`urn:ietf:params:scim:schemas:core:2.0:User:userName eq "a"`, scim.Users, eq("userName", "a"), ""},
		{`userName eq "a\"b\\é"`, scim.Users, eq("userName", `a"b\é`), ""},
		// The parser knows JSON's escapes but \u: a filter says é itself.
		{`userName eq "\u00e9"`, scim.Users, nil, `invalidFilter: The filter is not a valid SCIM filter: userName eq "\u00e9"`},
		{`emails[value co "@x"]`, scim.Users, &quarry.DirectoryFilter{Op: quarry.FilterContains, Attr: "emails.value", Value: "@x"}, ""},
		{`emails sw "a"`, scim.Users, &quarry.DirectoryFilter{Op: quarry.FilterStartsWith, Attr: "emails.value", Value: "a"}, ""},
		{`externalId pr`, scim.Users, &quarry.DirectoryFilter{Op: quarry.FilterPresent, Attr: "externalId"}, ""},
		{`active eq false`, scim.Users, eq("active", "false"), ""},
		{`userName eq "a" and (active eq true or not (displayName ew "x"))`, scim.Users, &quarry.DirectoryFilter{Op: quarry.FilterAnd,
			Left: eq("userName", "a"), Right: &quarry.DirectoryFilter{Op: quarry.FilterOr, Left: eq("active", "true"),
				Right: &quarry.DirectoryFilter{Op: quarry.FilterNot, Left: &quarry.DirectoryFilter{Op: quarry.FilterEndsWith, Attr: "displayName", Value: "x"}}}}, ""},
		{`members[value eq "X"]`, scim.Groups, eq("members.value", "X"), ""},
		{`displayName eq "Eng" and externalId ne "1"`, scim.Groups, &quarry.DirectoryFilter{Op: quarry.FilterAnd, Left: eq("displayName", "Eng"),
			Right: &quarry.DirectoryFilter{Op: quarry.FilterNe, Attr: "externalId", Value: "1"}}, ""},
		{`userName eq "a"`, scim.Groups, nil, "invalidFilter: Filtering on userName is not supported"},
		{`members[value eq "x"]`, scim.Users, nil, "invalidFilter: Filtering on members.value is not supported"},
		{`emails[type eq "work"]`, scim.Users, nil, "invalidFilter: Filtering on emails.type is not supported"},
		{`userName gt "a"`, scim.Users, nil, "invalidFilter: The operator gt is not supported"},
		{`active co "t"`, scim.Users, nil, "invalidFilter: active is a boolean: compare it with eq or ne"},
		{`active eq "true"`, scim.Users, nil, "invalidFilter: active is compared with true or false"},
		{`userName eq 1`, scim.Users, nil, "invalidFilter: userName is compared with a value of the wrong type"},
		{`userName eq 'a'`, scim.Users, nil, "invalidFilter: The filter is not a valid SCIM filter: userName eq 'a'"},
		{`urn:x:userName eq "a"`, scim.Users, nil, "invalidFilter: Filtering on attributes of urn:x is not supported"},
		{strings.Repeat(`userName eq "a" or `, 40) + `userName eq "b"`, scim.Users, nil, "invalidFilter: The filter has more than 32 comparisons"},
		{strings.Repeat("a", 5000), scim.Users, nil, "invalidFilter: The filter is longer than 4096 bytes"},
	} {
		got, err := scim.ParseFilter(tt.filter, tt.kind)
		var se *scim.Error
		switch {
		case tt.err != "" && (!errors.As(err, &se) || se.Type+": "+se.Detail != tt.err):
			t.Errorf("%q: error %v, want %s", tt.filter, err, tt.err)
		case tt.err == "" && err != nil:
			t.Errorf("%q: %v", tt.filter, err)
		case !cmp.Equal(got, tt.want):
			t.Errorf("%q: %v, want %v", tt.filter, got, tt.want)
		}
	}
}

// person is a directory person as a PATCH finds them.
func person() *quarry.DirectoryUser {
	return &quarry.DirectoryUser{ID: "id", UserName: "ann@corp.example", Email: "ann@corp.example", Active: true,
		GivenName: sp("Ann"), FamilyName: sp("Lee"), ExternalID: sp("00u1"),
		Emails: []quarry.DirectoryEmail{{Value: "ann@corp.example", Type: sp("work"), Primary: true}}}
}

func TestApplyUser(t *testing.T) {
	for _, tt := range []struct {
		name   string
		ops    string
		change func(u *quarry.DirectoryUser)
		err    string
	}{
		{"okta deactivation", `[{"op":"replace","value":{"id":"id","active":false}}]`, func(u *quarry.DirectoryUser) { u.Active = false }, ""},
		{"entra deactivation", `[{"op":"Replace","path":"active","value":"False"}]`, func(u *quarry.DirectoryUser) { u.Active = false }, ""},
		{"entra several", `[{"op":"Replace","path":"emails[type eq \"work\"].value","value":"new@corp.example"},
			{"op":"Replace","path":"name.familyName","value":"Ray"},{"op":"Add","path":"externalId","value":"e2"}]`,
			func(u *quarry.DirectoryUser) {
				u.Emails[0].Value, u.FamilyName, u.ExternalID = "new@corp.example", sp("Ray"), sp("e2")
			}, ""},
		{"okta primary email", `[{"op":"replace","path":"emails[primary eq true].value","value":"p@corp.example"}]`,
			func(u *quarry.DirectoryUser) { u.Emails[0].Value = "p@corp.example" }, ""},
		{"an email of a new type", `[{"op":"add","path":"emails[type eq \"home\"].value","value":"h@home.example"}]`,
			func(u *quarry.DirectoryUser) {
				u.Emails = append(u.Emails, quarry.DirectoryEmail{Value: "h@home.example", Type: sp("home")})
			}, ""},
		{"add emails appends", `[{"op":"add","path":"emails","value":[{"value":"b@corp.example","primary":true}]}]`,
			func(u *quarry.DirectoryUser) {
				u.Emails = []quarry.DirectoryEmail{{Value: "ann@corp.example", Type: sp("work")}, {Value: "b@corp.example", Primary: true}}
			}, ""},
		{"remove an email by filter", `[{"op":"remove","path":"emails[type eq \"work\"]"}]`, func(u *quarry.DirectoryUser) { u.Emails = nil }, ""},
		{"enterprise by path, manager bare", `[{"op":"Add","path":"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager","value":"m1"},
			{"op":"Add","path":"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department","value":"Eng"}]`,
			func(u *quarry.DirectoryUser) { u.Manager, u.Department = sp("m1"), sp("Eng") }, ""},
		{"enterprise as a key", `[{"op":"Add","value":{"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"manager":{"value":"m2"}}}}]`,
			func(u *quarry.DirectoryUser) { u.Manager = sp("m2") }, ""},
		{"name object merges", `[{"op":"replace","path":"name","value":{"givenName":"Anne"}}]`, func(u *quarry.DirectoryUser) { u.GivenName = sp("Anne") }, ""},
		{"attribute names in any case", `[{"OP":"REPLACE","PATH":"DISPLAYNAME","VALUE":"A"}]`, func(u *quarry.DirectoryUser) { u.DisplayName = sp("A") }, ""},
		{"ignored attributes", `[{"op":"add","path":"title","value":"x"},{"op":"replace","path":"phoneNumbers[type eq \"work\"].value","value":"1"},
			{"op":"remove","path":"addresses"},{"op":"add","value":{"nickName":"x","unknownThing":1}}]`, func(*quarry.DirectoryUser) {}, ""},
		{"remove externalId", `[{"op":"remove","path":"externalId"}]`, func(u *quarry.DirectoryUser) { u.ExternalID = nil }, ""},
		{"groups are read-only", `[{"op":"add","path":"groups","value":[]}]`, nil, "mutability: groups is read-only: change a group's members instead"},
		{"userName cannot be removed", `[{"op":"remove","path":"userName"}]`, nil, "mutability: userName cannot be removed"},
		{"unknown path", `[{"op":"replace","path":"nope","value":1}]`, nil, `invalidPath: Unsupported path "nope" for a User`},
		{"bad boolean", `[{"op":"replace","path":"active","value":"yes"}]`, nil, "invalidValue: active must be a boolean"},
		{"not a string", `[{"op":"replace","path":"userName","value":5}]`, nil, "invalidValue: userName must be a string"},
	} {
		ops, err := scim.ParsePatch([]byte(`{"Operations":` + tt.ops + `}`))
		if err == nil {
			u := person()
			if err = scim.ApplyUser(u, ops); err == nil {
				want := person()
				tt.change(want)
				if diff := cmp.Diff(want, u); diff != "" {
					t.Errorf("%s (-want +got):\n%s", tt.name, diff)
				}
			}
		}
		var se *scim.Error
		if tt.err != "" && (!errors.As(err, &se) || se.Type+": "+se.Detail != tt.err) || tt.err == "" && err != nil {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.err)
		}
	}
}

func TestApplyGroup(t *testing.T) {
	group := func() *quarry.DirectoryGroup {
		return &quarry.DirectoryGroup{ID: 1, DisplayName: "Eng", Members: []quarry.DirectoryMember{{ID: "a", Email: "a@x"}, {ID: "b", Email: "b@x"}}}
	}
	ids := func(g *quarry.DirectoryGroup) string { return strings.Join(g.MemberIDs(), ",") }
	for _, tt := range []struct {
		name, ops, members, displayName, err string
	}{
		{"okta remove by filter, add", `[{"op":"remove","path":"members[value eq \"a\"]"},{"op":"add","path":"members","value":[{"value":"c","display":"c@x"}]}]`, "b,c", "Eng", ""},
		{"entra remove by list", `[{"op":"Remove","path":"members","value":[{"$ref":null,"value":"B"}]}]`, "a", "Eng", ""},
		{"remove all", `[{"op":"remove","path":"members"}]`, "", "Eng", ""},
		{"replace", `[{"op":"replace","path":"members","value":[{"value":"c"}]}]`, "c", "Eng", ""},
		{"okta rename", `[{"op":"replace","value":{"id":"1","displayName":"Ops"}}]`, "a,b", "Ops", ""},
		{"add twice", `[{"op":"add","path":"members","value":[{"value":"a"},{"value":"a"}]}]`, "a,b", "Eng", ""},
		{"remove by or", `[{"op":"remove","path":"members[value eq \"a\" or value eq \"b\"]"}]`, "", "Eng", ""},
		{"displayName cannot be removed", `[{"op":"remove","path":"displayName"}]`, "", "", "mutability: displayName cannot be removed"},
		{"member without value", `[{"op":"add","path":"members","value":[{"display":"x"}]}]`, "", "", "invalidValue: members[0].value is required"},
		{"unknown", `[{"op":"add","path":"owners","value":[]}]`, "", "", `invalidPath: Unsupported path "owners" for a Group`},
		{"filter on an unknown attribute", `[{"op":"remove","path":"members[type eq \"x\"]"}]`, "", "", "invalidFilter: Unsupported attribute type in a path's filter"},
	} {
		ops, err := scim.ParsePatch([]byte(`{"Operations":` + tt.ops + `}`))
		g := group()
		if err == nil {
			err = scim.ApplyGroup(g, ops)
		}
		var se *scim.Error
		switch {
		case tt.err != "":
			if !errors.As(err, &se) || se.Type+": "+se.Detail != tt.err {
				t.Errorf("%s: error %v, want %q", tt.name, err, tt.err)
			}
		case err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case ids(g) != tt.members || g.DisplayName != tt.displayName:
			t.Errorf("%s: members %q, name %q; want %q, %q", tt.name, ids(g), g.DisplayName, tt.members, tt.displayName)
		}
	}
}

func TestDecodeUser(t *testing.T) {
	u, err := scim.DecodeUser([]byte(`{"USERNAME":"a@x.example","Active":"False","password":"secret","roles":[],
		"name":{"givenName":"A"},"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"manager":{"value":"m"},"employeeNumber":"1"}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := &quarry.DirectoryUser{UserName: "a@x.example", GivenName: sp("A"), Manager: sp("m")}
	if diff := cmp.Diff(want, u); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestProjection(t *testing.T) {
	u := person()
	u.Department = sp("Eng")
	r := scim.UserResource(u, "https://q.example/scim/v2/Users/id")
	r.Project(nil, []string{"groups", "Emails", "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User", "id", "schemas"})
	b, _ := json.Marshal(r)
	var m map[string]any
	json.Unmarshal(b, &m)
	for _, k := range []string{"groups", "emails", scim.EnterpriseUserSchema} {
		if _, ok := m[k]; ok {
			t.Errorf("%s not left out", k)
		}
	}
	if m["id"] != "id" || len(m["schemas"].([]any)) != 1 || m["userName"] == nil {
		t.Errorf("projected %v", m)
	}
	r = scim.UserResource(u, "")
	r.Project([]string{"userName", "name.givenName"}, nil)
	b, _ = json.Marshal(r)
	m = map[string]any{}
	json.Unmarshal(b, &m)
	if len(m) != 4 || m["name"] == nil || m["userName"] == nil {
		t.Errorf("attributes: %v", m)
	}
}

// FuzzParse feeds any filter and PATCH body to the parsers and applies the
// operations to a person and a group: nothing panics, and every refusal is
// a *scim.Error of a known kind.
func FuzzParse(f *testing.F) {
	f.Add(`userName eq "a@b.c"`, []byte(`{"Operations":[{"op":"replace","value":{"active":false}}]}`))
	f.Add(`emails[value co "x" and not (value sw "y")] or externalId pr`, []byte(`{"Operations":[{"op":"Replace","path":"emails[type eq \"work\"].value","value":"x@y.z"}]}`))
	f.Add(`members[value eq "a"]`, []byte(`{"Operations":[{"op":"remove","path":"members[value eq \"a\"]"},{"op":"Add","path":"members","value":[{"value":"b"}]}]}`))
	f.Add(`(((`, []byte(`{"Operations":[{"op":"add","path":"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager","value":{"value":"m"}}]}`))
	f.Add(`displayName ew "\u0000"`, []byte(`{"Operations":[{"op":"remove","path":"emails[primary eq true]"},{"op":"add","path":"name","value":null}]}`))
	kinds := map[string]bool{scim.InvalidFilter: true, scim.InvalidSyntax: true, scim.InvalidPath: true, scim.NoTarget: true,
		scim.InvalidValue: true, scim.Mutability: true}
	check := func(t *testing.T, what string, err error) {
		var se *scim.Error
		if err != nil && (!errors.As(err, &se) || !kinds[se.Type] || se.Detail == "") {
			t.Fatalf("%s: %T %v", what, err, err)
		}
	}
	f.Fuzz(func(t *testing.T, filter string, patch []byte) {
		for _, kind := range []scim.Kind{scim.Users, scim.Groups} {
			flt, err := scim.ParseFilter(filter, kind)
			check(t, "filter", err)
			if flt != nil {
				_ = flt.String()
			}
		}
		ops, err := scim.ParsePatch(patch)
		check(t, "patch", err)
		if err != nil {
			return
		}
		check(t, "user", scim.ApplyUser(person(), ops))
		check(t, "group", scim.ApplyGroup(&quarry.DirectoryGroup{DisplayName: "g", Members: []quarry.DirectoryMember{{ID: "a"}}}, ops))
	})
}
