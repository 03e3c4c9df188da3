package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
)

// TestGroupCommittedStore: a plug-in's transactions through GroupCommitted
// share commits as the engine's do: those made while one is written share
// the next transaction, each returns only once it committed, and one that
// fails fails alone, with its own error.
func TestGroupCommittedStore(t *testing.T) {
	s := &batchStore{committed: map[string]bool{}}
	g := GroupCommitted(s, 8)
	b := g.(*groupCommitted).batch
	hold := make(chan struct{})
	s.hold = hold
	first := make(chan error, 1)
	go func() { first <- g.InTx(context.Background(), storeWrite("first", nil)) }()
	waitFor(t, func() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.hold == nil })

	var wg sync.WaitGroup
	errs := make([]error, 10)
	for i := range 10 {
		wg.Go(func() {
			name := fmt.Sprintf("c%d", i)
			var fail error
			if i == 3 {
				fail = errors.New("c3 fails")
			}
			errs[i] = g.InTx(context.Background(), storeWrite(name, fail))
			if errs[i] == nil && !committed(s, name) {
				errs[i] = errors.New(name + " answered before its commit")
			}
		})
	}
	waitFor(t, func() bool { return queued(b) == 10 })
	close(hold)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i, err := range errs {
		if i == 3 {
			if err == nil || err.Error() != "c3 fails" {
				t.Fatalf("c3: %v, want its own error", err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	shared := 0
	for _, tx := range s.txs {
		if len(tx) > 1 {
			shared++
		}
	}
	if shared == 0 || committed(s, "c3") {
		t.Fatalf("transactions %v: want some shared, c3 in none", s.txs)
	}
	if GroupCommitted(s, 1) != Store(s) {
		t.Fatal("a batch of 1 should be the store itself")
	}
}

// storeWrite is write as a Store.InTx function.
func storeWrite(name string, err error) func(ctx context.Context, tx Tx) error {
	f := write(name, err)
	return func(ctx context.Context, tx Tx) error { return f(ctx, tx, nil) }
}

// parallelStore is a store that writes transactions in parallel.
type parallelStore struct{ Store }

func (parallelStore) ConcurrentWrites() int { return 4 }

// TestOneWriterQueue: on a store that writes one transaction at a time,
// every kind of the engine's writes, and a plug-in's through the same
// GroupCommitted store, share one queue, so that a commit carries whatever
// waits; a store that writes in parallel keeps a queue per kind.
func TestOneWriterQueue(t *testing.T) {
	keyring, err := NewKeyring(make([]byte, MasterKeySize))
	if err != nil {
		t.Fatal(err)
	}
	newEngine := func(s Store) *Engine {
		e, err := New(Config{Store: s, Provider: nopProvider{}, Keyring: keyring})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	single := &batchStore{committed: map[string]bool{}}
	g := GroupCommitted(single, 8)
	e := newEngine(g)
	queues := []*txBatcher{e.creates, e.submits, e.finishes, e.withdraws, e.payouts, e.posts}
	for _, q := range queues {
		if q != g.(*groupCommitted).batch {
			t.Fatal("a kind of write has a queue of its own on a one-writer store")
		}
	}
	if e.store != Store(single) {
		t.Fatal("the engine's own transactions should be the store's")
	}
	if e := newEngine(single); e.creates != e.payouts || e.creates == nil {
		t.Fatal("kinds do not share a queue on a bare one-writer store")
	}
	p := newEngine(parallelStore{single})
	if p.creates == p.withdraws || p.finishes == p.payouts {
		t.Fatal("kinds share a queue on a store that writes in parallel")
	}
}

// nopProvider is a Provider that New accepts; nothing here calls it.
type nopProvider struct{ Provider }
