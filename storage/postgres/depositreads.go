package postgres

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/payd-engine/payd/engine"
)

// depositReads coalesces the ReadOne reads of a deposit by ID that arrive
// while others are under way: a read runs at once while fewer than
// maxDepositReadBatches batches are, else it waits, and when a batch ends
// the reads that waited go as the next one, one statement (id = ANY) and
// one round trip for all. A read alone costs what it did; under load a
// round trip, a connection's turn and the server's work on a statement are
// shared. A read joins only a batch not yet sent, so it sees every commit
// that returned before it was asked, as a read of its own would: nothing
// is kept between batches.
type depositReads struct {
	mu      sync.Mutex
	running int            // batches under way
	waiting []*depositRead // reads for the next batch, in order of arrival
}

// maxDepositReadBatches is how many batches of deposit reads run at once.
// One: under load the batches are the largest, and a read waits at most
// one batch's round trip before its own. paydbench's signed GETs, 32 at
// once on two CPUs: 48-68 µs of payd's CPU and 8-9 µs of the server's per
// GET, against 70-132 and 43-51 reading alone (60-71 µs of payd's with two
// batches at once). The price is paid at low concurrency: 4 to 8 clients
// waited 0.54-0.85 ms at the median, against 0.30-0.55 ms reading alone
// (their 99th percentiles fell: 3.3-8.0 ms against 5.8-9.8).
const maxDepositReadBatches = 1

// maxDepositReadBatch bounds the IDs of one statement.
const maxDepositReadBatch = 64

type depositRead struct {
	ctx                context.Context
	organizationID, id string
	d                  *engine.Deposit
	err                error
	// signal is sent to once: the read is done, or (lead) it is to run
	// the next batch.
	signal chan struct{}
	lead   bool
}

// get reads the deposit id of organizationID, alone or in a batch.
func (c *depositReads) get(ctx context.Context, s *Store, organizationID, id string) (*engine.Deposit, error) {
	r := &depositRead{ctx: ctx, organizationID: organizationID, id: id}
	c.mu.Lock()
	if c.running < maxDepositReadBatches {
		c.running++
		c.mu.Unlock()
		c.lead(s, r)
		return r.d, r.err
	}
	r.signal = make(chan struct{}, 1)
	c.waiting = append(c.waiting, r)
	c.mu.Unlock()
	select {
	case <-r.signal:
	case <-ctx.Done():
		c.mu.Lock()
		for i, w := range c.waiting {
			if w == r {
				c.waiting = slices.Delete(c.waiting, i, i+1)
				c.mu.Unlock()
				return nil, ctx.Err()
			}
		}
		c.mu.Unlock()
		// Taken into a batch, or chosen to lead one: the batch reads
		// into r, so r waits for it.
		<-r.signal
	}
	if r.lead {
		c.lead(s, r)
	}
	return r.d, r.err
}

// lead runs a batch of r and the reads waiting now, then hands its turn
// to the first read that waits after it, if any.
func (c *depositReads) lead(s *Store, r *depositRead) {
	c.mu.Lock()
	n := min(len(c.waiting), maxDepositReadBatch-1)
	batch := make([]*depositRead, 1, n+1)
	batch[0] = r
	batch = append(batch, c.waiting[:n]...)
	c.waiting = slices.Delete(c.waiting, 0, n)
	c.mu.Unlock()

	done := false
	defer func() {
		if !done { // a panic: the others fail, and the turn goes on
			for _, w := range batch[1:] {
				w.d, w.err = nil, errReadPanicked
			}
		}
		for _, w := range batch[1:] {
			w.signal <- struct{}{}
		}
		c.handOff()
	}()
	s.readDeposits(batch)
	done = true
}

var errReadPanicked = errors.New("postgres: the batch of deposit reads panicked")

// handOff ends a batch's turn: the first read waiting leads the next
// batch, or the turn is free.
func (c *depositReads) handOff() {
	c.mu.Lock()
	if len(c.waiting) == 0 {
		c.running--
		c.mu.Unlock()
		return
	}
	next := c.waiting[0]
	c.waiting = slices.Delete(c.waiting, 0, 1)
	next.lead = true
	c.mu.Unlock()
	next.signal <- struct{}{}
}

// getDepositsQuery reads the deposits of a batch by the primary key; each
// read then takes its row only if it belongs to the organization it named.
// It probes the key once per ID (a lateral subquery that OFFSET 0 keeps
// from being flattened into a join) rather than asking for id = ANY($1):
// pgx prepares the statement once per connection, and the plan Postgres
// caches for it stays the one chosen when the statement was first planned.
// Planned against a new, nearly empty table, id = ANY is a sequential
// scan, which then read the whole table for every batch as it grew, until
// an ANALYZE of the table replaced the plan (TestKeyedReadsUseTheirIndex).
const getDepositsQuery = `SELECT d.* FROM unnest($1::text[]) AS k (key),
	LATERAL (SELECT ` + depositColumns + ` FROM deposits WHERE id = k.key OFFSET 0) AS d`

// readDeposits reads the batch's deposits: a batch of one as ReadOne
// would, a larger one in one statement.
func (s *Store) readDeposits(batch []*depositRead) {
	if len(batch) == 1 {
		r := batch[0]
		r.d, r.err = scanDeposit(s.pool.QueryRow(r.ctx, getDepositQuery, r.id, r.organizationID))
		return
	}
	ctx, done := batchContext(batch)
	defer done()
	ids := make([]string, 0, len(batch))
	for _, r := range batch {
		if !slices.Contains(ids, r.id) { // a deposit read twice is read once
			ids = append(ids, r.id)
		}
	}
	err := func() error {
		rows, err := s.pool.Query(ctx, getDepositsQuery, ids)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			d, err := scanDeposit(rows)
			if err != nil {
				return err
			}
			taken := false
			for _, r := range batch {
				if r.id != d.ID || r.organizationID != d.OrganizationID {
					continue
				}
				if taken { // the same deposit read twice: each its own copy
					c := *d
					c.Metadata = append([]byte(nil), d.Metadata...)
					r.d = &c
				} else {
					r.d, taken = d, true
				}
			}
		}
		return rows.Err()
	}()
	for _, r := range batch {
		switch {
		case err != nil:
			r.d, r.err = nil, interpretError(err)
		case r.d == nil:
			r.err = engine.ErrNotFound
		}
	}
}

// batchContext is the context of a batch's statement: canceled once every
// read of the batch has given up (its context done), not when one has,
// which would fail the others' reads.
func batchContext(batch []*depositRead) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(batch[0].ctx))
	for _, r := range batch {
		if r.ctx.Done() == nil { // one read never gives up
			return ctx, cancel
		}
	}
	var live atomic.Int64
	live.Store(int64(len(batch)))
	stops := make([]func() bool, len(batch))
	for i, r := range batch {
		stops[i] = context.AfterFunc(r.ctx, func() {
			if live.Add(-1) == 0 {
				cancel()
			}
		})
	}
	return ctx, func() {
		for _, stop := range stops {
			stop()
		}
		cancel()
	}
}
