package bkash

import (
	"context"
	"errors"
	"html/template"
	"net/http"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
)

// The redirect checkout. StartCheckout creates the payment at bKash and
// records it (created). The payer approves it on bKash's page and bKash
// sends their browser to the callback with paymentID and status, which
// anyone can forge: the callback is only a hint to look at the payment
// now. A success hint lets the provider execute the payment, once: the
// move created → executing is a conditional write one caller wins, and an
// execute whose answer is lost is settled by the status query, never sent
// again. Only bKash's answer (execute's or the status query's) with the
// deposit's amount, BDT, the deposit's ID as invoice and the payment's ID
// makes the payment executed; its trxID is then submitted to the engine
// (SubmitCheckoutPayment), which looks it up here and succeeds the deposit.
// Payments whose payer never comes back are asked about by RunBackground
// until their deposit's window ends.

// CallbackPath is where bKash sends the payer back, under payd's handler.
const CallbackPath = "/bkash/callback"

// closeGrace is how long after its deposit's window a payment is still
// asked about (an execute answered late).
const closeGrace = 10 * time.Minute

// StartCheckout creates the payment at bKash for a connected organization's
// bkash deposit; anything else goes to the fallback. bKash unreachable or
// refusing is engine.ErrMethodUnavailable.
func (p *Provider) StartCheckout(ctx context.Context, req engine.CheckoutRequest) (*engine.Checkout, error) {
	if req.PaymentMethod != Method {
		return p.fallbackCheckout(ctx, req)
	}
	base := *p.publicURL.Load()
	if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		return nil, p.errorf("no public URL for bKash's callback (Config.PublicURL or SetPublicURL)")
	}
	var ans paymentAnswer
	err := p.api(ctx, req.OrganizationID, func(c credentials) string { return c.BaseURL + "/tokenized/checkout/create" },
		map[string]string{"mode": "0011", "payerReference": req.DepositID, "callbackURL": base + CallbackPath,
			"amount": engine.FormatAmount(req.Amount), "currency": engine.Currency, "intent": "sale",
			"merchantInvoiceNumber": req.DepositID}, &ans)
	switch {
	case errors.Is(err, ErrNotConnected):
		return p.fallbackCheckout(ctx, req)
	case err != nil && unavailable(err):
		p.logFault(ctx, "create payment", req.OrganizationID, err)
		return nil, engine.ErrMethodUnavailable
	case err != nil:
		return nil, err
	}
	amount, aerr := decimal.NewFromString(ans.Amount)
	if ans.PaymentID == "" || !strings.HasPrefix(ans.BkashURL, "https://") && !strings.HasPrefix(ans.BkashURL, "http://") ||
		aerr != nil || !amount.Equal(req.Amount) || ans.MerchantInvoiceNumber != "" && ans.MerchantInvoiceNumber != req.DepositID {
		p.logFault(ctx, "create payment", req.OrganizationID, errors.New("an answer that is not the payment asked for"))
		return nil, engine.ErrMethodUnavailable
	}
	now := p.now()
	err = p.store.InsertPayment(ctx, &Payment{PaymentID: ans.PaymentID, OrganizationID: req.OrganizationID,
		DepositID: req.DepositID, CheckoutToken: req.Token, Amount: req.Amount, State: StateCreated,
		ExpiresAt: req.ExpiresAt, NextCheckAt: now.Add(p.firstCheck), CreatedAt: now})
	if err != nil {
		return nil, err
	}
	return &engine.Checkout{URL: ans.BkashURL}, nil
}

func (p *Provider) fallbackCheckout(ctx context.Context, req engine.CheckoutRequest) (*engine.Checkout, error) {
	if p.fallback == nil {
		return nil, engine.ErrMethodUnavailable
	}
	return p.fallback.StartCheckout(ctx, req)
}

// CallbackPaths are the paths Callbacks serves (payd.CallbackPather).
func (p *Provider) CallbackPaths() []string { return []string{CallbackPath} }

var _ engine.CheckoutOfferer = (*Provider)(nil)

// CheckoutOffer says which methods' checkouts open, for the payer pages:
// bKash's own page takes the bkash method; every other method's checkout
// is the fallback's, so its offer is the fallback's.
func (p *Provider) CheckoutOffer(m engine.Method) (bool, string) {
	switch o, ok := p.fallback.(engine.CheckoutOfferer); {
	case m.Name == Method:
		return true, ""
	case p.fallback == nil:
		return false, ""
	case ok:
		return o.CheckoutOffer(m)
	}
	return true, ""
}

// Callbacks serves bKash's callback (CallbackPath) under payd's handler.
func (p *Provider) Callbacks() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+CallbackPath, p.callback)
	return mux
}

var donePage = template.Must(template.New("done").Parse(`<!doctype html><meta charset="utf-8"><title>bKash payment</title>
<p>{{.}}</p>`))

