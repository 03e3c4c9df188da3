package smsinbox

import (
	"context"
	"errors"
	"fmt"

	"github.com/payd-engine/payd/engine"
)

// DefaultUnmatchedScan is how many of an organization's newest accepted
// messages ListUnmatched looks through by default.
const DefaultUnmatchedScan = 500

// Unmatched is a payment an accepted SMS proves that credited no deposit:
// its transaction ID was submitted to no deposit of the organization, or
// its attempt failed (the SMS came after the grace, and the deposit was
// closed or checking another ID then).
type Unmatched struct {
	SMS *SMS
	// Deposit is the deposit the ID was submitted to; nil if none.
	Deposit *engine.Deposit
}

// ListUnmatched returns the unmatched payments among the organization's
// newest scan accepted messages (DefaultUnmatchedScan if scan <= 0), newest
// first: the operator's worklist. Each is credited at most once, with
// engine.CreditLatePayment, to the deposit it paid; a running attempt's
// payment is not listed (it is being matched).
func (p *Provider) ListUnmatched(ctx context.Context, orgID string, scan int) ([]Unmatched, error) {
	if scan <= 0 {
		scan = DefaultUnmatchedScan
	}
	var out []Unmatched
	err := p.store.InboxReadTx(ctx, func(ctx context.Context, tx Tx) error {
		if _, err := tx.GetOrganization(ctx, orgID); err != nil {
			return notFound(err, "organization")
		}
		ms, err := tx.ListSMS(ctx, ListSMSParams{OrganizationID: orgID, Status: StatusAccepted, Limit: scan})
		if err != nil {
			return err
		}
		for _, m := range ms {
			if m.Parsed == nil || !m.Parsed.Credit || transactionTypes[m.Parsed.Kind] == "" {
				continue // not a payer's payment (a cashback, the owner's own send)
			}
			u := Unmatched{SMS: m}
			switch {
			case m.Match == nil:
			case m.Match.Status != engine.AttemptFailed:
				continue // succeeded, or still being matched
			default:
				if u.Deposit, err = tx.GetDeposit(ctx, orgID, m.Match.DepositID); err != nil {
					return err
				}
			}
			out = append(out, u)
		}
		return nil
	})
	return out, err
}

// UnmatchedView is an unmatched payment as the admin CLI lists it, with the
// operator's next step.
type UnmatchedView struct {
	SMS     SMSView           `json:"sms"`
	Deposit *UnmatchedDeposit `json:"deposit"`
	Next    string            `json:"next"`
}

// UnmatchedDeposit is the deposit an unmatched payment's ID was submitted to.
type UnmatchedDeposit struct {
	ID                    string  `json:"id"`
	MerchantID            string  `json:"merchant_id"`
	Status                string  `json:"status"`
	Amount                string  `json:"amount"`
	ExpiresAt             string  `json:"expires_at"`
	ProviderTransactionID *string `json:"provider_transaction_id"`
}

// NewUnmatchedView returns the admin shape of u.
func NewUnmatchedView(orgID string, u Unmatched) UnmatchedView {
	v := UnmatchedView{SMS: NewSMSView(u.SMS, false)}
	credit := func(depositID string) string {
		return fmt.Sprintf("payd admin deposit credit --org %s --deposit %s --transaction-id %s", orgID, depositID, u.SMS.Parsed.TransactionID)
	}
	switch d := u.Deposit; {
	case d == nil:
		v.Next = "no deposit claims it: find the payer's deposit, then " + credit("DEP")
	case d.Status == engine.StatusSucceeded:
		v.Next = "its deposit succeeded with another payment: refund the payer"
	default:
		v.Next = credit(d.ID)
	}
	if d := u.Deposit; d != nil {
		v.Deposit = &UnmatchedDeposit{
			ID: d.ID, MerchantID: d.MerchantID, Status: d.Status, Amount: engine.FormatAmount(d.Amount),
			ExpiresAt: engine.FormatTime(d.ExpiresAt), ProviderTransactionID: opt(d.ProviderTransactionID),
		}
	}
	return v
}

// CreditLatePayment credits, once, a payment an accepted SMS proves to the
// deposit it paid: engine.CreditLatePayment of the attached engine, whose
// provider this inbox is.
func (p *Provider) CreditLatePayment(ctx context.Context, params engine.CreditLatePaymentParams) (*engine.LateCredit, error) {
	if p.engine == nil {
		return nil, errors.New("smsinbox: no engine attached")
	}
	return p.engine.CreditLatePayment(ctx, params)
}
