package transport

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// engineCodes are the values of engine's exported Code* constants, read
// from its source so that a code added there is checked here without a
// list to keep in step.
func engineCodes(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("../engine/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("engine sources: %v", err)
	}
	codes := map[string]string{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				v := spec.(*ast.ValueSpec)
				for i, id := range v.Names {
					if !strings.HasPrefix(id.Name, "Code") || i >= len(v.Values) {
						continue
					}
					lit, ok := v.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						t.Fatalf("engine.%s is not a string literal", id.Name)
					}
					codes[id.Name], _ = strconv.Unquote(lit.Value)
				}
			}
		}
	}
	if len(codes) < 10 {
		t.Fatalf("found only %d engine codes: %v", len(codes), codes)
	}
	return codes
}

// TestEveryErrorCodeHasAStatus: each code the engine can return has an
// HTTP status in statusByCode (a code without one would be answered as a
// 500 internal_error), and the table maps nothing but the engine's codes
// and the transport's own.
func TestEveryErrorCodeHasAStatus(t *testing.T) {
	known := map[string]bool{}
	for name, code := range engineCodes(t) {
		known[code] = true
		if statusByCode[code] == 0 {
			t.Errorf("engine.%s (%q) has no HTTP status in statusByCode", name, code)
		}
	}
	for _, code := range []string{codeRequestTooLarge, codeRateLimited, codeMethodNotAllowed} {
		if known[code] {
			t.Errorf("%q is both an engine and a transport code", code)
		}
		known[code] = true
		if statusByCode[code] == 0 {
			t.Errorf("transport code %q has no HTTP status", code)
		}
	}
	for code := range statusByCode {
		if !known[code] {
			t.Errorf("statusByCode maps %q, which neither the engine nor the transport defines", code)
		}
	}
}
