package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"path/filepath"
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
	var got []driver.Value
	if err := s.lib.readRow(ctx, `SELECT ? + 1, ? || 'b', ?`, []any{int64(41), "a", nil}, func(r *rowValues) error {
		got = append(got, r.v...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0] != int64(42) || got[1] != "ab" || got[2] != nil {
		t.Errorf("SELECT ? + 1, ? || 'b', ? = %#v", got)
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
