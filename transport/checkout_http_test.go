package transport_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
)

// page is one answer of the hosted checkout.
type page struct {
	status int
	header http.Header
	body   string
}

// checkoutGet loads a checkout page with an Accept-Language header.
func checkoutGet(t *testing.T, pageURL, acceptLanguage string) page {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, pageURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	if acceptLanguage != "" {
		req.Header.Set("Accept-Language", acceptLanguage)
	}
	return checkoutDo(t, req)
}

// checkoutPost submits a form of a checkout page without following the
// redirect.
func checkoutPost(t *testing.T, actionURL string, form url.Values) page {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, actionURL, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return checkoutDo(t, req)
}

func checkoutDo(t *testing.T, req *http.Request) page {
	t.Helper()
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return page{res.StatusCode, res.Header, string(b)}
}

func (p page) mustContain(t *testing.T, what ...string) {
	t.Helper()
	for _, w := range what {
		if !strings.Contains(p.body, w) {
			t.Fatalf("the page (%d) does not contain %q:\n%s", p.status, w, p.body)
		}
	}
}

// checkoutToken is the hosted checkout token of a deposit.
func (h *harness) checkoutToken(org *testOrg, id string) string {
	h.t.Helper()
	d, err := h.Engine.GetDeposit(context.Background(), org.ID, id)
	if err != nil {
		h.t.Fatal(err)
	}
	return d.CheckoutToken
}

