package engine_test

import (
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestPackageDocMapsEveryFile: the package doc's map of files names each
// source file of the package, and no file that is gone.
func TestPackageDocMapsEveryFile(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "engine.go", nil, parser.PackageClauseOnly|parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	mapped := regexp.MustCompile(`\b[a-z_]+\.go\b`).FindAllString(f.Doc.Text(), -1)
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		if n := e.Name(); strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
			files = append(files, n)
		}
	}
	for _, n := range files {
		if !slices.Contains(mapped, n) {
			t.Errorf("%s is not in the package doc's map", n)
		}
	}
	for _, n := range mapped {
		if !slices.Contains(files, n) {
			t.Errorf("the package doc maps %s, which does not exist", n)
		}
	}
}
