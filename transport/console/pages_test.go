package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydtest"
	"github.com/payd-engine/payd/provider/smsinbox"
)

func ptr[T any](v T) *T { return &v }

// TestPayoutQueue: a manual payout (SMS inbox) is completed from the
// withdrawals page with the operator's transaction ID, audited with the
// operator as actor; another organization's operator cannot touch it.
func TestPayoutQueue(t *testing.T) {
	ctx := context.Background()
	srv := paydtest.MustOpen(t, paydtest.WithSMSInbox(smsinbox.Config{}))
	orgA := srv.NewOrg(engine.OrganizationSettings{WithdrawalsEnabled: ptr(true)})
	orgB := srv.NewOrg(engine.OrganizationSettings{})
	srv.Fund(orgA, "2000")
	w, err := srv.Engine.CreateWithdrawal(ctx, engine.CreateWithdrawalParams{
		OrganizationID: orgA.ID, Amount: "750", Phone: "01712345678", PaymentMethod: "bkash", MerchantID: "payout-1"})
	if err != nil {
		t.Fatal(err)
	}
	srv.Work() // the payout joins the operator's queue
	operator(t, srv, "a@example.com", engine.RoleOperator, orgA.ID, false)
	operator(t, srv, "b@example.com", engine.RoleOwner, orgB.ID, false)

	b := newBrowser(t, srv)
	b.login("b@example.com", "")
	if p := b.post("/console/payouts/"+w.ID+"/complete", url.Values{"transaction_id": {"EVIL123"}}); p.status != http.StatusNotFound {
		t.Errorf("org B completing org A's payout: %d, want 404", p.status)
	}
	if p := b.post("/console/payouts/"+w.ID+"/fail", url.Values{"reason": {"no"}}); p.status != http.StatusNotFound {
		t.Errorf("org B failing org A's payout: %d, want 404", p.status)
	}

	a := newBrowser(t, srv)
	a.login("a@example.com", "")
	if p := a.get("/console/"); !strings.Contains(p.body, `id="payouts-waiting">1<`) {
		t.Error("the overview does not count the waiting payout")
	}
	p := a.get("/console/withdrawals")
	if !strings.Contains(p.body, `id="payout-`+w.ID+`"`) || !strings.Contains(p.body, "750.00") {
		t.Fatalf("the queue does not show the payout: %s", p.body)
	}
	if p := a.post("/console/payouts/"+w.ID+"/complete", url.Values{"transaction_id": {"bk7q2w9e1r"}}); p.status != http.StatusSeeOther {
		t.Fatalf("complete: %d %s", p.status, p.body)
	}
	srv.Work() // the engine's worker learns the outcome
	got, err := srv.Engine.GetWithdrawal(ctx, orgA.ID, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != engine.WithdrawalSucceeded || got.ProviderReference != "BK7Q2W9E1R" {
		t.Errorf("withdrawal after complete: %s ref %q", got.Status, got.ProviderReference)
	}
	es, _ := srv.Engine.ListAudit(ctx, orgA.ID, 0)
	found := false
	for _, e := range es {
		found = found || e.Subject == w.ID && e.Actor == "console:a@example.com"
	}
	if !found {
		t.Error("the completion is not audited with the operator as actor")
	}
	if p := a.get("/console/withdrawals"); strings.Contains(p.body, `id="payout-`+w.ID+`"`) {
		t.Error("the completed payout is still in the queue")
	}
}

// TestFindDepositByTransactionID: the ID a payer reads out, in any case,
// finds the deposit, whose page shows its attempt and events.
func TestFindDepositByTransactionID(t *testing.T) {
	srv := paydtest.MustOpen(t)
	org := srv.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	w := srv.AddWallet(org, "bkash", "cash_out", "01811111111", "Agent")
	res := srv.CreateH2H(org, paydtest.H2H(paydtest.KV{"merchant_id", `"order-77"`}))
	if res.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", res.Status, res.Body)
	}
	id := paydtest.Str(res.JSON, "id")
	if r := srv.SandboxPay(org, `{"channel":"bkash","transaction_id":"9XK4TQ2M7P","payer_phone":"01712345678","recipient_phone":"`+w.Phone+`","amount":"500","status":"completed","type":"cash_out"}`); r.Status != http.StatusCreated {
		t.Fatalf("sandbox pay: %d %s", r.Status, r.Body)
	}
	if r := srv.Verify(org, id, `{"provider_transaction_id":"9XK4TQ2M7P"}`); r.Status >= 300 {
		t.Fatalf("verify: %d %s", r.Status, r.Body)
	}
	srv.Work()
	operator(t, srv, "a@example.com", engine.RoleViewer, org.ID, false)
	b := newBrowser(t, srv)
	b.login("a@example.com", "")
	p := b.get("/console/deposits?transaction_id=9xk4tq2m7p")
	if !strings.Contains(p.body, "/console/deposits/"+id) {
		t.Fatalf("search by transaction ID does not find %s: %s", id, p.body)
	}
	for _, q := range []string{"phone=01712345678", "merchant_id=order-77", "status=succeeded"} {
		if p := b.get("/console/deposits?" + q); !strings.Contains(p.body, "/console/deposits/"+id) {
			t.Errorf("search by %s does not find the deposit", q)
		}
	}
	if p := b.get("/console/deposits?status=failed"); strings.Contains(p.body, "/console/deposits/"+id) {
		t.Error("search by another status finds the deposit")
	}
	if p := b.get("/console/deposits?from=not-a-date"); p.status != http.StatusBadRequest {
		t.Errorf("a bad date: %d, want 400", p.status)
	}
	p = b.get("/console/deposits/" + id)
	if p.status != http.StatusOK || !strings.Contains(p.body, "9XK4TQ2M7P") || !strings.Contains(p.body, "deposit.succeeded") {
		t.Errorf("deposit page: %d", p.status)
	}
}

