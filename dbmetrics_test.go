package payd_test

import (
	"context"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	payd "github.com/payd-engine/payd"
	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydtest"
	"github.com/payd-engine/payd/provider/sandbox"
	"github.com/payd-engine/payd/provider/smsinbox"
	"github.com/payd-engine/payd/storage/postgres"
	"github.com/payd-engine/payd/storage/postgres/pgtest"
)

// onPostgres builds the server on a Postgres database of its own (skipped
// without PAYD_TEST_POSTGRES_URL), its pool maxConns connections.
func onPostgres(t *testing.T, maxConns string) paydtest.Option {
	t.Helper()
	dsn := pgtest.URL(t)
	if u, err := url.Parse(dsn); err == nil && strings.HasPrefix(dsn, "postgres") {
		q := u.Query()
		q.Set("pool_max_conns", maxConns)
		u.RawQuery = q.Encode()
		dsn = u.String()
	} else {
		dsn += " pool_max_conns=" + maxConns
	}
	store, err := postgres.Open(context.Background(), dsn, sandbox.Migrations(), smsinbox.Migrations())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return func(c *payd.Config) { c.Store = store }
}

// holdTx opens a read-write transaction and holds it until release.
func holdTx(t *testing.T, store engine.Store) (release func()) {
	t.Helper()
	started, done, released := make(chan struct{}), make(chan error, 1), make(chan struct{})
	go func() {
		done <- store.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
			close(started)
			<-released
			return nil
		})
	}()
	select {
	case <-started:
	case err := <-done:
		t.Fatalf("transaction: %v", err)
	}
	return func() {
		close(released)
		if err := <-done; err != nil {
			t.Errorf("held transaction: %v", err)
		}
	}
}

func poolGauge(t *testing.T, families map[string]*dto.MetricFamily, name, pool string) float64 {
	t.Helper()
	return gaugeValue(t, families, name, map[string]string{"pool": pool})
}

func poolCounter(t *testing.T, families map[string]*dto.MetricFamily, name, pool string) float64 {
	t.Helper()
	m := series(families, name, map[string]string{"pool": pool})
	if m == nil {
		t.Fatalf("%s{pool=%q}: no such series", name, pool)
	}
	return m.GetCounter().GetValue()
}

// TestMetricsDBPoolSQLite: the writer pool's one connection shows in use
// while a transaction holds it, and a second transaction that waited for
// it is counted with the time it waited.
func TestMetricsDBPoolSQLite(t *testing.T) {
	s := paydtest.MustOpen(t)
	store := s.Config.Store

	families := scrape(t, s)
	if got := poolGauge(t, families, "payd_db_connections_max_open", "writer"); got != 1 {
		t.Errorf("writer max open: %v, want 1", got)
	}
	if got, want := poolGauge(t, families, "payd_db_connections_max_open", "reader"), float64(max(4, runtime.GOMAXPROCS(0))); got != want {
		t.Errorf("reader max open: %v, want %v", got, want)
	}
	if got, want := poolGauge(t, families, "payd_db_connections_max_open", "reader_one"), float64(max(4, runtime.GOMAXPROCS(0))); got != want {
		t.Errorf("reader_one max open: %v, want %v", got, want)
	}
	if got := poolGauge(t, families, "payd_db_connections_in_use", "writer"); got != 0 {
		t.Errorf("writer in use with nothing running: %v", got)
	}
	waitsBefore := poolCounter(t, families, "payd_db_waits_total", "writer")
	busyBefore := poolCounter(t, families, "payd_db_write_busy_seconds_total", "writer")

	release := holdTx(t, store)
	heldFrom := time.Now()
	families = scrape(t, s)
	if got := poolGauge(t, families, "payd_db_connections_in_use", "writer"); got != 1 {
		t.Errorf("writer in use while a transaction is held: %v, want 1", got)
	}
	if got := poolGauge(t, families, "payd_db_connections_open", "writer"); got != 1 {
		t.Errorf("writer open: %v, want 1", got)
	}
	if got := poolGauge(t, families, "payd_db_connections_idle", "writer"); got != 0 {
		t.Errorf("writer idle while held: %v, want 0", got)
	}
	// A second transaction queues for the writer's only connection; the
	// pool counts the wait as it starts.
	second := make(chan error, 1)
	go func() {
		second <- store.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error { return nil })
	}()
	for store.(engine.PoolStatser).PoolStats()[0].Waits == int64(waitsBefore) {
		runtime.Gosched()
	}
	held := time.Since(heldFrom) // at least: it began before and ends after
	release()
	if err := <-second; err != nil {
		t.Fatal(err)
	}

	families = scrape(t, s)
	if got := poolGauge(t, families, "payd_db_connections_in_use", "writer"); got != 0 {
		t.Errorf("writer in use after: %v, want 0", got)
	}
	if got := poolGauge(t, families, "payd_db_connections_idle", "writer"); got != 1 {
		t.Errorf("writer idle after: %v, want 1", got)
	}
	if got := poolCounter(t, families, "payd_db_waits_total", "writer"); got != waitsBefore+1 {
		t.Errorf("writer waits: %v, want %v", got, waitsBefore+1)
	}
	if got := poolCounter(t, families, "payd_db_wait_seconds_total", "writer"); got <= 0 {
		t.Errorf("writer wait seconds: %v, want > 0", got)
	}
	// The held transaction's time is the writer's; waiting for the
	// connection is not.
	if got, want := poolCounter(t, families, "payd_db_write_busy_seconds_total", "writer"), busyBefore+held.Seconds(); got < want {
		t.Errorf("writer write busy: %vs, want at least %vs", got, want)
	}
	for _, pool := range []string{"reader", "reader_one"} {
		if got := poolCounter(t, families, "payd_db_write_busy_seconds_total", pool); got != 0 {
			t.Errorf("%s write busy: %vs, want 0: it only reads", pool, got)
		}
	}
}

