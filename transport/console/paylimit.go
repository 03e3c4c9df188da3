package console

import (
	"math"
	"net/http"
	"strconv"

	"github.com/payd-engine/payd/transport"
)

// DefaultPayRate is how often one client address may ask for the public
// payment link pages unless Config.PayRate says otherwise: a burst of 30,
// then one every two seconds. Many payers behind one carrier's address
// share it, so it is generous; what a link may open is bounded by the
// engine (one open checkout), this bounds the work asked of payd.
var DefaultPayRate = transport.Rate{PerSecond: 0.5, Burst: 30}

// limitPay answers a client network (clientNet) over its rate with 429 and
// Retry-After, in a page the payer reads, before any other work.
func (s *server) limitPay(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ok, wait := s.payLimit.Allow(clientNet(r))
		if ok {
			next.ServeHTTP(w, r)
			return
		}
		secs := max(1, int(math.Ceil(wait.Seconds())))
		q := &request{lang: language(w, r), nonce: newNonce()}
		setSecurityHeaders(w, q.nonce)
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		if err := s.render(w, r, q, http.StatusTooManyRequests, "busy", "", busyData{Seconds: secs, Back: s.mount + r.URL.Path}); err != nil {
			s.logger.ErrorContext(r.Context(), "console: render busy page", "err", err)
		}
	})
}

type busyData struct {
	Seconds int
	// Back is the page to try again (GET).
	Back string
}

// payRate is cfg's rate of the pay pages: DefaultPayRate when unset, none
// when PerSecond is negative.
func payRate(r transport.Rate) transport.Rate {
	switch {
	case r.PerSecond < 0:
		return transport.Rate{}
	case r.PerSecond == 0:
		return DefaultPayRate
	}
	return r
}
