// Package tooldef validates custom tool definitions (OpenAPI 3.x documents)
// and lists the methods they describe.
//
// A definition is checked against the rules of section 5 of the product
// contract, in order; the first rule that fails gives the message:
//
//  1. `info` must be present.
//  2. `info` must be an object with a "title" key (of any value).
//  3. `info` must have a "description" key (of any value).
//  4. `openapi` must be present.
//  5. `openapi` must be a string starting with "3.".
//  6. `paths` must be present.
//  7. `servers` must give exactly one non-empty string `url`.
//  8. Every operation, in document order, must have an operationId, a
//     summary or description, an operationId not used before, and an
//     operationId that does not sanitize to the name of an earlier one.
//  9. There must be at least one operation.
//  10. Every operation, in document order, must declare each parameter of
//     its path template, take only application/json request bodies, and use
//     GET, POST, PUT, DELETE or PATCH.
//  11. The document must be a valid OpenAPI 3.0, 3.1 or 3.2 document
//     according to kin-openapi; no external reference is ever followed.
//
// Rules 1 to 10 and their messages are those of Onyx's
// validate_openapi_schema, whose implementation is Python, except the
// "Duplicate operation ID" check of rule 8, which the contract adds (Onyx
// accepts an operationId used twice). Where Onyx crashes on a document, or
// where Python's behaviour cannot be mapped onto JSON text, this package
// decides as follows:
//
//   - Values are read the way Python's json module reads them: an object key
//     written twice keeps its first position and its last value.
//   - An `info` that is not an object fails rule 2.
//   - A `paths`, path item, `servers` or `parameters` value of the wrong
//     JSON type counts as empty; a `paths` of the wrong type therefore fails
//     rule 9. Rule 11 reports the type error if no earlier rule fails.
//   - Rule 5 renders a value that is not a string the way Python's str()
//     shows the value json.loads makes of it: 3.0 as 3.0, 3 as 3, 1e16 as
//     1e+16, 1e400 as inf, true as True, null as None, ["3"] as ['3'].
//   - Rule 7 renders the urls as Python's repr() of a list of str: [],
//     ['https://a'] or ["it's"].
//   - The keys of `paths` that start with "x-" are extensions, not paths.
//     The keys of a path item that are not HTTP methods ($ref, summary,
//     description, servers, parameters and extensions starting with "x-")
//     are skipped. Every other key is an operation, so "head" or "foo" fails
//     rule 10 as an unsupported method, after the checks of rule 8. The
//     entries of an OpenAPI 3.2 additionalOperations object are operations
//     too.
//   - Rule 8 names the method in upper case ("GET /items"), as Onyx does;
//     rule 10 and Method.Method give the key as written.
//   - An operation that is not an object has no operationId. An operationId,
//     summary or description that is not a non-empty string counts as
//     missing.
//   - In rule 10, a path parameter may be declared on the operation or on
//     its path item, directly or through an internal $ref; it needs "in":
//     "path" and its name, and no particular schema. A placeholder is the
//     text between '{' and the next '}', taken literally (unlike Python's
//     str.format, "{a.b}" names the parameter "a.b"). The name in "Missing
//     path parameter" is quoted as Python's repr() of a str would quote it.
//     A '}' without a '{', a '{' inside a placeholder, a '{' never closed
//     and an empty "{}" fail with the message "Invalid path template:
//     '<path>'. Each '{' must be closed by a '}' with a parameter name
//     between them." Placeholders are checked from left to right, as
//     Python does, so the first problem found is reported.
//   - The request body may be a $ref to the document's components; its
//     content types are compared exactly, the first written is reported.
//   - An empty method key gives "HTTP method is not specified." as in Onyx.
//   - Rule 11's message is kin-openapi's, prefixed "Invalid OpenAPI
//     document: ". Examples and default values are not checked against
//     their schemas. Six messages of rule 11 are this package's own: a
//     schema that contains itself through schemas with no "type" or other
//     constraint, or that leads to more than 100000 such schemas, is
//     rejected before kin-openapi sees it, because kin-openapi would crash
//     or hang on it (see checkHollowSchemas); so is a reference that leads
//     through more than 64 references, and a document that would take
//     kin-openapi more than 2000000 steps (see checkWork); a document on
//     which kin-openapi panics gets "the validator failed on this
//     document"; one whose validation takes more than 3 seconds gets
//     "checking it took longer than 3s".
package tooldef

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/internal/pyrepr"
)

