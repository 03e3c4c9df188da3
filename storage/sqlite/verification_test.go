package sqlite_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/storage/sqlite"
	"github.com/shopspring/decimal"
)

func newAttempt(id, depositID, orgID, channel, transactionID string) *engine.Attempt {
	return &engine.Attempt{
		ID: id, DepositID: depositID, OrganizationID: orgID, Channel: channel, TransactionID: transactionID,
		Status: engine.AttemptProcessing, NextRunAt: base, CreatedAt: base, UpdatedAt: base,
	}
}

// createDeposits creates the organization and deposits dep_<name> of it.
func createDeposits(t *testing.T, s *sqlite.Store, orgID string, names ...string) {
	t.Helper()
	createOrg(t, s, orgID)
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		for _, n := range names {
			if err := tx.CreateDeposit(ctx, newDeposit("dep_"+n, orgID, "m_"+n)); err != nil {
				return err
			}
		}
		return nil
	})
}

func createAttempts(t *testing.T, s *sqlite.Store, as ...*engine.Attempt) {
	t.Helper()
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		for _, a := range as {
			if err := tx.CreateAttempt(ctx, a); err != nil {
				return fmt.Errorf("%s: %w", a.ID, err)
			}
		}
		return nil
	})
}

func TestAttemptRoundTrip(t *testing.T) {
	s, _ := openStore(t)
	createDeposits(t, s, "org_1", "1", "2")
	// a is never leased: zero LeasedUntil and empty LeaseOwner.
	a := newAttempt("att_1", "dep_1", "org_1", engine.ChannelBkash, "TRX1")
	b := &engine.Attempt{
		ID: "att_2", DepositID: "dep_1", OrganizationID: "org_1", Channel: engine.ChannelNagad, TransactionID: "TRX2",
		Status: engine.AttemptDelayed, FailureCode: engine.FailureTransactionNotFound, Tries: 3,
		NextRunAt: base.Add(time.Minute), LeaseOwner: "worker-1", LeasedUntil: base.Add(30 * time.Second),
		CreatedAt: base.Add(time.Microsecond), UpdatedAt: base.Add(time.Second),
	}
	c := newAttempt("att_0", "dep_2", "org_1", engine.ChannelBkash, "TRX3")
	createAttempts(t, s, a, b, c)
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		got, err := tx.GetAttempt(ctx, "att_1")
		if err != nil {
			return err
		}
		assertEqual(t, got, a)
		if !got.LeasedUntil.IsZero() || got.LeaseOwner != "" {
			t.Errorf("never-leased attempt read back with lease %q until %v", got.LeaseOwner, got.LeasedUntil)
		}
		if got, err = tx.GetAttemptByTransactionID(ctx, engine.ChannelNagad, "TRX2"); err != nil {
			return err
		}
		assertEqual(t, got, b)
		list, err := tx.ListAttempts(ctx, "dep_1")
		if err != nil {
			return err
		}
		assertEqual(t, list, []*engine.Attempt{a, b})
		if list, err := tx.ListAttempts(ctx, "dep_x"); err != nil || len(list) != 0 {
			t.Errorf("ListAttempts(dep_x) = %v, %v", list, err)
		}
		return nil
	})

	// Resolve b, clearing its lease; lease a.
	b.Status, b.FailureCode, b.Tries = engine.AttemptSucceeded, "", 4
	b.NextRunAt, b.LeaseOwner, b.LeasedUntil, b.UpdatedAt = base.Add(time.Hour), "", time.Time{}, base.Add(2*time.Hour)
	a.Status, a.FailureCode, a.Tries = engine.AttemptFailed, engine.FailureAmountMismatch, 1
	a.LeaseOwner, a.LeasedUntil, a.UpdatedAt = "worker-2", base.Add(time.Minute), base.Add(time.Minute)
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		if err := tx.UpdateAttempt(ctx, a); err != nil {
			return err
		}
		return tx.UpdateAttempt(ctx, b)
	})
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		list, err := tx.ListAttempts(ctx, "dep_1")
		if err != nil {
			return err
		}
		assertEqual(t, list, []*engine.Attempt{a, b})
		return nil
	})

	ctx := context.Background()
	for name, fn := range map[string]func(ctx context.Context, tx engine.Tx) error{
		"GetAttempt": func(ctx context.Context, tx engine.Tx) error { _, err := tx.GetAttempt(ctx, "att_x"); return err },
		"GetAttemptByTransactionID/channel": func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.GetAttemptByTransactionID(ctx, engine.ChannelNagad, "TRX1")
			return err
		},
		"GetAttemptByTransactionID/id": func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.GetAttemptByTransactionID(ctx, engine.ChannelBkash, "TRX9")
			return err
		},
	} {
		if err := s.ReadTx(ctx, fn); err != engine.ErrNotFound {
			t.Errorf("%s: %v, want ErrNotFound", name, err)
		}
	}
	err := s.InTx(ctx, func(ctx context.Context, tx engine.Tx) error {
		return tx.UpdateAttempt(ctx, newAttempt("att_x", "dep_1", "org_1", "bkash", "X"))
	})
	if err != engine.ErrNotFound {
		t.Errorf("UpdateAttempt(att_x): %v, want ErrNotFound", err)
	}
	// An attempt must belong to a deposit that exists.
	err = s.InTx(ctx, func(ctx context.Context, tx engine.Tx) error {
		return tx.CreateAttempt(ctx, newAttempt("att_y", "dep_missing", "org_1", "bkash", "Y"))
	})
	if err == nil || errors.Is(err, engine.ErrDuplicate) || errors.Is(err, engine.ErrNotFound) {
		t.Errorf("attempt of a missing deposit: %v, want an internal error", err)
	}
}

