// Package archtest holds tests of the repository's shape rather than of
// its behaviour.
package archtest

import (
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/payd-engine/payd"

// pkg is what go list says of one package.
type pkg struct {
	ImportPath string
	Standard   bool
	Deps       []string // every package it imports, directly or not
}

// listPackages runs go list over the module, tests excluded: a test may
// build what it checks from anything.
func listPackages(t *testing.T) map[string]pkg {
	t.Helper()
	readSources(t)
	out, err := exec.Command("go", "list", "-deps", "-json=ImportPath,Standard,Deps", module+"/...").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	pkgs := map[string]pkg{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs[p.ImportPath] = p
	}
	return pkgs
}

// readSources reads every Go file of the module and go.mod: go test
// caches a result by the files the test opens, and knows nothing of what
// go list read, so without it a planted import would pass from the cache.
func readSources(t *testing.T) {
	t.Helper()
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && (strings.HasSuffix(path, ".go") || d.Name() == "go.mod") {
			_, err = os.ReadFile(path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// under reports whether path is the package dir or one below it.
func under(path, dir string) bool {
	dir = module + "/" + dir
	return path == dir || strings.HasPrefix(path, dir+"/")
}

// TestDependenciesPointOneWay holds the layers of ARCHITECTURE.md: the
// engine in the middle; storage, transport and providers around it, none
// of which knows another. A provider is a plug-in: adding or removing one
// touches no file under storage/ or transport/.
func TestDependenciesPointOneWay(t *testing.T) {
	pkgs := listPackages(t)
	engineAllowed := []string{"github.com/shopspring/decimal", "github.com/benbjohnson/clock"}
	rules := []struct {
		from      string // a directory of the module
		forbidden []string
	}{
		{"storage", []string{"provider", "transport"}},
		{"transport", []string{"provider", "storage"}},
		{"provider", []string{"storage", "transport"}},
	}
	checked := map[string]bool{}
	for path, p := range pkgs {
		if p.Standard || !strings.HasPrefix(path, module+"/") {
			continue
		}
		if under(path, "engine") {
			checked["engine"] = true
			for _, d := range p.Deps {
				// A package under engine/ may use its own sub-packages, never
				// the engine above it: a helper that needs the engine lives
				// outside engine/ (paydmock).
				if pkgs[d].Standard || under(d, strings.TrimPrefix(path, module+"/")) {
					continue
				}
				ok := false
				for _, a := range engineAllowed {
					ok = ok || d == a || strings.HasPrefix(d, a+"/")
				}
				if !ok {
					t.Errorf("%s imports %s: engine imports only the standard library, decimal and clock", path, d)
				}
			}
		}
		for _, r := range rules {
			if !under(path, r.from) {
				continue
			}
			checked[r.from] = true
			for _, d := range p.Deps {
				for _, f := range r.forbidden {
					if under(d, f) {
						t.Errorf("%s imports %s: %s/ imports no %s/", path, d, r.from, f)
					}
				}
			}
		}
	}
	// A rule over no package would pass forever.
	for _, dir := range []string{"engine", "storage", "transport", "provider"} {
		if !checked[dir] {
			t.Errorf("no package under %s/: the rule checks nothing", dir)
		}
	}
}
