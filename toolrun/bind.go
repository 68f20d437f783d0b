package toolrun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/tooldef"
)

// Definition is a custom tool's definition made ready for calls: its
// operations by method name.
type Definition struct {
	ops   map[string]*Operation
	names []string // Sorted.
	host  string   // The server's host, without its port.
}

// Operation is one operation of a definition, ready to bind arguments to.
type Operation struct {
	Name   string // The method name: the sanitized operationId.
	Method string // The HTTP method, upper case.
	server string // The server URL, its variables at their defaults, without a trailing slash.
	path   string // The path template, as written.
	params []*param
	body   *openapi3.Schema // The JSON body's schema; nil when the operation takes no body.
	// bodyRequired says that the operation requires a body.
	bodyRequired bool
	opts         []openapi3.SchemaValidationOption
}

// param is a parameter of an operation.
type param struct {
	name     string
	in       string // "path", "query", "header" or "cookie"
	required bool
	schema   *openapi3.Schema // nil: any value
	asJSON   bool             // Declared with content application/json: the value is sent as JSON text.
	style    string
	explode  bool
}

// Compile reads a definition (one that package tooldef found valid) and
// returns its operations. It follows no external reference.
func Compile(ctx context.Context, def []byte) (d *Definition, err error) {
	defer func() {
		if recover() != nil {
			d, err = nil, quarry.Errorf(quarry.EINVALID, "The tool's definition cannot be read")
		}
	}()
	loader := openapi3.NewLoader()
	loader.Context = ctx
	loader.IsExternalRefsAllowed = false
	loader.ReadFromURIFunc = func(_ *openapi3.Loader, u *url.URL) ([]byte, error) {
		return nil, fmt.Errorf("external reference %q is not allowed", u.Redacted())
	}
	doc, err := loader.LoadFromData(def)
	if err != nil {
		return nil, quarry.Errorf(quarry.EINVALID, "The tool's definition cannot be read: %v", err)
	}
	if len(doc.Servers) == 0 || doc.Servers[0] == nil {
		return nil, quarry.Errorf(quarry.EINVALID, "The tool's definition names no server")
	}
	server, err := serverURL(doc.Servers[0])
	if err != nil {
		return nil, err
	}
	var opts []openapi3.SchemaValidationOption
	opts = append(opts, openapi3.VisitAsRequest())
	if doc.IsOpenAPI31OrLater() {
		opts = append(opts, openapi3.EnableJSONSchema2020())
	}
	d = &Definition{ops: map[string]*Operation{}}
	if u, err := url.Parse(server); err == nil {
		d.host = u.Hostname()
	}
	if doc.Paths == nil {
		return d, nil
	}
	for path, item := range doc.Paths.Map() {
		if item == nil || strings.HasPrefix(path, "x-") {
			continue
		}
		for method, op := range item.Operations() {
			if op == nil || op.OperationID == "" {
				continue
			}
			o := &Operation{Name: tooldef.SanitizeName(op.OperationID), Method: strings.ToUpper(method),
				server: server, path: path, opts: opts}
			o.params = params(item.Parameters, op.Parameters)
			if rb := op.RequestBody; rb != nil && rb.Value != nil {
				if mt := rb.Value.Content.Get("application/json"); mt != nil {
					o.body = &openapi3.Schema{}
					if mt.Schema != nil && mt.Schema.Value != nil {
						o.body = mt.Schema.Value
					}
					o.bodyRequired = rb.Value.Required
				}
			}
			d.ops[o.Name] = o
			d.names = append(d.names, o.Name)
		}
	}
	slices.Sort(d.names)
	return d, nil
}

