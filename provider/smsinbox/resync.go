package smsinbox

import (
	"context"
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
)

// One odd message must not stall a wallet for ever. A message the phone
// missed, a credit payd cannot read, a message without a balance: each
// leaves the chain's balance behind the wallet's, and every later message
// is held. When the held messages form one run consistent among themselves
// (each one's balance is the previous one's plus its change), the chain
// re-synchronizes over the gap by itself, under every condition below; a
// forger holding the device's token can invent such a run, so each
// condition is what a forged run must get past:
//
//   - the organization allows it (Settings.ResyncAfter > 0) and the chain
//     has a balance: the operator's anchor stays the root of trust;
//   - the run is every message held since the chain last moved: nothing
//     accepted, nothing else held after its first message. A real message
//     that continues the chain while the run waits is accepted and
//     contradicts the run: its older messages never count, nor does a run
//     that continues them; a second run, or a stray message, makes it
//     ambiguous;
//   - at least Settings.ResyncAfter messages, and the chain has moved for
//     none of Settings.ResyncQuiet since the run's first message was
//     stored (payd's clock, not the phone's): a burst of forgeries waits
//     for the phone's real messages to contradict it;
//   - the run is linear (no fork, no loop), from the chain's own device
//     (or pasted by the operator), in time order, and its first message is
//     not older than the message that set the chain's balance;
//   - no message of the run carries a transaction ID another text proves,
//     or another message of the run carries.
//
// The gap is recorded (Gap, audited, counted on the chain, a warning), and
// a payout a debit of the run matches always waits for the operator. What
// remains (RELIABILITY.md): on a wallet whose phone receives no message
// for Settings.ResyncQuiet, a token holder's run of Settings.ResyncAfter
// forgeries is accepted; the phone's next real message is then held, an
// alarm.

// Audit actions of the chain's healing and the operator's review.
const (
	AuditWalletResync = "sms_wallet.resync"
	AuditSMSApprove   = "sms.approve"
	AuditSMSReject    = "sms.reject"
	AuditSMSPaste     = "sms.paste"
)

// PrefixGap is the prefix of gap IDs.
const PrefixGap = "gap_"

// maxResyncRun is how many held messages a run may have: beyond it the
// operator decides, and a re-synchronization reads a bounded number.
const maxResyncRun = 100

// fit accepts what a locked chain's held messages prove now: those that
// continue it, then a run that re-synchronizes it, and what continues that.
func (p *Provider) fit(ctx context.Context, tx Tx, c *Chain, s *Settings, now time.Time) ([]*SMS, error) {
	accepted, err := p.extendChain(ctx, tx, c, s, now)
	if err != nil {
		return nil, err
	}
	run, err := p.resync(ctx, tx, c, s, now)
	if err != nil || len(run) == 0 {
		return accepted, err
	}
	more, err := p.extendChain(ctx, tx, c, s, now)
	if err != nil {
		return nil, err
	}
	return append(append(accepted, run...), more...), nil
}

// resync re-synchronizes a locked chain over a gap when its held messages
// form a run that may do so (see above), and returns the run, accepted.
func (p *Provider) resync(ctx context.Context, tx Tx, c *Chain, s *Settings, now time.Time) ([]*SMS, error) {
	if s.ResyncAfter <= 0 || !c.Balance.Valid {
		return nil, nil
	}
	// The quiet window first, from the oldest message alone: a run that
	// must still wait costs one row.
	oldest, err := tx.ListHeldSMSSince(ctx, c.WalletID, c.UpdatedAt, 1)
	if err != nil || len(oldest) == 0 || now.Sub(oldest[0].CreatedAt) < s.ResyncQuiet {
		return nil, err
	}
	held, err := tx.ListHeldSMSSince(ctx, c.WalletID, c.UpdatedAt, maxResyncRun+1)
	if err != nil || len(held) < s.ResyncAfter || len(held) > maxResyncRun {
		return nil, err
	}
	run := consistentRun(held, c.DeviceID)
	if run == nil {
		return nil, nil
	}
	if c.BalanceMessageID != "" {
		head, err := tx.GetSMS(ctx, c.OrganizationID, c.BalanceMessageID)
		if err != nil {
			return nil, err
		}
		if head.Parsed != nil && run[0].Parsed.Time.Before(head.Parsed.Time) {
			return nil, nil
		}
	}
	// A message held before the chain last moved that the run continues:
	// the run began before a message the chain accepted since, which
	// contradicts it.
	for _, b := range PreviousBalances(run[0].Parsed) {
		before, err := tx.ListHeldSMSByBalance(ctx, c.WalletID, b, 1)
		if err != nil || len(before) > 0 {
			return nil, err
		}
	}
	ids := map[string]bool{}
	for _, m := range run {
		if ids[m.Parsed.TransactionID] {
			return nil, nil // two texts of one transaction: at most one is genuine
		}
		ids[m.Parsed.TransactionID] = true
		if prover, err := provenBy(ctx, tx, m); err != nil || prover != "" {
			return nil, err
		}
	}
	prev := PreviousBalances(run[0].Parsed)
	if len(prev) == 0 {
		return nil, nil
	}
	g, err := p.moveOverGap(ctx, tx, c, prev[0], run, "smsinbox", now)
	if err != nil {
		return nil, err
	}
	for _, m := range run {
		m.Status, m.GapID, m.UpdatedAt = StatusAccepted, g.ID, now
		m.Reason = fmt.Sprintf("accepted when the chain re-synchronized over gap %s (%d messages)", g.ID, len(run))
		if err := tx.UpdateSMS(ctx, m); err != nil {
			return nil, err
		}
	}
	p.logger.WarnContext(ctx, "sms inbox: the wallet's chain re-synchronized over a gap (a missed or unreadable message); see payd admin sms gaps",
		"organization", c.OrganizationID, "wallet", c.WalletID, "device", c.DeviceID, "gap", g.ID, "messages", len(run))
	err = tx.AppendAudit(ctx, &engine.AuditEntry{
		ID: engine.NewID(engine.PrefixAudit, now), Actor: "smsinbox", Action: AuditWalletResync,
		OrganizationID: c.OrganizationID, Subject: c.WalletID, CreatedAt: now, Details: g.details(),
	})
	return run, err
}