// One transaction ID serves one deposit per channel, across organizations.
func TestAttemptDuplicateTransactionID(t *testing.T) {
	s, _ := openStore(t)
	createDeposits(t, s, "org_1", "1", "2")
	createDeposits(t, s, "org_2", "3")
	createAttempts(t, s, newAttempt("att_1", "dep_1", "org_1", engine.ChannelBkash, "TRX1"))
	for name, a := range map[string]*engine.Attempt{
		"same deposit":       newAttempt("att_2", "dep_1", "org_1", engine.ChannelBkash, "TRX1"),
		"other deposit":      newAttempt("att_3", "dep_2", "org_1", engine.ChannelBkash, "TRX1"),
		"other organization": newAttempt("att_4", "dep_3", "org_2", engine.ChannelBkash, "TRX1"),
		"same id":            newAttempt("att_1", "dep_2", "org_1", engine.ChannelBkash, "TRX5"),
	} {
		err := s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error { return tx.CreateAttempt(ctx, a) })
		if !errors.Is(err, engine.ErrDuplicate) {
			t.Errorf("%s: %v, want ErrDuplicate", name, err)
		}
	}
	// The same ID on another channel is another payment.
	createAttempts(t, s, newAttempt("att_5", "dep_3", "org_2", engine.ChannelNagad, "TRX1"))
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		for channel, want := range map[string]string{engine.ChannelBkash: "att_1", engine.ChannelNagad: "att_5"} {
			got, err := tx.GetAttemptByTransactionID(ctx, channel, "TRX1")
			if err != nil {
				return err
			}
			if got.ID != want {
				t.Errorf("%s TRX1 is %s, want %s", channel, got.ID, want)
			}
		}
		return nil
	})
}

