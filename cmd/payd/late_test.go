package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydtest"
	"github.com/payd-engine/payd/provider/smsinbox"
)

// adminFails runs "payd admin ..." that must fail and returns its error.
func (h *harness) adminFails(args ...string) error {
	h.t.Helper()
	var stdout, stderr bytes.Buffer
	args = append(append([]string{"admin"}, args...), "--db", filepath.Join(h.Dir, "payd.db"), "--json")
	err := run(context.Background(), args, &stdout, &stderr)
	if err == nil {
		h.t.Fatalf("payd %s succeeded: %s", strings.Join(args, " "), stdout.String())
	}
	return err
}

// TestSMSInboxLatePayments: with --sms-grace 30s, an ID no SMS proves
// fails transaction_not_found 30 s after its submission (not 15 minutes
// past the deadline, as before); its SMS coming later succeeds the deposit
// while it is open; after it closed, the payment is listed by payd admin
// sms unmatched and credited once by payd admin deposit credit.
func TestSMSInboxLatePayments(t *testing.T) {
	t.Setenv("PAYD_MASTER_KEY", "")
	h := newHarness(t, paydtest.WithSMSInbox(smsinbox.Config{Silence: time.Hour, NotFoundGrace: 30 * time.Second}))
	h.syncClock()
	org := h.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	wallet := h.AddWallet(org, "bkash", "cash_out", "01811111111", "Agent")
	token := str(h.admin("device", "add", "--org", org.ID, "--name", "counter", "--wallet", wallet.ID), "token")
	h.device(token, "heartbeat", map[string]any{})
	h.admin("sms", "anchor", "--org", org.ID, "--wallet", wallet.ID, "--balance", "10000")
	const payer = "01712345678"
	create := func(merchantID, amount string) string {
		t.Helper()
		res := h.CreateH2H(org, h2h(kv{"merchant_id", `"` + merchantID + `"`}, kv{"amount", `"` + amount + `"`}))
		if res.Status != 201 {
			t.Fatalf("create: %d %s", res.Status, res.Body)
		}
		return str(res.JSON, "id")
	}
	state := func(id string) string {
		t.Helper()
		res := h.GetDeposit(org, id, true)
		return str(res.JSON, "status") + "/" + str(res.JSON, "verification", "failure_code")
	}
	// sent forwards m; the device learns only that it was received, so
	// what payd made of it is read where the operator reads it.
	sent := func(m sms, want string) {
		t.Helper()
		h.Clock.Add(time.Second) // newest first: this one
		if res := h.device(token, "sms", m); res.Status != 200 || string(res.Body) != `{"received":true}`+"\n" {
			t.Fatalf("sms: %d %s", res.Status, res.Body)
		}
		last, err := h.Inbox.ListSMS(context.Background(), smsinbox.ListSMSParams{OrganizationID: org.ID, Limit: 1})
		if err != nil || len(last) != 1 || last[0].Status != want {
			t.Fatalf("sms %q: stored as %v (%v), want %s", m.Body, last, err, want)
		}
	}

	open, closed := create("late-open", "500"), create("late-closed", "600")
	paidAt := h.Clock.Now()
	for id, trx := range map[string]string{open: "TRXOPEN001", closed: "TRXCLOSE01"} {
		if res := h.Verify(org, id, `{"provider_transaction_id":"`+trx+`"}`); res.Status != 202 {
			t.Fatalf("verify: %d %s", res.Status, res.Body)
		}
	}
	h.Work()
	h.Clock.Add(29 * time.Second)
	h.Work()
	if s := state(open); s != "processing/" {
		t.Fatalf("within the grace: %s", s)
	}
	h.Clock.Add(time.Second)
	h.Work()
	if s := state(open); s != "pending/transaction_not_found" {
		t.Fatalf("at the grace's end: %s", s)
	}
	// The payer may go on: the same ID answers its failed attempt.
	if res := h.Verify(org, open, `{"provider_transaction_id":"TRXOPEN001"}`); res.Status != 200 || str(res.JSON, "attempt_status") != "failed" {
		t.Fatalf("repeat: %d %s", res.Status, res.Body)
	}

	// The SMS after the grace, the deposit open: matched to it.
	sent(cashOutSMS("500.00", payer, "10,500.00", "TRXOPEN001", paidAt), "accepted")
	h.Work()
	if s := state(open); s != "succeeded/" {
		t.Fatalf("open deposit after its late SMS: %s", s)
	}

	// After the deadline: the deposit stays failed; the operator sees the
	// payment with its deposit and credits it once.
	h.Clock.Add(15 * time.Minute)
	h.Work()
	sent(cashOutSMS("600.00", payer, "11,100.00", "TRXCLOSE01", paidAt), "accepted")
	h.Work()
	if s := state(closed); s != "failed/transaction_not_found" {
		t.Fatalf("closed deposit after its late SMS: %s", s)
	}
	list := h.admin("sms", "unmatched", "--org", org.ID)["payments"].([]any)
	if len(list) != 1 || str(list[0], "deposit", "id") != closed || str(list[0], "sms", "transaction_id") != "TRXCLOSE01" ||
		!strings.Contains(str(list[0], "next"), "payd admin deposit credit --org "+org.ID+" --deposit "+closed) {
		t.Fatalf("sms unmatched: %v", list)
	}
	if err := h.adminFails("deposit", "credit", "--org", org.ID, "--deposit", closed, "--transaction-id", "TRXOPEN001"); !strings.Contains(err.Error(), "transaction_id_used") {
		t.Fatalf("credit with another deposit's payment: %v", err)
	}
	out := h.admin("deposit", "credit", "--org", org.ID, "--deposit", closed, "--transaction-id", "trxclose01", "--actor", "ops@shop")
	if str(out, "deposit_status") != "failed" || str(out, "journal_kind") != "late_payment" || str(out, "credited") != "600.00" {
		t.Fatalf("deposit credit: %v", out)
	}
	if err := h.adminFails("deposit", "credit", "--org", org.ID, "--deposit", closed, "--transaction-id", "TRXCLOSE01"); !strings.Contains(err.Error(), "deposit_terminal") {
		t.Fatalf("second credit: %v", err)
	}
	if b := h.Balance(org); !strings.Contains(b, `"available":"1100.00"`) {
		t.Fatalf("balance %s", b)
	}
	if list := h.admin("sms", "unmatched", "--org", org.ID)["payments"].([]any); len(list) != 0 {
		t.Fatalf("unmatched after the credit: %v", list)
	}
	entries := h.admin("audit", "--org", org.ID)
	if !strings.Contains(mustJSON(t, entries), `"action":"deposit.credit_late_payment"`) || !strings.Contains(mustJSON(t, entries), `"actor":"ops@shop"`) {
		t.Fatalf("audit: %v", entries)
	}
}
