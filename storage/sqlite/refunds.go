package sqlite

import (
	"context"
	"errors"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/storage/internal/pagequery"
	"github.com/payd-engine/payd/storage/internal/rowset"
	"github.com/payd-engine/payd/storage/internal/schema"
)

// Refunds (migration 0022).

const refundColumns = schema.RefundColumns

// claimRefundsQuery leases the due refunds as claimPayoutsQuery does
// withdrawals, through the refunds_due partial index: arguments owner,
// leased until, now, now, limit.
const claimRefundsQuery = `UPDATE refunds SET lease_owner = ?, leased_until = ?
	WHERE id IN (
		SELECT id FROM refunds
		WHERE status = '` + engine.RefundProcessing + `' AND next_run_at <= ? AND leased_until <= ?
		ORDER BY next_run_at, id LIMIT ?)
	RETURNING ` + refundColumns

func scanRefund(row scanner) (*engine.Refund, error) {
	var r engine.Refund
	err := row.Scan(&r.ID, &r.OrganizationID, &r.DepositID, &r.MerchantID, decimalCol{&r.Amount}, &r.AmountOmitted,
		&r.Reason, bytesCol{&r.Metadata}, &r.Status, &r.FailureCode, &r.FailureReason, &r.DepositH2H, &r.Step,
		&r.ProviderReference, &r.Tries, epochTimeCol{&r.NextRunAt}, &r.LeaseOwner, epochTimeCol{&r.LeasedUntil},
		timeCol{&r.CreatedAt}, timeCol{&r.UpdatedAt})
	if err != nil {
		return nil, interpretError(err)
	}
	return &r, nil
}

// CreateRefund relies on UNIQUE (merchant_id, organization_id) for
// ErrDuplicate.
func (t *tx) CreateRefund(ctx context.Context, r *engine.Refund) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO refunds (`+refundColumns+`) VALUES (`+placeholders(20)+`)`,
		r.ID, r.OrganizationID, r.DepositID, r.MerchantID, r.Amount.String(), r.AmountOmitted,
		r.Reason, string(r.Metadata), r.Status, r.FailureCode, r.FailureReason, r.DepositH2H, r.Step,
		r.ProviderReference, r.Tries, epochMicros(r.NextRunAt), r.LeaseOwner, epochMicros(r.LeasedUntil),
		micros(r.CreatedAt), micros(r.UpdatedAt))
	return interpretError(err)
}

func (t *tx) GetRefund(ctx context.Context, organizationID, id string) (*engine.Refund, error) {
	return scanRefund(t.tx.QueryRowContext(ctx,
		`SELECT `+refundColumns+` FROM refunds WHERE id = ? AND organization_id = ?`, id, organizationID))
}

// GetRefundByMerchantID reads through UNIQUE (merchant_id, organization_id).
func (t *tx) GetRefundByMerchantID(ctx context.Context, organizationID, merchantID string) (*engine.Refund, error) {
	return scanRefund(t.tx.QueryRowContext(ctx,
		`SELECT `+refundColumns+` FROM refunds WHERE merchant_id = ? AND organization_id = ?`, merchantID, organizationID))
}

// updateRefundSet is what a refund's progress writes; the merchant's
// request (deposit, amount, reason, metadata) never changes.
const updateRefundSet = `UPDATE refunds SET status = ?, failure_code = ?, failure_reason = ?, step = ?,
	provider_reference = ?, tries = ?, next_run_at = ?, lease_owner = ?, leased_until = ?, updated_at = ?
	WHERE id = ?`

func refundUpdateArgs(r *engine.Refund) []any {
	return []any{r.Status, r.FailureCode, r.FailureReason, r.Step, r.ProviderReference, r.Tries,
		epochMicros(r.NextRunAt), r.LeaseOwner, epochMicros(r.LeasedUntil), micros(r.UpdatedAt), r.ID}
}

func (t *tx) UpdateRefund(ctx context.Context, r *engine.Refund) error {
	return t.exec(ctx, updateRefundSet, refundUpdateArgs(r)...)
}

// UpdateLeasedRefund is UpdateRefund on condition of the lease
// (engine.Tx).
func (t *tx) UpdateLeasedRefund(ctx context.Context, r *engine.Refund, owner string, leasedUntil time.Time) error {
	args := append(refundUpdateArgs(r), owner, epochMicros(leasedUntil))
	err := t.exec(ctx, updateRefundSet+` AND status = '`+engine.RefundProcessing+`' AND lease_owner = ? AND leased_until = ?`, args...)
	if errors.Is(err, engine.ErrNotFound) {
		return engine.ErrLeaseLost
	}
	return err
}

// ClaimDueRefunds selects and leases in one statement, as ClaimDuePayouts
// does. A Limit of zero or less claims nothing.
func (t *tx) ClaimDueRefunds(ctx context.Context, p engine.ClaimParams) ([]*engine.Refund, error) {
	if p.Limit <= 0 {
		return nil, nil
	}
	now := micros(p.Now)
	out, err := queryList(ctx, t, scanRefund, claimRefundsQuery, p.Owner, epochMicros(p.LeasedUntil), now, now, p.Limit)
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
