package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/payd-engine/payd/engine"
	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/storage/internal/rowset"
	"github.com/payd-engine/payd/storage/internal/schema"
)

// tx is an engine.Tx on one pgx transaction (or, for ReadOne, on the pool:
// see oneRead).
type tx struct {
	tx querier
	// readOnly is set in ReadTx, where SELECT ... FOR UPDATE is an error.
	readOnly bool
	// pipe, in a Pipeline, queues the statements of execChecked.
	pipe *pipe
}

var _ engine.Tx = (*tx)(nil)

// scanner is a pgx.Row or pgx.Rows.
type scanner = rowset.Scanner

// lockRow is the locking clause of a Lock method: FOR NO KEY UPDATE, the
// lock an UPDATE that changes no key takes. It excludes every other writer
// of the row and every other locker, but not the FOR KEY SHARE lock that a
// foreign key check takes, so that inserting a row that refers to a locked
// one (a deposit of a locked organization) does not wait for it. In a
// read-only transaction it is nothing: the snapshot is already stable.
// sameOrganization starts the condition that a row found by its ID
// belongs to an organization, in a form that no index of organization_id
// matches, so that only the primary key finds the row. With
// "organization_id = $2" the planner may pick an index that starts with
// organization_id instead, as cheap by its estimate on a table not yet
// analyzed, and read every row of the organization to find one: a
// withdrawal's payout steps read 1.7 million index entries in a 3 s
// benchmark run (TestQueryPlansUseIndexes).
const sameOrganization = `organization_id || '' = `

func (t *tx) lockRow() string {
	if t.readOnly {
		return ""
	}
	return ` FOR NO KEY UPDATE`
}

// insert runs an INSERT ... ON CONFLICT DO NOTHING: ErrDuplicate if a
// uniqueness constraint (including the primary key) kept the row out. Not
// raising the violation leaves the transaction usable, as a failed insert
// leaves SQLite's: a Postgres error would abort the rest of it.
//
// In a Pipeline it only queues the insert, and the error comes later.
func (t *tx) insert(ctx context.Context, what string, query string, args ...any) error {
	if t.pipe != nil && t.pipe.queueInsert(what, query, args...) {
		return nil
	}
	return t.execChecked(ctx, rowCount{1, fmt.Errorf("%w: %s", engine.ErrDuplicate, what)}, query+` ON CONFLICT DO NOTHING`, args...)
}

// rowCount is how many rows a write must change (want; 0: any number),
// and its error (fail) when it changes another number: what a write that
// Postgres itself does not fail checks.
type rowCount struct {
	want int64
	fail error
}

func (c rowCount) check(tag pgconn.CommandTag) error {
	if c.want > 0 && tag.RowsAffected() != c.want {
		return c.fail
	}
	return nil
}

// oneRowChanged is the check of a write to one row found by its key:
// ErrNotFound if there was none.
var oneRowChanged = rowCount{1, engine.ErrNotFound}

// execChecked runs a statement whose row count (see rowCount) turns into
// its error. In a Pipeline it only queues it, and the error comes later.
func (t *tx) execChecked(ctx context.Context, rows rowCount, query string, args ...any) error {
	if t.pipe != nil {
		t.pipe.queue(query, rows, args...)
		return nil
	}
	tag, err := t.tx.Exec(ctx, query, args...)
	if err != nil {
		return interpretError(err)
	}
	return rows.check(tag)
}

// exec runs a statement that must change one row: ErrNotFound if it changed
// none.
func (t *tx) exec(ctx context.Context, query string, args ...any) error {
	return execOne(ctx, t.tx, query, args...)
}

// execer is a pgx.Tx or a *pgxpool.Pool.
type execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

func execOne(ctx context.Context, db execer, query string, args ...any) error {
	tag, err := db.Exec(ctx, query, args...)
	if err != nil {
		return interpretError(err)
	}
	if tag.RowsAffected() == 0 {
		return engine.ErrNotFound
	}
	return nil
}

// queryList runs a query and scans every row with scan.
func queryList[T any](ctx context.Context, t *tx, scan func(scanner) (*T, error), query string, args ...any) ([]*T, error) {
	rs, err := t.tx.Query(ctx, query, args...)
	if err != nil {
		return nil, interpretError(err)
	}
	defer rs.Close()
	out, err := rowset.Collect(rs, scan)
	return out, interpretError(err)
}

