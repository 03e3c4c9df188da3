package engine

// Checkout modes of a deposit.
const (
	CheckoutRedirect = "redirect"
	CheckoutH2H      = "h2h"
)

// Channels: the money networks whose transaction IDs share one namespace.
const (
	ChannelBkash = "bkash"
	ChannelNagad = "nagad"
)

// Operations a payer performs to pay a receiving wallet.
const (
	OperationCashOut     = "cash_out"
	OperationMakePayment = "make_payment"
)

// Types of an H2H next_action.
const (
	ActionDisplayInstructions = "display_instructions"
	ActionRedirect            = "redirect"
)

// redirectMethods are the PaymentMethod values of redirect deposits, each
// with its amount range and the channel its transaction IDs belong to.
var redirectMethods = map[string]struct {
	limits  amountRange
	channel string
}{
	"bkash":              {newRange(100, 25_000), "bkash"},
	"nagad":              {newRange(100, 25_000), "nagad"},
	"upi":                {newRange(100, 25_000), "upi"},
	"upay":               {newRange(100, 25_000), "upay"},
	"bank":               {newRange(25_000, 300_000), "bank"},
	"bkash_agent":        {newRange(100, 25_000), "bkash"},
	"nagad_agent":        {newRange(100, 25_000), "nagad"},
	"upay_agent":         {newRange(100, 25_000), "upay"},
	"bkash_merchant":     {newRange(100, 25_000), "bkash"},
	"nagad_merchant":     {newRange(100, 25_000), "nagad"},
	"upay_merchant":      {newRange(100, 25_000), "upay"},
	"bangla_qr_merchant": {newRange(100, 25_000), "bangla_qr"},
}

// h2hMethod is what an H2H payment method yields: the contract's default
// provider mapping.
type h2hMethod struct {
	action    string
	channel   string
	operation string // display_instructions only
}

var h2hMethods = map[string]h2hMethod{
	"bkash":          {ActionRedirect, ChannelBkash, ""},
	"nagad":          {ActionRedirect, ChannelNagad, ""},
	"bkash_agent":    {ActionDisplayInstructions, ChannelBkash, OperationCashOut},
	"nagad_agent":    {ActionDisplayInstructions, ChannelNagad, OperationCashOut},
	"bkash_merchant": {ActionDisplayInstructions, ChannelBkash, OperationMakePayment},
	"nagad_merchant": {ActionDisplayInstructions, ChannelNagad, OperationMakePayment},
}

var h2hLimits = newRange(100, 25_000)

// MethodChannel returns the channel whose transaction IDs a payment method's
// payments carry ("bkash_agent" -> "bkash").
func MethodChannel(method string) string { return redirectMethods[method].channel }
