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
	return r.insert(ctx, "compat key", `INSERT INTO compat_keys (`+compatKeyColumns+`) VALUES (?, ?, ?, ?, ?)`,
		k.OrganizationID, k.Hash, k.Sealed, k.Hint, k.CreatedAt)
}

func (r Rows) DeleteCompatKey(ctx context.Context, organizationID string) error {
	return r.execOne(ctx, `DELETE FROM compat_keys WHERE organization_id = ?`, organizationID)
}

const compatKeyColumns = `organization_id, hash, sealed, hint, created_at`

func (r Rows) compatKey(ctx context.Context, where string, arg any) (*engine.CompatKey, error) {
	var out *engine.CompatKey
	err := r.tx.QuerySQL(ctx, r.sql(`SELECT `+compatKeyColumns+` FROM compat_keys WHERE `+where), []any{arg},
		func(scan func(dest ...any) error) error {
			var k engine.CompatKey
			if err := scan(&k.OrganizationID, &k.Hash, &k.Sealed, &k.Hint, &k.CreatedAt); err != nil {
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

func (r Rows) GetCompatKeyByHash(ctx context.Context, hash []byte) (*engine.CompatKey, error) {
	return r.compatKey(ctx, `hash = ?`, hash)
}

func (r Rows) GetCompatKey(ctx context.Context, organizationID string) (*engine.CompatKey, error) {
	return r.compatKey(ctx, `organization_id = ?`, organizationID)
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

const compatIPNColumns = `link_id, organization_id, status, attempts, next_attempt_at, lease_owner, leased_until,
	last_status_code, last_error, created_at, updated_at`

func (r Rows) CreateCompatIPN(ctx context.Context, p *engine.CompatIPN) error {
	return r.insert(ctx, "compat IPN "+p.LinkID, `INSERT INTO compat_ipns (`+compatIPNColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		p.LinkID, p.OrganizationID, p.Status, p.Attempts, p.NextAttemptAt, p.LeaseOwner, p.LeasedUntil,
		p.LastStatusCode, p.LastError, p.CreatedAt, p.UpdatedAt)
}

func (r Rows) compatIPNs(ctx context.Context, query string, args ...any) ([]*engine.CompatIPN, error) {
	var out []*engine.CompatIPN
	err := r.tx.QuerySQL(ctx, r.sql(query), args, func(scan func(dest ...any) error) error {
		var p engine.CompatIPN
		if err := scan(&p.LinkID, &p.OrganizationID, &p.Status, &p.Attempts, &p.NextAttemptAt, &p.LeaseOwner, &p.LeasedUntil,
			&p.LastStatusCode, &p.LastError, &p.CreatedAt, &p.UpdatedAt); err != nil {
			return err
		}
		out = append(out, &p)
		return nil
	})
	return out, err
}

func (r Rows) compatIPN(ctx context.Context, lock, linkID string) (*engine.CompatIPN, error) {
	ps, err := r.compatIPNs(ctx, `SELECT `+compatIPNColumns+` FROM compat_ipns WHERE link_id = ?`+lock, linkID)
	if err == nil && len(ps) == 0 {
		err = engine.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return ps[0], nil
}

func (r Rows) GetCompatIPN(ctx context.Context, linkID string) (*engine.CompatIPN, error) {
	return r.compatIPN(ctx, "", linkID)
}

func (r Rows) LockCompatIPN(ctx context.Context, linkID string) (*engine.CompatIPN, error) {
	return r.compatIPN(ctx, r.lockRow, linkID)
}

// ClaimDueCompatIPNs reads the due rows through compat_ipns_due, skipping
// those another transaction holds (Postgres; SQLite's writer is alone),
// and leases them.
func (r Rows) ClaimDueCompatIPNs(ctx context.Context, p engine.ClaimParams) ([]*engine.CompatIPN, error) {
	if p.Limit <= 0 {
		return nil, nil
	}
	skip := ""
	if r.tx.Dialect() == "postgres" {
		skip = ` FOR UPDATE SKIP LOCKED`
	}
	due, err := r.compatIPNs(ctx, `SELECT `+compatIPNColumns+` FROM compat_ipns
		WHERE status = '`+engine.DeliveryPending+`' AND next_attempt_at <= ? AND leased_until <= ?
		ORDER BY next_attempt_at, link_id LIMIT ?`+skip, p.Now, p.Now, p.Limit)
	if err != nil {
		return nil, err
	}
	for _, d := range due {
		d.LeaseOwner, d.LeasedUntil = p.Owner, p.LeasedUntil
		if err := r.execOne(ctx, `UPDATE compat_ipns SET lease_owner = ?, leased_until = ? WHERE link_id = ?`, d.LeaseOwner, d.LeasedUntil, d.LinkID); err != nil {
			return nil, err
		}
	}
	return due, nil
}

// ListCompatIPNs reads an organization's IPNs newest first through
// compat_ipns_organization_created.
func (r Rows) ListCompatIPNs(ctx context.Context, organizationID string, limit int) ([]*engine.CompatIPN, error) {
	if limit <= 0 {
		return nil, nil
	}
	return r.compatIPNs(ctx, `SELECT `+compatIPNColumns+` FROM compat_ipns WHERE organization_id = ?
		ORDER BY created_at DESC, link_id DESC LIMIT ?`, organizationID, limit)
}

func (r Rows) UpdateCompatIPN(ctx context.Context, p *engine.CompatIPN) error {
	return r.execOne(ctx, `UPDATE compat_ipns SET status = ?, attempts = ?, next_attempt_at = ?, lease_owner = ?, leased_until = ?,
		last_status_code = ?, last_error = ?, updated_at = ? WHERE link_id = ?`,
		p.Status, p.Attempts, p.NextAttemptAt, p.LeaseOwner, p.LeasedUntil, p.LastStatusCode, p.LastError, p.UpdatedAt, p.LinkID)
}
