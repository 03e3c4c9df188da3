package metrics_test

import (
	"testing"
	"time"

	"github.com/payd-engine/payd/metrics"
)

// TestPayoutYieldSeconds: the waits the engine tells (engine.Observer) add
// up in payd_payout_yield_seconds_total.
func TestPayoutYieldSeconds(t *testing.T) {
	m := metrics.New()
	m.PayoutYielded(1500 * time.Millisecond)
	m.PayoutYielded(250 * time.Millisecond)
	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == "payd_payout_yield_seconds_total" {
			if got := f.GetMetric()[0].GetCounter().GetValue(); got != 1.75 {
				t.Errorf("payd_payout_yield_seconds_total = %v, want 1.75", got)
			}
			return
		}
	}
	t.Fatal("payd_payout_yield_seconds_total is not exported")
}
