package sandboxtest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/payd-engine/payd/conformance/storekit"
	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/sandbox"
)

// The sandbox provider's payments and payouts are written outside the
// engine's transactions, each in a transaction of its own, by the
// provider's own SQL (sandbox.NewSQLStore) on the store's engine.SQLTx.

func testSandboxPayments(t *testing.T, store Store) {
	s := sandbox.NewSQLStore(store)
	ctx := context.Background()
	const org, other = "org_sandbox_1", "org_sandbox_2"
	completed := &engine.ProviderTransaction{
		Channel: engine.ChannelBkash, TransactionID: "TRX1", Type: engine.TransactionCashOut,
		Status: engine.TransactionCompleted, Amount: dec("1234.50"), Currency: engine.Currency,
		PayerPhone: "01711111111", RecipientPhone: "01800000000",
		CompletedAt: base, TimePrecision: time.Minute + 7*time.Nanosecond,
	}
	// A pending payment into a checkout: no recipient, no completion time.
	pending := &engine.ProviderTransaction{
		Channel: engine.ChannelNagad, TransactionID: "TRX1", Type: engine.TransactionPayment,
		Status: engine.TransactionPending, Amount: dec("0.01"), Currency: engine.Currency,
		PayerPhone: "01711111111",
	}
	for _, p := range []*engine.ProviderTransaction{completed, pending} {
		if err := s.RecordSandboxPayment(ctx, org, p); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []*engine.ProviderTransaction{completed, pending} {
		got, err := s.GetSandboxPayment(ctx, org, want.Channel, want.TransactionID)
		if err != nil {
			t.Fatal(err)
		}
		storekit.AssertEqual(t, got, want)
	}
	if got, err := s.GetSandboxPayment(ctx, org, engine.ChannelBkash, "TRX1"); err != nil || !got.Amount.Equal(dec("1234.5")) {
		t.Errorf("completed payment: %v, %v", got, err)
	}
	if got, err := s.GetSandboxPayment(ctx, org, engine.ChannelNagad, "TRX1"); err != nil || !got.CompletedAt.IsZero() {
		t.Errorf("pending payment: %v, %v, want a zero completion time", got, err)
	}

	dup := *completed
	dup.Amount = dec("1")
	storekit.WantDuplicate(t, "duplicate payment", s.RecordSandboxPayment(ctx, org, &dup))
	_, err := s.GetSandboxPayment(ctx, org, engine.ChannelBkash, "TRX2")
	storekit.WantNotFound(t, "unknown payment", err)

	// Each organization has a sandbox of its own: another's payment is not
	// found, and the same ID can be recorded there with its own amount.
	_, err = s.GetSandboxPayment(ctx, other, engine.ChannelBkash, "TRX1")
	storekit.WantNotFound(t, "another organization's payment", err)
	if err := s.RecordSandboxPayment(ctx, other, &dup); err != nil {
		t.Fatalf("the same ID in another organization: %v", err)
	}
	if got, err := s.GetSandboxPayment(ctx, other, engine.ChannelBkash, "TRX1"); err != nil || !got.Amount.Equal(dec("1")) {
		t.Errorf("other organization's payment: %v, %v", got, err)
	}
	if got, err := s.GetSandboxPayment(ctx, org, engine.ChannelBkash, "TRX1"); err != nil || !got.Amount.Equal(dec("1234.5")) {
		t.Errorf("first organization's payment after another's: %v, %v", got, err)
	}
}

func testSandboxPayouts(t *testing.T, store Store) {
	s := sandbox.NewSQLStore(store)
	ctx := context.Background()
	pending := &engine.Payout{
		IdempotencyKey: "wdr_1:1", Reference: "SBX-PAYOUT-1", Method: "bkash", Account: "01711111111",
		Amount: dec("1234.50"), Status: engine.PayoutPending, CreatedAt: base,
	}
	failed := &engine.Payout{
		IdempotencyKey: "wdr_2:1", Reference: "SBX-PAYOUT-2", Method: "bank", Account: "1234567890123",
		Amount: dec("0.01"), Status: engine.PayoutFailed, Reason: "account closed ☹",
		CreatedAt: base, CompletedAt: base.Add(time.Second),
	}
	orgOf := map[string]string{"wdr_1:1": "org_sandbox_1", "wdr_2:1": "org_sandbox_2"}
	for _, p := range []*engine.Payout{pending, failed} {
		if err := s.CreateSandboxPayout(ctx, orgOf[p.IdempotencyKey], p); err != nil {
			t.Fatal(err)
		}
	}
	// get also checks that the payout keeps its organization.
	get := func(key string) *engine.Payout {
		t.Helper()
		p, org, err := s.GetSandboxPayout(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if org != orgOf[key] {
			t.Errorf("payout %s belongs to %q, want %q", key, org, orgOf[key])
		}
		return p
	}
	for _, want := range []*engine.Payout{pending, failed} {
		storekit.AssertEqual(t, get(want.IdempotencyKey), want)
	}
	if got := get("wdr_1:1"); !got.CompletedAt.IsZero() || !got.Amount.Equal(dec("1234.5")) {
		t.Errorf("pending payout: amount %s, completed %v", got.Amount, got.CompletedAt)
	}

	dup := *pending
	dup.Reference, dup.Amount = "SBX-OTHER", dec("1")
	storekit.WantDuplicate(t, "duplicate payout", s.CreateSandboxPayout(ctx, "org_sandbox_2", &dup))
	storekit.AssertEqual(t, get("wdr_1:1"), pending)

	// Complete writes the outcome of a pending payout and nothing else.
	pending.Status, pending.Reason, pending.CompletedAt = engine.PayoutFailed, "account closed", base.Add(time.Minute)
	changed := *pending
	changed.Reference, changed.Method, changed.Account, changed.Amount = "SBX-OTHER", "nagad", "x", dec("9")
	changed.CreatedAt = base.Add(time.Hour)
	if err := s.CompleteSandboxPayout(ctx, &changed); err != nil {
		t.Fatal(err)
	}
	storekit.AssertEqual(t, get("wdr_1:1"), pending)
	// Once: a payout no longer pending keeps its outcome.
	for name, p := range map[string]*engine.Payout{
		"completed again":   {IdempotencyKey: "wdr_1:1", Status: engine.PayoutSucceeded, CompletedAt: base.Add(time.Hour)},
		"completed before":  {IdempotencyKey: "wdr_2:1", Status: engine.PayoutSucceeded, CompletedAt: base.Add(time.Hour)},
		"an unknown payout": {IdempotencyKey: "wdr_x:1", Status: engine.PayoutFailed},
	} {
		storekit.WantNotFound(t, name, s.CompleteSandboxPayout(ctx, p))
	}
	storekit.AssertEqual(t, get("wdr_1:1"), pending)
	storekit.AssertEqual(t, get("wdr_2:1"), failed)

	_, _, err := s.GetSandboxPayout(ctx, "wdr_x:1")
	storekit.WantNotFound(t, "unknown payout", err)
}

// testSandboxSettleRace: two processes on one database (two Providers on
// one store) settle the same payouts at once, one by hand as failed, the
// other automatically as succeeded when the engine asks. Each payout gets
// one outcome, and each caller is told that one: the hand settlement is
// refused with ErrAlreadySettled when the automatic one won, and the
// engine reads failed when the hand one did.
func testSandboxSettleRace(t *testing.T, store Store) {
	ctx := context.Background()
	clk := clock.NewMock()
	clk.Set(base)
	newProvider := func() *sandbox.Provider {
		p, err := sandbox.New(sandbox.Config{
			PublicURL: "http://payd.test", Payments: sandbox.NewSQLStore(store), Payouts: sandbox.NewSQLStore(store),
			PayoutDelay: time.Second, Clock: clk,
		})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	auto, byHand := newProvider(), newProvider()
	const org, payouts = "org_sandbox_1", 40
	for i := range payouts {
		_, err := auto.SendPayout(ctx, engine.PayoutRequest{
			IdempotencyKey: fmt.Sprintf("wdr_race_%d", i), OrganizationID: org,
			Method: "bkash", Account: "01711111111", Amount: dec("10"),
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	clk.Add(2 * time.Second) // every payout is due to settle by itself
	for i := range payouts {
		key := fmt.Sprintf("wdr_race_%d", i)
		var read *engine.Payout
		var readErr, settleErr error
		var wg sync.WaitGroup
		wg.Go(func() { read, readErr = auto.GetPayout(ctx, key) })
		wg.Go(func() { _, settleErr = byHand.Settle(ctx, org, key, engine.PayoutFailed) })
		wg.Wait()
		if readErr != nil {
			t.Fatal(readErr)
		}
		stored, _, err := sandbox.NewSQLStore(store).GetSandboxPayout(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case read.Status != stored.Status:
			t.Errorf("%s: the engine read %s, the payout is %s", key, read.Status, stored.Status)
		case stored.Status == engine.PayoutSucceeded && !errors.Is(settleErr, sandbox.ErrAlreadySettled):
			t.Errorf("%s: settled succeeded, but the hand settlement as failed got %v", key, settleErr)
		case stored.Status == engine.PayoutFailed && settleErr != nil:
			t.Errorf("%s: settled failed by hand, which got %v", key, settleErr)
		}
	}
}
