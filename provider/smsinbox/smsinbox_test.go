package smsinbox_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/smsinbox"
	"github.com/payd-engine/payd/storage/sqlite"
)

var t0 = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

var dhaka = time.FixedZone("Asia/Dhaka", 6*60*60)

type fixture struct {
	t      testing.TB
	ctx    context.Context
	clock  *clock.Mock
	inbox  *smsinbox.Provider
	eng    *engine.Engine
	org    string
	wallet *engine.Wallet
	device *smsinbox.Device
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "payd.db"), smsinbox.Migrations())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return newFixtureOn(t, store, nil)
}

// inboxStore is a store the provider runs on.
type inboxStore = engine.Store

// newFixtureOn is newFixture on store, logging to logger (nil: the
// default).
func newFixtureOn(t testing.TB, store inboxStore, logger *slog.Logger) *fixture {
	t.Helper()
	f := &fixture{t: t, ctx: context.Background(), clock: clock.NewMock()}
	f.clock.Set(t0)
	var err error
	if f.inbox, err = smsinbox.New(smsinbox.Config{Store: smsinbox.NewSQLStore(store), Clock: f.clock, Silence: 5 * time.Minute, Logger: logger}); err != nil {
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
	return f
}

func ptr[T any](v T) *T { return &v }

func (f *fixture) addWallet(channel, phone string) *engine.Wallet {
	f.t.Helper()
	w, err := f.eng.AddWallet(f.ctx, engine.AddWalletParams{OrganizationID: f.org, Channel: channel, Operation: "cash_out", Phone: phone})
	if err != nil {
		f.t.Fatal(err)
	}
	return w
}

// cashOut is a bKash agent's cash-out message.
func cashOut(amount, balance, trxID string, at time.Time) smsinbox.Incoming {
	return smsinbox.Incoming{Sender: "bKash", Body: fmt.Sprintf(
		"Cash Out Tk %s from 01712345678 successful. Fee Tk 0.00. Balance Tk %s. TrxID %s at %s",
		amount, balance, trxID, at.In(dhaka).Format("02/01/2006 15:04"))}
}

func (f *fixture) ingest(in smsinbox.Incoming) *smsinbox.SMS {
	f.t.Helper()
	m, _, err := f.inbox.Ingest(f.ctx, f.device, in)
	if err != nil {
		f.t.Fatal(err)
	}
	return m
}

func (f *fixture) anchor(balance string) []*smsinbox.SMS {
	f.t.Helper()
	_, proven, err := f.inbox.Anchor(f.ctx, f.org, f.wallet.ID, decimal.RequireFromString(balance))
	if err != nil {
		f.t.Fatal(err)
	}
	return proven
}

func (f *fixture) lookup(trxID string) (*engine.ProviderTransaction, error) {
	return f.inbox.LookupTransaction(f.ctx, engine.LookupRequest{OrganizationID: f.org, Channel: "bkash", TransactionID: trxID})
}

func wantStatus(t *testing.T, m *smsinbox.SMS, status string) {
	t.Helper()
	if m.Status != status {
		t.Fatalf("%s is %s (%s), want %s", m.ID, m.Status, m.Reason, status)
	}
}

func TestChainNeedsAnAnchor(t *testing.T) {
	f := newFixture(t)
	m := f.ingest(cashOut("500.00", "1,500.00", "TRX0000001", t0))
	wantStatus(t, m, smsinbox.StatusHeld)
	if _, err := f.lookup("TRX0000001"); !errors.Is(err, engine.ErrTransactionNotFound) {
		t.Fatalf("lookup of a held message: %v", err)
	}
	// The operator reads the balance before it off the phone.
	if proven := f.anchor("1000"); len(proven) != 1 || proven[0].ID != m.ID {
		t.Fatalf("anchor proved %v", proven)
	}
	pt, err := f.lookup("TRX0000001")
	if err != nil {
		t.Fatal(err)
	}
	want := engine.ProviderTransaction{
		Channel: "bkash", TransactionID: "TRX0000001", Type: engine.TransactionCashOut, Status: engine.TransactionCompleted,
		Amount: decimal.RequireFromString("500"), Currency: "BDT", PayerPhone: "01712345678", RecipientPhone: "01811111111",
		CompletedAt: t0, TimePrecision: time.Minute,
	}
	if fmt.Sprint(*pt) != fmt.Sprint(want) {
		t.Fatalf("lookup\n got %+v\nwant %+v", *pt, want)
	}
	// Another organization does not see it.
	if _, err := f.inbox.LookupTransaction(f.ctx, engine.LookupRequest{OrganizationID: "org_other", Channel: "bkash", TransactionID: "TRX0000001"}); !errors.Is(err, engine.ErrTransactionNotFound) {
		t.Fatalf("lookup from another org: %v", err)
	}
}

func TestChainOrderForksAndConflicts(t *testing.T) {
	f := newFixture(t)
	f.anchor("1000")
	// Out of order: the later message waits for the earlier one.
	later := f.ingest(cashOut("200.00", "1,300.00", "TRX0000002", t0))
	wantStatus(t, later, smsinbox.StatusHeld)
	wantStatus(t, f.ingest(cashOut("100.00", "1,100.00", "TRX0000001", t0)), smsinbox.StatusAccepted)
	if _, err := f.lookup("TRX0000002"); err != nil {
		t.Fatalf("the later message was not proven by the earlier one: %v", err)
	}
	// Another text with a proven transaction ID: a conflict, whatever its
	// balance.
	wantStatus(t, f.ingest(cashOut("900.00", "2,200.00", "TRX0000002", t0)), smsinbox.StatusConflict)
	if pt, _ := f.lookup("TRX0000002"); !pt.Amount.Equal(decimal.RequireFromString("200")) {
		t.Fatalf("the conflicting copy changed the proven amount to %s", pt.Amount)
	}
	// Two messages that both follow 1,300: at most one is genuine, so
	// neither counts until the operator looks.
	a := f.ingest(cashOut("50.00", "1,350.00", "TRX0000003", t0))
	b := f.ingest(smsinbox.Incoming{Sender: "bKash", Body: fmt.Sprintf(
		"You have received Tk 50.00 from 01799999999. Fee Tk 0.00. Balance Tk 1,350.00. TrxID TRX0000004 at %s",
		t0.In(dhaka).Format("02/01/2006 15:04"))})
	wantStatus(t, a, smsinbox.StatusAccepted) // alone when it came
	wantStatus(t, b, smsinbox.StatusHeld)     // 1,300 was already spent by a
}

func TestDuplicates(t *testing.T) {
	f := newFixture(t)
	f.anchor("1000")
	in := cashOut("100.00", "1,100.00", "TRX0000001", t0)
	first, created, err := f.inbox.Ingest(f.ctx, f.device, in)
	if err != nil || !created {
		t.Fatal(created, err)
	}
	// Copies posted at once by a retrying forwarder: one original.
	var wg sync.WaitGroup
	results := make([]*smsinbox.SMS, 8)
	for i := range results {
		wg.Go(func() {
			m, created, err := f.inbox.Ingest(f.ctx, f.device, in)
			if err != nil || created {
				t.Errorf("copy %d: created %v, %v", i, created, err)
				return
			}
			results[i] = m
		})
	}
	wg.Wait()
	for _, m := range results {
		if m != nil && (m.Status != smsinbox.StatusDuplicate || m.DuplicateOf != first.ID) {
			t.Fatalf("copy is %s of %q", m.Status, m.DuplicateOf)
		}
	}
	// The chain counted it once: the next message follows 1,100.
	wantStatus(t, f.ingest(cashOut("100.00", "1,200.00", "TRX0000002", t0)), smsinbox.StatusAccepted)
}

func TestRejectedMessages(t *testing.T) {
	f := newFixture(t)
	f.anchor("1000")
	otp := f.ingest(smsinbox.Incoming{Sender: "MyBank", Body: "Your OTP is 482913. Do not share it."})
	if otp.Status != smsinbox.StatusUntrustedSender || otp.Body != "" {
		t.Fatalf("untrusted message kept as %s with text %q", otp.Status, otp.Body)
	}
	if again := f.ingest(smsinbox.Incoming{Sender: "MyBank", Body: "Your OTP is 482913. Do not share it."}); again.Status != smsinbox.StatusDuplicate || again.Body != "" {
		t.Fatalf("copy of an untrusted message kept as %s with text %q", again.Status, again.Body)
	}
	for _, c := range []struct {
		in     smsinbox.Incoming
		status string
	}{
		{smsinbox.Incoming{Sender: "01712345678", Body: cashOut("100.00", "1,100.00", "TRX0000001", t0).Body}, smsinbox.StatusUntrustedSender},
		{smsinbox.Incoming{Sender: "bKash", Body: "Your bKash verification code is 123456."}, smsinbox.StatusUnparsed},
		// A Nagad message on a device that proves no Nagad wallet.
		{smsinbox.Incoming{Sender: "NAGAD", Body: "Money Received.\nAmount: Tk 500.00\nSender: 01712345678\nRef: N/A\nTxnID: 71ABCDEF\nBalance: Tk 1,500.00\n21/11/2026 16:03"}, smsinbox.StatusNoWallet},
	} {
		m := f.ingest(c.in)
		wantStatus(t, m, c.status)
	}
	for _, in := range []smsinbox.Incoming{
		{Sender: "", Body: "x"},
		{Sender: "bKash", Body: "  "},
		{Sender: "bKash", Body: "x", ReceivedAt: t0.Add(time.Hour)},
	} {
		if _, _, err := f.inbox.Ingest(f.ctx, f.device, in); engine.ErrorCode(err) != engine.CodeInvalidRequest {
			t.Fatalf("ingest %+v: %v", in, err)
		}
	}
}

func TestDevices(t *testing.T) {
	f := newFixture(t)
	// The wallet is out of the pool until the device reports.
	ws, _ := f.eng.ListWallets(f.ctx, f.org)
	if ws[0].LiveUntil == nil || ws[0].LiveUntil.After(t0) {
		t.Fatalf("new device's wallet live until %v", ws[0].LiveUntil)
	}
	until, err := f.inbox.Heartbeat(f.ctx, f.device)
	if err != nil || !until.Equal(t0.Add(5*time.Minute)) {
		t.Fatal(until, err)
	}
	ws, _ = f.eng.ListWallets(f.ctx, f.org)
	if !ws[0].LiveUntil.Equal(until) {
		t.Fatalf("wallet live until %v, want %v", ws[0].LiveUntil, until)
	}
	// A second device cannot take a wallet a live device proves.
	_, err = f.inbox.AddDevice(f.ctx, smsinbox.AddDeviceParams{OrganizationID: f.org, WalletIDs: []string{f.wallet.ID}})
	if engine.ErrorCode(err) != engine.CodeConflict {
		t.Fatalf("second device for a proven wallet: %v", err)
	}
	nagad1, nagad2 := f.addWallet("nagad", "01822222222"), f.addWallet("nagad", "01833333333")
	_, err = f.inbox.AddDevice(f.ctx, smsinbox.AddDeviceParams{OrganizationID: f.org, WalletIDs: []string{nagad1.ID, nagad2.ID}})
	if engine.ErrorCode(err) != engine.CodeInvalidRequest {
		t.Fatalf("two nagad wallets on one device: %v", err)
	}
	if _, err := f.inbox.AddDevice(f.ctx, smsinbox.AddDeviceParams{OrganizationID: "org_nope", WalletIDs: []string{f.wallet.ID}}); engine.ErrorCode(err) != engine.CodeNotFound {
		t.Fatalf("device of a missing org: %v", err)
	}
	// Revoked: its token stops working, its wallet leaves the pool, and a
	// new device takes the wallet over with its balance chain.
	f.anchor("1000")
	if _, err := f.inbox.RevokeDevice(f.ctx, f.org, f.device.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.inbox.Ingest(f.ctx, f.device, cashOut("100.00", "1,100.00", "TRX0000001", t0)); engine.ErrorCode(err) != engine.CodeUnauthorized {
		t.Fatalf("ingest by a revoked device: %v", err)
	}
	creds, err := f.inbox.AddDevice(f.ctx, smsinbox.AddDeviceParams{OrganizationID: f.org, WalletIDs: []string{f.wallet.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if creds.Chains[0].Balance.Decimal.String() != "1000" {
		t.Fatalf("chain moved without its balance: %+v", creds.Chains[0])
	}
	dev, err := f.inbox.Authenticate(f.ctx, creds.Token)
	if err != nil || dev.ID != creds.Device.ID {
		t.Fatal(dev, err)
	}
	if _, err := f.inbox.Authenticate(f.ctx, creds.Token+"x"); engine.ErrorCode(err) != engine.CodeUnauthorized {
		t.Fatalf("wrong token: %v", err)
	}
}

func TestManualPayouts(t *testing.T) {
	f := newFixture(t)
	req := engine.PayoutRequest{IdempotencyKey: "wd_1", OrganizationID: f.org, Method: "bkash", Account: "01712345678", Amount: decimal.RequireFromString("500")}
	for range 2 { // a resend after a timeout queues nothing more
		p, err := f.inbox.SendPayout(f.ctx, req)
		if err != nil || p.Status != engine.PayoutPending {
			t.Fatal(p, err)
		}
	}
	queued, _ := f.inbox.ListPayouts(f.ctx, smsinbox.ListPayoutsParams{Status: smsinbox.PayoutQueued})
	if len(queued) != 1 || queued[0].OrganizationID != f.org {
		t.Fatalf("queue %+v", queued)
	}
	if _, err := f.inbox.GetPayout(f.ctx, "wd_none"); !errors.Is(err, engine.ErrPayoutNotFound) {
		t.Fatalf("unknown payout: %v", err)
	}
	if _, err := f.inbox.CompletePayout(f.ctx, "wd_1", ""); engine.ErrorCode(err) != engine.CodeInvalidRequest {
		t.Fatalf("complete without a transaction ID: %v", err)
	}
	// The engine has no such withdrawal here: PollPayoutNow says so, after
	// the outcome is recorded.
	f.clock.Add(time.Second) // the audit log's order
	_, _ = f.inbox.CompletePayout(engine.WithActor(f.ctx, "ops"), "wd_1", "bko1234567")
	p, err := f.inbox.GetPayout(f.ctx, "wd_1")
	if err != nil || p.Status != engine.PayoutSucceeded || p.Reference != "BKO1234567" {
		t.Fatal(p, err)
	}
	if _, err := f.inbox.FailPayout(f.ctx, "wd_1", "too late"); engine.ErrorCode(err) != engine.CodeConflict {
		t.Fatalf("fail after complete: %v", err)
	}
	if _, err := f.inbox.FailPayout(f.ctx, "wd_1", ""); engine.ErrorCode(err) != engine.CodeInvalidRequest {
		t.Fatalf("fail without a reason: %v", err)
	}
	audit, _ := f.eng.ListAudit(f.ctx, f.org, 0)
	last := audit[len(audit)-1]
	if last.Action != smsinbox.AuditPayoutComplete || last.Actor != "ops" || last.Subject != "wd_1" {
		t.Fatalf("audit %+v", last)
	}
}

// Two held messages that both follow the anchored balance: at most one is
// genuine, so neither counts and the chain waits for the operator.
func TestChainFork(t *testing.T) {
	f := newFixture(t)
	a := f.ingest(cashOut("100.00", "1,100.00", "TRX0000001", t0))
	f.clock.Add(time.Second) // ListSMS is newest first
	b := f.ingest(cashOut("50.00", "1,050.00", "TRX0000002", t0))
	if proven := f.anchor("1000"); len(proven) != 0 {
		t.Fatalf("a fork proved %d messages", len(proven))
	}
	ms, err := f.inbox.ListSMS(f.ctx, smsinbox.ListSMSParams{OrganizationID: f.org, Status: smsinbox.StatusConflict})
	if err != nil || len(ms) != 2 || ms[0].ID != b.ID || ms[1].ID != a.ID {
		t.Fatalf("conflicts %v, %v", ms, err)
	}
	// The operator checks the phone: 1,100 is real. Anchoring where the
	// genuine one left the chain goes on from there.
	f.anchor("1100")
	wantStatus(t, f.ingest(cashOut("10.00", "1,110.00", "TRX0000003", t0)), smsinbox.StatusAccepted)
}

// cashIn is a bKash agent's cash-in to a customer: how an operator pays a
// withdrawal from an agent wallet.
func cashIn(amount, to, balance, trxID string) smsinbox.Incoming {
	return smsinbox.Incoming{Sender: "bKash", Body: fmt.Sprintf(
		"Cash In Tk %s to %s successful. Fee Tk 0.00. Balance Tk %s. TrxID %s at %s",
		amount, to, balance, trxID, t0.In(dhaka).Format("02/01/2006 15:04"))}
}

// The operator's own send, proven by its SMS, completes the one queued
// payout it fits; a send that fits several, or is not proven, completes none.
func TestSentPayoutSettledBySMS(t *testing.T) {
	f := newFixture(t)
	f.settings(smsinbox.SettingsUpdate{PayoutSMSConfirm: ptr(false)})
	f.anchor("10000")
	queue := func(key, account, amount string) {
		t.Helper()
		_, err := f.inbox.SendPayout(f.ctx, engine.PayoutRequest{IdempotencyKey: key, OrganizationID: f.org,
			Method: "bkash", Account: account, Amount: decimal.RequireFromString(amount)})
		if err != nil {
			t.Fatal(err)
		}
	}
	queue("wd_1", "01712345678", "500")
	queue("wd_2", "01799999999", "500")
	queue("wd_3", "01755555555", "300")
	queue("wd_4", "01755555555", "300")
	status := func(key string) string {
		t.Helper()
		p, err := f.inbox.GetPayout(f.ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		return p.Status + " " + p.Reference
	}
	// A forged send (its balance does not follow) proves nothing.
	wantStatus(t, f.ingest(cashIn("500.00", "01712345678", "1,000.00", "BKF0000001")), smsinbox.StatusHeld)
	if got := status("wd_1"); got != "pending " {
		t.Fatalf("forged send settled wd_1: %s", got)
	}
	wantStatus(t, f.ingest(cashIn("500.00", "01712345678", "9,500.00", "BKS0000001")), smsinbox.StatusAccepted)
	wantStatus(t, f.ingest(cashIn("300.00", "01755555555", "9,200.00", "BKS0000002")), smsinbox.StatusAccepted)
	for key, want := range map[string]string{
		"wd_1": "succeeded BKS0000001", "wd_2": "pending ", "wd_3": "pending ", "wd_4": "pending ",
	} {
		if got := status(key); got != want {
			t.Errorf("%s is %q, want %q", key, got, want)
		}
	}
}
