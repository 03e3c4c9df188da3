// Package bkashtest is the suite of the bKash provider's own tables, run on
// every store (storage/sqlite, storage/postgres) by the provider's
// TestStore.
package bkashtest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/bkash"
)

// Store is a store migrated with bkash.Migrations().
type Store interface {
	engine.Store
}

var base = time.Date(2026, 11, 27, 9, 26, 53, 589793000, time.UTC)

// Exercise runs the suite; newStore returns a new, empty store each call,
// which the suite closes.
func Exercise(t *testing.T, newStore func(t *testing.T) Store) {
	t.Helper()
	for _, c := range []struct {
		name string
		fn   func(t *testing.T, s bkash.SQLStore)
	}{
		{"Accounts", accounts},
		{"RenewalLease", renewalLease},
		{"RenewalRace", renewalRace},
		{"Payments", payments},
		{"Refunds", refunds},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			st := newStore(t)
			t.Cleanup(func() { st.Close() })
			c.fn(t, bkash.NewSQLStore(st))
		})
	}
}

func accounts(t *testing.T, s bkash.SQLStore) {
	ctx := context.Background()
	if _, err := s.GetAccount(ctx, "org_a"); err != engine.ErrNotFound {
		t.Fatalf("get before connect: %v", err)
	}
	a := &bkash.Account{OrganizationID: "org_a", Credentials: []byte{1, 2, 3}, ConnectedAt: base}
	if err := s.PutAccount(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveToken(ctx, "org_a", base, []byte{9}, base.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetAccount(ctx, "org_a")
	if err != nil || string(got.Credentials) != "\x01\x02\x03" || string(got.Token) != "\x09" ||
		!got.TokenFreshUntil.Equal(base.Add(time.Hour)) || !got.LeaseUntil.IsZero() || !got.ConnectedAt.Equal(base) {
		t.Fatalf("got %+v, %v", got, err)
	}
	// A reconnect drops the token; a token renewed for the old connection
	// is not written over the new one.
	if err := s.PutAccount(ctx, &bkash.Account{OrganizationID: "org_a", Credentials: []byte{4}, ConnectedAt: base.Add(time.Second)}); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveToken(ctx, "org_a", base, []byte{8}, base.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetAccount(ctx, "org_a"); got.Token != nil || !got.TokenFreshUntil.IsZero() {
		t.Fatalf("after reconnect: %+v", got)
	}
	// A refused token is expired only while it is the row's.
	_ = s.SaveToken(ctx, "org_a", base.Add(time.Second), []byte{7}, base.Add(time.Hour))
	if err := s.ExpireToken(ctx, "org_a", []byte{6}, base); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetAccount(ctx, "org_a"); !got.TokenFreshUntil.Equal(base.Add(time.Hour)) {
		t.Fatalf("another token expired this one: %+v", got)
	}
	if err := s.ExpireToken(ctx, "org_a", []byte{7}, base); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetAccount(ctx, "org_a"); !got.TokenFreshUntil.Equal(base) {
		t.Fatalf("not expired: %+v", got)
	}
	if ok, err := s.DeleteAccount(ctx, "org_a"); !ok || err != nil {
		t.Fatalf("delete: %v %v", ok, err)
	}
	if ok, err := s.DeleteAccount(ctx, "org_a"); ok || err != nil {
		t.Fatalf("delete again: %v %v", ok, err)
	}
}

func renewalLease(t *testing.T, s bkash.SQLStore) {
	ctx := context.Background()
	_ = s.PutAccount(ctx, &bkash.Account{OrganizationID: "org_a", Credentials: []byte{1}, ConnectedAt: base})
	take := func(at time.Time) bool {
		t.Helper()
		ok, err := s.TakeRenewal(ctx, "org_a", base, at, at.Add(30*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !take(base) {
		t.Fatal("the first renewal was refused")
	}
	if take(base.Add(time.Second)) {
		t.Fatal("a second renewal under a running lease")
	}
	if !take(base.Add(31 * time.Second)) {
		t.Fatal("a lease that ran out was not taken over")
	}
	// A failed renewal holds the next one off until its backoff ends.
	if err := s.HoldRenewal(ctx, "org_a", base, base.Add(40*time.Second)); err != nil {
		t.Fatal(err)
	}
	if take(base.Add(35 * time.Second)) {
		t.Fatal("a renewal during a failed one's backoff")
	}
	_ = s.SaveToken(ctx, "org_a", base, []byte{1}, base.Add(time.Hour))
	if take(base.Add(time.Minute)) {
		t.Fatal("a fresh token was renewed")
	}
	if !take(base.Add(time.Hour)) {
		t.Fatal("a due token was not renewed")
	}
	if ok, _ := s.TakeRenewal(ctx, "org_a", base.Add(time.Second), base.Add(2*time.Hour), base.Add(3*time.Hour)); ok {
		t.Fatal("a renewal for another connection")
	}
}

// renewalRace: many callers at once, one wins.
func renewalRace(t *testing.T, s bkash.SQLStore) {
	ctx := context.Background()
	_ = s.PutAccount(ctx, &bkash.Account{OrganizationID: "org_a", Credentials: []byte{1}, ConnectedAt: base})
	var won atomic.Int32
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			ok, err := s.TakeRenewal(ctx, "org_a", base, base, base.Add(time.Minute))
			if err != nil && !errors.Is(err, engine.ErrUnavailable) {
				t.Error(err)
			}
			if ok {
				won.Add(1)
			}
		})
	}
	wg.Wait()
	if won.Load() != 1 {
		t.Fatalf("%d renewals won, want 1", won.Load())
	}
}

func payments(t *testing.T, s bkash.SQLStore) {
	ctx := context.Background()
	p := &bkash.Payment{PaymentID: "TR1", OrganizationID: "org_a", DepositID: "dep_1", CheckoutToken: "tok",
		Amount: decimal.RequireFromString("500.50"), State: bkash.StateCreated, ExpiresAt: base.Add(time.Hour),
		NextCheckAt: base.Add(time.Minute), CreatedAt: base}
	if err := s.InsertPayment(ctx, p); err != nil {
		t.Fatal(err)
	}
	dup := *p
	dup.PaymentID = "TR2"
	if err := s.InsertPayment(ctx, &dup); !errors.Is(err, engine.ErrDuplicate) {
		t.Fatalf("a second payment of a deposit: %v", err)
	}
	got, err := s.GetPayment(ctx, "TR1")
	if err != nil || !got.Amount.Equal(p.Amount) || got.State != bkash.StateCreated || !got.CompletedAt.IsZero() || !got.ExpiresAt.Equal(p.ExpiresAt) {
		t.Fatalf("%+v %v", got, err)
	}
	if due, _ := s.DuePayments(ctx, base, 10); len(due) != 0 {
		t.Fatalf("due early: %d", len(due))
	}
	if due, _ := s.DuePayments(ctx, base.Add(time.Minute), 10); len(due) != 1 {
		t.Fatalf("due: %d", len(due))
	}
	// Executing is claimed by one caller.
	var won atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			ok, err := s.MovePayment(ctx, "TR1", []string{bkash.StateCreated}, bkash.StateExecuting, bkash.Payment{NextCheckAt: base})
			if err != nil && !errors.Is(err, engine.ErrUnavailable) {
				t.Error(err)
			}
			if ok {
				won.Add(1)
			}
		})
	}
	wg.Wait()
	if won.Load() != 1 {
		t.Fatalf("%d executes claimed, want 1", won.Load())
	}
	ok, err := s.MovePayment(ctx, "TR1", []string{bkash.StateCreated, bkash.StateExecuting}, bkash.StateExecuted,
		bkash.Payment{TrxID: "TRX9", PayerPhone: "01712345678", CompletedAt: base.Add(time.Second), NextCheckAt: base})
	if !ok || err != nil {
		t.Fatalf("executed: %v %v", ok, err)
	}
	got, err = s.GetPaymentByTrx(ctx, "org_a", "TRX9")
	if err != nil || got.PaymentID != "TR1" || got.PayerPhone != "01712345678" || !got.CompletedAt.Equal(base.Add(time.Second)) {
		t.Fatalf("by trx: %+v %v", got, err)
	}
	if _, err := s.GetPaymentByTrx(ctx, "org_b", "TRX9"); err != engine.ErrNotFound {
		t.Fatalf("another organization's trx: %v", err)
	}
	// A later move keeps what it does not name.
	if ok, _ := s.MovePayment(ctx, "TR1", []string{bkash.StateExecuted}, bkash.StateSubmitted, bkash.Payment{NextCheckAt: base}); !ok {
		t.Fatal("submitted")
	}
	got, _ = s.GetPayment(ctx, "TR1")
	if got.TrxID != "TRX9" || got.PayerPhone != "01712345678" || !got.CompletedAt.Equal(base.Add(time.Second)) {
		t.Fatalf("kept: %+v", got)
	}
	if due, _ := s.DuePayments(ctx, base.Add(time.Hour), 10); len(due) != 0 {
		t.Fatalf("a submitted payment is due: %d", len(due))
	}
}

