package engine_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
)

// setWalletLiveUntil sets the fixture wallet's LiveUntil as an SMS device's
// report does: with the provider's own SQL on the store's engine.SQLTx, as
// the engine has no method to write it.
func setWalletLiveUntil(ctx context.Context, tx engine.Tx, f *fixture, until time.Time) error {
	st, ok := tx.(engine.SQLTx)
	if !ok {
		return fmt.Errorf("%T is not an engine.SQLTx", tx)
	}
	_, err := st.ExecSQL(ctx, `UPDATE wallets SET live_until = $1 WHERE id = $2`, &until, f.wallet.ID)
	return err
}

// A wallet whose SMS device has gone silent is out of the recipient pool
// until the device reports again.
func TestSilentWalletLeavesPool(t *testing.T) {
	onEachStore(t, func(t *testing.T, newFixture func(t *testing.T) *fixture) {
		f := newFixture(t)
		setLiveUntil := func(until time.Time) {
			t.Helper()
			err := f.store.InTx(f.ctx, func(ctx context.Context, tx engine.Tx) error {
				return setWalletLiveUntil(ctx, tx, f, until)
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		setLiveUntil(f.clock.Now().Add(time.Minute))
		if d := f.deposit(f.org.ID, "bkash_agent", "500"); d.RecipientPhone != f.wallet.Phone {
			t.Fatalf("recipient %s, want the live wallet", d.RecipientPhone)
		}
		f.clock.Add(time.Minute) // the device is due and has not reported
		_, _, err := f.eng.CreateDeposit(f.ctx, engine.CreateDepositParams{
			OrganizationID: f.org.ID, CheckoutMode: "h2h", Amount: "500", PaymentMethod: "bkash_agent",
			RedirectURL: "https://shop.example/r", MerchantID: "silent", PayerPhone: "01712345678",
		})
		var ee *engine.Error
		if !errors.As(err, &ee) || ee.Code != engine.CodeMethodUnavailable {
			t.Fatalf("create with a silent wallet: %v, want method_unavailable", err)
		}
		setLiveUntil(f.clock.Now().Add(time.Minute)) // it reports again
		f.deposit(f.org.ID, "bkash_agent", "500")
	})
}

// With RequireLiveWallets, a wallet no device reports for is never a
// recipient: its payments could not be proven.
func TestRequireLiveWallets(t *testing.T) {
	onEachStore(t, func(t *testing.T, newFixture func(t *testing.T) *fixture) {
		f := newFixture(t)
		eng, err := engine.New(engine.Config{Store: f.store, Provider: f.provider, Clock: f.clock, Keyring: f.keyring, RequireLiveWallets: true})
		if err != nil {
			t.Fatal(err)
		}
		create := func(merchantID string) error {
			_, _, err := eng.CreateDeposit(f.ctx, engine.CreateDepositParams{
				OrganizationID: f.org.ID, CheckoutMode: "h2h", Amount: "500", PaymentMethod: "bkash_agent",
				RedirectURL: "https://shop.example/r", MerchantID: merchantID, PayerPhone: "01712345678",
			})
			return err
		}
		if err := create("no-device"); engine.ErrorCode(err) != engine.CodeMethodUnavailable {
			t.Fatalf("create with no live wallet: %v", err)
		}
		err = f.store.InTx(f.ctx, func(ctx context.Context, tx engine.Tx) error {
			return setWalletLiveUntil(ctx, tx, f, f.clock.Now().Add(time.Minute))
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := create("live"); err != nil {
			t.Fatal(err)
		}
	})
}
