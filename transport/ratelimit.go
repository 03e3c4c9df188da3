package transport

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/payd-engine/payd/engine"
)

// Rate is a token bucket: PerSecond tokens refill continuously up to Burst.
// A zero PerSecond means no limit.
type Rate struct {
	PerSecond float64
	Burst     int
}

// RateLimits are the per-API-key limits of the API. Verify and Withdraw
// apply to those operations, which move or prove money and are tighter;
// Default to every other authenticated request. Device is the limit of
// each SMS inbox device's posts (devices.go).
type RateLimits struct {
	Default  Rate
	Verify   Rate
	Withdraw Rate
	Device   Rate
}

// DefaultRateLimits are what the reference server uses unless told
// otherwise: generous for reads and deposits, tighter where money moves.
var DefaultRateLimits = RateLimits{
	Default:  Rate{PerSecond: 100, Burst: 200},
	Verify:   Rate{PerSecond: 10, Burst: 20},
	Withdraw: Rate{PerSecond: 10, Burst: 20},
	Device:   DefaultDeviceRate,
}

// limiter keeps one bucket per API key for one class of requests. Limits
// are per process: N instances behind a balancer admit up to N times the
// rate.
type limiter struct {
	rate    Rate
	now     func() time.Time
	mu      sync.Mutex
	buckets map[string]*bucket
	swept   time.Time
}

type bucket struct {
	tokens float64
	at     time.Time
}

func newLimiter(r Rate, now func() time.Time) *limiter {
	return &limiter{rate: r, now: now, buckets: map[string]*bucket{}}
}

// allow takes a token for key, or says how long until one is there.
func (l *limiter) allow(key string) (bool, time.Duration) {
	if l == nil || l.rate.PerSecond <= 0 {
		return true, 0
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(now)
	b, ok := l.buckets[key]
	if !ok {
		b = &bucket{tokens: float64(l.rate.Burst), at: now}
		l.buckets[key] = b
	}
	b.tokens = math.Min(float64(l.rate.Burst), b.tokens+now.Sub(b.at).Seconds()*l.rate.PerSecond)
	b.at = now
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, time.Duration((1 - b.tokens) / l.rate.PerSecond * float64(time.Second))
}

// sweep forgets buckets that have refilled completely, so idle keys cost
// nothing; it runs at most once a minute.
func (l *limiter) sweep(now time.Time) {
	if now.Sub(l.swept) < time.Minute {
		return
	}
	l.swept = now
	full := time.Duration(float64(l.rate.Burst) / l.rate.PerSecond * float64(time.Second))
	for k, b := range l.buckets {
		if now.Sub(b.at) > full {
			delete(l.buckets, k)
		}
	}
}

// Limiter is a token bucket per key outside the API: the console's public
// payment link pages keep one per client address.
type Limiter struct{ l *limiter }

// NewLimiter returns a Limiter of r on the clock now; a zero r.PerSecond
// admits everything.
func NewLimiter(r Rate, now func() time.Time) *Limiter { return &Limiter{newLimiter(r, now)} }

// Allow takes a token for key, or says how long until one is there.
func (l *Limiter) Allow(key string) (bool, time.Duration) { return l.l.allow(key) }

// requestClass picks the limiter of a request.
type requestClass int

const (
	classDefault requestClass = iota
	classVerify
	classWithdraw
	classDevice
)

// admit authenticates a request and takes a token from its API key's
// bucket for the class, answering 429 rate_limited with Retry-After when
// the bucket is empty.
func (s *server) admit(w http.ResponseWriter, r *http.Request, class requestClass) (*engine.Principal, error) {
	p, err := s.authenticate(r)
	if err != nil {
		return nil, err
	}
	l := s.limiters[class]
	if ok, wait := l.allow(p.APIKeyID); !ok {
		secs := max(1, int(math.Ceil(wait.Seconds())))
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		return nil, engine.Errorf(codeRateLimited, "too many requests for this API key: retry after %d s", secs)
	}
	return p, nil
}
