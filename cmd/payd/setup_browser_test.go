package main

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydtest"
	"github.com/payd-engine/payd/transport/webhook"
)

// hookReceiver is the merchant's webhook endpoint: it keeps each event
// whose signature verifies with the secret it is given.
type hookReceiver struct {
	srv    *httptest.Server
	mu     sync.Mutex
	secret string
	types  []string
	bad    int
}

func newHookReceiver(t *testing.T) *hookReceiver {
	h := &hookReceiver{}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		defer h.mu.Unlock()
		if err := webhook.Verify(h.secret, r.Header, body, time.Now()); err != nil {
			h.bad++
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		var ev struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(body, &ev)
		h.types = append(h.types, ev.Type)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hookReceiver) got(typ string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, t := range h.types {
		if t == typ {
			return true
		}
	}
	return false
}

// fitsThePhone fails the test when the page is wider than the phone's
// window: nothing, the navigation included, needs scrolling sideways.
func fitsThePhone(t *testing.T, b *browser) {
	t.Helper()
	w, _ := b.script("return document.documentElement.scrollWidth").(float64)
	vw, _ := b.script("return window.innerWidth").(float64)
	if w > vw+1 {
		t.Errorf("%s is %v px wide on a %v px phone", b.currentURL(), w, vw)
	}
}

// TestBrowserFirstPayment is the merchant's first day, on a phone-sized
// (390 px) window, as a new user: the first owner is made by one admin
// command (operator add --platform); everything after is the browser: set
// the password and two-factor login by its QR code, log in, create the
// organization (its API key shown once), set what payers see, add the
// webhook endpoint (its secret shown once) and send it a test event, make
// a payment link (a ৳50 one is refused beside the amount), pay it as the
// payer in the sandbox, see the webhook the merchant's server received,
// and the deposit with its fee and net; then the same pages in Bangla.
// Each page is screenshotted (docs/console/screens/ with
// PAYD_UPDATE_SCREENSHOT=1). It skips when Chromium or ChromeDriver is not
// installed.
func TestBrowserFirstPayment(t *testing.T) {
	chromium, driver := findBrowser(t)
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	ctx := context.Background()
	ls := paydtest.MustRunMain(t) // payd serve's sandbox: wall clock, workers, webhooks to a local receiver
	hooks := newHookReceiver(t)
	b := startBrowser(t, chromium, driver)
	b.do(http.MethodPost, "/window/rect", map[string]any{"width": 390, "height": 844}, nil)
	shots := t.TempDir()
	if err := os.MkdirAll(filepath.Join(shots, "console", "screens"), 0o755); err != nil {
		t.Fatal(err)
	}
	shot := func(t *testing.T, name string) {
		t.Helper()
		fitsThePhone(t, b)
		if b.find("#sandbox-banner") == "" {
			t.Errorf("%s has no sandbox banner", b.currentURL())
		}
		saveScreenshot(t, b, shots, "console/screens/"+name+".png")
	}

	// The one command: payd admin operator add --email ... --role owner --platform.
	fs := flag.NewFlagSet("operator add", flag.ContinueOnError)
	add := operatorAdd(fs)
	if err := fs.Parse([]string{"--email", "owner@dhakabooks.example", "--role", "owner", "--platform", "--public-url", ls.URL}); err != nil {
		t.Fatal(err)
	}
	out, err := add(ctx, ls.Engine)
	if err != nil {
		t.Fatal(err)
	}
	setupLink, _ := out.(map[string]any)["setup_link"].(string)
	if !strings.HasPrefix(setupLink, ls.URL+"/console/setup?token=") {
		t.Fatalf("setup link %q", setupLink)
	}

	var orgID, link string
	t.Run("set up the owner and log in", func(t *testing.T) {
		b.t = t
		b.open(ls.URL + "/")
		if !strings.Contains(b.currentURL(), "/console/login") {
			t.Fatalf("the root URL led to %s", b.currentURL())
		}
		b.open(setupLink)
		b.must("#totp-qr svg")
		shot(t, "01-setup")
		secret := b.text("#secret")
		b.typeInto("#password", consolePassword)
		b.typeInto("#confirm", consolePassword)
		b.typeInto("#code", totpAt(t, secret, time.Now()))
		b.submit("#save")
		shot(t, "02-login")
		consoleLogin(t, b, ls, "owner@dhakabooks.example", totpAt(t, secret, time.Now().Add(30*time.Second)))
		b.must("#new-org")
		shot(t, "03-first-overview")
	})

	t.Run("create the organization", func(t *testing.T) {
		b.t = t
		b.typeInto("#org-name", "Dhaka Books")
		b.submit("#org-create")
		if !strings.Contains(b.text("#new-key"), "payd_") {
			t.Fatalf("no API key shown:\n%s", b.text("body"))
		}
		shot(t, "04-api-key")
		orgs, err := ls.Engine.ListOrganizations(ctx)
		if err != nil || len(orgs) != 1 {
			t.Fatalf("organizations: %v %v", orgs, err)
		}
		orgID = orgs[0].ID
	})

	t.Run("what payers see", func(t *testing.T) {
		b.t = t
		b.open(ls.URL + "/console/settings?org=" + orgID)
		b.typeInto("#set-support_contact", "01711000000")
		shot(t, "05-settings")
		b.submit("#settings-save")
		b.must("#done")
	})

	t.Run("webhook endpoint", func(t *testing.T) {
		b.t = t
		b.open(ls.URL + "/console/webhooks?org=" + orgID)
		b.typeInto("#webhook-url", hooks.srv.URL+"/payd")
		b.submit("#webhook-add")
		hooks.mu.Lock()
		hooks.secret = b.text("#webhook-secret")
		hooks.mu.Unlock()
		if !strings.HasPrefix(hooks.secret, "whsec_") {
			t.Fatalf("no secret shown:\n%s", b.text("body"))
		}
		shot(t, "06-webhook-secret")
		b.submit("form[action$='/test'] button")
		if got := b.text("#test-result"); !strings.Contains(got, "204") {
			t.Fatalf("test event: %q", got)
		}
		if !hooks.got(engine.EventWebhookTest) {
			t.Fatal("the receiver verified no test event")
		}
		shot(t, "07-webhook-test")
	})

	t.Run("payment link", func(t *testing.T) {
		b.t = t
		b.open(ls.URL + "/console/links?org=" + orgID)
		b.typeInto("#amount", "50")
		b.submit("#create-link")
		if b.find("#amount-error") == "" || b.attr("#amount", "value") != "50" {
			t.Fatalf("a ৳50 link:\n%s", b.text("body"))
		}
		shot(t, "08-link-refused")
		b.typeInto("#amount", "1500")
		b.typeInto("#note", "Invoice 77: school books")
		b.submit("#create-link")
		link = b.attr("#new-link", "href")
		b.must("#link-qr svg")
		shot(t, "09-link")
	})

	t.Run("the payer pays", func(t *testing.T) {
		b.t = t
		b.open(link)
		if got := b.text("#shop"); got != "Dhaka Books" {
			t.Errorf("the pay page's shop: %q", got)
		}
		if got := b.text("#pay-amount"); got != "৳1,500.00" {
			t.Errorf("the pay page's amount: %q", got)
		}
		if got := b.text("#pay-bkash"); got != "Pay with bKash" {
			t.Errorf("the bKash button: %q", got)
		}
		shot(t, "10-pay")
		b.submit("#pay-bkash")
		if got := b.text("#shop"); got != "Dhaka Books" {
			t.Errorf("the checkout's shop: %q", got)
		}
		shot(t, "11-checkout")
		b.typeInto("#payer_phone", "12")
		b.submit("#pay")
		if b.find(".field-error") == "" || b.attr("#payer_phone", "value") != "12" {
			t.Errorf("a bad phone:\n%s", b.text("body"))
		}
		shot(t, "12-checkout-error")
		b.typeInto("#payer_phone", "01712345678")
		b.submit("#pay")
		b.waitFor(`#outcome.outcome-succeeded`, 20*time.Second)
		shot(t, "13-paid")
	})

	t.Run("the webhook arrived", func(t *testing.T) {
		b.t = t
		for deadline := time.Now().Add(20 * time.Second); !hooks.got("deposit.succeeded"); time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				hooks.mu.Lock()
				t.Fatalf("the receiver got %v (%d unverified)", hooks.types, hooks.bad)
			}
		}
		b.open(ls.URL + "/console/webhooks?org=" + orgID)
		if !b.hasText("Delivered") {
			t.Errorf("the webhooks page shows no delivery:\n%s", b.text("body"))
		}
		shot(t, "14-webhooks")
		b.open(ls.URL + "/console/deposits?org=" + orgID)
		b.submit("#search")
		b.submit("#results a")
		if got := b.text("#deposit-net"); got != "৳1,500.00" {
			t.Errorf("the deposit's net: %q", got)
		}
		shot(t, "15-deposit")
	})

	t.Run("in Bangla", func(t *testing.T) {
		b.t = t
		b.open(ls.URL + "/console/?lang=bn&org=" + orgID)
		if lang := b.attr("html", "lang"); lang != "bn" {
			t.Fatalf("html lang %q", lang)
		}
		if !b.hasText("৳১,৫০০.০০") {
			t.Errorf("no Bangla amount on the overview:\n%s", b.text("body"))
		}
		shot(t, "bn-01-overview")
		b.open(ls.URL + "/console/deposits?org=" + orgID)
		b.submit("#search")
		b.submit("#results a")
		if !b.hasText("সফল") {
			t.Errorf("the status is not in Bangla:\n%s", b.text("body"))
		}
		shot(t, "bn-02-deposit")
		b.open(ls.URL + "/console/webhooks?org=" + orgID)
		shot(t, "bn-03-webhooks")
		b.open(ls.URL + "/console/links?org=" + orgID)
		shot(t, "bn-04-links")
		b.open(ls.URL + "/console/settings?org=" + orgID)
		shot(t, "bn-05-settings")
		b.open(link + "?lang=bn")
		if !b.hasText("এই লিংকটি পরিশোধিত") {
			t.Errorf("the paid link's page is not in Bangla:\n%s", b.text("body"))
		}
		shot(t, "bn-06-pay")
		b.open(ls.URL + "/console/?lang=en&org=" + orgID)
	})

	t.Run("every page fits the phone", func(t *testing.T) {
		b.t = t
		for _, lang := range []string{"bn", "en"} {
			for _, page := range []string{"", "deposits", "withdrawals", "wallets", "webhooks", "keys", "links", "balance", "settings", "audit"} {
				b.open(ls.URL + "/console/" + page + "?lang=" + lang + "&org=" + orgID)
				if b.find("nav.nav") == "" || b.find("#sandbox-banner") == "" {
					t.Errorf("%s (%s): no navigation or sandbox banner", page, lang)
				}
				fitsThePhone(t, b)
			}
		}
		saveScreenshot(t, b, shots, "console/screens/16-audit.png")
	})
}
