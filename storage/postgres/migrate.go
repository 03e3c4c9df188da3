package postgres

import (
	"context"
	"embed"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/payd-engine/payd/storage/internal/migration"
)

// migrationFiles are the schema changes, named NNNN_description.sql like
// storage/sqlite's (the same numbers make the same changes) and applied in
// version order. A released file is never edited: a change is a new file.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrations returns the embedded migrations sorted by version.
func migrations() ([]migration.Migration, error) {
	ms, err := migration.List(migrationFiles, "migrations")
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	return ms, nil
}

// migrationLock is the key of the transaction-level advisory lock that
// serializes migrations between processes opening one database (advisory
// locks are per database). The value is "payd" in ASCII.
const migrationLock = 0x70617964

// migrate applies the migrations the database has not recorded yet, each in
// its own transaction with its record, so a failed one leaves no trace and
// the next Open resumes there. Each transaction first takes the advisory
// lock, then checks: a process that waited for another's migration finds it
// recorded and skips it. Postgres DDL is transactional, so a migration and
// its record commit together.
func (s *Store) migrate(ctx context.Context) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	for _, m := range ms {
		err := retry(ctx, func() error {
			return s.runTx(ctx, readWrite, func(t pgx.Tx) error {
				if _, err := t.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrationLock)); err != nil {
					return err
				}
				// Under the lock, so that two processes never both create it.
				if _, err := t.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
					version    BIGINT      NOT NULL PRIMARY KEY,
					applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
				)`); err != nil {
					return err
				}
				var done bool
				err := t.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE version = $1)`, m.Version).Scan(&done)
				if err != nil || done {
					return err
				}
				// No arguments: pgx sends it as a simple query, which may
				// hold several statements.
				if _, err := t.Exec(ctx, m.SQL); err != nil {
					return err
				}
				_, err = t.Exec(ctx, `INSERT INTO schema_migrations (version) VALUES ($1)`, m.Version)
				return err
			})
		})
		if err != nil {
			return fmt.Errorf("postgres: migration %s: %w", m.Name, err)
		}
	}
	return nil
}

// Ready reports whether the database answers and has every migration this
// code knows applied: the readiness check of an operations endpoint.
func (s *Store) Ready(ctx context.Context) error {
	began := time.Now().UnixNano()
	return s.health.observe(ctx, s.ready(ctx), true, began)
}

func (s *Store) ready(ctx context.Context) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	rows, err := s.pool.Query(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	applied, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (int, error) {
		var v int64
		err := row.Scan(&v)
		return int(v), err
	})
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	if err := migration.Current(ms, applied); err != nil {
		return fmt.Errorf("postgres: %w", err)
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
