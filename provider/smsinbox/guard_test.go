package smsinbox_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/smsinbox"
	"github.com/payd-engine/payd/storage/postgres"
	"github.com/payd-engine/payd/storage/postgres/pgtest"
	"github.com/payd-engine/payd/storage/sqlite"
)

func (f *fixture) settings(u smsinbox.SettingsUpdate) {
	f.t.Helper()
	if _, err := f.inbox.UpdateSettings(f.ctx, f.org, u); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) queue(key, method, account, amount string) {
	f.t.Helper()
	_, err := f.inbox.SendPayout(f.ctx, engine.PayoutRequest{IdempotencyKey: key, OrganizationID: f.org,
		Method: method, Account: account, Amount: decimal.RequireFromString(amount)})
	if err != nil {
		f.t.Fatal(err)
	}
}

// payout is a manual payout's status, reference and SMS.
func (f *fixture) payout(key string) string {
	f.t.Helper()
	for _, status := range []string{smsinbox.PayoutQueued, smsinbox.PayoutMatched, smsinbox.PayoutSucceeded, smsinbox.PayoutFailed} {
		ps, err := f.inbox.ListPayouts(f.ctx, smsinbox.ListPayoutsParams{OrganizationID: f.org, Status: status})
		if err != nil {
			f.t.Fatal(err)
		}
		for _, p := range ps {
			if p.IdempotencyKey == key {
				return strings.TrimSpace(p.Status + " " + p.Reference)
			}
		}
	}
	f.t.Fatalf("no payout %s", key)
	return ""
}

func (f *fixture) stats() map[string]int {
	f.t.Helper()
	s, err := f.inbox.Stats(f.ctx, f.org)
	if err != nil {
		f.t.Fatal(err)
	}
	return s.Total
}

// cashInAt is cashIn at a given minute.
func cashInAt(amount, to, balance, trxID string, at time.Time) smsinbox.Incoming {
	return smsinbox.Incoming{Sender: "bKash", Body: fmt.Sprintf(
		"Cash In Tk %s to %s successful. Fee Tk 0.00. Balance Tk %s. TrxID %s at %s",
		amount, to, balance, trxID, at.In(dhaka).Format("02/01/2006 15:04"))}
}

// By default a payout that a proven SMS matches waits for the operator:
// the engine sees it pending until payout confirm.
func TestPayoutSMSMatchWaitsForConfirmation(t *testing.T) {
	f := newFixture(t)
	f.anchor("10000")
	f.queue("wd_1", "bkash", "01712345678", "500")
	if _, err := f.inbox.ConfirmPayout(f.ctx, "wd_1"); engine.ErrorCode(err) != engine.CodeConflict {
		t.Fatalf("confirm of a payout no SMS matched: %v", err)
	}
	sent := f.ingest(cashIn("500.00", "01712345678", "9,500.00", "BKS0000001"))
	wantStatus(t, sent, smsinbox.StatusAccepted)
	if got := f.payout("wd_1"); got != "matched BKS0000001" {
		t.Fatalf("payout after its SMS: %s", got)
	}
	if p, err := f.inbox.GetPayout(f.ctx, "wd_1"); err != nil || p.Status != engine.PayoutPending || p.Reference != "" {
		t.Fatalf("the engine sees a matched payout as %+v, %v", p, err)
	}
	// The engine has no such withdrawal here: PollPayoutNow says so, after
	// the confirmation is recorded.
	f.clock.Add(time.Second) // the audit log's order
	mp, _ := f.inbox.ConfirmPayout(engine.WithActor(f.ctx, "ops"), "wd_1")
	if mp == nil || mp.Status != smsinbox.PayoutSucceeded || mp.Reference != "BKS0000001" || mp.SMSID != sent.ID || mp.Operator != "ops" {
		t.Fatalf("confirm: %+v", mp)
	}
	if p, _ := f.inbox.GetPayout(f.ctx, "wd_1"); p.Status != engine.PayoutSucceeded || p.Reference != "BKS0000001" {
		t.Fatalf("the engine sees a confirmed payout as %+v", p)
	}
	if mp, _ := f.inbox.ConfirmPayout(f.ctx, "wd_1"); mp == nil || mp.Operator != "ops" {
		t.Fatalf("confirming again: %+v", mp)
	}
	audit, _ := f.eng.ListAudit(f.ctx, f.org, 0)
	var actions []string
	for _, a := range audit {
		if a.Subject == "wd_1" {
			actions = append(actions, a.Action)
		}
	}
	if fmt.Sprint(actions) != fmt.Sprint([]string{smsinbox.AuditPayoutMatch, smsinbox.AuditPayoutConfirm}) {
		t.Fatalf("audit of wd_1: %v", actions)
	}
}

