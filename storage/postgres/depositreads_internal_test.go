package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/storage/postgres/pgtest"
)

// holdTurn takes the deposit reads' turns, as batches under way would, so
// that the reads asked next wait and go together at handOff.
func holdTurn(s *Store) {
	s.deposits.mu.Lock()
	s.deposits.running = maxDepositReadBatches
	s.deposits.mu.Unlock()
}

// awaitWaiting waits until n reads wait for a turn.
func awaitWaiting(t *testing.T, s *Store, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		s.deposits.mu.Lock()
		got := len(s.deposits.waiting)
		s.deposits.mu.Unlock()
		if got == n {
			return
		}
	}
	t.Fatalf("%d reads never waited", n)
}

type readResult struct {
	d   *engine.Deposit
	err error
}

// readAsync reads a deposit by ReadOne in a goroutine of its own.
func readAsync(ctx context.Context, s *Store, orgID, id string) <-chan readResult {
	out := make(chan readResult, 1)
	go func() {
		var r readResult
		r.err = s.ReadOne(ctx, func(ctx context.Context, tx engine.Tx) error {
			var err error
			r.d, err = tx.GetDeposit(ctx, orgID, id)
			return err
		})
		out <- r
	}()
	return out
}

// Reads of several organizations that share one statement each get only
// their own organization's deposit: another organization's ID, asked in
// the same batch as its owner's read of it, is not found, as it is alone.
// So with each way pgx may send statements (a host's pool behind a
// connection pooler sends them without preparing).
func TestDepositReadsKeepOrganizationsApart(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"cache_statement", "simple_protocol", "exec"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			url := pgtest.URL(t)
			url += map[bool]string{true: "&", false: "?"}[strings.Contains(url, "?")] + "default_query_exec_mode=" + mode
			s, err := Open(context.Background(), url)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			testDepositReadsKeepOrganizationsApart(t, s)
		})
	}
}

func testDepositReadsKeepOrganizationsApart(t *testing.T, s *Store) {
	ctx := context.Background()
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		for _, o := range []string{"org_1", "org_2"} {
			if err := tx.CreateOrganization(ctx, newOrg(o)); err != nil {
				return err
			}
		}
		a := newDeposit("dep_a", "org_1")
		a.Metadata = []byte(`{"k":"v"}`)
		if err := tx.CreateDeposit(ctx, a); err != nil {
			return err
		}
		return tx.CreateDeposit(ctx, newDeposit("dep_b", "org_2"))
	})
	holdTurn(s)
	reads := []struct {
		org, id string
		want    string // "" for not found
	}{
		{"org_2", "dep_a", ""}, // another organization's ID, first
		{"org_1", "dep_a", "dep_a"},
		{"org_1", "dep_a", "dep_a"}, // the same deposit twice
		{"org_1", "dep_b", ""},
		{"org_1", "dep_none", ""},
		{"org_2", "dep_b", "dep_b"},
	}
	results := make([]<-chan readResult, len(reads))
	for i, r := range reads {
		results[i] = readAsync(ctx, s, r.org, r.id)
		awaitWaiting(t, s, i+1)
	}
	s.deposits.handOff()
	var got []*engine.Deposit
	for i, r := range reads {
		res := <-results[i]
		switch {
		case r.want == "" && !errors.Is(res.err, engine.ErrNotFound):
			t.Errorf("%s reading %s: %+v, %v; want not found", r.org, r.id, res.d, res.err)
		case r.want != "" && (res.err != nil || res.d.ID != r.want || res.d.OrganizationID != r.org):
			t.Errorf("%s reading %s: %+v, %v", r.org, r.id, res.d, res.err)
		case r.want == "dep_a":
			got = append(got, res.d)
		}
	}
	if len(got) == 2 && (got[0] == got[1] || &got[0].Metadata[0] == &got[1].Metadata[0]) {
		t.Error("two reads of one deposit share its memory")
	}
}

// blockBatch is a tracer that holds the first batch statement of deposit
// reads after the server answered it, until release is closed.
type blockBatch struct {
	answered, release chan struct{}
	once              sync.Once
}

type batchKey struct{}

func (b *blockBatch) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if data.SQL == getDepositsQuery {
		return context.WithValue(ctx, batchKey{}, true)
	}
	return ctx
}

func (b *blockBatch) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryEndData) {
	if ctx.Value(batchKey{}) != nil {
		b.once.Do(func() {
			close(b.answered)
			<-b.release
		})
	}
}

