package transport

import (
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strconv"

	"github.com/payd-engine/payd/engine"
)

// UnavailableRetryAfter is the Retry-After, in seconds, of an answer given
// while the database is unavailable: a failover promotes a standby within
// seconds, and a client that waits this long finds the new primary.
const UnavailableRetryAfter = 2

// noteUnavailable prepares a 503 database_unavailable answer: its
// Retry-After header. The driver's error goes to the debug log only: an
// outage answers many requests, and the store and the workers report the
// outage itself once.
func (s *server) noteUnavailable(w http.ResponseWriter, r *http.Request, err error) {
	w.Header().Set("Retry-After", strconv.Itoa(UnavailableRetryAfter))
	s.logger.DebugContext(r.Context(), "database unavailable", "method", r.Method, "path", loggedPath(r), "err", err)
}

// pageUnavailable shows a payer a plain "try again in a moment" page, in
// both of the checkout's languages, instead of an API error envelope, while
// the database is unavailable.
func pageUnavailable(h handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		err := h(w, r)
		if engine.UnavailableError(err) == nil {
			return err
		}
		hd := w.Header()
		hd.Set("Retry-After", strconv.Itoa(UnavailableRetryAfter))
		hd.Set("Content-Type", "text/html; charset=utf-8")
		hd.Set("Cache-Control", "no-store")
		hd.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
		w.WriteHeader(http.StatusServiceUnavailable)
		page := "/checkout/" + url.PathEscape(r.PathValue("token")) + "?lang=" + checkoutLanguage(r)
		_, _ = fmt.Fprintf(w, unavailablePage, template.HTMLEscapeString(page))
		return nil
	}
}

const unavailablePage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Try again in a moment</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;line-height:1.5}</style>
</head><body>
<h1>Try again in a moment</h1>
<p>The payment page is briefly unavailable. Wait a few seconds, then <a href="%[1]s">open it again</a>. If you already paid, submitting the same transaction ID again is safe.</p>
<p lang="bn">পেমেন্ট পেজটি কিছুক্ষণের জন্য পাওয়া যাচ্ছে না। কয়েক সেকেন্ড অপেক্ষা করে <a href="%[1]s">আবার খুলুন</a>। টাকা পাঠিয়ে থাকলে একই ট্রানজ্যাকশন আইডি আবার জমা দেওয়া নিরাপদ।</p>
</body></html>
`
