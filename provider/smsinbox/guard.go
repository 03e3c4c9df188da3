package smsinbox

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/smsinbox/smsparse"
)

// What guards the inbox against a forger holding a device token (a token is a secret on a
// phone, which can be stolen or leak through its app):
// held messages are bounded and expire, every held or conflicting message
// is an alarm, a payout matched by an SMS can wait for an operator, and a
// device token can be rotated.

// Audit actions of the guards.
const (
	AuditDeviceRotate  = "sms_device.rotate"
	AuditSettings      = "sms_settings.update"
	AuditPayoutMatch   = "payout.sms_match"
	AuditPayoutConfirm = "payout.confirm"
)

// Bounds of the settings, and their defaults.
const (
	expireBatch             = 32 // held messages expired at most per ingest, so one ingest stays bounded
	maxHeldMaxAge           = 30 * 24 * time.Hour
	maxHeldMax              = 100_000
	minHeldMaxAge           = time.Minute
	defaultHeldMax          = 1000
	defaultHeldMaxAge       = 24 * time.Hour
	defaultPayoutSMSConfirm = true
	defaultResyncAfter      = 3
	defaultResyncQuiet      = 10 * time.Minute
	maxResyncAfter          = 50
	minResyncQuiet          = time.Minute
	maxResyncQuiet          = 24 * time.Hour
)

// DefaultSettings are an organization's settings until it changes them.
// A payout matched by an SMS waits for an operator by default: an SMS that
// completes a payout alone is the riskiest path (a forgery that passed the
// balance chain would mark as sent money that never left), and the operator
// who sent the payout by hand is there to confirm it.
func DefaultSettings(orgID string) *Settings {
	return &Settings{
		OrganizationID: orgID, PayoutSMSConfirm: defaultPayoutSMSConfirm, HeldMax: defaultHeldMax, HeldMaxAge: defaultHeldMaxAge,
		ResyncAfter: defaultResyncAfter, ResyncQuiet: defaultResyncQuiet,
	}
}

// settings returns an organization's settings, or the defaults.
func (p *Provider) settings(ctx context.Context, tx Tx, orgID string) (*Settings, error) {
	s, err := tx.GetSettings(ctx, orgID)
	if errors.Is(err, engine.ErrNotFound) {
		return DefaultSettings(orgID), nil
	}
	return s, err
}

// Settings returns an organization's inbox settings.
func (p *Provider) Settings(ctx context.Context, orgID string) (*Settings, error) {
	var s *Settings
	err := p.store.InboxReadTx(ctx, func(ctx context.Context, tx Tx) error {
		if _, err := tx.GetOrganization(ctx, orgID); err != nil {
			return notFound(err, "organization")
		}
		var err error
		s, err = p.settings(ctx, tx, orgID)
		return err
	})
	return s, err
}

// SettingsUpdate changes the settings whose fields are set.
type SettingsUpdate struct {
	PayoutSMSConfirm *bool
	HeldMax          *int
	HeldMaxAge       *time.Duration
	// ResyncAfter 0 turns the chain's re-synchronization off.
	ResyncAfter *int
	ResyncQuiet *time.Duration
}

// UpdateSettings changes an organization's inbox settings, audited.
func (p *Provider) UpdateSettings(ctx context.Context, orgID string, u SettingsUpdate) (*Settings, error) {
	if u.HeldMax != nil && (*u.HeldMax < 1 || *u.HeldMax > maxHeldMax) {
		return nil, engine.Invalid("held_max", fmt.Sprintf("must be between 1 and %d", maxHeldMax))
	}
	if u.HeldMaxAge != nil && (*u.HeldMaxAge < minHeldMaxAge || *u.HeldMaxAge > maxHeldMaxAge) {
		return nil, engine.Invalid("held_max_age", fmt.Sprintf("must be between %s and %s", minHeldMaxAge, maxHeldMaxAge))
	}
	if u.ResyncAfter != nil && (*u.ResyncAfter < 0 || *u.ResyncAfter > maxResyncAfter) {
		return nil, engine.Invalid("resync_after", fmt.Sprintf("must be between 0 (never) and %d", maxResyncAfter))
	}
	if u.ResyncQuiet != nil && (*u.ResyncQuiet < minResyncQuiet || *u.ResyncQuiet > maxResyncQuiet) {
		return nil, engine.Invalid("resync_quiet", fmt.Sprintf("must be between %s and %s", minResyncQuiet, maxResyncQuiet))
	}
	var s *Settings
	err := p.store.InboxTx(ctx, func(ctx context.Context, tx Tx) error {
		if _, err := tx.LockOrganization(ctx, orgID); err != nil {
			return notFound(err, "organization")
		}
		var err error
		if s, err = p.settings(ctx, tx, orgID); err != nil {
			return err
		}
		if u.PayoutSMSConfirm != nil {
			s.PayoutSMSConfirm = *u.PayoutSMSConfirm
		}
		if u.HeldMax != nil {
			s.HeldMax = *u.HeldMax
		}
		if u.HeldMaxAge != nil {
			s.HeldMaxAge = *u.HeldMaxAge
		}
		if u.ResyncAfter != nil {
			s.ResyncAfter = *u.ResyncAfter
		}
		if u.ResyncQuiet != nil {
			s.ResyncQuiet = *u.ResyncQuiet
		}
		s.UpdatedAt = p.now()
		if err := tx.PutSettings(ctx, s); err != nil {
			return err
		}
		return p.audit(ctx, tx, AuditSettings, orgID, orgID, map[string]string{
			"payout_sms_confirm": fmt.Sprint(s.PayoutSMSConfirm), "held_max": fmt.Sprint(s.HeldMax), "held_max_age": s.HeldMaxAge.String(),
			"resync_after": fmt.Sprint(s.ResyncAfter), "resync_quiet": s.ResyncQuiet.String(),
		})
	})
	return s, err
}

