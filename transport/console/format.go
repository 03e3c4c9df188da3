package console

import (
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/internal/taka"
	"github.com/payd-engine/payd/transport"
)

// What a page shows a person: amounts in taka as Bangladesh writes them,
// statuses, methods and codes in the page's language, times with their
// zone. Identifiers (IDs, transaction IDs, phone numbers) stay as they are,
// to be compared character by character.

// Money is an amount (a decimal, a nullable one, or a decimal string) in
// taka, grouped in lakhs and crores, in the page's numerals; "-" for none.
func (v *view) Money(x any) string {
	switch d := x.(type) {
	case decimal.Decimal:
		return taka.Format(d, v.Lang)
	case decimal.NullDecimal:
		if !d.Valid {
			return "-"
		}
		return taka.Format(d.Decimal, v.Lang)
	case string:
		if d == "" {
			return "-"
		}
		return taka.FormatString(d, v.Lang)
	}
	return "-"
}

// Num is a count in the page's numerals.
func (v *view) Num(n int) string { return taka.Digits(itoa(n), v.Lang, true) }

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	neg := n < 0
	if neg {
		n = -n
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// statusLabel is a status as a page shows it: its code (for the style)
// and its words.
type statusLabel struct{ Code, Text string }

// St is the label of a status code.
func (v *view) St(code string) statusLabel { return statusLabel{code, v.word("st_", code)} }

// Method is a payment method's proper name (bKash, Nagad agent, …).
func (v *view) Method(code string) string { return v.word("m_", code) }

// Channel is a wallet network's proper name.
func (v *view) Channel(code string) string { return v.word("ch_", code) }

// Op is a wallet operation in words.
func (v *view) Op(code string) string { return v.word("op_", code) }

// Event is an event's type in words, its code beside it (the code is
// what the merchant's server receives).
func (v *view) Event(typ string) string {
	if w := v.word("ev_", typ); w != typ {
		return w + " (" + typ + ")"
	}
	return typ
}

// Action is an audited action in words.
func (v *view) Action(code string) string { return v.word("au_", code) }

// Failure is a failure code in words.
func (v *view) Failure(code string) string { return v.word("fc_", code) }

// word is the text of prefix+code, or the code itself when it has none.
func (v *view) word(prefix, code string) string {
	if code == "" {
		return ""
	}
	if hasText(prefix + code) {
		return translate(v.Lang, prefix+code)
	}
	return code
}

// When is a time (or *time.Time) in Dhaka, its zone said; "-" for none.
func (v *view) When(x any) string {
	var t time.Time
	switch tt := x.(type) {
	case time.Time:
		t = tt
	case *time.Time:
		if tt != nil {
			t = *tt
		}
	}
	if t.IsZero() {
		return "-"
	}
	return taka.Digits(t.In(engine.Dhaka).Format("2006-01-02 15:04")+" "+translate(v.Lang, "zone"), v.Lang, true)
}

// fieldError reads a refusal of bad input ("field: what is wrong") as the
// field it concerns and one plain sentence in lang, for the page to show
// beside the field with what was typed kept; ok is false for any other
// error.
func fieldError(lang string, err error) (field, msg string, ok bool) {
	var e *engine.Error
	if !errors.As(err, &e) || e.Code != engine.CodeInvalidRequest && e.Code != engine.CodeInsufficientBalance {
		return "", "", false
	}
	field, detail, found := strings.Cut(e.Message, ": ")
	if !found {
		return "", "", false
	}
	key := "fe_" + field
	switch {
	case strings.HasPrefix(detail, "no payment method"):
		key = "fe_no_method"
	case e.Code == engine.CodeInsufficientBalance:
		key = "fe_insufficient"
	}
	if hasText(key) {
		return field, translate(lang, key), true
	}
	return field, translate(lang, "fe_other", detail), true
}

// QR is payload as a QR code drawn in the page (no image, no script).
func (v *view) QR(payload string) (template.HTML, error) { return transport.QRSVG(payload) }

// allowImage lets the page show an image from rawURL's origin (the
// organization's logo, an https URL the engine checked): the page's CSP
// allows images from itself only.
func allowImage(w http.ResponseWriter, rawURL string) {
	u, err := url.Parse(rawURL)
	if rawURL == "" || err != nil || u.Scheme != "https" || !engine.LogoHost(u.Host) {
		return
	}
	csp := w.Header().Get("Content-Security-Policy")
	w.Header().Set("Content-Security-Policy", strings.Replace(csp, "img-src 'self'", "img-src 'self' https://"+u.Host, 1))
}