// claimList runs a claim (claimQuery, claimPayoutsQuery) planned with
// sorts and sequential scans off, then turns them back on for the rest of
// the transaction, all in one round trip. A claim asks for the first due
// rows in its index's order, up to a limit, then leases them by primary
// key. When Postgres's statistics say few rows are due (a table not yet
// analyzed, or a backlog grown since the last ANALYZE) it would rather
// read every due row and sort them than walk the index and stop at the
// limit: 2,000 rows read and sorted for each claim of 16 while the worker
// was behind, which only put it further behind. And it may lease through
// a scan of the whole table, every row ever claimed. Neither needs to
// happen, whatever the statistics (TestPayoutClaimReadsOnlyDueRows,
// TestAttemptClaimReadsOnlyDueRows).
func claimList[T any](ctx context.Context, t *tx, scan func(scanner) (*T, error), query string, args ...any) ([]*T, error) {
	bs, ok := t.tx.(batchSender)
	if !ok || t.pipe != nil {
		for _, q := range claimPlanning {
			if _, err := t.tx.Exec(ctx, q); err != nil {
				return nil, interpretError(err)
			}
		}
		out, err := queryList(ctx, t, scan, query, args...)
		if err != nil {
			return nil, err
		}
		for _, q := range afterClaimPlanning {
			if _, err := t.tx.Exec(ctx, q); err != nil {
				return nil, interpretError(err)
			}
		}
		return out, nil
	}
	var out []*T
	var b pgx.Batch
	for _, q := range claimPlanning {
		b.Queue(q)
	}
	b.Queue(query, args...).Query(func(rows pgx.Rows) (err error) {
		defer rows.Close()
		out, err = rowset.Collect(rows, scan)
		return err
	})
	for _, q := range afterClaimPlanning {
		b.Queue(q)
	}
	if err := interpretError(bs.SendBatch(ctx, &b).Close()); err != nil {
		return nil, err
	}
	return out, nil
}

var (
	// jit too: a sort the plan cannot do without (the deliveries claim's
	// window) costs it the disabled node's penalty, which is above any JIT
	// threshold, and compiling took 400 ms a claim.
	claimPlanning      = []string{`SET LOCAL enable_sort = off`, `SET LOCAL enable_seqscan = off`, `SET LOCAL jit = off`}
	afterClaimPlanning = []string{`SET LOCAL enable_sort TO DEFAULT`, `SET LOCAL enable_seqscan TO DEFAULT`, `SET LOCAL jit TO DEFAULT`}
)

// Organizations.

const orgColumns = schema.OrgColumns

func scanOrganization(row scanner) (*engine.Organization, error) {
	var o engine.Organization
	var disabled string
	err := row.Scan(&o.ID, &o.Name, &o.DepositsEnabled, &o.H2HEnabled, &o.WithdrawalsEnabled,
		durationCol{&o.InstructionsWindow}, durationCol{&o.RedirectWindow},
		&o.DepositFeePercent, &o.DepositFeeFixed, &o.WithdrawCommissionPercent, &o.WithdrawCommissionFixed,
		methodFeesCol{&o.MethodFees}, timeCol{&o.CreatedAt}, timeCol{&o.UpdatedAt}, &o.LogoURL, &o.SupportContact, &disabled)
	if err != nil {
		return nil, interpretError(err)
	}
	o.DisabledMethods = schema.SplitMethods(disabled)
	return &o, nil
}

// methodFeesJSON is the method_fees column of o.
func methodFeesJSON(o *engine.Organization) (string, error) {
	fees, err := schema.MethodFeesJSON(o)
	if err != nil {
		return "", fmt.Errorf("postgres: %w", err)
	}
	return fees, nil
}

// methodFeesCol scans the JSON of engine.MethodFees. Empty maps may read
// back nil.
type methodFeesCol struct{ f *engine.MethodFees }

func (c methodFeesCol) ScanBytes(b []byte) error {
	return schema.ParseMethodFees(b, c.f)
}

func (t *tx) CreateOrganization(ctx context.Context, o *engine.Organization) error {
	fees, err := methodFeesJSON(o)
	if err != nil {
		return err
	}
	return t.insert(ctx, "organization "+o.ID, `INSERT INTO organizations (`+orgColumns+`) VALUES (`+params(17)+`)`,
		o.ID, o.Name, o.DepositsEnabled, o.H2HEnabled, o.WithdrawalsEnabled,
		int64(o.InstructionsWindow), int64(o.RedirectWindow),
		o.DepositFeePercent, o.DepositFeeFixed, o.WithdrawCommissionPercent, o.WithdrawCommissionFixed,
		fees, o.CreatedAt, o.UpdatedAt, o.LogoURL, o.SupportContact, schema.JoinMethods(o.DisabledMethods))
}

