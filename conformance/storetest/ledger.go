package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/shopspring/decimal"
)

func listJournals(t *testing.T, s Store, orgID string) []*engine.Journal {
	t.Helper()
	return get(t, s, func(ctx context.Context, tx engine.Tx) ([]*engine.Journal, error) { return tx.ListJournals(ctx, orgID) })
}

func accountBalances(t *testing.T, s Store, orgID string) map[string]decimal.Decimal {
	t.Helper()
	return get(t, s, func(ctx context.Context, tx engine.Tx) (map[string]decimal.Decimal, error) {
		return tx.AccountBalances(ctx, orgID)
	})
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
