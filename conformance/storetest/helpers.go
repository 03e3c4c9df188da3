package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/shopspring/decimal"
)

// base is a UTC time at microsecond precision, as the engine produces.
var base = time.Date(2025, 3, 14, 9, 26, 53, 589793000, time.UTC)

func ptr[T any](v T) *T { return &v }

var dec = decimal.RequireFromString

// write and read run fn in a transaction and fail the test on error.
func write(t *testing.T, s Store, fn func(ctx context.Context, tx engine.Tx) error) {
	t.Helper()
	if err := s.InTx(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, s Store, fn func(ctx context.Context, tx engine.Tx) error) {
	t.Helper()
	if err := s.ReadTx(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

// get runs fn in a read transaction and returns what it read.
func get[T any](t *testing.T, s Store, fn func(ctx context.Context, tx engine.Tx) (T, error)) T {
	t.Helper()
	var v T
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		var err error
		v, err = fn(ctx, tx)
		return err
	})
	return v
}

// create inserts rows with insert (a method expression such as
// engine.Tx.CreateAttempt) in one transaction.
func create[T any](t *testing.T, s Store, insert func(engine.Tx, context.Context, T) error, rows ...T) {
	t.Helper()
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		for i, r := range rows {
			if err := insert(tx, ctx, r); err != nil {
				return fmt.Errorf("row %d: %w", i, err)
			}
		}
		return nil
	})
}

// inConsole turns a method expression of ConsoleTx (such as
// engine.ConsoleTx.CreateOperator) into one of Tx, for create and try.
func inConsole[T any](insert func(engine.ConsoleTx, context.Context, T) error) func(engine.Tx, context.Context, T) error {
	return func(tx engine.Tx, ctx context.Context, row T) error { return insert(tx.Console(), ctx, row) }
}

// try inserts row in a transaction of its own and returns the error.
func try[T any](s Store, insert func(engine.Tx, context.Context, T) error, row T) error {
	return s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error { return insert(tx, ctx, row) })
}

func wantDuplicate(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, engine.ErrDuplicate) {
		t.Errorf("%s: %v, want ErrDuplicate", what, err)
	}
}

// wantNotFound requires the bare sentinel, so that errors.Is and == both
// match it.
func wantNotFound(t *testing.T, what string, err error) {
	t.Helper()
	if err != engine.ErrNotFound {
		t.Errorf("%s: %v, want ErrNotFound", what, err)
	}
}

// wantInternal requires an error that is neither ErrDuplicate nor
// ErrNotFound: what a broken reference (a foreign key) gives.
func wantInternal(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil || errors.Is(err, engine.ErrDuplicate) || errors.Is(err, engine.ErrNotFound) {
		t.Errorf("%s: %v, want an internal error", what, err)
	}
}

// wantLocked checks that lock, a Lock method, reads want as its Get does,
// in a write transaction and in a read one (where there is nothing to lock).
func wantLocked[T any](t *testing.T, s Store, want T, lock func(ctx context.Context, tx engine.Tx) (T, error)) {
	t.Helper()
	var got T
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		var err error
		got, err = lock(ctx, tx)
		return err
	})
	assertEqual(t, got, want)
	assertEqual(t, get(t, s, lock), want)
}

// calls are named transaction bodies that must each return ErrNotFound.
type calls map[string]func(ctx context.Context, tx engine.Tx) error

// wantAllNotFound runs reads in read transactions and writes in write
// transactions, each of its own.
func wantAllNotFound(t *testing.T, s Store, reads, writes calls) {
	t.Helper()
	ctx := context.Background()
	for name, fn := range reads {
		wantNotFound(t, name, s.ReadTx(ctx, fn))
	}
	for name, fn := range writes {
		wantNotFound(t, name, s.InTx(ctx, fn))
	}
}

// joinIDs joins the IDs of rows without their prefix ("wal_a" is "a").
func joinIDs[T any](rows []T, id func(T) string) string {
	out := make([]string, len(rows))
	for i, r := range rows {
		_, out[i], _ = strings.Cut(id(r), "_")
	}
	return strings.Join(out, ",")
}

// AssertEqual compares values field by field: decimals by value, times with
// Equal, and a nil slice or map as equal to an empty one. The providers'
// store suites compare rows with it too.
func AssertEqual(t testing.TB, got, want any) {
	t.Helper()
	if diff := diff(reflect.ValueOf(got), reflect.ValueOf(want), ""); diff != "" {
		t.Errorf("mismatch:%s", diff)
	}
}

func assertEqual(t *testing.T, got, want any) {
	t.Helper()
	AssertEqual(t, got, want)
}

