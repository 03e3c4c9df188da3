// Package smsparse turns the transaction SMS that a mobile wallet sends to
// the wallet's own phone (bKash, Nagad, Upay) into a structured [Message], or
// says clearly that it cannot.
//
// It never guesses. The sender ID picks the channel from a whitelist
// ([ChannelOf]); the body must then match one of that channel's known
// message formats completely, from its first character to its last. Anything
// else — a promotion, an OTP, a failed-transaction notice, a message missing
// its balance or transaction ID, a malformed amount or date, another
// channel's format, extra text around a real message — is an error wrapping
// [ErrUnknownFormat].
//
// # Supported formats
//
// The wording below is taken from real messages quoted in public
// open-source SMS gateways and expense trackers; the test fixtures
// (fixtures_test.go) name the repository of each. Fields in braces; an
// amount is "500", "500.0", "500.00" or "1,500.00" (western grouping only).
//
// bKash (sender "bKash" or "16247"), one line:
//
//	money_received     You have received Tk {amt} from {01…|name}[. Ref {ref}][. Fee Tk {fee}]. Balance Tk {bal}. TrxID {id} at {dd/mm/yyyy hh:mm}
//	payment_received   You have received payment Tk {amt} from {01…}. Fee Tk {fee}. Balance Tk {bal}. TrxID …
//	cash_in            Cash In Tk {amt} from {01…} successful. Fee Tk {fee}. Balance Tk {bal}. TrxID …
//	cash_out_received  Cash Out Tk {amt} from {01…} successful. Fee Tk {fee}. Balance Tk {bal}. TrxID …   (agent wallet)
//	add_money          You have received a deposit of Tk {amt} from {bank}. Fee Tk … / You have received deposit from iBanking of Tk {amt} from {bank}. Fee Tk …
//	cashback           Congratulations! You have received Cashback Tk {amt}. Balance Tk {bal}. TrxID …
//	send_money         Send Money Tk {amt} to {01…} successful[. Ref {ref}]. Fee Tk {fee}. Balance Tk {bal}. TrxID …
//	cash_out           Cash Out Tk {amt} to {01…} successful. Fee Tk {fee}. Balance Tk {bal}. TrxID …
//	payment            Payment [of ]Tk {amt} to {merchant} is successful. Balance Tk {bal}. TrxID …
//	mobile_recharge    Received Recharge request of Tk {amt} for {01…}. Fee Tk {fee}. Balance Tk {bal}. TrxID … at …. Wait for confirmation.
//	b2b_transfer       B2B Transfer Tk {amt} to {01…} successful. Fee Tk {fee}. Balance Tk {bal}. TrxID …   (agent wallet)
//	cash_in_sent       Cash In Tk {amt} to {01…} successful. Fee Tk {fee}. Balance Tk {bal}. TrxID …       (agent wallet)
//
// The TrxID is 10 upper-case letters and digits. bKash appends a promotion to
// some messages; the two seen in real messages (". Download App:
// https://bKa.sh/8app" and ". Mobile Recharge bKash korun.") are accepted
// after the time, any other trailing text is not.
//
// Nagad (sender "NAGAD", "Nagad" or "16167"), one field per line:
//
//	money_received     Money Received. / Amount: Tk {amt} / Sender: {01…} / [Ref: {ref}] / TxnID: {id} / Balance: Tk {bal} / {dd/mm/yyyy hh:mm}
//	cash_in            Cash In Received. / Amount: Tk {amt} / Uddokta: {01…} / TxnID / Balance: {bal} / time
//	payment_received   Payment Received. / Amount / Customer: {01…} / TxnID / Balance / time
//	cash_out_received  Cash Out Received. / Amount / Customer / TxnID / Comm: Tk {comm} / Balance / time   (agent wallet)
//	b2b_received       B2B Received. / Amount / Sender / TxnID / Balance / time                             (agent wallet)
//	add_money          Add Money from Bank is Successful. / From: {bank} / Amount / TxnID / Balance / time
//	payment            Payment to '{merchant}' is Successful. / Amount / TxnID / Balance / time
//	mobile_recharge    Mobile Recharge Successful. / Amount / Mobile: {01…} / TxnID / Balance / time
//	b2b_transfer       B2B Transfer Successful. / Amount / Receiver: {01…} / TxnID / Balance / time        (agent wallet)
//	cash_in_sent       Cash In Successful. / Amount / Customer / TxnID / Comm: Tk {comm} / Balance / time  (agent wallet)
//
// "Amt:" and "Bal:" are accepted for "Amount:" and "Balance:", "Tk" after
// "Balance:" is optional, and "Ref: N/A" means no reference. The TxnID is 8
// upper-case letters and digits. The one promotion seen in front of real
// Nagad messages ("WIN LAND IN DHAKA! CLICK NOW nagad.io/…" on its own line)
// is accepted; nothing else may precede or follow the message.
//
// Upay (sender "upay" or "16268"), one line:
//
//	money_received     Tk. {amt} has been received from {01…}. Ref-{ref}. Balance Tk. {bal}. TrxID {id} at {dd/mm/yyyy hh:mm}
//	cash_out_received  You have received Cash-out of Tk. {amt} from {01…}. Comm: TK. {comm}. Balance Tk. {bal}. TrxID {id} at {dd/mm/yyyy hh:mm}.
//
// The TrxID is 10 upper-case letters and digits. No real Upay debit, cash-in
// or merchant-payment message was found complete, so none is accepted.
//
// No real Nagad send-money or customer cash-out message was found either;
// those, bill payments (which carry no balance) and refunds are unknown
// formats for now.
//
// # Reading the fields
//
// Line breaks, runs of spaces, a missing space after a full stop or colon,
// CRLF and non-breaking spaces are tolerated; the words themselves are
// matched exactly. Times are the message's own minute in Asia/Dhaka (UTC+6,
// no daylight saving). Amounts, fees and balances have at most two
// decimals; the commission Upay prints can have more ("Comm: TK. 16.1343")
// and is kept exact. See [Message.Delta] for how fee and commission move the
// balance.
package smsparse
