package quarry_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quarryhq/quarry"
)

func obj(t *testing.T, s string) map[string]any {
	t.Helper()
	m, err := quarry.DecodeObject([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestMaskString(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"my-very-long-secret-token-here", "my-v...here"}, // onyx tests/unit/onyx/utils/test_sensitive.py
		{"short", "••••••••••••"},
		{"", "••••••••••••"},
		{"abcdefghijklm", "••••••••••••"},   // 13 characters
		{"abcdefghijklmn", "abcd...klmn"},   // 14 characters
		{"ééééééééééééé", "••••••••••••"},   // 13 code points, 26 bytes
		{"日本語のとても長い秘密のトークン", "日本語の...トークン"}, // counted in code points, cut on them
	} {
		if got := quarry.MaskString(tt.in); got != tt.want {
			t.Errorf("MaskString(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestMask(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		{"strings", `{"token": "my-very-long-secret-token-here", "user": "bob"}`,
			`{"token": "my-v...here", "user": "••••••••••••"}`},
		{"numbers", `{"port": 5432, "ratio": 0.5, "big": 12345678901234567890}`,
			`{"port": "*****", "ratio": "*****", "big": "*****"}`},
		{"booleans and null", `{"ssl": true, "old": false, "none": null}`,
			`{"ssl": true, "old": false, "none": null}`},
		{"nested", `{"oauth": {"client_secret": "abcdefghijklmnopqrstuvwxyz", "scopes": ["read", "write"], "expires": 3600}}`,
			`{"oauth": {"client_secret": "abcd...wxyz", "scopes": ["read", "write"], "expires": "*****"}}`},
		{"lists", `{"keys": ["short", "a-much-longer-secret-value", 7, true, null, {"k": "v"}, ["x"]]}`,
			`{"keys": ["••••••••••••", "a-mu...alue", "*****", true, null, {"k": "••••••••••••"}, ["••••••••••••"]]}`},
		{"descriptive keys pass through", `{"authentication_method": "oauth", "wiki_base": "https://wiki.example.com", "cloud_name": "acme", "cloud_id": 42, "scopes": ["a", "b"]}`,
			`{"authentication_method": "oauth", "wiki_base": "https://wiki.example.com", "cloud_name": "acme", "cloud_id": 42, "scopes": ["a", "b"]}`},
		{"empty", `{}`, `{}`},
		{"escapes", `{"a": "\u00e9\u00e9\u00e9\u00e9-\"quoted\"-secret-\u00e0\u00e0\u00e0\u00e0", "b\u0065": "\n", "wiki_base": "x\"y"}`,
			`{"a": "éééé...àààà", "be": "••••••••••••", "wiki_base": "x\"y"}`},
		{"space in the text", "{ \"a\" : [ 1 , \"xyz\" ] ,\n\"scopes\" : [ \"r\" , { \"k\" : 1 } ] }",
			`{"a": ["*****", "••••••••••••"], "scopes": ["r", {"k": 1}]}`},
		{"an emoji counts as one character", `{"a": "😀😀😀😀-long-secret-😀😀😀😀"}`, `{"a": "😀😀😀😀...😀😀😀😀"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := quarry.MaskJSON([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			var g, w any
			json.Unmarshal(got, &g)
			json.Unmarshal([]byte(tt.want), &w)
			if diff := cmp.Diff(w, g); diff != "" {
				t.Errorf("Mask(%s) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestKeepMaskedEchoes(t *testing.T) {
	stored := `{
		"api_token": "my-very-long-secret-token-here",
		"password": "hunter2",
		"port": 5432,
		"ssl": true,
		"nested": {"secret": "another-long-secret-value", "pin": 1234},
		"list": ["first-long-secret-value", "short", 99],
		"scopes": ["read"],
		"username": "bob"
	}`
	for _, tt := range []struct{ name, in, want string }{
		{"a masked echo keeps every secret",
			`{"api_token": "my-v...here", "password": "••••••••••••", "port": "*****", "ssl": true,
			  "nested": {"secret": "anot...alue", "pin": "*****"}, "list": ["firs...alue", "••••••••••••", "*****"],
			  "scopes": ["read"], "username": "alice"}`,
			`{"api_token": "my-very-long-secret-token-here", "password": "hunter2", "port": 5432, "ssl": true,
			  "nested": {"secret": "another-long-secret-value", "pin": 1234}, "list": ["first-long-secret-value", "short", 99],
			  "scopes": ["read"], "username": "alice"}`},
		{"new values are stored, even with dots or bullets",
			`{"api_token": "my-v...here!", "password": "•••", "port": 6543, "nested": {"secret": "abcd...wxyz"}}`,
			`{"api_token": "my-v...here!", "password": "•••", "port": 6543, "nested": {"secret": "abcd...wxyz"}}`},
		{"keys left out are dropped", `{"username": "bob"}`, `{"username": "bob"}`},
		{"a mask at another key path is a new value",
			`{"username": "my-v...here", "nested": {"other": "anot...alue"}}`,
			`{"username": "my-v...here", "nested": {"other": "anot...alue"}}`},
		{"list positions count", `{"list": ["••••••••••••", "firs...alue"]}`, `{"list": ["••••••••••••", "firs...alue"]}`},
		{"a longer list keeps echoes at the old positions",
			`{"list": ["firs...alue", "••••••••••••", "*****", "new"]}`,
			`{"list": ["first-long-secret-value", "short", 99, "new"]}`},
		{"descriptive keys are taken as sent", `{"scopes": ["••••••••••••"]}`, `{"scopes": ["••••••••••••"]}`},
		{"a type change is a new value", `{"nested": "anot...alue", "port": {"x": 1}}`, `{"nested": "anot...alue", "port": {"x": 1}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := quarry.KeepMaskedEchoes(obj(t, stored), obj(t, tt.in))
			if diff := cmp.Diff(obj(t, tt.want), got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestKeepMaskedHeaders(t *testing.T) {
	stored := []quarry.Header{{Key: "Authorization", Value: "Bearer a-very-long-token-value"}, {Key: "X-Team", Value: "blue"}}
	in := []quarry.Header{{Key: "authorization", Value: "Bear...alue"}, {Key: "X-TEAM", Value: "••••••••••••"}, {Key: "X-New", Value: "••••••••••••"}, {Key: "X-Team", Value: "red"}}
	want := []quarry.Header{{Key: "authorization", Value: "Bearer a-very-long-token-value"}, {Key: "X-TEAM", Value: "blue"}, {Key: "X-New", Value: "••••••••••••"}, {Key: "X-Team", Value: "red"}}
	if diff := cmp.Diff(want, quarry.KeepMaskedHeaders(stored, in)); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}

func TestTimeJSON(t *testing.T) {
	for _, tt := range []struct {
		us   int64
		want string
	}{
		{1763720130123456, `"2025-11-21T10:15:30.123456Z"`},
		{1763720130000000, `"2025-11-21T10:15:30Z"`},
		{1763720130000001, `"2025-11-21T10:15:30.000001Z"`},
		{1763720130120000, `"2025-11-21T10:15:30.120000Z"`},
	} {
		b, _ := quarry.TimeFromMicros(tt.us).MarshalJSON()
		if string(b) != tt.want {
			t.Errorf("TimeFromMicros(%d) = %s, want %s", tt.us, b, tt.want)
		}
	}
}

// referenceMask is the masking rule written over decoded values, as Onyx
// writes it; MaskJSON must agree with it.
func referenceMask(v any, key string) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range v {
			switch k {
			case "authentication_method", "wiki_base", "cloud_name", "cloud_id", "scopes":
				out[k] = e
			default:
				out[k] = referenceMask(e, k)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = referenceMask(e, "")
		}
		return out
	case string:
		return quarry.MaskString(v)
	case nil, bool:
		return v
	default:
		return "*****"
	}
}

func FuzzMaskJSON(f *testing.F) {
	for _, s := range []string{`{}`, `{"a": "my-very-long-secret-token-here", "n": 1.5e3, "l": [true, null, {"scopes": [1]}]}`,
		`{"wiki_base": {"x": [1, "a"]}, "k": "\ud83d\ude00\u00e9 and a long tail"}`, `{"a": {"b": {"c": ["s", -0.0]}}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var v map[string]any
		if json.Unmarshal(in, &v) != nil || v == nil {
			quarry.MaskJSON(in) // Not a JSON object: only must not panic.
			return
		}
		got, err := quarry.MaskJSON(in)
		if err != nil {
			t.Fatalf("MaskJSON(%q): %v", in, err)
		}
		var g any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("MaskJSON(%q) = %q, not JSON: %v", in, got, err)
		}
		if diff := cmp.Diff(referenceMask(v, ""), g); diff != "" {
			t.Errorf("MaskJSON(%q) mismatch (-reference +got):\n%s", in, diff)
		}
	})
}
