package sqlite

import (
	"database/sql"
	"database/sql/driver"
	"fmt"
	"strconv"
)

// rowValues is one row as the driver gives it, scanned into the Go types
// the store's scan functions use: what database/sql's Scan does for them,
// without its reflection. A destination of another type is an error, never
// a silent guess.
type rowValues struct {
	v    []driver.Value
	dest []any // getRow's destinations, reused
	// lib and stmt, when set, are a one-row read's connection and
	// statement, whose current row Scan reads from SQLite (libConn.scan)
	// instead of v.
	lib  *libConn
	stmt uintptr
}

// Scan assigns the row's columns, in order, to dest.
func (r *rowValues) Scan(dest ...any) error {
	if r.lib != nil {
		return r.lib.scan(r.stmt, dest)
	}
	if len(dest) != len(r.v) {
		return fmt.Errorf("sqlite: %d columns scanned into %d destinations", len(r.v), len(dest))
	}
	for i, d := range dest {
		if err := assign(d, r.v[i]); err != nil {
			return fmt.Errorf("sqlite: scan column %d: %w", i, err)
		}
	}
	return nil
}

// assign stores src, a driver value (nil, int64, float64, string, []byte),
// in dest as database/sql's convertAssign would.
func assign(dest, src any) error {
	switch d := dest.(type) {
	case sql.Scanner:
		return d.Scan(src)
	case *string:
		switch s := src.(type) {
		case string:
			*d = s
			return nil
		case []byte:
			*d = string(s)
			return nil
		case int64:
			*d = strconv.FormatInt(s, 10)
			return nil
		}
	case *int64:
		if n, ok := src.(int64); ok {
			*d = n
			return nil
		}
	case *int:
		if n, ok := src.(int64); ok && int64(int(n)) == n {
			*d = int(n)
			return nil
		}
	case *bool:
		if src == nil {
			break
		}
		b, err := driver.Bool.ConvertValue(src)
		if err != nil {
			return err
		}
		*d = b.(bool)
		return nil
	}
	if src == nil {
		return fmt.Errorf("converting NULL to %T is unsupported", dest)
	}
	return fmt.Errorf("unsupported scan of %T into %T", src, dest)
}