// claim runs ClaimDueAttempts in its own transaction and returns the IDs.
func claim(t *testing.T, s *sqlite.Store, p engine.ClaimParams) string {
	t.Helper()
	var got []*engine.Attempt
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		var err error
		got, err = tx.ClaimDueAttempts(ctx, p)
		return err
	})
	var ids []string
	for _, a := range got {
		if a.LeaseOwner != p.Owner || !a.LeasedUntil.Equal(p.LeasedUntil) {
			t.Errorf("claimed %s returned with lease %q until %v, want %q until %v",
				a.ID, a.LeaseOwner, a.LeasedUntil, p.Owner, p.LeasedUntil)
		}
		ids = append(ids, strings.TrimPrefix(a.ID, "att_"))
	}
	return strings.Join(ids, ",")
}

func TestClaimDueAttempts(t *testing.T) {
	s, _ := openStore(t)
	createDeposits(t, s, "org_1", "1")
	now := base.Add(time.Hour)
	var as []*engine.Attempt
	add := func(name, status string, nextRun time.Duration, leasedUntil time.Time) {
		a := newAttempt("att_"+name, "dep_1", "org_1", engine.ChannelBkash, "TRX_"+name)
		a.Status, a.NextRunAt = status, now.Add(nextRun)
		if !leasedUntil.IsZero() {
			a.LeaseOwner, a.LeasedUntil = "old", leasedUntil
		}
		as = append(as, a)
	}
	add("a", engine.AttemptProcessing, -time.Minute, time.Time{})
	add("b", engine.AttemptDelayed, -2*time.Minute, time.Time{})
	add("c", engine.AttemptProcessing, 0, time.Time{})                        // due exactly now
	add("d", engine.AttemptProcessing, -time.Minute, time.Time{})             // ties with a: by ID
	add("e", engine.AttemptProcessing, time.Microsecond, time.Time{})         // not yet due
	add("f", engine.AttemptProcessing, -time.Hour, now.Add(time.Microsecond)) // leased
	add("g", engine.AttemptDelayed, -3*time.Minute, now)                      // lease ran out now
	add("h", engine.AttemptSucceeded, -time.Hour, time.Time{})
	add("i", engine.AttemptFailed, -time.Hour, time.Time{})
	createAttempts(t, s, as...)

	lease := now.Add(time.Minute)
	p := engine.ClaimParams{Now: now, Owner: "w1", LeasedUntil: lease, Limit: 3}
	if got := claim(t, s, p); got != "g,b,a" {
		t.Errorf("first claim = %s, want g,b,a", got)
	}
	p.Owner, p.Limit = "w2", 10
	if got := claim(t, s, p); got != "d,c" {
		t.Errorf("second claim = %s, want d,c", got)
	}
	if got := claim(t, s, p); got != "" {
		t.Errorf("claim of a drained queue = %s, want nothing", got)
	}
	p.Limit = 0
	if got := claim(t, s, p); got != "" {
		t.Errorf("claim with Limit 0 = %s, want nothing", got)
	}

	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		for id, owner := range map[string]string{"att_a": "w1", "att_d": "w2", "att_e": "", "att_f": "old", "att_h": ""} {
			a, err := tx.GetAttempt(ctx, id)
			if err != nil {
				return err
			}
			if a.LeaseOwner != owner {
				t.Errorf("%s leased by %q, want %q", id, a.LeaseOwner, owner)
			}
		}
		return nil
	})

	// Once the leases run out, the same rows (and now e and f) are due again;
	// the resolved ones never are.
	p = engine.ClaimParams{Now: lease, Owner: "w3", LeasedUntil: lease.Add(time.Minute), Limit: 100}
	if got := claim(t, s, p); got != "f,g,b,a,d,c,e" {
		t.Errorf("claim after the leases ran out = %s, want f,g,b,a,d,c,e", got)
	}

	// A worker that resolves its attempt takes it out of the queue for good.
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		a, err := tx.GetAttempt(ctx, "att_a")
		if err != nil {
			return err
		}
		a.Status, a.LeaseOwner, a.LeasedUntil = engine.AttemptSucceeded, "", time.Time{}
		return tx.UpdateAttempt(ctx, a)
	})
	p = engine.ClaimParams{Now: lease.Add(time.Hour), Owner: "w4", LeasedUntil: lease.Add(2 * time.Hour), Limit: 100}
	if got := claim(t, s, p); got != "f,g,b,d,c,e" {
		t.Errorf("claim after resolving a = %s, want f,g,b,d,c,e", got)
	}
}

