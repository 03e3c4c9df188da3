package engine

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"
)

// txBatcher is group commit: transaction functions of concurrent callers
// that arrive while batches are being written run together, one after
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
// A function that refuses its request before writing anything (refuse: a
// deposit of another organization, an insufficient balance) does not fail
// the batch: its caller gets the refusal, and the others go on and share
// the commit. Otherwise any caller able to send a refused request could
// make every batch run again one transaction per function.
//
// The functions of a batch share a sharedTx, which they are passed: the
// wallet pools they pick from (each listed and locked once per batch, and
// each wallet's last assignment written once; see pickWallet), rows they
// only read (organizations, webhook endpoints), the balances they check and
// the journals they write, which are written last (see sharedTx). A
// function that runs alone is passed a sharedTx of its own, whose pools
// are nil.
//
// There is no goroutine of its own: a caller that finds a writer slot free
// writes a batch, then hands its slot to the first caller still waiting
// (LevelDB's writer queue). A store that runs write transactions in
// parallel (ConcurrentWriter: Postgres) has several slots, so that batches
// of a kind are written at once, each on its connection, and a caller
// under light load starts at once; SQLite has one. Two batches being
// written never hold one key: a caller whose key is in a batch being
// written waits for it and joins a later one, so that functions that
// would lock the same rows share a batch instead of two connections, one
// waiting for the other's commit. (Another process's batches may still
// hold the key: the keys' order and the row locks keep that safe.)
type txBatcher struct {
	store Store
	max   int // functions per batch; 1 or less: every call runs alone
	// observer, when set, is told the outcomes each function noted, once
	// its transaction committed (see note).
	observer Observer

	mu     sync.Mutex
	queue  []*batchItem // callers waiting for a slot, or for their key
	active int          // batches being written, at most slots()
	// busy is the leader of the batch being written that holds a key.
	busy map[string]*batchItem
}

// slots is how many batches may be written at once.
func (b *txBatcher) slots() int {
	if w, ok := b.store.(ConcurrentWriter); ok {
		return max(w.ConcurrentWrites(), 1)
	}
	return 1
}

// batchItem is one caller's transaction function in the queue.
type batchItem struct {
	ctx context.Context
	// key orders the functions of a batch (stably): callers pass what
	// decides the locks their function takes (for a deposit, its
	// organization, channel and operation), so that any two batches lock
	// in the same order and batches of several processes on one Postgres
	// database do not deadlock. Batches being written at once never share
	// a key (see txBatcher).
	key string
	fn  batchFunc
	// hint is what fn will look up, for sharedTx to look up the batch's
	// hints of its key at once (a withdrawal create's merchant_id).
	hint string

	// ready receives once: the lead (lead set) or the outcome (err, or
	// alone when the function must run in a transaction of its own).
	ready chan struct{}
	lead  bool
	alone bool
	err   error
	// notes are the outcomes fn noted in the batch's last try.
	notes []outcome
}

// batchFunc is a transaction function of txBatcher, passed what it shares
// with the other functions of its transaction.
type batchFunc func(ctx context.Context, tx Tx, shared *sharedTx) error

// inOwnTx runs fn alone, in a transaction of its own, with its hint (see
// batchItem) under key.
func (b *txBatcher) inOwnTx(ctx context.Context, key, hint string, fn batchFunc) error {
	var notes []outcome
	err := b.store.InTx(ctx, func(ctx context.Context, tx Tx) error {
		notes = notes[:0]
		// afresh each time InTx runs this; the wallet assigned is written
		// at the flush, with the writes, as in a batch
		shared := newSharedTx(newLockedPools())
		shared.alone = true
		if hint != "" {
			shared.hints[key] = []string{hint}
		}
		if err := fn(shared.with(context.WithValue(ctx, outcomesKey{}, &notes)), tx, shared); err != nil {
			return err
		}
		return shared.flush(ctx, tx)
	})
	if err == nil {
		b.report(notes)
	}
	return refusedError(err)
}

// report tells the observer the outcomes of a committed function.
func (b *txBatcher) report(notes []outcome) {
	if b.observer == nil {
		return
	}
	for _, o := range notes {
		o(b.observer)
	}
}

// refusal is a batched function's answer that it refuses its request and
// has written nothing, in the transaction or in what the transaction's
// functions share (see refuse).
type refusal struct{ err error }

func (r refusal) Error() string { return r.err.Error() }
func (r refusal) Unwrap() error { return r.err }

// refuse is what a batched function returns to refuse its request with err
// when it has written nothing: no statement that changes a row, no
// journal queued, no wallet assigned (reads and row locks are fine). The
// batch then goes on without it, and its caller gets err.
func refuse(err error) error { return refusal{err} }

