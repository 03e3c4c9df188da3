package smsinbox_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/provider/smsinbox"
	"github.com/payd-engine/payd/storage/sqlite"
)

// BenchmarkIngestWithHeld measures one ingest, of a genuine message that
// continues the chain (accepted) and of a forgery (held), in a wallet that
// already holds 0 or 5,000 messages: the chain's next message is found by
// an index, so the cost must not grow with what is held (issue 15 measured
// 0.14-0.17 s per ingest with 5,000 held before).
//
//	go test ./provider/smsinbox/ -run '^$' -bench IngestWithHeld -benchtime 2000x -count 3
func BenchmarkIngestWithHeld(b *testing.B) {
	for _, held := range []int{0, 5000} {
		for _, kind := range []string{"accepted", "held"} {
			b.Run(fmt.Sprintf("held=%d/%s", held, kind), func(b *testing.B) {
				store, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "payd.db"), smsinbox.Migrations())
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { store.Close() })
				f := newFixtureOn(b, store, discardLogger)
				f.settings(smsinbox.SettingsUpdate{HeldMax: ptr(100_000)})
				f.anchor("1000000")
				for i := range held {
					// Forgeries: balances that follow nothing.
					f.ingest(cashOut("1.00", fmt.Sprintf("%d.00", 10+i), fmt.Sprintf("FRG%07d", i), t0))
				}
				if n := f.stats()[smsinbox.StatusHeld]; n != held {
					b.Fatalf("%d held, want %d", n, held)
				}
				balance := decimal.RequireFromString("1000000")
				b.ResetTimer()
				for i := range b.N {
					f.clock.Add(time.Millisecond)
					var in smsinbox.Incoming
					if kind == "accepted" {
						balance = balance.Add(decimal.NewFromInt(100))
						in = cashOut("100.00", balance.StringFixed(2), fmt.Sprintf("GEN%07d", i), t0)
					} else {
						in = cashOut("1.00", fmt.Sprintf("%d.00", 500_000+i), fmt.Sprintf("FRH%07d", i), t0)
					}
					m, _, err := f.inbox.Ingest(f.ctx, f.device, in)
					if err != nil || m.Status != kind {
						b.Fatalf("ingest %d: %v %v", i, m, err)
					}
				}
			})
		}
	}
}

// BenchmarkIngestPastQuietWindow measures the worst case of the chain's
// re-synchronization (issue 19): a held forgery in a wallet whose chain has
// been quiet past resync_quiet with 0 or 99 messages held since, none of
// them a run, so every ingest reads them all (at most 101, whatever the
// history) and finds nothing to re-synchronize.
//
//	go test ./provider/smsinbox/ -run '^$' -bench IngestPastQuietWindow -benchtime 2000x -count 3
func BenchmarkIngestPastQuietWindow(b *testing.B) {
	for _, held := range []int{0, 99} {
		b.Run(fmt.Sprintf("held=%d", held), func(b *testing.B) {
			store, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "payd.db"), smsinbox.Migrations())
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { store.Close() })
			f := newFixtureOn(b, store, discardLogger)
			f.settings(smsinbox.SettingsUpdate{HeldMax: ptr(100_000), HeldMaxAge: ptr(30 * 24 * time.Hour)})
			f.anchor("1000000")
			for i := range held {
				// Two forgeries that follow the same balance: a fork, never a run.
				f.ingest(cashOut("1.00", fmt.Sprintf("%d.00", 11+i%2), fmt.Sprintf("FRG%07d", i), t0))
			}
			f.clock.Add(time.Hour)
			b.ResetTimer()
			for i := range b.N {
				f.clock.Add(time.Millisecond)
				in := cashOut("1.00", fmt.Sprintf("%d.00", 500_000+2*i), fmt.Sprintf("FRH%07d", i), t0)
				m, _, err := f.inbox.Ingest(f.ctx, f.device, in)
				if err != nil || m.Status != smsinbox.StatusHeld {
					b.Fatalf("ingest %d: %v %v", i, m, err)
				}
			}
		})
	}
}
