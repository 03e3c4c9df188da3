package smsinbox

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/smsinbox/smsparse"
)

// The inbox keeps its tables itself, as a plug-in must (ARCHITECTURE.md):
// its SQL lives here, not in storage/, and runs on the engine's own
// transaction through engine.SQLTx, so an inbox change commits with the
// audit entry, wallet or attempt that goes with it. storage/sqlite and
// storage/postgres learn none of its types: adding or removing a provider
// touches no file of theirs. The other design, a persistence interface
// that the storage adapters implement, would have them import the
// provider, or the provider's types move out of it; either ties every store
// to every plug-in.
//
// Statements are written once with numbered parameters ($1), which SQLite
// reads as Postgres does; where the dialects differ (row locks, conflict
// handling, a list parameter, planner hints) dialect spells each.
//
// The tables themselves (sms_devices, sms_wallets, sms_messages and its
// counts, sms_settings, manual_payouts) were created by storage's
// migrations 0006 and 0007, released before the inbox kept its SQL:
// a released migration is never edited or moved, so every database,
// old or new, has them from there.

// dialect is what the inbox's SQL says differently in each database.
type dialect struct {
	// lockRow locks a row read in a read-write transaction; SQLite's
	// IMMEDIATE write transaction is itself the lock.
	lockRow string
	// insertOrNothing ends an INSERT whose uniqueness violation must leave
	// the transaction usable: a Postgres error aborts it.
	insertOrNothing string
	// byCreated orders the few messages of a transaction ID: SQLite's
	// planner, with no statistics, must be kept (+) from walking
	// sms_messages_organization for the order.
	byCreated string
	// setLiveUntil writes wallets.live_until of the IDs $2...; Postgres
	// locks them in ID order first, as ListWallets with ForUpdate does, so
	// it and a deposit picking from the pool never lock two wallets in
	// opposite orders.
	setLiveUntil func(n int) string
	// noLimit is the LIMIT that limits nothing.
	noLimit string
}

var dialects = map[string]dialect{
	"sqlite": {
		byCreated: "+created_at",
		setLiveUntil: func(n int) string {
			return `UPDATE wallets SET live_until = $1 WHERE id IN (` + params(2, n) + `)`
		},
		noLimit: "-1",
	},
	"postgres": {
		lockRow:         ` FOR NO KEY UPDATE`,
		insertOrNothing: ` ON CONFLICT DO NOTHING`,
		byCreated:       "created_at",
		setLiveUntil: func(n int) string {
			return `WITH w AS MATERIALIZED (
					SELECT id FROM wallets WHERE id IN (` + params(2, n) + `) ORDER BY id FOR NO KEY UPDATE)
				UPDATE wallets SET live_until = $1 FROM w WHERE wallets.id = w.id`
		},
		noLimit: "ALL",
	},
}

// params returns "$from, ..." for n parameters.
func params(from, n int) string {
	var b strings.Builder
	for i := from; i < from+n; i++ {
		if i > from {
			b.WriteString(", ")
		}
		b.WriteString("$" + strconv.Itoa(i))
	}
	return b.String()
}

// sqlStore is the inbox's Store on an engine.Store whose transactions are
// SQL (engine.SQLTx).
type sqlStore struct{ store engine.Store }

// NewSQLStore returns the inbox's Store on the engine's store: the inbox's
// tables in the engine's transactions. The store's Tx must implement
// engine.SQLTx (those of storage/sqlite and storage/postgres do).
func NewSQLStore(s engine.Store) Store { return sqlStore{s} }

func (s sqlStore) InboxTx(ctx context.Context, fn func(ctx context.Context, tx Tx) error) error {
	return s.store.InTx(ctx, func(ctx context.Context, t engine.Tx) error {
		it, err := newSQLTx(t, false)
		if err != nil {
			return err
		}
		return fn(ctx, it)
	})
}

