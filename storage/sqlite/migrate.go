package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"time"
)

// migrationFiles are the schema changes, named NNNN_description.sql and
// applied in version order. A released file is never edited: a change is a
// new file.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

type migration struct {
	version int
	name    string
	sql     string
}

// migrations returns the embedded migrations sorted by version.
func migrations() ([]migration, error) {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, name := range names {
		base := strings.TrimPrefix(name, "migrations/")
		prefix, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(prefix)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("sqlite: migration %s: name must be NNNN_description.sql", base)
		}
		b, err := migrationFiles.ReadFile(name)
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: base, sql: string(b)})
	}
	slices.SortFunc(ms, func(a, b migration) int { return a.version - b.version })
	for i := 1; i < len(ms); i++ {
		if ms[i].version == ms[i-1].version {
			return nil, fmt.Errorf("sqlite: migrations %s and %s have the same version", ms[i-1].name, ms[i].name)
		}
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
				err := t.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE version = ?`, m.version).Scan(&n)
				if err != nil || n > 0 {
					return err
				}
				if _, err := t.ExecContext(ctx, m.sql); err != nil {
					return err
				}
				_, err = t.ExecContext(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)`,
					m.version, time.Now().UnixMicro())
				return err
			})
		})
		if err != nil {
			return fmt.Errorf("sqlite: migration %s: %w", m.name, err)
		}
	}
	return nil
}
