package sqlite

import (
	"fmt"
	"time"

	"github.com/shopspring/decimal"
)

// Encodings of the schema's conventions. The write side is a plain function
// returning the column value; the read side is a sql.Scanner pointing at the
// destination field, so each table's scan is one Scan call.

// micros is a time as INTEGER Unix microseconds: the engine's precision.
func micros(t time.Time) int64 { return t.UnixMicro() }

// nullMicros is an optional time: NULL for nil.
func nullMicros(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixMicro()
}

// zeroMicros is a time whose zero value means none: NULL for zero, since the
// zero time has no sensible Unix microsecond value.
func zeroMicros(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMicro()
}

// nullDecimal is an optional amount: NULL or canonical TEXT.
func nullDecimal(d decimal.NullDecimal) any {
	if !d.Valid {
		return nil
	}
	return d.Decimal.String()
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

// timeCol scans Unix microseconds into a time.Time, UTC; NULL is the zero
// time.
type timeCol struct{ t *time.Time }

func (c timeCol) Scan(v any) error {
	switch v := v.(type) {
	case nil:
		*c.t = time.Time{}
	case int64:
		*c.t = time.UnixMicro(v).UTC()
	default:
		return fmt.Errorf("time column: unexpected %T", v)
	}
	return nil
}

// nullTimeCol scans Unix microseconds into a *time.Time; NULL is nil.
type nullTimeCol struct{ t **time.Time }

func (c nullTimeCol) Scan(v any) error {
	if v == nil {
		*c.t = nil
		return nil
	}
	var t time.Time
	if err := (timeCol{&t}).Scan(v); err != nil {
		return err
	}
	*c.t = &t
	return nil
}

// decimalCol scans canonical TEXT into a decimal.Decimal.
type decimalCol struct{ d *decimal.Decimal }

func (c decimalCol) Scan(v any) error {
	s, ok := v.(string)
	if !ok {
		return fmt.Errorf("decimal column: unexpected %T", v)
	}
	return c.set(s)
}

func (c decimalCol) set(s string) error {
	d, err := decimal.NewFromString(s)
	if err != nil {
		return fmt.Errorf("decimal column: %w", err)
	}
	*c.d = d
	return nil
}

// nullDecimalCol scans NULL or canonical TEXT into a decimal.NullDecimal.
type nullDecimalCol struct{ d *decimal.NullDecimal }

func (c nullDecimalCol) Scan(v any) error {
	if v == nil {
		*c.d = decimal.NullDecimal{}
		return nil
	}
	c.d.Valid = true
	return decimalCol{&c.d.Decimal}.Scan(v)
}

// stringCol scans TEXT into a string; NULL is "".
type stringCol struct{ s *string }

func (c stringCol) Scan(v any) error {
	switch v := v.(type) {
	case nil:
		*c.s = ""
	case string:
		*c.s = v
	default:
		return fmt.Errorf("text column: unexpected %T", v)
	}
	return nil
}

// bytesCol scans a BLOB or TEXT into a fresh []byte; NULL and empty are nil.
type bytesCol struct{ b *[]byte }

func (c bytesCol) Scan(v any) error {
	switch v := v.(type) {
	case nil:
		*c.b = nil
	case []byte:
		*c.b = cloneOrNil(v)
	case string:
		*c.b = cloneOrNil([]byte(v))
	default:
		return fmt.Errorf("blob column: unexpected %T", v)
	}
	return nil
}

func cloneOrNil(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return append([]byte(nil), b...)
}

// epochMicros is a time whose zero value means none, stored NOT NULL: 0 for
// zero, so that a comparison such as "leased_until <= ?" needs no NULL case
// and holds for the zero time. The Unix epoch itself reads back as zero.
func epochMicros(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

// epochTimeCol scans epochMicros' encoding: 0 (or NULL) is the zero time.
type epochTimeCol struct{ t *time.Time }

func (c epochTimeCol) Scan(v any) error {
	if v == int64(0) {
		*c.t = time.Time{}
		return nil
	}
	return timeCol(c).Scan(v)
}
