package sandboxtest

// Helpers copied from conformance/storetest, which the suite of the
// engine's tables keeps unexported.

import (
	"time"

	"github.com/shopspring/decimal"
)

// base is a UTC time at microsecond precision, as the engine produces.
var base = time.Date(2025, 3, 14, 9, 26, 53, 589793000, time.UTC)

var dec = decimal.RequireFromString

// Fixtures.
