package client

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"strings"
	"time"
)

// Refunds (the contract's extension): money of a succeeded deposit given
// back to its payer, in full or in parts.

// RefundRequest asks for a refund of a deposit.
type RefundRequest struct {
	// Amount is a BDT decimal string; empty refunds all that is still
	// refundable (the deposit's amount less its refunds not failed).
	Amount string `json:"amount,omitempty"`
	// MerchantID is your ID of the refund and its idempotency key: the same
	// MerchantID, deposit and Amount again is the same refund.
	MerchantID string `json:"merchant_id"`
	// Reason is optional, at most 500 characters.
	Reason   string          `json:"reason,omitempty"`
	Metadata json.RawMessage `json:"metadata,omitempty"` // a JSON object of yours, returned as sent
}

// Refund statuses.
const (
	RefundProcessing = "processing"
	RefundSucceeded  = "succeeded"
	RefundFailed     = "failed"
)

// Refund is a refund as the server returns it. Only Status "succeeded" (or
// a verified refund.succeeded event) proves the payer was paid back.
type Refund struct {
	ID        string `json:"id"`         // the refund's ID (rf_...)
	DepositID string `json:"deposit_id"` // the deposit it gives back
	// Amount is the canonical two-decimal string, e.g. "250.00".
	Amount     string          `json:"amount"`
	Status     string          `json:"status"`      // processing, succeeded or failed
	MerchantID string          `json:"merchant_id"` // your ID of it
	Reason     *string         `json:"reason"`      // as sent, or nil
	Metadata   json.RawMessage `json:"metadata"`    // as sent
	// FailureCode is set once the refund failed ("provider_declined").
	FailureCode *string   `json:"failure_code"`
	CreatedAt   time.Time `json:"created_at"` // when it was created
}

// IsTerminal reports whether the refund finished (succeeded or failed).
func (r *Refund) IsTerminal() bool {
	return r.Status == RefundSucceeded || r.Status == RefundFailed
}

// CreateRefund refunds a succeeded deposit (POST
// /v1/deposits/{id}/refunds, signed: the server requires it for an H2H
// deposit). created is true for 201 and false for 200, the replay of an
// earlier request with the same MerchantID, deposit and Amount. Refusals
// are *Error with codes deposit_not_refundable, merchant_id_conflict,
// refund_exceeds_deposit, insufficient_balance (403, nothing held) or
// method_unavailable (503).
func (c *Client) CreateRefund(ctx context.Context, depositID string, r RefundRequest) (*Refund, bool, error) {
	seg, err := pathID("deposit", depositID)
	if err != nil {
		return nil, false, err
	}
	body, err := marshal(r)
	if err != nil {
		return nil, false, err
	}
	resp, err := c.do(ctx, call{method: http.MethodPost, path: "/v1/deposits/" + seg + "/refunds", body: body, signed: true})
	if err != nil {
		return nil, false, err
	}
	var out Refund
	if err := decode(resp, &out); err != nil {
		return nil, false, err
	}
	return &out, resp.status == http.StatusCreated, nil
}

// GetRefund reads a refund (GET /v1/refunds/{id}, signed as its deposit's
// read).
func (c *Client) GetRefund(ctx context.Context, id string) (*Refund, error) {
	seg, err := pathID("refund", id)
	if err != nil {
		return nil, err
	}
	resp, err := c.do(ctx, call{method: http.MethodGet, path: "/v1/refunds/" + seg, signed: true})
	if err != nil {
		return nil, err
	}
	var out Refund
	return &out, decode(resp, &out)
}

// ListRefunds reads a page of refunds (GET /v1/refunds, signed), all or
// one deposit's (ListParams.DepositID).
func (c *Client) ListRefunds(ctx context.Context, p ListParams) (*List[Refund], error) {
	return list[Refund](ctx, c, "/v1/refunds", p, true)
}

// Refunds returns every refund p selects, a page at a time.
func (c *Client) Refunds(ctx context.Context, p ListParams) iter.Seq2[Refund, error] {
	return iterate(ctx, p, c.ListRefunds, func(r Refund) string { return r.ID })
}

// WaitForRefund polls GetRefund until the refund succeeded or failed,
// like WaitForWithdrawal.
func (c *Client) WaitForRefund(ctx context.Context, id string, o WaitOptions) (*Refund, error) {
	return poll(ctx, o, func() (*Refund, error) { return c.GetRefund(ctx, id) }, (*Refund).IsTerminal)
}

// SandboxSettleRefund decides the outcome of a refund on a sandbox server
// (POST /sandbox/refunds/{id}/settle): outcome is "succeeded" or "failed".
// Follow with WaitForRefund.
func (c *Client) SandboxSettleRefund(ctx context.Context, id, outcome string) error {
	seg, err := pathID("refund", id)
	if err != nil {
		return err
	}
	body, err := marshal(struct {
		Outcome string `json:"outcome"`
	}{outcome})
	if err != nil {
		return err
	}
	_, err = c.do(ctx, call{method: http.MethodPost, path: "/sandbox/refunds/" + seg + "/settle", body: body})
	return err
}

// Refund decodes the data of a refund.* event.
func (e *Event) Refund() (*Refund, error) {
	if !strings.HasPrefix(e.Type, "refund.") {
		return nil, fmt.Errorf("payd: event %s is %s, not a refund event", e.ID, e.Type)
	}
	var r Refund
	if err := json.Unmarshal(e.Data, &r); err != nil {
		return nil, fmt.Errorf("payd: event %s data: %w", e.ID, err)
	}
	return &r, nil
}