// A read never takes the answer of a batch sent before it was asked: a
// status committed before the read began is what it returns, whatever
// batch is under way.
func TestDepositReadsSeeEveryEarlierCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tracer := &blockBatch{answered: make(chan struct{}), release: make(chan struct{})}
	cfg, err := pgxpool.ParseConfig(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	ConfigurePool(cfg)
	cfg.ConnConfig.Tracer = tracer
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	s := New(pool)
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	d := newDeposit("dep_1", "org_1")
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		if err := tx.CreateOrganization(ctx, newOrg("org_1")); err != nil {
			return err
		}
		return tx.CreateDeposit(ctx, d)
	})
	// A batch of two reads, answered (pending) and held.
	holdTurn(s)
	first := []<-chan readResult{readAsync(ctx, s, "org_1", "dep_1"), readAsync(ctx, s, "org_1", "dep_1")}
	awaitWaiting(t, s, 2)
	s.deposits.handOff()
	<-tracer.answered
	// The deposit succeeds; a read asked after the commit waits for the
	// held batch and must not take its answer.
	d.Status, d.VerificationState, d.UpdatedAt = engine.StatusSucceeded, engine.VerificationSucceeded, base.Add(time.Second)
	write(t, s, func(ctx context.Context, tx engine.Tx) error { return tx.UpdateDeposit(ctx, d) })
	after := readAsync(ctx, s, "org_1", "dep_1")
	awaitWaiting(t, s, 1)
	close(tracer.release)
	for _, r := range first {
		if res := <-r; res.err != nil || res.d.Status != engine.StatusPending {
			t.Errorf("read in the held batch: %+v, %v", res.d, res.err)
		}
	}
	if res := <-after; res.err != nil || res.d.Status != engine.StatusSucceeded {
		t.Errorf("read asked after the commit: %+v, %v; want succeeded", res.d, res.err)
	}
}

// A read that gives up while it waits leaves the queue; one that gives up
// in a batch under way fails no other read of it.
func TestDepositReadsGiveUpAlone(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t)
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		if err := tx.CreateOrganization(ctx, newOrg("org_1")); err != nil {
			return err
		}
		return tx.CreateDeposit(ctx, newDeposit("dep_1", "org_1"))
	})
	holdTurn(s)
	gone, cancel := context.WithCancel(context.Background())
	left := readAsync(gone, s, "org_1", "dep_1")
	awaitWaiting(t, s, 1)
	stays := readAsync(context.Background(), s, "org_1", "dep_1")
	awaitWaiting(t, s, 2)
	cancel()
	if res := <-left; !errors.Is(res.err, context.Canceled) {
		t.Errorf("a read that gave up while waiting: %+v, %v", res.d, res.err)
	}
	awaitWaiting(t, s, 1)
	s.deposits.handOff()
	if res := <-stays; res.err != nil || res.d.ID != "dep_1" {
		t.Errorf("the read that stayed: %+v, %v", res.d, res.err)
	}

	// Two reads in one batch; the first, which leads it, gives up as the
	// batch starts: the other still gets its deposit.
	holdTurn(s)
	lead, cancelLead := context.WithCancel(context.Background())
	leader := readAsync(lead, s, "org_1", "dep_1")
	awaitWaiting(t, s, 1)
	stay, keep := context.WithCancel(context.Background()) // one that could give up, and does not
	defer keep()
	other := readAsync(stay, s, "org_1", "dep_1")
	awaitWaiting(t, s, 2)
	s.deposits.mu.Lock()
	s.deposits.waiting[0].lead = true
	first := s.deposits.waiting[0]
	s.deposits.waiting = s.deposits.waiting[:copy(s.deposits.waiting, s.deposits.waiting[1:])]
	cancelLead()
	s.deposits.mu.Unlock()
	first.signal <- struct{}{}
	<-leader
	if res := <-other; res.err != nil || res.d.ID != "dep_1" {
		t.Errorf("the other read of a batch whose leader gave up: %+v, %v", res.d, res.err)
	}
	s.deposits.mu.Lock()
	defer s.deposits.mu.Unlock()
	if s.deposits.running != 0 || len(s.deposits.waiting) != 0 {
		t.Errorf("after the reads: %d batches running, %d reads waiting", s.deposits.running, len(s.deposits.waiting))
	}
}

