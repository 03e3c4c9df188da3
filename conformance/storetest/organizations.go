package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/shopspring/decimal"
)

func getOrg(t *testing.T, s Store, id string) *engine.Organization {
	t.Helper()
	return get(t, s, func(ctx context.Context, tx engine.Tx) (*engine.Organization, error) {
		return tx.GetOrganization(ctx, id)
	})
}

func listOrgs(t *testing.T, s Store) []*engine.Organization {
	t.Helper()
	return get(t, s, func(ctx context.Context, tx engine.Tx) ([]*engine.Organization, error) {
		return tx.ListOrganizations(ctx)
	})
}

func testOrganizationRoundTrip(t *testing.T, s Store) {
	org := &engine.Organization{
		ID: "org_1", Name: "Acme ☕", DepositsEnabled: true, H2HEnabled: false, WithdrawalsEnabled: true,
		InstructionsWindow: 17 * time.Minute, RedirectWindow: 2 * time.Hour,
		DepositFeePercent: dec("1.25"), DepositFeeFixed: dec("3"),
		WithdrawCommissionPercent: dec("0.0001"), WithdrawCommissionFixed: decimal.Decimal{},
		LogoURL: "https://cdn.acme.example/logo.png", SupportContact: "01711000000 · help@acme.example",
		DisabledMethods: []string{"upi", "bkash_agent"},
		CreatedAt:       base, UpdatedAt: base.Add(time.Microsecond),
	}
	create(t, s, engine.Tx.CreateOrganization, org)
	assertEqual(t, getOrg(t, s, "org_1"), org)

	org.Name, org.DepositsEnabled, org.H2HEnabled, org.WithdrawalsEnabled = "Acme 2", false, true, false
	org.InstructionsWindow, org.RedirectWindow = time.Minute, 168*time.Hour
	org.DepositFeePercent, org.DepositFeeFixed = dec("100"), dec("0.5")
	org.WithdrawCommissionPercent, org.WithdrawCommissionFixed = decimal.Decimal{}, dec("12.3456")
	org.LogoURL, org.SupportContact, org.DisabledMethods = "", "সাপোর্ট: 09610000000", nil
	org.UpdatedAt = base.Add(time.Hour)
	write(t, s, func(ctx context.Context, tx engine.Tx) error { return tx.UpdateOrganization(ctx, org) })
	org2 := newOrg("org_0")
	org2.CreatedAt = base.Add(-time.Hour)
	create(t, s, engine.Tx.CreateOrganization, org2)
	assertEqual(t, getOrg(t, s, "org_1"), org)
	// Oldest first.
	assertEqual(t, listOrgs(t, s), []*engine.Organization{org2, org})

	wantDuplicate(t, "duplicate organization", try(s, engine.Tx.CreateOrganization, newOrg("org_1")))
}

func testMethodFeesRoundTrip(t *testing.T, s Store) {
	org := newOrg("org_1")
	org.MethodFees = engine.MethodFees{
		Deposit:  map[string]engine.FeeRule{"bkash_agent": {Percent: dec("1.5"), Fixed: dec("2")}},
		Withdraw: map[string]engine.FeeRule{"bank": {Percent: dec("0.25"), Fixed: dec("10")}},
	}
	plain := newOrg("org_2") // no overrides
	plain.CreatedAt = base.Add(time.Second)
	create(t, s, engine.Tx.CreateOrganization, org, plain)
	// Get, List and Lock read the overrides alike.
	check := func(want ...*engine.Organization) {
		t.Helper()
		for _, w := range want {
			assertEqual(t, getOrg(t, s, w.ID), w)
		}
		assertEqual(t, listOrgs(t, s), want)
		write(t, s, func(ctx context.Context, tx engine.Tx) error {
			for _, w := range want {
				got, err := tx.LockOrganization(ctx, w.ID)
				if err != nil {
					return err
				}
				assertEqual(t, got, w)
			}
			return nil
		})
	}
	check(org, plain)
	got := getOrg(t, s, "org_1")
	if r := got.DepositFee("bkash_agent"); !r.Percent.Equal(dec("1.5")) || !r.Fixed.Equal(dec("2")) {
		t.Errorf("bkash_agent deposit fee = %s%% + %s", r.Percent, r.Fixed)
	}
	if r := got.WithdrawCommission("bank"); !r.Percent.Equal(dec("0.25")) || !r.Fixed.Equal(dec("10")) {
		t.Errorf("bank commission = %s%% + %s", r.Percent, r.Fixed)
	}

	// Update rewrites the overrides, including to none at all.
	org.MethodFees.Deposit = nil
	org.MethodFees.Withdraw["bkash"] = engine.FeeRule{Percent: dec("0.0001"), Fixed: dec("12.3456")}
	plain.MethodFees.Deposit = map[string]engine.FeeRule{"nagad": {Percent: dec("100"), Fixed: decimal.Decimal{}}}
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		if err := tx.UpdateOrganization(ctx, org); err != nil {
			return err
		}
		return tx.UpdateOrganization(ctx, plain)
	})
	check(org, plain)
	org.MethodFees = engine.MethodFees{Deposit: map[string]engine.FeeRule{}}
	write(t, s, func(ctx context.Context, tx engine.Tx) error { return tx.UpdateOrganization(ctx, org) })
	check(org, plain)
}

