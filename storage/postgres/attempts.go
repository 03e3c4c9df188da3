package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/storage/internal/rowset"
	"github.com/payd-engine/payd/storage/internal/schema"
)

// Verification attempts.

const attemptColumns = schema.AttemptColumns

// runningStatuses is the IN list of running attempts, spelled as literals
// like the attempts_due partial index's WHERE clause, so that the planner
// can prove the query's rows are in that index.
const runningStatuses = `('` + engine.AttemptProcessing + `', '` + engine.AttemptDelayed + `')`

// claimQuery leases the due attempts: arguments owner, leased until, now,
// limit. The CTE walks the attempts_due index in order, locks up to limit
// due, unleased rows and skips those another transaction has locked (one
// claiming or updating them). At READ COMMITTED a row changed since the
// statement's snapshot is checked again as it is now before it is locked,
// so a lease another claimer committed meanwhile is seen and the row left
// out. MATERIALIZED makes the locking SELECT run exactly once.
const claimQuery = `WITH due AS MATERIALIZED (
		SELECT id FROM attempts
		WHERE status IN ` + runningStatuses + ` AND next_run_at <= $3
			AND (leased_until IS NULL OR leased_until <= $3)
		ORDER BY next_run_at, id LIMIT $4
		FOR NO KEY UPDATE SKIP LOCKED)
	UPDATE attempts SET lease_owner = $1, leased_until = $2
	WHERE id = ANY (ARRAY (SELECT id FROM due))
	RETURNING ` + attemptColumns

func scanAttempt(row scanner) (*engine.Attempt, error) {
	var a engine.Attempt
	err := row.Scan(&a.ID, &a.DepositID, &a.OrganizationID, &a.Channel, &a.TransactionID, &a.Status, &a.FailureCode,
		&a.Tries, timeCol{&a.NextRunAt}, &a.LeaseOwner, timeCol{&a.LeasedUntil},
		timeCol{&a.CreatedAt}, timeCol{&a.UpdatedAt}, &a.PayerPhone)
	if err != nil {
		return nil, interpretError(err)
	}
	return &a, nil
}

// CreateAttempt relies on UNIQUE (channel, transaction_id, organization_id)
// for ErrDuplicate: it is what keeps an organization's submitted ID from
// serving two of its deposits, even when two processes race (the second
// insert waits for the first transaction and finds the row once it
// commits).
func (t *tx) CreateAttempt(ctx context.Context, a *engine.Attempt) error {
	return t.insert(ctx, "attempt "+a.ID, `INSERT INTO attempts (`+attemptColumns+`) VALUES (`+params(14)+`)`,
		a.ID, a.DepositID, a.OrganizationID, a.Channel, a.TransactionID, a.Status, a.FailureCode,
		a.Tries, a.NextRunAt, a.LeaseOwner, zeroNull(a.LeasedUntil),
		a.CreatedAt, a.UpdatedAt, a.PayerPhone)
}

func (t *tx) GetAttempt(ctx context.Context, id string) (*engine.Attempt, error) {
	return scanAttempt(t.tx.QueryRow(ctx, `SELECT `+attemptColumns+` FROM attempts WHERE id = $1`, id))
}

// LockAttempt is GetAttempt under FOR NO KEY UPDATE (see lockRow).
func (t *tx) LockAttempt(ctx context.Context, id string) (*engine.Attempt, error) {
	return scanAttempt(t.tx.QueryRow(ctx, `SELECT `+attemptColumns+` FROM attempts WHERE id = $1`+t.lockRow(), id))
}

// LockDepositAndAttempt sends the two locking reads in one pipeline: each
// statement runs, and takes its snapshot, after the one before it, as if
// sent one by one.
func (t *tx) LockDepositAndAttempt(ctx context.Context, depositID, attemptID string) (*engine.Deposit, *engine.Attempt, error) {
	bs, ok := t.tx.(batchSender)
	if !ok {
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
	b := &pgx.Batch{}
	b.Queue(`SELECT `+depositColumns+` FROM deposits WHERE id = $1`+t.lockRow(), depositID)
	b.Queue(`SELECT `+attemptColumns+` FROM attempts WHERE id = $1`+t.lockRow(), attemptID)
	br := bs.SendBatch(ctx, b)
	d, err := scanDeposit(br.QueryRow())
	var a *engine.Attempt
	if err == nil {
		a, err = scanAttempt(br.QueryRow())
	}
	if cerr := interpretError(br.Close()); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return nil, nil, err
	}
	return d, a, nil
}