// The messages of the rules, as Onyx words them.
const (
	msgNoInfo          = "`info` section is required in OpenAPI schema"
	msgNoTitle         = "`title` is required in `info` section of OpenAPI schema"
	msgNoDescription   = "`description` is required in `info` section of OpenAPI schema"
	msgNoVersion       = "`openapi` field which specifies OpenAPI schema version is required"
	fmtBadVersion      = "OpenAPI version '%s' is not supported"
	msgNoPaths         = "`paths` section is required in OpenAPI schema"
	fmtServerURLs      = "Expected exactly one URL in OpenAPI schema, but found %s"
	fmtNoOperationID   = "Operation ID is not specified for %s %s"
	fmtNoSummary       = "Summary is not specified for %s %s"
	fmtDuplicateID     = "Duplicate operation ID '%s'. Each operation must have a unique operationId."
	fmtNameClash       = "Operation IDs '%s' and '%s' both sanitize to '%s'. Rename one so the LLM-facing names stay distinct."
	msgNoMethods       = "No methods found in OpenAPI schema"
	fmtBadTemplate     = "Invalid path template: %s. Each '{' must be closed by a '}' with a parameter name between them."
	fmtMissingParam    = "Missing path parameter: %s"
	fmtContentType     = "Unsupported content type: '%s'. Only 'application/json' is supported."
	msgNoMethod        = "HTTP method is not specified."
	fmtBadMethod       = "HTTP method '%s' is not supported."
	fmtInvalidDoc      = "Invalid OpenAPI document: %v"
	msgValidatorFailed = "Invalid OpenAPI document: the validator failed on this document"
	fmtSchemaCycle     = "Invalid OpenAPI document: schema %s refers back to itself through schemas that have no type or other constraint"
	fmtSchemaTooHollow = "Invalid OpenAPI document: schema %s leads to more than %d schemas that have no type or other constraint"
	fmtRefChain        = "Invalid OpenAPI document: the reference at %s leads through more than %d references"
	fmtTooMuchWork     = "Invalid OpenAPI document: checking it would take more than %d steps, because its parts refer to one another too often"
	fmtTooSlow         = "Invalid OpenAPI document: checking it took longer than %v"
	msgBusy            = "Too many custom tool definitions are being checked at once; try again in a moment"
)

// timeBudget bounds the time Validate spends on a definition. The work of
// kin-openapi is bounded up front (see checkWork), so this is a second line
// of defence, for a server too busy to do even that work in time.
const timeBudget = 3 * time.Second

// slotWait bounds the time a Cache's validation waits for a slot.
const slotWait = 2 * time.Second

// errTooSlow is the error of a definition whose validation ran out of time.
// It depends on the time it took, not on the definition alone.
var errTooSlow = invalid(fmtTooSlow, timeBudget)

// errBusy is the error of a validation that found no slot in time.
var errBusy = quarry.Errorf(quarry.EUNAVAILABLE, msgBusy)

// Method is one operation of a custom tool definition, as
// POST /admin/tool/custom/validate lists it.
type Method struct {
	Name    string          `json:"name"`     // sanitized operationId
	RawName string          `json:"raw_name"` // operationId as written
	Summary string          `json:"summary"`  // summary, or description if summary is empty
	Path    string          `json:"path"`     // path template as written
	Method  string          `json:"method"`   // key of the operation as written, such as "get"
	Spec    json.RawMessage `json:"spec"`     // the operation object, as written
}

// An operation is one operation of a definition, before validation.
type operation struct {
	path   string
	method string // key under the path item, as written
	spec   *value // the operation as written
	item   *value // the path item
}

// Validate checks def (the JSON text of an object; callers guarantee it is a
// JSON object) against rules 1–11 of contract section 5, in order, and
// returns the methods in document order. A failure is a *quarry.Error with
// Code quarry.EINVALID and the exact message of the first failing rule.
//
// Validate returns when ctx ends, with ctx's error, and gives up on a
// definition it has not finished with after a few seconds, with an error
// with Code quarry.EINVALID that says so. Either way, kin-openapi's step
// (rule 11), which cannot be interrupted, may go on in the background until
// it ends: checkWork bounds it to about a second.
func Validate(ctx context.Context, def []byte) ([]Method, error) {
	return runner{budget: timeBudget}.validate(ctx, def)
}

