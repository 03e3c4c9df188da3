package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
)

// Refunds (migration 0022): the rows, their claim, their lists and the
// deposit's refund totals.

func newRefund(id, orgID, depositID, merchantID string) *engine.Refund {
	return &engine.Refund{
		ID: id, OrganizationID: orgID, DepositID: depositID, MerchantID: merchantID,
		Amount: dec("100"), Metadata: []byte("{}"), Status: engine.RefundProcessing, Step: engine.PayoutToSend,
		NextRunAt: base, CreatedAt: base, UpdatedAt: base,
	}
}

func getRefund(t *testing.T, s Store, orgID, id string) *engine.Refund {
	t.Helper()
	return get(t, s, func(ctx context.Context, tx engine.Tx) (*engine.Refund, error) {
		return tx.GetRefund(ctx, orgID, id)
	})
}

func refundLease(r *engine.Refund) lease { return lease{r.ID, r.LeaseOwner, r.LeasedUntil} }

func claimRefunds(ctx context.Context, tx engine.Tx, p engine.ClaimParams) ([]*engine.Refund, error) {
	return tx.ClaimDueRefunds(ctx, p)
}

func testRefundRoundTrip(t *testing.T, s Store) {
	mustDeposits(t, s, "org_1", "a")
	mustOrgs(t, s, "org_2")
	metadata := []byte(`{"z": 1, "a" :"☃",  "n":1.50}`)
	full := &engine.Refund{
		ID: "rf_1", OrganizationID: "org_1", DepositID: "dep_a", MerchantID: "refund-1 ☕",
		Amount: dec("250.05"), AmountOmitted: true, Reason: "the payer sent it back", Metadata: metadata,
		Status: engine.RefundFailed, FailureCode: engine.RefundFailureDeclined, FailureReason: "closed wallet",
		DepositH2H: true, Step: engine.PayoutSent, ProviderReference: "RF-77", Tries: 3,
		NextRunAt: base.Add(time.Minute), LeaseOwner: "worker-1", LeasedUntil: base.Add(90 * time.Second),
		CreatedAt: base, UpdatedAt: base.Add(time.Microsecond),
	}
	bare := newRefund("rf_2", "org_1", "dep_a", "refund-2")
	bare.NextRunAt = time.Time{}
	create(t, s, engine.Tx.CreateRefund, full, bare)
	for _, want := range []*engine.Refund{full, bare} {
		assertEqual(t, getRefund(t, s, "org_1", want.ID), want)
	}
	if got := getRefund(t, s, "org_1", "rf_1"); !bytes.Equal(got.Metadata, metadata) {
		t.Errorf("metadata = %q, want %q", got.Metadata, metadata)
	}
	byMerchant := get(t, s, func(ctx context.Context, tx engine.Tx) (*engine.Refund, error) {
		return tx.GetRefundByMerchantID(ctx, "org_1", "refund-1 ☕")
	})
	assertEqual(t, byMerchant, full)

	// The merchant_id is the organization's: another organization may use
	// it, the same one may not, even for another deposit.
	mustDepositsIn(t, s, "org_2", "b")
	create(t, s, engine.Tx.CreateRefund, newRefund("rf_3", "org_2", "dep_b", "refund-2"))
	wantDuplicate(t, "same merchant_id", try(s, engine.Tx.CreateRefund, newRefund("rf_4", "org_1", "dep_a", "refund-2")))
	wantDuplicate(t, "same ID", try(s, engine.Tx.CreateRefund, newRefund("rf_1", "org_1", "dep_a", "refund-5")))

	step := *bare
	step.Status, step.Step, step.ProviderReference, step.Tries = engine.RefundSucceeded, engine.PayoutSettled, "RF-1", 2
	step.UpdatedAt = base.Add(time.Second)
	write(t, s, func(ctx context.Context, tx engine.Tx) error { return tx.UpdateRefund(ctx, &step) })
	assertEqual(t, getRefund(t, s, "org_1", "rf_2"), &step)

	wantAllNotFound(t, s, calls{
		"GetRefund/other org": func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.GetRefund(ctx, "org_2", "rf_1")
			return err
		},
		"GetRefund": func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.GetRefund(ctx, "org_1", "rf_x")
			return err
		},
		"GetRefundByMerchantID/other org": func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.GetRefundByMerchantID(ctx, "org_2", "refund-1 ☕")
			return err
		},
	}, calls{
		"UpdateRefund": func(ctx context.Context, tx engine.Tx) error {
			return tx.UpdateRefund(ctx, newRefund("rf_x", "org_1", "dep_a", "x"))
		},
		"UpdateDepositRefunds": func(ctx context.Context, tx engine.Tx) error {
			return tx.UpdateDepositRefunds(ctx, newDeposit("dep_x", "org_1", "x"))
		},
	})
}

