package engine

import (
	"context"
	"errors"
)

// HostTx is a database transaction of the host's, on the database of the
// engine's store, as that store adapts it: sqlite.Store.HostTx of the
// host's *sql.Tx, postgres.Store.HostTx of its pgx.Tx. CreateDepositTx
// and CreateWithdrawalTx write in it, so that what they create commits or
// rolls back with the host's own rows (its order): a rollback leaves no
// deposit, withdrawal, event, webhook delivery, ledger entry or wallet
// assignment. The host begins, commits and rolls back the transaction;
// payd never does.
type HostTx interface {
	// HostStore is the store that adapted the transaction: the engine
	// refuses a HostTx of a store other than its own.
	HostStore() Store
	// Savepoint runs fn in a savepoint of the host's transaction,
	// released when fn returns nil and rolled back to when it returns an
	// error or panics: a call that fails leaves the host's transaction as
	// it found it, still usable. fn's statements run on the host's
	// connection and see its uncommitted rows.
	Savepoint(ctx context.Context, fn func(ctx context.Context, tx Tx) error) error
}

// ErrForeignHostTx is returned for a HostTx adapted by a store other than
// the engine's.
var ErrForeignHostTx = errors.New("engine: the HostTx was adapted by another store than the engine's (Config.Store)")

// CreateDepositTx is CreateDeposit in the host's transaction h: the deposit
// (and its wallet's assignment) is written in h and exists once the host
// commits, with the host's rows; a rollback leaves no trace of it. The
// merchant_id is idempotent as for CreateDeposit, among committed deposits
// and those created earlier in h; of concurrent transactions creating one
// merchant_id, the first to commit creates, and another gets the replay
// (created false) or merchant_id_conflict once the first commits (on
// Postgres its insert waits for it). An error leaves h as it was (see
// HostTx.Savepoint); one that is the database's (a lock, a deadlock, a
// serialization failure, SQLite's busy) means the host should roll back
// and retry its transaction, as payd cannot retry a transaction it does
// not own.
//
// It is never group-committed: it runs on the host's connection and holds
// the rows it locks (the wallet pool it picks from) until the host
// commits, so keep the rest of the transaction short. A redirect
// deposit's provider checkout is started while h is open. On SQLite, h
// holds the database's one write lock: while it is open, call no other
// payd method that writes (CreateDeposit, a verification, ...): it would
// wait for the lock h holds.
func (e *Engine) CreateDepositTx(ctx context.Context, h HostTx, p CreateDepositParams) (d *Deposit, created bool, err error) {
	if err := e.ownHostTx(h); err != nil {
		return nil, false, err
	}
	req, err := p.validate()
	if err != nil {
		return nil, false, err
	}
	// Read in h: a deposit h created earlier counts as existing.
	var existing *Deposit
	var org *Organization
	err = h.Savepoint(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		existing, err = tx.GetDepositByMerchantID(ctx, p.OrganizationID, p.MerchantID)
		if errors.Is(err, ErrNotFound) {
			existing = nil
			org, err = tx.GetOrganization(ctx, p.OrganizationID)
		}
		return err
	})
	if err != nil {
		return nil, false, err
	}
	if existing != nil {
		return replay(existing, req)
	}
	if !org.DepositsEnabled {
		return nil, false, Errorf(CodeForbidden, "deposits are not enabled for this organization")
	}
	if req.CheckoutMode == CheckoutH2H && !org.H2HEnabled {
		return nil, false, Errorf(CodeForbidden, "h2h deposits are not enabled for this organization")
	}
	if !org.MethodEnabled(req.PaymentMethod) {
		return nil, false, Errorf(CodeForbidden, "payment_method: the organization has turned %s off", req.PaymentMethod)
	}
	now := e.now()
	d, method, err := e.newDeposit(ctx, req, org, now)
	if err != nil {
		return nil, false, err
	}
	err = e.inHostTx(ctx, h, "", "", e.insertDeposit(d, method, now, nil))
	if errors.Is(err, ErrDuplicate) {
		// Another transaction committed the merchant_id meanwhile (the
		// savepoint undid this one's writes): answer as a replay of it.
		err = h.Savepoint(ctx, func(ctx context.Context, tx Tx) error {
			var err error
			existing, err = tx.GetDepositByMerchantID(ctx, p.OrganizationID, p.MerchantID)
			return err
		})
		if err != nil {
			return nil, false, err
		}
		return replay(existing, req)
	}
	if err != nil {
		return nil, false, err
	}
	return d, true, nil
}

