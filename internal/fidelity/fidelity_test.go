package fidelity

import "testing"

func TestOf(t *testing.T) {
	for _, tc := range []struct {
		source, got string
		want        float64
	}{
		{"The waffle, the café.", "the WAFFLE the café", 1},
		{"fine flagstone", "ne agstone", 0},        // Ligatures lost.
		{"the the the cut", "the cut", 0.5},        // A word counts at most as often as got has it.
		{"granite output", "granite granite", 0.5}, // ... and at most as often as the source has it.
		{"", "anything", 1},
		{"café", "caf\u00b4e", 0}, // pdfTeX's accent drawn apart: "caf" and "e" are not "café".
	} {
		if got := Of(tc.source, tc.got); got != tc.want {
			t.Errorf("Of(%q, %q) = %v, want %v", tc.source, tc.got, got, tc.want)
		}
	}
}
