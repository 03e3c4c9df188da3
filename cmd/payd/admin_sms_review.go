package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/payd-engine/payd/provider/smsinbox"
)

// The operator's review of the SMS inbox: approve or reject a
// held message, paste one the phone missed, and the gaps a wallet's chain
// was moved over. Each change is audited with --actor.

var smsReviewCommands = map[string]adminCommand{
	"sms approve": {summary: "accept a held, conflicting or expired SMS you checked on the phone; it proves its payment, audited", inbox: smsApprove},
	"sms reject":  {summary: "mark a held, conflicting or expired SMS as false; it never proves anything, audited", inbox: smsReject},
	"sms paste":   {summary: "enter an SMS the phone missed, as it reads on the phone; fitted into the wallet's chain, audited", inbox: smsPaste},
	"sms gaps":    {summary: "list the gaps wallets' SMS chains were moved over (missed or unreadable messages), newest first", inbox: smsGaps},
}

func smsApprove(fs *flag.FlagSet) func(context.Context, *smsinbox.Provider) (any, error) {
	org := fs.String("org", "", "organization ID")
	id := fs.String("sms", "", "message ID (payd admin sms list --status held)")
	reason := fs.String("reason", "", "why, e.g. \"checked on the phone\"")
	return func(ctx context.Context, inbox *smsinbox.Provider) (any, error) {
		m, err := inbox.ApproveSMS(ctx, *org, *id, *reason)
		if err != nil {
			return nil, err
		}
		return smsinbox.NewSMSView(m, false), nil
	}
}

func smsReject(fs *flag.FlagSet) func(context.Context, *smsinbox.Provider) (any, error) {
	org := fs.String("org", "", "organization ID")
	id := fs.String("sms", "", "message ID")
	reason := fs.String("reason", "", "why, e.g. \"not on the phone\"")
	return func(ctx context.Context, inbox *smsinbox.Provider) (any, error) {
		m, err := inbox.RejectSMS(ctx, *org, *id, *reason)
		if err != nil {
			return nil, err
		}
		return smsinbox.NewSMSView(m, false), nil
	}
}

func smsPaste(fs *flag.FlagSet) func(context.Context, *smsinbox.Provider) (any, error) {
	var p smsinbox.PasteParams
	fs.StringVar(&p.OrganizationID, "org", "", "organization ID")
	fs.StringVar(&p.WalletID, "wallet", "", "the wallet whose phone got the SMS")
	fs.StringVar(&p.Sender, "sender", "", "the sender as the phone shows it, e.g. bKash, NAGAD, 16216")
	fs.StringVar(&p.Text, "text", "", "the SMS text, exactly as on the phone")
	file := fs.String("text-file", "", "read the text from this file instead (\"-\": standard input), for a message of several lines")
	received := fs.String("received-at", "", "when the phone received it (RFC 3339); default now")
	return func(ctx context.Context, inbox *smsinbox.Provider) (any, error) {
		if *file != "" {
			if p.Text != "" {
				return nil, fmt.Errorf("give --text or --text-file, not both")
			}
			var b []byte
			var err error
			if *file == "-" {
				b, err = io.ReadAll(io.LimitReader(os.Stdin, 64<<10))
			} else {
				b, err = os.ReadFile(*file)
			}
			if err != nil {
				return nil, err
			}
			p.Text = string(b)
		}
		if *received != "" {
			t, err := time.Parse(time.RFC3339, *received)
			if err != nil {
				return nil, fmt.Errorf("--received-at: %v", err)
			}
			p.ReceivedAt = t
		}
		m, err := inbox.PasteSMS(ctx, p)
		if err != nil {
			return nil, err
		}
		return smsinbox.NewSMSView(m, true), nil
	}
}

func smsGaps(fs *flag.FlagSet) func(context.Context, *smsinbox.Provider) (any, error) {
	org := fs.String("org", "", "organization ID")
	wallet := fs.String("wallet", "", "only this wallet's gaps")
	limit := fs.Int("limit", 50, "newest gaps to show; 0 for all")
	return func(ctx context.Context, inbox *smsinbox.Provider) (any, error) {
		gs, err := inbox.ListGaps(ctx, *org, *wallet, *limit)
		if err != nil {
			return nil, err
		}
		r := gapReport{Gaps: make([]smsinbox.GapView, len(gs))}
		for i, g := range gs {
			r.Gaps[i] = smsinbox.NewGapView(g)
		}
		return r, nil
	}
}

type gapReport struct {
	Gaps []smsinbox.GapView `json:"gaps"`
}

// WriteText prints one line a gap: what the missed messages moved, and the
// messages the chain went on with.
func (r gapReport) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "AT\tID\tWALLET\tFROM\tTO\tAMOUNT\tMESSAGES\tFIRST\tLAST\tBY")
	for _, g := range r.Gaps {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", g.CreatedAt, g.ID, g.WalletID, g.FromBalance, g.ToBalance,
			g.Amount, g.Messages, g.FirstMessageID, g.LastMessageID, g.Actor)
	}
	return tw.Flush()
}

// optionalInt is an integer flag that knows whether it was given (0 is a
// value: --resync-after 0 turns the re-synchronization off).
type optionalInt struct{ v *int }

func (n *optionalInt) String() string {
	if n == nil || n.v == nil {
		return ""
	}
	return strconv.Itoa(*n.v)
}

func (n *optionalInt) Set(s string) error {
	v, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("not an integer: %q", s)
	}
	n.v = &v
	return nil
}
