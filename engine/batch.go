package engine

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
)

// txBatcher is group commit: transaction functions of concurrent callers
// that arrive while a batch is being written run together, one after
// another, in the next database transaction, so that they share its
// commit (a disk flush) and, on Postgres, the row locks they take are
// taken once per batch instead of once per caller. Each caller gets its
// answer only after that commit.
//
// If the batch's transaction fails (any function returned an error, a
// merchant_id taken, no wallet left, a database error, a panic), nothing of
// it is kept and every function runs again in a transaction of its own, in
// its caller's goroutine, exactly as without batching: so one failing
// request never fails the others, and every error a caller sees is the one
// its own transaction gave.
//
// The functions of a batch share the wallet pools they pick from, which
// they are passed: each pool is listed and locked once per batch, and each
// wallet's last assignment written once (see pickWallet). A function that
// runs alone is passed nil.
//
// There is no goroutine of its own: the first caller to find no batch
// being written writes one, then hands that role to the first caller still
// waiting (LevelDB's writer queue).
type txBatcher struct {
	store Store
	max   int // functions per batch; 1 or less: every call runs alone

	mu      sync.Mutex
	queue   []*batchItem
	writing bool // a batch is being written; the queue waits for it
}

// batchItem is one caller's transaction function in the queue.
type batchItem struct {
	ctx context.Context
	// key orders the functions of a batch (stably): callers pass what
	// decides the locks their function takes (for a deposit, its
	// organization, channel and operation), so that any two batches lock
	// in the same order and batches of several processes on one Postgres
	// database do not deadlock.
	key string
	fn  batchFunc

	// ready receives once: the lead (lead set) or the outcome (err, or
	// alone when the function must run in a transaction of its own).
	ready chan struct{}
	lead  bool
	alone bool
	err   error
}

// batchFunc is a transaction function of txBatcher. pools are the wallet
// pools of the batch's transaction, nil when the function runs alone.
type batchFunc func(ctx context.Context, tx Tx, pools *lockedPools) error

// inOwnTx runs fn alone, in a transaction of its own.
func (b *txBatcher) inOwnTx(ctx context.Context, fn batchFunc) error {
	return b.store.InTx(ctx, func(ctx context.Context, tx Tx) error { return fn(ctx, tx, nil) })
}

// errBatchPanicked stops a batch whose function panicked: run alone, in its
// caller's goroutine, the function panics again where it should.
var errBatchPanicked = errors.New("a function of the batch panicked")

// inTx runs fn in a transaction that it may share with other callers'
// functions (see txBatcher); as for Store.InTx, fn must be safe to run more
// than once. It returns fn's error, or the transaction's.
func (b *txBatcher) inTx(ctx context.Context, key string, fn batchFunc) error {
	if b.max <= 1 {
		return b.inOwnTx(ctx, fn)
	}
	it := &batchItem{ctx: ctx, key: key, fn: fn, ready: make(chan struct{}, 1)}
	b.mu.Lock()
	b.queue = append(b.queue, it)
	lead := !b.writing
	b.writing = true
	b.mu.Unlock()
	if !lead {
		// Like a commit already under way, the batch holding fn is waited
		// for even when ctx ends: it is short, and others depend on it.
		<-it.ready
		lead = it.lead
	}
	if lead {
		b.lead(it)
	}
	if it.alone {
		return b.inOwnTx(ctx, fn)
	}
	return it.err
}

// lead writes the batch at the head of the queue, whose first item is
// self, then passes the lead to the next caller waiting, if any: also when
// self's own function panicked.
func (b *txBatcher) lead(self *batchItem) {
	b.mu.Lock()
	n := min(len(b.queue), b.max)
	batch := slices.Clone(b.queue[:n])
	b.queue = slices.Delete(b.queue, 0, n)
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		if len(b.queue) > 0 {
			next := b.queue[0]
			next.lead = true
			next.ready <- struct{}{}
		} else {
			b.writing = false
		}
		b.mu.Unlock()
		for _, it := range batch[1:] {
			it.ready <- struct{}{}
		}
	}()
	b.write(self, batch)
}

// write runs the functions of batch in one transaction and sets each
// outcome. A function alone in its batch runs in a transaction of its own,
// with its caller's context, as without batching: in the leader's
// goroutine if it is the leader's (the lead stays taken meanwhile, so that
// others queue), else in its caller's.
func (b *txBatcher) write(self *batchItem, batch []*batchItem) {
	var live []*batchItem
	for _, it := range batch {
		if err := it.ctx.Err(); err != nil {
			it.err = err // gone before it started, as a transaction never begun
			continue
		}
		live = append(live, it)
	}
	switch {
	case len(live) == 0:
		return
	case len(live) == 1 && live[0] == self:
		self.err = b.inOwnTx(self.ctx, self.fn)
		return
	case len(live) == 1:
		live[0].alone = true
		return
	}
	slices.SortStableFunc(live, func(x, y *batchItem) int { return strings.Compare(x.key, y.key) })
	// The transaction outlives any one caller's context: a caller that
	// leaves does not undo the others' work.
	ctx := context.WithoutCancel(self.ctx)
	err := b.store.InTx(ctx, func(ctx context.Context, tx Tx) error {
		pools := newLockedPools() // afresh each time InTx runs this
		for _, it := range live {
			if err := runGuarded(ctx, tx, pools, it.fn); err != nil {
				return err
			}
		}
		return pools.flush(ctx, tx)
	})
	for _, it := range live {
		it.alone = err != nil
	}
}

// runGuarded calls fn, turning a panic into errBatchPanicked.
func runGuarded(ctx context.Context, tx Tx, pools *lockedPools, fn batchFunc) (err error) {
	defer func() {
		if recover() != nil {
			err = errBatchPanicked
		}
	}()
	return fn(ctx, tx, pools)
}
