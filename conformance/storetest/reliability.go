package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
)

// Withdrawals found by merchant_id, leases handed back, and the audit log.

func testWithdrawalByMerchantID(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1", "org_2")
	w1 := newWithdrawal("wdr_1", "org_1", "order-1 ☕ '; DROP TABLE withdrawals; --")
	w2 := newWithdrawal("wdr_2", "org_2", w1.MerchantID)
	w3 := newWithdrawal("wdr_3", "org_1", "order-3")
	create(t, s, engine.Tx.CreateWithdrawal, w1, w2, w3)
	create(t, s, engine.Tx.CreateDeposit, newDeposit("dep_a", "org_1", "m_a"))
	for _, want := range []*engine.Withdrawal{w1, w2, w3} {
		assertEqual(t, get(t, s, func(ctx context.Context, tx engine.Tx) (*engine.Withdrawal, error) {
			return tx.GetWithdrawalByMerchantID(ctx, want.OrganizationID, want.MerchantID)
		}), want)
	}
	wantAllNotFound(t, s, calls{
		"other org": func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.GetWithdrawalByMerchantID(ctx, "org_2", "order-3")
			return err
		},
		"unknown": func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.GetWithdrawalByMerchantID(ctx, "org_1", "order-4")
			return err
		},
		"case differs": func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.GetWithdrawalByMerchantID(ctx, "org_1", "ORDER-3")
			return err
		},
		"no org": func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.GetWithdrawalByMerchantID(ctx, "", "order-3")
			return err
		},
		"a deposit's merchant_id": func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.GetWithdrawalByMerchantID(ctx, "org_1", "m_a")
			return err
		},
	}, nil)
}

