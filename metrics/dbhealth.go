package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/payd-engine/payd/engine"
)

var (
	dbUnavailable = prometheus.NewDesc("payd_db_unavailable_seconds",
		"How long no writable primary has been reachable, in the outage under way (0 while the database answers).", nil, nil)
	dbUnavailableTotal = prometheus.NewDesc("payd_db_unavailable_seconds_total",
		"Time without a writable primary, over every outage including the one under way.", nil, nil)
	dbOutages = prometheus.NewDesc("payd_db_outages_total",
		"Outages that ended: periods without a writable primary, from the first failed transaction to the next write that succeeded.", nil, nil)
	dbReconnects = prometheus.NewDesc("payd_db_reconnects_total",
		"Connections opened during an outage: to a restarted or newly promoted primary.", nil, nil)
	dbUnavailableTx = prometheus.NewDesc("payd_db_unavailable_transactions_total",
		"Transactions that failed because no writable primary was reachable, by cause (connect, shutdown, starting, read_only, too_many_connections, connection_lost).", []string{"cause"}, nil)
)

// WatchDBHealth reports a store's account of its database's availability
// at each scrape (engine.DBHealther; counters kept in memory). now is the
// clock the length of an outage under way is measured on.
func (m *Metrics) WatchDBHealth(s engine.DBHealther, now func() time.Time) {
	m.Registry.MustRegister(healthCollector{s, now})
}

type healthCollector struct {
	store engine.DBHealther
	now   func() time.Time
}

func (c healthCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{dbUnavailable, dbUnavailableTotal, dbOutages, dbReconnects, dbUnavailableTx} {
		ch <- d
	}
}

func (c healthCollector) Collect(ch chan<- prometheus.Metric) {
	h := c.store.DBHealth()
	current := 0.0
	if !h.UnavailableSince.IsZero() {
		current = max(c.now().Sub(h.UnavailableSince).Seconds(), 0)
	}
	ch <- prometheus.MustNewConstMetric(dbUnavailable, prometheus.GaugeValue, current)
	ch <- prometheus.MustNewConstMetric(dbUnavailableTotal, prometheus.CounterValue, h.UnavailableTotal.Seconds()+current)
	ch <- prometheus.MustNewConstMetric(dbOutages, prometheus.CounterValue, float64(h.Outages))
	ch <- prometheus.MustNewConstMetric(dbReconnects, prometheus.CounterValue, float64(h.Reconnects))
	for cause, n := range h.Failures {
		ch <- prometheus.MustNewConstMetric(dbUnavailableTx, prometheus.CounterValue, float64(n), cause)
	}
}
