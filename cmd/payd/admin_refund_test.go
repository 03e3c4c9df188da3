package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/storage/postgres/pgtest"
)

// paidFixture writes, straight in the store, a succeeded deposit of 500 of
// org and the 500 it made available.
func paidFixture(t *testing.T, db, org string) {
	t.Helper()
	ctx := context.Background()
	sf := storeFlags{db: db}
	d, err := sf.openDatabase(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	defer d.store.Close()
	at := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	err = d.store.InTx(ctx, func(ctx context.Context, tx engine.Tx) error {
		if err := tx.CreateDeposit(ctx, &engine.Deposit{
			ID: "dep_paid", OrganizationID: org, MerchantID: "order-1", CheckoutMode: engine.CheckoutRedirect,
			Amount: decimal.NewFromInt(500), PaymentMethod: "bkash", Channel: "bkash", Metadata: []byte(`{}`),
			Status: engine.StatusSucceeded, ProviderTransactionID: "TX00000001", PayerPhone: "01712345678", CheckoutToken: "tok_paid",
			VerificationState: engine.StatusSucceeded, ExpiresAt: at.Add(time.Hour), CreatedAt: at, UpdatedAt: at,
		}); err != nil {
			return err
		}
		return tx.CreateJournal(ctx, &engine.Journal{
			ID: "jnl_paid", OrganizationID: org, Kind: engine.JournalAdjustment, CreatedAt: at,
			Entries: []engine.Entry{{Account: engine.AccountAdjustments, Amount: decimal.NewFromInt(-500)}, {Account: engine.AccountAvailable, Amount: decimal.NewFromInt(500)}},
		})
	})
	if err != nil {
		t.Fatal(err)
	}
}

// payd admin refund create refunds once per merchant ID, audited with the
// actor, asking the provider serve runs: the SMS inbox refuses a deposit
// whose payer no SMS proves. refund list shows it. On both stores.
func TestAdminRefund(t *testing.T) {
	t.Setenv("PAYD_MASTER_KEY", hex.EncodeToString(make([]byte, 32)))
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "payd.db")
			if kind == "postgres" {
				db = pgtest.URL(t)
			}
			runAdmin(t, db, "init")
			org := str(runAdmin(t, db, "org", "create", "--name", "Shop"), "organization_id")
			paidFixture(t, db, org)

			var stdout, stderr bytes.Buffer
			err := run(context.Background(), []string{"admin", "refund", "create", "--db", db, "--org", org, "--deposit", "dep_paid", "--amount", "100", "--provider", "smsinbox"}, &stdout, &stderr)
			if err == nil || !strings.Contains(err.Error(), "unavailable") {
				t.Fatalf("the SMS inbox refunded a payer no SMS proves: %v %s", err, stdout.String())
			}
			args := []string{"refund", "create", "--org", org, "--deposit", "dep_paid", "--amount", "200", "--reason", "damaged", "--merchant-id", "r-1", "--actor", "alice"}
			first := runAdmin(t, db, args...)
			again := runAdmin(t, db, args...)
			r := first["refund"].(map[string]any)
			if first["created"] != true || again["created"] != false || str(r, "amount") != "200.00" || str(r, "status") != engine.RefundProcessing ||
				str(again["refund"].(map[string]any), "id") != str(r, "id") {
				t.Fatalf("refund create: %v, again %v", first, again)
			}
			if out := runAdmin(t, db, "refund", "create", "--org", org, "--deposit", "dep_paid", "--actor", "alice",
				"--reason", "=1+1", "--merchant-id", "@SUM(1)"); str(out["refund"].(map[string]any), "amount") != "300.00" {
				t.Fatalf("a refund of all that is left: %v", out)
			}
			stdout.Reset()
			err = run(context.Background(), []string{"admin", "refund", "create", "--db", db, "--org", org, "--deposit", "dep_paid", "--amount", "1"}, &stdout, &stderr)
			if err == nil || !strings.Contains(err.Error(), "left to refund") {
				t.Fatalf("a refund past the deposit: %v", err)
			}
			list := runAdmin(t, db, "refund", "list", "--org", org, "--deposit", "dep_paid")
			if rs := list["refunds"].([]any); len(rs) != 2 || str(rs[1].(map[string]any), "id") != str(r, "id") {
				t.Fatalf("refund list: %v", list)
			}
			// The export: a merchant's text a spreadsheet would run is quoted.
			rows := exportCSV(t, db, "refunds", "--org", org)
			if len(rows) != 2 || rows[0]["id"] != str(r, "id") || rows[0]["amount"] != "200.00" || rows[0]["reason"] != "damaged" ||
				rows[1]["reason"] != "'=1+1" || rows[1]["merchant_id"] != "'@SUM(1)" || rows[1]["deposit_id"] != "dep_paid" || rows[1]["status"] != "processing" {
				t.Fatalf("export refunds: %v", rows)
			}
			audit := runAdmin(t, db, "audit", "--org", org)
			var n int
			for _, e := range audit["entries"].([]any) {
				if e := e.(map[string]any); str(e, "action") == engine.AuditRefundCreate {
					n++
					if str(e, "actor") != "alice" {
						t.Errorf("refund audited as %v", e)
					}
				}
			}
			if n != 2 {
				t.Fatalf("%d refund.create entries for two refunds: %v", n, audit)
			}
		})
	}
}
