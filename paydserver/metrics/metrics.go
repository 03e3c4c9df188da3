// Package metrics adapts payd to Prometheus: a registry of payd's own (never
// the global default) with the Go runtime and process collectors, and the
// series the wiring feeds. The engine and the transport know nothing of
// Prometheus; they expose hooks that this package fills.
package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics holds payd's registry and its series.
type Metrics struct {
	Registry *prometheus.Registry

	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

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
	}
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.requests, m.duration,
	)
	return m
}

// ObserveRequest counts one answered request. route is the pattern that
// served it (never the raw path, which holds IDs and checkout tokens);
// a method outside the standard ones is counted as "other", so a client
// cannot grow the label set.
func (m *Metrics) ObserveRequest(route, method string, status int, elapsed time.Duration) {
	if route == "" {
		route = "unmatched"
	}
	labels := prometheus.Labels{"route": route, "method": boundedMethod(method), "status": strconv.Itoa(status)}
	m.requests.With(labels).Inc()
	m.duration.With(labels).Observe(elapsed.Seconds())
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
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry})
}