func testOrganizationNotFound(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1")
	wantAllNotFound(t, s, calls{
		"GetOrganization": func(ctx context.Context, tx engine.Tx) error { _, err := tx.GetOrganization(ctx, "org_x"); return err },
	}, calls{
		"UpdateOrganization": func(ctx context.Context, tx engine.Tx) error { return tx.UpdateOrganization(ctx, newOrg("org_x")) },
		"LockOrganization": func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.LockOrganization(ctx, "org_x")
			return err
		},
	})
}

func testAPIKeyRoundTrip(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1", "org_2")
	bare := &engine.APIKey{
		ID: "key_1", OrganizationID: "org_1", Hash: []byte{0, 1, 2, 0xff}, Hint: "abcd",
		SigningSecret: []byte("sealed-1"), CreatedAt: base,
	}
	full := &engine.APIKey{
		ID: "key_2", OrganizationID: "org_1", Hash: []byte("hash-2"), Hint: "wxyz",
		SigningSecret: []byte("sealed-2"), PreviousSigningSecret: []byte("sealed-prev"),
		PreviousSecretExpiresAt: base.Add(24 * time.Hour),
		CreatedAt:               base.Add(time.Second), ExpiresAt: ptr(base.Add(time.Hour)),
	}
	create(t, s, engine.Tx.CreateAPIKey, bare, full)
	listKeys := func(orgID string) []*engine.APIKey {
		t.Helper()
		return get(t, s, func(ctx context.Context, tx engine.Tx) ([]*engine.APIKey, error) { return tx.ListAPIKeys(ctx, orgID) })
	}
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		got, err := tx.GetAPIKey(ctx, "key_1")
		if err != nil {
			return err
		}
		assertEqual(t, got, bare)
		// engine.APIKey promises a nil PreviousSigningSecret when there is none.
		if got.PreviousSigningSecret != nil || !got.PreviousSecretExpiresAt.IsZero() || got.ExpiresAt != nil {
			t.Errorf("bare key read back with %v, %v, %v", got.PreviousSigningSecret, got.PreviousSecretExpiresAt, got.ExpiresAt)
		}
		got, err = tx.GetAPIKeyByHash(ctx, []byte("hash-2"))
		if err != nil {
			return err
		}
		assertEqual(t, got, full)
		return nil
	})
	assertEqual(t, listKeys("org_1"), []*engine.APIKey{bare, full})
	if list := listKeys("org_2"); len(list) != 0 {
		t.Errorf("ListAPIKeys(org_2) = %v", list)
	}

	// Rotate the bare key's secret, then clear the full key's previous one.
	bare.PreviousSigningSecret, bare.SigningSecret = bare.SigningSecret, []byte("sealed-1b")
	bare.PreviousSecretExpiresAt, bare.ExpiresAt = base.Add(48*time.Hour), ptr(base)
	full.PreviousSigningSecret, full.PreviousSecretExpiresAt, full.ExpiresAt = nil, time.Time{}, nil
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		if err := tx.UpdateAPIKey(ctx, bare); err != nil {
			return err
		}
		return tx.UpdateAPIKey(ctx, full)
	})
	list := listKeys("org_1")
	assertEqual(t, list, []*engine.APIKey{bare, full})
	if len(list) == 2 && list[1].PreviousSigningSecret != nil {
		t.Errorf("cleared previous secret = %#v, want nil", list[1].PreviousSigningSecret)
	}

	dup := *bare
	dup.ID = "key_3"
	wantDuplicate(t, "duplicate hash", try(s, engine.Tx.CreateAPIKey, &dup))
	dup = *bare
	dup.Hash = []byte("hash-3")
	wantDuplicate(t, "duplicate ID", try(s, engine.Tx.CreateAPIKey, &dup))
}

