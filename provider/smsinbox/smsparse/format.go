package smsparse

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/shopspring/decimal"
)

// A format is one message format of one channel: a template of the exact
// wording with {slots} for the fields, compiled to a regular expression
// anchored at both ends of the (normalized) body.
type format struct {
	channel string
	kind    string
	tmpl    string
	re      *regexp.Regexp
}

// num is the shape of a printed amount. It is deliberately loose, so that a
// malformed amount ("5,00.00", "04.10") is reported as such by parseAmount
// instead of as an unknown format.
const num = `[0-9][0-9,]*(?:\.[0-9]+)?`

// ref is a sender's free-text reference. It may not contain a full stop or
// colon, so that it can never run on into the fields that follow it (or into
// a second message glued to the first); a message whose reference has one is
// refused rather than guessed at. Real references are short words and
// numbers ("Rent", "2", "jazakallah vai", "N/A"); their length is capped
// (maxReference) once their spacing is collapsed, so that the cap does not
// depend on how a phone spaces the text.
const ref = `(?P<ref>[^\n.:]*?)`

// slots are what a {name} in a template stands for. A slot that captures
// does so in a named group read by format.message: amount, fee, comm,
// balance, phone (a number), name (a counterparty printed as a name, which
// yields no Counterparty), id, time and ref.
var slots = map[string]string{
	"amount":  `(?P<amount>` + num + `)`,
	"fee":     `(?P<fee>` + num + `)`,
	"comm":    `(?P<comm>` + num + `)`,
	"balance": `(?P<balance>` + num + `)`,
	"phone":   `(?P<phone>\+?[0-9]+)`,
	"id":      `(?P<id>\S+)`,
	"time":    `(?P<time>[0-9]+/[0-9]+/[0-9]+\s+[0-9]+:[0-9]+)`,

	// bKash. The sender of a P2P transfer is a number, or the name of an
	// organisation paying out ("from OnnorokomWeb").
	"bk-party": `(?:(?P<phone>\+?[0-9]+)|(?P<name>[A-Za-z][0-9A-Za-z&'_-]*(?:[ \t]+[0-9A-Za-z&'_-]+)*))`,
	// A bank or card a deposit comes from: words without digits, which may
	// run over a sentence break ("Eastern Bank PLC. Internet Banking"); with
	// no digits in it, it can never swallow the "Fee Tk 0.00" that follows.
	"bk-bank": `(?P<name>[A-Za-z&'()_-]+(?:(?:[ \t]+|\.[ \t]+)[A-Za-z&'()_-]+)*)`,
	// An organisation paying a commission ("DM1472").
	"bk-org": `(?P<name>[A-Za-z][0-9A-Za-z_-]*)`,
	// The sender's optional reference: ". Ref Rent", ".Ref jazakallah vai",
	// or an empty ". Ref " / ".Ref ".
	"bk-ref": `(?:\.\s*Ref(?:[ \t]+` + ref + `)?)?`,
	// Received money from a number carries "Fee Tk 0.00."; from a name it
	// does not.
	"bk-fee?":  `(?:Fee\s*Tk\s*(?P<fee>` + num + `)\.\s*)?`,
	"bk-of?":   `(?:of\s+)?`,
	"bk-depof": `(?:(?:a\s+)?deposit\s+of|deposit\s+from\s+iBanking\s+of)`,
	// A merchant's name is part of one sentence: it may contain a dot
	// inside a word ("Chaldal.com") or end with one ("Ltd."), never a
	// sentence break.
	"bk-merchant": `(?P<name>(?:[^\n.]|\.[^\s.])+?\.?)`,
	// What may follow the time: a full stop, or a full stop and one of the
	// sentences seen after it on real messages. Any other text is refused.
	"bk-end": `(?:\.(?:\s*(?:` + strings.Join([]string{
		`Download\s+App:\s*https://bKa\.sh/8app`,
		`Mobile\s+Recharge\s+bKash\s+korun\.`,
		`Cashback\s+on\s+bkash\s+transaction`,
		`Cashback\s+on\s+Loan!`,
		`Helpline\s+16247`,
	}, "|") + `))?)?`,

	// Nagad.
	"ng-promotion": `(?:WIN\s+LAND\s+IN\s+DHAKA!\s+CLICK\s+NOW\s+nagad\.io/[0-9A-Za-z]+\s+)?`,
	"ng-amount":    `(?:Amount|Amt):\s*Tk\s*(?P<amount>` + num + `)`,
	"ng-balance":   `(?:Balance|Bal):\s*(?:T[Kk]\s*)?(?P<balance>` + num + `)`,
	"ng-ref":       `(?:\s+Ref:[ \t]*` + ref + `)?`,
	"ng-merchant":  `(?P<name>[^'\n]+)`,
	"ng-bank":      `(?P<name>[^\n:]+?)`,
	"ng-from":      `(?P<name>[^\n:]+?)`,

	// Upay.
	"up-ref": ref,
	"up-dot": `\.?`,

	// Rocket. Figures follow "Tk" with no space, sometimes after a full
	// stop ("Tk.20.00", "Tk.00"); parseRocketAmount reads them.
	"rk-amount":  `(?P<amount>` + rnum + `)`,
	"rk-fee":     `(?P<fee>` + rnum + `)`,
	"rk-comm":    `(?P<comm>` + rnum + `)`,
	"rk-balance": `(?P<balance>` + rnum + `)`,
	"rk-account": `(?P<account>[*0-9]+)`,
	"rk-time":    `(?P<time>[0-9]+-[A-Za-z]+-[0-9]+\s+[0-9]+:[0-9]+:[0-9]+\s*[A-Za-z]+)`,
	// The old layout's ", Your A/C Balance: Tk…" or the new one's "NetBal: Tk…".
	"rk-bal": `(?:,\s*Your\s+A/C\s+Balance:|\s*NetBal:)\s*Tk(?P<balance>` + rnum + `)`,
	// The new layout's reference, "Ref No: NA" for none.
	"rk-refno": `(?:\s+Ref\s+No:[ \t]*` + ref + `)?`,
	// The balance and "TxnId" are parted by a space or a full stop.
	"rk-txn":  `(?:\.\s*|\s+)TxnId:\s*`,
	"rk-b2c?": `(?:B2C:\s*)?`,
	// What may follow the time: a full stop, or one and the sentence seen
	// after it on real messages.
	"rk-end": `(?:\.(?:\s*(?:Download\s+https://bit\.ly/nexuspay|Don't\s+share\s+your\s+PIN\s+with\s+anybody))?)?`,
}

