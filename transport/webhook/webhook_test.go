package webhook

import (
	"errors"
	"net/http"
	"testing"
	"time"
)

// The published Standard Webhooks test vector.
const (
	vectorSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vectorID     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vectorTime   = 1614265330
	vectorBody   = `{"test": 2432232314}`
	vectorSig    = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func TestSpecVector(t *testing.T) {
	got, err := Sign(vectorSecret, vectorID, vectorTime, []byte(vectorBody))
	if err != nil || got != vectorSig {
		t.Fatalf("Sign = %q, %v; want %q", got, err, vectorSig)
	}
	h := http.Header{}
	h.Set(HeaderID, vectorID)
	h.Set(HeaderTimestamp, "1614265330")
	h.Set(HeaderSignature, "v1,bm9wZQ== "+vectorSig) // a rotation: one stale value first
	if err := Verify(vectorSecret, h, []byte(vectorBody), time.Unix(vectorTime+60, 0)); err != nil {
		t.Fatalf("Verify: %v", err)
	}
}

func TestVerifyRefuses(t *testing.T) {
	now := time.Unix(vectorTime, 0)
	good := func() http.Header {
		h := http.Header{}
		h.Set(HeaderID, vectorID)
		h.Set(HeaderTimestamp, "1614265330")
		h.Set(HeaderSignature, vectorSig)
		return h
	}
	tests := []struct {
		name   string
		edit   func(h http.Header)
		body   string
		now    time.Time
		secret string
		want   error
	}{
		{"another body", func(http.Header) {}, `{"test": 2432232315}`, now, vectorSecret, ErrNoMatch},
		{"another id", func(h http.Header) { h.Set(HeaderID, "msg_other") }, vectorBody, now, vectorSecret, ErrNoMatch},
		{"another secret", func(http.Header) {}, vectorBody, now, NewSecret(), ErrNoMatch},
		{"v2 only", func(h http.Header) { h.Set(HeaderSignature, "v2,"+vectorSig[3:]) }, vectorBody, now, vectorSecret, ErrNoMatch},
		{"too old", func(http.Header) {}, vectorBody, now.Add(Tolerance + time.Second), vectorSecret, ErrStale},
		{"from the future", func(http.Header) {}, vectorBody, now.Add(-Tolerance - time.Second), vectorSecret, ErrStale},
		{"no signature", func(h http.Header) { h.Del(HeaderSignature) }, vectorBody, now, vectorSecret, ErrMissingHeaders},
		{"bad secret", func(http.Header) {}, vectorBody, now, "whsec_%%%", ErrBadSecret},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := good()
			tt.edit(h)
			if err := Verify(tt.secret, h, []byte(tt.body), tt.now); !errors.Is(err, tt.want) {
				t.Fatalf("Verify = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestNewSecretSignsAndVerifies(t *testing.T) {
	a, b := NewSecret(), NewSecret()
	if a == b || len(a) != len(SecretPrefix)+44 {
		t.Fatalf("secrets %q %q", a, b)
	}
	sig, err := SignatureHeader([]string{a, b}, "evt_1", 100, []byte("{}"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{a, b} {
		h := http.Header{}
		h.Set(HeaderID, "evt_1")
		h.Set(HeaderTimestamp, "100")
		h.Set(HeaderSignature, sig)
		if err := Verify(s, h, []byte("{}"), time.Unix(100, 0)); err != nil {
			t.Fatalf("a rotation header does not verify with %s: %v", s, err)
		}
	}
}
