package postgres

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
)

// Ready is the readiness check: nil on a migrated database, an error
// naming the migration a database lacks, and an error once closed.
func TestReady(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t)
	if err := s.Ready(ctx); err != nil {
		t.Fatalf("migrated database: %v", err)
	}
	if _, err := s.pool.Exec(ctx, `DELETE FROM payd_migrations WHERE line = 'main' AND version = (SELECT max(version) FROM payd_migrations)`); err != nil {
		t.Fatal(err)
	}
	if err := s.Ready(ctx); err == nil || !strings.Contains(err.Error(), `line "main" is at version`) {
		t.Fatalf("a migration missing: %v", err)
	}
	s.Close()
	if err := s.Ready(ctx); err == nil {
		t.Fatal("closed store is ready")
	}
}

// CountQueues counts by status and names the oldest creation time; a
// resolved attempt is in no queue.
func TestCountQueues(t *testing.T) {
	s, _ := openStore(t)
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		if err := tx.CreateOrganization(ctx, newOrg("org_1")); err != nil {
			return err
		}
		if err := tx.CreateDeposit(ctx, newDeposit("dep_1", "org_1")); err != nil {
			return err
		}
		for i, status := range []string{engine.AttemptProcessing, engine.AttemptProcessing, engine.AttemptDelayed, engine.AttemptFailed} {
			a := newAttempt(fmt.Sprint("att_", i), "dep_1", "org_1", base)
			a.Status, a.CreatedAt = status, base.Add(time.Duration(i)*time.Minute)
			if err := tx.CreateAttempt(ctx, a); err != nil {
				return err
			}
		}
		return nil
	})
	var q *engine.Queues
	err := s.ReadTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
		var err error
		q, err = tx.CountQueues(ctx)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	want := engine.Queues{
		AttemptsProcessing: engine.Queue{Items: 2, Oldest: base.Truncate(time.Microsecond)},
		AttemptsDelayed:    engine.Queue{Items: 1, Oldest: base.Add(2 * time.Minute).Truncate(time.Microsecond)},
	}
	if *q != want {
		t.Errorf("queues %+v, want %+v", *q, want)
	}
}
