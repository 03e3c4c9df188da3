// Package csvsafe writes CSV that a spreadsheet opens as data, never as
// formulas. Every CSV payd writes goes through it (a test of the
// repository's shape holds that no other package imports encoding/csv).
//
// A cell that begins with =, +, -, @, a tab or a carriage return is one a
// spreadsheet may evaluate (=HYPERLINK(...), -2+3+cmd|...), so it gets a
// leading single quote, the OWASP remedy for CSV injection. The rule reads
// the cell, not its column: text from merchants, payers, providers and SMS
// reaches many columns, and a column added later is covered without
// anyone remembering. The one exception is a negative amount as payd
// formats it (-5.00): a plain number cannot be a formula, and quoting it
// would turn payd's own ledger amounts into text a spreadsheet cannot add.
package csvsafe

import (
	"encoding/csv"
	"io"
)

// Cell returns s as a spreadsheet reads it as text: s itself, or s after a
// single quote when its first character would start a formula.
func Cell(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '=', '+', '@', '\t', '\r':
		return "'" + s
	case '-':
		if isNegativeAmount(s) {
			return s
		}
		return "'" + s
	}
	return s
}

// isNegativeAmount reports whether s is a minus, digits, a point and two
// digits: an amount as engine.FormatAmount writes it.
func isNegativeAmount(s string) bool {
	if len(s) < 5 || s[0] != '-' || s[len(s)-3] != '.' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if i != len(s)-3 && (s[i] < '0' || s[i] > '9') {
			return false
		}
	}
	return true
}

// Writer is a csv.Writer whose every cell goes through Cell.
type Writer struct {
	w   *csv.Writer
	rec []string
}

// NewWriter returns a Writer that writes to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: csv.NewWriter(w)} }

// Write writes one record, each field through Cell; record is not changed.
func (w *Writer) Write(record []string) error {
	w.rec = w.rec[:0]
	for _, f := range record {
		w.rec = append(w.rec, Cell(f))
	}
	return w.w.Write(w.rec)
}

// Flush writes any buffered data to the underlying io.Writer.
func (w *Writer) Flush() { w.w.Flush() }

// Error reports any error of a previous Write or Flush.
func (w *Writer) Error() error { return w.w.Error() }
