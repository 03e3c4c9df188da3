package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/storage/sqlite"
	"github.com/shopspring/decimal"
	_ "modernc.org/sqlite"
)

// base is a UTC time at microsecond precision, as the engine produces.
var base = time.Date(2025, 3, 14, 9, 26, 53, 589793000, time.UTC)

func openStore(t *testing.T) (*sqlite.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "payd.db")
	s, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s, path
}

// write and read run fn in a transaction and fail the test on error.
func write(t *testing.T, s *sqlite.Store, fn func(ctx context.Context, tx engine.Tx) error) {
	t.Helper()
	if err := s.InTx(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, s *sqlite.Store, fn func(ctx context.Context, tx engine.Tx) error) {
	t.Helper()
	if err := s.ReadTx(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

// assertEqual compares structs field by field, decimals by value.
func assertEqual(t *testing.T, got, want any) {
	t.Helper()
	if diff := diff(reflect.ValueOf(got), reflect.ValueOf(want), ""); diff != "" {
		t.Errorf("mismatch:%s", diff)
	}
}

var (
	decimalType     = reflect.TypeOf(decimal.Decimal{})
	nullDecimalType = reflect.TypeOf(decimal.NullDecimal{})
)

func diff(got, want reflect.Value, path string) string {
	if got.Type() != want.Type() {
		return fmt.Sprintf("\n%s: type %s != %s", path, got.Type(), want.Type())
	}
	switch {
	case got.Type() == decimalType:
		g, w := got.Interface().(decimal.Decimal), want.Interface().(decimal.Decimal)
		if !g.Equal(w) {
			return fmt.Sprintf("\n%s: got %s, want %s", path, g, w)
		}
		return ""
	case got.Type() == nullDecimalType:
		g, w := got.Interface().(decimal.NullDecimal), want.Interface().(decimal.NullDecimal)
		if g.Valid != w.Valid || g.Valid && !g.Decimal.Equal(w.Decimal) {
			return fmt.Sprintf("\n%s: got %v, want %v", path, g, w)
		}
		return ""
	case got.Kind() == reflect.Pointer:
		if got.IsNil() || want.IsNil() {
			if got.IsNil() != want.IsNil() {
				return fmt.Sprintf("\n%s: got %v, want %v", path, got, want)
			}
			return ""
		}
		return diff(got.Elem(), want.Elem(), path)
	case got.Kind() == reflect.Slice && (got.Type().Elem().Kind() == reflect.Pointer || got.Type().Elem().Kind() == reflect.Struct):
		if got.Len() != want.Len() {
			return fmt.Sprintf("\n%s: %d elements, want %d", path, got.Len(), want.Len())
		}
		var out string
		for i := range got.Len() {
			out += diff(got.Index(i), want.Index(i), fmt.Sprintf("%s[%d]", path, i))
		}
		return out
	case got.Kind() == reflect.Map:
		// Key by key, so decimals in values compare by value. A nil and an
		// empty map are equal.
		if got.Len() != want.Len() {
			return fmt.Sprintf("\n%s: %d keys, want %d", path, got.Len(), want.Len())
		}
		var out string
		for _, k := range want.MapKeys() {
			g := got.MapIndex(k)
			if !g.IsValid() {
				out += fmt.Sprintf("\n%s[%v]: missing", path, k)
				continue
			}
			out += diff(g, want.MapIndex(k), fmt.Sprintf("%s[%v]", path, k))
		}
		return out
	case got.Kind() == reflect.Struct && got.Type() != reflect.TypeOf(time.Time{}):
		var out string
		for i := range got.NumField() {
			out += diff(got.Field(i), want.Field(i), path+"."+got.Type().Field(i).Name)
		}
		return out
	}
	if !reflect.DeepEqual(got.Interface(), want.Interface()) {
		return fmt.Sprintf("\n%s: got %#v, want %#v", path, got.Interface(), want.Interface())
	}
	return ""
}

func ptr[T any](v T) *T { return &v }

func newOrg(id string) *engine.Organization {
	return &engine.Organization{
		ID: id, Name: "Org " + id, DepositsEnabled: true,
		InstructionsWindow: engine.DefaultInstructionsWindow, RedirectWindow: engine.DefaultRedirectWindow,
		CreatedAt: base, UpdatedAt: base,
	}
}

func newWallet(id, orgID, channel, operation, phone string) *engine.Wallet {
	return &engine.Wallet{
		ID: id, OrganizationID: orgID, Channel: channel, Operation: operation, Phone: phone,
		Enabled: true, CreatedAt: base,
	}
}

func newDeposit(id, orgID, merchantID string) *engine.Deposit {
	return &engine.Deposit{
		ID: id, OrganizationID: orgID, MerchantID: merchantID,
		CheckoutMode: engine.CheckoutRedirect, Amount: decimal.RequireFromString("500"),
		PaymentMethod: "bkash", RedirectURL: "https://merchant.example/return",
		Metadata: []byte("{}"), Status: engine.StatusPending, Action: engine.ActionRedirect,
		CheckoutToken: "tok_" + id, CheckoutURL: "https://pay.example/c/tok_" + id,
		VerificationState: engine.VerificationProcessing,
		ExpiresAt:         base.Add(30 * time.Minute), CreatedAt: base, UpdatedAt: base,
	}
}

func createOrg(t *testing.T, s *sqlite.Store, id string) *engine.Organization {
	t.Helper()
	org := newOrg(id)
	write(t, s, func(ctx context.Context, tx engine.Tx) error { return tx.CreateOrganization(ctx, org) })
	return org
}

func TestMigrationsIdempotent(t *testing.T) {
	ctx := context.Background()
	s, path := openStore(t)
	createOrg(t, s, "org_1")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		s2, err := sqlite.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		if err := s2.ReadTx(ctx, func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.GetOrganization(ctx, "org_1")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if err := s2.Close(); err != nil {
			t.Fatal(err)
		}
	}

	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var versions, first int
	if err := db.QueryRow(`SELECT count(*), min(version) FROM schema_migrations`).Scan(&versions, &first); err != nil {
		t.Fatal(err)
	}
	if versions < 1 || first != 1 {
		t.Errorf("schema_migrations: %d rows from version %d", versions, first)
	}
	var mode string
	if err := db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if mode != "wal" {
		t.Errorf("journal_mode = %s, want wal", mode)
	}
}

func TestOpenRejectsURIs(t *testing.T) {
	for _, p := range []string{"", ":memory:", "file:x.db", "x.db?mode=ro"} {
		if s, err := sqlite.Open(context.Background(), p); err == nil {
			s.Close()
			t.Errorf("Open(%q) succeeded", p)
		}
	}
}

func TestOrganizationRoundTrip(t *testing.T) {
	s, _ := openStore(t)
	org := &engine.Organization{
		ID: "org_1", Name: "Acme ☕", DepositsEnabled: true, H2HEnabled: false, WithdrawalsEnabled: true,
		InstructionsWindow: 17 * time.Minute, RedirectWindow: 2 * time.Hour,
		DepositFeePercent: decimal.RequireFromString("1.25"), DepositFeeFixed: decimal.RequireFromString("3"),
		WithdrawCommissionPercent: decimal.RequireFromString("0.0001"), WithdrawCommissionFixed: decimal.Decimal{},
		CreatedAt: base, UpdatedAt: base.Add(time.Microsecond),
	}
	write(t, s, func(ctx context.Context, tx engine.Tx) error { return tx.CreateOrganization(ctx, org) })
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		got, err := tx.GetOrganization(ctx, "org_1")
		if err != nil {
			return err
		}
		assertEqual(t, got, org)
		return nil
	})

	org.Name, org.DepositsEnabled, org.H2HEnabled, org.WithdrawalsEnabled = "Acme 2", false, true, false
	org.InstructionsWindow, org.RedirectWindow = time.Minute, 168*time.Hour
	org.DepositFeePercent, org.DepositFeeFixed = decimal.RequireFromString("100"), decimal.RequireFromString("0.5")
	org.WithdrawCommissionPercent, org.WithdrawCommissionFixed = decimal.Decimal{}, decimal.RequireFromString("12.3456")
	org.UpdatedAt = base.Add(time.Hour)
	write(t, s, func(ctx context.Context, tx engine.Tx) error { return tx.UpdateOrganization(ctx, org) })
	org2 := newOrg("org_0")
	org2.CreatedAt = base.Add(-time.Hour)
	write(t, s, func(ctx context.Context, tx engine.Tx) error { return tx.CreateOrganization(ctx, org2) })
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		got, err := tx.GetOrganization(ctx, "org_1")
		if err != nil {
			return err
		}
		assertEqual(t, got, org)
		list, err := tx.ListOrganizations(ctx)
		if err != nil {
			return err
		}
		assertEqual(t, list, []*engine.Organization{org2, org})
		return nil
	})

	err := s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
		return tx.CreateOrganization(ctx, newOrg("org_1"))
	})
	if !errors.Is(err, engine.ErrDuplicate) {
		t.Errorf("duplicate organization: %v, want ErrDuplicate", err)
	}
}

