package storetest

import (
	"bytes"
	"context"
	"testing"

	"github.com/payd-engine/payd/engine"
)

func testMasterKeyCheckRoundTrip(t *testing.T, s Store) {
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		_, err := tx.GetMasterKeyCheck(ctx)
		wantNotFound(t, "GetMasterKeyCheck on a fresh store", err)
		return nil
	})
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		return tx.CreateMasterKeyCheck(ctx, []byte("sealed-check"), base)
	})
	wantDuplicate(t, "a second CreateMasterKeyCheck", s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
		return tx.CreateMasterKeyCheck(ctx, []byte("another"), base)
	}))
	if got := get(t, s, func(ctx context.Context, tx engine.Tx) ([]byte, error) { return tx.GetMasterKeyCheck(ctx) }); !bytes.Equal(got, []byte("sealed-check")) {
		t.Errorf("GetMasterKeyCheck = %q, want the first check", got)
	}
}

func testAnySealedSecret(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1")
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		_, _, err := tx.AnySealedSecret(ctx)
		wantNotFound(t, "AnySealedSecret with no secrets", err)
		return nil
	})
	create(t, s, engine.Tx.CreateWebhookEndpoint, newEndpoint("whe_1", "org_1"))
	id, sealed, err := anySealed(s)
	if err != nil || id != "whe_1" || string(sealed) != "sealed:whe_1" {
		t.Errorf("AnySealedSecret with an endpoint = %q, %q, %v", id, sealed, err)
	}
	write(t, s, func(ctx context.Context, tx engine.Tx) error { return tx.DeleteWebhookEndpoint(ctx, "whe_1") })
	create(t, s, engine.Tx.CreateAPIKey, &engine.APIKey{
		ID: "key_1", OrganizationID: "org_1", Hash: []byte("hash-1"), Hint: "abcd",
		SigningSecret: []byte("sealed-1"), CreatedAt: base,
	})
	id, sealed, err = anySealed(s)
	if err != nil || id != "key_1" || string(sealed) != "sealed-1" {
		t.Errorf("AnySealedSecret with an API key = %q, %q, %v", id, sealed, err)
	}
}

func anySealed(s Store) (id string, sealed []byte, err error) {
	err = s.ReadTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
		id, sealed, err = tx.AnySealedSecret(ctx)
		return err
	})
	return id, sealed, err
}
