package signing

import (
	"crypto/hmac"
	"crypto/sha256"
	"fmt"
	"sync"
	"testing"
)

// Pooled, reused HMAC states give what a fresh hmac.New gives, for many
// secrets used at once by many goroutines (run with -race), and the cache
// of keyed states stays within its bound.
func TestKeyedMACsAgreeWithHMACNew(t *testing.T) {
	want := func(secret []byte, msg string) string {
		h := hmac.New(sha256.New, secret)
		h.Write([]byte(msg))
		return string(h.Sum(nil))
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 300 {
				secret := []byte(fmt.Sprintf("whsec_%d", (g+i)%5))
				got := mac(secret, "1700000000", "get", "/api/v1/deposits/dep_1", []byte(fmt.Sprint(i)))
				if string(got) != want(secret, "v1\n1700000000\nGET\n/api/v1/deposits/dep_1\n"+fmt.Sprint(i)) {
					t.Errorf("goroutine %d, request %d: the pooled MAC differs from hmac.New's", g, i)
					return
				}
			}
		})
	}
	wg.Wait()
	for i := range maxKeyedMACs + 10 {
		keyedMAC([]byte(fmt.Sprint("rotated_", i)))
	}
	keyedMACs.RLock()
	n := len(keyedMACs.pools)
	keyedMACs.RUnlock()
	if n > maxKeyedMACs {
		t.Errorf("%d keyed secrets cached, bound %d", n, maxKeyedMACs)
	}
}
