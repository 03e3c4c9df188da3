package transport

import (
	"testing"
	"time"
)

func TestLimiter(t *testing.T) {
	now := time.Unix(1000, 0)
	l := newLimiter(Rate{PerSecond: 2, Burst: 3}, func() time.Time { return now })
	for i := range 3 {
		if ok, _ := l.allow("k"); !ok {
			t.Fatalf("request %d of the burst refused", i)
		}
	}
	ok, wait := l.allow("k")
	if ok || wait != 500*time.Millisecond {
		t.Fatalf("past the burst: ok %v, wait %s; want refused, 500ms", ok, wait)
	}
	if ok, _ := l.allow("other"); !ok {
		t.Fatal("another key shares the bucket")
	}
	now = now.Add(500 * time.Millisecond)
	if ok, _ := l.allow("k"); !ok {
		t.Fatal("a token did not refill after 500ms")
	}
	if ok, _ := l.allow("k"); ok {
		t.Fatal("two tokens from one refill")
	}
	now = now.Add(time.Hour)
	for i := range 3 {
		if ok, _ := l.allow("k"); !ok {
			t.Fatalf("refilled bucket refused request %d", i)
		}
	}
	if ok, _ := l.allow("k"); ok {
		t.Fatal("the bucket refilled past its burst")
	}
	if ok, _ := newLimiter(Rate{}, time.Now).allow("k"); !ok {
		t.Fatal("a zero rate must not limit")
	}
}
