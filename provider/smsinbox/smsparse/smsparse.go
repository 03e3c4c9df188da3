package smsparse

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// Channels: the wallet a message comes from, decided by its sender ID.
const (
	ChannelBkash  = "bkash"
	ChannelNagad  = "nagad"
	ChannelUpay   = "upay"
	ChannelRocket = "rocket"
)

// Kinds of transaction. The first four are what a deposit can be; the other
// credits and the debits are parsed so that a chain of balances can continue
// across every message the wallet receives.
const (
	KindMoneyReceived   = "money_received"    // credit: P2P send money in
	KindCashIn          = "cash_in"           // credit: an agent cashed in to this wallet
	KindPaymentReceived = "payment_received"  // credit: a customer paid this merchant wallet
	KindCashOutReceived = "cash_out_received" // credit: a customer cashed out at this agent wallet
	KindB2BReceived     = "b2b_received"      // credit: another agent wallet transferred float to this one
	KindAddMoney        = "add_money"         // credit: the owner added money from a bank account
	KindCashback        = "cashback"          // credit: the wallet operator paid a cashback
	KindRefund          = "refund"            // credit: a merchant refunded, or a failed transaction returned, money
	KindLoanReceived    = "loan_received"     // credit: a lender disbursed a loan into the wallet
	KindInterest        = "interest"          // credit: the wallet operator paid interest
	KindCommission      = "commission"        // credit: a commission paid into the wallet as its own transaction
	KindReserveReleased = "reserve_released"  // credit: an amount reserved for a payment was released

	KindSendMoney      = "send_money"       // debit
	KindCashOut        = "cash_out"         // debit: the owner cashed out at an agent
	KindPayment        = "payment"          // debit: the owner paid a merchant
	KindPaymentReserve = "payment_reserved" // debit: an amount set aside for a merchant's later payment
	KindSavingsDeposit = "savings_deposit"  // debit: an instalment paid into a savings scheme
	KindMobileRecharge = "mobile_recharge"  // debit: airtime bought for a phone number
	KindB2BTransfer    = "b2b_transfer"     // debit: this agent wallet transferred float to another
	KindCashInSent     = "cash_in_sent"     // debit: this agent wallet cashed in to a customer
)

// credits says, for every kind, whether it adds to the wallet.
var credits = map[string]bool{
	KindMoneyReceived:   true,
	KindCashIn:          true,
	KindPaymentReceived: true,
	KindCashOutReceived: true,
	KindB2BReceived:     true,
	KindAddMoney:        true,
	KindCashback:        true,
	KindRefund:          true,
	KindLoanReceived:    true,
	KindInterest:        true,
	KindCommission:      true,
	KindReserveReleased: true,
	KindSendMoney:       false,
	KindCashOut:         false,
	KindPayment:         false,
	KindPaymentReserve:  false,
	KindSavingsDeposit:  false,
	KindMobileRecharge:  false,
	KindB2BTransfer:     false,
	KindCashInSent:      false,
}

// Message is one transaction SMS, parsed.
type Message struct {
	Channel       string
	Kind          string
	Credit        bool
	Amount        decimal.Decimal // positive, at most two decimals
	Fee           decimal.Decimal // charged to this wallet; zero if the message has none
	Commission    decimal.Decimal // earned by this wallet; zero if the message has none
	Counterparty  string          // 01XXXXXXXXX, or "" when the message names no number
	Account       string          // Rocket: the other side's account as printed, masked ("***946") or whole; "" elsewhere
	TransactionID string          // upper case, as printed
	Time          time.Time       // the message's own time in the Dhaka zone: its minute (seconds zero), or for Rocket its second
	Balance       decimal.Decimal // the wallet's balance after this transaction
	Reference     string          // "" if absent or "N/A"
}

