package metrics

import (
	"context"
	"sort"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Inbox is what the SMS inbox reports at a scrape, summed over every
// organization.
type Inbox struct {
	// Messages by status (accepted, held, conflict, duplicate, unparsed,
	// expired): the inbox's maintained counts.
	Messages map[string]int
	// Silence is, by the device label the operator set, how long since
	// that device last reported (the longest, when two share a label).
	Silence map[string]time.Duration
	// WalletsOutOfRotation are enabled wallets left out of the recipient
	// pool because no live device proves them.
	WalletsOutOfRotation int
}

// MaxDeviceLabels bounds the device series: devices past it, in label
// order, are reported under the label "other" (their longest silence).
const MaxDeviceLabels = 100

var (
	inboxMessages = prometheus.NewDesc("payd_sms_messages",
		"SMS messages the inbox holds, by status.", []string{"status"}, nil)
	inboxSilence = prometheus.NewDesc("payd_sms_device_silence_seconds",
		"Seconds since a device last reported, by the label its operator gave it.", []string{"device"}, nil)
	inboxOutOfRotation = prometheus.NewDesc("payd_sms_wallets_out_of_rotation",
		"Enabled wallets out of the recipient pool because no live device proves them.", nil, nil)
)

// WatchInbox reports the SMS inbox at each scrape through read.
func (m *Metrics) WatchInbox(read func(context.Context) (*Inbox, error)) {
	m.Registry.MustRegister(&inboxCollector{read: read})
}

type inboxCollector struct {
	read func(context.Context) (*Inbox, error)
}

func (c *inboxCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- inboxMessages
	ch <- inboxSilence
	ch <- inboxOutOfRotation
}

func (c *inboxCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), queueTimeout)
	defer cancel()
	in, err := c.read(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(inboxMessages, err)
		return
	}
	for status, n := range in.Messages {
		ch <- prometheus.MustNewConstMetric(inboxMessages, prometheus.GaugeValue, float64(n), status)
	}
	labels := make([]string, 0, len(in.Silence))
	for l := range in.Silence {
		labels = append(labels, l)
	}
	sort.Strings(labels)
	var other time.Duration
	for i, l := range labels {
		if i >= MaxDeviceLabels || l == "other" {
			other = max(other, in.Silence[l])
			continue
		}
		ch <- prometheus.MustNewConstMetric(inboxSilence, prometheus.GaugeValue, in.Silence[l].Seconds(), l)
	}
	if len(labels) > MaxDeviceLabels || in.Silence["other"] > 0 {
		ch <- prometheus.MustNewConstMetric(inboxSilence, prometheus.GaugeValue, other.Seconds(), "other")
	}
	ch <- prometheus.MustNewConstMetric(inboxOutOfRotation, prometheus.GaugeValue, float64(in.WalletsOutOfRotation))
}
