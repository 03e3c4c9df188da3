package transport_test

import (
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydtest"
	"github.com/payd-engine/payd/provider/sandbox"
)

// TestTransactionIDSquattingOverHTTP: an organization that submits the ID
// of a payment another organization's wallet received, before that
// organization's payer does, blocks only itself. It failed before: the
// victim's payer got 409 transaction_id_used.
func TestTransactionIDSquattingOverHTTP(t *testing.T) {
	h := newHarness(t, paydtest.WithSandbox(sandbox.Config{PayoutDelay: time.Second}))
	victim := h.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	squatter := h.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	other := h.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	h.AddWallet(victim, "bkash", "cash_out", "01811111111", "Agent")
	h.AddWallet(squatter, "bkash", "cash_out", "01822222222", "Agent")
	h.AddWallet(other, "bkash", "cash_out", "01833333333", "Agent")
	dep := str(h.CreateH2H(victim, h2h(kv{"merchant_id", `"sq-1"`})).JSON, "id")
	if res := h.SandboxPay(victim, `{"channel":"bkash","transaction_id":"VICTIM1","payer_phone":"01712345678","recipient_phone":"01811111111","amount":"500","status":"completed"}`); res.Status != 201 {
		t.Fatalf("victim's payment: %d %s", res.Status, res.Body)
	}
	squat := str(h.CreateH2H(squatter, h2h(kv{"merchant_id", `"sq-1"`})).JSON, "id")
	if res := h.Verify(squatter, squat, `{"provider_transaction_id":"VICTIM1"}`); res.Status != 202 {
		t.Fatalf("squatter's submission: %d %s", res.Status, res.Body)
	}
	if res := h.Verify(victim, dep, `{"provider_transaction_id":"victim1"}`); res.Status != 202 {
		t.Fatalf("the victim's payer after the squatter: %d %s", res.Status, res.Body)
	}
	h.Work()
	assertJSONField(t, h.GetDeposit(victim, dep, true).Body, "status", `"succeeded"`)
	assertJSONField(t, h.GetDeposit(squatter, squat, true).Body, "verification",
		`{"state":"awaiting_reference","attempts_used":1,"attempts_remaining":2,"failure_code":"transaction_not_found"}`)

	// The squatter's own second deposit, and anyone's once it succeeded.
	for _, o := range []*testOrg{squatter, other, victim} {
		d := str(h.CreateH2H(o, h2h(kv{"merchant_id", `"sq-2"`})).JSON, "id")
		if res := h.Verify(o, d, `{"provider_transaction_id":"VICTIM1"}`); res.Status != 409 || res.ErrorCode() != "transaction_id_used" {
			t.Fatalf("a second deposit: %d %s", res.Status, res.Body)
		}
	}
}
