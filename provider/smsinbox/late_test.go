package smsinbox_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/smsinbox"
	"github.com/payd-engine/payd/storage/postgres"
	"github.com/payd-engine/payd/storage/postgres/pgtest"
	"github.com/payd-engine/payd/storage/sqlite"
)

// lateStore is what the late-SMS tests need of a store.
type lateStore = engine.Store

// onBothStores runs fn on a fixture over SQLite and, when
// PAYD_TEST_POSTGRES_URL is set, over Postgres: the failed attempt, the
// SMS-to-attempt join and the credit's constraints are the store's.
func onBothStores(t *testing.T, fn func(t *testing.T, f *fixture)) {
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			f := &fixture{t: t, ctx: context.Background(), clock: clock.NewMock()}
			f.clock.Set(t0)
			var store lateStore
			var err error
			if kind == "postgres" {
				store, err = postgres.Open(f.ctx, pgtest.URL(t), smsinbox.Migrations())
			} else {
				store, err = sqlite.Open(f.ctx, filepath.Join(t.TempDir(), "payd.db"), smsinbox.Migrations())
			}
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { store.Close() })
			if f.inbox, err = smsinbox.New(smsinbox.Config{Store: smsinbox.NewSQLStore(store), Clock: f.clock, Silence: time.Hour}); err != nil {
				t.Fatal(err)
			}
			keyring, _ := engine.NewKeyring(make([]byte, engine.MasterKeySize))
			if f.eng, err = engine.New(engine.Config{Store: store, Provider: f.inbox, Clock: f.clock, Keyring: keyring}); err != nil {
				t.Fatal(err)
			}
			f.inbox.Attach(f.eng)
			creds, err := f.eng.CreateOrganization(f.ctx, engine.OrganizationSettings{Name: ptr("Shop"), H2HEnabled: ptr(true)})
			if err != nil {
				t.Fatal(err)
			}
			f.org = creds.Organization.ID
			f.wallet = f.addWallet("bkash", "01811111111")
			dev, err := f.inbox.AddDevice(f.ctx, smsinbox.AddDeviceParams{OrganizationID: f.org, Name: "phone", WalletIDs: []string{f.wallet.ID}})
			if err != nil {
				t.Fatal(err)
			}
			f.device = dev.Device
			if _, err := f.inbox.Heartbeat(f.ctx, f.device); err != nil {
				t.Fatal(err)
			}
			f.anchor("10000")
			fn(t, f)
		})
	}
}

var lateMerchantSeq int

