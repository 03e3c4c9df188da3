package migration

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/payd-engine/payd/engine"
)

func TestLines(t *testing.T) {
	main := fstest.MapFS{"migrations/0001_a.sql": {Data: []byte("A")}, "migrations/0003_c.sql": {Data: []byte("C")}}
	plugin := fstest.MapFS{
		"sqlite/0001_x.sql":   {Data: []byte("X")},
		"postgres/0001_x.sql": {Data: []byte("PX")},
	}
	ls, err := Lines("postgres", main, []engine.MigrationLine{{Name: "plug", Files: plugin, Formerly: map[int]int{1: 3}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 2 || ls[0].Name != "main" || len(ls[0].Migrations) != 2 || ls[0].Formerly[3] != 3 ||
		ls[1].Name != "plug" || ls[1].Migrations[0].SQL != "PX" || ls[1].Formerly[1] != 3 {
		t.Errorf("Lines = %+v", ls)
	}
	for name, c := range map[string]struct {
		lines []engine.MigrationLine
		want  string
	}{
		"twice":      {[]engine.MigrationLine{{Name: "plug", Files: plugin}, {Name: "plug", Files: plugin}}, "given twice"},
		"main":       {[]engine.MigrationLine{{Name: "main", Files: plugin}}, "given twice, or named like the store's own"},
		"unnamed":    {[]engine.MigrationLine{{Files: plugin}}, "want a name"},
		"no dialect": {[]engine.MigrationLine{{Name: "plug", Files: fstest.MapFS{"sqlite/0001_x.sql": {}}}}, "has no postgres migrations"},
		"bad name":   {[]engine.MigrationLine{{Name: "plug", Files: fstest.MapFS{"postgres/x.sql": {}}}}, "NNNN_description.sql"},
	} {
		if _, err := Lines("postgres", main, c.lines); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Lines = %v, want an error saying %q", name, err, c.want)
		}
	}
}

func TestCheck(t *testing.T) {
	if err := Check([]engine.MigrationVersion{{Line: "main", Version: 3, Latest: 3}}); err != nil {
		t.Errorf("current: %v", err)
	}
	err := Check([]engine.MigrationVersion{
		{Line: "main", Version: 3, Latest: 3},
		{Line: "smsinbox", Version: 2, Latest: 4, Missing: []int{3, 4}},
	})
	want := `line "smsinbox" is at version 2, this code needs 4 (missing 0003, 0004)`
	if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), `"main"`) {
		t.Errorf("Check = %v, want it to say %s and nothing of main", err, want)
	}
}
