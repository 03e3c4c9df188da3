package engine

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

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

// A withdrawal's view, likewise, alone and as an event's data.
func TestWithdrawalViewAppendJSON(t *testing.T) {
	str := rapid.OneOf(
		rapid.String(),
		rapid.StringOf(rapid.RuneFrom([]rune{'"', '\\', '\n', '\t', 0, 0x1f, 0x7f, '<', '>', '&', '\u2028', '\u2029', 'é', '৳', utf8RuneError})),
		rapid.Map(rapid.SliceOf(rapid.Byte()), func(b []byte) string { return string(b) }),
	)
	metadata := rapid.SampledFrom([]string{"nil", "", "{}", `{"order":"A-1","n":[1, 2.5e3,true,null],"s":"<b>&\u2028"}`, " { \"a\" : { } } ", `{"a":`})
	now := time.Date(2026, 11, 21, 10, 0, 0, 123456000, time.UTC)
	rapid.Check(t, func(t *rapid.T) {
		v := WithdrawalView{
			ID: str.Draw(t, "id"), Phone: str.Draw(t, "phone"), PaymentMethod: str.Draw(t, "method"),
			Amount: str.Draw(t, "amount"), Status: str.Draw(t, "status"),
			Metadata: json.RawMessage(metadata.Draw(t, "metadata")), MerchantID: str.Draw(t, "merchant_id"),
		}
		if string(v.Metadata) == "nil" {
			v.Metadata = nil
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
		ev, err := newEvent("org_1", EventWithdrawCreated, v.ID, v, now)
		if err != nil {
			t.Fatal(err)
		}
		wantEv, err := marshalNoEscape(eventBody{ID: ev.ID, Type: EventWithdrawCreated, Timestamp: FormatTime(now), Data: v})
		if err != nil {
			t.Fatal(err)
		}
		if string(ev.Payload) != string(wantEv) {
			t.Fatalf("payload:\n%s\nencoding/json:\n%s", ev.Payload, wantEv)
		}
	})
}

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

// TestEventPayloadAppendJSON: an event of an H2H deposit's view, encoded
// without reflection, is byte for byte the envelope encoding/json writes.
func TestEventPayloadAppendJSON(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 123456000, time.UTC)
	trx, code := "BK<&>\u2028\"1", "amount_mismatch"
	for _, v := range []any{
		H2HDeposit{ID: "dep_1", Amount: "500", PaymentMethod: "bkash_agent", Status: "succeeded",
			Metadata: json.RawMessage(` {"s":"<b>&\u2028", "n":[1, 2.5e3]} `), MerchantID: "m\"\\\n\x01é",
			NextAction: DisplayInstructionsAction{Type: "display_instructions", Channel: "bkash", Recipient: Recipient{Value: "0181"},
				Verification: VerificationTarget{RequiredFields: []string{"provider_transaction_id"}}},
			Verification:          VerificationState{State: "verified", AttemptsUsed: 1, AttemptsRemaining: 2, FailureCode: &code},
			ProviderTransactionID: &trx, RefundedAmount: "0"},
		H2HDeposit{ID: "dep_2", NextAction: RedirectAction{Type: "redirect", URL: "https://x/?a=1&b=<2>"}},
		H2HDeposit{ID: "dep_3", NextAction: map[string]int{"other": 1}},
		map[string]string{"id": "wd_1"}, // not an appender: encoding/json
	} {
		ev, err := newEvent("org_1", "deposit.succeeded", "dep_1", v, now)
		if err != nil {
			t.Fatal(err)
		}
		want, err := marshalNoEscape(eventBody{ID: ev.ID, Type: "deposit.succeeded", Timestamp: FormatTime(now), Data: v})
		if err != nil {
			t.Fatal(err)
		}
		if string(ev.Payload) != string(want) {
			t.Errorf("payload:\n%s\nencoding/json:\n%s", ev.Payload, want)
		}
	}
	// Metadata that is not JSON fails as encoding/json fails.
	if _, err := newEvent("org_1", "deposit.succeeded", "dep_1", H2HDeposit{Metadata: json.RawMessage(`{"a":`)}, now); err == nil {
		t.Error("bad metadata: no error")
	}
}
