package engine_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
)

// heldReceiver holds its first post until the others have arrived (or a
// deadline passes), and records the most posts it had at once.
type heldReceiver struct {
	mu         sync.Mutex
	posts, now int
	most       int
	first      chan struct{} // closed when the others have arrived
	total      int
}

func (r *heldReceiver) Deliver(ctx context.Context, _ engine.WebhookRequest) engine.WebhookResult {
	r.mu.Lock()
	r.posts++
	n := r.posts
	r.now++
	r.most = max(r.most, r.now)
	if r.posts == r.total {
		close(r.first)
	}
	r.mu.Unlock()
	if n == 1 {
		select {
		case <-r.first:
		case <-time.After(10 * time.Second):
		case <-ctx.Done():
		}
	}
	r.mu.Lock()
	r.now--
	r.mu.Unlock()
	return engine.WebhookResult{StatusCode: 200}
}

// An endpoint's deliveries keep flowing through its free slots while one
// post is slow: the next are claimed as a slot frees, not when every post
// of the last claim is done. And never more than WebhookPerEndpoint posts
// reach the endpoint at once.
func TestSlowPostHoldsOnlyItsSlot(t *testing.T) {
	onEachStore(t, func(t *testing.T, newFixture func(t *testing.T) *fixture) {
		f := newFixture(t)
		org := f.withdrawalOrg("10000")
		if _, _, err := f.eng.AddWebhookEndpoint(f.ctx, org, "https://hooks.example/payd"); err != nil {
			t.Fatal(err)
		}
		const n = 8
		for i := range n {
			if _, err := f.withdraw(org, "bkash", "01712345678", "100", fmt.Sprint("slot-", i)); err != nil {
				t.Fatal(err)
			}
		}
		r := &heldReceiver{first: make(chan struct{}), total: n}
		e, err := engine.New(engine.Config{
			Store: f.store, Provider: f.provider, Clock: f.clock, Keyring: f.keyring,
			LeaseDuration: time.Hour, Webhooks: r, WebhookPerEndpoint: 2,
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(f.ctx)
		ran := make(chan error, 1)
		go func() { ran <- e.Run(ctx) }()
		select {
		case <-r.first:
		case <-time.After(10 * time.Second):
			r.mu.Lock()
			t.Errorf("%d of %d posts made while the first was held: the others waited for it", r.posts, n)
			r.mu.Unlock()
		}
		cancel()
		<-ran
		if r.most > 2 {
			t.Fatalf("%d posts at once to one endpoint, over its 2", r.most)
		}
	})
}

// readCountingStore counts read transactions and single reads.
type readCountingStore struct {
	engine.Store
	txs, ones atomic.Int64
}

func (s *readCountingStore) ReadTx(ctx context.Context, fn func(ctx context.Context, tx engine.Tx) error) error {
	s.txs.Add(1)
	return s.Store.ReadTx(ctx, fn)
}

func (s *readCountingStore) ReadOne(ctx context.Context, fn func(ctx context.Context, tx engine.Tx) error) error {
	s.ones.Add(1)
	return s.Store.(engine.OneReader).ReadOne(ctx, fn)
}

type countingReceiver struct{ posts atomic.Int64 }

func (r *countingReceiver) Deliver(context.Context, engine.WebhookRequest) engine.WebhookResult {
	r.posts.Add(1)
	return engine.WebhookResult{StatusCode: 200}
}

// A post reads its endpoint and its event without a read transaction
// around them: two single reads (BEGIN and COMMIT were half of what a post
// asked of the reader).
func TestPostReadsWithoutTransaction(t *testing.T) {
	onEachStore(t, func(t *testing.T, newFixture func(t *testing.T) *fixture) {
		f := newFixture(t)
		org := f.withdrawalOrg("10000")
		if _, _, err := f.eng.AddWebhookEndpoint(f.ctx, org, "https://hooks.example/payd"); err != nil {
			t.Fatal(err)
		}
		const n = 3
		for i := range n {
			if _, err := f.withdraw(org, "bkash", "01712345678", "100", fmt.Sprint("read-", i)); err != nil {
				t.Fatal(err)
			}
		}
		store := &readCountingStore{Store: f.store}
		r := &countingReceiver{}
		e, err := engine.New(engine.Config{Store: store, Provider: f.provider, Clock: f.clock, Keyring: f.keyring, Webhooks: r})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.DeliverWebhooks(f.ctx); err != nil {
			t.Fatal(err)
		}
		if r.posts.Load() != n {
			t.Fatalf("%d posts, want %d", r.posts.Load(), n)
		}
		if txs, ones := store.txs.Load(), store.ones.Load(); txs != 0 || ones != 2*n {
			t.Fatalf("%d posts made %d read transactions and %d single reads, want 0 and %d", n, txs, ones, 2*n)
		}
	})
}

// outcomeBlockingStore holds every transaction that records a post's
// outcome, once armed, until release is closed.
type outcomeBlockingStore struct {
	engine.Store
	armed   atomic.Bool
	release chan struct{}
}

func (s *outcomeBlockingStore) InTx(ctx context.Context, fn func(ctx context.Context, tx engine.Tx) error) error {
	return s.Store.InTx(ctx, func(ctx context.Context, tx engine.Tx) error {
		return fn(ctx, outcomeBlockingTx{tx, s})
	})
}

type outcomeBlockingTx struct {
	engine.Tx
	s *outcomeBlockingStore
}

func (t outcomeBlockingTx) CreateDeliveryAttempt(ctx context.Context, a *engine.DeliveryAttempt) error {
	if t.s.armed.Load() {
		<-t.s.release
	}
	return t.Tx.CreateDeliveryAttempt(ctx, a)
}

// An endpoint that answers quickly has its deliveries posted one after
// another through its slot while the outcomes wait for their commit: the
// slot is the post's, and a claim takes several of a fast endpoint's
// deliveries at once, so no commit stands between its posts.
func TestPostsDoNotWaitForOutcomes(t *testing.T) {
	onEachStore(t, func(t *testing.T, newFixture func(t *testing.T) *fixture) {
		f := newFixture(t)
		org := f.withdrawalOrg("10000")
		if _, _, err := f.eng.AddWebhookEndpoint(f.ctx, org, "https://hooks.example/payd"); err != nil {
			t.Fatal(err)
		}
		store := &outcomeBlockingStore{Store: f.store, release: make(chan struct{})}
		r := &countingReceiver{}
		e, err := engine.New(engine.Config{
			Store: store, Provider: f.provider, Clock: f.clock, Keyring: f.keyring,
			LeaseDuration: time.Hour, Webhooks: r, WebhookPerEndpoint: 1,
		})
		if err != nil {
			t.Fatal(err)
		}
		// One post first: the endpoint is known to answer quickly.
		if _, err := f.withdraw(org, "bkash", "01712345678", "100", "first"); err != nil {
			t.Fatal(err)
		}
		if _, err := e.DeliverWebhooks(f.ctx); err != nil || r.posts.Load() != 1 {
			t.Fatalf("first delivery: %d posts, %v", r.posts.Load(), err)
		}
		const n = 3
		for i := range n {
			if _, err := f.withdraw(org, "bkash", "01712345678", "100", fmt.Sprint("next-", i)); err != nil {
				t.Fatal(err)
			}
		}
		store.armed.Store(true)
		done := make(chan error, 1)
		go func() { _, err := e.DeliverWebhooks(f.ctx); done <- err }()
		deadline := time.Now().Add(10 * time.Second)
		for r.posts.Load() < 1+n && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		posts := r.posts.Load()
		close(store.release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if posts < 1+n {
			t.Fatalf("%d of %d posts made while the first outcome waited for its commit", posts-1, n)
		}
	})
}

// A post answered as shutdown begins is recorded before Run returns, so
// it is not made again by whoever takes the work next.
func TestAnsweredPostRecordedAtShutdown(t *testing.T) {
	onEachStore(t, func(t *testing.T, newFixture func(t *testing.T) *fixture) {
		f := newFixture(t)
		org := f.withdrawalOrg("10000")
		if _, _, err := f.eng.AddWebhookEndpoint(f.ctx, org, "https://hooks.example/payd"); err != nil {
			t.Fatal(err)
		}
		if _, err := f.withdraw(org, "bkash", "01712345678", "100", "at-shutdown"); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(f.ctx)
		defer cancel()
		e, err := engine.New(engine.Config{
			Store: f.store, Provider: f.provider, Clock: f.clock, Keyring: f.keyring, LeaseDuration: time.Hour,
			Webhooks: webhookFunc(func(context.Context, engine.WebhookRequest) engine.WebhookResult {
				cancel() // shutdown begins while the receiver answers
				return engine.WebhookResult{StatusCode: 200}
			}),
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
			t.Fatal(err)
		}
		var ds []*engine.Delivery
		if err := f.store.ReadTx(f.ctx, func(ctx context.Context, tx engine.Tx) (err error) {
			ds, err = tx.ListDeliveries(ctx, engine.ListDeliveriesParams{OrganizationID: org})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if len(ds) != 1 || ds[0].Status != engine.DeliveryDelivered || ds[0].Attempts != 1 {
			for _, d := range ds {
				t.Logf("delivery %s: %s after %d posts", d.ID, d.Status, d.Attempts)
			}
			t.Fatalf("%d deliveries after shutdown, want one delivered after one post", len(ds))
		}
	})
}

type webhookFunc func(context.Context, engine.WebhookRequest) engine.WebhookResult

func (f webhookFunc) Deliver(ctx context.Context, req engine.WebhookRequest) engine.WebhookResult {
	return f(ctx, req)
}
