package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/payd-engine/payd/transport/webhook"
)

// Event types payd sends.
const (
	EventDepositSucceeded  = "deposit.succeeded"
	EventDepositFailed     = "deposit.failed"
	EventDepositExpired    = "deposit.expired"
	EventWithdrawCreated   = "withdraw.created"
	EventWithdrawSucceeded = "withdraw.succeeded"
	EventWithdrawFailed    = "withdraw.failed"
	EventRefundCreated     = "refund.created"
	EventRefundSucceeded   = "refund.succeeded"
	EventRefundFailed      = "refund.failed"
	EventDepositRefunded   = "deposit.refunded"
)

// MaxWebhookBytes bounds the webhook body VerifyWebhook reads; payd's
// events are a few KiB.
const MaxWebhookBytes = 1 << 20

// ErrWebhookTooLarge is returned for a webhook body over MaxWebhookBytes.
var ErrWebhookTooLarge = errors.New("payd: webhook body too large")

// Event is a verified webhook delivery. Deliveries are at least once:
// process each ID once.
type Event struct {
	// ID is the event ID (also the webhook-id header), the same on every
	// retry of the delivery: the key for deduplication.
	ID string `json:"id"`
	// Type is one of the Event constants.
	Type string `json:"type"`
	// Timestamp is when the change happened.
	Timestamp time.Time `json:"timestamp"`
	// Data is the resource exactly as its status endpoint showed it at the
	// change; decode it with Deposit or Withdrawal.
	Data json.RawMessage `json:"data"`
}

// VerifyWebhook reads a webhook request's body (at most MaxWebhookBytes),
// verifies its Standard Webhooks signature with the endpoint secret
// ("whsec_...") before parsing anything, and returns the event. Answer 2xx
// only after the event is safely handled; answer 4xx when this fails.
func VerifyWebhook(secret string, r *http.Request) (*Event, error) {
	if r.Body == nil {
		return ParseWebhook(secret, r.Header, nil, time.Now())
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxWebhookBytes+1))
	if err != nil {
		return nil, fmt.Errorf("payd: read webhook: %w", err)
	}
	if len(body) > MaxWebhookBytes {
		return nil, ErrWebhookTooLarge
	}
	return ParseWebhook(secret, r.Header, body, time.Now())
}

// ParseWebhook is VerifyWebhook for a body already read (e.g. by a
// framework): it verifies header and body at time now, then parses.
func ParseWebhook(secret string, header http.Header, body []byte, now time.Time) (*Event, error) {
	if err := webhook.Verify(secret, header, body, now); err != nil {
		return nil, fmt.Errorf("payd: webhook: %w", err)
	}
	var e Event
	if err := json.Unmarshal(body, &e); err != nil {
		return nil, fmt.Errorf("payd: webhook body: %w", err)
	}
	if e.ID == "" || e.Type == "" || len(e.Data) == 0 {
		return nil, errors.New("payd: webhook body: missing id, type or data")
	}
	if id := header.Get(webhook.HeaderID); id != e.ID {
		return nil, fmt.Errorf("payd: webhook: body id %q differs from webhook-id %q", e.ID, id)
	}
	return &e, nil
}

// Deposit decodes the data of a deposit.* event.
func (e *Event) Deposit() (*Deposit, error) {
	if !strings.HasPrefix(e.Type, "deposit.") {
		return nil, fmt.Errorf("payd: event %s is %s, not a deposit event", e.ID, e.Type)
	}
	var d Deposit
	if err := json.Unmarshal(e.Data, &d); err != nil {
		return nil, fmt.Errorf("payd: event %s data: %w", e.ID, err)
	}
	return &d, nil
}

// Withdrawal decodes the data of a withdraw.* event.
func (e *Event) Withdrawal() (*Withdrawal, error) {
	if !strings.HasPrefix(e.Type, "withdraw.") {
		return nil, fmt.Errorf("payd: event %s is %s, not a withdrawal event", e.ID, e.Type)
	}
	var w Withdrawal
	if err := json.Unmarshal(e.Data, &w); err != nil {
		return nil, fmt.Errorf("payd: event %s data: %w", e.ID, err)
	}
	return &w, nil
}
