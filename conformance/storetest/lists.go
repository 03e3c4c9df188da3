package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
)

// The lists: keyset pages, newest first, one organization's, so that a
// page costs the same at any history and another organization's rows never
// show.

// pager reads one page of a list.
type pager[T any] func(tx engine.Tx, ctx context.Context, p engine.PageParams) ([]T, error)

// page reads one page and returns its IDs joined by commas.
func page[T any](t *testing.T, s Store, list pager[T], id func(T) string, p engine.PageParams) string {
	t.Helper()
	rows := get(t, s, func(ctx context.Context, tx engine.Tx) ([]T, error) { return list(tx, ctx, p) })
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = id(r)
	}
	return strings.Join(ids, ",")
}

// walk pages through a list limit rows at a time, forward (After) from the
// newest or backward (Before) from the oldest, and returns the IDs in
// newest-first order. It fails on a page that repeats or reorders a row.
func walk[T any](t *testing.T, s Store, list pager[T], cursor func(T) engine.PageCursor, p engine.PageParams, backward bool) []string {
	t.Helper()
	var ids []string
	seen := map[string]bool{}
	if backward {
		p.Before = &engine.PageCursor{CreatedAt: base.Add(-time.Hour)} // before every row
	}
	for range 1000 {
		rows := get(t, s, func(ctx context.Context, tx engine.Tx) ([]T, error) { return list(tx, ctx, p) })
		if len(rows) > p.Limit {
			t.Fatalf("page of %d rows, limit %d", len(rows), p.Limit)
		}
		for _, r := range rows {
			c := cursor(r)
			if seen[c.ID] {
				t.Fatalf("%s twice", c.ID)
			}
			seen[c.ID] = true
			ids = append(ids, c.ID)
		}
		if len(rows) < p.Limit {
			if backward {
				slices.Reverse(ids)
			}
			return ids
		}
		last := cursor(rows[len(rows)-1])
		if backward {
			p.Before = &last
		} else {
			p.After = &last
		}
	}
	t.Fatal("walk did not end")
	return nil
}

func depositCursor(d *engine.Deposit) engine.PageCursor {
	return engine.PageCursor{CreatedAt: d.CreatedAt, ID: d.ID}
}
func withdrawalCursor(w *engine.Withdrawal) engine.PageCursor {
	return engine.PageCursor{CreatedAt: w.CreatedAt, ID: w.ID}
}
func eventCursor(e *engine.Event) engine.PageCursor {
	return engine.PageCursor{CreatedAt: e.CreatedAt, ID: e.ID}
}
func btCursor(b *engine.BalanceTransaction) engine.PageCursor {
	return engine.PageCursor{CreatedAt: b.CreatedAt, ID: b.ID}
}

// listFixtureDeposits creates org_1's deposits d0..d(n-1), created a
// second apart but in threes at the same microsecond (ties broken by ID),
// and as many of org_2's at the same times, which must never show.
func listFixtureDeposits(t *testing.T, s Store, n int) []*engine.Deposit {
	t.Helper()
	mustOrgs(t, s, "org_1", "org_2")
	var mine, theirs []*engine.Deposit
	for i := range n {
		at := base.Add(time.Duration(i/3) * time.Second)
		d := newDeposit(fmt.Sprintf("dep_%02d", i), "org_1", fmt.Sprintf("m_%02d", i))
		d.CreatedAt = at
		d.Status = []string{engine.StatusPending, engine.StatusSucceeded, engine.StatusFailed}[i%3]
		d.PaymentMethod = []string{"bkash", "nagad"}[i%2]
		if d.Status == engine.StatusSucceeded {
			d.ProviderTransactionID = fmt.Sprintf("TX%02d", i)
		}
		mine = append(mine, d)
		o := newDeposit(fmt.Sprintf("dep_%02dx", i), "org_2", fmt.Sprintf("m_%02d", i))
		o.CreatedAt, o.Status, o.PaymentMethod, o.ProviderTransactionID = at, d.Status, d.PaymentMethod, d.ProviderTransactionID
		theirs = append(theirs, o)
	}
	create(t, s, engine.Tx.CreateDeposit, append(mine, theirs...)...)
	return mine
}

