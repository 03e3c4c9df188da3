package engine

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

func TestParseAmount(t *testing.T) {
	valid := map[string]string{"0": "0.00", "1": "1.00", "100": "100.00", "100.5": "100.50", "100.05": "100.05", "25000.00": "25000.00"}
	for in, want := range valid {
		d, err := ParseAmount("amount", in)
		if err != nil || FormatAmount(d) != want {
			t.Errorf("ParseAmount(%q) = %v, %v; want %s", in, FormatAmount(d), err, want)
		}
	}
	for _, in := range []string{"", " ", "-1", "+1", "1e3", "1E3", "01", "00", "1.", ".5", "1.234", "1,000", "١٠٠", "0x10", "NaN", "Infinity", "1 ", "-0", "1_000", strings.Repeat("9", 19)} {
		_, err := ParseAmount("amount", in)
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeInvalidRequest || !strings.HasPrefix(e.Message, "amount: ") {
			t.Errorf("ParseAmount(%q) error = %v, want invalid_request on amount", in, err)
		}
	}
}

func TestNormalizePhone(t *testing.T) {
	valid := map[string]string{
		"01712345678": "01712345678", "8801712345678": "01712345678", "+8801712345678": "01712345678",
		"01312345678": "01312345678", "01912345678": "01912345678",
	}
	for in, want := range valid {
		if got, err := NormalizePhone("phone", in); err != nil || got != want {
			t.Errorf("NormalizePhone(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "01212345678", "01112345678", "0171234567", "017123456789", "+881712345678", "+08801712345678",
		"008801712345678", "1712345678", "017 1234 5678", "017-12345678", "+880 1712345678", "88017123456789", "o1712345678", "٠١٧١٢٣٤٥٦٧٨"} {
		if _, err := NormalizePhone("payer.phone", in); err == nil || !strings.HasPrefix(err.Error(), "invalid_request: payer.phone: ") {
			t.Errorf("NormalizePhone(%q) error = %v", in, err)
		}
	}
}

func TestNewID(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	seen := map[string]bool{}
	prev := ""
	for i := range 1000 {
		id := NewID(PrefixDeposit, now.Add(time.Duration(i)*time.Millisecond))
		if len(id) != len(PrefixDeposit)+26 || !strings.HasPrefix(id, PrefixDeposit) {
			t.Fatalf("bad id %q", id)
		}
		if seen[id] {
			t.Fatalf("duplicate id %q", id)
		}
		if id <= prev {
			t.Fatalf("ids not in time order: %q then %q", prev, id)
		}
		seen[id], prev = true, id
		for _, c := range id[len(PrefixDeposit):] {
			if !strings.ContainsRune(crockford, c) {
				t.Fatalf("id %q has %q outside the alphabet", id, c)
			}
		}
	}
}

func TestKeyring(t *testing.T) {
	k, err := NewKeyring(make([]byte, MasterKeySize))
	if err != nil {
		t.Fatal(err)
	}
	sealed := k.Seal([]byte("secret"), "key_1")
	if strings.Contains(string(sealed), "secret") {
		t.Fatal("sealed value contains the plaintext")
	}
	if got, err := k.Open(sealed, "key_1"); err != nil || string(got) != "secret" {
		t.Fatalf("Open = %q, %v", got, err)
	}
	if _, err := k.Open(sealed, "key_2"); !errors.Is(err, ErrSealBroken) {
		t.Fatalf("Open under another context = %v, want ErrSealBroken", err)
	}
	other, _ := NewKeyring(append(make([]byte, MasterKeySize-1), 1))
	if _, err := other.Open(sealed, "key_1"); !errors.Is(err, ErrSealBroken) {
		t.Fatalf("Open under another master key = %v, want ErrSealBroken", err)
	}
	sealed[len(sealed)-1] ^= 1
	if _, err := k.Open(sealed, "key_1"); !errors.Is(err, ErrSealBroken) {
		t.Fatalf("Open of a tampered value = %v, want ErrSealBroken", err)
	}
	if _, err := NewKeyring(make([]byte, 16)); err == nil {
		t.Fatal("a 16-byte master key was accepted")
	}
}

func TestMetadata(t *testing.T) {
	got, err := normalizeMetadata([]byte("{ \"b\" : 1.10 ,\n \"a\": \"<x>\" }"))
	if err != nil || string(got) != `{"b":1.10,"a":"<x>"}` {
		t.Fatalf("normalizeMetadata = %s, %v", got, err)
	}
	if got, _ := normalizeMetadata(nil); string(got) != "{}" {
		t.Fatalf("absent metadata = %s, want {}", got)
	}
	same := [][2]string{{`{"a":1,"b":2}`, `{"b":2,"a":1}`}, {`{"a":{"x":[1,2]}}`, `{"a":{"x":[1,2]}}`}}
	for _, p := range same {
		if !sameMetadata([]byte(p[0]), []byte(p[1])) {
			t.Errorf("%s and %s should be the same", p[0], p[1])
		}
	}
	differ := [][2]string{{`{"a":1}`, `{"a":1.0}`}, {`{"a":1}`, `{"a":"1"}`}, {`{"a":[1,2]}`, `{"a":[2,1]}`}, {`{}`, `{"a":null}`}}
	for _, p := range differ {
		if sameMetadata([]byte(p[0]), []byte(p[1])) {
			t.Errorf("%s and %s should differ", p[0], p[1])
		}
	}
}

func TestFee(t *testing.T) {
	d := decimal.RequireFromString
	tests := []struct{ amount, percent, fixed, want string }{
		{"1000", "1.5", "2", "17.00"},
		{"333.33", "1", "0", "3.33"}, // 3.3333 rounds down
		{"100.50", "1", "0", "1.01"}, // 1.005 rounds half away from zero
		{"100", "0", "0", "0"},
		{"100", "100", "5", "105"},
	}
	for _, tt := range tests {
		if got := (FeeRule{d(tt.percent), d(tt.fixed)}).Of(d(tt.amount)); !got.Equal(d(tt.want)) {
			t.Errorf("Fee(%s, %s%%, %s) = %s, want %s", tt.amount, tt.percent, tt.fixed, got, tt.want)
		}
	}
}

func TestJournalBalance(t *testing.T) {
	d := decimal.RequireFromString
	ok := &Journal{Entries: []Entry{{AccountExternal, d("-10")}, {AccountAvailable, d("9.5")}, {AccountFees, d("0.5")}}}
	if err := ok.checkBalanced(); err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]Entry{
		{{AccountExternal, d("-10")}, {AccountAvailable, d("9.99")}},
		{{AccountExternal, d("-10.005")}, {AccountAvailable, d("10.005")}},
		{{AccountAvailable, d("0")}},
		nil,
	} {
		if err := (&Journal{Entries: bad}).checkBalanced(); err == nil {
			t.Errorf("%v passed as balanced", bad)
		}
	}
}

func TestCheckText(t *testing.T) {
	for _, bad := range []string{"a\x00b", "a\nb", "\xff", "tab\there", "del\x7f"} {
		if checkText("name", bad) == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	for _, good := range []string{"Agent Rahim", "দোকান", "O'Brien & Co. <ltd>"} {
		if err := checkText("name", good); err != nil {
			t.Errorf("%q refused: %v", good, err)
		}
	}
}

// FormatAmount's hand-made path gives what StringFixed(2) gives, for the
// amounts it takes (at most two decimals, 15 digits) and around them.
func TestFormatAmountMatchesStringFixed(t *testing.T) {
	var cases []decimal.Decimal
	for _, s := range []string{"0", "0.0", "0.00", "0.5", "0.05", "-0.05", "-0.5", "-1", "1", "10", "99.99", "100.10",
		"750.50", "25000", "999999999999999", "999999999999999.99", "-999999999999999.99", "1000000000000000",
		"9999999999999999.99", "0.001", "0.005", "-0.005", "1.235", "5E+2", "1e3", "123456789012345678901234567890.1"} {
		cases = append(cases, decimal.RequireFromString(s))
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 100_000 {
		digits := r.IntN(17) + 1
		v := r.Int64N(int64(math.Pow10(digits)))
		if r.IntN(4) == 0 {
			v = -v
		}
		cases = append(cases, decimal.New(v, -int32(r.IntN(4))), decimal.New(v, int32(r.IntN(2))))
	}
	cases = append(cases, decimal.Decimal{}, decimal.NewFromInt(math.MaxInt64), decimal.New(math.MinInt64, -2))
	for _, d := range cases {
		if got, want := FormatAmount(d), d.StringFixed(2); got != want {
			t.Fatalf("FormatAmount(%s) = %q, want %q", d, got, want)
		}
	}
}
