package httpsuite

import (
	"net/http"
	"strconv"
	"sync"
)

// concurrency is how many identical requests race in the idempotency checks.
const concurrency = 8

// race sends n copies of r at once and returns the answers (nil for a
// request that failed on the network, reported).
func (s *suite) race(t T, n int, r request) []*response {
	t.Helper()
	out := make([]*response, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			out[i], errs[i] = s.send(t.Context(), r)
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("request %d of %d: %v", i+1, n, err)
		}
	}
	return out
}

// checkIdempotency: identical creates racing each other yield one deposit.
func (s *suite) checkIdempotency(t T) {
	t.Run("concurrent identical H2H creates", func(t T) {
		body := h2hBody("420", "bkash_agent", s.mid("race-h2h"), "01712345678", `{"k":"v"}`)
		ids, created := map[string]int{}, 0
		for _, res := range s.race(t, concurrency, request{method: http.MethodPost, path: "/v1/deposits", body: body, org: s.a, sign: true}) {
			if res == nil {
				continue
			}
			switch res.status {
			case http.StatusCreated:
				created++
			case http.StatusOK:
			default:
				t.Errorf("got %s, want 201 once and 200 for the others", res)
				continue
			}
			checkDeposit(t, "racing create", res.json, false)
			ids[gets(res.json, "id")]++
		}
		if created != 1 || len(ids) != 1 {
			t.Errorf("%d identical creates: %d answered 201 and they name %d deposits %v, want one 201 and one deposit", concurrency, created, len(ids), ids)
		}
	})

	t.Run("concurrent identical redirect creates", func(t T) {
		body := redirectBody("420", "nagad", s.mid("race-redirect"), "")
		ids := map[string]int{}
		for _, res := range s.race(t, concurrency, request{method: http.MethodPost, path: "/v1/deposits", body: body, org: s.a}) {
			if res == nil {
				continue
			}
			if res.status != http.StatusOK {
				t.Errorf("got %s, want 200", res)
				continue
			}
			ids[gets(res.json, "id")]++
		}
		if len(ids) != 1 {
			t.Errorf("%d identical creates name %d deposits %v, want one", concurrency, len(ids), ids)
		}
	})

	t.Run("concurrent conflicting H2H creates", func(t T) {
		// Same merchant ID, different amounts: one wins, the rest conflict.
		mid := s.mid("race-conflict")
		out := make([]*response, concurrency)
		var wg sync.WaitGroup
		for i := range concurrency {
			body := h2hBody(strconv.Itoa(100+i*10), "bkash_agent", mid, "01712345678", "")
			wg.Go(func() {
				out[i], _ = s.send(t.Context(), request{method: http.MethodPost, path: "/v1/deposits", body: body, org: s.a, sign: true})
			})
		}
		wg.Wait()
		created := 0
		for _, res := range out {
			switch {
			case res == nil:
				t.Errorf("a request failed on the network")
			case res.status == http.StatusCreated:
				created++
			case res.status == http.StatusConflict && res.errorCode() == "merchant_id_conflict":
			default:
				t.Errorf("got %s, want 201 or 409 merchant_id_conflict", res)
			}
		}
		expect(t, "creates answered 201", created, 1)
	})
}
