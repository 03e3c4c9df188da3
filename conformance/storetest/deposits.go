package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
)

func testDepositRoundTrip(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1", "org_2")
	create(t, s, engine.Tx.CreateWallet, newWallet("wal_1", "org_1", engine.ChannelNagad, engine.OperationMakePayment, "01800000000"))
	d := &engine.Deposit{
		ID: "dep_1", OrganizationID: "org_1", MerchantID: "order-42 ☃", CheckoutMode: engine.CheckoutH2H,
		Amount: dec("1234.56"), PaymentMethod: "nagad_merchant",
		RedirectURL: "https://merchant.example/return?x=1", PayerPhone: "01711111111",
		Metadata: []byte(`{"b":1.10,"a":"<x>"}`), Status: engine.StatusProcessing,
		Action: engine.ActionDisplayInstructions, CheckoutToken: "tok_1", CheckoutURL: "https://pay.example/c/tok_1",
		Channel: engine.ChannelNagad, Operation: engine.OperationMakePayment, WalletID: "wal_1",
		RecipientPhone: "01800000000", RecipientName: "Shop", QRPayload: "qr",
		VerificationState: engine.VerificationProcessing, AttemptsUsed: 2, FailureCode: "reference_not_found",
		ProviderTransactionID: "TX123",
		ExpiresAt:             base.Add(15 * time.Minute), CreatedAt: base, UpdatedAt: base.Add(time.Second),
	}
	redirect := newDeposit("dep_2", "org_1", "order-43")
	create(t, s, engine.Tx.CreateDeposit, d, redirect)
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		got, err := tx.GetDeposit(ctx, "org_1", "dep_1")
		if err != nil {
			return err
		}
		assertEqual(t, got, d)
		// Metadata is kept byte for byte.
		if string(got.Metadata) != `{"b":1.10,"a":"<x>"}` {
			t.Errorf("metadata = %s", got.Metadata)
		}
		if got, err = tx.GetDepositByMerchantID(ctx, "org_1", "order-43"); err != nil {
			return err
		}
		assertEqual(t, got, redirect)
		if got, err = tx.GetDepositByCheckoutToken(ctx, "tok_1"); err != nil {
			return err
		}
		assertEqual(t, got, d)
		return nil
	})

	// Only the state machine's fields change.
	d.Status, d.VerificationState, d.AttemptsUsed = engine.StatusSucceeded, engine.VerificationSucceeded, 3
	d.FailureCode, d.ProviderTransactionID = "", "TX999"
	d.ExpiresAt, d.UpdatedAt = base.Add(time.Hour), base.Add(2*time.Hour)
	write(t, s, func(ctx context.Context, tx engine.Tx) error { return tx.UpdateDeposit(ctx, d) })
	assertEqual(t, get(t, s, func(ctx context.Context, tx engine.Tx) (*engine.Deposit, error) {
		return tx.GetDeposit(ctx, "org_1", "dep_1")
	}), d)

	for name, dup := range map[string]*engine.Deposit{
		"merchant_id":    newDeposit("dep_3", "org_1", "order-42 ☃"),
		"id":             newDeposit("dep_1", "org_2", "other"),
		"checkout_token": func() *engine.Deposit { x := newDeposit("dep_4", "org_2", "x"); x.CheckoutToken = "tok_1"; return x }(),
	} {
		wantDuplicate(t, "duplicate "+name, try(s, engine.Tx.CreateDeposit, dup))
	}
	// The same merchant_id in another organization is a different deposit.
	create(t, s, engine.Tx.CreateDeposit, newDeposit("dep_5", "org_2", "order-42 ☃"))
}

func testDepositNotFound(t *testing.T, s Store) {
	mustDeposits(t, s, "org_1", "1")
	mustOrgs(t, s, "org_2")
	wantAllNotFound(t, s, calls{
		"GetDeposit": func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.GetDeposit(ctx, "org_1", "dep_x")
			return err
		},
		"GetDeposit/other org": func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.GetDeposit(ctx, "org_2", "dep_1")
			return err
		},
		"GetDepositByMerchantID": func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.GetDepositByMerchantID(ctx, "org_2", "m_1")
			return err
		},
		"GetDepositByCheckoutToken": func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.GetDepositByCheckoutToken(ctx, "nope")
			return err
		},
	}, calls{
		"UpdateDeposit": func(ctx context.Context, tx engine.Tx) error {
			return tx.UpdateDeposit(ctx, newDeposit("dep_x", "org_1", "m"))
		},
		"LockDeposit": func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.LockDeposit(ctx, "dep_x")
			return err
		},
	})
}

func testLockAndListExpirableDeposits(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1", "org_2")
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
	create(t, s, engine.Tx.CreateDeposit, deps...)
	for limit, want := range map[int]string{100: "b,a,d,c", 4: "b,a,d,c", 2: "b,a", 1: "b", 0: "", -1: ""} {
		var got []*engine.Deposit
		write(t, s, func(ctx context.Context, tx engine.Tx) error {
			var err error
			got, err = tx.ListExpirableDeposits(ctx, now, limit)
			return err
		})
		if ids := joinIDs(got, func(d *engine.Deposit) string { return d.ID }); ids != want {
			t.Errorf("ListExpirableDeposits(limit %d) = %s, want %s", limit, ids, want)
		}
	}

	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		got, err := tx.LockDeposit(ctx, "dep_b")
		if err != nil {
			return err
		}
		assertEqual(t, got, deps[1])
		return nil
	})
}
