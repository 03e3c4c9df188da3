package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
)

// depositMethods are the methods a deposit may name, in either checkout mode.
func depositMethods() []string {
	var out []string
	for _, m := range engine.Methods() {
		if m.IsDeposit() {
			out = append(out, m.Name)
		}
	}
	return out
}

// methodFees is a repeatable METHOD=PERCENT%[+FIXED] flag.
type methodFees map[string]*engine.FeeRule

func (m methodFees) String() string { return "" }

func (m methodFees) Set(s string) error {
	method, rule, ok := strings.Cut(s, "=")
	if !ok || method == "" {
		return fmt.Errorf("want METHOD=PERCENT%%[+FIXED], got %q", s)
	}
	if rule == "default" {
		m[method] = nil
		return nil
	}
	pct, fixed, _ := strings.Cut(rule, "+")
	var r engine.FeeRule
	var err error
	if r.Percent, err = decimal.NewFromString(strings.TrimSuffix(pct, "%")); err != nil || !strings.HasSuffix(pct, "%") {
		return fmt.Errorf("want METHOD=PERCENT%%[+FIXED], got %q", s)
	}
	if fixed != "" {
		if r.Fixed, err = decimal.NewFromString(fixed); err != nil {
			return fmt.Errorf("want METHOD=PERCENT%%[+FIXED], got %q", s)
		}
	}
	m[method] = &r
	return nil
}

// orgSettingsFlags declares the flags of an organization's settings.
func orgSettingsFlags(fs *flag.FlagSet) func() engine.OrganizationSettings {
	var name string
	var deposits, h2h, withdrawals optionalBool
	var instructions, redirect optionalDuration
	var depFeePct, depFeeFixed, wdPct, wdFixed optionalDecimal
	fs.StringVar(&name, "name", "", "organization name")
	fs.Var(&deposits, "deposits", "allow deposits (default true at creation)")
	fs.Var(&h2h, "h2h", "allow H2H deposits")
	fs.Var(&withdrawals, "withdrawals", "allow withdrawals")
	fs.Var(&instructions, "instructions-window", "how long a display_instructions deposit accepts transaction IDs (default 15m)")
	fs.Var(&redirect, "redirect-window", "how long a redirect checkout lives (default 30m)")
	fs.Var(&depFeePct, "deposit-fee-percent", "deposit fee, percent of the amount (default 0)")
	fs.Var(&depFeeFixed, "deposit-fee-fixed", "deposit fee, fixed part in BDT (default 0)")
	fs.Var(&wdPct, "withdraw-commission-percent", "withdrawal commission, percent of the amount (default 0)")
	fs.Var(&wdFixed, "withdraw-commission-fixed", "withdrawal commission, fixed part in BDT (default 0)")
	depositFees, commissions := methodFees{}, methodFees{}
	fs.Var(depositFees, "deposit-fee", "per-method deposit fee METHOD=PERCENT%[+FIXED], e.g. bkash_agent=1.5%+2; METHOD=default removes it (repeatable); METHOD is "+engine.OneOf(depositMethods()))
	fs.Var(commissions, "withdraw-commission", "per-method withdrawal commission METHOD=PERCENT%[+FIXED], e.g. bank=0.5%+10 (repeatable); METHOD is "+engine.OneOf(engine.PayoutMethods()))
	return func() engine.OrganizationSettings {
		s := engine.OrganizationSettings{
			DepositsEnabled: deposits.v, H2HEnabled: h2h.v, WithdrawalsEnabled: withdrawals.v,
			InstructionsWindow: instructions.v, RedirectWindow: redirect.v,
			DepositFeePercent: depFeePct.v, DepositFeeFixed: depFeeFixed.v,
			WithdrawCommissionPercent: wdPct.v, WithdrawCommissionFixed: wdFixed.v,
			DepositFees: depositFees, WithdrawCommissions: commissions,
		}
		if flagGiven(fs, "name") {
			s.Name = &name
		}
		return s
	}
}

// orgView is an organization as admin commands print it.
type orgView struct {
	OrganizationID            string `json:"organization_id"`
	Name                      string `json:"name"`
	DepositsEnabled           bool   `json:"deposits_enabled"`
	H2HEnabled                bool   `json:"h2h_enabled"`
	WithdrawalsEnabled        bool   `json:"withdrawals_enabled"`
	InstructionsWindow        string `json:"instructions_window"`
	RedirectWindow            string `json:"redirect_window"`
	DepositFeePercent         string `json:"deposit_fee_percent"`
	DepositFeeFixed           string `json:"deposit_fee_fixed"`
	WithdrawCommissionPercent string `json:"withdraw_commission_percent"`
	WithdrawCommissionFixed   string `json:"withdraw_commission_fixed"`
	// Per-method rules as "PERCENT%+FIXED", by method.
	DepositFees         map[string]string `json:"deposit_fees,omitempty"`
	WithdrawCommissions map[string]string `json:"withdraw_commissions,omitempty"`
	CreatedAt           string            `json:"created_at"`
}

func ruleText(rules map[string]engine.FeeRule) map[string]string {
	if len(rules) == 0 {
		return nil
	}
	out := map[string]string{}
	for m, r := range rules {
		out[m] = r.Percent.String() + "%+" + engine.FormatAmount(r.Fixed)
	}
	return out
}

func newOrgView(o *engine.Organization) orgView {
	return orgView{
		OrganizationID: o.ID, Name: o.Name,
		DepositsEnabled: o.DepositsEnabled, H2HEnabled: o.H2HEnabled, WithdrawalsEnabled: o.WithdrawalsEnabled,
		InstructionsWindow: o.InstructionsWindow.String(), RedirectWindow: o.RedirectWindow.String(),
		DepositFeePercent: o.DepositFeePercent.String(), DepositFeeFixed: engine.FormatAmount(o.DepositFeeFixed),
		WithdrawCommissionPercent: o.WithdrawCommissionPercent.String(), WithdrawCommissionFixed: engine.FormatAmount(o.WithdrawCommissionFixed),
		DepositFees: ruleText(o.MethodFees.Deposit), WithdrawCommissions: ruleText(o.MethodFees.Withdraw),
		CreatedAt: engine.FormatTime(o.CreatedAt),
	}
}

func orgCreate(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	settings := orgSettingsFlags(fs)
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		creds, err := eng.CreateOrganization(ctx, settings())
		if err != nil {
			return nil, err
		}
		return map[string]string{
			"organization_id": creds.Organization.ID,
			"api_key_id":      creds.APIKey.APIKeyID,
			"api_key":         creds.APIKey.APIKey,
			"signing_secret":  creds.APIKey.SigningSecret,
		}, nil
	}
}

func orgUpdate(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	org := fs.String("org", "", "organization ID")
	settings := orgSettingsFlags(fs)
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		o, err := eng.UpdateOrganization(ctx, *org, settings())
		if err != nil {
			return nil, err
		}
		return newOrgView(o), nil
	}
}

func orgShow(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	org := fs.String("org", "", "organization ID")
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		o, err := eng.GetOrganization(ctx, *org)
		if err != nil {
			return nil, err
		}
		return newOrgView(o), nil
	}
}

func orgList(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		orgs, err := eng.ListOrganizations(ctx)
		if err != nil {
			return nil, err
		}
		views := make([]orgView, len(orgs))
		for i, o := range orgs {
			views[i] = newOrgView(o)
		}
		return map[string]any{"organizations": views}, nil
	}
}
