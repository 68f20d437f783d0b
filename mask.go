package quarry

import (
	"bytes"
	"encoding/json"
	"reflect"
	"unicode/utf8"
)

// maskedShort is the rendering of every string shorter than 14 characters.
const maskedShort = "••••••••••••" // 12 × U+2022

// maskedNumber is the rendering of every number.
const maskedNumber = "*****"

// unmaskedKeys are the keys whose values Mask passes through unchanged, at
// any depth: they name how to authenticate, not secrets.
var unmaskedKeys = map[string]bool{
	"authentication_method": true,
	"wiki_base":             true,
	"cloud_name":            true,
	"cloud_id":              true,
	"scopes":                true,
}

// MaskString renders a secret string as Onyx does: strings shorter than 14
// code points become 12 bullets, longer ones keep their first and last four
// characters ("my-very-long-secret-token-here" → "my-v...here").
func MaskString(s string) string {
	if utf8.RuneCountInString(s) < 14 {
		return maskedShort
	}
	r := []rune(s)
	return string(r[:4]) + "..." + string(r[len(r)-4:])
}

// Mask returns a masked copy of a credential object (contract section 4.4):
// strings through MaskString, numbers as "*****", booleans and nulls
// unchanged, objects and arrays recursively, and the values of a few
// descriptive keys (such as "authentication_method") unchanged. Values are
// those of encoding/json with UseNumber: nil, bool, json.Number, float64,
// string, []any and map[string]any.
func Mask(obj map[string]any) map[string]any {
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		if unmaskedKeys[k] {
			out[k] = v
			continue
		}
		out[k] = maskValue(v)
	}
	return out
}

func maskValue(v any) any {
	switch v := v.(type) {
	case nil, bool:
		return v
	case string:
		return MaskString(v)
	case map[string]any:
		return Mask(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = maskValue(e)
		}
		return out
	default: // numbers
		return maskedNumber
	}
}

// KeepMaskedEchoes returns the object to store when a client sends incoming
// to replace stored. Wherever incoming holds, at the same key path (nested
// objects and list positions included), exactly the masked rendering of the
// stored value, the stored value is kept; everything else comes from
// incoming, and keys absent from incoming are dropped. A client that reads a
// masked credential and sends it back with one field changed therefore never
// overwrites a secret with its mask.
func KeepMaskedEchoes(stored, incoming map[string]any) map[string]any {
	out := make(map[string]any, len(incoming))
	for k, v := range incoming {
		old, ok := stored[k]
		if !ok || unmaskedKeys[k] {
			out[k] = v
			continue
		}
		out[k] = keepEcho(old, v)
	}
	return out
}

func keepEcho(old, v any) any {
	switch v := v.(type) {
	case string:
		switch o := old.(type) {
		case string:
			if v == MaskString(o) {
				return o
			}
		case json.Number, float64:
			if v == maskedNumber {
				return o
			}
		}
	case map[string]any:
		if o, ok := old.(map[string]any); ok {
			return KeepMaskedEchoes(o, v)
		}
	case []any:
		if o, ok := old.([]any); ok {
			out := make([]any, len(v))
			for i, e := range v {
				if i < len(o) {
					out[i] = keepEcho(o[i], e)
				} else {
					out[i] = e
				}
			}
			return out
		}
	}
	return v
}

// jsonEqual reports whether two decoded JSON values are the same.
func jsonEqual(a, b any) bool { return reflect.DeepEqual(a, b) }

// DecodeObject decodes the JSON text of an object, keeping numbers as
// json.Number so that they survive a round trip unchanged.
func DecodeObject(b []byte) (map[string]any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return nil, err
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

// SameJSON reports whether two JSON texts encode the same value.
func SameJSON(a, b []byte) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return string(a) == string(b)
	}
	return jsonEqual(va, vb)
}
