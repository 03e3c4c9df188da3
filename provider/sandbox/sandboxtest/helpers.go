package sandboxtest

// Helpers copied from conformance/storetest, which the suite of the
// engine's tables keeps unexported.

import (
	"errors"
	"testing"
	"time"

	"github.com/payd-engine/payd/conformance/storetest"
	"github.com/payd-engine/payd/engine"
	"github.com/shopspring/decimal"
)

// base is a UTC time at microsecond precision, as the engine produces.
var base = time.Date(2025, 3, 14, 9, 26, 53, 589793000, time.UTC)

var dec = decimal.RequireFromString

func wantDuplicate(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, engine.ErrDuplicate) {
		t.Errorf("%s: %v, want ErrDuplicate", what, err)
	}
}

// wantNotFound requires the bare sentinel, so that errors.Is and == both
// match it.
func wantNotFound(t *testing.T, what string, err error) {
	t.Helper()
	if err != engine.ErrNotFound {
		t.Errorf("%s: %v, want ErrNotFound", what, err)
	}
}

// assertEqual is the shared store suite's comparison (decimals by value,
// times with Equal).
func assertEqual(t *testing.T, got, want any) {
	t.Helper()
	storetest.AssertEqual(t, got, want)
}

// Fixtures.
