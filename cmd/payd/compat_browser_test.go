package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydtest"
)

// compatPost posts body to a compat endpoint with the UddoktaPay header.
func compatPost(t *testing.T, ls *paydtest.Server, path, key, body string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, ls.URL+"/api/"+path, strings.NewReader(body))
	req.Header.Set("RT-UDDOKTAPAY-API-KEY", key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var v map[string]any
	if err := json.NewDecoder(res.Body).Decode(&v); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("%s: %d %v %v", path, res.StatusCode, v, err)
	}
	return v
}

// TestBrowserCompatInvoice: a payer of an invoice made through the
// UddoktaPay-compatible API, on a phone-sized Chromium, picks bKash on
// payd's page (no horizontal scrolling; Bangla too), pays on the hosted
// checkout and lands on the shop's redirect_url with invoice_id.
func TestBrowserCompatInvoice(t *testing.T) {
	chromium, driver := findBrowser(t)
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	ls := paydtest.MustRunMain(t)
	shop := newMerchantReturns(t)
	ctx := context.Background()
	creds, err := ls.Engine.CreateOrganization(ctx, engine.OrganizationSettings{Name: ptr("Browser Shop")})
	if err != nil {
		t.Fatal(err)
	}
	key, err := ls.Engine.EnableCompat(ctx, creds.Organization.ID)
	if err != nil {
		t.Fatal(err)
	}
	created := compatPost(t, ls, "checkout-v2", key, `{"full_name":"Rahim","email":"r@example.com","amount":"1250.50",`+
		`"metadata":{"order_id":"U-1"},"redirect_url":"`+shop.srv.URL+`/return?order=U-1","cancel_url":"`+shop.srv.URL+`/return?cancelled=1"}`)
	paymentURL, _ := created["payment_url"].(string)
	invoice := paymentURL[strings.LastIndexByte(paymentURL, '/')+1:]

	b := startBrowser(t, chromium, driver)
	b.open(paymentURL + "?lang=bn")
	if !b.hasText("বাতিল করে দোকানে ফিরে যান") || !b.hasText("৳১,২৫০.৫০") {
		t.Fatalf("the invoice's page in Bangla:\n%s", b.text("body"))
	}
	b.open(paymentURL + "?lang=en")
	if got := b.text("#pay-amount"); got != "৳1,250.50" {
		t.Fatalf("amount shown: %q", got)
	}
	if fits := b.script("return document.documentElement.scrollWidth <= window.innerWidth"); fits != true {
		t.Errorf("the invoice's page scrolls sideways on a phone")
	}
	b.submit("#pay-bkash")
	b.typeInto("#payer_phone", "01712345678")
	b.submit("#pay")
	b.waitFor(`#outcome.outcome-succeeded`, 20*time.Second)
	b.submit("#return")
	b.waitFor("#back", 10*time.Second)
	if q := shop.last(); q.Get("invoice_id") != invoice || q.Get("order") != "U-1" {
		t.Fatalf("the shop's redirect_url got %v", q)
	}
	if v := compatPost(t, ls, "verify-payment", key, `{"invoice_id":"`+invoice+`"}`); v["status"] != engine.CompatCompleted {
		t.Fatalf("verify-payment after the payment: %v", v)
	}
}
