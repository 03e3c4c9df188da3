package engine

import (
	"context"
	"time"
)

// WebhookEndpoint is a URL of an organization that receives its events,
// signed with the endpoint's secret (Standard Webhooks).
type WebhookEndpoint struct {
	ID             string
	OrganizationID string
	URL            string
	// Secret is the sealed "whsec_..." secret; PreviousSecret, while
	// PreviousSecretExpiresAt is ahead, still signs too (rotation).
	Secret                  []byte
	PreviousSecret          []byte
	PreviousSecretExpiresAt time.Time
	Enabled                 bool
	// DisabledReason says why a disabled endpoint was disabled.
	DisabledReason string
	// FailingSince is when the endpoint's current run of failures began;
	// zero while it is healthy.
	FailingSince time.Time
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// Delivery statuses.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	// DeliveryExhausted deliveries ran out of retries (or their endpoint
	// answered 410); they are kept for manual redelivery.
	DeliveryExhausted = "exhausted"
)

// Delivery is one event to one endpoint: created with the event, in its
// transaction, for every enabled endpoint of the organization.
type Delivery struct {
	ID             string
	EventID        string
	EndpointID     string
	OrganizationID string
	Status         string
	// Attempts counts posts made; NextAttemptAt is when the next is due.
	Attempts      int
	NextAttemptAt time.Time
	LeaseOwner    string
	LeasedUntil   time.Time
	// LastStatusCode is the last HTTP status (0 if none came back);
	// LastError describes the last failure.
	LastStatusCode int
	LastError      string
	DeliveredAt    time.Time
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// DeliveryAttempt is the record of one post, for operators.
type DeliveryAttempt struct {
	DeliveryID  string
	AttemptedAt time.Time
	StatusCode  int
	Error       string
	Duration    time.Duration
}

// WebhookClient posts signed webhooks. The transport implements it over
// HTTP (15 s timeout, no redirects, destinations checked at dial time).
type WebhookClient interface {
	// Deliver posts one webhook and reports what happened. It never
	// returns an error: failures are in the result.
	Deliver(ctx context.Context, req WebhookRequest) WebhookResult
}

// WebhookRequest is one post of an event to an endpoint.
type WebhookRequest struct {
	URL string
	// MessageID is the webhook-id: the event's ID, the same on every retry.
	MessageID string
	// Timestamp is the webhook-timestamp, fresh for every attempt.
	Timestamp time.Time
	Body      []byte
	// Secrets are the "whsec_..." secrets to sign with (two during a
	// rotation, the newest first).
	Secrets []string
}

// WebhookResult is what a receiver answered.
type WebhookResult struct {
	// StatusCode is the HTTP status, 0 when no response came back.
	StatusCode int
	// RetryAfter is the receiver's Retry-After (429 and 503), 0 if none.
	RetryAfter time.Duration
	// Err describes a failure to get a response (refused destination,
	// timeout, connection error).
	Err error
}

// ClaimDeliveriesParams selects and leases due deliveries.
type ClaimDeliveriesParams struct {
	ClaimParams
	// PerEndpoint caps the deliveries claimed for any one endpoint.
	PerEndpoint int
	// ExcludeEndpoints are endpoints to skip (they have posts in flight).
	ExcludeEndpoints []string
}

// ListDeliveriesParams filters ListDeliveries. Empty strings match all.
type ListDeliveriesParams struct {
	OrganizationID string
	EventID        string
	EndpointID     string
	Status         string
	Limit          int // zero means no limit
}
