package smsparse

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// diff lists how got differs from want, comparing every field.
func diff(got, want *Message) []string {
	var out []string
	str := func(field, g, w string) {
		if g != w {
			out = append(out, fmt.Sprintf("%s = %q, want %q", field, g, w))
		}
	}
	dec := func(field string, g, w decimal.Decimal) {
		if !g.Equal(w) {
			out = append(out, fmt.Sprintf("%s = %s, want %s", field, g, w))
		}
	}
	str("Channel", got.Channel, want.Channel)
	str("Kind", got.Kind, want.Kind)
	if got.Credit != want.Credit {
		out = append(out, fmt.Sprintf("Credit = %t, want %t", got.Credit, want.Credit))
	}
	dec("Amount", got.Amount, want.Amount)
	dec("Fee", got.Fee, want.Fee)
	dec("Commission", got.Commission, want.Commission)
	str("Counterparty", got.Counterparty, want.Counterparty)
	str("Account", got.Account, want.Account)
	str("TransactionID", got.TransactionID, want.TransactionID)
	// Same instant, and shown in Dhaka's offset.
	if !got.Time.Equal(want.Time) || got.Time.Format(time.RFC3339Nano) != want.Time.Format(time.RFC3339Nano) {
		out = append(out, fmt.Sprintf("Time = %s, want %s", got.Time.Format(time.RFC3339Nano), want.Time.Format(time.RFC3339Nano)))
	}
	dec("Balance", got.Balance, want.Balance)
	str("Reference", got.Reference, want.Reference)
	return out
}

func TestParseValid(t *testing.T) {
	t.Parallel()
	for _, fx := range validFixtures {
		t.Run(fx.name, func(t *testing.T) {
			t.Parallel()
			got, err := Parse(fx.sender, fx.body)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			for _, d := range diff(got, &fx.want) {
				t.Error(d)
			}
		})
	}
}

func TestParseInvalid(t *testing.T) {
	t.Parallel()
	for _, fx := range invalidFixtures {
		t.Run(fx.name, func(t *testing.T) {
			t.Parallel()
			got, err := Parse(fx.sender, fx.body)
			if !errors.Is(err, fx.err) {
				t.Fatalf("Parse = %+v, %v; want error %v", got, err, fx.err)
			}
			if got != nil {
				t.Errorf("Parse returned a message with its error: %+v", got)
			}
			if !strings.Contains(err.Error(), fx.reason) {
				t.Errorf("error %q does not say %q", err, fx.reason)
			}
		})
	}
}

// The same message, laid out differently by the phone or the forwarder,
// parses to the same fields.
func TestParseWhitespaceVariants(t *testing.T) {
	t.Parallel()
	variants := map[string]func(string) string{
		"CRLF":               func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") },
		"CR":                 func(s string) string { return strings.ReplaceAll(s, "\n", "\r") },
		"lines joined":       func(s string) string { return strings.ReplaceAll(s, "\n", " ") },
		"double spaces":      func(s string) string { return strings.ReplaceAll(s, " ", "  ") },
		"non-breaking space": func(s string) string { return strings.ReplaceAll(s, " ", "\u00a0") },
		"padded":             func(s string) string { return "\n \t" + s + " \r\n" },
	}
	for _, fx := range validFixtures {
		for name, vary := range variants {
			body := vary(fx.body)
			got, err := Parse(fx.sender, body)
			if err != nil {
				t.Errorf("%s, %s: Parse(%q): %v", fx.name, name, body, err)
				continue
			}
			for _, d := range diff(got, &fx.want) {
				t.Errorf("%s, %s: %s", fx.name, name, d)
			}
		}
	}
}

// A message cut short is refused, unless what is left is itself the whole
// message (a promotion or Upay's final full stop cut off).
func TestParseTruncated(t *testing.T) {
	t.Parallel()
	for _, fx := range validFixtures {
		for i := range fx.body {
			prefix := fx.body[:i]
			got, err := Parse(fx.sender, prefix)
			if err == nil {
				for _, d := range diff(got, &fx.want) {
					t.Errorf("%s cut to %q: %s", fx.name, prefix, d)
				}
				continue
			}
			if !errors.Is(err, ErrUnknownFormat) {
				t.Errorf("%s cut to %q: error %v does not wrap ErrUnknownFormat", fx.name, prefix, err)
			}
		}
	}
}

// Text that real messages do not carry, around a real message, is refused.
func TestParseExtraText(t *testing.T) {
	t.Parallel()
	wraps := []func(string) string{
		func(s string) string { return "FWD: " + s },
		func(s string) string { return "Fw:\n" + s },
		func(s string) string { return s + " Thanks" },
		func(s string) string { return s + "\nFor details call 16247" },
		func(s string) string { return s + s },
		func(s string) string { return "x" + s },
		func(s string) string { return s + "." + "." },
	}
	for _, fx := range validFixtures {
		for i, wrap := range wraps {
			body := wrap(fx.body)
			if got, err := Parse(fx.sender, body); !errors.Is(err, ErrUnknownFormat) {
				t.Errorf("%s, wrapping %d: Parse(%q) = %+v, %v; want ErrUnknownFormat", fx.name, i, body, got, err)
			}
		}
	}
}

