// Package storekit is what the store suites share: conformance/storetest,
// which holds a store to engine.Tx, and each provider's suite of its own
// tables (sandboxtest, smsinboxtest, bkashtest). Transactions that fail the
// test on error, the engine's errors asserted, rows compared field by
// field, and the race and lock checks run with real goroutines.
package storekit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
)

// Write and Read run fn in a transaction of s and fail the test on error.
func Write(t testing.TB, s engine.Store, fn func(ctx context.Context, tx engine.Tx) error) {
	t.Helper()
	if err := s.InTx(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

func Read(t testing.TB, s engine.Store, fn func(ctx context.Context, tx engine.Tx) error) {
	t.Helper()
	if err := s.ReadTx(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

// Get runs fn in a read transaction and returns what it read.
func Get[T any](t testing.TB, s engine.Store, fn func(ctx context.Context, tx engine.Tx) (T, error)) T {
	t.Helper()
	var v T
	Read(t, s, func(ctx context.Context, tx engine.Tx) error {
		var err error
		v, err = fn(ctx, tx)
		return err
	})
	return v
}

// Create inserts rows with insert (a method expression such as
// engine.Tx.CreateAttempt) in one transaction.
func Create[T any](t testing.TB, s engine.Store, insert func(engine.Tx, context.Context, T) error, rows ...T) {
	t.Helper()
	Write(t, s, func(ctx context.Context, tx engine.Tx) error {
		for i, r := range rows {
			if err := insert(tx, ctx, r); err != nil {
				return fmt.Errorf("row %d: %w", i, err)
			}
		}
		return nil
	})
}

// Try inserts row in a transaction of its own and returns the error.
func Try[T any](s engine.Store, insert func(engine.Tx, context.Context, T) error, row T) error {
	return s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error { return insert(tx, ctx, row) })
}

func WantDuplicate(t testing.TB, what string, err error) {
	t.Helper()
	if !errors.Is(err, engine.ErrDuplicate) {
		t.Errorf("%s: %v, want ErrDuplicate", what, err)
	}
}

// WantNotFound requires the bare sentinel, so that errors.Is and == both
// match it.
func WantNotFound(t testing.TB, what string, err error) {
	t.Helper()
	if err != engine.ErrNotFound {
		t.Errorf("%s: %v, want ErrNotFound", what, err)
	}
}

// WantInternal requires an error that is neither ErrDuplicate nor
// ErrNotFound: what a broken reference (a foreign key) gives.
func WantInternal(t testing.TB, what string, err error) {
	t.Helper()
	if err == nil || errors.Is(err, engine.ErrDuplicate) || errors.Is(err, engine.ErrNotFound) {
		t.Errorf("%s: %v, want an internal error", what, err)
	}
}

// WantLocked checks that lock, a Lock method, reads want as its Get does,
// in a write transaction and in a read one (where there is nothing to lock).
func WantLocked[T any](t testing.TB, s engine.Store, want T, lock func(ctx context.Context, tx engine.Tx) (T, error)) {
	t.Helper()
	var got T
	Write(t, s, func(ctx context.Context, tx engine.Tx) error {
		var err error
		got, err = lock(ctx, tx)
		return err
	})
	AssertEqual(t, got, want)
	AssertEqual(t, Get(t, s, lock), want)
}

// JoinIDs joins the IDs of rows without their prefix ("wal_a" is "a").
func JoinIDs[T any](rows []T, id func(T) string) string {
	out := make([]string, len(rows))
	for i, r := range rows {
		_, out[i], _ = strings.Cut(id(r), "_")
	}
	return strings.Join(out, ",")
}

// AssertEqual compares values field by field: decimals by value, times with
// Equal, and a nil slice or map as equal to an empty one.
func AssertEqual(t testing.TB, got, want any) {
	t.Helper()
	if diff := diff(reflect.ValueOf(got), reflect.ValueOf(want), ""); diff != "" {
		t.Errorf("mismatch:%s", diff)
	}
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

// RunTx is a store's way of running a transaction of type X: InTx,
// ReadTx, or a provider's own (an SMS inbox's InboxTx, InboxReadTx).
type RunTx[X any] func(ctx context.Context, fn func(ctx context.Context, tx X) error) error

// RaceForOne runs n transactions at once that each insert a row under one
// unique key: exactly one commits and the others fail with ErrDuplicate.
// Only the constraint stands between two racing requests and two rows; a
// store whose transactions see a concurrent commit only as a constraint
// violation (Postgres at READ COMMITTED) reports it as ErrDuplicate too.
func RaceForOne[X any](t testing.TB, inTx RunTx[X], n int, insert func(ctx context.Context, tx X, i int) error) {
	t.Helper()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			errs[i] = inTx(context.Background(), func(ctx context.Context, tx X) error { return insert(ctx, tx, i) })
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

// Counter is a row that a lock test increments in transactions of type X:
// Lock reads it locked, Get reads it plainly, Count is its counter, Inc
// adds one to it, and Update (a method expression such as
// engine.Tx.UpdateAttempt) writes it back.
type Counter[X, T any] struct {
	Lock   func(ctx context.Context, tx X) (T, error)
	Get    func(ctx context.Context, tx X) (T, error)
	Update func(tx X, ctx context.Context, row T) error
	Count  func(row T) int
	Inc    func(row T)
}

// LockSerializes runs n transactions at once that each lock the row, read
// its counter and write it back one up. The lock must serialize them: no
// increment is lost, and each sees a value of its own. Without it, at READ
// COMMITTED, two transactions could both read k and both write k+1.
func LockSerializes[X, T any](t testing.TB, inTx, readTx RunTx[X], n int, c Counter[X, T]) {
	t.Helper()
	seen := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			err := inTx(context.Background(), func(ctx context.Context, tx X) error {
				row, err := c.Lock(ctx, tx)
				if err != nil {
					return err
				}
				seen[i] = c.Count(row)
				c.Inc(row)
				return c.Update(tx, ctx, row)
			})
			if err != nil {
				t.Errorf("transaction %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	var last T
	if err := readTx(context.Background(), func(ctx context.Context, tx X) error {
		var err error
		last, err = c.Get(ctx, tx)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if got := c.Count(last); got != n {
		t.Errorf("counter = %d after %d increments", got, n)
	}
	slices.Sort(seen)
	for i, v := range seen {
		if v != i {
			t.Errorf("transactions saw %v, want each of 0 to %d once", seen, n-1)
			break
		}
	}
}

// Base is a UTC time at microsecond precision, as the engine produces: the
// suites' rows are made at it.
var Base = time.Date(2025, 3, 14, 9, 26, 53, 589793000, time.UTC)

// Fixtures: rows valid for the engine's tables, at Base.

func NewOrg(id string) *engine.Organization {
	return &engine.Organization{
		ID: id, Name: "Org " + id, DepositsEnabled: true,
		InstructionsWindow: engine.DefaultInstructionsWindow, RedirectWindow: engine.DefaultRedirectWindow,
		CreatedAt: Base, UpdatedAt: Base,
	}
}

func NewWallet(id, orgID, channel, operation, phone string) *engine.Wallet {
	return &engine.Wallet{
		ID: id, OrganizationID: orgID, Channel: channel, Operation: operation, Phone: phone,
		Enabled: true, CreatedAt: Base,
	}
}

func NewDeposit(id, orgID, merchantID string) *engine.Deposit {
	return &engine.Deposit{
		ID: id, OrganizationID: orgID, MerchantID: merchantID,
		CheckoutMode: engine.CheckoutRedirect, Amount: decimal.RequireFromString("500"),
		PaymentMethod: "bkash", RedirectURL: "https://merchant.example/return",
		Metadata: []byte("{}"), Status: engine.StatusPending, Action: engine.ActionRedirect,
		CheckoutToken: "tok_" + id, CheckoutURL: "https://pay.example/c/tok_" + id,
		VerificationState: engine.VerificationProcessing,
		ExpiresAt:         Base.Add(30 * time.Minute), CreatedAt: Base, UpdatedAt: Base,
	}
}

func NewAttempt(id, depositID, orgID, channel, transactionID string) *engine.Attempt {
	return &engine.Attempt{
		ID: id, DepositID: depositID, OrganizationID: orgID, Channel: channel, TransactionID: transactionID,
		Status: engine.AttemptProcessing, NextRunAt: Base, CreatedAt: Base, UpdatedAt: Base,
	}
}

// MustOrgs creates the organizations NewOrg makes of ids.
func MustOrgs(t testing.TB, s engine.Store, ids ...string) {
	t.Helper()
	orgs := make([]*engine.Organization, len(ids))
	for i, id := range ids {
		orgs[i] = NewOrg(id)
	}
	Create(t, s, engine.Tx.CreateOrganization, orgs...)
}
