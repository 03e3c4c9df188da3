package postgres

import (
	"context"

	"github.com/payd-engine/payd/engine"
)

// The UddoktaPay-compatible checkout's rows (migration 0023), written once
// in consolesql.

func (t *tx) PutCompatKey(ctx context.Context, k *engine.CompatKey) error {
	return t.console().PutCompatKey(ctx, k)
}

func (t *tx) DeleteCompatKey(ctx context.Context, organizationID string) error {
	return t.console().DeleteCompatKey(ctx, organizationID)
}

func (t *tx) GetCompatKeyByHash(ctx context.Context, hash []byte) (*engine.CompatKey, error) {
	return t.console().GetCompatKeyByHash(ctx, hash)
}

func (t *tx) CreateCompatInvoice(ctx context.Context, inv *engine.CompatInvoice) error {
	return t.console().CreateCompatInvoice(ctx, inv)
}

func (t *tx) GetCompatInvoice(ctx context.Context, organizationID, linkID string) (*engine.CompatInvoice, error) {
	return t.console().GetCompatInvoice(ctx, organizationID, linkID)
}
