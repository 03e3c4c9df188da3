package sqlite

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/smsinbox"
	"github.com/payd-engine/payd/provider/smsinbox/smsparse"
)

// The SMS inbox provider's tables (migration 0006), on the engine's own
// transactions.

var _ smsinbox.Tx = (*tx)(nil)

// InboxTx runs fn in a read-write transaction, as InTx.
func (s *Store) InboxTx(ctx context.Context, fn func(ctx context.Context, tx smsinbox.Tx) error) error {
	return s.InTx(ctx, func(ctx context.Context, t engine.Tx) error { return fn(ctx, t.(*tx)) })
}

// InboxReadTx runs fn in a read-only transaction, as ReadTx.
func (s *Store) InboxReadTx(ctx context.Context, fn func(ctx context.Context, tx smsinbox.Tx) error) error {
	return s.ReadTx(ctx, func(ctx context.Context, t engine.Tx) error { return fn(ctx, t.(*tx)) })
}

// Devices.

const deviceColumns = `id, organization_id, name, token_hash, token_hint, created_at, last_seen_at, revoked_at`

func scanDevice(row scanner) (*smsinbox.Device, error) {
	var d smsinbox.Device
	err := row.Scan(&d.ID, &d.OrganizationID, &d.Name, bytesCol{&d.TokenHash}, &d.TokenHint,
		timeCol{&d.CreatedAt}, nullTimeCol{&d.LastSeenAt}, nullTimeCol{&d.RevokedAt})
	if err != nil {
		return nil, interpretError(err)
	}
	return &d, nil
}

func (t *tx) CreateDevice(ctx context.Context, d *smsinbox.Device) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO sms_devices (`+deviceColumns+`) VALUES (`+placeholders(8)+`)`,
		d.ID, d.OrganizationID, d.Name, d.TokenHash, d.TokenHint,
		micros(d.CreatedAt), nullMicros(d.LastSeenAt), nullMicros(d.RevokedAt))
	return interpretError(err)
}

func (t *tx) GetDeviceByTokenHash(ctx context.Context, hash []byte) (*smsinbox.Device, error) {
	return scanDevice(t.tx.QueryRowContext(ctx, `SELECT `+deviceColumns+` FROM sms_devices WHERE token_hash = ?`, hash))
}

// LockDevice is a plain read: the IMMEDIATE write transaction is the lock
// (see LockDeposit).
func (t *tx) LockDevice(ctx context.Context, organizationID, id string) (*smsinbox.Device, error) {
	return scanDevice(t.tx.QueryRowContext(ctx,
		`SELECT `+deviceColumns+` FROM sms_devices WHERE id = ? AND organization_id = ?`, id, organizationID))
}

func (t *tx) UpdateDevice(ctx context.Context, d *smsinbox.Device) error {
	return t.exec(ctx, `UPDATE sms_devices SET name = ?, token_hash = ?, token_hint = ?, last_seen_at = ?, revoked_at = ?
		WHERE id = ?`, d.Name, d.TokenHash, d.TokenHint, nullMicros(d.LastSeenAt), nullMicros(d.RevokedAt), d.ID)
}

func (t *tx) ListDevices(ctx context.Context, organizationID string) ([]*smsinbox.Device, error) {
	return queryList(ctx, t, scanDevice, `SELECT `+deviceColumns+` FROM sms_devices
		WHERE organization_id = ? ORDER BY created_at, id`, organizationID)
}

// Balance chains.

const chainColumns = `wallet_id, organization_id, device_id, channel, balance, balance_message_id, updated_at`

func scanChain(row scanner) (*smsinbox.Chain, error) {
	var c smsinbox.Chain
	err := row.Scan(&c.WalletID, &c.OrganizationID, &c.DeviceID, &c.Channel,
		nullDecimalCol{&c.Balance}, &c.BalanceMessageID, timeCol{&c.UpdatedAt})
	if err != nil {
		return nil, interpretError(err)
	}
	return &c, nil
}

func (t *tx) CreateChain(ctx context.Context, c *smsinbox.Chain) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO sms_wallets (`+chainColumns+`) VALUES (`+placeholders(7)+`)`,
		c.WalletID, c.OrganizationID, c.DeviceID, c.Channel, nullDecimal(c.Balance), c.BalanceMessageID, micros(c.UpdatedAt))
	return interpretError(err)
}

