package sqlite

import (
	"context"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/storage/internal/rowset"
)

// The Tx seen as SQL (engine.SQLTx), for a provider's own tables: its
// values are encoded as the engine's are (see convert.go).

var _ engine.SQLTx = (*tx)(nil)

// Dialect is "sqlite".
func (t *tx) Dialect() string { return "sqlite" }

// ExecSQL runs a statement and returns how many rows it changed.
func (t *tx) ExecSQL(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := t.tx.ExecContext(ctx, query, sqlArgs(args)...)
	if err != nil {
		return 0, interpretError(err)
	}
	n, err := res.RowsAffected()
	return n, interpretError(err)
}

// QuerySQL runs a query and calls row for each row.
func (t *tx) QuerySQL(ctx context.Context, query string, args []any, row func(scan func(dest ...any) error) error) error {
	rows, err := t.tx.QueryContext(ctx, query, sqlArgs(args)...)
	if err != nil {
		return interpretError(err)
	}
	defer rows.Close()
	scan := func(dest ...any) error { return interpretError(rows.Scan(sqlDests(dest)...)) }
	return interpretError(rowset.Each(rows, func() error { return row(scan) }))
}

// sqlArgs encodes a provider's arguments as the schema's columns.
func sqlArgs(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case time.Time:
			out[i] = zeroMicros(v)
		case *time.Time:
			out[i] = nullMicros(v)
		case decimal.Decimal:
			out[i] = v.String()
		case decimal.NullDecimal:
			out[i] = nullDecimal(v)
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
		case *decimal.Decimal:
			out[i] = decimalCol{v}
		case *decimal.NullDecimal:
			out[i] = nullDecimalCol{v}
		case *[]byte:
			out[i] = bytesCol{v}
		default:
			out[i] = d
		}
	}
	return out
}
