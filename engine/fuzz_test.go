package engine

import (
	"bytes"
	"encoding/json"
	"regexp"
	"testing"
)

// FuzzParseAmount: an amount is accepted exactly when it matches the
// contract's pattern, and an accepted one round-trips through its
// two-decimal form.
func FuzzParseAmount(f *testing.F) {
	for _, s := range []string{"0", "100", "100.5", "25000.00", "-0", "1e3", "0x10", " 1", "1.", ".5", "٣", "99999999999999999999", "1_0", "+1", "0.001"} {
		f.Add(s)
	}
	contract := regexp.MustCompile(`^(?:0|[1-9]\d*)(?:\.\d{1,2})?$`)
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseAmount("amount", s)
		if err != nil {
			return
		}
		if !contract.MatchString(s) {
			t.Fatalf("%q accepted but does not match the contract's pattern", s)
		}
		back, err := ParseAmount("amount", FormatAmount(d))
		if err != nil || !back.Equal(d) {
			t.Fatalf("%q -> %s does not round-trip: %v", s, FormatAmount(d), err)
		}
	})
}

// FuzzNormalizePhone: an accepted number comes out in the local form, and
// normalizing it again changes nothing.
func FuzzNormalizePhone(f *testing.F) {
	for _, s := range []string{"01712345678", "8801712345678", "+8801712345678", "01212345678", "+880 1712345678", "017123456789", "٠١٧١٢٣٤٥٦٧٨", "+88017123456７8"} {
		f.Add(s)
	}
	local := regexp.MustCompile(`^01[3-9][0-9]{8}$`)
	f.Fuzz(func(t *testing.T, s string) {
		n, err := NormalizePhone("phone", s)
		if err != nil {
			return
		}
		if !local.MatchString(n) {
			t.Fatalf("%q normalized to %q", s, n)
		}
		if again, err := NormalizePhone("phone", n); err != nil || again != n {
			t.Fatalf("%q is not stable: %q %v", n, again, err)
		}
	})
}

// FuzzMetadata: accepted metadata is a compact JSON object within the
// limits, compacting it again changes nothing, and it equals itself.
func FuzzMetadata(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1}`, `{ "a" : [1, 2.50, "x"] }`, `[]`, `"x"`, `{"a":1,"a":2}`, `{"\u0000":"\ud800"}`, `{"n":1e400}`, `{"a":{"b":{"c":null}}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		m, err := normalizeMetadata(raw)
		if err != nil {
			return
		}
		if len(m) > MaxMetadataBytes || m[0] != '{' || !json.Valid(m) {
			t.Fatalf("%q accepted as %q", raw, m)
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, m); err != nil || !bytes.Equal(buf.Bytes(), m) {
			t.Fatalf("%q is not compact", m)
		}
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(m, &keys); err != nil || len(keys) > MaxMetadataKeys {
			t.Fatalf("%q: %d keys, %v", m, len(keys), err)
		}
		if !sameMetadata(m, m) {
			t.Fatalf("%q differs from itself", m)
		}
	})
}