// serverURL returns the URL of s with its variables at their default
// values, without a trailing slash. It must be an absolute http or https
// URL: a relative one means nothing to Quarry.
func serverURL(s *openapi3.Server) (string, error) {
	raw := s.URL
	for name, v := range s.Variables {
		if v != nil {
			raw = strings.ReplaceAll(raw, "{"+name+"}", v.Default)
		}
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.ContainsAny(raw, "{}") {
		return "", quarry.Errorf(quarry.EINVALID,
			"The tool's server URL %q is not an absolute http:// or https:// URL (with its variables at their defaults)", raw)
	}
	return strings.TrimRight(raw, "/"), nil
}

// params returns the parameters of an operation: those of its path item,
// replaced by the operation's own of the same name and location. Headers
// that OpenAPI says to ignore (Accept, Content-Type, Authorization) and
// those the HTTP client sets itself are left out.
func params(item, op openapi3.Parameters) []*param {
	var out []*param
	add := func(ps openapi3.Parameters) {
		for _, ref := range ps {
			if ref == nil || ref.Value == nil {
				continue
			}
			p := ref.Value
			if p.In == "header" && ignoredHeader(p.Name) {
				continue
			}
			np := &param{name: p.Name, in: p.In, required: p.Required || p.In == "path"}
			if p.Schema != nil {
				np.schema = p.Schema.Value
			} else if mt := p.Content.Get("application/json"); mt != nil {
				np.asJSON = true
				if mt.Schema != nil {
					np.schema = mt.Schema.Value
				}
			}
			sm, err := p.SerializationMethod()
			if err == nil && sm != nil {
				np.style, np.explode = sm.Style, sm.Explode
			}
			if i := slices.IndexFunc(out, func(q *param) bool { return q.name == np.name && q.in == np.in }); i >= 0 {
				out[i] = np
			} else {
				out = append(out, np)
			}
		}
	}
	add(item)
	add(op)
	return out
}

// ignoredHeader reports whether a header parameter named name is not
// sent: OpenAPI says to ignore Accept, Content-Type and Authorization
// parameters, and the HTTP client sets the framing and connection headers.
func ignoredHeader(name string) bool {
	switch strings.ToLower(name) {
	case "accept", "content-type", "authorization", "host", "content-length", "transfer-encoding", "connection",
		"upgrade", "te", "trailer", "keep-alive", "proxy-connection", "cookie":
		return true
	}
	return false
}

// Operation returns the operation named method, or a 400 listing the
// methods there are.
func (d *Definition) Operation(method string) (*Operation, error) {
	if op, ok := d.ops[method]; ok {
		return op, nil
	}
	return nil, quarry.Errorf(quarry.EINVALID, "Unknown method %q: this tool's methods are %s",
		method, strings.Join(d.names, ", "))
}

// Host returns the host of the definition's server, without its port:
// every call of its operations goes there (or to where it redirects).
func (d *Definition) Host() string { return d.host }

// Methods returns the method names, sorted.
func (d *Definition) Methods() []string { return slices.Clone(d.names) }

// Bound is an operation with its arguments: the request to send, before
// the tool's own headers and token are added.
type Bound struct {
	Method string
	URL    *url.URL
	Header http.Header
	Body   []byte // nil: no body
}

// Bind checks args against op's parameters and body schema and builds the
// request. Every argument must be a parameter of op (by name), or
// quarry.RequestBodyArg for the JSON body; a value goes to every
// parameter of that name (as in Onyx). Errors are 400s that name the
// argument.
func (op *Operation) Bind(args map[string]any) (*Bound, error) {
	for name := range args {
		if name == quarry.RequestBodyArg && op.body != nil {
			continue
		}
		if !slices.ContainsFunc(op.params, func(p *param) bool { return p.name == name }) {
			return nil, quarry.Errorf(quarry.EINVALID, "Unknown argument %q: method %s takes %s", name, op.Name, op.takes())
		}
	}
	b := &Bound{Method: op.Method, Header: http.Header{}}
	var path strings.Builder
	var query []string
	var cookies []string
	values := map[string]string{} // path parameter renderings, by name
	for _, p := range op.params {
		v, present := args[p.name]
		if !present {
			if p.required {
				return nil, quarry.Errorf(quarry.EINVALID, "Missing required argument %q (%s parameter of %s)", p.name, p.in, op.Name)
			}
			continue
		}
		if err := op.check(p.name, p.schema, v); err != nil {
			return nil, err
		}
		if v == nil {
			if p.required {
				return nil, quarry.Errorf(quarry.EINVALID, "Argument %q is required and cannot be null", p.name)
			}
			continue
		}
		if p.asJSON {
			j, _ := json.Marshal(v)
			v = string(j)
		}
		switch p.in {
		case "path":
			s, err := renderPath(p, v)
			if err != nil {
				return nil, err
			}
			values[p.name] = s
		case "query":
			q, err := renderQuery(p, v)
			if err != nil {
				return nil, err
			}
			query = append(query, q...)
		case "header":
			s, err := renderSimple(p, v, false)
			if err != nil {
				return nil, err
			}
			if !validHeaderValue(s) {
				return nil, quarry.Errorf(quarry.EINVALID, "Argument %q cannot be sent as a header: it holds control characters such as CR or LF", p.name)
			}
			b.Header.Set(p.name, s)
		case "cookie":
			s, err := renderSimple(p, v, false)
			if err != nil {
				return nil, err
			}
			cookies = append(cookies, url.QueryEscape(p.name)+"="+url.QueryEscape(s))
		}
	}
	if err := expand(&path, op.path, values); err != nil {
		return nil, err
	}
	raw := op.server + path.String()
	if len(query) > 0 {
		raw += "?" + strings.Join(query, "&")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, quarry.Errorf(quarry.EINVALID, "The arguments do not make a valid URL: %v", err)
	}
	b.URL = u
	if len(cookies) > 0 {
		b.Header.Set("Cookie", strings.Join(cookies, "; "))
	}
	if op.body != nil {
		v, present := args[quarry.RequestBodyArg]
		switch {
		case !present && op.bodyRequired:
			return nil, quarry.Errorf(quarry.EINVALID, "Missing required argument %q (the JSON body of %s)", quarry.RequestBodyArg, op.Name)
		case present:
			if err := op.check(quarry.RequestBodyArg, op.body, v); err != nil {
				return nil, err
			}
			body, err := json.Marshal(v)
			if err != nil {
				return nil, quarry.Errorf(quarry.EINVALID, "Argument %q cannot be sent as JSON", quarry.RequestBodyArg)
			}
			b.Body = body
			b.Header.Set("Content-Type", "application/json")
		}
	}
	return b, nil
}

// takes lists the arguments op takes, for messages.
func (op *Operation) takes() string {
	var names []string
	for _, p := range op.params {
		names = append(names, fmt.Sprintf("%s (%s)", p.name, p.in))
	}
	if op.body != nil {
		names = append(names, quarry.RequestBodyArg+" (JSON body)")
	}
	if len(names) == 0 {
		return "no arguments"
	}
	return strings.Join(names, ", ")
}

// check validates v against schema, with a 400 naming the argument.
func (op *Operation) check(name string, schema *openapi3.Schema, v any) (err error) {
	if schema == nil {
		return nil
	}
	defer func() {
		if recover() != nil {
			err = quarry.Errorf(quarry.EINVALID, "Argument %q cannot be checked against its schema", name)
		}
	}()
	verr := schema.VisitJSON(v, op.opts...)
	if verr == nil {
		return nil
	}
	return quarry.Errorf(quarry.EINVALID, "Argument %q does not fit its schema: %s", name, schemaReason(verr))
}

// schemaReason renders a kin-openapi validation error: the first reason,
// and where in the value it applies.
func schemaReason(err error) string {
	var me openapi3.MultiError
	if errors.As(err, &me) && len(me) > 0 {
		err = me[0]
	}
	var se *openapi3.SchemaError
	if errors.As(err, &se) {
		reason := se.Reason
		if p := se.JSONPointer(); len(p) > 0 {
			reason += " (at /" + strings.Join(p, "/") + ")"
		}
		return reason
	}
	return err.Error()
}

// expand writes the path template with each {name} replaced by its
// rendering, and refuses a rendering that would change the path's
// structure ("." or ".." as a whole segment).
func expand(w *strings.Builder, template string, values map[string]string) error {
	for i := 0; i < len(template); i++ {
		c := template[i]
		if c != '{' {
			w.WriteByte(c)
			continue
		}
		end := strings.IndexByte(template[i:], '}')
		if end < 0 {
			return quarry.Errorf(quarry.EINVALID, "The path template %q is not valid", template)
		}
		name := template[i+1 : i+end]
		v, ok := values[name]
		if !ok {
			return quarry.Errorf(quarry.EINVALID, "Missing required argument %q (path parameter)", name)
		}
		w.WriteString(v)
		i += end
	}
	return nil
}

// scalar renders a JSON scalar as text: strings as they are, numbers as
// written, booleans as true and false.
func scalar(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case json.Number:
		return v.String(), true
	case bool:
		if v {
			return "true", true
		}
		return "false", true
	case float64:
		return json.Number(fmt.Sprint(v)).String(), true
	}
	return "", false
}