// rnum is the shape of an amount Rocket prints: like num, but a comma only
// between digits (Rocket puts one after the fee: "Fee:Tk0, Your A/C"), and
// an optional full stop in front.
const rnum = `\.?[0-9]+(?:,[0-9]+)*(?:\.[0-9]+)?`

// bKash messages are one line of sentences; the time closes the message,
// optionally followed by a full stop or one of the promotions seen on real
// messages.
const bkashTail = ` TrxID {id} at {time}{bk-end}`

// Rocket messages close with the transaction ID and the time.
const rocketTail = `{rk-txn}{id} Date: {rk-time}{rk-end}`

// formats are all the formats Parse accepts. The sources of each are named
// in fixtures_test.go, which has at least one real message per format.
var formats = compileFormats([]format{
	// bKash credits.
	{channel: ChannelBkash, kind: KindMoneyReceived, tmpl: `You have received Tk {amount} from {bk-party}{bk-ref}. {bk-fee?}Balance Tk {balance}.` + bkashTail},
	{channel: ChannelBkash, kind: KindPaymentReceived, tmpl: `You have received payment Tk {amount} from {phone}{bk-ref}. Fee Tk {fee}. Balance Tk {balance}.` + bkashTail},
	{channel: ChannelBkash, kind: KindCashIn, tmpl: `Cash In Tk {amount} from {phone} successful. Fee Tk {fee}. Balance Tk {balance}.` + bkashTail},
	{channel: ChannelBkash, kind: KindCashOutReceived, tmpl: `Cash Out Tk {amount} from {phone} successful. Fee Tk {fee}. Balance Tk {balance}.` + bkashTail},
	{channel: ChannelBkash, kind: KindAddMoney, tmpl: `You have received {bk-depof} Tk {amount} from {bk-bank}. Fee Tk {fee}. Balance Tk {balance}.` + bkashTail},
	{channel: ChannelBkash, kind: KindCashback, tmpl: `Congratulations! You have received Cashback Tk {amount}. Balance Tk {balance}.` + bkashTail},
	{channel: ChannelBkash, kind: KindCommission, tmpl: `You have received Tk {amount} as Commission from {bk-org}. Fee Tk {fee}. Balance Tk {balance}.` + bkashTail},
	{channel: ChannelBkash, kind: KindLoanReceived, tmpl: `You have received Digital Loan Tk {amount} from {bk-bank}. Balance Tk {balance}.` + bkashTail},
	{channel: ChannelBkash, kind: KindInterest, tmpl: `Apni bKash-e Tk {amount} Interest peyechhen. Fee Tk {fee}. Balance Tk {balance}.` + bkashTail},
	{channel: ChannelBkash, kind: KindRefund, tmpl: `Mobile Recharge request has failed. Tk {amount} returned to your bKash Account. Balance Tk {balance}.` + bkashTail},
	{channel: ChannelBkash, kind: KindRefund, tmpl: `Sorry, your Send Money request to {phone} is unsuccessful! Tk {amount} has been returned. Balance Tk {balance}.` + bkashTail},
	{channel: ChannelBkash, kind: KindReserveReleased, tmpl: `Reserved amount Tk {amount} for {bk-merchant} has been released. Balance Tk {balance}.` + bkashTail},

	// bKash debits.
	{channel: ChannelBkash, kind: KindSendMoney, tmpl: `Send Money Tk {amount} to {phone} successful{bk-ref}. Fee Tk {fee}. Balance Tk {balance}.` + bkashTail},
	{channel: ChannelBkash, kind: KindCashOut, tmpl: `Cash Out Tk {amount} to {phone} successful. Fee Tk {fee}. Balance Tk {balance}.` + bkashTail},
	{channel: ChannelBkash, kind: KindPayment, tmpl: `Payment {bk-of?}Tk {amount} to {bk-merchant} is successful. Balance Tk {balance}.` + bkashTail},
	{channel: ChannelBkash, kind: KindPaymentReserve, tmpl: `Payment of Tk {amount} is being reserved for {bk-merchant}. Balance Tk {balance}.` + bkashTail},
	{channel: ChannelBkash, kind: KindSavingsDeposit, tmpl: `Savings Deposit Payment Tk {amount} to {bk-merchant} is successful. Balance Tk {balance}.` + bkashTail},
	{channel: ChannelBkash, kind: KindMobileRecharge, tmpl: `Received Recharge request of Tk {amount} for {phone}. Fee Tk {fee}. Balance Tk {balance}. TrxID {id} at {time}. Wait for confirmation.`},
	{channel: ChannelBkash, kind: KindB2BTransfer, tmpl: `B2B Transfer Tk {amount} to {phone} successful. Fee Tk {fee}. Balance Tk {balance}.` + bkashTail},
	{channel: ChannelBkash, kind: KindCashInSent, tmpl: `Cash In Tk {amount} to {phone} successful. Fee Tk {fee}. Balance Tk {balance}.` + bkashTail},

	// Nagad credits: a header line, then one field per line, the time last.
	{channel: ChannelNagad, kind: KindMoneyReceived, tmpl: `{ng-promotion}Money Received. {ng-amount} Sender: {phone}{ng-ref} TxnID: {id} {ng-balance} {time}`},
	{channel: ChannelNagad, kind: KindCashIn, tmpl: `{ng-promotion}Cash In Received. {ng-amount} Uddokta: {phone} TxnID: {id} {ng-balance} {time}`},
	{channel: ChannelNagad, kind: KindPaymentReceived, tmpl: `{ng-promotion}Payment Received. {ng-amount} Customer: {phone} TxnID: {id} {ng-balance} {time}`},
	{channel: ChannelNagad, kind: KindCashOutReceived, tmpl: `{ng-promotion}Cash Out Received. {ng-amount} Customer: {phone} TxnID: {id} Comm: Tk {comm} {ng-balance} {time}`},
	{channel: ChannelNagad, kind: KindB2BReceived, tmpl: `{ng-promotion}B2B Received. {ng-amount} Sender: {phone} TxnID: {id} {ng-balance} {time}`},
	{channel: ChannelNagad, kind: KindAddMoney, tmpl: `{ng-promotion}Add Money from Bank is Successful. From: {ng-bank} {ng-amount} TxnID: {id} {ng-balance} {time}`},
	{channel: ChannelNagad, kind: KindRefund, tmpl: `{ng-promotion}Refund from {ng-from} {ng-amount} TrnxID: {id} {ng-balance} {time}`},

	// Nagad debits.
	{channel: ChannelNagad, kind: KindPayment, tmpl: `{ng-promotion}Payment to '{ng-merchant}' is Successful. {ng-amount} TxnID: {id} {ng-balance} {time}`},
	{channel: ChannelNagad, kind: KindMobileRecharge, tmpl: `{ng-promotion}Mobile Recharge Successful. {ng-amount} Mobile: {phone} TxnID: {id} {ng-balance} {time}`},
	{channel: ChannelNagad, kind: KindB2BTransfer, tmpl: `{ng-promotion}B2B Transfer Successful. {ng-amount} Receiver: {phone} TxnID: {id} {ng-balance} {time}`},
	{channel: ChannelNagad, kind: KindCashInSent, tmpl: `{ng-promotion}Cash In Successful. {ng-amount} Customer: {phone} TxnID: {id} Comm: Tk {comm} {ng-balance} {time}`},

	// Upay credits.
	{channel: ChannelUpay, kind: KindMoneyReceived, tmpl: `Tk. {amount} has been received from {phone}. Ref-{up-ref}. Balance Tk. {balance}. TrxID {id} at {time}{up-dot}`},
	{channel: ChannelUpay, kind: KindCashOutReceived, tmpl: `You have received Cash-out of Tk. {amount} from {phone}. Comm: TK. {comm}. Balance Tk. {balance}. TrxID {id} at {time}{up-dot}`},

	// Rocket credits, old layout ("Fee:Tk0, Your A/C Balance: Tk…") and new
	// ("Ref No: NA Fee: Tk.00 NetBal: Tk…").
	{channel: ChannelRocket, kind: KindMoneyReceived, tmpl: `Tk{rk-amount} received from A/C: {rk-account}{rk-refno} Fee: Tk{rk-fee}{rk-bal}` + rocketTail},
	{channel: ChannelRocket, kind: KindAddMoney, tmpl: `Tk{rk-amount} received from Other Bank A/C: {rk-account}{rk-refno} Fee: Tk{rk-fee}{rk-bal}` + rocketTail},
	{channel: ChannelRocket, kind: KindCashIn, tmpl: `Cash-In from A/C: {rk-account} Tk{rk-amount} Fee: Tk{rk-fee}, Your A/C Balance: Tk{rk-balance}` + rocketTail},
	{channel: ChannelRocket, kind: KindCashOutReceived, tmpl: `{rk-b2c?}Cash-Out from A/C: {rk-account} Tk{rk-amount} Comm:Tk{rk-comm}; A/C Balance: Tk{rk-balance}` + rocketTail},
	{channel: ChannelRocket, kind: KindB2BReceived, tmpl: `B2B: Cash-In from A/C: {rk-account} Tk{rk-amount}, Your A/C Balance: Tk{rk-balance}` + rocketTail},

	// Rocket debits.
	{channel: ChannelRocket, kind: KindMobileRecharge, tmpl: `Tk{rk-amount} debited to recharge mobile {phone}, Your A/C Balance: Tk{rk-balance}` + rocketTail},
	{channel: ChannelRocket, kind: KindPayment, tmpl: `Tk{rk-amount} paid through e-Commerce gateway. NetBal: Tk{rk-balance}` + rocketTail},
	{channel: ChannelRocket, kind: KindCashInSent, tmpl: `B2C: Cash-In to A/C: {rk-account} Tk{rk-amount} Comm:Tk{rk-comm};, Your A/C Balance: Tk{rk-balance}` + rocketTail},
	{channel: ChannelRocket, kind: KindB2BTransfer, tmpl: `B2B: Cash-Out to A/C: {rk-account} Tk{rk-amount}, Your A/C Balance: Tk{rk-balance}` + rocketTail},
})