// testReleaseLeases leases attempts, payouts and deliveries to two owners,
// releases one owner's, and checks that exactly those are claimable again
// at once while the other owner's leases stand.
func testReleaseLeases(t *testing.T, s Store) {
	mustDeposits(t, s, "org_1", "a", "b", "c", "d")
	create(t, s, engine.Tx.CreateAttempt,
		newAttempt("att_1", "dep_a", "org_1", "bkash", "TX1"), newAttempt("att_2", "dep_b", "org_1", "bkash", "TX2"),
		newAttempt("att_3", "dep_c", "org_1", "bkash", "TX3"), newAttempt("att_4", "dep_d", "org_1", "bkash", "TX4"))
	create(t, s, engine.Tx.CreateWithdrawal,
		newWithdrawal("wdr_1", "org_1", "w1"), newWithdrawal("wdr_2", "org_1", "w2"),
		newWithdrawal("wdr_3", "org_1", "w3"), newWithdrawal("wdr_4", "org_1", "w4"))
	ep := newEndpoint("we_1", "org_1")
	ev := newEvent("evt_1", "org_1")
	mustWebhookRows(t, s, []*engine.WebhookEndpoint{ep}, []*engine.Event{ev}, []*engine.Delivery{
		newDelivery("dlv_1", ev.ID, ep.ID, "org_1"),
	})
	ev2 := newEvent("evt_2", "org_1")
	ep2 := newEndpoint("we_2", "org_1")
	mustWebhookRows(t, s, []*engine.WebhookEndpoint{ep2}, []*engine.Event{ev2}, []*engine.Delivery{
		newDelivery("dlv_2", ev2.ID, ep2.ID, "org_1"),
	})

	now := base.Add(time.Second)
	until := now.Add(time.Hour)
	claim := func(owner string, limit, deliveryLimit int) (attempts, payouts, deliveries string) {
		p := engine.ClaimParams{Now: now, Owner: owner, LeasedUntil: until, Limit: limit}
		attempts = claimIDs(t, s, claimAttempts, attemptLease, p)
		payouts = claimIDs(t, s, claimPayouts, payoutLease, p)
		p.Limit = deliveryLimit
		deliveries = claimIDs(t, s, claimDeliveries(1, nil), deliveryLease, p)
		return
	}
	// w1 takes two attempts, two payouts and one delivery; w2 the rest.
	if a, p, d := claim("w1", 2, 1); a != "1,2" || p != "1,2" || d != "1" {
		t.Fatalf("w1 claimed attempts %s, payouts %s, deliveries %s", a, p, d)
	}
	if a, p, d := claim("w2", 10, 10); a != "3,4" || p != "3,4" || d != "2" {
		t.Fatalf("w2 claimed attempts %s, payouts %s, deliveries %s", a, p, d)
	}
	// Finish att_2 and wdr_2 as the engine does: lease cleared with the
	// outcome. Releasing must leave finished rows as they are.
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		a, err := tx.LockAttempt(ctx, "att_2")
		if err != nil {
			return err
		}
		a.Status, a.FailureCode, a.LeaseOwner, a.LeasedUntil = engine.AttemptFailed, engine.FailureAmountMismatch, "", time.Time{}
		if err := tx.UpdateAttempt(ctx, a); err != nil {
			return err
		}
		w, err := tx.LockWithdrawal(ctx, "org_1", "wdr_2")
		if err != nil {
			return err
		}
		w.Status, w.PayoutStep, w.LeaseOwner, w.LeasedUntil = engine.WithdrawalSucceeded, engine.PayoutSettled, "", time.Time{}
		return tx.UpdateWithdrawal(ctx, w)
	})
	// Nothing is claimable while the leases run.
	if a, p, d := claim("w3", 10, 10); a != "" || p != "" || d != "" {
		t.Fatalf("claimed leased work: attempts %s, payouts %s, deliveries %s", a, p, d)
	}
	write(t, s, func(ctx context.Context, tx engine.Tx) error { return tx.ReleaseLeases(ctx, "w1") })
	// Releasing an owner that holds nothing, or again, changes nothing.
	write(t, s, func(ctx context.Context, tx engine.Tx) error { return tx.ReleaseLeases(ctx, "w1") })
	write(t, s, func(ctx context.Context, tx engine.Tx) error { return tx.ReleaseLeases(ctx, "nobody") })

	a1 := get(t, s, func(ctx context.Context, tx engine.Tx) (*engine.Attempt, error) { return tx.GetAttempt(ctx, "att_1") })
	w1 := getWithdrawal(t, s, "org_1", "wdr_1")
	d1 := get(t, s, func(ctx context.Context, tx engine.Tx) (*engine.Delivery, error) { return tx.GetDelivery(ctx, "dlv_1") })
	for _, l := range []lease{attemptLease(a1), payoutLease(w1), deliveryLease(d1)} {
		if l.owner != "" || !l.until.IsZero() {
			t.Errorf("%s still leased to %q until %v after release", l.id, l.owner, l.until)
		}
	}
	a3 := get(t, s, func(ctx context.Context, tx engine.Tx) (*engine.Attempt, error) { return tx.GetAttempt(ctx, "att_3") })
	if a3.LeaseOwner != "w2" || !a3.LeasedUntil.Equal(until) {
		t.Errorf("w2's att_3 is leased to %q until %v after releasing w1", a3.LeaseOwner, a3.LeasedUntil)
	}
	if got := getWithdrawal(t, s, "org_1", "wdr_2"); got.Status != engine.WithdrawalSucceeded {
		t.Errorf("finished wdr_2 is %s after release", got.Status)
	}
	// w1's open work is claimable at once; w2's and finished work is not.
	if a, p, d := claim("w3", 10, 10); a != "1" || p != "1" || d != "1" {
		t.Errorf("after release w3 claimed attempts %s, payouts %s, deliveries %s; want 1, 1, 1", a, p, d)
	}
}

