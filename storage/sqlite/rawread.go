package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Reads of one row on the reader pool (ReadOne) go to the driver's own
// statement through (*sql.Conn).Raw, not through database/sql's Row: its
// Rows, the goroutine that watches the query's context, its locks and its
// reflection-driven Scan were about a tenth of a signed GET's CPU in
// profiles.
// The read is still one statement on one connection, so it still reads one
// snapshot, and it reads the file each time: nothing is cached but the
// prepared statement.

// readRow runs query, which selects at most one row, on a connection of db
// and scans its row with scan. No row is sql.ErrNoRows, as from
// (*sql.Row).Scan, so interpretError turns it into engine.ErrNotFound.
func readRow(ctx context.Context, db *sql.DB, query string, args []any, scan func(*rowValues) error) error {
	named := make([]driver.NamedValue, len(args))
	for i, a := range args {
		v, err := driverValue(a)
		if err != nil {
			return fmt.Errorf("sqlite: argument %d: %w", i+1, err)
		}
		named[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
	}
	// database/sql retries a query whose connection turned out bad on a
	// fresh one; so does this.
	var err error
	for range 3 {
		if err = readRowOnce(ctx, db, query, named, scan); !errors.Is(err, driver.ErrBadConn) {
			return err
		}
	}
	return err
}

func readRowOnce(ctx context.Context, db *sql.DB, query string, args []driver.NamedValue, scan func(*rowValues) error) error {
	c, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return c.Raw(func(dc any) error {
		q, ok := dc.(driver.QueryerContext)
		if !ok {
			return fmt.Errorf("sqlite: driver connection %T cannot query", dc)
		}
		// Given a context that can end, the driver starts a goroutine per
		// query to watch it. A one-row read by key is over before an
		// interrupt could land, and a WAL reader waits for no writer;
		// db.Conn has checked ctx. Lost: cutting short the rare wait for a
		// file another process holds exclusively (busy_timeout bounds it).
		rows, err := q.QueryContext(context.WithoutCancel(ctx), query, args)
		if err != nil {
			return err
		}
		var row *rowValues
		if b, ok := dc.(interface{ rowBuffer() *rowValues }); ok {
			row = b.rowBuffer()
		} else {
			row = new(rowValues)
		}
		n := len(rows.Columns())
		if cap(row.v) < n {
			row.v = make([]driver.Value, n)
		}
		row.v = row.v[:n]
		defer clear(row.v) // let the row's strings go
		err = rows.Next(row.v)
		if err == io.EOF {
			err = sql.ErrNoRows
		}
		if err == nil {
			err = scan(row)
		}
		// As (*sql.Row).Scan: the error of closing the rows (a reset of
		// the statement) counts when nothing failed before it.
		if cerr := rows.Close(); err == nil {
			err = cerr
		}
		return err
	})
}

// driverValue is what database/sql makes of an argument for a driver
// without a NamedValueChecker, as modernc's is.
func driverValue(a any) (driver.Value, error) {
	if _, ok := a.(string); ok {
		return a, nil // as it is: boxing it again would allocate
	}
	return driver.DefaultParameterConverter.ConvertValue(a)
}

// rowValues is one row as the driver gives it, scanned into the Go types
// the store's scan functions use: what database/sql's Scan does for them,
// without its reflection. A destination of another type is an error, never
// a silent guess.
type rowValues struct {
	v    []driver.Value
	dest []any // getRow's destinations, reused
}

// Scan assigns the row's columns, in order, to dest.
func (r *rowValues) Scan(dest ...any) error {
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
