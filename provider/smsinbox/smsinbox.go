// Package smsinbox is a provider for self-hosted deployments that take
// payments into their own bKash and Nagad wallets and prove them, as this
// market's self-hosted gateways do, from the transaction SMS the receiving
// phones get.
//
// A forwarder app on each receiving phone (a device) posts every incoming
// SMS to payd with the device's bearer token, and reports in between
// messages (heartbeats); a wallet whose phone goes silent leaves the
// recipient pool until it reports again. Only whitelisted sender IDs count
// (smsparse). A parsed message proves its transaction only if its new
// balance continues the wallet's chain of balances: the last known balance
// plus the message's change. A forged SMS cannot know the balance, so it is
// held and never counts; a forwarded copy is recognized by its text. A
// transaction ID submitted before its SMS arrives waits for it, up to
// Config.NotFoundGrace, and is looked up again the moment the SMS is
// proven; an SMS proven later still is matched or left to the operator
// (see NotFoundGrace).
//
// Payouts cannot be sent from an SMS: they go to an operator's queue, and
// the operator records the outcome of their own send, or the SMS of that
// send, once proven, records it when it fits exactly one queued payout.
package smsinbox

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/benbjohnson/clock"
	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/smsinbox/smsparse"
)

// ID prefixes, and the prefix of device tokens.
const (
	PrefixDevice = "dev_"
	PrefixSMS    = "sms_"
	TokenPrefix  = "payd_dev_"
)

// Audit actions of the inbox's administrative changes.
const (
	AuditDeviceAdd      = "sms_device.add"
	AuditDeviceRevoke   = "sms_device.revoke"
	AuditWalletAnchor   = "sms_wallet.anchor"
	AuditPayoutComplete = "payout.complete"
	AuditPayoutFail     = "payout.fail"
)

// Limits of an incoming message.
const (
	maxSenderLength = 64
	maxBodyLength   = 4096
	// maxClockSkew is how far in the future a phone's received time may be.
	maxClockSkew = 5 * time.Minute
)

// Config configures the provider.
type Config struct {
	Store Store
	// Silence is how long a device may go without reporting (an SMS or a
	// heartbeat) before its wallets leave the recipient pool; default 5m.
	// Forwarders should report every minute or so.
	Silence time.Duration
	// NotFoundGrace is how long after its submission a transaction ID no
	// accepted SMS proves yet waits for one before its attempt fails
	// transaction_not_found; default DefaultNotFoundGrace.
	NotFoundGrace time.Duration
	// Clock defaults to the wall clock.
	Clock  clock.Clock
	Logger *slog.Logger
}

// Provider is the SMS inbox implementation of engine.Provider.
type Provider struct {
	store   Store
	silence time.Duration
	grace   time.Duration
	clock   clock.Clock
	logger  *slog.Logger
	engine  *engine.Engine
}

var _ engine.Provider = (*Provider)(nil)

