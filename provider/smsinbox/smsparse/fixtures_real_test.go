package smsparse

// More real messages, collected for issue 19: Rocket, and the variants of
// bKash, Nagad and Upay messages that real phones receive. The conventions
// are fixtures_test.go's: wording, punctuation and layout kept exactly,
// counterparties' numbers replaced by 01X000005NN/01X000006NN numbers and
// Rocket whole account numbers by 0170000040N1 (a mobile number and a check
// digit), personal names by neutral words. "real" keeps the source's
// amounts, balances, IDs and times; where the source masked or anonymized an
// ID ("XXXXX", "ANONTXNID1", "TEST1ABC"), one of the channel's real shape is
// put in and the name says so; "same format" is a new message in a format
// the source attests; "reconstructed from its regex" is a message rebuilt
// from a parser's pattern, with no complete real copy seen.
//
//	[trustpay]   smturag/trustpaybd app/Http/Controllers/Api/ReactNativeModemController.php
//	             (its comments quote Rocket's old "received from A/C… Fee:Tk0, Your
//	             A/C Balance" and new "Ref No: NA … NetBal" layouts, and the agent
//	             "Cash-Out from A/C: … Comm:Tk…; A/C Balance" of 2023 and 2025;
//	             sender 16216)
//	[hisabbox]   md-riaz/HisabBox test/providers/sms_provider_parsing_test.dart
//	             (Rocket received with a whole account, "received from Other Bank
//	             A/C", "debited to recharge mobile", "paid through e-Commerce
//	             gateway", security code; Nagad "Refund from Daraz BD … TrnxID",
//	             money received, Foodpanda payment, cashback notices, OTPs,
//	             authorizations, bill requests. Its IDs are anonymized.)
//	[khata]      wasifhdr/khata app/src/test/java/com/wasif/khata/core/sms/CorpusTest.kt
//	             and WidenedRulesTest.kt ("every message here is a real shape from
//	             a six-year inbox of 6,018 messages": bKash loans, cashback on
//	             loan, reserved/released payments, interest, commission, refunds,
//	             savings, deposits, OTPs, loan terms, remittance, bill payment)
//	[nihonova]   mrahmann0010/Nihonova-Payment-Gateway README.md (Rocket received
//	             08-JUN-26, Nagad money received)
//	[cashiro124] https://github.com/ritesh-kanwar/Cashiro/issues/124 (bKash payment,
//	             received and send money with a full stop after the time; IDs
//	             masked)
//	[pennywise432] https://github.com/sarim2000/pennywiseai-tracker/issues/432
//	             (bKash cashback followed by "Cashback on bkash transaction", Cash
//	             In with Download App, bill payment; numbers and IDs masked)
//	[piprapay]   towhidstack/PipraPay pp-content/pp-include/pp-functions.php
//	             (MFSMessageVerified: its bKash "received payment" pattern takes a
//	             Ref; Rocket and Upay patterns agree with the real messages)
//	[ruby]       a Ruby balance manager's constants (public code, index file id
//	             26669224081; its repository is not named by the index): regexes
//	             for Rocket agent "B2B: Cash-Out to A/C", "B2B: Cash-In from A/C",
//	             "B2C: Cash-In to A/C" and "B2C: Cash-Out from A/C". Fixtures
//	             from it are reconstructed from the regexes.
//	[smartpay]   "SmartPay" gateway documentation, appendix "SMS Templates"
//	             (public code, index file id 67565449876): Rocket Cash-In from an
//	             agent, a bKash received and Cash In of one wallet (their
//	             balances chain), Nagad money received.
//	[saadtopup]  com.saadtopup.smsgateway SmsParser.java (index file id
//	             66676234182): "Rocket real format (sender 16216)".
//	[rocketts]   a TypeScript parseRocket ("DBBL Rocket / NexusPay SMS formats",
//	             index file id 67224629700).
//	[gwsamples]  a gateway's sample SMS list, "Rocket Received (Tk 200) -
//	             NexusPay" (index file id 57918172683).
//	[llmprompt]  an LLM prompt's demo queries (index file id 63776005): a
//	             bKash received whose TrxID has 13 characters, a Rocket received
//	             from a 10-digit account.
//	[sms-bn]     a TypeScript test of Rocket with Bengali numerals (index file
//	             id 68835768181).

import "time"

// atSec is a Dhaka second from "2006-01-02 15:04:05".
func atSec(s string) time.Time {
	t, err := time.ParseInLocation("2006-01-02 15:04:05", s, time.FixedZone("test+6", 6*60*60))
	if err != nil {
		panic(err)
	}
	return t
}

func init() {
	validFixtures = append(validFixtures, realValidFixtures...)
	invalidFixtures = append(invalidFixtures, realInvalidFixtures...)
}

