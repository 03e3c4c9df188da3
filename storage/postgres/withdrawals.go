package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/storage/internal/rowset"
	"github.com/payd-engine/payd/storage/internal/schema"
)

// Withdrawals.

const withdrawalColumns = schema.WithdrawalColumns

// claimPayoutsQuery leases the due withdrawals: arguments owner, leased
// until, now, limit. Like claimQuery, it locks with SKIP LOCKED in CTEs
// that walk the withdrawals_due partial index in order (NULL, never run,
// first) and spell that index's WHERE clause as a literal. Never run and
// due again are two scans, each with its own bound on the index: one
// condition "NULL or before now" bounds neither end, and a plan that walks
// the index under it reads every withdrawal waiting for a later run
// (TestPayoutClaimReadsOnlyDueRows). The second CTE is read only as far
// as the first leaves room under the limit, so it locks no more.
const claimPayoutsQuery = `WITH never_run AS MATERIALIZED (
		SELECT id FROM withdrawals
		WHERE status = '` + engine.WithdrawalProcessing + `' AND next_run_at IS NULL
			AND (leased_until IS NULL OR leased_until <= $3)
		ORDER BY next_run_at NULLS FIRST, id LIMIT $4
		FOR NO KEY UPDATE SKIP LOCKED),
	due_again AS MATERIALIZED (
		SELECT id FROM withdrawals
		WHERE status = '` + engine.WithdrawalProcessing + `' AND next_run_at <= $3
			AND (leased_until IS NULL OR leased_until <= $3)
		ORDER BY next_run_at NULLS FIRST, id LIMIT $4
		FOR NO KEY UPDATE SKIP LOCKED)
	UPDATE withdrawals SET lease_owner = $1, leased_until = $2
	WHERE id = ANY (ARRAY (SELECT id FROM never_run UNION ALL SELECT id FROM due_again LIMIT $4))
	RETURNING ` + withdrawalColumns

func scanWithdrawal(row scanner) (*engine.Withdrawal, error) {
	var w engine.Withdrawal
	err := row.Scan(&w.ID, &w.OrganizationID, &w.MerchantID, &w.Amount, &w.Commission,
		&w.PaymentMethod, &w.Account, bytesCol{&w.Metadata}, &w.Status, &w.PayoutStep, &w.ProviderReference,
		&w.FailureReason, &w.Tries, timeCol{&w.NextRunAt}, &w.LeaseOwner, timeCol{&w.LeasedUntil},
		timeCol{&w.CreatedAt}, timeCol{&w.UpdatedAt})
	if err != nil {
		return nil, interpretError(err)
	}
	return &w, nil
}

// CreateWithdrawal relies on UNIQUE (organization_id, merchant_id) for
// ErrDuplicate: it is what guarantees one payout per merchant_id, even when
// two processes race.
func (t *tx) CreateWithdrawal(ctx context.Context, w *engine.Withdrawal) error {
	return t.insert(ctx, "withdrawal "+w.ID, `INSERT INTO withdrawals (`+withdrawalColumns+`) VALUES (`+params(18)+`)`,
		w.ID, w.OrganizationID, w.MerchantID, w.Amount, w.Commission, w.PaymentMethod, w.Account,
		string(w.Metadata), w.Status, w.PayoutStep, w.ProviderReference, w.FailureReason,
		w.Tries, zeroNull(w.NextRunAt), w.LeaseOwner, zeroNull(w.LeasedUntil),
		w.CreatedAt, w.UpdatedAt)
}

func (t *tx) GetWithdrawal(ctx context.Context, organizationID, id string) (*engine.Withdrawal, error) {
	return scanWithdrawal(t.tx.QueryRow(ctx, getWithdrawalQuery, id, organizationID))
}

const getWithdrawalQuery = `SELECT ` + withdrawalColumns + ` FROM withdrawals WHERE id = $1 AND ` + sameOrganization + `$2`

// LockWithdrawal is GetWithdrawal under FOR NO KEY UPDATE (see lockRow).
func (t *tx) LockWithdrawal(ctx context.Context, organizationID, id string) (*engine.Withdrawal, error) {
	if t.readOnly {
		return t.GetWithdrawal(ctx, organizationID, id)
	}
	return scanWithdrawal(t.tx.QueryRow(ctx, lockWithdrawalQuery, id, organizationID))
}

const lockWithdrawalQuery = getWithdrawalQuery + ` FOR NO KEY UPDATE`

func (t *tx) UpdateWithdrawal(ctx context.Context, w *engine.Withdrawal) error {
	// What the merchant asked for (amount, commission, method, account,
	// metadata) never changes; these are the fields the payout moves.
	return t.exec(ctx, `UPDATE withdrawals SET status = $1, payout_step = $2, provider_reference = $3,
		failure_reason = $4, tries = $5, next_run_at = $6, lease_owner = $7, leased_until = $8, updated_at = $9
		WHERE id = $10`,
		w.Status, w.PayoutStep, w.ProviderReference, w.FailureReason, w.Tries, zeroNull(w.NextRunAt),
		w.LeaseOwner, zeroNull(w.LeasedUntil), w.UpdatedAt, w.ID)
}

