package smsinbox_test

import (
	"context"
	"strings"
	"testing"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/smsinbox"
	"github.com/payd-engine/payd/storage/postgres"
	"github.com/payd-engine/payd/storage/postgres/pgtest"
)

// A device or a message read by its ID goes through its primary key on
// Postgres, never an index that starts with organization_id, which the
// planner may find as cheap on a table not yet analyzed and then read
// every row of the organization to find one. (Sequential scans are priced
// out: on empty tables the planner may rightly prefer one.)
func TestByIDReadsUsePrimaryKeys(t *testing.T) {
	store, err := postgres.Open(context.Background(), pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	for _, c := range []struct{ name, query, index string }{
		{"device, locked", smsinbox.DeviceByIDQuery + " FOR NO KEY UPDATE", "sms_devices_pkey"},
		{"message", smsinbox.SMSByIDQuery, "sms_messages_pkey"},
	} {
		err := store.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
			sqlTx := tx.(engine.SQLTx)
			if _, err := sqlTx.ExecSQL(ctx, `SET LOCAL enable_seqscan = off`); err != nil {
				return err
			}
			var plan []string
			err := sqlTx.QuerySQL(ctx, `EXPLAIN `+c.query, []any{"x_1", "org_1"}, func(scan func(dest ...any) error) error {
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
