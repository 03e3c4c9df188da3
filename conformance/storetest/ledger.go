package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/shopspring/decimal"
)

func listJournals(t *testing.T, s Store, orgID string) []*engine.Journal {
	t.Helper()
	return get(t, s, func(ctx context.Context, tx engine.Tx) ([]*engine.Journal, error) { return tx.ListJournals(ctx, orgID) })
}

// accountBalances returns the organization's balance rows, after checking
// in the same snapshot that they are what its entries sum to.
func accountBalances(t *testing.T, s Store, orgID string) map[string]decimal.Decimal {
	t.Helper()
	var balances, sums map[string]decimal.Decimal
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		var err error
		if balances, err = tx.AccountBalances(ctx, orgID); err != nil {
			return err
		}
		sums, err = tx.SumEntries(ctx, orgID)
		return err
	})
	if !sameAmounts(balances, sums) {
		t.Errorf("balances of %s = %v, but the entries sum to %v", orgID, balances, sums)
	}
	return balances
}

// sameAmounts compares two account maps exactly, keys included.
func sameAmounts(a, b map[string]decimal.Decimal) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !v.Equal(w) {
			return false
		}
	}
	return true
}

func testJournalRoundTrip(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1", "org_2")
	j1 := &engine.Journal{
		ID: "jnl_1", OrganizationID: "org_1", Kind: engine.JournalDepositCredit, Reference: "dep_1",
		Memo: "deposit order-1 ☃", CreatedAt: base,
		Entries: []engine.Entry{
			{Account: engine.AccountExternal, Amount: dec("-1000")},
			{Account: engine.AccountAvailable, Amount: dec("987.66")},
			{Account: engine.AccountFees, Amount: dec("12.34")},
		},
	}
	// Entry order is kept even where it is not alphabetical.
	j0 := &engine.Journal{
		ID: "jnl_0", OrganizationID: "org_1", Kind: engine.JournalDepositCredit, Reference: "dep_2",
		CreatedAt: base.Add(time.Second),
		Entries: []engine.Entry{
			{Account: engine.AccountFees, Amount: dec("0.01")},
			{Account: engine.AccountAvailable, Amount: dec("-0.01")},
		},
	}
	empty := &engine.Journal{ID: "jnl_2", OrganizationID: "org_1", Kind: "note", CreatedAt: base.Add(2 * time.Second)}
	other := &engine.Journal{
		ID: "jnl_3", OrganizationID: "org_2", Kind: engine.JournalDepositCredit, Reference: "dep_3", CreatedAt: base,
		Entries: []engine.Entry{{Account: engine.AccountExternal, Amount: dec("-5")}, {Account: engine.AccountAvailable, Amount: dec("5.00")}},
	}
	create(t, s, engine.Tx.CreateJournal, j1, j0, empty, other)
	// A journal without entries reads back with none (nil or empty).
	assertEqual(t, listJournals(t, s, "org_1"), []*engine.Journal{j1, j0, empty})
	if list := listJournals(t, s, "org_3"); len(list) != 0 {
		t.Errorf("ListJournals(org_3) = %v", list)
	}
	assertBalances(t, accountBalances(t, s, "org_1"), map[string]string{
		engine.AccountExternal: "-1000", engine.AccountAvailable: "987.65", engine.AccountFees: "12.35",
	})
	if b := accountBalances(t, s, "org_3"); len(b) != 0 {
		t.Errorf("AccountBalances(org_3) = %v", b)
	}

	wantDuplicate(t, "duplicate journal",
		try(s, engine.Tx.CreateJournal, &engine.Journal{ID: "jnl_1", OrganizationID: "org_1", CreatedAt: base}))
}

func testJournalActor(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1")
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
	create(t, s, engine.Tx.CreateJournal, manual, auto)
	assertEqual(t, listJournals(t, s, "org_1"), []*engine.Journal{manual, auto})
}

func testAccountBalancesExact(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1")
	cent := dec("0.01")
	js := make([]*engine.Journal, 1000)
	for i := range js {
		js[i] = &engine.Journal{
			ID: fmt.Sprintf("jnl_%04d", i), OrganizationID: "org_1", Kind: "test", CreatedAt: base,
			Entries: []engine.Entry{{Account: engine.AccountExternal, Amount: cent.Neg()}, {Account: engine.AccountAvailable, Amount: cent}},
		}
	}
	create(t, s, engine.Tx.CreateJournal, js...)
	b := accountBalances(t, s, "org_1")
	assertBalances(t, b, map[string]string{engine.AccountAvailable: "10.00", engine.AccountExternal: "-10"})
	if got := b[engine.AccountAvailable].StringFixed(2); got != "10.00" {
		t.Errorf("available = %s, want 10.00", got)
	}
}

