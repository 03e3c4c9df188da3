package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydtest"
	"github.com/payd-engine/payd/transport/client"
)

// merchantReturns is a merchant's return page that records each arrival's
// query.
type merchantReturns struct {
	mu      sync.Mutex
	queries []url.Values
	srv     *httptest.Server
}

func newMerchantReturns(t *testing.T) *merchantReturns {
	m := &merchantReturns{}
	m.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/return" {
			http.NotFound(w, r) // the browser asks for /favicon.ico too
			return
		}
		m.mu.Lock()
		m.queries = append(m.queries, r.URL.Query())
		m.mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, "<!doctype html><title>Shop</title><h1 id=back>Back at the shop</h1>")
	}))
	t.Cleanup(m.srv.Close)
	return m
}

func (m *merchantReturns) last() url.Values {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.queries) == 0 {
		return nil
	}
	return m.queries[len(m.queries)-1]
}

// saveScreenshot writes the browser's view into the test's temp dir (and
// logs where), and into docs/ as well when PAYD_UPDATE_SCREENSHOT=1.
func saveScreenshot(t *testing.T, b *browser, dir, name string) {
	t.Helper()
	restore := b.fullHeight()
	defer restore()
	path := filepath.Join(dir, name)
	b.screenshot(path)
	t.Logf("screenshot: %s", path)
	if os.Getenv("PAYD_UPDATE_SCREENSHOT") == "1" {
		docs := filepath.Join("..", "..", "docs", name)
		if err := os.MkdirAll(filepath.Dir(docs), 0o755); err != nil {
			t.Fatal(err)
		}
		b.screenshot(docs)
		t.Logf("screenshot: %s (updated)", docs)
	}
}

// checkQRCode decodes the QR code in a screenshot with zbarimg (Debian's
// zbar-tools), when it is installed, and compares its payload.
func checkQRCode(t *testing.T, png, want string) {
	t.Helper()
	zbar, err := exec.LookPath("zbarimg")
	if err != nil {
		t.Log("zbarimg not found (apt-get install zbar-tools): the QR code's payload is not decoded")
		return
	}
	out, err := exec.Command(zbar, "--quiet", "--raw", png).Output()
	if err != nil {
		t.Fatalf("zbarimg %s: %v", png, err)
	}
	if got := strings.TrimSpace(string(out)); got != want {
		t.Fatalf("the QR code reads %q, want %q", got, want)
	}
}

