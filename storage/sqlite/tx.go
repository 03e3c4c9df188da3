package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/storage/internal/rowset"
	"github.com/payd-engine/payd/storage/internal/schema"
)

// tx is an engine.Tx on one database/sql transaction, or on the reader
// pool for ReadOne.
type tx struct {
	tx querier
	// lib, set in ReadOne, runs getRow's reads (see libread.go).
	lib *libReaders
}

// querier is a *sql.Tx or a *sql.DB.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	PrepareContext(ctx context.Context, query string) (*sql.Stmt, error)
}

var _ engine.Tx = (*tx)(nil)

// scanner is a *sql.Row or *sql.Rows.
type scanner = rowset.Scanner

// placeholders returns "?, ?, ..." for n values.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// exec runs a statement that must change one row: ErrNotFound if it changed
// none.
func (t *tx) exec(ctx context.Context, query string, args ...any) error {
	res, err := t.tx.ExecContext(ctx, query, args...)
	if err != nil {
		return interpretError(err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return engine.ErrNotFound
	}
	return nil
}

// queryList runs a query and scans every row with scan.
func queryList[T any](ctx context.Context, t *tx, scan func(scanner) (*T, error), query string, args ...any) ([]*T, error) {
	rs, err := t.tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, interpretError(err)
	}
	defer rs.Close()
	out, err := rowset.Collect(rs, scan)
	return out, interpretError(err)
}

// getRow reads the one row query selects into a new T, whose column
// destinations dests appends: through readRow on the reader pool
// (ReadOne), reusing the connection's slice for them, and through
// database/sql in a transaction.
func getRow[T any](ctx context.Context, t *tx, dests func(*T, []any) []any, query string, args ...any) (*T, error) {
	v := new(T)
	if t.lib == nil {
		if err := t.tx.QueryRowContext(ctx, query, args...).Scan(dests(v, nil)...); err != nil {
			return nil, interpretError(err)
		}
		return v, nil
	}
	err := t.lib.readRow(ctx, query, args, func(r *rowValues) error {
		r.dest = dests(v, r.dest[:0])
		defer clear(r.dest)
		return r.Scan(r.dest...)
	})
	if err != nil {
		return nil, interpretError(err)
	}
	return v, nil
}

// Organizations.

const orgColumns = schema.OrgColumns

func scanOrganization(row scanner) (*engine.Organization, error) {
	var o engine.Organization
	var disabled string
	err := row.Scan(&o.ID, &o.Name, &o.DepositsEnabled, &o.H2HEnabled, &o.WithdrawalsEnabled,
		&o.InstructionsWindow, &o.RedirectWindow,
		decimalCol{&o.DepositFeePercent}, decimalCol{&o.DepositFeeFixed},
		decimalCol{&o.WithdrawCommissionPercent}, decimalCol{&o.WithdrawCommissionFixed},
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
		return "", fmt.Errorf("sqlite: %w", err)
	}
	return fees, nil
}

// methodFeesCol scans the JSON of engine.MethodFees. Empty maps may read
// back nil.
type methodFeesCol struct{ f *engine.MethodFees }

func (c methodFeesCol) Scan(v any) error {
	var b []byte
	switch v := v.(type) {
	case string:
		b = []byte(v)
	case []byte:
		b = v
	default:
		return fmt.Errorf("method fees column: unexpected %T", v)
	}
	return schema.ParseMethodFees(b, c.f)
}

func (t *tx) CreateOrganization(ctx context.Context, o *engine.Organization) error {
	fees, err := methodFeesJSON(o)
	if err != nil {
		return err
	}
	_, err = t.tx.ExecContext(ctx, `INSERT INTO organizations (`+orgColumns+`) VALUES (`+placeholders(17)+`)`,
		o.ID, o.Name, o.DepositsEnabled, o.H2HEnabled, o.WithdrawalsEnabled,
		int64(o.InstructionsWindow), int64(o.RedirectWindow),
		o.DepositFeePercent.String(), o.DepositFeeFixed.String(),
		o.WithdrawCommissionPercent.String(), o.WithdrawCommissionFixed.String(),
		fees, micros(o.CreatedAt), micros(o.UpdatedAt), o.LogoURL, o.SupportContact, schema.JoinMethods(o.DisabledMethods))
	return interpretError(err)
}

func (t *tx) GetOrganization(ctx context.Context, id string) (*engine.Organization, error) {
	return scanOrganization(t.tx.QueryRowContext(ctx, `SELECT `+orgColumns+` FROM organizations WHERE id = ?`, id))
}