// pair is a key and value of an object argument, in key order.
type pair struct{ k, v string }

// parts splits v into the scalars of an array, or the key and value pairs
// of an object (keys sorted), or one scalar. Nested arrays and objects
// cannot be serialized by OpenAPI's styles.
func parts(p *param, v any) (scalars []string, pairs []pair, isObject bool, err error) {
	bad := func() error {
		return quarry.Errorf(quarry.EINVALID,
			"Argument %q cannot be sent as a %s parameter: its arrays and objects may only hold strings, numbers and booleans", p.name, p.in)
	}
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			s, ok := scalar(e)
			if !ok {
				return nil, nil, false, bad()
			}
			scalars = append(scalars, s)
		}
		return scalars, nil, false, nil
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			s, ok := scalar(v[k])
			if !ok {
				return nil, nil, false, bad()
			}
			pairs = append(pairs, pair{k, s})
		}
		return nil, pairs, true, nil
	}
	s, ok := scalar(v)
	if !ok {
		return nil, nil, false, bad()
	}
	return []string{s}, nil, false, nil
}

// renderSimple renders v in style "simple" (headers, and paths by
// default): values joined with commas; an object as k,v pairs, or k=v
// with explode. esc escapes each value (for paths).
func renderSimple(p *param, v any, esc bool) (string, error) {
	scalars, pairs, isObject, err := parts(p, v)
	if err != nil {
		return "", err
	}
	e := func(s string) string {
		if esc {
			return url.PathEscape(s)
		}
		return s
	}
	var out []string
	if isObject {
		for _, kv := range pairs {
			if p.explode {
				out = append(out, e(kv.k)+"="+e(kv.v))
			} else {
				out = append(out, e(kv.k), e(kv.v))
			}
		}
	} else {
		for _, s := range scalars {
			out = append(out, e(s))
		}
	}
	return strings.Join(out, ","), nil
}

