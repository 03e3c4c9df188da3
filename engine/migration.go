package engine

import "io/fs"

// MigrationLine is a sequence of schema changes that one part of payd owns
// (River's migration lines are the model): the store's own line, "main",
// holds the engine's tables, and a plug-in that keeps tables of its own (a
// provider, through SQLTx) ships a line of its own, so that adding or
// removing it changes no store. A store's Migrate applies the lines it is
// given and records each version per line.
type MigrationLine struct {
	// Name identifies the line in the database's record of versions; it
	// never changes once released. "main" is the store's own.
	Name string
	// Files holds one folder per dialect, named as SQLTx.Dialect says
	// ("sqlite", "postgres"), each with the line's migrations as
	// NNNN_description.sql: numbered from 1, the same number making the
	// same change in every dialect, applied in order, each in its own
	// transaction. A released file is never edited: a change is a new file.
	Files fs.FS
	// Formerly maps a version of this line to the version of the store's
	// own line that made the same change before migration lines existed:
	// a database that recorded that version there has this one, and it is
	// recorded for the line, not run again, on the line's first migration.
	// Nil for a line that never lived in a store's migrations.
	Formerly map[int]int
}

// MainMigrationLine is the name of a store's own migration line.
const MainMigrationLine = "main"

// MigrationVersion is where a database stands on one migration line.
type MigrationVersion struct {
	Line string
	// Version is the highest version the database has applied; 0: none.
	Version int
	// Latest is the highest version this code knows.
	Latest int
	// Missing are the versions this code knows that the database has not
	// applied, in order: empty when the line is current.
	Missing []int
}