func (s sqlStore) InboxReadTx(ctx context.Context, fn func(ctx context.Context, tx Tx) error) error {
	return s.store.ReadTx(ctx, func(ctx context.Context, t engine.Tx) error {
		it, err := newSQLTx(t, true)
		if err != nil {
			return err
		}
		return fn(ctx, it)
	})
}

// sqlTx is the engine's Tx with the inbox's tables.
type sqlTx struct {
	engine.Tx
	sql engine.SQLTx
	d   dialect
}

var _ Tx = (*sqlTx)(nil)

func newSQLTx(t engine.Tx, readOnly bool) (*sqlTx, error) {
	st, ok := t.(engine.SQLTx)
	if !ok {
		return nil, fmt.Errorf("smsinbox: the store's Tx (%T) is not an engine.SQLTx", t)
	}
	d, ok := dialects[st.Dialect()]
	if !ok {
		return nil, fmt.Errorf("smsinbox: no SQL for the dialect %q", st.Dialect())
	}
	if readOnly {
		d.lockRow = "" // the snapshot is stable already; FOR UPDATE is an error there
	}
	return &sqlTx{Tx: t, sql: st, d: d}, nil
}

// insert runs an INSERT: ErrDuplicate if a uniqueness constraint kept the
// row out.
func (t *sqlTx) insert(ctx context.Context, what, query string, args ...any) error {
	n, err := t.sql.ExecSQL(ctx, query+t.d.insertOrNothing, args...)
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("%w: %s", engine.ErrDuplicate, what)
	}
	return nil
}

// exec runs a statement that must change one row: ErrNotFound if it
// changed none.
func (t *sqlTx) exec(ctx context.Context, query string, args ...any) error {
	n, err := t.sql.ExecSQL(ctx, query, args...)
	if err != nil {
		return err
	}
	if n == 0 {
		return engine.ErrNotFound
	}
	return nil
}

// scanFunc reads one row's columns.
type scanFunc = func(dest ...any) error

// queryList runs a query and reads every row with read.
func queryList[T any](ctx context.Context, t *sqlTx, read func(scanFunc) (*T, error), query string, args ...any) ([]*T, error) {
	var out []*T
	err := t.sql.QuerySQL(ctx, query, args, func(scan scanFunc) error {
		v, err := read(scan)
		if err == nil {
			out = append(out, v)
		}
		return err
	})
	return out, err
}

// queryOne runs a query and reads its first row: ErrNotFound if none.
func queryOne[T any](ctx context.Context, t *sqlTx, read func(scanFunc) (*T, error), query string, args ...any) (*T, error) {
	var out *T
	err := t.sql.QuerySQL(ctx, query, args, func(scan scanFunc) error {
		if out != nil {
			return nil
		}
		v, err := read(scan)
		out = v
		return err
	})
	if err == nil && out == nil {
		err = engine.ErrNotFound
	}
	return out, err
}

// Devices.

const deviceColumns = `id, organization_id, name, token_hash, token_hint, created_at, last_seen_at, revoked_at,
	silence, signing_secret`

func readDevice(scan scanFunc) (*Device, error) {
	var d Device
	var silence int64
	if err := scan(&d.ID, &d.OrganizationID, &d.Name, &d.TokenHash, &d.TokenHint,
		&d.CreatedAt, &d.LastSeenAt, &d.RevokedAt, &silence, &d.SigningSecret); err != nil {
		return nil, err
	}
	d.Silence = time.Duration(silence) * time.Microsecond
	return &d, nil
}

// CreateDevice relies on UNIQUE (token_hash) for ErrDuplicate.
func (t *sqlTx) CreateDevice(ctx context.Context, d *Device) error {
	return t.insert(ctx, "sms device "+d.ID, `INSERT INTO sms_devices (`+deviceColumns+`) VALUES (`+params(1, 10)+`)`,
		d.ID, d.OrganizationID, d.Name, d.TokenHash, d.TokenHint, d.CreatedAt, d.LastSeenAt, d.RevokedAt,
		d.Silence.Microseconds(), nonNil(d.SigningSecret))
}

