package sqlite_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/storage/sqlite"
	"github.com/shopspring/decimal"
)

func newWithdrawal(id, orgID, merchantID string) *engine.Withdrawal {
	return &engine.Withdrawal{
		ID: id, OrganizationID: orgID, MerchantID: merchantID,
		Amount: decimal.RequireFromString("500"), Commission: decimal.RequireFromString("5.25"),
		PaymentMethod: "bkash", Account: "01711111111", Metadata: []byte("{}"),
		Status: engine.WithdrawalProcessing, PayoutStep: engine.PayoutToSend,
		NextRunAt: base, CreatedAt: base, UpdatedAt: base,
	}
}

func createWithdrawals(t *testing.T, s *sqlite.Store, ws ...*engine.Withdrawal) {
	t.Helper()
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		for _, w := range ws {
			if err := tx.CreateWithdrawal(ctx, w); err != nil {
				return fmt.Errorf("%s: %w", w.ID, err)
			}
		}
		return nil
	})
}

func getWithdrawal(t *testing.T, s *sqlite.Store, orgID, id string) *engine.Withdrawal {
	t.Helper()
	var w *engine.Withdrawal
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		var err error
		w, err = tx.GetWithdrawal(ctx, orgID, id)
		return err
	})
	return w
}

func TestWithdrawalRoundTrip(t *testing.T) {
	s, _ := openStore(t)
	createOrg(t, s, "org_1")
	createOrg(t, s, "org_2")
	// Metadata is kept byte for byte: spacing, key order, escapes.
	metadata := []byte(`{"z": 1, "a" :"☃ \u00e9",  "n":1.50}`)
	leased := &engine.Withdrawal{
		ID: "wdr_1", OrganizationID: "org_1", MerchantID: "order-1 ☕",
		Amount: decimal.RequireFromString("1234.50"), Commission: decimal.RequireFromString("12.35"),
		PaymentMethod: "bank", Account: "1234567890123", Metadata: metadata,
		Status: engine.WithdrawalProcessing, PayoutStep: engine.PayoutSent, ProviderReference: "PAYOUT-77",
		FailureReason: "timeout on try 2", Tries: 3,
		NextRunAt: base.Add(time.Minute), LeaseOwner: "worker-1", LeasedUntil: base.Add(90 * time.Second),
		CreatedAt: base, UpdatedAt: base.Add(time.Microsecond),
	}
	// Never leased, no next run, nothing optional: the zero values.
	bare := &engine.Withdrawal{
		ID: "wdr_2", OrganizationID: "org_1", MerchantID: "order-2",
		Amount: decimal.RequireFromString("0.01"), Commission: decimal.Decimal{},
		PaymentMethod: "nagad", Account: "01811111111", Status: engine.WithdrawalSucceeded,
		CreatedAt: base, UpdatedAt: base,
	}
	createWithdrawals(t, s, leased, bare)
	for _, want := range []*engine.Withdrawal{leased, bare} {
		got := getWithdrawal(t, s, "org_1", want.ID)
		assertEqual(t, got, want)
		if got.CreatedAt.Location() != time.UTC {
			t.Errorf("%s: created_at in %v, want UTC", want.ID, got.CreatedAt.Location())
		}
	}
	got := getWithdrawal(t, s, "org_1", "wdr_1")
	if !bytes.Equal(got.Metadata, metadata) {
		t.Errorf("metadata = %q, want %q", got.Metadata, metadata)
	}
	if got.Amount.String() != "1234.5" || got.Commission.String() != "12.35" {
		t.Errorf("amount %s, commission %s", got.Amount, got.Commission)
	}
	got = getWithdrawal(t, s, "org_1", "wdr_2")
	if !got.NextRunAt.IsZero() || !got.LeasedUntil.IsZero() || got.Metadata != nil {
		t.Errorf("bare withdrawal read back with next run %v, lease until %v, metadata %q",
			got.NextRunAt, got.LeasedUntil, got.Metadata)
	}

	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		for _, c := range []struct{ org, id string }{{"org_2", "wdr_1"}, {"org_1", "wdr_x"}, {"", "wdr_1"}} {
			if _, err := tx.GetWithdrawal(ctx, c.org, c.id); err != engine.ErrNotFound {
				t.Errorf("GetWithdrawal(%q, %q) = %v, want ErrNotFound", c.org, c.id, err)
			}
		}
		return nil
	})

	// Update moves the payout fields and leaves the request alone.
	leased.Status, leased.PayoutStep, leased.ProviderReference = engine.WithdrawalFailed, engine.PayoutSettled, "PAYOUT-78"
	leased.FailureReason, leased.Tries = "insufficient provider float", 4
	leased.NextRunAt, leased.LeaseOwner, leased.LeasedUntil = time.Time{}, "", time.Time{}
	leased.UpdatedAt = base.Add(time.Hour)
	bare.Status, bare.PayoutStep = engine.WithdrawalProcessing, engine.PayoutToSend
	bare.NextRunAt, bare.LeaseOwner, bare.LeasedUntil = base.Add(time.Second), "worker-2", base.Add(time.Minute)
	bare.UpdatedAt = base.Add(2 * time.Hour)
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		for _, w := range []*engine.Withdrawal{leased, bare} {
			changed := *w
			changed.OrganizationID, changed.MerchantID, changed.Amount = "org_2", "other", decimal.RequireFromString("1")
			changed.Account, changed.Metadata, changed.CreatedAt = "x", []byte("[]"), base.Add(time.Hour)
			if err := tx.UpdateWithdrawal(ctx, &changed); err != nil {
				return err
			}
		}
		if err := tx.UpdateWithdrawal(ctx, newWithdrawal("wdr_x", "org_1", "x")); err != engine.ErrNotFound {
			t.Errorf("UpdateWithdrawal(wdr_x) = %v, want ErrNotFound", err)
		}
		return nil
	})
	for _, want := range []*engine.Withdrawal{leased, bare} {
		assertEqual(t, getWithdrawal(t, s, "org_1", want.ID), want)
	}
}

