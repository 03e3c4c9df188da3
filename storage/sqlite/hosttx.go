package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/payd-engine/payd/engine"
)

// HostTx adapts the host's transaction t for engine.CreateDepositTx and
// CreateWithdrawalTx, so that what they create commits with the host's
// rows. t must be a transaction on the store's database file, of a
// *sql.DB of modernc.org/sqlite (the one given to New, or another on the
// same file); payd's statements run on t's connection.
//
// SQLite has one writer: once t has written (or began IMMEDIATE), it holds
// the write lock until the host commits or rolls back, and payd's own
// writes (its workers, its API, any payd method that writes) wait for it.
// So while t is open, call no payd method that writes other than the Tx
// ones: it would wait for the lock t holds. Begin t IMMEDIATE (open the
// host's handle with "_txlock=immediate") or write in it first: a deferred
// transaction that read before another connection committed cannot take
// the write lock and fails with SQLITE_BUSY, as it would for the host's
// own writes; the host then rolls back and retries. Give the host's
// connections a busy_timeout ("_pragma=busy_timeout(10000)") so that t
// waits for payd's writer instead of failing at once.
func (s *Store) HostTx(t *sql.Tx) engine.HostTx {
	return &hostTx{store: s, tx: t}
}

type hostTx struct {
	store *Store
	tx    *sql.Tx
	// onFile is set once t is known to be on the store's file.
	onFile atomic.Bool
}

func (h *hostTx) HostStore() engine.Store { return h.store }

// checkFile refuses a transaction on another file than the store's: payd's
// rows would go to another database than the one its workers read.
func (h *hostTx) checkFile(ctx context.Context) error {
	if h.onFile.Load() {
		return nil
	}
	const q = `SELECT file FROM pragma_database_list WHERE name = 'main'`
	var host, own string
	if err := h.tx.QueryRowContext(ctx, q).Scan(&host); err != nil {
		return interpretError(err)
	}
	err := retry(ctx, func() error { return h.store.reader.QueryRowContext(ctx, q).Scan(&own) })
	if err != nil {
		return err
	}
	if host != own {
		return fmt.Errorf("sqlite: HostTx: the transaction is on %q, the store on %q", host, own)
	}
	h.onFile.Store(true)
	return nil
}

// Savepoint runs fn between SAVEPOINT and RELEASE, rolling back to the
// savepoint if fn fails or panics.
func (h *hostTx) Savepoint(ctx context.Context, fn func(ctx context.Context, tx engine.Tx) error) (err error) {
	if h.tx == nil {
		return errors.New("sqlite: HostTx of a nil *sql.Tx")
	}
	if err := h.checkFile(ctx); err != nil {
		return err
	}
	if _, err := h.tx.ExecContext(ctx, `SAVEPOINT payd`); err != nil {
		return interpretError(err)
	}
	done := false
	defer func() {
		if done {
			return
		}
		// ROLLBACK TO keeps the savepoint open: RELEASE ends it. A context
		// already ended must not leave the host's transaction half undone.
		c := context.WithoutCancel(ctx)
		_, _ = h.tx.ExecContext(c, `ROLLBACK TO payd`)
		_, _ = h.tx.ExecContext(c, `RELEASE payd`)
	}()
	if err := fn(ctx, &tx{tx: h.tx}); err != nil {
		return err
	}
	if _, err := h.tx.ExecContext(ctx, `RELEASE payd`); err != nil {
		return interpretError(err)
	}
	done = true
	return nil
}