// TestCheckoutInstructionsPage drives the payer-facing page of an H2H
// display_instructions deposit over HTTP: what it shows, the CSP, both
// languages, and each refusal of a transaction ID in the contract's terms.
func TestCheckoutInstructionsPage(t *testing.T) {
	h := newHarness(t)
	org := h.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	w, err := h.Engine.AddWallet(context.Background(), engine.AddWalletParams{
		OrganizationID: org.ID, Channel: "bkash", Operation: "cash_out", Phone: "01811111111", Name: "Agent <Rahim>",
		QRPayload: "00020101021126",
	})
	if err != nil {
		t.Fatal(err)
	}
	dep := h.CreateH2H(org, h2h(kv{"merchant_id", `"p1"`}, kv{"redirect_url", `"https://shop.example/return?order=7#top"`}))
	id := str(dep.JSON, "id")
	base := h.URL + "/checkout/" + h.checkoutToken(org, id)
	verify := func(txID string) page {
		t.Helper()
		return checkoutPost(t, base+"/verify?lang=en", url.Values{"transaction_id": {txID}})
	}
	pay := func(txID, amount string) {
		t.Helper()
		res := h.SandboxPay(org, `{"channel":"bkash","transaction_id":"`+txID+`","payer_phone":"01712345678","recipient_phone":"`+w.Phone+`","amount":"`+amount+`","status":"completed","type":"cash_out"}`)
		if res.Status != http.StatusCreated {
			t.Fatalf("sandbox payment: %d %s", res.Status, res.Body)
		}
	}

	t.Run("shows the instructions under a strict CSP", func(t *testing.T) {
		p := checkoutGet(t, base, "")
		if p.status != http.StatusOK {
			t.Fatalf("status %d", p.status)
		}
		p.mustContain(t, `<html lang="en">`, "500.00", "bKash", "Cash Out", "01811111111",
			"Agent &lt;Rahim&gt;", `<svg xmlns="http://www.w3.org/2000/svg"`, `name="transaction_id"`,
			`action="/checkout/`, "3 of 3 attempts left", "Time left", "15:00")
		csp := p.header.Get("Content-Security-Policy")
		m := regexp.MustCompile(`script-src 'nonce-([A-Za-z0-9_-]+)'`).FindStringSubmatch(csp)
		if m == nil || !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "unsafe") {
			t.Fatalf("CSP %q", csp)
		}
		p.mustContain(t, `<script nonce="`+m[1]+`">`, `<style nonce="`+m[1]+`">`)
		if n := strings.Count(p.body, "<script"); n != 1 {
			t.Fatalf("%d scripts on the page", n)
		}
		if again := checkoutGet(t, base, ""); strings.Contains(again.body, m[1]) {
			t.Fatal("the nonce is the same on two answers")
		}
	})
	t.Run("speaks Bangla by Accept-Language or ?lang", func(t *testing.T) {
		checkoutGet(t, base, "bn-BD,bn;q=0.9,en;q=0.8").mustContain(t, `<html lang="bn">`, "ট্রানজ্যাকশন আইডি", "বিকাশ", `href="?lang=en"`)
		checkoutGet(t, base, "en-US,en;q=0.9,bn;q=0.5").mustContain(t, `<html lang="en">`)
		checkoutGet(t, base+"?lang=bn", "en").mustContain(t, `<html lang="bn">`)
		checkoutGet(t, base+"?lang=en", "bn").mustContain(t, `<html lang="en">`, "Transaction ID")
	})
	t.Run("invalid length", func(t *testing.T) {
		for _, tx := range []string{"ab", strings.Repeat("A", 65)} {
			p := verify(tx)
			if p.status != http.StatusBadRequest {
				t.Fatalf("status %d", p.status)
			}
			p.mustContain(t, "3 to 64 letters and digits", `data-code="invalid_request"`)
		}
		checkoutPost(t, base+"/verify?lang=bn", url.Values{"transaction_id": {"ab"}}).mustContain(t, "৩ থেকে ৬৪টি অক্ষর")
	})
	t.Run("queued, then attempt_in_progress", func(t *testing.T) {
		pay("TXONE", "499") // an underpayment
		p := verify(" txone ")
		if p.status != http.StatusSeeOther || p.header.Get("Location") != "/checkout/"+h.checkoutToken(org, id)+"?lang=en" {
			t.Fatalf("verify: %d %v", p.status, p.header)
		}
		page := checkoutGet(t, base, "")
		page.mustContain(t, "verifying your payment", `<meta http-equiv="refresh" content="2; url=/checkout/`)
		if strings.Contains(page.body, "<form") {
			t.Fatal("a form is offered while the payment is being verified")
		}
		p = verify("TXTWO")
		if p.status != http.StatusConflict {
			t.Fatalf("status %d", p.status)
		}
		// Rendered on the POST, the page reloads the canonical page URL.
		p.mustContain(t, "Another transaction ID is being verified", `data-code="attempt_in_progress"`,
			`content="2; url=/checkout/`+h.checkoutToken(org, id)+`?lang=en"`)
		h.Work()
		checkoutGet(t, base, "").mustContain(t, "could not be verified: the amount paid is not exactly the amount due", "2 of 3 attempts left")
	})
	t.Run("transaction_id_used", func(t *testing.T) {
		other := h.CreateH2H(org, h2h(kv{"merchant_id", `"p2"`}))
		otherBase := h.URL + "/checkout/" + h.checkoutToken(org, str(other.JSON, "id"))
		p := checkoutPost(t, otherBase+"/verify", url.Values{"transaction_id": {"TXONE"}})
		if p.status != http.StatusConflict {
			t.Fatalf("status %d", p.status)
		}
		p.mustContain(t, "already been used for another payment", `data-code="transaction_id_used"`, `value="TXONE"`)
	})
	t.Run("attempt_limit_reached", func(t *testing.T) {
		for _, tx := range []string{"TXTWO", "TXTHREE"} {
			pay(tx, "501")
			if p := verify(tx); p.status != http.StatusSeeOther {
				t.Fatalf("verify %s: %d", tx, p.status)
			}
			h.Work()
		}
		p := checkoutGet(t, base, "")
		p.mustContain(t, "The payment could not be verified.", "Return to the merchant",
			`href="https://shop.example/return?order=7&amp;deposit_id=`+id+`&amp;status=failed#top"`)
		p = verify("TXFOUR")
		if p.status != http.StatusConflict {
			t.Fatalf("status %d", p.status)
		}
		p.mustContain(t, "All 3 attempts for this payment have been used", `data-code="attempt_limit_reached"`)
	})
	t.Run("deposit_terminal", func(t *testing.T) {
		late := h.CreateH2H(org, h2h(kv{"merchant_id", `"p3"`}))
		lateBase := h.URL + "/checkout/" + h.checkoutToken(org, str(late.JSON, "id"))
		h.Clock.Add(15 * time.Minute)
		p := checkoutPost(t, lateBase+"/verify", url.Values{"transaction_id": {"TXLATE"}})
		if p.status != http.StatusConflict {
			t.Fatalf("status %d", p.status)
		}
		p.mustContain(t, "This payment is closed", `data-code="deposit_terminal"`)
		// Past the deadline the page leads back with the outcome the
		// merchant will read, before and after the expiry worker ran.
		checkoutGet(t, lateBase, "").mustContain(t, "This checkout has expired.", "status=expired")
		h.Work()
		checkoutGet(t, lateBase, "").mustContain(t, "This checkout has expired.", "status=expired")
	})
	t.Run("unknown token", func(t *testing.T) {
		p := checkoutGet(t, h.URL+"/checkout/nope", "")
		if p.status != http.StatusNotFound || !strings.HasPrefix(p.header.Get("Content-Type"), "text/html") {
			t.Fatalf("status %d %s", p.status, p.header.Get("Content-Type"))
		}
		p.mustContain(t, "Checkout not found")
		if p := checkoutPost(t, h.URL+"/checkout/nope/verify", url.Values{"transaction_id": {"TXX"}}); p.status != http.StatusNotFound {
			t.Fatalf("verify on an unknown token: %d", p.status)
		}
	})
}

