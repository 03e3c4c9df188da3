package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/storage/sqlite"
	"github.com/shopspring/decimal"
)

// readDeposit is GetDeposit through ReadOne, the read a signed GET makes.
func readDeposit(t *testing.T, s *sqlite.Store, id string) (*engine.Deposit, error) {
	t.Helper()
	var d *engine.Deposit
	err := s.ReadOne(context.Background(), func(ctx context.Context, tx engine.Tx) error {
		var err error
		d, err = tx.GetDeposit(ctx, "org_1", id)
		return err
	})
	return d, err
}

func newRedirectDeposit(id string) *engine.Deposit {
	return &engine.Deposit{
		ID: id, OrganizationID: "org_1", MerchantID: "m_" + id, CheckoutMode: engine.CheckoutRedirect,
		Amount: decimal.RequireFromString("500.25"), PaymentMethod: "bkash", RedirectURL: "https://merchant.example/return",
		Metadata: []byte("{}"), Status: engine.StatusPending, Action: engine.ActionRedirect,
		CheckoutToken: "tok_" + id, CheckoutURL: "https://pay.example/c/tok_" + id,
		VerificationState: engine.VerificationProcessing,
		ExpiresAt:         base.Add(30 * time.Minute), CreatedAt: base, UpdatedAt: base,
	}
}

// A GET reads the file each time: a change committed by another process
// (here another Store on the same file, as `payd admin` would be) is seen
// by the next read of every reader connection, and a missing row is
// ErrNotFound.
func TestReadOneSeesOtherProcess(t *testing.T) {
	s1, path := openStore(t)
	s2, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	createOrg(t, s1, "org_1")
	d := newRedirectDeposit("dep_1")
	write(t, s1, func(ctx context.Context, tx engine.Tx) error { return tx.CreateDeposit(ctx, d) })
	if _, err := readDeposit(t, s1, "dep_x"); err != engine.ErrNotFound {
		t.Fatalf("missing deposit: %v, want ErrNotFound", err)
	}
	for i := range 10 {
		// Warm more than one reader connection, each with its statement.
		for range 3 {
			got, err := readDeposit(t, s1, "dep_1")
			if err != nil || got.AttemptsUsed != i || got.Status != d.Status {
				t.Fatalf("read %d: %+v, %v", i, got, err)
			}
		}
		d.AttemptsUsed, d.UpdatedAt = i+1, base.Add(time.Duration(i+1)*time.Second)
		if i == 9 {
			d.Status = engine.StatusSucceeded
		}
		write(t, s2, func(ctx context.Context, tx engine.Tx) error { return tx.UpdateDeposit(ctx, d) })
	}
	got, err := readDeposit(t, s1, "dep_1")
	if err != nil || got.AttemptsUsed != 10 || got.Status != engine.StatusSucceeded || !got.UpdatedAt.Equal(d.UpdatedAt) {
		t.Fatalf("after the other store's last update: %+v, %v", got, err)
	}
}

// A read for a request that has already ended does not run.
func TestReadOneEndedContext(t *testing.T) {
	s, _ := openStore(t)
	createOrg(t, s, "org_1")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := s.ReadOne(ctx, func(ctx context.Context, tx engine.Tx) error {
		_, err := tx.GetDeposit(ctx, "org_1", "dep_1")
		return err
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("ReadOne with an ended context: %v, want context.Canceled", err)
	}
}

// Reads on every reader connection at once, while the writer commits
// updates, each see a committed version, never an older one than the
// last they saw; once the store is closed a read fails instead of waiting.
func TestReadOneConcurrentWithWritesAndClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "payd.db")
	s, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	createOrg(t, s, "org_1")
	d := newRedirectDeposit("dep_1")
	write(t, s, func(ctx context.Context, tx engine.Tx) error { return tx.CreateDeposit(ctx, d) })
	const updates = 200
	done := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Go(func() {
			last := -1
			for {
				got, err := readDeposit(t, s, "dep_1")
				if err != nil {
					errs <- err
					return
				}
				if got.AttemptsUsed < last {
					errs <- fmt.Errorf("read %d attempts after %d", got.AttemptsUsed, last)
					return
				}
				last = got.AttemptsUsed
				select {
				case <-done:
					return
				default:
				}
			}
		})
	}
	for i := range updates {
		d.AttemptsUsed = i + 1
		write(t, s, func(ctx context.Context, tx engine.Tx) error { return tx.UpdateDeposit(ctx, d) })
	}
	close(done)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got, err := readDeposit(t, s, "dep_1"); err != nil || got.AttemptsUsed != updates {
		t.Fatalf("after the last update: %+v, %v", got, err)
	}
	// 16 readers on at most max(4, GOMAXPROCS) connections: some waited,
	// and the pool's statistics say so.
	var st engine.PoolStats
	for _, p := range s.PoolStats() {
		if p.Pool == "reader_one" {
			st = p
		}
	}
	if st.Open < 1 || st.Open > st.MaxOpen || st.InUse != 0 || st.Idle != st.Open || (st.MaxOpen < 16 && (st.Waits == 0 || st.WaitDuration <= 0)) {
		t.Errorf("reader_one pool statistics: %+v", st)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := readDeposit(t, s, "dep_1"); err == nil {
		t.Fatal("a read after Close succeeded")
	}
}
