package smsinbox

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/smsinbox/smsparse"
)

// The operator's review of the inbox, each audited with the
// actor of engine.WithActor: approve a held or conflicting message they
// checked on the phone, reject one, or paste an SMS the phone missed.

// reviewable are the statuses of a message that proves nothing (yet) and
// that an operator may approve or reject.
var reviewable = map[string]bool{StatusHeld: true, StatusConflict: true, StatusExpired: true}

// lockMessage returns a message of orgID with its wallet's chain locked,
// the message read under that lock.
func lockMessage(ctx context.Context, tx Tx, orgID, messageID string) (*SMS, *Chain, error) {
	m, err := tx.GetSMS(ctx, orgID, messageID)
	if err != nil {
		return nil, nil, notFound(err, "message")
	}
	if m.WalletID == "" || m.Parsed == nil || m.Status == StatusDuplicate {
		return m, nil, nil
	}
	c, err := tx.LockChain(ctx, orgID, m.WalletID)
	if err != nil {
		return nil, nil, err
	}
	m, err = tx.GetSMS(ctx, orgID, messageID)
	return m, c, err
}

func reviewReason(reason string) (string, error) {
	reason = strings.TrimSpace(reason)
	if reason == "" {
		return "", engine.Invalid("reason", "is required")
	}
	return reason, checkLabel("reason", reason, 200)
}

// ApproveSMS accepts a held, conflicting or expired message the operator
// vouches for (they read it on the phone): it then proves its transaction
// as any accepted message does, and a debit settles a queued payout under
// the organization's settings. The chain moves to its balance when it
// continues the chain, or is newer than the message that set it (a gap,
// recorded, when it does not continue it); an older message only proves
// its transaction. A message whose transaction ID another text proves is
// refused: one of the two is false. Approving an accepted message changes
// nothing; a rejected, copied, unparsed or walletless one is a conflict.
func (p *Provider) ApproveSMS(ctx context.Context, orgID, messageID, reason string) (*SMS, error) {
	reason, err := reviewReason(reason)
	if err != nil {
		return nil, err
	}
	var m *SMS
	var proven []*SMS
	var paid []*ManualPayout
	err = p.store.InboxTx(ctx, func(ctx context.Context, tx Tx) error {
		var c *Chain
		var err error
		if m, c, err = lockMessage(ctx, tx, orgID, messageID); err != nil {
			return err
		}
		if m.Status == StatusAccepted {
			return nil
		}
		if c == nil || !reviewable[m.Status] {
			return engine.Errorf(engine.CodeConflict, "message %s is %s: only a held, conflicting or expired message can be approved", m.ID, m.Status)
		}
		prover, err := provenBy(ctx, tx, m)
		if err != nil {
			return err
		}
		if prover != "" {
			return engine.Errorf(engine.CodeConflict, "transaction %s is already proven by %s: reject one of the two", m.Parsed.TransactionID, prover)
		}
		now, actor, was := p.now(), engine.ActorFrom(ctx), m.Status
		m.Status, m.Reason, m.ReviewedBy, m.UpdatedAt = StatusAccepted, "approved by "+actor+": "+reason, actor, now
		if err := tx.UpdateSMS(ctx, m); err != nil {
			return err
		}
		details := map[string]string{"wallet": m.WalletID, "transaction_id": m.Parsed.TransactionID, "was": was, "reason": reason}
		proven = []*SMS{m}
		moved, err := p.moveForApproval(ctx, tx, c, m, actor, now, details)
		if err != nil {
			return err
		}
		if moved {
			s, err := p.settings(ctx, tx, orgID)
			if err != nil {
				return err
			}
			more, err := p.fit(ctx, tx, c, s, now)
			if err != nil {
				return err
			}
			proven = append(proven, more...)
		}
		if paid, err = p.settleSentPayouts(ctx, tx, proven, now); err != nil {
			return err
		}
		return p.audit(ctx, tx, AuditSMSApprove, orgID, m.ID, details)
	})
	if err != nil {
		return nil, err
	}
	p.proved(ctx, proven, paid)
	return m, nil
}