// moveOverGap records the gap between a locked chain's balance and to, the
// balance the first of ms continues, and moves the chain to the last of ms.
func (p *Provider) moveOverGap(ctx context.Context, tx Tx, c *Chain, to decimal.Decimal, ms []*SMS, actor string, now time.Time) (*Gap, error) {
	first, last := ms[0], ms[len(ms)-1]
	g := &Gap{
		ID: engine.NewID(PrefixGap, now), OrganizationID: c.OrganizationID, WalletID: c.WalletID,
		FromBalance: c.Balance.Decimal, FromMessageID: c.BalanceMessageID, ToBalance: to, Amount: to.Sub(c.Balance.Decimal),
		FirstMessageID: first.ID, LastMessageID: last.ID, Messages: len(ms), Actor: actor, CreatedAt: now,
	}
	if err := tx.CreateGap(ctx, g); err != nil {
		return nil, err
	}
	c.Balance, c.BalanceMessageID, c.UpdatedAt = decimal.NewNullDecimal(last.Parsed.Balance), last.ID, now
	c.Gaps++
	return g, tx.UpdateChain(ctx, c)
}

func (g *Gap) details() map[string]string {
	return map[string]string{
		"gap": g.ID, "wallet": g.WalletID, "from_balance": engine.FormatAmount(g.FromBalance),
		"from_message": g.FromMessageID, "to_balance": engine.FormatAmount(g.ToBalance), "amount": engine.FormatAmount(g.Amount),
		"first_message": g.FirstMessageID, "last_message": g.LastMessageID, "messages": fmt.Sprint(g.Messages),
	}
}

// consistentRun returns held ordered as one run in which each message's
// balance follows the previous one's, or nil if they are not exactly one
// such run (a fork, a loop, two runs, a message of another device, time
// going backwards).
func consistentRun(held []*SMS, deviceID string) []*SMS {
	next := make([]int, len(held))
	hasPrev := make([]bool, len(held))
	for i := range next {
		next[i] = -1
	}
	for i, a := range held {
		if a.DeviceID != deviceID || a.Parsed == nil {
			return nil
		}
		for j, b := range held {
			if b.Parsed == nil || !follows(a.Parsed.Balance, b.Parsed) {
				continue
			}
			if i == j || next[i] != -1 || hasPrev[j] {
				return nil
			}
			next[i], hasPrev[j] = j, true
		}
	}
	start := -1
	for i := range held {
		if !hasPrev[i] {
			if start != -1 {
				return nil
			}
			start = i
		}
	}
	if start == -1 {
		return nil
	}
	run := make([]*SMS, 0, len(held))
	for i := start; i != -1; i = next[i] {
		if len(run) > 0 && held[i].Parsed.Time.Before(run[len(run)-1].Parsed.Time) {
			return nil
		}
		run = append(run, held[i])
	}
	if len(run) != len(held) {
		return nil
	}
	return run
}

// ListGaps returns up to limit (0: all) of an organization's gaps, newest
// first; only walletID's unless it is "".
func (p *Provider) ListGaps(ctx context.Context, orgID, walletID string, limit int) ([]*Gap, error) {
	var out []*Gap
	err := p.store.InboxReadTx(ctx, func(ctx context.Context, tx Tx) error {
		if _, err := tx.GetOrganization(ctx, orgID); err != nil {
			return notFound(err, "organization")
		}
		var err error
		out, err = tx.ListGaps(ctx, orgID, walletID, limit)
		return err
	})
	return out, err
}
