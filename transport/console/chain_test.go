package console

import (
	"strings"
	"testing"
)

// TestHideFigures: every figure an SMS or a reason may print a balance
// with is hidden, glued to a word or not, in either script; payd's IDs and
// the message's own transaction ID stay readable.
func TestHideFigures(t *testing.T) {
	for _, c := range []struct{ in, keep, want string }{
		{"Cash Out Tk 500.00 from 01712345678 successful. Fee Tk 0.00. Balance Tk 74,418.46. TrxID 8N7A6D5EE7 at 21/11/2026 16:00", "8N7A6D5EE7",
			"Cash Out Tk ••• from ••• successful. Fee Tk •••. Balance Tk •••. TrxID 8N7A6D5EE7 at •••/•••/••• •••:•••"},
		{"Tk1,200.00 received from A/C:***946 Fee:Tk.00, Your A/C Balance: Tk74418.46.TxnId:1234567890 Date:21-NOV-26", "1234567890",
			"Tk••• received from A/C:***••• Fee:Tk.•••, Your A/C Balance: Tk•••.TxnId:1234567890 Date:•••-NOV-•••"},
		{"Balance:TK 74418.46\nBal: ৭৪,৪১৮.৪৬", "", "Balance:TK •••\nBal: •••"},
		{"balance 80000.00 does not follow the wallet's last known balance 74418.46", "", "balance ••• does not follow the wallet's last known balance •••"},
		{"sms_01m7yrrt81ycmemm3a9pnsheke, sms_01m7yrrt81a6hm5z36crr4z573 all follow balance 74418.46: at most one is genuine", "",
			"sms_01m7yrrt81ycmemm3a9pnsheke, sms_01m7yrrt81a6hm5z36crr4z573 all follow balance •••: at most one is genuine"},
		{`balance "74,41.846" has misplaced thousands separators`, "", `balance "•••" has misplaced thousands separators`},
	} {
		got := hideFigures(c.in, c.keep)
		if got != c.want {
			t.Errorf("hideFigures(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
		if strings.Contains(got, "418") {
			t.Errorf("a balance's digits survive in %q", got)
		}
	}
}