func (p *Provider) callback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	id, hint := q.Get("paymentID"), q.Get("status")
	w.Header().Set("Cache-Control", "no-store")
	if id == "" || len(id) > 100 {
		w.WriteHeader(http.StatusNotFound)
		_ = donePage.Execute(w, "This payment is not known.")
		return
	}
	pay, err := p.store.GetPayment(r.Context(), id)
	if errors.Is(err, engine.ErrNotFound) {
		w.WriteHeader(http.StatusNotFound)
		_ = donePage.Execute(w, "This payment is not known.")
		return
	} else if err != nil {
		p.logger.ErrorContext(r.Context(), "bkash: callback", "error", err)
		w.WriteHeader(http.StatusServiceUnavailable)
		_ = donePage.Execute(w, "The payment is being checked: please try again in a moment.")
		return
	}
	// The payer's request may end before bKash answers: the work is not
	// theirs to cancel.
	ctx := context.WithoutCancel(r.Context())
	if err := p.settle(ctx, pay, hint); err != nil {
		p.logger.ErrorContext(ctx, "bkash: settling a payment", "payment_id", id, "error", err)
	}
	if e := p.engine.Load(); e != nil {
		if d, err := e.GetDepositByCheckoutToken(ctx, pay.CheckoutToken); err == nil && d.RedirectURL != "" {
			http.Redirect(w, r, d.RedirectURL, http.StatusSeeOther)
			return
		}
	}
	_ = donePage.Execute(w, "Thank you: your payment is being confirmed. You may close this page.")
}

// settle looks at a payment now, hint being what a callback said
// ("success", "cancel", "failure", or "" from RunBackground).
func (p *Provider) settle(ctx context.Context, pay *Payment, hint string) error {
	now := p.now()
	switch pay.State {
	case StateCreated:
		if hint == "success" && now.Before(pay.ExpiresAt) {
			won, err := p.store.MovePayment(ctx, pay.PaymentID, []string{StateCreated}, StateExecuting,
				Payment{NextCheckAt: now.Add(p.checkEvery)})
			if err != nil {
				return err
			}
			if won {
				pay.State = StateExecuting
				var ans paymentAnswer
				err := p.api(ctx, pay.OrganizationID, func(c credentials) string { return c.BaseURL + "/tokenized/checkout/execute" },
					map[string]string{"paymentID": pay.PaymentID}, &ans)
				if err == nil {
					return p.completed(ctx, pay, &ans)
				}
				if !unavailable(err) {
					return err
				}
				p.logFault(ctx, "execute payment", pay.OrganizationID, err)
				var refused *apiError
				if errors.As(err, &refused) && refused.Code != codeAlreadyCompleted && refused.Code != codeAlreadyExecuted {
					// bKash answered that it did not execute (a payer who has
					// not approved: a forged success): the payment may be
					// executed when its payer does.
					return p.unexecuted(ctx, pay)
				}
				// Lost: only the status query decides now.
			}
		}
		return p.query(ctx, pay)
	case StateExecuting:
		return p.query(ctx, pay)
	case StateExecuted:
		return p.submit(ctx, pay)
	}
	return nil // ended: a replayed callback changes nothing
}

// query asks bKash for the payment's status and acts on it.
func (p *Provider) query(ctx context.Context, pay *Payment) error {
	var ans paymentAnswer
	err := p.api(ctx, pay.OrganizationID, func(c credentials) string { return c.BaseURL + "/tokenized/checkout/payment/status" },
		map[string]string{"paymentID": pay.PaymentID}, &ans)
	now := p.now()
	if err != nil {
		if !unavailable(err) && !errors.Is(err, ErrNotConnected) {
			return err
		}
		p.logFault(ctx, "payment status", pay.OrganizationID, err)
		return p.keepOpen(ctx, pay, now)
	}
	switch strings.ToLower(ans.TransactionStatus) {
	case "completed":
		return p.completed(ctx, pay, &ans)
	case "cancelled", "failed", "expired":
		to := StateCancelled
		if strings.ToLower(ans.TransactionStatus) != "cancelled" {
			to = StateFailed
		}
		won, err := p.store.MovePayment(ctx, pay.PaymentID, []string{StateCreated, StateExecuting}, to, Payment{NextCheckAt: now})
		if err != nil || !won {
			return err
		}
		return p.endDeposit(ctx, pay)
	}
	return p.keepOpen(ctx, pay, now)
}

// unexecuted asks bKash about a payment whose execute it refused: one it
// reports completed (executed meanwhile) is recorded, any other is created
// again, so that its payer's own callback executes it.
func (p *Provider) unexecuted(ctx context.Context, pay *Payment) error {
	var ans paymentAnswer
	err := p.api(ctx, pay.OrganizationID, func(c credentials) string { return c.BaseURL + "/tokenized/checkout/payment/status" },
		map[string]string{"paymentID": pay.PaymentID}, &ans)
	if err != nil {
		if !unavailable(err) {
			return err
		}
		return p.keepOpen(ctx, pay, p.now()) // executing: the background query decides
	}
	if strings.EqualFold(ans.TransactionStatus, "completed") {
		return p.completed(ctx, pay, &ans)
	}
	if _, err := p.store.MovePayment(ctx, pay.PaymentID, []string{StateExecuting}, StateCreated,
		Payment{NextCheckAt: p.now().Add(p.checkEvery)}); err != nil {
		return err
	}
	pay.State = StateCreated
	return p.query(ctx, pay)
}