// New returns an SMS inbox provider. Attach the engine that uses it before
// ingesting messages or recording payouts.
func New(cfg Config) (*Provider, error) {
	if cfg.Store == nil {
		return nil, errors.New("smsinbox: Store is required")
	}
	if cfg.Silence <= 0 {
		cfg.Silence = 5 * time.Minute
	}
	if cfg.NotFoundGrace <= 0 {
		cfg.NotFoundGrace = DefaultNotFoundGrace
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.New()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Provider{store: cfg.Store, silence: cfg.Silence, grace: cfg.NotFoundGrace, clock: cfg.Clock, logger: cfg.Logger}, nil
}

// Attach gives the provider the engine it serves, which it tells when a
// payment is proven (so a waiting attempt is looked up at once) and when an
// operator records a payout (so the withdrawal moves at once). The engine
// is built with the provider, hence this second step.
func (p *Provider) Attach(e *engine.Engine) { p.engine = e }

func (p *Provider) now() time.Time { return p.clock.Now().UTC() }

// Devices.

// AddDeviceParams describes a new device and the wallets whose SMS it
// receives, at most one per channel.
type AddDeviceParams struct {
	OrganizationID string
	Name           string
	WalletIDs      []string
}

// DeviceCredentials is a new device with its token, shown only here.
type DeviceCredentials struct {
	Device *Device
	Token  string
	Chains []*Chain
}

// AddDevice registers a device. Its wallets leave the recipient pool until
// it first reports. A wallet proven by a revoked device moves to the new
// one with its balance chain; one proven by a live device is refused.
func (p *Provider) AddDevice(ctx context.Context, params AddDeviceParams) (*DeviceCredentials, error) {
	name := strings.TrimSpace(params.Name)
	if err := checkLabel("name", name, 100); err != nil {
		return nil, err
	}
	if len(params.WalletIDs) == 0 {
		return nil, engine.Invalid("wallet", "name at least one wallet whose SMS the device receives")
	}
	token, err := newToken()
	if err != nil {
		return nil, err
	}
	now := p.now()
	creds := &DeviceCredentials{Token: token, Device: &Device{
		ID: engine.NewID(PrefixDevice, now), OrganizationID: params.OrganizationID, Name: name,
		TokenHash: hashToken(token), TokenHint: token[len(token)-4:], CreatedAt: now,
	}}
	err = p.store.InboxTx(ctx, func(ctx context.Context, tx Tx) error {
		if _, err := tx.LockOrganization(ctx, params.OrganizationID); err != nil {
			return notFound(err, "organization")
		}
		if err := tx.CreateDevice(ctx, creds.Device); err != nil {
			return err
		}
		creds.Chains = nil
		channels := map[string]string{}
		for _, id := range params.WalletIDs {
			w, err := tx.LockWallet(ctx, params.OrganizationID, id)
			if err != nil {
				return notFound(err, "wallet "+id)
			}
			if other, dup := channels[w.Channel]; dup {
				return engine.Invalid("wallet", fmt.Sprintf("%s and %s are both %s wallets: a device proves one wallet per channel", other, id, w.Channel))
			}
			channels[w.Channel] = id
			c, err := p.chainFor(ctx, tx, w, creds.Device.ID, now)
			if err != nil {
				return err
			}
			creds.Chains = append(creds.Chains, c)
		}
		if err := tx.SetWalletsLiveUntil(ctx, params.WalletIDs, &now); err != nil {
			return err
		}
		return p.audit(ctx, tx, AuditDeviceAdd, params.OrganizationID, creds.Device.ID, map[string]string{
			"name": name, "wallets": strings.Join(params.WalletIDs, ","),
		})
	})
	if err != nil {
		return nil, err
	}
	return creds, nil
}

// chainFor starts the balance chain of w on a new device, or moves it there
// from a revoked one.
func (p *Provider) chainFor(ctx context.Context, tx Tx, w *engine.Wallet, deviceID string, now time.Time) (*Chain, error) {
	c, err := tx.LockChain(ctx, w.OrganizationID, w.ID)
	if errors.Is(err, engine.ErrNotFound) {
		c = &Chain{WalletID: w.ID, OrganizationID: w.OrganizationID, DeviceID: deviceID, Channel: w.Channel, UpdatedAt: now}
		return c, tx.CreateChain(ctx, c)
	}
	if err != nil {
		return nil, err
	}
	old, err := tx.LockDevice(ctx, w.OrganizationID, c.DeviceID)
	if err != nil {
		return nil, err
	}
	if old.RevokedAt == nil {
		return nil, engine.Errorf(engine.CodeConflict, "wallet: %s is proven by device %s; revoke it first", w.ID, old.ID)
	}
	c.DeviceID, c.UpdatedAt = deviceID, now
	return c, tx.UpdateChain(ctx, c)
}

// RevokeDevice stops a device's token from working, now. Its wallets stay
// out of the recipient pool until another device proves them.
func (p *Provider) RevokeDevice(ctx context.Context, orgID, deviceID string) (*Device, error) {
	var d *Device
	err := p.store.InboxTx(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		if d, err = tx.LockDevice(ctx, orgID, deviceID); err != nil {
			return notFound(err, "device")
		}
		if d.RevokedAt != nil {
			return nil
		}
		now := p.now()
		d.RevokedAt = &now
		if err := tx.UpdateDevice(ctx, d); err != nil {
			return err
		}
		if err := p.setLive(ctx, tx, d, now); err != nil {
			return err
		}
		return p.audit(ctx, tx, AuditDeviceRevoke, orgID, d.ID, map[string]string{"name": d.Name})
	})
	return d, err
}

// DeviceStatus is a device with the wallets it proves.
type DeviceStatus struct {
	Device *Device
	Chains []*Chain
}

// ListDevices returns an organization's devices with their wallets.
func (p *Provider) ListDevices(ctx context.Context, orgID string) ([]DeviceStatus, error) {
	var out []DeviceStatus
	err := p.store.InboxReadTx(ctx, func(ctx context.Context, tx Tx) error {
		if _, err := tx.GetOrganization(ctx, orgID); err != nil {
			return notFound(err, "organization")
		}
		devices, err := tx.ListDevices(ctx, orgID)
		if err != nil {
			return err
		}
		chains, err := tx.ListChains(ctx, orgID, "")
		if err != nil {
			return err
		}
		for _, d := range devices {
			s := DeviceStatus{Device: d}
			for _, c := range chains {
				if c.DeviceID == d.ID {
					s.Chains = append(s.Chains, c)
				}
			}
			out = append(out, s)
		}
		return nil
	})
	return out, err
}

