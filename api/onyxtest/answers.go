package onyxtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Checks of the routes Quarry shares with Onyx but Onyx's managers do not
// call (MCP servers, personal access tokens), for the API tests: their
// bodies against the table of Onyx's models, so that neither Quarry's
// structs nor its answers can drift from Onyx's models unnoticed.

// Field is a field of one of Onyx's models: its name, and whether a body
// must have it.
type Field struct {
	Name     string
	Required bool
}

// Fields returns the fields of Onyx's model name, in pydantic's order, and
// whether the table has the model.
func Fields(name string) ([]Field, bool) {
	m, ok := table().Models[name]
	if !ok {
		return nil, false
	}
	out := make([]Field, len(m.Fields))
	for i, f := range m.Fields {
		out[i] = Field{f.Name, f.Required}
	}
	return out, true
}

// Extensions are the fields Quarry adds to Onyx's answer models, by model,
// each documented in api/openapi.json as Quarry's and in docs/decisions.md:
// CheckAnswer requires them where the model is answered, beside the
// model's own, and no other; TestExtensions checks that none is one of
// Onyx's fields (which would make it no extension). A document is stored
// per pair and each pair's copy stays its own, so the answers that give a
// copy name its pair ("Each pair's copy stays its own").
var Extensions = map[string][]string{
	// The files of an upload that the file connector will not read.
	"FileUploadResponse":   {"unread_files"},
	"SearchDocWithContent": {"cc_pair_id", "cc_pair_name", "cc_pair_access_type"},
	"DocMinimalInfo":       {"cc_pair_id"},
}

// CheckAnswer checks body, an answer of a route Quarry shares with Onyx,
// against Onyx's response model (a list of it, with list): as FastAPI
// writes a response_model, every field of the model is there and no
// other (but Quarry's Extensions), in every model it holds, and each value
// is of its type (as pydantic parses it).
//
// A generic model takes its type argument in brackets, as Python writes
// it: "LLMProviderResponse[LLMProviderView]".
func CheckAnswer(body []byte, model string, list bool) error {
	name, arg, generic := strings.Cut(model, "[")
	m, ok := table().Models[name]
	if !ok {
		return fmt.Errorf("the table of Onyx's models has no %s", name)
	}
	var args map[string]onyxType
	if generic {
		if len(m.TypeParams) != 1 {
			return fmt.Errorf("Onyx's %s does not take one type argument", name)
		}
		args = map[string]onyxType{m.TypeParams[0]: {Name: strings.TrimSuffix(arg, "]")}}
	}
	item := onyxType{Name: name}
	t := item
	if list {
		t = onyxType{List: &item}
	}
	if err := checkTable(model, body, t, args); err != nil {
		return err
	}
	return exactFields(model, body, t, args)
}

// exactFields checks that every object of raw that t (its type parameters
// given by args) says is a model has exactly the model's fields that
// FastAPI writes (not the excluded ones).
func exactFields(loc string, raw json.RawMessage, t onyxType, args map[string]onyxType) error {
	tb := table()
	t = t.subst(args)
	if string(raw) == "null" {
		return nil
	}
	switch {
	case t.Union != nil:
		for _, m := range t.flatten() {
			if m.Name != "None" && checkTable(loc, raw, m, nil) == nil {
				return exactFields(loc, raw, m, args)
			}
		}
		return nil
	case t.List != nil:
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return nil
		}
		for i, item := range items {
			if err := exactFields(fmt.Sprintf("%s[%d]", loc, i), item, *t.List, args); err != nil {
				return err
			}
		}
		return nil
	case t.Dict != nil:
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil {
			return nil
		}
		for k, v := range obj {
			if err := exactFields(loc+"."+k, v, t.Dict[1], args); err != nil {
				return err
			}
		}
		return nil
	}
	m, ok := tb.Models[t.Name]
	if !ok {
		return nil
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return nil
	}
	var errs []error
	var names []string
	for _, f := range m.Fields {
		if f.Excluded {
			continue
		}
		names = append(names, f.Name)
		v, ok := obj[f.Name]
		if !ok {
			errs = append(errs, fmt.Errorf("%s.%s: missing (FastAPI writes every field of Onyx's %s)", loc, f.Name, t.Name))
			continue
		}
		if err := exactFields(loc+"."+f.Name, v, f.Tree, args); err != nil {
			errs = append(errs, err)
		}
	}
	for _, k := range Extensions[t.Name] {
		if _, ok := obj[k]; !ok {
			errs = append(errs, fmt.Errorf("%s.%s: missing (Quarry's extension of Onyx's %s)", loc, k, t.Name))
		}
	}
	var extra []string
	for k := range obj {
		if !slices.Contains(names, k) && !slices.Contains(Extensions[t.Name], k) {
			extra = append(extra, k)
		}
	}
	if extra != nil {
		slices.Sort(extra)
		errs = append(errs, fmt.Errorf("%s: %s not in Onyx's %s", loc, strings.Join(extra, ", "), t.Name))
	}
	return errors.Join(errs...)
}