// TestCheckoutSandboxInstructions pays a display_instructions deposit the
// way the page's sandbox section does: the payment is recorded for the
// deposit's recipient and its ID is put in the form for the payer to submit.
func TestCheckoutSandboxInstructions(t *testing.T) {
	h := newHarness(t)
	org := h.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	h.AddWallet(org, "nagad", "make_payment", "01911111111", "Shop counter")
	dep := h.CreateH2H(org, h2h(kv{"merchant_id", `"s1"`}, kv{"payment_method", `"nagad_merchant"`}))
	id := str(dep.JSON, "id")
	base := h.URL + "/checkout/" + h.checkoutToken(org, id)

	p := checkoutPost(t, base+"/pay?lang=en", url.Values{"payer_phone": {"01712345678"}, "amount": {"500.00"}, "outcome": {"completed"}})
	loc := p.header.Get("Location")
	if p.status != http.StatusSeeOther || !strings.Contains(loc, "txid=SBX") {
		t.Fatalf("pay: %d %q", p.status, loc)
	}
	txID := regexp.MustCompile(`txid=(SBX[A-Z0-9]+)`).FindStringSubmatch(loc)[1]
	checkoutGet(t, h.URL+loc, "").mustContain(t, "Sandbox payment recorded", `value="`+txID+`"`, "Nagad", "Make Payment")
	if p := checkoutPost(t, base+"/verify", url.Values{"transaction_id": {txID}}); p.status != http.StatusSeeOther {
		t.Fatalf("verify: %d %s", p.status, p.body)
	}
	h.Work()
	res := h.GetDeposit(org, id, true)
	assertJSONField(t, res.Body, "status", `"succeeded"`)
	assertJSONField(t, res.Body, "provider_transaction_id", `"`+txID+`"`)
	checkoutGet(t, base, "").mustContain(t, "Payment received", "Transaction ID: "+txID, "status=succeeded")

	// A payment from another phone than the deposit's payer fails.
	dep2 := h.CreateH2H(org, h2h(kv{"merchant_id", `"s2"`}, kv{"payment_method", `"nagad_merchant"`}))
	base2 := h.URL + "/checkout/" + h.checkoutToken(org, str(dep2.JSON, "id"))
	loc = checkoutPost(t, base2+"/pay", url.Values{"payer_phone": {"01999999999"}}).header.Get("Location")
	txID = regexp.MustCompile(`txid=(SBX[A-Z0-9]+)`).FindStringSubmatch(loc)[1]
	checkoutPost(t, base2+"/verify", url.Values{"transaction_id": {txID}})
	h.Work()
	checkoutGet(t, base2, "").mustContain(t, "the payment was made from another number")
	// A bad phone is refused in plain words.
	checkoutPost(t, base2+"/pay", url.Values{"payer_phone": {"12"}}).mustContain(t, "11 digits starting with 01", `data-code="invalid_request"`, `value="12"`, `class="field-error"`)
}