func TestAPIKeyRoundTrip(t *testing.T) {
	s, _ := openStore(t)
	createOrg(t, s, "org_1")
	createOrg(t, s, "org_2")
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
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		if err := tx.CreateAPIKey(ctx, bare); err != nil {
			return err
		}
		return tx.CreateAPIKey(ctx, full)
	})
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		got, err := tx.GetAPIKey(ctx, "key_1")
		if err != nil {
			return err
		}
		assertEqual(t, got, bare)
		if got.PreviousSigningSecret != nil || !got.PreviousSecretExpiresAt.IsZero() || got.ExpiresAt != nil {
			t.Errorf("bare key read back with %v, %v, %v", got.PreviousSigningSecret, got.PreviousSecretExpiresAt, got.ExpiresAt)
		}
		got, err = tx.GetAPIKeyByHash(ctx, []byte("hash-2"))
		if err != nil {
			return err
		}
		assertEqual(t, got, full)
		list, err := tx.ListAPIKeys(ctx, "org_1")
		if err != nil {
			return err
		}
		assertEqual(t, list, []*engine.APIKey{bare, full})
		if list, err := tx.ListAPIKeys(ctx, "org_2"); err != nil || len(list) != 0 {
			t.Errorf("ListAPIKeys(org_2) = %v, %v", list, err)
		}
		return nil
	})

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
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		list, err := tx.ListAPIKeys(ctx, "org_1")
		if err != nil {
			return err
		}
		assertEqual(t, list, []*engine.APIKey{bare, full})
		return nil
	})

	dup := *bare
	dup.ID = "key_3"
	err := s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error { return tx.CreateAPIKey(ctx, &dup) })
	if !errors.Is(err, engine.ErrDuplicate) {
		t.Errorf("duplicate hash: %v, want ErrDuplicate", err)
	}
}