// UpdateLeasedWithdrawal is UpdateWithdrawal on condition of the lease
// (engine.Tx): the condition is checked on the row as it is when the
// UPDATE locks it, so a worker that took the row over meanwhile is seen.
func (t *tx) UpdateLeasedWithdrawal(ctx context.Context, w *engine.Withdrawal, owner string, leasedUntil time.Time) error {
	return t.execChecked(ctx, leaseHeld, updateLeasedWithdrawalQuery,
		w.Status, w.PayoutStep, w.ProviderReference, w.FailureReason, w.Tries, zeroNull(w.NextRunAt),
		w.LeaseOwner, zeroNull(w.LeasedUntil), w.UpdatedAt, w.ID, owner, leasedUntil)
}

const updateLeasedWithdrawalQuery = `UPDATE withdrawals SET status = $1, payout_step = $2, provider_reference = $3,
	failure_reason = $4, tries = $5, next_run_at = $6, lease_owner = $7, leased_until = $8, updated_at = $9
	WHERE id = $10 AND status = '` + engine.WithdrawalProcessing + `' AND lease_owner = $11 AND leased_until = $12`

// leaseHeld is the check of a write conditioned on a lease: no row
// written means the lease was lost.
var leaseHeld = rowCount{1, engine.ErrLeaseLost}

// ClaimDuePayouts selects, locks and leases in one statement
// (claimPayoutsQuery). A Limit of zero or less claims nothing.
func (t *tx) ClaimDuePayouts(ctx context.Context, p engine.ClaimParams) ([]*engine.Withdrawal, error) {
	if p.Limit <= 0 {
		return nil, nil
	}
	out, err := claimList(ctx, t, scanWithdrawal, claimPayoutsQuery, p.Owner, zeroNull(p.LeasedUntil), p.Now, p.Limit)
	if err != nil {
		return nil, err
	}
	// RETURNING's row order is unspecified.
	rowset.SortDue(out, func(x *engine.Withdrawal) (time.Time, string) { return x.NextRunAt, x.ID })
	return out, nil
}

// GetWithdrawalByMerchantID reads through UNIQUE (merchant_id,
// organization_id), never an index that starts with organization_id (see
// migration 0019).
func (t *tx) GetWithdrawalByMerchantID(ctx context.Context, organizationID, merchantID string) (*engine.Withdrawal, error) {
	return scanWithdrawal(t.tx.QueryRow(ctx, getWithdrawalByMerchantIDQuery, organizationID, merchantID))
}

const getWithdrawalByMerchantIDQuery = `SELECT ` + withdrawalColumns + ` FROM withdrawals WHERE merchant_id = $2 AND ` + sameOrganization + `$1`

// TakenWithdrawalMerchantIDs reads through UNIQUE (merchant_id,
// organization_id), the IDs passed as one array.
func (t *tx) TakenWithdrawalMerchantIDs(ctx context.Context, organizationID string, merchantIDs []string) (map[string]bool, error) {
	taken := map[string]bool{}
	if len(merchantIDs) == 0 {
		return taken, nil
	}
	rows, err := t.tx.Query(ctx, takenMerchantIDsQuery, organizationID, merchantIDs)
	if err != nil {
		return nil, interpretError(err)
	}
	return scanTaken(rows)
}

// takenMerchantIDsQuery looks each merchant_id up on its own through
// UNIQUE (merchant_id, organization_id), as getWithdrawalByMerchantIDQuery
// does: merchant_id = ANY ($2) was planned as a scan of the whole table
// while the table was empty.
const takenMerchantIDsQuery = `SELECT m.id FROM unnest($2::text[]) AS m (id)
	CROSS JOIN LATERAL (SELECT FROM withdrawals WHERE merchant_id = m.id AND ` + sameOrganization + `$1 LIMIT 1) AS w`

// scanTaken reads rows of merchant_ids and closes them.
func scanTaken(rows pgx.Rows) (map[string]bool, error) {
	defer rows.Close()
	taken := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, interpretError(err)
		}
		taken[id] = true
	}
	return taken, interpretError(rows.Err())
}

// LockWithdrawalGate sends its four statements in one pipeline: the
// organization's row lock (as LockOrganization) first, so that Postgres
// runs the reads after it, each with a snapshot taken once the lock is
// held, as if they were sent one by one. Outside a transaction that can
// pipeline (or inside a Pipeline), they are sent one by one.
func (t *tx) LockWithdrawalGate(ctx context.Context, organizationID string, merchantIDs []string) (*engine.WithdrawalGate, error) {
	bs, ok := t.tx.(batchSender)
	if !ok || t.pipe != nil {
		return engine.ReadWithdrawalGate(ctx, t, organizationID, merchantIDs)
	}
	g := &engine.WithdrawalGate{Taken: map[string]bool{}}
	var b pgx.Batch
	b.Queue(`SELECT `+orgColumns+` FROM organizations WHERE id = $1`+t.lockRow(), organizationID).QueryRow(func(row pgx.Row) (err error) {
		g.Organization, err = scanOrganization(row)
		return err
	})
	if len(merchantIDs) > 0 {
		b.Queue(takenMerchantIDsQuery, organizationID, merchantIDs).Query(func(rows pgx.Rows) (err error) {
			g.Taken, err = scanTaken(rows)
			return err
		})
	}
	b.Queue(balancesQuery, organizationID).Query(func(rows pgx.Rows) (err error) {
		g.Balances, err = scanAccountSums(rows)
		return err
	})
	b.Queue(endpointsQuery(true), organizationID).Query(func(rows pgx.Rows) (err error) {
		defer rows.Close()
		g.Endpoints, err = rowset.Collect(rows, scanWebhookEndpoint)
		return interpretError(err)
	})
	if err := interpretError(bs.SendBatch(ctx, &b).Close()); err != nil {
		return nil, err
	}
	return g, nil
}
