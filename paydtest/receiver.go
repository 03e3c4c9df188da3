package paydtest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Receiver is an httptest webhook endpoint at URL that records what it
// gets and answers with the status its respond function picks.
type Receiver struct {
	URL     string // where the server posts
	srv     *httptest.Server
	mu      sync.Mutex
	got     []Received
	respond func(n int) (status int, header map[string]string)
}

// Received is one delivery a Receiver got.
type Received struct {
	Header http.Header // the post's headers (webhook-id, webhook-signature, ...)
	Body   []byte      // the post's body, as signed
}

// NewReceiver starts a Receiver until the test ends. respond, given the
// delivery's number from 1, picks the status and headers of the answer;
// nil answers 200.
func NewReceiver(tb testing.TB, respond func(n int) (int, map[string]string)) *Receiver {
	r := &Receiver{respond: respond}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, Received{req.Header.Clone(), body})
		n, respond := len(r.got), r.respond
		r.mu.Unlock()
		status, header := 200, map[string]string(nil)
		if respond != nil {
			status, header = respond(n)
		}
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
	}))
	r.URL = r.srv.URL
	tb.Cleanup(r.srv.Close)
	return r
}

// Respond replaces the function that picks the answers.
func (r *Receiver) Respond(respond func(n int) (int, map[string]string)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.respond = respond
}

// Deliveries is what the Receiver got so far, in order.
func (r *Receiver) Deliveries() []Received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Received(nil), r.got...)
}
