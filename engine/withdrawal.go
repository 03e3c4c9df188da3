package engine

import (
	"encoding/json"
	"time"

	"github.com/shopspring/decimal"
)

// Withdrawal statuses.
const (
	WithdrawalProcessing = "processing"
	WithdrawalSucceeded  = "succeeded"
	WithdrawalFailed     = "failed"
)

// Payout steps of a processing withdrawal: whether the payout is still to be
// sent to the provider or was sent and awaits its final status.
const (
	PayoutToSend  = "to_send"
	PayoutSent    = "sent"
	PayoutSettled = "settled"
)

// Withdrawal is a payout from an organization's balance to a wallet or a
// bank account. Creating it holds amount plus commission; the payout's
// outcome settles or releases the hold.
type Withdrawal struct {
	ID             string
	OrganizationID string
	MerchantID     string
	Amount         decimal.Decimal
	Commission     decimal.Decimal
	PaymentMethod  string
	// Account is the recipient: a normalized mobile number, or a bank
	// account number for bank (the "phone" field on the wire).
	Account  string
	Metadata []byte
	Status   string

	// PayoutStep is where the payout stands (PayoutToSend, PayoutSent,
	// PayoutSettled); ProviderReference is the provider's ID for it.
	PayoutStep        string
	ProviderReference string
	// FailureReason says why a failed payout failed (operators only).
	FailureReason string
	// Tries, NextRunAt and the lease schedule the payout worker, as for
	// verification attempts.
	Tries       int
	NextRunAt   time.Time
	LeaseOwner  string
	LeasedUntil time.Time

	CreatedAt time.Time
	UpdatedAt time.Time
}

// Total is what the withdrawal takes from the balance: amount plus
// commission.
func (w *Withdrawal) Total() decimal.Decimal { return w.Amount.Add(w.Commission) }

// Payout statuses as a provider reports them.
const (
	PayoutPending   = "pending"
	PayoutSucceeded = "succeeded"
	PayoutFailed    = "failed"
)

// PayoutRequest asks a provider to send money. IdempotencyKey is derived
// from the withdrawal: a provider must treat a second request with the same
// key as the first (answering with its payout), so that a send retried
// after a timeout can never pay twice.
type PayoutRequest struct {
	IdempotencyKey string
	// OrganizationID owns the withdrawal, for a provider that queues
	// payouts for an operator.
	OrganizationID string
	Method         string
	Account        string
	Amount         decimal.Decimal
}

// Payout is a provider's payout as it reports it.
type Payout struct {
	IdempotencyKey string
	Reference      string
	Method         string
	Account        string
	Amount         decimal.Decimal
	Status         string
	// Reason explains a failed payout.
	Reason      string
	CreatedAt   time.Time
	CompletedAt time.Time
}

// WithdrawalView is a withdrawal as its create and status endpoints show it.
type WithdrawalView struct {
	ID            string          `json:"id"`
	Phone         string          `json:"phone"`
	PaymentMethod string          `json:"payment_method"`
	Amount        string          `json:"amount"`
	Status        string          `json:"status"`
	Metadata      json.RawMessage `json:"metadata"`
	MerchantID    string          `json:"merchant_id"`
}

// NewWithdrawalView returns the wire shape of w.
func NewWithdrawalView(w *Withdrawal) WithdrawalView {
	return WithdrawalView{
		ID: w.ID, Phone: w.Account, PaymentMethod: w.PaymentMethod, Amount: FormatAmount(w.Amount),
		Status: w.Status, Metadata: w.Metadata, MerchantID: w.MerchantID,
	}
}
