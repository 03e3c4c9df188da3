package postgres

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/smsinbox"
	"github.com/payd-engine/payd/provider/smsinbox/smsparse"
)

// The SMS inbox provider's tables (migration 0006), on the engine's own
// transactions. The Lock methods lock their row as the engine's do (see
// lockRow).

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

// CreateDevice relies on UNIQUE (token_hash) for ErrDuplicate.
func (t *tx) CreateDevice(ctx context.Context, d *smsinbox.Device) error {
	return t.insert(ctx, "sms device "+d.ID, `INSERT INTO sms_devices (`+deviceColumns+`) VALUES (`+params(8)+`)`,
		d.ID, d.OrganizationID, d.Name, d.TokenHash, d.TokenHint,
		d.CreatedAt, nullTime(d.LastSeenAt), nullTime(d.RevokedAt))
}

func (t *tx) GetDeviceByTokenHash(ctx context.Context, hash []byte) (*smsinbox.Device, error) {
	// A nil hash is NULL, which matches nothing, as in SQLite.
	return scanDevice(t.tx.QueryRow(ctx, `SELECT `+deviceColumns+` FROM sms_devices WHERE token_hash = $1`, hash))
}

// LockDevice reads the device under FOR NO KEY UPDATE (see lockRow): it
// serializes a device's reports and messages.
func (t *tx) LockDevice(ctx context.Context, organizationID, id string) (*smsinbox.Device, error) {
	return scanDevice(t.tx.QueryRow(ctx,
		`SELECT `+deviceColumns+` FROM sms_devices WHERE id = $1 AND organization_id = $2`+t.lockRow(), id, organizationID))
}

func (t *tx) UpdateDevice(ctx context.Context, d *smsinbox.Device) error {
	return t.exec(ctx, `UPDATE sms_devices SET name = $1, token_hash = $2, token_hint = $3, last_seen_at = $4, revoked_at = $5
		WHERE id = $6`, d.Name, d.TokenHash, d.TokenHint, nullTime(d.LastSeenAt), nullTime(d.RevokedAt), d.ID)
}

func (t *tx) ListDevices(ctx context.Context, organizationID string) ([]*smsinbox.Device, error) {
	return queryList(ctx, t, scanDevice, `SELECT `+deviceColumns+` FROM sms_devices
		WHERE organization_id = $1 ORDER BY created_at, id`, organizationID)
}

// Balance chains.

const chainColumns = `wallet_id, organization_id, device_id, channel, balance, balance_message_id, updated_at`

func scanChain(row scanner) (*smsinbox.Chain, error) {
	var c smsinbox.Chain
	err := row.Scan(&c.WalletID, &c.OrganizationID, &c.DeviceID, &c.Channel,
		&c.Balance, &c.BalanceMessageID, timeCol{&c.UpdatedAt})
	if err != nil {
		return nil, interpretError(err)
	}
	return &c, nil
}

// CreateChain relies on the primary key (wallet_id) for ErrDuplicate.
func (t *tx) CreateChain(ctx context.Context, c *smsinbox.Chain) error {
	return t.insert(ctx, "sms wallet "+c.WalletID, `INSERT INTO sms_wallets (`+chainColumns+`) VALUES (`+params(7)+`)`,
		c.WalletID, c.OrganizationID, c.DeviceID, c.Channel, c.Balance, c.BalanceMessageID, c.UpdatedAt)
}

// LockChain reads the chain under FOR NO KEY UPDATE (see lockRow): the
// messages of a wallet extend its balance chain one transaction at a time.
func (t *tx) LockChain(ctx context.Context, organizationID, walletID string) (*smsinbox.Chain, error) {
	return scanChain(t.tx.QueryRow(ctx,
		`SELECT `+chainColumns+` FROM sms_wallets WHERE wallet_id = $1 AND organization_id = $2`+t.lockRow(),
		walletID, organizationID))
}

func (t *tx) UpdateChain(ctx context.Context, c *smsinbox.Chain) error {
	return t.exec(ctx, `UPDATE sms_wallets SET device_id = $1, balance = $2, balance_message_id = $3, updated_at = $4
		WHERE wallet_id = $5`, c.DeviceID, c.Balance, c.BalanceMessageID, c.UpdatedAt, c.WalletID)
}

