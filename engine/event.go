package engine

import (
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
	var err error
	e.Payload, err = marshalNoEscape(eventBody{ID: e.ID, Type: typ, Timestamp: FormatTime(now), Data: data})
	return e, err
}
