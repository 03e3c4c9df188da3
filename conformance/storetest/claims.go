package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
)

// Attempts, payouts and deliveries are leased work: a claim takes the rows
// that are due and not leased, earliest due first, and leases them.

// lease is what a claim sets on a row.
type lease struct {
	id, owner string
	until     time.Time
}

func attemptLease(a *engine.Attempt) lease   { return lease{a.ID, a.LeaseOwner, a.LeasedUntil} }
func payoutLease(w *engine.Withdrawal) lease { return lease{w.ID, w.LeaseOwner, w.LeasedUntil} }
func deliveryLease(d *engine.Delivery) lease { return lease{d.ID, d.LeaseOwner, d.LeasedUntil} }
func leaseOrZero[T any](r T, err error, of func(T) lease) (lease, error) {
	if err != nil {
		return lease{}, err
	}
	return of(r), nil
}

// claimer claims rows of one kind.
type claimer[T any] func(ctx context.Context, tx engine.Tx, p engine.ClaimParams) ([]T, error)

func claimAttempts(ctx context.Context, tx engine.Tx, p engine.ClaimParams) ([]*engine.Attempt, error) {
	return tx.ClaimDueAttempts(ctx, p)
}

func claimPayouts(ctx context.Context, tx engine.Tx, p engine.ClaimParams) ([]*engine.Withdrawal, error) {
	return tx.ClaimDuePayouts(ctx, p)
}

// claimDeliveries claims with a cap per endpoint and endpoints to skip.
func claimDeliveries(perEndpoint int, exclude []string) claimer[*engine.Delivery] {
	return func(ctx context.Context, tx engine.Tx, p engine.ClaimParams) ([]*engine.Delivery, error) {
		return tx.ClaimDueDeliveries(ctx, engine.ClaimDeliveriesParams{ClaimParams: p, PerEndpoint: perEndpoint, ExcludeEndpoints: exclude})
	}
}

func claimDeliveriesFast(perEndpoint int, fast []string, fastPerEndpoint int) claimer[*engine.Delivery] {
	return func(ctx context.Context, tx engine.Tx, p engine.ClaimParams) ([]*engine.Delivery, error) {
		return tx.ClaimDueDeliveries(ctx, engine.ClaimDeliveriesParams{
			ClaimParams: p, PerEndpoint: perEndpoint, FastEndpoints: fast, FastPerEndpoint: fastPerEndpoint,
		})
	}
}

// claimIDs runs claim in a transaction of its own, checks that every row it
// returns carries p's lease, and returns their IDs without prefix.
func claimIDs[T any](t *testing.T, s Store, claim claimer[T], leaseOf func(T) lease, p engine.ClaimParams) string {
	t.Helper()
	var got []T
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		var err error
		got, err = claim(ctx, tx, p)
		return err
	})
	for _, r := range got {
		if l := leaseOf(r); l.owner != p.Owner || !l.until.Equal(p.LeasedUntil) {
			t.Errorf("claimed %s returned with lease %q until %v, want %q until %v", l.id, l.owner, l.until, p.Owner, p.LeasedUntil)
		}
	}
	return joinIDs(got, func(r T) string { return leaseOf(r).id })
}

// drain claims at now: 3 rows for w1, which must be first, then up to 10
// for w2, which must be second, then nothing more, nor with a limit of 0 or
// less. It returns when the leases it gave run out.
func drain(t *testing.T, now time.Time, claim func(engine.ClaimParams) string, first, second string) time.Time {
	t.Helper()
	lease := now.Add(time.Minute)
	p := engine.ClaimParams{Now: now, Owner: "w1", LeasedUntil: lease, Limit: 3}
	if got := claim(p); got != first {
		t.Errorf("first claim = %s, want %s", got, first)
	}
	p.Owner, p.Limit = "w2", 10
	if got := claim(p); got != second {
		t.Errorf("second claim = %s, want %s", got, second)
	}
	if got := claim(p); got != "" {
		t.Errorf("claim of a drained queue = %s, want nothing", got)
	}
	for _, limit := range []int{0, -1} {
		p.Limit = limit
		if got := claim(p); got != "" {
			t.Errorf("claim with Limit %d = %s, want nothing", limit, got)
		}
	}
	return lease
}

// queueRow is a row of a queue that testClaimQueue seeds.
type queueRow struct {
	name string
	// open rows are claimable once due and not leased; the others are
	// resolved and never are. alt picks the kind's other variant: a delayed
	// rather than a processing attempt and a payout of org_2 rather than
	// org_1; failed rather than succeeded.
	open, alt   bool
	next        time.Time
	leasedUntil time.Time // zero: never leased; else leased by "old"
}

