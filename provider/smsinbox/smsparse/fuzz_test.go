package smsparse

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParse checks that Parse never panics, that whatever it accepts is a
// complete, well-formed message, that the same message laid out with other
// whitespace parses to the same fields, and that no prefix of it parses to a
// different message. Seeds: every fixture, and testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	for _, fx := range validFixtures {
		f.Add(fx.sender, fx.body)
	}
	for _, fx := range invalidFixtures {
		f.Add(fx.sender, fx.body)
	}
	f.Fuzz(func(t *testing.T, sender, body string) {
		m, err := Parse(sender, body)
		if err != nil {
			if m != nil {
				t.Fatalf("Parse returned a message with its error %v", err)
			}
			if !errors.Is(err, ErrUntrustedSender) && !errors.Is(err, ErrUnknownFormat) {
				t.Fatalf("Parse error %v is neither ErrUntrustedSender nor ErrUnknownFormat", err)
			}
			return
		}
		checkWellFormed(t, sender, m)

		// Parsing is a function of its input.
		if again, err := Parse(sender, body); err != nil || len(diff(again, m)) != 0 {
			t.Fatalf("second Parse = %+v, %v; first %+v", again, err, m)
		}

		// Whitespace the phone or the forwarder may change does not change
		// the reading.
		for name, vary := range whitespaceVariants {
			variant := vary(body)
			got, err := Parse(sender, variant)
			if err != nil {
				t.Fatalf("%s variant %q of %q: %v", name, variant, body, err)
			}
			if d := diff(got, m); len(d) != 0 {
				t.Fatalf("%s variant %q of %q: %v", name, variant, body, d)
			}
		}

		// A message cut short is refused, or is the same message (only a
		// closing full stop or promotion was cut): never a different one.
		if len(body) > 600 {
			return
		}
		for i := range len(body) {
			if !utf8.RuneStart(body[i]) {
				continue
			}
			cut, err := Parse(sender, body[:i])
			if err == nil && len(diff(cut, m)) != 0 {
				t.Fatalf("%q cut to %q parses differently: %v", body, body[:i], diff(cut, m))
			}
		}
	})
}

// whitespaceVariants lay a message out as phones and forwarders do.
var whitespaceVariants = map[string]func(string) string{
	"CRLF":               func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") },
	"lines joined":       func(s string) string { return strings.ReplaceAll(s, "\n", " ") },
	"double spaces":      func(s string) string { return strings.ReplaceAll(s, " ", "  ") },
	"non-breaking space": func(s string) string { return strings.ReplaceAll(s, " ", "\u00a0") },
	"padded":             func(s string) string { return "\n \t" + s + " \r\n" },
}

// checkWellFormed fails t unless m is a complete, consistent message from
// sender's channel.
func checkWellFormed(t *testing.T, sender string, m *Message) {
	t.Helper()
	channel, ok := ChannelOf(sender)
	switch {
	case !ok || m.Channel != channel:
		t.Fatalf("channel %q from sender %q (ChannelOf: %q, %t)", m.Channel, sender, channel, ok)
	case m.Credit != credits[m.Kind]:
		t.Fatalf("kind %q with Credit %t", m.Kind, m.Credit)
	case !m.Amount.IsPositive() || !m.Amount.Equal(m.Amount.Round(2)):
		t.Fatalf("amount %s is not positive with at most two decimals", m.Amount)
	case m.Fee.IsNegative() || m.Commission.IsNegative() || m.Balance.IsNegative():
		t.Fatalf("negative fee %s, commission %s or balance %s", m.Fee, m.Commission, m.Balance)
	case !m.Fee.Equal(m.Fee.Round(2)) || !m.Balance.Equal(m.Balance.Round(2)):
		t.Fatalf("fee %s or balance %s has more than two decimals", m.Fee, m.Balance)
	case !m.Commission.Equal(m.Commission.Round(6)):
		t.Fatalf("commission %s has more than six decimals", m.Commission)
	case m.Counterparty != "" && !mobileRE.MatchString(m.Counterparty):
		t.Fatalf("counterparty %q", m.Counterparty)
	case m.Account != "" && m.Channel != ChannelRocket:
		t.Fatalf("account %q on a %s message", m.Account, m.Channel)
	case len(m.Account) == 12 && m.Counterparty != m.Account[:11]:
		t.Fatalf("account %q with counterparty %q", m.Account, m.Counterparty)
	case m.Account != "" && len(m.Account) != 12 && m.Counterparty != "":
		t.Fatalf("masked account %q with counterparty %q", m.Account, m.Counterparty)
	case m.Reference != strings.Join(strings.Fields(m.Reference), " "):
		t.Fatalf("reference %q is not collapsed", m.Reference)
	case m.Channel != ChannelRocket && m.Time.Second() != 0 || m.Time.Nanosecond() != 0:
		t.Fatalf("time %s has seconds", m.Time)
	case m.Time.Year() < 2000 || m.Time.Year() > 2099:
		t.Fatalf("time %s is out of range", m.Time)
	}
	if _, offset := m.Time.Zone(); offset != 6*60*60 {
		t.Fatalf("time %s is not in Dhaka's offset", m.Time)
	}
	if _, err := parseTransactionID(m.Channel, m.TransactionID); err != nil {
		t.Fatal(err)
	}
}
