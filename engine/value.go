package engine

import (
	"bytes"
	"encoding/json"
	"net/url"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

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
func FormatAmount(d decimal.Decimal) string {
	// An amount with at most two decimals and 15 digits (what ParseAmount
	// takes) is counted in paisa by hand: StringFixed goes through big.Int,
	// five allocations that each deposit view made twice.
	if exp := d.Exponent(); exp >= -2 && exp <= 0 && d.NumDigits() <= maxAmountDigits {
		paisa := d.CoefficientInt64() * [...]int64{1, 10, 100}[exp+2]
		var b [24]byte
		out := b[:0]
		if paisa < 0 {
			out, paisa = append(out, '-'), -paisa
		}
		out = strconv.AppendInt(out, paisa/100, 10)
		return string(append(out, '.', byte('0'+paisa%100/10), byte('0'+paisa%10)))
	}
	return d.StringFixed(2)
}

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

// localMobile is a Bangladesh mobile number in its local 11-digit form.
var localMobile = regexp.MustCompile(`^01[3-9][0-9]{8}$`)

// NormalizePhone accepts a Bangladesh mobile number as 01XNNNNNNNN,
// 8801XNNNNNNNN or +8801XNNNNNNNN and returns the local 11-digit form.
func NormalizePhone(field, s string) (string, error) {
	local := s
	switch {
	case len(s) == 14 && s[:4] == "+880":
		local = s[3:]
	case len(s) == 13 && s[:3] == "880":
		local = s[2:]
	}
	if !localMobile.MatchString(local) {
		return "", Invalid(field, "must be a Bangladesh mobile number (01XNNNNNNNN, 8801XNNNNNNNN or +8801XNNNNNNNN)")
	}
	return local, nil
}

// Metadata limits of the contract.
const (
	MaxMetadataKeys  = 50
	MaxMetadataBytes = 8 << 10
)

// emptyMetadata is what a resource carries when the request had none.
var emptyMetadata = []byte("{}")

// normalizeMetadata checks a metadata value (raw JSON, nil when absent) and
// returns its compact form. Compaction drops only insignificant white space:
// keys keep their order and values their exact text, so the echo is faithful.
func normalizeMetadata(raw []byte) ([]byte, error) {
	if raw == nil {
		return emptyMetadata, nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, Invalid("metadata", "must be a JSON object")
	}
	if buf.Len() == 0 || buf.Bytes()[0] != '{' {
		return nil, Invalid("metadata", "must be a JSON object")
	}
	if buf.Len() > MaxMetadataBytes {
		return nil, Invalid("metadata", "must be at most 8192 bytes when serialized")
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(buf.Bytes(), &keys); err != nil {
		return nil, Invalid("metadata", "must be a JSON object")
	}
	if len(keys) > MaxMetadataKeys {
		return nil, Invalid("metadata", "must have at most 50 keys")
	}
	return buf.Bytes(), nil
}

// sameMetadata reports whether two metadata objects are equal as JSON values:
// key order does not matter, number text does ("1.0" is not "1").
func sameMetadata(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	va, errA := decodeJSONValue(a)
	vb, errB := decodeJSONValue(b)
	return errA == nil && errB == nil && reflect.DeepEqual(va, vb)
}

func decodeJSONValue(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// maxMerchantIDLength and maxURLLength bound caller-controlled strings.
const (
	maxMerchantIDLength = 255
	maxURLLength        = 2048
)

func checkMerchantID(s string) error {
	switch {
	case s == "":
		return Invalid("merchant_id", "must be at least 1 character")
	case len(s) > maxMerchantIDLength:
		return Invalid("merchant_id", "must be at most 255 bytes")
	}
	return checkText("merchant_id", s)
}

func checkAbsoluteURL(field, s string) error {
	if s == "" {
		return Invalid(field, "is required")
	}
	if len(s) > maxURLLength {
		return Invalid(field, "must be at most 2048 characters")
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || strings.ContainsAny(s, " \t\r\n") {
		return Invalid(field, "must be an absolute http or https URL")
	}
	return nil
}

// checkText refuses invalid UTF-8 and control characters (NUL among them)
// in text a person reads or a database keeps as TEXT.
func checkText(field, s string) error {
	if !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return Invalid(field, "must be valid UTF-8 without control characters")
	}
	return nil
}

// bankAccount is a bank account number as the contract allows it.
var bankAccount = regexp.MustCompile(`^[0-9]{8,20}$`)

// Transaction ID length bounds of the interface.
const (
	minTransactionIDLength = 3
	maxTransactionIDLength = 64
)

// NormalizeTransactionID trims and upper-cases a transaction ID and checks
// it: 3 to 64 printable ASCII characters without spaces, as wallet
// transaction IDs are ("8N7A6D5EE7M").
func NormalizeTransactionID(field, s string) (string, error) {
	id := strings.ToUpper(strings.TrimSpace(s))
	if len(id) < minTransactionIDLength || len(id) > maxTransactionIDLength {
		return "", Invalid(field, "must be 3 to 64 characters after trimming")
	}
	for i := 0; i < len(id); i++ {
		if id[i] <= ' ' || id[i] > '~' {
			return "", Invalid(field, "must be printable ASCII without spaces")
		}
	}
	return id, nil
}

// FormatTime renders a time as the contract does: RFC 3339, UTC, seconds.
func FormatTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// Dhaka is Bangladesh Standard Time, UTC+6 all year (no daylight saving
// since 2009): the day a wallet's daily limit resets, as the wallet
// operators count it, and the clock a payer reads a deadline on.
var Dhaka = time.FixedZone("Asia/Dhaka", 6*60*60)
