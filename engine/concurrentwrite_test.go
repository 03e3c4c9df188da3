package engine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
)

// TestStoresConcurrentWrites: Postgres writes several batches of a kind at
// once, SQLite one (it has one write lock).
func TestStoresConcurrentWrites(t *testing.T) {
	onEachStore(t, func(t *testing.T, newFixture func(t *testing.T) *fixture) {
		f := newFixture(t)
		w, ok := f.store.(engine.ConcurrentWriter)
		switch {
		case f.kind == "sqlite" && ok:
			t.Fatal("SQLite advertises concurrent writes")
		case f.kind == "postgres" && (!ok || w.ConcurrentWrites() < 2):
			t.Fatal("Postgres writes one batch at a time")
		}
	})
}

// TestConcurrentBatchesPostgres: on Postgres a batch that waits for a row
// lock holds up no batch of another key: a submission whose deposit is
// locked by another transaction waits, and one for another deposit
// commits meanwhile.
func TestConcurrentBatchesPostgres(t *testing.T) {
	f := newFixtureOn(t, "postgres")
	locked, other := f.deposit(f.org.ID, "bkash_agent", "500"), f.deposit(f.org.ID, "bkash_agent", "500")
	holding, release, held := make(chan error, 1), make(chan struct{}), make(chan error, 1)
	go func() {
		held <- f.store.InTx(f.ctx, func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.LockDeposit(ctx, locked.ID)
			holding <- err
			<-release
			return err
		})
	}()
	if err := <-holding; err != nil {
		t.Fatal(err)
	}
	waiting := make(chan error, 1)
	go func() { _, err := f.submit(locked, "TXLOCKED01"); waiting <- err }()
	for f.lockWaits() == 0 {
		time.Sleep(time.Millisecond) // until the submission waits for the lock
	}
	done := make(chan error, 1)
	go func() { _, err := f.submit(other, "TXOTHER001"); done <- err }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second): // a deadlock detector, not a speed test
		close(release)
		t.Fatal("a submission waited for another deposit's batch")
	}
	close(release)
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	if err := <-waiting; err != nil {
		t.Fatal(err)
	}
}