var (
	decimalType     = reflect.TypeFor[decimal.Decimal]()
	nullDecimalType = reflect.TypeFor[decimal.NullDecimal]()
	timeType        = reflect.TypeFor[time.Time]()
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
	case got.Type() == timeType:
		// A store may read a time back in another location.
		g, w := got.Interface().(time.Time), want.Interface().(time.Time)
		if !g.Equal(w) {
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
	case got.Kind() == reflect.Slice && got.Type().Elem().Kind() == reflect.Uint8:
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			return fmt.Sprintf("\n%s: got %q, want %q", path, got.Bytes(), want.Bytes())
		}
		return ""
	case got.Kind() == reflect.Slice:
		if got.Len() != want.Len() {
			return fmt.Sprintf("\n%s: %d elements, want %d", path, got.Len(), want.Len())
		}
		var out string
		for i := range got.Len() {
			out += diff(got.Index(i), want.Index(i), fmt.Sprintf("%s[%d]", path, i))
		}
		return out
	case got.Kind() == reflect.Map:
		// Key by key, so decimals in values compare by value.
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
	case got.Kind() == reflect.Struct:
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

func assertBalances(t *testing.T, got map[string]decimal.Decimal, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("balances = %v, want %v", got, want)
	}
	for account, w := range want {
		if g, ok := got[account]; !ok || !g.Equal(dec(w)) {
			t.Errorf("balance of %s = %v, want %s", account, g, w)
		}
	}
}

// Fixtures.

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
		CheckoutMode: engine.CheckoutRedirect, Amount: dec("500"),
		PaymentMethod: "bkash", RedirectURL: "https://merchant.example/return",
		Metadata: []byte("{}"), Status: engine.StatusPending, Action: engine.ActionRedirect,
		CheckoutToken: "tok_" + id, CheckoutURL: "https://pay.example/c/tok_" + id,
		VerificationState: engine.VerificationProcessing,
		ExpiresAt:         base.Add(30 * time.Minute), CreatedAt: base, UpdatedAt: base,
	}
}

func newAttempt(id, depositID, orgID, channel, transactionID string) *engine.Attempt {
	return &engine.Attempt{
		ID: id, DepositID: depositID, OrganizationID: orgID, Channel: channel, TransactionID: transactionID,
		Status: engine.AttemptProcessing, NextRunAt: base, CreatedAt: base, UpdatedAt: base,
	}
}

func newWithdrawal(id, orgID, merchantID string) *engine.Withdrawal {
	return &engine.Withdrawal{
		ID: id, OrganizationID: orgID, MerchantID: merchantID,
		Amount: dec("500"), Commission: dec("5.25"),
		PaymentMethod: "bkash", Account: "01711111111", Metadata: []byte("{}"),
		Status: engine.WithdrawalProcessing, PayoutStep: engine.PayoutToSend,
		NextRunAt: base, CreatedAt: base, UpdatedAt: base,
	}
}

func newEndpoint(id, orgID string) *engine.WebhookEndpoint {
	return &engine.WebhookEndpoint{
		ID: id, OrganizationID: orgID, URL: "https://merchant.example/hooks/" + id,
		Secret: []byte("sealed:" + id), Enabled: true, CreatedAt: base, UpdatedAt: base,
	}
}

func newEvent(id, orgID string) *engine.Event {
	return &engine.Event{
		ID: id, OrganizationID: orgID, Type: engine.EventDepositSucceeded, ResourceID: "dep_" + id,
		Payload: []byte(`{"id":"` + id + `"}`), CreatedAt: base,
	}
}

func newDelivery(id, eventID, endpointID, orgID string) *engine.Delivery {
	return &engine.Delivery{
		ID: id, EventID: eventID, EndpointID: endpointID, OrganizationID: orgID,
		Status: engine.DeliveryPending, NextAttemptAt: base, CreatedAt: base, UpdatedAt: base,
	}
}

// mustOrgs creates the organizations newOrg makes of ids.
func mustOrgs(t *testing.T, s Store, ids ...string) {
	t.Helper()
	orgs := make([]*engine.Organization, len(ids))
	for i, id := range ids {
		orgs[i] = newOrg(id)
	}
	create(t, s, engine.Tx.CreateOrganization, orgs...)
}

// mustDeposits creates the organization and its deposits dep_<name>.
func mustDeposits(t *testing.T, s Store, orgID string, names ...string) {
	t.Helper()
	mustOrgs(t, s, orgID)
	ds := make([]*engine.Deposit, len(names))
	for i, n := range names {
		ds[i] = newDeposit("dep_"+n, orgID, "m_"+n)
	}
	create(t, s, engine.Tx.CreateDeposit, ds...)
}

// mustWebhookRows creates the endpoints, events and deliveries, in that
// order, in one transaction.
func mustWebhookRows(t *testing.T, s Store, eps []*engine.WebhookEndpoint, evs []*engine.Event, ds []*engine.Delivery) {
	t.Helper()
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		for _, ep := range eps {
			if err := tx.CreateWebhookEndpoint(ctx, ep); err != nil {
				return fmt.Errorf("%s: %w", ep.ID, err)
			}
		}
		for _, e := range evs {
			if err := tx.CreateEvent(ctx, e); err != nil {
				return fmt.Errorf("%s: %w", e.ID, err)
			}
		}
		for _, d := range ds {
			if err := tx.CreateDelivery(ctx, d); err != nil {
				return fmt.Errorf("%s: %w", d.ID, err)
			}
		}
		return nil
	})
}