// refusedError unwraps a refusal.
func refusedError(err error) error {
	if r := (refusal{}); errors.As(err, &r) {
		return r.err
	}
	return err
}

// errBatchPanicked stops a batch whose function panicked: run alone, in its
// caller's goroutine, the function panics again where it should.
var errBatchPanicked = errors.New("a function of the batch panicked")

// inTx runs fn in a transaction that it may share with other callers'
// functions (see txBatcher); as for Store.InTx, fn must be safe to run more
// than once. It returns fn's error, or the transaction's.
func (b *txBatcher) inTx(ctx context.Context, key string, fn batchFunc) error {
	return b.inTxHinted(ctx, key, "", fn)
}

// inTxHinted is inTx with a hint of what fn will look up (see batchItem).
func (b *txBatcher) inTxHinted(ctx context.Context, key, hint string, fn batchFunc) error {
	if b.max <= 1 {
		return b.inOwnTx(ctx, key, hint, fn)
	}
	it := &batchItem{ctx: ctx, key: key, fn: fn, hint: hint, ready: make(chan struct{}, 1)}
	b.mu.Lock()
	b.queue = append(b.queue, it)
	b.dispatch()
	b.mu.Unlock()
	// Like a commit already under way, the batch holding fn is waited for
	// even when ctx ends: it is short, and others depend on it.
	<-it.ready
	if it.lead {
		b.lead(it)
	}
	if it.alone {
		return b.inOwnTx(ctx, key, hint, fn)
	}
	if it.err == nil {
		b.report(it.notes)
	}
	return it.err
}

// dispatch gives each free slot to the first caller in the queue whose key
// no batch being written holds, which then leads a batch. b.mu is held.
func (b *txBatcher) dispatch() {
	for i, slots := 0, b.slots(); i < len(b.queue) && b.active < slots; {
		it := b.queue[i]
		if b.busy[it.key] != nil {
			i++
			continue
		}
		b.queue = slices.Delete(b.queue, i, i+1)
		if b.busy == nil {
			b.busy = map[string]*batchItem{}
		}
		b.busy[it.key] = it
		b.active++
		it.lead = true
		it.ready <- struct{}{}
	}
}

// lead writes a batch led by self: self, then the callers queued since
// whose keys no other batch being written holds, in their order. Then it
// gives the slot to the next caller waiting, if any: also when self's own
// function panicked.
func (b *txBatcher) lead(self *batchItem) {
	batch := []*batchItem{self}
	b.mu.Lock()
	b.queue = slices.DeleteFunc(b.queue, func(it *batchItem) bool {
		if len(batch) == b.max {
			return false
		}
		if owner := b.busy[it.key]; owner != nil && owner != self {
			return false
		}
		b.busy[it.key] = self
		batch = append(batch, it)
		return true
	})
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		for _, it := range batch {
			delete(b.busy, it.key) // only self's: no other batch holds them
		}
		b.active--
		b.dispatch()
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
// goroutine if it is the leader's (its slot and key stay taken meanwhile,
// so that others queue), else in its caller's.
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
		self.err = b.inOwnTx(self.ctx, self.key, self.hint, self.fn)
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
		shared := newSharedTx(newLockedPools()) // afresh each time InTx runs this
		for _, it := range live {
			if it.hint != "" {
				shared.hints[it.key] = append(shared.hints[it.key], it.hint)
			}
		}
		for _, it := range live {
			it.notes, it.err = it.notes[:0], nil
			err := runGuarded(shared.with(context.WithValue(ctx, outcomesKey{}, &it.notes)), tx, shared, it.fn)
			if r := (refusal{}); errors.As(err, &r) {
				it.err, it.notes = r.err, nil
				continue
			}
			if err != nil {
				return err
			}
		}
		return shared.flush(ctx, tx)
	})
	for _, it := range live {
		if errors.Is(err, ErrUnavailable) {
			// Alone, each would fail the same way against a database that
			// is not there.
			it.err = err
			continue
		}
		it.alone = err != nil
	}
}

// runGuarded calls fn, turning a panic into errBatchPanicked.
func runGuarded(ctx context.Context, tx Tx, shared *sharedTx, fn batchFunc) (err error) {
	defer func() {
		if recover() != nil {
			err = errBatchPanicked
		}
	}()
	return fn(ctx, tx, shared)
}