func (t *tx) GetOrganization(ctx context.Context, id string) (*engine.Organization, error) {
	return scanOrganization(t.tx.QueryRow(ctx, getOrganizationQuery, id))
}

const getOrganizationQuery = `SELECT ` + orgColumns + ` FROM organizations WHERE id = $1`

func (t *tx) UpdateOrganization(ctx context.Context, o *engine.Organization) error {
	fees, err := methodFeesJSON(o)
	if err != nil {
		return err
	}
	return t.exec(ctx, `UPDATE organizations SET name = $1, deposits_enabled = $2, h2h_enabled = $3,
		withdrawals_enabled = $4, instructions_window_ns = $5, redirect_window_ns = $6,
		deposit_fee_percent = $7, deposit_fee_fixed = $8, withdraw_commission_percent = $9,
		withdraw_commission_fixed = $10, method_fees = $11, updated_at = $12, logo_url = $13, support_contact = $14,
		disabled_methods = $15
		WHERE id = $16`,
		o.Name, o.DepositsEnabled, o.H2HEnabled, o.WithdrawalsEnabled,
		int64(o.InstructionsWindow), int64(o.RedirectWindow),
		o.DepositFeePercent, o.DepositFeeFixed, o.WithdrawCommissionPercent, o.WithdrawCommissionFixed,
		fees, o.UpdatedAt, o.LogoURL, o.SupportContact, schema.JoinMethods(o.DisabledMethods), o.ID)
}

func (t *tx) ListOrganizations(ctx context.Context) ([]*engine.Organization, error) {
	return queryList(ctx, t, scanOrganization, `SELECT `+orgColumns+` FROM organizations ORDER BY created_at, id`)
}

// LockOrganization reads the organization under FOR NO KEY UPDATE (see
// lockRow): a second locker, and any UPDATE of the row, waits until this
// transaction ends, so a balance checked under the lock stays true.
func (t *tx) LockOrganization(ctx context.Context, id string) (*engine.Organization, error) {
	return scanOrganization(t.tx.QueryRow(ctx,
		`SELECT `+orgColumns+` FROM organizations WHERE id = $1`+t.lockRow(), id))
}

// API keys.

const apiKeyColumns = schema.ApiKeyColumns

func scanAPIKey(row scanner) (*engine.APIKey, error) {
	var k engine.APIKey
	err := row.Scan(&k.ID, &k.OrganizationID, bytesCol{&k.Hash}, &k.Hint, bytesCol{&k.SigningSecret},
		bytesCol{&k.PreviousSigningSecret}, timeCol{&k.PreviousSecretExpiresAt},
		timeCol{&k.CreatedAt}, nullTimeCol{&k.ExpiresAt})
	if err != nil {
		return nil, interpretError(err)
	}
	return &k, nil
}

func (t *tx) CreateAPIKey(ctx context.Context, k *engine.APIKey) error {
	return t.insert(ctx, "api key "+k.ID, `INSERT INTO api_keys (`+apiKeyColumns+`) VALUES (`+params(9)+`)`,
		k.ID, k.OrganizationID, k.Hash, k.Hint, k.SigningSecret,
		nullBytes(k.PreviousSigningSecret), zeroNull(k.PreviousSecretExpiresAt),
		k.CreatedAt, nullTime(k.ExpiresAt))
}

func (t *tx) GetAPIKey(ctx context.Context, id string) (*engine.APIKey, error) {
	return scanAPIKey(t.tx.QueryRow(ctx, `SELECT `+apiKeyColumns+` FROM api_keys WHERE id = $1`, id))
}

func (t *tx) GetAPIKeyByHash(ctx context.Context, hash []byte) (*engine.APIKey, error) {
	// A nil hash is NULL, which matches nothing, as in SQLite.
	return scanAPIKey(t.tx.QueryRow(ctx, `SELECT `+apiKeyColumns+` FROM api_keys WHERE hash = $1`, hash))
}

func (t *tx) ListAPIKeys(ctx context.Context, organizationID string) ([]*engine.APIKey, error) {
	return queryList(ctx, t, scanAPIKey,
		`SELECT `+apiKeyColumns+` FROM api_keys WHERE organization_id = $1 ORDER BY created_at, id`, organizationID)
}

