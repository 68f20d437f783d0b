package index_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/quarryhq/quarry/index"
)

func TestHighlights(t *testing.T) {
	q := map[string]bool{"granit": true, "quarri": true}
	for _, c := range []struct {
		content  string
		prefixes []string
		want     []string
	}{
		{"The quarry produced granite.", nil, []string{"<hi>quarry</hi> produced <hi>granite</hi>."}},
		{"Navigation index modules | next | previous | Granite is quarried.", []string{"quarr"}, []string{"<hi>Granite</hi> is <hi>quarried</hi>."}},
		{"Nothing here", nil, []string{}},
		{"Grandiose granular plans", []string{"gran"}, []string{"<hi>Grandiose</hi> <hi>granular</hi> plans"}},
	} {
		if got := index.Highlights(c.content, q, c.prefixes); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Highlights(%q) = %q, want %q", c.content, got, c.want)
		}
	}
	long := strings.Repeat("x ", 100) + "granite quarry " + strings.Repeat("y ", 100)
	got := index.Highlights(long, q, nil)
	if len(got) != 1 || !strings.HasPrefix(got[0], "<hi>granite</hi> <hi>quarry</hi>") || len(strings.Fields(got[0])) != index.SnippetWords {
		t.Errorf("the window: %q", got)
	}
}
