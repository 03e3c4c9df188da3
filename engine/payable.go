package engine

import (
	"context"
	"fmt"

	"github.com/shopspring/decimal"
)

// CheckoutOfferer is a Provider that opens the checkouts of some methods
// only: CheckoutOffer says whether it opens m's, and the operation of the
// organization's wallet that the payer pays ("" when the provider takes
// the payment itself). A Provider that is none opens every method's.
type CheckoutOfferer interface {
	CheckoutOffer(m Method) (offered bool, walletOperation string)
}

// PayableMethods returns the redirect methods a payer of amount can pay
// the organization by now, in the catalog's order: the organization takes
// deposits and has not turned the method off, the method's range takes
// the amount, the provider opens its checkout and, when the payment
// goes to one of the organization's wallets, an enabled wallet of its
// channel and operation (reporting, where wallets must be live) takes the
// amount. It is what a payment page offers, and a link whose amount no
// method takes is refused when it is made.
func (e *Engine) PayableMethods(ctx context.Context, orgID string, amount decimal.Decimal) ([]string, error) {
	org, err := e.GetOrganization(ctx, orgID)
	if err != nil {
		return nil, err
	}
	if !org.DepositsEnabled {
		return nil, nil
	}
	var names []string
	for _, name := range RedirectMethodsFor(amount) {
		if org.MethodEnabled(name) {
			names = append(names, name)
		}
	}
	offerer, ok := e.provider.(CheckoutOfferer)
	if !ok || len(names) == 0 {
		return names, nil
	}
	var wallets []*Wallet
	listed := false
	now := e.now()
	out := names[:0:0]
	for _, name := range names {
		m, _ := LookupMethod(name)
		offered, op := offerer.CheckoutOffer(m)
		if !offered {
			continue
		}
		if op == "" {
			out = append(out, name)
			continue
		}
		if !listed {
			var err error
			if wallets, err = e.ListWallets(ctx, orgID); err != nil {
				return nil, err
			}
			listed = true
		}
		for _, w := range wallets {
			if !w.Enabled || w.Channel != m.Channel || w.Operation != op {
				continue
			}
			if w.LiveUntil != nil && !now.Before(*w.LiveUntil) || w.LiveUntil == nil && e.cfg.RequireLiveWallets {
				continue
			}
			if w.MinAmount.Valid && amount.LessThan(w.MinAmount.Decimal) || w.MaxAmount.Valid && amount.GreaterThan(w.MaxAmount.Decimal) {
				continue
			}
			out = append(out, name)
			break
		}
	}
	return out, nil
}

// errNoMethodTakes refuses a link whose amount no method takes now.
func errNoMethodTakes(amount decimal.Decimal) error {
	return Invalid("amount", fmt.Sprintf("no payment method the organization offers takes %s BDT now", FormatAmount(amount)))
}
