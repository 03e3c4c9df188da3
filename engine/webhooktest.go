package engine

import (
	"context"
	"strconv"
)

// EventWebhookTest is the type of a test post: never stored, never
// retried, sent only when an operator asks, so a receiver can check its
// URL and signature before real events come.
const EventWebhookTest = "webhook.test"

// AuditWebhookTest records that an endpoint was sent a test post.
const AuditWebhookTest = "webhook.test"

// TestWebhookEndpoint posts a signed webhook.test event to one of the
// organization's endpoints now, as deliveries are posted (same client,
// same signature), and reports what the receiver answered. Nothing is
// queued or retried; the post is audited with its answer.
func (e *Engine) TestWebhookEndpoint(ctx context.Context, orgID, endpointID string) (WebhookResult, error) {
	var ep *WebhookEndpoint
	err := e.readOne(ctx, func(ctx context.Context, tx Tx) (err error) {
		ep, err = tx.GetWebhookEndpoint(ctx, endpointID)
		return err
	})
	if err != nil || ep.OrganizationID != orgID {
		return WebhookResult{}, notFound(orNotFound(err), "webhook endpoint")
	}
	if e.cfg.Webhooks == nil {
		return WebhookResult{}, Errorf(CodeConflict, "webhooks: this payd posts no webhooks")
	}
	secrets, err := e.endpointSecrets(ep)
	if err != nil {
		return WebhookResult{}, err
	}
	now := e.now()
	ev, err := newEvent(orgID, EventWebhookTest, ep.ID, map[string]string{"endpoint_id": ep.ID}, now)
	if err != nil {
		return WebhookResult{}, err
	}
	res := e.cfg.Webhooks.Deliver(ctx, WebhookRequest{URL: ep.URL, MessageID: ev.ID, Timestamp: now, Body: ev.Payload, Secrets: secrets})
	answer := "no response"
	if res.StatusCode != 0 {
		answer = "HTTP " + strconv.Itoa(res.StatusCode)
	}
	err = e.inTx(ctx, func(ctx context.Context, tx Tx) error {
		return e.audit(ctx, tx, AuditWebhookTest, orgID, ep.ID, map[string]string{"answer": answer})
	})
	return res, err
}

// orNotFound is err, or ErrNotFound when there is none (a row of another
// organization is not found).
func orNotFound(err error) error {
	if err == nil {
		return ErrNotFound
	}
	return err
}
