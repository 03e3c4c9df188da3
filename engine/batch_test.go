package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// batchStore is a Store whose transactions a test can hold at BEGIN and
// whose commits it records: a function adds its name to the transaction's
// writes, which become committed only when the whole transaction does.
type batchStore struct {
	Store
	mu        sync.Mutex
	txs       [][]string // the functions of each committed transaction, in order
	committed map[string]bool
	hold      chan struct{} // when set, the next transaction waits for it to close
	held      int           // transactions that waited for a hold
	writers   int           // ConcurrentWrites, when more than 0
}

// concurrentBatchStore is a batchStore that writes batches in parallel.
type concurrentBatchStore struct{ *batchStore }

func (s concurrentBatchStore) ConcurrentWrites() int { return s.writers }

type writesKey struct{}

func (s *batchStore) InTx(ctx context.Context, fn func(ctx context.Context, tx Tx) error) error {
	s.mu.Lock()
	hold := s.hold
	s.hold = nil
	if hold != nil {
		s.held++
	}
	s.mu.Unlock()
	if hold != nil {
		<-hold
	}
	var writes []string
	if err := fn(context.WithValue(ctx, writesKey{}, &writes), nil); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.txs = append(s.txs, writes)
	for _, w := range writes {
		s.committed[w] = true
	}
	return nil
}

// write is a transaction function that records name, or fails with err.
func write(name string, err error) batchFunc {
	return func(ctx context.Context, _ Tx, _ *sharedTx) error {
		if err != nil {
			return err
		}
		w := ctx.Value(writesKey{}).(*[]string)
		*w = append(*w, name)
		return nil
	}
}

// startBatch holds the store's next transaction and runs a first call in
// it, so that calls made meanwhile queue; release lets it go.
func startBatch(t *testing.T, s *batchStore, b *txBatcher) (release func() error) {
	return startHeld(t, s, b, "first", "first")
}

// startHeld holds the store's next transaction and runs a call of name
// with key in it; release lets it go and returns the call's error.
func startHeld(t *testing.T, s *batchStore, b *txBatcher, key, name string) (release func() error) {
	hold := make(chan struct{})
	s.mu.Lock()
	s.hold = hold
	held := s.held + 1
	s.mu.Unlock()
	done := make(chan error, 1)
	go func() { done <- b.inTx(context.Background(), key, write(name, nil)) }()
	waitFor(t, func() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.held == held })
	return func() error { close(hold); return <-done }
}

// waitFor polls cond: the batcher's queue is filled by other goroutines.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
	}
}

func queued(b *txBatcher) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.queue)
}

