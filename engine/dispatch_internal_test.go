package engine

import (
	"errors"
	"slices"
	"testing"
	"time"
)

// Only an endpoint whose last post was answered quickly gets a deeper
// claim; a slow answer, or none, takes that back.
func TestDispatcherClaimCaps(t *testing.T) {
	d := dispatcher{inFlight: map[string]int{}, waiting: map[string][]*Delivery{}, fast: map[string]bool{}}
	caps := func() (full, fast []string) {
		full, fast = d.claimCaps(2)
		slices.Sort(full)
		slices.Sort(fast)
		return full, fast
	}
	d.inFlight["new"], d.inFlight["quick"], d.inFlight["slow"], d.inFlight["dead"] = 2, 2, 2, 2
	d.posted("quick", WebhookResult{StatusCode: 500}, 10*time.Millisecond) // an answer, quickly: fast
	d.posted("slow", WebhookResult{StatusCode: 200}, 2*time.Second)
	d.posted("dead", WebhookResult{Err: errors.New("connection refused")}, time.Millisecond)
	if full, fast := caps(); !slices.Equal(full, []string{"dead", "new", "slow"}) || !slices.Equal(fast, []string{"quick"}) {
		t.Fatalf("full %v, fast %v; want full [dead new slow], fast [quick]", full, fast)
	}
	d.waiting["quick"] = make([]*Delivery, 2*webhookFastQueue-2)
	if full, _ := caps(); !slices.Contains(full, "quick") {
		t.Fatalf("quick with %d in flight or waiting is not full: %v", 2*webhookFastQueue, full)
	}
	d.posted("quick", WebhookResult{StatusCode: 200}, webhookFastPost)
	if _, fast := caps(); len(fast) != 0 {
		t.Fatalf("fast after a slow post: %v", fast)
	}
}