func testAPIKeyNotFound(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1")
	create(t, s, engine.Tx.CreateAPIKey, &engine.APIKey{
		ID: "key_1", OrganizationID: "org_1", Hash: []byte("h"), SigningSecret: []byte("s"), CreatedAt: base,
	})
	wantAllNotFound(t, s, calls{
		"GetAPIKey": func(ctx context.Context, tx engine.Tx) error { _, err := tx.GetAPIKey(ctx, "key_x"); return err },
		"GetAPIKeyByHash": func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.GetAPIKeyByHash(ctx, []byte("x"))
			return err
		},
	}, calls{
		"UpdateAPIKey": func(ctx context.Context, tx engine.Tx) error {
			return tx.UpdateAPIKey(ctx, &engine.APIKey{ID: "key_x", SigningSecret: []byte("s")})
		},
	})
}

func testWalletRoundTrip(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1")
	w := &engine.Wallet{
		ID: "wal_1", OrganizationID: "org_1", Channel: engine.ChannelBkash, Operation: engine.OperationCashOut,
		Phone: "01700000001", Name: "Shop", QRPayload: "qr-data",
		MinAmount: decimal.NewNullDecimal(dec("10.5")), DailyLimit: decimal.NewNullDecimal(dec("25000")),
		Enabled: true, CreatedAt: base, LiveUntil: ptr(base.Add(5 * time.Minute)),
	}
	create(t, s, engine.Tx.CreateWallet, w)
	getWallet := func() *engine.Wallet {
		t.Helper()
		return get(t, s, func(ctx context.Context, tx engine.Tx) (*engine.Wallet, error) {
			return tx.GetWallet(ctx, "org_1", "wal_1")
		})
	}
	got := getWallet()
	assertEqual(t, got, w)
	if got.MaxAmount.Valid || got.LastAssignedAt != nil {
		t.Errorf("unset fields read back as %v, %v", got.MaxAmount, got.LastAssignedAt)
	}

	w.Name, w.QRPayload, w.Enabled = "", "", false
	w.MinAmount, w.MaxAmount, w.DailyLimit = decimal.NullDecimal{}, decimal.NewNullDecimal(dec("999.99")), decimal.NullDecimal{}
	w.LastAssignedAt = ptr(base.Add(time.Minute))
	// UpdateWallet leaves LiveUntil to the wallet's SMS device.
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		stale := *w
		stale.LiveUntil = nil
		return tx.UpdateWallet(ctx, &stale)
	})
	assertEqual(t, getWallet(), w)
	wantLocked(t, s, w, func(ctx context.Context, tx engine.Tx) (*engine.Wallet, error) {
		return tx.LockWallet(ctx, "org_1", "wal_1")
	})

	dup := newWallet("wal_2", "org_1", w.Channel, w.Operation, w.Phone)
	wantDuplicate(t, "duplicate wallet", try(s, engine.Tx.CreateWallet, dup))
}

func testWalletNotFound(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1", "org_2")
	create(t, s, engine.Tx.CreateWallet, newWallet("wal_1", "org_1", "bkash", "cash_out", "017"))
	wantAllNotFound(t, s, calls{
		"GetWallet": func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.GetWallet(ctx, "org_1", "wal_x")
			return err
		},
		"GetWallet/other org": func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.GetWallet(ctx, "org_2", "wal_1")
			return err
		},
	}, calls{
		"UpdateWallet": func(ctx context.Context, tx engine.Tx) error {
			return tx.UpdateWallet(ctx, &engine.Wallet{ID: "wal_x"})
		},
		"LockWallet": func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.LockWallet(ctx, "org_1", "wal_x")
			return err
		},
		"LockWallet/other org": func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.LockWallet(ctx, "org_2", "wal_1")
			return err
		},
	})
}