func TestWithdrawalDuplicateMerchantID(t *testing.T) {
	s, _ := openStore(t)
	createOrg(t, s, "org_1")
	createOrg(t, s, "org_2")
	createWithdrawals(t, s, newWithdrawal("wdr_1", "org_1", "m1"))
	for name, w := range map[string]*engine.Withdrawal{
		"same merchant_id": newWithdrawal("wdr_2", "org_1", "m1"),
		"same id":          newWithdrawal("wdr_1", "org_2", "m9"),
	} {
		err := s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error { return tx.CreateWithdrawal(ctx, w) })
		if !errors.Is(err, engine.ErrDuplicate) {
			t.Errorf("%s: %v, want ErrDuplicate", name, err)
		}
	}
	// The same merchant_id in another organization is another withdrawal.
	createWithdrawals(t, s, newWithdrawal("wdr_3", "org_2", "m1"), newWithdrawal("wdr_4", "org_1", "m2"))
	if w := getWithdrawal(t, s, "org_2", "wdr_3"); w.MerchantID != "m1" {
		t.Errorf("wdr_3 has merchant_id %s", w.MerchantID)
	}
	// The organization must exist.
	err := s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
		return tx.CreateWithdrawal(ctx, newWithdrawal("wdr_5", "org_x", "m1"))
	})
	if err == nil || errors.Is(err, engine.ErrDuplicate) {
		t.Errorf("withdrawal of an unknown organization: %v, want a foreign key error", err)
	}
}

// Only the unique constraint stands between two racing requests with one
// merchant_id and two payouts.
func TestConcurrentSameWithdrawalMerchantID(t *testing.T) {
	s, _ := openStore(t)
	createOrg(t, s, "org_1")
	const n = 20
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			errs[i] = s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
				return tx.CreateWithdrawal(ctx, newWithdrawal(fmt.Sprintf("wdr_%02d", i), "org_1", "same"))
			})
		})
	}
	wg.Wait()
	var ok, dup int
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, engine.ErrDuplicate):
			dup++
		default:
			t.Errorf("unexpected error: %v", err)
		}
	}
	if ok != 1 || dup != n-1 {
		t.Errorf("%d succeeded and %d were duplicates, want 1 and %d", ok, dup, n-1)
	}
}

