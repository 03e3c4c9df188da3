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
	store, err := postgres.Open(context.Background(), pgtest.URL(t), smsinbox.Migrations())
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

// TestLookupsReadOnlyTheirRows: an SMS looked up by fingerprint (every
// forwarded message, to find a copy) or by transaction ID (every payer's
// submission) is read through an index that starts with what is looked
// up, even with a plan Postgres made and cached while the table was
// empty, as on a new database before autovacuum's first ANALYZE. Such a
// plan may take an index that starts with organization_id and filter all
// of the organization's messages on every lookup.
func TestLookupsReadOnlyTheirRows(t *testing.T) {
	ctx := context.Background()
	store, err := postgres.Open(ctx, pgtest.URL(t), smsinbox.Migrations())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	const rows = 2000
	write := func(q string, args ...any) {
		t.Helper()
		err := store.InTx(ctx, func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.(engine.SQLTx).ExecSQL(ctx, q, args...)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	write(`INSERT INTO organizations (id, name, deposits_enabled, h2h_enabled, withdrawals_enabled, instructions_window_ns,
		redirect_window_ns, deposit_fee_percent, deposit_fee_fixed, withdraw_commission_percent, withdraw_commission_fixed,
		method_fees, created_at, updated_at) VALUES ('org_1', 'Org', true, true, true, 0, 0, 0, 0, 0, 0, '{}', now(), now())`)
	write(`INSERT INTO sms_devices (id, organization_id, name, token_hash, token_hint, created_at)
		VALUES ('dev_1', 'org_1', 'phone', '\x01', 'x', now())`)
	cases := []struct{ name, query, args string }{
		{"by fingerprint", smsinbox.SMSByFingerprintQuery, `('org_1', '\x0042'::bytea)`},
		{"by transaction ID", smsinbox.SMSByTransactionQuery, `('org_1', 'bkash', 'TX0042')`},
	}
	for _, mode := range []string{"auto", "force_generic_plan"} {
		for _, c := range cases {
			name := c.name + ", plan_cache_mode=" + mode
			// One transaction, so one connection: the statement is
			// prepared and its plan cached on the empty table, then read
			// after another transaction has filled it.
			err := store.InTx(ctx, func(ctx context.Context, tx engine.Tx) error {
				sqlTx := tx.(engine.SQLTx)
				for _, q := range []string{`SET LOCAL plan_cache_mode = ` + mode, `PREPARE lookup AS ` + c.query} {
					if _, err := sqlTx.ExecSQL(ctx, q); err != nil {
						return err
					}
				}
				defer sqlTx.ExecSQL(ctx, `DEALLOCATE lookup`) //nolint:errcheck // the transaction ends next
				for range 6 {
					if err := sqlTx.QuerySQL(ctx, `EXECUTE lookup`+c.args, nil, func(func(...any) error) error { return nil }); err != nil {
						return err
					}
				}
				write(`INSERT INTO sms_messages (id, organization_id, device_id, wallet_id, sender, body, fingerprint, received_at,
					status, reason, duplicate_of, channel, kind, credit, counterparty, transaction_id, reference, created_at, updated_at)
					SELECT 'sms_' || i, 'org_1', 'dev_1', '', 'bKash', 'body', decode(lpad(to_hex(i), 4, '0'), 'hex'), now(),
						'matched', '', '', 'bkash', 'cash_in', true, '', 'TX' || lpad(i::text, 4, '0'), '', now(), now()
					FROM generate_series(1, $1::int) AS i`, rows)
				defer write(`DELETE FROM sms_messages`)
				var plan []byte
				err := sqlTx.QuerySQL(ctx, `EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE lookup`+c.args, nil, func(scan func(...any) error) error {
					return scan(&plan)
				})
				if err != nil {
					return err
				}
				if _, read := pgtest.PlanReads(t, plan, "sms_messages", ""); read > 3 {
					t.Errorf("%s: read %d of %d messages", name, read, rows)
				}
				return nil
			})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
	}
}