func (t *tx) UpdateOrganization(ctx context.Context, o *engine.Organization) error {
	fees, err := methodFeesJSON(o)
	if err != nil {
		return err
	}
	return t.exec(ctx, `UPDATE organizations SET name = ?, deposits_enabled = ?, h2h_enabled = ?, withdrawals_enabled = ?,
		instructions_window_ns = ?, redirect_window_ns = ?,
		deposit_fee_percent = ?, deposit_fee_fixed = ?, withdraw_commission_percent = ?, withdraw_commission_fixed = ?,
		method_fees = ?, updated_at = ?, logo_url = ?, support_contact = ?, disabled_methods = ?
		WHERE id = ?`,
		o.Name, o.DepositsEnabled, o.H2HEnabled, o.WithdrawalsEnabled,
		int64(o.InstructionsWindow), int64(o.RedirectWindow),
		o.DepositFeePercent.String(), o.DepositFeeFixed.String(),
		o.WithdrawCommissionPercent.String(), o.WithdrawCommissionFixed.String(),
		fees, micros(o.UpdatedAt), o.LogoURL, o.SupportContact, schema.JoinMethods(o.DisabledMethods), o.ID)
}

func (t *tx) ListOrganizations(ctx context.Context) ([]*engine.Organization, error) {
	return queryList(ctx, t, scanOrganization, `SELECT `+orgColumns+` FROM organizations ORDER BY created_at, id`)
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
	_, err := t.tx.ExecContext(ctx, `INSERT INTO api_keys (`+apiKeyColumns+`) VALUES (`+placeholders(9)+`)`,
		k.ID, k.OrganizationID, k.Hash, k.Hint, k.SigningSecret,
		nullBytes(k.PreviousSigningSecret), zeroMicros(k.PreviousSecretExpiresAt),
		micros(k.CreatedAt), nullMicros(k.ExpiresAt))
	return interpretError(err)
}

func (t *tx) GetAPIKey(ctx context.Context, id string) (*engine.APIKey, error) {
	return scanAPIKey(t.tx.QueryRowContext(ctx, `SELECT `+apiKeyColumns+` FROM api_keys WHERE id = ?`, id))
}

func (t *tx) GetAPIKeyByHash(ctx context.Context, hash []byte) (*engine.APIKey, error) {
	return scanAPIKey(t.tx.QueryRowContext(ctx, `SELECT `+apiKeyColumns+` FROM api_keys WHERE hash = ?`, hash))
}

func (t *tx) ListAPIKeys(ctx context.Context, organizationID string) ([]*engine.APIKey, error) {
	return queryList(ctx, t, scanAPIKey,
		`SELECT `+apiKeyColumns+` FROM api_keys WHERE organization_id = ? ORDER BY created_at, id`, organizationID)
}

func (t *tx) UpdateAPIKey(ctx context.Context, k *engine.APIKey) error {
	return t.exec(ctx, `UPDATE api_keys SET signing_secret = ?, previous_signing_secret = ?,
		previous_secret_expires_at = ?, expires_at = ?
		WHERE id = ?`,
		k.SigningSecret, nullBytes(k.PreviousSigningSecret), zeroMicros(k.PreviousSecretExpiresAt),
		nullMicros(k.ExpiresAt), k.ID)
}

// Wallets.

const walletColumns = schema.WalletColumns

func scanWallet(row scanner) (*engine.Wallet, error) {
	var w engine.Wallet
	err := row.Scan(&w.ID, &w.OrganizationID, &w.Channel, &w.Operation, &w.Phone, &w.Name, &w.QRPayload,
		nullDecimalCol{&w.MinAmount}, nullDecimalCol{&w.MaxAmount}, nullDecimalCol{&w.DailyLimit},
		&w.Enabled, nullTimeCol{&w.LastAssignedAt}, timeCol{&w.CreatedAt}, nullTimeCol{&w.LiveUntil})
	if err != nil {
		return nil, interpretError(err)
	}
	return &w, nil
}

