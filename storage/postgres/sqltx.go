package postgres

import (
	"context"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/storage/internal/rowset"
)

// The Tx seen as SQL (engine.SQLTx), for a provider's own tables: its
// values are encoded as the engine's are (see convert.go).

var _ engine.SQLTx = (*tx)(nil)

// Dialect is "postgres".
func (t *tx) Dialect() string { return "postgres" }

// ExecSQL runs a statement and returns how many rows it changed.
func (t *tx) ExecSQL(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := t.tx.Exec(ctx, query, sqlArgs(args)...)
	if err != nil {
		return 0, interpretError(err)
	}
	return tag.RowsAffected(), nil
}

// QuerySQL runs a query and calls row for each row.
func (t *tx) QuerySQL(ctx context.Context, query string, args []any, row func(scan func(dest ...any) error) error) error {
	rows, err := t.tx.Query(ctx, query, sqlArgs(args)...)
	if err != nil {
		return interpretError(err)
	}
	defer rows.Close()
	scan := func(dest ...any) error { return interpretError(rows.Scan(sqlDests(dest)...)) }
	return interpretError(rowset.Each(rows, func() error { return row(scan) }))
}

// sqlArgs encodes a provider's arguments as the schema's columns; decimals
// need nothing (see convert.go).
func sqlArgs(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case time.Time:
			out[i] = zeroNull(v)
		case *time.Time:
			out[i] = nullTime(v)
		default:
			out[i] = a
		}
	}
	return out
}

// sqlDests decodes the schema's columns into a provider's destinations.
func sqlDests(dest []any) []any {
	out := make([]any, len(dest))
	for i, d := range dest {
		switch v := d.(type) {
		case *time.Time:
			out[i] = timeCol{v}
		case **time.Time:
			out[i] = nullTimeCol{v}
		case *[]byte:
			out[i] = bytesCol{v}
		default:
			out[i] = d
		}
	}
	return out
}
