package postgres

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/storage/postgres/pgtest"
)

// BenchmarkInTxOneStatement is a write transaction of one statement, one
// after another: its time is mostly round trips (go test -run '^$' -bench
// InTxOneStatement ./storage/postgres/ with PAYD_TEST_POSTGRES_URL set).
func BenchmarkInTxOneStatement(b *testing.B) {
	ctx := context.Background()
	s, err := Open(ctx, pgtest.URL(b))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if err := s.InTx(ctx, func(ctx context.Context, tx engine.Tx) error { return tx.CreateOrganization(ctx, newOrg("org_1")) }); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		err := s.InTx(ctx, func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.LockOrganization(ctx, "org_1")
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadOneDeposit is the signed GET's read, one after another;
// -Parallel, 32 at once, each of its own deposit (-bench ReadOneDeposit
// -benchmem).
func BenchmarkReadOneDeposit(b *testing.B) {
	s := benchDeposits(b)
	ctx := context.Background()
	for b.Loop() {
		readOneDeposit(ctx, b, s, "dep_0")
	}
}

func BenchmarkReadOneDepositParallel(b *testing.B) {
	s := benchDeposits(b)
	b.SetParallelism(32 / runtime.GOMAXPROCS(0))
	b.ResetTimer()
	var next atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		id := fmt.Sprint("dep_", next.Add(1)%benchDepositCount)
		for pb.Next() {
			readOneDeposit(ctx, b, s, id)
		}
	})
}

func benchDeposits(b *testing.B) *Store {
	s, err := Open(context.Background(), pgtest.URL(b))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	err = s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
		if err := tx.CreateOrganization(ctx, newOrg("org_1")); err != nil {
			return err
		}
		for i := range benchDepositCount {
			if err := tx.CreateDeposit(ctx, newDeposit(fmt.Sprint("dep_", i), "org_1")); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

const benchDepositCount = 64

func readOneDeposit(ctx context.Context, b *testing.B, s *Store, id string) {
	err := s.ReadOne(ctx, func(ctx context.Context, tx engine.Tx) error {
		d, err := tx.GetDeposit(ctx, "org_1", id)
		if err == nil && d.ID != id {
			b.Errorf("read %s", d.ID)
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
}
