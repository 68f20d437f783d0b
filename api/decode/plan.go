package decode

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// plans caches the *plan (or error) built for each destination type.
var plans sync.Map // reflect.Type -> planResult

type planResult struct {
	p   *plan
	err error
}

// typeKind is the pydantic type a Go type validates as.
type typeKind uint8

// The supported types.
const (
	typeString typeKind = iota
	typeBool
	typeInt
	typeFloat
	typeEnum
	typeRaw
	typeTime
	typeList
	typeMap
	typeModel
	typeUUID
)

// typePlan says how to validate and store one Go type.
type typePlan struct {
	kind     typeKind
	ge, le   int64           // typeInt bounds
	values   map[string]bool // typeEnum members
	expected string          // typeEnum: "'a', 'b' or 'c'"
	elem     *typePlan       // typeList, typeMap: the items' plan
	set      bool            // typeList: a set[T] (the set tag)
	key      *typePlan       // typeMap: the keys' plan (a string, an enumeration or an integer)
	model    *modelPlan      // typeModel
	pattern  *regexp.Regexp  // typeString: the value must match (the pattern tag)
	// minLen and maxLen bound a typeString's length in characters (the
	// min_length and max_length tags), and maxLen a typeList's items (the
	// max_length tag: pydantic's Field(max_length=…) on a list or a set);
	// -1 when unbounded.
	minLen, maxLen int
	rtype          reflect.Type
}

// fieldPlan is one field of a model or one parameter.
type fieldPlan struct {
	name     string
	loc      any // name, boxed once for error locations
	index    int
	typ      *typePlan
	optional bool          // an Optional[T]; typ is T's plan
	def      reflect.Value // the default, when there is one
	required bool
}

// modelPlan is a request model: its fields in declaration order.
type modelPlan struct {
	fields []fieldPlan
	// dataclass is the class name of a model that is a Python dataclass
	// (its DataclassName method), or "".
	dataclass string
}

// plan is how to decode a request into one destination type.
type plan struct {
	path  []fieldPlan
	query []fieldPlan
	form  []fieldPlan
	body  *fieldPlan
}

var (
	timeType     = reflect.TypeFor[time.Time]()
	rawType      = reflect.TypeFor[json.RawMessage]()
	optionalType = reflect.TypeFor[optional]()
	enumType     = reflect.TypeFor[interface{ EnumValues() []string }]()
	dcType       = reflect.TypeFor[interface{ DataclassName() string }]()
)

// planFor returns the cached plan for struct type t, building it once.
func planFor(t reflect.Type) (*plan, error) {
	if r, ok := plans.Load(t); ok {
		pr := r.(planResult)
		return pr.p, pr.err
	}
	p, err := buildPlan(t)
	r, _ := plans.LoadOrStore(t, planResult{p, err})
	pr := r.(planResult)
	return pr.p, pr.err
}

func buildPlan(t reflect.Type) (*plan, error) {
	p := &plan{}
	b := &builder{models: map[reflect.Type]*modelPlan{}}
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		var err error
		if name, ok := sf.Tag.Lookup("path"); ok {
			err = b.addParam(&p.path, sf, i, name)
		} else if name, ok := sf.Tag.Lookup("query"); ok {
			err = b.addParam(&p.query, sf, i, name)
		} else if name, ok := sf.Tag.Lookup("form"); ok {
			var fp fieldPlan
			if fp, err = b.field(sf, i, name); err == nil {
				if fp.typ.kind != typeString {
					return nil, fmt.Errorf("decode: %v: form field %s must be a string", t, sf.Name)
				}
				p.form = append(p.form, fp)
			}
		} else if _, ok := sf.Tag.Lookup("body"); ok {
			if p.body != nil || sf.Type.Kind() != reflect.Struct {
				return nil, fmt.Errorf("decode: %v: body field %s must be the only body and a struct", t, sf.Name)
			}
			var mp *modelPlan
			if mp, err = b.model(sf.Type); err == nil {
				p.body = &fieldPlan{name: "body", index: i, typ: &typePlan{kind: typeModel, model: mp, rtype: sf.Type}}
			}
		}
		if err != nil {
			return nil, err
		}
	}
	if p.body != nil && p.form != nil {
		return nil, fmt.Errorf("decode: %v: a JSON body and form fields", t)
	}
	return p, nil
}

// builder builds type plans, sharing the plans of nested models.
type builder struct {
	models map[reflect.Type]*modelPlan
}

func (b *builder) addParam(dst *[]fieldPlan, sf reflect.StructField, i int, name string) error {
	fp, err := b.field(sf, i, name)
	if err != nil {
		return err
	}
	if fp.typ.kind == typeList {
		fp.required = false // an absent list parameter is empty
		if !fp.def.IsValid() {
			fp.def = reflect.MakeSlice(fp.typ.rtype, 0, 0)
		}
	}
	*dst = append(*dst, fp)
	return nil
}

func (b *builder) model(t reflect.Type) (*modelPlan, error) {
	if mp, ok := b.models[t]; ok {
		return mp, nil
	}
	mp := &modelPlan{}
	if t.Implements(dcType) {
		mp.dataclass = reflect.Zero(t).Interface().(interface{ DataclassName() string }).DataclassName()
	}
	b.models[t] = mp
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "-" || !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		fp, err := b.field(sf, i, name)
		if err != nil {
			return nil, err
		}
		mp.fields = append(mp.fields, fp)
	}
	return mp, nil
}