func (t *tx) CreateWallet(ctx context.Context, w *engine.Wallet) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO wallets (`+walletColumns+`) VALUES (`+placeholders(14)+`)`,
		w.ID, w.OrganizationID, w.Channel, w.Operation, w.Phone, w.Name, w.QRPayload,
		nullDecimal(w.MinAmount), nullDecimal(w.MaxAmount), nullDecimal(w.DailyLimit),
		w.Enabled, nullMicros(w.LastAssignedAt), micros(w.CreatedAt), nullMicros(w.LiveUntil))
	return interpretError(err)
}

func (t *tx) GetWallet(ctx context.Context, organizationID, id string) (*engine.Wallet, error) {
	return scanWallet(t.tx.QueryRowContext(ctx,
		`SELECT `+walletColumns+` FROM wallets WHERE id = ? AND organization_id = ?`, id, organizationID))
}

func (t *tx) ListWallets(ctx context.Context, p engine.ListWalletsParams) ([]*engine.Wallet, error) {
	// Only the filters that are set go into the query, so it can use the
	// (organization_id, channel, operation, phone) index.
	var where []string
	var args []any
	for _, f := range []struct{ column, value string }{
		{"organization_id", p.OrganizationID},
		{"channel", p.Channel},
		{"operation", p.Operation},
	} {
		if f.value != "" {
			where = append(where, f.column+" = ?")
			args = append(args, f.value)
		}
	}
	if p.EnabledOnly {
		where = append(where, "enabled = 1")
	}
	q := `SELECT ` + walletColumns + ` FROM wallets`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	// p.ForUpdate changes nothing: InTx begins IMMEDIATE, so the write
	// transaction is exclusive and is itself the lock on the pool (see
	// LockDeposit).
	q += ` ORDER BY last_assigned_at NULLS FIRST, id`
	return queryList(ctx, t, scanWallet, q, args...)
}

func (t *tx) UpdateWallet(ctx context.Context, w *engine.Wallet) error {
	// Organization, channel, operation and phone identify the wallet; they
	// do not change. live_until is its SMS device's to write.
	return t.exec(ctx, `UPDATE wallets SET name = ?, qr_payload = ?,
		min_amount = ?, max_amount = ?, daily_limit = ?, enabled = ?, last_assigned_at = ?
		WHERE id = ?`,
		w.Name, w.QRPayload, nullDecimal(w.MinAmount), nullDecimal(w.MaxAmount), nullDecimal(w.DailyLimit),
		w.Enabled, nullMicros(w.LastAssignedAt), w.ID)
}

// LockWallet is a plain GetWallet: the IMMEDIATE write transaction is
// exclusive and is itself the lock (see LockDeposit).
func (t *tx) LockWallet(ctx context.Context, organizationID, id string) (*engine.Wallet, error) {
	return t.GetWallet(ctx, organizationID, id)
}

func (t *tx) WalletDepositAmounts(ctx context.Context, walletID string, since time.Time) ([]decimal.Decimal, error) {
	rows, err := t.tx.QueryContext(ctx, `SELECT amount FROM deposits
		WHERE wallet_id = ? AND created_at >= ? AND status NOT IN (?, ?, ?)`,
		walletID, micros(since), engine.StatusFailed, engine.StatusExpired, engine.StatusCancelled)
	if err != nil {
		return nil, interpretError(err)
	}
	defer rows.Close()
	var out []decimal.Decimal
	for rows.Next() {
		var d decimal.Decimal
		if err := rows.Scan(decimalCol{&d}); err != nil {
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
	if err := row.Scan(depositDests(&d, nil)...); err != nil {
		return nil, interpretError(err)
	}
	return &d, nil
}

// depositDests appends the destinations of depositColumns in d to dst.
func depositDests(d *engine.Deposit, dst []any) []any {
	return append(dst, &d.ID, &d.OrganizationID, &d.MerchantID, &d.CheckoutMode, decimalCol{&d.Amount}, &d.PaymentMethod,
		&d.RedirectURL, &d.PayerPhone, bytesCol{&d.Metadata}, &d.Status, &d.Action, &d.CheckoutToken, &d.CheckoutURL,
		&d.Channel, &d.Operation, stringCol{&d.WalletID}, &d.RecipientPhone, &d.RecipientName, &d.QRPayload,
		&d.VerificationState, &d.AttemptsUsed, &d.FailureCode, &d.ProviderTransactionID,
		timeCol{&d.ExpiresAt}, timeCol{&d.CreatedAt}, timeCol{&d.UpdatedAt},
		decimalCol{&d.RefundedAmount}, decimalCol{&d.RefundReserved})
}

func (t *tx) CreateDeposit(ctx context.Context, d *engine.Deposit) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO deposits (`+depositColumns+`) VALUES (`+placeholders(28)+`)`,
		d.ID, d.OrganizationID, d.MerchantID, d.CheckoutMode, d.Amount.String(), d.PaymentMethod,
		d.RedirectURL, d.PayerPhone, string(d.Metadata), d.Status, d.Action, d.CheckoutToken, d.CheckoutURL,
		d.Channel, d.Operation, emptyNull(d.WalletID), d.RecipientPhone, d.RecipientName, d.QRPayload,
		d.VerificationState, d.AttemptsUsed, d.FailureCode, d.ProviderTransactionID,
		micros(d.ExpiresAt), micros(d.CreatedAt), micros(d.UpdatedAt),
		d.RefundedAmount.String(), d.RefundReserved.String())
	return interpretError(err)
}

