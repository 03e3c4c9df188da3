package main

import (
	"context"
	"flag"

	"github.com/payd-engine/payd/engine"
)

func balanceShow(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	org := fs.String("org", "", "organization ID")
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		b, err := eng.GetBalance(ctx, *org)
		if err != nil {
			return nil, err
		}
		return map[string]string{"organization_id": *org, "currency": engine.Currency,
			"available": engine.FormatAmount(b.Available), "held": engine.FormatAmount(b.Held)}, nil
	}
}

func balanceAdjust(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	var p engine.AdjustParams
	fs.StringVar(&p.OrganizationID, "org", "", "organization ID")
	fs.StringVar(&p.Amount, "amount", "", "amount in BDT; negative (\"-250.00\") to debit")
	fs.StringVar(&p.Reason, "reason", "", "why, for the journal (required)")
	fs.StringVar(&p.Actor, "actor", env("USER", "admin"), "who makes the adjustment ($USER if set)")
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		j, err := eng.AdjustBalance(ctx, p)
		if err != nil {
			return nil, err
		}
		b, err := eng.GetBalance(ctx, p.OrganizationID)
		if err != nil {
			return nil, err
		}
		v := newJournalView(j)
		return map[string]any{"journal": v, "available": engine.FormatAmount(b.Available), "held": engine.FormatAmount(b.Held)}, nil
	}
}