func TestWalletRoundTrip(t *testing.T) {
	s, _ := openStore(t)
	createOrg(t, s, "org_1")
	w := &engine.Wallet{
		ID: "wal_1", OrganizationID: "org_1", Channel: engine.ChannelBkash, Operation: engine.OperationCashOut,
		Phone: "01700000001", Name: "Shop", QRPayload: "qr-data",
		MinAmount: decimal.NewNullDecimal(decimal.RequireFromString("10.5")), DailyLimit: decimal.NewNullDecimal(decimal.RequireFromString("25000")),
		Enabled: true, CreatedAt: base,
	}
	write(t, s, func(ctx context.Context, tx engine.Tx) error { return tx.CreateWallet(ctx, w) })
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		got, err := tx.GetWallet(ctx, "org_1", "wal_1")
		if err != nil {
			return err
		}
		assertEqual(t, got, w)
		if got.MaxAmount.Valid || got.LastAssignedAt != nil {
			t.Errorf("unset fields read back as %v, %v", got.MaxAmount, got.LastAssignedAt)
		}
		return nil
	})

	w.Name, w.QRPayload, w.Enabled = "", "", false
	w.MinAmount, w.MaxAmount, w.DailyLimit = decimal.NullDecimal{}, decimal.NewNullDecimal(decimal.RequireFromString("999.99")), decimal.NullDecimal{}
	w.LastAssignedAt = ptr(base.Add(time.Minute))
	write(t, s, func(ctx context.Context, tx engine.Tx) error { return tx.UpdateWallet(ctx, w) })
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		got, err := tx.GetWallet(ctx, "org_1", "wal_1")
		if err != nil {
			return err
		}
		assertEqual(t, got, w)
		return nil
	})

	dup := newWallet("wal_2", "org_1", w.Channel, w.Operation, w.Phone)
	err := s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error { return tx.CreateWallet(ctx, dup) })
	if !errors.Is(err, engine.ErrDuplicate) {
		t.Errorf("duplicate wallet: %v, want ErrDuplicate", err)
	}
}

