package taka

import (
	"testing"

	"github.com/shopspring/decimal"
)

func TestFormat(t *testing.T) {
	for _, c := range []struct{ in, en, bn string }{
		{"0", "৳0.00", "৳০.০০"},
		{"5", "৳5.00", "৳৫.০০"},
		{"999.5", "৳999.50", "৳৯৯৯.৫০"},
		{"1000", "৳1,000.00", "৳১,০০০.০০"},
		{"120000", "৳1,20,000.00", "৳১,২০,০০০.০০"},
		{"1234567.89", "৳12,34,567.89", "৳১২,৩৪,৫৬৭.৮৯"},
		{"10000000", "৳1,00,00,000.00", "৳১,০০,০০,০০০.০০"},
		{"-25000.10", "-৳25,000.10", "-৳২৫,০০০.১০"},
		{"1.005", "৳1.005", "৳১.০০৫"},
	} {
		d := decimal.RequireFromString(c.in)
		if got := Format(d, English); got != c.en {
			t.Errorf("Format(%s, en) = %q, want %q", c.in, got, c.en)
		}
		if got := Format(d, Bangla); got != c.bn {
			t.Errorf("Format(%s, bn) = %q, want %q", c.in, got, c.bn)
		}
	}
	if got := FormatString("1500", English); got != "৳1,500.00" {
		t.Errorf("FormatString: %q", got)
	}
	if got := FormatString("n/a", Bangla); got != "n/a" {
		t.Errorf("FormatString of a non-amount: %q", got)
	}
}
