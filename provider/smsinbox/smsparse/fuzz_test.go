package smsparse

import (
	"errors"
	"testing"
)

// FuzzParse checks that Parse never panics and that whatever it accepts is
// a complete, well-formed message.
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
		channel, ok := ChannelOf(sender)
		switch {
		case !ok || m.Channel != channel:
			t.Fatalf("channel %q from sender %q (ChannelOf: %q, %t)", m.Channel, sender, channel, ok)
		case m.Credit != credits[m.Kind]:
			t.Fatalf("kind %q with Credit %t", m.Kind, m.Credit)
		case !m.Amount.IsPositive() || m.Amount.Exponent() < -2:
			t.Fatalf("amount %s is not positive with at most two decimals", m.Amount)
		case m.Fee.IsNegative() || m.Commission.IsNegative() || m.Balance.IsNegative():
			t.Fatalf("negative fee %s, commission %s or balance %s", m.Fee, m.Commission, m.Balance)
		case m.Counterparty != "" && !mobileRE.MatchString(m.Counterparty):
			t.Fatalf("counterparty %q", m.Counterparty)
		case m.TransactionID == "":
			t.Fatal("empty transaction ID")
		case m.Channel != ChannelRocket && m.Time.Second() != 0 || m.Time.Nanosecond() != 0:
			t.Fatalf("time %s has seconds", m.Time)
		}
		if _, offset := m.Time.Zone(); offset != 6*60*60 {
			t.Fatalf("time %s is not in Dhaka's offset", m.Time)
		}
		if _, err := parseTransactionID(m.Channel, m.TransactionID); err != nil {
			t.Fatal(err)
		}
		// Parsing is a function of its input.
		again, err := Parse(sender, body)
		if err != nil || len(diff(again, m)) != 0 {
			t.Fatalf("second Parse = %+v, %v; first %+v", again, err, m)
		}
	})
}