func (t *tx) LockChain(ctx context.Context, organizationID, walletID string) (*smsinbox.Chain, error) {
	return scanChain(t.tx.QueryRowContext(ctx,
		`SELECT `+chainColumns+` FROM sms_wallets WHERE wallet_id = ? AND organization_id = ?`, walletID, organizationID))
}

func (t *tx) UpdateChain(ctx context.Context, c *smsinbox.Chain) error {
	return t.exec(ctx, `UPDATE sms_wallets SET device_id = ?, balance = ?, balance_message_id = ?, updated_at = ?
		WHERE wallet_id = ?`, c.DeviceID, nullDecimal(c.Balance), c.BalanceMessageID, micros(c.UpdatedAt), c.WalletID)
}

func (t *tx) ListChains(ctx context.Context, organizationID, deviceID string) ([]*smsinbox.Chain, error) {
	q := `SELECT ` + chainColumns + ` FROM sms_wallets WHERE organization_id = ?`
	args := []any{organizationID}
	if deviceID != "" {
		q += ` AND device_id = ?`
		args = append(args, deviceID)
	}
	return queryList(ctx, t, scanChain, q+` ORDER BY wallet_id`, args...)
}

func (t *tx) SetWalletsLiveUntil(ctx context.Context, walletIDs []string, until *time.Time) error {
	if len(walletIDs) == 0 {
		return nil
	}
	args := []any{nullMicros(until)}
	for _, id := range walletIDs {
		args = append(args, id)
	}
	_, err := t.tx.ExecContext(ctx, `UPDATE wallets SET live_until = ? WHERE id IN (`+placeholders(len(walletIDs))+`)`, args...)
	return interpretError(err)
}

// Messages.

const smsColumns = `id, organization_id, device_id, wallet_id, sender, body, fingerprint, received_at,
	status, reason, duplicate_of, channel, kind, credit, amount, fee, commission, counterparty,
	transaction_id, occurred_at, balance, reference, created_at, updated_at, prev_balance, prev_balance_alt`