// The channel comes from the sender: another channel's message from a
// whitelisted sender is refused, and says so.
func TestParseOtherChannelsSender(t *testing.T) {
	t.Parallel()
	senderOf := map[string]string{ChannelBkash: "bKash", ChannelNagad: "NAGAD", ChannelUpay: "upay", ChannelRocket: "16216"}
	for _, fx := range validFixtures {
		for channel, sender := range senderOf {
			if channel == fx.want.Channel {
				continue
			}
			_, err := Parse(sender, fx.body)
			if !errors.Is(err, ErrUnknownFormat) || !strings.Contains(err.Error(), "but the sender is "+channel) {
				t.Errorf("%s from %s: error %v, want ErrUnknownFormat naming the mismatch", fx.name, sender, err)
			}
		}
	}
}

// Every format is exercised by a fixture, and each deposit kind a channel
// has a format for by at least four.
func TestFixtureCoverage(t *testing.T) {
	t.Parallel()
	hits := make(map[*format]int)
	perKind := make(map[string]int)
	for _, fx := range validFixtures {
		matched := 0
		for _, f := range formats {
			if f.channel == fx.want.Channel && f.re.MatchString(normalize(fx.body)) {
				hits[f]++
				matched++
			}
		}
		if matched != 1 {
			t.Errorf("%s matches %d formats, want exactly 1", fx.name, matched)
		}
		perKind[fx.want.Channel+" "+fx.want.Kind]++
	}
	for _, f := range formats {
		if hits[f] == 0 {
			t.Errorf("no fixture for %s %s format %q", f.channel, f.kind, f.tmpl)
		}
		switch f.kind {
		case KindMoneyReceived, KindCashIn, KindPaymentReceived, KindCashOutReceived:
			if n := perKind[f.channel+" "+f.kind]; n < 4 {
				t.Errorf("%s %s has %d fixtures, want at least 4", f.channel, f.kind, n)
			}
		}
	}
}

func TestKinds(t *testing.T) {
	t.Parallel()
	debits := []string{KindSendMoney, KindCashOut, KindPayment, KindPaymentReserve, KindSavingsDeposit, KindMobileRecharge, KindB2BTransfer, KindCashInSent}
	creditKinds := []string{KindMoneyReceived, KindCashIn, KindPaymentReceived, KindCashOutReceived, KindB2BReceived, KindAddMoney, KindCashback,
		KindRefund, KindLoanReceived, KindInterest, KindCommission, KindReserveReleased}
	for _, k := range debits {
		if credit, ok := credits[k]; !ok || credit {
			t.Errorf("credits[%q] = %t, %t; want false, true", k, credit, ok)
		}
	}
	for _, k := range creditKinds {
		if credit, ok := credits[k]; !ok || !credit {
			t.Errorf("credits[%q] = %t, %t; want true, true", k, credit, ok)
		}
	}
	if len(credits) != len(debits)+len(creditKinds) {
		t.Errorf("credits has %d kinds, want %d", len(credits), len(debits)+len(creditKinds))
	}
}

func TestChannelOf(t *testing.T) {
	t.Parallel()
	for sender, want := range map[string]string{
		"bKash": ChannelBkash, "BKASH": ChannelBkash, " bkash ": ChannelBkash, "16247": ChannelBkash,
		"NAGAD": ChannelNagad, "Nagad": ChannelNagad, "16167": ChannelNagad,
		"upay": ChannelUpay, "Upay": ChannelUpay, "16268": ChannelUpay,
		"16216": ChannelRocket, " 16216 ": ChannelRocket,
		"": "", "bKash-Info": "", "bkash.": "", "b Kash": "", "NAGADX": "", "Rocket": "", "DBBL": "", "162160": "", "+16216": "",
		"01700000505": "", "+8801700000505": "", "162470": "", "1624": "", "upay bd": "",
	} {
		got, ok := ChannelOf(sender)
		if got != want || ok != (want != "") {
			t.Errorf("ChannelOf(%q) = %q, %t; want %q, %t", sender, got, ok, want, want != "")
		}
	}
}