// Many reads at once, of two organizations, while a writer moves every
// deposit on: each read gets its own organization's deposits only, and
// never an older state than the last commit before it began.
func TestDepositReadsConcurrent(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t)
	const perOrg = 8
	deposits := map[string]*engine.Deposit{}
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		for _, o := range []string{"org_1", "org_2"} {
			if err := tx.CreateOrganization(ctx, newOrg(o)); err != nil {
				return err
			}
			for i := range perOrg {
				d := newDeposit(fmt.Sprintf("dep_%s_%d", o, i), o)
				deposits[d.ID] = d
				if err := tx.CreateDeposit(ctx, d); err != nil {
					return err
				}
			}
		}
		return nil
	})
	var committed [2 * perOrg]atomic.Int64 // AttemptsUsed last committed, by deposit
	index := func(org string, i int) int {
		if org == "org_2" {
			return perOrg + i
		}
		return i
	}
	ctx, stop := context.WithTimeout(context.Background(), 3*time.Second)
	defer stop()
	var wg sync.WaitGroup
	wg.Go(func() { // the writer
		for n := 1; ctx.Err() == nil; n++ {
			for _, o := range []string{"org_1", "org_2"} {
				i := n % perOrg
				d := deposits[fmt.Sprintf("dep_%s_%d", o, i)]
				d.AttemptsUsed = n
				if err := s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error { return tx.UpdateDeposit(ctx, d) }); err != nil {
					t.Error(err)
					return
				}
				committed[index(o, i)].Store(int64(n))
			}
		}
	})
	var reads, shared atomic.Int64
	for w := range 32 {
		wg.Go(func() {
			org, other := "org_1", "org_2"
			if w%2 == 1 {
				org, other = other, org
			}
			readCtx, cancel := context.WithCancel(context.Background())
			defer cancel()
			for n := 0; ctx.Err() == nil; n++ {
				i := (w + n) % perOrg
				owner := org
				if n%5 == 0 {
					owner = other // another organization's deposit
				}
				floor := committed[index(owner, i)].Load()
				var d *engine.Deposit
				err := s.ReadOne(readCtx, func(ctx context.Context, tx engine.Tx) error {
					var err error
					d, err = tx.GetDeposit(ctx, org, fmt.Sprintf("dep_%s_%d", owner, i))
					return err
				})
				reads.Add(1)
				switch {
				case owner != org:
					if !errors.Is(err, engine.ErrNotFound) {
						t.Errorf("%s read %s's deposit: %+v, %v", org, owner, d, err)
						return
					}
				case err != nil:
					t.Error(err)
					return
				case d.OrganizationID != org || int64(d.AttemptsUsed) < floor:
					t.Errorf("%s read %s (organization %s) with %d attempts, %d committed before the read", org, d.ID, d.OrganizationID, d.AttemptsUsed, floor)
					return
				}
			}
		})
	}
	// Count the reads that went in a batch of others, to know the test
	// saw batches at all.
	wg.Go(func() {
		for ctx.Err() == nil {
			s.deposits.mu.Lock()
			shared.Add(int64(len(s.deposits.waiting)))
			s.deposits.mu.Unlock()
			time.Sleep(100 * time.Microsecond)
		}
	})
	wg.Wait()
	if shared.Load() == 0 {
		t.Errorf("no read ever waited for a batch in %d reads", reads.Load())
	}
	t.Logf("%d reads", reads.Load())
}

// panicBatch is a tracer that panics at the first batch statement of
// deposit reads.
type panicBatch struct{ once sync.Once }

func (p *panicBatch) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if data.SQL == getDepositsQuery {
		p.once.Do(func() { panic("injected") })
	}
	return ctx
}

func (p *panicBatch) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// A batch that panics fails its other reads, not forever: the next read
// runs.
func TestDepositReadsAfterAPanic(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	ConfigurePool(cfg)
	cfg.ConnConfig.Tracer = &panicBatch{}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Close would wait for the connection the panic left acquired.
	t.Cleanup(pool.Reset)
	s := New(pool)
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		if err := tx.CreateOrganization(ctx, newOrg("org_1")); err != nil {
			return err
		}
		return tx.CreateDeposit(ctx, newDeposit("dep_1", "org_1"))
	})
	holdTurn(s)
	recovered := make(chan any, 1)
	go func() { // the batch's leader, whose request would recover
		defer func() { recovered <- recover() }()
		_ = s.ReadOne(ctx, func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.GetDeposit(ctx, "org_1", "dep_1")
			return err
		})
	}()
	awaitWaiting(t, s, 1)
	other := readAsync(ctx, s, "org_1", "dep_1")
	awaitWaiting(t, s, 2)
	s.deposits.handOff()
	if p := <-recovered; p != "injected" {
		t.Errorf("leader recovered %v", p)
	}
	if res := <-other; !errors.Is(res.err, errReadPanicked) {
		t.Errorf("the other read of the batch: %+v, %v", res.d, res.err)
	}
	if res := <-readAsync(ctx, s, "org_1", "dep_1"); res.err != nil || res.d.ID != "dep_1" {
		t.Errorf("a read after the panic: %+v, %v", res.d, res.err)
	}
}
