package engine

import (
	"encoding/json"
	"time"
)

// The wire shapes of the interface. They live in the engine, not the
// transport, because events must carry a resource exactly as its status
// endpoint returns it.

// RedirectDepositCreated is the create response of a redirect deposit.
type RedirectDepositCreated struct {
	ID            string          `json:"id"`
	Amount        string          `json:"amount"`
	PaymentMethod string          `json:"payment_method"`
	Status        string          `json:"status"`
	Metadata      json.RawMessage `json:"metadata"`
	MerchantID    string          `json:"merchant_id"`
	// RedirectURL is the hosted checkout, null once there is nothing to pay.
	RedirectURL *string `json:"redirect_url"`
	// RefundedAmount is the sum of its succeeded refunds (the refunds
	// extension).
	RefundedAmount string `json:"refunded_amount"`
}

// RedirectDepositStatus is the status response of a redirect deposit.
type RedirectDepositStatus struct {
	RedirectDepositCreated
	BankTransactionID *string `json:"bank_transaction_id"`
}

// H2HDeposit is the create and status response of an H2H deposit.
type H2HDeposit struct {
	ID                    string            `json:"id"`
	Amount                string            `json:"amount"`
	PaymentMethod         string            `json:"payment_method"`
	Status                string            `json:"status"`
	Metadata              json.RawMessage   `json:"metadata"`
	MerchantID            string            `json:"merchant_id"`
	CheckoutMode          string            `json:"checkout_mode"`
	ExpiresAt             string            `json:"expires_at"`
	NextAction            any               `json:"next_action"`
	Verification          VerificationState `json:"verification"`
	ProviderTransactionID *string           `json:"provider_transaction_id"`
	RefundedAmount        string            `json:"refunded_amount"`
}

// VerificationState is the verification object of an H2H deposit.
type VerificationState struct {
	State             string  `json:"state"`
	AttemptsUsed      int     `json:"attempts_used"`
	AttemptsRemaining int     `json:"attempts_remaining"`
	FailureCode       *string `json:"failure_code"`
}

// DisplayInstructionsAction is next_action when the payer pays a wallet.
type DisplayInstructionsAction struct {
	Type         string             `json:"type"`
	Channel      string             `json:"channel"`
	Operation    string             `json:"operation"`
	Recipient    Recipient          `json:"recipient"`
	QRPayload    *string            `json:"qr_payload"`
	Amount       string             `json:"amount"`
	Currency     string             `json:"currency"`
	Verification VerificationTarget `json:"verification"`
}

// Recipient is the wallet a payer pays.
type Recipient struct {
	Type  string  `json:"type"`
	Value string  `json:"value"`
	Name  *string `json:"name"`
}

// VerificationTarget tells the client where to submit the transaction ID.
type VerificationTarget struct {
	Endpoint       string   `json:"endpoint"`
	RequiredFields []string `json:"required_fields"`
}

// RedirectAction is next_action when the payer completes a hosted checkout.
type RedirectAction struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// DepositView returns a deposit as GET /v1/deposits/{id} shows it at now.
// apiPrefix is the host-relative prefix of the API ("/api"), which the verify
// endpoint of display_instructions includes.
func DepositView(d *Deposit, now time.Time, apiPrefix string) any {
	if d.CheckoutMode == CheckoutH2H {
		return h2hView(d, now, apiPrefix)
	}
	return RedirectDepositStatus{
		RedirectDepositCreated: redirectCreatedView(d, now),
		BankTransactionID:      nullable(d.ProviderTransactionID),
	}
}

// DepositCreatedView returns a deposit as POST /v1/deposits answers it.
func DepositCreatedView(d *Deposit, now time.Time, apiPrefix string) any {
	if d.CheckoutMode == CheckoutH2H {
		return h2hView(d, now, apiPrefix)
	}
	return redirectCreatedView(d, now)
}

func redirectCreatedView(d *Deposit, now time.Time) RedirectDepositCreated {
	v := RedirectDepositCreated{
		ID: d.ID, Amount: FormatAmount(d.Amount), PaymentMethod: d.PaymentMethod,
		Status: d.Status, Metadata: d.Metadata, MerchantID: d.MerchantID,
		RefundedAmount: FormatAmount(d.RefundedAmount),
	}
	if d.Actionable(now) {
		v.RedirectURL = nullable(d.CheckoutURL)
	}
	return v
}

func h2hView(d *Deposit, now time.Time, apiPrefix string) H2HDeposit {
	amount := FormatAmount(d.Amount)
	v := H2HDeposit{
		ID: d.ID, Amount: amount, PaymentMethod: d.PaymentMethod,
		Status: d.Status, Metadata: d.Metadata, MerchantID: d.MerchantID,
		CheckoutMode: CheckoutH2H, ExpiresAt: FormatTime(d.ExpiresAt),
		Verification: VerificationState{
			State:             d.VerificationState,
			AttemptsUsed:      d.AttemptsUsed,
			AttemptsRemaining: d.AttemptsRemaining(),
			FailureCode:       nullable(d.FailureCode),
		},
		ProviderTransactionID: nullable(d.ProviderTransactionID),
		RefundedAmount:        FormatAmount(d.RefundedAmount),
	}
	if !d.Actionable(now) {
		return v // next_action stays null
	}
	if d.Action == ActionRedirect {
		v.NextAction = RedirectAction{Type: ActionRedirect, URL: d.CheckoutURL}
		return v
	}
	v.NextAction = DisplayInstructionsAction{
		Type:      ActionDisplayInstructions,
		Channel:   d.Channel,
		Operation: d.Operation,
		Recipient: Recipient{Type: "phone", Value: d.RecipientPhone, Name: nullable(d.RecipientName)},
		QRPayload: nullable(d.QRPayload),
		Amount:    amount,
		Currency:  Currency,
		Verification: VerificationTarget{
			Endpoint:       apiPrefix + "/v1/deposits/" + d.ID + "/verify",
			RequiredFields: []string{"provider_transaction_id"},
		},
	}
	return v
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
