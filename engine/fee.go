package engine

import "github.com/shopspring/decimal"

// FeeRule is a percentage of the amount plus a fixed part in BDT.
type FeeRule struct {
	Percent decimal.Decimal `json:"percent"`
	Fixed   decimal.Decimal `json:"fixed"`
}

// MethodFees are an organization's per-method fee overrides: deposit fees
// by deposit payment method, withdrawal commissions by payout method. A
// store keeps them as the JSON of this type (decimals are JSON strings, so
// they round-trip exactly).
type MethodFees struct {
	Deposit  map[string]FeeRule `json:"deposit,omitempty"`
	Withdraw map[string]FeeRule `json:"withdraw,omitempty"`
}

// DepositFee is the fee rule of a deposit payment method.
func (o *Organization) DepositFee(method string) FeeRule {
	if r, ok := o.MethodFees.Deposit[method]; ok {
		return r
	}
	return FeeRule{o.DepositFeePercent, o.DepositFeeFixed}
}

// WithdrawCommission is the commission rule of a payout method.
func (o *Organization) WithdrawCommission(method string) FeeRule {
	if r, ok := o.MethodFees.Withdraw[method]; ok {
		return r
	}
	return FeeRule{o.WithdrawCommissionPercent, o.WithdrawCommissionFixed}
}

// Of computes the rule for amount: percent of it plus the fixed part,
// rounded to the poisha half away from zero.
func (r FeeRule) Of(amount decimal.Decimal) decimal.Decimal {
	return amount.Mul(r.Percent).Div(decimal.NewFromInt(100)).Add(r.Fixed).Round(2)
}
