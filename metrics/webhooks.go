package metrics

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
)

var endpointsDisabled = prometheus.NewDesc("payd_webhook_endpoints_disabled",
	"Webhook endpoints disabled now, in every organization (by their failures or by an operator).", nil, nil)

// WatchDisabledEndpoints reports at each scrape how many webhook endpoints
// are disabled now, through read (engine.Engine.DisabledWebhookEndpoints,
// served from an index of the disabled ones).
func (m *Metrics) WatchDisabledEndpoints(read func(context.Context) (int, error)) {
	m.Registry.MustRegister(disabledCollector{read})
}

type disabledCollector struct {
	read func(context.Context) (int, error)
}

func (c disabledCollector) Describe(ch chan<- *prometheus.Desc) { ch <- endpointsDisabled }

func (c disabledCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), queueTimeout)
	defer cancel()
	n, err := c.read(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(endpointsDisabled, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(endpointsDisabled, prometheus.GaugeValue, float64(n))
}
