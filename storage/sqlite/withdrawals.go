package sqlite

import (
	"context"
	"errors"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/storage/internal/rowset"
	"github.com/payd-engine/payd/storage/internal/schema"
)

// Withdrawals.

const withdrawalColumns = schema.WithdrawalColumns

// claimPayoutsQuery leases the due withdrawals: arguments owner, leased
// until, now, now, limit. Like claimQuery, it spells the withdrawals_due
// partial index's WHERE clause as a literal so that the subquery walks that
// index in order and stops after limit unleased rows.
const claimPayoutsQuery = `UPDATE withdrawals SET lease_owner = ?, leased_until = ?
	WHERE id IN (
		SELECT id FROM withdrawals
		WHERE status = '` + engine.WithdrawalProcessing + `' AND next_run_at <= ? AND leased_until <= ?
		ORDER BY next_run_at, id LIMIT ?)
	RETURNING ` + withdrawalColumns

func scanWithdrawal(row scanner) (*engine.Withdrawal, error) {
	var w engine.Withdrawal
	err := row.Scan(&w.ID, &w.OrganizationID, &w.MerchantID, decimalCol{&w.Amount}, decimalCol{&w.Commission},
		&w.PaymentMethod, &w.Account, bytesCol{&w.Metadata}, &w.Status, &w.PayoutStep, &w.ProviderReference,
		&w.FailureReason, &w.Tries, epochTimeCol{&w.NextRunAt}, &w.LeaseOwner, epochTimeCol{&w.LeasedUntil},
		timeCol{&w.CreatedAt}, timeCol{&w.UpdatedAt})
	if err != nil {
		return nil, interpretError(err)
	}
	return &w, nil
}

// LockOrganization is a plain GetOrganization: in SQLite the write
// transaction itself is the lock. InTx begins IMMEDIATE, taking the
// database's one write lock up front, so no other writer (in this process or
// another) can move the organization's balance until this transaction ends;
// a balance checked under it stays true. In a ReadTx it reads the snapshot.
func (t *tx) LockOrganization(ctx context.Context, id string) (*engine.Organization, error) {
	return t.GetOrganization(ctx, id)
}

