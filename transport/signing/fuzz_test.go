package signing

import (
	"testing"
	"time"
)

// FuzzVerify: whatever the headers, Verify never panics and never accepts a
// signature made with another secret; a request signed by Sign verifies,
// and changing any byte of its body breaks it.
func FuzzVerify(f *testing.F) {
	f.Add("1763720100", "v1=3T85u_VeXrKMEkn5JviqaUEMRsy4bBVbzJuAOkOVK4E", "POST", "/api/v1/deposits", []byte(`{"a":1}`))
	f.Add("", "v1=", "GET", "/", []byte{})
	f.Add("99999999999999999999999", "v1=____", "PUT", "/x?y=z", []byte{0xff})
	now := time.Unix(1763720100, 0)
	secret := []byte("payd_ss_fuzz")
	f.Fuzz(func(t *testing.T, ts, sig, method, target string, body []byte) {
		if err := Verify([][]byte{[]byte("another secret")}, ts, sig, method, target, body, now); err == nil {
			// Only a forged signature over these exact inputs could pass.
			if sig == Sign([]byte("another secret"), ts, method, target, body) {
				return
			}
			t.Fatalf("accepted %q for %q %q", sig, method, target)
		}
		good := Sign(secret, Timestamp(now), method, target, body)
		if err := Verify([][]byte{secret}, Timestamp(now), good, method, target, body, now); err != nil {
			t.Fatalf("own signature refused: %v", err)
		}
		tampered := append([]byte{'x'}, body...)
		if Verify([][]byte{secret}, Timestamp(now), good, method, target, tampered, now) == nil {
			t.Fatal("a changed body verified")
		}
	})
}
