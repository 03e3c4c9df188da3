package client

import (
	"context"
	"encoding/json"
	"math/big"
	"net/http"
	"reflect"
	"strings"
)

// CreateRedirectDeposit creates a redirect (hosted checkout) deposit
// (POST /v1/deposits, bearer only). Send the payer to the returned
// RedirectURL, never to the request's. Repeating it with the same
// MerchantID and fields returns the same deposit; different fields are
// *Error merchant_id_conflict.
func (c *Client) CreateRedirectDeposit(ctx context.Context, r RedirectDepositRequest) (*Deposit, error) {
	body, err := marshal(r)
	if err != nil {
		return nil, err
	}
	resp, err := c.do(ctx, call{method: http.MethodPost, path: "/v1/deposits", body: body})
	if err != nil {
		return nil, err
	}
	var d Deposit
	return &d, decode(resp, &d)
}

// CreateH2HDeposit creates an H2H deposit (POST /v1/deposits with
// checkout_mode "h2h", signed). created is true for 201 and false for 200,
// the replay of an identical earlier request (also after a retry whose
// first attempt reached the server). The same MerchantID with different
// fields is *Error merchant_id_conflict. Follow NextAction.Type.
func (c *Client) CreateH2HDeposit(ctx context.Context, r H2HDepositRequest) (*Deposit, bool, error) {
	body, err := marshal(h2hDepositBody{
		Amount: r.Amount, PaymentMethod: r.PaymentMethod, RedirectURL: r.RedirectURL,
		MerchantID: r.MerchantID, CheckoutMode: CheckoutH2H, Payer: h2hPayer{Phone: r.PayerPhone},
		Metadata: r.Metadata,
	})
	if err != nil {
		return nil, false, err
	}
	resp, err := c.do(ctx, call{method: http.MethodPost, path: "/v1/deposits", body: body, signed: true})
	if err != nil {
		return nil, false, err
	}
	var d Deposit
	if err := decode(resp, &d); err != nil {
		return nil, false, err
	}
	return &d, resp.status == http.StatusCreated, nil
}

// GetDeposit reads a deposit (GET /v1/deposits/{id}). The request is always
// signed: the server requires it for H2H deposits and ignores it for
// redirect ones, so the caller need not know which one id is.
func (c *Client) GetDeposit(ctx context.Context, id string) (*Deposit, error) {
	seg, err := pathID("deposit", id)
	if err != nil {
		return nil, err
	}
	resp, err := c.do(ctx, call{method: http.MethodGet, path: "/v1/deposits/" + seg, signed: true})
	if err != nil {
		return nil, err
	}
	var d Deposit
	return &d, decode(resp, &d)
}

// SubmitTransactionID submits the payer's transaction ID for verification
// (POST /v1/deposits/{id}/verify, signed). A new ID answers Queued (202):
// poll the deposit (WaitForDeposit) for the outcome. Submitting the same ID
// again is idempotent and answers the same attempt, resolved once finished
// (200). Refusals are *Error with codes deposit_terminal,
// attempt_in_progress, attempt_limit_reached, transaction_id_used or
// redirect_action.
func (c *Client) SubmitTransactionID(ctx context.Context, depositID, txID string) (*Verification, error) {
	seg, err := pathID("deposit", depositID)
	if err != nil {
		return nil, err
	}
	body, err := marshal(struct {
		ProviderTransactionID string `json:"provider_transaction_id"`
	}{txID})
	if err != nil {
		return nil, err
	}
	resp, err := c.do(ctx, call{method: http.MethodPost, path: "/v1/deposits/" + seg + "/verify", body: body, signed: true})
	if err != nil {
		return nil, err
	}
	var v Verification
	if err := decode(resp, &v); err != nil {
		return nil, err
	}
	v.Queued = resp.status == http.StatusAccepted
	return &v, nil
}

// CreateWithdrawal creates a payout (POST /v1/withdraws, bearer only). The
// answer is "processing"; only a later "succeeded" status (GetWithdrawal)
// or a verified withdraw.succeeded event proves the payout.
//
// Unlike deposits, a reused MerchantID is never a replay: it is *Error
// merchant_id_exists, and no second payout is made. When an attempt's
// answer was lost (a network failure, or a 503 during a database
// failover) and the retry answers merchant_id_exists, CreateWithdrawal
// looks the withdrawal up by MerchantID and returns it if it is the one
// r describes (same amount, phone, method and metadata): the lost attempt
// made it. Otherwise, or when the call itself failed for good with no
// answer, the outcome is for you to learn the same way:
// ListWithdrawals(ctx, ListParams{MerchantID: ...}). Never retry such a
// payout under a new MerchantID.
func (c *Client) CreateWithdrawal(ctx context.Context, r WithdrawalRequest) (*Withdrawal, error) {
	body, err := marshal(r)
	if err != nil {
		return nil, err
	}
	resp, err := c.do(ctx, call{method: http.MethodPost, path: "/v1/withdraws", body: body})
	if apiErr, ok := err.(*Error); ok && apiErr.Code == CodeMerchantIDExists && apiErr.Retried {
		if own := c.ownWithdrawal(ctx, r); own != nil {
			return own, nil
		}
	}
	if err != nil {
		return nil, err
	}
	var w Withdrawal
	return &w, decode(resp, &w)
}