// smsColumnsOf prefixes every column with a table alias.
func smsColumnsOf(alias string) string {
	cols := strings.Split(smsColumns, ",")
	for i, c := range cols {
		cols[i] = alias + "." + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}

func scanSMS(row scanner, extra ...any) (*smsinbox.SMS, error) {
	var m smsinbox.SMS
	var p smsparse.Message
	var amount, fee, commission, balance decimal.NullDecimal
	var occurred *time.Time
	var prev, prevAlt decimal.NullDecimal
	dest := []any{&m.ID, &m.OrganizationID, &m.DeviceID, &m.WalletID, &m.Sender, &m.Body, bytesCol{&m.Fingerprint},
		timeCol{&m.ReceivedAt}, &m.Status, &m.Reason, &m.DuplicateOf, &m.Channel, &p.Kind, &p.Credit,
		nullDecimalCol{&amount}, nullDecimalCol{&fee}, nullDecimalCol{&commission}, &p.Counterparty,
		&p.TransactionID, nullTimeCol{&occurred}, nullDecimalCol{&balance}, &p.Reference,
		timeCol{&m.CreatedAt}, timeCol{&m.UpdatedAt}, nullDecimalCol{&prev}, nullDecimalCol{&prevAlt}}
	if err := row.Scan(append(dest, extra...)...); err != nil {
		return nil, interpretError(err)
	}
	for _, b := range []decimal.NullDecimal{prev, prevAlt} {
		if b.Valid {
			m.PrevBalances = append(m.PrevBalances, b.Decimal)
		}
	}
	if p.Kind != "" {
		p.Channel = m.Channel
		p.Amount, p.Fee, p.Commission, p.Balance = amount.Decimal, fee.Decimal, commission.Decimal, balance.Decimal
		if occurred != nil {
			p.Time = *occurred
		}
		m.Parsed = &p
	}
	return &m, nil
}

func (t *tx) CreateSMS(ctx context.Context, m *smsinbox.SMS) error {
	var p smsparse.Message
	var amount, fee, commission, balance decimal.NullDecimal
	var occurred *time.Time
	if m.Parsed != nil {
		p = *m.Parsed
		amount, fee = decimal.NewNullDecimal(p.Amount), decimal.NewNullDecimal(p.Fee)
		commission, balance = decimal.NewNullDecimal(p.Commission), decimal.NewNullDecimal(p.Balance)
		occurred = &p.Time
	}
	prev, prevAlt := prevBalances(m)
	_, err := t.tx.ExecContext(ctx, `INSERT INTO sms_messages (`+smsColumns+`) VALUES (`+placeholders(26)+`)`,
		m.ID, m.OrganizationID, m.DeviceID, m.WalletID, m.Sender, m.Body, m.Fingerprint, micros(m.ReceivedAt),
		m.Status, m.Reason, m.DuplicateOf, m.Channel, p.Kind, p.Credit,
		nullDecimal(amount), nullDecimal(fee), nullDecimal(commission), p.Counterparty,
		p.TransactionID, nullMicros(occurred), nullDecimal(balance), p.Reference,
		micros(m.CreatedAt), micros(m.UpdatedAt), nullDecimal(prev), nullDecimal(prevAlt))
	return interpretError(err)
}

func (t *tx) UpdateSMS(ctx context.Context, m *smsinbox.SMS) error {
	return t.exec(ctx, `UPDATE sms_messages SET status = ?, reason = ?, updated_at = ? WHERE id = ?`,
		m.Status, m.Reason, micros(m.UpdatedAt), m.ID)
}

// The queries below spell the WHERE clauses of the partial indexes they
// walk as literals: SQLite uses a partial index only for a query whose
// WHERE clause contains the index's terms as written (a bound parameter in
// their place makes it re-prepare the statement on every bind to find out).

func (t *tx) GetSMSByFingerprint(ctx context.Context, organizationID string, fingerprint []byte) (*smsinbox.SMS, error) {
	return scanSMS(t.tx.QueryRowContext(ctx, `SELECT `+smsColumns+` FROM sms_messages
		WHERE organization_id = ? AND fingerprint = ? AND status <> 'duplicate'`,
		organizationID, fingerprint))
}

// ListSMSByTransactionID walks sms_messages_transaction. The + of
// +created_at keeps the planner, which has no statistics, from preferring
// sms_messages_organization for its order and filtering every message of
// the organization: the few rows of a transaction ID are sorted instead.
func (t *tx) ListSMSByTransactionID(ctx context.Context, organizationID, channel, transactionID string) ([]*smsinbox.SMS, error) {
	return queryList(ctx, t, scanSMSPlain, `SELECT `+smsColumns+` FROM sms_messages
		WHERE organization_id = ? AND channel = ? AND transaction_id = ?
			AND transaction_id <> '' AND status <> 'duplicate'
		ORDER BY +created_at, id`, organizationID, channel, transactionID)
}

func (t *tx) ListHeldSMS(ctx context.Context, walletID string) ([]*smsinbox.SMS, error) {
	return queryList(ctx, t, scanSMSPlain, `SELECT `+smsColumns+` FROM sms_messages
		WHERE wallet_id = ? AND status = 'held'
		ORDER BY received_at, id`, walletID)
}

// prevBalances are the two columns of m.PrevBalances.
func prevBalances(m *smsinbox.SMS) (prev, alt decimal.NullDecimal) {
	if len(m.PrevBalances) > 0 {
		prev = decimal.NewNullDecimal(m.PrevBalances[0])
	}
	if len(m.PrevBalances) > 1 {
		alt = decimal.NewNullDecimal(m.PrevBalances[1])
	}
	return prev, alt
}

// ListHeldSMSFollowing walks sms_messages_follows, _follows_alt and
// _held_legacy; balances are compared as canonical text, as stored.
func (t *tx) ListHeldSMSFollowing(ctx context.Context, walletID string, balance decimal.Decimal) ([]*smsinbox.SMS, error) {
	b := balance.String()
	return queryList(ctx, t, scanSMSPlain, `SELECT `+smsColumns+` FROM sms_messages
			WHERE wallet_id = ? AND status = 'held' AND prev_balance = ?
		UNION SELECT `+smsColumns+` FROM sms_messages
			WHERE wallet_id = ? AND status = 'held' AND prev_balance_alt = ?
		UNION SELECT `+smsColumns+` FROM sms_messages
			WHERE wallet_id = ? AND status = 'held' AND prev_balance IS NULL
		ORDER BY received_at, id`, walletID, b, walletID, b, walletID)
}

func (t *tx) ListOldestHeldSMS(ctx context.Context, walletID string, before time.Time, limit int) ([]*smsinbox.SMS, error) {
	return queryList(ctx, t, scanSMSPlain, `SELECT `+smsColumns+` FROM sms_messages
		WHERE wallet_id = ? AND status = 'held' AND created_at < ?
		ORDER BY created_at, id LIMIT ?`, walletID, micros(before), limit)
}

func (t *tx) CountSMS(ctx context.Context, organizationID, walletID, status string) (int, error) {
	var n int
	err := t.tx.QueryRowContext(ctx, `SELECT count FROM sms_message_counts
		WHERE organization_id = ? AND wallet_id = ? AND status = ?`, organizationID, walletID, status).Scan(&n)
	if err == sql.ErrNoRows {
		return 0, nil
	}
	return n, interpretError(err)
}

func (t *tx) ListSMSCounts(ctx context.Context, organizationID string) ([]smsinbox.SMSCount, error) {
	rows, err := t.tx.QueryContext(ctx, `SELECT wallet_id, status, count FROM sms_message_counts
		WHERE organization_id = ? AND count <> 0 ORDER BY wallet_id, status`, organizationID)
	if err != nil {
		return nil, interpretError(err)
	}
	defer rows.Close()
	var out []smsinbox.SMSCount
	for rows.Next() {
		var c smsinbox.SMSCount
		if err := rows.Scan(&c.WalletID, &c.Status, &c.Count); err != nil {
			return nil, interpretError(err)
		}
		out = append(out, c)
	}
	return out, interpretError(rows.Err())
}

// Settings.

func (t *tx) GetSettings(ctx context.Context, organizationID string) (*smsinbox.Settings, error) {
	var s smsinbox.Settings
	var age int64
	err := t.tx.QueryRowContext(ctx, `SELECT organization_id, payout_sms_confirm, held_max, held_max_age, updated_at
		FROM sms_settings WHERE organization_id = ?`, organizationID).
		Scan(&s.OrganizationID, &s.PayoutSMSConfirm, &s.HeldMax, &age, timeCol{&s.UpdatedAt})
	if err != nil {
		return nil, interpretError(err)
	}
	s.HeldMaxAge = time.Duration(age) * time.Microsecond
	return &s, nil
}

func (t *tx) PutSettings(ctx context.Context, s *smsinbox.Settings) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO sms_settings
		(organization_id, payout_sms_confirm, held_max, held_max_age, updated_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (organization_id) DO UPDATE SET payout_sms_confirm = excluded.payout_sms_confirm,
			held_max = excluded.held_max, held_max_age = excluded.held_max_age, updated_at = excluded.updated_at`,
		s.OrganizationID, s.PayoutSMSConfirm, s.HeldMax, s.HeldMaxAge.Microseconds(), micros(s.UpdatedAt))
	return interpretError(err)
}

func scanSMSPlain(row scanner) (*smsinbox.SMS, error) { return scanSMS(row) }

func (t *tx) ListSMS(ctx context.Context, p smsinbox.ListSMSParams) ([]*smsinbox.SMS, error) {
	where := []string{"m.organization_id = ?"}
	args := []any{p.OrganizationID}
	if p.WalletID != "" {
		where, args = append(where, "m.wallet_id = ?"), append(args, p.WalletID)
	}
	if p.Status != "" {
		where, args = append(where, "m.status = ?"), append(args, p.Status)
	}
	limit := p.Limit
	if limit <= 0 {
		limit = -1 // no limit
	}
	args = append(args, limit)
	// The attempt is joined only for an original that carries an ID and
	// only within the organization: another's attempt is none of its
	// business.
	return queryList(ctx, t, scanSMSWithMatch, `SELECT `+smsColumnsOf("m")+`,
			a.deposit_id, a.id, a.status, a.failure_code
		FROM sms_messages m
		LEFT JOIN attempts a ON m.transaction_id <> '' AND m.status <> 'duplicate'
			AND a.channel = m.channel AND a.transaction_id = m.transaction_id AND a.organization_id = m.organization_id
		WHERE `+strings.Join(where, " AND ")+`
		ORDER BY m.created_at DESC, m.id DESC LIMIT ?`, args...)
}

func scanSMSWithMatch(row scanner) (*smsinbox.SMS, error) {
	var depositID, attemptID, status, code sql.NullString
	m, err := scanSMS(row, &depositID, &attemptID, &status, &code)
	if err != nil {
		return nil, err
	}
	if attemptID.Valid {
		m.Match = &smsinbox.Match{DepositID: depositID.String, AttemptID: attemptID.String, Status: status.String, FailureCode: code.String}
	}
	return m, nil
}

// Manual payouts.

const manualPayoutColumns = `idempotency_key, organization_id, method, account, amount, status, reference,
	reason, operator, created_at, completed_at, sms_id`

func scanManualPayout(row scanner) (*smsinbox.ManualPayout, error) {
	var p smsinbox.ManualPayout
	err := row.Scan(&p.IdempotencyKey, &p.OrganizationID, &p.Method, &p.Account, decimalCol{&p.Amount},
		&p.Status, &p.Reference, &p.Reason, &p.Operator, timeCol{&p.CreatedAt}, timeCol{&p.CompletedAt}, &p.SMSID)
	if err != nil {
		return nil, interpretError(err)
	}
	return &p, nil
}

func (t *tx) CreateManualPayout(ctx context.Context, p *smsinbox.ManualPayout) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO manual_payouts (`+manualPayoutColumns+`) VALUES (`+placeholders(12)+`)`,
		p.IdempotencyKey, p.OrganizationID, p.Method, p.Account, p.Amount.String(), p.Status, p.Reference,
		p.Reason, p.Operator, micros(p.CreatedAt), zeroMicros(p.CompletedAt), p.SMSID)
	return interpretError(err)
}