// compileFormats compiles every template. A broken template is a bug in
// this file, so it panics (at init, caught by any test).
func compileFormats(fs []format) []*format {
	out := make([]*format, len(fs))
	for i := range fs {
		f := fs[i]
		if _, ok := credits[f.kind]; !ok {
			panic(fmt.Sprintf("smsparse: format %q has unknown kind %q", f.tmpl, f.kind))
		}
		f.re = regexp.MustCompile(compileTemplate(f.tmpl))
		for _, g := range []string{"amount", "balance", "id", "time"} {
			if f.re.SubexpIndex(g) < 0 {
				panic(fmt.Sprintf("smsparse: format %q has no {%s}", f.tmpl, g))
			}
		}
		out[i] = &f
	}
	return out
}

// compileTemplate turns a template into an anchored regular expression.
// Literal words match exactly. A space matches any run of whitespace (line
// breaks included), and may be missing after a full stop, a colon or "Tk",
// as in real messages ("Balance Tk 55.59.TrxID", "Uddokta:017…").
func compileTemplate(tmpl string) string {
	var b strings.Builder
	b.WriteString(`^`)
	prev := "" // the literal word just written; "" after a slot
	for tmpl != "" {
		switch {
		case tmpl[0] == '{':
			end := strings.IndexByte(tmpl, '}')
			if end < 0 {
				panic(fmt.Sprintf("smsparse: unclosed slot in %q", tmpl))
			}
			re, ok := slots[tmpl[1:end]]
			if !ok {
				panic(fmt.Sprintf("smsparse: unknown slot %q", tmpl[:end+1]))
			}
			b.WriteString(re)
			prev, tmpl = "", tmpl[end+1:]
		case tmpl[0] == ' ':
			tmpl = strings.TrimLeft(tmpl, " ")
			if strings.HasSuffix(prev, ".") || strings.HasSuffix(prev, ":") || prev == "Tk" {
				b.WriteString(`\s*`)
			} else {
				b.WriteString(`\s+`)
			}
			prev = ""
		default:
			end := strings.IndexAny(tmpl, "{ ")
			if end < 0 {
				end = len(tmpl)
			}
			prev = tmpl[:end]
			b.WriteString(regexp.QuoteMeta(prev))
			tmpl = tmpl[end:]
		}
	}
	b.WriteString(`$`)
	return b.String()
}

