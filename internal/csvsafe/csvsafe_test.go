package csvsafe_test

import (
	"bytes"
	"testing"

	"github.com/payd-engine/payd/internal/csvsafe"
)

func TestCell(t *testing.T) {
	for in, want := range map[string]string{
		`=HYPERLINK("http://x","y")`: `'=HYPERLINK("http://x","y")`,
		"+8801712345678":             "'+8801712345678",
		"-2+3+cmd|' /C calc'!A0":     "'-2+3+cmd|' /C calc'!A0",
		"@SUM(1)":                    "'@SUM(1)",
		"\t=1":                       "'\t=1",
		"\r=1":                       "'\r=1",
		"-":                          "'-",
		"-5":                         "'-5",
		"-5.0":                       "'-5.0",
		"-.00":                       "'-.00",
		"-5.00=1":                    "'-5.00=1",
		"-1e3.00":                    "'-1e3.00",
		"-5.00":                      "-5.00", // a negative amount payd wrote
		"-1234567.89":                "-1234567.89",
		"-0.00":                      "-0.00",
		"500.50":                     "500.50",
		"":                           "",
		"order 1":                    "order 1",
		" =1":                        " =1",
		"'=1":                        "'=1",
		`{"a":"=1"}`:                 `{"a":"=1"}`,
		"2026-11-21T06:00:00Z":       "2026-11-21T06:00:00Z",
		"dep_01jd":                   "dep_01jd",
	} {
		if got := csvsafe.Cell(in); got != want {
			t.Errorf("Cell(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWriter(t *testing.T) {
	var b bytes.Buffer
	w := csvsafe.NewWriter(&b)
	rec := []string{"=1", "-5.00", `a,"b"`}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		t.Fatal(err)
	}
	if got, want := b.String(), "'=1,-5.00,\"a,\"\"b\"\"\"\n"; got != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
	if rec[0] != "=1" {
		t.Errorf("the caller's record changed: %q", rec)
	}
}
