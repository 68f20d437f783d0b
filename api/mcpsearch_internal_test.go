package api

import (
	"testing"
	"time"
)

// TestParseTimeCutoff: the times search_indexed_documents' time_cutoff
// takes, as pydantic reads a datetime, naive ones in UTC; others are no
// cutoff.
func TestParseTimeCutoff(t *testing.T) {
	utc := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v.UTC()
	}
	for _, tt := range []struct {
		in   string
		want string // "" for no cutoff
	}{
		{"2025-11-24T00:00:00Z", "2025-11-24T00:00:00Z"},
		{"2025-11-24T02:00:00+02:00", "2025-11-24T00:00:00Z"},
		{"2025-11-24T10:30:00", "2025-11-24T10:30:00Z"},
		{"2025-11-24 10:30:00.5", "2025-11-24T10:30:00.5Z"},
		{"2025-11-24T10:30", "2025-11-24T10:30:00Z"},
		{"2025-11-24T10:30+01:00", "2025-11-24T09:30:00Z"},
		{"2025-11-24", "2025-11-24T00:00:00Z"},
		{" 2025-11-24 ", "2025-11-24T00:00:00Z"},
		{"1764000000", "2025-11-24T16:00:00Z"},
		{"1764000000000", "2025-11-24T16:00:00Z"},
		{"last week", ""},
		{"", ""},
		{"2025-13-01", ""},
		{"24/11/2025", ""},
	} {
		got, ok := parseTimeCutoff(tt.in)
		if tt.want == "" {
			if ok {
				t.Errorf("%q: %v, want no cutoff", tt.in, got)
			}
			continue
		}
		if !ok || !got.Equal(utc(tt.want)) {
			t.Errorf("%q: %v %v, want %s", tt.in, got, ok, tt.want)
		}
	}
}

// TestPythonISO: updated_at as Python's isoformat writes an aware UTC
// datetime.
func TestPythonISO(t *testing.T) {
	for in, want := range map[string]string{
		"2026-03-01T10:00:00Z":         "2026-03-01T10:00:00+00:00",
		"2026-03-01T12:00:00+02:00":    "2026-03-01T10:00:00+00:00",
		"2026-03-01T10:00:00.25Z":      "2026-03-01T10:00:00.250000+00:00",
		"2026-03-01T10:00:00.0000009Z": "2026-03-01T10:00:00+00:00",
		"2026-03-01T10:00:00.0000019Z": "2026-03-01T10:00:00.000001+00:00",
	} {
		v, _ := time.Parse(time.RFC3339Nano, in)
		if got := pythonISO(v); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}

// TestPythonJSONLine: a line of a stream is what Python's json.dumps
// writes (the want below is its output for the same value: ", " and ": "
// between items, outside strings only; non-ASCII escaped, surrogate pairs
// beyond the BMP).
func TestPythonJSONLine(t *testing.T) {
	v := map[string]any{
		"obj":  map[string]any{"type": "message_delta", "content": "quote \" back \\ <b> & é 日本 🪨 \n\t\u2028 \x7f , : end"},
		"list": []any{1, 2.5, nil, true},
		"e":    map[string]any{},
	}
	got, err := pythonJSONLine(v)
	if err != nil {
		t.Fatal(err)
	}
	// Python's keys are in insertion order, Go's sorted: the same keys,
	// sorted, in Python's output.
	want := `{"e": {}, "list": [1, 2.5, null, true], "obj": {"content": "quote \" back \\ <b> & \u00e9 \u65e5\u672c \ud83e\udea8 \n\t\u2028 \u007f , : end", "type": "message_delta"}}` + "\n"
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
