package bkash_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/bkash"
	"github.com/payd-engine/payd/storage/postgres"
	"github.com/payd-engine/payd/storage/postgres/pgtest"
)

// TestQueriesUseTheirIndexes: a payment looked up by trxID (every bKash
// lookup and refund) and the payments due (every background check) are
// read through their partial indexes on Postgres, with the generic plan a
// prepared statement settles on, whose parameters the planner cannot see.
func TestQueriesUseTheirIndexes(t *testing.T) {
	store, err := postgres.Open(context.Background(), pgtest.URL(t), bkash.Migrations())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	for i, c := range []struct{ name, query, types, args, index string }{
		{"by trx", bkash.PaymentByTrxQuery, "text, text", "'org_1', 'TRX1'", "bkash_payments_trx"},
		{"due", bkash.DuePaymentsQuery, "timestamptz, int", "now(), 100", "bkash_payments_due"},
	} {
		err := store.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
			sqlTx := tx.(engine.SQLTx)
			for _, set := range []string{`SET LOCAL enable_seqscan = off`, `SET LOCAL plan_cache_mode = force_generic_plan`,
				fmt.Sprintf(`PREPARE bkash_plan_%d (%s) AS %s`, i, c.types, c.query)} {
				if _, err := sqlTx.ExecSQL(ctx, set); err != nil {
					return err
				}
			}
			var plan []string
			err := sqlTx.QuerySQL(ctx, fmt.Sprintf(`EXPLAIN EXECUTE bkash_plan_%d (%s)`, i, c.args), nil, func(scan func(dest ...any) error) error {
				var line string
				err := scan(&line)
				plan = append(plan, line)
				return err
			})
			if err == nil && !strings.Contains(strings.Join(plan, "\n"), c.index) {
				t.Errorf("%s plan:\n%s", c.name, strings.Join(plan, "\n"))
			}
			return err
		})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
	}
}