// CreateWithdrawalTx is CreateWithdrawal in the host's transaction h: the
// withdrawal, its hold on the balance, withdraw.created and its webhook
// deliveries are written in h and exist once the host commits; a rollback
// leaves none of them, and nothing is paid out before the commit. It
// locks the organization's balance until h ends (every withdrawal of the
// organization waits for it), so keep the rest of h short. Run finds the
// withdrawal and its deliveries after the commit within
// Config.PollInterval, or at once if the host calls Wake after committing
// (the wake-up the event's write gives Run before the commit only makes it
// look in vain). Errors are as for CreateDepositTx.
func (e *Engine) CreateWithdrawalTx(ctx context.Context, h HostTx, p CreateWithdrawalParams) (*Withdrawal, error) {
	if err := e.ownHostTx(h); err != nil {
		return nil, err
	}
	w, err := p.validate()
	if err != nil {
		return nil, err
	}
	var org *Organization
	err = h.Savepoint(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		org, err = tx.GetOrganization(ctx, p.OrganizationID)
		return notFound(err, "organization")
	})
	if err != nil {
		return nil, err
	}
	if !org.WithdrawalsEnabled {
		return nil, Errorf(CodeForbidden, "withdrawals are not enabled for this organization")
	}
	if err := e.provider.CheckPayoutMethod(ctx, w.PaymentMethod); errors.Is(err, ErrMethodUnavailable) {
		return nil, Errorf(CodeMethodUnavailable, "payment_method: payouts by %s are temporarily unavailable", w.PaymentMethod)
	} else if err != nil {
		return nil, err
	}
	if err := e.inHostTx(ctx, h, w.OrganizationID, w.MerchantID, e.insertWithdrawal(w)); err != nil {
		return nil, err
	}
	return w, nil
}

// Wake tells Run that work may be waiting: a host calls it after
// committing a transaction in which it created a withdrawal (or wrote
// anything else Run does), so that the payout and its webhooks start at
// once instead of at Run's next look (Config.PollInterval). Calling it
// before the commit, or after a rollback, only makes Run look in vain.
func (e *Engine) Wake() { e.wakeWorkers() }

// ownHostTx refuses a HostTx of another store than the engine's.
func (e *Engine) ownHostTx(h HostTx) error {
	if h == nil {
		return errors.New("engine: HostTx is nil")
	}
	s := e.store
	if g, ok := s.(*groupCommitted); ok {
		s = g.Store
	}
	if h.HostStore() != s {
		return ErrForeignHostTx
	}
	return nil
}

// inHostTx runs fn alone in a savepoint of h, with its hint under key, as
// txBatcher.inOwnTx runs it in a transaction of its own: a refusal or any
// error leaves h as it was.
// Outcomes fn notes would not be reported, as payd does not learn whether
// h commits; the creates note none.
func (e *Engine) inHostTx(ctx context.Context, h HostTx, key, hint string, fn batchFunc) error {
	apiWrite := e.apiWrites.begin()
	defer apiWrite()
	err := h.Savepoint(ctx, func(ctx context.Context, tx Tx) error {
		var notes []outcome
		shared := newSharedTx(nil) // afresh each time, as in inOwnTx
		if hint != "" {
			shared.hints[key] = []string{hint}
		}
		if err := fn(shared.with(context.WithValue(ctx, outcomesKey{}, &notes)), tx, shared); err != nil {
			return err
		}
		return shared.flush(ctx, tx)
	})
	return refusedError(err)
}