// PreviousBalances returns the chain balances after which m's balance
// follows: its balance less its change, less its change rounded to two
// decimals, or less its change without the commission (see follows). Only
// balances with at most two decimals are returned, as a chain's balance has
// no more; there are then at most two, which the store indexes.
func PreviousBalances(m *smsparse.Message) []decimal.Decimal {
	delta := m.Delta()
	var out []decimal.Decimal
	for _, d := range []decimal.Decimal{delta, delta.Round(2), delta.Sub(m.Commission)} {
		prev := m.Balance.Sub(d)
		if !prev.Equal(prev.Round(2)) || slices.ContainsFunc(out, prev.Equal) {
			continue
		}
		out = append(out, prev)
	}
	return out
}

// alarm logs, at WARN for the operator, a message that does not count: the
// wallet, device, message and transaction ID, never a balance.
func (p *Provider) alarm(ctx context.Context, msg string, m *SMS, args ...any) {
	attrs := []any{"organization", m.OrganizationID, "wallet", m.WalletID, "device", m.DeviceID, "sms", m.ID, "status", m.Status}
	if m.Parsed != nil {
		attrs = append(attrs, "transaction_id", m.Parsed.TransactionID)
	}
	p.logger.WarnContext(ctx, "sms inbox: "+msg, append(attrs, args...)...)
}

// expire takes a held message out of its chain for good.
func expire(ctx context.Context, tx Tx, m *SMS, reason string, now time.Time) error {
	m.Status, m.Reason, m.UpdatedAt = StatusExpired, reason, now
	return tx.UpdateSMS(ctx, m)
}

// expireOld expires a locked chain's held messages stored before the
// organization's HeldMaxAge, oldest first, at most expireBatch of them.
func (p *Provider) expireOld(ctx context.Context, tx Tx, c *Chain, s *Settings, now time.Time) error {
	old, err := tx.ListOldestHeldSMS(ctx, c.WalletID, now.Add(-s.HeldMaxAge), expireBatch)
	if err != nil {
		return err
	}
	for _, m := range old {
		if err := expire(ctx, tx, m, fmt.Sprintf("held for more than %s without continuing the wallet's chain", s.HeldMaxAge), now); err != nil {
			return err
		}
		p.alarm(ctx, "held message expired; see payd admin sms list --status expired", m)
	}
	return nil
}

// capHeld expires a locked chain's oldest held messages beyond the
// organization's HeldMax.
func (p *Provider) capHeld(ctx context.Context, tx Tx, c *Chain, s *Settings, now time.Time) error {
	n, err := tx.CountSMS(ctx, c.OrganizationID, c.WalletID, StatusHeld)
	if err != nil || n <= s.HeldMax {
		return err
	}
	old, err := tx.ListOldestHeldSMS(ctx, c.WalletID, now.Add(time.Microsecond), min(n-s.HeldMax, expireBatch))
	if err != nil {
		return err
	}
	for _, m := range old {
		if err := expire(ctx, tx, m, fmt.Sprintf("dropped: the wallet had more than %d held messages", s.HeldMax), now); err != nil {
			return err
		}
		p.alarm(ctx, "too many held messages for the wallet: the oldest was dropped; check the phone and anchor the wallet", m, "held_max", s.HeldMax)
	}
	return nil
}

// payoutFits reports whether a proven debit m is exactly the send of a
// queued payout: same channel, recipient and amount, on or after the
// minute the payout was queued, and stored after it.
func payoutFits(mp *ManualPayout, m *SMS) bool {
	return mp.Method == m.Channel && mp.Account == m.Parsed.Counterparty && mp.Amount.Equal(m.Parsed.Amount) &&
		!m.Parsed.Time.Before(mp.CreatedAt.Truncate(time.Minute)) && !m.CreatedAt.Before(mp.CreatedAt)
}