// Delta is the change this transaction made to the wallet's balance:
// +Amount+Commission-Fee for a credit, -(Amount+Fee)+Commission for a debit.
//
// The fee is charged on top of the amount (bKash's "Send Money Tk 510.00 …
// Fee Tk 5.00"), so it always lowers the balance. The commission is counted
// as credited with the transaction: Nagad and Upay print it between the
// amount and the new balance of the agent's own cash-in and cash-out
// messages. That it lands in the same balance at that instant is not
// confirmed by a pair of consecutive real messages, and Upay's commission
// has more than two decimals ("Comm: TK. 0.61425") while balances have two,
// so a balance chain should tolerate the commission arriving later or
// rounded. bKash agent messages print no commission (bKash pays it
// separately), so it is zero there.
func (m *Message) Delta() decimal.Decimal {
	if m.Credit {
		return m.Amount.Add(m.Commission).Sub(m.Fee)
	}
	return m.Amount.Add(m.Fee).Neg().Add(m.Commission)
}

// senders is the whitelist of sender IDs, lower case. bKash sends from
// "bKash" and its short code 16247, Nagad from "NAGAD" (some phones show
// "Nagad") and 16167, Upay from "upay"; 16268 is Upay's short code, listed
// as a sender by other gateways but not seen on a captured message. Rocket
// (Dutch-Bangla Bank) sends every transaction message from 16216.
var senders = map[string]string{
	"bkash": ChannelBkash,
	"16247": ChannelBkash,
	"nagad": ChannelNagad,
	"16167": ChannelNagad,
	"upay":  ChannelUpay,
	"16268": ChannelUpay,
	"16216": ChannelRocket,
}

// ChannelOf reports which channel a sender ID belongs to, from a whitelist of
// the wallets' real sender IDs: "bKash" and "16247" for bKash, "NAGAD" and
// "16167" for Nagad, "upay" and "16268" for Upay, "16216" for Rocket,
// compared case-insensitively after trimming spaces. ok is false for any
// other sender, including phone numbers, which anyone can send from.
func ChannelOf(sender string) (channel string, ok bool) {
	channel, ok = senders[strings.ToLower(strings.TrimSpace(sender))]
	return channel, ok
}

// Errors returned by Parse.
var (
	ErrUntrustedSender = errors.New("sender is not a whitelisted wallet sender")
	ErrUnknownFormat   = errors.New("unknown message format")
)

// unknown returns an error wrapping ErrUnknownFormat with a short reason.
func unknown(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnknownFormat, fmt.Sprintf(format, args...))
}

// Parse parses an SMS body from sender. It returns ErrUntrustedSender for a
// sender off the whitelist and an error wrapping ErrUnknownFormat (with a
// short reason) for anything it does not recognize completely: promotional
// texts, OTPs, failed-transaction notices, a message missing the balance or
// transaction ID, a malformed amount or date, another channel's format, or a
// real message with text around it that real messages do not carry.
// Whitespace and line-break variations and CRLF are tolerated.
func Parse(sender, body string) (*Message, error) {
	channel, ok := ChannelOf(sender)
	if !ok {
		return nil, ErrUntrustedSender
	}
	text := normalize(body)
	if text == "" {
		return nil, unknown("empty body")
	}

	var found *format
	var groups []string
	for _, f := range formats {
		if f.channel != channel {
			continue
		}
		g := f.re.FindStringSubmatch(text)
		if g == nil {
			continue
		}
		if found != nil {
			// The formats are written so that this cannot happen; if it
			// ever does, refusing is the only answer that is not a guess.
			return nil, unknown("matches both %s %s and %s", channel, found.kind, f.kind)
		}
		found, groups = f, g
	}
	if found == nil {
		for _, f := range formats {
			if f.channel != channel && f.re.MatchString(text) {
				return nil, unknown("body is a %s %s message but the sender is %s's", f.channel, f.kind, channel)
			}
		}
		return nil, unknown("matches no %s message format", channel)
	}
	m, err := found.message(groups)
	if err != nil {
		return nil, unknown("%s %s: %v", channel, found.kind, err)
	}
	return m, nil
}

// normalize makes line endings and spaces uniform: CRLF and CR become LF, a
// non-breaking space becomes a space, and the ends are trimmed.
func normalize(body string) string {
	body = strings.ReplaceAll(body, "\r\n", "\n")
	body = strings.ReplaceAll(body, "\r", "\n")
	body = strings.ReplaceAll(body, "\u00a0", " ")
	return strings.TrimSpace(body)
}
