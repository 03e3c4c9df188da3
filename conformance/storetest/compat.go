package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
)

// testCompatKeys: one key per organization, replaced by the next, found by
// its hash only while it is the organization's, unique across
// organizations.
func testCompatKeys(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1", "org_2")
	k1 := &engine.CompatKey{OrganizationID: "org_1", Hash: []byte("hash-one-000000000000000000000000"), Sealed: []byte("sealed-1"), Hint: "abcd", CreatedAt: base}
	create(t, s, inConsole(engine.ConsoleTx.PutCompatKey), k1)
	got := get(t, s, func(ctx context.Context, tx engine.Tx) (*engine.CompatKey, error) {
		return tx.Console().GetCompatKeyByHash(ctx, k1.Hash)
	})
	assertEqual(t, got, k1)
	wantDuplicate(t, "another organization's hash", try(s, inConsole(engine.ConsoleTx.PutCompatKey),
		&engine.CompatKey{OrganizationID: "org_2", Hash: k1.Hash, Sealed: []byte("x"), Hint: "abcd", CreatedAt: base}))

	k2 := &engine.CompatKey{OrganizationID: "org_1", Hash: []byte("hash-two-000000000000000000000000"), Sealed: []byte("sealed-2"), Hint: "efgh", CreatedAt: base.Add(time.Minute)}
	create(t, s, inConsole(engine.ConsoleTx.PutCompatKey), k2)
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		_, err := tx.Console().GetCompatKeyByHash(ctx, k1.Hash)
		wantNotFound(t, "a replaced key", err)
		got, err := tx.Console().GetCompatKeyByHash(ctx, k2.Hash)
		if err != nil {
			return err
		}
		assertEqual(t, got, k2)
		got, err = tx.Console().GetCompatKey(ctx, "org_1")
		if err == nil {
			assertEqual(t, got, k2)
		}
		return err
	})
	write(t, s, func(ctx context.Context, tx engine.Tx) error { return tx.Console().DeleteCompatKey(ctx, "org_1") })
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		_, err := tx.Console().GetCompatKeyByHash(ctx, k2.Hash)
		wantNotFound(t, "a deleted key", err)
		return nil
	})
	err := s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error { return tx.Console().DeleteCompatKey(ctx, "org_1") })
	wantNotFound(t, "deleting no key", err)
}

// testCompatInvoices: an invoice round-trips with its link and is found
// only under its own organization.
func testCompatInvoices(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1", "org_2")
	l := &engine.PaymentLink{ID: "plink_1", OrganizationID: "org_1", Amount: dec("10.50"), Token: "tok_1", CreatedBy: "compat", CreatedAt: base, UpdatedAt: base}
	create(t, s, inConsole(engine.ConsoleTx.CreatePaymentLink), l)
	inv := &engine.CompatInvoice{LinkID: "plink_1", OrganizationID: "org_1", FullName: "রহিম ☃", Email: "a@example.com",
		Metadata: []byte(`{"order_id":"42"}`), RedirectURL: "https://shop.example/ok?x=1", ReturnType: engine.CompatReturnPOST,
		CancelURL: "https://shop.example/cancel", WebhookURL: "https://shop.example/ipn", CreatedAt: base}
	create(t, s, inConsole(engine.ConsoleTx.CreateCompatInvoice), inv)
	wantDuplicate(t, "a second invoice of a link", try(s, inConsole(engine.ConsoleTx.CreateCompatInvoice), inv))
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		got, err := tx.Console().GetCompatInvoice(ctx, "org_1", "plink_1")
		if err != nil {
			return err
		}
		assertEqual(t, got, inv)
		_, err = tx.Console().GetCompatInvoice(ctx, "org_2", "plink_1")
		wantNotFound(t, "another organization's invoice", err)
		return nil
	})
}

