package engine

import "context"

// GroupCommitted returns s with its InTx group-committed (see txBatcher):
// the functions of concurrent callers share a transaction and its commit,
// at most max of them (max 1 or less: s itself). It is for a plug-in's
// writes on the engine's store, the sandbox's payments and payouts, which
// otherwise commit one by one beside the engine's shared transactions:
// on SQLite each is a disk flush on the one writer connection, which the
// engine's batches then queue behind. Give the same GroupCommitted store
// to the engine (Config.Store): on a store that writes one transaction at
// a time, the engine's writes and the plug-in's then share one queue and
// each commit carries both (the engine's own unbatched transactions stay
// s's). One engine per GroupCommitted store.
//
// A function that fails makes its batch run again, each function in a
// transaction of its own, so a caller sees the error its own transaction
// gave, as with s. Functions run in arrival order within a batch. ReadTx,
// ReadOne (where s has it) and Close are s's.
func GroupCommitted(s Store, max int) Store {
	if max <= 1 {
		return s
	}
	return &groupCommitted{Store: s, batch: &txBatcher{store: s, max: max}}
}

type groupCommitted struct {
	Store
	batch *txBatcher
}

var _ OneReader = (*groupCommitted)(nil)

func (g *groupCommitted) InTx(ctx context.Context, fn func(ctx context.Context, tx Tx) error) error {
	return g.batch.inTx(ctx, "", func(ctx context.Context, tx Tx, _ *sharedTx) error { return fn(ctx, tx) })
}

// ReadOne is s's, or a ReadTx where s has none.
func (g *groupCommitted) ReadOne(ctx context.Context, fn func(ctx context.Context, tx Tx) error) error {
	if r, ok := g.Store.(OneReader); ok {
		return r.ReadOne(ctx, fn)
	}
	return g.Store.ReadTx(ctx, fn)
}

// writesInParallel says whether s runs write transactions in parallel
// (ConcurrentWriter with more than one) rather than one at a time.
func writesInParallel(s Store) bool {
	w, ok := s.(ConcurrentWriter)
	return ok && w.ConcurrentWrites() > 1
}
