package onyxtest

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// The table of Onyx's models: testdata/onyx-v4.6.1-models.json, written by
// scripts/onyx_models.py from Onyx's source at tag v4.6.1. The mirrors in
// models.go must match it field for field (TestMirrorsMatchOnyx), and every
// answer the replay parses is also checked against it directly
// (checkTable), so that neither a mirror nor the server can drift from
// what Onyx's clients parse.

//go:embed testdata/onyx-v4.6.1-models.json
var tableJSON []byte

// onyxTable is the table of Onyx's models.
type onyxTable struct {
	Onyx   string                 `json:"onyx"`
	Models map[string]onyxModel   `json:"models"`
	Enums  map[string]onyxEnumDef `json:"enums"`
	Opaque map[string]string      `json:"opaque"`
}

// onyxModel is a pydantic model: its fields in pydantic's order.
type onyxModel struct {
	File       string      `json:"file"`
	TypeParams []string    `json:"type_params"`
	Fields     []onyxField `json:"fields"`
}

// onyxField is a field of a model.
type onyxField struct {
	Name     string   `json:"name"`
	Type     string   `json:"type"` // As written in Onyx's source.
	Tree     onyxType `json:"tree"`
	Required bool     `json:"required"`
	Default  *string  `json:"default"`
	// Excluded marks a field pydantic leaves out of its dumps
	// (Field(exclude=True)): FastAPI never writes it.
	Excluded bool `json:"excluded"`
}

// onyxType is an annotation: exactly one of its fields is set.
type onyxType struct {
	Name    string     `json:"name,omitempty"`    // int, str, bool, float, Any, UUID, datetime, EmailStr, None, a model, an enumeration.
	Typevar string     `json:"typevar,omitempty"` // A type parameter of a generic model.
	List    *onyxType  `json:"list,omitempty"`
	Dict    []onyxType `json:"dict,omitempty"` // Key, value.
	Union   []onyxType `json:"union,omitempty"`
}

// onyxEnumDef is an enumeration: its values in declaration order.
type onyxEnumDef struct {
	File   string   `json:"file"`
	Values []string `json:"values"`
}

// table returns the table of Onyx's models.
var table = sync.OnceValue(func() *onyxTable {
	var tb onyxTable
	if err := json.Unmarshal(tableJSON, &tb); err != nil {
		panic("onyxtest: testdata/onyx-v4.6.1-models.json: " + err.Error())
	}
	return &tb
})

// enumValues returns the values of Onyx's enumeration name.
func enumValues(name string) []string {
	e, ok := table().Enums[name]
	if !ok {
		panic("onyxtest: no enumeration " + name + " in the table of Onyx's models")
	}
	return e.Values
}

// onyxRef names a model of the table with its type arguments (for
// PaginatedReturn[FullUserSnapshot], Model "PaginatedReturn" and Args
// {"PaginatedType": FullUserSnapshot}), or, with List, a list of one.
type onyxRef struct {
	Model string
	Args  map[string]onyxType
	List  *onyxRef
}

// String names the model as Python writes it, with its type arguments.
func (r onyxRef) String() string {
	if r.List != nil {
		return "list[" + r.List.String() + "]"
	}
	if len(r.Args) == 0 {
		return r.Model
	}
	var args []string
	for _, p := range table().Models[r.Model].TypeParams {
		args = append(args, r.Args[p].String())
	}
	return r.Model + "[" + strings.Join(args, ", ") + "]"
}

// tree returns the annotation r stands for.
func (r onyxRef) tree() onyxType {
	if r.List != nil {
		e := r.List.tree()
		return onyxType{List: &e}
	}
	return onyxType{Name: r.Model}
}

// String renders t as Python writes it, with unions flattened and None last.
func (t onyxType) String() string {
	switch {
	case t.List != nil:
		return "list[" + t.List.String() + "]"
	case t.Dict != nil:
		return "dict[" + t.Dict[0].String() + ", " + t.Dict[1].String() + "]"
	case t.Union != nil:
		var parts []string
		none := false
		for _, u := range t.flatten() {
			if u.Name == "None" {
				none = true
				continue
			}
			parts = append(parts, u.String())
		}
		if none {
			parts = append(parts, "None")
		}
		return strings.Join(parts, " | ")
	case t.Typevar != "":
		return "~" + t.Typevar
	}
	return t.Name
}

// flatten returns the members of a union, unions within it expanded.
func (t onyxType) flatten() []onyxType {
	if t.Union == nil {
		return []onyxType{t}
	}
	var out []onyxType
	for _, u := range t.Union {
		out = append(out, u.flatten()...)
	}
	return out
}

