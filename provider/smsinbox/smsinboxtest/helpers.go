package smsinboxtest

// The suite's rows are made at storekit.Base, with its fixtures.

import (
	"github.com/payd-engine/payd/conformance/storekit"
	"github.com/shopspring/decimal"
)

var base = storekit.Base

func ptr[T any](v T) *T { return &v }

var dec = decimal.RequireFromString