// A runner runs validations, each within budget, and at most cap(slots)
// at once if slots is not nil: a validation waits up to wait for a slot,
// and holds it until its work, not its caller, is done.
type runner struct {
	budget time.Duration
	slots  chan struct{}
	wait   time.Duration
}

// validate is Validate, run by r. It fails with errBusy if it finds no slot
// in time.
func (r runner) validate(ctx context.Context, def []byte) ([]Method, error) {
	if r.slots != nil {
		t := time.NewTimer(r.wait)
		defer t.Stop()
		select {
		case r.slots <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
			return nil, errBusy
		}
	}
	bctx, cancel := context.WithTimeout(ctx, r.budget)
	defer cancel()
	def = bytes.Clone(def) // The work may outlive the call, and the caller owns def.
	type outcome struct {
		methods []Method
		err     error
	}
	done := make(chan outcome, 1)
	go func() {
		var o outcome
		defer func() { // The slot is free before the outcome is known.
			if p := recover(); p != nil {
				o = outcome{err: fmt.Errorf("tooldef: panic: %v\n%s", p, debug.Stack())}
			}
			if r.slots != nil {
				<-r.slots
			}
			done <- o
		}()
		o.methods, o.err = validateRules(bctx, def)
	}()
	var o outcome
	select {
	case o = <-done:
	case <-bctx.Done():
		o.err = bctx.Err()
	}
	if o.err != nil && bctx.Err() != nil && ctx.Err() == nil {
		return nil, errTooSlow
	}
	return o.methods, o.err
}

// validateRules applies the rules in order.
func validateRules(ctx context.Context, def []byte) ([]Method, error) {
	doc, err := parse(def)
	if err != nil {
		return nil, invalid(fmtInvalidDoc, err)
	}
	if err := checkHeader(doc); err != nil {
		return nil, err
	}
	ops := operations(doc)
	methods, err := listMethods(ops)
	if err != nil {
		return nil, err
	}
	for _, op := range ops {
		if err := checkOperation(doc, op); err != nil {
			return nil, err
		}
	}
	if err := checkDocument(ctx, doc); err != nil {
		return nil, err
	}
	return methods, nil
}

// SanitizeName replaces every character outside [a-zA-Z0-9_-] with '_'.
func SanitizeName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9', r == '_', r == '-':
			return r
		}
		return '_'
	}, s)
}

// invalid returns the *quarry.Error for a definition that breaks a rule.
func invalid(format string, args ...any) error {
	return quarry.Errorf(quarry.EINVALID, format, args...)
}

// checkHeader applies rules 1 to 7, which concern the top-level keys.
func checkHeader(doc *value) error {
	if err := checkInfo(doc); err != nil {
		return err
	}
	if err := checkVersion(doc); err != nil {
		return err
	}
	if !doc.has("paths") {
		return invalid(msgNoPaths)
	}
	return checkServers(doc)
}

// checkInfo applies rules 1 to 3.
func checkInfo(doc *value) error {
	info := doc.get("info")
	switch {
	case info == nil:
		return invalid(msgNoInfo)
	case !info.has("title"):
		return invalid(msgNoTitle)
	case !info.has("description"):
		return invalid(msgNoDescription)
	}
	return nil
}

// checkVersion applies rules 4 and 5.
func checkVersion(doc *value) error {
	v := doc.get("openapi")
	if v == nil {
		return invalid(msgNoVersion)
	}
	if v.kind != kindString || !strings.HasPrefix(v.str, "3.") {
		return invalid(fmtBadVersion, pyStr(v))
	}
	return nil
}

// checkServers applies rule 7.
func checkServers(doc *value) error {
	var urls []string
	for _, server := range doc.get("servers").array() {
		if url, ok := server.get("url").text(); ok {
			urls = append(urls, url)
		}
	}
	if len(urls) != 1 {
		return invalid(fmtServerURLs, pyrepr.StringList(urls))
	}
	return nil
}

// operations returns the operations of doc in document order.
func operations(doc *value) []operation {
	var ops []operation
	for _, p := range doc.get("paths").object() {
		if strings.HasPrefix(p.key, "x-") {
			continue
		}
		for _, m := range p.value.object() {
			switch {
			case m.key == "additionalOperations":
				for _, op := range m.value.object() {
					ops = append(ops, operation{p.key, op.key, op.value, p.value})
				}
			case !isPathItemField(m.key):
				ops = append(ops, operation{p.key, m.key, m.value, p.value})
			}
		}
	}
	return ops
}

