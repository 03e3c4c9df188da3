package engine_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/payd-engine/payd/engine"
)

// downStore is a store whose database can be made unavailable: every
// transaction then fails with engine.ErrUnavailable, as storage/postgres
// reports a lost primary.
type downStore struct {
	engine.Store
	down atomic.Bool
}

func (s *downStore) InTx(ctx context.Context, fn func(ctx context.Context, tx engine.Tx) error) error {
	if s.down.Load() {
		return fmt.Errorf("test: no primary: %w", engine.ErrUnavailable)
	}
	return s.Store.InTx(ctx, fn)
}

func (s *downStore) ReadTx(ctx context.Context, fn func(ctx context.Context, tx engine.Tx) error) error {
	if s.down.Load() {
		return fmt.Errorf("test: no primary: %w", engine.ErrUnavailable)
	}
	return s.Store.ReadTx(ctx, fn)
}

// lines is a log that keeps its lines.
type lines struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestWorkersWaitOutAnOutageQuietly: while the database is unavailable,
// the background workers log one line as the outage starts and one as it
// ends, with its length, instead of an error per failed round of each
// worker, and they resume by themselves: work queued before the outage is
// done after it.
func TestWorkersWaitOutAnOutageQuietly(t *testing.T) {
	f := newFixtureOn(t, "sqlite")
	store := &downStore{Store: f.store}
	log := &lines{}
	eng, err := engine.New(engine.Config{
		Store: store, Provider: f.provider, Clock: clock.New(), Keyring: f.keyring,
		PollInterval: 20 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(log, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	f.clock.Set(time.Now().Add(-2 * time.Minute)) // the deposit's, on the wall clock the workers run on
	d := f.deposit(f.org.ID, "bkash_agent", "500")
	f.provider.pay(f.payment(d, "OUTAGE1"))

	store.down.Store(true)
	ctx, cancel := context.WithCancel(f.ctx)
	ran := make(chan error, 1)
	go func() { ran <- eng.Run(ctx) }()
	defer func() { cancel(); <-ran }()
	time.Sleep(2500 * time.Millisecond) // past two of the workers' one-second backoffs
	store.down.Store(false)
	if _, err := eng.SubmitTransactionID(f.ctx, engine.VerifyParams{OrganizationID: f.org.ID, DepositID: d.ID, TransactionID: "OUTAGE1"}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); f.get(d).Status != engine.StatusSucceeded; {
		if time.Now().After(deadline) {
			t.Fatalf("the deposit was not verified after the outage: %s\n%s", f.get(d).Status, log)
		}
		time.Sleep(20 * time.Millisecond)
	}
	out := log.String()
	if n := strings.Count(out, `msg="database unavailable`); n != 1 {
		t.Errorf("%d lines say the database is unavailable, want 1:\n%s", n, out)
	}
	if n := strings.Count(out, "database available again"); n != 1 || !strings.Contains(out, "outage=") {
		t.Errorf("%d lines say the outage ended (with its length), want 1:\n%s", n, out)
	}
	if strings.Contains(out, "level=ERROR") {
		t.Errorf("the outage was logged as errors:\n%s", out)
	}
}