// Authenticate returns the live device a bearer token belongs to, or an
// unauthorized error.
func (p *Provider) Authenticate(ctx context.Context, token string) (*Device, error) {
	invalid := engine.Errorf(engine.CodeUnauthorized, "invalid_device_token")
	if !strings.HasPrefix(token, TokenPrefix) || len(token) > 128 {
		return nil, invalid
	}
	var d *Device
	err := p.store.InboxReadTx(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		d, err = tx.GetDeviceByTokenHash(ctx, hashToken(token))
		return err
	})
	if errors.Is(err, engine.ErrNotFound) || err == nil && d.RevokedAt != nil {
		return nil, invalid
	}
	return d, err
}

// Heartbeat records that a device is alive: its wallets stay in the pool
// for another Silence. It returns until when.
func (p *Provider) Heartbeat(ctx context.Context, dev *Device) (time.Time, error) {
	now := p.now()
	err := p.store.InboxTx(ctx, func(ctx context.Context, tx Tx) error {
		_, err := p.touch(ctx, tx, dev, now)
		return err
	})
	return now.Add(p.silence), err
}

// touch records a report of a device in the caller's transaction, under
// the device's lock, which also serializes its messages.
func (p *Provider) touch(ctx context.Context, tx Tx, dev *Device, now time.Time) (*Device, error) {
	d, err := tx.LockDevice(ctx, dev.OrganizationID, dev.ID)
	if err != nil {
		return nil, err
	}
	if d.RevokedAt != nil {
		return nil, engine.Errorf(engine.CodeUnauthorized, "invalid_device_token")
	}
	d.LastSeenAt = &now
	if err := tx.UpdateDevice(ctx, d); err != nil {
		return nil, err
	}
	return d, p.setLive(ctx, tx, d, now.Add(p.silence))
}

// setLive sets the LiveUntil of the wallets a device proves.
func (p *Provider) setLive(ctx context.Context, tx Tx, d *Device, until time.Time) error {
	chains, err := tx.ListChains(ctx, d.OrganizationID, d.ID)
	if err != nil {
		return err
	}
	ids := make([]string, len(chains))
	for i, c := range chains {
		ids[i] = c.WalletID
	}
	return tx.SetWalletsLiveUntil(ctx, ids, &until)
}

// newToken returns a new device token: 32 random bytes.
func newToken() (string, error) {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return "", err
	}
	return TokenPrefix + base64.RawURLEncoding.EncodeToString(secret), nil
}