// mustDepositsIn creates deposits dep_<name> of an existing organization.
func mustDepositsIn(t *testing.T, s Store, orgID string, names ...string) {
	t.Helper()
	ds := make([]*engine.Deposit, len(names))
	for i, n := range names {
		ds[i] = newDeposit("dep_"+n, orgID, "m_"+n)
	}
	create(t, s, engine.Tx.CreateDeposit, ds...)
}

// testDepositRefundTotals: a deposit's refund totals start at zero, are
// written by UpdateDepositRefunds with its status and verification state,
// and are left alone by UpdateDeposit.
func testDepositRefundTotals(t *testing.T, s Store) {
	mustDeposits(t, s, "org_1", "a")
	d := get(t, s, func(ctx context.Context, tx engine.Tx) (*engine.Deposit, error) {
		return tx.GetDeposit(ctx, "org_1", "dep_a")
	})
	if !d.RefundedAmount.IsZero() || !d.RefundReserved.IsZero() {
		t.Fatalf("new deposit: refunded %s, reserved %s, want 0 and 0", d.RefundedAmount, d.RefundReserved)
	}
	d.RefundedAmount, d.RefundReserved = dec("499.99"), dec("500")
	d.Status, d.VerificationState, d.UpdatedAt = engine.StatusRefunded, engine.StatusRefunded, base.Add(time.Second)
	d.AttemptsUsed = 2 // not a refund's to write
	write(t, s, func(ctx context.Context, tx engine.Tx) error { return tx.UpdateDepositRefunds(ctx, d) })
	got := get(t, s, func(ctx context.Context, tx engine.Tx) (*engine.Deposit, error) { return tx.LockDeposit(ctx, "dep_a") })
	want := *d
	want.AttemptsUsed = 0
	assertEqual(t, got, &want)

	other := *got
	other.RefundedAmount, other.RefundReserved, other.AttemptsUsed = dec("1"), dec("2"), 1
	write(t, s, func(ctx context.Context, tx engine.Tx) error { return tx.UpdateDeposit(ctx, &other) })
	got = get(t, s, func(ctx context.Context, tx engine.Tx) (*engine.Deposit, error) {
		return tx.GetDeposit(ctx, "org_1", "dep_a")
	})
	if !got.RefundedAmount.Equal(dec("499.99")) || !got.RefundReserved.Equal(dec("500")) || got.AttemptsUsed != 1 {
		t.Errorf("after UpdateDeposit: refunded %s, reserved %s, attempts %d; want 499.99, 500, 1",
			got.RefundedAmount, got.RefundReserved, got.AttemptsUsed)
	}
}

