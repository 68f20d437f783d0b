package quarry_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/quarryhq/quarry"
)

// TestDocumentTags checks a document's metadata as tags: each value of a
// key, those of a list marked so, each once, sorted; a key and value over
// MaxTagLength characters together left out.
func TestDocumentTags(t *testing.T) {
	d := quarry.Document{Source: "web", Metadata: map[string]any{"b": "x", "a": []any{"2", "1", "2"}, "c": []string{"y"},
		"long": strings.Repeat("é", quarry.MaxTagLength-4), "longer": strings.Repeat("é", quarry.MaxTagLength-5)}}
	want := []quarry.Tag{{Key: "a", Value: "1", Source: "web", IsList: true}, {Key: "a", Value: "2", Source: "web", IsList: true},
		{Key: "b", Value: "x", Source: "web"}, {Key: "c", Value: "y", Source: "web", IsList: true},
		{Key: "long", Value: strings.Repeat("é", quarry.MaxTagLength-4), Source: "web"}}
	if got := d.Tags(); !reflect.DeepEqual(got, want) {
		t.Errorf("Tags: %+v, want %+v", got, want)
	}
}

// TestParseTagQuery checks valid-tags' match_pattern and limit as Onyx's
// get_tags reads them, and the branches of the search that follows.
func TestParseTagQuery(t *testing.T) {
	for _, tc := range []struct {
		pattern  string
		limit    int
		branches []quarry.TagQuery
	}{
		{"", 50, []quarry.TagQuery{{Both: true, Limit: 50}}},
		{"Au", 0, []quarry.TagQuery{{KeyPrefix: "au", Limit: quarry.MaxTagLimit}, {ValuePrefix: "au", Limit: quarry.MaxTagLimit}}},
		{"Author=Bo=b", 5000, []quarry.TagQuery{{KeyPrefix: "author", ValuePrefix: "bo=b", Both: true, Limit: quarry.MaxTagLimit}}},
		{"=", 1, []quarry.TagQuery{{Both: true, Limit: 1}}},
		{"a=", 1, []quarry.TagQuery{{KeyPrefix: "a", Both: true, Limit: 1}}},
	} {
		if got := quarry.ParseTagQuery(tc.pattern, nil, tc.limit).Branches(); !reflect.DeepEqual(got, tc.branches) {
			t.Errorf("%q limit %d: %+v, want %+v", tc.pattern, tc.limit, got, tc.branches)
		}
	}
	q := quarry.ParseTagQuery("", []quarry.DocumentSource{"web", "slack", "web"}, 2)
	if want := []quarry.DocumentSource{"slack", "web"}; !reflect.DeepEqual(q.Sources, want) {
		t.Errorf("sources %v, want %v", q.Sources, want)
	}
	found := []quarry.Tag{{ID: 1, Key: "k", Value: "v", Source: "web"}, {ID: 2, Key: "k", Value: "v", Source: "web", IsList: true},
		{ID: 3, Key: "k", Value: "v", Source: "slack"}, {ID: 4, Key: "k", Value: "w", Source: "web"}}
	if got := q.ListedTags(found); len(got) != 2 || got[0].ID != 1 || got[1].ID != 3 {
		t.Errorf("ListedTags: %+v, want tags 1 and 3", got)
	}
}