// The store keeps money exact; rounding is the engine's business.
func testJournalRejectsSubPoisha(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1")
	journal := func(amount string) *engine.Journal {
		return &engine.Journal{
			ID: "jnl_1", OrganizationID: "org_1", Kind: "test", CreatedAt: base,
			Entries: []engine.Entry{{Account: engine.AccountAvailable, Amount: dec(amount)}},
		}
	}
	for _, amount := range []string{"12.345", "0.001", "-0.005"} {
		wantInternal(t, "entry of "+amount, try(s, engine.Tx.CreateJournal, journal(amount)))
	}
	// Nothing of the failed journals remains; trailing zeros are fine.
	create(t, s, engine.Tx.CreateJournal, journal("12.3400"))
	assertBalances(t, accountBalances(t, s, "org_1"), map[string]string{engine.AccountAvailable: "12.34"})
}

// Balance rows follow every journal: totals of an account named twice in
// one journal, entries in any order, several organizations; a journal
// without entries, a duplicate and a rolled-back transaction change none.
func testBalancesFollowJournals(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1", "org_2")
	create(t, s, engine.Tx.CreateJournal,
		&engine.Journal{
			ID: "jnl_1", OrganizationID: "org_1", Kind: engine.JournalDepositCredit, CreatedAt: base,
			Entries: []engine.Entry{
				{Account: engine.AccountFees, Amount: dec("2.50")},
				{Account: engine.AccountAvailable, Amount: dec("100")},
				{Account: engine.AccountExternal, Amount: dec("-105")},
				{Account: engine.AccountAvailable, Amount: dec("2.50")},
			},
		},
		&engine.Journal{
			ID: "jnl_2", OrganizationID: "org_2", Kind: engine.JournalAdjustment, CreatedAt: base,
			Entries: []engine.Entry{{Account: engine.AccountAdjustments, Amount: dec("-7")}, {Account: engine.AccountAvailable, Amount: dec("7")}},
		},
		&engine.Journal{
			ID: "jnl_3", OrganizationID: "org_1", Kind: engine.JournalWithdrawalHold, CreatedAt: base,
			Entries: []engine.Entry{{Account: engine.AccountHeld, Amount: dec("40")}, {Account: engine.AccountAvailable, Amount: dec("-40")}},
		},
		// An account's entries may cancel out: its row stays, at zero.
		&engine.Journal{
			ID: "jnl_4", OrganizationID: "org_1", Kind: "test", CreatedAt: base,
			Entries: []engine.Entry{{Account: "suspense", Amount: dec("1")}, {Account: "suspense", Amount: dec("-1")}},
		},
		&engine.Journal{ID: "jnl_5", OrganizationID: "org_1", Kind: "note", CreatedAt: base},
	)
	want1 := map[string]string{
		engine.AccountFees: "2.5", engine.AccountAvailable: "62.5", engine.AccountExternal: "-105",
		engine.AccountHeld: "40", "suspense": "0",
	}
	assertBalances(t, accountBalances(t, s, "org_1"), want1)
	assertBalances(t, accountBalances(t, s, "org_2"), map[string]string{engine.AccountAdjustments: "-7", engine.AccountAvailable: "7"})

	wantDuplicate(t, "duplicate journal", try(s, engine.Tx.CreateJournal, &engine.Journal{
		ID: "jnl_1", OrganizationID: "org_1", Kind: "test", CreatedAt: base,
		Entries: []engine.Entry{{Account: engine.AccountExternal, Amount: dec("-1")}, {Account: engine.AccountAvailable, Amount: dec("1")}},
	}))
	errRollback := errors.New("roll back")
	err := s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
		err := tx.CreateJournal(ctx, &engine.Journal{
			ID: "jnl_6", OrganizationID: "org_1", Kind: "test", CreatedAt: base,
			Entries: []engine.Entry{{Account: engine.AccountExternal, Amount: dec("-1000")}, {Account: engine.AccountAvailable, Amount: dec("1000")}},
		})
		if err != nil {
			return err
		}
		// Inside the transaction the rows already count it.
		b, err := tx.AccountBalances(ctx, "org_1")
		if err == nil && !b[engine.AccountAvailable].Equal(dec("1062.5")) {
			t.Errorf("available inside the journal's transaction = %s, want 1062.50", b[engine.AccountAvailable])
		}
		return errRollback
	})
	if !errors.Is(err, errRollback) {
		t.Fatalf("InTx = %v", err)
	}
	assertBalances(t, accountBalances(t, s, "org_1"), want1)
}