// Even a forger who knows the balance (so every message below is accepted)
// completes no payout with a send that differs from it in amount,
// recipient, channel or time; only the exact send does.
func TestForgedSendCompletesNoPayout(t *testing.T) {
	f := newFixture(t)
	f.settings(smsinbox.SettingsUpdate{PayoutSMSConfirm: ptr(false)})
	f.anchor("10000")
	f.clock.Add(2 * time.Minute)
	queuedAt := f.clock.Now()
	f.queue("wd_1", "bkash", "01712345678", "500")
	f.queue("wd_2", "nagad", "01755555555", "500")
	f.clock.Add(time.Minute)
	for _, c := range []struct {
		name string
		in   smsinbox.Incoming
	}{
		{"wrong amount", cashInAt("499.00", "01712345678", "9,501.00", "BKF0000001", queuedAt)},
		{"wrong recipient", cashInAt("500.00", "01712345679", "9,001.00", "BKF0000002", queuedAt)},
		{"sent before the payout was queued", cashInAt("500.00", "01712345678", "8,501.00", "BKF0000003", queuedAt.Add(-time.Minute))},
		{"wrong channel", cashInAt("500.00", "01755555555", "8,001.00", "BKF0000004", queuedAt)},
	} {
		wantStatus(t, f.ingest(c.in), smsinbox.StatusAccepted)
		for _, key := range []string{"wd_1", "wd_2"} {
			if got := f.payout(key); got != "queued" {
				t.Fatalf("%s: %s is %s", c.name, key, got)
			}
		}
	}
	wantStatus(t, f.ingest(cashInAt("500.00", "01712345678", "7,501.00", "BKS0000005", queuedAt)), smsinbox.StatusAccepted)
	if got := f.payout("wd_1"); got != "succeeded BKS0000005" {
		t.Fatalf("the exact send left wd_1 %s", got)
	}
}

// One payout, and two devices each posting many copies of a send that
// fits it, at once: the payout is completed once, by one of them.
func TestOneSMSCompletesOnePayoutConcurrently(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "payd.db"), smsinbox.Migrations())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { store.Close() })
		testOneSMSCompletesOnePayout(t, newFixtureOn(t, store, nil))
	})
	t.Run("postgres", func(t *testing.T) {
		store, err := postgres.Open(context.Background(), pgtest.URL(t), smsinbox.Migrations())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { store.Close() })
		testOneSMSCompletesOnePayout(t, newFixtureOn(t, store, nil))
	})
}

