package postgres

import (
	"context"
	"embed"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/storage/internal/migration"
)

// migrationFiles are the store's own line of schema changes (the engine's
// tables), named NNNN_description.sql like storage/sqlite's (the same
// numbers make the same changes) and applied in version order. A released
// file is never edited: a change is a new file.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationDialect is the folder of a plug-in's migration line this store
// reads.
const migrationDialect = "postgres"

// migrationLock is the key of the transaction-level advisory lock that
// serializes migrations between processes opening one database (advisory
// locks are per database). The value is "payd" in ASCII.
const migrationLock = 0x70617964

// Migrate applies the store's own migrations, then those of lines (the
// providers the host uses, each its own line: sandbox.Migrations(), ...),
// that the database has not applied, each in its own transaction with its
// record. Each transaction first takes an advisory lock, then checks, so
// several processes may migrate one database at once: one that waited
// finds the migration recorded and skips it. Postgres DDL is
// transactional, so a migration and its record commit together. It
// returns where the database then stands on each line.
//
// A database made before migration lines recorded one line of versions,
// the providers' tables among them; each line adopts its versions from
// that record on its first migration, so nothing is run twice or skipped.
func (s *Store) Migrate(ctx context.Context, lines ...engine.MigrationLine) ([]engine.MigrationVersion, error) {
	ls, err := migration.Lines(migrationDialect, migrationFiles, lines)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	if err := migration.Migrate(ctx, migrator{s}, ls); err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	return s.versions(ctx, ls)
}

// MigrationVersions reports where the database stands on the store's own
// line and on lines, changing nothing.
func (s *Store) MigrationVersions(ctx context.Context, lines ...engine.MigrationLine) ([]engine.MigrationVersion, error) {
	ls, err := migration.Lines(migrationDialect, migrationFiles, lines)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
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
		return fmt.Errorf("postgres: %w", err)
	}
	return nil
}

func (s *Store) versions(ctx context.Context, ls []migration.Line) ([]engine.MigrationVersion, error) {
	vs, err := migration.Versions(ctx, migrator{s}, ls)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	return vs, nil
}

// Ready reports whether the database answers and has every migration of
// the store's own line applied: the readiness check of an operations
// endpoint.
func (s *Store) Ready(ctx context.Context) error {
	began := time.Now().UnixNano()
	return s.health.observe(ctx, s.ready(ctx), true, began)
}

// ready: the store's own line applied, on a writable primary (a standby
// answers reads but would refuse every write).
func (s *Store) ready(ctx context.Context) error {
	if err := s.CheckMigrations(ctx); err != nil {
		return err
	}
	var standby bool
	if err := s.pool.QueryRow(ctx, `SELECT pg_is_in_recovery()`).Scan(&standby); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	if standby {
		return errStandby
	}
	return nil
}

// migrator is the store as migration.DB.
type migrator struct{ s *Store }

func (m migrator) Locked(ctx context.Context, fn func(migration.Tx) error) error {
	return retry(ctx, func() error {
		return m.s.runTx(ctx, readWrite, func(t pgx.Tx) error {
			if _, err := t.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrationLock)); err != nil {
				return err
			}
			// Under the lock, so that two processes never both create it.
			if _, err := t.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+migration.Table+` (
				line       TEXT        NOT NULL,
				version    BIGINT      NOT NULL,
				applied_at TIMESTAMPTZ NOT NULL DEFAULT now(),
				PRIMARY KEY (line, version)
			)`); err != nil {
				return err
			}
			return fn(migrationTx{t})
		})
	})
}

func (m migrator) Read(ctx context.Context, fn func(migration.Tx) error) error {
	return retry(ctx, func() error {
		return m.s.runTx(ctx, readOnly, func(t pgx.Tx) error { return fn(migrationTx{t}) })
	})
}

type migrationTx struct{ t pgx.Tx }

// Exec runs a script: without arguments pgx sends it as a simple query,
// which may hold several statements.
func (t migrationTx) Exec(ctx context.Context, script string) error {
	_, err := t.t.Exec(ctx, script)
	return err
}

func (t migrationTx) Applied(ctx context.Context, line string) ([]int, error) {
	var exists bool
	if err := t.t.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, migration.Table).Scan(&exists); err != nil || !exists {
		return nil, err
	}
	return t.ints(ctx, `SELECT version FROM `+migration.Table+` WHERE line = $1`, line)
}

// Legacy reads the versions payd recorded before lines: a table of that
// name, on the search path, with exactly payd's two columns (another
// tool's schema_migrations, in a database a host shares, has other columns
// and is not read).
func (t migrationTx) Legacy(ctx context.Context) ([]int, error) {
	rows, err := t.t.Query(ctx, `SELECT a.attname FROM pg_attribute a
		WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`, migration.LegacyTable)
	if err != nil {
		return nil, err
	}
	cols, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || !slices.Equal(cols, []string{"version", "applied_at"}) {
		return nil, err
	}
	return t.ints(ctx, `SELECT version FROM `+migration.LegacyTable)
}

func (t migrationTx) Record(ctx context.Context, line string, version int) error {
	_, err := t.t.Exec(ctx, `INSERT INTO `+migration.Table+` (line, version) VALUES ($1, $2)`, line, int64(version))
	return err
}

func (t migrationTx) ints(ctx context.Context, query string, args ...any) ([]int, error) {
	rows, err := t.t.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (int, error) {
		var v int64
		err := row.Scan(&v)
		return int(v), err
	})
}

// migrations returns the store's own migrations sorted by version.
func migrations() ([]migration.Migration, error) {
	return migration.List(migrationFiles, "migrations")
}
