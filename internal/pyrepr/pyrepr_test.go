package pyrepr_test

import (
	"math"
	"testing"

	"github.com/quarryhq/quarry/internal/pyrepr"
)

// TestFloat pins Python's float repr: what python3 -c 'print(repr(f))'
// prints for each value.
func TestFloat(t *testing.T) {
	for _, tt := range []struct {
		f    float64
		want string
	}{
		{1, "1.0"},
		{1e16, "1e+16"},
		{1234567890123456, "1234567890123456.0"},
		{1e-5, "1e-05"},
		{0.0001, "0.0001"},
		{1.5e-7, "1.5e-07"},
		{123456789.125, "123456789.125"},
		{1e22, "1e+22"},
		{1.25e100, "1.25e+100"},
		{-2.5, "-2.5"},
		{3.0, "3.0"},
		{3.10, "3.1"},
		{0, "0.0"},
		{math.Copysign(0, -1), "-0.0"},
		{100, "100.0"},
		{0.1, "0.1"},
		{1e15, "1000000000000000.0"},
		{-1.5e-5, "-1.5e-05"},
		{5e-324, "5e-324"},
		{math.MaxFloat64, "1.7976931348623157e+308"},
		{math.Inf(1), "inf"},
		{math.Inf(-1), "-inf"},
		{math.NaN(), "nan"},
	} {
		if got := pyrepr.Float(tt.f); got != tt.want {
			t.Errorf("Float(%v) = %s, want %s", tt.f, got, tt.want)
		}
		if got := string(pyrepr.AppendFloat([]byte("x"), tt.f)); got != "x"+tt.want {
			t.Errorf("AppendFloat(\"x\", %v) = %s, want x%s", tt.f, got, tt.want)
		}
	}
}

// TestQuote pins Python's str repr: what python3 -c 'print(repr(s))'
// prints for each string, and for a list of them.
func TestQuote(t *testing.T) {
	for _, tt := range []struct{ s, want string }{
		{"a", `'a'`},
		{"it's", `"it's"`},
		{`say "hi"`, `'say "hi"'`},
		{`both ' and "`, `'both \' and "'`},
		{"tab\there", `'tab\there'`},
		{`back\slash`, `'back\\slash'`},
		{"é日本", `'é日本'`},
		{"\x00\x7f", `'\x00\x7f'`},
		{"\u200b", `'\u200b'`},
		{"😀", `'😀'`},
		{"\U000e0001", `'\U000e0001'`},
	} {
		if got := pyrepr.Quote(tt.s); got != tt.want {
			t.Errorf("Quote(%q) = %s, want %s", tt.s, got, tt.want)
		}
	}
	if got := pyrepr.StringList([]string{"restricted_doc_set", "x"}); got != `['restricted_doc_set', 'x']` {
		t.Errorf("StringList = %s", got)
	}
	if got := pyrepr.StringList(nil); got != `[]` {
		t.Errorf("StringList(nil) = %s", got)
	}
}
