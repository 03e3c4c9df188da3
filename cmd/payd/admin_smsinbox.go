package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/payd-engine/payd/provider/smsinbox"
)

// The SMS inbox provider's admin commands: devices, messages, the balance
// chain and the operator's payout queue.

// repeatable is a flag that may be given more than once.
type repeatable []string

func (r *repeatable) String() string     { return strings.Join(*r, ",") }
func (r *repeatable) Set(s string) error { *r = append(*r, s); return nil }

func deviceAdd(fs *flag.FlagSet) func(context.Context, *smsinbox.Provider) (any, error) {
	var p smsinbox.AddDeviceParams
	var wallets repeatable
	fs.StringVar(&p.OrganizationID, "org", "", "organization ID")
	fs.StringVar(&p.Name, "name", "", "a label for the phone, e.g. \"counter 1, Robi SIM\"")
	fs.Var(&wallets, "wallet", "a wallet whose SMS the phone receives, WALLET or WALLET:SIM_SLOT (repeatable; per channel one wallet, or one per SIM slot)")
	extra := deviceAddFlags(fs)
	return func(ctx context.Context, inbox *smsinbox.Provider) (any, error) {
		if err := extra.apply(&p, wallets); err != nil {
			return nil, err
		}
		creds, err := inbox.AddDevice(ctx, p)
		if err != nil {
			return nil, err
		}
		v := smsinbox.NewDeviceView(creds.Device, creds.Chains)
		v.Token, v.SigningSecret = creds.Token, creds.SigningSecret
		return v, nil
	}
}

func deviceList(fs *flag.FlagSet) func(context.Context, *smsinbox.Provider) (any, error) {
	org := fs.String("org", "", "organization ID")
	return func(ctx context.Context, inbox *smsinbox.Provider) (any, error) {
		ds, err := inbox.ListDevices(ctx, *org)
		if err != nil {
			return nil, err
		}
		views := make([]smsinbox.DeviceView, len(ds))
		for i, d := range ds {
			views[i] = smsinbox.NewDeviceView(d.Device, d.Chains)
		}
		return map[string]any{"devices": views}, nil
	}
}

func deviceRevoke(fs *flag.FlagSet) func(context.Context, *smsinbox.Provider) (any, error) {
	org := fs.String("org", "", "organization ID")
	device := fs.String("device", "", "device ID")
	return func(ctx context.Context, inbox *smsinbox.Provider) (any, error) {
		d, err := inbox.RevokeDevice(ctx, *org, *device)
		if err != nil {
			return nil, err
		}
		return smsinbox.NewDeviceView(d, nil), nil
	}
}

func deviceRotate(fs *flag.FlagSet) func(context.Context, *smsinbox.Provider) (any, error) {
	org := fs.String("org", "", "organization ID")
	device := fs.String("device", "", "device ID")
	return func(ctx context.Context, inbox *smsinbox.Provider) (any, error) {
		creds, err := inbox.RotateDevice(ctx, *org, *device)
		if err != nil {
			return nil, err
		}
		v := smsinbox.NewDeviceView(creds.Device, creds.Chains)
		v.Token = creds.Token
		return v, nil
	}
}

func smsStats(fs *flag.FlagSet) func(context.Context, *smsinbox.Provider) (any, error) {
	org := fs.String("org", "", "organization ID")
	return func(ctx context.Context, inbox *smsinbox.Provider) (any, error) {
		s, err := inbox.Stats(ctx, *org)
		if err != nil {
			return nil, err
		}
		return map[string]any{"organization_id": s.OrganizationID, "messages": s.Total, "wallets": s.Wallets, "gaps": s.Gaps}, nil
	}
}