// message builds the Message from the groups of a match of f, checking
// every field.
func (f *format) message(groups []string) (*Message, error) {
	group := func(name string) string {
		if i := f.re.SubexpIndex(name); i >= 0 {
			return groups[i]
		}
		return ""
	}
	m := &Message{
		Channel:    f.channel,
		Kind:       f.kind,
		Credit:     credits[f.kind],
		Fee:        decimal.Zero,
		Commission: decimal.Zero,
	}
	amount, when := parseAmount, parseTime
	if f.channel == ChannelRocket {
		amount, when = parseRocketAmount, parseRocketTime
	}
	var err error
	if m.Amount, err = amount("amount", group("amount"), 2); err != nil {
		return nil, err
	}
	if !m.Amount.IsPositive() {
		return nil, fmt.Errorf("amount %q is not positive", group("amount"))
	}
	if s := group("fee"); s != "" {
		if m.Fee, err = amount("fee", s, 2); err != nil {
			return nil, err
		}
	}
	if s := group("comm"); s != "" {
		// Upay prints its commission unrounded ("Comm: TK. 0.61425").
		if m.Commission, err = amount("commission", s, 6); err != nil {
			return nil, err
		}
	}
	if m.Balance, err = amount("balance", group("balance"), 2); err != nil {
		return nil, err
	}
	if s := group("phone"); s != "" {
		if m.Counterparty, err = normalizePhone(s); err != nil {
			return nil, err
		}
	}
	if s := group("account"); s != "" {
		if m.Account, m.Counterparty, err = parseRocketAccount(s); err != nil {
			return nil, err
		}
	}
	if m.TransactionID, err = parseTransactionID(f.channel, group("id")); err != nil {
		return nil, err
	}
	if m.Time, err = when(group("time")); err != nil {
		return nil, err
	}
	if m.Reference = parseReference(group("ref")); len(m.Reference) > maxReference {
		return nil, fmt.Errorf("reference %q is longer than %d characters", m.Reference, maxReference)
	}
	return m, nil
}