// TestBrowserCheckout drives headless Chromium through the hosted checkout
// as a payer would: a redirect deposit paid in the sandbox until it reads
// succeeded and the payer is back at the merchant with the outcome, and an
// H2H display_instructions deposit (with its QR code) paid by typing the
// transaction ID. It skips when Chromium or ChromeDriver is not installed.
func TestBrowserCheckout(t *testing.T) {
	chromium, driver := findBrowser(t)
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	ls := paydtest.MustRunMain(t) // the wall clock and the workers, as payd serve runs: pages refresh while verification runs
	shop := newMerchantReturns(t)
	ctx := context.Background()
	creds, err := ls.Engine.CreateOrganization(ctx, engine.OrganizationSettings{Name: ptr("Browser Shop"), H2HEnabled: ptr(true)})
	if err != nil {
		t.Fatal(err)
	}
	api := client.New(ls.URL+"/api", creds.APIKey.APIKey, creds.APIKey.SigningSecret)
	b := startBrowser(t, chromium, driver)
	shots := t.TempDir()

	t.Run("redirect deposit to succeeded", func(t *testing.T) {
		b.t = t
		dep, err := api.CreateRedirectDeposit(ctx, client.RedirectDepositRequest{
			Amount: "1250.50", PaymentMethod: "bkash", RedirectURL: shop.srv.URL + "/return?order=A-17", MerchantID: "browser-1",
		})
		if err != nil {
			t.Fatal(err)
		}
		b.open(*dep.RedirectURL)
		if got := b.text("#amount"); got != "1,250.50 BDT" {
			t.Fatalf("amount shown: %q", got)
		}
		if got := b.text("#channel"); got != "bKash" {
			t.Fatalf("channel shown: %q", got)
		}
		// The countdown script runs under the page's CSP nonce: the
		// remaining time changes without a reload.
		first := b.text("#countdown")
		time.Sleep(1500 * time.Millisecond)
		if again := b.text("#countdown"); again == first || again == "" {
			t.Fatalf("the countdown did not tick: %q then %q", first, again)
		}
		saveScreenshot(t, b, shots, "checkout.png")

		b.typeInto("#payer_phone", "01712345678")
		b.submit("#pay")
		// The page shows "verifying" and refreshes itself until the
		// background worker has checked the payment.
		b.waitFor(`#outcome.outcome-succeeded`, 20*time.Second)
		if !b.hasText("Payment received") {
			t.Fatalf("succeeded page:\n%s", b.text("body"))
		}
		saveScreenshot(t, b, shots, "checkout-succeeded.png")
		got, err := api.GetDeposit(ctx, dep.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != client.StatusSucceeded || got.BankTransactionID == nil || !strings.HasPrefix(*got.BankTransactionID, "SBX") {
			t.Fatalf("deposit after the checkout: %+v", got)
		}

		b.submit("#return")
		b.waitFor("#back", 10*time.Second)
		q := shop.last()
		if q.Get("deposit_id") != dep.ID || q.Get("status") != "succeeded" || q.Get("order") != "A-17" {
			t.Fatalf("the merchant's return page got %v", q)
		}
	})

	t.Run("instructions deposit with a QR code, in Bangla", func(t *testing.T) {
		b.t = t
		_, err := ls.Engine.AddWallet(ctx, engine.AddWalletParams{
			OrganizationID: creds.Organization.ID, Channel: "bkash", Operation: "cash_out",
			Phone: "01711000001", Name: "Agent Rahim", QRPayload: "bkash://cashout?agent=01711000001",
		})
		if err != nil {
			t.Fatal(err)
		}
		dep, _, err := api.CreateH2HDeposit(ctx, client.H2HDepositRequest{
			Amount: "750.50", PaymentMethod: "bkash_agent", RedirectURL: shop.srv.URL + "/return",
			MerchantID: "browser-2", PayerPhone: "01712345678",
		})
		if err != nil {
			t.Fatal(err)
		}
		d, err := ls.Engine.GetDeposit(ctx, creds.Organization.ID, dep.ID)
		if err != nil {
			t.Fatal(err)
		}
		b.open(ls.URL + "/checkout/" + d.CheckoutToken)
		if got := b.text("#recipient"); got != "01711000001" {
			t.Fatalf("recipient shown: %q", got)
		}
		if got := b.text("#operation"); got != "Cash Out" {
			t.Fatalf("operation shown: %q", got)
		}
		b.must("#qr svg")
		saveScreenshot(t, b, shots, "checkout-instructions.png")
		checkQRCode(t, filepath.Join(shots, "checkout-instructions.png"), "bkash://cashout?agent=01711000001")
		// The language switch: the same page in Bangla (whether it shows
		// depends on the machine's fonts; the text is there).
		b.submit("#lang")
		if lang := b.attr("html", "lang"); lang != "bn" {
			t.Fatalf("html lang %q after the switch", lang)
		}
		if !b.hasText("ট্রানজ্যাকশন আইডি") || !b.hasText("01711000001") {
			t.Fatalf("no Bangla text on the page:\n%s", b.text("body"))
		}
		saveScreenshot(t, b, shots, "checkout-instructions-bn.png")
		// The sandbox pays as the payer's wallet would, and its ID lands in
		// the form. An underpayment first: its attempt fails, and the page
		// says why, with an attempt used.
		b.typeInto("#paid_amount", "700")
		b.submit("#pay")
		b.submit("#verify")
		b.waitFor("#last-failure", 20*time.Second)
		if got := b.text("#attempts"); !strings.Contains(got, "2") {
			t.Fatalf("attempts left: %q", got)
		}
		// Then the exact amount, whose ID verifies the deposit.
		b.submit("#pay")
		if got := b.attr("#transaction_id", "value"); !strings.HasPrefix(got, "SBX") {
			t.Fatalf("the sandbox payment's ID was not filled in: %q", got)
		}
		b.submit("#verify")
		b.waitFor(`#outcome.outcome-succeeded`, 20*time.Second)
		got, err := api.GetDeposit(ctx, dep.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != client.StatusSucceeded || got.Verification.AttemptsUsed != 2 {
			t.Fatalf("deposit after the checkout: %+v %+v", got, got.Verification)
		}
	})
}