func testAuditRoundTrip(t *testing.T, s Store) {
	entries := []*engine.AuditEntry{
		{
			ID: "aud_1", Actor: "alice", Action: engine.AuditOrgCreate, OrganizationID: "org_1", Subject: "org_1",
			Details:   map[string]string{"name": "Shop '; DROP TABLE audit_log; --", "h2h": "true", "note": "☃ \"quoted\""},
			CreatedAt: base,
		},
		{
			ID: "aud_2", Actor: "bob", Action: engine.AuditKeyRevoke, OrganizationID: "org_2", Subject: "key_9",
			CreatedAt: base.Add(time.Microsecond),
		},
		// Same time as aud_1: the ID orders them.
		{
			ID: "aud_3", Actor: "alice", Action: engine.AuditWalletAdd, OrganizationID: "org_1", Subject: "wal_1",
			Details: map[string]string{}, CreatedAt: base,
		},
		{
			ID: "aud_4", Actor: "carol", Action: engine.AuditBalanceAdjust, OrganizationID: "org_1", Subject: "jnl_1",
			Details: map[string]string{"amount": "-10.00"}, CreatedAt: base.Add(time.Hour),
		},
	}
	// No organization row is needed: the log outlives what it names.
	create(t, s, engine.Tx.AppendAudit, entries...)
	list := func(p engine.ListAuditParams) []*engine.AuditEntry {
		return get(t, s, func(ctx context.Context, tx engine.Tx) ([]*engine.AuditEntry, error) { return tx.ListAudit(ctx, p) })
	}
	id := func(e *engine.AuditEntry) string { return e.ID }
	for _, c := range []struct {
		p    engine.ListAuditParams
		want string
	}{
		{engine.ListAuditParams{}, "1,3,2,4"},
		{engine.ListAuditParams{OrganizationID: "org_1"}, "1,3,4"},
		{engine.ListAuditParams{OrganizationID: "org_1", Limit: 2}, "1,3"},
		{engine.ListAuditParams{OrganizationID: "org_2"}, "2"},
		{engine.ListAuditParams{OrganizationID: "org_x"}, ""},
	} {
		if got := joinIDs(list(c.p), id); got != c.want {
			t.Errorf("ListAudit(%+v) = %s, want %s", c.p, got, c.want)
		}
	}
	got := list(engine.ListAuditParams{OrganizationID: "org_1"})
	assertEqual(t, got[0], entries[0])
	assertEqual(t, got[2], entries[3])
	if len(got[1].Details) != 0 {
		t.Errorf("empty details read back as %v", got[1].Details)
	}
	wantDuplicate(t, "same ID", try(s, engine.Tx.AppendAudit, &engine.AuditEntry{
		ID: "aud_1", Actor: "mallory", Action: engine.AuditOrgUpdate, OrganizationID: "org_1", Subject: "org_1", CreatedAt: base,
	}))
	// The failed append changed nothing.
	assertEqual(t, list(engine.ListAuditParams{OrganizationID: "org_1"})[0], entries[0])
}

