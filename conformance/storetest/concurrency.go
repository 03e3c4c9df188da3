package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
)

// InTx may run fn more than once (a busy database, a serialization
// failure), so what fn reports is written afresh on every run and read
// only once InTx has returned.

// raceForOne runs n transactions at once that each insert a row under one
// unique key: exactly one commits and the others fail with ErrDuplicate.
// Only the constraint stands between two racing requests and two rows; a
// store whose transactions see a concurrent commit only as a constraint
// violation (Postgres at READ COMMITTED) reports it as ErrDuplicate too.
func raceForOne(t *testing.T, s Store, n int, insert func(ctx context.Context, tx engine.Tx, i int) error) {
	t.Helper()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			errs[i] = s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error { return insert(ctx, tx, i) })
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

func testConcurrentSameDepositMerchantID(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1")
	raceForOne(t, s, 50, func(ctx context.Context, tx engine.Tx, i int) error {
		return tx.CreateDeposit(ctx, newDeposit(fmt.Sprintf("dep_%02d", i), "org_1", "same"))
	})
	if d := get(t, s, func(ctx context.Context, tx engine.Tx) (*engine.Deposit, error) {
		return tx.GetDepositByMerchantID(ctx, "org_1", "same")
	}); d.MerchantID != "same" {
		t.Errorf("deposit %s has merchant_id %s", d.ID, d.MerchantID)
	}
}

func testConcurrentSameWithdrawalMerchantID(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1")
	raceForOne(t, s, 20, func(ctx context.Context, tx engine.Tx, i int) error {
		return tx.CreateWithdrawal(ctx, newWithdrawal(fmt.Sprintf("wdr_%02d", i), "org_1", "same"))
	})
}

// Writers of distinct rows all commit while readers keep reading.
func testConcurrentWritersAndReaders(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1")
	const n = 50
	ctx, stop := context.WithCancel(context.Background())
	var readers sync.WaitGroup
	for range 8 {
		readers.Go(func() {
			for ctx.Err() == nil {
				err := s.ReadTx(ctx, func(ctx context.Context, tx engine.Tx) error {
					_, err := tx.GetDepositByMerchantID(ctx, "org_1", "m07")
					if errors.Is(err, engine.ErrNotFound) {
						return nil
					}
					return err
				})
				if err != nil && ctx.Err() == nil {
					t.Errorf("reader: %v", err)
				}
			}
		})
	}
	var writers sync.WaitGroup
	for i := range n {
		writers.Go(func() {
			err := s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
				return tx.CreateDeposit(ctx, newDeposit(fmt.Sprintf("dep_%02d", i), "org_1", fmt.Sprintf("m%02d", i)))
			})
			if err != nil {
				t.Errorf("writer %d: %v", i, err)
			}
		})
	}
	writers.Wait()
	stop()
	readers.Wait()
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		for i := range n {
			if _, err := tx.GetDepositByMerchantID(ctx, "org_1", fmt.Sprintf("m%02d", i)); err != nil {
				return fmt.Errorf("m%02d: %w", i, err)
			}
		}
		return nil
	})
}

// seqIDs returns prefix000 .. prefix<n-1>.
func seqIDs(prefix string, n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s%03d", prefix, i)
	}
	return ids
}

// dueAt spreads rows over 17 seconds from base: all are due by the time
// claimConcurrently claims, a minute after base.
func dueAt(i int) time.Time { return base.Add(time.Duration(i%17) * time.Second) }

func testConcurrentAttemptClaims(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1")
	ids := seqIDs("att_", 200)
	ds := make([]*engine.Deposit, len(ids))
	as := make([]*engine.Attempt, len(ids))
	for i := range ids {
		ds[i] = newDeposit(fmt.Sprintf("dep_%03d", i), "org_1", fmt.Sprintf("m%03d", i))
		as[i] = newAttempt(ids[i], ds[i].ID, "org_1", engine.ChannelBkash, fmt.Sprintf("TRX%03d", i))
		as[i].NextRunAt = dueAt(i)
	}
	create(t, s, engine.Tx.CreateDeposit, ds...)
	create(t, s, engine.Tx.CreateAttempt, as...)
	claimConcurrently(t, s, claimAttempts, attemptLease, func(ctx context.Context, tx engine.Tx, id string) (lease, error) {
		a, err := tx.GetAttempt(ctx, id)
		return leaseOrZero(a, err, attemptLease)
	}, ids, 5, nil)
}

func testConcurrentPayoutClaims(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1")
	ids := seqIDs("wdr_", 200)
	ws := make([]*engine.Withdrawal, len(ids))
	for i := range ids {
		ws[i] = newWithdrawal(ids[i], "org_1", fmt.Sprintf("m%03d", i))
		ws[i].NextRunAt = dueAt(i)
	}
	create(t, s, engine.Tx.CreateWithdrawal, ws...)
	claimConcurrently(t, s, claimPayouts, payoutLease, func(ctx context.Context, tx engine.Tx, id string) (lease, error) {
		w, err := tx.GetWithdrawal(ctx, "org_1", id)
		return leaseOrZero(w, err, payoutLease)
	}, ids, 5, nil)
}