func testRefundLeasedUpdate(t *testing.T, s Store) {
	mustDeposits(t, s, "org_1", "a")
	until := base.Add(time.Minute)
	leased := func(id, merchantID, owner string) *engine.Refund {
		r := newRefund(id, "org_1", "dep_a", merchantID)
		r.LeaseOwner, r.LeasedUntil = owner, until
		return r
	}
	r1, finished := leased("rf_1", "m1", "worker-1"), leased("rf_2", "m2", "worker-1")
	finished.Status, finished.Step = engine.RefundSucceeded, engine.PayoutSettled
	create(t, s, engine.Tx.CreateRefund, r1, finished, leased("rf_3", "m3", "worker-2"))
	step := func(r *engine.Refund) *engine.Refund {
		next := *r
		next.Step, next.ProviderReference, next.Tries = engine.PayoutSent, "RF-1", r.Tries+1
		next.NextRunAt, next.LeaseOwner, next.LeasedUntil = base.Add(5*time.Second), "", time.Time{}
		next.UpdatedAt = base.Add(time.Second)
		return &next
	}
	update := func(r *engine.Refund, owner string, until time.Time) error {
		return s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
			return tx.UpdateLeasedRefund(ctx, r, owner, until)
		})
	}
	for name, err := range map[string]error{
		"another worker":                   update(step(r1), "worker-2", until),
		"the lease's end a microsecond on": update(step(r1), "worker-1", until.Add(time.Microsecond)),
		"no lease":                         update(step(r1), "", time.Time{}),
		"another refund's lease":           update(step(leased("rf_3", "m3", "worker-1")), "worker-1", until),
		"a finished refund":                update(step(finished), "worker-1", until),
	} {
		if !errors.Is(err, engine.ErrLeaseLost) {
			t.Errorf("%s: err = %v, want ErrLeaseLost", name, err)
		}
	}
	assertEqual(t, getRefund(t, s, "org_1", "rf_1"), r1)
	if err := update(step(r1), "worker-1", until); err != nil {
		t.Fatalf("the lease's holder: %v", err)
	}
	assertEqual(t, getRefund(t, s, "org_1", "rf_1"), step(r1))
}

var refundQueue = queue[*engine.Refund]{
	claim:   claimRefunds,
	leaseOf: refundLease,
	seed: func(t *testing.T, s Store, rows []queueRow) {
		t.Helper()
		mustDeposits(t, s, "org_1", "q1")
		mustOrgs(t, s, "org_2")
		mustDepositsIn(t, s, "org_2", "q2")
		seed(t, s, engine.Tx.CreateRefund, rows, func(r queueRow) *engine.Refund {
			dep := "dep_q1"
			if r.org() == "org_2" {
				dep = "dep_q2"
			}
			x := newRefund("rf_"+r.name, r.org(), dep, "m_"+r.name)
			x.Status = r.pick(engine.RefundProcessing, engine.RefundProcessing, engine.RefundSucceeded, engine.RefundFailed)
			x.NextRunAt, x.LeaseOwner, x.LeasedUntil = r.next, r.owner(), r.leasedUntil
			return x
		})
	},
	lease: func(ctx context.Context, tx engine.Tx, r queueRow) (lease, error) {
		x, err := tx.GetRefund(ctx, r.org(), "rf_"+r.name)
		return leaseOrZero(x, err, refundLease)
	},
	settle: func(ctx context.Context, tx engine.Tx, r queueRow) error {
		x, err := tx.GetRefund(ctx, r.org(), "rf_"+r.name)
		if err != nil {
			return err
		}
		x.Status, x.Step, x.LeaseOwner, x.LeasedUntil = engine.RefundSucceeded, engine.PayoutSettled, "", time.Time{}
		return tx.UpdateRefund(ctx, x)
	},
}

func refundCursor(r *engine.Refund) engine.PageCursor {
	return engine.PageCursor{CreatedAt: r.CreatedAt, ID: r.ID}
}