// testTakenWithdrawalMerchantIDs checks the batch lookup that withdrawal
// creates make under the organization's lock: exactly the organization's
// withdrawals' merchant_ids, byte for byte, including the transaction's
// own inserts.
func testTakenWithdrawalMerchantIDs(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1", "org_2")
	quirky := "order-1 ☕ '; DROP TABLE withdrawals; --"
	create(t, s, engine.Tx.CreateWithdrawal, newWithdrawal("wdr_1", "org_1", quirky),
		newWithdrawal("wdr_2", "org_2", "order-2"), newWithdrawal("wdr_3", "org_1", "order-3"))
	create(t, s, engine.Tx.CreateDeposit, newDeposit("dep_a", "org_1", "m_a"))
	many := []string{quirky, "order-2", "ORDER-3", "order-3", "m_a", "order-3"}
	for i := range 200 {
		many = append(many, fmt.Sprintf("other-%d", i))
	}
	for _, c := range []struct {
		org  string
		ids  []string
		want []string
	}{
		{"org_1", many, []string{quirky, "order-3"}},
		{"org_2", many, []string{"order-2"}},
		{"org_1", nil, nil},
		{"org_x", many, nil},
		{"", []string{"order-2"}, nil},
	} {
		read(t, s, func(ctx context.Context, tx engine.Tx) error {
			got, err := tx.TakenWithdrawalMerchantIDs(ctx, c.org, c.ids)
			if err != nil {
				return err
			}
			if len(got) != len(c.want) {
				t.Errorf("%s: taken %v, want %v", c.org, got, c.want)
			}
			for _, id := range c.want {
				if !got[id] {
					t.Errorf("%s: taken %v, want %v", c.org, got, c.want)
				}
			}
			return nil
		})
	}
	err := s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
		if err := tx.CreateWithdrawal(ctx, newWithdrawal("wdr_4", "org_2", "order-4")); err != nil {
			return err
		}
		got, err := tx.TakenWithdrawalMerchantIDs(ctx, "org_2", []string{"order-4", "order-5"})
		if err != nil {
			return err
		}
		if len(got) != 1 || !got["order-4"] {
			t.Errorf("in the inserting transaction: taken %v, want order-4", got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// testWithdrawalGate checks that LockWithdrawalGate reads what the methods
// it stands for read: the organization, the merchant_ids taken (the
// transaction's own included), the balances and the enabled endpoints;
// and ErrNotFound for an unknown organization.
func testWithdrawalGate(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1", "org_2")
	create(t, s, engine.Tx.CreateWithdrawal, newWithdrawal("wdr_1", "org_1", "order-1"), newWithdrawal("wdr_2", "org_2", "order-2"))
	disabled := newEndpoint("whe_2", "org_1")
	disabled.Enabled, disabled.CreatedAt = false, base.Add(time.Second)
	later := newEndpoint("whe_3", "org_1")
	later.CreatedAt = base.Add(2 * time.Second)
	create(t, s, engine.Tx.CreateWebhookEndpoint, newEndpoint("whe_1", "org_1"), disabled, later, newEndpoint("whe_4", "org_2"))
	create(t, s, engine.Tx.CreateJournal, &engine.Journal{
		ID: "jnl_1", OrganizationID: "org_1", Kind: engine.JournalAdjustment, CreatedAt: base,
		Entries: []engine.Entry{{Account: engine.AccountAdjustments, Amount: dec("-100.25")}, {Account: engine.AccountAvailable, Amount: dec("100.25")}},
	})
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		if err := tx.CreateWithdrawal(ctx, newWithdrawal("wdr_3", "org_1", "order-3")); err != nil {
			return err
		}
		for _, ids := range [][]string{{"order-1", "order-2", "order-3", "order-4"}, nil} {
			g, err := tx.LockWithdrawalGate(ctx, "org_1", ids)
			if err != nil {
				return err
			}
			org, err := tx.GetOrganization(ctx, "org_1")
			if err != nil {
				return err
			}
			assertEqual(t, g.Organization, org)
			taken, err := tx.TakenWithdrawalMerchantIDs(ctx, "org_1", ids)
			if err != nil {
				return err
			}
			if len(g.Taken) != len(taken) {
				t.Errorf("%v: taken %v, want %v", ids, g.Taken, taken)
			}
			for id := range taken {
				if !g.Taken[id] {
					t.Errorf("%v: taken %v, want %v", ids, g.Taken, taken)
				}
			}
			assertBalances(t, g.Balances, map[string]string{engine.AccountAdjustments: "-100.25", engine.AccountAvailable: "100.25"})
			eps, err := tx.ListWebhookEndpoints(ctx, "org_1", true)
			if err != nil {
				return err
			}
			assertEqual(t, g.Endpoints, eps)
			if len(eps) != 2 {
				t.Errorf("%d enabled endpoints, want 2", len(eps))
			}
		}
		if _, err := tx.LockWithdrawalGate(ctx, "org_x", []string{"order-1"}); !errors.Is(err, engine.ErrNotFound) {
			t.Errorf("unknown organization: got %v, want ErrNotFound", err)
		}
		return nil
	})
}
