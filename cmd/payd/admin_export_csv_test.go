package main

import (
	"context"
	"encoding/csv"
	"encoding/hex"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/storage/postgres/pgtest"
)

// TestAdminExportNeutralizesFormulas: text a merchant, a payer or a
// provider put in a row (a merchant_id, a phone, a failure reason) is
// exported so that a spreadsheet shows it as text, never runs it as a
// formula: a cell beginning with =, +, -, @, a tab or a carriage return
// gets a leading single quote. payd's own negative amounts stay numbers.
// On both stores.
func TestAdminExportNeutralizesFormulas(t *testing.T) {
	t.Setenv("PAYD_MASTER_KEY", hex.EncodeToString(make([]byte, 32)))
	const hyperlink = `=HYPERLINK("http://x","y")`
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "payd.db")
			if kind == "postgres" {
				db = pgtest.URL(t)
			}
			runAdmin(t, db, "init")
			org := str(runAdmin(t, db, "org", "create", "--name", "Shop", "--withdrawals"), "organization_id")
			hostileFixture(t, db, org, hyperlink)

			deposits := exportCSV(t, db, "deposits", "--org", org)
			for col, want := range map[string]string{
				"merchant_id": "'" + hyperlink, "provider_transaction_id": "'+TX1", "failure_code": "'@SUM(1)",
				"metadata": `{"note":"=1+1"}`, "amount": "500.50",
			} {
				if got := deposits[0][col]; got != want {
					t.Errorf("deposit %s: %q, want %q", col, got, want)
				}
			}
			withdrawals := exportCSV(t, db, "withdrawals", "--org", org)
			for col, want := range map[string]string{
				"merchant_id": "'-2+3+cmd|' /C calc'!A0", "phone": "'\t=1", "provider_reference": "'\r=1",
				"failure_reason": "'=1", "amount": "100.00", "commission": "1.50",
			} {
				if got := withdrawals[0][col]; got != want {
					t.Errorf("withdrawal %s: %q, want %q", col, got, want)
				}
			}
			// payd's own signed amounts are numbers a spreadsheet adds up.
			ledger := exportCSV(t, db, "ledger", "--org", org)
			if len(ledger) != 1 || ledger[0]["amount"] != "-10.00" || ledger[0]["balance_after"] != "-10.00" {
				t.Errorf("ledger: %v", ledger)
			}
			// JSON lines are not a spreadsheet's: the text stays as it was.
			if got := runExport(t, db, "deposits", "--org", org, "--format", "jsonl"); !strings.Contains(got, `"merchant_id":"=HYPERLINK(\"http://x\",\"y\")"`) {
				t.Errorf("jsonl: %s", got)
			}
		})
	}
}

// hostileFixture writes, straight in the store, one deposit, one
// withdrawal and one adjustment of org whose text members start as
// spreadsheet formulas do.
func hostileFixture(t *testing.T, db, org, merchantID string) {
	t.Helper()
	ctx := context.Background()
	sf := storeFlags{db: db}
	d, err := sf.openDatabase(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	defer d.store.Close()
	at := time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC)
	err = d.store.InTx(ctx, func(ctx context.Context, tx engine.Tx) error {
		if err := tx.CreateDeposit(ctx, &engine.Deposit{
			ID: "dep_hostile", OrganizationID: org, MerchantID: merchantID, CheckoutMode: engine.CheckoutRedirect,
			Amount: decimal.RequireFromString("500.5"), PaymentMethod: "bkash", Metadata: []byte(`{"note":"=1+1"}`),
			Status: engine.StatusFailed, ProviderTransactionID: "+TX1", FailureCode: "@SUM(1)", CheckoutToken: "tok_hostile",
			VerificationState: engine.VerificationProcessing, ExpiresAt: at.Add(time.Hour), CreatedAt: at, UpdatedAt: at,
		}); err != nil {
			return err
		}
		if err := tx.CreateWithdrawal(ctx, &engine.Withdrawal{
			ID: "wd_hostile", OrganizationID: org, MerchantID: "-2+3+cmd|' /C calc'!A0", Amount: decimal.NewFromInt(100),
			Commission: decimal.RequireFromString("1.5"), PaymentMethod: "nagad", Account: "\t=1", Metadata: []byte("{}"),
			Status: engine.WithdrawalFailed, ProviderReference: "\r=1", FailureReason: "=1", CreatedAt: at, UpdatedAt: at,
		}); err != nil {
			return err
		}
		return tx.CreateJournal(ctx, &engine.Journal{
			ID: "jnl_hostile", OrganizationID: org, Kind: engine.JournalAdjustment, CreatedAt: at,
			Entries: []engine.Entry{{Account: engine.AccountAdjustments, Amount: decimal.NewFromInt(10)}, {Account: engine.AccountAvailable, Amount: decimal.NewFromInt(-10)}},
		})
	})
	if err != nil {
		t.Fatal(err)
	}
}

// exportCSV runs a CSV export and reads its rows back as a spreadsheet
// would, each by its header's names.
func exportCSV(t *testing.T, db string, args ...string) []map[string]string {
	t.Helper()
	records, err := csv.NewReader(strings.NewReader(runExport(t, db, args...))).ReadAll()
	if err != nil || len(records) == 0 {
		t.Fatalf("export %s: %v %q", strings.Join(args, " "), err, records)
	}
	var rows []map[string]string
	for _, rec := range records[1:] {
		row := map[string]string{}
		for i, name := range records[0] {
			row[name] = rec[i]
		}
		rows = append(rows, row)
	}
	return rows
}
