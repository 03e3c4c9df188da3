package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydtest"
	"github.com/payd-engine/payd/provider/smsinbox"
	"github.com/payd-engine/payd/transport/client"
)

// TestBrowserPersonalWalletCheckout: in Chromium, a payer on the checkout
// of a personal bKash wallet reads "Send Money to 01X…", types the number
// they sent from and the transaction ID, and the page, refreshing itself
// while verification runs, ends on "Payment received" once the wallet's
// SMS proves the send. It skips when Chromium or ChromeDriver is not
// installed.
func TestBrowserPersonalWalletCheckout(t *testing.T) {
	chromium, driver := findBrowser(t)
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	ls := paydtest.MustRunMain(t, paydtest.WithSMSInbox(smsinbox.Config{}))
	ctx := context.Background()
	creds, err := ls.Engine.CreateOrganization(ctx, engine.OrganizationSettings{Name: ptr("Personal Shop")})
	if err != nil {
		t.Fatal(err)
	}
	org := creds.Organization.ID
	w, err := ls.Engine.AddWallet(ctx, engine.AddWalletParams{OrganizationID: org, Channel: "bkash", Operation: engine.OperationSendMoney, Phone: "01811111111", Name: "Rahim Store"})
	if err != nil {
		t.Fatal(err)
	}
	dev, err := ls.Inbox.AddDevice(ctx, smsinbox.AddDeviceParams{OrganizationID: org, Name: "shop phone", WalletIDs: []string{w.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ls.Inbox.Heartbeat(ctx, dev.Device); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ls.Inbox.Anchor(ctx, org, w.ID, decimal.RequireFromString("1000")); err != nil {
		t.Fatal(err)
	}
	api := client.New(ls.URL+"/api", creds.APIKey.APIKey, creds.APIKey.SigningSecret)
	dep, err := api.CreateRedirectDeposit(ctx, client.RedirectDepositRequest{
		Amount: "500", PaymentMethod: "bkash", RedirectURL: "https://shop.example/return", MerchantID: "browser-personal-1",
	})
	if err != nil {
		t.Fatal(err)
	}
	b := startBrowser(t, chromium, driver)
	b.open(*dep.RedirectURL)
	if got := b.text("#operation"); got != "Send Money" {
		t.Fatalf("operation shown: %q", got)
	}
	if got := b.text("#recipient"); got != "01811111111" {
		t.Fatalf("recipient shown: %q", got)
	}
	// The payer sends the money; the phone forwards the wallet's SMS.
	at := time.Now().In(engine.Dhaka).Format("02/01/2006 15:04")
	if _, _, err := ls.Inbox.Ingest(ctx, dev.Device, smsinbox.Incoming{Sender: "bKash", Body: fmt.Sprintf(
		"You have received Tk 500.00 from 01712345678. Fee Tk 0.00. Balance Tk 1,500.00. TrxID BRW0000001 at %s", at)}); err != nil {
		t.Fatal(err)
	}
	b.typeInto("#payer_phone", "01712345678")
	b.typeInto("#transaction_id", "BRW0000001")
	b.submit("#verify")
	b.waitFor(`#outcome.outcome-succeeded`, 20*time.Second)
	if !b.hasText("Payment received") || !strings.Contains(b.text("#paid-txid"), "BRW0000001") {
		t.Fatalf("succeeded page:\n%s", b.text("body"))
	}
}