func (t *tx) UpdateAPIKey(ctx context.Context, k *engine.APIKey) error {
	return t.exec(ctx, `UPDATE api_keys SET signing_secret = $1, previous_signing_secret = $2,
		previous_secret_expires_at = $3, expires_at = $4
		WHERE id = $5`,
		k.SigningSecret, nullBytes(k.PreviousSigningSecret), zeroNull(k.PreviousSecretExpiresAt),
		nullTime(k.ExpiresAt), k.ID)
}

// Wallets.

const walletColumns = schema.WalletColumns

func scanWallet(row scanner) (*engine.Wallet, error) {
	var w engine.Wallet
	err := row.Scan(&w.ID, &w.OrganizationID, &w.Channel, &w.Operation, &w.Phone, &w.Name, &w.QRPayload,
		&w.MinAmount, &w.MaxAmount, &w.DailyLimit,
		&w.Enabled, nullTimeCol{&w.LastAssignedAt}, timeCol{&w.CreatedAt}, nullTimeCol{&w.LiveUntil})
	if err != nil {
		return nil, interpretError(err)
	}
	return &w, nil
}

func (t *tx) CreateWallet(ctx context.Context, w *engine.Wallet) error {
	return t.insert(ctx, "wallet "+w.ID, `INSERT INTO wallets (`+walletColumns+`) VALUES (`+params(14)+`)`,
		w.ID, w.OrganizationID, w.Channel, w.Operation, w.Phone, w.Name, w.QRPayload,
		w.MinAmount, w.MaxAmount, w.DailyLimit,
		w.Enabled, nullTime(w.LastAssignedAt), w.CreatedAt, nullTime(w.LiveUntil))
}

func (t *tx) GetWallet(ctx context.Context, organizationID, id string) (*engine.Wallet, error) {
	return scanWallet(t.tx.QueryRow(ctx, getWalletQuery, id, organizationID))
}

const getWalletQuery = `SELECT ` + walletColumns + ` FROM wallets WHERE id = $1 AND ` + sameOrganization + `$2`

func (t *tx) ListWallets(ctx context.Context, p engine.ListWalletsParams) ([]*engine.Wallet, error) {
	// Only the filters that are set go into the query, so it can use the
	// (organization_id, channel, operation, phone) index.
	var f filter
	f.eq("organization_id", p.OrganizationID)
	f.eq("channel", p.Channel)
	f.eq("operation", p.Operation)
	if p.EnabledOnly {
		f.conds = append(f.conds, "enabled")
	}
	q := `SELECT ` + walletColumns + ` FROM wallets` + f.where()
	if !p.ForUpdate || t.readOnly {
		return queryList(ctx, t, scanWallet, q+` ORDER BY last_assigned_at NULLS FIRST, id`, f.args...)
	}
	// ForUpdate locks every listed wallet (see lockRow): a second picker of
	// the same pool waits for this transaction, then reads the pool as it
	// left it. The rows are locked in ID order and sorted here, not by an
	// ORDER BY last_assigned_at before the lock: that sorts the versions
	// the statement's snapshot saw, so a picker that waited would get the
	// rows it waited for in their old order (the wallet just assigned
	// first), and two pickers whose snapshots order the pool differently
	// would lock it in different orders and deadlock.
	ws, err := queryList(ctx, t, scanWallet, q+` ORDER BY id`+t.lockRow(), f.args...)
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(ws, leastRecentlyAssignedFirst)
	return ws, nil
}

// leastRecentlyAssignedFirst orders wallets as ListWallets lists them:
// never assigned first, then by last assignment, then by ID (byte order,
// as id's collation "C").
func leastRecentlyAssignedFirst(a, b *engine.Wallet) int {
	switch {
	case a.LastAssignedAt == nil && b.LastAssignedAt != nil:
		return -1
	case a.LastAssignedAt != nil && b.LastAssignedAt == nil:
		return 1
	case a.LastAssignedAt != nil:
		if c := a.LastAssignedAt.Compare(*b.LastAssignedAt); c != 0 {
			return c
		}
	}
	return strings.Compare(a.ID, b.ID)
}

