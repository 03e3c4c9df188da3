// Package opcost counts what the money path's operations ask of a store,
// for both stores' tests: statements and transactions per operation, held to a
// budget so that the money path's cost does not creep up unnoticed.
package opcost

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydmock"
)

// counts is what one operation cost.
type counts struct{ statements, transactions, roundTrips float64 }

func (c counts) String() string {
	s := fmt.Sprintf("%.1f statements, %.2f write transactions", c.statements, c.transactions)
	if c.roundTrips > 0 {
		s += fmt.Sprintf(", %.1f round trips", c.roundTrips)
	}
	return s
}

// Counters are a store's running totals: statements (BEGIN and COMMIT not
// included), write transactions begun, and round trips to the database
// server (0 where there is none: SQLite).
type Counters struct{ Statements, Transactions, RoundTrips int64 }

// Ceiling is the most one operation, run alone, may cost: the figures
// BENCHMARKS.md gives. An operation that costs more fails the test, so
// that a statement or round trip added to the money path is seen and
// written down, not found later in a benchmark. RoundTrips 0: not checked.
type Ceiling struct{ Statements, RoundTrips float64 }

// Ceilings are the ceilings of the operations Measure runs one at a time:
// "create" (a signed H2H deposit create), "get" (a deposit read),
// "submit" (a transaction ID submitted), "worker" (the worker's check of
// it through to succeeded), "withdrawal create", "payout".
type Ceilings map[string]Ceiling