func testListRefundsPage(t *testing.T, s Store) {
	mustDeposits(t, s, "org_1", "a", "b")
	mustOrgs(t, s, "org_2")
	mustDepositsIn(t, s, "org_2", "c")
	var rs []*engine.Refund
	for i := range 9 {
		r := newRefund(fmt.Sprintf("rf_%02d", i), "org_1", []string{"dep_a", "dep_b"}[i%2], fmt.Sprintf("m_%02d", i))
		r.CreatedAt = base.Add(time.Duration(i/2) * time.Second)
		rs = append(rs, r)
		o := newRefund(fmt.Sprintf("rf_%02dx", i), "org_2", "dep_c", r.MerchantID)
		o.CreatedAt = r.CreatedAt
		rs = append(rs, o)
	}
	create(t, s, engine.Tx.CreateRefund, rs...)
	list := pager[*engine.Refund](engine.Tx.ListRefundsPage)
	for _, c := range []struct {
		name  string
		p     engine.PageParams
		match func(r *engine.Refund) bool
	}{
		{"all", engine.PageParams{}, func(*engine.Refund) bool { return true }},
		{"deposit", engine.PageParams{DepositID: "dep_b"}, func(r *engine.Refund) bool { return r.DepositID == "dep_b" }},
		{"other organization's deposit", engine.PageParams{DepositID: "dep_c"}, func(r *engine.Refund) bool { return false }},
		{"created", engine.PageParams{CreatedLT: base.Add(2 * time.Second)}, func(r *engine.Refund) bool { return r.CreatedAt.Before(base.Add(2 * time.Second)) }},
	} {
		want := newestFirst(rs, refundCursor, func(r *engine.Refund) bool { return r.OrganizationID == "org_1" && c.match(r) })
		p := c.p
		p.OrganizationID = "org_1"
		for _, limit := range []int{1, 4, 100} {
			p.Limit = limit
			for _, backward := range []bool{false, true} {
				if got := walk(t, s, list, refundCursor, p, backward); !slices.Equal(got, want) {
					t.Errorf("%s, limit %d, backward %v = %v, want %v", c.name, limit, backward, got, want)
				}
			}
		}
	}
}

func testConcurrentSameRefundMerchantID(t *testing.T, s Store) {
	mustDeposits(t, s, "org_1", "a", "b")
	raceForOne(t, s, 50, func(ctx context.Context, tx engine.Tx, i int) error {
		return tx.CreateRefund(ctx, newRefund(fmt.Sprintf("rf_%03d", i), "org_1", []string{"dep_a", "dep_b"}[i%2], "same"))
	})
}

func testConcurrentRefundClaims(t *testing.T, s Store) {
	mustDeposits(t, s, "org_1", "a")
	ids := seqIDs("rf_", 200)
	rs := make([]*engine.Refund, len(ids))
	for i := range ids {
		rs[i] = newRefund(ids[i], "org_1", "dep_a", fmt.Sprintf("m%03d", i))
		rs[i].NextRunAt = dueAt(i)
	}
	create(t, s, engine.Tx.CreateRefund, rs...)
	claimConcurrently(t, s, claimRefunds, refundLease, func(ctx context.Context, tx engine.Tx, id string) (lease, error) {
		r, err := tx.GetRefund(ctx, "org_1", id)
		return leaseOrZero(r, err, refundLease)
	}, ids, 5, nil)
}

// testReleaseRefundLeases: ReleaseLeases hands back an owner's leases on
// processing refunds, and no one else's.
func testReleaseRefundLeases(t *testing.T, s Store) {
	mustDeposits(t, s, "org_1", "a")
	create(t, s, engine.Tx.CreateRefund,
		newRefund("rf_1", "org_1", "dep_a", "r1"), newRefund("rf_2", "org_1", "dep_a", "r2"), newRefund("rf_3", "org_1", "dep_a", "r3"))
	now := base.Add(time.Second)
	claim := func(owner string, limit int) string {
		return claimIDs(t, s, claimRefunds, refundLease, engine.ClaimParams{Now: now, Owner: owner, LeasedUntil: now.Add(time.Hour), Limit: limit})
	}
	if got := claim("w1", 2); got != "1,2" {
		t.Fatalf("w1 claimed %s", got)
	}
	if got := claim("w2", 10); got != "3" {
		t.Fatalf("w2 claimed %s", got)
	}
	write(t, s, func(ctx context.Context, tx engine.Tx) error { return tx.ReleaseLeases(ctx, "w1") })
	if got := claim("w3", 10); got != "1,2" {
		t.Fatalf("after w1 released: w3 claimed %s, want 1,2", got)
	}
}
