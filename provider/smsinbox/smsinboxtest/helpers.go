package smsinboxtest

// Helpers copied from conformance/storetest, which the suite of the
// engine's tables keeps unexported.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/payd-engine/payd/conformance/storetest"
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

// joinIDs joins the IDs of rows without their prefix ("wal_a" is "a").
func joinIDs[T any](rows []T, id func(T) string) string {
	out := make([]string, len(rows))
	for i, r := range rows {
		_, out[i], _ = strings.Cut(id(r), "_")
	}
	return strings.Join(out, ",")
}

// assertEqual is the shared store suite's comparison (decimals by value,
// times with Equal).
func assertEqual(t *testing.T, got, want any) {
	t.Helper()
	storetest.AssertEqual(t, got, want)
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

// mustOrgs creates the organizations newOrg makes of ids.
func mustOrgs(t *testing.T, s Store, ids ...string) {
	t.Helper()
	orgs := make([]*engine.Organization, len(ids))
	for i, id := range ids {
		orgs[i] = newOrg(id)
	}
	create(t, s, engine.Tx.CreateOrganization, orgs...)
}
