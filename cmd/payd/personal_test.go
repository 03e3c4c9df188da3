package main

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydtest"
)

// checkoutPage is one answer of the hosted checkout.
type checkoutPage struct {
	status   int
	location string
	body     string
}

// checkoutRequest sends a checkout request without following a redirect.
func checkoutRequest(t *testing.T, method, target string, form url.Values) checkoutPage {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, target, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return checkoutPage{status: res.StatusCode, location: res.Header.Get("Location"), body: string(b)}
}

func (p checkoutPage) mustContain(t *testing.T, parts ...string) {
	t.Helper()
	for _, s := range parts {
		if !strings.Contains(p.body, s) {
			t.Fatalf("page (%d) lacks %q:\n%s", p.status, s, p.body)
		}
	}
}

// TestPersonalWalletCheckoutEndToEnd: a shop runs its personal bKash and
// Rocket numbers on one phone. A redirect deposit by plain bkash (and by
// rocket, payd's extension) sends the payer to payd's own checkout, which
// says "Send Money to 01X…", takes the number they sent from and the
// transaction ID, and succeeds only on the wallet's money-received SMS from
// that number for the exact amount. An H2H bkash deposit's redirect action
// takes the payer's number from the deposit.
func TestPersonalWalletCheckoutEndToEnd(t *testing.T) {
	h := newInboxHarness(t)
	org := h.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	const payer = "01712345678"

	// The operator adds the personal wallets with the admin CLI and
	// registers the phone that receives their SMS.
	bkash := h.admin("wallet", "add", "--org", org.ID, "--channel", "bkash", "--operation", "send_money", "--phone", "01811111111", "--name", "Rahim Store")
	rocket := h.admin("wallet", "add", "--org", org.ID, "--channel", "rocket", "--operation", "send_money", "--phone", "01822222222")
	if str(bkash, "operation") != "send_money" || str(rocket, "channel") != "rocket" {
		t.Fatalf("wallet add: %v / %v", bkash, rocket)
	}
	dev := h.admin("device", "add", "--org", org.ID, "--name", "shop phone", "--wallet", str(bkash, "wallet_id"), "--wallet", str(rocket, "wallet_id"))
	token := str(dev, "token")
	if res := h.device(token, "heartbeat", map[string]any{}); res.Status != 200 {
		t.Fatalf("heartbeat: %d %s", res.Status, res.Body)
	}
	h.admin("sms", "anchor", "--org", org.ID, "--wallet", str(bkash, "wallet_id"), "--balance", "1000")
	h.admin("sms", "anchor", "--org", org.ID, "--wallet", str(rocket, "wallet_id"), "--balance", "1000")
	post := func(m sms) {
		t.Helper()
		h.Clock.Add(time.Second)
		if res := h.device(token, "sms", m); res.Status != 200 {
			t.Fatalf("post %q: %d %s", m.Body, res.Status, res.Body)
		}
	}
	at := func() string { return h.Clock.Now().In(engine.Dhaka).Format("02/01/2006 15:04") }
	sendMoney := func(amount, from, balance, trxID string) sms {
		return sms{Sender: "bKash", Body: fmt.Sprintf("You have received Tk %s from %s. Fee Tk 0.00. Balance Tk %s. TrxID %s at %s", amount, from, balance, trxID, at())}
	}
	create := func(body string) (id, checkout string) {
		t.Helper()
		res := h.Do(org, request{APIKey: org.APIKey, Body: body})
		checkout = str(res.JSON, "redirect_url")
		if res.Status != 200 || !strings.HasPrefix(checkout, h.URL+"/checkout/") {
			t.Fatalf("create %s: %d %s", body, res.Status, res.Body)
		}
		return str(res.JSON, "id"), checkout
	}
	status := func(id string) string {
		t.Helper()
		return str(h.GetDeposit(org, id, false).JSON, "status")
	}
	verify := func(checkout string, form url.Values) checkoutPage {
		t.Helper()
		return checkoutRequest(t, http.MethodPost, checkout+"/verify?lang=en", form)
	}

	// The checkout shows where to send money, in English and Bangla, and
	// asks for the payer's number with the ID.
	id, checkout := create(paydtest.Redirect(kv{"merchant_id", `"order-1"`}))
	checkoutRequest(t, http.MethodGet, checkout+"?lang=en", nil).mustContain(t,
		"Send Money to this number", "01811111111", "Rahim Store", "Send exactly 500.00 BDT to 01811111111",
		`name="payer_phone"`, `name="transaction_id"`, "Your bKash number", "3 of 3 attempts left")
	checkoutRequest(t, http.MethodGet, checkout+"?lang=bn", nil).mustContain(t,
		"এই নম্বরে সেন্ড মানি করুন", "01811111111", "আপনার বিকাশ নম্বর")

	// A send money from another number is refused, and said so.
	post(sendMoney("500.00", "01799999999", "1,500.00", "BKP0000001"))
	if p := verify(checkout, url.Values{"payer_phone": {payer}, "transaction_id": {"BKP0000001"}}); p.status != http.StatusSeeOther {
		t.Fatalf("verify: %d %s", p.status, p.body)
	}
	h.Work()
	if s := status(id); s != "pending" {
		t.Fatalf("deposit paid from another number is %s", s)
	}
	checkoutRequest(t, http.MethodGet, checkout+"?lang=en", nil).mustContain(t,
		"from another number than the one you entered", "2 of 3 attempts left")
	// Without a number the form is refused and nothing is used.
	if p := verify(checkout, url.Values{"transaction_id": {"BKP0000002"}}); p.status != http.StatusBadRequest || !strings.Contains(p.body, "payer_phone") {
		t.Fatalf("verify without a payer number: %d", p.status)
	}

	// The payer's own send money of the exact amount pays it.
	post(sendMoney("500.00", payer, "2,000.00", "BKP0000002"))
	if p := verify(checkout, url.Values{"payer_phone": {"+8801712345678"}, "transaction_id": {"bkp0000002"}}); p.status != http.StatusSeeOther {
		t.Fatalf("verify: %d %s", p.status, p.body)
	}
	h.Work()
	if s := status(id); s != "succeeded" {
		t.Fatalf("deposit paid by its payer's send money is %s", s)
	}
	checkoutRequest(t, http.MethodGet, checkout+"?lang=en", nil).mustContain(t, "Payment received", "BKP0000002")
	// Its transaction ID cannot pay another deposit.
	_, second := create(paydtest.Redirect(kv{"merchant_id", `"order-2"`}))
	if p := verify(second, url.Values{"payer_phone": {payer}, "transaction_id": {"BKP0000002"}}); p.status != http.StatusConflict || !strings.Contains(p.body, "transaction_id_used") {
		t.Fatalf("a used ID on another checkout: %d", p.status)
	}

	// Rocket: a redirect deposit by payd's extension method, proven by the
	// Rocket SMS, whose masked account shows the payer's last digits.
	rid, rcheckout := create(paydtest.Redirect(kv{"merchant_id", `"order-3"`}, kv{"payment_method", `"rocket"`}, kv{"amount", `"250"`}))
	checkoutRequest(t, http.MethodGet, rcheckout+"?lang=en", nil).mustContain(t, "Rocket", "01822222222", "Send Money to this number")
	rocketAt := h.Clock.Now().In(engine.Dhaka).Format("02-Jan-06 03:04:05 pm")
	rocketAt = strings.ToUpper(rocketAt[:9]) + rocketAt[9:]
	post(sms{Sender: "16216", Body: "Tk250.00 received from A/C:***784 Fee:Tk0, Your A/C Balance: Tk1,250.00 TxnId:6100000001 Date:" + rocketAt + ". Download https://bit.ly/nexuspay"})
	verify(rcheckout, url.Values{"payer_phone": {payer}, "transaction_id": {"6100000001"}})
	h.Work()
	if s := status(rid); s != "succeeded" {
		t.Fatalf("rocket deposit is %s", s)
	}

	// H2H bkash: the redirect action is the same checkout, and the payer's
	// number is the deposit's own.
	res := h.CreateH2H(org, h2h(kv{"merchant_id", `"h2h-1"`}, kv{"payment_method", `"bkash"`}, kv{"amount", `"300"`}))
	hcheckout := str(res.JSON, "next_action", "url")
	if res.Status != 201 || str(res.JSON, "next_action", "type") != "redirect" || !strings.HasPrefix(hcheckout, h.URL+"/checkout/") {
		t.Fatalf("h2h bkash: %d %s", res.Status, res.Body)
	}
	if p := checkoutRequest(t, http.MethodGet, hcheckout+"?lang=en", nil); strings.Contains(p.body, `name="payer_phone"`) {
		t.Fatal("the checkout of a deposit with a payer phone asks for one")
	}
	post(sendMoney("300.00", payer, "2,300.00", "BKP0000003"))
	verify(hcheckout, url.Values{"transaction_id": {"BKP0000003"}})
	h.Work()
	if s := str(h.GetDeposit(org, str(res.JSON, "id"), true).JSON, "status"); s != "succeeded" {
		t.Fatalf("h2h bkash deposit is %s", s)
	}

	// The H2H verify operation stays refused for a redirect action.
	if res := h.Verify(org, str(res.JSON, "id"), `{"provider_transaction_id":"BKP0000004"}`); res.Status != 409 || res.ErrorCode() != "redirect_action" {
		t.Fatalf("verify of a redirect action: %d %s", res.Status, res.Body)
	}
}