func testListWallets(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1", "org_2")
	at := func(m int) *time.Time { return ptr(base.Add(time.Duration(m) * time.Minute)) }
	ws := []*engine.Wallet{
		newWallet("wal_a", "org_1", "bkash", "cash_out", "01"),
		newWallet("wal_b", "org_1", "bkash", "cash_out", "02"),
		newWallet("wal_c", "org_1", "bkash", "cash_out", "03"),
		newWallet("wal_d", "org_1", "bkash", "cash_out", "04"),
		newWallet("wal_e", "org_1", "bkash", "make_payment", "05"),
		newWallet("wal_f", "org_1", "nagad", "cash_out", "06"),
		newWallet("wal_g", "org_2", "bkash", "cash_out", "07"),
		newWallet("wal_h", "org_1", "bkash", "cash_out", "08"),
	}
	ws[0].LastAssignedAt = at(5)
	ws[1].LastAssignedAt = at(1)
	ws[2].LastAssignedAt = at(5) // ties with wal_a: by ID
	ws[3].Enabled = false
	ws[6].LastAssignedAt = at(0)
	create(t, s, engine.Tx.CreateWallet, ws...)
	for _, c := range []struct {
		p    engine.ListWalletsParams
		want string
	}{
		{engine.ListWalletsParams{}, "d,e,f,h,g,b,a,c"},
		{engine.ListWalletsParams{OrganizationID: "org_1"}, "d,e,f,h,b,a,c"},
		{engine.ListWalletsParams{OrganizationID: "org_1", Channel: "bkash", Operation: "cash_out"}, "d,h,b,a,c"},
		{engine.ListWalletsParams{OrganizationID: "org_1", Channel: "bkash", Operation: "cash_out", EnabledOnly: true}, "h,b,a,c"},
		{engine.ListWalletsParams{Channel: "nagad"}, "f"},
		{engine.ListWalletsParams{Operation: "make_payment"}, "e"},
		{engine.ListWalletsParams{OrganizationID: "org_3"}, ""},
	} {
		got := get(t, s, func(ctx context.Context, tx engine.Tx) ([]*engine.Wallet, error) { return tx.ListWallets(ctx, c.p) })
		if ids := joinIDs(got, func(w *engine.Wallet) string { return w.ID }); ids != c.want {
			t.Errorf("ListWallets(%+v) = %s, want %s", c.p, ids, c.want)
		}
		// ForUpdate locks the same list.
		p := c.p
		p.ForUpdate = true
		wantLocked(t, s, got, func(ctx context.Context, tx engine.Tx) ([]*engine.Wallet, error) { return tx.ListWallets(ctx, p) })
	}
}

func testWalletDepositAmounts(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1")
	since := base
	var deps []*engine.Deposit
	add := func(wallet, status, amount string, created time.Time) {
		d := newDeposit(fmt.Sprintf("dep_%d", len(deps)), "org_1", fmt.Sprintf("m%d", len(deps)))
		d.WalletID, d.Status, d.Amount, d.CreatedAt = wallet, status, dec(amount), created
		deps = append(deps, d)
	}
	add("wal_1", engine.StatusPending, "100", since)
	add("wal_1", engine.StatusProcessing, "200.5", since.Add(time.Hour))
	add("wal_1", engine.StatusSucceeded, "300", since.Add(time.Hour))
	add("wal_1", engine.StatusRejected, "1", since.Add(time.Hour))
	add("wal_1", engine.StatusFailed, "1000", since.Add(time.Hour))
	add("wal_1", engine.StatusExpired, "1000", since.Add(time.Hour))
	add("wal_1", engine.StatusCancelled, "1000", since.Add(time.Hour))
	add("wal_1", engine.StatusSucceeded, "1000", since.Add(-time.Microsecond))
	add("wal_2", engine.StatusSucceeded, "1000", since.Add(time.Hour))
	add("", engine.StatusSucceeded, "1000", since.Add(time.Hour))
	create(t, s, engine.Tx.CreateWallet,
		newWallet("wal_1", "org_1", "bkash", "cash_out", "wal_1"), newWallet("wal_2", "org_1", "bkash", "cash_out", "wal_2"))
	create(t, s, engine.Tx.CreateDeposit, deps...)
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		amounts, err := tx.WalletDepositAmounts(ctx, "wal_1", since)
		if err != nil {
			return err
		}
		if sum := decimal.Sum(decimal.Zero, amounts...); len(amounts) != 4 || !sum.Equal(dec("601.5")) {
			t.Errorf("amounts = %v, want 4 summing to 601.5", amounts)
		}
		amounts, err = tx.WalletDepositAmounts(ctx, "wal_3", since)
		if err != nil || len(amounts) != 0 {
			t.Errorf("unknown wallet: %v, %v", amounts, err)
		}
		return nil
	})
}

func testWalletOfMissingOrganization(t *testing.T, s Store) {
	wantInternal(t, "wallet of a missing organization",
		try(s, engine.Tx.CreateWallet, newWallet("wal_1", "org_missing", "bkash", "cash_out", "01")))
}