// moveForApproval moves a locked chain to an approved message's balance
// when it continues the chain, the chain has none, or it is newer than
// what set it, recording the gap it jumps.
func (p *Provider) moveForApproval(ctx context.Context, tx Tx, c *Chain, m *SMS, actor string, now time.Time, details map[string]string) (bool, error) {
	switch {
	case !c.Balance.Valid, follows(c.Balance.Decimal, m.Parsed):
	case c.BalanceMessageID == "":
		if !m.CreatedAt.After(c.UpdatedAt) {
			return false, nil // stored before the operator's anchor
		}
	default:
		head, err := tx.GetSMS(ctx, c.OrganizationID, c.BalanceMessageID)
		if err != nil {
			return false, err
		}
		if head.Parsed == nil || !m.Parsed.Time.After(head.Parsed.Time) {
			return false, nil
		}
	}
	if c.Balance.Valid && !follows(c.Balance.Decimal, m.Parsed) {
		to := m.Parsed.Balance.Sub(m.Parsed.Delta())
		if prev := PreviousBalances(m.Parsed); len(prev) > 0 {
			to = prev[0]
		}
		g, err := p.moveOverGap(ctx, tx, c, to, []*SMS{m}, actor, now)
		if err != nil {
			return false, err
		}
		details["gap"], details["gap_amount"] = g.ID, engine.FormatAmount(g.Amount)
		return true, nil
	}
	c.Balance.Decimal, c.Balance.Valid, c.BalanceMessageID, c.UpdatedAt = m.Parsed.Balance, true, m.ID, now
	return true, tx.UpdateChain(ctx, c)
}

// RejectSMS marks a held, conflicting or expired message as false: it
// never proves anything. Held messages of its wallet that were ambiguous
// with it may then re-synchronize the chain. Rejecting a rejected message
// changes nothing; an accepted one, which may have proven a payment
// already, is a conflict, as is a copy, an unparsed or a walletless one.
func (p *Provider) RejectSMS(ctx context.Context, orgID, messageID, reason string) (*SMS, error) {
	reason, err := reviewReason(reason)
	if err != nil {
		return nil, err
	}
	var m *SMS
	var proven []*SMS
	var paid []*ManualPayout
	err = p.store.InboxTx(ctx, func(ctx context.Context, tx Tx) error {
		var c *Chain
		var err error
		if m, c, err = lockMessage(ctx, tx, orgID, messageID); err != nil {
			return err
		}
		if m.Status == StatusRejected {
			return nil
		}
		if c == nil || !reviewable[m.Status] {
			return engine.Errorf(engine.CodeConflict, "message %s is %s: only a held, conflicting or expired message can be rejected", m.ID, m.Status)
		}
		now, actor, was := p.now(), engine.ActorFrom(ctx), m.Status
		m.Status, m.Reason, m.ReviewedBy, m.UpdatedAt = StatusRejected, "rejected by "+actor+": "+reason, actor, now
		if err := tx.UpdateSMS(ctx, m); err != nil {
			return err
		}
		if was == StatusHeld {
			s, err := p.settings(ctx, tx, orgID)
			if err != nil {
				return err
			}
			if proven, err = p.fit(ctx, tx, c, s, now); err != nil {
				return err
			}
			if paid, err = p.settleSentPayouts(ctx, tx, proven, now); err != nil {
				return err
			}
		}
		return p.audit(ctx, tx, AuditSMSReject, orgID, m.ID, map[string]string{
			"wallet": m.WalletID, "transaction_id": m.Parsed.TransactionID, "was": was, "reason": reason,
		})
	})
	if err != nil {
		return nil, err
	}
	p.proved(ctx, proven, paid)
	return m, nil
}

// PasteParams is an SMS the operator copies from the wallet's phone.
type PasteParams struct {
	OrganizationID, WalletID, Sender, Text string
	// ReceivedAt is when the phone received it; zero means now.
	ReceivedAt time.Time
}

