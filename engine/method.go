package engine

import (
	"slices"
	"strings"
)

// Checkout modes of a deposit.
const (
	CheckoutRedirect = "redirect"
	CheckoutH2H      = "h2h"
)

// Channels: the money networks whose transaction IDs share one namespace.
const (
	ChannelBkash    = "bkash"
	ChannelNagad    = "nagad"
	ChannelUPI      = "upi"
	ChannelUpay     = "upay"
	ChannelBank     = "bank"
	ChannelBanglaQR = "bangla_qr"
	// ChannelRocket is Dutch-Bangla Bank's Rocket: payd's extension of the
	// interface's channels, served by personal wallets (see
	// Method.CheckoutOperation).
	ChannelRocket = "rocket"
)

// Operations a payer performs to pay a receiving wallet.
const (
	OperationCashOut     = "cash_out"
	OperationMakePayment = "make_payment"
	// OperationSendMoney is a personal wallet's: the payer sends money to
	// it, person to person. The interface's display_instructions have no
	// such operation, so a personal wallet serves only the hosted checkout
	// (Method.CheckoutOperation).
	OperationSendMoney = "send_money"
)

// Types of an H2H next_action.
const (
	ActionDisplayInstructions = "display_instructions"
	ActionRedirect            = "redirect"
)

// Method is one payment method: what a deposit or a withdrawal naming it
// as payment_method may do. A zero AmountRange means the method is not
// offered there.
type Method struct {
	// Name is the payment_method value.
	Name string
	// Channel is the network whose transaction IDs the method's payments
	// carry ("bkash_agent" pays on "bkash").
	Channel string
	// Redirect is the amount range of a redirect deposit.
	Redirect AmountRange
	// H2H is the amount range of an H2H deposit; H2HAction the next_action
	// it yields, and Operation what the payer does for display_instructions
	// (the receiving wallet's operation).
	H2H       AmountRange
	H2HAction string
	Operation string
	// Payout is the amount range of a withdrawal.
	Payout AmountRange
	// PayoutToBankAccount: a withdrawal's phone field holds a bank account
	// number, not a mobile number.
	PayoutToBankAccount bool
	// CheckoutOperation is the operation of the receiving wallets that may
	// serve the method's hosted checkout (redirect deposits and H2H
	// redirect actions) when the provider takes payments into the
	// organization's own wallets (Checkout.Operation): personal wallets the
	// payer sends money to. Empty: only a provider's own checkout serves it.
	CheckoutOperation string
	// Extension: payd's own method, beyond the interface's enums; the
	// OpenAPI document marks it so.
	Extension bool
}

// catalog is every payment method, in the order the API documents them.
// It is the one place a method is defined: validation, error messages,
// wallet and sandbox channels, fee settings and CLI help derive from it;
// transport tests hold the OpenAPI enums and the checkout's channel names
// to it (ARCHITECTURE.md, "Add a payment method"). Conformance's model and
// HTTP suite keep their own lists on purpose: they are the oracle.
var catalog = []Method{
	{Name: "bkash", Channel: ChannelBkash, Redirect: newRange(100, 25_000), H2H: newRange(100, 25_000), H2HAction: ActionRedirect, Payout: newRange(100, 25_000), CheckoutOperation: OperationSendMoney},
	{Name: "nagad", Channel: ChannelNagad, Redirect: newRange(100, 25_000), H2H: newRange(100, 25_000), H2HAction: ActionRedirect, Payout: newRange(100, 25_000), CheckoutOperation: OperationSendMoney},
	{Name: "upi", Channel: ChannelUPI, Redirect: newRange(100, 25_000)},
	{Name: "upay", Channel: ChannelUpay, Redirect: newRange(100, 25_000), Payout: newRange(100, 25_000)},
	{Name: "bank", Channel: ChannelBank, Redirect: newRange(25_000, 300_000), Payout: newRange(50_000, 300_000), PayoutToBankAccount: true},
	{Name: "bkash_agent", Channel: ChannelBkash, Redirect: newRange(100, 25_000), H2H: newRange(100, 25_000), H2HAction: ActionDisplayInstructions, Operation: OperationCashOut},
	{Name: "nagad_agent", Channel: ChannelNagad, Redirect: newRange(100, 25_000), H2H: newRange(100, 25_000), H2HAction: ActionDisplayInstructions, Operation: OperationCashOut},
	{Name: "upay_agent", Channel: ChannelUpay, Redirect: newRange(100, 25_000)},
	{Name: "bkash_merchant", Channel: ChannelBkash, Redirect: newRange(100, 25_000), H2H: newRange(100, 25_000), H2HAction: ActionDisplayInstructions, Operation: OperationMakePayment},
	{Name: "nagad_merchant", Channel: ChannelNagad, Redirect: newRange(100, 25_000), H2H: newRange(100, 25_000), H2HAction: ActionDisplayInstructions, Operation: OperationMakePayment},
	{Name: "upay_merchant", Channel: ChannelUpay, Redirect: newRange(100, 25_000)},
	{Name: "bangla_qr_merchant", Channel: ChannelBanglaQR, Redirect: newRange(100, 25_000)},
	// payd's extension of the interface's redirect methods (marked so in
	// the OpenAPI document): Rocket, sent money to a personal wallet.
	{Name: "rocket", Channel: ChannelRocket, Redirect: newRange(100, 25_000), CheckoutOperation: OperationSendMoney, Extension: true},
}

