package bkash_test

import (
	"testing"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/bkash"
)

// offerer is a fallback that opens only nagad's checkout, paid to a wallet.
type offerer struct{ engine.Provider }

func (offerer) CheckoutOffer(m engine.Method) (bool, string) { return m.Name == "nagad", "send_money" }

// The payer pages offer what opens: bKash's own page for bkash, the
// fallback's offer for every other method, nothing without a fallback.
func TestCheckoutOffer(t *testing.T) {
	method := func(name string) engine.Method {
		m, ok := engine.LookupMethod(name)
		if !ok {
			t.Fatalf("no method %s", name)
		}
		return m
	}
	keyring, err := engine.NewKeyring(make([]byte, engine.MasterKeySize))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		fallback engine.Provider
		name     string
		offered  bool
		op       string
	}{
		{nil, "bkash", true, ""},
		{nil, "nagad", false, ""},
		{offerer{}, "bkash", true, ""},
		{offerer{}, "nagad", true, "send_money"},
		{offerer{}, "upay", false, "send_money"},
	} {
		p, err := bkash.New(bkash.Config{Keyring: keyring, Fallback: c.fallback})
		if err != nil {
			t.Fatal(err)
		}
		offered, op := p.CheckoutOffer(method(c.name))
		if offered != c.offered || op != c.op {
			t.Errorf("fallback %T, %s: %v %q, want %v %q", c.fallback, c.name, offered, op, c.offered, c.op)
		}
	}
}
