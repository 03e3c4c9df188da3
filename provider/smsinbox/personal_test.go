package smsinbox_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
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

// Personal wallets: a payer "Sends Money" to the organization's own bKash,
// Nagad or Rocket number, from the hosted checkout's instructions, and
// types the number they sent from and the transaction ID. Only a
// money-received SMS of that wallet, from that number, for the exact
// amount proves it.

// shop is one organization of a personal-wallet fixture: its phone
// proves its personal bKash, Nagad and Rocket wallets.
type shop struct {
	org     string
	device  *smsinbox.Device
	wallets map[string]*engine.Wallet // by channel
	balance map[string]decimal.Decimal
}

type personalFixture struct {
	t     *testing.T
	ctx   context.Context
	clock *clock.Mock
	inbox *smsinbox.Provider
	eng   *engine.Engine
	seq   int
}

const payer = "01712345678"

// onBothStoresPersonal runs fn over SQLite and, with
// PAYD_TEST_POSTGRES_URL set, over Postgres: the attempt's payer number is
// a column of each store.
func onBothStoresPersonal(t *testing.T, fn func(t *testing.T, f *personalFixture)) {
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			f := &personalFixture{t: t, ctx: context.Background(), clock: clock.NewMock()}
			f.clock.Set(t0)
			var store engine.Store
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
			if f.inbox, err = smsinbox.New(smsinbox.Config{
				Store: smsinbox.NewSQLStore(store), Clock: f.clock, Silence: time.Hour, PublicURL: "https://pay.example/",
			}); err != nil {
				t.Fatal(err)
			}
			keyring, _ := engine.NewKeyring(make([]byte, engine.MasterKeySize))
			if f.eng, err = engine.New(engine.Config{Store: store, Provider: f.inbox, Clock: f.clock, Keyring: keyring, RequireLiveWallets: true}); err != nil {
				t.Fatal(err)
			}
			f.inbox.Attach(f.eng)
			fn(t, f)
		})
	}
}

// newShop creates an organization whose one phone proves a personal
// wallet on each of bKash, Nagad and Rocket, all anchored at 10,000.
func (f *personalFixture) newShop(phones map[string]string) *shop {
	f.t.Helper()
	creds, err := f.eng.CreateOrganization(f.ctx, engine.OrganizationSettings{Name: ptr("Shop"), H2HEnabled: ptr(true)})
	if err != nil {
		f.t.Fatal(err)
	}
	s := &shop{org: creds.Organization.ID, wallets: map[string]*engine.Wallet{}, balance: map[string]decimal.Decimal{}}
	var ids []string
	for _, ch := range []string{"bkash", "nagad", "rocket"} {
		w, err := f.eng.AddWallet(f.ctx, engine.AddWalletParams{OrganizationID: s.org, Channel: ch, Operation: engine.OperationSendMoney, Phone: phones[ch]})
		if err != nil {
			f.t.Fatal(err)
		}
		s.wallets[ch] = w
		ids = append(ids, w.ID)
	}
	dev, err := f.inbox.AddDevice(f.ctx, smsinbox.AddDeviceParams{OrganizationID: s.org, Name: "phone", WalletIDs: ids})
	if err != nil {
		f.t.Fatal(err)
	}
	s.device = dev.Device
	if _, err := f.inbox.Heartbeat(f.ctx, s.device); err != nil {
		f.t.Fatal(err)
	}
	for ch, w := range s.wallets {
		if _, _, err := f.inbox.Anchor(f.ctx, s.org, w.ID, decimal.RequireFromString("10000")); err != nil {
			f.t.Fatal(err)
		}
		s.balance[ch] = decimal.RequireFromString("10000")
	}
	return s
}

var shopPhones = map[string]string{"bkash": "01811111111", "nagad": "01822222222", "rocket": "01833333333"}