func TestConcurrentClaims(t *testing.T) {
	s, _ := openStore(t)
	createOrg(t, s, "org_1")
	const n = 200
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		for i := range n {
			d := newDeposit(fmt.Sprintf("dep_%03d", i), "org_1", fmt.Sprintf("m%03d", i))
			if err := tx.CreateDeposit(ctx, d); err != nil {
				return err
			}
			a := newAttempt(fmt.Sprintf("att_%03d", i), d.ID, "org_1", engine.ChannelBkash, fmt.Sprintf("TRX%03d", i))
			a.NextRunAt = base.Add(time.Duration(i%17) * time.Second)
			if err := tx.CreateAttempt(ctx, a); err != nil {
				return err
			}
		}
		return nil
	})
	now := base.Add(time.Minute)
	claimed := make([][]string, 8)
	var wg sync.WaitGroup
	for w := range claimed {
		wg.Go(func() {
			p := engine.ClaimParams{Now: now, Owner: fmt.Sprintf("w%d", w), LeasedUntil: now.Add(time.Hour), Limit: 5}
			for {
				var got []*engine.Attempt
				err := s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
					var err error
					got, err = tx.ClaimDueAttempts(ctx, p)
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
				for _, a := range got {
					claimed[w] = append(claimed[w], a.ID)
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
		id := fmt.Sprintf("att_%03d", i)
		if count[id] != 1 {
			t.Errorf("%s claimed %d times, want once", id, count[id])
		}
	}
	if len(count) != n {
		t.Errorf("%d attempts claimed, want %d", len(count), n)
	}
	// Each worker's lease is what the store holds.
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		for w, ids := range claimed {
			for _, id := range ids {
				a, err := tx.GetAttempt(ctx, id)
				if err != nil {
					return err
				}
				if want := fmt.Sprintf("w%d", w); a.LeaseOwner != want {
					t.Errorf("%s leased by %s, want %s", id, a.LeaseOwner, want)
				}
			}
		}
		return nil
	})
}

func TestLockAndListExpirableDeposits(t *testing.T) {
	s, _ := openStore(t)
	createOrg(t, s, "org_1")
	createOrg(t, s, "org_2")
	now := base.Add(time.Hour)
	var deps []*engine.Deposit
	add := func(name, org, status string, expires time.Duration) {
		d := newDeposit("dep_"+name, org, "m_"+name)
		d.Status, d.ExpiresAt = status, now.Add(expires)
		deps = append(deps, d)
	}
	add("a", "org_1", engine.StatusPending, -time.Minute)
	add("b", "org_2", engine.StatusPending, -2*time.Minute)
	add("c", "org_1", engine.StatusPending, 0)            // expires exactly now
	add("d", "org_1", engine.StatusPending, -time.Minute) // ties with a: by ID
	add("e", "org_1", engine.StatusPending, time.Microsecond)
	add("f", "org_1", engine.StatusProcessing, -time.Hour)
	add("g", "org_1", engine.StatusSucceeded, -time.Hour)
	add("h", "org_1", engine.StatusExpired, -time.Hour)
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		for _, d := range deps {
			if err := tx.CreateDeposit(ctx, d); err != nil {
				return err
			}
		}
		return nil
	})
	list := func(limit int) string {
		var got []*engine.Deposit
		write(t, s, func(ctx context.Context, tx engine.Tx) error {
			var err error
			got, err = tx.ListExpirableDeposits(ctx, now, limit)
			return err
		})
		var ids []string
		for _, d := range got {
			ids = append(ids, strings.TrimPrefix(d.ID, "dep_"))
		}
		return strings.Join(ids, ",")
	}
	for limit, want := range map[int]string{100: "b,a,d,c", 4: "b,a,d,c", 2: "b,a", 1: "b", 0: ""} {
		if got := list(limit); got != want {
			t.Errorf("ListExpirableDeposits(limit %d) = %s, want %s", limit, got, want)
		}
	}

	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		got, err := tx.LockDeposit(ctx, "dep_b")
		if err != nil {
			return err
		}
		assertEqual(t, got, deps[1])
		if _, err := tx.LockDeposit(ctx, "dep_x"); err != engine.ErrNotFound {
			t.Errorf("LockDeposit(dep_x) = %v, want ErrNotFound", err)
		}
		return nil
	})
}

