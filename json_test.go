package quarry_test

import (
	"encoding/json"
	"testing"

	"github.com/quarryhq/quarry"
)

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", "quote\" back\\slash", "\x00\x1f\x7f", "é日本😀", "\xff\xfe bad", "\u2028\u2029", "<>&"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := quarry.AppendJSONString(nil, s)
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("AppendJSONString(%q) = %s, not a JSON string: %v", s, got, err)
		}
		want, _ := json.Marshal(s)
		var wantBack string
		json.Unmarshal(want, &wantBack)
		if back != wantBack {
			t.Errorf("AppendJSONString(%q) decodes to %q, encoding/json's to %q", s, back, wantBack)
		}
	})
}