// keepOpen schedules the next look at a payment bKash has not settled, or
// closes it once its deposit's window (and a grace) is over.
func (p *Provider) keepOpen(ctx context.Context, pay *Payment, now time.Time) error {
	if now.After(pay.ExpiresAt.Add(closeGrace)) {
		_, err := p.store.MovePayment(ctx, pay.PaymentID, []string{StateCreated, StateExecuting}, StateClosed, Payment{NextCheckAt: now})
		return err
	}
	return p.store.Recheck(ctx, pay.PaymentID, now.Add(p.checkEvery))
}

// endDeposit ends the deposit of a payment bKash reports cancelled or
// failed: the payer's checkout is over (cancelled, as the payer's own
// cancel on a hosted checkout).
func (p *Provider) endDeposit(ctx context.Context, pay *Payment) error {
	e := p.engine.Load()
	if e == nil {
		return nil
	}
	_, err := e.CancelCheckout(ctx, pay.CheckoutToken)
	if ee := (*engine.Error)(nil); errors.As(err, &ee) {
		return nil // already ended, or a payment being verified: the engine decides
	}
	return err
}

// completed checks an answer that says the payment is completed against
// what was asked, records its trxID once, and submits it.
func (p *Provider) completed(ctx context.Context, pay *Payment, ans *paymentAnswer) error {
	amount, aerr := decimal.NewFromString(ans.Amount)
	trx, terr := engine.NormalizeTransactionID("trxID", ans.TrxID)
	now := p.now()
	if !strings.EqualFold(ans.TransactionStatus, "completed") || ans.PaymentID != pay.PaymentID || aerr != nil ||
		!amount.Equal(pay.Amount) || ans.Currency != engine.Currency || ans.MerchantInvoiceNumber != pay.DepositID || terr != nil {
		// bKash took money that is not this deposit's: an operator's to
		// look at, never a success.
		p.logger.ErrorContext(ctx, "bkash: a completed payment does not match its deposit", "payment_id", pay.PaymentID,
			"deposit_id", pay.DepositID, "amount", ans.Amount, "currency", ans.Currency, "invoice", ans.MerchantInvoiceNumber)
		_, err := p.store.MovePayment(ctx, pay.PaymentID, []string{StateCreated, StateExecuting}, StateFailed, Payment{NextCheckAt: now})
		return err
	}
	completedAt, ok := parseTime(ans.PaymentExecuteTime)
	if !ok {
		completedAt = now
	}
	payer, _ := engine.NormalizePhone("customerMsisdn", ans.CustomerMsisdn)
	won, err := p.store.MovePayment(ctx, pay.PaymentID, []string{StateCreated, StateExecuting}, StateExecuted,
		Payment{TrxID: trx, PayerPhone: payer, CompletedAt: completedAt.Truncate(time.Microsecond), NextCheckAt: now.Add(p.checkEvery)})
	if err != nil || !won {
		return err
	}
	pay.State, pay.TrxID = StateExecuted, trx
	return p.submit(ctx, pay)
}

// submit hands an executed payment's trxID to the engine, once: a repeat
// (another instance, a replayed callback) finds the attempt there.
func (p *Provider) submit(ctx context.Context, pay *Payment) error {
	e := p.engine.Load()
	if e == nil {
		return nil // RunBackground submits it once attached
	}
	_, err := e.SubmitCheckoutPayment(ctx, pay.CheckoutToken, pay.TrxID)
	if ee := (*engine.Error)(nil); errors.As(err, &ee) {
		if ee.Code == engine.CodeDepositTerminal {
			// Paid after the deposit ended: the operator credits it
			// (CreditLatePayment) or refunds it.
			p.logger.WarnContext(ctx, "bkash: a payment executed for a deposit that has ended", "deposit_id", pay.DepositID, "trx_id", pay.TrxID)
		}
		err = nil // used, in progress or ended: submitted before, or the engine's to judge
	}
	if err != nil {
		return err
	}
	_, err = p.store.MovePayment(ctx, pay.PaymentID, []string{StateExecuted}, StateSubmitted, Payment{NextCheckAt: p.now()})
	return err
}

// RunBackground looks at the payments whose payer has not come back, every
// CheckEvery, until ctx ends. Every instance may run it: executing is
// claimed, queries change nothing, submitting is idempotent.
func (p *Provider) RunBackground(ctx context.Context) {
	t := p.clock.Ticker(p.checkEvery)
	defer t.Stop()
	for {
		if err := p.CheckPayments(ctx); err != nil && ctx.Err() == nil {
			p.logger.WarnContext(ctx, "bkash: checking payments", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// CheckPayments looks once at every payment due to be asked about.
func (p *Provider) CheckPayments(ctx context.Context) error {
	if !p.hasStore {
		return nil
	}
	due, err := p.store.DuePayments(ctx, p.now(), 100)
	if err != nil {
		return err
	}
	for _, pay := range due {
		if err := p.settle(ctx, pay, ""); err != nil {
			return err
		}
	}
	return nil
}
