package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/conformance/storekit"
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
	storekit.RaceForOne(t, s.InTx, n, insert)
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

// Submissions of one transaction ID to deposits of one organization race:
// exactly one attempt holds it. Other organizations' submissions of it
// meanwhile all commit.
func testConcurrentSameOrganizationTransactionID(t *testing.T, s Store) {
	const n = 20
	names := seqIDs("", n)
	mustDeposits(t, s, "org_1", names...)
	mustDeposits(t, s, "org_2", "other")
	var other error
	var wg sync.WaitGroup
	wg.Go(func() {
		other = try(s, engine.Tx.CreateAttempt, newAttempt("att_other", "dep_other", "org_2", engine.ChannelBkash, "TRX1"))
	})
	raceForOne(t, s, n, func(ctx context.Context, tx engine.Tx, i int) error {
		return tx.CreateAttempt(ctx, newAttempt("att_"+names[i], "dep_"+names[i], "org_1", engine.ChannelBkash, "TRX1"))
	})
	wg.Wait()
	if other != nil {
		t.Errorf("another organization's submission: %v", other)
	}
}

// Attempts of one transaction ID in several organizations race to succeed:
// exactly one marks it.
func testConcurrentSucceededTransaction(t *testing.T, s Store) {
	const n = 20
	as := make([]*engine.Attempt, n)
	for i := range n {
		org := fmt.Sprintf("org_%02d", i)
		mustDeposits(t, s, org, org)
		as[i] = newAttempt("att_"+org, "dep_"+org, org, engine.ChannelBkash, "TRX1")
	}
	create(t, s, engine.Tx.CreateAttempt, as...)
	winner := make([]bool, n)
	raceForOne(t, s, n, func(ctx context.Context, tx engine.Tx, i int) error {
		winner[i] = false
		if _, err := tx.LockAttempt(ctx, as[i].ID); err != nil {
			return err
		}
		if err := tx.MarkTransactionSucceeded(ctx, as[i]); err != nil {
			return err
		}
		winner[i] = true
		return nil
	})
	got := get(t, s, func(ctx context.Context, tx engine.Tx) (*engine.Attempt, error) {
		return tx.GetSucceededAttempt(ctx, engine.ChannelBkash, "TRX1")
	})
	for i, a := range as {
		if winner[i] != (got.ID == a.ID) {
			t.Errorf("%s committed its mark: %v; the mark is %s's", a.ID, winner[i], got.ID)
		}
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
	lockOrganizationSerializes(t, s, func(ctx context.Context, tx engine.Tx) (map[string]decimal.Decimal, error) {
		if _, err := tx.LockOrganization(ctx, "org_1"); err != nil {
			return nil, err
		}
		return tx.AccountBalances(ctx, "org_1")
	})
}

// LockWithdrawalGate serializes them as LockOrganization does, its
// balances read under the lock.
func testLockWithdrawalGateSerializes(t *testing.T, s Store) {
	lockOrganizationSerializes(t, s, func(ctx context.Context, tx engine.Tx) (map[string]decimal.Decimal, error) {
		g, err := tx.LockWithdrawalGate(ctx, "org_1", []string{"order-1"})
		if err != nil {
			return nil, err
		}
		return g.Balances, nil
	})
}

// lockOrganizationSerializes runs the test of LockOrganization with lock
// taking the lock and reading the balances.
func lockOrganizationSerializes(t *testing.T, s Store, lock func(ctx context.Context, tx engine.Tx) (map[string]decimal.Decimal, error)) {
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
				b, err := lock(ctx, tx)
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

// counter is a lock test's row in the engine's transactions.
type counter[T any] = storekit.Counter[engine.Tx, T]

// lockSerializes runs n transactions at once that each lock the row, read
// its counter and write it back one up. The lock must serialize them: no
// increment is lost, and each sees a value of its own. Without it, at READ
// COMMITTED, two transactions could both read k and both write k+1.
func lockSerializes[T any](t *testing.T, s Store, n int, c counter[T]) {
	t.Helper()
	storekit.LockSerializes(t, s.InTx, s.ReadTx, n, c)
}

// microsAfter is how many microseconds after base at is; nil is none.
func microsAfter(at *time.Time) int {
	if at == nil {
		return 0
	}
	return int(at.Sub(base) / time.Microsecond)
}

// LockDeposit serializes the writers of a deposit.
func testLockDepositSerializes(t *testing.T, s Store) {
	mustDeposits(t, s, "org_1", "1")
	lockSerializes(t, s, 20, counter[*engine.Deposit]{
		Lock: func(ctx context.Context, tx engine.Tx) (*engine.Deposit, error) { return tx.LockDeposit(ctx, "dep_1") },
		Get: func(ctx context.Context, tx engine.Tx) (*engine.Deposit, error) {
			return tx.GetDeposit(ctx, "org_1", "dep_1")
		},
		Update: engine.Tx.UpdateDeposit,
		Count:  func(d *engine.Deposit) int { return d.AttemptsUsed },
		Inc:    func(d *engine.Deposit) { d.AttemptsUsed++ },
	})
}

// LockAttempt serializes the workers finishing an attempt.
func testLockAttemptSerializes(t *testing.T, s Store) {
	mustDeposits(t, s, "org_1", "1")
	create(t, s, engine.Tx.CreateAttempt, newAttempt("att_1", "dep_1", "org_1", engine.ChannelBkash, "TRX1"))
	lockSerializes(t, s, 20, counter[*engine.Attempt]{
		Lock:   func(ctx context.Context, tx engine.Tx) (*engine.Attempt, error) { return tx.LockAttempt(ctx, "att_1") },
		Get:    func(ctx context.Context, tx engine.Tx) (*engine.Attempt, error) { return tx.GetAttempt(ctx, "att_1") },
		Update: engine.Tx.UpdateAttempt,
		Count:  func(a *engine.Attempt) int { return a.Tries },
		Inc:    func(a *engine.Attempt) { a.Tries++ },
	})
}

// LockDepositAndAttempt serializes the workers finishing an attempt, by
// the deposit's lock and by the attempt's.
func testLockDepositAndAttemptSerializes(t *testing.T, s Store) {
	mustDeposits(t, s, "org_1", "1")
	create(t, s, engine.Tx.CreateAttempt, newAttempt("att_1", "dep_1", "org_1", engine.ChannelBkash, "TRX1"))
	lockSerializes(t, s, 20, counter[*engine.Attempt]{
		Lock: func(ctx context.Context, tx engine.Tx) (*engine.Attempt, error) {
			_, a, err := tx.LockDepositAndAttempt(ctx, "dep_1", "att_1")
			return a, err
		},
		Get:    func(ctx context.Context, tx engine.Tx) (*engine.Attempt, error) { return tx.GetAttempt(ctx, "att_1") },
		Update: engine.Tx.UpdateAttempt,
		Count:  func(a *engine.Attempt) int { return a.Tries },
		Inc:    func(a *engine.Attempt) { a.Tries++ },
	})
	lockSerializes(t, s, 20, counter[*engine.Deposit]{
		Lock: func(ctx context.Context, tx engine.Tx) (*engine.Deposit, error) {
			d, _, err := tx.LockDepositAndAttempt(ctx, "dep_1", "att_1")
			return d, err
		},
		Get: func(ctx context.Context, tx engine.Tx) (*engine.Deposit, error) {
			return tx.GetDeposit(ctx, "org_1", "dep_1")
		},
		Update: engine.Tx.UpdateDeposit,
		Count:  func(d *engine.Deposit) int { return d.AttemptsUsed },
		Inc:    func(d *engine.Deposit) { d.AttemptsUsed++ },
	})
}

// LockWithdrawal serializes the writers of a withdrawal.
func testLockWithdrawalSerializes(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1")
	create(t, s, engine.Tx.CreateWithdrawal, newWithdrawal("wdr_1", "org_1", "m1"))
	lockSerializes(t, s, 20, counter[*engine.Withdrawal]{
		Lock: func(ctx context.Context, tx engine.Tx) (*engine.Withdrawal, error) {
			return tx.LockWithdrawal(ctx, "org_1", "wdr_1")
		},
		Get: func(ctx context.Context, tx engine.Tx) (*engine.Withdrawal, error) {
			return tx.GetWithdrawal(ctx, "org_1", "wdr_1")
		},
		Update: engine.Tx.UpdateWithdrawal,
		Count:  func(w *engine.Withdrawal) int { return w.Tries },
		Inc:    func(w *engine.Withdrawal) { w.Tries++ },
	})
}

// LockWebhookEndpoint serializes the writers of an endpoint: each appends
// to its disabled reason, whose length is the counter.
func testLockWebhookEndpointSerializes(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1")
	create(t, s, engine.Tx.CreateWebhookEndpoint, newEndpoint("whe_1", "org_1"))
	lockSerializes(t, s, 20, counter[*engine.WebhookEndpoint]{
		Lock: func(ctx context.Context, tx engine.Tx) (*engine.WebhookEndpoint, error) {
			return tx.LockWebhookEndpoint(ctx, "whe_1")
		},
		Get: func(ctx context.Context, tx engine.Tx) (*engine.WebhookEndpoint, error) {
			return tx.GetWebhookEndpoint(ctx, "whe_1")
		},
		Update: engine.Tx.UpdateWebhookEndpoint,
		Count:  func(ep *engine.WebhookEndpoint) int { return len(ep.DisabledReason) },
		Inc:    func(ep *engine.WebhookEndpoint) { ep.DisabledReason += "x" },
	})
}

// LockDelivery serializes the writers of a delivery.
func testLockDeliverySerializes(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1")
	mustWebhookRows(t, s, []*engine.WebhookEndpoint{newEndpoint("whe_1", "org_1")},
		[]*engine.Event{newEvent("evt_1", "org_1")}, []*engine.Delivery{newDelivery("dlv_1", "evt_1", "whe_1", "org_1")})
	lockSerializes(t, s, 20, counter[*engine.Delivery]{
		Lock: func(ctx context.Context, tx engine.Tx) (*engine.Delivery, error) {
			return tx.LockDelivery(ctx, "dlv_1")
		},
		Get:    func(ctx context.Context, tx engine.Tx) (*engine.Delivery, error) { return tx.GetDelivery(ctx, "dlv_1") },
		Update: engine.Tx.UpdateDelivery,
		Count:  func(d *engine.Delivery) int { return d.Attempts },
		Inc:    func(d *engine.Delivery) { d.Attempts++ },
	})
}

// LockWallet serializes the writers of a wallet: each moves its last
// assignment a microsecond on, and how far past base it is is the counter.
func testLockWalletSerializes(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1")
	create(t, s, engine.Tx.CreateWallet, newWallet("wal_1", "org_1", engine.ChannelBkash, engine.OperationCashOut, "01"))
	lockSerializes(t, s, 20, counter[*engine.Wallet]{
		Lock: func(ctx context.Context, tx engine.Tx) (*engine.Wallet, error) {
			return tx.LockWallet(ctx, "org_1", "wal_1")
		},
		Get: func(ctx context.Context, tx engine.Tx) (*engine.Wallet, error) {
			return tx.GetWallet(ctx, "org_1", "wal_1")
		},
		Update: engine.Tx.UpdateWallet,
		Count:  func(w *engine.Wallet) int { return microsAfter(w.LastAssignedAt) },
		Inc: func(w *engine.Wallet) {
			w.LastAssignedAt = ptr(base.Add(time.Duration(microsAfter(w.LastAssignedAt)+1) * time.Microsecond))
		},
	})
}

// ListWallets with ForUpdate holds the pool a deposit picks from: each of
// 20 transactions assigns the least recently assigned of three wallets, a
// microsecond after the latest assignment in the pool, which is the
// counter. No two may pick from the same state of the pool, and the pool,
// read under the lock, is in order as it is then: so the assignments go
// round the wallets.
func testListWalletsForUpdateSerializes(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1")
	create(t, s, engine.Tx.CreateWallet,
		newWallet("wal_a", "org_1", engine.ChannelBkash, engine.OperationCashOut, "01"),
		newWallet("wal_b", "org_1", engine.ChannelBkash, engine.OperationCashOut, "02"),
		newWallet("wal_c", "org_1", engine.ChannelBkash, engine.OperationCashOut, "03"),
		newWallet("wal_x", "org_1", engine.ChannelNagad, engine.OperationCashOut, "04"))
	p := engine.ListWalletsParams{OrganizationID: "org_1", Channel: engine.ChannelBkash, Operation: engine.OperationCashOut, EnabledOnly: true}
	list := func(forUpdate bool) func(ctx context.Context, tx engine.Tx) ([]*engine.Wallet, error) {
		p := p
		p.ForUpdate = forUpdate
		return func(ctx context.Context, tx engine.Tx) ([]*engine.Wallet, error) {
			ws, err := tx.ListWallets(ctx, p)
			if err == nil && len(ws) != 3 {
				err = fmt.Errorf("pool of %d wallets, want 3", len(ws))
			}
			return ws, err
		}
	}
	latest := func(ws []*engine.Wallet) int {
		m := 0
		for _, w := range ws {
			m = max(m, microsAfter(w.LastAssignedAt))
		}
		return m
	}
	const n = 20
	lockSerializes(t, s, n, counter[[]*engine.Wallet]{
		Lock: list(true),
		Get:  list(false),
		Update: func(tx engine.Tx, ctx context.Context, ws []*engine.Wallet) error {
			return tx.UpdateWallet(ctx, ws[0])
		},
		Count: latest,
		Inc: func(ws []*engine.Wallet) {
			ws[0].LastAssignedAt = ptr(base.Add(time.Duration(latest(ws)+1) * time.Microsecond))
		},
	})
	// Round the wallets: the last three assignments went one to each.
	got := make([]int, 0, 3)
	for _, w := range get(t, s, list(false)) {
		got = append(got, microsAfter(w.LastAssignedAt))
	}
	if want := []int{n - 2, n - 1, n}; !slices.Equal(got, want) {
		t.Errorf("pool last assigned %vµs after base, want %v", got, want)
	}
}
