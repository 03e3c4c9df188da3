package engine

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// AppendJSON appends v as encoding/json encodes it with HTML escaping off
// (as the API writes its answers), byte for byte: TestH2HDepositAppendJSON
// compares the two on random views. A signed GET answers with an H2H
// deposit, and encoding/json's reflection was about a tenth of the
// handler's CPU in profiles. A next_action of a type this does not know is
// left to encoding/json.
func (v H2HDeposit) AppendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"id":`...)
	b = appendJSONString(b, v.ID)
	b = append(b, `,"amount":`...)
	b = appendJSONString(b, v.Amount)
	b = append(b, `,"payment_method":`...)
	b = appendJSONString(b, v.PaymentMethod)
	b = append(b, `,"status":`...)
	b = appendJSONString(b, v.Status)
	b = append(b, `,"metadata":`...)
	b, err := appendRawJSON(b, v.Metadata)
	if err != nil {
		return nil, err
	}
	b = append(b, `,"merchant_id":`...)
	b = appendJSONString(b, v.MerchantID)
	b = append(b, `,"checkout_mode":`...)
	b = appendJSONString(b, v.CheckoutMode)
	b = append(b, `,"expires_at":`...)
	b = appendJSONString(b, v.ExpiresAt)
	b = append(b, `,"next_action":`...)
	switch a := v.NextAction.(type) {
	case nil:
		b = append(b, "null"...)
	case DisplayInstructionsAction:
		b = a.appendJSON(b)
	case RedirectAction:
		b = append(b, `{"type":`...)
		b = appendJSONString(b, a.Type)
		b = append(b, `,"url":`...)
		b = appendJSONString(b, a.URL)
		b = append(b, '}')
	default:
		j, err := json.Marshal(a)
		if err != nil {
			return nil, err
		}
		b = append(b, j...)
	}
	b = append(b, `,"verification":{"state":`...)
	b = appendJSONString(b, v.Verification.State)
	b = append(b, `,"attempts_used":`...)
	b = strconv.AppendInt(b, int64(v.Verification.AttemptsUsed), 10)
	b = append(b, `,"attempts_remaining":`...)
	b = strconv.AppendInt(b, int64(v.Verification.AttemptsRemaining), 10)
	b = append(b, `,"failure_code":`...)
	b = appendJSONNullable(b, v.Verification.FailureCode)
	b = append(b, `},"provider_transaction_id":`...)
	b = appendJSONNullable(b, v.ProviderTransactionID)
	b = append(b, `,"refunded_amount":`...)
	b = appendJSONString(b, v.RefundedAmount)
	return append(b, '}'), nil
}

// AppendJSON appends v as encoding/json encodes it with HTML escaping
// off, byte for byte (TestWithdrawalViewAppendJSON): a withdrawal create
// encodes its view twice, in withdraw.created and in its answer.
func (v WithdrawalView) AppendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"id":`...)
	b = appendJSONString(b, v.ID)
	b = append(b, `,"phone":`...)
	b = appendJSONString(b, v.Phone)
	b = append(b, `,"payment_method":`...)
	b = appendJSONString(b, v.PaymentMethod)
	b = append(b, `,"amount":`...)
	b = appendJSONString(b, v.Amount)
	b = append(b, `,"status":`...)
	b = appendJSONString(b, v.Status)
	b = append(b, `,"metadata":`...)
	b, err := appendRawJSON(b, v.Metadata)
	if err != nil {
		return nil, err
	}
	b = append(b, `,"merchant_id":`...)
	b = appendJSONString(b, v.MerchantID)
	return append(b, '}'), nil
}

func (a DisplayInstructionsAction) appendJSON(b []byte) []byte {
	b = append(b, `{"type":`...)
	b = appendJSONString(b, a.Type)
	b = append(b, `,"channel":`...)
	b = appendJSONString(b, a.Channel)
	b = append(b, `,"operation":`...)
	b = appendJSONString(b, a.Operation)
	b = append(b, `,"recipient":{"type":`...)
	b = appendJSONString(b, a.Recipient.Type)
	b = append(b, `,"value":`...)
	b = appendJSONString(b, a.Recipient.Value)
	b = append(b, `,"name":`...)
	b = appendJSONNullable(b, a.Recipient.Name)
	b = append(b, `},"qr_payload":`...)
	b = appendJSONNullable(b, a.QRPayload)
	b = append(b, `,"amount":`...)
	b = appendJSONString(b, a.Amount)
	b = append(b, `,"currency":`...)
	b = appendJSONString(b, a.Currency)
	b = append(b, `,"verification":{"endpoint":`...)
	b = appendJSONString(b, a.Verification.Endpoint)
	b = append(b, `,"required_fields":`...)
	if a.Verification.RequiredFields == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, f := range a.Verification.RequiredFields {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, f)
		}
		b = append(b, ']')
	}
	return append(b, "}}"...)
}

// appendRawJSON appends raw compacted, as encoding/json writes a
// json.RawMessage: nil is null, and empty is not JSON.
func appendRawJSON(b []byte, raw json.RawMessage) ([]byte, error) {
	if raw == nil {
		return append(b, "null"...), nil
	}
	buf := bytes.NewBuffer(b) // appends to b, in its spare capacity
	if err := json.Compact(buf, raw); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func appendJSONNullable(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return appendJSONString(b, *s)
}

const jsonHex = "0123456789abcdef"

// appendJSONString is encoding/json's string encoding with HTML escaping
// off: quotes, backslashes and control characters escaped, invalid UTF-8
// replaced by U+FFFD, U+2028 and U+2029 escaped.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', jsonHex[c>>4], jsonHex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', jsonHex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
