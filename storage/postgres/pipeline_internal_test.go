package postgres

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/storage/postgres/pgtest"
)

func newWithdrawal(id, orgID, merchantID string) *engine.Withdrawal {
	return &engine.Withdrawal{
		ID: id, OrganizationID: orgID, MerchantID: merchantID, Amount: decimal.RequireFromString("100"),
		Commission: decimal.Zero, PaymentMethod: "bkash", Account: "01712345678", Metadata: []byte("{}"),
		Status: engine.WithdrawalProcessing, PayoutStep: engine.PayoutToSend, NextRunAt: base, CreatedAt: base, UpdatedAt: base,
	}
}

// TestPipelineMergesInserts: a Pipeline's one-row inserts, queued one after
// another, go as one statement per table, the tables in the order of their
// first row (an event after its withdrawal), every row kept; a duplicate
// among them fails the Pipeline with ErrDuplicate and keeps nothing.
func TestPipelineMergesInserts(t *testing.T) {
	n := &statementCounter{}
	configHook = func(cfg *pgxpool.Config) { cfg.ConnConfig.Tracer = n }
	t.Cleanup(func() { configHook = func(*pgxpool.Config) {} })
	s, err := Open(context.Background(), pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	write(t, s, func(ctx context.Context, tx engine.Tx) error { return tx.CreateOrganization(ctx, newOrg("org_1")) })

	queue := func(tx engine.Tx, ids ...string) error {
		ctx := context.Background()
		for _, id := range ids {
			if err := tx.CreateWithdrawal(ctx, newWithdrawal("wd_"+id, "org_1", "m_"+id)); err != nil {
				return err
			}
			err := tx.CreateEvent(ctx, &engine.Event{ID: "evt_" + id, OrganizationID: "org_1", Type: engine.EventWithdrawCreated,
				ResourceID: "wd_" + id, Payload: []byte(`{}`), CreatedAt: base})
			if err != nil {
				return err
			}
		}
		return nil
	}
	before := n.statements.Load()
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		return tx.(engine.Pipeliner).Pipeline(ctx, func(tx engine.Tx) error { return queue(tx, "1", "2", "3") })
	})
	if got := n.statements.Load() - before; got != 2 {
		t.Errorf("3 withdrawals and their events took %d statements, want 2", got)
	}
	for _, id := range []string{"1", "2", "3"} {
		err := s.ReadTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
			if _, err := tx.GetWithdrawal(ctx, "org_1", "wd_"+id); err != nil {
				return fmt.Errorf("withdrawal %s: %w", id, err)
			}
			if _, err := tx.GetEvent(ctx, "evt_"+id); err != nil {
				return fmt.Errorf("event %s: %w", id, err)
			}
			return nil
		})
		if err != nil {
			t.Error(err)
		}
	}

	// "3" again (its merchant_id and IDs are taken) among new ones, then
	// a merchant_id used twice in one pipeline.
	for _, ids := range [][]string{{"4", "3", "5"}, {"6", "6"}} {
		err := s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
			return tx.(engine.Pipeliner).Pipeline(ctx, func(tx engine.Tx) error { return queue(tx, ids...) })
		})
		if !errors.Is(err, engine.ErrDuplicate) {
			t.Errorf("%v: got %v, want ErrDuplicate", ids, err)
		}
		for _, id := range ids {
			if id == "3" {
				continue
			}
			err := s.ReadTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
				_, err := tx.GetWithdrawal(ctx, "org_1", "wd_"+id)
				return err
			})
			if !errors.Is(err, engine.ErrNotFound) {
				t.Errorf("withdrawal %s of a failed pipeline: got %v, want ErrNotFound", id, err)
			}
		}
	}
}

// A batch as large as an operator may configure (--create-batch) still
// goes in: Postgres takes at most 65,535 parameters in a statement, so
// the merged insert of a table is cut into statements under that bound.
func TestPipelineInsertsWithinParameterLimit(t *testing.T) {
	p := &pipe{}
	const rows = 5000 // 18 columns each: 90,000 parameters
	for i := range rows {
		w := newWithdrawal(fmt.Sprint("wd_", i), "org_1", fmt.Sprint("m_", i))
		args := []any{w.ID, w.OrganizationID, w.MerchantID, w.Amount, w.Commission, w.PaymentMethod, w.Account,
			string(w.Metadata), w.Status, w.PayoutStep, w.ProviderReference, w.FailureReason,
			w.Tries, w.NextRunAt, w.LeaseOwner, nil, w.CreatedAt, w.UpdatedAt}
		if !p.queueInsert("withdrawal "+w.ID, `INSERT INTO withdrawals (`+withdrawalColumns+`) VALUES (`+params(len(args))+`)`, args...) {
			t.Fatal("not queued as a one-row insert")
		}
	}
	b := p.batch()
	total := 0
	for _, q := range b.QueuedQueries {
		if len(q.Arguments) > maxStatementParams {
			t.Errorf("a statement with %d parameters, Postgres takes %d", len(q.Arguments), maxStatementParams)
		}
		total += len(q.Arguments)
	}
	if total != rows*18 || len(b.QueuedQueries) < 2 {
		t.Errorf("%d statements, %d parameters in all, want every row's 18", len(b.QueuedQueries), total)
	}
}
