package postgres

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"

	pgxdecimal "github.com/jackc/pgx-shopspring-decimal"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/shopspring/decimal"
)

// decimalCodec is pgx-shopspring-decimal's NUMERIC codec, scanning into a
// decimal.Decimal or decimal.NullDecimal from the binary NUMERIC. pgx asks
// a destination's sql.Scanner before pgx-shopspring-decimal's wrappers, so
// without it every decimal is read by formatting the NUMERIC as text and
// parsing the text back.
type decimalCodec struct{ pgxdecimal.NumericCodec }

func (c decimalCodec) PlanScan(m *pgtype.Map, oid uint32, format int16, target any) pgtype.ScanPlan {
	binary := format == pgtype.BinaryFormatCode
	switch target.(type) {
	case *decimal.Decimal:
		return decimalScanPlan{c.NumericCodec.PlanScan(m, oid, format, (*numericDecimal)(nil)), binary}
	case *decimal.NullDecimal:
		return decimalScanPlan{c.NumericCodec.PlanScan(m, oid, format, (*numericNullDecimal)(nil)), binary}
	}
	return c.NumericCodec.PlanScan(m, oid, format, target)
}

type decimalScanPlan struct {
	next   pgtype.ScanPlan
	binary bool
}

func (p decimalScanPlan) Scan(src []byte, dst any) error {
	if p.binary {
		if v, ok := smallNumeric(src); ok {
			switch d := dst.(type) {
			case *decimal.Decimal:
				*d = v
				return nil
			case *decimal.NullDecimal:
				*d = decimal.NullDecimal{Decimal: v, Valid: true}
				return nil
			}
		}
	}
	switch d := dst.(type) {
	case *decimal.Decimal:
		return p.next.Scan(src, (*numericDecimal)(d))
	case *decimal.NullDecimal:
		return p.next.Scan(src, (*numericNullDecimal)(d))
	}
	return fmt.Errorf("postgres: decimal scan plan given %T", dst)
}

// numericDecimal is a decimal.Decimal scanned from a NUMERIC as its text
// would parse: the same value, coefficient and exponent (a positive
// exponent, which the binary form gives an integer's trailing zeros, is
// multiplied out), so that amounts format as they did.
type numericDecimal decimal.Decimal

func (d *numericDecimal) ScanNumeric(v pgtype.Numeric) error {
	switch {
	case !v.Valid:
		return fmt.Errorf("cannot scan NULL into *decimal.Decimal")
	case v.NaN:
		return fmt.Errorf("cannot scan NaN into *decimal.Decimal")
	case v.InfinityModifier != pgtype.Finite:
		return fmt.Errorf("cannot scan %v into *decimal.Decimal", v.InfinityModifier)
	}
	*d = numericDecimal(textExponent(v))
	return nil
}

type numericNullDecimal decimal.NullDecimal

func (d *numericNullDecimal) ScanNumeric(v pgtype.Numeric) error {
	if !v.Valid {
		*d = numericNullDecimal{}
		return nil
	}
	var n numericDecimal
	if err := n.ScanNumeric(v); err != nil {
		return err
	}
	*d = numericNullDecimal{Decimal: decimal.Decimal(n), Valid: true}
	return nil
}

var bigTen = big.NewInt(10)

func textExponent(v pgtype.Numeric) decimal.Decimal {
	if v.Exp <= 0 {
		return decimal.NewFromBigInt(v.Int, v.Exp)
	}
	scale := new(big.Int).Exp(bigTen, big.NewInt(int64(v.Exp)), nil)
	return decimal.NewFromBigInt(scale.Mul(scale, v.Int), 0)
}

// smallNumeric reads a binary NUMERIC of up to 16 digits whose coefficient
// at the scale of its text fits an int64 (every amount), without pgtype's
// big.Int arithmetic: coefficient and exponent as its text parses. ok is
// false for any other (NaN, infinities, larger), which the general path
// reads.
func smallNumeric(src []byte) (d decimal.Decimal, ok bool) {
	if len(src) < 8 {
		return d, false
	}
	ndigits := int(binary.BigEndian.Uint16(src))
	weight := int(int16(binary.BigEndian.Uint16(src[2:])))
	sign := binary.BigEndian.Uint16(src[4:])
	dscale := int(int16(binary.BigEndian.Uint16(src[6:])))
	const positive, negative = 0x0000, 0x4000
	if ndigits > 4 || len(src) != 8+2*ndigits || sign != positive && sign != negative || dscale < 0 {
		return d, false
	}
	var coef int64
	for i := range ndigits {
		digit := int64(binary.BigEndian.Uint16(src[8+2*i:])) // base 10000
		if digit >= 10000 {
			return d, false
		}
		coef = coef*10000 + digit
	}
	// The value is coef × 10^exp; its text has dscale decimals, so the
	// text's exponent is -dscale.
	exp := 4 * (weight - ndigits + 1)
	for ; exp > -dscale; exp-- {
		if coef > math.MaxInt64/10 {
			return d, false
		}
		coef *= 10
	}
	for ; exp < -dscale; exp++ {
		if coef%10 != 0 { // not rounded to its scale: not Postgres's
			return d, false
		}
		coef /= 10
	}
	if sign == negative {
		coef = -coef
	}
	return decimal.New(coef, int32(-dscale)), true
}