// Journals written at once from many goroutines, in entry orders that
// differ, add up exactly; every snapshot of the balance rows sums to zero
// (a journal's rows commit together); and the withdrawal gate, run under
// the organization's lock while credits land on the same available row
// without it, never takes available below zero.
func testConcurrentJournals(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1", "org_2")
	const writers, perWriter = 6, 15
	var wg sync.WaitGroup
	done := make(chan struct{})
	var reads sync.WaitGroup
	reads.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			var b map[string]decimal.Decimal
			err := s.ReadTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
				var err error
				b, err = tx.AccountBalances(ctx, "org_1")
				return err
			})
			if err != nil {
				t.Errorf("read: %v", err)
				return
			}
			total := decimal.Zero
			for _, v := range b {
				total = total.Add(v)
			}
			if !total.IsZero() {
				t.Errorf("a snapshot of the balance rows sums to %s: %v", total, b)
				return
			}
			if b[engine.AccountAvailable].IsNegative() {
				t.Errorf("available went negative: %v", b)
				return
			}
		}
	})
	holds := make([]int, writers)
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				id := fmt.Sprintf("jnl_%d_%02d", w, i)
				var err error
				switch {
				case w%2 == 0: // credits: 10 in, 0.25 of it a fee, entries in either order
					entries := []engine.Entry{
						{Account: engine.AccountExternal, Amount: dec("-10")},
						{Account: engine.AccountAvailable, Amount: dec("9.75")},
						{Account: engine.AccountFees, Amount: dec("0.25")},
					}
					if i%2 == 1 {
						entries[0], entries[2] = entries[2], entries[0]
					}
					org := "org_1"
					if i%5 == 4 {
						org = "org_2"
					}
					err = try(s, engine.Tx.CreateJournal, &engine.Journal{ID: id, OrganizationID: org, Kind: engine.JournalDepositCredit, CreatedAt: base, Entries: entries})
				default: // withdrawal holds of 7 under the lock, if available covers them
					err = s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
						if _, err := tx.LockOrganization(ctx, "org_1"); err != nil {
							return err
						}
						b, err := tx.AccountBalances(ctx, "org_1")
						if err != nil || b[engine.AccountAvailable].LessThan(dec("7")) {
							return err
						}
						if err := tx.CreateJournal(ctx, &engine.Journal{
							ID: id, OrganizationID: "org_1", Kind: engine.JournalWithdrawalHold, CreatedAt: base,
							Entries: []engine.Entry{{Account: engine.AccountHeld, Amount: dec("7")}, {Account: engine.AccountAvailable, Amount: dec("-7")}},
						}); err != nil {
							return err
						}
						holds[w]++ // after the insert: a retried run rolled back its count with its journal
						return nil
					})
				}
				if err != nil {
					t.Errorf("journal %s: %v", id, err)
				}
			}
		})
	}
	wg.Wait()
	close(done)
	reads.Wait()
	held := 0
	for _, h := range holds {
		held += h
	}
	credits1, credits2 := 0, 0
	for w := 0; w < writers; w += 2 {
		for i := range perWriter {
			if i%5 == 4 {
				credits2++
			} else {
				credits1++
			}
		}
	}
	b1 := accountBalances(t, s, "org_1")
	available := dec("9.75").Mul(decimal.NewFromInt(int64(credits1))).Sub(dec("7").Mul(decimal.NewFromInt(int64(held))))
	want := map[string]string{
		engine.AccountExternal:  decimal.NewFromInt(int64(-10 * credits1)).String(),
		engine.AccountFees:      dec("0.25").Mul(decimal.NewFromInt(int64(credits1))).String(),
		engine.AccountAvailable: available.String(),
	}
	if held > 0 {
		want[engine.AccountHeld] = decimal.NewFromInt(int64(7 * held)).String()
	}
	assertBalances(t, b1, want)
	if available.IsNegative() {
		t.Errorf("available %s after %d holds", available, held)
	}
	if held == 0 {
		t.Error("no hold went through: the test proved nothing of the gate")
	}
	assertBalances(t, accountBalances(t, s, "org_2"), map[string]string{
		engine.AccountExternal:  decimal.NewFromInt(int64(-10 * credits2)).String(),
		engine.AccountAvailable: dec("9.75").Mul(decimal.NewFromInt(int64(credits2))).String(),
		engine.AccountFees:      dec("0.25").Mul(decimal.NewFromInt(int64(credits2))).String(),
	})
}