func TestDepositRoundTrip(t *testing.T) {
	s, _ := openStore(t)
	createOrg(t, s, "org_1")
	createOrg(t, s, "org_2")
	w := newWallet("wal_1", "org_1", engine.ChannelNagad, engine.OperationMakePayment, "01800000000")
	write(t, s, func(ctx context.Context, tx engine.Tx) error { return tx.CreateWallet(ctx, w) })
	d := &engine.Deposit{
		ID: "dep_1", OrganizationID: "org_1", MerchantID: "order-42 ☃", CheckoutMode: engine.CheckoutH2H,
		Amount: decimal.RequireFromString("1234.56"), PaymentMethod: "nagad_merchant",
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
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		if err := tx.CreateDeposit(ctx, d); err != nil {
			return err
		}
		return tx.CreateDeposit(ctx, redirect)
	})
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		got, err := tx.GetDeposit(ctx, "org_1", "dep_1")
		if err != nil {
			return err
		}
		assertEqual(t, got, d)
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
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		got, err := tx.GetDeposit(ctx, "org_1", "dep_1")
		if err != nil {
			return err
		}
		assertEqual(t, got, d)
		return nil
	})

	for name, dup := range map[string]*engine.Deposit{
		"merchant_id":    newDeposit("dep_3", "org_1", "order-42 ☃"),
		"id":             newDeposit("dep_1", "org_2", "other"),
		"checkout_token": func() *engine.Deposit { x := newDeposit("dep_4", "org_2", "x"); x.CheckoutToken = "tok_1"; return x }(),
	} {
		err := s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error { return tx.CreateDeposit(ctx, dup) })
		if !errors.Is(err, engine.ErrDuplicate) {
			t.Errorf("duplicate %s: %v, want ErrDuplicate", name, err)
		}
	}
	// The same merchant_id in another organization is a different deposit.
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		return tx.CreateDeposit(ctx, newDeposit("dep_5", "org_2", "order-42 ☃"))
	})
}

func TestNotFound(t *testing.T) {
	s, _ := openStore(t)
	createOrg(t, s, "org_1")
	createOrg(t, s, "org_2")
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		if err := tx.CreateWallet(ctx, newWallet("wal_1", "org_1", "bkash", "cash_out", "017")); err != nil {
			return err
		}
		return tx.CreateDeposit(ctx, newDeposit("dep_1", "org_1", "m1"))
	})
	ctx := context.Background()
	for name, fn := range map[string]func(ctx context.Context, tx engine.Tx) error{
		"GetOrganization": func(ctx context.Context, tx engine.Tx) error { _, err := tx.GetOrganization(ctx, "org_x"); return err },
		"GetAPIKey":       func(ctx context.Context, tx engine.Tx) error { _, err := tx.GetAPIKey(ctx, "key_x"); return err },
		"GetAPIKeyByHash": func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.GetAPIKeyByHash(ctx, []byte("x"))
			return err
		},
		"GetWallet": func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.GetWallet(ctx, "org_1", "wal_x")
			return err
		},
		"GetWallet/other org": func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.GetWallet(ctx, "org_2", "wal_1")
			return err
		},
		"GetDeposit": func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.GetDeposit(ctx, "org_1", "dep_x")
			return err
		},
		"GetDeposit/other org": func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.GetDeposit(ctx, "org_2", "dep_1")
			return err
		},
		"GetDepositByMerchantID": func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.GetDepositByMerchantID(ctx, "org_2", "m1")
			return err
		},
		"GetDepositByCheckoutToken": func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.GetDepositByCheckoutToken(ctx, "nope")
			return err
		},
	} {
		// The engine compares with ==, so the error must be the bare sentinel.
		if err := s.ReadTx(ctx, fn); err != engine.ErrNotFound {
			t.Errorf("%s: %v, want ErrNotFound", name, err)
		}
	}
	for name, fn := range map[string]func(ctx context.Context, tx engine.Tx) error{
		"UpdateOrganization": func(ctx context.Context, tx engine.Tx) error { return tx.UpdateOrganization(ctx, newOrg("org_x")) },
		"UpdateAPIKey": func(ctx context.Context, tx engine.Tx) error {
			return tx.UpdateAPIKey(ctx, &engine.APIKey{ID: "key_x", SigningSecret: []byte("s")})
		},
		"UpdateWallet": func(ctx context.Context, tx engine.Tx) error {
			return tx.UpdateWallet(ctx, &engine.Wallet{ID: "wal_x"})
		},
		"UpdateDeposit": func(ctx context.Context, tx engine.Tx) error {
			return tx.UpdateDeposit(ctx, newDeposit("dep_x", "org_1", "m"))
		},
	} {
		if err := s.InTx(ctx, fn); !errors.Is(err, engine.ErrNotFound) {
			t.Errorf("%s: %v, want ErrNotFound", name, err)
		}
	}
}

