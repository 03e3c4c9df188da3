package postgres

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
)

// Encodings of the schema's conventions. The write side is a plain function
// returning the parameter; the read side is a pgtype scanner pointing at the
// destination field, so each table's scan is one Scan call. Decimals need
// neither: pgx-shopspring-decimal and decimalCodec, registered on every
// connection, read and write decimal.Decimal and decimal.NullDecimal as
// NUMERIC exactly.

// params returns "$1, $2, ..., $n".
func params(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if i > 1 {
			b.WriteString(", ")
		}
		b.WriteString("$" + strconv.Itoa(i))
	}
	return b.String()
}

// filter builds a WHERE clause of equalities from the filters that are set.
type filter struct {
	conds []string
	args  []any
}

// eq adds "column = $n" if value is not empty.
func (f *filter) eq(column, value string) {
	if value != "" {
		f.args = append(f.args, value)
		f.conds = append(f.conds, column+" = $"+strconv.Itoa(len(f.args)))
	}
}

// where returns " WHERE ..." or "".
func (f *filter) where() string {
	if len(f.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(f.conds, " AND ")
}

// limit appends " LIMIT $n" for a positive n.
func (f *filter) limit(n int) string {
	if n <= 0 {
		return ""
	}
	f.args = append(f.args, n)
	return " LIMIT $" + strconv.Itoa(len(f.args))
}

// zeroNull is a time whose zero value means none: NULL for zero. Such
// columns are nullable; a claim treats NULL as "since forever".
func zeroNull(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t
}

// nullTime is an optional time: NULL for nil.
func nullTime(t *time.Time) any {
	if t == nil {
		return nil
	}
	return *t
}

// emptyNull stores "" as NULL, for optional references that a foreign key
// checks.
func emptyNull(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// nullBytes stores a nil or empty slice as NULL.
func nullBytes(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return b
}

// notNullBytes stores a nil slice as an empty BYTEA, for NOT NULL columns.
func notNullBytes(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// timeCol scans a TIMESTAMPTZ into a time.Time in UTC; NULL is the zero
// time.
type timeCol struct{ t *time.Time }

func (c timeCol) ScanTimestamptz(v pgtype.Timestamptz) error {
	switch {
	case !v.Valid:
		*c.t = time.Time{}
	case v.InfinityModifier != pgtype.Finite:
		return fmt.Errorf("time column: unexpected %s", v.InfinityModifier)
	default:
		*c.t = v.Time.UTC()
	}
	return nil
}

// nullTimeCol scans a TIMESTAMPTZ into a *time.Time; NULL is nil.
type nullTimeCol struct{ t **time.Time }

func (c nullTimeCol) ScanTimestamptz(v pgtype.Timestamptz) error {
	if !v.Valid {
		*c.t = nil
		return nil
	}
	var t time.Time
	if err := (timeCol{&t}).ScanTimestamptz(v); err != nil {
		return err
	}
	*c.t = &t
	return nil
}

// stringCol scans TEXT into a string; NULL is "".
type stringCol struct{ s *string }

func (c stringCol) ScanText(v pgtype.Text) error {
	*c.s = v.String
	return nil
}

// bytesCol scans a BYTEA or TEXT into a fresh []byte; NULL and empty are
// nil, as storage/sqlite reads them.
type bytesCol struct{ b *[]byte }

func (c bytesCol) ScanBytes(v []byte) error {
	// v is the driver's buffer, valid only until the next read: copy it.
	if len(v) == 0 {
		*c.b = nil
	} else {
		*c.b = append([]byte(nil), v...)
	}
	return nil
}

// durationCol scans BIGINT nanoseconds into a time.Duration.
type durationCol struct{ d *time.Duration }

func (c durationCol) ScanInt64(v pgtype.Int8) error {
	if !v.Valid {
		return fmt.Errorf("duration column: unexpected NULL")
	}
	*c.d = time.Duration(v.Int64)
	return nil
}
