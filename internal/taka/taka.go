// Package taka writes amounts of Bangladesh Taka as people in Bangladesh
// read them: the ৳ sign, two decimals, and the South Asian grouping of
// thousands, lakhs and crores (৳1,20,000.00 is one lakh twenty thousand),
// in Bangla numerals for a Bangla page.
package taka

import (
	"strings"

	"github.com/shopspring/decimal"
)

// Languages whose digits Format writes.
const (
	English = "en"
	Bangla  = "bn"
)

// Format is d in taka, e.g. ৳1,20,000.00 (or ৳১,২০,০০০.০০ in Bangla); a
// negative amount begins with a minus sign.
func Format(d decimal.Decimal, lang string) string {
	if d.IsNegative() {
		return Digits("-৳"+group(d.Neg()), lang, true)
	}
	return Digits("৳"+group(d), lang, true)
}

// Plain is d grouped as Format groups it, without the ৳ sign.
func Plain(d decimal.Decimal, lang string) string { return Digits(group(d), lang, true) }

// FormatString is Format of an amount written as a decimal ("1200.50");
// anything that is not one is returned unchanged.
func FormatString(s, lang string) string {
	d, err := decimal.NewFromString(strings.TrimSpace(s))
	if err != nil {
		return s
	}
	return Format(d, lang)
}

func group(d decimal.Decimal) string {
	s := d.StringFixedBank(2)
	if !d.Equal(d.Round(2)) {
		s = d.String() // never rounds away paisa it was given
	}
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	if neg {
		b.WriteString("-")
	}
	// The last three digits, then pairs.
	n := len(whole)
	if n <= 3 {
		b.WriteString(whole)
	} else {
		head := whole[:n-3]
		for i, c := range head {
			if i > 0 && (len(head)-i)%2 == 0 {
				b.WriteByte(',')
			}
			b.WriteRune(c)
		}
		b.WriteByte(',')
		b.WriteString(whole[n-3:])
	}
	if frac != "" {
		b.WriteString(".")
		b.WriteString(frac)
	}
	return b.String()
}

// Digits writes s's ASCII digits as Bangla numerals when lang is Bangla
// and numerals is true; otherwise s is unchanged.
func Digits(s, lang string, numerals bool) string {
	if lang != Bangla || !numerals {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) * 3)
	for _, c := range s {
		if c >= '0' && c <= '9' {
			b.WriteRune('০' + (c - '0'))
		} else {
			b.WriteRune(c)
		}
	}
	return b.String()
}
