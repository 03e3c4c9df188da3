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

func (t *tx) GetCompatKey(ctx context.Context, organizationID string) (*engine.CompatKey, error) {
	return t.console().GetCompatKey(ctx, organizationID)
}

func (t *tx) CreateCompatIPN(ctx context.Context, ipn *engine.CompatIPN) error {
	return t.console().CreateCompatIPN(ctx, ipn)
}

func (t *tx) GetCompatIPN(ctx context.Context, linkID string) (*engine.CompatIPN, error) {
	return t.console().GetCompatIPN(ctx, linkID)
}

func (t *tx) LockCompatIPN(ctx context.Context, linkID string) (*engine.CompatIPN, error) {
	return t.console().LockCompatIPN(ctx, linkID)
}

func (t *tx) ClaimDueCompatIPNs(ctx context.Context, p engine.ClaimParams) ([]*engine.CompatIPN, error) {
	return t.console().ClaimDueCompatIPNs(ctx, p)
}

func (t *tx) UpdateCompatIPN(ctx context.Context, ipn *engine.CompatIPN) error {
	return t.console().UpdateCompatIPN(ctx, ipn)
}
