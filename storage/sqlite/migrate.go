package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"time"

	"github.com/payd-engine/payd/storage/internal/migration"
)

// migrationFiles are the schema changes, named NNNN_description.sql and
// applied in version order. A released file is never edited: a change is a
// new file.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrations returns the embedded migrations sorted by version.
func migrations() ([]migration.Migration, error) {
	ms, err := migration.List(migrationFiles, "migrations")
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	return ms, nil
}

// migrate applies the migrations the database has not recorded yet, each in
// its own transaction with its record, so a failed one leaves no trace and
// the next Open resumes there. Checking inside the (IMMEDIATE) transaction
// lets two processes open a fresh file at once.
func (s *Store) migrate(ctx context.Context) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	err = retry(ctx, func() error {
		_, err := s.writer.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version    INTEGER NOT NULL PRIMARY KEY,
			applied_at INTEGER NOT NULL
		) STRICT`)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: create schema_migrations: %w", err)
	}
	for _, m := range ms {
		err := retry(ctx, func() error {
			return runTx(ctx, s.writer, nil, func(t *sql.Tx) error {
				var n int
				err := t.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE version = ?`, m.Version).Scan(&n)
				if err != nil || n > 0 {
					return err
				}
				if _, err := t.ExecContext(ctx, m.SQL); err != nil {
					return err
				}
				_, err = t.ExecContext(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)`,
					m.Version, time.Now().UnixMicro())
				return err
			})
		})
		if err != nil {
			return fmt.Errorf("sqlite: migration %s: %w", m.Name, err)
		}
	}
	return nil
}

// Ready reports whether the database answers and has every migration this
// code knows applied: the readiness check of an operations endpoint.
func (s *Store) Ready(ctx context.Context) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	rows, err := s.reader.QueryContext(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	defer rows.Close()
	var applied []int
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return fmt.Errorf("sqlite: %w", err)
		}
		applied = append(applied, v)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	if err := migration.Current(ms, applied); err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	return nil
}
