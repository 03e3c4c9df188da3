package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	sqlite3 "modernc.org/sqlite/lib"
)

// readRow hands back SQLite's errors with their codes, so that retry
// still sees SQLITE_BUSY and interpretError still sees a missing row.
func TestReadRowErrors(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "payd.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	one := func(r *rowValues) error { return r.Scan(new(int64)) }
	if err := s.lib.readRow(ctx, `SELECT 1 WHERE 0`, nil, one); err != sql.ErrNoRows {
		t.Errorf("no row: %v, want sql.ErrNoRows", err)
	}
	var e *libError
	if err := s.lib.readRow(ctx, `SELECT * FROM no_such_table WHERE id = ?`, []any{"x"}, one); !errors.As(err, &e) || e.Code()&0xff != sqlite3.SQLITE_ERROR {
		t.Errorf("bad statement: %v, want a *libError", err)
	}
	if err := s.lib.readRow(ctx, `SELECT 1, 2`, nil, one); err == nil {
		t.Error("two columns scanned into one destination")
	}
	if err := s.lib.readRow(ctx, `SELECT ?`, []any{1.5}, one); err == nil {
		t.Error("an argument of a type readRow does not bind: no error")
	}
	// Reader connections are query_only: a write is refused and changes
	// nothing.
	if err := s.lib.readRow(ctx, `INSERT INTO organizations (id) VALUES ('x') RETURNING 1`, nil, one); !errors.As(err, &e) {
		t.Errorf("a write through a reader: %v, want SQLite's refusal", err)
	}
	if !isBusy(&libError{code: sqlite3.SQLITE_BUSY_SNAPSHOT}) || isBusy(&libError{code: sqlite3.SQLITE_ERROR}) {
		t.Error("isBusy does not tell SQLITE_BUSY from SQLITE_ERROR in a *libError")
	}
	// The connection (and its cached statements) is still good afterwards,
	// with text, integer and NULL arguments.
	var (
		n   int64
		txt string
		nul = "not null"
	)
	if err := s.lib.readRow(ctx, `SELECT ? + 1, ? || 'b', ?`, []any{int64(41), "a", nil}, func(r *rowValues) error {
		return r.Scan(&n, &txt, stringCol{&nul})
	}); err != nil {
		t.Fatal(err)
	}
	if n != 42 || txt != "ab" || nul != "" {
		t.Errorf("SELECT ? + 1, ? || 'b', ? = %d, %q, %q", n, txt, nul)
	}
}

// A one-row read scans straight from SQLite what it can; whatever it
// scans, it scans as assign does from the driver's value: the same value
// or an error both ways, for every destination the store uses and every
// type SQLite stores.
func TestLibScanAgreesWithAssign(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "payd.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sources := []string{"NULL", "0", "1", "-5", "1700000000000000", "9223372036854775807", "2.5",
		"'text'", "''", "'12.50'", "'1700000000000000'", "x'00ff'", "x''"}
	dests := map[string]func() (dest any, get func() any){
		"*string":     func() (any, func() any) { var v string; return &v, func() any { return v } },
		"*int64":      func() (any, func() any) { var v int64; return &v, func() any { return v } },
		"*int":        func() (any, func() any) { var v int; return &v, func() any { return v } },
		"*bool":       func() (any, func() any) { var v bool; return &v, func() any { return v } },
		"timeCol":     func() (any, func() any) { var v time.Time; return timeCol{&v}, func() any { return v } },
		"nullTimeCol": func() (any, func() any) { var v *time.Time; return nullTimeCol{&v}, func() any { return v } },
		"stringCol":   func() (any, func() any) { var v string; return stringCol{&v}, func() any { return v } },
		"bytesCol":    func() (any, func() any) { var v []byte; return bytesCol{&v}, func() any { return v } },
		"decimalCol": func() (any, func() any) {
			var v decimal.Decimal
			return decimalCol{&v}, func() any { return v.String() }
		},
		"nullDecimalCol": func() (any, func() any) {
			var v decimal.NullDecimal
			return nullDecimalCol{&v}, func() any { return v }
		},
	}
	for _, src := range sources {
		for name, mk := range dests {
			direct, gotDirect := mk()
			viaAssign, gotAssign := mk()
			var errDirect, errAssign error
			if err := s.lib.readRow(ctx, `SELECT `+src, nil, func(r *rowValues) error {
				errDirect = r.Scan(direct)
				if e := assign(viaAssign, r.lib.column(r.stmt, 0)); e != nil {
					errAssign = fmt.Errorf("sqlite: scan column 0: %w", e)
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(errDirect) != fmt.Sprint(errAssign) || !reflect.DeepEqual(gotDirect(), gotAssign()) {
				t.Errorf("%s into %s: %#v, %v; assign: %#v, %v", src, name, gotDirect(), errDirect, gotAssign(), errAssign)
			}
		}
	}
}

// rowValues.Scan converts what the store's scans ask for as database/sql
// does, and refuses the rest.
func TestRowValuesScan(t *testing.T) {
	var (
		s    string
		i    int
		i64  int64
		b    bool
		d    decimal.Decimal
		tm   time.Time
		ntm  *time.Time
		ws   string
		blob []byte
	)
	r := &rowValues{v: []driver.Value{"text", int64(7), int64(-1), int64(1), "12.50", int64(1_700_000_000_000_000), nil, nil, []byte("{}")}}
	if err := r.Scan(&s, &i, &i64, &b, decimalCol{&d}, timeCol{&tm}, nullTimeCol{&ntm}, stringCol{&ws}, bytesCol{&blob}); err != nil {
		t.Fatal(err)
	}
	if s != "text" || i != 7 || i64 != -1 || !b || d.String() != "12.5" || tm.UnixMicro() != 1_700_000_000_000_000 || tm.Location() != time.UTC ||
		ntm != nil || ws != "" || string(blob) != "{}" {
		t.Errorf("scanned %q %d %d %v %s %v %v %q %q", s, i, i64, b, d, tm, ntm, ws, blob)
	}
	for _, c := range []struct {
		src  any
		dest any
	}{
		{nil, new(string)},        // NULL into a plain string
		{nil, new(int)},           // NULL into a plain int
		{int64(2), new(bool)},     // not a boolean
		{"x", new(int64)},         // text into an integer
		{1.5, new(int)},           // a float into an integer
		{"x", new(time.Duration)}, // a type the store never scans
	} {
		if err := (&rowValues{v: []driver.Value{c.src}}).Scan(c.dest); err == nil {
			t.Errorf("%#v into %T: no error", c.src, c.dest)
		}
	}
	if err := (&rowValues{v: []driver.Value{"a", "b"}}).Scan(&s); err == nil {
		t.Error("two columns into one destination: no error")
	}
}
