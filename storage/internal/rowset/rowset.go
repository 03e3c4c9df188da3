// Package rowset reads result rows the same way in both stores: the list
// loop and the order of claimed work, which no dialect changes.
package rowset

import (
	"cmp"
	"slices"
	"strings"
	"time"
)

// Scanner is one row to read: *sql.Row, *sql.Rows, pgx.Row, pgx.Rows.
type Scanner interface{ Scan(dest ...any) error }

// Rows is a result set: *sql.Rows, pgx.Rows. Closing it is the caller's.
type Rows interface {
	Scanner
	Next() bool
	Err() error
}

// Collect reads every row with scan, in order, and stops at the first
// error: scan's as it returned it, or the result set's.
func Collect[T any](rs Rows, scan func(Scanner) (*T, error)) ([]*T, error) {
	var out []*T
	err := Each(rs, func() error {
		v, err := scan(rs)
		if err == nil {
			out = append(out, v)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Each calls fn for every row, in order, and stops at the first error:
// fn's as it returned it, or the result set's.
func Each(rs Rows, fn func() error) error {
	for rs.Next() {
		if err := fn(); err != nil {
			return err
		}
	}
	return rs.Err()
}

// SortDue orders claimed work earliest due first, then by ID: the order the
// engine's Claim methods promise, which an UPDATE ... RETURNING does not
// keep.
func SortDue[T any](xs []*T, due func(*T) (time.Time, string)) {
	slices.SortFunc(xs, func(a, b *T) int {
		ta, ia := due(a)
		tb, ib := due(b)
		return cmp.Or(ta.Compare(tb), strings.Compare(ia, ib))
	})
}
