package smsinbox_test

import (
	"testing"

	"github.com/payd-engine/payd/engine"
)

// TestPaymentLinkHoldsOneWallet: whoever holds a payment link's URL and
// switches between bKash and Nagad again and again holds at most one
// personal wallet's reservation, not one per switch, so the wallets' daily
// limits still take the organization's real payers. Each superseded
// checkout is cancelled, which frees its share of the limit as an expiry
// would.
func TestPaymentLinkHoldsOneWallet(t *testing.T) {
	onBothStoresPersonal(t, func(t *testing.T, f *personalFixture) {
		s := f.newShop(shopPhones)
		for _, ch := range []string{"bkash", "nagad"} {
			if _, err := f.eng.SetWalletLimits(f.ctx, s.org, s.wallets[ch].ID, engine.WalletLimits{DailyLimit: "1500"}); err != nil {
				t.Fatal(err)
			}
		}
		link, err := f.eng.CreatePaymentLink(f.ctx, s.org, "600", "")
		if err != nil {
			t.Fatal(err)
		}
		for i := range 10 {
			m := []string{"bkash", "nagad"}[i%2]
			d, err := f.eng.PayPaymentLink(f.ctx, engine.PayPaymentLinkParams{Token: link.Token, PaymentMethod: m, ReturnURL: "https://pay.example/pay/" + link.Token})
			if err != nil {
				t.Fatalf("switch %d to %s: %v", i, m, err)
			}
			if d.WalletID != s.wallets[m].ID {
				t.Fatalf("switch %d: the %s checkout has wallet %q", i, m, d.WalletID)
			}
		}
		// The organization's real payers: 600 more on each wallet is within
		// 1,500 beside the one checkout the link holds.
		for _, m := range []string{"bkash", "nagad"} {
			f.seq++
			if _, _, err := f.eng.CreateDeposit(f.ctx, engine.CreateDepositParams{
				OrganizationID: s.org, Amount: "600", PaymentMethod: m, RedirectURL: "https://shop.example/r",
				MerchantID: "real-" + m,
			}); err != nil {
				t.Fatalf("a real payer's %s deposit: %v", m, err)
			}
		}
	})
}