// claimPayouts runs ClaimDuePayouts in its own transaction and returns the
// IDs without their prefix.
func claimPayouts(t *testing.T, s *sqlite.Store, p engine.ClaimParams) string {
	t.Helper()
	var got []*engine.Withdrawal
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		var err error
		got, err = tx.ClaimDuePayouts(ctx, p)
		return err
	})
	var ids []string
	for _, w := range got {
		if w.LeaseOwner != p.Owner || !w.LeasedUntil.Equal(p.LeasedUntil) {
			t.Errorf("claimed %s returned with lease %q until %v, want %q until %v",
				w.ID, w.LeaseOwner, w.LeasedUntil, p.Owner, p.LeasedUntil)
		}
		ids = append(ids, strings.TrimPrefix(w.ID, "wdr_"))
	}
	return strings.Join(ids, ",")
}

func TestClaimDuePayouts(t *testing.T) {
	s, _ := openStore(t)
	createOrg(t, s, "org_1")
	createOrg(t, s, "org_2")
	now := base.Add(time.Hour)
	var ws []*engine.Withdrawal
	add := func(name, org, status string, nextRun time.Duration, leasedUntil time.Time) {
		w := newWithdrawal("wdr_"+name, org, "m_"+name)
		w.Status, w.NextRunAt = status, now.Add(nextRun)
		if !leasedUntil.IsZero() {
			w.LeaseOwner, w.LeasedUntil = "old", leasedUntil
		}
		ws = append(ws, w)
	}
	add("a", "org_1", engine.WithdrawalProcessing, -time.Minute, time.Time{})
	add("b", "org_2", engine.WithdrawalProcessing, -2*time.Minute, time.Time{})
	add("c", "org_1", engine.WithdrawalProcessing, 0, time.Time{})                        // due exactly now
	add("d", "org_1", engine.WithdrawalProcessing, -time.Minute, time.Time{})             // ties with a: by ID
	add("e", "org_1", engine.WithdrawalProcessing, time.Microsecond, time.Time{})         // not yet due
	add("f", "org_1", engine.WithdrawalProcessing, -time.Hour, now.Add(time.Microsecond)) // leased
	add("g", "org_2", engine.WithdrawalProcessing, -3*time.Minute, now)                   // lease ran out now
	add("h", "org_1", engine.WithdrawalSucceeded, -time.Hour, time.Time{})
	add("i", "org_1", engine.WithdrawalFailed, -time.Hour, time.Time{})
	createWithdrawals(t, s, ws...)

	lease := now.Add(time.Minute)
	p := engine.ClaimParams{Now: now, Owner: "w1", LeasedUntil: lease, Limit: 3}
	if got := claimPayouts(t, s, p); got != "g,b,a" {
		t.Errorf("first claim = %s, want g,b,a", got)
	}
	p.Owner, p.Limit = "w2", 10
	if got := claimPayouts(t, s, p); got != "d,c" {
		t.Errorf("second claim = %s, want d,c", got)
	}
	if got := claimPayouts(t, s, p); got != "" {
		t.Errorf("claim of a drained queue = %s, want nothing", got)
	}
	for _, limit := range []int{0, -1} {
		p.Limit = limit
		if got := claimPayouts(t, s, p); got != "" {
			t.Errorf("claim with Limit %d = %s, want nothing", limit, got)
		}
	}

	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		for _, c := range []struct{ org, id, owner string }{
			{"org_1", "wdr_a", "w1"}, {"org_2", "wdr_b", "w1"}, {"org_1", "wdr_d", "w2"},
			{"org_1", "wdr_e", ""}, {"org_1", "wdr_f", "old"}, {"org_1", "wdr_h", ""},
		} {
			w, err := tx.GetWithdrawal(ctx, c.org, c.id)
			if err != nil {
				return err
			}
			if w.LeaseOwner != c.owner {
				t.Errorf("%s leased by %q, want %q", c.id, w.LeaseOwner, c.owner)
			}
		}
		return nil
	})

	// Once the leases run out, the same rows (and now e and f) are due
	// again; the settled ones never are.
	p = engine.ClaimParams{Now: lease, Owner: "w3", LeasedUntil: lease.Add(time.Minute), Limit: 100}
	if got := claimPayouts(t, s, p); got != "f,g,b,a,d,c,e" {
		t.Errorf("claim after the leases ran out = %s, want f,g,b,a,d,c,e", got)
	}

	// A worker that settles its withdrawal takes it out of the queue.
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		w, err := tx.GetWithdrawal(ctx, "org_1", "wdr_a")
		if err != nil {
			return err
		}
		w.Status, w.PayoutStep, w.LeaseOwner, w.LeasedUntil = engine.WithdrawalSucceeded, engine.PayoutSettled, "", time.Time{}
		return tx.UpdateWithdrawal(ctx, w)
	})
	p = engine.ClaimParams{Now: lease.Add(time.Hour), Owner: "w4", LeasedUntil: lease.Add(2 * time.Hour), Limit: 100}
	if got := claimPayouts(t, s, p); got != "f,g,b,d,c,e" {
		t.Errorf("claim after settling a = %s, want f,g,b,d,c,e", got)
	}
}

