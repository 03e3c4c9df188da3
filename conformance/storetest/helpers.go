package storetest

import (
	"context"
	"fmt"
	"testing"

	"github.com/payd-engine/payd/conformance/storekit"
	"github.com/payd-engine/payd/engine"
	"github.com/shopspring/decimal"
)

// base and the fixtures are storekit's.
var (
	base       = storekit.Base
	newOrg     = storekit.NewOrg
	newWallet  = storekit.NewWallet
	newDeposit = storekit.NewDeposit
	newAttempt = storekit.NewAttempt
)

func ptr[T any](v T) *T { return &v }

var dec = decimal.RequireFromString

// The suite's names for storekit's helpers, on its Store.

func write(t *testing.T, s Store, fn func(ctx context.Context, tx engine.Tx) error) {
	t.Helper()
	storekit.Write(t, s, fn)
}

func read(t *testing.T, s Store, fn func(ctx context.Context, tx engine.Tx) error) {
	t.Helper()
	storekit.Read(t, s, fn)
}

func get[T any](t *testing.T, s Store, fn func(ctx context.Context, tx engine.Tx) (T, error)) T {
	t.Helper()
	return storekit.Get(t, s, fn)
}

func create[T any](t *testing.T, s Store, insert func(engine.Tx, context.Context, T) error, rows ...T) {
	t.Helper()
	storekit.Create(t, s, insert, rows...)
}

func try[T any](s Store, insert func(engine.Tx, context.Context, T) error, row T) error {
	return storekit.Try(s, insert, row)
}

func wantLocked[T any](t *testing.T, s Store, want T, lock func(ctx context.Context, tx engine.Tx) (T, error)) {
	t.Helper()
	storekit.WantLocked(t, s, want, lock)
}

var (
	wantDuplicate = storekit.WantDuplicate
	wantNotFound  = storekit.WantNotFound
	wantInternal  = storekit.WantInternal
	assertEqual   = storekit.AssertEqual
)

func joinIDs[T any](rows []T, id func(T) string) string { return storekit.JoinIDs(rows, id) }

// inConsole turns a method expression of ConsoleTx (such as
// engine.ConsoleTx.CreateOperator) into one of Tx, for create and try.
func inConsole[T any](insert func(engine.ConsoleTx, context.Context, T) error) func(engine.Tx, context.Context, T) error {
	return func(tx engine.Tx, ctx context.Context, row T) error { return insert(tx.Console(), ctx, row) }
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
