package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/payd-engine/payd/engine"
)

var (
	dbMaxOpen = prometheus.NewDesc("payd_db_connections_max_open",
		"Most connections the pool opens (0: no limit), by pool.", []string{"pool"}, nil)
	dbOpen = prometheus.NewDesc("payd_db_connections_open",
		"Connections the pool holds open, by pool.", []string{"pool"}, nil)
	dbInUse = prometheus.NewDesc("payd_db_connections_in_use",
		"Connections serving a transaction or a statement now, by pool.", []string{"pool"}, nil)
	dbIdle = prometheus.NewDesc("payd_db_connections_idle",
		"Open connections waiting for work, by pool.", []string{"pool"}, nil)
	dbWaits = prometheus.NewDesc("payd_db_waits_total",
		"Times a caller waited for a connection because none was free, by pool.", []string{"pool"}, nil)
	dbWaitSeconds = prometheus.NewDesc("payd_db_wait_seconds_total",
		"Time callers waited for a connection, by pool.", []string{"pool"}, nil)
	dbWriteBusy = prometheus.NewDesc("payd_db_write_busy_seconds_total",
		"Time write transactions held the pool's connections, from BEGIN to COMMIT or ROLLBACK, summed over connections, by pool. "+
			"Its rate is how many connections writes keep busy: SQLite's one writer is saturated at 1.", []string{"pool"}, nil)
)

// WatchPools reports a store's connection pools at each scrape (pool is
// "writer", "reader" and "reader_one" on SQLite, "main" on Postgres). The pools keep
// these counts in memory: a scrape does not ask the database.
func (m *Metrics) WatchPools(s engine.PoolStatser) {
	m.Registry.MustRegister(poolCollector{s})
}

type poolCollector struct{ store engine.PoolStatser }

func (c poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{dbMaxOpen, dbOpen, dbInUse, dbIdle, dbWaits, dbWaitSeconds, dbWriteBusy} {
		ch <- d
	}
}

func (c poolCollector) Collect(ch chan<- prometheus.Metric) {
	for _, p := range c.store.PoolStats() {
		ch <- prometheus.MustNewConstMetric(dbMaxOpen, prometheus.GaugeValue, float64(p.MaxOpen), p.Pool)
		ch <- prometheus.MustNewConstMetric(dbOpen, prometheus.GaugeValue, float64(p.Open), p.Pool)
		ch <- prometheus.MustNewConstMetric(dbInUse, prometheus.GaugeValue, float64(p.InUse), p.Pool)
		ch <- prometheus.MustNewConstMetric(dbIdle, prometheus.GaugeValue, float64(p.Idle), p.Pool)
		ch <- prometheus.MustNewConstMetric(dbWaits, prometheus.CounterValue, float64(p.Waits), p.Pool)
		ch <- prometheus.MustNewConstMetric(dbWaitSeconds, prometheus.CounterValue, p.WaitDuration.Seconds(), p.Pool)
		ch <- prometheus.MustNewConstMetric(dbWriteBusy, prometheus.CounterValue, p.WriteBusy.Seconds(), p.Pool)
	}
}
