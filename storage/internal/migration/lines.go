package migration

import (
	"context"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/payd-engine/payd/engine"
)

// Table records the versions applied, one row per line and version. Until
// migration lines, the stores recorded one line of versions in
// LegacyTable (version, applied_at); a database that has it is adopted
// from it (see Migrate).
const (
	Table       = "payd_migrations"
	LegacyTable = "schema_migrations"
)

// Line is one migration line in one dialect.
type Line struct {
	Name       string
	Migrations []Migration
	// Formerly is engine.MigrationLine.Formerly; for the store's own line,
	// every version is its own former version.
	Formerly map[int]int
}

// Lines returns the store's own line, main (its files directly in the
// migrations folder of mainFS), followed by lines in dialect. A line
// without a folder for dialect, two lines of one name, or a plug-in named
// like the store's own line is an error.
func Lines(dialect string, mainFS fs.FS, lines []engine.MigrationLine) ([]Line, error) {
	ms, err := List(mainFS, "migrations")
	if err != nil {
		return nil, err
	}
	main := Line{Name: engine.MainMigrationLine, Migrations: ms, Formerly: map[int]int{}}
	for _, m := range ms {
		main.Formerly[m.Version] = m.Version
	}
	out := []Line{main}
	for _, l := range lines {
		if l.Name == "" || l.Files == nil {
			return nil, fmt.Errorf("migration line %q: want a name and files", l.Name)
		}
		if slices.ContainsFunc(out, func(o Line) bool { return o.Name == l.Name }) {
			return nil, fmt.Errorf("migration line %q given twice, or named like the store's own", l.Name)
		}
		if _, err := fs.Stat(l.Files, dialect); err != nil {
			return nil, fmt.Errorf("migration line %q has no %s migrations: %w", l.Name, dialect, err)
		}
		ms, err := List(l.Files, dialect)
		if err != nil {
			return nil, fmt.Errorf("migration line %q: %w", l.Name, err)
		}
		if len(ms) == 0 {
			return nil, fmt.Errorf("migration line %q has no %s migrations", l.Name, dialect)
		}
		out = append(out, Line{Name: l.Name, Migrations: ms, Formerly: l.Formerly})
	}
	return out, nil
}

// Tx is a dialect's transaction for migrating: it holds the lock that
// serializes migrations between processes, and Table exists in it.
type Tx interface {
	// Exec runs a migration's script (no arguments; several statements).
	Exec(ctx context.Context, script string) error
	// Applied returns the versions recorded for line.
	Applied(ctx context.Context, line string) ([]int, error)
	// Legacy returns the versions of LegacyTable, or nil when the database
	// has no such table written by payd.
	Legacy(ctx context.Context) ([]int, error)
	// Record records version of line as applied.
	Record(ctx context.Context, line string, version int) error
}

// DB is a dialect's database, as migrating needs it.
type DB interface {
	// Locked runs fn in a transaction that holds the migration lock, with
	// Table created: committed if fn returns nil.
	Locked(ctx context.Context, fn func(Tx) error) error
	// Read runs fn in a read-only transaction, without the lock. Table may
	// not exist: Applied then returns nothing.
	Read(ctx context.Context, fn func(Tx) error) error
}

// Migrate applies every migration of lines that db has not applied, in
// order, each in its own locked transaction with its record, so that a
// failed one leaves no trace and the next call resumes there; a process
// that waited for another's migration finds it recorded and skips it.
//
// A line with no version recorded in a database that has LegacyTable is
// first adopted from it: each version whose former version is recorded
// there is recorded for the line, in one transaction, and not run again.
// Adoption happens once per line, when the line is first migrated, so a
// provider added to an old database years later still finds its tables.
func Migrate(ctx context.Context, db DB, lines []Line) error {
	for _, l := range lines {
		if err := db.Locked(ctx, func(tx Tx) error { return adopt(ctx, tx, l) }); err != nil {
			return fmt.Errorf("migration line %s: adopt recorded versions: %w", l.Name, err)
		}
		for _, m := range l.Migrations {
			err := db.Locked(ctx, func(tx Tx) error {
				applied, err := tx.Applied(ctx, l.Name)
				if err != nil || slices.Contains(applied, m.Version) {
					return err
				}
				if err := tx.Exec(ctx, m.SQL); err != nil {
					return err
				}
				return tx.Record(ctx, l.Name, m.Version)
			})
			if err != nil {
				return fmt.Errorf("migration line %s: %s: %w", l.Name, m.Name, err)
			}
		}
	}
	return nil
}

// adopt records for l the versions LegacyTable holds, if l has none yet.
func adopt(ctx context.Context, tx Tx, l Line) error {
	applied, err := tx.Applied(ctx, l.Name)
	if err != nil || len(applied) > 0 || len(l.Formerly) == 0 {
		return err
	}
	legacy, err := tx.Legacy(ctx)
	if err != nil {
		return err
	}
	for _, m := range l.Migrations {
		if old, ok := l.Formerly[m.Version]; ok && slices.Contains(legacy, old) {
			if err := tx.Record(ctx, l.Name, m.Version); err != nil {
				return err
			}
		}
	}
	return nil
}

// Versions reports where db stands on each of lines. A line not adopted
// yet is reported as its adoption would record it.
func Versions(ctx context.Context, db DB, lines []Line) ([]engine.MigrationVersion, error) {
	var out []engine.MigrationVersion
	err := db.Read(ctx, func(tx Tx) error {
		out = out[:0]
		var legacy []int
		legacyRead := false
		for _, l := range lines {
			applied, err := tx.Applied(ctx, l.Name)
			if err != nil {
				return err
			}
			if len(applied) == 0 && len(l.Formerly) > 0 {
				if !legacyRead {
					if legacy, err = tx.Legacy(ctx); err != nil {
						return err
					}
					legacyRead = true
				}
				for v, old := range l.Formerly {
					if slices.Contains(legacy, old) {
						applied = append(applied, v)
					}
				}
			}
			out = append(out, version(l, applied))
		}
		return nil
	})
	return out, err
}

func version(l Line, applied []int) engine.MigrationVersion {
	v := engine.MigrationVersion{Line: l.Name}
	if len(applied) > 0 {
		v.Version = slices.Max(applied)
	}
	for _, m := range l.Migrations {
		v.Latest = max(v.Latest, m.Version)
		if !slices.Contains(applied, m.Version) {
			v.Missing = append(v.Missing, m.Version)
		}
	}
	return v
}

// Check returns nil when every line of vs is current, or an error naming
// each line that is behind, its version and the versions it lacks.
func Check(vs []engine.MigrationVersion) error {
	var behind []string
	for _, v := range vs {
		if len(v.Missing) == 0 {
			continue
		}
		missing := make([]string, len(v.Missing))
		for i, m := range v.Missing {
			missing[i] = fmt.Sprintf("%04d", m)
		}
		behind = append(behind, fmt.Sprintf("line %q is at version %d, this code needs %d (missing %s)",
			v.Line, v.Version, v.Latest, strings.Join(missing, ", ")))
	}
	if len(behind) == 0 {
		return nil
	}
	return fmt.Errorf("database schema is behind: %s: migrate it first (payd serve and payd admin do; a host calls Migrate)",
		strings.Join(behind, "; "))
}
