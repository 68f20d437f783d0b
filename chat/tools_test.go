package chat

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestSearchResultText: the search's result as the model reads it is what
// encoding/json writes indented by two spaces without HTML escaping
// (Onyx's json.dumps(payload, indent=2, ensure_ascii=False)), whatever its
// strings hold.
func TestSearchResultText(t *testing.T) {
	tricky := "quote \" backslash \\ <html> & é 日本 🪨 \n\r\t\b\f \x00\x01\x1f\x7f \u2028\u2029 bad \xff\xfe end"
	for name, s := range map[string]searchResult{
		"empty":   {Results: []searchEntry{}},
		"note":    {Results: []searchEntry{}, Note: "3 more results did not fit in the model's context window."},
		"minimal": {Results: []searchEntry{{Document: 1, Title: "t", SourceType: "web", Content: "c"}}},
		"full": {Results: []searchEntry{
			{Document: 1, Title: tricky, UpdatedAt: "2026-01-02T03:04:05Z", Authors: []string{"ann", tricky}, SourceType: "file",
				Content: strings.Repeat(tricky, 50), Metadata: `{"k": "v"}`},
			{Document: 12, Title: "", SourceType: "web", Content: ""},
		}, Note: tricky},
	} {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		if got := s.text(); got != strings.TrimSuffix(want.String(), "\n") {
			t.Errorf("%s:\ngot  %q\nwant %q", name, got, want.String())
		}
	}
}
