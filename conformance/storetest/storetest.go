// Package storetest is the suite every payd store must pass, in the manner
// of River's riverdrivertest: each adapter's own test calls Exercise with a
// constructor, so SQLite and Postgres are held to one definition of every
// operation, constraint and concurrency property. It imports no adapter.
package storetest

import (
	"testing"

	"github.com/payd-engine/payd/engine"
)

// Store is what the suite exercises: the engine's Store. Its Tx must be an
// engine.SQLTx too, on which plug-ins keep their own tables (their suites,
// such as a provider's, live with them).
type Store interface {
	engine.Store
}

// Exercise runs the suite. newStore must return a new, empty, migrated
// store each time it is called; the suite closes it.
//
// Every subtest gets a store of its own and runs in parallel with the
// others, so a store must not share state between the stores newStore
// returns.
func Exercise(t *testing.T, newStore func(t *testing.T) Store) {
	t.Helper()
	type test struct {
		name string
		fn   func(t *testing.T, s Store)
	}
	groups := []struct {
		name  string
		tests []test
	}{
		{"SQLTx", []test{
			{"Exposed", testSQLTxExposed},
		}},
		{"Organizations", []test{
			{"RoundTrip", testOrganizationRoundTrip},
			{"MethodFees", testMethodFeesRoundTrip},
			{"NotFound", testOrganizationNotFound},
		}},
		{"APIKeys", []test{
			{"RoundTrip", testAPIKeyRoundTrip},
			{"NotFound", testAPIKeyNotFound},
		}},
		{"Wallets", []test{
			{"RoundTrip", testWalletRoundTrip},
			{"NotFound", testWalletNotFound},
			{"List", testListWallets},
			{"DepositAmounts", testWalletDepositAmounts},
			{"MissingOrganization", testWalletOfMissingOrganization},
		}},
		{"Deposits", []test{
			{"RoundTrip", testDepositRoundTrip},
			{"NotFound", testDepositNotFound},
			{"LockAndListExpirable", testLockAndListExpirableDeposits},
		}},
		{"Attempts", []test{
			{"RoundTrip", testAttemptRoundTrip},
			{"DuplicateTransactionID", testAttemptDuplicateTransactionID},
			{"SucceededTransactions", testSucceededTransactions},
			{"Claim", testClaimQueue(attemptQueue)},
		}},
		{"Ledger", []test{
			{"RoundTrip", testJournalRoundTrip},
			{"Actor", testJournalActor},
			{"BalancesExact", testAccountBalancesExact},
			{"RejectsSubPoisha", testJournalRejectsSubPoisha},
			{"BalancesFollowJournals", testBalancesFollowJournals},
			{"CreateJournals", testCreateJournals},
		}},
		{"Events", []test{
			{"RoundTrip", testEventRoundTrip},
		}},
		{"Withdrawals", []test{
			{"RoundTrip", testWithdrawalRoundTrip},
			{"DuplicateMerchantID", testWithdrawalDuplicateMerchantID},
			{"Pipeline", testPipeline},
			{"LeasedUpdate", testWithdrawalLeasedUpdate},
			{"Claim", testClaimQueue(payoutQueue)},
		}},
		{"Refunds", []test{
			{"RoundTrip", testRefundRoundTrip},
			{"DepositTotals", testDepositRefundTotals},
			{"LeasedUpdate", testRefundLeasedUpdate},
			{"Claim", testClaimQueue(refundQueue)},
			{"List", testListRefundsPage},
			{"ReleaseLeases", testReleaseRefundLeases},
		}},
		{"Webhooks", []test{
			{"EndpointRoundTrip", testWebhookEndpointRoundTrip},
			{"ListEndpoints", testListWebhookEndpoints},
			{"DeliveryRoundTrip", testDeliveryRoundTrip},
			{"NotFound", testWebhookNotFound},
			{"DeliveryAttempts", testDeliveryAttempts},
			{"ListDeliveries", testListDeliveries},
			{"DeleteEndpointCascades", testDeleteWebhookEndpointCascades},
			{"ClaimDeliveries", testClaimDueDeliveries},
			{"ClaimDeliveriesPerEndpointAndExclude", testClaimDeliveriesPerEndpointAndExclude},
			{"ClaimDeliveriesPerEndpointCap", testClaimDeliveriesPerEndpointCap},
			{"ClaimDeliveriesFastEndpoints", testClaimDeliveriesFastEndpoints},
		}},
		{"MasterKeyCheck", []test{
			{"RoundTrip", testMasterKeyCheckRoundTrip},
			{"AnySealedSecret", testAnySealedSecret},
		}},
		{"Reliability", []test{
			{"WithdrawalByMerchantID", testWithdrawalByMerchantID},
			{"TakenWithdrawalMerchantIDs", testTakenWithdrawalMerchantIDs},
			{"WithdrawalGate", testWithdrawalGate},
			{"ReleaseLeases", testReleaseLeases},
			{"AuditRoundTrip", testAuditRoundTrip},
		}},
		{"Console", []test{
			{"Operators", testOperatorRoundTrip},
			{"OperatorSessions", testOperatorSessions},
			{"PaymentLinks", testPaymentLinks},
			{"SearchDeposits", testSearchDeposits},
			{"SearchWithdrawals", testSearchWithdrawals},
		}},
		{"Compat", []test{
			{"Keys", testCompatKeys},
			{"Invoices", testCompatInvoices},
			{"IPNs", testCompatIPNs},
			{"ListIPNs", testListCompatIPNs},
			{"IPNClaimsConcurrent", testCompatIPNClaimsConcurrent},
		}},
		{"Lists", []test{
			{"Deposits", testListDepositsPage},
			{"Withdrawals", testListWithdrawalsPage},
			{"Events", testListEventsPage},
			{"BalanceTransactions", testBalanceTransactions},
			{"ConcurrentBalanceAfter", testConcurrentBalanceAfter},
		}},
		{"Transactions", []test{
			{"Commit", testCommit},
			{"RollbackOnError", testRollbackOnError},
			{"RollbackOnPanic", testRollbackOnPanic},
			{"ErrorsUnchanged", testErrorsUnchanged},
			{"ReadTxIsReadOnly", testReadTxIsReadOnly},
			{"ReadTxSeesNoUncommittedWrites", testReadTxSeesNoUncommittedWrites},
			{"ReadTxSnapshot", testReadTxSnapshot},
			{"ReadOne", testReadOne},
			{"ReadOneDeposit", testReadOneDeposit},
		}},
		{"Concurrency", []test{
			{"SameDepositMerchantID", testConcurrentSameDepositMerchantID},
			{"SameWithdrawalMerchantID", testConcurrentSameWithdrawalMerchantID},
			{"SameOrganizationTransactionID", testConcurrentSameOrganizationTransactionID},
			{"SucceededTransaction", testConcurrentSucceededTransaction},
			{"WritersAndReaders", testConcurrentWritersAndReaders},
			{"AttemptClaims", testConcurrentAttemptClaims},
			{"PayoutClaims", testConcurrentPayoutClaims},
			{"RefundClaims", testConcurrentRefundClaims},
			{"SameRefundMerchantID", testConcurrentSameRefundMerchantID},
			{"DeliveryClaims", testConcurrentDeliveryClaims},
			{"LockOrganization", testLockOrganizationSerializes},
			{"LockWithdrawalGate", testLockWithdrawalGateSerializes},
			{"Journals", testConcurrentJournals},
			{"LockDeposit", testLockDepositSerializes},
			{"LockAttempt", testLockAttemptSerializes},
			{"LockDepositAndAttempt", testLockDepositAndAttemptSerializes},
			{"LockWithdrawal", testLockWithdrawalSerializes},
			{"LockWebhookEndpoint", testLockWebhookEndpointSerializes},
			{"LockDelivery", testLockDeliverySerializes},
			{"LockWallet", testLockWalletSerializes},
			{"ListWalletsForUpdate", testListWalletsForUpdateSerializes},
			{"LockPaymentLink", testLockPaymentLinkSerializes},
		}},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			for _, c := range g.tests {
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					c.fn(t, open(t, newStore))
				})
			}
		})
	}
}

// open returns a new store that is closed when t ends.
func open(t *testing.T, newStore func(t *testing.T) Store) Store {
	t.Helper()
	s := newStore(t)
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}
