package engine

import "time"

// Verification attempt statuses. processing and delayed are running: a
// deposit has at most one running attempt, and while it has one its status
// is processing.
const (
	AttemptProcessing = "processing"
	AttemptDelayed    = "delayed"
	AttemptSucceeded  = "succeeded"
	AttemptFailed     = "failed"
)

// Failure codes of a verification attempt (verification.failure_code).
const (
	FailureTransactionNotFound = "transaction_not_found"
	FailureChannelMismatch     = "channel_mismatch"
	FailureRecipientMismatch   = "recipient_mismatch"
	FailurePayerMismatch       = "payer_mismatch"
	FailureAmountMismatch      = "amount_mismatch"
	FailurePaymentNotCompleted = "payment_not_completed"
	FailureOutsideWindow       = "outside_payment_window"
	FailureProviderUnavailable = "provider_unavailable"
	// FailureTransactionIDUsed is in the contract's list of failure codes
	// (contract.md, Verification), so the API documents it and the checkout
	// has its text, but the engine never produces it: a used transaction ID
	// is refused at submission with 409 transaction_id_used by the store's
	// unique constraint, before any attempt exists to fail.
	FailureTransactionIDUsed = "transaction_id_used"
)

// Attempt is one transaction ID submitted for a deposit, checked against
// the provider by a background worker. A transaction ID belongs to at most
// one attempt per channel, ever: the store's unique constraint on (Channel,
// TransactionID) is what stops one payment from paying two deposits.
type Attempt struct {
	ID             string
	DepositID      string
	OrganizationID string
	Channel        string
	// TransactionID is trimmed and upper-cased.
	TransactionID string
	Status        string
	FailureCode   string // empty unless failed
	// Tries counts provider lookups made; NextRunAt is when the next is due.
	Tries     int
	NextRunAt time.Time
	// LeaseOwner and LeasedUntil mark an attempt a worker is checking, so
	// that no other worker checks it at the same time; a lease that has run
	// out (its worker died) lets another worker take the attempt over.
	LeaseOwner  string
	LeasedUntil time.Time
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// Running reports whether the attempt is still to be resolved.
func (a *Attempt) Running() bool {
	return a.Status == AttemptProcessing || a.Status == AttemptDelayed
}
