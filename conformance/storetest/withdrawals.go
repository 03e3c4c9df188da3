package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/shopspring/decimal"
)

func getWithdrawal(t *testing.T, s Store, orgID, id string) *engine.Withdrawal {
	t.Helper()
	return get(t, s, func(ctx context.Context, tx engine.Tx) (*engine.Withdrawal, error) {
		return tx.GetWithdrawal(ctx, orgID, id)
	})
}

func testWithdrawalRoundTrip(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1", "org_2")
	// Metadata is kept byte for byte: spacing, key order, escapes.
	metadata := []byte(`{"z": 1, "a" :"☃ \u00e9",  "n":1.50}`)
	leased := &engine.Withdrawal{
		ID: "wdr_1", OrganizationID: "org_1", MerchantID: "order-1 ☕",
		Amount: dec("1234.50"), Commission: dec("12.35"),
		PaymentMethod: "bank", Account: "1234567890123", Metadata: metadata,
		Status: engine.WithdrawalProcessing, PayoutStep: engine.PayoutSent, ProviderReference: "PAYOUT-77",
		FailureReason: "timeout on try 2", Tries: 3,
		NextRunAt: base.Add(time.Minute), LeaseOwner: "worker-1", LeasedUntil: base.Add(90 * time.Second),
		CreatedAt: base, UpdatedAt: base.Add(time.Microsecond),
	}
	// Never leased, no next run, nothing optional: the zero values.
	bare := &engine.Withdrawal{
		ID: "wdr_2", OrganizationID: "org_1", MerchantID: "order-2",
		Amount: dec("0.01"), Commission: decimal.Decimal{},
		PaymentMethod: "nagad", Account: "01811111111", Status: engine.WithdrawalSucceeded,
		CreatedAt: base, UpdatedAt: base,
	}
	create(t, s, engine.Tx.CreateWithdrawal, leased, bare)
	for _, want := range []*engine.Withdrawal{leased, bare} {
		assertEqual(t, getWithdrawal(t, s, "org_1", want.ID), want)
	}
	got := getWithdrawal(t, s, "org_1", "wdr_1")
	if !bytes.Equal(got.Metadata, metadata) {
		t.Errorf("metadata = %q, want %q", got.Metadata, metadata)
	}
	if !got.Amount.Equal(dec("1234.5")) || !got.Commission.Equal(dec("12.35")) {
		t.Errorf("amount %s, commission %s", got.Amount, got.Commission)
	}
	got = getWithdrawal(t, s, "org_1", "wdr_2")
	if !got.NextRunAt.IsZero() || !got.LeasedUntil.IsZero() || len(got.Metadata) != 0 {
		t.Errorf("bare withdrawal read back with next run %v, lease until %v, metadata %q",
			got.NextRunAt, got.LeasedUntil, got.Metadata)
	}

	wantAllNotFound(t, s, calls{
		"GetWithdrawal/other org": func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.GetWithdrawal(ctx, "org_2", "wdr_1")
			return err
		},
		"GetWithdrawal": func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.GetWithdrawal(ctx, "org_1", "wdr_x")
			return err
		},
		"GetWithdrawal/no org": func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.GetWithdrawal(ctx, "", "wdr_1")
			return err
		},
	}, calls{
		"UpdateWithdrawal": func(ctx context.Context, tx engine.Tx) error {
			return tx.UpdateWithdrawal(ctx, newWithdrawal("wdr_x", "org_1", "x"))
		},
		"LockWithdrawal": func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.LockWithdrawal(ctx, "org_1", "wdr_x")
			return err
		},
		"LockWithdrawal/other org": func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.LockWithdrawal(ctx, "org_2", "wdr_1")
			return err
		},
		"LockWithdrawal/no org": func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.LockWithdrawal(ctx, "", "wdr_1")
			return err
		},
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
			changed.OrganizationID, changed.MerchantID, changed.Amount = "org_2", "other", dec("1")
			changed.Account, changed.Metadata, changed.CreatedAt = "x", []byte("[]"), base.Add(time.Hour)
			if err := tx.UpdateWithdrawal(ctx, &changed); err != nil {
				return err
			}
		}
		return nil
	})
	for _, want := range []*engine.Withdrawal{leased, bare} {
		assertEqual(t, getWithdrawal(t, s, "org_1", want.ID), want)
		wantLocked(t, s, want, func(ctx context.Context, tx engine.Tx) (*engine.Withdrawal, error) {
			return tx.LockWithdrawal(ctx, "org_1", want.ID)
		})
	}
}