func (f *fixture) deposit(amount string) *engine.Deposit {
	f.t.Helper()
	lateMerchantSeq++
	d, _, err := f.eng.CreateDeposit(f.ctx, engine.CreateDepositParams{
		OrganizationID: f.org, CheckoutMode: "h2h", Amount: amount, PaymentMethod: "bkash_agent",
		RedirectURL: "https://shop.example/r", MerchantID: fmt.Sprintf("late-%d", lateMerchantSeq),
		PayerPhone: "01712345678",
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return d
}

func (f *fixture) submit(d *engine.Deposit, txID string) {
	f.t.Helper()
	if _, err := f.eng.SubmitTransactionID(f.ctx, engine.VerifyParams{OrganizationID: f.org, DepositID: d.ID, TransactionID: txID}); err != nil {
		f.t.Fatal(err)
	}
}

// work runs the verification worker and the expiry once.
func (f *fixture) work() {
	f.t.Helper()
	if _, err := f.eng.ProcessAttempts(f.ctx); err != nil {
		f.t.Fatal(err)
	}
	if _, err := f.eng.ExpireDeposits(f.ctx); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) wantDeposit(d *engine.Deposit, status, failure string) {
	f.t.Helper()
	got, err := f.eng.GetDeposit(f.ctx, f.org, d.ID)
	if err != nil {
		f.t.Fatal(err)
	}
	if got.Status != status || got.FailureCode != failure {
		f.t.Fatalf("deposit %s is %s %q, want %s %q", got.MerchantID, got.Status, got.FailureCode, status, failure)
	}
}

func (f *fixture) unmatched() []smsinbox.Unmatched {
	f.t.Helper()
	us, err := f.inbox.ListUnmatched(f.ctx, f.org, 0)
	if err != nil {
		f.t.Fatal(err)
	}
	return us
}

func (f *fixture) credit(d *engine.Deposit, txID string) (*engine.LateCredit, error) {
	return f.eng.CreditLatePayment(engine.WithActor(f.ctx, "ops"), engine.CreditLatePaymentParams{OrganizationID: f.org, DepositID: d.ID, TransactionID: txID})
}

// The SMS within the grace: the waiting attempt succeeds at once.
func TestEarlySMSSucceedsTheAttempt(t *testing.T) {
	onBothStores(t, func(t *testing.T, f *fixture) {
		d := f.deposit("500")
		paidAt := f.clock.Now()
		f.submit(d, "TRXEARLY01")
		f.work()
		f.wantDeposit(d, "processing", "")
		f.clock.Add(smsinbox.DefaultNotFoundGrace - time.Second)
		f.ingest(cashOut("500.00", "10,500.00", "TRXEARLY01", paidAt))
		f.work() // due at once: the accepted SMS rechecked it
		f.wantDeposit(d, "succeeded", "")
	})
}

// No SMS within the grace: the attempt fails transaction_not_found and the
// payer may submit another ID; an SMS after that, while the deposit is
// open, reopens the attempt and succeeds the deposit. It failed before:
// the attempt waited 15 minutes past the deadline, and a finished one was
// never rechecked.
func TestLateSMSWhileDepositIsOpen(t *testing.T) {
	onBothStores(t, func(t *testing.T, f *fixture) {
		d := f.deposit("500")
		paidAt := f.clock.Now()
		f.submit(d, "TRXLATE001")
		f.work()
		f.clock.Add(smsinbox.DefaultNotFoundGrace)
		f.work()
		f.wantDeposit(d, "pending", "transaction_not_found")
		if us := f.unmatched(); len(us) != 0 {
			t.Fatalf("unmatched before any SMS: %d", len(us))
		}
		f.clock.Add(time.Minute)
		m := f.ingest(cashOut("500.00", "10,500.00", "TRXLATE001", paidAt))
		wantStatus(t, m, smsinbox.StatusAccepted)
		f.wantDeposit(d, "processing", "transaction_not_found") // reopened
		f.work()
		f.wantDeposit(d, "succeeded", "")
		if us := f.unmatched(); len(us) != 0 {
			t.Fatalf("a matched payment is listed as unmatched: %+v", us[0].SMS)
		}
	})
}

// An SMS after the deposit closed: it stays failed, the payment is listed
// for the operator with its deposit, and the operator credits it once. A
// forged (held) SMS, an ID another deposit claimed, and a second credit are
// refused.
func TestLateSMSAfterDepositClosed(t *testing.T) {
	onBothStores(t, func(t *testing.T, f *fixture) {
		d := f.deposit("500")
		other := f.deposit("500")
		paidAt := f.clock.Now()
		f.submit(d, "TRXCLOSED1")
		f.submit(other, "TRXOTHER01")
		f.work()
		f.clock.Add(smsinbox.DefaultNotFoundGrace)
		f.work()
		f.clock.Set(d.ExpiresAt)
		f.work()
		f.wantDeposit(d, "failed", "transaction_not_found")

		f.ingest(cashOut("500.00", "10,500.00", "TRXCLOSED1", paidAt))
		f.clock.Add(time.Second) // listed newest first
		f.ingest(cashOut("500.00", "11,000.00", "TRXNOBODY1", paidAt))
		forged := f.ingest(cashOut("500.00", "99,000.00", "TRXFORGED1", paidAt))
		wantStatus(t, forged, smsinbox.StatusHeld)
		f.work()
		f.wantDeposit(d, "failed", "transaction_not_found")

		us := f.unmatched()
		if len(us) != 2 || us[0].SMS.Parsed.TransactionID != "TRXNOBODY1" || us[0].Deposit != nil ||
			us[1].SMS.Parsed.TransactionID != "TRXCLOSED1" || us[1].Deposit == nil || us[1].Deposit.ID != d.ID {
			t.Fatalf("unmatched: %+v", us)
		}
		if v := smsinbox.NewUnmatchedView(f.org, us[1]); v.Deposit.Status != "failed" ||
			v.Next != "payd admin deposit credit --org "+f.org+" --deposit "+d.ID+" --transaction-id TRXCLOSED1" {
			t.Fatalf("view %+v", v)
		}

		_, err := f.credit(d, "TRXFORGED1")
		if engine.ErrorCode(err) != engine.CodeNotFound {
			t.Fatalf("credit with a forged SMS: %v", err)
		}
		_, err = f.credit(d, "TRXOTHER01")
		if engine.ErrorCode(err) != engine.CodeNotFound { // not proven either: no SMS at all
			t.Fatalf("credit with another deposit's unproven ID: %v", err)
		}
		_, err = f.credit(other, "TRXCLOSED1")
		if engine.ErrorCode(err) != engine.CodeTransactionIDUsed {
			t.Fatalf("credit of d's payment to another deposit: %v", err)
		}
		c, err := f.credit(d, "TRXCLOSED1")
		if err != nil {
			t.Fatal(err)
		}
		if c.Deposit.Status != "failed" || c.Journal.Kind != engine.JournalLatePayment {
			t.Fatalf("credit: deposit %s, journal %s", c.Deposit.Status, c.Journal.Kind)
		}
		bal, err := f.eng.GetBalance(f.ctx, f.org)
		if err != nil {
			t.Fatal(err)
		}
		if !bal.Available.Equal(decimal.RequireFromString("500")) {
			t.Fatalf("available %s, want 500.00", bal.Available)
		}
		for _, txID := range []string{"TRXCLOSED1", "TRXNOBODY1"} {
			if _, err := f.credit(d, txID); engine.ErrorCode(err) != engine.CodeDepositTerminal {
				t.Fatalf("second credit with %s: %v", txID, err)
			}
		}
		if us := f.unmatched(); len(us) != 1 || us[0].SMS.Parsed.TransactionID != "TRXNOBODY1" {
			t.Fatalf("unmatched after the credit: %+v", us)
		}
	})
}
