package index

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImports checks the engine's place among the packages: it imports
// the standard library and package analysis only, and neither SQL, HTTP,
// the clock, goroutines' sync nor the files; the root package (the
// domain) does not import it.
func TestImports(t *testing.T) {
	imports := func(dir string) map[string]string {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: %v", dir, err)
		}
		out := map[string]string{}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			file, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range file.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				out[p] = f
			}
		}
		return out
	}
	for p, f := range imports(".") {
		switch {
		case p == "github.com/quarryhq/quarry/analysis":
		case strings.Contains(strings.SplitN(p, "/", 2)[0], "."):
			t.Errorf("%s imports %s: the engine imports package analysis and the standard library only", f, p)
		case strings.HasPrefix(p, "database/") || strings.HasPrefix(p, "net/") || p == "net" ||
			p == "os" || p == "time" || p == "sync" || p == "context":
			t.Errorf("%s imports %s: the engine does no I/O, keeps no time and runs no goroutines", f, p)
		}
	}
	for p, f := range imports("..") {
		if p == "github.com/quarryhq/quarry/index" {
			t.Errorf("%s imports package index: the domain does not depend on the engine", f)
		}
	}
}
