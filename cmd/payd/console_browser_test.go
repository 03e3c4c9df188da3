package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base32"
	"encoding/binary"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	payd "github.com/payd-engine/payd"
	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydtest"
	"github.com/payd-engine/payd/provider/sandbox"
	"github.com/payd-engine/payd/provider/smsinbox"
)

// totpAt is the six-digit code an authenticator app shows at t for a
// base32 secret (RFC 6238, HMAC-SHA-1, 30-second steps): the test's own,
// apart from the console's.
func totpAt(t *testing.T, secret string, at time.Time) string {
	key, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(secret)
	if err != nil {
		t.Fatal(err)
	}
	mac := hmac.New(sha1.New, key)
	var msg [8]byte
	binary.BigEndian.PutUint64(msg[:], uint64(at.Unix()/30))
	mac.Write(msg[:])
	sum := mac.Sum(nil)
	off := sum[len(sum)-1] & 0x0f
	return fmt.Sprintf("%06d", (binary.BigEndian.Uint32(sum[off:off+4])&0x7fffffff)%1000000)
}

const consolePassword = "a long operator passphrase"

// consoleSetup opens an operator's setup link in the browser, chooses the
// password and, with totp, turns the second factor on; it returns the
// factor's secret.
func consoleSetup(t *testing.T, b *browser, ls *paydtest.Server, email, role, orgID string, totp bool) string {
	t.Helper()
	_, token, err := ls.Engine.AddOperator(context.Background(), engine.AddOperatorParams{Email: email, Role: role, OrganizationID: orgID})
	if err != nil {
		t.Fatal(err)
	}
	b.open(ls.URL + "/console/setup?token=" + url.QueryEscape(token))
	secret := b.text("#secret")
	b.typeInto("#password", consolePassword)
	b.typeInto("#confirm", consolePassword)
	if totp {
		b.typeInto("#code", totpAt(t, secret, time.Now()))
	}
	b.submit("#save")
	if !strings.Contains(b.currentURL(), "/console/login") {
		t.Fatalf("after setup: %s\n%s", b.currentURL(), b.text("body"))
	}
	return secret
}

// consoleLogin logs in on the login page the browser shows.
func consoleLogin(t *testing.T, b *browser, ls *paydtest.Server, email, code string) {
	t.Helper()
	b.open(ls.URL + "/console/login")
	b.typeInto("#email", email)
	b.typeInto("#password", consolePassword)
	if code != "" {
		b.typeInto("#code", code)
	}
	b.submit("#login")
	if !strings.HasSuffix(b.currentURL(), "/console/") {
		t.Fatalf("after login: %s\n%s", b.currentURL(), b.text("body"))
	}
}

