package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/smsinbox"
)

// Late payments (smsinbox): a payment whose SMS was accepted after its
// attempt failed and that no deposit was credited with, and the operator's
// credit of it.

func smsUnmatched(fs *flag.FlagSet) func(context.Context, *smsinbox.Provider) (any, error) {
	org := fs.String("org", "", "organization ID")
	scan := fs.Int("scan", smsinbox.DefaultUnmatchedScan, "how many of the newest accepted messages to look through")
	return func(ctx context.Context, inbox *smsinbox.Provider) (any, error) {
		us, err := inbox.ListUnmatched(ctx, *org, *scan)
		if err != nil {
			return nil, err
		}
		r := unmatchedReport{Payments: make([]smsinbox.UnmatchedView, len(us))}
		for i, u := range us {
			r.Payments[i] = smsinbox.NewUnmatchedView(*org, u)
		}
		return r, nil
	}
}

type unmatchedReport struct {
	Payments []smsinbox.UnmatchedView `json:"payments"`
}

// WriteText prints one line a payment, newest first, with its deposit and
// the command that credits it.
func (r unmatchedReport) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RECEIVED\tSMS\tTRANSACTION\tAMOUNT\tFROM\tDEPOSIT\tNEXT")
	for _, p := range r.Payments {
		dep := "-"
		if d := p.Deposit; d != nil {
			dep = d.ID + " (" + d.Status + ", " + d.Amount + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.SMS.ReceivedAt, p.SMS.ID, dash(p.SMS.TransactionID),
			dash(p.SMS.Amount), dash(p.SMS.Counterparty), dep, p.Next)
	}
	return tw.Flush()
}

// depositCredit runs with the SMS inbox as the engine's provider: the
// engine asks it whether an accepted SMS proves the payment.
func depositCredit(fs *flag.FlagSet) func(context.Context, *smsinbox.Provider) (any, error) {
	var p engine.CreditLatePaymentParams
	fs.StringVar(&p.OrganizationID, "org", "", "organization ID")
	fs.StringVar(&p.DepositID, "deposit", "", "the deposit the payment was for")
	fs.StringVar(&p.TransactionID, "transaction-id", "", "the payment's transaction ID, as payd admin sms unmatched shows it")
	return func(ctx context.Context, inbox *smsinbox.Provider) (any, error) {
		c, err := inbox.CreditLatePayment(ctx, p)
		if err != nil {
			return nil, err
		}
		return map[string]any{
			"deposit_id": c.Deposit.ID, "deposit_status": c.Deposit.Status, "attempt_id": c.Attempt.ID,
			"provider_transaction_id": c.Attempt.TransactionID, "journal_id": c.Journal.ID, "journal_kind": c.Journal.Kind,
			"credited": engine.FormatAmount(c.Journal.Entries[1].Amount),
		}, nil
	}
}