func TestDelta(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		m    Message
		want string
	}{
		{Message{Credit: true, Amount: d("500"), Fee: zero, Commission: zero}, "500"},
		{Message{Credit: true, Amount: d("2100"), Fee: zero, Commission: d("8.61")}, "2108.61"},
		{Message{Credit: true, Amount: d("150"), Fee: d("1.50"), Commission: d("0.61425")}, "149.11425"},
		{Message{Credit: false, Amount: d("510"), Fee: d("5"), Commission: zero}, "-515"},
		{Message{Credit: false, Amount: d("3000"), Fee: zero, Commission: d("12.30")}, "-2987.70"},
	} {
		if got := tc.m.Delta(); !got.Equal(d(tc.want)) {
			t.Errorf("Delta of %+v = %s, want %s", tc.m, got, tc.want)
		}
	}
}

// Consecutive real messages of one wallet: each balance is the one before
// plus the later message's Delta. The pairs come from one inbox each
// ([mfsseed], [khata], [smartpay]).
func TestDeltaChainsRealMessages(t *testing.T) {
	t.Parallel()
	for _, pair := range [][2]string{
		{"You have received Tk 500.00 from 01700000101. Fee Tk 0.00. Balance Tk 15,708.79. TrxID DI5276PLJY at 05/09/2026 21:01",
			"Cash In Tk 499.00 from 01800000122 successful. Fee Tk 0.00. Balance Tk 16,207.79. TrxID DI5876R1VG at 05/09/2026 21:02. Download App: https://bKa.sh/8app"},
		{"You have received Tk 142.00 from 01700000511. Fee Tk 0.00. Balance Tk 356.09. TrxID DHA9BTWHE1 at 10/08/2026 22:10",
			"You have received Tk 142.00 from 01700000512. Fee Tk 0.00. Balance Tk 498.09. TrxID DHA5BUPNF1 at 10/08/2026 22:27"},
		{"You have received Tk 66.00 from 01700000515. Fee Tk 0.00. Balance Tk 131.09. TrxID DHK6MX34WC at 20/08/2026 18:39",
			"You have received Tk 71.00 from 01700000516. Fee Tk 0.00. Balance Tk 202.09. TrxID DHK2MX5HZA at 20/08/2026 18:39"},
		{"You have received Digital Loan Tk 500.00 from City Bank. Balance Tk 1,024.21. TrxID DHN2PFGRRC at 23/08/2026 10:55.",
			"Congratulations! You have received Cashback Tk 2.90. Balance Tk 1,027.11. TrxID DHN4PFHA3Y at 23/08/2026 10:55. Cashback on Loan!"},
		{"You have received deposit from iBanking of Tk 2,600.00 from Eastern Bank PLC. Internet Banking. Fee Tk 0.00. Balance Tk 2,938.33. TrxID DH2718YM43 at 02/08/2026 00:43",
			"Payment of Tk 2,600.00 to CINEPLEXBD is successful. Balance Tk 338.33. TrxID DH2118Z3S1 at 02/08/2026 00:44"},
		{"Cash In Tk 1,020.00 from 01700000521 successful. Fee Tk 0.00. Balance Tk 1,033.91. TrxID DG27WSGI49 at 02/07/2026 13:55",
			"You have received Tk 317.00 from 01700000520. Fee Tk 0.00. Balance Tk 1,350.91. TrxID DG25WUQEH1 at 02/07/2026 15:00"},
	} {
		first, err := Parse("bKash", pair[0])
		if err != nil {
			t.Fatal(err)
		}
		second, err := Parse("bKash", pair[1])
		if err != nil {
			t.Fatal(err)
		}
		if got := first.Balance.Add(second.Delta()); !got.Equal(second.Balance) {
			t.Errorf("%s + %s = %s, want the second balance %s", first.Balance, second.Delta(), got, second.Balance)
		}
	}
}

func TestParseRocketAmount(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]string{
		"100.00": "100", "26,900.00": "26900", "0": "0", ".00": "0", ".05": "0.05", ".0": "0", ".20.00": "20", ".1,250.00": "1250", ".5.5": "5.5",
	} {
		got, err := parseRocketAmount("amount", s, 2)
		if err != nil || !got.Equal(d(want)) {
			t.Errorf("parseRocketAmount(%q) = %s, %v; want %s", s, got, err, want)
		}
	}
	for s, why := range map[string]string{
		".50": "ambiguous", ".5": "ambiguous", ".10": "ambiguous", "..5": "well-formed", ".": "well-formed", "": "well-formed",
		"05.00": "well-formed", ".5,00.00": "separators", ".20.000": "decimals", "1,00,000.00": "separators",
	} {
		if got, err := parseRocketAmount("amount", s, 2); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("parseRocketAmount(%q) = %s, %v; want an error saying %q", s, got, err, why)
		}
	}
}