func hashToken(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// Messages.

// Incoming is an SMS as a forwarder posts it.
type Incoming struct {
	Sender string
	Body   string
	// ReceivedAt is when the phone received it; zero means now.
	ReceivedAt time.Time
}

func (in *Incoming) validate(now time.Time) error {
	in.Sender = strings.TrimSpace(in.Sender)
	if err := checkLabel("sender", in.Sender, maxSenderLength); err != nil {
		return err
	}
	if in.Sender == "" {
		return engine.Invalid("sender", "is required")
	}
	if strings.TrimSpace(in.Body) == "" {
		return engine.Invalid("body", "is required")
	}
	if !utf8.ValidString(in.Body) || strings.ContainsRune(in.Body, 0) {
		return engine.Invalid("body", "must be valid UTF-8 without NUL")
	}
	if utf8.RuneCountInString(in.Body) > maxBodyLength {
		return engine.Invalid("body", fmt.Sprintf("must be at most %d characters", maxBodyLength))
	}
	if in.ReceivedAt.IsZero() {
		in.ReceivedAt = now
	}
	if in.ReceivedAt.After(now.Add(maxClockSkew)) {
		return engine.Invalid("received_at", "is in the future")
	}
	in.ReceivedAt = in.ReceivedAt.UTC()
	return nil
}

// Fingerprint identifies an SMS's text: the same sender and body, whatever
// the forwarder did to line breaks and spacing.
func Fingerprint(sender, body string) []byte {
	h := sha256.New()
	h.Write([]byte(strings.ToLower(strings.TrimSpace(sender))))
	h.Write([]byte{0})
	h.Write([]byte(strings.Join(strings.Fields(body), " ")))
	return h.Sum(nil)
}

// Ingest records an SMS a device forwarded, as a report of the device too,
// and proves what it can: the message itself, and any held message of its
// wallet whose balance now follows. The message is stored whatever it is
// (a copy, a forgery, an unknown format); its Status says what it counts
// for. created is false for a copy of a message already stored.
func (p *Provider) Ingest(ctx context.Context, dev *Device, in Incoming) (m *SMS, created bool, err error) {
	now := p.now()
	if err := in.validate(now); err != nil {
		return nil, false, err
	}
	var proven []*SMS
	var paid []*ManualPayout
	for range 3 {
		err = p.store.InboxTx(ctx, func(ctx context.Context, tx Tx) error {
			var err error
			if m, proven, err = p.ingest(ctx, tx, dev, in, now); err != nil {
				return err
			}
			paid, err = p.settleSentPayouts(ctx, tx, proven, now)
			return err
		})
		// Two copies posted at once: the second meets the first's row and
		// is recorded as its copy on the next try.
		if !errors.Is(err, engine.ErrDuplicate) {
			break
		}
	}
	if err != nil {
		return nil, false, err
	}
	p.proved(ctx, proven, paid)
	return m, m.Status != StatusDuplicate, nil
}

func (p *Provider) ingest(ctx context.Context, tx Tx, dev *Device, in Incoming, now time.Time) (*SMS, []*SMS, error) {
	d, err := p.touch(ctx, tx, dev, now)
	if err != nil {
		return nil, nil, err
	}
	m := &SMS{
		ID: engine.NewID(PrefixSMS, now), OrganizationID: d.OrganizationID, DeviceID: d.ID,
		Sender: in.Sender, Body: in.Body, Fingerprint: Fingerprint(in.Sender, in.Body),
		ReceivedAt: in.ReceivedAt, CreatedAt: now, UpdatedAt: now,
	}
	record := func(status, reason string) (*SMS, []*SMS, error) {
		m.Status, m.Reason = status, reason
		return m, nil, tx.CreateSMS(ctx, m)
	}
	orig, err := tx.GetSMSByFingerprint(ctx, m.OrganizationID, m.Fingerprint)
	switch {
	case err == nil:
		m.DuplicateOf, m.Channel, m.WalletID = orig.ID, orig.Channel, orig.WalletID
		if orig.Body == "" {
			m.Body = "" // a copy of an untrusted sender's message
		}
		return record(StatusDuplicate, "the same message as "+orig.ID)
	case !errors.Is(err, engine.ErrNotFound):
		return nil, nil, err
	}
	channel, trusted := smsparse.ChannelOf(in.Sender)
	if !trusted {
		// Anything a phone gets may be forwarded (a bank's OTP): the text
		// of a message that cannot count is not kept.
		m.Body = ""
		return record(StatusUntrustedSender, "sender "+in.Sender+" is not a wallet's; its text is not kept")
	}
	m.Channel = channel
	parsed, err := smsparse.Parse(in.Sender, in.Body)
	if err != nil {
		// A wallet's own message that payd cannot read may be a payment it
		// will never see: say so where operators look.
		p.logger.WarnContext(ctx, "sms inbox: unknown message format from a wallet sender; see payd admin sms list --status unparsed",
			"device", d.ID, "sender", in.Sender, "sms", m.ID)
		return record(StatusUnparsed, err.Error())
	}
	m.Parsed = parsed
	chains, err := tx.ListChains(ctx, d.OrganizationID, d.ID)
	if err != nil {
		return nil, nil, err
	}
	var chain *Chain
	for _, c := range chains {
		if c.Channel == channel {
			chain = c
		}
	}
	if chain == nil {
		return record(StatusNoWallet, "the device proves no "+channel+" wallet")
	}
	m.WalletID, m.PrevBalances = chain.WalletID, PreviousBalances(parsed)
	if chain, err = tx.LockChain(ctx, chain.OrganizationID, chain.WalletID); err != nil {
		return nil, nil, err
	}
	settings, err := p.settings(ctx, tx, chain.OrganizationID)
	if err != nil {
		return nil, nil, err
	}
	if err := p.expireOld(ctx, tx, chain, settings, now); err != nil {
		return nil, nil, err
	}
	if prover, err := provenBy(ctx, tx, m); err != nil || prover != "" {
		if err != nil {
			return nil, nil, err
		}
		if _, _, err := record(StatusConflict, "transaction "+parsed.TransactionID+" is already proven by "+prover+", with other text"); err != nil {
			return nil, nil, err
		}
		p.alarm(ctx, "conflict: another text carries a proven transaction ID; see payd admin sms list --status conflict", m)
		return m, nil, nil
	}
	reason := "no balance is known for the wallet yet: anchor it (payd admin sms anchor)"
	if chain.Balance.Valid {
		reason = fmt.Sprintf("balance %s does not follow the wallet's last known balance %s",
			engine.FormatAmount(parsed.Balance), engine.FormatAmount(chain.Balance.Decimal))
	}
	if _, _, err := record(StatusHeld, reason); err != nil {
		return nil, nil, err
	}
	proven, err := p.extendChain(ctx, tx, chain, settings, now)
	if err != nil {
		return nil, nil, err
	}
	for _, pm := range proven {
		if pm.ID == m.ID {
			m.Status, m.Reason = pm.Status, pm.Reason
		}
	}
	if m.Status == StatusHeld {
		p.alarm(ctx, "held: its balance does not continue the wallet's chain (out of order, or forged); see payd admin sms list --status held", m)
		if err := p.capHeld(ctx, tx, chain, settings, now); err != nil {
			return nil, nil, err
		}
	}
	return m, proven, nil
}

// provenBy returns the ID of an accepted message, other than m, that
// carries m's transaction ID; "" if none.
func provenBy(ctx context.Context, tx Tx, m *SMS) (string, error) {
	same, err := tx.ListSMSByTransactionID(ctx, m.OrganizationID, m.Channel, m.Parsed.TransactionID)
	if err != nil {
		return "", err
	}
	for _, o := range same {
		if o.ID != m.ID && o.Status == StatusAccepted {
			return o.ID, nil
		}
	}
	return "", nil
}

// extendChain accepts, one after another, the held messages of a locked
// chain whose balance follows its last known one, and returns them. Two
// messages that both follow the same balance cannot both be genuine: both
// become conflicts and the chain waits for the operator.
func (p *Provider) extendChain(ctx context.Context, tx Tx, c *Chain, s *Settings, now time.Time) ([]*SMS, error) {
	var accepted []*SMS
	for c.Balance.Valid {
		held, err := tx.ListHeldSMSFollowing(ctx, c.WalletID, c.Balance.Decimal)
		if err != nil {
			return nil, err
		}
		var next []*SMS
		for _, m := range held {
			if !follows(c.Balance.Decimal, m.Parsed) {
				continue
			}
			if m.CreatedAt.Before(now.Add(-s.HeldMaxAge)) {
				if err := expire(ctx, tx, m, fmt.Sprintf("held for more than %s without continuing the wallet's chain", s.HeldMaxAge), now); err != nil {
					return nil, err
				}
				p.alarm(ctx, "held message expired before the chain reached it; see payd admin sms list --status expired", m)
				continue
			}
			next = append(next, m)
		}
		if len(next) == 0 {
			break
		}
		if len(next) > 1 {
			ids := make([]string, len(next))
			for i, m := range next {
				ids[i] = m.ID
			}
			for _, m := range next {
				m.Status, m.UpdatedAt = StatusConflict, now
				m.Reason = fmt.Sprintf("%s all follow balance %s: at most one is genuine", strings.Join(ids, ", "), engine.FormatAmount(c.Balance.Decimal))
				if err := tx.UpdateSMS(ctx, m); err != nil {
					return nil, err
				}
				p.alarm(ctx, "conflict: the balance chain forks; anchor the wallet after checking the phone", m, "messages", ids)
			}
			break
		}
		m := next[0]
		m.UpdatedAt = now
		prover, err := provenBy(ctx, tx, m)
		if err != nil {
			return nil, err
		}
		if prover != "" {
			m.Status, m.Reason = StatusConflict, "transaction "+m.Parsed.TransactionID+" is already proven by "+prover+", with other text"
			if err := tx.UpdateSMS(ctx, m); err != nil {
				return nil, err
			}
			p.alarm(ctx, "conflict: another text carries a proven transaction ID; see payd admin sms list --status conflict", m)
			continue
		}
		m.Status, m.Reason = StatusAccepted, ""
		if err := tx.UpdateSMS(ctx, m); err != nil {
			return nil, err
		}
		c.Balance, c.BalanceMessageID, c.UpdatedAt = decimal.NewNullDecimal(m.Parsed.Balance), m.ID, now
		if err := tx.UpdateChain(ctx, c); err != nil {
			return nil, err
		}
		accepted = append(accepted, m)
	}
	return accepted, nil
}

// follows reports whether a message's new balance is balance plus its
// change. The commission of an agent's message may be credited with it or
// separately, and may carry more decimals than a balance; either is taken.
func follows(balance decimal.Decimal, m *smsparse.Message) bool {
	delta := m.Delta()
	for _, d := range []decimal.Decimal{delta, delta.Round(2), delta.Sub(m.Commission)} {
		if balance.Add(d).Equal(m.Balance) {
			return true
		}
	}
	return false
}

// proved tells the engine, after the commit, of the credits just proven,
// so attempts waiting for them are looked up now rather than at their next
// retry, and of the payouts just settled, so their withdrawals move now. A
// failure only delays them: the engine's retries find the same outcome.
func (p *Provider) proved(ctx context.Context, ms []*SMS, paid []*ManualPayout) {
	if p.engine == nil {
		return
	}
	for _, m := range ms {
		if !m.Parsed.Credit {
			continue
		}
		if err := p.engine.RecheckTransaction(ctx, m.OrganizationID, m.Channel, m.Parsed.TransactionID); err != nil {
			p.logger.Warn("sms inbox: recheck", "transaction_id", m.Parsed.TransactionID, "err", err)
		}
	}
	for _, mp := range paid {
		if err := p.engine.PollPayoutNow(ctx, mp.OrganizationID, mp.IdempotencyKey); err != nil {
			p.logger.Warn("sms inbox: poll payout", "withdrawal", mp.IdempotencyKey, "err", err)
		}
	}
}

// sentKinds are the debits by which an operator pays a customer's wallet
// from a proven wallet: send money from a personal wallet, cash in from an
// agent's.
var sentKinds = map[string]bool{smsparse.KindSendMoney: true, smsparse.KindCashInSent: true}

// settleSentPayouts completes the queued payouts that just-proven debits
// show the operator sent: same organization, method (the channel), account
// and amount, sent after the payout was queued (payoutFits). A debit that
// fits several queued payouts settles none: which one was sent is the
// operator's to say. An organization that wants it (Settings) has the
// operator confirm: the payout is then only matched.
func (p *Provider) settleSentPayouts(ctx context.Context, tx Tx, proven []*SMS, now time.Time) ([]*ManualPayout, error) {
	var paid []*ManualPayout
	for _, m := range proven {
		if m.Parsed.Credit || !sentKinds[m.Parsed.Kind] || m.Parsed.Counterparty == "" {
			continue
		}
		queued, err := tx.ListManualPayouts(ctx, ListPayoutsParams{OrganizationID: m.OrganizationID, Status: PayoutQueued})
		if err != nil {
			return nil, err
		}
		var fits []*ManualPayout
		for _, mp := range queued {
			if payoutFits(mp, m) {
				fits = append(fits, mp)
			}
		}
		if len(fits) != 1 {
			if len(fits) > 1 {
				p.logger.Warn("sms inbox: a sent payment fits several queued payouts; record it with payd admin payout complete",
					"sms", m.ID, "transaction_id", m.Parsed.TransactionID)
			}
			continue
		}
		mp, err := tx.LockManualPayout(ctx, fits[0].IdempotencyKey)
		if err != nil {
			return nil, err
		}
		if mp.Status != PayoutQueued {
			continue
		}
		s, err := p.settings(ctx, tx, mp.OrganizationID)
		if err != nil {
			return nil, err
		}
		action := AuditPayoutComplete
		mp.Reference, mp.SMSID = m.Parsed.TransactionID, m.ID
		if s.PayoutSMSConfirm {
			action, mp.Status = AuditPayoutMatch, PayoutMatched
			p.logger.InfoContext(ctx, "sms inbox: a sent payment matches a queued payout; confirm it with payd admin payout confirm",
				"organization", mp.OrganizationID, "withdrawal", mp.IdempotencyKey, "sms", m.ID)
		} else {
			mp.Status, mp.Operator, mp.CompletedAt = PayoutSucceeded, "sms "+m.ID, now
		}
		if err := tx.UpdateManualPayout(ctx, mp); err != nil {
			return nil, err
		}
		err = tx.AppendAudit(ctx, &engine.AuditEntry{
			ID: engine.NewID(engine.PrefixAudit, now), Actor: "smsinbox", Action: action,
			OrganizationID: mp.OrganizationID, Subject: mp.IdempotencyKey, CreatedAt: now,
			Details: map[string]string{
				"provider_transaction_id": mp.Reference, "sms": m.ID,
				"amount": engine.FormatAmount(mp.Amount), "method": mp.Method,
			},
		})
		if err != nil {
			return nil, err
		}
		if mp.Status == PayoutSucceeded {
			paid = append(paid, mp)
		}
	}
	return paid, nil
}

// Anchor sets the balance a wallet's chain continues from, as the operator
// reads it on the phone: at the start, or after a gap (a message lost, a
// change the wallet sends no SMS for). Held messages that now follow are
// accepted.
func (p *Provider) Anchor(ctx context.Context, orgID, walletID string, balance decimal.Decimal) (*Chain, []*SMS, error) {
	if balance.IsNegative() || balance.Exponent() < -2 {
		return nil, nil, engine.Invalid("balance", "must be a non-negative amount with at most 2 decimals")
	}
	var c *Chain
	var proven []*SMS
	var paid []*ManualPayout
	err := p.store.InboxTx(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		if c, err = tx.LockChain(ctx, orgID, walletID); err != nil {
			return notFound(err, "wallet proven by a device")
		}
		now := p.now()
		c.Balance, c.BalanceMessageID, c.UpdatedAt = decimal.NewNullDecimal(balance), "", now
		if err := tx.UpdateChain(ctx, c); err != nil {
			return err
		}
		s, err := p.settings(ctx, tx, orgID)
		if err != nil {
			return err
		}
		if err := p.expireOld(ctx, tx, c, s, now); err != nil {
			return err
		}
		if proven, err = p.extendChain(ctx, tx, c, s, now); err != nil {
			return err
		}
		if paid, err = p.settleSentPayouts(ctx, tx, proven, now); err != nil {
			return err
		}
		return p.audit(ctx, tx, AuditWalletAnchor, orgID, walletID, map[string]string{"balance": engine.FormatAmount(balance)})
	})
	if err != nil {
		return nil, nil, err
	}
	p.proved(ctx, proven, paid)
	return c, proven, nil
}