var realValidFixtures = []validFixture{
	{
		name: "rocket money received, old layout [trustpay real]", sender: "16216",
		body: "Tk100.00 received from A/C:***946 Fee:Tk0, Your A/C Balance: Tk100.00 TxnId:6022415176 Date:27-DEC-25 08:43:52 pm. Download https://bit.ly/nexuspay",
		want: Message{Channel: ChannelRocket, Kind: KindMoneyReceived, Credit: true, Amount: d("100"), Fee: zero, Commission: zero,
			Counterparty: "", Account: "***946", TransactionID: "6022415176", Time: atSec("2025-12-27 20:43:52"), Balance: d("100"), Reference: ""},
	},
	{
		name: "rocket money received, new layout with Ref No and NetBal [trustpay real]", sender: "16216",
		body: "Tk.20.00 received from A/C:***946 Ref No: NA Fee: Tk.00 NetBal: Tk41.00 TxnId: 6022164589 Date:27-DEC-25 07:17:16 pm.",
		want: Message{Channel: ChannelRocket, Kind: KindMoneyReceived, Credit: true, Amount: d("20"), Fee: zero, Commission: zero,
			Counterparty: "", Account: "***946", TransactionID: "6022164589", Time: atSec("2025-12-27 19:17:16"), Balance: d("41"), Reference: ""},
	},
	{
		name: "rocket money received, one-star mask [trustpay real]", sender: "16216",
		body: "Tk20.00 received from A/C:*842 Fee:Tk0, Your A/C Balance: Tk120.00 TxnId:5829515036 Date:20-OCT-25 06:19:20 pm. Download https://bit.ly/nexuspay",
		want: Message{Channel: ChannelRocket, Kind: KindMoneyReceived, Credit: true, Amount: d("20"), Fee: zero, Commission: zero,
			Counterparty: "", Account: "*842", TransactionID: "5829515036", Time: atSec("2025-10-20 18:19:20"), Balance: d("120"), Reference: ""},
	},
	{
		name: "rocket money received, morning [nihonova real]", sender: "16216",
		body: "Tk99.00 received from A/C:***515 Fee:Tk0, Your A/C Balance: Tk1,145.85 TxnId:6606781284 Date:08-JUN-26 06:21:43 am. Download https://bit.ly/nexuspay",
		want: Message{Channel: ChannelRocket, Kind: KindMoneyReceived, Credit: true, Amount: d("99"), Fee: zero, Commission: zero,
			Counterparty: "", Account: "***515", TransactionID: "6606781284", Time: atSec("2026-06-08 06:21:43"), Balance: d("1145.85"), Reference: ""},
	},
	{
		name: "rocket money received, no link [saadtopup real]", sender: "16216",
		body: "Tk30.00 received from A/C:**271 Fee:Tk0, Your A/C Balance: Tk76.54 TxnId:6944542452 Date:12-SEP-26 04:06:36 pm.",
		want: Message{Channel: ChannelRocket, Kind: KindMoneyReceived, Credit: true, Amount: d("30"), Fee: zero, Commission: zero,
			Counterparty: "", Account: "**271", TransactionID: "6944542452", Time: atSec("2026-09-12 16:06:36"), Balance: d("76.54"), Reference: ""},
	},
	{
		name: "rocket money received [rocketts real]", sender: "16216",
		body: "Tk499.00 received from A/C:***759 Fee:Tk0, Your A/C Balance: Tk1,015.79 TxnId:6910652291 Date:04-SEP-26 04:15:53 pm. Download https://bit.ly/nexuspay",
		want: Message{Channel: ChannelRocket, Kind: KindMoneyReceived, Credit: true, Amount: d("499"), Fee: zero, Commission: zero,
			Counterparty: "", Account: "***759", TransactionID: "6910652291", Time: atSec("2026-09-04 16:15:53"), Balance: d("1015.79"), Reference: ""},
	},
	{
		name: "rocket money received, thousands in the balance [gwsamples real]", sender: "16216",
		body: "Tk200.00 received from A/C:***057 Fee:Tk0, Your A/C Balance: Tk12,256.92 TxnId:6791724661 Date:31-JUL-26 09:26:07 pm. Download https://bit.ly/nexuspay",
		want: Message{Channel: ChannelRocket, Kind: KindMoneyReceived, Credit: true, Amount: d("200"), Fee: zero, Commission: zero,
			Counterparty: "", Account: "***057", TransactionID: "6791724661", Time: atSec("2026-07-31 21:26:07"), Balance: d("12256.92"), Reference: ""},
	},
	{
		name: "rocket money received from a whole account number [hisabbox, account and ID restored to their real shapes]", sender: "16216",
		body: "Tk410.00 received from A/C:017000004011 Fee:Tk0, Your A/C Balance: Tk430.00 TxnId:4102055361 Date:09-APR-20 10:55:36 am.",
		want: Message{Channel: ChannelRocket, Kind: KindMoneyReceived, Credit: true, Amount: d("410"), Fee: zero, Commission: zero,
			Counterparty: "01700000401", Account: "017000004011", TransactionID: "4102055361", Time: atSec("2020-04-09 10:55:36"), Balance: d("430"), Reference: ""},
	},
	{
		name: "rocket money received, new layout with a reference [trustpay same format]", sender: "16216",
		body: "Tk.500.00 received from A/C:***946 Ref No: rent Fee: Tk.00 NetBal: Tk541.00 TxnId: 6022170012 Date:27-DEC-25 07:40:02 pm.",
		want: Message{Channel: ChannelRocket, Kind: KindMoneyReceived, Credit: true, Amount: d("500"), Fee: zero, Commission: zero,
			Counterparty: "", Account: "***946", TransactionID: "6022170012", Time: atSec("2025-12-27 19:40:02"), Balance: d("541"), Reference: "rent"},
	},
	{
		name: "rocket money received, 12 noon [trustpay same format]", sender: "16216",
		body: "Tk1,250.00 received from A/C:***312 Fee:Tk0, Your A/C Balance: Tk1,791.00 TxnId:6023001457 Date:28-DEC-25 12:05:10 pm. Download https://bit.ly/nexuspay",
		want: Message{Channel: ChannelRocket, Kind: KindMoneyReceived, Credit: true, Amount: d("1250"), Fee: zero, Commission: zero,
			Counterparty: "", Account: "***312", TransactionID: "6023001457", Time: atSec("2025-12-28 12:05:10"), Balance: d("1791"), Reference: ""},
	},
	{
		name: "rocket transfer from another bank [hisabbox, ID restored to its real shape]", sender: "16216",
		body: "Tk10,000.00 received from Other Bank A/C:***00001 Fee:Tk.00 NetBal:Tk10,024.00 TxnId:5105230211 Date:05-JUN-23 02:11:05 pm.",
		want: Message{Channel: ChannelRocket, Kind: KindAddMoney, Credit: true, Amount: d("10000"), Fee: zero, Commission: zero,
			Counterparty: "", Account: "***00001", TransactionID: "5105230211", Time: atSec("2023-06-05 14:11:05"), Balance: d("10024"), Reference: ""},
	},
	{
		name: "rocket cash in from an agent [smartpay real]", sender: "16216",
		body: "Cash-In from A/C: ***332 Tk26,900.00 Fee: Tk.00, Your A/C Balance: Tk27,008.23.TxnId:6691775337 Date:01-JUL-26 04:11:32 pm. Download https://bit.ly/nexuspay",
		want: Message{Channel: ChannelRocket, Kind: KindCashIn, Credit: true, Amount: d("26900"), Fee: zero, Commission: zero,
			Counterparty: "", Account: "***332", TransactionID: "6691775337", Time: atSec("2026-07-01 16:11:32"), Balance: d("27008.23"), Reference: ""},
	},
	{
		name: "rocket cash in, 12 midnight [smartpay same format]", sender: "16216",
		body: "Cash-In from A/C: ***332 Tk500.00 Fee: Tk.00, Your A/C Balance: Tk27,508.23.TxnId:6691902214 Date:02-JUL-26 12:14:09 am. Download https://bit.ly/nexuspay",
		want: Message{Channel: ChannelRocket, Kind: KindCashIn, Credit: true, Amount: d("500"), Fee: zero, Commission: zero,
			Counterparty: "", Account: "***332", TransactionID: "6691902214", Time: atSec("2026-07-02 00:14:09"), Balance: d("27508.23"), Reference: ""},
	},
	{
		name: "rocket cash in, no link [smartpay same format]", sender: "16216",
		body: "Cash-In from A/C: ***781 Tk1,500.00 Fee: Tk.00, Your A/C Balance: Tk29,008.23.TxnId:6692040318 Date:02-JUL-26 09:00:00 am.",
		want: Message{Channel: ChannelRocket, Kind: KindCashIn, Credit: true, Amount: d("1500"), Fee: zero, Commission: zero,
			Counterparty: "", Account: "***781", TransactionID: "6692040318", Time: atSec("2026-07-02 09:00:00"), Balance: d("29008.23"), Reference: ""},
	},
	{
		name: "rocket cash in, small [smartpay same format]", sender: "16216",
		body: "Cash-In from A/C: ***781 Tk50.00 Fee: Tk.00, Your A/C Balance: Tk29,058.23.TxnId:6692110575 Date:02-JUL-26 11:47:51 am. Download https://bit.ly/nexuspay",
		want: Message{Channel: ChannelRocket, Kind: KindCashIn, Credit: true, Amount: d("50"), Fee: zero, Commission: zero,
			Counterparty: "", Account: "***781", TransactionID: "6692110575", Time: atSec("2026-07-02 11:47:51"), Balance: d("29058.23"), Reference: ""},
	},
	{
		name: "rocket agent cash out received, masked [trustpay real]", sender: "16216",
		body: "Cash-Out from A/C: ***097 Tk2,009.00 Comm:Tk8.43; A/C Balance: Tk87,455.82.TxnId: 6017463139 Date:25-DEC-25 05:53:00 pm. Download https://bit.ly/nexuspay",
		want: Message{Channel: ChannelRocket, Kind: KindCashOutReceived, Credit: true, Amount: d("2009"), Fee: zero, Commission: d("8.43"),
			Counterparty: "", Account: "***097", TransactionID: "6017463139", Time: atSec("2025-12-25 17:53:00"), Balance: d("87455.82"), Reference: ""},
	},
	{
		name: "rocket agent cash out received, whole account, 2023 [trustpay real]", sender: "16216",
		body: "Cash-Out from A/C: 017000004021 Tk500.00 Comm:Tk2.10; A/C Balance: Tk3,741.39.TxnId: 3478851618 Date:22-JAN-23 10:08:31 am. Download https://bit.ly/nexuspay",
		want: Message{Channel: ChannelRocket, Kind: KindCashOutReceived, Credit: true, Amount: d("500"), Fee: zero, Commission: d("2.10"),
			Counterparty: "01700000402", Account: "017000004021", TransactionID: "3478851618", Time: atSec("2023-01-22 10:08:31"), Balance: d("3741.39"), Reference: ""},
	},
	{
		name: "rocket agent cash out received, B2C prefix [ruby format]", sender: "16216",
		body: "B2C: Cash-Out from A/C: ***118 Tk1,000.00 Comm:Tk4.10; A/C Balance: Tk88,459.92.TxnId: 6017502274 Date:25-DEC-25 06:20:41 pm. Download https://bit.ly/nexuspay",
		want: Message{Channel: ChannelRocket, Kind: KindCashOutReceived, Credit: true, Amount: d("1000"), Fee: zero, Commission: d("4.10"),
			Counterparty: "", Account: "***118", TransactionID: "6017502274", Time: atSec("2025-12-25 18:20:41"), Balance: d("88459.92"), Reference: ""},
	},
	{
		name: "rocket agent cash out received, no link [trustpay same format]", sender: "16216",
		body: "Cash-Out from A/C: ***540 Tk10,000.00 Comm:Tk42.00; A/C Balance: Tk98,501.92.TxnId: 6017588810 Date:25-DEC-25 07:02:13 pm.",
		want: Message{Channel: ChannelRocket, Kind: KindCashOutReceived, Credit: true, Amount: d("10000"), Fee: zero, Commission: d("42"),
			Counterparty: "", Account: "***540", TransactionID: "6017588810", Time: atSec("2025-12-25 19:02:13"), Balance: d("98501.92"), Reference: ""},
	},
	{
		name: "rocket b2b received [ruby format, reconstructed from its regex]", sender: "16216",
		body: "B2B: Cash-In from A/C: ***405 Tk20,000.00, Your A/C Balance: Tk107,455.82.TxnId: 6017611093 Date:25-DEC-25 08:02:17 pm.",
		want: Message{Channel: ChannelRocket, Kind: KindB2BReceived, Credit: true, Amount: d("20000"), Fee: zero, Commission: zero,
			Counterparty: "", Account: "***405", TransactionID: "6017611093", Time: atSec("2025-12-25 20:02:17"), Balance: d("107455.82"), Reference: ""},
	},
	{
		name: "rocket mobile recharge [hisabbox, ID restored to its real shape]", sender: "16216",
		body: "Tk303.00 debited to recharge mobile 01700000402, Your A/C Balance:Tk537.00 TxnId: 4102160782 Date:09-APR-20 12:45:39 pm.",
		want: Message{Channel: ChannelRocket, Kind: KindMobileRecharge, Credit: false, Amount: d("303"), Fee: zero, Commission: zero,
			Counterparty: "01700000402", Account: "", TransactionID: "4102160782", Time: atSec("2020-04-09 12:45:39"), Balance: d("537"), Reference: ""},
	},
	{
		name: "rocket e-commerce payment [hisabbox, ID restored to its real shape]", sender: "16216",
		body: "Tk430.00 paid through e-Commerce gateway. NetBal: Tk107.00 TxnId: 4280005331 Date:28-APR-20 12:05:33 am. Don't share your PIN with anybody",
		want: Message{Channel: ChannelRocket, Kind: KindPayment, Credit: false, Amount: d("430"), Fee: zero, Commission: zero,
			Counterparty: "", Account: "", TransactionID: "4280005331", Time: atSec("2020-04-28 00:05:33"), Balance: d("107"), Reference: ""},
	},
	{
		name: "rocket agent cash in to a customer [ruby format, reconstructed from its regex]", sender: "16216",
		body: "B2C: Cash-In to A/C: ***612 Tk3,000.00 Comm:Tk12.30;, Your A/C Balance: Tk84,468.12 TxnId: 6017655120 Date:25-DEC-25 09:10:05 pm.",
		want: Message{Channel: ChannelRocket, Kind: KindCashInSent, Credit: false, Amount: d("3000"), Fee: zero, Commission: d("12.30"),
			Counterparty: "", Account: "***612", TransactionID: "6017655120", Time: atSec("2025-12-25 21:10:05"), Balance: d("84468.12"), Reference: ""},
	},
	{
		name: "rocket b2b transfer [ruby format, reconstructed from its regex]", sender: "16216",
		body: "B2B: Cash-Out to A/C: ***405 Tk5,000.00, Your A/C Balance: Tk79,468.12.TxnId: 6017701846 Date:25-DEC-25 10:31:44 pm.",
		want: Message{Channel: ChannelRocket, Kind: KindB2BTransfer, Credit: false, Amount: d("5000"), Fee: zero, Commission: zero,
			Counterparty: "", Account: "***405", TransactionID: "6017701846", Time: atSec("2025-12-25 22:31:44"), Balance: d("79468.12"), Reference: ""},
	},
	{
		// The cap on a reference's length applies to its collapsed text, so
		// a phone that doubles its spaces does not push it over.
		name: "bkash money received, a reference near the length cap [sajib same format]", sender: "bKash",
		body: "You have received Tk 500.00 from 01700000529.Ref for the rent of march and april and the electricity bill too. Fee Tk 0.00. Balance Tk 15,708.79. TrxID DI5276PLJZ at 05/09/2026 21:05",
		want: Message{Channel: ChannelBkash, Kind: KindMoneyReceived, Credit: true, Amount: d("500"), Fee: zero, Commission: zero,
			Counterparty: "01700000529", Account: "", TransactionID: "DI5276PLJZ", Time: at("2026-09-05 21:05"), Balance: d("15708.79"),
			Reference: "for the rent of march and april and the electricity bill too"},
	},
	{
		name: "bkash money received, consecutive 1 [khata real]", sender: "bKash",
		body: "You have received Tk 142.00 from 01700000511. Fee Tk 0.00. Balance Tk 356.09. TrxID DHA9BTWHE1 at 10/08/2026 22:10",
		want: Message{Channel: ChannelBkash, Kind: KindMoneyReceived, Credit: true, Amount: d("142"), Fee: zero, Commission: zero,
			Counterparty: "01700000511", Account: "", TransactionID: "DHA9BTWHE1", Time: at("2026-08-10 22:10"), Balance: d("356.09"), Reference: ""},
	},
	{
		name: "bkash money received, consecutive 2 [khata real]", sender: "bKash",
		body: "You have received Tk 142.00 from 01700000512. Fee Tk 0.00. Balance Tk 498.09. TrxID DHA5BUPNF1 at 10/08/2026 22:27",
		want: Message{Channel: ChannelBkash, Kind: KindMoneyReceived, Credit: true, Amount: d("142"), Fee: zero, Commission: zero,
			Counterparty: "01700000512", Account: "", TransactionID: "DHA5BUPNF1", Time: at("2026-08-10 22:27"), Balance: d("498.09"), Reference: ""},
	},
	{
		name: "bkash money received [khata real]", sender: "bKash",
		body: "You have received Tk 325.00 from 01700000513. Fee Tk 0.00. Balance Tk 527.09. TrxID DHL8NM6BYC at 21/08/2026 12:35",
		want: Message{Channel: ChannelBkash, Kind: KindMoneyReceived, Credit: true, Amount: d("325"), Fee: zero, Commission: zero,
			Counterparty: "01700000513", Account: "", TransactionID: "DHL8NM6BYC", Time: at("2026-08-21 12:35"), Balance: d("527.09"), Reference: ""},
	},
	{
		name: "bkash money received, one-letter Ref [khata real]", sender: "bKash",
		body: "You have received Tk 100.00 from 01700000514. Ref A. Fee Tk 0.00. Balance Tk 238.09. TrxID DHG5IGY2ZP at 16/08/2026 18:47",
		want: Message{Channel: ChannelBkash, Kind: KindMoneyReceived, Credit: true, Amount: d("100"), Fee: zero, Commission: zero,
			Counterparty: "01700000514", Account: "", TransactionID: "DHG5IGY2ZP", Time: at("2026-08-16 18:47"), Balance: d("238.09"), Reference: "A"},
	},
	{
		name: "bkash money received, same minute 1 [khata real]", sender: "bKash",
		body: "You have received Tk 66.00 from 01700000515. Fee Tk 0.00. Balance Tk 131.09. TrxID DHK6MX34WC at 20/08/2026 18:39",
		want: Message{Channel: ChannelBkash, Kind: KindMoneyReceived, Credit: true, Amount: d("66"), Fee: zero, Commission: zero,
			Counterparty: "01700000515", Account: "", TransactionID: "DHK6MX34WC", Time: at("2026-08-20 18:39"), Balance: d("131.09"), Reference: ""},
	},
	{
		name: "bkash money received, same minute 2 [khata real]", sender: "bKash",
		body: "You have received Tk 71.00 from 01700000516. Fee Tk 0.00. Balance Tk 202.09. TrxID DHK2MX5HZA at 20/08/2026 18:39",
		want: Message{Channel: ChannelBkash, Kind: KindMoneyReceived, Credit: true, Amount: d("71"), Fee: zero, Commission: zero,
			Counterparty: "01700000516", Account: "", TransactionID: "DHK2MX5HZA", Time: at("2026-08-20 18:39"), Balance: d("202.09"), Reference: ""},
	},
	{
		name: "bkash money received, .Ref without space [khata real]", sender: "bKash",
		body: "You have received Tk 500.00 from 01700000517.Ref thankyou. Fee Tk 0.00. Balance Tk 700.00. TrxID 7GU508FY9J at 30/07/2020 23:12",
		want: Message{Channel: ChannelBkash, Kind: KindMoneyReceived, Credit: true, Amount: d("500"), Fee: zero, Commission: zero,
			Counterparty: "01700000517", Account: "", TransactionID: "7GU508FY9J", Time: at("2020-07-30 23:12"), Balance: d("700"), Reference: "thankyou"},
	},
	{
		name: "bkash money received, empty .Ref . [khata real]", sender: "bKash",
		body: "You have received Tk 1,000.00 from 01700000518.Ref . Fee Tk 0.00. Balance Tk 1,056.20. TrxID 9C699OS8MN at 06/03/2022 02:42",
		want: Message{Channel: ChannelBkash, Kind: KindMoneyReceived, Credit: true, Amount: d("1000"), Fee: zero, Commission: zero,
			Counterparty: "01700000518", Account: "", TransactionID: "9C699OS8MN", Time: at("2022-03-06 02:42"), Balance: d("1056.20"), Reference: ""},
	},
	{
		name: "bkash money received, full stop after the time [cashiro124 real, number and ID unmasked to real shapes]", sender: "bKash",
		body: "You have received Tk 6,400.00 from 01700000519. Fee Tk 0.00. Balance Tk 20,288.41. TrxID DER6T2K9QA at 26/05/2026 10:58.",
		want: Message{Channel: ChannelBkash, Kind: KindMoneyReceived, Credit: true, Amount: d("6400"), Fee: zero, Commission: zero,
			Counterparty: "01700000519", Account: "", TransactionID: "DER6T2K9QA", Time: at("2026-05-26 10:58"), Balance: d("20288.41"), Reference: ""},
	},
	{
		name: "bkash money received, then the cash in below [smartpay real]", sender: "bKash",
		body: "You have received Tk 317.00 from 01700000520. Fee Tk 0.00. Balance Tk 1,350.91. TrxID DG25WUQEH1 at 02/07/2026 15:00",
		want: Message{Channel: ChannelBkash, Kind: KindMoneyReceived, Credit: true, Amount: d("317"), Fee: zero, Commission: zero,
			Counterparty: "01700000520", Account: "", TransactionID: "DG25WUQEH1", Time: at("2026-07-02 15:00"), Balance: d("1350.91"), Reference: ""},
	},
	{
		name: "bkash cash in, before the received above [smartpay real]", sender: "bKash",
		body: "Cash In Tk 1,020.00 from 01700000521 successful. Fee Tk 0.00. Balance Tk 1,033.91. TrxID DG27WSGI49 at 02/07/2026 13:55",
		want: Message{Channel: ChannelBkash, Kind: KindCashIn, Credit: true, Amount: d("1020"), Fee: zero, Commission: zero,
			Counterparty: "01700000521", Account: "", TransactionID: "DG27WSGI49", Time: at("2026-07-02 13:55"), Balance: d("1033.91"), Reference: ""},
	},
	{
		name: "bkash cash in, 2020, Download App [khata real]", sender: "bKash",
		body: "Cash In Tk 500.00 from 01700000522 successful. Fee Tk 0.00. Balance Tk 1,249.20. TrxID 7JK9D1UQFJ at 20/10/2020 12:41. Download App: https://bKa.sh/8app",
		want: Message{Channel: ChannelBkash, Kind: KindCashIn, Credit: true, Amount: d("500"), Fee: zero, Commission: zero,
			Counterparty: "01700000522", Account: "", TransactionID: "7JK9D1UQFJ", Time: at("2020-10-20 12:41"), Balance: d("1249.20"), Reference: ""},
	},
	{
		name: "bkash cash in [pennywise432 real, number and ID unmasked to real shapes]", sender: "bKash",
		body: "Cash In Tk 500.00 from 01700000523 successful. Fee Tk 0.00. Balance Tk 506.91. TrxID DET7C3N5XB at 29/05/2026 19:00. Download App: https://bKa.sh/8app",
		want: Message{Channel: ChannelBkash, Kind: KindCashIn, Credit: true, Amount: d("500"), Fee: zero, Commission: zero,
			Counterparty: "01700000523", Account: "", TransactionID: "DET7C3N5XB", Time: at("2026-05-29 19:00"), Balance: d("506.91"), Reference: ""},
	},
	{
		name: "bkash payment received with a Ref [piprapay format, reconstructed from its regex]", sender: "bKash",
		body: "You have received payment Tk 500.00 from 01700000524. Ref 1043. Fee Tk 0.00. Balance Tk 14,605.59. TrxID CJM2AB34CD at 22/10/2025 10:15",
		want: Message{Channel: ChannelBkash, Kind: KindPaymentReceived, Credit: true, Amount: d("500"), Fee: zero, Commission: zero,
			Counterparty: "01700000524", Account: "", TransactionID: "CJM2AB34CD", Time: at("2025-10-22 10:15"), Balance: d("14605.59"), Reference: "1043"},
	},
	{
		name: "bkash cashback with a promotion after the time [pennywise432 real, ID unmasked to a real shape]", sender: "bKash",
		body: "Congratulations! You have received Cashback Tk 50.00. Balance Tk 71.91. TrxID DEU3K1CB50 at 29/05/2026 19:15. Cashback on bkash transaction",
		want: Message{Channel: ChannelBkash, Kind: KindCashback, Credit: true, Amount: d("50"), Fee: zero, Commission: zero,
			Counterparty: "", Account: "", TransactionID: "DEU3K1CB50", Time: at("2026-05-29 19:15"), Balance: d("71.91"), Reference: ""},
	},
	{
		name: "bkash cashback on a loan [khata real]", sender: "bKash",
		body: "Congratulations! You have received Cashback Tk 2.90. Balance Tk 1,027.11. TrxID DHN4PFHA3Y at 23/08/2026 10:55. Cashback on Loan!",
		want: Message{Channel: ChannelBkash, Kind: KindCashback, Credit: true, Amount: d("2.90"), Fee: zero, Commission: zero,
			Counterparty: "", Account: "", TransactionID: "DHN4PFHA3Y", Time: at("2026-08-23 10:55"), Balance: d("1027.11"), Reference: ""},
	},
	{
		name: "bkash digital loan [khata real]", sender: "bKash",
		body: "You have received Digital Loan Tk 500.00 from City Bank. Balance Tk 1,024.21. TrxID DHN2PFGRRC at 23/08/2026 10:55.",
		want: Message{Channel: ChannelBkash, Kind: KindLoanReceived, Credit: true, Amount: d("500"), Fee: zero, Commission: zero,
			Counterparty: "", Account: "", TransactionID: "DHN2PFGRRC", Time: at("2026-08-23 10:55"), Balance: d("1024.21"), Reference: ""},
	},
	{
		name: "bkash digital loan, larger [khata real]", sender: "bKash",
		body: "You have received Digital Loan Tk 900.00 from City Bank. Balance Tk 897.98. TrxID DHV31FH6VD at 31/08/2026 19:00.",
		want: Message{Channel: ChannelBkash, Kind: KindLoanReceived, Credit: true, Amount: d("900"), Fee: zero, Commission: zero,
			Counterparty: "", Account: "", TransactionID: "DHV31FH6VD", Time: at("2026-08-31 19:00"), Balance: d("897.98"), Reference: ""},
	},
	{
		name: "bkash commission from an organisation [khata real]", sender: "bKash",
		body: "You have received Tk 50.00 as Commission from DM1472. Fee Tk 0.00. Balance Tk 2,050.00. TrxID 7FJ79H37BP at 22/06/2020 18:15",
		want: Message{Channel: ChannelBkash, Kind: KindCommission, Credit: true, Amount: d("50"), Fee: zero, Commission: zero,
			Counterparty: "", Account: "", TransactionID: "7FJ79H37BP", Time: at("2020-06-22 18:15"), Balance: d("2050"), Reference: ""},
	},
	{
		name: "bkash interest, with Helpline after the time [khata real]", sender: "bKash",
		body: "Apni bKash-e Tk 0.98 Interest peyechhen. Fee Tk 0.00. Balance Tk 1,650.98. TrxID 7HA95EIFO3 at 10/08/2020 06:14. Helpline 16247",
		want: Message{Channel: ChannelBkash, Kind: KindInterest, Credit: true, Amount: d("0.98"), Fee: zero, Commission: zero,
			Counterparty: "", Account: "", TransactionID: "7HA95EIFO3", Time: at("2020-08-10 06:14"), Balance: d("1650.98"), Reference: ""},
	},
	{
		name: "bkash failed recharge returned [khata real]", sender: "bKash",
		body: "Mobile Recharge request has failed. Tk 11.00 returned to your bKash Account. Balance Tk 766.08. TrxID 7I42JPEXJC at 04/09/2020 22:53",
		want: Message{Channel: ChannelBkash, Kind: KindRefund, Credit: true, Amount: d("11"), Fee: zero, Commission: zero,
			Counterparty: "", Account: "", TransactionID: "7I42JPEXJC", Time: at("2020-09-04 22:53"), Balance: d("766.08"), Reference: ""},
	},
	{
		name: "bkash failed send money returned [sajib real]", sender: "bKash",
		body: "Sorry, your Send Money request to 01700000502 is unsuccessful! Tk 30 has been returned. Balance Tk 73.50. TrxID BKA96AB813 at 10/11/2024 14:00",
		want: Message{Channel: ChannelBkash, Kind: KindRefund, Credit: true, Amount: d("30"), Fee: zero, Commission: zero,
			Counterparty: "01700000502", Account: "", TransactionID: "BKA96AB813", Time: at("2024-11-10 14:00"), Balance: d("73.50"), Reference: ""},
	},
	{
		name: "bkash reserved amount released [khata real]", sender: "bKash",
		body: "Reserved amount Tk 385.47 for Uber Bangladesh Ltd-Uber has been released. Balance Tk 527.19. TrxID AHA18706X7 at 10/08/2023 17:37",
		want: Message{Channel: ChannelBkash, Kind: KindReserveReleased, Credit: true, Amount: d("385.47"), Fee: zero, Commission: zero,
			Counterparty: "", Account: "", TransactionID: "AHA18706X7", Time: at("2023-08-10 17:37"), Balance: d("527.19"), Reference: ""},
	},
	{
		name: "bkash deposit of, from a card [khata real]", sender: "bKash",
		body: "You have received deposit of Tk 100.00 from VISA Card. Fee Tk 0.00. Balance Tk 100.41. TrxID AGO3N1P0Z9 at 24/07/2023 17:35",
		want: Message{Channel: ChannelBkash, Kind: KindAddMoney, Credit: true, Amount: d("100"), Fee: zero, Commission: zero,
			Counterparty: "", Account: "", TransactionID: "AGO3N1P0Z9", Time: at("2023-07-24 17:35"), Balance: d("100.41"), Reference: ""},
	},
	{
		name: "bkash iBanking deposit, bank name over a full stop [khata real]", sender: "bKash",
		body: "You have received deposit from iBanking of Tk 2,600.00 from Eastern Bank PLC. Internet Banking. Fee Tk 0.00. Balance Tk 2,938.33. TrxID DH2718YM43 at 02/08/2026 00:43",
		want: Message{Channel: ChannelBkash, Kind: KindAddMoney, Credit: true, Amount: d("2600"), Fee: zero, Commission: zero,
			Counterparty: "", Account: "", TransactionID: "DH2718YM43", Time: at("2026-08-02 00:43"), Balance: d("2938.33"), Reference: ""},
	},
	{
		name: "bkash payment right after the deposit above [khata real]", sender: "bKash",
		body: "Payment of Tk 2,600.00 to CINEPLEXBD is successful. Balance Tk 338.33. TrxID DH2118Z3S1 at 02/08/2026 00:44",
		want: Message{Channel: ChannelBkash, Kind: KindPayment, Credit: false, Amount: d("2600"), Fee: zero, Commission: zero,
			Counterparty: "", Account: "", TransactionID: "DH2118Z3S1", Time: at("2026-08-02 00:44"), Balance: d("338.33"), Reference: ""},
	},
	{
		name: "bkash payment [khata real]", sender: "bKash",
		body: "Payment of Tk 856.00 to FOODPANDA BANGLADESH LIMITED is successful. Balance Tk 41.98. TrxID DHV41FIPGY at 31/08/2026 19:01",
		want: Message{Channel: ChannelBkash, Kind: KindPayment, Credit: false, Amount: d("856"), Fee: zero, Commission: zero,
			Counterparty: "", Account: "", TransactionID: "DHV41FIPGY", Time: at("2026-08-31 19:01"), Balance: d("41.98"), Reference: ""},
	},
	{
		name: "bkash payment, 'Payment Tk' [khata real]", sender: "bKash",
		body: "Payment Tk 120.00 to Grameenphone Ltd-SKITTO-RM44474 is successful. Balance Tk 205.23. TrxID 9KH51OFGZJ at 17/11/2022 18:36",
		want: Message{Channel: ChannelBkash, Kind: KindPayment, Credit: false, Amount: d("120"), Fee: zero, Commission: zero,
			Counterparty: "", Account: "", TransactionID: "9KH51OFGZJ", Time: at("2022-11-17 18:36"), Balance: d("205.23"), Reference: ""},
	},
	{
		name: "bkash payment, full stop after the time [cashiro124 real, ID unmasked to a real shape]", sender: "bKash",
		body: "Payment of Tk 20.00 to Merchant XXXXX is successful. Balance Tk 20,268.41. TrxID DER9P4L2WD at 26/05/2026 15:07.",
		want: Message{Channel: ChannelBkash, Kind: KindPayment, Credit: false, Amount: d("20"), Fee: zero, Commission: zero,
			Counterparty: "", Account: "", TransactionID: "DER9P4L2WD", Time: at("2026-05-26 15:07"), Balance: d("20268.41"), Reference: ""},
	},
	{
		name: "bkash payment being reserved [khata real]", sender: "bKash",
		body: "Payment of Tk 564.11 is being reserved for Uber Bangladesh Ltd-Uber. Balance Tk 214.09. TrxID DHA3BH4G8R at 10/08/2026 18:11",
		want: Message{Channel: ChannelBkash, Kind: KindPaymentReserve, Credit: false, Amount: d("564.11"), Fee: zero, Commission: zero,
			Counterparty: "", Account: "", TransactionID: "DHA3BH4G8R", Time: at("2026-08-10 18:11"), Balance: d("214.09"), Reference: ""},
	},
	{
		name: "bkash reserved payment's successful twin, same TrxID and balance [khata real]", sender: "bKash",
		body: "Payment of Tk 564.11 to Uber Bangladesh Ltd-Uber is successful. Balance Tk 214.09. TrxID DHA3BH4G8R at 10/08/2026 18:11",
		want: Message{Channel: ChannelBkash, Kind: KindPayment, Credit: false, Amount: d("564.11"), Fee: zero, Commission: zero,
			Counterparty: "", Account: "", TransactionID: "DHA3BH4G8R", Time: at("2026-08-10 18:11"), Balance: d("214.09"), Reference: ""},
	},
	{
		name: "bkash savings instalment [khata real]", sender: "bKash",
		body: "Savings Deposit Payment Tk 500.00 to IDLC is successful. Balance Tk 155.75. TrxID 9F34J62U5M at 03/06/2022 23:21",
		want: Message{Channel: ChannelBkash, Kind: KindSavingsDeposit, Credit: false, Amount: d("500"), Fee: zero, Commission: zero,
			Counterparty: "", Account: "", TransactionID: "9F34J62U5M", Time: at("2022-06-03 23:21"), Balance: d("155.75"), Reference: ""},
	},
	{
		name: "bkash send money, tiny, full stop after the time [cashiro124 real, number and ID unmasked to real shapes]", sender: "bKash",
		body: "Send Money Tk 0.20 to 01700000525 successful. Ref 2. Fee Tk 0.00. Balance Tk 0.08. TrxID DF72H9K3MZ at 07/06/2026 22:45.",
		want: Message{Channel: ChannelBkash, Kind: KindSendMoney, Credit: false, Amount: d("0.20"), Fee: zero, Commission: zero,
			Counterparty: "01700000525", Account: "", TransactionID: "DF72H9K3MZ", Time: at("2026-06-07 22:45"), Balance: d("0.08"), Reference: "2"},
	},
	{
		name: "bkash send money with fee [khata real]", sender: "bKash",
		body: "Send Money Tk 1,200.00 to 01700000526 successful. Ref ref. Fee Tk 5.00. Balance Tk 1,431.44. TrxID BGJ18JNM5T at 19/07/2024 11:02",
		want: Message{Channel: ChannelBkash, Kind: KindSendMoney, Credit: false, Amount: d("1200"), Fee: d("5"), Commission: zero,
			Counterparty: "01700000526", Account: "", TransactionID: "BGJ18JNM5T", Time: at("2024-07-19 11:02"), Balance: d("1431.44"), Reference: "ref"},
	},
	{
		name: "bkash cash out with Download App [khata real]", sender: "bKash",
		body: "Cash Out Tk 100.00 to 01700000527 successful. Fee Tk 1.85. Balance Tk 108.85. TrxID 8BN6NN8P8O at 23/02/2021 16:12. Download App: https://bKa.sh/8app",
		want: Message{Channel: ChannelBkash, Kind: KindCashOut, Credit: false, Amount: d("100"), Fee: d("1.85"), Commission: zero,
			Counterparty: "01700000527", Account: "", TransactionID: "8BN6NN8P8O", Time: at("2021-02-23 16:12"), Balance: d("108.85"), Reference: ""},
	},
	{
		name: "bkash recharge request [khata real]", sender: "bKash",
		body: "Received Recharge request of Tk 39.00 for 01700000528. Fee Tk 0.00. Balance Tk 2,647.44. TrxID BGJ48HJIF2 at 19/07/2024 10:41. Wait for confirmation.",
		want: Message{Channel: ChannelBkash, Kind: KindMobileRecharge, Credit: false, Amount: d("39"), Fee: zero, Commission: zero,
			Counterparty: "01700000528", Account: "", TransactionID: "BGJ48HJIF2", Time: at("2024-07-19 10:41"), Balance: d("2647.44"), Reference: ""},
	},
	{
		name: "nagad refund from a merchant, TrnxID and TK [hisabbox real, ID restored to its real shape]", sender: "NAGAD",
		body: "Refund from Daraz BD\nAmount: Tk 239\nTrnxID: 73R4D8ZB\nBalance:TK 267.70\n04/01/2024 18:16",
		want: Message{Channel: ChannelNagad, Kind: KindRefund, Credit: true, Amount: d("239"), Fee: zero, Commission: zero,
			Counterparty: "", Account: "", TransactionID: "73R4D8ZB", Time: at("2024-01-04 18:16"), Balance: d("267.70"), Reference: ""},
	},
	{
		name: "nagad money received, Ref: N/A [hisabbox real, ID restored]", sender: "NAGAD",
		body: "Money Received.\nAmount: Tk 500.00\nSender: 01700000601\nRef: N/A\nTxnID: 72K1W9Q2\nBalance: Tk 505.00\n20/12/2022 19:22",
		want: Message{Channel: ChannelNagad, Kind: KindMoneyReceived, Credit: true, Amount: d("500"), Fee: zero, Commission: zero,
			Counterparty: "01700000601", Account: "", TransactionID: "72K1W9Q2", Time: at("2022-12-20 19:22"), Balance: d("505"), Reference: ""},
	},
	{
		name: "nagad money received with a Ref [hisabbox real, ID restored]", sender: "NAGAD",
		body: "Money Received.\nAmount: Tk 646.00\nSender: 01700000602\nRef: office\nTxnID: 73M6Q2T8\nBalance: Tk 913.70\n29/01/2024 17:29",
		want: Message{Channel: ChannelNagad, Kind: KindMoneyReceived, Credit: true, Amount: d("646"), Fee: zero, Commission: zero,
			Counterparty: "01700000602", Account: "", TransactionID: "73M6Q2T8", Time: at("2024-01-29 17:29"), Balance: d("913.70"), Reference: "office"},
	},
	{
		name: "nagad money received, large [hisabbox real, ID restored]", sender: "NAGAD",
		body: "Money Received.\nAmount: Tk 4000.00\nSender: 01700000603\nRef: N/A\nTxnID: 77A3K5L9\nBalance: Tk 4493.86\n22/08/2025 08:20",
		want: Message{Channel: ChannelNagad, Kind: KindMoneyReceived, Credit: true, Amount: d("4000"), Fee: zero, Commission: zero,
			Counterparty: "01700000603", Account: "", TransactionID: "77A3K5L9", Time: at("2025-08-22 08:20"), Balance: d("4493.86"), Reference: ""},
	},
	{
		name: "nagad money received [smartpay real]", sender: "NAGAD",
		body: "Money Received.\nAmount: Tk 1928.50\nSender: 01700000604\nRef: N/A\nTxnID: 754MJGYV\nBalance: Tk 2065.76\n25/03/2026 16:56",
		want: Message{Channel: ChannelNagad, Kind: KindMoneyReceived, Credit: true, Amount: d("1928.50"), Fee: zero, Commission: zero,
			Counterparty: "01700000604", Account: "", TransactionID: "754MJGYV", Time: at("2026-03-25 16:56"), Balance: d("2065.76"), Reference: ""},
	},
	{
		name: "nagad money received, Ref a name [nihonova real, name replaced]", sender: "Nagad",
		body: "Money Received.\nAmount: Tk 99.00\nSender: 01700000605\nRef: gift\nTxnID: 75HKUOBF\nBalance: Tk 1289.43\n08/06/2026 19:00",
		want: Message{Channel: ChannelNagad, Kind: KindMoneyReceived, Credit: true, Amount: d("99"), Fee: zero, Commission: zero,
			Counterparty: "01700000605", Account: "", TransactionID: "75HKUOBF", Time: at("2026-06-08 19:00"), Balance: d("1289.43"), Reference: "gift"},
	},
	{
		name: "nagad payment to Foodpanda [hisabbox real, ID restored]", sender: "NAGAD",
		body: "Payment to 'Foodpanda Bangladesh' is Successful.\nAmount: Tk  216.49\nTxnID: 77F2P8D1\nBalance: Tk 783.86\n07/08/2025 18:55",
		want: Message{Channel: ChannelNagad, Kind: KindPayment, Credit: false, Amount: d("216.49"), Fee: zero, Commission: zero,
			Counterparty: "", Account: "", TransactionID: "77F2P8D1", Time: at("2025-08-07 18:55"), Balance: d("783.86"), Reference: ""},
	},
}

