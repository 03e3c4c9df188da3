package client

import (
	"encoding/json"
	"time"
)

// Deposit statuses. Terminal ones end polling; only StatusSucceeded
// proves payment.
const (
	StatusPending    = "pending"
	StatusProcessing = "processing"
	StatusSucceeded  = "succeeded"
	StatusFailed     = "failed"
	StatusCancelled  = "cancelled"
	StatusExpired    = "expired"
	StatusRejected   = "rejected"
	StatusRefunded   = "refunded"
)

// Types of an H2H deposit's next action.
const (
	// ActionDisplayInstructions: render the instructions and submit the
	// payer's transaction ID with SubmitTransactionID.
	ActionDisplayInstructions = "display_instructions"
	// ActionRedirect: send the payer to NextAction.URL before ExpiresAt;
	// never submit a transaction ID.
	ActionRedirect = "redirect"
)

// CheckoutH2H is Deposit.CheckoutMode of an H2H deposit ("" for redirect).
const CheckoutH2H = "h2h"

// RedirectDepositRequest creates a redirect (hosted checkout) deposit.
type RedirectDepositRequest struct {
	// Amount is a BDT decimal string such as "500" or "750.50".
	Amount string `json:"amount"`
	// PaymentMethod is a redirect method, a value of the PaymentMethod enum
	// of the server's /openapi.json, e.g. "bkash" or "bkash_agent".
	PaymentMethod string `json:"payment_method"`
	// RedirectURL is your return page after the hosted checkout. It is not
	// where the payer is sent now: that is Deposit.RedirectURL.
	RedirectURL string `json:"redirect_url"`
	// MerchantID is your unique transaction ID and the idempotency key: a
	// repeat with the same fields returns the same deposit.
	MerchantID string `json:"merchant_id"`
	// Metadata is an optional JSON object, returned unchanged.
	Metadata json.RawMessage `json:"metadata,omitempty"`
}

// H2HDepositRequest creates an H2H deposit, where you control checkout.
type H2HDepositRequest struct {
	// Amount is a BDT decimal string, 100 to 25,000, at most 2 decimals.
	Amount string
	// PaymentMethod is an H2H method, a value of the H2HPaymentMethod enum
	// of the server's /openapi.json: "bkash" yields a redirect action,
	// "bkash_agent" or "bkash_merchant" instructions.
	PaymentMethod string
	// RedirectURL is the return page after a redirect action completes.
	RedirectURL string
	// MerchantID is your unique transaction ID and the idempotency key.
	MerchantID string
	// PayerPhone is the payer's Bangladesh mobile number (01XNNNNNNNN,
	// 8801XNNNNNNNN or +8801XNNNNNNNN).
	PayerPhone string
	// Metadata is an optional JSON object, returned unchanged.
	Metadata json.RawMessage
}

// h2hDepositBody is the wire shape of H2HDepositRequest.
type h2hDepositBody struct {
	Amount        string          `json:"amount"`
	PaymentMethod string          `json:"payment_method"`
	RedirectURL   string          `json:"redirect_url"`
	MerchantID    string          `json:"merchant_id"`
	CheckoutMode  string          `json:"checkout_mode"`
	Payer         h2hPayer        `json:"payer"`
	Metadata      json.RawMessage `json:"metadata,omitempty"`
}

type h2hPayer struct {
	Phone string `json:"phone"`
}

