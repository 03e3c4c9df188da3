package paydmock

import (
	"context"

	"github.com/payd-engine/payd/engine"
)

// WebhookClient is an engine.WebhookClient whose Deliver calls DeliverFunc.
type WebhookClient struct {
	// DeliverFunc answers Deliver: one webhook post and its outcome.
	DeliverFunc func(ctx context.Context, req engine.WebhookRequest) engine.WebhookResult
}

var _ engine.WebhookClient = (*WebhookClient)(nil)

// Deliver calls DeliverFunc.
func (c *WebhookClient) Deliver(ctx context.Context, req engine.WebhookRequest) engine.WebhookResult {
	must(c.DeliverFunc != nil, "WebhookClient.DeliverFunc")
	return c.DeliverFunc(ctx, req)
}