// testCompatIPNs: an invoice has one IPN; a claim leases the due pending
// ones, earliest first, and skips leased, later and finished ones.
func testCompatIPNs(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1")
	epoch := time.Unix(0, 0).UTC()
	var ipns []*engine.CompatIPN
	for i, due := range []time.Duration{2 * time.Second, time.Second, time.Hour, 0} {
		id := fmt.Sprintf("plink_%d", i+1)
		create(t, s, inConsole(engine.ConsoleTx.CreatePaymentLink), &engine.PaymentLink{ID: id, OrganizationID: "org_1", Amount: dec("100"), Token: "tok_" + id, CreatedAt: base, UpdatedAt: base})
		create(t, s, inConsole(engine.ConsoleTx.CreateCompatInvoice), &engine.CompatInvoice{LinkID: id, OrganizationID: "org_1", Metadata: []byte("{}"),
			RedirectURL: "https://s.example/", ReturnType: "GET", CancelURL: "https://s.example/", WebhookURL: "https://s.example/ipn", CreatedAt: base})
		ipns = append(ipns, &engine.CompatIPN{LinkID: id, OrganizationID: "org_1", Status: engine.DeliveryPending,
			NextAttemptAt: base.Add(due), LeasedUntil: epoch, CreatedAt: base, UpdatedAt: base})
	}
	ipns[3].Status = engine.DeliveryDelivered
	create(t, s, inConsole(engine.ConsoleTx.CreateCompatIPN), ipns...)
	wantDuplicate(t, "a second IPN of an invoice", try(s, inConsole(engine.ConsoleTx.CreateCompatIPN), ipns[0]))
	now := base.Add(time.Minute)
	claim := func(owner string) []*engine.CompatIPN {
		var out []*engine.CompatIPN
		write(t, s, func(ctx context.Context, tx engine.Tx) (err error) {
			out, err = tx.Console().ClaimDueCompatIPNs(ctx, engine.ClaimParams{Now: now, Owner: owner, LeasedUntil: now.Add(time.Minute), Limit: 10})
			return err
		})
		return out
	}
	got := claim("w1")
	if ids := joinIDs(got, func(p *engine.CompatIPN) string { return p.LinkID }); ids != "2,1" {
		t.Fatalf("claimed %s, want the due pending ones earliest first (2,1)", ids)
	}
	if again := claim("w2"); len(again) != 0 {
		t.Fatalf("leased IPNs were claimed again: %d", len(again))
	}
	p := got[0]
	p.Status, p.Attempts, p.LastStatusCode, p.LastError, p.LeaseOwner, p.LeasedUntil, p.UpdatedAt = engine.DeliveryDelivered, 1, 200, "", "", epoch, now
	write(t, s, func(ctx context.Context, tx engine.Tx) error { return tx.Console().UpdateCompatIPN(ctx, p) })
	wantLocked(t, s, p, func(ctx context.Context, tx engine.Tx) (*engine.CompatIPN, error) {
		return tx.Console().LockCompatIPN(ctx, p.LinkID)
	})
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		_, err := tx.Console().GetCompatIPN(ctx, "plink_9")
		wantNotFound(t, "no IPN", err)
		return nil
	})
}

