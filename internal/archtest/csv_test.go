package archtest

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// TestCSVThroughCSVSafe: every CSV payd writes goes through
// internal/csvsafe, which neutralizes cells a spreadsheet would run as
// formulas; so no other package of the module imports encoding/csv
// (tests, which may read CSV back, are not listed).
func TestCSVThroughCSVSafe(t *testing.T) {
	readSources(t)
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	seen := 0
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		seen++
		for _, imp := range p.Imports {
			if imp == "encoding/csv" && p.ImportPath != module+"/internal/csvsafe" {
				t.Errorf("%s imports encoding/csv: write CSV with internal/csvsafe", p.ImportPath)
			}
		}
	}
	if seen == 0 {
		t.Fatal("go list listed no package")
	}
}
