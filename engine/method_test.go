package engine

import (
	"slices"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

// TestCatalogIsWellFormed: each method is defined once, pays on a channel,
// is offered somewhere, and says what an H2H deposit by it yields exactly
// when H2H offers it.
func TestCatalogIsWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range Methods() {
		if m.Name == "" || seen[m.Name] {
			t.Errorf("method %q: empty or defined twice", m.Name)
		}
		seen[m.Name] = true
		if m.Channel == "" {
			t.Errorf("%s: no channel", m.Name)
		}
		if !m.Redirect.Offered() && !m.H2H.Offered() && !m.Payout.Offered() {
			t.Errorf("%s: offered nowhere", m.Name)
		}
		for what, r := range map[string]AmountRange{"redirect": m.Redirect, "h2h": m.H2H, "payout": m.Payout} {
			if r.Offered() && (!r.Min.IsPositive() || r.Min.GreaterThan(r.Max)) {
				t.Errorf("%s: %s range %s..%s", m.Name, what, r.Min, r.Max)
			}
		}
		switch {
		case !m.H2H.Offered() && (m.H2HAction != "" || m.Operation != ""):
			t.Errorf("%s: an H2H action or operation without an H2H range", m.Name)
		case m.H2H.Offered() && m.H2HAction != ActionRedirect && m.H2HAction != ActionDisplayInstructions:
			t.Errorf("%s: H2H action %q", m.Name, m.H2HAction)
		case (m.H2HAction == ActionDisplayInstructions) != (m.Operation != ""):
			t.Errorf("%s: an operation is what a display_instructions method, and only it, has", m.Name)
		}
		if m.CheckoutOperation != "" && (!m.Redirect.Offered() || m.H2H.Offered() && m.H2HAction != ActionRedirect) {
			t.Errorf("%s: a wallet serves its checkout, but it has one only for redirect actions", m.Name)
		}
		if m.CheckoutOperation != "" && slices.Contains(InstructionOperations(), m.CheckoutOperation) {
			t.Errorf("%s: its checkout's wallets would be drawn from the display_instructions pool %s", m.Name, m.CheckoutOperation)
		}
		if m.PayoutToBankAccount && !m.Payout.Offered() {
			t.Errorf("%s: pays out to a bank account but is no payout method", m.Name)
		}
	}
}

// TestValidationFollowsTheCatalog: every method a list names is accepted
// at both ends of its range, refused just outside it, and an unknown
// method's error names the whole list.
func TestValidationFollowsTheCatalog(t *testing.T) {
	oneCent := decimal.New(1, -2)
	cent := func(r AmountRange, outside bool) (lo, hi string) {
		if outside {
			return r.Min.Sub(oneCent).StringFixed(2), r.Max.Add(oneCent).StringFixed(2)
		}
		return r.Min.StringFixed(2), r.Max.StringFixed(2)
	}
	deposit := func(mode, method, amount string) error {
		_, err := CreateDepositParams{
			CheckoutMode: mode, Amount: amount, PaymentMethod: method, RedirectURL: "https://shop.example/r",
			MerchantID: "m", PayerPhone: "01712345678",
		}.validate()
		return err
	}
	payout := func(_, method, amount string) error {
		phone := "01712345678"
		if m, _ := LookupMethod(method); m.PayoutToBankAccount {
			phone = "1234567890"
		}
		_, err := CreateWithdrawalParams{Amount: amount, Phone: phone, PaymentMethod: method, MerchantID: "m"}.validate()
		return err
	}
	for _, c := range []struct {
		mode    string
		methods []string
		rangeOf func(Method) AmountRange
		create  func(mode, method, amount string) error
	}{
		{CheckoutRedirect, DepositMethods(CheckoutRedirect), func(m Method) AmountRange { return m.Redirect }, deposit},
		{CheckoutH2H, DepositMethods(CheckoutH2H), func(m Method) AmountRange { return m.H2H }, deposit},
		{"payout", PayoutMethods(), func(m Method) AmountRange { return m.Payout }, payout},
	} {
		if len(c.methods) == 0 {
			t.Fatalf("%s: no methods", c.mode)
		}
		for _, name := range c.methods {
			m, _ := LookupMethod(name)
			lo, hi := cent(c.rangeOf(m), false)
			for _, a := range []string{lo, hi} {
				if err := c.create(c.mode, name, a); err != nil {
					t.Errorf("%s %s %s: %v", c.mode, name, a, err)
				}
			}
			lo, hi = cent(c.rangeOf(m), true)
			for _, a := range []string{lo, hi} {
				if err := c.create(c.mode, name, a); err == nil || !strings.Contains(err.Error(), "amount: ") {
					t.Errorf("%s %s %s: %v, want an amount error", c.mode, name, a, err)
				}
			}
		}
		err := c.create(c.mode, "rocket_unknown", "1000")
		if want := "payment_method: must be one of " + strings.Join(c.methods, ", "); err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("%s unknown method: %v, want %q", c.mode, err, want)
		}
		for _, m := range Methods() {
			if !slices.Contains(c.methods, m.Name) && c.create(c.mode, m.Name, "1000") == nil {
				t.Errorf("%s accepts %s, which it does not list", c.mode, m.Name)
			}
		}
	}
}

// TestWalletsAndInstructions: a receiving wallet may be any operation of
// the catalog, but a display_instructions action names only the
// interface's channels and operations: the wallets of a hosted checkout
// (personal wallets, Rocket) never reach it.
func TestWalletsAndInstructions(t *testing.T) {
	for _, c := range []struct {
		got, want []string
	}{
		{InstructionChannels(), []string{ChannelBkash, ChannelNagad}},
		{InstructionOperations(), []string{OperationCashOut, OperationMakePayment}},
		{WalletChannels(), []string{ChannelBkash, ChannelNagad, ChannelRocket}},
		{WalletOperations(), []string{OperationCashOut, OperationMakePayment, OperationSendMoney}},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("got %v, want %v", c.got, c.want)
		}
	}
	for _, m := range Methods() {
		if m.Extension && (m.H2H.Offered() || m.Payout.Offered()) {
			t.Errorf("%s: an extension method offered beyond redirect deposits", m.Name)
		}
	}
}
