package engine

import (
	"context"
	"errors"
	"time"

	"github.com/shopspring/decimal"
)

// Provider is the money network behind payd: the wallets and banks that take
// and send payments. Calls may go over the network, so the engine never makes
// them inside a Store transaction.
type Provider interface {
	// StartCheckout opens a hosted checkout where the payer completes a
	// redirect deposit (or an H2H redirect action) and returns where to send
	// the payer. Returns ErrMethodUnavailable if the method cannot be used now.
	StartCheckout(ctx context.Context, req CheckoutRequest) (*Checkout, error)

	// LookupTransaction finds a payment by its transaction ID on a channel,
	// as the receiving side's wallet API (bKash's search transaction,
	// Nagad's verify) reports it. Returns ErrTransactionNotFound when the
	// provider does not know the ID, and ErrProviderUnavailable when it
	// cannot answer now (the attempt is delayed and retried). Not found is
	// final, the attempt fails transaction_not_found at once, unless the
	// provider is a LateLearner. The engine decides whether the payment
	// matches; the provider only reports it.
	LookupTransaction(ctx context.Context, req LookupRequest) (*ProviderTransaction, error)

	// CheckPayoutMethod returns ErrMethodUnavailable if payouts by method
	// cannot be accepted now; a withdrawal is then refused with 503.
	CheckPayoutMethod(ctx context.Context, method string) error
	// SendPayout sends money, idempotently by req.IdempotencyKey: a repeat
	// answers with the payout the first request created and pays nothing
	// more. An error (a timeout, ErrProviderUnavailable) says nothing of
	// whether the payout was made; the engine sends again with the same key.
	SendPayout(ctx context.Context, req PayoutRequest) (*Payout, error)
	// GetPayout returns the payout sent with a key, or ErrPayoutNotFound
	// if the provider never received it.
	GetPayout(ctx context.Context, idempotencyKey string) (*Payout, error)
}

// LateLearner is implemented by a Provider that may learn of a payment some
// time after its payer submitted the transaction ID: an SMS inbox, whose
// receiving phone's message can lag the payment. Its "not found" becomes
// final NotFoundGrace after the submission: until then the attempt is
// delayed and looked up again (at once when the provider calls
// Engine.RecheckTransaction), then it fails transaction_not_found and the
// payer may submit another ID. A provider that asks the money network
// itself (the sandbox, a wallet's API) does not implement it; zero or less
// means the same: not found is final.
//
// Keep the grace short (minutes): while it runs, the deposit is processing
// and a corrected ID is refused with attempt_in_progress. A payment proven
// after it is still matched while the deposit is open (RecheckTransaction),
// or credited by an operator afterwards (CreditLatePayment).
type LateLearner interface {
	NotFoundGrace() time.Duration
}

// ErrPayoutNotFound is returned by GetPayout for a key never sent.
var ErrPayoutNotFound = errors.New("payout not found")

// Errors a Provider returns from LookupTransaction.
var (
	ErrTransactionNotFound = errors.New("transaction not found")
	ErrProviderUnavailable = errors.New("provider unavailable")
)

// LookupRequest names the payment to look up.
type LookupRequest struct {
	// OrganizationID owns the deposit, for providers whose evidence is
	// kept per organization (an SMS inbox).
	OrganizationID string
	Channel        string
	// Operation is the deposit's (OperationCashOut, ...; empty for a
	// provider's own hosted checkout): a provider that can prove only
	// some operations answers the others without asking its network.
	Operation     string
	TransactionID string // normalized: trimmed, upper case
	// RecipientPhone is the wallet the payer was told to pay (empty for a
	// provider's own hosted checkout), for providers that search per
	// receiving account.
	RecipientPhone string
	// PayerPhone is the number the payer says they paid from (empty if
	// none), for a provider whose evidence shows only part of the payer's
	// account (a masked Rocket account): it reports PayerPhone as this
	// number only when what it shows is consistent with it.
	PayerPhone string
}

// Statuses of a ProviderTransaction, normalized by the provider from its
// network's own words ("Completed", "Initiated", ...).
const (
	TransactionCompleted = "completed"
	TransactionPending   = "pending"
	TransactionFailed    = "failed"
)

// Types of a ProviderTransaction: how the payer moved the money.
const (
	TransactionCashOut   = "cash_out"   // to an agent wallet
	TransactionPayment   = "payment"    // to a merchant wallet or checkout
	TransactionSendMoney = "send_money" // person to person
	TransactionCashIn    = "cash_in"    // by an agent, into the wallet
)

// ProviderTransaction is a payment as a wallet API reports it: modelled on
// bKash's search-transaction response (trxID, transactionStatus,
// transactionType, amount, currency, customerMsisdn, organizationShortCode
// or receiver, completedTime).
type ProviderTransaction struct {
	Channel       string
	TransactionID string
	Type          string
	Status        string
	Amount        decimal.Decimal
	Currency      string
	// PayerPhone and RecipientPhone are normalized local mobile numbers;
	// RecipientPhone is empty for payments into a hosted checkout.
	PayerPhone     string
	RecipientPhone string
	CompletedAt    time.Time
	// TimePrecision is how precise CompletedAt is (a second for APIs, a
	// minute for SMS); zero means a second. The payment window is widened
	// by it so a payment in the deposit's first second is not refused.
	TimePrecision time.Duration
}

// ErrMethodUnavailable is returned by a Provider that cannot serve a payment
// method right now; clients see 503 method_unavailable.
var ErrMethodUnavailable = errors.New("payment method unavailable")

// CheckoutRequest describes the deposit a hosted checkout is opened for.
type CheckoutRequest struct {
	DepositID      string
	OrganizationID string
	// Token is an unguessable value unique to the deposit; a provider whose
	// checkout page is served by payd itself puts it in the URL.
	Token         string
	Amount        decimal.Decimal
	PaymentMethod string
	ExpiresAt     time.Time
}

// Checkout is an opened hosted checkout.
type Checkout struct {
	// URL is where the payer is sent.
	URL string
	// Operation, when set, says the checkout is payd's own page paid into
	// one of the organization's receiving wallets of this operation on the
	// method's channel (the method's CheckoutOperation: a personal wallet
	// of an SMS inbox). The engine draws that wallet from the pool as it
	// does for display_instructions, the deposit keeps it as its
	// recipient, and the payer types the number they paid from and the
	// transaction ID on the page (SubmitWalletCheckout).
	Operation string
}

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

// SandboxPayment is a simulated wallet payment, in the contract's fields,
// that a test-mode provider records for the organization whose sandbox
// holds it (the only one whose deposits it can prove): the sandbox
// provider takes it and the HTTP layer builds it, so both name this one
// type. Type is optional (cash_out, payment, send_money); an empty
// CompletedAt (RFC 3339) means now.
type SandboxPayment struct {
	OrganizationID string
	Channel        string
	TransactionID  string
	PayerPhone     string
	RecipientPhone string
	Amount         string
	Status         string
	CompletedAt    string
	Type           string
}