// newestFirst returns the IDs of rows ordered newest first, keeping those
// that match.
func newestFirst[T any](rows []T, cursor func(T) engine.PageCursor, match func(T) bool) []string {
	var cs []engine.PageCursor
	for _, r := range rows {
		if match(r) {
			cs = append(cs, cursor(r))
		}
	}
	slices.SortFunc(cs, func(a, b engine.PageCursor) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	ids := make([]string, len(cs))
	for i, c := range cs {
		ids[i] = c.ID
	}
	return ids
}

func testListDepositsPage(t *testing.T, s Store) {
	ds := listFixtureDeposits(t, s, 20)
	list := pager[*engine.Deposit](engine.Tx.ListDepositsPage)
	all := newestFirst(ds, depositCursor, func(*engine.Deposit) bool { return true })
	org1 := engine.PageParams{OrganizationID: "org_1", Limit: 100}
	if got, want := page(t, s, list, func(d *engine.Deposit) string { return d.ID }, org1), strings.Join(all, ","); got != want {
		t.Errorf("all = %s, want %s", got, want)
	}
	// Every page size, forward and backward, reads each row once in order.
	for _, limit := range []int{1, 2, 3, 7, 20, 21} {
		p := org1
		p.Limit = limit
		for _, backward := range []bool{false, true} {
			if got := walk(t, s, list, depositCursor, p, backward); !slices.Equal(got, all) {
				t.Errorf("walk limit %d backward %v = %v, want %v", limit, backward, got, all)
			}
		}
	}
	// A round trip keeps every field.
	byID := map[string]*engine.Deposit{}
	for _, d := range get(t, s, func(ctx context.Context, tx engine.Tx) ([]*engine.Deposit, error) {
		return tx.ListDepositsPage(ctx, org1)
	}) {
		byID[d.ID] = d
	}
	for _, d := range ds {
		assertEqual(t, byID[d.ID], d)
	}

	at := func(i int) time.Time { return base.Add(time.Duration(i) * time.Second) }
	for _, c := range []struct {
		name  string
		p     engine.PageParams
		match func(d *engine.Deposit) bool
	}{
		{"status", engine.PageParams{Status: engine.StatusSucceeded}, func(d *engine.Deposit) bool { return d.Status == engine.StatusSucceeded }},
		{"method", engine.PageParams{PaymentMethod: "nagad"}, func(d *engine.Deposit) bool { return d.PaymentMethod == "nagad" }},
		{"status and method", engine.PageParams{Status: engine.StatusPending, PaymentMethod: "bkash"},
			func(d *engine.Deposit) bool { return d.Status == engine.StatusPending && d.PaymentMethod == "bkash" }},
		{"merchant_id", engine.PageParams{MerchantID: "m_07"}, func(d *engine.Deposit) bool { return d.MerchantID == "m_07" }},
		{"provider transaction", engine.PageParams{ProviderTransactionID: "TX04"}, func(d *engine.Deposit) bool { return d.ProviderTransactionID == "TX04" }},
		{"created range", engine.PageParams{CreatedGTE: at(2), CreatedLT: at(5)},
			func(d *engine.Deposit) bool { return !d.CreatedAt.Before(at(2)) && d.CreatedAt.Before(at(5)) }},
		{"status and range", engine.PageParams{Status: engine.StatusFailed, CreatedGTE: at(1)},
			func(d *engine.Deposit) bool { return d.Status == engine.StatusFailed && !d.CreatedAt.Before(at(1)) }},
		{"nothing", engine.PageParams{MerchantID: "m_99"}, func(*engine.Deposit) bool { return false }},
	} {
		want := newestFirst(ds, depositCursor, c.match)
		if len(want) == 0 && c.name != "nothing" {
			t.Fatalf("%s: the fixture matches nothing", c.name)
		}
		p := c.p
		p.OrganizationID = "org_1"
		for _, limit := range []int{1, 2, 100} {
			p.Limit = limit
			for _, backward := range []bool{false, true} {
				if got := walk(t, s, list, depositCursor, p, backward); !slices.Equal(got, want) {
					t.Errorf("%s, limit %d, backward %v = %v, want %v", c.name, limit, backward, got, want)
				}
			}
		}
	}

	// Another organization's rows never show, whatever the filter or
	// cursor: a cursor is a position, so org_2's row as cursor pages org_1.
	theirs := &engine.PageCursor{CreatedAt: at(3), ID: "dep_09x"}
	for _, p := range []engine.PageParams{
		{OrganizationID: "org_1", MerchantID: "m_01", Limit: 10},
		{OrganizationID: "org_1", After: theirs, Limit: 100},
		{OrganizationID: "org_1", Before: theirs, Limit: 100},
		{OrganizationID: "org_1", ProviderTransactionID: "TX01", Limit: 10},
	} {
		for _, d := range get(t, s, func(ctx context.Context, tx engine.Tx) ([]*engine.Deposit, error) { return tx.ListDepositsPage(ctx, p) }) {
			if d.OrganizationID != "org_1" {
				t.Errorf("%+v listed %s of %s", p, d.ID, d.OrganizationID)
			}
		}
	}
	if got := page(t, s, list, func(d *engine.Deposit) string { return d.ID }, engine.PageParams{OrganizationID: "org_9", Limit: 10}); got != "" {
		t.Errorf("unknown organization listed %s", got)
	}
	if got := page(t, s, list, func(d *engine.Deposit) string { return d.ID }, engine.PageParams{OrganizationID: "org_1", Limit: 0}); got != "" {
		t.Errorf("limit 0 listed %s", got)
	}
}

func testListWithdrawalsPage(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1", "org_2")
	var ws []*engine.Withdrawal
	for i := range 9 {
		w := newWithdrawal(fmt.Sprintf("wd_%02d", i), "org_1", fmt.Sprintf("m_%02d", i))
		w.CreatedAt = base.Add(time.Duration(i/2) * time.Second)
		w.Status = []string{engine.WithdrawalProcessing, engine.WithdrawalSucceeded, engine.WithdrawalFailed}[i%3]
		w.PaymentMethod = []string{"bkash", "nagad", "upay"}[i%3]
		if w.Status == engine.WithdrawalSucceeded {
			w.ProviderReference = fmt.Sprintf("REF%d", i)
		}
		ws = append(ws, w)
		o := newWithdrawal(fmt.Sprintf("wd_%02dx", i), "org_2", w.MerchantID)
		o.CreatedAt, o.Status, o.ProviderReference = w.CreatedAt, w.Status, w.ProviderReference
		ws = append(ws, o)
	}
	create(t, s, engine.Tx.CreateWithdrawal, ws...)
	list := pager[*engine.Withdrawal](engine.Tx.ListWithdrawalsPage)
	mine := func(w *engine.Withdrawal) bool { return w.OrganizationID == "org_1" }
	for _, c := range []struct {
		name  string
		p     engine.PageParams
		match func(w *engine.Withdrawal) bool
	}{
		{"all", engine.PageParams{}, func(*engine.Withdrawal) bool { return true }},
		{"status", engine.PageParams{Status: engine.WithdrawalFailed}, func(w *engine.Withdrawal) bool { return w.Status == engine.WithdrawalFailed }},
		{"method", engine.PageParams{PaymentMethod: "upay"}, func(w *engine.Withdrawal) bool { return w.PaymentMethod == "upay" }},
		{"merchant_id", engine.PageParams{MerchantID: "m_03"}, func(w *engine.Withdrawal) bool { return w.MerchantID == "m_03" }},
		{"provider reference", engine.PageParams{ProviderTransactionID: "REF4"}, func(w *engine.Withdrawal) bool { return w.ProviderReference == "REF4" }},
		{"created", engine.PageParams{CreatedLT: base.Add(2 * time.Second)}, func(w *engine.Withdrawal) bool { return w.CreatedAt.Before(base.Add(2 * time.Second)) }},
	} {
		want := newestFirst(ws, withdrawalCursor, func(w *engine.Withdrawal) bool { return mine(w) && c.match(w) })
		p := c.p
		p.OrganizationID = "org_1"
		for _, limit := range []int{1, 4, 100} {
			p.Limit = limit
			for _, backward := range []bool{false, true} {
				if got := walk(t, s, list, withdrawalCursor, p, backward); !slices.Equal(got, want) {
					t.Errorf("%s, limit %d, backward %v = %v, want %v", c.name, limit, backward, got, want)
				}
			}
		}
	}
}

func testListEventsPage(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1", "org_2")
	var evs []*engine.Event
	types := []string{engine.EventDepositSucceeded, engine.EventWithdrawCreated, engine.EventDepositExpired}
	for i := range 12 {
		for _, org := range []string{"org_1", "org_2"} {
			e := newEvent(fmt.Sprintf("evt_%02d_%s", i, org), org)
			e.Type = types[i%3]
			e.ResourceID = fmt.Sprintf("dep_%d", i%4) // the same resource IDs in both organizations
			e.CreatedAt = base.Add(time.Duration(i/2) * time.Millisecond)
			evs = append(evs, e)
		}
	}
	create(t, s, engine.Tx.CreateEvent, evs...)
	list := pager[*engine.Event](engine.Tx.ListEventsPage)
	for _, c := range []struct {
		name  string
		p     engine.PageParams
		match func(e *engine.Event) bool
	}{
		{"all", engine.PageParams{}, func(*engine.Event) bool { return true }},
		{"type", engine.PageParams{Type: engine.EventWithdrawCreated}, func(e *engine.Event) bool { return e.Type == engine.EventWithdrawCreated }},
		{"resource", engine.PageParams{ResourceID: "dep_1"}, func(e *engine.Event) bool { return e.ResourceID == "dep_1" }},
		{"type and resource", engine.PageParams{ResourceID: "dep_0", Type: engine.EventDepositSucceeded},
			func(e *engine.Event) bool { return e.ResourceID == "dep_0" && e.Type == engine.EventDepositSucceeded }},
		{"created", engine.PageParams{CreatedGTE: base.Add(2 * time.Millisecond)}, func(e *engine.Event) bool { return !e.CreatedAt.Before(base.Add(2 * time.Millisecond)) }},
	} {
		want := newestFirst(evs, eventCursor, func(e *engine.Event) bool { return e.OrganizationID == "org_1" && c.match(e) })
		p := c.p
		p.OrganizationID = "org_1"
		for _, limit := range []int{1, 5, 100} {
			p.Limit = limit
			for _, backward := range []bool{false, true} {
				if got := walk(t, s, list, eventCursor, p, backward); !slices.Equal(got, want) {
					t.Errorf("%s, limit %d, backward %v = %v, want %v", c.name, limit, backward, got, want)
				}
			}
		}
	}
}

func testBalanceTransactions(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1", "org_2")
	at := func(i int) time.Time { return base.Add(time.Duration(i) * time.Second) }
	create(t, s, engine.Tx.CreateJournal,
		&engine.Journal{
			ID: "jnl_1", OrganizationID: "org_1", Kind: engine.JournalDepositCredit, Reference: "dep_1", CreatedAt: at(0),
			Entries: []engine.Entry{
				{Account: engine.AccountExternal, Amount: dec("-105")},
				{Account: engine.AccountAvailable, Amount: dec("100")},
				{Account: engine.AccountFees, Amount: dec("2.50")},
				{Account: engine.AccountAvailable, Amount: dec("2.50")},
			},
		},
		&engine.Journal{
			ID: "jnl_2", OrganizationID: "org_2", Kind: engine.JournalAdjustment, CreatedAt: at(0),
			Entries: []engine.Entry{{Account: engine.AccountAdjustments, Amount: dec("-7")}, {Account: engine.AccountAvailable, Amount: dec("7")}},
		},
		&engine.Journal{
			ID: "jnl_3", OrganizationID: "org_1", Kind: engine.JournalWithdrawalHold, Reference: "wd_1", CreatedAt: at(1),
			Entries: []engine.Entry{{Account: engine.AccountAvailable, Amount: dec("-40")}, {Account: engine.AccountHeld, Amount: dec("40")}},
		},
		&engine.Journal{
			ID: "jnl_4", OrganizationID: "org_1", Kind: engine.JournalWithdrawalSettle, Reference: "wd_1", CreatedAt: at(2),
			Entries: []engine.Entry{{Account: engine.AccountHeld, Amount: dec("-40")}, {Account: engine.AccountExternal, Amount: dec("40")}},
		},
		// Entries of other accounts only: no balance transaction.
		&engine.Journal{
			ID: "jnl_5", OrganizationID: "org_1", Kind: "test", CreatedAt: at(3),
			Entries: []engine.Entry{{Account: "suspense", Amount: dec("1")}, {Account: engine.AccountExternal, Amount: dec("-1")}},
		},
		&engine.Journal{
			ID: "jnl_6", OrganizationID: "org_1", Kind: engine.JournalAdjustment, Actor: "ops", CreatedAt: at(4),
			Entries: []engine.Entry{{Account: engine.AccountAdjustments, Amount: dec("0.01")}, {Account: engine.AccountAvailable, Amount: dec("-0.01")}},
		},
	)
	bt := func(journal, account, kind, ref, amount, after string, i int) *engine.BalanceTransaction {
		return &engine.BalanceTransaction{
			ID: engine.BalanceTransactionID(journal, account), OrganizationID: "org_1", Account: account,
			JournalID: journal, Kind: kind, Reference: ref, Amount: dec(amount), BalanceAfter: dec(after), CreatedAt: at(i),
		}
	}
	want := []*engine.BalanceTransaction{
		bt("jnl_6", engine.AccountAvailable, engine.JournalAdjustment, "", "-0.01", "62.49", 4),
		bt("jnl_4", engine.AccountHeld, engine.JournalWithdrawalSettle, "wd_1", "-40", "0", 2),
		bt("jnl_3", engine.AccountHeld, engine.JournalWithdrawalHold, "wd_1", "40", "40", 1),
		bt("jnl_3", engine.AccountAvailable, engine.JournalWithdrawalHold, "wd_1", "-40", "62.5", 1),
		bt("jnl_1", engine.AccountAvailable, engine.JournalDepositCredit, "dep_1", "102.5", "102.5", 0),
	}
	got := get(t, s, func(ctx context.Context, tx engine.Tx) ([]*engine.BalanceTransaction, error) {
		return tx.ListBalanceTransactions(ctx, engine.PageParams{OrganizationID: "org_1", Limit: 100})
	})
	assertEqual(t, got, want)
	if want[0].ID != "txn_6_available" {
		t.Errorf("ID = %s, want txn_6_available", want[0].ID)
	}
	list := pager[*engine.BalanceTransaction](engine.Tx.ListBalanceTransactions)
	for _, c := range []struct {
		p    engine.PageParams
		want string
	}{
		{engine.PageParams{Account: engine.AccountHeld}, "txn_4_held,txn_3_held"},
		{engine.PageParams{Account: engine.AccountAvailable, CreatedGTE: at(1)}, "txn_6_available,txn_3_available"},
		{engine.PageParams{After: &engine.PageCursor{CreatedAt: at(1), ID: "txn_3_held"}}, "txn_3_available,txn_1_available"},
	} {
		c.p.OrganizationID, c.p.Limit = "org_1", 10
		if got := page(t, s, list, func(b *engine.BalanceTransaction) string { return b.ID }, c.p); got != c.want {
			t.Errorf("%+v = %s, want %s", c.p, got, c.want)
		}
	}
	p := engine.PageParams{OrganizationID: "org_1", Limit: 2}
	if got := walk(t, s, list, btCursor, p, true); len(got) != len(want) {
		t.Errorf("walk backward = %v", got)
	}
	assertEqual(t, get(t, s, func(ctx context.Context, tx engine.Tx) (*engine.BalanceTransaction, error) {
		return tx.GetBalanceTransaction(ctx, "org_1", "txn_3_held")
	}), want[2])
	wantNotFound(t, "another organization's balance transaction", try(s, func(tx engine.Tx, ctx context.Context, id string) error {
		_, err := tx.GetBalanceTransaction(ctx, "org_1", id)
		return err
	}, "txn_2_available"))
	// A journal that rolls back leaves no balance transaction.
	errRollback := errors.New("roll back")
	err := s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
		if err := tx.CreateJournal(ctx, &engine.Journal{
			ID: "jnl_7", OrganizationID: "org_1", Kind: engine.JournalAdjustment, CreatedAt: at(5),
			Entries: []engine.Entry{{Account: engine.AccountAdjustments, Amount: dec("-1")}, {Account: engine.AccountAvailable, Amount: dec("1")}},
		}); err != nil {
			return err
		}
		return errRollback
	})
	if !errors.Is(err, errRollback) {
		t.Fatal(err)
	}
	wantNotFound(t, "rolled back balance transaction", try(s, func(tx engine.Tx, ctx context.Context, id string) error {
		_, err := tx.GetBalanceTransaction(ctx, "org_1", id)
		return err
	}, "txn_7_available"))
}