// TestMetricsDBPoolPostgres: the pool's connections show in use while
// transactions hold them. A scrape's own reads (queues, disabled
// endpoints) may take connections at the same time, so the counts are
// bounds.
func TestMetricsDBPoolPostgres(t *testing.T) {
	s := paydtest.MustOpen(t, onPostgres(t, "3"))
	families := scrape(t, s)
	if got := poolGauge(t, families, "payd_db_connections_max_open", "main"); got != 3 {
		t.Errorf("max open: %v, want 3", got)
	}
	busyBefore := poolCounter(t, families, "payd_db_write_busy_seconds_total", "main")
	releaseA := holdTx(t, s.Config.Store)
	releaseB := holdTx(t, s.Config.Store)
	heldFrom := time.Now()
	families = scrape(t, s)
	if got := poolGauge(t, families, "payd_db_connections_in_use", "main"); got < 2 {
		t.Errorf("in use while two transactions are held: %v, want at least 2", got)
	}
	if got := poolGauge(t, families, "payd_db_connections_open", "main"); got < 2 || got > 3 {
		t.Errorf("open: %v, want 2 or 3", got)
	}
	held := time.Since(heldFrom) // by each of the two, at least
	releaseA()
	releaseB()
	families = scrape(t, s)
	if got, want := poolCounter(t, families, "payd_db_write_busy_seconds_total", "main"), busyBefore+2*held.Seconds(); got < want {
		t.Errorf("write busy: %vs, want at least %vs, the two held transactions' time summed", got, want)
	}
	// The scrape's queue and disabled-endpoint reads may hold one each.
	if got := poolGauge(t, families, "payd_db_connections_in_use", "main"); got > 2 {
		t.Errorf("in use after: %v, want at most the scrape's own", got)
	}
	if got := poolGauge(t, families, "payd_db_connections_idle", "main"); got < 1 {
		t.Errorf("idle after: %v, want the released connections", got)
	}
	// Each connection the pool opened for a caller who found none idle
	// was waited for.
	if got := poolCounter(t, families, "payd_db_waits_total", "main"); got < 2 {
		t.Errorf("waits: %v, want at least the two connections opened for the held transactions", got)
	}
	if got := poolCounter(t, families, "payd_db_wait_seconds_total", "main"); got <= 0 {
		t.Errorf("wait seconds: %v, want > 0", got)
	}
}
