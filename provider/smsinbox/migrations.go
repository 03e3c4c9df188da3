package smsinbox

import (
	"embed"
	"io/fs"

	"github.com/payd-engine/payd/engine"
)

//go:embed migrations/sqlite/*.sql migrations/postgres/*.sql
var migrationFiles embed.FS

// Migrations is the SMS inbox's migration line: its tables (devices, wallet
// chains, messages, gaps, settings, manual payouts), one folder of numbered
// .sql files per dialect. A host that runs the inbox, or its admin
// commands, gives it to its store's Migrate. Its first four versions were
// storage's migrations 0006, 0007, 0013 and 0015 before lines, and a
// database that recorded those has them.
func Migrations() engine.MigrationLine {
	files, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		panic(err) // the embedded folder exists
	}
	return engine.MigrationLine{Name: "smsinbox", Files: files, Formerly: map[int]int{1: 6, 2: 7, 3: 13, 4: 15}}
}

// Migrations is the provider's migration line (the package's Migrations),
// which payd.New checks the store has applied.
func (p *Provider) Migrations() engine.MigrationLine { return Migrations() }