func testWithdrawalDuplicateMerchantID(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1", "org_2")
	create(t, s, engine.Tx.CreateWithdrawal, newWithdrawal("wdr_1", "org_1", "m1"))
	for name, w := range map[string]*engine.Withdrawal{
		"same merchant_id": newWithdrawal("wdr_2", "org_1", "m1"),
		"same id":          newWithdrawal("wdr_1", "org_2", "m9"),
	} {
		wantDuplicate(t, name, try(s, engine.Tx.CreateWithdrawal, w))
	}
	// The same merchant_id in another organization is another withdrawal.
	create(t, s, engine.Tx.CreateWithdrawal, newWithdrawal("wdr_3", "org_2", "m1"), newWithdrawal("wdr_4", "org_1", "m2"))
	if w := getWithdrawal(t, s, "org_2", "wdr_3"); w.MerchantID != "m1" {
		t.Errorf("wdr_3 has merchant_id %s", w.MerchantID)
	}
	// The organization must exist.
	wantInternal(t, "withdrawal of an unknown organization",
		try(s, engine.Tx.CreateWithdrawal, newWithdrawal("wdr_5", "org_x", "m1")))
}

// testPipeline (engine.Pipeliner, for a store that has it): inserts made in
// a Pipeline or a PipelineCommit are seen by the statements after them and
// committed with the transaction; a duplicate among them, or an update of
// a row that does not exist, fails it (or a statement after it, or the
// commit) with ErrDuplicate or ErrNotFound, however late it is learnt,
// and the transaction then leaves nothing.
func testPipeline(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1")
	create(t, s, engine.Tx.CreateWithdrawal, newWithdrawal("wdr_0", "org_1", "m0"))
	methods := map[string]func(p engine.Pipeliner) func(context.Context, func(engine.Tx) error) error{
		"Pipeline":       func(p engine.Pipeliner) func(context.Context, func(engine.Tx) error) error { return p.Pipeline },
		"PipelineCommit": func(p engine.Pipeliner) func(context.Context, func(engine.Tx) error) error { return p.PipelineCommit },
	}
	n := 0
	for name, method := range methods {
		t.Run(name, func(t *testing.T) {
			n++
			id := func(prefix string, i int) string { return fmt.Sprintf("%s_%d_%d", prefix, n, i) }
			pipeline := func(fn func(ctx context.Context, tx engine.Tx) error) error {
				return s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
					p, ok := tx.(engine.Pipeliner)
					if !ok {
						return errSkip
					}
					return method(p)(ctx, func(tx engine.Tx) error { return fn(ctx, tx) })
				})
			}
			w1, w2 := newWithdrawal(id("wdr", 1), "org_1", id("m", 1)), newWithdrawal(id("wdr", 2), "org_1", id("m", 2))
			err := pipeline(func(ctx context.Context, tx engine.Tx) error {
				for _, w := range []*engine.Withdrawal{w1, w2} {
					if err := tx.CreateWithdrawal(ctx, w); err != nil {
						return err
					}
					if err := tx.CreateEvent(ctx, newEvent("evt_"+w.ID, "org_1")); err != nil {
						return err
					}
				}
				got, err := tx.GetWithdrawal(ctx, "org_1", w2.ID)
				if err != nil {
					return err
				}
				assertEqual(t, got, w2)
				return nil
			})
			if errors.Is(err, errSkip) {
				t.Skip("the store's Tx is no engine.Pipeliner")
			}
			if err != nil {
				t.Fatal(err)
			}
			assertEqual(t, getWithdrawal(t, s, "org_1", w1.ID), w1)
			// Without a statement after them: the queued inserts alone.
			w3 := newWithdrawal(id("wdr", 3), "org_1", id("m", 3))
			if err := pipeline(func(ctx context.Context, tx engine.Tx) error { return tx.CreateWithdrawal(ctx, w3) }); err != nil {
				t.Fatal(err)
			}
			assertEqual(t, getWithdrawal(t, s, "org_1", w3.ID), w3)

			missing := newDeposit("dep_missing", "org_1", "missing")
			for name, last := range map[string]func(ctx context.Context, tx engine.Tx) error{
				"merchant_id taken before": func(ctx context.Context, tx engine.Tx) error {
					return tx.CreateWithdrawal(ctx, newWithdrawal(id("wdr", 5), "org_1", "m0"))
				},
				"id taken before": func(ctx context.Context, tx engine.Tx) error {
					return tx.CreateWithdrawal(ctx, newWithdrawal("wdr_0", "org_1", id("m", 6)))
				},
				"a deposit that does not exist": func(ctx context.Context, tx engine.Tx) error {
					return tx.UpdateDeposit(ctx, missing)
				},
			} {
				err := pipeline(func(ctx context.Context, tx engine.Tx) error {
					if err := tx.CreateWithdrawal(ctx, newWithdrawal(id("wdr", 4), "org_1", id("m", 4))); err != nil {
						return err
					}
					if err := last(ctx, tx); err != nil {
						return err
					}
					return tx.CreateEvent(ctx, newEvent(id("evt", 4), "org_1"))
				})
				if name == "a deposit that does not exist" {
					if !errors.Is(err, engine.ErrNotFound) {
						t.Errorf("%s: err = %v, want ErrNotFound", name, err)
					}
				} else {
					wantDuplicate(t, name, err)
				}
				wantAllNotFound(t, s, calls{
					"the pipeline's other insert": func(ctx context.Context, tx engine.Tx) error {
						_, err := tx.GetWithdrawal(ctx, "org_1", id("wdr", 4))
						return err
					},
					"the pipeline's event": func(ctx context.Context, tx engine.Tx) error {
						_, err := tx.GetEvent(ctx, id("evt", 4))
						return err
					},
				}, nil)
			}
		})
	}
}

