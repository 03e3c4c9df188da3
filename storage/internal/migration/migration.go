// Package migration lists a store's numbered migrations from an fs.FS: the
// part of migrating that no dialect changes. Applying them, each in its own
// transaction with its record, is the adapter's (locks and DDL differ).
package migration

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Migration is one schema change: the file NNNN_description.sql.
type Migration struct {
	Version int
	// Name is the file's name, without its directory.
	Name string
	SQL  string
}

// List returns the migrations of dir in fsys (the files dir/*.sql), sorted
// by version. A file not named NNNN_description.sql, with NNNN a positive
// number, or two files of one version, is an error: a released migration is
// never renumbered, so the list must say exactly what runs.
func List(fsys fs.FS, dir string) ([]Migration, error) {
	names, err := fs.Glob(fsys, path.Join(dir, "*.sql"))
	if err != nil {
		return nil, err
	}
	var ms []Migration
	for _, name := range names {
		base := path.Base(name)
		prefix, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(prefix)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: name must be NNNN_description.sql", base)
		}
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		ms = append(ms, Migration{Version: v, Name: base, SQL: string(b)})
	}
	slices.SortFunc(ms, func(a, b Migration) int { return a.Version - b.Version })
	for i := 1; i < len(ms); i++ {
		if ms[i].Version == ms[i-1].Version {
			return nil, fmt.Errorf("migrations %s and %s have the same version", ms[i-1].Name, ms[i].Name)
		}
	}
	return ms, nil
}
