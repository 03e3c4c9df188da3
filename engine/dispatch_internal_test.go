package engine

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"
)

func newTestDispatcher() *dispatcher {
	return &dispatcher{inFlight: map[string]int{}, waiting: map[string][]*Delivery{}, fast: map[string]time.Time{}}
}

// Only an endpoint whose last post was answered quickly gets a deeper
// claim; a slow answer, or none, takes that back.
func TestDispatcherClaimCaps(t *testing.T) {
	d := newTestDispatcher()
	now := time.Now()
	caps := func() (full, fast []string) {
		full, fast = d.claimCaps(2, now)
		slices.Sort(full)
		slices.Sort(fast)
		return full, fast
	}
	d.inFlight["new"], d.inFlight["quick"], d.inFlight["slow"], d.inFlight["dead"] = 2, 2, 2, 2
	d.posted("quick", WebhookResult{StatusCode: 500}, 10*time.Millisecond, now) // an answer, quickly: fast
	d.posted("slow", WebhookResult{StatusCode: 200}, 2*time.Second, now)
	d.posted("dead", WebhookResult{Err: errors.New("connection refused")}, time.Millisecond, now)
	if full, fast := caps(); !slices.Equal(full, []string{"dead", "new", "slow"}) || !slices.Equal(fast, []string{"quick"}) {
		t.Fatalf("full %v, fast %v; want full [dead new slow], fast [quick]", full, fast)
	}
	d.waiting["quick"] = make([]*Delivery, 2*webhookFastQueue-2)
	if full, _ := caps(); !slices.Contains(full, "quick") {
		t.Fatalf("quick with %d in flight or waiting is not full: %v", 2*webhookFastQueue, full)
	}
	d.posted("quick", WebhookResult{StatusCode: 200}, webhookFastPost, now)
	if _, fast := caps(); len(fast) != 0 {
		t.Fatalf("fast after a slow post: %v", fast)
	}
}

// However many endpoints answered quickly, a claim names at most
// maxFastEndpoints of them, those with posts in flight first, then the
// latest; and one not posted to for fastForgotten is forgotten.
func TestDispatcherFastEndpointsBounded(t *testing.T) {
	d := newTestDispatcher()
	start := time.Now()
	const n = 3 * maxFastEndpoints
	for i := range n {
		d.posted(fmt.Sprintf("ep%03d", i), WebhookResult{StatusCode: 200}, time.Millisecond, start.Add(time.Duration(i)*time.Second))
	}
	d.inFlight["ep000"] = 1 // the oldest, but busy
	now := start.Add(n * time.Second)
	_, fast := d.claimCaps(2, now)
	if len(fast) != maxFastEndpoints || fast[0] != "ep000" || fast[1] != fmt.Sprintf("ep%03d", n-1) {
		t.Fatalf("%d fast endpoints named, first %v; want %d, ep000 then the latest", len(fast), fast[:min(2, len(fast))], maxFastEndpoints)
	}
	later := start.Add(fastForgotten + 10*time.Second)
	d.claimCaps(2, later)
	if len(d.fast) != n-11 {
		t.Fatalf("%d fast endpoints remembered, want %d (those answered in the last %v)", len(d.fast), n-11, fastForgotten)
	}
}