// testWithdrawalLeasedUpdate: a payout step is written only while its
// worker holds the lease it claimed. A worker whose lease ran out and was
// taken over, a step recorded twice, a lease of another withdrawal or a
// withdrawal already finished all get ErrLeaseLost and change nothing;
// in a Pipeline the lost lease fails the transaction, so nothing queued
// with it is kept.
func testWithdrawalLeasedUpdate(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1")
	until := base.Add(time.Minute)
	leased := func(id, merchantID, owner string) *engine.Withdrawal {
		w := newWithdrawal(id, "org_1", merchantID)
		w.LeaseOwner, w.LeasedUntil = owner, until
		return w
	}
	w1, finished := leased("wdr_1", "m1", "worker-1"), leased("wdr_2", "m2", "worker-1")
	finished.Status, finished.PayoutStep = engine.WithdrawalSucceeded, engine.PayoutSettled
	create(t, s, engine.Tx.CreateWithdrawal, w1, finished, leased("wdr_3", "m3", "worker-2"))

	step := func(w *engine.Withdrawal) *engine.Withdrawal {
		next := *w
		next.PayoutStep, next.ProviderReference, next.Tries = engine.PayoutSent, "PAYOUT-1", w.Tries+1
		next.NextRunAt, next.LeaseOwner, next.LeasedUntil = base.Add(5*time.Second), "", time.Time{}
		next.UpdatedAt = base.Add(time.Second)
		return &next
	}
	update := func(w *engine.Withdrawal, owner string, until time.Time) error {
		return s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
			return tx.UpdateLeasedWithdrawal(ctx, w, owner, until)
		})
	}
	unknown := step(w1)
	unknown.ID = "wdr_x"
	for name, err := range map[string]error{
		"another worker":                   update(step(w1), "worker-2", until),
		"the lease's end a microsecond on": update(step(w1), "worker-1", until.Add(time.Microsecond)),
		"no lease":                         update(step(w1), "", time.Time{}),
		"another withdrawal's lease":       update(step(leased("wdr_3", "m3", "worker-1")), "worker-1", until),
		"a finished withdrawal":            update(step(finished), "worker-1", until),
		"an unknown withdrawal":            update(unknown, "worker-1", until),
	} {
		if !errors.Is(err, engine.ErrLeaseLost) {
			t.Errorf("%s: err = %v, want ErrLeaseLost", name, err)
		}
	}
	assertEqual(t, getWithdrawal(t, s, "org_1", "wdr_1"), w1)
	assertEqual(t, getWithdrawal(t, s, "org_1", "wdr_2"), finished)

	// The holder writes every payout field, and the lease with them.
	next := step(w1)
	if err := update(next, "worker-1", until); err != nil {
		t.Fatal(err)
	}
	assertEqual(t, getWithdrawal(t, s, "org_1", "wdr_1"), next)
	// The same step again: the lease went with the first.
	if err := update(next, "worker-1", until); !errors.Is(err, engine.ErrLeaseLost) {
		t.Errorf("the step written twice: err = %v, want ErrLeaseLost", err)
	}

	// In a Pipeline or PipelineCommit, queued with an insert: the
	// transaction keeps nothing.
	for _, commit := range []bool{false, true} {
		err := s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
			p, ok := tx.(engine.Pipeliner)
			if !ok {
				return errSkip
			}
			pipeline := p.Pipeline
			if commit {
				pipeline = p.PipelineCommit
			}
			return pipeline(ctx, func(tx engine.Tx) error {
				if err := tx.CreateEvent(ctx, newEvent("evt_1", "org_1")); err != nil {
					return err
				}
				return tx.UpdateLeasedWithdrawal(ctx, step(next), "worker-1", until)
			})
		})
		if errors.Is(err, errSkip) {
			return
		}
		if !errors.Is(err, engine.ErrLeaseLost) {
			t.Errorf("in a pipeline (at commit: %v): err = %v, want ErrLeaseLost", commit, err)
		}
		wantAllNotFound(t, s, calls{
			"the pipeline's insert": func(ctx context.Context, tx engine.Tx) error {
				_, err := tx.GetEvent(ctx, "evt_1")
				return err
			},
		}, nil)
		assertEqual(t, getWithdrawal(t, s, "org_1", "wdr_1"), next)
	}
}