// nonNil is b, or an empty slice for nil: the column is NOT NULL.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// GetDeviceByTokenHash: a nil hash is NULL, which matches nothing.
func (t *sqlTx) GetDeviceByTokenHash(ctx context.Context, hash []byte) (*Device, error) {
	return queryOne(ctx, t, readDevice, `SELECT `+deviceColumns+` FROM sms_devices WHERE token_hash = $1`, hash)
}

// LockDevice serializes a device's reports and messages.
func (t *sqlTx) LockDevice(ctx context.Context, organizationID, id string) (*Device, error) {
	return queryOne(ctx, t, readDevice, deviceByIDQuery+t.d.lockRow, id, organizationID)
}

// deviceByIDQuery and smsByIDQuery find a row by its primary key and
// check its organization in a form no index of organization_id matches:
// with "organization_id = $2" Postgres may pick such an index on a table
// not yet analyzed and read every row of the organization to find one
// (TestByIDReadsUsePrimaryKeys; storage/postgres's reads do the same).
const (
	deviceByIDQuery = `SELECT ` + deviceColumns + ` FROM sms_devices WHERE id = $1 AND organization_id || '' = $2`
	smsByIDQuery    = `SELECT ` + smsColumns + ` FROM sms_messages WHERE id = $1 AND organization_id || '' = $2`
)

func (t *sqlTx) UpdateDevice(ctx context.Context, d *Device) error {
	return t.exec(ctx, `UPDATE sms_devices SET name = $1, token_hash = $2, token_hint = $3, last_seen_at = $4,
		revoked_at = $5, silence = $6, signing_secret = $7 WHERE id = $8`, d.Name, d.TokenHash, d.TokenHint,
		d.LastSeenAt, d.RevokedAt, d.Silence.Microseconds(), nonNil(d.SigningSecret), d.ID)
}

// UseSignature walks sms_device_signatures_expiry to forget, and relies
// on the primary key for ErrDuplicate.
func (t *sqlTx) UseSignature(ctx context.Context, deviceID string, signature []byte, expires, now time.Time) error {
	if _, err := t.sql.ExecSQL(ctx, `DELETE FROM sms_device_signatures WHERE device_id = $1 AND expires_at < $2`,
		deviceID, now); err != nil {
		return err
	}
	return t.insert(ctx, "signature of device "+deviceID,
		`INSERT INTO sms_device_signatures (device_id, signature, expires_at) VALUES ($1, $2, $3)`,
		deviceID, signature, expires)
}

func (t *sqlTx) ListDevices(ctx context.Context, organizationID string) ([]*Device, error) {
	return queryList(ctx, t, readDevice, `SELECT `+deviceColumns+` FROM sms_devices
		WHERE organization_id = $1 ORDER BY created_at, id`, organizationID)
}

// Balance chains.

const chainColumns = `wallet_id, organization_id, device_id, channel, balance, balance_message_id, updated_at, sim_slot, gaps`

func readChain(scan scanFunc) (*Chain, error) {
	var c Chain
	if err := scan(&c.WalletID, &c.OrganizationID, &c.DeviceID, &c.Channel,
		&c.Balance, &c.BalanceMessageID, &c.UpdatedAt, &c.SIMSlot, &c.Gaps); err != nil {
		return nil, err
	}
	return &c, nil
}

// CreateChain relies on the primary key (wallet_id) for ErrDuplicate.
func (t *sqlTx) CreateChain(ctx context.Context, c *Chain) error {
	return t.insert(ctx, "sms wallet "+c.WalletID, `INSERT INTO sms_wallets (`+chainColumns+`) VALUES (`+params(1, 9)+`)`,
		c.WalletID, c.OrganizationID, c.DeviceID, c.Channel, c.Balance, c.BalanceMessageID, c.UpdatedAt, c.SIMSlot, c.Gaps)
}