func (t *tx) GetDeposit(ctx context.Context, organizationID, id string) (*engine.Deposit, error) {
	return getRow(ctx, t, depositDests,
		`SELECT `+depositColumns+` FROM deposits WHERE id = ? AND organization_id = ?`, id, organizationID)
}

func (t *tx) GetDepositByMerchantID(ctx context.Context, organizationID, merchantID string) (*engine.Deposit, error) {
	return getRow(ctx, t, depositDests,
		`SELECT `+depositColumns+` FROM deposits WHERE organization_id = ? AND merchant_id = ?`, organizationID, merchantID)
}

func (t *tx) GetDepositByCheckoutToken(ctx context.Context, token string) (*engine.Deposit, error) {
	return getRow(ctx, t, depositDests,
		`SELECT `+depositColumns+` FROM deposits WHERE checkout_token = ?`, token)
}

func (t *tx) UpdateDeposit(ctx context.Context, d *engine.Deposit) error {
	// The fields a deposit is created with never change; these are the ones
	// its state machine moves.
	return t.exec(ctx, `UPDATE deposits SET status = ?, verification_state = ?, attempts_used = ?,
		failure_code = ?, provider_transaction_id = ?, expires_at = ?, updated_at = ?
		WHERE id = ?`,
		d.Status, d.VerificationState, d.AttemptsUsed, d.FailureCode, d.ProviderTransactionID,
		micros(d.ExpiresAt), micros(d.UpdatedAt), d.ID)
}

// UpdateDepositRefunds writes what a deposit's refunds move (engine.Tx).
func (t *tx) UpdateDepositRefunds(ctx context.Context, d *engine.Deposit) error {
	return t.exec(ctx, `UPDATE deposits SET refunded_amount = ?, refund_reserved = ?, status = ?,
		verification_state = ?, updated_at = ? WHERE id = ?`,
		d.RefundedAmount.String(), d.RefundReserved.String(), d.Status, d.VerificationState, micros(d.UpdatedAt), d.ID)
}

// LockDeposit is a plain SELECT: in SQLite the write transaction itself is
// the lock. InTx begins IMMEDIATE, taking the database's one write lock up
// front, so no other writer (in this process or another) runs until this
// transaction ends and the row cannot change under it. In a ReadTx it reads
// the snapshot, which is just as stable.
func (t *tx) LockDeposit(ctx context.Context, id string) (*engine.Deposit, error) {
	return scanDeposit(t.tx.QueryRowContext(ctx, `SELECT `+depositColumns+` FROM deposits WHERE id = ?`, id))
}

// ListExpirableDeposits walks the partial index deposits_expirable, whose
// condition the query spells. There are no rows locked by another
// transaction to skip: while this one holds the write lock there is no
// other writer.
func (t *tx) ListExpirableDeposits(ctx context.Context, now time.Time, limit int) ([]*engine.Deposit, error) {
	if limit <= 0 {
		return nil, nil
	}
	return queryList(ctx, t, scanDeposit, expirableQuery, micros(now), limit)
}

const expirableQuery = `SELECT ` + depositColumns + ` FROM deposits
	WHERE status = '` + engine.StatusPending + `' AND expires_at <= ?
	ORDER BY expires_at, id LIMIT ?`

func (t *tx) GetMasterKeyCheck(ctx context.Context) ([]byte, error) {
	var sealed []byte
	err := t.tx.QueryRowContext(ctx, `SELECT sealed FROM master_key_check WHERE id = 1`).Scan(&sealed)
	return sealed, interpretError(err)
}

func (t *tx) CreateMasterKeyCheck(ctx context.Context, sealed []byte, at time.Time) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO master_key_check (id, sealed, created_at) VALUES (1, ?, ?)`, sealed, micros(at))
	return interpretError(err)
}

func (t *tx) AnySealedSecret(ctx context.Context) (string, []byte, error) {
	var id string
	var sealed []byte
	err := t.tx.QueryRowContext(ctx, `SELECT id, signing_secret FROM api_keys
		UNION ALL SELECT id, secret FROM webhook_endpoints LIMIT 1`).Scan(&id, &sealed)
	return id, sealed, interpretError(err)
}
