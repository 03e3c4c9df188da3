package client

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"syscall"
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"":                              0,
		"0":                             0,
		"-3":                            0,
		"7":                             7 * time.Second,
		" 2 ":                           2 * time.Second,
		"soon":                          0,
		"Sat, 21 Nov 2026 10:00:30 GMT": 30 * time.Second,
		"Sat, 21 Nov 2026 09:00:00 GMT": 0,
		"99999999999":                   24 * time.Hour,
	} {
		if got := parseRetryAfter(v, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", v, got, want)
		}
	}
}

func TestBackoffBounds(t *testing.T) {
	c := New("http://x/api", "k", "", WithBackoff(100*time.Millisecond, time.Second))
	for attempt := range 10 {
		d := c.backoff(attempt)
		ceil := min(100*time.Millisecond<<attempt, time.Second)
		if d < ceil/2 || d > ceil {
			t.Fatalf("backoff(%d) = %v, want within [%v, %v]", attempt, d, ceil/2, ceil)
		}
	}
}

func TestRetryableNetError(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, true},
		{&net.OpError{Op: "read", Err: syscall.ECONNRESET}, true},
		{io.ErrUnexpectedEOF, true},
		{&net.DNSError{Err: "no such host", IsNotFound: true}, false},
		{&net.DNSError{Err: "timeout", IsTimeout: true}, true},
		{errors.New("tls: failed to verify certificate"), false},
		{context.Canceled, false},
	} {
		if got := retryableNetError(tc.err); got != tc.want {
			t.Errorf("retryableNetError(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

func TestNewErrorEnvelope(t *testing.T) {
	h := http.Header{"Retry-After": {"3"}}
	e := newError(429, h, []byte(`{"error":{"code":"rate_limited","message":"slow down"}}`))
	if e.Code != CodeRateLimited || e.Message != "slow down" || e.RetryAfter != 3*time.Second {
		t.Fatalf("%+v", e)
	}
	e = newError(500, http.Header{}, nil)
	if e.Code != "" || e.Message != "Internal Server Error" || e.Error() != "payd: 500 no error code: Internal Server Error" {
		t.Fatalf("%+v %q", e, e.Error())
	}
	e = newError(502, http.Header{}, []byte("a\nb\x00"))
	if e.Message != "a b" {
		t.Fatalf("message = %q", e.Message)
	}
}