// subst returns t with its type parameters replaced by args; a dict's
// Any key becomes str (JSON keys are strings).
func (t onyxType) subst(args map[string]onyxType) onyxType {
	switch {
	case t.Typevar != "":
		if a, ok := args[t.Typevar]; ok {
			return a
		}
		return onyxType{Name: "Any"}
	case t.List != nil:
		e := t.List.subst(args)
		return onyxType{List: &e}
	case t.Dict != nil:
		k := t.Dict[0].subst(args)
		if k.Name == "Any" {
			k = onyxType{Name: "str"}
		}
		return onyxType{Dict: []onyxType{k, t.Dict[1].subst(args)}}
	case t.Union != nil:
		var u []onyxType
		for _, m := range t.flatten() {
			u = append(u, m.subst(args))
		}
		return onyxType{Union: u}
	}
	return t
}

// checkTable checks raw against the annotation t of the table as pydantic
// (in Python mode, as the managers' Model(**response.json()) validates)
// would: a model's required fields present and every field's value of
// its type, null only where the annotation allows None, enumerations
// among their values. Fields the model does not declare are ignored, as
// pydantic ignores them.
func checkTable(loc string, raw json.RawMessage, t onyxType, args map[string]onyxType) error {
	tb := table()
	t = t.subst(args)
	null := string(raw) == "null"
	switch {
	case t.Union != nil:
		var errs []string
		for _, m := range t.flatten() {
			err := checkTable(loc, raw, m, nil)
			if err == nil {
				return nil
			}
			errs = append(errs, err.Error())
		}
		return fmt.Errorf("%s: matches no member of %s: %s", loc, t, strings.Join(errs, "; "))
	case t.Name == "None":
		if !null {
			return fmt.Errorf("%s: %s is not None", loc, raw)
		}
		return nil
	case t.Name == "Any":
		return nil
	case null:
		return fmt.Errorf("%s: null, but Onyx's type is %s", loc, t)
	case t.List != nil:
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return fmt.Errorf("%s: %s is not a list", loc, raw)
		}
		for i, item := range items {
			if err := checkTable(fmt.Sprintf("%s[%d]", loc, i), item, *t.List, nil); err != nil {
				return err
			}
		}
		return nil
	case t.Dict != nil:
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil {
			return fmt.Errorf("%s: %s is not a dict", loc, raw)
		}
		for k, v := range obj {
			key := json.RawMessage(mustJSON(k))
			if t.Dict[0].Name == "int" {
				key = json.RawMessage(k) // pydantic's lax mode reads "1" as 1.
			}
			if err := checkTable(loc+"."+k, key, t.Dict[0], nil); err != nil {
				return fmt.Errorf("%s: key %q: %v", loc, k, err)
			}
			if err := checkTable(loc+"."+k, v, t.Dict[1], nil); err != nil {
				return err
			}
		}
		return nil
	}
	if m, ok := tb.Models[t.Name]; ok {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil {
			return fmt.Errorf("%s: %s is not an object (Onyx's %s)", loc, clip(raw), t.Name)
		}
		var errs []error
		for _, f := range m.Fields {
			v, ok := obj[f.Name]
			if !ok {
				if f.Required {
					errs = append(errs, fmt.Errorf("%s.%s: missing (Onyx's %s requires it: %s)", loc, f.Name, t.Name, f.Type))
				}
				continue
			}
			if err := checkTable(loc+"."+f.Name, v, f.Tree, args); err != nil {
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	}
	if e, ok := tb.Enums[t.Name]; ok {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil || !slices.Contains(e.Values, s) {
			return fmt.Errorf("%s: %s is not a value of Onyx's %s %v", loc, raw, t.Name, e.Values)
		}
		return nil
	}
	if _, ok := tb.Opaque[t.Name]; ok {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil {
			return fmt.Errorf("%s: %s is not an object (Onyx's %s)", loc, clip(raw), t.Name)
		}
		return nil
	}
	var err error
	switch t.Name {
	case "int":
		var n json.Number
		if err = json.Unmarshal(raw, &n); err == nil {
			_, err = n.Int64()
		}
	case "float":
		var f float64
		err = json.Unmarshal(raw, &f)
	case "str", "EmailStr":
		var s string
		err = json.Unmarshal(raw, &s)
	case "bool":
		var b bool
		err = json.Unmarshal(raw, &b)
	case "UUID":
		var u onyxUUID
		err = json.Unmarshal(raw, &u)
	case "datetime":
		var d string
		if err = json.Unmarshal(raw, &d); err == nil {
			_, err = parseDatetime(d)
		}
	default:
		return fmt.Errorf("%s: the table of Onyx's models has no type %q", loc, t.Name)
	}
	if err != nil {
		return fmt.Errorf("%s: %s is not Onyx's %s: %v", loc, clip(raw), t.Name, err)
	}
	return nil
}

// parseDatetime parses a datetime as pydantic reads one from a JSON
// string: RFC 3339, or without an offset (naive).
func parseDatetime(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	return time.Parse("2006-01-02T15:04:05.999999999", s)
}

// mustJSON returns the JSON encoding of v.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// clip shortens a body for a message.
func clip(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}