// testConcurrentBalanceAfter: journals written by concurrent transactions
// each record the balance right after themselves: read in commit order
// (the balance after differs from the one before by the amount), the
// chain has no gap and ends at the balance row.
func testConcurrentBalanceAfter(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1")
	const writers, each = 4, 10
	errs := make(chan error, writers)
	for w := range writers {
		go func() {
			for i := range each {
				j := &engine.Journal{
					ID: fmt.Sprintf("jnl_%d_%02d", w, i), OrganizationID: "org_1", Kind: engine.JournalAdjustment, CreatedAt: base,
					Entries: []engine.Entry{{Account: engine.AccountAdjustments, Amount: dec("-1.01")}, {Account: engine.AccountAvailable, Amount: dec("1.01")}},
				}
				if err := s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error { return tx.CreateJournal(ctx, j) }); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range writers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	rows := get(t, s, func(ctx context.Context, tx engine.Tx) ([]*engine.BalanceTransaction, error) {
		return tx.ListBalanceTransactions(ctx, engine.PageParams{OrganizationID: "org_1", Limit: writers * each})
	})
	seen := map[string]bool{}
	for _, r := range rows {
		seen[r.BalanceAfter.String()] = true
	}
	for i := 1; i <= writers*each; i++ {
		if b := dec("1.01").Mul(dec(fmt.Sprint(i))); !seen[b.String()] {
			t.Errorf("no balance transaction left the balance at %s: %d rows", b, len(rows))
		}
	}
}