func TestConcurrentPayoutClaims(t *testing.T) {
	s, _ := openStore(t)
	createOrg(t, s, "org_1")
	const n = 200
	var ws []*engine.Withdrawal
	for i := range n {
		w := newWithdrawal(fmt.Sprintf("wdr_%03d", i), "org_1", fmt.Sprintf("m%03d", i))
		w.NextRunAt = base.Add(time.Duration(i%17) * time.Second)
		ws = append(ws, w)
	}
	createWithdrawals(t, s, ws...)
	now := base.Add(time.Minute)
	claimed := make([][]string, 8)
	var wg sync.WaitGroup
	for w := range claimed {
		wg.Go(func() {
			p := engine.ClaimParams{Now: now, Owner: fmt.Sprintf("w%d", w), LeasedUntil: now.Add(time.Hour), Limit: 5}
			for {
				var got []*engine.Withdrawal
				err := s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
					var err error
					got, err = tx.ClaimDuePayouts(ctx, p)
					return err
				})
				if err != nil {
					t.Errorf("worker %d: %v", w, err)
					return
				}
				if len(got) == 0 {
					return
				}
				if len(got) > p.Limit {
					t.Errorf("worker %d claimed %d, limit %d", w, len(got), p.Limit)
				}
				for _, wd := range got {
					claimed[w] = append(claimed[w], wd.ID)
				}
			}
		})
	}
	wg.Wait()
	count := map[string]int{}
	for _, ids := range claimed {
		for _, id := range ids {
			count[id]++
		}
	}
	for i := range n {
		id := fmt.Sprintf("wdr_%03d", i)
		if count[id] != 1 {
			t.Errorf("%s claimed %d times, want once", id, count[id])
		}
	}
	if len(count) != n {
		t.Errorf("%d withdrawals claimed, want %d", len(count), n)
	}
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		for w, ids := range claimed {
			for _, id := range ids {
				wd, err := tx.GetWithdrawal(ctx, "org_1", id)
				if err != nil {
					return err
				}
				if want := fmt.Sprintf("w%d", w); wd.LeaseOwner != want {
					t.Errorf("%s leased by %s, want %s", id, wd.LeaseOwner, want)
				}
			}
		}
		return nil
	})
}

func TestMethodFeesRoundTrip(t *testing.T) {
	s, _ := openStore(t)
	dec := decimal.RequireFromString
	org := newOrg("org_1")
	org.MethodFees = engine.MethodFees{
		Deposit:  map[string]engine.FeeRule{"bkash_agent": {Percent: dec("1.5"), Fixed: dec("2")}},
		Withdraw: map[string]engine.FeeRule{"bank": {Percent: dec("0.25"), Fixed: dec("10")}},
	}
	plain := newOrg("org_2") // no overrides
	plain.CreatedAt = base.Add(time.Second)
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		if err := tx.CreateOrganization(ctx, org); err != nil {
			return err
		}
		return tx.CreateOrganization(ctx, plain)
	})
	check := func(want ...*engine.Organization) {
		t.Helper()
		read(t, s, func(ctx context.Context, tx engine.Tx) error {
			for _, w := range want {
				got, err := tx.GetOrganization(ctx, w.ID)
				if err != nil {
					return err
				}
				assertEqual(t, got, w)
			}
			list, err := tx.ListOrganizations(ctx)
			if err != nil {
				return err
			}
			assertEqual(t, list, want)
			return nil
		})
		write(t, s, func(ctx context.Context, tx engine.Tx) error {
			for _, w := range want {
				got, err := tx.LockOrganization(ctx, w.ID)
				if err != nil {
					return err
				}
				assertEqual(t, got, w)
			}
			return nil
		})
	}
	check(org, plain)
	got := getOrg(t, s, "org_1")
	if r := got.DepositFee("bkash_agent"); r.Percent.String() != "1.5" || r.Fixed.String() != "2" {
		t.Errorf("bkash_agent deposit fee = %s%% + %s", r.Percent, r.Fixed)
	}
	if r := got.WithdrawCommission("bank"); !r.Percent.Equal(dec("0.25")) || !r.Fixed.Equal(dec("10")) {
		t.Errorf("bank commission = %s%% + %s", r.Percent, r.Fixed)
	}

	// Update rewrites the overrides, including to none at all.
	org.MethodFees.Deposit = nil
	org.MethodFees.Withdraw["bkash"] = engine.FeeRule{Percent: dec("0.0001"), Fixed: dec("12.3456")}
	plain.MethodFees.Deposit = map[string]engine.FeeRule{"nagad": {Percent: dec("100"), Fixed: decimal.Decimal{}}}
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		if err := tx.UpdateOrganization(ctx, org); err != nil {
			return err
		}
		return tx.UpdateOrganization(ctx, plain)
	})
	check(org, plain)
	org.MethodFees = engine.MethodFees{Deposit: map[string]engine.FeeRule{}}
	write(t, s, func(ctx context.Context, tx engine.Tx) error { return tx.UpdateOrganization(ctx, org) })
	check(org, plain)

	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		if _, err := tx.LockOrganization(ctx, "org_x"); err != engine.ErrNotFound {
			t.Errorf("LockOrganization(org_x) = %v, want ErrNotFound", err)
		}
		return nil
	})
}