// testCompatIPNClaimsConcurrent: workers claiming at the same time, each in
// its own transaction, take every due IPN exactly once.
func testCompatIPNClaimsConcurrent(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1")
	epoch := time.Unix(0, 0).UTC()
	const n = 24
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		for i := range n {
			id := fmt.Sprintf("plink_%02d", i)
			if err := tx.Console().CreatePaymentLink(ctx, &engine.PaymentLink{ID: id, OrganizationID: "org_1", Amount: dec("100"), Token: "tok_" + id, CreatedAt: base, UpdatedAt: base}); err != nil {
				return err
			}
			if err := tx.Console().CreateCompatInvoice(ctx, &engine.CompatInvoice{LinkID: id, OrganizationID: "org_1", Metadata: []byte("{}"),
				RedirectURL: "https://s.example/", ReturnType: "GET", CancelURL: "https://s.example/", WebhookURL: "https://s.example/ipn", CreatedAt: base}); err != nil {
				return err
			}
			if err := tx.Console().CreateCompatIPN(ctx, &engine.CompatIPN{LinkID: id, OrganizationID: "org_1", Status: engine.DeliveryPending,
				NextAttemptAt: base, LeasedUntil: epoch, CreatedAt: base, UpdatedAt: base}); err != nil {
				return err
			}
		}
		return nil
	})
	now := base.Add(time.Second)
	var mu sync.Mutex
	claimed := map[string]int{}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				var got []*engine.CompatIPN
				err := s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) (err error) {
					got, err = tx.Console().ClaimDueCompatIPNs(ctx, engine.ClaimParams{Now: now, Owner: fmt.Sprint("w", w), LeasedUntil: now.Add(time.Minute), Limit: 3})
					return err
				})
				if err != nil {
					t.Error(err)
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, p := range got {
					claimed[p.LinkID]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(claimed) != n {
		t.Errorf("%d IPNs claimed, want %d", len(claimed), n)
	}
	for id, k := range claimed {
		if k != 1 {
			t.Errorf("%s claimed %d times", id, k)
		}
	}
}

// testListCompatIPNs: an organization's IPNs, newest first, up to the
// limit, never another organization's.
func testListCompatIPNs(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1", "org_2")
	epoch := time.Unix(0, 0).UTC()
	for i, org := range []string{"org_1", "org_2", "org_1", "org_1"} {
		id := fmt.Sprintf("plink_%d", i+1)
		at := base.Add(time.Duration(i) * time.Second)
		create(t, s, inConsole(engine.ConsoleTx.CreatePaymentLink), &engine.PaymentLink{ID: id, OrganizationID: org, Amount: dec("100"), Token: "tok_" + id, CreatedAt: at, UpdatedAt: at})
		create(t, s, inConsole(engine.ConsoleTx.CreateCompatInvoice), &engine.CompatInvoice{LinkID: id, OrganizationID: org, Metadata: []byte("{}"),
			RedirectURL: "https://s.example/", ReturnType: "GET", CancelURL: "https://s.example/", WebhookURL: "https://s.example/ipn", CreatedAt: at})
		create(t, s, inConsole(engine.ConsoleTx.CreateCompatIPN), &engine.CompatIPN{LinkID: id, OrganizationID: org, Status: engine.DeliveryExhausted,
			Attempts: 9, NextAttemptAt: at, LeasedUntil: epoch, LastStatusCode: 500, LastError: "HTTP 500", CreatedAt: at, UpdatedAt: at})
	}
	list := func(org string, limit int) string {
		return joinIDs(get(t, s, func(ctx context.Context, tx engine.Tx) ([]*engine.CompatIPN, error) {
			return tx.Console().ListCompatIPNs(ctx, org, limit)
		}), func(p *engine.CompatIPN) string { return p.LinkID })
	}
	for _, c := range []struct {
		org   string
		limit int
		want  string
	}{{"org_1", 10, "4,3,1"}, {"org_1", 2, "4,3"}, {"org_2", 10, "2"}, {"org_3", 10, ""}, {"org_1", 0, ""}} {
		if got := list(c.org, c.limit); got != c.want {
			t.Errorf("%s, limit %d: %q, want %q", c.org, c.limit, got, c.want)
		}
	}
	got := get(t, s, func(ctx context.Context, tx engine.Tx) ([]*engine.CompatIPN, error) {
		return tx.Console().ListCompatIPNs(ctx, "org_2", 1)
	})
	assertEqual(t, got[0], &engine.CompatIPN{LinkID: "plink_2", OrganizationID: "org_2", Status: engine.DeliveryExhausted,
		Attempts: 9, NextAttemptAt: base.Add(time.Second), LeasedUntil: epoch, LastStatusCode: 500, LastError: "HTTP 500",
		CreatedAt: base.Add(time.Second), UpdatedAt: base.Add(time.Second)})
}
