package consolesql

import (
	"context"

	"github.com/payd-engine/payd/engine"
)

// The UddoktaPay-compatible checkout's rows (migration 0023).

func (r Rows) PutCompatKey(ctx context.Context, k *engine.CompatKey) error {
	if _, err := r.tx.ExecSQL(ctx, r.sql(`DELETE FROM compat_keys WHERE organization_id = ?`), k.OrganizationID); err != nil {
		return err
	}
	return r.insert(ctx, "compat key", `INSERT INTO compat_keys (organization_id, hash, hint, created_at) VALUES (?, ?, ?, ?)`,
		k.OrganizationID, k.Hash, k.Hint, k.CreatedAt)
}

func (r Rows) DeleteCompatKey(ctx context.Context, organizationID string) error {
	return r.execOne(ctx, `DELETE FROM compat_keys WHERE organization_id = ?`, organizationID)
}

func (r Rows) GetCompatKeyByHash(ctx context.Context, hash []byte) (*engine.CompatKey, error) {
	var out *engine.CompatKey
	err := r.tx.QuerySQL(ctx, r.sql(`SELECT organization_id, hash, hint, created_at FROM compat_keys WHERE hash = ?`), []any{hash},
		func(scan func(dest ...any) error) error {
			var k engine.CompatKey
			if err := scan(&k.OrganizationID, &k.Hash, &k.Hint, &k.CreatedAt); err != nil {
				return err
			}
			out = &k
			return nil
		})
	if err == nil && out == nil {
		err = engine.ErrNotFound
	}
	return out, err
}

const compatInvoiceColumns = `link_id, organization_id, full_name, email, metadata, redirect_url, return_type, cancel_url, webhook_url, created_at`

func (r Rows) CreateCompatInvoice(ctx context.Context, inv *engine.CompatInvoice) error {
	return r.insert(ctx, "compat invoice "+inv.LinkID, `INSERT INTO compat_invoices (`+compatInvoiceColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		inv.LinkID, inv.OrganizationID, inv.FullName, inv.Email, string(inv.Metadata), inv.RedirectURL, inv.ReturnType,
		inv.CancelURL, inv.WebhookURL, inv.CreatedAt)
}

func (r Rows) GetCompatInvoice(ctx context.Context, organizationID, linkID string) (*engine.CompatInvoice, error) {
	var out *engine.CompatInvoice
	err := r.tx.QuerySQL(ctx, r.sql(`SELECT `+compatInvoiceColumns+` FROM compat_invoices WHERE link_id = ? AND organization_id = ?`),
		[]any{linkID, organizationID}, func(scan func(dest ...any) error) error {
			var inv engine.CompatInvoice
			var metadata string
			if err := scan(&inv.LinkID, &inv.OrganizationID, &inv.FullName, &inv.Email, &metadata, &inv.RedirectURL,
				&inv.ReturnType, &inv.CancelURL, &inv.WebhookURL, &inv.CreatedAt); err != nil {
				return err
			}
			inv.Metadata = []byte(metadata)
			out = &inv
			return nil
		})
	if err == nil && out == nil {
		err = engine.ErrNotFound
	}
	return out, err
}