// sharedTx is what the functions of one transaction share (see txBatcher),
// so that what they have in common is read and written once per
// transaction instead of once per function:
//   - the wallet pools of deposit creates (nil in a host's transaction);
//   - organizations and their enabled webhook endpoints, which no batched
//     function changes, read once each;
//   - balances, read once per organization and kept current with the
//     journals queued since, for the withdrawal gate: checked in memory
//     under the organization's lock, they are never more than reading the
//     rows again would give (every debit of available is made under that
//     lock; a credit committed meanwhile only raises it);
//   - the merchant_ids of withdrawals taken, looked up once per
//     organization for the whole batch (the items' hints) under its lock,
//     then kept current with the withdrawals queued since;
//   - writes whose answer no function needs (a withdrawal's row and its
//     event), queued to the flush, where a store that pipelines
//     (Pipeliner) sends them in one round trip;
//   - journals, written last (flush), in organization order, so that the
//     balance rows they update (row locks on Postgres, which serialize an
//     organization's credits and holds) are held only from then until the
//     commit, and taken in the same order by every transaction.
//
// A batched function finds it in its context too (sharedFrom), for the
// helpers it calls. Its methods work on a nil *sharedTx, outside any
// batch, by reading and writing directly.
type sharedTx struct {
	pools     *lockedPools
	alone     bool                     // the transaction of one function, not of a batch
	orgs      map[string]*Organization // by ID, "+lock" when read under LockOrganization
	endpoints map[string][]*WebhookEndpoint
	balances  map[string]map[string]decimal.Decimal
	hints     map[string][]string        // the batch's hints by key (batchItem)
	taken     map[string]map[string]bool // merchant_ids by organization
	writes    []func(ctx context.Context, tx Tx) error
	journals  []*Journal
}

type sharedKey struct{}

func newSharedTx(pools *lockedPools) *sharedTx {
	return &sharedTx{
		pools: pools, orgs: map[string]*Organization{}, endpoints: map[string][]*WebhookEndpoint{},
		balances: map[string]map[string]decimal.Decimal{}, hints: map[string][]string{},
		taken: map[string]map[string]bool{},
	}
}

// with returns ctx carrying s, for sharedFrom.
func (s *sharedTx) with(ctx context.Context) context.Context {
	return context.WithValue(ctx, sharedKey{}, s)
}

// sharedFrom returns the sharedTx of the batched function running on ctx,
// or nil.
func sharedFrom(ctx context.Context) *sharedTx {
	s, _ := ctx.Value(sharedKey{}).(*sharedTx)
	return s
}

// organization reads an organization once per transaction; lock takes its
// row lock (LockOrganization) with that read.
func (s *sharedTx) organization(ctx context.Context, tx Tx, id string, lock bool) (*Organization, error) {
	read, key := tx.GetOrganization, id
	if lock {
		read, key = tx.LockOrganization, id+"+lock"
	}
	if s == nil {
		return read(ctx, id)
	}
	if org, ok := s.orgs[key]; ok {
		return org, nil
	}
	org, err := read(ctx, id)
	if err != nil {
		return nil, err
	}
	s.orgs[key] = org
	return org, nil
}

// webhookEndpoints reads an organization's enabled endpoints once per
// transaction.
func (s *sharedTx) webhookEndpoints(ctx context.Context, tx Tx, orgID string) ([]*WebhookEndpoint, error) {
	if s == nil {
		return tx.ListWebhookEndpoints(ctx, orgID, true)
	}
	if eps, ok := s.endpoints[orgID]; ok {
		return eps, nil
	}
	eps, err := tx.ListWebhookEndpoints(ctx, orgID, true)
	if err != nil {
		return nil, err
	}
	s.endpoints[orgID] = eps
	return eps, nil
}

// accountBalances returns an organization's balances as the journals
// queued so far leave them, reading the balance rows once. The caller
// must hold what keeps them from falling meanwhile: the organization's
// lock, under which every journal that debits available is written.
func (s *sharedTx) accountBalances(ctx context.Context, tx Tx, orgID string) (map[string]decimal.Decimal, error) {
	if s == nil {
		return tx.AccountBalances(ctx, orgID)
	}
	if b, ok := s.balances[orgID]; ok {
		return b, nil
	}
	b, err := tx.AccountBalances(ctx, orgID)
	if err != nil {
		return nil, err
	}
	for _, j := range s.journals {
		if j.OrganizationID == orgID {
			addTotals(b, j)
		}
	}
	s.balances[orgID] = b
	return b, nil
}

func addTotals(balances map[string]decimal.Decimal, j *Journal) {
	for _, t := range j.Totals() {
		balances[t.Account] = balances[t.Account].Add(t.Amount)
	}
}

