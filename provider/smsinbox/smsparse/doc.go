// Package smsparse turns the transaction SMS that a mobile wallet sends to
// the wallet's own phone (bKash, Nagad, Upay, Rocket) into a structured
// [Message], or says clearly that it cannot.
//
// It never guesses. The sender ID picks the channel from a whitelist
// ([ChannelOf]); the body must then match one of that channel's known
// message formats completely, from its first character to its last. Anything
// else — a promotion, an OTP, a notice that moves no money, a message missing
// its balance or transaction ID, a malformed or ambiguous amount or date,
// another channel's format, extra text around a real message — is an error
// wrapping [ErrUnknownFormat]. Every message found whose transaction moves
// the balance and prints it is parsed, credit or debit, so that a chain of
// balances can continue across it; a message that prints no balance (bKash
// bill payments and remittances, Nagad cashback notices and bill requests)
// cannot continue a chain and is refused.
//
// # Supported formats
//
// The wording below is taken from real messages quoted in public
// open-source SMS gateways, expense trackers and issue reports; the test
// fixtures (fixtures_test.go, fixtures_real_test.go) name the source of
// each, and say which few were rebuilt from a parser's pattern. Fields in
// braces; an amount is "500", "500.0", "500.00" or "1,500.00" (western
// grouping only). The kinds' credit or debit sense is in smsparse.go.
//
// bKash (sender "bKash" or "16247"), one line:
//
//	money_received     You have received Tk {amt} from {01…|name}[. Ref {ref}][. Fee Tk {fee}]. Balance Tk {bal}. TrxID {id} at {dd/mm/yyyy hh:mm}
//	payment_received   You have received payment Tk {amt} from {01…}[. Ref {ref}]. Fee Tk {fee}. Balance Tk {bal}. TrxID …
//	cash_in            Cash In Tk {amt} from {01…} successful. Fee Tk {fee}. Balance Tk {bal}. TrxID …
//	cash_out_received  Cash Out Tk {amt} from {01…} successful. Fee Tk {fee}. Balance Tk {bal}. TrxID …   (agent wallet)
//	add_money          You have received {a deposit of|deposit of|deposit from iBanking of} Tk {amt} from {bank or card}. Fee Tk {fee}. Balance Tk {bal}. TrxID …
//	cashback           Congratulations! You have received Cashback Tk {amt}. Balance Tk {bal}. TrxID …
//	commission         You have received Tk {amt} as Commission from {name}. Fee Tk {fee}. Balance Tk {bal}. TrxID …
//	loan_received      You have received Digital Loan Tk {amt} from {bank}. Balance Tk {bal}. TrxID …
//	interest           Apni bKash-e Tk {amt} Interest peyechhen. Fee Tk {fee}. Balance Tk {bal}. TrxID …
//	refund             Mobile Recharge request has failed. Tk {amt} returned to your bKash Account. Balance Tk {bal}. TrxID …
//	refund             Sorry, your Send Money request to {01…} is unsuccessful! Tk {amt} has been returned. Balance Tk {bal}. TrxID …
//	reserve_released   Reserved amount Tk {amt} for {merchant} has been released. Balance Tk {bal}. TrxID …
//	send_money         Send Money Tk {amt} to {01…} successful[. Ref {ref}]. Fee Tk {fee}. Balance Tk {bal}. TrxID …
//	cash_out           Cash Out Tk {amt} to {01…} successful. Fee Tk {fee}. Balance Tk {bal}. TrxID …
//	payment            Payment [of ]Tk {amt} to {merchant} is successful. Balance Tk {bal}. TrxID …
//	payment_reserved   Payment of Tk {amt} is being reserved for {merchant}. Balance Tk {bal}. TrxID …
//	savings_deposit    Savings Deposit Payment Tk {amt} to {scheme} is successful. Balance Tk {bal}. TrxID …
//	mobile_recharge    Received Recharge request of Tk {amt} for {01…}. Fee Tk {fee}. Balance Tk {bal}. TrxID … at …. Wait for confirmation.
//	b2b_transfer       B2B Transfer Tk {amt} to {01…} successful. Fee Tk {fee}. Balance Tk {bal}. TrxID …   (agent wallet)
//	cash_in_sent       Cash In Tk {amt} to {01…} successful. Fee Tk {fee}. Balance Tk {bal}. TrxID …       (agent wallet)
//
// The TrxID is 10 upper-case letters and digits. After the time a message
// may end with a full stop, or with a full stop and one of the sentences
// seen on real messages: "Download App: https://bKa.sh/8app", "Mobile
// Recharge bKash korun.", "Cashback on bkash transaction", "Cashback on
// Loan!", "Helpline 16247". Any other trailing text is refused.
//
// A reserved payment (Uber, for one) comes as two messages with the same
// TrxID and the same balance: "is being reserved" when the balance drops,
// then "Payment of Tk … to … is successful", which moves nothing more; a
// release ("Reserved amount … has been released") credits it back under the
// reservation's TrxID. The parser reports each as printed; a balance chain
// must treat the successful twin of a reservation as no change.
//
// Nagad (sender "NAGAD", "Nagad" or "16167"), one field per line:
//
//	money_received     Money Received. / Amount: Tk {amt} / Sender: {01…} / [Ref: {ref}] / TxnID: {id} / Balance: Tk {bal} / {dd/mm/yyyy hh:mm}
//	cash_in            Cash In Received. / Amount: Tk {amt} / Uddokta: {01…} / TxnID / Balance: {bal} / time
//	payment_received   Payment Received. / Amount / Customer: {01…} / TxnID / Balance / time
//	cash_out_received  Cash Out Received. / Amount / Customer / TxnID / Comm: Tk {comm} / Balance / time   (agent wallet)
//	b2b_received       B2B Received. / Amount / Sender / TxnID / Balance / time                             (agent wallet)
//	add_money          Add Money from Bank is Successful. / From: {bank} / Amount / TxnID / Balance / time
//	refund             Refund from {merchant} / Amount: Tk {amt} / TrnxID: {id} / Balance:TK {bal} / time
//	payment            Payment to '{merchant}' is Successful. / Amount / TxnID / Balance / time
//	mobile_recharge    Mobile Recharge Successful. / Amount / Mobile: {01…} / TxnID / Balance / time
//	b2b_transfer       B2B Transfer Successful. / Amount / Receiver: {01…} / TxnID / Balance / time        (agent wallet)
//	cash_in_sent       Cash In Successful. / Amount / Customer / TxnID / Comm: Tk {comm} / Balance / time  (agent wallet)
//
// "Amt:" and "Bal:" are accepted for "Amount:" and "Balance:", "Tk" (or
// "TK") after "Balance:" is optional, and "Ref: N/A" means no reference.
// The TxnID is 8 upper-case letters and digits. The one promotion seen in front of real
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
// those, and bill payments (which carry no balance), are unknown formats
// for now.
//
// Rocket (Dutch-Bangla Bank; sender "16216"), one line:
//
//	money_received     Tk{amt} received from A/C:{acct} Fee:Tk{fee}, Your A/C Balance: Tk{bal} TxnId:{id} Date:{dd-MON-yy hh:mm:ss am}   (old layout)
//	money_received     Tk{amt} received from A/C:{acct} Ref No: {ref} Fee: Tk{fee} NetBal: Tk{bal} TxnId: {id} Date:…                     (new layout)
//	add_money          Tk{amt} received from Other Bank A/C:{acct} … (either layout)
//	cash_in            Cash-In from A/C: {acct} Tk{amt} Fee: Tk{fee}, Your A/C Balance: Tk{bal}.TxnId:{id} Date:…
//	cash_out_received  [B2C: ]Cash-Out from A/C: {acct} Tk{amt} Comm:Tk{comm}; A/C Balance: Tk{bal}.TxnId: {id} Date:…   (agent wallet)
//	b2b_received       B2B: Cash-In from A/C: {acct} Tk{amt}, Your A/C Balance: Tk{bal}.TxnId: {id} Date:…                 (agent wallet)
//	mobile_recharge    Tk{amt} debited to recharge mobile {01…}, Your A/C Balance:Tk{bal} TxnId: {id} Date:…
//	payment            Tk{amt} paid through e-Commerce gateway. NetBal: Tk{bal} TxnId: {id} Date:…
//	cash_in_sent       B2C: Cash-In to A/C: {acct} Tk{amt} Comm:Tk{comm};, Your A/C Balance: Tk{bal} TxnId: {id} Date:…   (agent wallet)
//	b2b_transfer       B2B: Cash-Out to A/C: {acct} Tk{amt}, Your A/C Balance: Tk{bal}.TxnId: {id} Date:…                  (agent wallet)
//
// The last two and b2b_received were rebuilt from a balance manager's
// patterns; no complete real copy was found. The balance and "TxnId" are
// parted by a space or a full stop. The TxnId is 10 digits. The time is
// dd-MON-yy hh:mm:ss with a lower-case am or pm, and is kept to the second.
// The account is masked ("***946", "*842") or a whole 12-digit Rocket account
// number, which is the holder's mobile number and one check digit; then
// [Message.Counterparty] is that mobile number, and [Message.Account] holds
// the account as printed either way. Rocket prints figures right after "Tk",
// sometimes after a full stop: "Tk.20.00" is 20.00 and "Tk.00" is 0, while
// "Tk.50", which could be 50 or 0.50, is refused. "Ref No: NA" means no
// reference. After the time the message may end with a full stop, or with
// ". Download https://bit.ly/nexuspay" or ". Don't share your PIN with
// anybody". No complete Rocket send-money or cash-out text was found, so
// none is accepted.
//
// # Reading the fields
//
// Line breaks, runs of spaces, a missing space after a full stop or colon,
// CRLF and non-breaking spaces are tolerated; the words themselves are
// matched exactly. Times are the message's own minute (Rocket: second) in
// Asia/Dhaka (UTC+6, no daylight saving). Amounts, fees and balances have
// at most two decimals; the commission Upay prints can have more ("Comm:
// TK. 16.1343") and is kept exact. A reference has its spacing collapsed
// and at most 64 characters, and contains no full stop or colon. See [Message.Delta] for how fee and commission move the
// balance.
package smsparse