func (t *tx) UpdateWallet(ctx context.Context, w *engine.Wallet) error {
	// Organization, channel, operation and phone identify the wallet; they
	// do not change. live_until is its SMS device's to write. In a
	// Pipeline it is queued with a batch of creates' deposits.
	return t.execChecked(ctx, oneRowChanged, `UPDATE wallets SET name = $1, qr_payload = $2,
		min_amount = $3, max_amount = $4, daily_limit = $5, enabled = $6, last_assigned_at = $7
		WHERE id = $8`,
		w.Name, w.QRPayload, w.MinAmount, w.MaxAmount, w.DailyLimit,
		w.Enabled, nullTime(w.LastAssignedAt), w.ID)
}

// LockWallet is GetWallet under FOR NO KEY UPDATE (see lockRow).
func (t *tx) LockWallet(ctx context.Context, organizationID, id string) (*engine.Wallet, error) {
	if t.readOnly {
		return t.GetWallet(ctx, organizationID, id)
	}
	return scanWallet(t.tx.QueryRow(ctx, lockWalletQuery, id, organizationID))
}

const lockWalletQuery = getWalletQuery + ` FOR NO KEY UPDATE`

func (t *tx) WalletDepositAmounts(ctx context.Context, walletID string, since time.Time) ([]decimal.Decimal, error) {
	rows, err := t.tx.Query(ctx, `SELECT amount FROM deposits
		WHERE wallet_id = $1 AND created_at >= $2 AND status NOT IN ($3, $4, $5)`,
		walletID, since, engine.StatusFailed, engine.StatusExpired, engine.StatusCancelled)
	if err != nil {
		return nil, interpretError(err)
	}
	defer rows.Close()
	var out []decimal.Decimal
	for rows.Next() {
		var d decimal.Decimal
		if err := rows.Scan(&d); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, interpretError(rows.Err())
}

// Deposits.

const depositColumns = schema.DepositColumns

func scanDeposit(row scanner) (*engine.Deposit, error) {
	var d engine.Deposit
	err := row.Scan(&d.ID, &d.OrganizationID, &d.MerchantID, &d.CheckoutMode, &d.Amount, &d.PaymentMethod,
		&d.RedirectURL, &d.PayerPhone, bytesCol{&d.Metadata}, &d.Status, &d.Action, &d.CheckoutToken, &d.CheckoutURL,
		&d.Channel, &d.Operation, stringCol{&d.WalletID}, &d.RecipientPhone, &d.RecipientName, &d.QRPayload,
		&d.VerificationState, &d.AttemptsUsed, &d.FailureCode, &d.ProviderTransactionID,
		timeCol{&d.ExpiresAt}, timeCol{&d.CreatedAt}, timeCol{&d.UpdatedAt},
		&d.RefundedAmount, &d.RefundReserved)
	if err != nil {
		return nil, interpretError(err)
	}
	return &d, nil
}

func (t *tx) CreateDeposit(ctx context.Context, d *engine.Deposit) error {
	return t.insert(ctx, "deposit "+d.ID, `INSERT INTO deposits (`+depositColumns+`) VALUES (`+params(28)+`)`,
		d.ID, d.OrganizationID, d.MerchantID, d.CheckoutMode, d.Amount, d.PaymentMethod,
		d.RedirectURL, d.PayerPhone, string(d.Metadata), d.Status, d.Action, d.CheckoutToken, d.CheckoutURL,
		d.Channel, d.Operation, emptyNull(d.WalletID), d.RecipientPhone, d.RecipientName, d.QRPayload,
		d.VerificationState, d.AttemptsUsed, d.FailureCode, d.ProviderTransactionID,
		d.ExpiresAt, d.CreatedAt, d.UpdatedAt, d.RefundedAmount, d.RefundReserved)
}

func (t *tx) GetDeposit(ctx context.Context, organizationID, id string) (*engine.Deposit, error) {
	// ReadOne's read (a signed GET's) may share its statement with others
	// (depositReads).
	if r, ok := t.tx.(*oneRead); ok {
		if !r.admit(getDepositQuery) {
			return nil, errNotOneRead
		}
		return r.store.deposits.get(ctx, r.store, organizationID, id)
	}
	return scanDeposit(t.tx.QueryRow(ctx, getDepositQuery, id, organizationID))
}

const getDepositQuery = `SELECT ` + depositColumns + ` FROM deposits WHERE id = $1 AND ` + sameOrganization + `$2`

func (t *tx) GetDepositByMerchantID(ctx context.Context, organizationID, merchantID string) (*engine.Deposit, error) {
	return scanDeposit(t.tx.QueryRow(ctx, getDepositByMerchantIDQuery, organizationID, merchantID))
}

// getDepositByMerchantIDQuery reads through UNIQUE (merchant_id,
// organization_id), never an index that starts with organization_id (see
// migration 0019).
const getDepositByMerchantIDQuery = `SELECT ` + depositColumns + ` FROM deposits WHERE merchant_id = $2 AND ` + sameOrganization + `$1`

func (t *tx) GetDepositByCheckoutToken(ctx context.Context, token string) (*engine.Deposit, error) {
	return scanDeposit(t.tx.QueryRow(ctx,
		`SELECT `+depositColumns+` FROM deposits WHERE checkout_token = $1`, token))
}

func (t *tx) UpdateDeposit(ctx context.Context, d *engine.Deposit) error {
	// The fields a deposit is created with never change; these are the ones
	// its state machine moves. In a Pipeline it is queued (a submission's
	// attempt and deposit go together).
	return t.execChecked(ctx, oneRowChanged, `UPDATE deposits SET status = $1, verification_state = $2, attempts_used = $3,
		failure_code = $4, provider_transaction_id = $5, expires_at = $6, updated_at = $7
		WHERE id = $8`,
		d.Status, d.VerificationState, d.AttemptsUsed, d.FailureCode, d.ProviderTransactionID,
		d.ExpiresAt, d.UpdatedAt, d.ID)
}

// UpdateDepositRefunds writes what a deposit's refunds move (engine.Tx).
func (t *tx) UpdateDepositRefunds(ctx context.Context, d *engine.Deposit) error {
	return t.exec(ctx, `UPDATE deposits SET refunded_amount = $1, refund_reserved = $2, status = $3,
		verification_state = $4, updated_at = $5 WHERE id = $6`,
		d.RefundedAmount, d.RefundReserved, d.Status, d.VerificationState, d.UpdatedAt, d.ID)
}

// LockDeposit reads the deposit under FOR NO KEY UPDATE (see lockRow): a
// second locker waits until this transaction ends, and, at READ COMMITTED,
// then reads the row as the first left it.
func (t *tx) LockDeposit(ctx context.Context, id string) (*engine.Deposit, error) {
	return scanDeposit(t.tx.QueryRow(ctx, `SELECT `+depositColumns+` FROM deposits WHERE id = $1`+t.lockRow(), id))
}

// ListExpirableDeposits locks the deposits it returns and skips those
// another transaction has locked (one expiring them, or verifying them
// under LockDeposit), so two sweepers never expire the same deposit. At
// READ COMMITTED a row changed since the statement's snapshot is checked
// again as it is now before it is locked: a deposit that stopped being
// pending is left out. It walks the partial index deposits_expirable,
// whose condition the query spells (a parameter would not match it in a
// generic plan).
func (t *tx) ListExpirableDeposits(ctx context.Context, now time.Time, limit int) ([]*engine.Deposit, error) {
	if limit <= 0 {
		return nil, nil
	}
	lock := ""
	if !t.readOnly {
		lock = ` FOR NO KEY UPDATE SKIP LOCKED`
	}
	return queryList(ctx, t, scanDeposit, expirableQuery+lock, now, limit)
}

const expirableQuery = `SELECT ` + depositColumns + ` FROM deposits
	WHERE status = '` + engine.StatusPending + `' AND expires_at <= $1
	ORDER BY expires_at, id LIMIT $2`

func (t *tx) GetMasterKeyCheck(ctx context.Context) ([]byte, error) {
	var sealed []byte
	err := t.tx.QueryRow(ctx, `SELECT sealed FROM master_key_check WHERE id = 1`).Scan(&sealed)
	return sealed, interpretError(err)
}

func (t *tx) CreateMasterKeyCheck(ctx context.Context, sealed []byte, at time.Time) error {
	return t.insert(ctx, "master key check", `INSERT INTO master_key_check (id, sealed, created_at) VALUES (1, $1, $2)`, sealed, at)
}

func (t *tx) AnySealedSecret(ctx context.Context) (string, []byte, error) {
	var id string
	var sealed []byte
	err := t.tx.QueryRow(ctx, `(SELECT id, signing_secret FROM api_keys LIMIT 1)
		UNION ALL (SELECT id, secret FROM webhook_endpoints LIMIT 1) LIMIT 1`).Scan(&id, &sealed)
	return id, sealed, interpretError(err)
}