// deposit creates a redirect deposit by method, which a personal wallet
// serves.
func (f *personalFixture) deposit(s *shop, method, amount string) *engine.Deposit {
	f.t.Helper()
	f.seq++
	d, _, err := f.eng.CreateDeposit(f.ctx, engine.CreateDepositParams{
		OrganizationID: s.org, Amount: amount, PaymentMethod: method,
		RedirectURL: "https://shop.example/r", MerchantID: fmt.Sprintf("personal-%d", f.seq),
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return d
}

// receive has the shop's phone get a credit of amount on channel, the
// balance continuing its chain; body renders the text from the amount and
// the new balance.
func (f *personalFixture) receive(s *shop, channel, amount string, body func(amount, balance string) string) *smsinbox.SMS {
	f.t.Helper()
	sender := map[string]string{"bkash": "bKash", "nagad": "NAGAD", "rocket": "16216"}[channel]
	next := s.balance[channel].Add(decimal.RequireFromString(amount))
	m, _, err := f.inbox.Ingest(f.ctx, s.device, smsinbox.Incoming{Sender: sender, Body: body(amount, next.StringFixed(2))})
	if err != nil {
		f.t.Fatal(err)
	}
	if m.Status != smsinbox.StatusAccepted {
		f.t.Fatalf("%s is %s (%s), want accepted", m.Body, m.Status, m.Reason)
	}
	s.balance[channel] = next
	return m
}

// at is the SMS time of the fixture's clock, a minute on.
func (f *personalFixture) at() string {
	return f.clock.Now().Add(time.Minute).In(dhaka).Format("02/01/2006 15:04")
}

func (f *personalFixture) bkashReceived(from, trxID string) func(amount, balance string) string {
	at := f.at()
	return func(amount, balance string) string {
		return fmt.Sprintf("You have received Tk %s from %s. Fee Tk 0.00. Balance Tk %s. TrxID %s at %s", amount, from, balance, trxID, at)
	}
}

func (f *personalFixture) nagadReceived(from, trxID string) func(amount, balance string) string {
	at := f.at()
	return func(amount, balance string) string {
		return fmt.Sprintf("Money Received.\nAmount: Tk %s\nSender: %s\nRef: N/A\nTxnID: %s\nBalance: Tk %s\n%s", amount, from, trxID, balance, at)
	}
}

func (f *personalFixture) rocketReceived(account, trxID string) func(amount, balance string) string {
	at := f.clock.Now().Add(time.Minute).In(dhaka).Format("02-Jan-06 03:04:05 pm")
	at = strings.ToUpper(at[:9]) + at[9:]
	return func(amount, balance string) string {
		return fmt.Sprintf("Tk%s received from A/C:%s Fee:Tk0, Your A/C Balance: Tk%s TxnId:%s Date:%s. Download https://bit.ly/nexuspay", amount, account, balance, trxID, at)
	}
}

// submit types the payer's number and the ID on the deposit's checkout.
func (f *personalFixture) submit(d *engine.Deposit, from, trxID string) error {
	_, err := f.eng.SubmitWalletCheckout(f.ctx, engine.WalletCheckoutParams{Token: d.CheckoutToken, PayerPhone: from, TransactionID: trxID})
	return err
}

func (f *personalFixture) mustSubmit(d *engine.Deposit, from, trxID string) {
	f.t.Helper()
	if err := f.submit(d, from, trxID); err != nil {
		f.t.Fatal(err)
	}
}

func (f *personalFixture) work() {
	f.t.Helper()
	if _, err := f.eng.ProcessAttempts(f.ctx); err != nil {
		f.t.Fatal(err)
	}
}

func (f *personalFixture) want(s *shop, d *engine.Deposit, status, failure string) {
	f.t.Helper()
	got, err := f.eng.GetDeposit(f.ctx, s.org, d.ID)
	if err != nil {
		f.t.Fatal(err)
	}
	if got.Status != status || got.FailureCode != failure {
		f.t.Fatalf("deposit %s (%s %s) is %s %q, want %s %q", got.MerchantID, got.PaymentMethod, got.Amount, got.Status, got.FailureCode, status, failure)
	}
}

// TestPersonalWalletServesTheCheckout: a redirect deposit by plain bkash,
// nagad or rocket draws a personal wallet as its recipient and is paid on
// payd's own checkout; the SMS of the payer's Send Money, from the number
// they typed, for the exact amount, succeeds it.
func TestPersonalWalletServesTheCheckout(t *testing.T) {
	onBothStoresPersonal(t, func(t *testing.T, f *personalFixture) {
		s := f.newShop(shopPhones)
		for _, c := range []struct {
			method, trxID, from string
			body                func(from, trxID string) func(amount, balance string) string
		}{
			{"bkash", "BKP0000001", payer, f.bkashReceived},
			{"nagad", "NGP00001", payer, f.nagadReceived},
			// A whole Rocket account is the number and a check digit.
			{"rocket", "7000000001", payer, func(_, trxID string) func(amount, balance string) string {
				return f.rocketReceived(payer+"4", trxID)
			}},
			// A masked one proves the digits it shows: ...678 and the
			// check digit 4.
			{"rocket", "7000000002", payer, func(_, trxID string) func(amount, balance string) string {
				return f.rocketReceived("***784", trxID)
			}},
		} {
			d := f.deposit(s, c.method, "500")
			w := s.wallets[c.method]
			if d.WalletID != w.ID || d.RecipientPhone != w.Phone || d.Operation != engine.OperationSendMoney ||
				d.CheckoutURL != "https://pay.example/checkout/"+d.CheckoutToken {
				t.Fatalf("%s deposit: wallet %q recipient %q operation %q url %q", c.method, d.WalletID, d.RecipientPhone, d.Operation, d.CheckoutURL)
			}
			f.receive(s, c.method, "500.00", c.body(c.from, c.trxID))
			f.mustSubmit(d, c.from, c.trxID)
			f.work()
			f.want(s, d, engine.StatusSucceeded, "")
		}
	})
}

// TestPersonalWalletAdversary: every payment that is not the payer's own
// Send Money of the exact amount to this organization's wallet fails, and
// the deposit still takes the right one afterwards.
func TestPersonalWalletAdversary(t *testing.T) {
	onBothStoresPersonal(t, func(t *testing.T, f *personalFixture) {
		s := f.newShop(shopPhones)
		other := f.newShop(map[string]string{"bkash": "01844444444", "nagad": "01855555555", "rocket": "01866666666"})
		// An agent wallet of the shop, on a second phone, gets cash-outs.
		agent, err := f.eng.AddWallet(f.ctx, engine.AddWalletParams{OrganizationID: s.org, Channel: "bkash", Operation: engine.OperationCashOut, Phone: "01877777777"})
		if err != nil {
			t.Fatal(err)
		}
		agentDev, err := f.inbox.AddDevice(f.ctx, smsinbox.AddDeviceParams{OrganizationID: s.org, Name: "agent phone", WalletIDs: []string{agent.ID}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.inbox.Heartbeat(f.ctx, agentDev.Device); err != nil {
			t.Fatal(err)
		}
		if _, _, err := f.inbox.Anchor(f.ctx, s.org, agent.ID, decimal.RequireFromString("10000")); err != nil {
			t.Fatal(err)
		}
		agentShop := &shop{org: s.org, device: agentDev.Device, balance: map[string]decimal.Decimal{"bkash": decimal.RequireFromString("10000")}}
		// run runs a subtest with the fixture failing it, not its parent.
		run := func(name string, fn func(t *testing.T)) {
			t.Run(name, func(sub *testing.T) {
				parent := f.t
				f.t = sub
				defer func() { f.t = parent }()
				fn(sub)
			})
		}

		for _, c := range []struct {
			name    string
			arrange func(d *engine.Deposit) (from, trxID string)
			failure string
		}{
			{"a send money from another number", func(*engine.Deposit) (string, string) {
				f.receive(s, "bkash", "500.00", f.bkashReceived("01799999999", "ADV0000001"))
				return payer, "ADV0000001"
			}, engine.FailurePayerMismatch},
			{"a send money of another amount", func(*engine.Deposit) (string, string) {
				f.receive(s, "bkash", "499.99", f.bkashReceived(payer, "ADV0000002"))
				return payer, "ADV0000002"
			}, engine.FailureAmountMismatch},
			{"a send money of more than the amount", func(*engine.Deposit) (string, string) {
				f.receive(s, "bkash", "5000.00", f.bkashReceived(payer, "ADV0000003"))
				return payer, "ADV0000003"
			}, engine.FailureAmountMismatch},
			{"a send money to another organization's wallet", func(*engine.Deposit) (string, string) {
				f.receive(other, "bkash", "500.00", f.bkashReceived(payer, "ADV0000004"))
				return payer, "ADV0000004"
			}, engine.FailureTransactionNotFound},
			{"a cash-out at the shop's own agent wallet", func(*engine.Deposit) (string, string) {
				f.receive(agentShop, "bkash", "500.00", func(amount, balance string) string {
					return fmt.Sprintf("Cash Out Tk %s from %s successful. Fee Tk 0.00. Balance Tk %s. TrxID ADV0000005 at %s", amount, payer, balance, f.at())
				})
				return payer, "ADV0000005"
			}, engine.FailureChannelMismatch},
			{"a failed send money, returned to the wallet", func(*engine.Deposit) (string, string) {
				f.receive(s, "bkash", "500.00", func(amount, balance string) string {
					return fmt.Sprintf("Sorry, your Send Money request to %s is unsuccessful! Tk %s has been returned. Balance Tk %s. TrxID ADV0000006 at %s", payer, amount, balance, f.at())
				})
				return payer, "ADV0000006"
			}, engine.FailureChannelMismatch},
			{"a payment received by the wallet", func(*engine.Deposit) (string, string) {
				f.receive(s, "bkash", "500.00", func(amount, balance string) string {
					return fmt.Sprintf("You have received payment Tk %s from %s. Fee Tk 0.00. Balance Tk %s. TrxID ADV0000007 at %s", amount, payer, balance, f.at())
				})
				return payer, "ADV0000007"
			}, engine.FailureChannelMismatch},
			{"a Rocket send money from a masked account of another number", func(d *engine.Deposit) (string, string) {
				f.receive(s, "rocket", "500.00", f.rocketReceived("***994", "7100000001"))
				return payer, "7100000001"
			}, engine.FailurePayerMismatch},
		} {
			run(c.name, func(t *testing.T) {
				method := "bkash"
				if strings.Contains(c.name, "Rocket") {
					method = "rocket"
				}
				d := f.deposit(s, method, "500")
				from, trxID := c.arrange(d)
				f.mustSubmit(d, from, trxID)
				f.work()
				if c.failure == engine.FailureTransactionNotFound {
					// Not shown: the attempt waits for its SMS, then fails.
					f.clock.Add(smsinbox.DefaultNotFoundGrace)
					f.work()
				}
				f.want(s, d, engine.StatusPending, c.failure)
			})
		}

		run("a reserved payment is no credit", func(t *testing.T) {
			d := f.deposit(s, "bkash", "500")
			next := s.balance["bkash"].Sub(decimal.RequireFromString("500"))
			m, _, err := f.inbox.Ingest(f.ctx, s.device, smsinbox.Incoming{Sender: "bKash", Body: fmt.Sprintf(
				"Payment of Tk 500.00 is being reserved for Daraz. Balance Tk %s. TrxID ADV0000008 at %s", next.StringFixed(2), f.at())})
			if err != nil || m.Status != smsinbox.StatusAccepted {
				t.Fatalf("reserve SMS: %v %+v", err, m)
			}
			s.balance["bkash"] = next
			if _, err := f.inbox.LookupTransaction(f.ctx, engine.LookupRequest{OrganizationID: s.org, Channel: "bkash", TransactionID: "ADV0000008", PayerPhone: payer}); !errors.Is(err, engine.ErrTransactionNotFound) {
				t.Fatalf("lookup of a reserve: %v, want not found", err)
			}
			f.mustSubmit(d, payer, "ADV0000008")
			f.work()
			f.clock.Add(smsinbox.DefaultNotFoundGrace)
			f.work()
			f.want(s, d, engine.StatusPending, engine.FailureTransactionNotFound)
		})

		run("a transaction ID another deposit used", func(t *testing.T) {
			first, second := f.deposit(s, "bkash", "500"), f.deposit(s, "bkash", "500")
			f.receive(s, "bkash", "500.00", f.bkashReceived(payer, "ADV0000009"))
			f.mustSubmit(first, payer, "ADV0000009")
			f.work()
			f.want(s, first, engine.StatusSucceeded, "")
			var e *engine.Error
			if err := f.submit(second, payer, "ADV0000009"); !errors.As(err, &e) || e.Code != engine.CodeTransactionIDUsed {
				t.Fatalf("the same ID for a second deposit: %v, want transaction_id_used", err)
			}
			f.want(s, second, engine.StatusPending, "")
		})

		run("a send money used for a cash-out deposit", func(t *testing.T) {
			d, _, err := f.eng.CreateDeposit(f.ctx, engine.CreateDepositParams{
				OrganizationID: s.org, CheckoutMode: "h2h", Amount: "500", PaymentMethod: "bkash_agent",
				RedirectURL: "https://shop.example/r", MerchantID: "agent-1", PayerPhone: payer,
			})
			if err != nil {
				t.Fatal(err)
			}
			if d.RecipientPhone != agent.Phone {
				t.Fatalf("cash-out deposit drew %s, want the agent wallet", d.RecipientPhone)
			}
			f.receive(s, "bkash", "500.00", f.bkashReceived(payer, "ADV0000010"))
			if _, err := f.eng.SubmitTransactionID(f.ctx, engine.VerifyParams{OrganizationID: s.org, DepositID: d.ID, TransactionID: "ADV0000010"}); err != nil {
				t.Fatal(err)
			}
			f.work()
			f.want(s, d, engine.StatusPending, engine.FailureChannelMismatch)
		})

		run("the payer's number is required", func(t *testing.T) {
			d := f.deposit(s, "nagad", "500")
			for _, from := range []string{"", "12345", "01712 345678"} {
				var e *engine.Error
				if err := f.submit(d, from, "NGX00001"); !errors.As(err, &e) || e.Code != engine.CodeInvalidRequest || !strings.HasPrefix(e.Message, "payer_phone:") {
					t.Fatalf("payer %q: %v, want invalid payer_phone", from, err)
				}
			}
			f.want(s, d, engine.StatusPending, "")
		})

		run("a checkout's token is not a display_instructions deposit's", func(t *testing.T) {
			d := f.deposit(s, "bkash", "500")
			var e *engine.Error
			if _, err := f.eng.SubmitTransactionIDByToken(f.ctx, d.CheckoutToken, "ADV0000011"); !errors.As(err, &e) || e.Code != engine.CodeNotFound {
				t.Fatalf("instructions submit on a wallet checkout: %v", err)
			}
			if _, err := f.eng.SubmitCheckoutPayment(f.ctx, d.CheckoutToken, "ADV0000011"); !errors.As(err, &e) || e.Code != engine.CodeNotFound {
				t.Fatalf("provider-checkout submit on a wallet checkout, which has no payer number: %v", err)
			}
		})

		// After the failures, each deposit still takes its payer's own
		// send money: nothing above consumed what it should not.
		run("the right payment still succeeds after a wrong one", func(t *testing.T) {
			d := f.deposit(s, "bkash", "500")
			f.receive(s, "bkash", "500.00", f.bkashReceived("01799999999", "ADV0000012"))
			f.mustSubmit(d, payer, "ADV0000012")
			f.work()
			f.want(s, d, engine.StatusPending, engine.FailurePayerMismatch)
			f.receive(s, "bkash", "500.00", f.bkashReceived(payer, "ADV0000013"))
			f.mustSubmit(d, payer, "ADV0000013")
			f.work()
			f.want(s, d, engine.StatusSucceeded, "")
		})
	})
}

// TestPersonalWalletNeedsAPublicURL: without a checkout to send payers
// to, a redirect deposit is method_unavailable, as before.
func TestPersonalWalletNeedsAPublicURL(t *testing.T) {
	f := newFixture(t) // no PublicURL
	if _, err := f.inbox.StartCheckout(f.ctx, engine.CheckoutRequest{PaymentMethod: "bkash", Token: "x"}); !errors.Is(err, engine.ErrMethodUnavailable) {
		t.Fatalf("StartCheckout without a public URL: %v", err)
	}
}

// TestPersonalWalletLateCredit: a Rocket send money whose masked account
// proves only its last digits is credited late by the operator against the
// number the payer typed with its ID, and refused without one.
func TestPersonalWalletLateCredit(t *testing.T) {
	onBothStoresPersonal(t, func(t *testing.T, f *personalFixture) {
		s := f.newShop(shopPhones)
		typed, untyped := f.deposit(s, "rocket", "500"), f.deposit(s, "rocket", "500")
		// The payer sends at once; the phone's SMS reaches payd an hour late.
		sent1, sent2 := f.rocketReceived("***784", "7200000001"), f.rocketReceived("***784", "7200000002")
		f.mustSubmit(typed, payer, "7200000001")
		f.work()
		f.clock.Add(smsinbox.DefaultNotFoundGrace)
		f.work()
		f.want(s, typed, engine.StatusPending, engine.FailureTransactionNotFound)
		f.clock.Add(time.Hour) // both checkouts expire
		if _, err := f.eng.ExpireDeposits(f.ctx); err != nil {
			t.Fatal(err)
		}
		f.want(s, typed, engine.StatusFailed, engine.FailureTransactionNotFound)
		f.receive(s, "rocket", "500.00", sent1)
		f.receive(s, "rocket", "500.00", sent2)
		credit := func(d *engine.Deposit, trxID string) error {
			_, err := f.eng.CreditLatePayment(engine.WithActor(f.ctx, "ops"), engine.CreditLatePaymentParams{OrganizationID: s.org, DepositID: d.ID, TransactionID: trxID})
			return err
		}
		var e *engine.Error
		if err := credit(untyped, "7200000002"); !errors.As(err, &e) || e.Code != engine.CodeConflict || !strings.Contains(e.Message, engine.FailurePayerMismatch) {
			t.Fatalf("late credit with no payer number: %v, want a payer_mismatch conflict", err)
		}
		if err := credit(typed, "7200000001"); err != nil {
			t.Fatalf("late credit of the payer's own send money: %v", err)
		}
	})
}