func getOrg(t *testing.T, s *sqlite.Store, id string) *engine.Organization {
	t.Helper()
	var org *engine.Organization
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		var err error
		org, err = tx.GetOrganization(ctx, id)
		return err
	})
	return org
}

func TestJournalActor(t *testing.T) {
	s, _ := openStore(t)
	createOrg(t, s, "org_1")
	dec := decimal.RequireFromString
	manual := &engine.Journal{
		ID: "jnl_1", OrganizationID: "org_1", Kind: engine.JournalAdjustment, Memo: "goodwill credit",
		Actor: "ops@example.com ☃", CreatedAt: base,
		Entries: []engine.Entry{
			{Account: engine.AccountAdjustments, Amount: dec("-25")},
			{Account: engine.AccountAvailable, Amount: dec("25")},
		},
	}
	auto := &engine.Journal{
		ID: "jnl_2", OrganizationID: "org_1", Kind: engine.JournalWithdrawalHold, Reference: "wdr_1",
		CreatedAt: base.Add(time.Second),
		Entries: []engine.Entry{
			{Account: engine.AccountAvailable, Amount: dec("-10.5")},
			{Account: engine.AccountHeld, Amount: dec("10.5")},
		},
	}
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		if err := tx.CreateJournal(ctx, manual); err != nil {
			return err
		}
		return tx.CreateJournal(ctx, auto)
	})
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		list, err := tx.ListJournals(ctx, "org_1")
		if err != nil {
			return err
		}
		assertEqual(t, list, []*engine.Journal{manual, auto})
		return nil
	})
}