func TestRollback(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	sentinel := &engine.Error{Code: engine.CodeForbidden, Message: "no"}
	err := s.InTx(ctx, func(ctx context.Context, tx engine.Tx) error {
		if err := tx.CreateOrganization(ctx, newOrg("org_err")); err != nil {
			return err
		}
		return fmt.Errorf("wrapped: %w", sentinel)
	})
	var e *engine.Error
	if !errors.As(err, &e) || e != sentinel {
		t.Errorf("InTx returned %v, want the fn's error", err)
	}

	func() {
		defer func() {
			if p := recover(); p != "boom" {
				t.Errorf("recovered %v, want the fn's panic", p)
			}
		}()
		_ = s.InTx(ctx, func(ctx context.Context, tx engine.Tx) error {
			if err := tx.CreateOrganization(ctx, newOrg("org_panic")); err != nil {
				return err
			}
			panic("boom")
		})
	}()

	// The writer's one connection must be free again, and neither row there.
	createOrg(t, s, "org_ok")
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		for _, id := range []string{"org_err", "org_panic"} {
			if _, err := tx.GetOrganization(ctx, id); err != engine.ErrNotFound {
				t.Errorf("%s after rollback: %v, want ErrNotFound", id, err)
			}
		}
		return nil
	})
}

func TestReadTxIsReadOnly(t *testing.T) {
	s, _ := openStore(t)
	err := s.ReadTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
		return tx.CreateOrganization(ctx, newOrg("org_1"))
	})
	if err == nil {
		t.Fatal("ReadTx allowed a write")
	}
}

func TestListWallets(t *testing.T) {
	s, _ := openStore(t)
	createOrg(t, s, "org_1")
	createOrg(t, s, "org_2")
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
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		for _, w := range ws {
			if err := tx.CreateWallet(ctx, w); err != nil {
				return err
			}
		}
		return nil
	})
	ids := func(p engine.ListWalletsParams) string {
		var got []*engine.Wallet
		read(t, s, func(ctx context.Context, tx engine.Tx) error {
			var err error
			got, err = tx.ListWallets(ctx, p)
			return err
		})
		var out []string
		for _, w := range got {
			out = append(out, strings.TrimPrefix(w.ID, "wal_"))
		}
		return strings.Join(out, ",")
	}
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
		if got := ids(c.p); got != c.want {
			t.Errorf("ListWallets(%+v) = %s, want %s", c.p, got, c.want)
		}
	}
}

func TestWalletDepositAmounts(t *testing.T) {
	s, _ := openStore(t)
	createOrg(t, s, "org_1")
	since := base
	var deps []*engine.Deposit
	add := func(wallet, status, amount string, created time.Time) {
		d := newDeposit(fmt.Sprintf("dep_%d", len(deps)), "org_1", fmt.Sprintf("m%d", len(deps)))
		d.WalletID, d.Status, d.Amount, d.CreatedAt = wallet, status, decimal.RequireFromString(amount), created
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
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		for _, w := range []string{"wal_1", "wal_2"} {
			if err := tx.CreateWallet(ctx, newWallet(w, "org_1", "bkash", "cash_out", w)); err != nil {
				return err
			}
		}
		for _, d := range deps {
			if err := tx.CreateDeposit(ctx, d); err != nil {
				return err
			}
		}
		return nil
	})
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		amounts, err := tx.WalletDepositAmounts(ctx, "wal_1", since)
		if err != nil {
			return err
		}
		if sum := decimal.Sum(decimal.Zero, amounts...); len(amounts) != 4 || !sum.Equal(decimal.RequireFromString("601.5")) {
			t.Errorf("amounts = %v, want 4 summing to 601.5", amounts)
		}
		amounts, err = tx.WalletDepositAmounts(ctx, "wal_3", since)
		if err != nil || len(amounts) != 0 {
			t.Errorf("unknown wallet: %v, %v", amounts, err)
		}
		return nil
	})
}

func TestConcurrentSameMerchantID(t *testing.T) {
	s, _ := openStore(t)
	createOrg(t, s, "org_1")
	const n = 50
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			errs[i] = s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
				return tx.CreateDeposit(ctx, newDeposit(fmt.Sprintf("dep_%02d", i), "org_1", "same"))
			})
		})
	}
	wg.Wait()
	var ok, dup int
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, engine.ErrDuplicate):
			dup++
		default:
			t.Errorf("unexpected error: %v", err)
		}
	}
	if ok != 1 || dup != n-1 {
		t.Errorf("%d succeeded and %d were duplicates, want 1 and %d", ok, dup, n-1)
	}
}

