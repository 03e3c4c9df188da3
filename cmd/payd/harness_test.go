package main

import (
	"testing"

	"github.com/payd-engine/payd/paydtest"
)

// harness is paydtest's server on a mock clock, with this package's test
// helpers as methods.
type harness struct {
	*paydtest.Server
	t *testing.T
}

func newHarness(t *testing.T, opts ...paydtest.Option) *harness {
	t.Helper()
	return &harness{paydtest.MustOpen(t, opts...), t}
}

type (
	request  = paydtest.Request
	response = paydtest.Response
	kv       = paydtest.KV
)

var (
	str        = paydtest.Str
	h2h        = paydtest.H2H
	withdrawal = paydtest.Withdrawal
	mustJSON   = paydtest.MustJSON
)

func ptr[T any](v T) *T { return &v }