// pick returns the status of r among the four variants.
func (r queueRow) pick(open, openAlt, closed, closedAlt string) string {
	switch {
	case r.open && !r.alt:
		return open
	case r.open:
		return openAlt
	case !r.alt:
		return closed
	}
	return closedAlt
}

// queue is attempts or payouts, which share one claim contract.
type queue[T any] struct {
	claim   claimer[T]
	leaseOf func(T) lease
	seed    func(t *testing.T, s Store, rows []queueRow)
	// lease reads back the lease of a row.
	lease func(ctx context.Context, tx engine.Tx, r queueRow) (lease, error)
	// settle resolves a row, taking it out of the queue.
	settle func(ctx context.Context, tx engine.Tx, r queueRow) error
}

var attemptQueue = queue[*engine.Attempt]{
	claim:   claimAttempts,
	leaseOf: attemptLease,
	seed: func(t *testing.T, s Store, rows []queueRow) {
		t.Helper()
		mustDeposits(t, s, "org_1", "1")
		seed(t, s, engine.Tx.CreateAttempt, rows, func(r queueRow) *engine.Attempt {
			a := newAttempt("att_"+r.name, "dep_1", "org_1", engine.ChannelBkash, "TRX_"+r.name)
			a.Status = r.pick(engine.AttemptProcessing, engine.AttemptDelayed, engine.AttemptSucceeded, engine.AttemptFailed)
			a.NextRunAt, a.LeaseOwner, a.LeasedUntil = r.next, r.owner(), r.leasedUntil
			return a
		})
	},
	lease: func(ctx context.Context, tx engine.Tx, r queueRow) (lease, error) {
		a, err := tx.GetAttempt(ctx, "att_"+r.name)
		return leaseOrZero(a, err, attemptLease)
	},
	settle: func(ctx context.Context, tx engine.Tx, r queueRow) error {
		a, err := tx.GetAttempt(ctx, "att_"+r.name)
		if err != nil {
			return err
		}
		a.Status, a.LeaseOwner, a.LeasedUntil = engine.AttemptSucceeded, "", time.Time{}
		return tx.UpdateAttempt(ctx, a)
	},
}

// owner is the lease owner of r: "old" if it is leased.
func (r queueRow) owner() string {
	if r.leasedUntil.IsZero() {
		return ""
	}
	return "old"
}

// seed inserts a row made by row of each of rows.
func seed[T any](t *testing.T, s Store, insert func(engine.Tx, context.Context, T) error, rows []queueRow, row func(queueRow) T) {
	t.Helper()
	out := make([]T, len(rows))
	for i, r := range rows {
		out[i] = row(r)
	}
	create(t, s, insert, out...)
}

func (r queueRow) org() string {
	if r.alt {
		return "org_2"
	}
	return "org_1"
}

var payoutQueue = queue[*engine.Withdrawal]{
	claim:   claimPayouts,
	leaseOf: payoutLease,
	seed: func(t *testing.T, s Store, rows []queueRow) {
		t.Helper()
		mustOrgs(t, s, "org_1", "org_2")
		seed(t, s, engine.Tx.CreateWithdrawal, rows, func(r queueRow) *engine.Withdrawal {
			w := newWithdrawal("wdr_"+r.name, r.org(), "m_"+r.name)
			w.Status = r.pick(engine.WithdrawalProcessing, engine.WithdrawalProcessing, engine.WithdrawalSucceeded, engine.WithdrawalFailed)
			w.NextRunAt, w.LeaseOwner, w.LeasedUntil = r.next, r.owner(), r.leasedUntil
			return w
		})
	},
	lease: func(ctx context.Context, tx engine.Tx, r queueRow) (lease, error) {
		w, err := tx.GetWithdrawal(ctx, r.org(), "wdr_"+r.name)
		return leaseOrZero(w, err, payoutLease)
	},
	settle: func(ctx context.Context, tx engine.Tx, r queueRow) error {
		w, err := tx.GetWithdrawal(ctx, r.org(), "wdr_"+r.name)
		if err != nil {
			return err
		}
		w.Status, w.PayoutStep, w.LeaseOwner, w.LeasedUntil = engine.WithdrawalSucceeded, engine.PayoutSettled, "", time.Time{}
		return tx.UpdateWithdrawal(ctx, w)
	},
}

