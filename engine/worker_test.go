package engine_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydmock"
)

// gatedProvider holds each lookup until the test releases it, and says
// which are under way.
type gatedProvider struct {
	*fakeProvider
	started chan string
	mu      sync.Mutex
	gates   map[string]chan struct{}
}

func (p *gatedProvider) gate(txID string) chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gates[txID] == nil {
		p.gates[txID] = make(chan struct{})
	}
	return p.gates[txID]
}

func (p *gatedProvider) lookupTransaction(ctx context.Context, req engine.LookupRequest) (*engine.ProviderTransaction, error) {
	p.started <- req.TransactionID
	select {
	case <-p.gate(req.TransactionID):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return p.fakeProvider.LookupTransaction(ctx, req)
}

// provider is the fake's Provider with the gated lookup.
func (p *gatedProvider) provider() *paydmock.Provider {
	q := p.fakeProvider.Provider
	q.LookupTransactionFunc = p.lookupTransaction
	return &q
}

// TestRunChecksAttemptsContinuously: Run keeps WorkerConcurrency attempts
// being checked, and starts the next one as soon as one finishes, not when
// a whole claimed batch (ClaimBatch) has.
func TestRunChecksAttemptsContinuously(t *testing.T) {
	f := newFixtureOn(t, "sqlite")
	p := &gatedProvider{fakeProvider: f.provider, started: make(chan string, 16), gates: map[string]chan struct{}{}}
	eng, err := engine.New(engine.Config{
		Store: f.store, Provider: p.provider(), Clock: f.clock, Keyring: f.keyring, WorkerConcurrency: 3, ClaimBatch: 3,
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		d := f.deposit(f.org.ID, "bkash_agent", "500")
		txID := fmt.Sprintf("CONT%d", i)
		f.provider.pay(f.payment(d, txID))
		if _, err := eng.SubmitTransactionID(f.ctx, engine.VerifyParams{OrganizationID: f.org.ID, DepositID: d.ID, TransactionID: txID}); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(f.ctx)
	ran := make(chan error, 1)
	go func() { ran <- eng.Run(ctx) }()
	defer func() { cancel(); <-ran }()

	next := func() string {
		t.Helper()
		select {
		case id := <-p.started:
			return id
		case <-time.After(10 * time.Second):
			t.Fatal("no lookup started")
			return ""
		}
	}
	inFlight := map[string]bool{}
	for range 3 {
		inFlight[next()] = true
	}
	select {
	case id := <-p.started:
		t.Fatalf("a fourth lookup (%s) started with 3 slots", id)
	case <-time.After(50 * time.Millisecond):
	}
	// Finishing one starts another while the other two still run.
	var first string
	for id := range inFlight {
		first = id
		break
	}
	close(p.gate(first))
	delete(inFlight, first)
	inFlight[next()] = true
	if len(inFlight) != 3 {
		t.Fatalf("in flight %v", inFlight)
	}
	for i := range 6 {
		if id := fmt.Sprintf("CONT%d", i); id != first {
			close(p.gate(id))
		}
	}
	for range 2 {
		next()
	}
	// Every deposit succeeds.
	deadline := time.Now().Add(10 * time.Second)
	for {
		evs := 0
		for _, e := range f.events("") {
			if e.Type == engine.EventDepositSucceeded {
				evs++
			}
		}
		if evs == 6 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of 6 deposits succeeded", evs)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
