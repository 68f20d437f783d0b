package tooldef_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/tooldef"
)

// messagePatterns match every message Validate may give, one per rule
// variant, in the order of the rules.
var messagePatterns = []*regexp.Regexp{
	regexp.MustCompile("^`info` section is required in OpenAPI schema$"),
	regexp.MustCompile("^`title` is required in `info` section of OpenAPI schema$"),
	regexp.MustCompile("^`description` is required in `info` section of OpenAPI schema$"),
	regexp.MustCompile("^`openapi` field which specifies OpenAPI schema version is required$"),
	regexp.MustCompile(`(?s)^OpenAPI version '.*' is not supported$`),
	regexp.MustCompile("^`paths` section is required in OpenAPI schema$"),
	regexp.MustCompile(`^Expected exactly one URL in OpenAPI schema, but found (\[\]|\[['"].*['"]\])$`),
	regexp.MustCompile(`(?s)^Operation ID is not specified for .* .*$`),
	regexp.MustCompile(`(?s)^Summary is not specified for .* .*$`),
	regexp.MustCompile(`(?s)^Duplicate operation ID '.+'\. Each operation must have a unique operationId\.$`),
	regexp.MustCompile(`(?s)^Operation IDs '.+' and '.+' both sanitize to '[a-zA-Z0-9_-]+'\. Rename one so the LLM-facing names stay distinct\.$`),
	regexp.MustCompile(`^No methods found in OpenAPI schema$`),
	regexp.MustCompile(`^Invalid path template: ['"].*['"]\. Each '\{' must be closed by a '\}' with a parameter name between them\.$`),
	regexp.MustCompile(`^Missing path parameter: ('[^{}]+'|"[^{}]+")$`),
	regexp.MustCompile(`(?s)^Unsupported content type: '.*'\. Only 'application/json' is supported\.$`),
	regexp.MustCompile(`^HTTP method is not specified\.$`),
	regexp.MustCompile(`(?s)^HTTP method '.+' is not supported\.$`),
	regexp.MustCompile(`(?s)^Invalid OpenAPI document: .+$`),
}

func FuzzValidate(f *testing.F) {
	for _, tc := range ruleCases {
		f.Add([]byte(tc.def))
	}
	for _, name := range []string{"valid30.json", "valid31.json"} {
		def, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(def)
	}
	f.Fuzz(func(t *testing.T, def []byte) {
		if !isJSONObject(def) {
			t.Skip()
		}
		methods, err := tooldef.Validate(context.Background(), def)
		if err != nil {
			checkError(t, err)
			return
		}
		checkMethods(t, methods)
	})
}

// isJSONObject reports whether data is the JSON text of an object.
func isJSONObject(data []byte) bool {
	return json.Valid(data) && bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("{"))
}

// checkError checks that err is a *quarry.Error with a documented message.
func checkError(t *testing.T, err error) {
	t.Helper()
	var e *quarry.Error
	if !errors.As(err, &e) || e.Code != quarry.EINVALID {
		t.Fatalf("Validate error %v (%T) is not an EINVALID *quarry.Error", err, err)
	}
	for _, re := range messagePatterns {
		if re.MatchString(e.Message) {
			return
		}
	}
	t.Fatalf("Validate message %q matches no documented pattern", e.Message)
}

// checkMethods checks what Validate lists for a valid definition.
func checkMethods(t *testing.T, methods []tooldef.Method) {
	t.Helper()
	if len(methods) == 0 {
		t.Fatal("Validate succeeded without methods")
	}
	for _, m := range methods {
		switch {
		case m.Name != tooldef.SanitizeName(m.RawName):
			t.Errorf("method %q has name %q, want %q", m.RawName, m.Name, tooldef.SanitizeName(m.RawName))
		case m.Summary == "":
			t.Errorf("method %q has no summary", m.RawName)
		case !strings.Contains("GET POST PUT DELETE PATCH", strings.ToUpper(m.Method)) || m.Method == "":
			t.Errorf("method %q has HTTP method %q", m.RawName, m.Method)
		case !isJSONObject(m.Spec):
			t.Errorf("method %q has spec %s, want an object", m.RawName, m.Spec)
		}
	}
}