// TestBrowserConsole drives headless Chromium through the operator console
// as operators use it, on a phone-sized window: set up an account with a
// second factor and log in with its code, find a deposit by the
// transaction ID a payer reads out, complete a manual payout (SMS inbox),
// create a payment link and pay it through the hosted checkout. The
// screenshots go to docs/console/ with PAYD_UPDATE_SCREENSHOT=1. It skips
// when Chromium or ChromeDriver is not installed.
func TestBrowserConsole(t *testing.T) {
	chromium, driver := findBrowser(t)
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	ctx := context.Background()
	ls := paydtest.MustRunMain(t)
	creds, err := ls.Engine.CreateOrganization(ctx, engine.OrganizationSettings{Name: ptr("Dhaka Books"), H2HEnabled: ptr(true)})
	if err != nil {
		t.Fatal(err)
	}
	orgID := creds.Organization.ID
	b := startBrowser(t, chromium, driver)
	shots := t.TempDir()
	if err := os.MkdirAll(filepath.Join(shots, "console"), 0o755); err != nil {
		t.Fatal(err)
	}

	t.Run("log in with TOTP", func(t *testing.T) {
		b.t = t
		secret := consoleSetup(t, b, ls, "owner@dhakabooks.example", engine.RoleOwner, orgID, true)
		saveScreenshot(t, b, shots, "console/login.png")
		// The setup's code is used; the next step's code is accepted early.
		consoleLogin(t, b, ls, "owner@dhakabooks.example", totpAt(t, secret, time.Now().Add(30*time.Second)))
		b.must("#available")
	})

	t.Run("find a deposit by transaction ID", func(t *testing.T) {
		b.t = t
		w, err := ls.Engine.AddWallet(ctx, engine.AddWalletParams{OrganizationID: orgID, Channel: "bkash", Operation: "cash_out", Phone: "01711000001", Name: "Agent Rahim"})
		if err != nil {
			t.Fatal(err)
		}
		d, _, err := ls.Engine.CreateDeposit(ctx, engine.CreateDepositParams{OrganizationID: orgID, CheckoutMode: engine.CheckoutH2H,
			Amount: "640", PaymentMethod: "bkash_agent", RedirectURL: "https://dhakabooks.example/back", MerchantID: "order-1042", PayerPhone: "01712345678"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ls.Sandbox.RecordPayment(ctx, sandboxPayment(orgID, "7QK2M9XW4T", w.Phone, "640.00")); err != nil {
			t.Fatal(err)
		}
		if _, err := ls.Engine.SubmitTransactionID(ctx, engine.VerifyParams{OrganizationID: orgID, DepositID: d.ID, TransactionID: "7QK2M9XW4T"}); err != nil {
			t.Fatal(err)
		}
		waitDeposit(t, ls, orgID, d.ID, engine.StatusSucceeded)
		b.open(ls.URL + "/console/")
		saveScreenshot(t, b, shots, "console/overview.png")
		b.open(ls.URL + "/console/deposits")
		b.typeInto("#transaction_id", "7qk2m9xw4t") // as the payer reads it out
		b.submit("#search")
		b.submit("#results a")
		if got := b.text("#paid-txid"); got != "7QK2M9XW4T" {
			t.Fatalf("deposit page's transaction ID: %q", got)
		}
		if got := b.text("#deposit-id"); got != d.ID {
			t.Fatalf("deposit page of %q, want %s", got, d.ID)
		}
		saveScreenshot(t, b, shots, "console/deposit.png")
	})

	t.Run("create and pay a payment link", func(t *testing.T) {
		b.t = t
		b.open(ls.URL + "/console/links")
		b.typeInto("#amount", "1500")
		b.typeInto("#note", "Invoice 77: school books")
		b.submit("#create-link")
		link := b.attr("#new-link", "href")
		saveScreenshot(t, b, shots, "console/links.png")
		b.open(link)
		if got := b.text("#pay-amount"); got != "৳1,500.00" {
			t.Fatalf("the link's amount: %q", got)
		}
		saveScreenshot(t, b, shots, "console/pay.png")
		b.submit("#pay-bkash")
		if !strings.Contains(b.currentURL(), "/checkout/") {
			t.Fatalf("the link did not open the checkout: %s", b.currentURL())
		}
		b.typeInto("#payer_phone", "01712345678")
		b.submit("#pay")
		b.waitFor(`#outcome.outcome-succeeded`, 20*time.Second)
		b.open(link)
		b.must("#paid")
	})

	t.Run("in Bangla", func(t *testing.T) {
		b.t = t
		b.open(ls.URL + "/console/?lang=bn")
		if lang := b.attr("html", "lang"); lang != "bn" {
			t.Fatalf("html lang %q", lang)
		}
		if !b.hasText("সারসংক্ষেপ") {
			t.Fatalf("no Bangla on the overview:\n%s", b.text("body"))
		}
		saveScreenshot(t, b, shots, "console/overview-bn.png")
		b.open(ls.URL + "/console/?lang=en")
	})

	// The manual payout queue and the SMS review belong to the SMS inbox.
	inbox := paydtest.MustRunMain(t, paydtest.WithSMSInbox(smsinbox.Config{}), func(c *payd.Config) {
		c.Engine.PollInterval, c.Engine.PayoutPollInterval = 50*time.Millisecond, 50*time.Millisecond
	})
	icreds, err := inbox.Engine.CreateOrganization(ctx, engine.OrganizationSettings{Name: ptr("Dhaka Books"), WithdrawalsEnabled: ptr(true)})
	if err != nil {
		t.Fatal(err)
	}
	iorg := icreds.Organization.ID

	t.Run("complete a payout", func(t *testing.T) {
		b.t = t
		if _, err := inbox.Engine.AdjustBalance(ctx, engine.AdjustParams{OrganizationID: iorg, Amount: "5000", Reason: "float", Actor: "test"}); err != nil {
			t.Fatal(err)
		}
		wd, err := inbox.Engine.CreateWithdrawal(ctx, engine.CreateWithdrawalParams{OrganizationID: iorg, Amount: "1200", Phone: "01712345678", PaymentMethod: "bkash", MerchantID: "payout-9"})
		if err != nil {
			t.Fatal(err)
		}
		consoleSetup(t, b, inbox, "cashier@dhakabooks.example", engine.RoleOperator, iorg, false)
		consoleLogin(t, b, inbox, "cashier@dhakabooks.example", "")
		row := "#payout-" + wd.ID
		deadline := time.Now().Add(20 * time.Second)
		for {
			b.open(inbox.URL + "/console/withdrawals")
			if b.find(row) != "" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the payout never reached the queue:\n%s", b.text("body"))
			}
			time.Sleep(100 * time.Millisecond)
		}
		saveScreenshot(t, b, shots, "console/payouts.png")
		b.typeInto(row+" input[name=transaction_id]", "BK9P4X2Q7Z")
		b.submit(row + " button.ok")
		if got := b.text("#done"); got == "" {
			t.Fatalf("no confirmation:\n%s", b.text("body"))
		}
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			w, err := inbox.Engine.GetWithdrawal(ctx, iorg, wd.ID)
			if err != nil {
				t.Fatal(err)
			}
			if w.Status == engine.WithdrawalSucceeded && w.ProviderReference == "BK9P4X2Q7Z" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("withdrawal %s, reference %q", w.Status, w.ProviderReference)
			}
		}
	})

	t.Run("approve a held SMS", func(t *testing.T) {
		b.t = t
		w, err := inbox.Engine.AddWallet(ctx, engine.AddWalletParams{OrganizationID: iorg, Channel: "bkash", Operation: "cash_out", Phone: "01811111111", Name: "Agent"})
		if err != nil {
			t.Fatal(err)
		}
		dev, err := inbox.Inbox.AddDevice(ctx, smsinbox.AddDeviceParams{OrganizationID: iorg, Name: "counter-phone", WalletIDs: []string{w.ID}})
		if err != nil {
			t.Fatal(err)
		}
		// The chain has no balance yet: the message waits for an operator.
		at := time.Now().In(engine.Dhaka).Format("02/01/2006 15:04")
		held, _, err := inbox.Inbox.Ingest(ctx, dev.Device, smsinbox.Incoming{Sender: "bKash", ReceivedAt: time.Now(),
			Body: "Cash Out Tk 500.00 from 01712345678 successful. Fee Tk 0.00. Balance Tk 10,500.00. TrxID 8N7A6D5EE7 at " + at})
		if err != nil || held.Status != smsinbox.StatusHeld {
			t.Fatalf("ingest: %+v %v", held, err)
		}
		row := "#sms-" + held.ID
		b.open(inbox.URL + "/console/sms?status=held")
		b.typeInto(row+" form[action$='/approve'] input[name=reason]", "the phone shows it; balance read from the wallet app")
		saveScreenshot(t, b, shots, "console/sms-held.png")
		b.submit(row + " button.ok")
		if got := b.text("#done"); got == "" {
			t.Fatalf("no confirmation:\n%s", b.text("body"))
		}
		msgs, err := inbox.Inbox.ListSMS(ctx, smsinbox.ListSMSParams{OrganizationID: iorg, Limit: 1})
		if err != nil || len(msgs) != 1 || msgs[0].ID != held.ID || msgs[0].Status != smsinbox.StatusAccepted || msgs[0].ReviewedBy == "" {
			t.Fatalf("after approval: %+v %v", msgs, err)
		}
	})
}

// waitDeposit waits until the running payd's workers bring a deposit to
// status.
func waitDeposit(t *testing.T, ls *paydtest.Server, orgID, id, status string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		d, err := ls.Engine.GetDeposit(context.Background(), orgID, id)
		if err != nil {
			t.Fatal(err)
		}
		if d.Status == status {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("deposit %s is %s, want %s", id, d.Status, status)
		}
	}
}

// sandboxPayment is a payer's cash-out to the wallet recipient, as the
// sandbox records it.
func sandboxPayment(orgID, txID, recipient, amount string) sandbox.PaymentParams {
	return sandbox.PaymentParams{OrganizationID: orgID, Channel: "bkash", TransactionID: txID, PayerPhone: "01712345678",
		RecipientPhone: recipient, Amount: amount, Status: engine.TransactionCompleted, Type: engine.TransactionCashOut}
}