func TestJournalRoundTrip(t *testing.T) {
	s, _ := openStore(t)
	createOrg(t, s, "org_1")
	createOrg(t, s, "org_2")
	dec := decimal.RequireFromString
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
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		for _, j := range []*engine.Journal{j1, j0, empty, other} {
			if err := tx.CreateJournal(ctx, j); err != nil {
				return err
			}
		}
		return nil
	})
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		list, err := tx.ListJournals(ctx, "org_1")
		if err != nil {
			return err
		}
		assertEqual(t, list, []*engine.Journal{j1, j0, empty})
		if list[2].Entries != nil {
			t.Errorf("journal without entries read back with %v", list[2].Entries)
		}
		if list, err = tx.ListJournals(ctx, "org_3"); err != nil || len(list) != 0 {
			t.Errorf("ListJournals(org_3) = %v, %v", list, err)
		}
		balances, err := tx.AccountBalances(ctx, "org_1")
		if err != nil {
			return err
		}
		assertBalances(t, balances, map[string]string{
			engine.AccountExternal: "-1000", engine.AccountAvailable: "987.65", engine.AccountFees: "12.35",
		})
		if balances, err = tx.AccountBalances(ctx, "org_3"); err != nil || len(balances) != 0 {
			t.Errorf("AccountBalances(org_3) = %v, %v", balances, err)
		}
		return nil
	})

	err := s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
		return tx.CreateJournal(ctx, &engine.Journal{ID: "jnl_1", OrganizationID: "org_1", CreatedAt: base})
	})
	if !errors.Is(err, engine.ErrDuplicate) {
		t.Errorf("duplicate journal: %v, want ErrDuplicate", err)
	}
}

func assertBalances(t *testing.T, got map[string]decimal.Decimal, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("balances = %v, want %v", got, want)
	}
	for account, w := range want {
		if g, ok := got[account]; !ok || !g.Equal(decimal.RequireFromString(w)) {
			t.Errorf("balance of %s = %v, want %s", account, g, w)
		}
	}
}