func testConcurrentDeliveryClaims(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1")
	const endpoints, perEndpoint = 5, 2
	ids := seqIDs("dlv_", 200)
	eps := make([]*engine.WebhookEndpoint, endpoints)
	for e := range eps {
		eps[e] = newEndpoint(fmt.Sprintf("whe_%d", e), "org_1")
	}
	evs := make([]*engine.Event, len(ids))
	ds := make([]*engine.Delivery, len(ids))
	for i := range ids {
		evs[i] = newEvent(fmt.Sprintf("evt_%03d", i), "org_1")
		ds[i] = newDelivery(ids[i], evs[i].ID, eps[i%endpoints].ID, "org_1")
		ds[i].NextAttemptAt = dueAt(i)
	}
	mustWebhookRows(t, s, eps, evs, ds)
	claimConcurrently(t, s, claimDeliveries(perEndpoint, nil), deliveryLease, func(ctx context.Context, tx engine.Tx, id string) (lease, error) {
		d, err := tx.GetDelivery(ctx, id)
		return leaseOrZero(d, err, deliveryLease)
	}, ids, 7, func(w int, got []*engine.Delivery) {
		per := map[string]int{}
		for _, d := range got {
			per[d.EndpointID]++
		}
		for ep, k := range per {
			if k > perEndpoint {
				t.Errorf("worker %d claimed %d of %s, cap %d", w, k, ep, perEndpoint)
			}
		}
	})
}

// LockOrganization serializes the balance checks of withdrawals: of 20
// transactions that each move 10 from available to held if at least 10 is
// available, exactly 10 may move it out of 100.
func testLockOrganizationSerializes(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1")
	create(t, s, engine.Tx.CreateJournal, &engine.Journal{
		ID: "jnl_seed", OrganizationID: "org_1", Kind: engine.JournalAdjustment, CreatedAt: base,
		Entries: []engine.Entry{{Account: engine.AccountAdjustments, Amount: dec("-100")}, {Account: engine.AccountAvailable, Amount: dec("100")}},
	})
	const n = 20
	ten := dec("10")
	moved := make([]bool, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			err := s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
				moved[i] = false
				if _, err := tx.LockOrganization(ctx, "org_1"); err != nil {
					return err
				}
				b, err := tx.AccountBalances(ctx, "org_1")
				if err != nil {
					return err
				}
				if b[engine.AccountAvailable].LessThan(ten) {
					return nil
				}
				moved[i] = true
				return tx.CreateJournal(ctx, &engine.Journal{
					ID: fmt.Sprintf("jnl_%02d", i), OrganizationID: "org_1", Kind: engine.JournalWithdrawalHold,
					Reference: fmt.Sprintf("wdr_%02d", i), CreatedAt: base.Add(time.Second),
					Entries: []engine.Entry{{Account: engine.AccountAvailable, Amount: ten.Neg()}, {Account: engine.AccountHeld, Amount: ten}},
				})
			})
			if err != nil {
				t.Errorf("transaction %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	k := 0
	for _, m := range moved {
		if m {
			k++
		}
	}
	if k != 10 {
		t.Errorf("%d transactions moved 10, want 10", k)
	}
	assertBalances(t, accountBalances(t, s, "org_1"), map[string]string{
		engine.AccountAdjustments: "-100", engine.AccountAvailable: "0", engine.AccountHeld: "100",
	})
	if js := listJournals(t, s, "org_1"); len(js) != 11 {
		t.Errorf("%d journals, want 11", len(js))
	}
}

// LockDeposit serializes the writers of a deposit: 20 transactions that
// each read and increment a counter lose no increment, and each sees a
// value of its own.
func testLockDepositSerializes(t *testing.T, s Store) {
	mustDeposits(t, s, "org_1", "1")
	const n = 20
	seen := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			err := s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
				d, err := tx.LockDeposit(ctx, "dep_1")
				if err != nil {
					return err
				}
				seen[i] = d.AttemptsUsed
				d.AttemptsUsed++
				return tx.UpdateDeposit(ctx, d)
			})
			if err != nil {
				t.Errorf("transaction %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	d := get(t, s, func(ctx context.Context, tx engine.Tx) (*engine.Deposit, error) {
		return tx.GetDeposit(ctx, "org_1", "dep_1")
	})
	if d.AttemptsUsed != n {
		t.Errorf("attempts used = %d after %d increments", d.AttemptsUsed, n)
	}
	slices.Sort(seen)
	for i, v := range seen {
		if v != i {
			t.Errorf("transactions saw %v, want each of 0 to %d once", seen, n-1)
			break
		}
	}
}
