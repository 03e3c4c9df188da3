package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"time"
)

// Event types of the contract.
const (
	EventDepositSucceeded  = "deposit.succeeded"
	EventDepositFailed     = "deposit.failed"
	EventDepositExpired    = "deposit.expired"
	EventWithdrawCreated   = "withdraw.created"
	EventWithdrawSucceeded = "withdraw.succeeded"
	EventWithdrawFailed    = "withdraw.failed"
	// Refunds (the contract's extension): the refund is the data of the
	// first three, the deposit of deposit.refunded.
	EventRefundCreated   = "refund.created"
	EventRefundSucceeded = "refund.succeeded"
	EventRefundFailed    = "refund.failed"
	EventDepositRefunded = "deposit.refunded"
)

// Event is a row of the outbox: written in the transaction of the state
// change it reports, so an event exists exactly when its change committed.
type Event struct {
	ID             string
	OrganizationID string
	Type           string
	// ResourceID is the deposit or withdrawal the event is about.
	ResourceID string
	// Payload is the webhook body: {"id","type","timestamp","data"}, with
	// data the resource as its status endpoint showed it at the change.
	Payload   []byte
	CreatedAt time.Time
}

// eventBody is the JSON shape of an event.
type eventBody struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Timestamp string `json:"timestamp"`
	Data      any    `json:"data"`
}

func newEvent(orgID, typ, resourceID string, data any, now time.Time) (*Event, error) {
	e := &Event{
		ID: NewID(PrefixEvent, now), OrganizationID: orgID, Type: typ,
		ResourceID: resourceID, CreatedAt: now,
	}
	// An H2H deposit's view encodes itself as encoding/json would (the
	// verdict's event, on every verified deposit), without reflection.
	if a, ok := data.(interface{ AppendJSON([]byte) ([]byte, error) }); ok {
		b := make([]byte, 0, 1024)
		b = appendJSONString(append(b, `{"id":`...), e.ID)
		b = appendJSONString(append(b, `,"type":`...), typ)
		b = appendJSONString(append(b, `,"timestamp":`...), FormatTime(now))
		if b, err := a.AppendJSON(append(b, `,"data":`...)); err == nil {
			e.Payload = append(b, '}')
			return e, nil
		}
	}
	var err error
	e.Payload, err = marshalNoEscape(eventBody{ID: e.ID, Type: typ, Timestamp: FormatTime(now), Data: data})
	return e, err
}

// writeEvent writes an event to the outbox, and a delivery of it for every
// enabled webhook endpoint, in the caller's transaction.
func (e *Engine) writeEvent(ctx context.Context, tx Tx, orgID, typ, resourceID string, data any, now time.Time) error {
	ev, err := newEvent(orgID, typ, resourceID, data, now)
	if err != nil {
		return err
	}
	if err := tx.CreateEvent(ctx, ev); err != nil {
		return err
	}
	n, err := fanOut(ctx, tx, ev, now)
	if n > 0 {
		e.deliveriesQueued.Store(true)
	}
	return err
}

// fanOut queues an event for every enabled endpoint of its organization,
// in the event's own transaction, and returns how many it queued. A batched
// function's transaction lists the endpoints once (sharedTx).
func fanOut(ctx context.Context, tx Tx, ev *Event, now time.Time) (int, error) {
	eps, err := sharedFrom(ctx).webhookEndpoints(ctx, tx, ev.OrganizationID)
	if err != nil {
		return 0, err
	}
	for _, ep := range eps {
		if err := tx.CreateDelivery(ctx, newDelivery(ev, ep.ID, now)); err != nil {
			return 0, err
		}
	}
	return len(eps), nil
}

// marshalNoEscape is json.Marshal without HTML escaping, so metadata strings
// in events stay byte for byte what the merchant sent.
func marshalNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