// Deposit is a deposit as the server returns it, in either shape: redirect
// (RedirectURL, BankTransactionID) or H2H (CheckoutMode "h2h", ExpiresAt,
// NextAction, Verification, ProviderTransactionID). Fields of the other
// shape stay zero.
type Deposit struct {
	ID string `json:"id"` // the deposit's ID (dep_...)
	// Amount is the canonical two-decimal string, e.g. "500.00".
	Amount        string `json:"amount"`
	PaymentMethod string `json:"payment_method"` // as requested, e.g. bkash
	// Status is the authority for fulfillment: only "succeeded" is paid.
	Status string `json:"status"`
	// Metadata is returned exactly as the server sent it.
	Metadata   json.RawMessage `json:"metadata"`
	MerchantID string          `json:"merchant_id"` // your ID of it, its idempotency key

	// RedirectURL (redirect deposits) is the hosted checkout to send the
	// payer to now; nil once there is nothing to pay.
	RedirectURL *string `json:"redirect_url,omitempty"`
	// BankTransactionID (redirect deposits) is the payment's transaction
	// ID after completion, when available.
	BankTransactionID *string `json:"bank_transaction_id,omitempty"`

	// CheckoutMode is "h2h" for H2H deposits and "" for redirect ones.
	CheckoutMode string `json:"checkout_mode,omitempty"`
	// ExpiresAt (H2H) is the deadline for submitting a transaction ID, or
	// the expiry of the redirect checkout; zero for redirect deposits.
	ExpiresAt time.Time `json:"expires_at,omitzero"`
	// NextAction (H2H) is what to present to the payer; nil once the
	// deposit is terminal or expired.
	NextAction *NextAction `json:"next_action,omitempty"`
	// Verification (H2H) is the progress of transaction ID checks.
	Verification *VerificationState `json:"verification,omitempty"`
	// ProviderTransactionID (H2H) is the normalized transaction ID after
	// success, nil before.
	ProviderTransactionID *string `json:"provider_transaction_id,omitempty"`

	// RefundedAmount is the sum of the deposit's succeeded refunds
	// ("0.00" when none); when it reaches Amount the status is refunded.
	RefundedAmount string `json:"refunded_amount,omitempty"`
}

// IsTerminal reports whether the deposit can no longer change, so polling
// stops: succeeded, failed, expired, cancelled, rejected or refunded.
func (d *Deposit) IsTerminal() bool {
	switch d.Status {
	case StatusSucceeded, StatusFailed, StatusExpired, StatusCancelled, StatusRejected, StatusRefunded:
		return true
	}
	return false
}

// Succeeded reports whether the deposit is paid: the only status on which
// an order may be fulfilled.
func (d *Deposit) Succeeded() bool { return d.Status == StatusSucceeded }

// NextAction is an H2H deposit's next_action: instructions to display
// (Type ActionDisplayInstructions) or a checkout to open (ActionRedirect,
// with only URL set). Render the values as returned; they are
// authoritative and never change for the deposit.
type NextAction struct {
	Type string `json:"type"` // display_instructions or redirect
	// Channel is the wallet's network, e.g. bkash (instructions).
	Channel string `json:"channel,omitempty"`
	// Operation is cash_out or make_payment (instructions).
	Operation string `json:"operation,omitempty"`
	// Recipient is the wallet the payer pays (instructions).
	Recipient Recipient `json:"recipient,omitzero"`
	// QRPayload is a QR code payload to show, when the wallet has one.
	QRPayload *string `json:"qr_payload,omitempty"`
	// Amount is the exact amount to pay; underpayment and overpayment
	// cannot succeed the deposit.
	Amount string `json:"amount,omitempty"`
	// Currency is "BDT".
	Currency string `json:"currency,omitempty"`
	// Verification tells where the transaction ID goes; SubmitTransactionID
	// builds the same endpoint from the deposit ID.
	Verification VerificationTarget `json:"verification,omitzero"`
	// URL is the checkout to open (redirect).
	URL string `json:"url,omitempty"`
}

// Recipient is the wallet a payer pays: Type "phone", the number in Value,
// and an optional display Name.
type Recipient struct {
	Type  string  `json:"type"`  // "phone"
	Value string  `json:"value"` // the wallet's number
	Name  *string `json:"name"`  // its display name, or nil
}

// VerificationTarget is next_action.verification: the host-relative verify
// endpoint (it includes the API prefix) and the fields it requires.
type VerificationTarget struct {
	Endpoint       string   `json:"endpoint"`        // where the transaction ID is posted, API prefix included
	RequiredFields []string `json:"required_fields"` // the body fields it requires (provider_transaction_id)
}

// VerificationState is an H2H deposit's verification progress. State values
// other than the terminal ones are to be treated as pending; the deposit's
// Status, not State, decides fulfillment.
type VerificationState struct {
	State             string  `json:"state"`              // awaiting_reference, processing, delayed, succeeded, failed, ...
	AttemptsUsed      int     `json:"attempts_used"`      // transaction IDs submitted so far
	AttemptsRemaining int     `json:"attempts_remaining"` // how many more may be submitted
	FailureCode       *string `json:"failure_code"`       // the last failed attempt's reason, or nil
}

