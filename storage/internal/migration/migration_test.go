package migration

import (
	"os"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

func TestList(t *testing.T) {
	ms, err := List(fstest.MapFS{
		"m/0002_b.sql":   {Data: []byte("B")},
		"m/0001_a.sql":   {Data: []byte("A")},
		"m/README.md":    {Data: []byte("not a migration")},
		"other/0003.sql": {Data: []byte("elsewhere")},
	}, "m")
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || ms[0] != (Migration{1, "0001_a.sql", "A"}) || ms[1] != (Migration{2, "0002_b.sql", "B"}) {
		t.Errorf("List = %+v", ms)
	}
	for name, files := range map[string]fstest.MapFS{
		"unnumbered": {"m/init.sql": {}},
		"zero":       {"m/0000_init.sql": {}},
		"same":       {"m/0001_a.sql": {}, "m/1_b.sql": {}},
	} {
		if _, err := List(files, "m"); err == nil {
			t.Errorf("%s: List accepted it", name)
		}
	}
}

// TestDialectsAgree holds both stores to one numbering: the same number
// makes the same change in SQLite and Postgres (a number may be skipped in
// both, never in one).
func TestDialectsAgree(t *testing.T) {
	versions := func(store string) []int {
		ms, err := List(os.DirFS("../../"+store), "migrations")
		if err != nil {
			t.Fatal(err)
		}
		var vs []int
		for _, m := range ms {
			vs = append(vs, m.Version)
			if !strings.HasSuffix(m.Name, ".sql") {
				t.Errorf("%s: %s", store, m.Name)
			}
		}
		return vs
	}
	lite, pg := versions("sqlite"), versions("postgres")
	if len(lite) == 0 || !slices.Equal(lite, pg) {
		t.Errorf("sqlite migrations %v, postgres %v: want the same versions", lite, pg)
	}
}
