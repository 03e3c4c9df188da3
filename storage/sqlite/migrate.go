package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"slices"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/storage/internal/migration"
)

// migrationFiles are the store's own line of schema changes (the engine's
// tables), named NNNN_description.sql and applied in version order. A
// released file is never edited: a change is a new file.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// dialect is the folder of a plug-in's migration line this store reads.
const migrationDialect = "sqlite"

// Migrate applies the store's own migrations, then those of lines (the
// providers the host uses, each its own line: sandbox.Migrations(), ...),
// that the database has not applied, each in its own IMMEDIATE
// transaction with its record, so that two processes may migrate one file
// at once. It returns where the database then stands on each line.
//
// A database made before migration lines recorded one line of versions,
// the providers' tables among them; each line adopts its versions from
// that record on its first migration, so nothing is run twice or skipped.
func (s *Store) Migrate(ctx context.Context, lines ...engine.MigrationLine) ([]engine.MigrationVersion, error) {
	ls, err := migration.Lines(migrationDialect, migrationFiles, lines)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	if err := migration.Migrate(ctx, migrator{s}, ls); err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	return s.versions(ctx, ls)
}

// MigrationVersions reports where the database stands on the store's own
// line and on lines, changing nothing.
func (s *Store) MigrationVersions(ctx context.Context, lines ...engine.MigrationLine) ([]engine.MigrationVersion, error) {
	ls, err := migration.Lines(migrationDialect, migrationFiles, lines)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	return s.versions(ctx, ls)
}

// CheckMigrations returns nil when the database has applied every
// migration of the store's own line and of lines, or an error naming each
// line that is behind and the versions it lacks: a payd must not start on
// such a database.
func (s *Store) CheckMigrations(ctx context.Context, lines ...engine.MigrationLine) error {
	vs, err := s.MigrationVersions(ctx, lines...)
	if err != nil {
		return err
	}
	if err := migration.Check(vs); err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	return nil
}

func (s *Store) versions(ctx context.Context, ls []migration.Line) ([]engine.MigrationVersion, error) {
	vs, err := migration.Versions(ctx, migrator{s}, ls)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	return vs, nil
}

// Ready reports whether the database answers and has every migration of
// the store's own line applied: the readiness check of an operations
// endpoint.
func (s *Store) Ready(ctx context.Context) error { return s.CheckMigrations(ctx) }

// migrator is the store as migration.DB: the lock is the writer's
// IMMEDIATE transaction.
type migrator struct{ s *Store }

func (m migrator) Locked(ctx context.Context, fn func(migration.Tx) error) error {
	return retry(ctx, func() error {
		return runTx(ctx, m.s.writer, nil, &m.s.writeBusy, func(t *sql.Tx) error {
			if _, err := t.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+migration.Table+` (
				line       TEXT    NOT NULL,
				version    INTEGER NOT NULL,
				applied_at INTEGER NOT NULL,
				PRIMARY KEY (line, version)
			) STRICT`); err != nil {
				return err
			}
			return fn(migrationTx{t})
		})
	})
}

func (m migrator) Read(ctx context.Context, fn func(migration.Tx) error) error {
	return retry(ctx, func() error {
		return runTx(ctx, m.s.reader, &sql.TxOptions{ReadOnly: true}, nil, func(t *sql.Tx) error { return fn(migrationTx{t}) })
	})
}

type migrationTx struct{ t *sql.Tx }

func (t migrationTx) Exec(ctx context.Context, script string) error {
	_, err := t.t.ExecContext(ctx, script)
	return err
}

func (t migrationTx) Applied(ctx context.Context, line string) ([]int, error) {
	if ok, err := t.hasTable(ctx, migration.Table); err != nil || !ok {
		return nil, err
	}
	return t.ints(ctx, `SELECT version FROM `+migration.Table+` WHERE line = ?`, line)
}

// Legacy reads the versions payd recorded before lines: a table of that
// name with exactly payd's two columns (another tool's schema_migrations,
// in a database a host shares, has other columns and is not read).
func (t migrationTx) Legacy(ctx context.Context) ([]int, error) {
	cols, err := t.strings(ctx, `SELECT name FROM pragma_table_info(?) ORDER BY cid`, migration.LegacyTable)
	if err != nil || !slices.Equal(cols, []string{"version", "applied_at"}) {
		return nil, err
	}
	return t.ints(ctx, `SELECT version FROM `+migration.LegacyTable)
}

func (t migrationTx) Record(ctx context.Context, line string, version int) error {
	_, err := t.t.ExecContext(ctx, `INSERT INTO `+migration.Table+` (line, version, applied_at) VALUES (?, ?, ?)`,
		line, version, time.Now().UnixMicro())
	return err
}

func (t migrationTx) hasTable(ctx context.Context, name string) (bool, error) {
	var n int
	err := t.t.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?`, name).Scan(&n)
	return n > 0, err
}

func (t migrationTx) ints(ctx context.Context, query string, args ...any) ([]int, error) {
	rows, err := t.t.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

func (t migrationTx) strings(ctx context.Context, query string, args ...any) ([]string, error) {
	rows, err := t.t.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// migrations returns the store's own migrations sorted by version.
func migrations() ([]migration.Migration, error) {
	return migration.List(migrationFiles, "migrations")
}