// TestPaymentLink: an operator's link opens the hosted checkout for its
// amount; paid, it says so and opens no other checkout.
func TestPaymentLink(t *testing.T) {
	ctx := context.Background()
	srv := paydtest.MustOpen(t)
	org := srv.NewOrg(engine.OrganizationSettings{})
	operator(t, srv, "a@example.com", engine.RoleOperator, org.ID, false)
	a := newBrowser(t, srv)
	a.login("a@example.com", "")
	if p := a.post("/console/links", url.Values{"amount": {"0"}}); p.status != http.StatusBadRequest {
		t.Errorf("a zero link: %d, want 400", p.status)
	}
	p := a.post("/console/links", url.Values{"amount": {"1250.50"}, "note": {"Invoice 42"}})
	if p.status != http.StatusOK {
		t.Fatalf("create: %d", p.status)
	}
	links, _ := srv.Engine.ListPaymentLinks(ctx, org.ID, 0)
	link := links[0]
	payer := newBrowser(t, srv)
	p = payer.get("/pay/" + link.Token)
	if p.status != http.StatusOK || !strings.Contains(p.body, "৳1,250.50") || !strings.Contains(p.body, "Invoice 42") {
		t.Fatalf("pay page: %d", p.status)
	}
	p = payer.post("/pay/"+link.Token, url.Values{"method": {"bkash"}})
	if p.status != http.StatusSeeOther || !strings.Contains(p.header.Get("Location"), "/checkout/") {
		t.Fatalf("pay: %d %s", p.status, p.header.Get("Location"))
	}
	checkout := p.header.Get("Location")
	// Opening the link again, before paying, is the same checkout.
	if p := payer.post("/pay/"+link.Token, url.Values{"method": {"bkash"}}); p.header.Get("Location") != checkout {
		t.Errorf("a second open: %s, want %s", p.header.Get("Location"), checkout)
	}
	st, err := srv.Engine.GetPaymentLinkByToken(ctx, link.Token)
	if err != nil || st.Deposit == nil || !st.Deposit.Amount.Equal(link.Amount) {
		t.Fatalf("the link's deposit: %+v %v", st, err)
	}
	token := checkout[strings.LastIndex(checkout, "/")+1:]
	if r := srv.SandboxPay(org, `{"channel":"bkash","transaction_id":"LINKPAID9","payer_phone":"01712345678","amount":"1250.50","status":"completed"}`); r.Status != http.StatusCreated {
		t.Fatalf("sandbox pay: %d %s", r.Status, r.Body)
	}
	if _, err := srv.Engine.SubmitCheckoutPayment(ctx, token, "LINKPAID9"); err != nil {
		t.Fatal(err)
	}
	srv.Work()
	if p := payer.get("/pay/" + link.Token); !strings.Contains(p.body, `id="paid"`) {
		t.Error("the paid link does not say so")
	}
	if p := a.get("/console/links"); !strings.Contains(p.body, "Paid: <a href=\"/console/deposits/"+st.Deposit.ID) {
		t.Error("the links page does not name the checkout that paid the link")
	}
	if p := payer.post("/pay/"+link.Token, url.Values{"method": {"bkash"}}); p.status != http.StatusConflict {
		t.Errorf("paying a paid link: %d, want 409", p.status)
	}
	if p := payer.get("/pay/unknown-token"); p.status != http.StatusNotFound {
		t.Errorf("an unknown link: %d", p.status)
	}
}