func TestParseRocketTime(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]string{
		"27-DEC-25 08:43:52 pm": "2025-12-27 20:43:52", "08-JUN-26 06:21:43 am": "2026-06-08 06:21:43",
		"02-JUL-26 12:14:09 am": "2026-07-02 00:14:09", "28-DEC-25 12:05:10 pm": "2025-12-28 12:05:10",
		"29-FEB-24 11:59:59 pm": "2024-02-29 23:59:59", "01-JAN-00 01:00:00 am": "2000-01-01 01:00:00",
	} {
		got, err := parseRocketTime(s)
		if err != nil || !got.Equal(atSec(want)) {
			t.Errorf("parseRocketTime(%q) = %s, %v; want %s", s, got, err, want)
		}
		if _, offset := got.Zone(); offset != 6*60*60 {
			t.Errorf("parseRocketTime(%q) offset %d, want +6h", s, offset)
		}
	}
	for _, s := range []string{"29-FEB-25 10:00:00 am", "00-JAN-25 10:00:00 am", "32-JAN-25 10:00:00 am", "01-JNU-25 10:00:00 am",
		"01-Jan-25 10:00:00 am", "01-JAN-25 00:10:00 am", "01-JAN-25 13:00:00 pm", "01-JAN-25 10:60:00 am", "01-JAN-25 10:00:60 am",
		"01-JAN-25 10:00:00 AM", "01-JAN-25 10:00:00", "01-JAN-2025 10:00:00 am", "1-JAN-25 10:00:00 am", "01-JAN-25 10:00 am"} {
		if got, err := parseRocketTime(s); err == nil {
			t.Errorf("parseRocketTime(%q) = %s, want an error", s, got)
		}
	}
}

func TestParseRocketAccount(t *testing.T) {
	t.Parallel()
	for s, phone := range map[string]string{"***946": "", "*842": "", "**271": "", "***00001": "", "017559717268": "01755971726"} {
		account, gotPhone, err := parseRocketAccount(s)
		if err != nil || account != s || gotPhone != phone {
			t.Errorf("parseRocketAccount(%q) = %q, %q, %v; want %q, %q", s, account, gotPhone, err, s, phone)
		}
	}
	for _, s := range []string{"", "*", "***", "01755971726", "7136423746", "0175597172680", "012559717268", "***1234567", "17559717268*"} {
		if a, p, err := parseRocketAccount(s); err == nil {
			t.Errorf("parseRocketAccount(%q) = %q, %q, want an error", s, a, p)
		}
	}
}

func TestParseAmount(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]string{
		"0": "0", "0.00": "0", "5": "5", "500": "500", "500.0": "500", "500.00": "500",
		"1,500.00": "1500", "121,710.33": "121710.33", "1,000,000": "1000000", "110060.81": "110060.81",
	} {
		got, err := parseAmount("amount", s, 2)
		if err != nil || !got.Equal(d(want)) {
			t.Errorf("parseAmount(%q) = %s, %v; want %s", s, got, err, want)
		}
	}
	for _, s := range []string{"", ".5", "5.", "05", "00.00", "5,00.00", "1,5000", "1,00,000.00", ",500", "500,", "1,500.000", "1.2.3", "5 00", "-5", "+5", "1e3", "٥٠٠"} {
		if got, err := parseAmount("amount", s, 2); err == nil {
			t.Errorf("parseAmount(%q) = %s, want an error", s, got)
		}
	}
	if _, err := parseAmount("commission", "16.1343", 6); err != nil {
		t.Errorf("commission with four decimals: %v", err)
	}
}

func TestNormalizePhone(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]string{
		"01712345678": "01712345678", "+8801712345678": "01712345678", "8801712345678": "01712345678",
		"01312345678": "01312345678", "01912345678": "01912345678",
	} {
		if got, err := normalizePhone(s); got != want || err != nil {
			t.Errorf("normalizePhone(%q) = %q, %v; want %q", s, got, err, want)
		}
	}
	for _, s := range []string{"", "0171234567", "017123456789", "01212345678", "01012345678", "+01712345678", "+8801212345678", "88001712345678", "1712345678", "+880171234567"} {
		if got, err := normalizePhone(s); err == nil {
			t.Errorf("normalizePhone(%q) = %q, want an error", s, got)
		}
	}
}

func TestParseTime(t *testing.T) {
	t.Parallel()
	got, err := parseTime("29/02/2024 23:59")
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2024, 2, 29, 17, 59, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("29/02/2024 23:59 = %s, want %s", got, want)
	}
	if _, offset := got.Zone(); offset != 6*60*60 {
		t.Errorf("offset %d, want +6h", offset)
	}
	for _, s := range []string{"29/02/2025 10:00", "00/01/2025 10:00", "32/01/2025 10:00", "01/00/2025 10:00", "01/13/2025 10:00",
		"01/01/2025 24:00", "01/01/2025 10:60", "1/1/2025 10:00", "01/01/25 10:00", "01/01/1999 10:00", "01/01/2100 10:00", "01/01/2025 10:00:00"} {
		if got, err := parseTime(s); err == nil {
			t.Errorf("parseTime(%q) = %s, want an error", s, got)
		}
	}
}