// methodByName indexes the catalog.
var methodByName = func() map[string]Method {
	m := make(map[string]Method, len(catalog))
	for _, c := range catalog {
		m[c.Name] = c
	}
	return m
}()

// Methods returns the catalog, in its order.
func Methods() []Method { return append([]Method(nil), catalog...) }

// LookupMethod returns the method named name.
func LookupMethod(name string) (Method, bool) {
	m, ok := methodByName[name]
	return m, ok
}

// depositRange returns the amount range of a deposit by method in a
// checkout mode; zero when the mode does not offer the method.
func (m Method) depositRange(mode string) AmountRange {
	if mode == CheckoutH2H {
		return m.H2H
	}
	return m.Redirect
}

// IsDeposit reports whether a deposit may name m in some checkout mode.
func (m Method) IsDeposit() bool { return m.Redirect.Offered() || m.H2H.Offered() }

// isDepositMethod reports whether a deposit may name method in some
// checkout mode.
func isDepositMethod(method string) bool { return methodByName[method].IsDeposit() }

// DepositMethods returns the names of the methods a checkout mode offers.
func DepositMethods(mode string) []string {
	return names(func(m Method) []string {
		if m.depositRange(mode).Offered() {
			return []string{m.Name}
		}
		return nil
	})
}

// PayoutMethods returns the names of the methods withdrawals take.
func PayoutMethods() []string {
	return names(func(m Method) []string {
		if m.Payout.Offered() {
			return []string{m.Name}
		}
		return nil
	})
}

// Channels returns every channel of the catalog: those a payment may be
// made on.
func Channels() []string {
	return names(func(m Method) []string { return []string{m.Channel} })
}

// WalletChannels and WalletOperations return what a receiving wallet may
// be: the channels and operations of the display_instructions methods and
// of the methods whose checkout a wallet may serve (CheckoutOperation).
func WalletChannels() []string {
	return names(func(m Method) []string {
		if m.H2HAction == ActionDisplayInstructions || m.CheckoutOperation != "" {
			return []string{m.Channel}
		}
		return nil
	})
}

// WalletOperations returns the operations a receiving wallet may have (see
// WalletChannels).
func WalletOperations() []string {
	ops := InstructionOperations()
	for _, op := range names(func(m Method) []string { return []string{m.CheckoutOperation} }) {
		if op != "" && !slices.Contains(ops, op) {
			ops = append(ops, op)
		}
	}
	return ops
}

// InstructionChannels and InstructionOperations return the channels and
// operations a display_instructions next_action may name: the interface's
// enums, which the wallets of a hosted checkout do not extend.
func InstructionChannels() []string {
	return names(func(m Method) []string {
		if m.H2HAction == ActionDisplayInstructions {
			return []string{m.Channel}
		}
		return nil
	})
}

// InstructionOperations: see InstructionChannels.
func InstructionOperations() []string {
	return names(func(m Method) []string {
		if m.H2HAction == ActionDisplayInstructions {
			return []string{m.Operation}
		}
		return nil
	})
}

// names collects what pick yields for each method, in catalog order,
// without repeats.
func names(pick func(Method) []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range catalog {
		for _, n := range pick(m) {
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	return out
}

// OneOf renders the values an error message names: "a or b", or
// "one of a, b, c".
func OneOf(values []string) string {
	if len(values) == 2 {
		return values[0] + " or " + values[1]
	}
	return "one of " + strings.Join(values, ", ")
}