// CreateWithdrawal relies on UNIQUE (organization_id, merchant_id) for
// ErrDuplicate: it is what guarantees one payout per merchant_id, even when
// two processes race.
func (t *tx) CreateWithdrawal(ctx context.Context, w *engine.Withdrawal) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO withdrawals (`+withdrawalColumns+`) VALUES (`+placeholders(18)+`)`,
		w.ID, w.OrganizationID, w.MerchantID, w.Amount.String(), w.Commission.String(), w.PaymentMethod, w.Account,
		string(w.Metadata), w.Status, w.PayoutStep, w.ProviderReference, w.FailureReason,
		w.Tries, epochMicros(w.NextRunAt), w.LeaseOwner, epochMicros(w.LeasedUntil),
		micros(w.CreatedAt), micros(w.UpdatedAt))
	return interpretError(err)
}

func (t *tx) GetWithdrawal(ctx context.Context, organizationID, id string) (*engine.Withdrawal, error) {
	return scanWithdrawal(t.tx.QueryRowContext(ctx,
		`SELECT `+withdrawalColumns+` FROM withdrawals WHERE id = ? AND organization_id = ?`, id, organizationID))
}

// LockWithdrawal is a plain GetWithdrawal: the IMMEDIATE write transaction
// is exclusive and is itself the lock (see LockDeposit).
func (t *tx) LockWithdrawal(ctx context.Context, organizationID, id string) (*engine.Withdrawal, error) {
	return t.GetWithdrawal(ctx, organizationID, id)
}

func (t *tx) UpdateWithdrawal(ctx context.Context, w *engine.Withdrawal) error {
	// What the merchant asked for (amount, commission, method, account,
	// metadata) never changes; these are the fields the payout moves.
	return t.exec(ctx, `UPDATE withdrawals SET status = ?, payout_step = ?, provider_reference = ?,
		failure_reason = ?, tries = ?, next_run_at = ?, lease_owner = ?, leased_until = ?, updated_at = ?
		WHERE id = ?`,
		w.Status, w.PayoutStep, w.ProviderReference, w.FailureReason, w.Tries, epochMicros(w.NextRunAt),
		w.LeaseOwner, epochMicros(w.LeasedUntil), micros(w.UpdatedAt), w.ID)
}

// UpdateLeasedWithdrawal is UpdateWithdrawal on condition of the lease
// (engine.Tx).
func (t *tx) UpdateLeasedWithdrawal(ctx context.Context, w *engine.Withdrawal, owner string, leasedUntil time.Time) error {
	err := t.exec(ctx, `UPDATE withdrawals SET status = ?, payout_step = ?, provider_reference = ?,
		failure_reason = ?, tries = ?, next_run_at = ?, lease_owner = ?, leased_until = ?, updated_at = ?
		WHERE id = ? AND status = '`+engine.WithdrawalProcessing+`' AND lease_owner = ? AND leased_until = ?`,
		w.Status, w.PayoutStep, w.ProviderReference, w.FailureReason, w.Tries, epochMicros(w.NextRunAt),
		w.LeaseOwner, epochMicros(w.LeasedUntil), micros(w.UpdatedAt), w.ID, owner, epochMicros(leasedUntil))
	if errors.Is(err, engine.ErrNotFound) {
		return engine.ErrLeaseLost
	}
	return err
}

// ClaimDuePayouts selects and leases in one statement, as ClaimDueAttempts
// does: the IMMEDIATE transaction serializes claims, so there is nothing
// locked to skip. A Limit of zero or less claims nothing.
func (t *tx) ClaimDuePayouts(ctx context.Context, p engine.ClaimParams) ([]*engine.Withdrawal, error) {
	if p.Limit <= 0 {
		return nil, nil
	}
	now := micros(p.Now)
	out, err := queryList(ctx, t, scanWithdrawal, claimPayoutsQuery, p.Owner, epochMicros(p.LeasedUntil), now, now, p.Limit)
	if err != nil {
		return nil, err
	}
	// RETURNING's row order is unspecified.
	rowset.SortDue(out, func(x *engine.Withdrawal) (time.Time, string) { return x.NextRunAt, x.ID })
	return out, nil
}

// GetWithdrawalByMerchantID reads through the UNIQUE (organization_id,
// merchant_id) index.
func (t *tx) GetWithdrawalByMerchantID(ctx context.Context, organizationID, merchantID string) (*engine.Withdrawal, error) {
	return scanWithdrawal(t.tx.QueryRowContext(ctx,
		`SELECT `+withdrawalColumns+` FROM withdrawals WHERE organization_id = ? AND merchant_id = ?`, organizationID, merchantID))
}

// TakenWithdrawalMerchantIDs reads through the UNIQUE (organization_id,
// merchant_id) index.
func (t *tx) TakenWithdrawalMerchantIDs(ctx context.Context, organizationID string, merchantIDs []string) (map[string]bool, error) {
	taken := map[string]bool{}
	if len(merchantIDs) == 0 {
		return taken, nil
	}
	args := make([]any, 0, 1+len(merchantIDs))
	args = append(args, organizationID)
	for _, id := range merchantIDs {
		args = append(args, id)
	}
	rows, err := t.tx.QueryContext(ctx, `SELECT merchant_id FROM withdrawals
		WHERE organization_id = ? AND merchant_id IN (`+placeholders(len(merchantIDs))+`)`, args...)
	if err != nil {
		return nil, interpretError(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, interpretError(err)
		}
		taken[id] = true
	}
	return taken, interpretError(rows.Err())
}

// LockWithdrawalGate makes its reads one after another, in process, under
// the write transaction that is SQLite's lock (see LockOrganization).
func (t *tx) LockWithdrawalGate(ctx context.Context, organizationID string, merchantIDs []string) (*engine.WithdrawalGate, error) {
	return engine.ReadWithdrawalGate(ctx, t, organizationID, merchantIDs)
}