// GetAttemptByTransactionID reads at most two rows, each by a unique key,
// and returns the organization's first.
func (t *tx) GetAttemptByTransactionID(ctx context.Context, organizationID, channel, transactionID string) (*engine.Attempt, error) {
	return scanAttempt(t.tx.QueryRow(ctx, `SELECT `+attemptColumns+` FROM (
			SELECT `+attemptColumns+`, 0 AS theirs FROM attempts
				WHERE channel = $1 AND transaction_id = $2 AND organization_id = $3
			UNION ALL SELECT `+attemptColumns+`, 1 FROM attempts WHERE id = (
				SELECT attempt_id FROM succeeded_transactions WHERE channel = $1 AND transaction_id = $2)) held
		ORDER BY theirs LIMIT 1`, channel, transactionID, organizationID))
}

// MarkTransactionSucceeded relies on the primary key (channel,
// transaction_id) of succeeded_transactions for ErrDuplicate: it is what
// keeps one payment from succeeding two deposits, in any organizations,
// even when two processes race (the second insert waits for the first
// transaction and finds the row once it commits). ON CONFLICT DO NOTHING
// leaves the transaction usable. It is never queued in a Pipeline: its
// caller needs the answer at once.
func (t *tx) MarkTransactionSucceeded(ctx context.Context, a *engine.Attempt) error {
	return t.insert(ctx, "succeeded transaction "+a.Channel+" "+a.TransactionID,
		`INSERT INTO succeeded_transactions (channel, transaction_id, attempt_id) VALUES ($1, $2, $3)`,
		a.Channel, a.TransactionID, a.ID)
}

func (t *tx) GetSucceededAttempt(ctx context.Context, channel, transactionID string) (*engine.Attempt, error) {
	return scanAttempt(t.tx.QueryRow(ctx, `SELECT `+attemptColumns+` FROM attempts WHERE id = (
		SELECT attempt_id FROM succeeded_transactions WHERE channel = $1 AND transaction_id = $2)`, channel, transactionID))
}

func (t *tx) ListAttempts(ctx context.Context, depositID string) ([]*engine.Attempt, error) {
	return queryList(ctx, t, scanAttempt,
		`SELECT `+attemptColumns+` FROM attempts WHERE deposit_id = $1 ORDER BY created_at, id`, depositID)
}

func (t *tx) UpdateAttempt(ctx context.Context, a *engine.Attempt) error {
	// The deposit, organization, channel and transaction ID an attempt was
	// made with never change. In a Pipeline it is queued (a verdict's
	// writes go together).
	return t.execChecked(ctx, oneRowChanged, `UPDATE attempts SET status = $1, failure_code = $2, tries = $3, next_run_at = $4,
		lease_owner = $5, leased_until = $6, updated_at = $7
		WHERE id = $8`,
		a.Status, a.FailureCode, a.Tries, a.NextRunAt,
		a.LeaseOwner, zeroNull(a.LeasedUntil), a.UpdatedAt, a.ID)
}

// ClaimDueAttempts selects, locks and leases in one statement (claimQuery).
// A Limit of zero or less claims nothing.
func (t *tx) ClaimDueAttempts(ctx context.Context, p engine.ClaimParams) ([]*engine.Attempt, error) {
	if p.Limit <= 0 {
		return nil, nil
	}
	out, err := claimList(ctx, t, scanAttempt, claimQuery, p.Owner, zeroNull(p.LeasedUntil), p.Now, p.Limit)
	if err != nil {
		return nil, err
	}
	// RETURNING's row order is unspecified.
	rowset.SortDue(out, func(x *engine.Attempt) (time.Time, string) { return x.NextRunAt, x.ID })
	return out, nil
}
