package quarry_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/quarryhq/quarry"
)

// Who may list and change a file connector's files, in Onyx's order of
// refusals, with Onyx's special case of global curators and public pairs.
func TestCheckConnectorFiles(t *testing.T) {
	admin := &quarry.Caller{User: quarry.User{ID: "admin", Role: quarry.RoleAdmin}}
	cur := &quarry.Caller{User: quarry.User{ID: "cur", Role: quarry.RoleCurator}, Memberships: []quarry.Membership{{GroupID: 1, IsCurator: true}}}
	global := &quarry.Caller{User: quarry.User{ID: "global", Role: quarry.RoleGlobalCurator}, Memberships: []quarry.Membership{{GroupID: 2}}}
	adminID := "admin"
	private := quarry.ConnectorSharing{CreatorID: &adminID, AccessType: quarry.AccessPrivate, Groups: []int64{1}}
	public := quarry.ConnectorSharing{CreatorID: &adminID, AccessType: quarry.AccessPublic}
	pair := func(access quarry.AccessType, groups ...int64) *quarry.CCPair {
		return &quarry.CCPair{AccessType: access, Groups: groups}
	}
	const (
		denied = "forbidden: Access denied. User cannot manage files for this connector."
		noPair = "not_found: No Connector-Credential Pair found for this connector"
		source = "invalid: This endpoint only works with file connectors"
	)
	for _, tt := range []struct {
		name       string
		c          *quarry.Caller
		source     quarry.DocumentSource
		s          quarry.ConnectorSharing
		pairs      []*quarry.CCPair
		list, edit string
	}{
		{"admin", admin, "file", private, []*quarry.CCPair{pair(quarry.AccessPrivate, 1)}, "", ""},
		{"admin, another source", admin, "web", private, []*quarry.CCPair{pair(quarry.AccessPrivate, 1)}, source, source},
		{"admin, no pair", admin, "file", private, nil, noPair, noPair},
		{"curator of its groups", cur, "file", private, []*quarry.CCPair{pair(quarry.AccessPrivate, 1)}, "", ""},
		{"global curator, unseen", global, "file", private, []*quarry.CCPair{pair(quarry.AccessPrivate, 1)}, denied, denied},
		{"global curator, unseen, another source", global, "web", private, nil, denied, denied},
		{"global curator, public pairs", global, "file", public, []*quarry.CCPair{pair(quarry.AccessPublic), pair(quarry.AccessPublic)}, "", ""},
		{"global curator, one private pair", global, "file", public, []*quarry.CCPair{pair(quarry.AccessPublic), pair(quarry.AccessPrivate, 2)}, "", denied},
		{"curator, public pairs", cur, "file", public, []*quarry.CCPair{pair(quarry.AccessPublic)}, "", denied},
		{"curator, public connector, a pair unseen", cur, "file", public, []*quarry.CCPair{pair(quarry.AccessPrivate, 3)}, denied, denied},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := errText(tt.c.CheckConnectorFiles(tt.source, tt.s, tt.pairs, false)); got != tt.list {
				t.Errorf("list: %q, want %q", got, tt.list)
			}
			if got := errText(tt.c.CheckConnectorFiles(tt.source, tt.s, tt.pairs, true)); got != tt.edit {
				t.Errorf("edit: %q, want %q", got, tt.edit)
			}
		})
	}
}

