package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/storage/sqlite"
)

// exportFixture creates, straight in the store, org_a's deposits,
// withdrawals and journals at known times, and org_b's, which an export of
// org_a never shows.
func exportFixture(t *testing.T, db string) {
	t.Helper()
	ctx := context.Background()
	s, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	base := time.Date(2026, 11, 20, 18, 0, 0, 0, time.UTC) // midnight of the 21st in Dhaka
	err = s.InTx(ctx, func(ctx context.Context, tx engine.Tx) error {
		for _, org := range []string{"org_a", "org_b"} {
			if err := tx.CreateOrganization(ctx, &engine.Organization{ID: org, Name: org, CreatedAt: base, UpdatedAt: base}); err != nil {
				return err
			}
			for i := range 3 {
				at := base.Add(time.Duration(i*12) * time.Hour)
				d := &engine.Deposit{
					ID: fmt.Sprintf("dep_%s%d", org[4:], i), OrganizationID: org, MerchantID: fmt.Sprintf("order,%d \"x\"", i),
					CheckoutMode: engine.CheckoutRedirect, Amount: decimal.RequireFromString("500.5"), PaymentMethod: "bkash",
					Metadata: []byte(`{"n":` + strconv.Itoa(i) + `,"h":"<b>"}`), Status: engine.StatusPending,
					CheckoutToken: "tok_" + org + strconv.Itoa(i), VerificationState: engine.VerificationProcessing,
					ExpiresAt: at.Add(time.Hour), CreatedAt: at, UpdatedAt: at,
				}
				if i == 1 {
					d.Status, d.ProviderTransactionID = engine.StatusSucceeded, "TX1"
				}
				if err := tx.CreateDeposit(ctx, d); err != nil {
					return err
				}
				w := &engine.Withdrawal{
					ID: fmt.Sprintf("wd_%s%d", org[4:], i), OrganizationID: org, MerchantID: fmt.Sprintf("p%d", i),
					Amount: decimal.NewFromInt(100), Commission: decimal.RequireFromString("1.5"), PaymentMethod: "nagad",
					Account: "01712345678", Metadata: []byte("{}"), Status: engine.WithdrawalProcessing, CreatedAt: at, UpdatedAt: at,
				}
				if err := tx.CreateWithdrawal(ctx, w); err != nil {
					return err
				}
				j := &engine.Journal{
					ID: fmt.Sprintf("jnl_%s%d", org[4:], i), OrganizationID: org, Kind: engine.JournalAdjustment, CreatedAt: at,
					Entries: []engine.Entry{{Account: engine.AccountAdjustments, Amount: decimal.NewFromInt(-10)}, {Account: engine.AccountAvailable, Amount: decimal.NewFromInt(10)}},
				}
				if err := tx.CreateJournal(ctx, j); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func runExport(t *testing.T, db string, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	args = append(append([]string{"admin", "export"}, args...), "--db", db)
	if err := run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("payd %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

func TestAdminExport(t *testing.T) {
	t.Setenv("PAYD_MASTER_KEY", "")
	db := newAdminDB(t)
	exportFixture(t, db)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"deposits", "--org", "org_a"}, `id,created_at,merchant_id,checkout_mode,payment_method,amount,currency,status,provider_transaction_id,failure_code,metadata
dep_a0,2026-11-20T18:00:00Z,"order,0 ""x""",redirect,bkash,500.50,BDT,pending,,,"{""n"":0,""h"":""<b>""}"
dep_a1,2026-11-21T06:00:00Z,"order,1 ""x""",redirect,bkash,500.50,BDT,succeeded,TX1,,"{""n"":1,""h"":""<b>""}"
dep_a2,2026-11-21T18:00:00Z,"order,2 ""x""",redirect,bkash,500.50,BDT,pending,,,"{""n"":2,""h"":""<b>""}"
`},
		// A date is midnight in Dhaka; --to is exclusive.
		{[]string{"deposits", "--org", "org_a", "--from", "2026-11-21", "--to", "2026-11-22", "--format", "jsonl"},
			`{"id":"dep_a0","created_at":"2026-11-20T18:00:00Z","merchant_id":"order,0 \"x\"","checkout_mode":"redirect","payment_method":"bkash","amount":"500.50","currency":"BDT","status":"pending","provider_transaction_id":"","failure_code":"","metadata":{"n":0,"h":"<b>"}}
{"id":"dep_a1","created_at":"2026-11-21T06:00:00Z","merchant_id":"order,1 \"x\"","checkout_mode":"redirect","payment_method":"bkash","amount":"500.50","currency":"BDT","status":"succeeded","provider_transaction_id":"TX1","failure_code":"","metadata":{"n":1,"h":"<b>"}}
`},
		{[]string{"withdrawals", "--org", "org_a", "--from", "2026-11-21T06:00:00Z"}, `id,created_at,merchant_id,payment_method,phone,amount,commission,currency,status,provider_reference,failure_reason,metadata
wd_a1,2026-11-21T06:00:00Z,p1,nagad,01712345678,100.00,1.50,BDT,processing,,,{}
wd_a2,2026-11-21T18:00:00Z,p2,nagad,01712345678,100.00,1.50,BDT,processing,,,{}
`},
		{[]string{"ledger", "--org", "org_b", "--to", "2026-11-21T18:00:00Z"}, `id,created_at,account,kind,amount,balance_after,currency,resource_id
txn_b0_available,2026-11-20T18:00:00Z,available,adjustment,10.00,10.00,BDT,
txn_b1_available,2026-11-21T06:00:00Z,available,adjustment,10.00,20.00,BDT,
`},
		{[]string{"ledger", "--org", "org_a", "--from", "2027-01-01", "--format", "jsonl"}, ""},
	} {
		if got := runExport(t, db, c.args...); got != c.want {
			t.Errorf("export %s:\n%s\nwant\n%s", strings.Join(c.args, " "), got, c.want)
		}
	}
	for _, args := range [][]string{
		{"deposits"}, {"deposits", "--org", "org_x"}, {"deposits", "--org", "org_a", "--format", "xlsx"},
		{"deposits", "--org", "org_a", "--from", "yesterday"}, {"ledger", "--org", "org_a", "--from", "2026-11-22", "--to", "2026-11-21"},
		{"deposits", "--org", "org_a", "--json"},
	} {
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), append(append([]string{"admin", "export"}, args...), "--db", db), &stdout, &stderr); err == nil {
			t.Errorf("export %s: no error; printed %q", strings.Join(args, " "), stdout.String())
		}
	}
}

// TestAdminExportConstantMemory exports n deposits (20,000; set
// PAYD_EXPORT_ROWS=1000000 for the million of issue 20) and samples the
// heap meanwhile: its peak must not grow with n. The rows are seeded in
// SQL, in one statement per 50,000.
func TestAdminExportConstantMemory(t *testing.T) {
	n := 20_000
	if v := os.Getenv("PAYD_EXPORT_ROWS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			t.Fatal(err)
		}
	}
	if testing.Short() {
		n = 5_000
	}
	t.Setenv("PAYD_MASTER_KEY", "")
	db := newAdminDB(t)
	seedDeposits(t, db, "org_a", n)

	eng, closeEng := openEngine(t, db)
	defer closeEng()
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	count := &lineCounter{}
	start := time.Now()
	s := &exportStream{ctx: context.Background(), eng: eng, kind: "deposits", format: "csv", params: engine.ListParams{OrganizationID: "org_a"}}
	if err := s.WriteText(count); err != nil {
		t.Fatal(err)
	}
	close(stop)
	<-done
	if count.lines != n+1 {
		t.Fatalf("%d lines for %d deposits", count.lines, n)
	}
	growth := int64(peak.Load()) - int64(before.HeapInuse)
	t.Logf("%d deposits exported in %v, %d MB of CSV; heap in use before %.1f MiB, peak growth %.1f MiB",
		n, time.Since(start).Round(time.Millisecond), count.bytes>>20, float64(before.HeapInuse)/(1<<20), float64(growth)/(1<<20))
	// One page is 1,000 deposits: a few MiB with the driver's buffers.
	if growth > 32<<20 {
		t.Errorf("heap grew by %.1f MiB exporting %d rows", float64(growth)/(1<<20), n)
	}
}

type lineCounter struct{ lines, bytes int }

func (c *lineCounter) Write(p []byte) (int, error) {
	c.lines += bytes.Count(p, []byte{'\n'})
	c.bytes += len(p)
	return len(p), nil
}

var _ io.Writer = (*lineCounter)(nil)

// openEngine opens db as the admin commands do.
func openEngine(t *testing.T, db string) (*engine.Engine, func()) {
	t.Helper()
	sf := storeFlags{db: db}
	d, err := sf.openDatabase(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(engine.Config{Store: d.store, Provider: noProvider{}, Keyring: d.keyring})
	if err != nil {
		d.store.Close()
		t.Fatal(err)
	}
	return eng, func() { d.store.Close() }
}

// seedDeposits inserts org's n deposits in SQL, a millisecond apart.
func seedDeposits(t *testing.T, db, org string, n int) {
	t.Helper()
	ctx := context.Background()
	s, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	err = s.InTx(ctx, func(ctx context.Context, tx engine.Tx) error {
		return tx.CreateOrganization(ctx, &engine.Organization{ID: org, Name: org, CreatedAt: time.UnixMicro(base), UpdatedAt: time.UnixMicro(base)})
	})
	if err != nil {
		t.Fatal(err)
	}
	const batch = 50_000
	for lo := 0; lo < n; lo += batch {
		hi := min(lo+batch, n)
		err := s.InTx(ctx, func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.(engine.SQLTx).ExecSQL(ctx, `WITH RECURSIVE seq(i) AS (SELECT ? UNION ALL SELECT i + 1 FROM seq WHERE i + 1 < ?)
				INSERT INTO deposits (id, organization_id, merchant_id, checkout_mode, amount, payment_method, redirect_url, payer_phone,
					metadata, status, action, checkout_token, checkout_url, channel, operation, wallet_id, recipient_phone, recipient_name,
					qr_payload, verification_state, attempts_used, failure_code, provider_transaction_id, expires_at, created_at, updated_at)
				SELECT printf('dep_%s%020d', ?, i), ?, 'm' || i, 'redirect', '500', CASE i % 2 WHEN 0 THEN 'bkash' ELSE 'nagad' END, '', '',
					'{}', CASE i % 3 WHEN 0 THEN 'pending' WHEN 1 THEN 'succeeded' ELSE 'failed' END, 'redirect', ? || i, '', '', '', NULL, '', '',
					'', 'processing', 0, '', '', ? + i * 1000, ? + i * 1000, ? + i * 1000
				FROM seq`, lo, hi, org[len(org)-1:], org, "tok_"+org+"_", base, base, base)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
