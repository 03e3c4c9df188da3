package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// optionalBool is a boolean flag that knows whether it was given, so an
// update changes only what the operator named. "--h2h" alone means true.
type optionalBool struct{ v *bool }

func (b *optionalBool) String() string {
	if b == nil || b.v == nil {
		return ""
	}
	return strconv.FormatBool(*b.v)
}

func (b *optionalBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	b.v = &v
	return nil
}

func (b *optionalBool) IsBoolFlag() bool { return true }

// optionalDuration and optionalDecimal likewise record whether they were set.
type optionalDuration struct{ v *time.Duration }

func (d *optionalDuration) String() string {
	if d == nil || d.v == nil {
		return ""
	}
	return d.v.String()
}

func (d *optionalDuration) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	d.v = &v
	return nil
}

type optionalDecimal struct{ v *decimal.Decimal }

func (d *optionalDecimal) String() string {
	if d == nil || d.v == nil {
		return ""
	}
	return d.v.String()
}

func (d *optionalDecimal) Set(s string) error {
	v, err := decimal.NewFromString(s)
	if err != nil || strings.ContainsAny(s, "eE") {
		return fmt.Errorf("not a plain decimal: %q", s)
	}
	d.v = &v
	return nil
}

func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}
