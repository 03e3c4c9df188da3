package signing

import (
	"errors"
	"testing"
	"time"
)

// The vectors were computed with openssl, independently of this package:
//
//	printf 'v1\n1763720100\nPOST\n/api/v1/deposits/dep_x/verify\n{"provider_transaction_id":"abc123"}' |
//	  openssl dgst -sha256 -hmac payd_ss_secret -binary | openssl base64 -A | tr '+/' '-_' | tr -d '='
func TestSignVectors(t *testing.T) {
	secret := []byte("payd_ss_secret")
	tests := []struct {
		method, target, body, want string
	}{
		{"POST", "/api/v1/deposits/dep_x/verify", `{"provider_transaction_id":"abc123"}`, "v1=3T85u_VeXrKMEkn5JviqaUEMRsy4bBVbzJuAOkOVK4E"},
		{"get", "/api/v1/deposits/dep_x", "", "v1=Rr1HSPQ-u0ydthq8geUascowo8A1rI4z_32aRLqcMEo"},
	}
	for _, tt := range tests {
		if got := Sign(secret, "1763720100", tt.method, tt.target, []byte(tt.body)); got != tt.want {
			t.Errorf("Sign(%s %s) = %s, want %s", tt.method, tt.target, got, tt.want)
		}
	}
}

func TestVerify(t *testing.T) {
	now := time.Unix(1763720100, 0)
	cur, prev := []byte("current"), []byte("previous")
	body := []byte(`{"x":1}`)
	ts := Timestamp(now)
	good := Sign(cur, ts, "POST", "/p", body)
	tests := []struct {
		name      string
		secrets   [][]byte
		ts, sig   string
		target    string
		body      []byte
		now       time.Time
		wantError error
	}{
		{"valid", [][]byte{cur}, ts, good, "/p", body, now, nil},
		{"previous secret during rotation", [][]byte{prev, cur}, ts, good, "/p", body, now, nil},
		{"missing timestamp", [][]byte{cur}, "", good, "/p", body, now, ErrMissing},
		{"missing signature", [][]byte{cur}, ts, "", "/p", body, now, ErrMissing},
		{"timestamp not digits", [][]byte{cur}, "-17", good, "/p", body, now, ErrMalformed},
		{"signature without prefix", [][]byte{cur}, ts, good[3:], "/p", body, now, ErrMalformed},
		{"signature with padding", [][]byte{cur}, ts, good + "=", "/p", body, now, ErrMalformed},
		{"300 s old is fresh", [][]byte{cur}, ts, good, "/p", body, now.Add(300 * time.Second), nil},
		{"301 s old is stale", [][]byte{cur}, ts, good, "/p", body, now.Add(301 * time.Second), ErrStale},
		{"301 s ahead is stale", [][]byte{cur}, ts, good, "/p", body, now.Add(-301 * time.Second), ErrStale},
		{"huge timestamp is stale", [][]byte{cur}, "99999999999999999999", good, "/p", body, now, ErrStale},
		{"body changed", [][]byte{cur}, ts, good, "/p", []byte(`{"x":2}`), now, ErrInvalid},
		{"target changed", [][]byte{cur}, ts, good, "/p?a=1", body, now, ErrInvalid},
		{"wrong secret", [][]byte{prev}, ts, good, "/p", body, now, ErrInvalid},
		{"no secrets", nil, ts, good, "/p", body, now, ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Verify(tt.secrets, tt.ts, tt.sig, "POST", tt.target, tt.body, tt.now)
			if !errors.Is(err, tt.wantError) {
				t.Fatalf("Verify = %v, want %v", err, tt.wantError)
			}
		})
	}
}
