package postgres

import (
	"context"
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
