package postgres

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/storage/postgres/pgtest"
)

// roundTrips counts what a connection sends: a statement alone or a batch,
// each one round trip.
type roundTrips struct{ n atomic.Int64 }

func (r *roundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	r.n.Add(1)
	return ctx
}
func (r *roundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (r *roundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	r.n.Add(1)
	return ctx
}
func (r *roundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (r *roundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

// TestInTxBeginsWithItsFirstStatement: a write transaction's BEGIN costs
// no round trip of its own, one that runs nothing costs none at all, and
// one whose statement fails after the first leaves nothing behind and its
// connection clean.
func TestInTxBeginsWithItsFirstStatement(t *testing.T) {
	trips := &roundTrips{}
	configHook = func(cfg *pgxpool.Config) {
		cfg.ConnConfig.Tracer = trips
		cfg.MaxConns = 1 // every transaction below on the same connection
	}
	t.Cleanup(func() { configHook = func(*pgxpool.Config) {} })
	s, err := Open(context.Background(), pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	count := func(name string, want int64, fn func(ctx context.Context, tx engine.Tx) error) error {
		t.Helper()
		before := trips.n.Load()
		err := s.InTx(ctx, fn)
		if got := trips.n.Load() - before; got != want {
			t.Errorf("%s: %d round trips, want %d", name, got, want)
		}
		return err
	}
	// A read (QueryRow) first, then a write, then COMMIT: three, not four.
	err = count("read, write, commit", 3, func(ctx context.Context, tx engine.Tx) error {
		if _, err := tx.GetOrganization(ctx, "org_1"); !errors.Is(err, engine.ErrNotFound) {
			return err
		}
		return tx.CreateOrganization(ctx, newOrg("org_1"))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := count("nothing", 0, func(context.Context, engine.Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	// A write first, then a statement that fails: rolled back.
	errFailed := count("write, failure, rollback", 3, func(ctx context.Context, tx engine.Tx) error {
		if err := tx.CreateOrganization(ctx, newOrg("org_2")); err != nil {
			return err
		}
		_, err := tx.(engine.SQLTx).ExecSQL(ctx, `SELECT 1 / $1::int`, 0) // fails as it runs
		return err
	})
	if errFailed == nil {
		t.Fatal("the failing statement did not fail the transaction")
	}
	// The first statement failing as it runs: its BEGIN went with it, and
	// the transaction is rolled back. One that Postgres refuses to prepare
	// fails before anything runs, so there is nothing to roll back.
	if err := count("failure first, rollback", 2, func(ctx context.Context, tx engine.Tx) error {
		_, err := tx.(engine.SQLTx).ExecSQL(ctx, `SELECT 1 / $1::int`, 0)
		return err
	}); err == nil {
		t.Fatal("the failing statement did not fail the transaction")
	}
	if err := count("refused first", 1, func(ctx context.Context, tx engine.Tx) error {
		_, err := tx.(engine.SQLTx).ExecSQL(ctx, `SELECT no_such_column FROM organizations`)
		return err
	}); err == nil {
		t.Fatal("the refused statement did not fail the transaction")
	}
	// A caller that goes on after that refusal is still in a transaction
	// of its own: what it writes next is rolled back with it.
	err = s.InTx(ctx, func(ctx context.Context, tx engine.Tx) error {
		if _, err := tx.(engine.SQLTx).ExecSQL(ctx, `SELECT no_such_column FROM organizations`); err == nil {
			t.Error("the refused statement ran")
		}
		if err := tx.CreateOrganization(ctx, newOrg("org_3")); err != nil {
			return err
		}
		return errFailed
	})
	if !errors.Is(err, errFailed) {
		t.Fatal(err)
	}
	err = s.ReadTx(ctx, func(ctx context.Context, tx engine.Tx) error {
		if _, err := tx.GetOrganization(ctx, "org_1"); err != nil {
			return err
		}
		for _, id := range []string{"org_2", "org_3"} {
			if _, err := tx.GetOrganization(ctx, id); !errors.Is(err, engine.ErrNotFound) {
				t.Errorf("%s of a failed transaction: %v, want not found", id, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
