package sqlite

import (
	"context"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/storage/internal/rowset"
	"github.com/payd-engine/payd/storage/internal/schema"
)

// Verification attempts.

const attemptColumns = schema.AttemptColumns

// runningStatuses is the IN list of running attempts, spelled as literals
// because the attempts_due partial index has the same WHERE clause: SQLite
// uses a partial index only for a query whose WHERE visibly implies it,
// which bound parameters do not.
const runningStatuses = `('` + engine.AttemptProcessing + `', '` + engine.AttemptDelayed + `')`

// claimQuery leases the due attempts: arguments owner, leased until, now,
// now, limit. The subquery walks the attempts_due index in order and stops
// after limit unleased rows.
const claimQuery = `UPDATE attempts SET lease_owner = ?, leased_until = ?
	WHERE id IN (
		SELECT id FROM attempts
		WHERE status IN ` + runningStatuses + ` AND next_run_at <= ? AND leased_until <= ?
		ORDER BY next_run_at, id LIMIT ?)
	RETURNING ` + attemptColumns

func scanAttempt(row scanner) (*engine.Attempt, error) {
	var a engine.Attempt
	err := row.Scan(&a.ID, &a.DepositID, &a.OrganizationID, &a.Channel, &a.TransactionID, &a.Status, &a.FailureCode,
		&a.Tries, timeCol{&a.NextRunAt}, &a.LeaseOwner, epochTimeCol{&a.LeasedUntil},
		timeCol{&a.CreatedAt}, timeCol{&a.UpdatedAt}, &a.PayerPhone)
	if err != nil {
		return nil, interpretError(err)
	}
	return &a, nil
}

// CreateAttempt relies on UNIQUE (channel, transaction_id, organization_id)
// for ErrDuplicate: it is what keeps an organization's submitted ID from
// serving two of its deposits, even when two processes race.
func (t *tx) CreateAttempt(ctx context.Context, a *engine.Attempt) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO attempts (`+attemptColumns+`) VALUES (`+placeholders(14)+`)`,
		a.ID, a.DepositID, a.OrganizationID, a.Channel, a.TransactionID, a.Status, a.FailureCode,
		a.Tries, micros(a.NextRunAt), a.LeaseOwner, epochMicros(a.LeasedUntil),
		micros(a.CreatedAt), micros(a.UpdatedAt), a.PayerPhone)
	return interpretError(err)
}

func (t *tx) GetAttempt(ctx context.Context, id string) (*engine.Attempt, error) {
	return scanAttempt(t.tx.QueryRowContext(ctx, `SELECT `+attemptColumns+` FROM attempts WHERE id = ?`, id))
}

// LockAttempt is a plain GetAttempt: the IMMEDIATE write transaction is
// exclusive and is itself the lock (see LockDeposit).
func (t *tx) LockAttempt(ctx context.Context, id string) (*engine.Attempt, error) {
	return t.GetAttempt(ctx, id)
}

// LockDepositAndAttempt reads the two rows: like their Lock methods, the
// write transaction is the lock.
func (t *tx) LockDepositAndAttempt(ctx context.Context, depositID, attemptID string) (*engine.Deposit, *engine.Attempt, error) {
	d, err := t.LockDeposit(ctx, depositID)
	if err != nil {
		return nil, nil, err
	}
	a, err := t.LockAttempt(ctx, attemptID)
	if err != nil {
		return nil, nil, err
	}
	return d, a, nil
}

// GetAttemptByTransactionID reads at most two rows, each by a unique key,
// and returns the organization's first.
func (t *tx) GetAttemptByTransactionID(ctx context.Context, organizationID, channel, transactionID string) (*engine.Attempt, error) {
	return scanAttempt(t.tx.QueryRowContext(ctx, `SELECT `+attemptColumns+` FROM (
			SELECT `+attemptColumns+`, 0 AS theirs FROM attempts
				WHERE channel = ?1 AND transaction_id = ?2 AND organization_id = ?3
			UNION ALL SELECT `+attemptColumns+`, 1 FROM attempts WHERE id = (
				SELECT attempt_id FROM succeeded_transactions WHERE channel = ?1 AND transaction_id = ?2))
		ORDER BY theirs LIMIT 1`, channel, transactionID, organizationID))
}

// MarkTransactionSucceeded relies on the primary key (channel,
// transaction_id) of succeeded_transactions for ErrDuplicate: it is what
// keeps one payment from succeeding two deposits, in any organizations,
// even when two processes race. A failed insert undoes only itself: the
// transaction goes on.
func (t *tx) MarkTransactionSucceeded(ctx context.Context, a *engine.Attempt) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO succeeded_transactions (channel, transaction_id, attempt_id)
		VALUES (?, ?, ?)`, a.Channel, a.TransactionID, a.ID)
	return interpretError(err)
}

func (t *tx) GetSucceededAttempt(ctx context.Context, channel, transactionID string) (*engine.Attempt, error) {
	return scanAttempt(t.tx.QueryRowContext(ctx, `SELECT `+attemptColumns+` FROM attempts WHERE id = (
		SELECT attempt_id FROM succeeded_transactions WHERE channel = ? AND transaction_id = ?)`, channel, transactionID))
}

func (t *tx) ListAttempts(ctx context.Context, depositID string) ([]*engine.Attempt, error) {
	return queryList(ctx, t, scanAttempt,
		`SELECT `+attemptColumns+` FROM attempts WHERE deposit_id = ? ORDER BY created_at, id`, depositID)
}

func (t *tx) UpdateAttempt(ctx context.Context, a *engine.Attempt) error {
	// The deposit, organization, channel and transaction ID an attempt was
	// made with never change.
	return t.exec(ctx, `UPDATE attempts SET status = ?, failure_code = ?, tries = ?, next_run_at = ?,
		lease_owner = ?, leased_until = ?, updated_at = ?
		WHERE id = ?`,
		a.Status, a.FailureCode, a.Tries, micros(a.NextRunAt),
		a.LeaseOwner, epochMicros(a.LeasedUntil), micros(a.UpdatedAt), a.ID)
}

// ClaimDueAttempts selects and leases in one statement. Nothing needs
// skipping: the IMMEDIATE transaction holds the database's only write lock,
// so claims are serialized and a second claim sees the first's leases. A
// Limit of zero or less claims nothing.
func (t *tx) ClaimDueAttempts(ctx context.Context, p engine.ClaimParams) ([]*engine.Attempt, error) {
	if p.Limit <= 0 {
		return nil, nil
	}
	now := micros(p.Now)
	out, err := queryList(ctx, t, scanAttempt, claimQuery, p.Owner, epochMicros(p.LeasedUntil), now, now, p.Limit)
	if err != nil {
		return nil, err
	}
	// RETURNING's row order is unspecified.
	rowset.SortDue(out, func(x *engine.Attempt) (time.Time, string) { return x.NextRunAt, x.ID })
	return out, nil
}