func smsSettings(fs *flag.FlagSet) func(context.Context, *smsinbox.Provider) (any, error) {
	org := fs.String("org", "", "organization ID")
	var confirm optionalBool
	var heldMaxAge optionalDuration
	fs.Var(&confirm, "payout-sms-confirm", "true: a payout that a proven SMS matches waits for payd admin payout confirm (the default); false: the SMS completes it")
	heldMax := fs.Int("held-max", 0, "held messages kept per wallet; beyond it the oldest expire (default 1000)")
	fs.Var(&heldMaxAge, "held-max-age", "how long a message stays held before it expires, e.g. 24h (the default)")
	var resyncAfter optionalInt
	var resyncQuiet optionalDuration
	fs.Var(&resyncAfter, "resync-after", "held messages, consistent among themselves, after which a wallet's chain re-synchronizes over a gap (default 3; 0: never)")
	fs.Var(&resyncQuiet, "resync-quiet", "how long the chain must have accepted nothing since the first of them, e.g. 10m (the default)")
	return func(ctx context.Context, inbox *smsinbox.Provider) (any, error) {
		var u smsinbox.SettingsUpdate
		u.PayoutSMSConfirm, u.HeldMaxAge, u.ResyncAfter, u.ResyncQuiet = confirm.v, heldMaxAge.v, resyncAfter.v, resyncQuiet.v
		if *heldMax != 0 {
			u.HeldMax = heldMax
		}
		var s *smsinbox.Settings
		var err error
		if u == (smsinbox.SettingsUpdate{}) {
			s, err = inbox.Settings(ctx, *org)
		} else {
			s, err = inbox.UpdateSettings(ctx, *org, u)
		}
		if err != nil {
			return nil, err
		}
		return map[string]any{
			"organization_id": s.OrganizationID, "payout_sms_confirm": s.PayoutSMSConfirm,
			"held_max": s.HeldMax, "held_max_age": s.HeldMaxAge.String(),
			"resync_after": s.ResyncAfter, "resync_quiet": s.ResyncQuiet.String(),
		}, nil
	}
}

func smsList(fs *flag.FlagSet) func(context.Context, *smsinbox.Provider) (any, error) {
	var p smsinbox.ListSMSParams
	fs.StringVar(&p.OrganizationID, "org", "", "organization ID")
	fs.StringVar(&p.WalletID, "wallet", "", "only this wallet's messages")
	fs.StringVar(&p.Status, "status", "", "only messages in this status: accepted, held, duplicate, conflict, expired, rejected, unparsed, untrusted_sender or no_wallet")
	fs.IntVar(&p.Limit, "limit", 50, "newest messages to show; 0 for all")
	body := fs.Bool("body", false, "include each message's text")
	return func(ctx context.Context, inbox *smsinbox.Provider) (any, error) {
		ms, err := inbox.ListSMS(ctx, p)
		if err != nil {
			return nil, err
		}
		r := smsReport{Messages: make([]smsinbox.SMSView, len(ms))}
		for i, m := range ms {
			r.Messages[i] = smsinbox.NewSMSView(m, *body)
		}
		return r, nil
	}
}

type smsReport struct {
	Messages []smsinbox.SMSView `json:"messages"`
}

// WriteText prints one line a message, newest first, with what it counts
// for; the reason says why a message does not count.
func (r smsReport) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RECEIVED\tID\tSENDER\tSTATUS\tKIND\tTRANSACTION\tAMOUNT\tFROM\tBALANCE\tMATCHED TO\tREASON")
	for _, m := range r.Messages {
		match := "-"
		if m.Match != nil {
			match = m.Match.DepositID + " (" + m.Match.AttemptStatus
			if m.Match.FailureCode != nil {
				match += ": " + *m.Match.FailureCode
			}
			match += ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", m.ReceivedAt, m.ID, m.Sender, m.Status,
			dash(m.Kind), dash(m.TransactionID), dash(m.Amount), dash(m.Counterparty), dash(m.Balance), match, dash(m.Reason))
		if m.Body != "" {
			fmt.Fprintf(tw, "\t%s\n", strings.Join(strings.Fields(m.Body), " "))
		}
	}
	return tw.Flush()
}

