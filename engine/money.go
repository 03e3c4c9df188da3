package engine

import (
	"regexp"
	"strings"

	"github.com/shopspring/decimal"
)

// amountPattern is the contract's money syntax: a plain non-negative decimal
// with at most two fractional digits. No sign, exponent or spaces.
var amountPattern = regexp.MustCompile(`^(?:0|[1-9][0-9]*)(?:\.[0-9]{1,2})?$`)

// maxAmountDigits bounds the integer part so a hostile amount cannot make
// decimal arithmetic expensive; every range in the contract is far below it.
const maxAmountDigits = 15

// Currency is the only currency payd moves.
const Currency = "BDT"

// ParseAmount parses a request amount exactly as the contract spells it.
func ParseAmount(field, s string) (decimal.Decimal, error) {
	intPart, _, _ := strings.Cut(s, ".")
	if len(intPart) > maxAmountDigits || len(s) > maxAmountDigits+3 || !amountPattern.MatchString(s) {
		return decimal.Decimal{}, Invalid(field, "must be a plain positive decimal with at most 2 decimal places")
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return decimal.Decimal{}, Invalid(field, "must be a plain positive decimal with at most 2 decimal places")
	}
	return d, nil
}

// FormatAmount renders an amount in the canonical two-decimal form ("500.00").
func FormatAmount(d decimal.Decimal) string { return d.StringFixed(2) }

// AmountRange is an inclusive range of amounts in BDT. The zero range
// admits nothing: a method's zero range means the method is not offered.
type AmountRange struct{ Min, Max decimal.Decimal }

func newRange(min, max int64) AmountRange {
	return AmountRange{decimal.NewFromInt(min), decimal.NewFromInt(max)}
}

// Offered reports whether the range admits any amount.
func (r AmountRange) Offered() bool { return r.Max.IsPositive() }

func (r AmountRange) contains(d decimal.Decimal) bool {
	return d.GreaterThanOrEqual(r.Min) && d.LessThanOrEqual(r.Max)
}

func (r AmountRange) check(field string, d decimal.Decimal, method string) error {
	if !r.contains(d) {
		return Invalid(field, "must be between "+FormatAmount(r.Min)+" and "+FormatAmount(r.Max)+" for "+method)
	}
	return nil
}
