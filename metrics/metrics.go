// Package metrics adapts payd to Prometheus: a registry of payd's own (never
// the global default) with the Go runtime and process collectors, and the
// series the wiring feeds. The engine and the transport know nothing of
// Prometheus; they expose hooks that this package fills.
package metrics

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/payd-engine/payd/engine"
)

// Metrics holds payd's registry and its series.
type Metrics struct {
	Registry *prometheus.Registry // payd's own registry, for a host's /metrics or its own collectors

	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec

	verifications *prometheus.CounterVec
	deposits      *prometheus.CounterVec
	withdrawals   *prometheus.CounterVec
	refunds       *prometheus.CounterVec
	webhookPosts  *prometheus.CounterVec
	disabled      prometheus.Counter
	payoutYield   prometheus.Counter
}

var (
	_ engine.Observer       = (*Metrics)(nil)
	_ engine.RefundObserver = (*Metrics)(nil)
)

// New returns payd's metrics on a registry of their own.
func New() *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{
		Registry: reg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "payd_http_requests_total",
			Help: "HTTP requests answered, by route pattern, method and status.",
		}, []string{"route", "method", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "payd_http_request_duration_seconds",
			Help:    "Time to answer an HTTP request, by route pattern, method and status.",
			Buckets: prometheus.DefBuckets,
		}, []string{"route", "method", "status"}),
		verifications: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "payd_verifications_total",
			Help: "Verification attempts resolved, by result (succeeded, failed) and failure code (empty when succeeded).",
		}, []string{"result", "failure_code"}),
		deposits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "payd_deposits_finished_total",
			Help: "Deposits that reached a terminal status, by status.",
		}, []string{"status"}),
		withdrawals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "payd_withdrawals_finished_total",
			Help: "Withdrawals whose payout settled, by status.",
		}, []string{"status"}),
		refunds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "payd_refunds_finished_total",
			Help: "Refunds that settled, by status (succeeded, failed).",
		}, []string{"status"}),
		webhookPosts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "payd_webhook_posts_total",
			Help: "Webhook posts, by result (delivered: a 2xx answer; failed: anything else).",
		}, []string{"result"}),
		disabled: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "payd_webhook_endpoints_disabled_total",
			Help: "Webhook endpoints disabled by their failures (410 Gone, or failing past the limit).",
		}),
		payoutYield: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "payd_payout_yield_seconds_total",
			Help: "Time payout steps waited for the API's writes in flight before calling the provider (--payout-yield).",
		}),
	}
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.requests, m.duration, m.verifications, m.deposits, m.withdrawals, m.refunds, m.webhookPosts, m.disabled, m.payoutYield,
	)
	return m
}

// VerificationResolved implements engine.Observer.
func (m *Metrics) VerificationResolved(result, failureCode string) {
	m.verifications.WithLabelValues(result, failureCode).Inc()
}

// DepositFinished implements engine.Observer.
func (m *Metrics) DepositFinished(status string) { m.deposits.WithLabelValues(status).Inc() }

// WithdrawalFinished implements engine.Observer.
func (m *Metrics) WithdrawalFinished(status string) { m.withdrawals.WithLabelValues(status).Inc() }

// RefundFinished implements engine.RefundObserver.
func (m *Metrics) RefundFinished(status string) { m.refunds.WithLabelValues(status).Inc() }

// WebhookPosted implements engine.Observer.
func (m *Metrics) WebhookPosted(result string, disabled bool) {
	m.webhookPosts.WithLabelValues(result).Inc()
	if disabled {
		m.disabled.Inc()
	}
}

// PayoutYielded implements engine.Observer.
func (m *Metrics) PayoutYielded(wait time.Duration) { m.payoutYield.Add(wait.Seconds()) }

// WatchQueues reports the engine's queues at each scrape: read reads them
// (engine.Engine.Queues, served from indexes), now is the engine's clock.
func (m *Metrics) WatchQueues(read func(context.Context) (*engine.Queues, error), now func() time.Time) {
	m.Registry.MustRegister(&queueCollector{read: read, now: now})
}

var (
	queueItems = prometheus.NewDesc("payd_queue_items",
		"Items of background work waiting, by queue.", []string{"queue"}, nil)
	queueOldest = prometheus.NewDesc("payd_queue_oldest_age_seconds",
		"Age of the oldest item waiting in a queue since its creation (0 when the queue is empty).", []string{"queue"}, nil)
)

// queueTimeout bounds the queue read of one scrape.
const queueTimeout = 5 * time.Second

type queueCollector struct {
	read func(context.Context) (*engine.Queues, error)
	now  func() time.Time
}

func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- queueItems
	ch <- queueOldest
}

func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), queueTimeout)
	defer cancel()
	q, err := c.read(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(queueItems, err)
		return
	}
	now := c.now()
	for _, e := range []struct {
		name string
		q    engine.Queue
	}{
		{"attempts_processing", q.AttemptsProcessing},
		{"attempts_delayed", q.AttemptsDelayed},
		{"payouts_processing", q.PayoutsProcessing},
		{"refunds_processing", q.RefundsProcessing},
		{"webhook_deliveries_pending", q.DeliveriesPending},
	} {
		age := 0.0
		if e.q.Items > 0 && !e.q.Oldest.IsZero() {
			age = max(now.Sub(e.q.Oldest).Seconds(), 0)
		}
		ch <- prometheus.MustNewConstMetric(queueItems, prometheus.GaugeValue, float64(e.q.Items), e.name)
		ch <- prometheus.MustNewConstMetric(queueOldest, prometheus.GaugeValue, age, e.name)
	}
}

// ObserveRequest counts one answered request. route is the pattern that
// served it (never the raw path, which holds IDs and checkout tokens);
// a method outside the standard ones is counted as "other", so a client
// cannot grow the label set.
func (m *Metrics) ObserveRequest(route, method string, status int, elapsed time.Duration) {
	if route == "" {
		route = "unmatched"
	}
	// By position, not a Labels map: every request passes here, and the
	// map and its checks were most of this function's cost.
	method, code := boundedMethod(method), statusLabel(status)
	m.requests.WithLabelValues(route, method, code).Inc()
	m.duration.WithLabelValues(route, method, code).Observe(elapsed.Seconds())
}

// statusLabels are the status label of each code from 100 to 599, made
// once instead of by each request.
var statusLabels = func() (s [500]string) {
	for i := range s {
		s[i] = strconv.Itoa(100 + i)
	}
	return s
}()

func statusLabel(status int) string {
	if status >= 100 && status < 600 {
		return statusLabels[status-100]
	}
	return strconv.Itoa(status)
}

func boundedMethod(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return method
	}
	return "other"
}

// Handler serves the registry in the Prometheus exposition format.
func (m *Metrics) Handler() http.Handler {
	// ContinueOnError: a metric that cannot be read (the database is down)
	// leaves the others served, and counts in promhttp_metric_handler_errors_total.
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry, ErrorHandling: promhttp.ContinueOnError})
}