func (t *tx) ListChains(ctx context.Context, organizationID, deviceID string) ([]*smsinbox.Chain, error) {
	f := filter{conds: []string{"organization_id = $1"}, args: []any{organizationID}}
	f.eq("device_id", deviceID)
	return queryList(ctx, t, scanChain, `SELECT `+chainColumns+` FROM sms_wallets`+f.where()+` ORDER BY wallet_id`, f.args...)
}

// SetWalletsLiveUntil locks the wallets in ID order before it writes them,
// as ListWallets with ForUpdate does, so that it and a deposit picking from
// a pool never lock two wallets in opposite orders.
func (t *tx) SetWalletsLiveUntil(ctx context.Context, walletIDs []string, until *time.Time) error {
	if len(walletIDs) == 0 {
		return nil
	}
	_, err := t.tx.Exec(ctx, `WITH w AS MATERIALIZED (
			SELECT id FROM wallets WHERE id = ANY($2) ORDER BY id FOR NO KEY UPDATE)
		UPDATE wallets SET live_until = $1 FROM w WHERE wallets.id = w.id`,
		nullTime(until), walletIDs)
	return interpretError(err)
}

// Messages.

const smsColumns = `id, organization_id, device_id, wallet_id, sender, body, fingerprint, received_at,
	status, reason, duplicate_of, channel, kind, credit, amount, fee, commission, counterparty,
	transaction_id, occurred_at, balance, reference, created_at, updated_at, prev_balance, prev_balance_alt`