// renderPath renders a path parameter in its style (simple, label or
// matrix), each value escaped as a path segment. A value that is empty,
// "." or ".." is refused: it would change which path is called.
func renderPath(p *param, v any) (string, error) {
	s, err := renderPathStyle(p, v)
	if err != nil {
		return "", err
	}
	if u, err := url.PathUnescape(s); err != nil || u == "" || u == "." || u == ".." {
		shown := s
		if sc, ok := scalar(v); ok {
			shown = sc
		}
		return "", quarry.Errorf(quarry.EINVALID, "Argument %q cannot be %q: a path parameter must be a non-empty segment other than . and ..", p.name, shown)
	}
	return s, nil
}

// renderPathStyle renders a path parameter in its style.
func renderPathStyle(p *param, v any) (string, error) {
	scalars, pairs, isObject, err := parts(p, v)
	if err != nil {
		return "", err
	}
	esc := url.PathEscape
	switch p.style {
	case "label", "matrix":
		prefix, sep := ".", ","
		name := ""
		if p.style == "matrix" {
			prefix, name = ";", esc(p.name)+"="
		}
		if p.explode {
			sep = prefix
		}
		var items []string
		if isObject {
			for _, kv := range pairs {
				if p.explode {
					items = append(items, esc(kv.k)+"="+esc(kv.v))
				} else {
					items = append(items, esc(kv.k), esc(kv.v))
				}
			}
			if p.style == "matrix" && p.explode {
				name = ""
			}
		} else {
			for _, s := range scalars {
				if p.style == "matrix" && p.explode {
					items = append(items, esc(p.name)+"="+esc(s))
				} else {
					items = append(items, esc(s))
				}
			}
			if p.style == "matrix" && p.explode {
				name = ""
			}
		}
		return prefix + name + strings.Join(items, sep), nil
	}
	return renderSimple(p, v, true)
}

// renderQuery renders a query parameter in its style (form,
// spaceDelimited, pipeDelimited or deepObject) as name=value items,
// escaped.
func renderQuery(p *param, v any) ([]string, error) {
	scalars, pairs, isObject, err := parts(p, v)
	if err != nil {
		return nil, err
	}
	q := url.QueryEscape
	name := q(p.name)
	switch {
	case p.style == "deepObject":
		if !isObject {
			return nil, quarry.Errorf(quarry.EINVALID, "Argument %q must be an object: it is sent in style deepObject", p.name)
		}
		var out []string
		for _, kv := range pairs {
			out = append(out, q(p.name+"["+kv.k+"]")+"="+q(kv.v))
		}
		return out, nil
	case isObject && p.explode:
		var out []string
		for _, kv := range pairs {
			out = append(out, q(kv.k)+"="+q(kv.v))
		}
		return out, nil
	case isObject:
		var items []string
		for _, kv := range pairs {
			items = append(items, q(kv.k), q(kv.v))
		}
		return []string{name + "=" + strings.Join(items, ",")}, nil
	case p.explode:
		var out []string
		for _, s := range scalars {
			out = append(out, name+"="+q(s))
		}
		return out, nil
	}
	sep := ","
	switch p.style {
	case "spaceDelimited":
		sep = "%20"
	case "pipeDelimited":
		sep = "|"
	}
	items := make([]string, len(scalars))
	for i, s := range scalars {
		items[i] = q(s)
	}
	return []string{name + "=" + strings.Join(items, sep)}, nil
}

// validHeaderValue reports whether s has no control character but tab.
func validHeaderValue(s string) bool {
	return !strings.ContainsFunc(s, func(r rune) bool { return (r < ' ' && r != '\t') || r == 0x7f })
}

// jsonBody reports whether a media type is JSON: application/json or a
// +json suffix.
func jsonBody(contentType string) bool {
	mt, _, _ := strings.Cut(contentType, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// DecodeArgs decodes a JSON object of arguments, keeping numbers as
// written.
func DecodeArgs(raw []byte) (map[string]any, error) {
	args := map[string]any{}
	if len(bytes.TrimSpace(raw)) == 0 {
		return args, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&args); err != nil {
		return nil, quarry.Errorf(quarry.EINVALID, "args must be a JSON object")
	}
	return args, nil
}