// Measure counts the statements and write transactions of the money
// path's operations on store, run one at a time (a transaction each) and
// 32 at once (sharing transactions: group commit), and logs them. It fails
// the test if the operations run at once cost as many transactions as run
// alone: their writes no longer share commits, and if an operation run
// alone costs more than its ceiling (these are deterministic: no batching
// decides them). count reads the store's counters.
func Measure(t *testing.T, store engine.Store, count func() Counters, ceilings Ceilings) {
	t.Helper()
	ctx := context.Background()
	keyring, err := engine.NewKeyring(make([]byte, engine.MasterKeySize))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	payments := map[string]*engine.ProviderTransaction{}
	provider := &paydmock.Provider{
		LookupTransactionFunc: func(_ context.Context, req engine.LookupRequest) (*engine.ProviderTransaction, error) {
			mu.Lock()
			defer mu.Unlock()
			if p := payments[req.TransactionID]; p != nil {
				return p, nil
			}
			return nil, engine.ErrTransactionNotFound
		},
		CheckPayoutMethodFunc: func(context.Context, string) error { return nil },
		SendPayoutFunc: func(_ context.Context, req engine.PayoutRequest) (*engine.Payout, error) {
			return &engine.Payout{IdempotencyKey: req.IdempotencyKey, Reference: "po-" + req.IdempotencyKey, Status: engine.PayoutSucceeded}, nil
		},
	}
	eng, err := engine.New(engine.Config{Store: store, Provider: provider, Keyring: keyring, WorkerConcurrency: 32, ClaimBatch: 32})
	if err != nil {
		t.Fatal(err)
	}
	yes, name := true, "Shop"
	creds, err := eng.CreateOrganization(ctx, engine.OrganizationSettings{Name: &name, H2HEnabled: &yes, WithdrawalsEnabled: &yes})
	if err != nil {
		t.Fatal(err)
	}
	org := creds.Organization.ID
	for i := range 3 {
		if _, err := eng.AddWallet(ctx, engine.AddWalletParams{OrganizationID: org, Channel: "bkash", Operation: "cash_out", Phone: fmt.Sprintf("0181111111%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := eng.AdjustBalance(ctx, engine.AdjustParams{OrganizationID: org, Amount: "1000000", Reason: "float", Actor: "test"}); err != nil {
		t.Fatal(err)
	}

	oneByOne := engineWithWorkers(t, store, provider, keyring, 1)
	seq := 0
	var withdrawn []string // merchant_ids of withdrawRun's withdrawals
	// measure runs op k times, at once or one after another, and returns
	// the cost of one.
	measure := func(k int, atOnce bool, op func(i int) error) counts {
		t.Helper()
		c0 := count()
		errs := make([]error, k)
		if atOnce {
			var wg sync.WaitGroup
			for i := range k {
				wg.Go(func() { errs[i] = op(i) })
			}
			wg.Wait()
		} else {
			for i := range k {
				errs[i] = op(i)
			}
		}
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		c1 := count()
		return counts{float64(c1.Statements-c0.Statements) / float64(k), float64(c1.Transactions-c0.Transactions) / float64(k),
			float64(c1.RoundTrips-c0.RoundTrips) / float64(k)}
	}
	verifyRun := func(k int, atOnce bool) (create, submit, finish counts) {
		deposits := make([]*engine.Deposit, k)
		create = measure(k, atOnce, func(i int) error {
			mu.Lock()
			seq++
			merchantID := fmt.Sprintf("d-%d", seq)
			mu.Unlock()
			d, _, err := eng.CreateDeposit(ctx, engine.CreateDepositParams{
				OrganizationID: org, CheckoutMode: "h2h", Amount: "500", PaymentMethod: "bkash_agent",
				RedirectURL: "https://shop.example/r", MerchantID: merchantID, PayerPhone: "01712345678",
			})
			deposits[i] = d
			return err
		})
		for _, d := range deposits {
			txID := txIDOf(d)
			mu.Lock()
			payments[txID] = &engine.ProviderTransaction{
				Channel: d.Channel, TransactionID: txID, Type: engine.TransactionCashOut, Status: engine.TransactionCompleted,
				Amount: d.Amount, Currency: "BDT", PayerPhone: d.PayerPhone, RecipientPhone: d.RecipientPhone,
				CompletedAt: d.CreatedAt.Truncate(time.Second).Add(time.Second),
			}
			mu.Unlock()
		}
		// Run alone, the submission and the check are one instance's, as
		// in a single payd: its worker knows what a lookup needs of the
		// deposit (an attempt checked by another instance reads it, one
		// statement more).
		submitter := eng
		if !atOnce {
			submitter = oneByOne
		}
		submit = measure(k, atOnce, func(i int) error {
			d := deposits[i]
			_, err := submitter.SubmitTransactionID(ctx, engine.VerifyParams{OrganizationID: org, DepositID: d.ID, TransactionID: txIDOf(d)})
			return err
		})
		// The worker: its claims (ClaimBatch at a time) and checks, at
		// most WorkerConcurrency at once, until none is left.
		finish = measure(1, false, func(int) error {
			if !atOnce {
				for range k {
					if _, err := oneByOne.ProcessAttempts(ctx); err != nil {
						return err
					}
				}
				return nil
			}
			for {
				claimed, err := eng.ProcessAttempts(ctx)
				if err != nil || claimed == 0 {
					return err
				}
			}
		})
		finish.statements /= float64(k)
		finish.transactions /= float64(k)
		finish.roundTrips /= float64(k)
		for _, d := range deposits {
			got, err := eng.GetDeposit(ctx, org, d.ID)
			if err != nil || got.Status != engine.StatusSucceeded {
				t.Fatalf("deposit %s: %v %s, %v", d.ID, got.Status, got.FailureCode, err)
			}
		}
		return create, submit, finish
	}
	// withdrawRun creates k withdrawals, then the worker pays them out
	// (the provider settles at once): claims and settlements, each with
	// its journal and event.
	withdrawRun := func(k int, atOnce bool) (create, payout counts) {
		create = measure(k, atOnce, func(int) error {
			mu.Lock()
			seq++
			merchantID := fmt.Sprintf("w-%d", seq)
			withdrawn = append(withdrawn, merchantID)
			mu.Unlock()
			_, err := eng.CreateWithdrawal(ctx, engine.CreateWithdrawalParams{
				OrganizationID: org, Amount: "100", Phone: "01712345678", PaymentMethod: "bkash", MerchantID: merchantID,
			})
			return err
		})
		payout = measure(1, false, func(int) error {
			w := eng
			if !atOnce {
				w = oneByOne
			}
			for {
				claimed, err := w.ProcessPayouts(ctx)
				if err != nil || claimed == 0 {
					return err
				}
			}
		})
		payout.statements /= float64(k)
		payout.transactions /= float64(k)
		payout.roundTrips /= float64(k)
		return create, payout
	}

	// refusedRun submits 32 transaction IDs at once, every other one for a
	// deposit that does not exist (an attacker's, or another
	// organization's): the refusals must not break the others' shared
	// commits up (a client sending refused requests would otherwise slow
	// everyone). It returns the cost of one submission.
	refusedRun := func() counts {
		deposits := make([]*engine.Deposit, 16)
		for i := range deposits {
			mu.Lock()
			seq++
			merchantID := fmt.Sprintf("r-%d", seq)
			mu.Unlock()
			d, _, err := eng.CreateDeposit(ctx, engine.CreateDepositParams{
				OrganizationID: org, CheckoutMode: "h2h", Amount: "500", PaymentMethod: "bkash_agent",
				RedirectURL: "https://shop.example/r", MerchantID: merchantID, PayerPhone: "01712345678",
			})
			if err != nil {
				t.Fatal(err)
			}
			deposits[i] = d
		}
		return measure(32, true, func(i int) error {
			if i%2 == 1 {
				_, err := eng.SubmitTransactionID(ctx, engine.VerifyParams{OrganizationID: org, DepositID: fmt.Sprintf("dep_nosuch%d", i), TransactionID: "TXNOSUCH"})
				if engine.ErrorCode(err) != engine.CodeNotFound {
					return fmt.Errorf("a submission for no deposit: %v", err)
				}
				return nil
			}
			d := deposits[i/2]
			_, err := eng.SubmitTransactionID(ctx, engine.VerifyParams{OrganizationID: org, DepositID: d.ID, TransactionID: txIDOf(d)})
			return err
		})
	}

	c1, s1, f1 := verifyRun(8, false)
	w1, p1 := withdrawRun(8, false)
	c32, s32, f32 := verifyRun(32, true)
	w32, p32 := withdrawRun(32, true)
	// A signed GET's read, of a deposit created above.
	read, _, err := eng.CreateDeposit(ctx, engine.CreateDepositParams{
		OrganizationID: org, CheckoutMode: "h2h", Amount: "500", PaymentMethod: "bkash_agent",
		RedirectURL: "https://shop.example/r", MerchantID: "get", PayerPhone: "01712345678",
	})
	if err != nil {
		t.Fatal(err)
	}
	g1 := measure(8, false, func(int) error {
		_, err := eng.GetDeposit(ctx, org, read.ID)
		return err
	})
	g32 := measure(32, true, func(int) error {
		_, err := eng.GetDeposit(ctx, org, read.ID)
		return err
	})
	t.Logf("one at a time: create %s; get %s; submit %s; worker %s; withdrawal create %s; payout %s", c1, g1, s1, f1, w1, p1)
	t.Logf("32 at once:    create %s; get %s; submit %s; worker %s; withdrawal create %s; payout %s", c32, g32, s32, f32, w32, p32)
	for name, got := range map[string]counts{"create": c1, "get": g1, "submit": s1, "worker": f1, "withdrawal create": w1, "payout": p1} {
		c, ok := ceilings[name]
		if !ok {
			t.Errorf("%s: no ceiling", name)
			continue
		}
		if got.statements > c.Statements+1e-9 || c.RoundTrips > 0 && got.roundTrips > c.RoundTrips+1e-9 {
			t.Errorf("%s, run alone: %s, more than its ceiling of %.1f statements, %.1f round trips: an operation of the money path asks more of the store (update the ceiling and BENCHMARKS.md if that is meant)",
				name, got, c.Statements, c.RoundTrips)
		}
	}
	for _, c := range []struct {
		what        string
		alone, many counts
	}{{"submit", s1, s32}, {"worker", f1, f32}, {"withdrawal create", w1, w32}, {"payout", p1, p32}} {
		if c.many.transactions >= c.alone.transactions {
			t.Errorf("%s: %.2f write transactions each when 32 run at once, %.2f one at a time: no group commit", c.what, c.many.transactions, c.alone.transactions)
		}
	}
	// Withdrawals at once, every other one of an organization with nothing
	// to pay out.
	emptyName := "Empty"
	empty, err := eng.CreateOrganization(ctx, engine.OrganizationSettings{Name: &emptyName, WithdrawalsEnabled: &yes})
	if err != nil {
		t.Fatal(err)
	}
	overdrawn := measure(32, true, func(i int) error {
		mu.Lock()
		seq++
		merchantID := fmt.Sprintf("o-%d", seq)
		mu.Unlock()
		from := org
		if i%2 == 1 {
			from = empty.Organization.ID
		}
		_, err := eng.CreateWithdrawal(ctx, engine.CreateWithdrawalParams{
			OrganizationID: from, Amount: "100", Phone: "01712345678", PaymentMethod: "bkash", MerchantID: merchantID,
		})
		if i%2 == 1 {
			if engine.ErrorCode(err) != engine.CodeInsufficientBalance {
				return fmt.Errorf("a withdrawal above the balance: %v", err)
			}
			return nil
		}
		return err
	})
	if overdrawn.transactions >= 0.5 {
		t.Errorf("withdrawals with refusals among them: %.2f write transactions each: the refusals break shared commits up", overdrawn.transactions)
	}
	// Withdrawals at once, every other one of an organization with
	// withdrawals off (refused under its lock, in the shared transaction)
	// or of none.
	offName := "Off"
	off, err := eng.CreateOrganization(ctx, engine.OrganizationSettings{Name: &offName})
	if err != nil {
		t.Fatal(err)
	}
	forbidden := measure(32, true, func(i int) error {
		mu.Lock()
		seq++
		merchantID := fmt.Sprintf("f-%d", seq)
		mu.Unlock()
		from, want := org, ""
		switch i % 4 {
		case 1:
			from, want = off.Organization.ID, engine.CodeForbidden
		case 3:
			from, want = "org_nosuch", engine.CodeNotFound
		}
		_, err := eng.CreateWithdrawal(ctx, engine.CreateWithdrawalParams{
			OrganizationID: from, Amount: "100", Phone: "01712345678", PaymentMethod: "bkash", MerchantID: merchantID,
		})
		if want == "" {
			return err
		}
		if engine.ErrorCode(err) != want {
			return fmt.Errorf("a withdrawal of %s: %v, want %s", from, err, want)
		}
		return nil
	})
	if forbidden.transactions >= 0.5 {
		t.Errorf("withdrawals with refusals of organizations among them: %.2f write transactions each: the refusals break shared commits up", forbidden.transactions)
	}
	// Withdrawals at once, every other one reusing a merchant_id taken
	// before: merchant_id_exists for those, and the others still share
	// commits. A reuse is anyone's to send.
	reused := measure(32, true, func(i int) error {
		merchantID := withdrawn[i/2]
		if i%2 == 0 {
			mu.Lock()
			seq++
			merchantID = fmt.Sprintf("n-%d", seq)
			mu.Unlock()
		}
		_, err := eng.CreateWithdrawal(ctx, engine.CreateWithdrawalParams{
			OrganizationID: org, Amount: "100", Phone: "01712345678", PaymentMethod: "bkash", MerchantID: merchantID,
		})
		if i%2 == 1 {
			if engine.ErrorCode(err) != engine.CodeMerchantIDExists {
				return fmt.Errorf("a reused merchant_id: %v", err)
			}
			return nil
		}
		return err
	})
	if reused.transactions >= 0.5 {
		t.Errorf("withdrawals with reused merchant_ids among them: %.2f write transactions each: the reuses break shared commits up", reused.transactions)
	}
	t.Logf("32 withdrawals at once, half reusing a merchant_id: %s", reused)
	if r := refusedRun(); r.transactions >= 0.5 {
		t.Errorf("submissions with refusals among them: %.2f write transactions each: the refusals break shared commits up", r.transactions)
	} else {
		t.Logf("32 submissions at once, half refused: %s", r)
	}
	// A payout's step and its claim share commits: not one transaction a
	// payout besides the claims (as before payout steps were batched).
	if p32.transactions >= 0.5 {
		t.Errorf("payout: %.2f write transactions each when 32 are paid out at once: its steps do not share commits", p32.transactions)
	}
	check, err := eng.VerifyLedger(ctx)
	if err != nil || len(check.Differences) > 0 {
		t.Fatalf("ledger check: %v, %+v", err, check)
	}
	journals, err := eng.ListJournals(ctx, org)
	if err != nil {
		t.Fatal(err)
	}
	if len(journals) != 1+40+40+40+16+16+16 {
		t.Fatalf("%d journals, want the float, 40 credits, 40 holds, 40 settlements and 48 more holds", len(journals))
	}
}

// txIDOf is the transaction ID that pays d, as submissions normalize it.
func txIDOf(d *engine.Deposit) string { return strings.ToUpper("TX" + d.ID[len(d.ID)-10:]) }

// engineWithWorkers is an engine over store whose worker checks claimed
// attempts workers at a time and claims as many.
func engineWithWorkers(t *testing.T, store engine.Store, p engine.Provider, k *engine.Keyring, workers int) *engine.Engine {
	t.Helper()
	eng, err := engine.New(engine.Config{Store: store, Provider: p, Keyring: k, WorkerConcurrency: workers, ClaimBatch: workers})
	if err != nil {
		t.Fatal(err)
	}
	return eng
}

// CreateDeposit creates an organization with a wallet and one signed H2H
// deposit of it through the engine, as the API does, and returns the
// deposit's ID: the row whose index entries a store's test counts.
func CreateDeposit(t *testing.T, store engine.Store) string {
	t.Helper()
	ctx := context.Background()
	keyring, err := engine.NewKeyring(make([]byte, engine.MasterKeySize))
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(engine.Config{Store: store, Provider: &paydmock.Provider{}, Keyring: keyring})
	if err != nil {
		t.Fatal(err)
	}
	yes, name := true, "Shop"
	creds, err := eng.CreateOrganization(ctx, engine.OrganizationSettings{Name: &name, H2HEnabled: &yes})
	if err != nil {
		t.Fatal(err)
	}
	org := creds.Organization.ID
	if _, err := eng.AddWallet(ctx, engine.AddWalletParams{OrganizationID: org, Channel: "bkash", Operation: "cash_out", Phone: "01811111111"}); err != nil {
		t.Fatal(err)
	}
	d, _, err := eng.CreateDeposit(ctx, engine.CreateDepositParams{
		OrganizationID: org, CheckoutMode: "h2h", Amount: "500", PaymentMethod: "bkash_agent",
		RedirectURL: "https://shop.example/r", MerchantID: "m-1", PayerPhone: "01712345678",
	})
	if err != nil {
		t.Fatal(err)
	}
	return d.ID
}

// Index is an index of a table and whether a signed H2H deposit create
// writes an entry to it (a partial index whose condition its row does not
// meet gets none).
type Index struct {
	Name    string
	Written bool
}

// CheckIndexes compares the indexes of table that the store reports (got)
// with wantWritten (written by a create or not, by name), exactly, and logs how many entries a create writes. An index
// added to a table a create writes, or a partial one that starts to take
// its rows, fails the test until want and BENCHMARKS.md say so: each entry
// is a B-tree insert of every create, and on Postgres of every update
// that changes an indexed column too.
func CheckIndexes(t *testing.T, table string, got []Index, wantWritten map[string]bool) {
	t.Helper()
	var want []Index
	for name, written := range wantWritten {
		want = append(want, Index{Name: name, Written: written})
	}
	slices.SortFunc(got, func(a, b Index) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(want, func(a, b Index) int { return strings.Compare(a.Name, b.Name) })
	written := 0
	for _, ix := range got {
		if ix.Written {
			written++
		}
	}
	t.Logf("%s: %d indexes, %d written by a signed H2H create: %v", table, len(got), written, got)
	if !slices.Equal(got, want) {
		t.Errorf("%s: indexes %v, want %v: an index changed on a table a create writes; update the expected list and BENCHMARKS.md (index entries per create)", table, got, want)
	}
}

// CreateWithdrawal creates an organization with withdrawals on and a
// balance, and one withdrawal of it through the engine, as the API does,
// and returns the withdrawal's ID and its hold journal's: the rows whose
// index entries a store's test counts.
func CreateWithdrawal(t *testing.T, store engine.Store) (withdrawalID, journalID string) {
	t.Helper()
	ctx := context.Background()
	keyring, err := engine.NewKeyring(make([]byte, engine.MasterKeySize))
	if err != nil {
		t.Fatal(err)
	}
	provider := &paydmock.Provider{CheckPayoutMethodFunc: func(context.Context, string) error { return nil }}
	eng, err := engine.New(engine.Config{Store: store, Provider: provider, Keyring: keyring})
	if err != nil {
		t.Fatal(err)
	}
	yes, name := true, "Shop"
	creds, err := eng.CreateOrganization(ctx, engine.OrganizationSettings{Name: &name, WithdrawalsEnabled: &yes})
	if err != nil {
		t.Fatal(err)
	}
	org := creds.Organization.ID
	if _, err := eng.AdjustBalance(ctx, engine.AdjustParams{OrganizationID: org, Amount: "1000", Reason: "float", Actor: "test"}); err != nil {
		t.Fatal(err)
	}
	w, err := eng.CreateWithdrawal(ctx, engine.CreateWithdrawalParams{
		OrganizationID: org, Amount: "100", Phone: "01712345678", PaymentMethod: "bkash", MerchantID: "w-1",
		Metadata: []byte(`{"order":"A-1"}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	journals, err := eng.ListJournals(ctx, org)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range journals {
		if j.Reference == w.ID {
			return w.ID, j.ID
		}
	}
	t.Fatalf("no journal of withdrawal %s", w.ID)
	return "", ""
}

// WithdrawalTable is a table a withdrawal create inserts into, with the
// column that finds the create's rows: the withdrawal's ID, or its hold
// journal's (ByJournal). The create also adds to two account_balances
// rows, which it updates in place: no index of theirs changes.
type WithdrawalTable struct {
	Table, Column string
	ByJournal     bool
}

// WithdrawalTables are the tables a withdrawal create inserts into.
var WithdrawalTables = []WithdrawalTable{
	{"withdrawals", "id", false},
	{"events", "resource_id", false},
	{"journals", "id", true},
	{"ledger_entries", "journal_id", true},
	{"balance_transactions", "journal_id", true},
}

// TableEntries is what a create wrote to a table: its rows and, for each
// index, the entries (a partial index gets one for each row that meets
// its condition).
type TableEntries struct {
	Rows    int
	Indexes map[string]int
}

// CheckWithdrawalIndexes compares what a withdrawal create wrote (got, by
// table) with want, exactly: the rows of each table and the entries of
// each of its indexes. An index added to one of these tables, a partial
// one that starts to take the create's rows, or a row more (another
// event, another movement) fails it until want and BENCHMARKS.md say so:
// each is a B-tree insert of every withdrawal create. It logs the total:
// the rows (a table B-tree or heap each) and the index entries.
func CheckWithdrawalIndexes(t *testing.T, got, want map[string]TableEntries) {
	t.Helper()
	total := 0
	for _, tb := range WithdrawalTables {
		g := got[tb.Table]
		total += g.Rows
		for _, n := range g.Indexes {
			total += n
		}
		t.Logf("%s: %d rows, index entries %v", tb.Table, g.Rows, g.Indexes)
		if w := want[tb.Table]; g.Rows != w.Rows || !maps.Equal(g.Indexes, w.Indexes) {
			t.Errorf("%s: a withdrawal create wrote %d rows and index entries %v, want %d and %v: update the expected list and BENCHMARKS.md (index entries per withdrawal create)",
				tb.Table, g.Rows, g.Indexes, w.Rows, w.Indexes)
		}
	}
	t.Logf("a withdrawal create writes %d rows and index entries in all", total)
}