// CreateJournals (engine.JournalsCreator, for a store that has it) writes
// what a CreateJournal of each would: journals and entries as given, and
// balance rows by the sums, over several organizations, with an account
// named in several journals and a journal without entries. A duplicate ID
// or an amount that is not whole poisha fails it and leaves nothing.
func testCreateJournals(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1", "org_2")
	createJournals := func(js ...*engine.Journal) error {
		return s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
			jc, ok := tx.(engine.JournalsCreator)
			if !ok {
				return errSkip
			}
			return jc.CreateJournals(ctx, js)
		})
	}
	journal := func(id, org string, at time.Duration, entries ...string) *engine.Journal {
		j := &engine.Journal{ID: id, OrganizationID: org, Kind: engine.JournalDepositCredit, Reference: "ref " + id, Memo: "memo " + id, CreatedAt: base.Add(at)}
		for i := 0; i < len(entries); i += 2 {
			j.Entries = append(j.Entries, engine.Entry{Account: entries[i], Amount: dec(entries[i+1])})
		}
		return j
	}
	j1 := journal("jnl_1", "org_1", 0, engine.AccountExternal, "-1000", engine.AccountAvailable, "987.66", engine.AccountFees, "12.34")
	j2 := journal("jnl_2", "org_2", time.Second, engine.AccountExternal, "-5", engine.AccountAvailable, "5.00")
	j3 := journal("jnl_3", "org_1", 2*time.Second, engine.AccountAvailable, "-100.50", engine.AccountHeld, "100.50")
	j4 := journal("jnl_4", "org_1", 3*time.Second)
	j4.Actor = "ops"
	err := createJournals(j2, j1, j3, j4)
	if errors.Is(err, errSkip) {
		t.Skip("the store's Tx is no engine.JournalsCreator")
	}
	if err != nil {
		t.Fatal(err)
	}
	assertEqual(t, listJournals(t, s, "org_1"), []*engine.Journal{j1, j3, j4})
	assertEqual(t, listJournals(t, s, "org_2"), []*engine.Journal{j2})
	assertBalances(t, accountBalances(t, s, "org_1"), map[string]string{
		engine.AccountExternal: "-1000", engine.AccountAvailable: "887.16", engine.AccountFees: "12.34", engine.AccountHeld: "100.50",
	})
	assertBalances(t, accountBalances(t, s, "org_2"), map[string]string{engine.AccountExternal: "-5", engine.AccountAvailable: "5"})
	// Each journal's movements on the balance accounts carry the balance
	// right after it, as CreateJournal of each in turn would write them.
	for _, want := range []struct{ org, journal, account, amount, after string }{
		{"org_1", "jnl_1", engine.AccountAvailable, "987.66", "987.66"},
		{"org_1", "jnl_3", engine.AccountAvailable, "-100.50", "887.16"},
		{"org_1", "jnl_3", engine.AccountHeld, "100.50", "100.50"},
		{"org_2", "jnl_2", engine.AccountAvailable, "5.00", "5.00"},
	} {
		id := engine.BalanceTransactionID(want.journal, want.account)
		var bt *engine.BalanceTransaction
		err := s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) (err error) {
			bt, err = tx.GetBalanceTransaction(ctx, want.org, id)
			return err
		})
		if err != nil {
			t.Fatalf("balance transaction of %s on %s: %v", want.journal, want.account, err)
		}
		if !bt.Amount.Equal(dec(want.amount)) || !bt.BalanceAfter.Equal(dec(want.after)) || bt.JournalID != want.journal {
			t.Errorf("balance transaction of %s on %s: %s after %s, want %s after %s", want.journal, want.account,
				bt.Amount, bt.BalanceAfter, want.amount, want.after)
		}
	}

	// A duplicate ID, or an entry below a poisha, anywhere in the batch.
	fresh := journal("jnl_5", "org_1", 4*time.Second, engine.AccountExternal, "-1", engine.AccountAvailable, "1")
	wantDuplicate(t, "journal jnl_1 again", createJournals(fresh, journal("jnl_1", "org_1", 0, engine.AccountExternal, "-1", engine.AccountAvailable, "1")))
	wantInternal(t, "entry of 0.001", createJournals(fresh, journal("jnl_6", "org_2", 0, engine.AccountExternal, "-0.001", engine.AccountAvailable, "0.001")))
	assertEqual(t, listJournals(t, s, "org_1"), []*engine.Journal{j1, j3, j4})
	assertBalances(t, accountBalances(t, s, "org_2"), map[string]string{engine.AccountExternal: "-5", engine.AccountAvailable: "5"})
}

var errSkip = errors.New("skip")