func TestSandboxPayouts(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	pending := &engine.Payout{
		IdempotencyKey: "wdr_1:1", Reference: "SBX-PAYOUT-1", Method: "bkash", Account: "01711111111",
		Amount: decimal.RequireFromString("1234.50"), Status: engine.PayoutPending, CreatedAt: base,
	}
	failed := &engine.Payout{
		IdempotencyKey: "wdr_2:1", Reference: "SBX-PAYOUT-2", Method: "bank", Account: "1234567890123",
		Amount: decimal.RequireFromString("0.01"), Status: engine.PayoutFailed, Reason: "account closed ☹",
		CreatedAt: base, CompletedAt: base.Add(time.Second),
	}
	for _, p := range []*engine.Payout{pending, failed} {
		if err := s.CreateSandboxPayout(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	get := func(key string) *engine.Payout {
		t.Helper()
		p, err := s.GetSandboxPayout(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, want := range []*engine.Payout{pending, failed} {
		assertEqual(t, get(want.IdempotencyKey), want)
	}
	if got := get("wdr_1:1"); !got.CompletedAt.IsZero() || got.Amount.String() != "1234.5" || got.CreatedAt.Location() != time.UTC {
		t.Errorf("pending payout: amount %s, created %v, completed %v", got.Amount, got.CreatedAt, got.CompletedAt)
	}

	dup := *pending
	dup.Reference, dup.Amount = "SBX-OTHER", decimal.RequireFromString("1")
	if err := s.CreateSandboxPayout(ctx, &dup); !errors.Is(err, engine.ErrDuplicate) {
		t.Errorf("duplicate payout: %v, want ErrDuplicate", err)
	}
	assertEqual(t, get("wdr_1:1"), pending)

	// Update writes the outcome and nothing else.
	pending.Status, pending.Reference, pending.CompletedAt = engine.PayoutSucceeded, "SBX-PAYOUT-1b", base.Add(time.Minute)
	changed := *pending
	changed.Method, changed.Account, changed.Amount, changed.CreatedAt = "nagad", "x", decimal.RequireFromString("9"), base.Add(time.Hour)
	if err := s.UpdateSandboxPayout(ctx, &changed); err != nil {
		t.Fatal(err)
	}
	assertEqual(t, get("wdr_1:1"), pending)
	// And can take a completion back to none.
	failed.Status, failed.Reason, failed.CompletedAt = engine.PayoutPending, "", time.Time{}
	if err := s.UpdateSandboxPayout(ctx, failed); err != nil {
		t.Fatal(err)
	}
	assertEqual(t, get("wdr_2:1"), failed)

	if _, err := s.GetSandboxPayout(ctx, "wdr_x:1"); err != engine.ErrNotFound {
		t.Errorf("unknown payout: %v, want ErrNotFound", err)
	}
	if err := s.UpdateSandboxPayout(ctx, &engine.Payout{IdempotencyKey: "wdr_x:1", Status: engine.PayoutFailed}); err != engine.ErrNotFound {
		t.Errorf("update of an unknown payout: %v, want ErrNotFound", err)
	}
}

// Creating and updating a payout wait for a writer of another process like
// InTx does.
func TestSandboxPayoutWaitsForAnotherWriter(t *testing.T) {
	s, path := openStore(t)
	ctx := context.Background()
	p := &engine.Payout{IdempotencyKey: "k", Amount: decimal.RequireFromString("10"), Status: engine.PayoutPending, CreatedAt: base}
	release := holdWriteLock(t, path)
	time.AfterFunc(300*time.Millisecond, release)
	if err := s.CreateSandboxPayout(ctx, p); err != nil {
		t.Fatal(err)
	}
	release = holdWriteLock(t, path)
	time.AfterFunc(300*time.Millisecond, release)
	p.Status, p.CompletedAt = engine.PayoutSucceeded, base
	if err := s.UpdateSandboxPayout(ctx, p); err != nil {
		t.Fatal(err)
	}
}

// A database made before 0003 gains its columns with their defaults: the
// existing organizations have no fee overrides and the existing journals no
// actor.
func TestMigrateFrom0002(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "payd.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	stmts := []string{`CREATE TABLE schema_migrations (
		version INTEGER NOT NULL PRIMARY KEY, applied_at INTEGER NOT NULL) STRICT`}
	for _, name := range []string{"0001_init.sql", "0002_verification.sql"} {
		b, err := os.ReadFile(filepath.Join("migrations", name))
		if err != nil {
			t.Fatal(err)
		}
		stmts = append(stmts, string(b))
	}
	stmts = append(stmts,
		`INSERT INTO schema_migrations VALUES (1, 0), (2, 0)`,
		fmt.Sprintf(`INSERT INTO organizations VALUES ('org_1', 'Old', 1, 0, 1, 60000000000, 60000000000,
			'1', '2', '0', '0', %d, %d)`, base.UnixMicro(), base.UnixMicro()),
		fmt.Sprintf(`INSERT INTO journals VALUES ('jnl_1', 'org_1', 'deposit_credit', 'dep_1', '', %d)`, base.UnixMicro()),
	)
	for _, q := range stmts {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		org, err := tx.GetOrganization(ctx, "org_1")
		if err != nil {
			return err
		}
		if len(org.MethodFees.Deposit) != 0 || len(org.MethodFees.Withdraw) != 0 || org.Name != "Old" {
			t.Errorf("migrated organization: %+v", org)
		}
		js, err := tx.ListJournals(ctx, "org_1")
		if err != nil {
			return err
		}
		if len(js) != 1 || js[0].Actor != "" {
			t.Errorf("migrated journals: %+v", js)
		}
		return nil
	})
	createWithdrawals(t, s, newWithdrawal("wdr_1", "org_1", "m1"))
}