// ListSMS returns an organization's messages, newest first, with the
// deposit each transaction ID was submitted to.
func (p *Provider) ListSMS(ctx context.Context, params ListSMSParams) ([]*SMS, error) {
	var out []*SMS
	err := p.store.InboxReadTx(ctx, func(ctx context.Context, tx Tx) error {
		if _, err := tx.GetOrganization(ctx, params.OrganizationID); err != nil {
			return notFound(err, "organization")
		}
		var err error
		out, err = tx.ListSMS(ctx, params)
		return err
	})
	return out, err
}

// Verification.

// StartCheckout refuses: an SMS inbox has no hosted checkout.
func (p *Provider) StartCheckout(context.Context, engine.CheckoutRequest) (*engine.Checkout, error) {
	return nil, engine.ErrMethodUnavailable
}

// transactionTypes are the payer's operations the credits prove.
var transactionTypes = map[string]string{
	smsparse.KindMoneyReceived:   engine.TransactionSendMoney,
	smsparse.KindCashIn:          engine.TransactionCashIn,
	smsparse.KindPaymentReceived: engine.TransactionPayment,
	smsparse.KindCashOutReceived: engine.TransactionCashOut,
}

// LookupTransaction reports a payment proven by an accepted SMS of the
// organization. A message that is held, a copy or a conflict proves
// nothing: the transaction is not found (yet).
func (p *Provider) LookupTransaction(ctx context.Context, req engine.LookupRequest) (*engine.ProviderTransaction, error) {
	var t *engine.ProviderTransaction
	err := p.store.InboxReadTx(ctx, func(ctx context.Context, tx Tx) error {
		same, err := tx.ListSMSByTransactionID(ctx, req.OrganizationID, req.Channel, req.TransactionID)
		if err != nil {
			return err
		}
		for _, m := range same {
			if m.Status != StatusAccepted || !m.Parsed.Credit {
				continue
			}
			w, err := tx.GetWallet(ctx, m.OrganizationID, m.WalletID)
			if err != nil {
				return err
			}
			typ := transactionTypes[m.Parsed.Kind]
			if typ == "" {
				typ = m.Parsed.Kind // a credit no deposit is paid by (a cashback)
			}
			t = &engine.ProviderTransaction{
				Channel: m.Channel, TransactionID: m.Parsed.TransactionID, Type: typ,
				Status: engine.TransactionCompleted, Amount: m.Parsed.Amount, Currency: engine.Currency,
				PayerPhone: m.Parsed.Counterparty, RecipientPhone: w.Phone,
				CompletedAt: m.Parsed.Time.UTC(), TimePrecision: time.Minute,
			}
			return nil
		}
		return engine.ErrTransactionNotFound
	})
	return t, err
}