func TestAccountBalancesExact(t *testing.T) {
	s, _ := openStore(t)
	createOrg(t, s, "org_1")
	cent := decimal.RequireFromString("0.01")
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		for i := range 1000 {
			err := tx.CreateJournal(ctx, &engine.Journal{
				ID: fmt.Sprintf("jnl_%04d", i), OrganizationID: "org_1", Kind: "test", CreatedAt: base,
				Entries: []engine.Entry{{Account: engine.AccountExternal, Amount: cent.Neg()}, {Account: engine.AccountAvailable, Amount: cent}},
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		balances, err := tx.AccountBalances(ctx, "org_1")
		if err != nil {
			return err
		}
		assertBalances(t, balances, map[string]string{engine.AccountAvailable: "10.00", engine.AccountExternal: "-10"})
		if got := balances[engine.AccountAvailable].StringFixed(2); got != "10.00" {
			t.Errorf("available = %s, want 10.00", got)
		}
		return nil
	})
}

// The store keeps money exact; rounding is the engine's business.
func TestJournalRejectsSubPoisha(t *testing.T) {
	s, _ := openStore(t)
	createOrg(t, s, "org_1")
	for _, amount := range []string{"12.345", "0.001", "-0.005"} {
		err := s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
			return tx.CreateJournal(ctx, &engine.Journal{
				ID: "jnl_1", OrganizationID: "org_1", Kind: "test", CreatedAt: base,
				Entries: []engine.Entry{{Account: engine.AccountAvailable, Amount: decimal.RequireFromString(amount)}},
			})
		})
		if err == nil || errors.Is(err, engine.ErrDuplicate) || errors.Is(err, engine.ErrNotFound) {
			t.Errorf("entry of %s: %v, want an internal error", amount, err)
		}
	}
	// Nothing of the failed journals remains; trailing zeros are fine.
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		return tx.CreateJournal(ctx, &engine.Journal{
			ID: "jnl_1", OrganizationID: "org_1", Kind: "test", CreatedAt: base,
			Entries: []engine.Entry{{Account: engine.AccountAvailable, Amount: decimal.RequireFromString("12.3400")}},
		})
	})
}

func TestEventRoundTrip(t *testing.T) {
	s, _ := openStore(t)
	createOrg(t, s, "org_1")
	createOrg(t, s, "org_2")
	payload := []byte(`{"id":"evt_1","data":{"amount":"1.10","note":"<&>☃"}}` + "\x00\xff\n")
	evs := []*engine.Event{
		{ID: "evt_1", OrganizationID: "org_1", Type: engine.EventDepositSucceeded, ResourceID: "dep_1", Payload: payload, CreatedAt: base.Add(time.Second)},
		{ID: "evt_2", OrganizationID: "org_1", Type: engine.EventDepositFailed, ResourceID: "dep_2", Payload: []byte(`{}`), CreatedAt: base},
		{ID: "evt_0", OrganizationID: "org_1", Type: engine.EventDepositExpired, ResourceID: "dep_1", Payload: []byte(`[]`), CreatedAt: base.Add(time.Second)},
		{ID: "evt_3", OrganizationID: "org_2", Type: engine.EventDepositSucceeded, ResourceID: "dep_3", CreatedAt: base.Add(time.Hour)},
		{ID: "evt_4", OrganizationID: "org_1", Type: engine.EventDepositSucceeded, ResourceID: "dep_1", Payload: []byte(`{"n":4}`), CreatedAt: base.Add(time.Minute)},
	}
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		for _, e := range evs {
			if err := tx.CreateEvent(ctx, e); err != nil {
				return err
			}
		}
		return nil
	})
	ids := func(p engine.ListEventsParams) string {
		var got []*engine.Event
		read(t, s, func(ctx context.Context, tx engine.Tx) error {
			var err error
			got, err = tx.ListEvents(ctx, p)
			return err
		})
		var out []string
		for _, e := range got {
			out = append(out, strings.TrimPrefix(e.ID, "evt_"))
		}
		return strings.Join(out, ",")
	}
	for _, c := range []struct {
		p    engine.ListEventsParams
		want string
	}{
		{engine.ListEventsParams{}, "2,0,1,4,3"},
		{engine.ListEventsParams{Limit: 2}, "2,0"},
		{engine.ListEventsParams{OrganizationID: "org_1"}, "2,0,1,4"},
		{engine.ListEventsParams{OrganizationID: "org_1", ResourceID: "dep_1"}, "0,1,4"},
		{engine.ListEventsParams{OrganizationID: "org_1", ResourceID: "dep_1", Limit: 2}, "0,1"},
		{engine.ListEventsParams{OrganizationID: "org_2", ResourceID: "dep_1"}, ""},
		{engine.ListEventsParams{ResourceID: "dep_3"}, "3"},
		{engine.ListEventsParams{OrganizationID: "org_9"}, ""},
	} {
		if got := ids(c.p); got != c.want {
			t.Errorf("ListEvents(%+v) = %s, want %s", c.p, got, c.want)
		}
	}
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		got, err := tx.ListEvents(ctx, engine.ListEventsParams{})
		if err != nil {
			return err
		}
		byID := map[string]*engine.Event{}
		for _, e := range got {
			byID[e.ID] = e
		}
		for _, want := range evs {
			assertEqual(t, byID[want.ID], want)
		}
		if !bytes.Equal(byID["evt_1"].Payload, payload) {
			t.Errorf("payload = %q, want %q", byID["evt_1"].Payload, payload)
		}
		return nil
	})

	err := s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
		return tx.CreateEvent(ctx, &engine.Event{ID: "evt_1", OrganizationID: "org_2", Payload: []byte("x"), CreatedAt: base})
	})
	if !errors.Is(err, engine.ErrDuplicate) {
		t.Errorf("duplicate event: %v, want ErrDuplicate", err)
	}
}

