package smsparse

// Real texts found for issue 19 (sms-chain): the merchant "received
// payment" with and without a Ref, and a P2P receipt whose Ref is empty
// ("Ref ."), from the public code of three more gateways and forwarders.
// Conventions as in fixtures_real_test.go (counterparties' numbers replaced
// by 01700000606-01700000609; amounts, balances, IDs and times kept).
//
//	[bkashserver] a Kotlin BkashSmsParser of a bKash payment server (package
//	              com.socialsentry.bkashserver; index file id 52575301958): its
//	              doc comment quotes a merchant "received payment" and a
//	              personal "received Tk … Ref . Fee" of the same day.
//	[fwdtest]     an Android SMS forwarder's settings screen (index file id
//	              55338882735): the test SMS it fills in, a merchant "received
//	              payment" with "Ref 23154".
//	[jsonfwd]     a PHP gateway's device controller (index file id
//	              52495344164): a JSON-template forwarder payload it replays,
//	              {"from":"bKash","text":…,"sentStamp":1769025241000,…}.

func init() {
	validFixtures = append(validFixtures, moreValidFixtures...)
	invalidFixtures = append(invalidFixtures, moreInvalidFixtures...)
}

var moreValidFixtures = []validFixture{
	{
		name: "bkash payment received by a merchant wallet [bkashserver real]", sender: "bKash",
		body: "You have received payment Tk 549.00 from 01700000606. Fee Tk 0.00. Balance Tk 8,210.56. TrxID DDC03X8Z8I at 12/04/2026 16:39",
		want: Message{Channel: ChannelBkash, Kind: KindPaymentReceived, Credit: true, Amount: d("549"), Fee: zero, Commission: zero,
			Counterparty: "01700000606", Account: "", TransactionID: "DDC03X8Z8I", Time: at("2026-04-12 16:39"), Balance: d("8210.56"), Reference: ""},
	},
	{
		name: "bkash money received with an empty Ref, 'Ref .' [bkashserver real]", sender: "bKash",
		body: "You have received Tk 100.00 from 01700000607. Ref . Fee Tk 0.00. Balance Tk 138.34. TrxID DDC947L61P at 12/04/2026 20:18",
		want: Message{Channel: ChannelBkash, Kind: KindMoneyReceived, Credit: true, Amount: d("100"), Fee: zero, Commission: zero,
			Counterparty: "01700000607", Account: "", TransactionID: "DDC947L61P", Time: at("2026-04-12 20:18"), Balance: d("138.34"), Reference: ""},
	},
	{
		name: "bkash payment received with a Ref [fwdtest real]", sender: "bKash",
		body: "You have received payment Tk 150.00 from 01700000608. Ref 23154. Fee Tk 0.00. Balance Tk 150.00. TrxID DF34V2HBXU at 03/06/2026 12:33",
		want: Message{Channel: ChannelBkash, Kind: KindPaymentReceived, Credit: true, Amount: d("150"), Fee: zero, Commission: zero,
			Counterparty: "01700000608", Account: "", TransactionID: "DF34V2HBXU", Time: at("2026-06-03 12:33"), Balance: d("150"), Reference: "23154"},
	},
	{
		name: "bkash payment received after midnight [jsonfwd real]", sender: "bKash",
		body: "You have received payment Tk 500.00 from 01700000609. Fee Tk 0.00. Balance Tk 9,452.20. TrxID DAM6CTT7RW at 22/01/2026 01:54",
		want: Message{Channel: ChannelBkash, Kind: KindPaymentReceived, Credit: true, Amount: d("500"), Fee: zero, Commission: zero,
			Counterparty: "01700000609", Account: "", TransactionID: "DAM6CTT7RW", Time: at("2026-01-22 01:54"), Balance: d("9452.2"), Reference: ""},
	},
	{
		name: "bkash payment received with a Ref, then a full stop after the time [fwdtest same format]", sender: "bKash",
		body: "You have received payment Tk 150.00 from 01700000608. Ref 23155. Fee Tk 0.00. Balance Tk 300.00. TrxID DF34V2HC11 at 03/06/2026 12:40.",
		want: Message{Channel: ChannelBkash, Kind: KindPaymentReceived, Credit: true, Amount: d("150"), Fee: zero, Commission: zero,
			Counterparty: "01700000608", Account: "", TransactionID: "DF34V2HC11", Time: at("2026-06-03 12:40"), Balance: d("300"), Reference: "23155"},
	},
}

// The same texts made ambiguous: a parser that took them would be guessing
// where the reference ends or what the trailing sentence says.
var moreInvalidFixtures = []invalidFixture{
	{name: "bkash payment received whose Ref has a full stop", sender: "bKash", err: ErrUnknownFormat,
		body: "You have received payment Tk 150.00 from 01700000608. Ref 23.154. Fee Tk 0.00. Balance Tk 150.00. TrxID DF34V2HBXU at 03/06/2026 12:33"},
	{name: "bkash payment received with an unknown sentence after the time", sender: "bKash", err: ErrUnknownFormat,
		body: "You have received payment Tk 549.00 from 01700000606. Fee Tk 0.00. Balance Tk 8,210.56. TrxID DDC03X8Z8I at 12/04/2026 16:39. Pay with bKash and win!"},
	{name: "bkash payment received with no fee sentence", sender: "bKash", err: ErrUnknownFormat,
		body: "You have received payment Tk 300.00 from 01700000606. Balance Tk 76,142.55. TrxID DDC03X8Z8J at 12/04/2026 16:40"},
	{name: "bkash money received, two balances", sender: "bKash", err: ErrUnknownFormat,
		body: "You have received Tk 100.00 from 01700000607. Ref . Fee Tk 0.00. Balance Tk 138.34. Balance Tk 238.34. TrxID DDC947L61P at 12/04/2026 20:18"},
}