// Verification is the answer of SubmitTransactionID: queued (HTTP 202,
// Queued true, with the attempt counters) or resolved (HTTP 200, a repeat
// of a finished attempt, with AttemptStatus, DepositStatus and maybe
// FailureCode).
type Verification struct {
	// Queued is true for 202: the ID is being checked; poll the deposit.
	Queued                bool   `json:"-"`
	DepositID             string `json:"deposit_id"`              // the deposit checked
	AttemptID             string `json:"attempt_id"`              // the attempt (att_...)
	ProviderTransactionID string `json:"provider_transaction_id"` // the ID as normalized: trimmed, upper-cased
	// Status is "processing" (queued) or "resolved".
	Status string `json:"status"`
	// AttemptsUsed is set when queued: transaction IDs submitted so far.
	AttemptsUsed int `json:"attempts_used"`
	// AttemptsRemaining is set when queued: how many more may be submitted.
	AttemptsRemaining int `json:"attempts_remaining"`
	// AttemptStatus ("succeeded" or "failed") is set when resolved.
	AttemptStatus string `json:"attempt_status"`
	// DepositStatus is set when resolved: the deposit's status then.
	DepositStatus string `json:"deposit_status"`
	// FailureCode is set when the resolved attempt failed: its reason.
	FailureCode *string `json:"failure_code"`
}

// WithdrawalRequest creates a payout from the organization's balance.
type WithdrawalRequest struct {
	// Amount is a BDT decimal string in the method's range (the server's
	// /openapi.json, WithdrawalRequest), e.g. 100 to 25,000 for bkash.
	Amount string `json:"amount"`
	// Phone is the recipient's mobile number, or the account number (8 to
	// 20 digits) for bank.
	Phone         string `json:"phone"`
	PaymentMethod string `json:"payment_method"` // bkash, nagad, upay or bank
	// MerchantID is your unique ID; any reuse is 409 merchant_id_exists.
	MerchantID string          `json:"merchant_id"`
	Metadata   json.RawMessage `json:"metadata,omitempty"` // a JSON object of yours, returned as sent
}

// Withdrawal statuses.
const (
	WithdrawalProcessing = "processing"
	WithdrawalSucceeded  = "succeeded"
	WithdrawalFailed     = "failed"
)

// Withdrawal is a payout as the server returns it. Only Status "succeeded"
// (or a verified withdraw.succeeded event) proves it was paid.
type Withdrawal struct {
	ID            string          `json:"id"`             // the withdrawal's ID (wd_...)
	Phone         string          `json:"phone"`          // the recipient number or account
	PaymentMethod string          `json:"payment_method"` // as requested
	Amount        string          `json:"amount"`         // the canonical two-decimal string
	Status        string          `json:"status"`         // processing, succeeded or failed
	Metadata      json.RawMessage `json:"metadata"`       // as sent
	MerchantID    string          `json:"merchant_id"`    // your ID of it
}

// IsTerminal reports whether the payout finished (succeeded or failed).
func (w *Withdrawal) IsTerminal() bool {
	return w.Status == WithdrawalSucceeded || w.Status == WithdrawalFailed
}

// Balance is the organization's ledger balance (GET /v1/balance): what is
// available for withdrawals and what is held by running ones.
type Balance struct {
	Currency  string `json:"currency"`  // "BDT"
	Available string `json:"available"` // what withdrawals and refunds may use
	Held      string `json:"held"`      // what running withdrawals and refunds hold
}

// SandboxPaymentRequest records a simulated wallet payment, as a payer
// would make it, on a sandbox server.
type SandboxPaymentRequest struct {
	// Channel is the payment's network, e.g. bkash (the channel enum of
	// SandboxPaymentRequest in the server's /openapi.json).
	Channel       string `json:"channel"`
	TransactionID string `json:"transaction_id"` // the ID the payer will submit
	PayerPhone    string `json:"payer_phone"`    // the number it is paid from
	// RecipientPhone is the wallet paid (next_action.recipient.value).
	RecipientPhone string `json:"recipient_phone,omitempty"`
	Amount         string `json:"amount"` // the amount paid, a BDT decimal string
	// Status is "completed" or "failed"; "" sends "completed".
	Status string `json:"status"`
	// CompletedAt is when the payment completed; zero means now.
	CompletedAt time.Time `json:"-"`
	// Type is optional: cash_out, payment or send_money.
	Type string `json:"type,omitempty"`
}
