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
}