// LockChain: the messages of a wallet extend its balance chain one
// transaction at a time.
func (t *sqlTx) LockChain(ctx context.Context, organizationID, walletID string) (*Chain, error) {
	return queryOne(ctx, t, readChain,
		`SELECT `+chainColumns+` FROM sms_wallets WHERE wallet_id = $1 AND organization_id = $2`+t.d.lockRow,
		walletID, organizationID)
}

func (t *sqlTx) UpdateChain(ctx context.Context, c *Chain) error {
	return t.exec(ctx, `UPDATE sms_wallets SET device_id = $1, balance = $2, balance_message_id = $3, updated_at = $4,
		sim_slot = $5, gaps = $6 WHERE wallet_id = $7`, c.DeviceID, c.Balance, c.BalanceMessageID, c.UpdatedAt, c.SIMSlot, c.Gaps, c.WalletID)
}

func (t *sqlTx) ListChains(ctx context.Context, organizationID, deviceID string) ([]*Chain, error) {
	q := `SELECT ` + chainColumns + ` FROM sms_wallets WHERE organization_id = $1`
	args := []any{organizationID}
	if deviceID != "" {
		q += ` AND device_id = $2`
		args = append(args, deviceID)
	}
	return queryList(ctx, t, readChain, q+` ORDER BY wallet_id`, args...)
}

func (t *sqlTx) SetWalletsLiveUntil(ctx context.Context, walletIDs []string, until *time.Time) error {
	if len(walletIDs) == 0 {
		return nil
	}
	args := []any{until}
	for _, id := range walletIDs {
		args = append(args, id)
	}
	_, err := t.sql.ExecSQL(ctx, t.d.setLiveUntil(len(walletIDs)), args...)
	return err
}

// Messages.

const smsColumns = `id, organization_id, device_id, wallet_id, sender, body, fingerprint, received_at,
	status, reason, duplicate_of, channel, kind, credit, amount, fee, commission, counterparty,
	transaction_id, occurred_at, balance, reference, created_at, updated_at, prev_balance, prev_balance_alt,
	pasted_by, reviewed_by, gap_id`

