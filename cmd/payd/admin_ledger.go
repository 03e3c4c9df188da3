package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/payd-engine/payd/engine"
)

// The ledger's own check: balances are kept in rows beside the entries,
// and this recomputes them from the entries, the append-only truth.

// errLedgerDiffers makes "payd admin ledger verify" exit non-zero after
// printing its report.
var errLedgerDiffers = errors.New("the ledger's balance rows differ from its entries")

func ledgerVerify(*flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		check, err := eng.VerifyLedger(ctx)
		if err != nil {
			return nil, err
		}
		r := ledgerVerifyReport{Organizations: check.Organizations, Accounts: check.Accounts, OK: len(check.Differences) == 0,
			Differences: []ledgerDifferenceView{}}
		for _, d := range check.Differences {
			r.Differences = append(r.Differences, ledgerDifferenceView{
				OrganizationID: d.OrganizationID, Account: d.Account,
				Balance: engine.FormatAmount(d.Balance), Entries: engine.FormatAmount(d.Entries),
				Difference: engine.FormatAmount(d.Balance.Sub(d.Entries)),
			})
		}
		return r, nil
	}
}

// ledgerVerifyReport is what ledger verify found; its Err fails the command.
type ledgerVerifyReport struct {
	OK            bool                   `json:"ok"`
	Organizations int                    `json:"organizations"`
	Accounts      int                    `json:"accounts"`
	Differences   []ledgerDifferenceView `json:"differences"`
}

type ledgerDifferenceView struct {
	OrganizationID string `json:"organization_id"`
	Account        string `json:"account"`
	Balance        string `json:"balance"`    // the balance row
	Entries        string `json:"entries"`    // the sum of the account's entries
	Difference     string `json:"difference"` // balance minus entries
}

func (r ledgerVerifyReport) Err() error {
	if r.OK {
		return nil
	}
	return fmt.Errorf("%w: %d accounts", errLedgerDiffers, len(r.Differences))
}

func (r ledgerVerifyReport) WriteText(w io.Writer) error {
	if r.OK {
		_, err := fmt.Fprintf(w, "ledger verified: %d organizations, %d accounts, every balance is what its entries add up to\n",
			r.Organizations, r.Accounts)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight|tabwriter.Debug)
	fmt.Fprintln(tw, "organization\taccount\tbalance\tentries\tdifference\t")
	for _, d := range r.Differences {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t\n", d.OrganizationID, d.Account, d.Balance, d.Entries, d.Difference)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\n%d of %d accounts in %d organizations differ from their entries\n",
		len(r.Differences), r.Accounts, r.Organizations)
	return err
}

// journalView is a journal as an accountant reads it.
type journalView struct {
	JournalID string      `json:"journal_id"`
	Time      string      `json:"time"`
	Kind      string      `json:"kind"`
	Reference string      `json:"reference,omitempty"`
	Memo      string      `json:"memo"`
	Actor     string      `json:"actor,omitempty"`
	Entries   []entryView `json:"entries"`
}

type entryView struct {
	Account string `json:"account"`
	Amount  string `json:"amount"`
}

func newJournalView(j *engine.Journal) journalView {
	v := journalView{JournalID: j.ID, Time: engine.FormatTime(j.CreatedAt), Kind: j.Kind, Reference: j.Reference, Memo: j.Memo, Actor: j.Actor}
	for _, e := range j.Entries {
		v.Entries = append(v.Entries, entryView{e.Account, engine.FormatAmount(e.Amount)})
	}
	return v
}

// ledgerShow prints the journal. With --json it is one object; otherwise a
// table an accountant can read: one line per entry, debits negative.
func ledgerShow(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	org := fs.String("org", "", "organization ID")
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		js, err := eng.ListJournals(ctx, *org)
		if err != nil {
			return nil, err
		}
		b, err := eng.GetBalance(ctx, *org)
		if err != nil {
			return nil, err
		}
		views := make([]journalView, len(js))
		for i, j := range js {
			views[i] = newJournalView(j)
		}
		return ledgerReport{OrganizationID: *org, Journals: views,
			Available: engine.FormatAmount(b.Available), Held: engine.FormatAmount(b.Held)}, nil
	}
}

// ledgerReport prints as a table when not asked for JSON.
type ledgerReport struct {
	OrganizationID string        `json:"organization_id"`
	Journals       []journalView `json:"journals"`
	Available      string        `json:"available"`
	Held           string        `json:"held"`
}

func (r ledgerReport) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight|tabwriter.Debug)
	fmt.Fprintln(tw, "time\tkind\treference\taccount\tamount\tmemo\t")
	for _, j := range r.Journals {
		for _, e := range j.Entries {
			memo := j.Memo
			if j.Actor != "" {
				memo += " (by " + j.Actor + ")"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", j.Time, j.Kind, j.Reference, e.Account, e.Amount, memo)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\navailable %s BDT, held %s BDT\n", r.Available, r.Held)
	return err
}
