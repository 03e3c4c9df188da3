package main

import (
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
)

// Security review (issue 15): each test here failed on the code before its
// fix. RELIABILITY.md lists them.

// TestSandboxScopedToOrganization: one organization's outage switch and its
// recorded payments reach no other organization.
func TestSandboxScopedToOrganization(t *testing.T) {
	h := newHarnessWith(t, sandboxSettings{payoutDelay: time.Second})
	victim := h.newOrg(engine.OrganizationSettings{H2HEnabled: ptr(true), WithdrawalsEnabled: ptr(true)})
	attacker := h.newOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	h.addWallet(victim, "bkash", "cash_out", "01811111111", "Agent")
	h.fund(victim, "1000")

	if res := h.do(attacker, request{path: "/api/sandbox/outage", apiKey: attacker.apiKey, body: `{"enabled":true}`}); res.status != 200 {
		t.Fatalf("outage: %d %s", res.status, res.body)
	}
	// The victim's lookups and payouts carry on through the attacker's outage.
	dep := str(h.createH2H(victim, h2h(kv{"merchant_id", `"scoped-1"`})).json, "id")
	if res := h.sandboxPay(victim, `{"channel":"bkash","transaction_id":"OWN1","payer_phone":"01712345678","recipient_phone":"01811111111","amount":"500","status":"completed"}`); res.status != 201 {
		t.Fatalf("victim's payment: %d %s", res.status, res.body)
	}
	h.verify(victim, dep, `{"provider_transaction_id":"OWN1"}`)
	wd := h.do(victim, request{path: "/api/v1/withdraws", apiKey: victim.apiKey, body: withdrawal(kv{"amount", `"100"`})})
	if wd.status != 201 {
		t.Fatalf("withdrawal: %d %s", wd.status, wd.body)
	}
	h.work()
	h.clock.Add(5 * time.Second)
	h.work()
	assertJSONField(t, h.getDeposit(victim, dep, true).body, "status", `"succeeded"`)
	got := h.do(victim, request{method: "GET", path: "/api/v1/withdraws/" + str(wd.json, "id"), apiKey: victim.apiKey})
	assertJSONField(t, got.body, "status", `"succeeded"`)

	// A payment the attacker records proves nothing to the victim's deposit,
	// and does not stop the victim recording the same ID in its own sandbox.
	dep2 := str(h.createH2H(victim, h2h(kv{"merchant_id", `"scoped-2"`})).json, "id")
	if res := h.sandboxPay(attacker, `{"channel":"bkash","transaction_id":"THEIRS1","payer_phone":"01712345678","recipient_phone":"01811111111","amount":"500","status":"completed"}`); res.status != 201 {
		t.Fatalf("attacker's payment: %d %s", res.status, res.body)
	}
	h.verify(victim, dep2, `{"provider_transaction_id":"THEIRS1"}`)
	h.work()
	if res := h.getDeposit(victim, dep2, true); str(res.json, "status") == "succeeded" {
		t.Fatalf("another organization's sandbox payment verified the deposit: %s", res.body)
	}
	if res := h.sandboxPay(victim, `{"channel":"bkash","transaction_id":"THEIRS1","payer_phone":"01712345678","recipient_phone":"01811111111","amount":"1","status":"completed"}`); res.status != 201 {
		t.Fatalf("the victim's own record of an ID another organization recorded: %d %s", res.status, res.body)
	}

	// The attacker's own outage still holds for the attacker.
	h.addWallet(attacker, "bkash", "cash_out", "01822222222", "Agent")
	adep := str(h.createH2H(attacker, h2h(kv{"merchant_id", `"scoped-3"`})).json, "id")
	h.sandboxPay(attacker, `{"channel":"bkash","transaction_id":"THEIRS2","payer_phone":"01712345678","recipient_phone":"01822222222","amount":"500","status":"completed"}`)
	if res := h.verify(attacker, adep, `{"provider_transaction_id":"THEIRS2"}`); res.status != 202 {
		t.Fatalf("attacker's verify: %d %s", res.status, res.body)
	}
	h.work()
	assertJSONField(t, h.getDeposit(attacker, adep, true).body, "status", `"processing"`)
}
