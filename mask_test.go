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
		{"my-very-long-secret-token-here", "my-v...here"}, // onyx tests/unit/onyx/utils/test_sensitive.py; 30 characters
		{"short", "••••••••••••"},
		{"", "••••••••••••"},
		{"imap-pass--2026!", "••••••••••••"},                   // 16 characters: Onyx shows "imap...026!", half of it
		{"abcdefghijklmn", "••••••••••••"},                     // 14 characters: Onyx shows "abcd...klmn"
		{"abcdefghijklmnopqrstuvwxyz012", "••••••••••••"},      // 29 characters
		{"abcdefghijklmnopqrstuvwxyz0123", "abcd...0123"},      // 30 characters
		{"éééééééééééééééééééééééééééééé", "éééé...éééé"},      // 30 code points, 60 bytes
		{"ééééééééééééééééééééééééééééé", "••••••••••••"},      // 29 code points, 58 bytes
		{"日本語のとても長い秘密のトークンです、誰にも見せないでください。本当に", "日本語の...。本当に"}, // counted in code points, cut on them
	} {
		if got := quarry.MaskString(tt.in); got != tt.want {
			t.Errorf("MaskString(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestIsMaskOf: a value read masked, under the rule of now or under
// Onyx's (Quarry's before it showed less), is an echo of the secret.
func TestIsMaskOf(t *testing.T) {
	for _, tt := range []struct {
		v, secret string
		want      bool
	}{
		{"my-v...here", "my-very-long-secret-token-here", true},
		{"••••••••••••", "imap-pass--2026!", true},
		{"imap...026!", "imap-pass--2026!", true}, // read before the change
		{"••••••••••••", "short", true},
		{"abcd...klmn", "abcdefghijklmn", true},
		{"abcd...klmm", "abcdefghijklmn", false},
		{"abcd...klmn", "abcdefghijklm", false}, // 13 characters: masked whole by both rules
		{"imap...026", "imap-pass--2026!", false},
		{"imap-pass--2026!", "imap-pass--2026!", false}, // the secret itself is a new value
		{"•••", "short", false},
		{"*****", "short", false},
	} {
		if got := quarry.IsMaskOf(tt.v, tt.secret); got != tt.want {
			t.Errorf("IsMaskOf(%q, %q) = %v, want %v", tt.v, tt.secret, got, tt.want)
		}
	}
}

func TestMask(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		{"strings", `{"token": "my-very-long-secret-token-here", "password": "imap-pass--2026!", "user": "bob"}`,
			`{"token": "my-v...here", "password": "••••••••••••", "user": "••••••••••••"}`},
		{"numbers", `{"port": 5432, "ratio": 0.5, "big": 12345678901234567890}`,
			`{"port": "*****", "ratio": "*****", "big": "*****"}`},
		{"booleans and null", `{"ssl": true, "old": false, "none": null}`,
			`{"ssl": true, "old": false, "none": null}`},
		{"nested", `{"oauth": {"client_secret": "abcdefghijklmnopqrstuvwxyz-0123456789", "scopes": ["read", "write"], "expires": 3600}}`,
			`{"oauth": {"client_secret": "abcd...6789", "scopes": ["read", "write"], "expires": "*****"}}`},
		{"lists", `{"keys": ["short", "a-much-longer-secret-value-of-thirty", 7, true, null, {"k": "v"}, ["x"]]}`,
			`{"keys": ["••••••••••••", "a-mu...irty", "*****", true, null, {"k": "••••••••••••"}, ["••••••••••••"]]}`},
		{"descriptive keys pass through", `{"authentication_method": "oauth", "wiki_base": "https://wiki.example.com", "cloud_name": "acme", "cloud_id": 42, "scopes": ["a", "b"]}`,
			`{"authentication_method": "oauth", "wiki_base": "https://wiki.example.com", "cloud_name": "acme", "cloud_id": 42, "scopes": ["a", "b"]}`},
		{"empty", `{}`, `{}`},
		{"escapes", `{"a": "\u00e9\u00e9\u00e9\u00e9-\"quoted\"-secret-of-thirty-\u00e0\u00e0\u00e0\u00e0", "b\u0065": "\n", "wiki_base": "x\"y"}`,
			`{"a": "éééé...àààà", "be": "••••••••••••", "wiki_base": "x\"y"}`},
		{"space in the text", "{ \"a\" : [ 1 , \"xyz\" ] ,\n\"scopes\" : [ \"r\" , { \"k\" : 1 } ] }",
			`{"a": ["*****", "••••••••••••"], "scopes": ["r", {"k": 1}]}`},
		{"an emoji counts as one character", `{"a": "😀😀😀😀-a-long-secret-of-thirty-😀😀😀😀"}`, `{"a": "😀😀😀😀...😀😀😀😀"}`},
		{"under thirty characters, nothing shows", `{"a": "😀😀😀😀-long-secret-😀😀😀😀"}`, `{"a": "••••••••••••"}`},
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
		"imap_password": "imap-pass--2026!",
		"port": 5432,
		"ssl": true,
		"nested": {"secret": "another-long-secret-value-of-thirty", "pin": 1234},
		"list": ["first-long-secret-value-of-thirty", "short", 99],
		"scopes": ["read"],
		"username": "bob"
	}`
	for _, tt := range []struct{ name, in, want string }{
		{"a masked echo keeps every secret",
			`{"api_token": "my-v...here", "password": "••••••••••••", "port": "*****", "ssl": true,
			  "nested": {"secret": "anot...irty", "pin": "*****"}, "list": ["firs...irty", "••••••••••••", "*****"],
			  "scopes": ["read"], "username": "alice"}`,
			`{"api_token": "my-very-long-secret-token-here", "password": "hunter2", "port": 5432, "ssl": true,
			  "nested": {"secret": "another-long-secret-value-of-thirty", "pin": 1234}, "list": ["first-long-secret-value-of-thirty", "short", 99],
			  "scopes": ["read"], "username": "alice"}`},
		{"a mask read before the change of rule is an echo too",
			`{"imap_password": "imap...026!"}`, `{"imap_password": "imap-pass--2026!"}`},
		{"a mask read now is an echo",
			`{"imap_password": "••••••••••••"}`, `{"imap_password": "imap-pass--2026!"}`},
		{"new values are stored, even with dots or bullets",
			`{"api_token": "my-v...here!", "password": "•••", "port": 6543, "nested": {"secret": "abcd...wxyz"}}`,
			`{"api_token": "my-v...here!", "password": "•••", "port": 6543, "nested": {"secret": "abcd...wxyz"}}`},
		{"keys left out are dropped", `{"username": "bob"}`, `{"username": "bob"}`},
		{"a mask at another key path is a new value",
			`{"username": "my-v...here", "nested": {"other": "anot...irty"}}`,
			`{"username": "my-v...here", "nested": {"other": "anot...irty"}}`},
		{"list positions count", `{"list": ["••••••••••••", "firs...irty"]}`, `{"list": ["••••••••••••", "firs...irty"]}`},
		{"a longer list keeps echoes at the old positions",
			`{"list": ["firs...irty", "••••••••••••", "*****", "new"]}`,
			`{"list": ["first-long-secret-value-of-thirty", "short", 99, "new"]}`},
		{"descriptive keys are taken as sent", `{"scopes": ["••••••••••••"]}`, `{"scopes": ["••••••••••••"]}`},
		{"a type change is a new value", `{"nested": "anot...irty", "port": {"x": 1}}`, `{"nested": "anot...irty", "port": {"x": 1}}`},
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