func (b *builder) field(sf reflect.StructField, i int, name string) (fieldPlan, error) {
	fp := fieldPlan{name: name, loc: name, index: i, required: true}
	ft := sf.Type
	if reflect.PointerTo(ft).Implements(optionalType) {
		fp.optional, fp.required = true, false
		ft = ft.Field(2).Type
	}
	tp, err := b.typ(ft)
	if err != nil {
		return fp, fmt.Errorf("decode: field %s: %w", sf.Name, err)
	}
	if tp, err = withBounds(tp, sf.Tag); err != nil {
		return fp, fmt.Errorf("decode: field %s: %w", sf.Name, err)
	}
	for _, l := range []struct {
		tag string
		dst func(*typePlan) *int
	}{{"min_length", func(p *typePlan) *int { return &p.minLen }}, {"max_length", func(p *typePlan) *int { return &p.maxLen }}} {
		v, ok := sf.Tag.Lookup(l.tag)
		if !ok {
			continue
		}
		if tp.kind != typeString && (tp.kind != typeList || l.tag != "max_length") {
			return fp, fmt.Errorf("decode: field %s: %s on a non-string", sf.Name, l.tag)
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fp, fmt.Errorf("decode: field %s: bad %s %q", sf.Name, l.tag, v)
		}
		c := *tp
		*l.dst(&c) = n
		tp = &c
	}
	if _, ok := sf.Tag.Lookup("set"); ok {
		if tp.kind != typeList {
			return fp, fmt.Errorf("decode: field %s: set on a non-list", sf.Name)
		}
		c := *tp
		c.set = true
		tp = &c
	}
	if pat, ok := sf.Tag.Lookup("pattern"); ok {
		if tp.kind != typeString {
			return fp, fmt.Errorf("decode: field %s: pattern on a non-string", sf.Name)
		}
		c := *tp
		if c.pattern, err = regexp.Compile(pat); err != nil {
			return fp, fmt.Errorf("decode: field %s: %w", sf.Name, err)
		}
		tp = &c
	}
	fp.typ = tp
	if d, ok := sf.Tag.Lookup("default"); ok {
		v := reflect.New(sf.Type)
		if err := json.Unmarshal([]byte(d), v.Interface()); err != nil {
			return fp, fmt.Errorf("decode: field %s: bad default: %w", sf.Name, err)
		}
		fp.def, fp.required = v.Elem(), false
	}
	return fp, nil
}

// withBounds applies the ge and le tags to an integer plan.
func withBounds(tp *typePlan, tag reflect.StructTag) (*typePlan, error) {
	ge, okGe := tag.Lookup("ge")
	le, okLe := tag.Lookup("le")
	if !okGe && !okLe {
		return tp, nil
	}
	if tp.kind != typeInt {
		return nil, fmt.Errorf("ge/le on a non-integer")
	}
	c := *tp
	var err error
	if okGe {
		if c.ge, err = strconv.ParseInt(ge, 10, 64); err != nil {
			return nil, err
		}
	}
	if okLe {
		if c.le, err = strconv.ParseInt(le, 10, 64); err != nil {
			return nil, err
		}
	}
	return &c, nil
}

func (b *builder) typ(t reflect.Type) (*typePlan, error) {
	tp := &typePlan{rtype: t, minLen: -1, maxLen: -1}
	switch {
	case t == timeType:
		tp.kind = typeTime
	case t == rawType:
		tp.kind = typeRaw
	case t == uuidType:
		tp.kind = typeUUID
	case t.Implements(enumType) && t.Kind() == reflect.String:
		tp.kind = typeEnum
		values := reflect.Zero(t).Interface().(interface{ EnumValues() []string }).EnumValues()
		tp.values = make(map[string]bool, len(values))
		for _, v := range values {
			tp.values[v] = true
		}
		tp.expected = expectedList(values)
	case t.Kind() == reflect.String:
		tp.kind = typeString
	case t.Kind() == reflect.Bool:
		tp.kind = typeBool
	case t.Kind() == reflect.Int64:
		tp.kind, tp.ge, tp.le = typeInt, math.MinInt64, math.MaxInt64
	case t.Kind() == reflect.Float64:
		tp.kind = typeFloat
	case t.Kind() == reflect.Slice:
		elem, err := b.typ(t.Elem())
		if err != nil {
			return nil, err
		}
		tp.kind, tp.elem = typeList, elem
	case t.Kind() == reflect.Map:
		key, err := b.typ(t.Key())
		if err != nil {
			return nil, err
		}
		if key.kind != typeString && key.kind != typeEnum && key.kind != typeInt {
			return nil, fmt.Errorf("unsupported map key type %v", t.Key())
		}
		elem, err := b.typ(t.Elem())
		if err != nil {
			return nil, err
		}
		tp.kind, tp.key, tp.elem = typeMap, key, elem
	case t.Kind() == reflect.Struct:
		mp, err := b.model(t)
		if err != nil {
			return nil, err
		}
		tp.kind, tp.model = typeModel, mp
	default:
		return nil, fmt.Errorf("unsupported type %v", t)
	}
	return tp, nil
}

// expectedList renders enum values as pydantic does: quoted, comma
// separated, with "or" before the last.
func expectedList(values []string) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = "'" + v + "'"
	}
	if len(q) < 2 {
		return strings.Join(q, "")
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}
