// Package smsinboxtest is the suite of the SMS inbox's own tables that
// every store must pass, as conformance/storetest is the engine's: the
// inbox's test runs it on each store, migrated with the inbox's migration
// line, so its SQL is held to one definition in every dialect, constraints
// and row locks included.
package smsinboxtest

import (
	"testing"

	"github.com/payd-engine/payd/engine"
)

// Store is what the suite exercises: an engine.Store whose Tx is an
// engine.SQLTx, on which the inbox keeps its tables.
type Store interface {
	engine.Store
}

// Exercise runs the suite. newStore must return a new, empty store
// migrated with smsinbox.Migrations() each time it is called; the suite
// closes it. Every subtest gets a store of its own and runs in parallel.
func Exercise(t *testing.T, newStore func(t *testing.T) Store) {
	t.Helper()
	for _, c := range []struct {
		name string
		fn   func(t *testing.T, s Store)
	}{
		{"Transactions", testInboxTransactions},
		{"DeviceRoundTrip", testSMSDeviceRoundTrip},
		{"ChainRoundTrip", testSMSChainRoundTrip},
		{"SetWalletsLiveUntil", testSetWalletsLiveUntil},
		{"SMSRoundTrip", testSMSRoundTrip},
		{"SMSDuplicates", testSMSDuplicates},
		{"ListSMSByTransactionID", testListSMSByTransactionID},
		{"ListHeldSMS", testListHeldSMS},
		{"ListHeldSMSFollowing", testListHeldSMSFollowing},
		{"SMSCounts", testSMSCounts},
		{"Settings", testSMSSettings},
		{"ListSMS", testListSMS},
		{"ManualPayouts", testManualPayouts},
		{"ChainReview", testSMSChainReview},
		{"ConcurrentSameSMS", testConcurrentSameSMS},
		{"LockChain", testLockChainSerializes},
		{"LockDevice", testLockDeviceSerializes},
		{"LockManualPayout", testLockManualPayoutSerializes},
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