// ownWithdrawal finds the withdrawal r's MerchantID names and returns it
// if it is the one r describes; nil if not, or if it cannot be read.
func (c *Client) ownWithdrawal(ctx context.Context, r WithdrawalRequest) *Withdrawal {
	page, err := c.ListWithdrawals(ctx, ListParams{MerchantID: r.MerchantID})
	if err != nil || len(page.Data) != 1 {
		return nil
	}
	w := page.Data[0]
	if w.MerchantID != r.MerchantID || w.PaymentMethod != r.PaymentMethod || !sameAmount(w.Amount, r.Amount) ||
		!samePhone(w.Phone, r.Phone) || !sameJSON(w.Metadata, r.Metadata) {
		return nil
	}
	return &w
}

// sameAmount compares two decimal strings by value ("500" and "500.00").
func sameAmount(a, b string) bool {
	x, okA := new(big.Rat).SetString(a)
	y, okB := new(big.Rat).SetString(b)
	return okA && okB && x.Cmp(y) == 0
}

// samePhone compares a stored number with a request's, which may carry
// the country code (8801XNNNNNNNN or +8801XNNNNNNNN for 01XNNNNNNNN).
func samePhone(stored, sent string) bool {
	switch {
	case len(sent) == 14 && strings.HasPrefix(sent, "+880"):
		sent = sent[3:]
	case len(sent) == 13 && strings.HasPrefix(sent, "880"):
		sent = sent[2:]
	}
	return stored == sent
}

// sameJSON compares metadata by value; none sent is the server's {}.
func sameJSON(stored, sent json.RawMessage) bool {
	if len(sent) == 0 {
		sent = json.RawMessage("{}")
	}
	var x, y any
	if json.Unmarshal(stored, &x) != nil || json.Unmarshal(sent, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// GetWithdrawal reads a withdrawal (GET /v1/withdraws/{id}, bearer only).
func (c *Client) GetWithdrawal(ctx context.Context, id string) (*Withdrawal, error) {
	seg, err := pathID("withdrawal", id)
	if err != nil {
		return nil, err
	}
	resp, err := c.do(ctx, call{method: http.MethodGet, path: "/v1/withdraws/" + seg})
	if err != nil {
		return nil, err
	}
	var w Withdrawal
	return &w, decode(resp, &w)
}

// Balance reads the organization's balance (GET /v1/balance, bearer).
func (c *Client) Balance(ctx context.Context) (*Balance, error) {
	resp, err := c.do(ctx, call{method: http.MethodGet, path: "/v1/balance"})
	if err != nil {
		return nil, err
	}
	var b Balance
	return &b, decode(resp, &b)
}

// SandboxPayment records a simulated wallet payment on a sandbox server
// (POST /sandbox/payments), to play the payer in tests: pay the recipient
// of next_action, then submit the same transaction ID. A transaction ID
// already recorded on the channel is *Error transaction_id_used. Against a
// live server this is *Error not_found.
func (c *Client) SandboxPayment(ctx context.Context, r SandboxPaymentRequest) error {
	wire := struct {
		SandboxPaymentRequest
		CompletedAt string `json:"completed_at,omitempty"`
	}{SandboxPaymentRequest: r}
	if wire.Status == "" {
		wire.Status = "completed"
	}
	if !r.CompletedAt.IsZero() {
		wire.CompletedAt = r.CompletedAt.UTC().Format("2006-01-02T15:04:05Z07:00")
	}
	body, err := marshal(wire)
	if err != nil {
		return err
	}
	_, err = c.do(ctx, call{method: http.MethodPost, path: "/sandbox/payments", body: body})
	return err
}

// SandboxSettleWithdrawal decides the outcome of a withdrawal's payout on a
// sandbox server (POST /sandbox/withdraws/{id}/settle): outcome is
// "succeeded" or "failed". Settling again the same way is a no-op. The
// withdrawal takes the outcome a moment later, when the server's payout
// worker picks it up: follow with WaitForWithdrawal.
func (c *Client) SandboxSettleWithdrawal(ctx context.Context, id, outcome string) error {
	seg, err := pathID("withdrawal", id)
	if err != nil {
		return err
	}
	body, err := marshal(struct {
		Outcome string `json:"outcome"`
	}{outcome})
	if err != nil {
		return err
	}
	_, err = c.do(ctx, call{method: http.MethodPost, path: "/sandbox/withdraws/" + seg + "/settle", body: body})
	return err
}

// SandboxOutage switches a sandbox server's simulated provider outage on or
// off (POST /sandbox/outage): while on, verification attempts wait as
// delayed and payouts are not sent, to exercise those paths.
func (c *Client) SandboxOutage(ctx context.Context, enabled bool) error {
	body, err := marshal(struct {
		Enabled bool `json:"enabled"`
	}{enabled})
	if err != nil {
		return err
	}
	_, err = c.do(ctx, call{method: http.MethodPost, path: "/sandbox/outage", body: body})
	return err
}
