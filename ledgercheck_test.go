package payd_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	payd "github.com/payd-engine/payd"
	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydtest"
)

// plantLedgerDifference moves org's available balance row a poisha away
// from its entries, as a bug or a hand edit of the database would.
func plantLedgerDifference(t *testing.T, s *paydtest.Server, orgID string) {
	t.Helper()
	err := s.Config.Store.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
		n, err := tx.(engine.SQLTx).ExecSQL(ctx,
			`UPDATE account_balances SET balance_minor = balance_minor + 1 WHERE organization_id = $1 AND account = 'available'`, orgID)
		if err == nil && n != 1 {
			t.Fatalf("planted in %d rows", n)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func ledgerGauge(families map[string]*dto.MetricFamily, name string) (float64, bool) {
	m := series(families, name, nil)
	if m == nil {
		return 0, false
	}
	return m.GetGauge().GetValue(), true
}

// TestMetricsReportTheLedgerCheck: before any check the metrics say
// nothing of the ledger; a check of a consistent ledger reports 0
// differences and when it ran; a balance row moved off its entries is
// reported as one difference, on SQLite and on Postgres.
func TestMetricsReportTheLedgerCheck(t *testing.T) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			var opts []paydtest.Option
			if dialect == "postgres" {
				opts = append(opts, onPostgres(t, "4"))
			}
			ctx := context.Background()
			s := paydtest.MustOpen(t, opts...)
			org := s.NewOrg(engine.OrganizationSettings{})
			s.Fund(org, "1000")
			s.Fund(s.NewOrg(engine.OrganizationSettings{}), "5")

			families := scrape(t, s)
			if v, ok := ledgerGauge(families, "payd_ledger_check_differences"); ok {
				t.Errorf("differences before any check: %v", v)
			}
			if got := counterValue(families, "payd_ledger_check_errors_total", nil); got != 0 {
				t.Errorf("errors before any check: %v", got)
			}

			s.Clock.Add(time.Minute)
			check, err := s.CheckLedger(ctx)
			if err != nil {
				t.Fatal(err)
			}
			families = scrape(t, s)
			for name, want := range map[string]float64{
				"payd_ledger_check_differences":                      0,
				"payd_ledger_check_accounts":                         float64(check.Accounts),
				"payd_ledger_check_last_completed_timestamp_seconds": float64(paydtest.Start.Add(time.Minute).Unix()),
			} {
				if got, ok := ledgerGauge(families, name); !ok || got != want {
					t.Errorf("%s = %v (%v), want %v", name, got, ok, want)
				}
			}
			if check.Accounts < 2 {
				t.Errorf("accounts checked: %d, want both organizations'", check.Accounts)
			}

			plantLedgerDifference(t, s, org.ID)
			s.Clock.Add(time.Minute)
			if _, err := s.CheckLedger(ctx); err != nil {
				t.Fatal(err)
			}
			families = scrape(t, s)
			if got, _ := ledgerGauge(families, "payd_ledger_check_differences"); got != 1 {
				t.Errorf("differences after a balance row moved: %v, want 1", got)
			}
			if got, _ := ledgerGauge(families, "payd_ledger_check_last_completed_timestamp_seconds"); got != float64(paydtest.Start.Add(2*time.Minute).Unix()) {
				t.Errorf("last completed: %v", got)
			}

			// A check the database fails is counted, and the last finding
			// stays.
			if err := s.Config.Store.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := s.CheckLedger(ctx); err == nil {
				t.Fatal("a check on a closed store succeeded")
			}
			families = scrape(t, s)
			if got := counterValue(families, "payd_ledger_check_errors_total", nil); got != 1 {
				t.Errorf("errors after a failed check: %v, want 1", got)
			}
			if got, _ := ledgerGauge(families, "payd_ledger_check_differences"); got != 1 {
				t.Errorf("differences after a failed check: %v, want the last finding, 1", got)
			}
		})
	}
}

// TestLedgerIsCheckedInTheBackground: Run checks the ledger by
// itself, first within ledgerCheckFirstDelay, then every interval.
func TestLedgerIsCheckedInTheBackground(t *testing.T) {
	s := paydtest.MustOpen(t, func(c *payd.Config) { c.LedgerCheckInterval = 2 * time.Hour })
	org := s.NewOrg(engine.OrganizationSettings{})
	s.Fund(org, "1000")
	s.Run()
	// waitFor moves the mock clock in steps until the check has reported
	// differences == want, completed at or after since.
	waitFor := func(want float64, since time.Time, step time.Duration) {
		t.Helper()
		for {
			families := scrape(t, s)
			at, ok := ledgerGauge(families, "payd_ledger_check_last_completed_timestamp_seconds")
			got, _ := ledgerGauge(families, "payd_ledger_check_differences")
			if ok && at >= float64(since.Unix()) && got == want {
				return
			}
			s.Clock.Add(step)
			runtime.Gosched()
		}
	}
	waitFor(0, paydtest.Start, time.Minute)
	plantLedgerDifference(t, s, org.ID)
	waitFor(1, s.Clock.Now(), 10*time.Minute)
}