func (t *tx) GetManualPayout(ctx context.Context, idempotencyKey string) (*smsinbox.ManualPayout, error) {
	return scanManualPayout(t.tx.QueryRowContext(ctx,
		`SELECT `+manualPayoutColumns+` FROM manual_payouts WHERE idempotency_key = ?`, idempotencyKey))
}

// LockManualPayout is a plain read: the IMMEDIATE write transaction is the
// lock (see LockDeposit).
func (t *tx) LockManualPayout(ctx context.Context, idempotencyKey string) (*smsinbox.ManualPayout, error) {
	return t.GetManualPayout(ctx, idempotencyKey)
}

func (t *tx) UpdateManualPayout(ctx context.Context, p *smsinbox.ManualPayout) error {
	return t.exec(ctx, `UPDATE manual_payouts SET status = ?, reference = ?, reason = ?, operator = ?, completed_at = ?, sms_id = ?
		WHERE idempotency_key = ?`, p.Status, p.Reference, p.Reason, p.Operator, zeroMicros(p.CompletedAt), p.SMSID, p.IdempotencyKey)
}

func (t *tx) ListManualPayouts(ctx context.Context, p smsinbox.ListPayoutsParams) ([]*smsinbox.ManualPayout, error) {
	var where []string
	var args []any
	if p.OrganizationID != "" {
		where, args = append(where, "organization_id = ?"), append(args, p.OrganizationID)
	}
	if p.Status != "" {
		where, args = append(where, "status = ?"), append(args, p.Status)
	}
	q := `SELECT ` + manualPayoutColumns + ` FROM manual_payouts`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	return queryList(ctx, t, scanManualPayout, q+` ORDER BY created_at, idempotency_key`, args...)
}
