// Package sandboxtest is the suite of the sandbox's own tables that every
// store must pass, as conformance/storetest is the engine's: the sandbox's
// test runs it on each store, migrated with the sandbox's migration line,
// so its SQL is held to one definition in every dialect.
package sandboxtest

import (
	"testing"

	"github.com/payd-engine/payd/engine"
)

// Store is what the suite exercises: an engine.Store whose Tx is an
// engine.SQLTx, on which the sandbox keeps its tables.
type Store interface {
	engine.Store
}

// Exercise runs the suite. newStore must return a new, empty store
// migrated with sandbox.Migrations() each time it is called; the suite
// closes it. Every subtest gets a store of its own and runs in parallel.
func Exercise(t *testing.T, newStore func(t *testing.T) Store) {
	t.Helper()
	for _, c := range []struct {
		name string
		fn   func(t *testing.T, s Store)
	}{
		{"Payments", testSandboxPayments},
		{"Payouts", testSandboxPayouts},
		{"SettleRace", testSandboxSettleRace},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := newStore(t)
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			c.fn(t, s)
		})
	}
}