func testOneSMSCompletesOnePayout(t *testing.T, f *fixture) {
	f.settings(smsinbox.SettingsUpdate{PayoutSMSConfirm: ptr(false)})
	other := f.addWallet("bkash", "01822222222")
	creds, err := f.inbox.AddDevice(f.ctx, smsinbox.AddDeviceParams{OrganizationID: f.org, Name: "phone 2", WalletIDs: []string{other.ID}})
	if err != nil {
		t.Fatal(err)
	}
	f.anchor("10000")
	if _, _, err := f.inbox.Anchor(f.ctx, f.org, other.ID, decimal.RequireFromString("20000")); err != nil {
		t.Fatal(err)
	}
	f.queue("wd_1", "bkash", "01712345678", "500")
	f.queue("wd_2", "bkash", "01799999999", "500")
	sends := []struct {
		dev *smsinbox.Device
		in  smsinbox.Incoming
	}{
		{f.device, cashIn("500.00", "01712345678", "9,500.00", "BKS0000001")},
		{creds.Device, cashIn("500.00", "01712345678", "19,500.00", "BKS0000002")},
	}
	var wg sync.WaitGroup
	for i := range 16 {
		s := sends[i%2]
		wg.Go(func() {
			if _, _, err := f.inbox.Ingest(f.ctx, s.dev, s.in); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	got := f.payout("wd_1")
	if got != "succeeded BKS0000001" && got != "succeeded BKS0000002" {
		t.Fatalf("wd_1 is %s", got)
	}
	if got := f.payout("wd_2"); got != "queued" {
		t.Fatalf("wd_2 is %s", got)
	}
	audit, _ := f.eng.ListAudit(f.ctx, f.org, 0)
	completions := 0
	for _, a := range audit {
		if a.Action == smsinbox.AuditPayoutComplete {
			completions++
		}
	}
	if completions != 1 {
		t.Fatalf("%d completions audited, want 1", completions)
	}
	if n := f.stats()[smsinbox.StatusAccepted]; n != 2 {
		t.Fatalf("%d accepted messages, want the two sends once each", n)
	}
}

// A wallet keeps at most HeldMax held messages (the oldest are dropped)
// for at most HeldMaxAge; an expired message never continues the chain.
func TestHeldMessagesBoundedAndExpire(t *testing.T) {
	f := newFixture(t)
	f.settings(smsinbox.SettingsUpdate{HeldMax: ptr(3), HeldMaxAge: ptr(time.Hour)})
	// No anchor yet: everything is held. genuine continues 1,000.
	genuine := f.ingest(cashOut("100.00", "1,100.00", "TRX0000001", t0))
	for i := range 4 {
		f.clock.Add(time.Second)
		wantStatus(t, f.ingest(cashOut("1.00", fmt.Sprintf("%d.00", 50+i), fmt.Sprintf("FRG000000%d", i), t0)), smsinbox.StatusHeld)
	}
	if got := f.stats(); got[smsinbox.StatusHeld] != 3 || got[smsinbox.StatusExpired] != 2 {
		t.Fatalf("counts after 5 held with a cap of 3: %v", got)
	}
	ms, _ := f.inbox.ListSMS(f.ctx, smsinbox.ListSMSParams{OrganizationID: f.org, Status: smsinbox.StatusExpired})
	if len(ms) != 2 || ms[1].ID != genuine.ID || !strings.Contains(ms[1].Reason, "more than 3 held") {
		t.Fatalf("expired: %v", ms)
	}
	if proven := f.anchor("1000"); len(proven) != 0 {
		t.Fatalf("an expired message continued the chain: %v", proven)
	}
	// Past HeldMaxAge, the next message of the wallet expires the rest.
	f.clock.Add(2 * time.Hour)
	again := f.ingest(cashOut("100.00", "1,100.00", "TRX0000009", t0))
	wantStatus(t, again, smsinbox.StatusAccepted)
	if got := f.stats(); got[smsinbox.StatusHeld] != 0 || got[smsinbox.StatusExpired] != 5 || got[smsinbox.StatusAccepted] != 1 {
		t.Fatalf("counts after the age passed: %v", got)
	}
	// Held, and then older than HeldMaxAge when its chain reaches it: expired.
	late := f.ingest(cashOut("10.00", "1,120.00", "TRX0000011", t0))
	wantStatus(t, late, smsinbox.StatusHeld)
	f.clock.Add(2 * time.Hour)
	f.settings(smsinbox.SettingsUpdate{HeldMaxAge: ptr(90 * time.Minute)})
	if proven := f.anchor("1110"); len(proven) != 0 {
		t.Fatalf("a message held past its age was accepted: %v", proven)
	}
	if got := f.stats(); got[smsinbox.StatusExpired] != 6 {
		t.Fatalf("counts: %v", got)
	}
	for _, u := range []smsinbox.SettingsUpdate{{HeldMax: ptr(0)}, {HeldMaxAge: ptr(time.Second)}} {
		if _, err := f.inbox.UpdateSettings(f.ctx, f.org, u); engine.ErrorCode(err) != engine.CodeInvalidRequest {
			t.Fatalf("settings %+v: %v", u, err)
		}
	}
}

// A held or conflicting message is a warning naming the wallet and the
// device, without a balance.
func TestHeldAndConflictAreAlarms(t *testing.T) {
	var log bytes.Buffer
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "payd.db"), smsinbox.Migrations())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	f := newFixtureOn(t, store, slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelWarn})))
	f.anchor("73519.27")
	wantStatus(t, f.ingest(cashOut("100.00", "64,208.13", "TRX0000001", t0)), smsinbox.StatusHeld)
	wantStatus(t, f.ingest(cashOut("100.00", "73,619.27", "TRX0000002", t0)), smsinbox.StatusAccepted)
	wantStatus(t, f.ingest(cashOut("900.00", "80,000.00", "TRX0000002", t0)), smsinbox.StatusConflict)
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want a warning for the held and the conflicting message:\n%s", log.String())
	}
	for _, l := range lines {
		if !strings.Contains(l, "level=WARN") || !strings.Contains(l, "wallet="+f.wallet.ID) || !strings.Contains(l, "device="+f.device.ID) {
			t.Errorf("warning without its wallet and device: %s", l)
		}
		for _, secret := range []string{"73519", "73,519", "64208", "64,208", "73619", "80000"} {
			if strings.Contains(l, secret) {
				t.Errorf("warning tells a balance: %s", l)
			}
		}
	}
	if got := f.stats(); got[smsinbox.StatusHeld] != 1 || got[smsinbox.StatusConflict] != 1 || got[smsinbox.StatusAccepted] != 1 {
		t.Fatalf("counts: %v", got)
	}
}

