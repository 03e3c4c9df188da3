package payd

import (
	"context"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/metrics"
)

// DefaultLedgerCheckInterval is how often Run verifies the ledger
// unless Config.LedgerCheckInterval says otherwise.
const DefaultLedgerCheckInterval = time.Hour

// ledgerCheckFirstDelay is the longest Run waits before its first
// check: soon after a deploy, but not at every restart of a process that
// keeps crashing.
const ledgerCheckFirstDelay = 5 * time.Minute

// CheckLedger verifies the ledger once, as payd admin ledger verify does
// (engine.Engine.VerifyLedger: every organization's balance rows against
// the sum of its entries), and reports what it found in the
// payd_ledger_check_* metrics and, when an account differs, in an error log
// line. It reads every entry, one organization's read-only snapshot at a
// time: on SQLite through the reader pool, which never waits for the
// writer; on Postgres on one pooled connection at a time, without locks.
func (a *App) CheckLedger(ctx context.Context) (*engine.LedgerCheck, error) {
	start := time.Now()
	check, err := a.Engine.VerifyLedger(ctx)
	if err != nil {
		if ctx.Err() == nil {
			a.ledgerChecks.Failed()
			a.logger.ErrorContext(ctx, "ledger check failed to run", "err", err)
		}
		return nil, err
	}
	a.ledgerChecks.Completed(metrics.LedgerCheck{Accounts: check.Accounts, Differences: len(check.Differences),
		At: a.Engine.Now(), Took: time.Since(start)})
	if len(check.Differences) > 0 {
		a.logger.ErrorContext(ctx, "ledger check: balance rows differ from their entries; run payd admin ledger verify",
			"accounts", len(check.Differences), "of", check.Accounts)
	}
	return check, nil
}

// checkLedgerEvery runs CheckLedger every interval until ctx ends, the
// first time after at most ledgerCheckFirstDelay.
func (a *App) checkLedgerEvery(ctx context.Context, interval time.Duration) {
	timer := a.clock.Timer(min(interval, ledgerCheckFirstDelay))
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		_, _ = a.CheckLedger(ctx) // reported in the metrics and the log
		timer.Reset(interval)
	}
}
