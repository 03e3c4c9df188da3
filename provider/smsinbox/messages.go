package smsinbox

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/smsinbox/smsparse"
)

// Incoming is an SMS as a forwarder posts it.
type Incoming struct {
	Sender string
	Body   string
	// ReceivedAt is when the phone received it; zero means now.
	ReceivedAt time.Time
	// SIMSlot is the SIM slot that received it (1, 2, ...); 0 if unknown.
	SIMSlot int
}

func (in *Incoming) validate(now time.Time) error {
	if err := checkSlot("sim", in.SIMSlot); err != nil {
		return err
	}
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
	chain, why := routeChain(chains, channel, in.SIMSlot)
	if chain == nil {
		return record(StatusNoWallet, why)
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
	proven, err := p.fit(ctx, tx, chain, settings, now)
	if err != nil {
		return nil, nil, err
	}
	for _, pm := range proven {
		if pm.ID == m.ID {
			m.Status, m.Reason, m.GapID = pm.Status, pm.Reason, pm.GapID
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
		if err := p.pollNow(ctx, mp); err != nil {
			p.logger.Warn("sms inbox: poll payout", "payout", mp.IdempotencyKey, "err", err)
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
		// A debit accepted by a re-synchronization over a gap never completes
		// a payout alone: its run may be a patient forger's (resync.go).
		if s.PayoutSMSConfirm || m.GapID != "" {
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
			ID: engine.NewID(engine.PrefixAudit, now), Actor: "smsinbox", Action: mp.action(action),
			OrganizationID: mp.OrganizationID, Subject: mp.IdempotencyKey, CreatedAt: now,
			Details: mp.auditDetails(),
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