// Payouts.

// CheckPayoutMethod accepts every method: the operator sends by hand.
func (p *Provider) CheckPayoutMethod(context.Context, string) error { return nil }

// SendPayout queues the payout for the operator, once per key.
func (p *Provider) SendPayout(ctx context.Context, req engine.PayoutRequest) (*engine.Payout, error) {
	mp := &ManualPayout{OrganizationID: req.OrganizationID, Payout: engine.Payout{
		IdempotencyKey: req.IdempotencyKey, Method: req.Method, Account: req.Account, Amount: req.Amount,
		Status: PayoutQueued, CreatedAt: p.now(),
	}}
	err := p.store.InboxTx(ctx, func(ctx context.Context, tx Tx) error {
		err := tx.CreateManualPayout(ctx, mp)
		if errors.Is(err, engine.ErrDuplicate) {
			mp, err = tx.GetManualPayout(ctx, req.IdempotencyKey)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return mp.enginePayout(), nil
}

// GetPayout reports a queued payout as pending until the operator records
// its outcome.
func (p *Provider) GetPayout(ctx context.Context, key string) (*engine.Payout, error) {
	var mp *ManualPayout
	err := p.store.InboxReadTx(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		mp, err = tx.GetManualPayout(ctx, key)
		return err
	})
	if errors.Is(err, engine.ErrNotFound) {
		return nil, engine.ErrPayoutNotFound
	}
	if err != nil {
		return nil, err
	}
	return mp.enginePayout(), nil
}

func (mp *ManualPayout) enginePayout() *engine.Payout {
	out := mp.Payout
	if out.Status == PayoutQueued || out.Status == PayoutMatched {
		// A match is the operator's to confirm: the engine sees nothing yet.
		out.Status, out.Reference = engine.PayoutPending, ""
	}
	return &out
}

// ListPayouts returns the manual payouts matching params, oldest first.
func (p *Provider) ListPayouts(ctx context.Context, params ListPayoutsParams) ([]*ManualPayout, error) {
	var out []*ManualPayout
	err := p.store.InboxReadTx(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		out, err = tx.ListManualPayouts(ctx, params)
		return err
	})
	return out, err
}

// CompletePayout records that the operator sent a queued payout, with the
// transaction ID of their send. Recording the same again changes nothing.
func (p *Provider) CompletePayout(ctx context.Context, withdrawalID, transactionID string) (*ManualPayout, error) {
	ref, err := engine.NormalizeTransactionID("provider_transaction_id", transactionID)
	if err != nil {
		return nil, err
	}
	return p.finishPayout(ctx, withdrawalID, PayoutSucceeded, ref, "")
}

// FailPayout records that a queued payout could not be sent; the
// withdrawal fails and its hold is released.
func (p *Provider) FailPayout(ctx context.Context, withdrawalID, reason string) (*ManualPayout, error) {
	reason = strings.TrimSpace(reason)
	if reason == "" {
		return nil, engine.Invalid("reason", "is required")
	}
	if err := checkLabel("reason", reason, 200); err != nil {
		return nil, err
	}
	return p.finishPayout(ctx, withdrawalID, PayoutFailed, "", reason)
}

func (p *Provider) finishPayout(ctx context.Context, key, status, ref, reason string) (*ManualPayout, error) {
	var mp *ManualPayout
	err := p.store.InboxTx(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		if mp, err = tx.LockManualPayout(ctx, key); err != nil {
			return notFound(err, "payout")
		}
		if mp.Status != PayoutQueued && mp.Status != PayoutMatched {
			if mp.Status == status && mp.Reference == ref && mp.Reason == reason {
				return nil // recorded already
			}
			return engine.Errorf(engine.CodeConflict, "payout %s is already %s", key, mp.Status)
		}
		// The operator's own record replaces an SMS's match.
		mp.Status, mp.Reference, mp.Reason, mp.SMSID = status, ref, reason, ""
		mp.Operator, mp.CompletedAt = engine.ActorFrom(ctx), p.now()
		if err := tx.UpdateManualPayout(ctx, mp); err != nil {
			return err
		}
		action, details := AuditPayoutComplete, map[string]string{"provider_transaction_id": ref}
		if status == PayoutFailed {
			action, details = AuditPayoutFail, map[string]string{"reason": reason}
		}
		details["amount"], details["method"] = engine.FormatAmount(mp.Amount), mp.Method
		return p.audit(ctx, tx, action, mp.OrganizationID, key, details)
	})
	if err != nil {
		return nil, err
	}
	if p.engine != nil {
		// The worker would see it at its next poll; this is now.
		if err := p.engine.PollPayoutNow(ctx, mp.OrganizationID, key); err != nil {
			return mp, err
		}
	}
	return mp, nil
}

func (p *Provider) audit(ctx context.Context, tx Tx, action, orgID, subject string, details map[string]string) error {
	now := p.now()
	return tx.AppendAudit(ctx, &engine.AuditEntry{
		ID: engine.NewID(engine.PrefixAudit, now), Actor: engine.ActorFrom(ctx), Action: action,
		OrganizationID: orgID, Subject: subject, Details: details, CreatedAt: now,
	})
}

func notFound(err error, what string) error {
	if errors.Is(err, engine.ErrNotFound) {
		return engine.Errorf(engine.CodeNotFound, "%s not found", what)
	}
	return err
}

// checkLabel checks a short printable text.
func checkLabel(field, s string, max int) error {
	if !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return engine.Invalid(field, "must be valid UTF-8 without control characters")
	}
	if utf8.RuneCountInString(s) > max {
		return engine.Invalid(field, fmt.Sprintf("must be at most %d characters", max))
	}
	return nil
}
