package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydtest"
	"github.com/payd-engine/payd/provider/smsinbox"
)

// paidDeposit is a succeeded H2H deposit of 500 of org, paid through the
// sandbox.
func paidDeposit(t *testing.T, srv *paydtest.Server, org *paydtest.Org, txID string) string {
	t.Helper()
	w := srv.AddWallet(org, "bkash", "cash_out", "01811111111", "Agent")
	res := srv.CreateH2H(org, paydtest.H2H(paydtest.KV{"merchant_id", `"order-` + txID + `"`}))
	if res.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", res.Status, res.Body)
	}
	id := paydtest.Str(res.JSON, "id")
	if r := srv.SandboxPay(org, `{"channel":"bkash","transaction_id":"`+txID+`","payer_phone":"01712345678","recipient_phone":"`+w.Phone+`","amount":"500","status":"completed","type":"cash_out"}`); r.Status != http.StatusCreated {
		t.Fatalf("sandbox pay: %d %s", r.Status, r.Body)
	}
	if r := srv.Verify(org, id, `{"provider_transaction_id":"`+txID+`"}`); r.Status >= 300 {
		t.Fatalf("verify: %d %s", r.Status, r.Body)
	}
	srv.Work()
	return id
}

func refundsOf(t *testing.T, srv *paydtest.Server, orgID, depositID string) []*engine.Refund {
	t.Helper()
	p, err := srv.Engine.ListRefunds(context.Background(), engine.ListParams{OrganizationID: orgID, DepositID: depositID, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return p.Data
}

// clone is a form's copy: post adds the browser's CSRF token to it.
func clone(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

var merchantIDField = regexp.MustCompile(`name="merchant_id" value="([^"]+)"`)

// An owner or operator refunds from a deposit's page after a confirmation
// that shows what will be sent; a viewer sees the deposit's refunds and
// may not post (403); another organization's deposit is 404; the
// confirmation posted twice makes one refund, audited once with the actor.
func TestConsoleRefund(t *testing.T) {
	srv := paydtest.MustOpen(t)
	org := srv.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	other := srv.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	id := paidDeposit(t, srv, org, "9XK4TQ2M7P")
	operator(t, srv, "v@example.com", engine.RoleViewer, org.ID, false)
	operator(t, srv, "o@example.com", engine.RoleOperator, org.ID, false)
	operator(t, srv, "b@example.com", engine.RoleOwner, other.ID, false)
	form := url.Values{"amount": {"200"}, "reason": {"damaged"}, "merchant_id": {"console-attack-1"}}

	v := newBrowser(t, srv)
	v.login("v@example.com", "")
	if p := v.get("/console/deposits/" + id); p.status != http.StatusOK || strings.Contains(p.body, "/refund") {
		t.Fatalf("a viewer's deposit page: %d, offers a refund: %v", p.status, strings.Contains(p.body, "/refund"))
	}
	for _, path := range []string{"/console/deposits/" + id + "/refund", "/console/deposits/" + id + "/refunds"} {
		if p := v.post(path, clone(form)); p.status != http.StatusForbidden {
			t.Errorf("a viewer's POST %s: %d, want 403", path, p.status)
		}
	}
	b := newBrowser(t, srv)
	b.login("b@example.com", "")
	for _, path := range []string{"/console/deposits/" + id + "/refund", "/console/deposits/" + id + "/refunds", "/console/deposits/" + id + "/refunds?org=" + org.ID} {
		if p := b.post(path, clone(form)); p.status != http.StatusNotFound {
			t.Errorf("another organization's owner POST %s: %d, want 404", path, p.status)
		}
	}
	if rs := refundsOf(t, srv, org.ID, id); len(rs) != 0 {
		t.Fatalf("refused posts made %d refunds", len(rs))
	}

	o := newBrowser(t, srv)
	o.login("o@example.com", "")
	if p := o.get("/console/deposits/" + id); !strings.Contains(p.body, "/console/deposits/"+id+"/refund") {
		t.Fatal("an operator's deposit page offers no refund")
	}
	// The review changes nothing and shows what will be sent.
	p := o.post("/console/deposits/"+id+"/refund", url.Values{"amount": {"200"}, "reason": {"damaged"}})
	if p.status != http.StatusOK || !strings.Contains(p.body, "200") || !strings.Contains(p.body, "damaged") {
		t.Fatalf("review: %d %s", p.status, p.body)
	}
	m := merchantIDField.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("the confirmation carries no merchant_id: %s", p.body)
	}
	if rs := refundsOf(t, srv, org.ID, id); len(rs) != 0 {
		t.Fatal("the review made a refund")
	}
	if p := o.post("/console/deposits/"+id+"/refund", url.Values{"amount": {"900"}}); p.status != http.StatusConflict {
		t.Errorf("a review of more than the deposit: %d, want 409", p.status)
	}
	if p := o.post("/console/deposits/"+id+"/refund", url.Values{"amount": {"-1"}}); p.status != http.StatusBadRequest {
		t.Errorf("a review of a negative amount: %d, want 400", p.status)
	}
	confirm := url.Values{"amount": {"200"}, "reason": {"damaged"}, "merchant_id": {m[1]}}
	for range 2 { // a double submit
		if p := o.post("/console/deposits/"+id+"/refunds", clone(confirm)); p.status != http.StatusSeeOther {
			t.Fatalf("confirm: %d %s", p.status, p.body)
		}
	}
	rs := refundsOf(t, srv, org.ID, id)
	if len(rs) != 1 || !rs[0].Amount.Equal(rs[0].Amount.Round(2)) || rs[0].Reason != "damaged" || rs[0].MerchantID != m[1] {
		t.Fatalf("refunds after a double submit: %+v", rs)
	}
	audit, _ := srv.Engine.ListAudit(context.Background(), org.ID, 0)
	var creates []*engine.AuditEntry
	for _, a := range audit {
		if a.Action == engine.AuditRefundCreate {
			creates = append(creates, a)
		}
	}
	if len(creates) != 1 || creates[0].Actor != "console:o@example.com" || creates[0].Subject != rs[0].ID || creates[0].Details["deposit_id"] != id {
		t.Fatalf("audit of the refund: %+v", creates)
	}
	// The viewer sees it on the deposit's page.
	if p := v.get("/console/deposits/" + id); !strings.Contains(p.body, rs[0].ID) {
		t.Error("the viewer's deposit page does not show the refund")
	}
}

// On the SMS inbox a refund joins the payout queue, named as the refund of
// its deposit; another organization's owner cannot complete it (404), its
// own operator completes it with the transaction ID of the send.
func TestConsoleRefundOnTheSMSInbox(t *testing.T) {
	ctx := context.Background()
	srv := paydtest.MustOpen(t, paydtest.WithSMSInbox(smsinbox.Config{Silence: time.Hour}))
	org := srv.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	other := srv.NewOrg(engine.OrganizationSettings{})
	w := srv.AddWallet(org, "bkash", "cash_out", "01811111111", "Agent")
	dev, err := srv.Inbox.AddDevice(ctx, smsinbox.AddDeviceParams{OrganizationID: org.ID, Name: "phone", WalletIDs: []string{w.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Inbox.Heartbeat(ctx, dev.Device); err != nil {
		t.Fatal(err)
	}
	if _, _, err := srv.Inbox.Anchor(ctx, org.ID, w.ID, decimal.RequireFromString("10000")); err != nil {
		t.Fatal(err)
	}
	res := srv.CreateH2H(org, paydtest.H2H(paydtest.KV{"merchant_id", `"order-sms-1"`}))
	if res.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", res.Status, res.Body)
	}
	id := paydtest.Str(res.JSON, "id")
	paidAt := srv.Now()
	if r := srv.Verify(org, id, `{"provider_transaction_id":"SMSPAY0001"}`); r.Status >= 300 {
		t.Fatalf("verify: %d %s", r.Status, r.Body)
	}
	body := fmt.Sprintf("Cash Out Tk 500.00 from 01712345678 successful. Fee Tk 0.00. Balance Tk 10,500.00. TrxID SMSPAY0001 at %s",
		paidAt.In(engine.Dhaka).Format("02/01/2006 15:04"))
	if m, _, err := srv.Inbox.Ingest(ctx, dev.Device, smsinbox.Incoming{Sender: "bKash", Body: body}); err != nil || m.Status != smsinbox.StatusAccepted {
		t.Fatalf("the payment's SMS: %+v %v", m, err)
	}
	srv.Work()
	if d, _ := srv.Engine.GetDeposit(ctx, org.ID, id); d.Status != engine.StatusSucceeded {
		t.Fatalf("deposit %s", d.Status)
	}
	operator(t, srv, "o@example.com", engine.RoleOperator, org.ID, false)
	operator(t, srv, "b@example.com", engine.RoleOwner, other.ID, false)
	o := newBrowser(t, srv)
	o.login("o@example.com", "")
	p := o.post("/console/deposits/"+id+"/refund", url.Values{"amount": {"200"}})
	m := merchantIDField.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("review: %d %s", p.status, p.body)
	}
	if p := o.post("/console/deposits/"+id+"/refunds", url.Values{"amount": {"200.00"}, "merchant_id": {m[1]}}); p.status != http.StatusSeeOther {
		t.Fatalf("confirm: %d %s", p.status, p.body)
	}
	srv.Work() // the refund joins the operator's queue
	rs := refundsOf(t, srv, org.ID, id)
	if len(rs) != 1 {
		t.Fatalf("refunds: %+v", rs)
	}
	rf := rs[0]
	if p := o.get("/console/withdrawals"); !strings.Contains(p.body, `id="payout-`+rf.ID+`"`) || !strings.Contains(p.body, id) {
		t.Fatalf("the queue does not show the refund of %s: %s", id, p.body)
	}
	b := newBrowser(t, srv)
	b.login("b@example.com", "")
	if p := b.post("/console/payouts/"+rf.ID+"/complete", url.Values{"transaction_id": {"EVIL123"}}); p.status != http.StatusNotFound {
		t.Errorf("another organization completing the refund: %d, want 404", p.status)
	}
	if p := o.post("/console/payouts/"+rf.ID+"/complete", url.Values{"transaction_id": {"rfs0000001"}}); p.status != http.StatusSeeOther {
		t.Fatalf("complete: %d %s", p.status, p.body)
	}
	srv.Work()
	got, err := srv.Engine.GetRefund(ctx, org.ID, rf.ID)
	if err != nil || got.Status != engine.RefundSucceeded || got.ProviderReference != "RFS0000001" {
		t.Fatalf("the refund after its completion: %+v %v", got, err)
	}
}
