package payd

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/payd-engine/payd/engine"
)

// Readier is a store that can say whether it is ready to serve: the
// database answers and has every migration this code knows applied.
// storage/sqlite and storage/postgres implement it; for a store that does
// not, readiness reads through a transaction instead.
type Readier interface {
	Ready(ctx context.Context) error
}

// readyTimeout bounds a readiness check, so that a hung database answers
// 503 within a scraper's timeout instead of never.
const readyTimeout = 3 * time.Second

// Run is the background work of this payd, the one way to start it: the
// engine's (verification, expiry, payouts, webhooks: Engine.Run, which is
// not to be called apart) until ctx ends, marked running for readiness, and
// beside it a check of the ledger every Config.LedgerCheckInterval
// (CheckLedger). Main.Run calls it. More than one Run, in this process or
// others over the same database, share the work through leases.
func (a *App) Run(ctx context.Context) error {
	a.working.Add(1)
	defer a.working.Add(-1)
	if a.ledgerEvery > 0 {
		var checks sync.WaitGroup
		defer checks.Wait()
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		checks.Go(func() { a.checkLedgerEvery(ctx, a.ledgerEvery) })
	}
	if a.background != nil {
		var bg sync.WaitGroup
		defer bg.Wait()
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		bg.Go(func() { a.background.RunBackground(ctx) })
	}
	return a.Engine.Run(ctx)
}

// Ready reports why this payd cannot serve, or nil: the database must
// answer with its migrations current, and the background work must run.
func (a *App) Ready(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	if r, ok := a.store.(Readier); ok {
		// The store's own line on a writable primary, then the provider's.
		if err := r.Ready(ctx); err != nil {
			return a.unreadyDatabase(err)
		}
		if err := a.checkMigrations(ctx); err != nil {
			return a.unreadyDatabase(err)
		}
	} else if err := a.store.ReadTx(ctx, func(ctx context.Context, tx engine.Tx) error {
		_, err := tx.GetOrganization(ctx, "readiness-check")
		if errors.Is(err, engine.ErrNotFound) {
			return nil
		}
		return err
	}); err != nil {
		return fmt.Errorf("database: %w", err)
	}
	if a.working.Load() == 0 {
		return errors.New("workers: not running")
	}
	return nil
}

// OpsHandler serves the operations endpoints, meant for a listener apart
// from the API: /metrics (Prometheus), /healthz (the process is up) and
// /readyz (Ready).
func (a *App) OpsHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", a.Metrics.Handler())
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		if err := a.Ready(r.Context()); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, "not ready:", err)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	return mux
}
