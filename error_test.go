package quarry_test

import (
	"testing"

	"github.com/quarryhq/quarry"
)

func TestClipText(t *testing.T) {
	for _, tt := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"line\nbreak\ttab", 20, "line break tab"},
		{"exactly10!", 10, "exactly10!"},
		{"cut here please", 7, "cut her…"},
		{"héllo", 2, "h…"}, // é is two bytes: not split
		{"héllo", 3, "hé…"},
		{"", 5, ""},
	} {
		if got := quarry.ClipText(tt.in, tt.n); got != tt.want {
			t.Errorf("ClipText(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}
