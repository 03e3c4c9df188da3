package smsinboxtest

import (
	"time"
)

// Copies of conformance/storetest's race and lock helpers, for the
// inbox's transactions.

// microsAfter is how many microseconds after base at is; nil is none.
func microsAfter(at *time.Time) int {
	if at == nil {
		return 0
	}
	return int(at.Sub(base) / time.Microsecond)
}