// isPathItemField reports whether key is a field of a Path Item Object that
// is not an operation.
func isPathItemField(key string) bool {
	switch key {
	case "$ref", "summary", "description", "servers", "parameters":
		return true
	}
	return strings.HasPrefix(key, "x-")
}

// listMethods applies rules 8 and 9 and describes the operations.
func listMethods(ops []operation) ([]Method, error) {
	methods := make([]Method, 0, len(ops))
	seen := make(map[string]bool)    // raw operationIds
	owner := make(map[string]string) // sanitized name → raw operationId
	for _, op := range ops {
		m, err := describe(op)
		if err != nil {
			return nil, err
		}
		if seen[m.RawName] {
			return nil, invalid(fmtDuplicateID, m.RawName)
		}
		if prior, ok := owner[m.Name]; ok {
			return nil, invalid(fmtNameClash, prior, m.RawName, m.Name)
		}
		seen[m.RawName] = true
		owner[m.Name] = m.RawName
		methods = append(methods, m)
	}
	if len(methods) == 0 {
		return nil, invalid(msgNoMethods)
	}
	return methods, nil
}

// describe returns the Method for op, or the error of the first check of
// rule 8 (operationId, then summary) that op fails.
func describe(op operation) (Method, error) {
	raw, ok := op.spec.get("operationId").text()
	if !ok {
		return Method{}, invalid(fmtNoOperationID, strings.ToUpper(op.method), op.path)
	}
	summary, ok := op.spec.get("summary").text()
	if !ok {
		summary, ok = op.spec.get("description").text()
	}
	if !ok {
		return Method{}, invalid(fmtNoSummary, strings.ToUpper(op.method), op.path)
	}
	return Method{
		Name:    SanitizeName(raw),
		RawName: raw,
		Summary: summary,
		Path:    op.path,
		Method:  op.method,
		Spec:    bytes.Clone(op.spec.raw),
	}, nil
}

// checkOperation applies rule 10 to op, an operation of doc.
func checkOperation(doc *value, op operation) error {
	if err := checkTemplate(op.path, declaredPathParams(doc, op)); err != nil {
		return err
	}
	if err := checkRequestBody(doc, op.spec); err != nil {
		return err
	}
	return checkMethod(op.method)
}

// declaredPathParams returns the names of the "in": "path" parameters that
// op or its path item declares.
func declaredPathParams(doc *value, op operation) map[string]bool {
	params := slices.Concat(op.spec.get("parameters").array(), op.item.get("parameters").array())
	names := make(map[string]bool)
	for _, p := range params {
		param := deref(doc, p)
		in, _ := param.get("in").text()
		if name, ok := param.get("name").text(); ok && in == "path" {
			names[name] = true
		}
	}
	return names
}

// checkTemplate checks the placeholders of the path template path from left
// to right: each must be well formed and name a declared parameter.
func checkTemplate(path string, declared map[string]bool) error {
	for i := 0; i < len(path); i++ {
		switch path[i] {
		case '}':
			return invalid(fmtBadTemplate, pyrepr.Quote(path))
		case '{':
			n := strings.IndexAny(path[i+1:], "{}")
			if n <= 0 || path[i+1+n] == '{' {
				return invalid(fmtBadTemplate, pyrepr.Quote(path))
			}
			name := path[i+1 : i+1+n]
			if !declared[name] {
				return invalid(fmtMissingParam, pyrepr.Quote(name))
			}
			i += n + 1
		}
	}
	return nil
}

// checkRequestBody checks that the request body of the operation spec, if
// it lists content types, offers application/json.
func checkRequestBody(doc, spec *value) error {
	content := deref(doc, spec.get("requestBody")).get("content")
	types := content.object()
	if len(types) == 0 || content.has("application/json") {
		return nil
	}
	return invalid(fmtContentType, types[0].key)
}

// checkMethod checks that method, a key of a path item, names a supported
// HTTP method.
func checkMethod(method string) error {
	if method == "" {
		return invalid(msgNoMethod)
	}
	switch strings.ToUpper(method) {
	case "GET", "POST", "PUT", "DELETE", "PATCH":
		return nil
	}
	return invalid(fmtBadMethod, method)
}