func TestConcurrentWritersAndReaders(t *testing.T) {
	s, _ := openStore(t)
	createOrg(t, s, "org_1")
	const n = 50
	ctx, stop := context.WithCancel(context.Background())
	var readers sync.WaitGroup
	for range 8 {
		readers.Go(func() {
			for ctx.Err() == nil {
				err := s.ReadTx(ctx, func(ctx context.Context, tx engine.Tx) error {
					_, err := tx.GetDepositByMerchantID(ctx, "org_1", "m07")
					if errors.Is(err, engine.ErrNotFound) {
						return nil
					}
					return err
				})
				if err != nil && ctx.Err() == nil {
					t.Errorf("reader: %v", err)
				}
			}
		})
	}
	var writers sync.WaitGroup
	for i := range n {
		writers.Go(func() {
			err := s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
				return tx.CreateDeposit(ctx, newDeposit(fmt.Sprintf("dep_%02d", i), "org_1", fmt.Sprintf("m%02d", i)))
			})
			if err != nil {
				t.Errorf("writer %d: %v", i, err)
			}
		})
	}
	writers.Wait()
	stop()
	readers.Wait()
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		for i := range n {
			if _, err := tx.GetDepositByMerchantID(ctx, "org_1", fmt.Sprintf("m%02d", i)); err != nil {
				return fmt.Errorf("m%02d: %w", i, err)
			}
		}
		return nil
	})
}

// Two stores on one file stand in for two processes: the second's writes
// meet the first's write lock inside SQLite, not in database/sql's pool,
// and must still never report busy.
func TestConcurrentStoresOnOneFile(t *testing.T) {
	s1, path := openStore(t)
	s2, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	createOrg(t, s1, "org_1")
	var wg sync.WaitGroup
	for i := range 40 {
		s := s1
		if i%2 == 1 {
			s = s2
		}
		wg.Go(func() {
			err := s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
				if _, err := tx.GetOrganization(ctx, "org_1"); err != nil {
					return err
				}
				return tx.CreateDeposit(ctx, newDeposit(fmt.Sprintf("dep_%02d", i), "org_1", fmt.Sprintf("m%02d", i)))
			})
			if err != nil {
				t.Errorf("writer %d: %v", i, err)
			}
		})
	}
	wg.Wait()
}

func TestForeignKeys(t *testing.T) {
	s, _ := openStore(t)
	err := s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
		return tx.CreateWallet(ctx, newWallet("wal_1", "org_missing", "bkash", "cash_out", "01"))
	})
	if err == nil || errors.Is(err, engine.ErrDuplicate) || errors.Is(err, engine.ErrNotFound) {
		t.Errorf("wallet of a missing organization: %v, want an internal error", err)
	}
}

// holdWriteLock takes the database's write lock through a connection of its
// own, as another process would, and returns the function that releases it.
func holdWriteLock(t *testing.T, path string) func() {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	return func() {
		if _, err := conn.ExecContext(context.Background(), "COMMIT"); err != nil {
			t.Error(err)
		}
		conn.Close()
		db.Close()
	}
}

func TestWaitsForAnotherWriter(t *testing.T) {
	s, path := openStore(t)
	release := holdWriteLock(t, path)
	time.AfterFunc(300*time.Millisecond, release)
	start := time.Now()
	createOrg(t, s, "org_1")
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Errorf("InTx finished after %v, while another connection held the write lock", d)
	}
	// Readers never wait for a writer.
	release2 := holdWriteLock(t, path)
	defer release2()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := s.ReadTx(ctx, func(ctx context.Context, tx engine.Tx) error {
		_, err := tx.GetOrganization(ctx, "org_1")
		return err
	}); err != nil {
		t.Errorf("ReadTx under a held write lock: %v", err)
	}
}

func TestContextEndsWait(t *testing.T) {
	s, path := openStore(t)
	release := holdWriteLock(t, path)
	defer release()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err := s.InTx(ctx, func(ctx context.Context, tx engine.Tx) error {
		return tx.CreateOrganization(ctx, newOrg("org_1"))
	})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("InTx = %v, want context.DeadlineExceeded", err)
	}
}

// TestOpenPathWithURICharacters opens a database in a directory whose name
// holds characters that mean something in a URI.
func TestOpenPathWithURICharacters(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a#b%20c d")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "payd.db")
	s, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the database is not where it was asked to be: %v", err)
	}
}