var realInvalidFixtures = []invalidFixture{
	// Rocket messages that are not transactions, or lack what a chain needs.
	{name: "rocket security code [hisabbox real]", sender: "16216", err: ErrUnknownFormat, reason: "matches no rocket",
		body: "Your security code for Rocket transaction is 750551."},
	{name: "rocket send without balance or time [hisabbox]", sender: "16216", err: ErrUnknownFormat, reason: "matches no rocket",
		body: "Tk 800.00 sent to 01700000003 successfully. TxnID: 4102177001"},
	{name: "rocket received, anonymized ID [hisabbox copy]", sender: "16216", err: ErrUnknownFormat, reason: "10 digits",
		body: "Tk410.00 received from A/C:017000004011 Fee:Tk0, Your A/C Balance: Tk430.00 TxnId:ANONTXNID1 Date:09-APR-20 10:55:36 am."},
	{name: "rocket received from an 11-digit account [hisabbox copy]", sender: "16216", err: ErrUnknownFormat, reason: "account",
		body: "Tk410.00 received from A/C:01700000001 Fee:Tk0, Your A/C Balance: Tk430.00 TxnId:4102055361 Date:09-APR-20 10:55:36 am."},
	{name: "rocket received from a 10-digit account [llmprompt]", sender: "16216", err: ErrUnknownFormat, reason: "account",
		body: "Tk55.00 received from A/C:7136423746 Fee:Tk0, Your A/C Balance: Tk286.00 TxnId:7823478376 Date:20-AUG-23 07:48:09 pm. Download https://bit.ly/nexuspay"},
	{name: "rocket in Bengali numerals [sms-bn]", sender: "16216", err: ErrUnknownFormat,
		body: "Tk ১,২০০.০০ received from A/C: ০১৭১২৩৪৫৬৭৮৯. Fee Tk০.০০. Balance: Tk ১৫,৪০০.০০. TxnId: 2847192841. Date: 13-SEP-26 21:30:15"},
	{name: "rocket amount Tk.50 reads as 50 or 0.50", sender: "16216", err: ErrUnknownFormat, reason: "ambiguous",
		body: "Tk.50 received from A/C:***946 Ref No: NA Fee: Tk.00 NetBal: Tk91.00 TxnId: 6022164590 Date:27-DEC-25 07:20:16 pm."},
	{name: "rocket 24-hour time", sender: "16216", err: ErrUnknownFormat, reason: "time",
		body: "Tk100.00 received from A/C:***946 Fee:Tk0, Your A/C Balance: Tk100.00 TxnId:6022415176 Date:27-DEC-25 20:43:52 pm."},
	{name: "rocket without am or pm", sender: "16216", err: ErrUnknownFormat,
		body: "Tk100.00 received from A/C:***946 Fee:Tk0, Your A/C Balance: Tk100.00 TxnId:6022415176 Date:27-DEC-25 08:43:52"},
	{name: "rocket 30 February", sender: "16216", err: ErrUnknownFormat, reason: "valid date",
		body: "Tk100.00 received from A/C:***946 Fee:Tk0, Your A/C Balance: Tk100.00 TxnId:6022415176 Date:30-FEB-26 08:43:52 pm."},
	{name: "rocket month in lower case", sender: "16216", err: ErrUnknownFormat, reason: "time",
		body: "Tk100.00 received from A/C:***946 Fee:Tk0, Your A/C Balance: Tk100.00 TxnId:6022415176 Date:27-Dec-25 08:43:52 pm."},
	{name: "rocket link cut short [trustpay 2023 comment]", sender: "16216", err: ErrUnknownFormat,
		body: "Cash-Out from A/C: 017000004021 Tk500.00 Comm:Tk2.10; A/C Balance: Tk3,741.39.TxnId: 3478851618 Date:22-JAN-23 10:08:31 am. Download https://bit.ly/nexuspa"},
	{name: "rocket look-alike link", sender: "16216", err: ErrUnknownFormat,
		body: "Tk100.00 received from A/C:***946 Fee:Tk0, Your A/C Balance: Tk100.00 TxnId:6022415176 Date:27-DEC-25 08:43:52 pm. Download https://bit.ly/nexuspay.evil"},
	{name: "rocket sent as a transfer, debit text incomplete [saadtopup]", sender: "16216", err: ErrUnknownFormat,
		body: "Tk12,300.00 transferred to A/C:**864 ..."},
	{name: "rocket body from a bkash sender", sender: "bKash", err: ErrUnknownFormat, reason: "sender is bkash's",
		body: "Tk100.00 received from A/C:***946 Fee:Tk0, Your A/C Balance: Tk100.00 TxnId:6022415176 Date:27-DEC-25 08:43:52 pm. Download https://bit.ly/nexuspay"},
	{name: "bkash body from the rocket sender", sender: "16216", err: ErrUnknownFormat, reason: "sender is rocket's",
		body: "You have received Tk 325.00 from 01700000513. Fee Tk 0.00. Balance Tk 527.09. TrxID DHL8NM6BYC at 21/08/2026 12:35"},

	// bKash texts that carry no balance, or are not transactions.
	{name: "bkash TrxID of 13 characters [llmprompt]", sender: "bKash", err: ErrUnknownFormat, reason: "transaction ID",
		body: "You have received Tk 100.00 from 01700000530. Ref Rzs. Fee Tk 0.00. Balance Tk 7,773.00. TrxID CJNDFH7348C74 at 29/01/2024 17:13"},
	{name: "bkash masked TrxID [cashiro124 as posted]", sender: "bKash", err: ErrUnknownFormat, reason: "transaction ID",
		body: "Payment of Tk 20.00 to Merchant XXXXX is successful. Balance Tk 20,268.41. TrxID XXXXX at 26/05/2026 15:07."},
	{name: "bkash bill payment, no balance [pennywise432 real]", sender: "bKash", err: ErrUnknownFormat, reason: "matches no bkash",
		body: "Bill successfully paid.\nBiller: PALLI BIDYUT\nMM/YYYY: 052026\nSMS Account: XXXXXXXXXXXXX\nAmount: Tk 485.00\nFee: Tk 0.00\nTrxID: DEV2B8L4PK at 01/06/2026 09:12"},
	{name: "bkash remittance, no balance [khata real]", sender: "bKash", err: ErrUnknownFormat, reason: "matches no bkash",
		body: "You have received remittance.\nTotal: Tk 4,105.13\nGovt. incentive: Tk 100.13\nTrxID CJ5114OTQR at 05/10/2025 17:56."},
	{name: "bkash loan terms, no TrxID [khata real]", sender: "bKash", err: ErrUnknownFormat, reason: "matches no bkash",
		body: "You have received Loan of Tk 900.00 from City Bank in your bKash Account. Your first repayment of TK 309.28 is due on 28/09/2026."},
	{name: "bkash payment OTP carrying an amount [khata real]", sender: "bKash", err: ErrUnknownFormat, reason: "matches no bkash",
		body: "Do NOT share your OTP or PIN with anyone. Your bKash OTP for PAYMENT of Tk.750.00 to Software Shop Limited-RM51177 is 816523. Expires in 2 min."},
	{name: "bkash account binding [khata real]", sender: "bKash", err: ErrUnknownFormat, reason: "matches no bkash",
		body: "Your Account Binding request for FOODPANDA BANGLADESH LIMITED is successful. You have authorized FOODPANDA BANGLADESH LIMITED to debit your account for future purchases. For queries, please call 16247."},
	{name: "bkash recharge confirmation with a 5app link [khata real]", sender: "bKash", err: ErrUnknownFormat, reason: "matches no bkash",
		body: "Your bKash Mobile Recharge request of Tk 50.00 for 01700000531 was successful. Use bKash App for convenience & offers! TCA Download App: https://bKa.sh/5app"},
	{name: "bkash recharge confirmation, 2018 [hisabbox real]", sender: "bKash", err: ErrUnknownFormat, reason: "matches no bkash",
		body: "Your bKash Mobile Recharge request of Tk 50.00 for 01700000532 was successful. bKash App diye Mobile Recharge ekdom simple! Get App: http://android.bka.sh"},
	{name: "bkash unknown promotion after the time", sender: "bKash", err: ErrUnknownFormat,
		body: "Congratulations! You have received Cashback Tk 2.90. Balance Tk 1,027.11. TrxID DHN4PFHA3Y at 23/08/2026 10:55. Cashback on everything!"},
	{name: "bkash reference over 64 characters", sender: "bKash", err: ErrUnknownFormat, reason: "reference",
		body: "You have received Tk 500.00 from 01700000529.Ref for the rent of march and april and the electricity bill and water. Fee Tk 0.00. Balance Tk 15,708.79. TrxID DI5276PLJZ at 05/09/2026 21:05"},
	{name: "bkash two full stops after the time", sender: "bKash", err: ErrUnknownFormat,
		body: "Payment of Tk 856.00 to FOODPANDA BANGLADESH LIMITED is successful. Balance Tk 41.98. TrxID DHV41FIPGY at 31/08/2026 19:01.."},
	{name: "bkash bank name with digits over a full stop", sender: "bKash", err: ErrUnknownFormat,
		body: "You have received deposit from iBanking of Tk 2,600.00 from Eastern Bank PLC. Fee Tk 0. Balance Tk 1. Fee Tk 0.00. Balance Tk 2,938.33. TrxID DH2718YM43 at 02/08/2026 00:43"},

	// Nagad texts that carry no balance, or are not transactions.
	{name: "nagad cashback for a payment, no balance [hisabbox real]", sender: "NAGAD", err: ErrUnknownFormat, reason: "matches no nagad",
		body: "Congrats! You've received Cash back/Gift 49.40 Tk for Payment of 494.00 Tk.\n08/01/2023 18:36\nFor Details Call 16167"},
	{name: "nagad cashback won, no balance [hisabbox real]", sender: "NAGAD", err: ErrUnknownFormat, reason: "matches no nagad",
		body: "Congrats! You have won cashback Tk 79.00 for payment of Tk 395.00\n05/04/2023 17:24\nPay with Nagad & get a chance to win BMW car."},
	{name: "nagad registration bonus, no balance [hisabbox real]", sender: "NAGAD", err: ErrUnknownFormat, reason: "matches no nagad",
		body: "Congrats! You have received BDT 25 for Nagad Registration. Stay with Nagad for more offers.\nTxnID: 70CB0N25\n18/02/2020 22:39\nFor details dial 16167"},
	{name: "nagad bill request, no balance [hisabbox real]", sender: "NAGAD", err: ErrUnknownFormat, reason: "matches no nagad",
		body: "Your request for NESCO Prepaid recharge is accepted.\nAmount: Tk 400.00\nAccount No: 81909972\nFee:3.60\nTxnId: 73B8DFOP\n23/10/2024 09:14"},
	{name: "nagad payment cancelled, no balance figure [hisabbox real]", sender: "NAGAD", err: ErrUnknownFormat, reason: "matches no nagad",
		body: "Your payment of tk2  by Alpha Net  made on 27/10/2024 14:05  has been cancelled. Balance is added to your account."},
	{name: "nagad authorization [hisabbox real]", sender: "NAGAD", err: ErrUnknownFormat, reason: "matches no nagad",
		body: "You have authorized Daraz Bangladesh Limit for payment at 21-Dec-22 11:38 AM."},
	{name: "nagad OTP, new layout [hisabbox real]", sender: "NAGAD", err: ErrUnknownFormat, reason: "matches no nagad",
		body: "NEVER share your OTP or PIN with anyone. Nagad will never ask for these.\nYour OTP for Nagad ECOM payment is 608398.\nValidity: 2 minutes.\nHelpline: 16167"},
	{name: "nagad device registration [hisabbox real]", sender: "NAGAD", err: ErrUnknownFormat, reason: "matches no nagad",
		body: "Never Share Any Code.\nDevice registration request.\nUsername:01700000006\nOTP/Code: 095867\nExpiry time:08:45:33\nUID: TestUID123"},
}