// RotateDevice replaces a device's token: the old one stops working at
// once. The new token is shown only here.
func (p *Provider) RotateDevice(ctx context.Context, orgID, deviceID string) (*DeviceCredentials, error) {
	token, err := newToken()
	if err != nil {
		return nil, err
	}
	creds := &DeviceCredentials{Token: token}
	err = p.store.InboxTx(ctx, func(ctx context.Context, tx Tx) error {
		d, err := tx.LockDevice(ctx, orgID, deviceID)
		if err != nil {
			return notFound(err, "device")
		}
		if d.RevokedAt != nil {
			return engine.Errorf(engine.CodeConflict, "device %s is revoked; add a new one", d.ID)
		}
		d.TokenHash, d.TokenHint = hashToken(token), token[len(token)-4:]
		if err := tx.UpdateDevice(ctx, d); err != nil {
			return err
		}
		if creds.Chains, err = tx.ListChains(ctx, orgID, d.ID); err != nil {
			return err
		}
		creds.Device = d
		return p.audit(ctx, tx, AuditDeviceRotate, orgID, d.ID, map[string]string{"name": d.Name, "token_hint": "…" + d.TokenHint})
	})
	if err != nil {
		return nil, err
	}
	return creds, nil
}

// ConfirmPayout completes a payout an SMS matched (PayoutMatched), with
// the SMS's transaction ID, as the operator confirms they sent it.
// Confirming again changes nothing.
func (p *Provider) ConfirmPayout(ctx context.Context, withdrawalID string) (*ManualPayout, error) {
	var mp *ManualPayout
	err := p.store.InboxTx(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		if mp, err = tx.LockManualPayout(ctx, withdrawalID); err != nil {
			return notFound(err, "payout")
		}
		switch {
		case mp.Status == PayoutSucceeded && mp.SMSID != "":
			return nil // confirmed already
		case mp.Status == PayoutQueued:
			return engine.Errorf(engine.CodeConflict, "payout %s was matched by no SMS: record your send with payd admin payout complete", withdrawalID)
		case mp.Status != PayoutMatched:
			return engine.Errorf(engine.CodeConflict, "payout %s is already %s", withdrawalID, mp.Status)
		}
		mp.Status, mp.Operator, mp.CompletedAt = PayoutSucceeded, engine.ActorFrom(ctx), p.now()
		if err := tx.UpdateManualPayout(ctx, mp); err != nil {
			return err
		}
		return p.audit(ctx, tx, mp.action(AuditPayoutConfirm), mp.OrganizationID, withdrawalID, mp.auditDetails())
	})
	if err != nil {
		return nil, err
	}
	if err := p.pollNow(ctx, mp); err != nil {
		return mp, err
	}
	return mp, nil
}

// Stats are an organization's message counts: Total by status, and the
// wallets' counts of the statuses that are alarms (held, conflict,
// expired). Read from the counts the store keeps with every change, so
// reading them costs the same whatever the history; a metrics collector
// reads them here.
type Stats struct {
	OrganizationID string
	Total          map[string]int
	Wallets        map[string]map[string]int
	// Gaps is how many gaps each wallet's chain was moved over, from the
	// count each chain keeps; wallets without any are omitted.
	Gaps map[string]int
}

// alarmStatuses are the statuses an operator must look at.
var alarmStatuses = map[string]bool{StatusHeld: true, StatusConflict: true, StatusExpired: true}

// Stats returns an organization's message counts.
func (p *Provider) Stats(ctx context.Context, orgID string) (*Stats, error) {
	s := &Stats{OrganizationID: orgID, Total: map[string]int{}, Wallets: map[string]map[string]int{}, Gaps: map[string]int{}}
	err := p.store.InboxReadTx(ctx, func(ctx context.Context, tx Tx) error {
		if _, err := tx.GetOrganization(ctx, orgID); err != nil {
			return notFound(err, "organization")
		}
		chains, err := tx.ListChains(ctx, orgID, "")
		if err != nil {
			return err
		}
		for _, c := range chains {
			if c.Gaps > 0 {
				s.Gaps[c.WalletID] = c.Gaps
			}
		}
		counts, err := tx.ListSMSCounts(ctx, orgID)
		for _, c := range counts {
			s.Total[c.Status] += c.Count
			if c.WalletID != "" && alarmStatuses[c.Status] {
				if s.Wallets[c.WalletID] == nil {
					s.Wallets[c.WalletID] = map[string]int{}
				}
				s.Wallets[c.WalletID][c.Status] = c.Count
			}
		}
		return err
	})
	return s, err
}
