package sandbox

import (
	"embed"
	"io/fs"

	"github.com/payd-engine/payd/engine"
)

//go:embed migrations/sqlite/*.sql migrations/postgres/*.sql
var migrationFiles embed.FS

// Migrations is the sandbox's migration line: its tables (payments,
// payouts), one folder of numbered .sql files per dialect. A host that
// runs the sandbox gives it to its store's Migrate. Its first three
// versions were storage's migrations 0002, 0003 and 0010 before lines, and
// a database that recorded those has them.
func Migrations() engine.MigrationLine {
	files, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		panic(err) // the embedded folder exists
	}
	return engine.MigrationLine{Name: "sandbox", Files: files, Formerly: map[int]int{1: 2, 2: 3, 3: 10}}
}

// Migrations is the provider's migration line (the package's Migrations),
// which payd.New checks the store has applied.
func (p *Provider) Migrations() engine.MigrationLine { return Migrations() }