// lockWaits counts the connections of the test's database waiting for a
// lock (Postgres).
func (f *fixture) lockWaits() int {
	f.t.Helper()
	var n int
	err := f.store.ReadTx(f.ctx, func(ctx context.Context, tx engine.Tx) error {
		return tx.(engine.SQLTx).QuerySQL(ctx,
			`SELECT count(*)::int FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
			nil, func(scan func(dest ...any) error) error { return scan(&n) })
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return n
}

// TestConcurrentWithdrawalsAcrossEngines: withdrawals of three
// organizations, each funded for exactly ten, asked for by 300 goroutines
// through four engines over one database (as four payd processes, whose
// batches of one organization run at once and meet at its lock): none
// overdraws, and no transaction deadlocks for good.
func TestConcurrentWithdrawalsAcrossEngines(t *testing.T) {
	onEachStore(t, func(t *testing.T, newFixture func(t *testing.T) *fixture) {
		f := newFixture(t)
		orgs := []string{f.withdrawalOrg("1060"), f.withdrawalOrg("1060"), f.withdrawalOrg("1060")}
		engines := make([]*engine.Engine, 4)
		for i := range engines {
			var err error
			engines[i], err = engine.New(engine.Config{Store: f.store, Provider: f.provider, Clock: f.clock, Keyring: f.keyring})
			if err != nil {
				t.Fatal(err)
			}
		}
		perOrg := make([]map[string]int, len(orgs))
		for i := range perOrg {
			perOrg[i] = map[string]int{}
		}
		results := make([]string, 300)
		race(len(results), func(i int) error {
			// 100 plus the wallet commission of 1% + 5: 106 each.
			_, err := engines[i%len(engines)].CreateWithdrawal(f.ctx, engine.CreateWithdrawalParams{
				OrganizationID: orgs[i%len(orgs)], Amount: "100", Phone: "01712345678", PaymentMethod: "bkash", MerchantID: fmt.Sprintf("e%d", i),
			})
			results[i] = "ok"
			if err != nil {
				results[i] = engine.ErrorCode(err)
			}
			return err
		})
		for i, r := range results {
			perOrg[i%len(orgs)][r]++
		}
		for i, org := range orgs {
			if perOrg[i]["ok"] != 10 || perOrg[i]["insufficient_balance"] != 90 {
				t.Fatalf("organization %d: outcomes %v, want 10 ok and 90 insufficient_balance", i, perOrg[i])
			}
			f.wantBalance(org, "0.00", "1060.00")
			wantLedgerBalanced(t, f, org)
			if d := f.ledgerDifferences(org); len(d) != 0 {
				t.Fatalf("organization %d: balance rows differ from the entries: %v", i, d)
			}
		}
	})
}

// TestConcurrentVerification: 60 deposits of three organizations submitted
// at once and verified by 8 workers, whose verdicts' batches (and their
// credits to the same organizations' balance rows) are written at once on
// Postgres: every deposit succeeds, each credit once.
func TestConcurrentVerification(t *testing.T) {
	onEachStore(t, func(t *testing.T, newFixture func(t *testing.T) *fixture) {
		f := newFixture(t)
		eng, err := engine.New(engine.Config{Store: f.store, Provider: f.provider, Clock: f.clock, Keyring: f.keyring, WorkerConcurrency: 8, ClaimBatch: 64})
		if err != nil {
			t.Fatal(err)
		}
		f.eng = eng
		orgs := []string{f.org.ID}
		for range 2 {
			creds, err := f.eng.CreateOrganization(f.ctx, engine.OrganizationSettings{Name: ptr("Shop"), H2HEnabled: ptr(true)})
			if err != nil {
				t.Fatal(err)
			}
			orgs = append(orgs, creds.Organization.ID)
			f.addWallet(creds.Organization.ID, "bkash", "cash_out", "01811111111")
		}
		var ds []*engine.Deposit
		for i := range 60 {
			d := f.deposit(orgs[i%len(orgs)], "bkash_agent", "500")
			f.provider.pay(f.payment(d, fmt.Sprintf("TXC%07d", i)))
			ds = append(ds, d)
		}
		results := race(len(ds), func(i int) error {
			_, err := f.submit(ds[i], fmt.Sprintf("TXC%07d", i))
			return err
		})
		if results["ok"] != len(ds) {
			t.Fatalf("submissions %v", results)
		}
		for f.process() > 0 {
		}
		for _, d := range ds {
			if got := f.get(d); got.Status != engine.StatusSucceeded {
				t.Fatalf("deposit %s is %s", d.ID, got.Status)
			}
		}
		for i, org := range orgs {
			wantLedgerBalanced(t, f, org)
			if d := f.ledgerDifferences(org); len(d) != 0 {
				t.Fatalf("organization %d: balance rows differ from the entries: %v", i, d)
			}
		}
		// Orgs 1 and 2 have the same fees: the same 20 credits each.
		if a, b := f.balances(orgs[1])[engine.AccountAvailable], f.balances(orgs[2])[engine.AccountAvailable]; !a.Equal(b) || !a.IsPositive() {
			t.Fatalf("available %s and %s", a, b)
		}
	})
}

// TestConcurrentCreatesOneMerchantID: creates that share transactions
// (group commit) write their deposits together at the transaction's end.
// Raced with one merchant_id among creates of fresh ones, on each store,
// exactly one deposit takes it, every identical request gets that deposit
// back, a different one is refused as a conflict, and the creates beside
// them in the same transactions are all written, each once.
func TestConcurrentCreatesOneMerchantID(t *testing.T) {
	onEachStore(t, func(t *testing.T, newFixture func(t *testing.T) *fixture) {
		f := newFixture(t)
		const n = 96
		ids := make([]string, n)
		created := make([]bool, n)
		params := func(i int) engine.CreateDepositParams {
			p := engine.CreateDepositParams{
				OrganizationID: f.org.ID, CheckoutMode: "h2h", Amount: "500", PaymentMethod: "bkash_agent",
				RedirectURL: "https://shop.example/r", MerchantID: "contested", PayerPhone: "01712345678",
			}
			switch i % 3 {
			case 1:
				p.MerchantID = fmt.Sprintf("fresh-%d", i)
			case 2:
				p.Amount = "600" // the contested merchant_id with another request
			}
			return p
		}
		results := race(n, func(i int) error {
			d, c, err := f.eng.CreateDeposit(f.ctx, params(i))
			if d != nil {
				ids[i], created[i] = d.ID, c
			}
			return err
		})
		contested := map[string]bool{}
		winners := 0
		for i := range n {
			if created[i] && params(i).MerchantID != "contested" {
				continue
			}
			if created[i] {
				winners++
			}
			if ids[i] != "" && params(i).MerchantID == "contested" {
				contested[ids[i]] = true
			}
		}
		if winners != 1 || len(contested) != 1 {
			t.Fatalf("the contested merchant_id: %d created, %d deposits (%v)", winners, len(contested), results)
		}
		fresh := 0
		for i := 1; i < n; i += 3 {
			if !created[i] {
				t.Fatalf("fresh create %d: not created (%v)", i, results)
			}
			fresh++
		}
		// The winner's amount decides which third of the requests are
		// replays (ok) and which a conflict.
		if results["ok"] != n-n/3 || results["merchant_id_conflict"] != n/3 {
			t.Fatalf("outcomes: %v", results)
		}
		page, err := f.eng.ListDeposits(f.ctx, engine.ListParams{OrganizationID: f.org.ID, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Data) != fresh+1 {
			t.Fatalf("%d deposits stored, want %d fresh and the contested one", len(page.Data), fresh)
		}
	})
}