// TestGroupCommit: calls made while a transaction is written share the next
// one, in the order of their keys, and each returns only once it committed.
func TestGroupCommit(t *testing.T) {
	s := &batchStore{committed: map[string]bool{}}
	b := &txBatcher{store: s, max: 8}
	release := startBatch(t, s, b)
	var wg sync.WaitGroup
	errs := make([]error, 10)
	for i := range 10 {
		wg.Go(func() {
			name := fmt.Sprintf("c%d", i)
			errs[i] = b.inTx(context.Background(), fmt.Sprintf("k%d", 9-i), write(name, nil))
			if errs[i] == nil && !committed(s, name) {
				errs[i] = errors.New(name + " answered before its commit")
			}
		})
	}
	waitFor(t, func() bool { return queued(b) == 10 })
	if err := release(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	// first alone, then 8 of the 10 in key order, then the last 2.
	if len(s.txs) != 3 || len(s.txs[0]) != 1 || len(s.txs[1]) != 8 || len(s.txs[2]) != 2 {
		t.Fatalf("transactions %v", s.txs)
	}
	// Keys run opposite to the names.
	if !slices.IsSortedFunc(s.txs[1], func(x, y string) int { return strings.Compare(y, x) }) {
		t.Fatalf("batch %v not in the order of its keys", s.txs[1])
	}
	if b.active != 0 || len(b.queue) != 0 || len(b.busy) != 0 {
		t.Fatal("batcher not idle at the end")
	}
}

// TestGroupCommitFailure: a function that fails makes the batch run again
// one transaction per function, so the others commit and only it fails,
// with its own error; a panic reaches its own caller only.
func TestGroupCommitFailure(t *testing.T) {
	s := &batchStore{committed: map[string]bool{}}
	b := &txBatcher{store: s, max: 8}
	release := startBatch(t, s, b)
	errTaken := errors.New("merchant_id taken")
	type outcome struct {
		err      error
		panicked any
	}
	out := make([]outcome, 4)
	fns := []batchFunc{
		write("a", nil),
		write("b", errTaken),
		func(context.Context, Tx, *sharedTx) error { panic("boom") },
		write("d", nil),
	}
	var wg sync.WaitGroup
	for i, fn := range fns {
		wg.Go(func() {
			defer func() { out[i].panicked = recover() }()
			out[i].err = b.inTx(context.Background(), "k", fn)
		})
		waitFor(t, func() bool { return queued(b) == i+1 }) // queue in this order
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if out[0].err != nil || out[3].err != nil || !committed(s, "a") || !committed(s, "d") {
		t.Fatalf("the others failed with the batch: %+v", out)
	}
	if !errors.Is(out[1].err, errTaken) {
		t.Fatalf("the failing function got %v", out[1].err)
	}
	if out[2].panicked != "boom" {
		t.Fatalf("the panic reached its caller as %v", out[2].panicked)
	}
	if out[0].panicked != nil || out[1].panicked != nil || out[3].panicked != nil {
		t.Fatal("a panic reached another caller")
	}
}

// TestGroupCommitCancelled: a call whose context ended before its batch
// began runs nothing and returns the context's error.
func TestGroupCommitCancelled(t *testing.T) {
	s := &batchStore{committed: map[string]bool{}}
	b := &txBatcher{store: s, max: 8}
	release := startBatch(t, s, b)
	ctx, cancel := context.WithCancel(context.Background())
	gone := make(chan error, 1)
	go func() { gone <- b.inTx(ctx, "k", write("gone", nil)) }()
	stays := make(chan error, 1)
	waitFor(t, func() bool { return queued(b) == 1 })
	go func() { stays <- b.inTx(context.Background(), "k", write("stays", nil)) }()
	waitFor(t, func() bool { return queued(b) == 2 })
	cancel()
	if err := release(); err != nil {
		t.Fatal(err)
	}
	if err := <-gone; !errors.Is(err, context.Canceled) || committed(s, "gone") {
		t.Fatalf("cancelled call: %v, committed %v", err, committed(s, "gone"))
	}
	if err := <-stays; err != nil || !committed(s, "stays") {
		t.Fatalf("other call: %v", err)
	}
}

// TestGroupCommitConcurrentBatches: on a store that writes in parallel, a
// call whose key no batch being written holds starts at once, up to
// ConcurrentWrites batches at a time; a call whose key a batch being
// written holds waits for that batch's commit, even with a slot free, and
// the first caller waiting takes the slot a batch gives back.
func TestGroupCommitConcurrentBatches(t *testing.T) {
	ctx := context.Background()
	s := &batchStore{committed: map[string]bool{}, writers: 2}
	b := &txBatcher{store: concurrentBatchStore{s}, max: 8}
	call := func(key, name string) chan error {
		done := make(chan error, 1)
		go func() { done <- b.inTx(ctx, key, write(name, nil)) }()
		return done
	}
	releaseA1 := startHeld(t, s, b, "a", "a1")
	b1 := call("b", "b1")
	waitFor(t, func() bool { return committed(s, "b1") }) // while a1's transaction is held
	if err := <-b1; err != nil {
		t.Fatal(err)
	}
	a2 := call("a", "a2")
	waitFor(t, func() bool { return queued(b) == 1 })
	releaseB2 := startHeld(t, s, b, "b", "b2") // the second slot
	c1 := call("c", "c1")
	waitFor(t, func() bool { return queued(b) == 2 })
	if committed(s, "a2") || committed(s, "c1") {
		t.Fatal("a call ran past its key's batch or past the slots")
	}
	if err := releaseA1(); err != nil {
		t.Fatal(err)
	}
	// a1's slot goes to a2, whose batch takes c1.
	for _, done := range []chan error{a2, c1} {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if committed(s, "b2") {
		t.Fatal("b2 committed while held")
	}
	if err := releaseB2(); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(s.txs) != "[[b1] [a1] [a2 c1] [b2]]" {
		t.Fatalf("transactions %v", s.txs)
	}
	if b.active != 0 || len(b.queue) != 0 || len(b.busy) != 0 {
		t.Fatal("batcher not idle at the end")
	}
}

func committed(s *batchStore, name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.committed[name]
}

// balanceTx is a Tx with balance rows: AccountBalances reads them and
// CreateJournal adds to them; anything else panics.
type balanceTx struct {
	Tx
	rows  map[string]map[string]decimal.Decimal
	reads int
}

func (b *balanceTx) AccountBalances(_ context.Context, orgID string) (map[string]decimal.Decimal, error) {
	b.reads++
	return maps.Clone(b.rows[orgID]), nil
}

func (b *balanceTx) CreateJournal(_ context.Context, j *Journal) error {
	if b.rows[j.OrganizationID] == nil {
		b.rows[j.OrganizationID] = map[string]decimal.Decimal{}
	}
	addTotals(b.rows[j.OrganizationID], j)
	return nil
}

// TestSharedBalancesFollowQueuedJournals: the balances a shared
// transaction checks withdrawals against are the rows as its queued
// journals leave them, whether queued before or after the first read, and
// the rows end the same as with each journal written at once. Without it
// two holds of one batch would each see the whole balance.
func TestSharedBalancesFollowQueuedJournals(t *testing.T) {
	ctx := context.Background()
	tx := &balanceTx{rows: map[string]map[string]decimal.Decimal{"org_1": {AccountAvailable: decimal.NewFromInt(1000)}}}
	shared := newSharedTx(nil)
	hold := func(org string, amount int64) *Journal {
		return &Journal{OrganizationID: org, Kind: JournalWithdrawalHold, Entries: []Entry{
			{AccountAvailable, decimal.NewFromInt(-amount)}, {AccountHeld, decimal.NewFromInt(amount)}}}
	}
	now := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	if err := shared.journal(ctx, tx, hold("org_1", 100), now); err != nil {
		t.Fatal(err)
	}
	for i, want := range []int64{900, 300} {
		b, err := shared.accountBalances(ctx, tx, "org_1")
		if err != nil {
			t.Fatal(err)
		}
		if !b[AccountAvailable].Equal(decimal.NewFromInt(want)) {
			t.Fatalf("check %d: available %s, want %d", i, b[AccountAvailable], want)
		}
		if err := shared.journal(ctx, tx, hold("org_1", 600), now); err != nil {
			t.Fatal(err)
		}
	}
	if tx.reads != 1 {
		t.Fatalf("%d reads of the balance rows, want 1", tx.reads)
	}
	if len(tx.rows["org_1"]) != 1 {
		t.Fatal("a journal was written before the flush")
	}
	if err := shared.flush(ctx, tx); err != nil {
		t.Fatal(err)
	}
	if got := tx.rows["org_1"]; !got[AccountAvailable].Equal(decimal.NewFromInt(-300)) || !got[AccountHeld].Equal(decimal.NewFromInt(1300)) {
		t.Fatalf("rows after the flush %v", got)
	}
}

// TestGroupCommitRefusal: a function that refuses its request (having
// written nothing) does not make its batch run again one transaction per
// function: the others share the commit, and the refused caller alone gets
// its error. Without this, anyone able to send a refused request (another
// organization's deposit ID, a withdrawal above the balance) would undo
// group commit for everyone.
func TestGroupCommitRefusal(t *testing.T) {
	s := &batchStore{committed: map[string]bool{}}
	b := &txBatcher{store: s, max: 8}
	release := startBatch(t, s, b)
	errNotFound := Errorf(CodeNotFound, "deposit not found")
	errs := make([]error, 6)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() {
			fn := write(fmt.Sprint("c", i), nil)
			if i%2 == 1 {
				fn = func(context.Context, Tx, *sharedTx) error { return refuse(errNotFound) }
			}
			errs[i] = b.inTx(context.Background(), fmt.Sprint("k", i), fn)
		})
	}
	waitFor(t, func() bool { return queued(b) == len(errs) })
	if err := release(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i, err := range errs {
		if i%2 == 1 && err != errNotFound || i%2 == 0 && err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	// first alone, then the three writes together in one transaction.
	if len(s.txs) != 2 || len(s.txs[1]) != 3 {
		t.Fatalf("transactions %v: the refusals broke the batch up", s.txs)
	}
	// Alone, a refusal rolls back and its caller gets the error itself.
	if err := b.inTx(context.Background(), "k", func(context.Context, Tx, *sharedTx) error { return refuse(errNotFound) }); err != errNotFound {
		t.Fatalf("alone: %v", err)
	}
}
