package transport

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/payd-engine/payd/engine"
)

// TestOpenAPIFollowsTheCatalog: the document's payment method and channel
// enums are the engine's catalog, both ways and in its order, and the
// amount ranges its descriptions state are the catalog's. A method added
// to the catalog fails here until the document lists it.
func TestOpenAPIFollowsTheCatalog(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas map[string]schemaDoc `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openAPIDoc, &doc); err != nil {
		t.Fatal(err)
	}
	schema := func(name string) schemaDoc {
		s, ok := doc.Components.Schemas[name]
		if !ok {
			t.Fatalf("the document has no schema %s", name)
		}
		return s
	}
	for _, c := range []struct {
		where string
		got   []string
		want  []string
	}{
		{"PaymentMethod", schema("PaymentMethod").Enum, engine.DepositMethods(engine.CheckoutRedirect)},
		{"H2HPaymentMethod", schema("H2HPaymentMethod").Enum, engine.DepositMethods(engine.CheckoutH2H)},
		{"WithdrawalPaymentMethod", schema("WithdrawalPaymentMethod").Enum, engine.PayoutMethods()},
		{"DisplayInstructionsAction.channel", schema("DisplayInstructionsAction").Properties["channel"].Enum, engine.InstructionChannels()},
		{"DisplayInstructionsAction.operation", schema("DisplayInstructionsAction").Properties["operation"].Enum, engine.InstructionOperations()},
		{"SandboxPaymentRequest.channel", schema("SandboxPaymentRequest").Properties["channel"].Enum, engine.Channels()},
	} {
		sameSet := true
		for _, v := range c.want {
			if !slices.Contains(c.got, v) {
				t.Errorf("%s: the catalog has %q, the document does not", c.where, v)
				sameSet = false
			}
		}
		for _, v := range c.got {
			if !slices.Contains(c.want, v) {
				t.Errorf("%s: the document has %q, the catalog does not", c.where, v)
				sameSet = false
			}
		}
		if sameSet && !slices.Equal(c.got, c.want) {
			t.Errorf("%s: the document's order %v is not the catalog's %v", c.where, c.got, c.want)
		}
	}

	// payd's own methods are marked as its extensions, after the
	// interface's, which stay as the interface defines them.
	interfaceRedirect := []string{"bkash", "nagad", "upi", "upay", "bank", "bkash_agent", "nagad_agent", "upay_agent",
		"bkash_merchant", "nagad_merchant", "upay_merchant", "bangla_qr_merchant"}
	var extensions []string
	for _, m := range engine.Methods() {
		if m.Extension {
			extensions = append(extensions, m.Name)
		}
	}
	methods := schema("PaymentMethod")
	if got := methods.Enum[:min(len(interfaceRedirect), len(methods.Enum))]; !slices.Equal(got, interfaceRedirect) {
		t.Errorf("PaymentMethod: the document's enum begins %v, not the interface's %v", got, interfaceRedirect)
	}
	if got := methods.Enum[min(len(interfaceRedirect), len(methods.Enum)):]; !slices.Equal(got, extensions) || !slices.Equal(methods.Extensions, extensions) {
		t.Errorf("PaymentMethod: extensions %v marked %v, want the catalog's %v", got, methods.Extensions, extensions)
	}
	for _, e := range extensions {
		if !strings.Contains(methods.Description, "`"+e+"`") || !strings.Contains(methods.Description, "extension") {
			t.Errorf("PaymentMethod: the description does not say %s is an extension", e)
		}
	}

	// Each range a method list has appears in its description, and so does
	// each method whose range is not the list's most common one.
	for _, c := range []struct {
		where   string
		methods []string
		rangeOf func(engine.Method) engine.AmountRange
	}{
		{"RedirectDepositRequest", engine.DepositMethods(engine.CheckoutRedirect), func(m engine.Method) engine.AmountRange { return m.Redirect }},
		{"H2HDepositRequest", engine.DepositMethods(engine.CheckoutH2H), func(m engine.Method) engine.AmountRange { return m.H2H }},
		{"WithdrawalRequest", engine.PayoutMethods(), func(m engine.Method) engine.AmountRange { return m.Payout }},
	} {
		text := schema(c.where).Description
		count := map[string]int{}
		rangeText := map[string]string{}
		for _, name := range c.methods {
			m, _ := engine.LookupMethod(name)
			r := rangeOf(c.rangeOf(m))
			count[r]++
			rangeText[name] = r
		}
		common := ""
		for r, n := range count {
			if !strings.Contains(text, r) {
				t.Errorf("%s: the description %q does not state the range %s", c.where, text, r)
			}
			if n > count[common] {
				common = r
			}
		}
		for _, name := range c.methods {
			if rangeText[name] != common && !strings.Contains(text, name) {
				t.Errorf("%s: the description %q does not name %s (%s)", c.where, text, name, rangeText[name])
			}
		}
	}
}

// schemaDoc is the part of an OpenAPI schema the catalog test reads.
type schemaDoc struct {
	Description string               `json:"description"`
	Enum        []string             `json:"enum"`
	Extensions  []string             `json:"x-payd-extension-values"`
	Properties  map[string]schemaDoc `json:"properties"`
}

// rangeOf renders a range as the document does: "25,000 to 300,000".
func rangeOf(r engine.AmountRange) string {
	return thousands(r.Min.String()) + " to " + thousands(r.Max.String())
}

func thousands(digits string) string {
	for i := len(digits) - 3; i > 0; i -= 3 {
		digits = digits[:i] + "," + digits[i:]
	}
	return digits
}

// TestCheckoutTextsCoverTheCatalog: the checkout page names every channel
// of the catalog and every operation of its wallets in each language.
func TestCheckoutTextsCoverTheCatalog(t *testing.T) {
	for _, lang := range []string{langEnglish, langBangla} {
		for _, ch := range engine.Channels() {
			if channelNames[lang][ch] == "" {
				t.Errorf("channelNames[%s] has no name for the channel %q", lang, ch)
			}
		}
		for _, op := range engine.WalletOperations() {
			if checkoutText[lang]["op_"+op] == "" {
				t.Errorf("checkoutText[%s] has no op_%s", lang, op)
			}
		}
	}
}