func dash(s *string) string {
	if s == nil {
		return "-"
	}
	return *s
}

func smsAnchor(fs *flag.FlagSet) func(context.Context, *smsinbox.Provider) (any, error) {
	org := fs.String("org", "", "organization ID")
	wallet := fs.String("wallet", "", "wallet ID")
	var balance optionalDecimal
	fs.Var(&balance, "balance", "the wallet's balance as its phone shows it now, e.g. 12500.00")
	return func(ctx context.Context, inbox *smsinbox.Provider) (any, error) {
		if balance.v == nil {
			return nil, fmt.Errorf("--balance is required")
		}
		c, proven, err := inbox.Anchor(ctx, *org, *wallet, *balance.v)
		if err != nil {
			return nil, err
		}
		accepted := make([]string, len(proven))
		for i, m := range proven {
			accepted[i] = m.ID
		}
		return map[string]any{"wallet": smsinbox.NewWalletView(c), "accepted": accepted}, nil
	}
}

func payoutList(fs *flag.FlagSet) func(context.Context, *smsinbox.Provider) (any, error) {
	var p smsinbox.ListPayoutsParams
	fs.StringVar(&p.OrganizationID, "org", "", "only this organization's payouts (default all)")
	fs.StringVar(&p.Status, "status", "open", "open (queued or matched by an SMS, waiting for payout confirm), queued, matched, succeeded or failed; \"\" for all")
	return func(ctx context.Context, inbox *smsinbox.Provider) (any, error) {
		statuses := []string{p.Status}
		if p.Status == "open" {
			statuses = []string{smsinbox.PayoutQueued, smsinbox.PayoutMatched}
		}
		var ps []*smsinbox.ManualPayout
		for _, status := range statuses {
			p.Status = status
			more, err := inbox.ListPayouts(ctx, p)
			if err != nil {
				return nil, err
			}
			ps = append(ps, more...)
		}
		slices.SortStableFunc(ps, func(a, b *smsinbox.ManualPayout) int { return a.CreatedAt.Compare(b.CreatedAt) })
		views := make([]smsinbox.PayoutView, len(ps))
		for i, mp := range ps {
			views[i] = smsinbox.NewPayoutView(mp)
		}
		return map[string]any{"payouts": views}, nil
	}
}

func payoutComplete(fs *flag.FlagSet) func(context.Context, *smsinbox.Provider) (any, error) {
	withdrawal := fs.String("withdrawal", "", "withdrawal ID")
	txID := fs.String("provider-transaction-id", "", "the transaction ID of your send, from the wallet's or bank's receipt")
	return func(ctx context.Context, inbox *smsinbox.Provider) (any, error) {
		mp, err := inbox.CompletePayout(ctx, *withdrawal, *txID)
		if err != nil {
			return nil, err
		}
		return smsinbox.NewPayoutView(mp), nil
	}
}

func payoutConfirm(fs *flag.FlagSet) func(context.Context, *smsinbox.Provider) (any, error) {
	withdrawal := fs.String("withdrawal", "", "withdrawal ID")
	return func(ctx context.Context, inbox *smsinbox.Provider) (any, error) {
		mp, err := inbox.ConfirmPayout(ctx, *withdrawal)
		if err != nil {
			return nil, err
		}
		return smsinbox.NewPayoutView(mp), nil
	}
}

func payoutFail(fs *flag.FlagSet) func(context.Context, *smsinbox.Provider) (any, error) {
	withdrawal := fs.String("withdrawal", "", "withdrawal ID")
	reason := fs.String("reason", "", "why it cannot be sent, e.g. \"recipient wallet blocked\"")
	return func(ctx context.Context, inbox *smsinbox.Provider) (any, error) {
		mp, err := inbox.FailPayout(ctx, *withdrawal, *reason)
		if err != nil {
			return nil, err
		}
		return smsinbox.NewPayoutView(mp), nil
	}
}