// smsColumnsM is smsColumns of the alias m.
var smsColumnsM = func() string {
	cols := strings.Split(smsColumns, ",")
	for i, c := range cols {
		cols[i] = "m." + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}()

func readSMS(scan scanFunc, extra ...any) (*SMS, error) {
	var m SMS
	var p smsparse.Message
	var amount, fee, commission, balance decimal.NullDecimal
	var occurred *time.Time
	var prev, prevAlt decimal.NullDecimal
	dest := []any{&m.ID, &m.OrganizationID, &m.DeviceID, &m.WalletID, &m.Sender, &m.Body, &m.Fingerprint,
		&m.ReceivedAt, &m.Status, &m.Reason, &m.DuplicateOf, &m.Channel, &p.Kind, &p.Credit,
		&amount, &fee, &commission, &p.Counterparty,
		&p.TransactionID, &occurred, &balance, &p.Reference,
		&m.CreatedAt, &m.UpdatedAt, &prev, &prevAlt, &m.PastedBy, &m.ReviewedBy, &m.GapID}
	if err := scan(append(dest, extra...)...); err != nil {
		return nil, err
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

func readSMSPlain(scan scanFunc) (*SMS, error) { return readSMS(scan) }

func readSMSWithMatch(scan scanFunc) (*SMS, error) {
	var depositID, attemptID, status, code sql.NullString
	m, err := readSMS(scan, &depositID, &attemptID, &status, &code)
	if err != nil {
		return nil, err
	}
	if attemptID.Valid {
		m.Match = &Match{DepositID: depositID.String, AttemptID: attemptID.String, Status: status.String, FailureCode: code.String}
	}
	return m, nil
}

// CreateSMS relies on the partial UNIQUE (organization_id, fingerprint)
// WHERE status <> 'duplicate' for ErrDuplicate: Postgres's ON CONFLICT DO
// NOTHING without a target takes every unique index, partial ones
// included, as an arbiter. A second copy racing the first waits for it and
// finds its row.
func (t *sqlTx) CreateSMS(ctx context.Context, m *SMS) error {
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
	return t.insert(ctx, "sms "+m.ID, `INSERT INTO sms_messages (`+smsColumns+`) VALUES (`+params(1, 29)+`)`,
		m.ID, m.OrganizationID, m.DeviceID, m.WalletID, m.Sender, m.Body, m.Fingerprint, m.ReceivedAt,
		m.Status, m.Reason, m.DuplicateOf, m.Channel, p.Kind, p.Credit,
		amount, fee, commission, p.Counterparty,
		p.TransactionID, occurred, balance, p.Reference,
		m.CreatedAt, m.UpdatedAt, prev, prevAlt, m.PastedBy, m.ReviewedBy, m.GapID)
}

func (t *sqlTx) UpdateSMS(ctx context.Context, m *SMS) error {
	return t.exec(ctx, `UPDATE sms_messages SET status = $1, reason = $2, updated_at = $3, reviewed_by = $4, gap_id = $5
		WHERE id = $6`, m.Status, m.Reason, m.UpdatedAt, m.ReviewedBy, m.GapID, m.ID)
}

// The queries below spell the WHERE clauses of the partial indexes they
// walk as literals: SQLite uses a partial index only for a query whose
// WHERE clause contains the index's terms as written, and a Postgres
// generic plan can use them too.

func (t *sqlTx) GetSMSByFingerprint(ctx context.Context, organizationID string, fingerprint []byte) (*SMS, error) {
	return queryOne(ctx, t, readSMSPlain, smsByFingerprintQuery, organizationID, fingerprint)
}

const smsByFingerprintQuery = `SELECT ` + smsColumns + ` FROM sms_messages
	WHERE organization_id = $1 AND fingerprint = $2 AND status <> 'duplicate'`

// ListSMSByTransactionID walks sms_messages_transaction.
func (t *sqlTx) ListSMSByTransactionID(ctx context.Context, organizationID, channel, transactionID string) ([]*SMS, error) {
	return queryList(ctx, t, readSMSPlain, smsByTransactionQuery(t.d), organizationID, channel, transactionID)
}

func smsByTransactionQuery(d dialect) string {
	return `SELECT ` + smsColumns + ` FROM sms_messages
		WHERE organization_id = $1 AND channel = $2 AND transaction_id = $3
			AND transaction_id <> '' AND status <> 'duplicate'
		ORDER BY ` + d.byCreated + `, id`
}

func (t *sqlTx) ListHeldSMS(ctx context.Context, walletID string) ([]*SMS, error) {
	return queryList(ctx, t, readSMSPlain, `SELECT `+smsColumns+` FROM sms_messages
		WHERE wallet_id = $1 AND status = 'held'
		ORDER BY received_at, id`, walletID)
}

// ListSMS joins the attempt of each message's transaction ID only for an
// original that carries one, and only within the organization: another's
// attempt is none of its business. UNIQUE (channel, transaction_id,
// organization_id) of attempts makes it at most one.
func (t *sqlTx) ListSMS(ctx context.Context, p ListSMSParams) ([]*SMS, error) {
	where := []string{"m.organization_id = $1"}
	args := []any{p.OrganizationID}
	if p.WalletID != "" {
		args = append(args, p.WalletID)
		where = append(where, "m.wallet_id = $"+strconv.Itoa(len(args)))
	}
	if p.Status != "" {
		args = append(args, p.Status)
		where = append(where, "m.status = $"+strconv.Itoa(len(args)))
	}
	limit := t.d.noLimit
	if p.Limit > 0 {
		args = append(args, p.Limit)
		limit = "$" + strconv.Itoa(len(args))
	}
	return queryList(ctx, t, readSMSWithMatch, `SELECT `+smsColumnsM+`,
			a.deposit_id, a.id, a.status, a.failure_code
		FROM sms_messages m
		LEFT JOIN attempts a ON m.transaction_id <> '' AND m.status <> 'duplicate'
			AND a.channel = m.channel AND a.transaction_id = m.transaction_id
			AND a.organization_id = m.organization_id
		WHERE `+strings.Join(where, " AND ")+`
		ORDER BY m.created_at DESC, m.id DESC LIMIT `+limit, args...)
}

// ListHeldSMSFollowing walks sms_messages_follows, _follows_alt and
// _held_legacy. SQLite compares the balances as canonical text, as stored.
func (t *sqlTx) ListHeldSMSFollowing(ctx context.Context, walletID string, balance decimal.Decimal) ([]*SMS, error) {
	return queryList(ctx, t, readSMSPlain, `SELECT `+smsColumns+` FROM sms_messages
			WHERE wallet_id = $1 AND status = 'held' AND prev_balance = $2
		UNION SELECT `+smsColumns+` FROM sms_messages
			WHERE wallet_id = $1 AND status = 'held' AND prev_balance_alt = $2
		UNION SELECT `+smsColumns+` FROM sms_messages
			WHERE wallet_id = $1 AND status = 'held' AND prev_balance IS NULL
		ORDER BY received_at, id`, walletID, balance)
}

func (t *sqlTx) ListOldestHeldSMS(ctx context.Context, walletID string, before time.Time, limit int) ([]*SMS, error) {
	return queryList(ctx, t, readSMSPlain, `SELECT `+smsColumns+` FROM sms_messages
		WHERE wallet_id = $1 AND status = 'held' AND created_at < $2
		ORDER BY created_at, id LIMIT $3`, walletID, before, limit)
}

func readCount(scan scanFunc) (*SMSCount, error) {
	var c SMSCount
	if err := scan(&c.WalletID, &c.Status, &c.Count); err != nil {
		return nil, err
	}
	return &c, nil
}

// CountSMS is 0 where no count row exists yet.
func (t *sqlTx) CountSMS(ctx context.Context, organizationID, walletID, status string) (int, error) {
	cs, err := queryList(ctx, t, readCount, `SELECT wallet_id, status, count FROM sms_message_counts
		WHERE organization_id = $1 AND wallet_id = $2 AND status = $3`, organizationID, walletID, status)
	if err != nil || len(cs) == 0 {
		return 0, err
	}
	return cs[0].Count, nil
}

func (t *sqlTx) ListSMSCounts(ctx context.Context, organizationID string) ([]SMSCount, error) {
	cs, err := queryList(ctx, t, readCount, `SELECT wallet_id, status, count FROM sms_message_counts
		WHERE organization_id = $1 AND count <> 0 ORDER BY wallet_id, status`, organizationID)
	if err != nil {
		return nil, err
	}
	var out []SMSCount
	for _, c := range cs {
		out = append(out, *c)
	}
	return out, nil
}

// Settings.

func readSettings(scan scanFunc) (*Settings, error) {
	var s Settings
	var age, quiet int64
	if err := scan(&s.OrganizationID, &s.PayoutSMSConfirm, &s.HeldMax, &age, &s.UpdatedAt, &s.ResyncAfter, &quiet); err != nil {
		return nil, err
	}
	s.HeldMaxAge = time.Duration(age) * time.Microsecond
	s.ResyncQuiet = time.Duration(quiet) * time.Microsecond
	return &s, nil
}

func (t *sqlTx) GetSettings(ctx context.Context, organizationID string) (*Settings, error) {
	return queryOne(ctx, t, readSettings, `SELECT organization_id, payout_sms_confirm, held_max, held_max_age, updated_at,
		resync_after, resync_quiet FROM sms_settings WHERE organization_id = $1`, organizationID)
}

func (t *sqlTx) PutSettings(ctx context.Context, s *Settings) error {
	_, err := t.sql.ExecSQL(ctx, `INSERT INTO sms_settings
		(organization_id, payout_sms_confirm, held_max, held_max_age, updated_at, resync_after, resync_quiet)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (organization_id) DO UPDATE SET payout_sms_confirm = excluded.payout_sms_confirm,
			held_max = excluded.held_max, held_max_age = excluded.held_max_age, updated_at = excluded.updated_at,
			resync_after = excluded.resync_after, resync_quiet = excluded.resync_quiet`,
		s.OrganizationID, s.PayoutSMSConfirm, s.HeldMax, s.HeldMaxAge.Microseconds(), s.UpdatedAt,
		s.ResyncAfter, s.ResyncQuiet.Microseconds())
	return err
}

// Manual payouts.

const manualPayoutColumns = `idempotency_key, organization_id, method, account, amount, status, reference,
	reason, operator, created_at, completed_at, sms_id, deposit_id`

func readManualPayout(scan scanFunc) (*ManualPayout, error) {
	var p ManualPayout
	if err := scan(&p.IdempotencyKey, &p.OrganizationID, &p.Method, &p.Account, &p.Amount,
		&p.Status, &p.Reference, &p.Reason, &p.Operator, &p.CreatedAt, &p.CompletedAt, &p.SMSID, &p.DepositID); err != nil {
		return nil, err
	}
	return &p, nil
}

// CreateManualPayout relies on the primary key (idempotency_key) for
// ErrDuplicate.
func (t *sqlTx) CreateManualPayout(ctx context.Context, p *ManualPayout) error {
	return t.insert(ctx, "manual payout "+p.IdempotencyKey, `INSERT INTO manual_payouts (`+manualPayoutColumns+`)
		VALUES (`+params(1, 13)+`)`,
		p.IdempotencyKey, p.OrganizationID, p.Method, p.Account, p.Amount, p.Status, p.Reference,
		p.Reason, p.Operator, p.CreatedAt, p.CompletedAt, p.SMSID, p.DepositID)
}

func (t *sqlTx) GetManualPayout(ctx context.Context, idempotencyKey string) (*ManualPayout, error) {
	return queryOne(ctx, t, readManualPayout,
		`SELECT `+manualPayoutColumns+` FROM manual_payouts WHERE idempotency_key = $1`, idempotencyKey)
}

// LockManualPayout: two operators recording an outcome take turns.
func (t *sqlTx) LockManualPayout(ctx context.Context, idempotencyKey string) (*ManualPayout, error) {
	return queryOne(ctx, t, readManualPayout,
		`SELECT `+manualPayoutColumns+` FROM manual_payouts WHERE idempotency_key = $1`+t.d.lockRow, idempotencyKey)
}

func (t *sqlTx) UpdateManualPayout(ctx context.Context, p *ManualPayout) error {
	return t.exec(ctx, `UPDATE manual_payouts SET status = $1, reference = $2, reason = $3, operator = $4,
		completed_at = $5, sms_id = $6
		WHERE idempotency_key = $7`,
		p.Status, p.Reference, p.Reason, p.Operator, p.CompletedAt, p.SMSID, p.IdempotencyKey)
}

func (t *sqlTx) ListManualPayouts(ctx context.Context, p ListPayoutsParams) ([]*ManualPayout, error) {
	var where []string
	var args []any
	if p.OrganizationID != "" {
		args = append(args, p.OrganizationID)
		where = append(where, "organization_id = $"+strconv.Itoa(len(args)))
	}
	if p.Status != "" {
		args = append(args, p.Status)
		where = append(where, "status = $"+strconv.Itoa(len(args)))
	}
	q := `SELECT ` + manualPayoutColumns + ` FROM manual_payouts`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	return queryList(ctx, t, readManualPayout, q+` ORDER BY created_at, idempotency_key`, args...)
}

// CountWaitingPayouts reads manual_payouts_status (status, created_at, ...)
// over the waiting statuses only: count and min(created_at) of each come
// from the index's range for that status.
func (t *sqlTx) CountWaitingPayouts(ctx context.Context) (map[string]engine.Queue, error) {
	out := map[string]engine.Queue{}
	err := t.sql.QuerySQL(ctx, `SELECT status, count(*), min(created_at) FROM manual_payouts
		WHERE status IN ($1, $2) GROUP BY status`, []any{PayoutQueued, PayoutMatched}, func(scan scanFunc) error {
		var status string
		var n int64
		var oldest time.Time
		if err := scan(&status, &n, &oldest); err != nil {
			return err
		}
		out[status] = engine.Queue{Items: int(n), Oldest: oldest.UTC()}
		return nil
	})
	return out, err
}

// The chain's self-healing and the operator's review.

// GetSMS reads a message by its primary key, within its organization.
func (t *sqlTx) GetSMS(ctx context.Context, organizationID, id string) (*SMS, error) {
	return queryOne(ctx, t, readSMSPlain, smsByIDQuery, id, organizationID)
}

// ListHeldSMSSince walks sms_messages_held_age.
func (t *sqlTx) ListHeldSMSSince(ctx context.Context, walletID string, since time.Time, limit int) ([]*SMS, error) {
	return queryList(ctx, t, readSMSPlain, `SELECT `+smsColumns+` FROM sms_messages
		WHERE wallet_id = $1 AND status = 'held' AND created_at > $2
		ORDER BY created_at, id LIMIT $3`, walletID, since, limit)
}

// ListHeldSMSByBalance walks sms_messages_held_balance.
func (t *sqlTx) ListHeldSMSByBalance(ctx context.Context, walletID string, balance decimal.Decimal, limit int) ([]*SMS, error) {
	return queryList(ctx, t, readSMSPlain, `SELECT `+smsColumns+` FROM sms_messages
		WHERE wallet_id = $1 AND status = 'held' AND balance = $2
		ORDER BY created_at, id LIMIT $3`, walletID, balance, limit)
}

const gapColumns = `id, organization_id, wallet_id, from_balance, from_message_id, to_balance, amount,
	first_message_id, last_message_id, messages, actor, created_at`

func readGap(scan scanFunc) (*Gap, error) {
	var g Gap
	if err := scan(&g.ID, &g.OrganizationID, &g.WalletID, &g.FromBalance, &g.FromMessageID, &g.ToBalance, &g.Amount,
		&g.FirstMessageID, &g.LastMessageID, &g.Messages, &g.Actor, &g.CreatedAt); err != nil {
		return nil, err
	}
	return &g, nil
}

func (t *sqlTx) CreateGap(ctx context.Context, g *Gap) error {
	return t.insert(ctx, "sms gap "+g.ID, `INSERT INTO sms_gaps (`+gapColumns+`) VALUES (`+params(1, 12)+`)`,
		g.ID, g.OrganizationID, g.WalletID, g.FromBalance, g.FromMessageID, g.ToBalance, g.Amount,
		g.FirstMessageID, g.LastMessageID, g.Messages, g.Actor, g.CreatedAt)
}

// ListGaps walks sms_gaps_organization.
func (t *sqlTx) ListGaps(ctx context.Context, organizationID, walletID string, limit int) ([]*Gap, error) {
	q := `SELECT ` + gapColumns + ` FROM sms_gaps WHERE organization_id = $1`
	args := []any{organizationID}
	if walletID != "" {
		q += ` AND wallet_id = $2`
		args = append(args, walletID)
	}
	lim := t.d.noLimit
	if limit > 0 {
		args = append(args, limit)
		lim = "$" + strconv.Itoa(len(args))
	}
	return queryList(ctx, t, readGap, q+` ORDER BY created_at DESC, id DESC LIMIT `+lim, args...)
}
