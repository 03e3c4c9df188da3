package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// LedgerCheck is what one completed ledger check found.
type LedgerCheck struct {
	// Accounts checked, and of them those whose balance row differs from
	// the sum of their entries.
	Accounts, Differences int
	// At is when the check completed; Took how long it ran.
	At   time.Time
	Took time.Duration // how long the check ran
}

var (
	ledgerDifferences = prometheus.NewDesc("payd_ledger_check_differences",
		"Accounts whose balance row differed from the sum of their entries at the last completed ledger check (0: the ledger is consistent).", nil, nil)
	ledgerAccounts = prometheus.NewDesc("payd_ledger_check_accounts",
		"Accounts the last completed ledger check verified.", nil, nil)
	ledgerCompleted = prometheus.NewDesc("payd_ledger_check_last_completed_timestamp_seconds",
		"When the last ledger check completed, in Unix seconds.", nil, nil)
	ledgerDuration = prometheus.NewDesc("payd_ledger_check_duration_seconds",
		"How long the last completed ledger check ran.", nil, nil)
	ledgerErrors = prometheus.NewDesc("payd_ledger_check_errors_total",
		"Ledger checks that could not complete (the database failed them).", nil, nil)
)

// LedgerChecks reports the ledger checks this process runs. Before the
// first completes it reports only the errors: a check not run yet is no
// finding.
type LedgerChecks struct {
	mu     sync.Mutex
	last   *LedgerCheck
	errors int
}

// WatchLedgerChecks registers the ledger checks' series; the returned
// LedgerChecks is told of each check.
func (m *Metrics) WatchLedgerChecks() *LedgerChecks {
	c := &LedgerChecks{}
	m.Registry.MustRegister(c)
	return c
}

// Completed records a check that ran to its end, whatever it found.
func (c *LedgerChecks) Completed(check LedgerCheck) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.last = &check
}

// Failed records a check that could not complete.
func (c *LedgerChecks) Failed() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.errors++
}

// Describe implements prometheus.Collector.
func (c *LedgerChecks) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{ledgerDifferences, ledgerAccounts, ledgerCompleted, ledgerDuration, ledgerErrors} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *LedgerChecks) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch <- prometheus.MustNewConstMetric(ledgerErrors, prometheus.CounterValue, float64(c.errors))
	if c.last == nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(ledgerDifferences, prometheus.GaugeValue, float64(c.last.Differences))
	ch <- prometheus.MustNewConstMetric(ledgerAccounts, prometheus.GaugeValue, float64(c.last.Accounts))
	ch <- prometheus.MustNewConstMetric(ledgerCompleted, prometheus.GaugeValue, float64(c.last.At.UnixNano())/1e9)
	ch <- prometheus.MustNewConstMetric(ledgerDuration, prometheus.GaugeValue, c.last.Took.Seconds())
}