// TestPaymentLinkOpenedAtOnce: payers opening one link at the same moment
// get one deposit, with real goroutines against the real store.
func TestPaymentLinkOpenedAtOnce(t *testing.T) {
	ctx := context.Background()
	srv := paydtest.MustOpen(t)
	org := srv.NewOrg(engine.OrganizationSettings{})
	link, err := srv.Engine.CreatePaymentLink(ctx, org.ID, "800", "")
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, 8)
	errs := make([]error, 8)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Go(func() {
			d, err := srv.Engine.PayPaymentLink(ctx, engine.PayPaymentLinkParams{Token: link.Token, PaymentMethod: "bkash", ReturnURL: srv.URL + "/pay/" + link.Token})
			if err == nil {
				ids[i] = d.ID
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i := range ids {
		if errs[i] != nil || ids[i] != ids[0] {
			t.Fatalf("open %d: %s, %v; first: %s", i, ids[i], errs[i], ids[0])
		}
	}
	st, err := srv.Engine.GetPaymentLinkByToken(ctx, link.Token)
	if err != nil || st.Link.Deposits != 1 || st.Link.DepositID != ids[0] {
		t.Fatalf("link after concurrent opens: %+v %v", st.Link, err)
	}
}

// TestWalletLimits: an operator sets and clears a wallet's limits; bad
// amounts are refused.
func TestWalletLimits(t *testing.T) {
	ctx := context.Background()
	srv := paydtest.MustOpen(t)
	org := srv.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	w := srv.AddWallet(org, "bkash", "cash_out", "01811111111", "Agent")
	operator(t, srv, "a@example.com", engine.RoleOperator, org.ID, false)
	a := newBrowser(t, srv)
	a.login("a@example.com", "")
	a.get("/console/wallets")
	if p := a.post("/console/wallets/"+w.ID+"/limits", url.Values{"min_amount": {"500"}, "max_amount": {"100"}}); p.status != http.StatusBadRequest {
		t.Errorf("min above max: %d, want 400", p.status)
	}
	if p := a.post("/console/wallets/"+w.ID+"/limits", url.Values{"min_amount": {"50"}, "max_amount": {"25000"}, "daily_limit": {"100000"}}); p.status != http.StatusSeeOther {
		t.Fatalf("limits: %d %s", p.status, p.body)
	}
	ws, _ := srv.Engine.ListWallets(ctx, org.ID)
	if !ws[0].MinAmount.Valid || ws[0].MinAmount.Decimal.String() != "50" || ws[0].DailyLimit.Decimal.String() != "100000" {
		t.Errorf("limits after the form: %+v %+v", ws[0].MinAmount, ws[0].DailyLimit)
	}
	if p := a.get("/console/wallets"); !strings.Contains(p.body, `value="25000.00"`) {
		t.Error("the form does not show the limit")
	}
	a.post("/console/wallets/"+w.ID+"/limits", url.Values{"min_amount": {""}, "max_amount": {""}, "daily_limit": {""}})
	ws, _ = srv.Engine.ListWallets(ctx, org.ID)
	if ws[0].MinAmount.Valid || ws[0].MaxAmount.Valid || ws[0].DailyLimit.Valid {
		t.Error("empty fields did not clear the limits")
	}
}

// TestKeysAndRedelivery: a rotated key's secrets are shown once; an event
// is sent again from the console; another organization's event is 404.
func TestKeysAndRedelivery(t *testing.T) {
	ctx := context.Background()
	srv := paydtest.MustOpen(t)
	org := srv.NewOrg(engine.OrganizationSettings{})
	other := srv.NewOrg(engine.OrganizationSettings{})
	// An event of each organization: an expired deposit's.
	var deps [2]*engine.Deposit
	for i, o := range []*paydtest.Org{org, other} {
		d, _, err := srv.Engine.CreateDeposit(ctx, engine.CreateDepositParams{OrganizationID: o.ID, Amount: "500", PaymentMethod: "bkash",
			RedirectURL: "https://shop.example/back", MerchantID: "m-1"})
		if err != nil {
			t.Fatal(err)
		}
		deps[i] = d
	}
	srv.Clock.Add(time.Hour)
	srv.Work()
	eventOf := func(o *paydtest.Org, d *engine.Deposit) string {
		evs, err := srv.Engine.ListResourceEvents(ctx, o.ID, d.ID)
		if err != nil || len(evs) == 0 {
			t.Fatalf("events of %s: %v %v", d.ID, evs, err)
		}
		return evs[0].ID
	}
	mine, theirs := eventOf(org, deps[0]), eventOf(other, deps[1])
	operator(t, srv, "a@example.com", engine.RoleOwner, org.ID, false)
	a := newBrowser(t, srv)
	a.login("a@example.com", "")
	a.get("/console/keys")
	p := a.post("/console/keys/"+org.KeyID+"/rotate", nil)
	if p.status != http.StatusOK || !strings.Contains(p.body, `id="new-key"`) {
		t.Fatalf("rotate: %d", p.status)
	}
	if p := a.get("/console/keys"); strings.Contains(p.body, `id="new-key"`) {
		t.Error("the new key is shown again")
	}
	if p := a.post("/console/events/"+theirs+"/redeliver", nil); p.status != http.StatusNotFound {
		t.Errorf("redelivering another organization's event: %d, want 404", p.status)
	}
	if p := a.post("/console/events/"+mine+"/redeliver", nil); p.status != http.StatusSeeOther {
		t.Fatalf("redeliver: %d %s", p.status, p.body)
	}
	es, _ := srv.Engine.ListAudit(ctx, org.ID, 0)
	found := false
	for _, e := range es {
		found = found || e.Action == engine.AuditWebhookRedeliver && e.Subject == mine && e.Actor == "console:a@example.com"
	}
	if !found {
		t.Error("the redelivery is not audited with the operator as actor")
	}
}