// testClaimQueue checks which rows a claim takes, in what order, and that
// leases run out and resolved rows leave the queue.
func testClaimQueue[T any](q queue[T]) func(t *testing.T, s Store) {
	return func(t *testing.T, s Store) {
		now := base.Add(time.Hour)
		rows := []queueRow{
			{"a", true, false, now.Add(-time.Minute), time.Time{}},
			{"b", true, true, now.Add(-2 * time.Minute), time.Time{}},
			{"c", true, false, now, time.Time{}},                               // due exactly now
			{"d", true, false, now.Add(-time.Minute), time.Time{}},             // ties with a: by ID
			{"e", true, false, now.Add(time.Microsecond), time.Time{}},         // not yet due
			{"f", true, false, now.Add(-time.Hour), now.Add(time.Microsecond)}, // leased
			{"g", true, true, now.Add(-3 * time.Minute), now},                  // lease ran out now
			{"h", false, false, now.Add(-time.Hour), time.Time{}},
			{"i", false, true, now.Add(-time.Hour), time.Time{}},
		}
		byName := map[string]queueRow{}
		for _, r := range rows {
			byName[r.name] = r
		}
		q.seed(t, s, rows)
		claim := func(p engine.ClaimParams) string {
			t.Helper()
			return claimIDs(t, s, q.claim, q.leaseOf, p)
		}

		lease := drain(t, now, claim, "g,b,a", "d,c")

		read(t, s, func(ctx context.Context, tx engine.Tx) error {
			for name, owner := range map[string]string{"a": "w1", "b": "w1", "d": "w2", "e": "", "f": "old", "h": ""} {
				l, err := q.lease(ctx, tx, byName[name])
				if err != nil {
					return err
				}
				if l.owner != owner {
					t.Errorf("%s leased by %q, want %q", l.id, l.owner, owner)
				}
			}
			return nil
		})

		// Once the leases run out, the same rows (and now e and f) are due
		// again; the resolved ones never are.
		p := engine.ClaimParams{Now: lease, Owner: "w3", LeasedUntil: lease.Add(time.Minute), Limit: 100}
		if got := claim(p); got != "f,g,b,a,d,c,e" {
			t.Errorf("claim after the leases ran out = %s, want f,g,b,a,d,c,e", got)
		}

		// A worker that resolves its row takes it out of the queue for good.
		write(t, s, func(ctx context.Context, tx engine.Tx) error { return q.settle(ctx, tx, byName["a"]) })
		p = engine.ClaimParams{Now: lease.Add(time.Hour), Owner: "w4", LeasedUntil: lease.Add(2 * time.Hour), Limit: 100}
		if got := claim(p); got != "f,g,b,d,c,e" {
			t.Errorf("claim after resolving a = %s, want f,g,b,d,c,e", got)
		}
	}
}

// claimConcurrently has 8 workers claim, limit rows at a time, until
// nothing is left, and checks that each of want was claimed exactly once
// and holds the lease of the worker that claimed it. check, if not nil,
// checks each worker's batches.
func claimConcurrently[T any](t *testing.T, s Store, claim claimer[T], leaseOf func(T) lease,
	leaseByID func(ctx context.Context, tx engine.Tx, id string) (lease, error),
	want []string, limit int, check func(worker int, got []T)) {
	t.Helper()
	now := base.Add(time.Minute)
	claimed := make([][]string, 8)
	var wg sync.WaitGroup
	for w := range claimed {
		wg.Go(func() {
			p := engine.ClaimParams{Now: now, Owner: fmt.Sprintf("w%d", w), LeasedUntil: now.Add(time.Hour), Limit: limit}
			for {
				var got []T
				err := s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
					var err error
					got, err = claim(ctx, tx, p)
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
				if check != nil {
					check(w, got)
				}
				for _, r := range got {
					claimed[w] = append(claimed[w], leaseOf(r).id)
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
	for _, id := range want {
		if count[id] != 1 {
			t.Errorf("%s claimed %d times, want once", id, count[id])
		}
	}
	if len(count) != len(want) {
		t.Errorf("%d rows claimed, want %d", len(count), len(want))
	}
	// Each worker's lease is what the store holds.
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		for w, ids := range claimed {
			for _, id := range ids {
				l, err := leaseByID(ctx, tx, id)
				if err != nil {
					return err
				}
				if want := fmt.Sprintf("w%d", w); l.owner != want {
					t.Errorf("%s leased by %s, want %s", id, l.owner, want)
				}
			}
		}
		return nil
	})
}
