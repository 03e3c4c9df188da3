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
	// PayoutsWaiting are the payouts waiting for an operator, by state
	// (queued: to send; matched: an SMS matched it, to confirm).
	PayoutsWaiting map[string]Waiting
}

// Waiting is one state of work waiting for an operator: how many items,
// and how long ago the oldest of them was created (0 when none waits).
type Waiting struct {
	Items     int           // how many wait
	OldestAge time.Duration // since the oldest was queued; 0 when none
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
	inboxPayoutsWaiting = prometheus.NewDesc("payd_sms_payouts_waiting",
		"Payouts waiting for an operator, by state (queued: to send; matched: an SMS matched it, to confirm).", []string{"state"}, nil)
	inboxPayoutsOldest = prometheus.NewDesc("payd_sms_payouts_waiting_oldest_age_seconds",
		"Age of the oldest payout waiting for an operator since it was queued, by state (0 when none waits).", []string{"state"}, nil)
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
	ch <- inboxPayoutsWaiting
	ch <- inboxPayoutsOldest
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
	for state, w := range in.PayoutsWaiting {
		ch <- prometheus.MustNewConstMetric(inboxPayoutsWaiting, prometheus.GaugeValue, float64(w.Items), state)
		ch <- prometheus.MustNewConstMetric(inboxPayoutsOldest, prometheus.GaugeValue, max(w.OldestAge.Seconds(), 0), state)
	}
}
