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
