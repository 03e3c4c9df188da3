package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/payd-engine/payd/storage/postgres/pgtest"
)

// ledger verify passes on a ledger payd kept, and catches a balance row
// changed behind its back (here by a direct SQL update), exiting non-zero
// with the account, both amounts and the difference.
func TestAdminLedgerVerify(t *testing.T) {
	t.Setenv("PAYD_MASTER_KEY", hex.EncodeToString(make([]byte, 32)))
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			var db string
			var plant func(orgID string)
			if kind == "postgres" {
				db = pgtest.URL(t)
				plant = func(orgID string) {
					conn, err := pgx.Connect(context.Background(), db)
					if err != nil {
						t.Fatal(err)
					}
					defer conn.Close(context.Background())
					if _, err := conn.Exec(context.Background(), plantedUpdate("$1"), orgID); err != nil {
						t.Fatal(err)
					}
				}
			} else {
				db = filepath.Join(t.TempDir(), "payd.db")
				plant = func(orgID string) {
					conn, err := sql.Open("sqlite", db)
					if err != nil {
						t.Fatal(err)
					}
					defer conn.Close()
					if _, err := conn.Exec(plantedUpdate("?"), orgID); err != nil {
						t.Fatal(err)
					}
				}
			}
			runAdmin(t, db, "init") // admin commands never create a database
			org := str(runAdmin(t, db, "org", "create", "--name", "Shop"), "organization_id")
			other := str(runAdmin(t, db, "org", "create", "--name", "Other"), "organization_id")
			runAdmin(t, db, "balance", "adjust", "--org", org, "--amount", "1250.50", "--reason", "opening float")
			runAdmin(t, db, "balance", "adjust", "--org", org, "--amount", "-250.50", "--reason", "correction")
			runAdmin(t, db, "balance", "adjust", "--org", other, "--amount", "10", "--reason", "opening float")

			ok := runAdmin(t, db, "ledger", "verify")
			if ok["ok"] != true || ok["organizations"] != 2.0 || ok["accounts"] != 4.0 || len(ok["differences"].([]any)) != 0 {
				t.Fatalf("ledger verify of a consistent ledger: %v", ok)
			}
			var text bytes.Buffer
			if err := run(context.Background(), []string{"admin", "ledger", "verify", "--db", db}, &text, &text); err != nil ||
				!strings.Contains(text.String(), "ledger verified: 2 organizations, 4 accounts") {
				t.Fatalf("ledger verify (text): %v\n%s", err, text.String())
			}

			plant(org)
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), []string{"admin", "ledger", "verify", "--db", db, "--json"}, &stdout, &stderr)
			if !errors.Is(err, errLedgerDiffers) {
				t.Fatalf("ledger verify after the planted difference: %v, want it to fail\n%s", err, stdout.String())
			}
			var report struct {
				OK          bool
				Differences []map[string]string
			}
			if err := json.Unmarshal(stdout.Bytes(), &report); err != nil {
				t.Fatalf("no report printed: %q", stdout.String())
			}
			want := map[string]string{"organization_id": org, "account": "available", "balance": "1000.01", "entries": "1000.00", "difference": "0.01"}
			if report.OK || len(report.Differences) != 1 || mustJSON(t, report.Differences[0]) != mustJSON(t, want) {
				t.Fatalf("report = %s, want the one difference %v", stdout.String(), want)
			}
			text.Reset()
			err = run(context.Background(), []string{"admin", "ledger", "verify", "--db", db}, &text, &text)
			if !errors.Is(err, errLedgerDiffers) || !strings.Contains(text.String(), "1 of 4 accounts in 2 organizations differ") ||
				!strings.Contains(text.String(), "1000.01") {
				t.Fatalf("ledger verify (text) after the planted difference: %v\n%s", err, text.String())
			}
		})
	}
}

// plantedUpdate adds one poisha to an available balance row without an
// entry: what a bug or a hand edit of the database would do.
func plantedUpdate(param string) string {
	return `UPDATE account_balances SET balance_minor = balance_minor + 1 WHERE organization_id = ` + param + ` AND account = 'available'`
}