// smsColumnsM is smsColumns of the alias m.
var smsColumnsM = func() string {
	cols := strings.Split(smsColumns, ",")
	for i, c := range cols {
		cols[i] = "m." + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}()

func scanSMS(row scanner, extra ...any) (*smsinbox.SMS, error) {
	var m smsinbox.SMS
	var p smsparse.Message
	var amount, fee, commission, balance decimal.NullDecimal
	var occurred *time.Time
	var prev, prevAlt decimal.NullDecimal
	dest := []any{&m.ID, &m.OrganizationID, &m.DeviceID, &m.WalletID, &m.Sender, &m.Body, bytesCol{&m.Fingerprint},
		timeCol{&m.ReceivedAt}, &m.Status, &m.Reason, &m.DuplicateOf, &m.Channel, &p.Kind, &p.Credit,
		&amount, &fee, &commission, &p.Counterparty,
		&p.TransactionID, nullTimeCol{&occurred}, &balance, &p.Reference,
		timeCol{&m.CreatedAt}, timeCol{&m.UpdatedAt}, &prev, &prevAlt}
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

// CreateSMS relies on the partial UNIQUE (organization_id, fingerprint)
// WHERE status <> 'duplicate' for ErrDuplicate: ON CONFLICT DO NOTHING
// without a target takes every unique index, partial ones included, as an
// arbiter. A second copy racing the first waits for it and finds its row.
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
	var prev, prevAlt decimal.NullDecimal
	if len(m.PrevBalances) > 0 {
		prev = decimal.NewNullDecimal(m.PrevBalances[0])
	}
	if len(m.PrevBalances) > 1 {
		prevAlt = decimal.NewNullDecimal(m.PrevBalances[1])
	}
	return t.insert(ctx, "sms "+m.ID, `INSERT INTO sms_messages (`+smsColumns+`) VALUES (`+params(26)+`)`,
		m.ID, m.OrganizationID, m.DeviceID, m.WalletID, m.Sender, m.Body, m.Fingerprint, m.ReceivedAt,
		m.Status, m.Reason, m.DuplicateOf, m.Channel, p.Kind, p.Credit,
		amount, fee, commission, p.Counterparty,
		p.TransactionID, nullTime(occurred), balance, p.Reference,
		m.CreatedAt, m.UpdatedAt, prev, prevAlt)
}

func (t *tx) UpdateSMS(ctx context.Context, m *smsinbox.SMS) error {
	return t.exec(ctx, `UPDATE sms_messages SET status = $1, reason = $2, updated_at = $3 WHERE id = $4`,
		m.Status, m.Reason, m.UpdatedAt, m.ID)
}

// The queries below spell the WHERE clauses of the partial indexes they
// walk as literals, so that a generic plan can use them too.

func (t *tx) GetSMSByFingerprint(ctx context.Context, organizationID string, fingerprint []byte) (*smsinbox.SMS, error) {
	return scanSMS(t.tx.QueryRow(ctx, `SELECT `+smsColumns+` FROM sms_messages
		WHERE organization_id = $1 AND fingerprint = $2 AND status <> 'duplicate'`,
		organizationID, fingerprint))
}

func (t *tx) ListSMSByTransactionID(ctx context.Context, organizationID, channel, transactionID string) ([]*smsinbox.SMS, error) {
	return queryList(ctx, t, scanSMSPlain, `SELECT `+smsColumns+` FROM sms_messages
		WHERE organization_id = $1 AND channel = $2 AND transaction_id = $3
			AND transaction_id <> '' AND status <> 'duplicate'
		ORDER BY created_at, id`, organizationID, channel, transactionID)
}

func (t *tx) ListHeldSMS(ctx context.Context, walletID string) ([]*smsinbox.SMS, error) {
	return queryList(ctx, t, scanSMSPlain, `SELECT `+smsColumns+` FROM sms_messages
		WHERE wallet_id = $1 AND status = 'held'
		ORDER BY received_at, id`, walletID)
}

// ListSMS joins the attempt of each message's transaction ID only for an
// original that carries one, and only within the organization: another's
// attempt is none of its business. UNIQUE (channel, transaction_id) of
// attempts makes it at most one.
func (t *tx) ListSMS(ctx context.Context, p smsinbox.ListSMSParams) ([]*smsinbox.SMS, error) {
	f := filter{conds: []string{"m.organization_id = $1"}, args: []any{p.OrganizationID}}
	f.eq("m.wallet_id", p.WalletID)
	f.eq("m.status", p.Status)
	return queryList(ctx, t, scanSMSWithMatch, `SELECT `+smsColumnsM+`,
			a.deposit_id, a.id, a.status, a.failure_code
		FROM sms_messages m
		LEFT JOIN attempts a ON m.transaction_id <> '' AND m.status <> 'duplicate'
			AND a.channel = m.channel AND a.transaction_id = m.transaction_id
			AND a.organization_id = m.organization_id`+
		f.where()+` ORDER BY m.created_at DESC, m.id DESC`+f.limit(p.Limit), f.args...)
}

// ListHeldSMSFollowing walks sms_messages_follows, _follows_alt and
// _held_legacy.
func (t *tx) ListHeldSMSFollowing(ctx context.Context, walletID string, balance decimal.Decimal) ([]*smsinbox.SMS, error) {
	return queryList(ctx, t, scanSMSPlain, `SELECT `+smsColumns+` FROM sms_messages
			WHERE wallet_id = $1 AND status = 'held' AND prev_balance = $2
		UNION SELECT `+smsColumns+` FROM sms_messages
			WHERE wallet_id = $1 AND status = 'held' AND prev_balance_alt = $2
		UNION SELECT `+smsColumns+` FROM sms_messages
			WHERE wallet_id = $1 AND status = 'held' AND prev_balance IS NULL
		ORDER BY received_at, id`, walletID, balance)
}

func (t *tx) ListOldestHeldSMS(ctx context.Context, walletID string, before time.Time, limit int) ([]*smsinbox.SMS, error) {
	return queryList(ctx, t, scanSMSPlain, `SELECT `+smsColumns+` FROM sms_messages
		WHERE wallet_id = $1 AND status = 'held' AND created_at < $2
		ORDER BY created_at, id LIMIT $3`, walletID, before, limit)
}

func (t *tx) CountSMS(ctx context.Context, organizationID, walletID, status string) (int, error) {
	var n int
	err := t.tx.QueryRow(ctx, `SELECT count FROM sms_message_counts
		WHERE organization_id = $1 AND wallet_id = $2 AND status = $3`, organizationID, walletID, status).Scan(&n)
	if err = interpretError(err); errors.Is(err, engine.ErrNotFound) {
		return 0, nil
	}
	return n, err
}

func (t *tx) ListSMSCounts(ctx context.Context, organizationID string) ([]smsinbox.SMSCount, error) {
	rows, err := t.tx.Query(ctx, `SELECT wallet_id, status, count FROM sms_message_counts
		WHERE organization_id = $1 AND count <> 0 ORDER BY wallet_id, status`, organizationID)
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
	err := t.tx.QueryRow(ctx, `SELECT organization_id, payout_sms_confirm, held_max, held_max_age, updated_at
		FROM sms_settings WHERE organization_id = $1`, organizationID).
		Scan(&s.OrganizationID, &s.PayoutSMSConfirm, &s.HeldMax, &age, timeCol{&s.UpdatedAt})
	if err != nil {
		return nil, interpretError(err)
	}
	s.HeldMaxAge = time.Duration(age) * time.Microsecond
	return &s, nil
}

func (t *tx) PutSettings(ctx context.Context, s *smsinbox.Settings) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO sms_settings
		(organization_id, payout_sms_confirm, held_max, held_max_age, updated_at) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (organization_id) DO UPDATE SET payout_sms_confirm = excluded.payout_sms_confirm,
			held_max = excluded.held_max, held_max_age = excluded.held_max_age, updated_at = excluded.updated_at`,
		s.OrganizationID, s.PayoutSMSConfirm, s.HeldMax, s.HeldMaxAge.Microseconds(), s.UpdatedAt)
	return interpretError(err)
}

func scanSMSPlain(row scanner) (*smsinbox.SMS, error) { return scanSMS(row) }

func scanSMSWithMatch(row scanner) (*smsinbox.SMS, error) {
	var depositID, attemptID, status, code pgtype.Text
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
	err := row.Scan(&p.IdempotencyKey, &p.OrganizationID, &p.Method, &p.Account, &p.Amount,
		&p.Status, &p.Reference, &p.Reason, &p.Operator, timeCol{&p.CreatedAt}, timeCol{&p.CompletedAt}, &p.SMSID)
	if err != nil {
		return nil, interpretError(err)
	}
	return &p, nil
}

// CreateManualPayout relies on the primary key (idempotency_key) for
// ErrDuplicate.
func (t *tx) CreateManualPayout(ctx context.Context, p *smsinbox.ManualPayout) error {
	return t.insert(ctx, "manual payout "+p.IdempotencyKey, `INSERT INTO manual_payouts (`+manualPayoutColumns+`)
		VALUES (`+params(12)+`)`,
		p.IdempotencyKey, p.OrganizationID, p.Method, p.Account, p.Amount, p.Status, p.Reference,
		p.Reason, p.Operator, p.CreatedAt, zeroNull(p.CompletedAt), p.SMSID)
}

func (t *tx) GetManualPayout(ctx context.Context, idempotencyKey string) (*smsinbox.ManualPayout, error) {
	return scanManualPayout(t.tx.QueryRow(ctx,
		`SELECT `+manualPayoutColumns+` FROM manual_payouts WHERE idempotency_key = $1`, idempotencyKey))
}

// LockManualPayout is GetManualPayout under FOR NO KEY UPDATE (see
// lockRow): two operators recording an outcome take turns.
func (t *tx) LockManualPayout(ctx context.Context, idempotencyKey string) (*smsinbox.ManualPayout, error) {
	return scanManualPayout(t.tx.QueryRow(ctx,
		`SELECT `+manualPayoutColumns+` FROM manual_payouts WHERE idempotency_key = $1`+t.lockRow(), idempotencyKey))
}

func (t *tx) UpdateManualPayout(ctx context.Context, p *smsinbox.ManualPayout) error {
	return t.exec(ctx, `UPDATE manual_payouts SET status = $1, reference = $2, reason = $3, operator = $4,
		completed_at = $5, sms_id = $6
		WHERE idempotency_key = $7`,
		p.Status, p.Reference, p.Reason, p.Operator, zeroNull(p.CompletedAt), p.SMSID, p.IdempotencyKey)
}

func (t *tx) ListManualPayouts(ctx context.Context, p smsinbox.ListPayoutsParams) ([]*smsinbox.ManualPayout, error) {
	var f filter
	f.eq("organization_id", p.OrganizationID)
	f.eq("status", p.Status)
	return queryList(ctx, t, scanManualPayout, `SELECT `+manualPayoutColumns+` FROM manual_payouts`+f.where()+
		` ORDER BY created_at, idempotency_key`, f.args...)
}
