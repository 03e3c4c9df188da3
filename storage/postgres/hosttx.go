package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/payd-engine/payd/engine"
)

// HostTx adapts the host's transaction t for engine.CreateDepositTx and
// CreateWithdrawalTx, so that what they create commits with the host's
// rows. t must be a transaction on the store's database, begun on a pool
// whose config went through ConfigurePool (NUMERIC into decimal.Decimal,
// durable commits); the store's own pool is one. READ COMMITTED, pgx's
// default, is the isolation payd's writes are made for; under REPEATABLE
// READ or SERIALIZABLE a concurrent create may fail t with a serialization
// failure, which the host retries. payd's statements run in a savepoint
// of t (pgx.Tx.Begin), so a call that fails leaves t usable.
func (s *Store) HostTx(t pgx.Tx) engine.HostTx {
	return hostTx{store: s, tx: t}
}

type hostTx struct {
	store *Store
	tx    pgx.Tx
}

func (h hostTx) HostStore() engine.Store { return h.store }

// Savepoint runs fn in a pgx savepoint of the host's transaction.
func (h hostTx) Savepoint(ctx context.Context, fn func(ctx context.Context, tx engine.Tx) error) (err error) {
	if h.tx == nil {
		return errors.New("postgres: HostTx of a nil pgx.Tx")
	}
	sp, err := h.tx.Begin(ctx) // SAVEPOINT
	if err != nil {
		return interpretError(err)
	}
	done := false
	defer func() {
		if !done {
			rollback(ctx, sp) // ROLLBACK TO SAVEPOINT, even after ctx ended
		}
	}()
	if err := fn(ctx, &tx{tx: sp}); err != nil {
		return err
	}
	if err := sp.Commit(ctx); err != nil { // RELEASE SAVEPOINT
		return interpretError(err)
	}
	done = true
	return nil
}
