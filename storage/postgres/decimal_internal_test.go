package postgres

import (
	"context"
	"reflect"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/shopspring/decimal"
)

// A NUMERIC is read into a decimal.Decimal with the coefficient and
// exponent its text parses to, in the binary format and the text one, and
// NULL into an invalid decimal.NullDecimal.
func TestDecimalsReadAsTheirText(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t)
	ctx := context.Background()
	for _, lit := range []string{"0", "0.00", "1", "1000", "1000.50", "12000", "-3.1400", "0.0001",
		"1e20", "-70000", "123456789012345678901234567890.123", "99999999999999.99", "10000.0000",
		"1234567890123456", "12345678901234567", "9223372036854775807", "9223372036854775808", "922337203685477580.7",
		"0.000001", "-0.01", "1.5", "-1.50", "500", "500.00", "1e-30", "12.3456789", "0.1000"} {
		for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeSimpleProtocol} {
			var got decimal.Decimal
			var null, valid decimal.NullDecimal
			var text string
			err := s.pool.QueryRow(ctx, `SELECT $1::numeric, $1::numeric::text, NULL::numeric, $1::numeric`, mode, lit).
				Scan(&got, &text, &null, &valid)
			if err != nil {
				t.Fatalf("%s (%v): %v", lit, mode, err)
			}
			want := decimal.RequireFromString(text)
			if got.Coefficient().Cmp(want.Coefficient()) != 0 || got.Exponent() != want.Exponent() {
				t.Errorf("%s (%v): read %s×10^%d, its text %q parses to %s×10^%d",
					lit, mode, got.Coefficient(), got.Exponent(), text, want.Coefficient(), want.Exponent())
			}
			if null.Valid || !valid.Valid || !valid.Decimal.Equal(want) || valid.Decimal.Exponent() != want.Exponent() {
				t.Errorf("%s (%v): NULL read as %+v, the value as %+v", lit, mode, null, valid)
			}
		}
	}
	// The amounts' own decoder gives what the text parses to, and takes
	// up to four base-10000 digits that fit an int64 at the text's scale.
	for _, c := range []struct {
		lit   string
		small bool
	}{
		{"0", true}, {"0.00", true}, {"1000", true}, {"1000.50", true}, {"-3.1400", true}, {"500.00", true},
		{"1234567890123456", true}, {"0.000001", true}, {"1e15", true}, {"99999999999999.99", false},
		{"12345678901234567", false}, {"9223372036854775808", false}, {"123456789012345678901234567890.123", false},
		{"NaN", false}, {"Infinity", false},
	} {
		var raw pgtype.UndecodedBytes
		var text string
		if err := s.pool.QueryRow(ctx, `SELECT $1::numeric, $1::numeric::text`, c.lit).Scan(&raw, &text); err != nil {
			t.Fatal(err)
		}
		got, ok := smallNumeric(raw)
		if ok != c.small {
			t.Errorf("%s: small decoder took it: %v", c.lit, ok)
		}
		if want, err := decimal.NewFromString(text); ok && (err != nil || got.Coefficient().Cmp(want.Coefficient()) != 0 || got.Exponent() != want.Exponent()) {
			t.Errorf("%s: small decoder %s×10^%d; its text %q", c.lit, got.Coefficient(), got.Exponent(), text)
		}
	}
	// and without going through its text.
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, dst := range []any{new(decimal.Decimal), new(decimal.NullDecimal)} {
		if plan := conn.Conn().TypeMap().PlanScan(pgtype.NumericOID, pgtype.BinaryFormatCode, dst); reflect.TypeOf(plan) != reflect.TypeOf(decimalScanPlan{}) {
			t.Errorf("%T is scanned by %T", dst, plan)
		}
	}
	conn.Release()
	var d decimal.Decimal
	if err := s.pool.QueryRow(ctx, `SELECT 'NaN'::numeric`).Scan(&d); err == nil {
		t.Errorf("NaN read as %s", d)
	}
}