func TestFileConnectorFiles(t *testing.T) {
	f := quarry.ReadFileConnectorFiles(json.RawMessage(`{"file_locations":["a","b",3,"c"],"file_names":["A.txt",null],"zip_metadata_file_id":"m","x":1}`))
	if !slices.Equal(f.Locations, []string{"a", "b", "c"}) || !slices.Equal(f.Names, []string{"A.txt", "b", "c"}) || f.MetadataID == nil || *f.MetadataID != "m" {
		t.Fatalf("ReadFileConnectorFiles = %+v", f)
	}
	if g := quarry.ReadFileConnectorFiles(json.RawMessage(`nope`)); len(g.Locations) != 0 || g.MetadataID != nil {
		t.Errorf("ReadFileConnectorFiles of a broken configuration = %+v", g)
	}
	next, removed, gone, err := f.Update([]string{"a", "c", "zz"}, []string{"d"}, []string{"c"})
	if err != nil || !slices.Equal(next.Locations, []string{"b", "d"}) || !slices.Equal(next.Names, []string{"b", "c"}) || removed != 2 ||
		!slices.Equal(gone, []string{"A.txt"}) {
		t.Errorf("Update = %+v, %d, %q, %v", next, removed, gone, err)
	}
	if _, _, _, err := f.Update([]string{"a", "b", "c"}, nil, nil); err != quarry.ErrLastFile {
		t.Errorf("Update removing every file: %v", err)
	}
	next.MetadataID = nil
	b, err := next.Apply(json.RawMessage(`{"zip_metadata":{"x":1},"file_locations":["old"],"keep":true}`))
	if want := `{"file_locations":["b","d"],"file_names":["b","c"],"keep":true,"zip_metadata_file_id":null}`; err != nil || string(b) != want {
		t.Errorf("Apply = %s, %v; want %s", b, err, want)
	}
}

func TestParseFileIDsToRemove(t *testing.T) {
	for in, want := range map[string]string{
		`[]`: "", ` ["a", 1, null, "b"] `: "", `nope`: "invalid: Invalid file_ids_to_remove format", ``: "invalid: Invalid file_ids_to_remove format",
		`{"a":1}`: "invalid: file_ids_to_remove must be a JSON-encoded list", `"a"`: "invalid: file_ids_to_remove must be a JSON-encoded list",
	} {
		ids, err := quarry.ParseFileIDsToRemove(in)
		if errText(err) != want {
			t.Errorf("ParseFileIDsToRemove(%q) = %v, want %q", in, err, want)
		}
		if in == ` ["a", 1, null, "b"] ` && !slices.Equal(ids, []string{"a", "b"}) {
			t.Errorf("ParseFileIDsToRemove(%q) = %q", in, ids)
		}
	}
}

func TestMergeZipMetadata(t *testing.T) {
	for _, tt := range []struct {
		name, current, added string
		removed              []string
		want                 string
	}{
		{"a list by filename, the last entry of a name", `[{"filename":"a","t":1},{"filename":"b"},{"filename":"a","t":2}]`, ``, nil,
			`{"a":{"filename":"a","t":2},"b":{"filename":"b"}}`},
		{"an object, in its order", `{"z":{"t":1},"a":{"t":2}}`, ``, nil, `{"z":{"t":1},"a":{"t":2}}`},
		{"removed names dropped", `{"z":{"t":1},"a":{"t":2}}`, ``, []string{"z"}, `{"a":{"t":2}}`},
		{"added over current", `{"z":{"t":1},"a":{"t":2}}`, `[{"filename":"z","t":3},{"filename":"n"}]`, []string{"a"},
			`{"z":{"filename":"z","t":3},"n":{"filename":"n"}}`},
		{"a removed name added back", `{"a":{"t":1}}`, `{"a":{"t":2}}`, []string{"a"}, `{"a":{"t":2}}`},
		{"entries without a filename, broken metadata", `[{"t":1},2,{"filename":7}]`, `nope`, nil, ``},
		{"nothing left", `{"a":{}}`, ``, []string{"a"}, ``},
		{"compacted", `{ "a" : { "t" : [ 1 , 2 ] } }`, ``, nil, `{"a":{"t":[1,2]}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(quarry.MergeZipMetadata([]byte(tt.current), []byte(tt.added), tt.removed)); got != tt.want {
				t.Errorf("MergeZipMetadata = %s, want %s", got, tt.want)
			}
		})
	}
}