// refunds: one refund of a payment is sending at a time, even when many
// callers insert at once; a key is recorded once; a sending refund ends
// once; the refunds made are known by bKash's ID.
func refunds(t *testing.T, s bkash.SQLStore) {
	ctx := context.Background()
	newRefund := func(id, payment, amount string) *bkash.Refund {
		return &bkash.Refund{RefundID: id, OrganizationID: "org_a", PaymentID: payment, Amount: decimal.RequireFromString(amount),
			State: bkash.RefundSending, SentAt: base}
	}
	var inserted atomic.Int32
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			err := s.InsertRefund(ctx, newRefund(fmt.Sprintf("rf_%d", i), "TR1", "100.50"))
			switch {
			case err == nil:
				inserted.Add(1)
			case !errors.Is(err, bkash.ErrRefundInFlight) && !errors.Is(err, engine.ErrUnavailable):
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if inserted.Load() != 1 {
		t.Fatalf("%d refunds of one payment sending at once, want 1", inserted.Load())
	}
	var sending *bkash.Refund
	for i := range 8 {
		if r, err := s.GetRefund(ctx, fmt.Sprintf("rf_%d", i)); err == nil {
			sending = r
		}
	}
	if sending == nil || sending.State != bkash.RefundSending || !sending.Amount.Equal(decimal.RequireFromString("100.5")) ||
		sending.RefundTrxID != "" || !sending.SentAt.Equal(base) {
		t.Fatalf("sending: %+v", sending)
	}
	if err := s.InsertRefund(ctx, newRefund("rf_other", "TR2", "5")); err != nil {
		t.Fatalf("another payment's refund: %v", err)
	}
	// Sent again once, by one of two callers.
	if ok, err := s.ResendRefund(ctx, sending.RefundID, base, base.Add(time.Minute)); !ok || err != nil {
		t.Fatalf("resend: %v %v", ok, err)
	}
	if ok, err := s.ResendRefund(ctx, sending.RefundID, base, base.Add(time.Minute)); ok || err != nil {
		t.Fatalf("resent twice: %v %v", ok, err)
	}
	if got, _ := s.GetRefund(ctx, sending.RefundID); !got.SentAt.Equal(base.Add(time.Minute)) {
		t.Fatalf("sent at %v", got.SentAt)
	}
	if ok, err := s.FinishRefund(ctx, sending.RefundID, bkash.RefundMade, "RFD1", ""); !ok || err != nil {
		t.Fatalf("finish: %v %v", ok, err)
	}
	if ok, err := s.FinishRefund(ctx, sending.RefundID, bkash.RefundRefused, "", "late"); ok || err != nil {
		t.Fatalf("finished twice: %v %v", ok, err)
	}
	if err := s.InsertRefund(ctx, newRefund(sending.RefundID, "TR1", "1")); !errors.Is(err, engine.ErrDuplicate) {
		t.Fatalf("a key recorded twice: %v", err)
	}
	if err := s.InsertRefund(ctx, newRefund("rf_next", "TR1", "1")); err != nil {
		t.Fatalf("the next refund of the payment: %v", err)
	}
	if ok, err := s.FinishRefund(ctx, "rf_next", bkash.RefundRefused, "", "bKash refused the refund: 2072"); !ok || err != nil {
		t.Fatalf("refused: %v %v", ok, err)
	}
	got, err := s.GetRefund(ctx, "rf_next")
	if err != nil || got.State != bkash.RefundRefused || got.Reason == "" {
		t.Fatalf("refused: %+v %v", got, err)
	}
	known, err := s.KnownRefunds(ctx, "TR1")
	if err != nil || len(known) != 1 || !known["RFD1"] {
		t.Fatalf("known: %v %v", known, err)
	}
	if _, err := s.GetRefund(ctx, "rf_none"); err != engine.ErrNotFound {
		t.Fatalf("unknown: %v", err)
	}
}
