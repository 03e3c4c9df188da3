package postgres

import (
	"context"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/storage/internal/pagequery"
	"github.com/payd-engine/payd/storage/internal/rowset"
	"github.com/payd-engine/payd/storage/internal/schema"
)

// Refunds (migration 0022).

const refundColumns = schema.RefundColumns

// claimRefundsQuery leases the due refunds as claimPayoutsQuery does
// withdrawals: never run and due again in CTEs of their own, each walking
// the refunds_due partial index under its own bound, locking with SKIP
// LOCKED. Arguments owner, leased until, now, limit.
const claimRefundsQuery = `WITH never_run AS MATERIALIZED (
		SELECT id FROM refunds
		WHERE status = '` + engine.RefundProcessing + `' AND next_run_at IS NULL
			AND (leased_until IS NULL OR leased_until <= $3)
		ORDER BY next_run_at NULLS FIRST, id LIMIT $4
		FOR NO KEY UPDATE SKIP LOCKED),
	due_again AS MATERIALIZED (
		SELECT id FROM refunds
		WHERE status = '` + engine.RefundProcessing + `' AND next_run_at <= $3
			AND (leased_until IS NULL OR leased_until <= $3)
		ORDER BY next_run_at NULLS FIRST, id LIMIT $4
		FOR NO KEY UPDATE SKIP LOCKED)
	UPDATE refunds SET lease_owner = $1, leased_until = $2
	WHERE id = ANY (ARRAY (SELECT id FROM never_run UNION ALL SELECT id FROM due_again LIMIT $4))
	RETURNING ` + refundColumns

func scanRefund(row scanner) (*engine.Refund, error) {
	var r engine.Refund
	err := row.Scan(&r.ID, &r.OrganizationID, &r.DepositID, &r.MerchantID, &r.Amount, &r.AmountOmitted,
		&r.Reason, bytesCol{&r.Metadata}, &r.Status, &r.FailureCode, &r.FailureReason, &r.DepositH2H, &r.Step,
		&r.ProviderReference, &r.Tries, timeCol{&r.NextRunAt}, &r.LeaseOwner, timeCol{&r.LeasedUntil},
		timeCol{&r.CreatedAt}, timeCol{&r.UpdatedAt})
	if err != nil {
		return nil, interpretError(err)
	}
	return &r, nil
}

// CreateRefund relies on UNIQUE (merchant_id, organization_id) for
// ErrDuplicate.
func (t *tx) CreateRefund(ctx context.Context, r *engine.Refund) error {
	return t.insert(ctx, "refund "+r.ID, `INSERT INTO refunds (`+refundColumns+`) VALUES (`+params(20)+`)`,
		r.ID, r.OrganizationID, r.DepositID, r.MerchantID, r.Amount, r.AmountOmitted,
		r.Reason, string(r.Metadata), r.Status, r.FailureCode, r.FailureReason, r.DepositH2H, r.Step,
		r.ProviderReference, r.Tries, zeroNull(r.NextRunAt), r.LeaseOwner, zeroNull(r.LeasedUntil),
		r.CreatedAt, r.UpdatedAt)
}

func (t *tx) GetRefund(ctx context.Context, organizationID, id string) (*engine.Refund, error) {
	return scanRefund(t.tx.QueryRow(ctx,
		`SELECT `+refundColumns+` FROM refunds WHERE id = $1 AND `+sameOrganization+`$2`, id, organizationID))
}

// GetRefundByMerchantID reads through UNIQUE (merchant_id,
// organization_id), never an index that starts with organization_id.
func (t *tx) GetRefundByMerchantID(ctx context.Context, organizationID, merchantID string) (*engine.Refund, error) {
	return scanRefund(t.tx.QueryRow(ctx, getRefundByMerchantIDQuery, organizationID, merchantID))
}

const getRefundByMerchantIDQuery = `SELECT ` + refundColumns + ` FROM refunds WHERE merchant_id = $2 AND ` + sameOrganization + `$1`

// updateRefundSet is what a refund's progress writes; the merchant's
// request (deposit, amount, reason, metadata) never changes.
const updateRefundSet = `UPDATE refunds SET status = $1, failure_code = $2, failure_reason = $3, step = $4,
	provider_reference = $5, tries = $6, next_run_at = $7, lease_owner = $8, leased_until = $9, updated_at = $10
	WHERE id = $11`

func refundUpdateArgs(r *engine.Refund) []any {
	return []any{r.Status, r.FailureCode, r.FailureReason, r.Step, r.ProviderReference, r.Tries,
		zeroNull(r.NextRunAt), r.LeaseOwner, zeroNull(r.LeasedUntil), r.UpdatedAt, r.ID}
}

func (t *tx) UpdateRefund(ctx context.Context, r *engine.Refund) error {
	return t.exec(ctx, updateRefundSet, refundUpdateArgs(r)...)
}

// UpdateLeasedRefund is UpdateRefund on condition of the lease
// (engine.Tx), checked on the row as the UPDATE locks it.
func (t *tx) UpdateLeasedRefund(ctx context.Context, r *engine.Refund, owner string, leasedUntil time.Time) error {
	return t.execChecked(ctx, leaseHeld,
		updateRefundSet+` AND status = '`+engine.RefundProcessing+`' AND lease_owner = $12 AND leased_until = $13`,
		append(refundUpdateArgs(r), owner, leasedUntil)...)
}

// ClaimDueRefunds selects, locks and leases in one statement
// (claimRefundsQuery). A Limit of zero or less claims nothing.
func (t *tx) ClaimDueRefunds(ctx context.Context, p engine.ClaimParams) ([]*engine.Refund, error) {
	if p.Limit <= 0 {
		return nil, nil
	}
	out, err := claimList(ctx, t, scanRefund, claimRefundsQuery, p.Owner, zeroNull(p.LeasedUntil), p.Now, p.Limit)
	if err != nil {
		return nil, err
	}
	rowset.SortDue(out, func(x *engine.Refund) (time.Time, string) { return x.NextRunAt, x.ID })
	return out, nil
}

func (t *tx) ListRefundsPage(ctx context.Context, p engine.PageParams) ([]*engine.Refund, error) {
	q, args := pagequery.Refunds(dialect, p)
	return queryList(ctx, t, scanRefund, q, args...)
}