func TestSandboxPayments(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	completed := &engine.ProviderTransaction{
		Channel: engine.ChannelBkash, TransactionID: "TRX1", Type: engine.TransactionCashOut,
		Status: engine.TransactionCompleted, Amount: decimal.RequireFromString("1234.50"), Currency: engine.Currency,
		PayerPhone: "01711111111", RecipientPhone: "01800000000",
		CompletedAt: base, TimePrecision: time.Minute + 7*time.Nanosecond,
	}
	// A pending payment into a checkout: no recipient, no completion time.
	pending := &engine.ProviderTransaction{
		Channel: engine.ChannelNagad, TransactionID: "TRX1", Type: engine.TransactionPayment,
		Status: engine.TransactionPending, Amount: decimal.RequireFromString("0.01"), Currency: engine.Currency,
		PayerPhone: "01711111111",
	}
	for _, p := range []*engine.ProviderTransaction{completed, pending} {
		if err := s.RecordSandboxPayment(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []*engine.ProviderTransaction{completed, pending} {
		got, err := s.GetSandboxPayment(ctx, want.Channel, want.TransactionID)
		if err != nil {
			t.Fatal(err)
		}
		assertEqual(t, got, want)
	}
	got, err := s.GetSandboxPayment(ctx, engine.ChannelBkash, "TRX1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Amount.String() != "1234.5" || got.CompletedAt.Location() != time.UTC {
		t.Errorf("amount %s at %v", got.Amount, got.CompletedAt)
	}
	if got, err := s.GetSandboxPayment(ctx, engine.ChannelNagad, "TRX1"); err != nil || !got.CompletedAt.IsZero() {
		t.Errorf("pending payment completed at %v (%v), want zero", got.CompletedAt, err)
	}

	dup := *completed
	dup.Amount = decimal.RequireFromString("1")
	if err := s.RecordSandboxPayment(ctx, &dup); !errors.Is(err, engine.ErrDuplicate) {
		t.Errorf("duplicate payment: %v, want ErrDuplicate", err)
	}
	if _, err := s.GetSandboxPayment(ctx, engine.ChannelBkash, "TRX2"); err != engine.ErrNotFound {
		t.Errorf("unknown payment: %v, want ErrNotFound", err)
	}
}

// Recording a payment waits for a writer of another process like InTx does.
func TestSandboxPaymentWaitsForAnotherWriter(t *testing.T) {
	s, path := openStore(t)
	release := holdWriteLock(t, path)
	time.AfterFunc(300*time.Millisecond, release)
	p := &engine.ProviderTransaction{
		Channel: engine.ChannelBkash, TransactionID: "TRX1", Type: engine.TransactionCashOut,
		Status: engine.TransactionCompleted, Amount: decimal.RequireFromString("10"), Currency: engine.Currency,
		CompletedAt: base,
	}
	if err := s.RecordSandboxPayment(context.Background(), p); err != nil {
		t.Fatal(err)
	}
}