// withdrawalMerchantIDTaken reports whether the organization has a
// withdrawal with merchantID, this transaction's queued ones included. The
// first call for an organization looks up its batch's hints (withdrawal
// creates are batched by organization) with merchantID in one statement.
// The caller must hold the organization's lock, under which every
// withdrawal of it is created, so that the answer stays true.
func (s *sharedTx) withdrawalMerchantIDTaken(ctx context.Context, tx Tx, orgID, merchantID string) (bool, error) {
	taken, hinted := s.taken[orgID]
	if t, ok := taken[merchantID]; ok {
		return t, nil
	}
	ids := []string{merchantID}
	if !hinted {
		ids = append(ids, s.hints[orgID]...)
		taken = map[string]bool{}
		s.taken[orgID] = taken
	}
	found, err := tx.TakenWithdrawalMerchantIDs(ctx, orgID, ids)
	if err != nil {
		return false, err
	}
	for _, id := range ids {
		if _, ok := taken[id]; !ok {
			// Under the lock only this batch's own queued withdrawals
			// (takeWithdrawalMerchantID) can change what was looked up.
			taken[id] = found[id]
		}
	}
	return taken[merchantID], nil
}

// withdrawalGate takes the organization's lock with, in the same round
// trip where the store can, the reads that a batch of its withdrawal
// creates makes under it (Tx.LockWithdrawalGate): the lookup of the batch's
// merchant_ids (its hints), the balances and the enabled webhook
// endpoints, which organization, withdrawalMerchantIDTaken,
// accountBalances and webhookEndpoints then answer from. Once per
// organization and transaction; nothing outside a batch.
func (s *sharedTx) withdrawalGate(ctx context.Context, tx Tx, orgID string) error {
	if s == nil {
		return nil
	}
	if _, ok := s.orgs[orgID+"+lock"]; ok {
		return nil
	}
	g, err := tx.LockWithdrawalGate(ctx, orgID, s.hints[orgID])
	if err != nil {
		return err
	}
	s.orgs[orgID+"+lock"] = g.Organization
	if _, ok := s.taken[orgID]; !ok {
		taken := map[string]bool{}
		for _, id := range s.hints[orgID] {
			taken[id] = g.Taken[id]
		}
		s.taken[orgID] = taken
	}
	if _, ok := s.balances[orgID]; !ok {
		b := g.Balances
		for _, j := range s.journals {
			if j.OrganizationID == orgID {
				addTotals(b, j)
			}
		}
		s.balances[orgID] = b
	}
	if _, ok := s.endpoints[orgID]; !ok {
		s.endpoints[orgID] = g.Endpoints
	}
	return nil
}

// takeWithdrawalMerchantID notes a withdrawal queued with merchantID.
func (s *sharedTx) takeWithdrawalMerchantID(orgID, merchantID string) {
	if s.taken[orgID] == nil {
		s.taken[orgID] = map[string]bool{}
	}
	s.taken[orgID][merchantID] = true
}

// write queues a write whose answer the function does not need to the
// flush, before the journals. Its error fails the transaction there.
func (s *sharedTx) write(fn func(ctx context.Context, tx Tx) error) {
	s.writes = append(s.writes, fn)
}

// journal checks that j balances and queues it for the flush (outside a
// batch: writes it).
func (s *sharedTx) journal(ctx context.Context, tx Tx, j *Journal, now time.Time) error {
	if j.ID == "" {
		j.ID = NewID(PrefixJournal, now)
	}
	j.CreatedAt = now
	if err := j.checkBalanced(); err != nil {
		return err
	}
	if s == nil {
		return tx.CreateJournal(ctx, j)
	}
	s.journals = append(s.journals, j)
	if b, ok := s.balances[j.OrganizationID]; ok {
		addTotals(b, j)
	}
	return nil
}

// flush writes what the functions left to the end: the wallets' last
// assignments, the writes queued (write), then the journals by
// organization.
func (s *sharedTx) flush(ctx context.Context, tx Tx) error {
	// The wallets' assignments, the queued writes, then the journals, in
	// one round trip where the store pipelines.
	ctx = s.with(ctx)
	writes, journals := s.writes, s.journals
	s.writes, s.journals = nil, nil
	slices.SortStableFunc(journals, func(x, y *Journal) int { return strings.Compare(x.OrganizationID, y.OrganizationID) })
	dirty := s.pools != nil && len(s.pools.dirty) > 0
	run := func(tx Tx) error {
		if dirty {
			if err := s.pools.flush(ctx, tx); err != nil {
				return err
			}
		}
		for _, w := range writes {
			if err := w(ctx, tx); err != nil {
				return err
			}
		}
		if jc, ok := tx.(JournalsCreator); ok && len(journals) > 1 {
			return jc.CreateJournals(ctx, journals)
		}
		for _, j := range journals {
			if err := tx.CreateJournal(ctx, j); err != nil {
				return err
			}
		}
		return nil
	}
	// The flush is the transaction's last work: its writes may go with the
	// COMMIT.
	if p, ok := tx.(Pipeliner); ok && (dirty || len(writes)+len(journals) > 0) {
		return p.PipelineCommit(ctx, run)
	}
	return run(tx)
}