// PasteSMS enters an SMS the phone missed (the forwarder was off, the
// message was deleted), as the operator reads it on the phone: parsed by
// the same parsers, stored as pasted by the operator (audited), and
// fitted into the wallet's chain as a device's message would be. It is not
// trusted more than a device's: a text that does not continue the chain is
// held (approve it if the phone shows it). A sender that is not a wallet's,
// a text payd cannot read, or another channel's message is refused and
// nothing is stored. Pasting a text already stored for the wallet returns
// that message, unchanged.
func (p *Provider) PasteSMS(ctx context.Context, params PasteParams) (*SMS, error) {
	now := p.now()
	in := Incoming{Sender: params.Sender, Body: params.Text, ReceivedAt: params.ReceivedAt}
	if err := in.validate(now); err != nil {
		var e *engine.Error
		if errors.As(err, &e) && strings.HasPrefix(e.Message, "body: ") {
			return nil, engine.Invalid("text", strings.TrimPrefix(e.Message, "body: "))
		}
		return nil, err
	}
	channel, trusted := smsparse.ChannelOf(in.Sender)
	if !trusted {
		return nil, engine.Invalid("sender", "is not a wallet's sender ID (bKash, NAGAD, upay, 16216...)")
	}
	parsed, err := smsparse.Parse(in.Sender, in.Body)
	if err != nil {
		return nil, engine.Invalid("text", err.Error())
	}
	var m *SMS
	var proven []*SMS
	var paid []*ManualPayout
	for range 3 {
		err = p.store.InboxTx(ctx, func(ctx context.Context, tx Tx) error {
			var err error
			if m, proven, err = p.paste(ctx, tx, params, in, channel, parsed, now); err != nil {
				return err
			}
			paid, err = p.settleSentPayouts(ctx, tx, proven, now)
			return err
		})
		// The device forwarded the same text at the same moment: the next
		// try finds it.
		if !errors.Is(err, engine.ErrDuplicate) {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	p.proved(ctx, proven, paid)
	return m, nil
}

func (p *Provider) paste(ctx context.Context, tx Tx, params PasteParams, in Incoming, channel string, parsed *smsparse.Message, now time.Time) (*SMS, []*SMS, error) {
	c, err := tx.LockChain(ctx, params.OrganizationID, params.WalletID)
	if err != nil {
		return nil, nil, notFound(err, "wallet proven by a device")
	}
	if c.Channel != channel {
		return nil, nil, engine.Invalid("sender", "is a "+channel+" sender; the wallet is "+c.Channel)
	}
	fp := Fingerprint(in.Sender, in.Body)
	orig, err := tx.GetSMSByFingerprint(ctx, c.OrganizationID, fp)
	switch {
	case err == nil && orig.WalletID == c.WalletID:
		return orig, nil, nil
	case err == nil:
		return nil, nil, engine.Errorf(engine.CodeConflict, "the same text is stored as %s, not of wallet %s", orig.ID, c.WalletID)
	case !errors.Is(err, engine.ErrNotFound):
		return nil, nil, err
	}
	actor := engine.ActorFrom(ctx)
	m := &SMS{
		ID: engine.NewID(PrefixSMS, now), OrganizationID: c.OrganizationID, DeviceID: c.DeviceID, WalletID: c.WalletID,
		Sender: in.Sender, Body: in.Body, Fingerprint: fp, ReceivedAt: in.ReceivedAt, Channel: channel,
		Parsed: parsed, PrevBalances: PreviousBalances(parsed), PastedBy: actor, CreatedAt: now, UpdatedAt: now,
	}
	s, err := p.settings(ctx, tx, c.OrganizationID)
	if err != nil {
		return nil, nil, err
	}
	if err := p.expireOld(ctx, tx, c, s, now); err != nil {
		return nil, nil, err
	}
	audit := func() error {
		return p.audit(ctx, tx, AuditSMSPaste, c.OrganizationID, m.ID, map[string]string{
			"wallet": c.WalletID, "transaction_id": parsed.TransactionID, "amount": engine.FormatAmount(parsed.Amount), "status": m.Status,
		})
	}
	prover, err := provenBy(ctx, tx, m)
	if err != nil {
		return nil, nil, err
	}
	if prover != "" {
		m.Status, m.Reason = StatusConflict, "transaction "+parsed.TransactionID+" is already proven by "+prover+", with other text"
		if err := tx.CreateSMS(ctx, m); err != nil {
			return nil, nil, err
		}
		return m, nil, audit()
	}
	m.Status, m.Reason = StatusHeld, "pasted; its balance does not continue the wallet's chain"
	if err := tx.CreateSMS(ctx, m); err != nil {
		return nil, nil, err
	}
	proven, err := p.fit(ctx, tx, c, s, now)
	if err != nil {
		return nil, nil, err
	}
	for _, pm := range proven {
		if pm.ID == m.ID {
			m.Status, m.Reason, m.GapID = pm.Status, pm.Reason, pm.GapID
		}
	}
	if m.Status == StatusHeld {
		if err := p.capHeld(ctx, tx, c, s, now); err != nil {
			return nil, nil, err
		}
	}
	return m, proven, audit()
}
