package engine

import (
	"bytes"
	"encoding/json"
	"testing"

	"pgregory.net/rapid"
)

// AppendJSON writes what encoding/json writes (HTML escaping off, as the
// API answers), on views with strings of any bytes: quotes, control
// characters, invalid UTF-8, U+2028, HTML.
func TestH2HDepositAppendJSON(t *testing.T) {
	str := rapid.OneOf(
		rapid.String(),
		rapid.StringOf(rapid.RuneFrom([]rune{'"', '\\', '\n', '\t', '\b', '\f', '\r', 0, 0x1f, 0x7f, '<', '>', '&', '\u2028', '\u2029', 'é', '৳', utf8RuneError})),
		rapid.Map(rapid.SliceOf(rapid.Byte()), func(b []byte) string { return string(b) }), // invalid UTF-8 too
	)
	nullable := rapid.Ptr(str, true)
	metadata := rapid.SampledFrom([]string{"nil", "", "{}", `{"order":"A-1","n":[1, 2.5e3,true,null],"s":"<b>&\u2028"}`, " { \"a\" : { } } "})
	rapid.Check(t, func(t *rapid.T) {
		v := H2HDeposit{
			ID: str.Draw(t, "id"), Amount: str.Draw(t, "amount"), PaymentMethod: str.Draw(t, "method"),
			Status: str.Draw(t, "status"), Metadata: json.RawMessage(metadata.Draw(t, "metadata")),
			MerchantID: str.Draw(t, "merchant_id"), CheckoutMode: str.Draw(t, "mode"), ExpiresAt: str.Draw(t, "expires"),
			Verification: VerificationState{
				State: str.Draw(t, "state"), AttemptsUsed: rapid.Int().Draw(t, "used"),
				AttemptsRemaining: rapid.Int().Draw(t, "remaining"), FailureCode: nullable.Draw(t, "failure"),
			},
			ProviderTransactionID: nullable.Draw(t, "trx"),
		}
		if string(v.Metadata) == "nil" {
			v.Metadata = nil
		}
		switch rapid.IntRange(0, 3).Draw(t, "next_action") {
		case 1:
			v.NextAction = RedirectAction{Type: str.Draw(t, "type"), URL: str.Draw(t, "url")}
		case 2:
			a := DisplayInstructionsAction{
				Type: str.Draw(t, "type"), Channel: str.Draw(t, "channel"), Operation: str.Draw(t, "operation"),
				Recipient: Recipient{Type: str.Draw(t, "rtype"), Value: str.Draw(t, "rvalue"), Name: nullable.Draw(t, "rname")},
				QRPayload: nullable.Draw(t, "qr"), Amount: str.Draw(t, "aamount"), Currency: str.Draw(t, "currency"),
				Verification: VerificationTarget{Endpoint: str.Draw(t, "endpoint")},
			}
			if rapid.Bool().Draw(t, "fields") {
				a.Verification.RequiredFields = rapid.SliceOf(str).Draw(t, "required")
			}
			v.NextAction = a
		case 3:
			v.NextAction = map[string]int{"other": 1} // left to encoding/json
		}
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		werr := enc.Encode(v)
		got, err := v.AppendJSON([]byte("prefix"))
		if (err != nil) != (werr != nil) {
			t.Fatalf("AppendJSON error %v, encoding/json's %v", err, werr)
		}
		if err != nil {
			return
		}
		if w := "prefix" + string(bytes.TrimSuffix(want.Bytes(), []byte("\n"))); string(got) != w {
			t.Fatalf("AppendJSON:\n%q\nencoding/json:\n%q", got, w)
		}
	})
}

const utf8RuneError = '\uFFFD'

// Metadata that is not JSON is an error, as from encoding/json.
func TestH2HDepositAppendJSONBadMetadata(t *testing.T) {
	for _, m := range []string{`{"a":`, ``, `{} {}`} {
		v := H2HDeposit{Metadata: json.RawMessage(m)}
		if _, err := v.AppendJSON(nil); err == nil {
			t.Errorf("%q: no error", m)
		}
		if _, err := json.Marshal(v); err == nil {
			t.Errorf("%q: encoding/json: no error", m)
		}
	}
}
