package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/smsinbox"
)

// TestSMSInboxChainHealsAfterAMissedSMS: the phone misses one SMS; the
// payer's SMS after it is held, and so is the deposit's verification. The
// messages after it form a run; once enough of them have come and the
// chain has been quiet for --resync-quiet, the chain re-synchronizes over
// the gap by itself and the deposit succeeds, with no operator. The gap is
// shown in sms list, sms stats and sms gaps, and audited.
func TestSMSInboxChainHealsAfterAMissedSMS(t *testing.T) {
	h := newInboxHarness(t)
	ctx := context.Background()
	org := h.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	wallet := h.AddWallet(org, "bkash", "cash_out", "01811111111", "Agent")
	token := str(h.admin("device", "add", "--org", org.ID, "--wallet", wallet.ID), "token")
	h.device(token, "heartbeat", map[string]any{})
	h.admin("sms", "anchor", "--org", org.ID, "--wallet", wallet.ID, "--balance", "10000")
	if s := h.admin("sms", "settings", "--org", org.ID, "--resync-quiet", "5m"); s["resync_after"] != float64(3) || str(s, "resync_quiet") != "5m0s" {
		t.Fatalf("settings: %v", s)
	}
	post := func(m sms) {
		t.Helper()
		if res := h.device(token, "sms", m); res.Status != 200 || string(res.Body) != `{"received":true}`+"\n" {
			t.Fatalf("post: %d %s", res.Status, res.Body)
		}
	}
	dep := h.CreateH2H(org, h2h(kv{"merchant_id", `"after-the-gap"`}, kv{"amount", `"700"`}))
	if dep.Status != 201 {
		t.Fatalf("create: %d %s", dep.Status, dep.Body)
	}
	id := str(dep.JSON, "id")
	// Missed: Cash Out Tk 500.00, balance 10,500.00. The payer's comes next.
	post(cashOutSMS("700.00", "01712345678", "11,200.00", "BKP0000001", h.Clock.Now()))
	if res := h.Verify(org, id, `{"provider_transaction_id":"BKP0000001"}`); res.Status != 202 {
		t.Fatalf("verify: %d %s", res.Status, res.Body)
	}
	h.Work()
	for i, bal := range []string{"11,300.00", "11,400.00"} {
		h.Clock.Add(3 * time.Minute)
		h.device(token, "heartbeat", map[string]any{})
		h.Work()
		if s := str(h.GetDeposit(org, id, true).JSON, "status"); s == "succeeded" {
			t.Fatalf("the deposit succeeded before the chain healed (message %d)", i)
		}
		post(cashOutSMS("100.00", "01712345678", bal, fmt.Sprintf("BKQ000000%d", i), h.Clock.Now()))
	}
	h.Work()
	if s := str(h.GetDeposit(org, id, true).JSON, "status"); s != "succeeded" {
		t.Fatalf("deposit after the chain healed: %s", h.GetDeposit(org, id, true).Body)
	}
	gaps := h.admin("sms", "gaps", "--org", org.ID)["gaps"].([]any)
	if len(gaps) != 1 {
		t.Fatalf("sms gaps: %v", gaps)
	}
	g := gaps[0].(map[string]any)
	if str(g, "amount") != "500.00" || str(g, "from_balance") != "10000.00" || g["messages"] != float64(3) || str(g, "actor") != "smsinbox" {
		t.Fatalf("gap: %v", g)
	}
	for _, m := range h.admin("sms", "list", "--org", org.ID)["messages"].([]any) {
		m := m.(map[string]any)
		if str(m, "status") != "accepted" || str(m, "gap_id") != str(g, "id") {
			t.Fatalf("sms list after the gap: %v", m)
		}
	}
	stats := h.admin("sms", "stats", "--org", org.ID)
	if n := stats["gaps"].(map[string]any)[wallet.ID]; n != float64(1) {
		t.Fatalf("sms stats: %v", stats)
	}
	audit, err := h.Engine.ListAudit(ctx, org.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	resynced := false
	for _, a := range audit {
		resynced = resynced || a.Action == smsinbox.AuditWalletResync && a.Subject == wallet.ID && a.Actor == "smsinbox" && a.Details["gap"] == str(g, "id")
	}
	if !resynced {
		t.Fatal("the re-synchronization was not audited")
	}
}

// TestSMSInboxPastedSMSVerifiesADeposit: the forwarder was off when the
// payer's SMS came. The deposit waits; the operator pastes the SMS from
// the phone, and the deposit succeeds. A forgery posted meanwhile is
// rejected by the operator; both are audited.
func TestSMSInboxPastedSMSVerifiesADeposit(t *testing.T) {
	h := newInboxHarness(t)
	org := h.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	wallet := h.AddWallet(org, "bkash", "cash_out", "01811111111", "Agent")
	token := str(h.admin("device", "add", "--org", org.ID, "--wallet", wallet.ID), "token")
	h.device(token, "heartbeat", map[string]any{})
	h.admin("sms", "anchor", "--org", org.ID, "--wallet", wallet.ID, "--balance", "10000")
	dep := h.CreateH2H(org, h2h(kv{"merchant_id", `"pasted"`}, kv{"amount", `"500"`}))
	id := str(dep.JSON, "id")
	if res := h.Verify(org, id, `{"provider_transaction_id":"BKP0000001"}`); res.Status != 202 {
		t.Fatalf("verify: %d %s", res.Status, res.Body)
	}
	h.Work()
	if s := str(h.GetDeposit(org, id, true).JSON, "status"); s != "processing" {
		t.Fatalf("deposit without its SMS: %s", s)
	}
	h.device(token, "sms", cashOutSMS("500.00", "01712345678", "77,777.00", "BKF0000001", h.Clock.Now()))
	held := h.admin("sms", "list", "--org", org.ID, "--status", "held")["messages"].([]any)
	if len(held) != 1 {
		t.Fatalf("held: %v", held)
	}
	rejected := h.admin("sms", "reject", "--org", org.ID, "--sms", str(held[0].(map[string]any), "id"), "--reason", "not on the phone", "--actor", "ops")
	if str(rejected, "status") != "rejected" || str(rejected, "reviewed_by") != "ops" {
		t.Fatalf("sms reject: %v", rejected)
	}
	text := cashOutSMS("500.00", "01712345678", "10,500.00", "BKP0000001", h.Clock.Now()).Body
	pasted := h.admin("sms", "paste", "--org", org.ID, "--wallet", wallet.ID, "--sender", "bKash", "--text", text, "--actor", "ops")
	if str(pasted, "status") != "accepted" || str(pasted, "pasted_by") != "ops" || str(pasted, "transaction_id") != "BKP0000001" {
		t.Fatalf("sms paste: %v", pasted)
	}
	h.Work()
	if s := str(h.GetDeposit(org, id, true).JSON, "status"); s != "succeeded" {
		t.Fatalf("deposit after the paste: %s", h.GetDeposit(org, id, true).Body)
	}
	audit := fmt.Sprint(h.admin("audit", "--org", org.ID))
	for _, action := range []string{smsinbox.AuditSMSPaste, smsinbox.AuditSMSReject} {
		if !strings.Contains(audit, action) {
			t.Fatalf("audit has no %s: %s", action, audit)
		}
	}
}
