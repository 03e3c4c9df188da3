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
