package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
)

// testCompatKeys: one key per organization, replaced by the next, found by
// its hash only while it is the organization's, unique across
// organizations.
func testCompatKeys(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1", "org_2")
	k1 := &engine.CompatKey{OrganizationID: "org_1", Hash: []byte("hash-one-000000000000000000000000"), Hint: "abcd", CreatedAt: base}
	create(t, s, engine.Tx.PutCompatKey, k1)
	got := get(t, s, func(ctx context.Context, tx engine.Tx) (*engine.CompatKey, error) {
		return tx.GetCompatKeyByHash(ctx, k1.Hash)
	})
	assertEqual(t, got, k1)
	wantDuplicate(t, "another organization's hash", try(s, engine.Tx.PutCompatKey,
		&engine.CompatKey{OrganizationID: "org_2", Hash: k1.Hash, Hint: "abcd", CreatedAt: base}))

	k2 := &engine.CompatKey{OrganizationID: "org_1", Hash: []byte("hash-two-000000000000000000000000"), Hint: "efgh", CreatedAt: base.Add(time.Minute)}
	create(t, s, engine.Tx.PutCompatKey, k2)
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		_, err := tx.GetCompatKeyByHash(ctx, k1.Hash)
		wantNotFound(t, "a replaced key", err)
		got, err := tx.GetCompatKeyByHash(ctx, k2.Hash)
		if err == nil {
			assertEqual(t, got, k2)
		}
		return err
	})
	write(t, s, func(ctx context.Context, tx engine.Tx) error { return tx.DeleteCompatKey(ctx, "org_1") })
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		_, err := tx.GetCompatKeyByHash(ctx, k2.Hash)
		wantNotFound(t, "a deleted key", err)
		return nil
	})
	err := s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error { return tx.DeleteCompatKey(ctx, "org_1") })
	wantNotFound(t, "deleting no key", err)
}

// testCompatInvoices: an invoice round-trips with its link and is found
// only under its own organization.
func testCompatInvoices(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1", "org_2")
	l := &engine.PaymentLink{ID: "plink_1", OrganizationID: "org_1", Amount: dec("10.50"), Token: "tok_1", CreatedBy: "compat", CreatedAt: base, UpdatedAt: base}
	create(t, s, engine.Tx.CreatePaymentLink, l)
	inv := &engine.CompatInvoice{LinkID: "plink_1", OrganizationID: "org_1", FullName: "রহিম ☃", Email: "a@example.com",
		Metadata: []byte(`{"order_id":"42"}`), RedirectURL: "https://shop.example/ok?x=1", ReturnType: engine.CompatReturnPOST,
		CancelURL: "https://shop.example/cancel", WebhookURL: "https://shop.example/ipn", CreatedAt: base}
	create(t, s, engine.Tx.CreateCompatInvoice, inv)
	wantDuplicate(t, "a second invoice of a link", try(s, engine.Tx.CreateCompatInvoice, inv))
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		got, err := tx.GetCompatInvoice(ctx, "org_1", "plink_1")
		if err != nil {
			return err
		}
		assertEqual(t, got, inv)
		_, err = tx.GetCompatInvoice(ctx, "org_2", "plink_1")
		wantNotFound(t, "another organization's invoice", err)
		return nil
	})
}