// A rotated token stops working at once; the new one works; the rotation
// is audited. A revoked device is not rotated.
func TestRotateDevice(t *testing.T) {
	f := newFixture(t)
	creds, err := f.inbox.AddDevice(f.ctx, smsinbox.AddDeviceParams{OrganizationID: f.org, WalletIDs: []string{f.addWallet("nagad", "01822222222").ID}})
	if err != nil {
		t.Fatal(err)
	}
	f.clock.Add(time.Second) // the audit log's order
	rotated, err := f.inbox.RotateDevice(engine.WithActor(f.ctx, "ops"), f.org, creds.Device.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.inbox.Authenticate(f.ctx, creds.Token); engine.ErrorCode(err) != engine.CodeUnauthorized {
		t.Fatalf("old token after rotation: %v", err)
	}
	if d, err := f.inbox.Authenticate(f.ctx, rotated.Token); err != nil || d.ID != creds.Device.ID || rotated.Token == creds.Token {
		t.Fatalf("new token: %v %v", d, err)
	}
	if len(rotated.Chains) != 1 || rotated.Chains[0].Channel != "nagad" {
		t.Fatalf("rotated device's wallets: %+v", rotated.Chains)
	}
	audit, _ := f.eng.ListAudit(f.ctx, f.org, 0)
	if last := audit[len(audit)-1]; last.Action != smsinbox.AuditDeviceRotate || last.Actor != "ops" || last.Subject != creds.Device.ID {
		t.Fatalf("audit %+v", last)
	}
	if _, err := f.inbox.RotateDevice(f.ctx, "org_other", creds.Device.ID); engine.ErrorCode(err) != engine.CodeNotFound {
		t.Fatalf("rotate another org's device: %v", err)
	}
	if _, err := f.inbox.RevokeDevice(f.ctx, f.org, creds.Device.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.inbox.RotateDevice(f.ctx, f.org, creds.Device.ID); engine.ErrorCode(err) != engine.CodeConflict {
		t.Fatalf("rotate a revoked device: %v", err)
	}
}

var discardLogger = slog.New(slog.DiscardHandler)
