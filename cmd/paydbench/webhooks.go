package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/transport/webhook"
)

// With -await webhook, verify learns that a deposit succeeded as a
// merchant's backend does: from payd's deposit.succeeded webhook, posted by
// its background deliverer to the organization's endpoint, here a receiver
// on loopback that checks each delivery's Standard Webhooks signature
// before it reads the body, handles each webhook-id once, and wakes the
// client waiting for that deposit. payd runs with --webhook-allow-private
// (its documented switch for local receivers) so that it posts to
// loopback at all.

// receiver is the merchant's webhook endpoint.
type receiver struct {
	srv     *http.Server
	url     string
	secret  string        // the endpoint's whsec_ secret, once registered
	id      string        // the endpoint's ID, once registered
	handled *atomic.Int64 // the client's request count: a delivery is one more request the tool serves

	mu      sync.Mutex
	waiting map[string]chan arrival // by deposit ID
	seen    map[string]bool         // webhook-ids handled

	succeeded  atomic.Int64 // verified deposit.succeeded events for a waiting deposit
	duplicates atomic.Int64 // webhook-ids seen before (at-least-once delivery)
	unexpected atomic.Int64 // verified deposit.succeeded for no waiting deposit (it timed out)
	others     atomic.Int64 // verified events of other types
	refused    atomic.Int64 // deliveries whose signature did not verify
}

// startReceiver listens on a free loopback port.
func startReceiver(handled *atomic.Int64) (*receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &receiver{url: "http://" + ln.Addr().String() + "/payd/webhooks", waiting: map[string]chan arrival{}, seen: map[string]bool{}, handled: handled}
	mux := http.NewServeMux()
	mux.Handle("POST /payd/webhooks", r)
	r.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go r.srv.Serve(ln)
	return r, nil
}

func (r *receiver) close() { r.srv.Close() }

// subscribe registers the receiver as the organization's webhook endpoint
// through payd admin, as an operator would, and keeps its secret.
func (r *receiver) subscribe(bin, db string, env []string, orgID string) error {
	v, err := runAdmin(bin, db, env, "webhook", "add", "--org", orgID, "--url", r.url)
	if err != nil {
		return err
	}
	id, _ := v["endpoint_id"].(string)
	secret, _ := v["secret"].(string)
	if id == "" || secret == "" {
		return fmt.Errorf("payd admin webhook add answered %v", v)
	}
	r.mu.Lock()
	r.id, r.secret = id, secret
	r.mu.Unlock()
	return nil
}

// unsubscribe removes the endpoint, so that scenarios after verify are
// measured without deliveries.
func (r *receiver) unsubscribe(bin, db string, env []string) error {
	_, err := runAdmin(bin, db, env, "webhook", "remove", "--endpoint", r.id)
	return err
}

// arrival is a deposit.succeeded delivery for a waiting deposit.
type arrival struct {
	written time.Time // when payd wrote the event (its ID's milliseconds)
	err     error     // why the event was wrong, nil if right
}

// expect makes ready for the deposit's deposit.succeeded event: the
// channel receives it when it arrives verified.
func (r *receiver) expect(depositID string) <-chan arrival {
	ch := make(chan arrival, 1)
	r.mu.Lock()
	r.waiting[depositID] = ch
	r.mu.Unlock()
	return ch
}

// forget stops waiting for the deposit (done, or timed out).
func (r *receiver) forget(depositID string) {
	r.mu.Lock()
	delete(r.waiting, depositID)
	r.mu.Unlock()
}

// event is what the receiver reads of a verified delivery.
type event struct {
	ID   string `json:"id"`
	Type string `json:"type"`
	Data struct {
		ID     string `json:"id"`
		Status string `json:"status"`
		Amount string `json:"amount"`
	} `json:"data"`
}

// ServeHTTP handles one delivery: signature first, then the body.
func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.handled.Add(1)
	buf := bufs.Get().(*bytes.Buffer)
	defer bufs.Put(buf)
	buf.Reset()
	if _, err := buf.ReadFrom(io.LimitReader(req.Body, 1<<20)); err != nil {
		http.Error(w, "unreadable body", http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	secret := r.secret
	r.mu.Unlock()
	if err := webhook.Verify(secret, req.Header, buf.Bytes(), time.Now()); err != nil {
		r.refused.Add(1)
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	var ev event
	if err := json.Unmarshal(buf.Bytes(), &ev); err != nil {
		http.Error(w, "not an event", http.StatusBadRequest)
		return
	}
	w.WriteHeader(http.StatusNoContent) // stored (here: handled): payd need not retry
	if ev.Type != "deposit.succeeded" {
		r.others.Add(1)
		return
	}
	msgID := req.Header.Get(webhook.HeaderID)
	r.mu.Lock()
	if r.seen[msgID] {
		r.mu.Unlock()
		r.duplicates.Add(1)
		return
	}
	r.seen[msgID] = true
	ch := r.waiting[ev.Data.ID]
	delete(r.waiting, ev.Data.ID)
	r.mu.Unlock()
	if ch == nil {
		r.unexpected.Add(1)
		return
	}
	a := arrival{written: idTime(ev.ID)}
	var err error
	switch {
	case ev.ID != msgID:
		err = fmt.Errorf("event %s came as webhook-id %s", ev.ID, msgID)
	case ev.Data.Status != "succeeded" || !amountIs(ev.Data.Amount, 1000):
		err = fmt.Errorf("deposit.succeeded for %s says status %q, amount %q", ev.Data.ID, ev.Data.Status, ev.Data.Amount)
	default:
		r.succeeded.Add(1)
	}
	a.err = err
	ch <- a
}

// idTime is the time in a payd ID: after the prefix, a ULID in Crockford
// base32 whose first 10 digits are its 48 bits of Unix milliseconds. Zero
// if id is not one.
func idTime(id string) time.Time {
	_, ulid, ok := strings.Cut(id, "_")
	if !ok || len(ulid) != 26 {
		return time.Time{}
	}
	var ms int64
	for _, c := range []byte(ulid[:10]) {
		d := strings.IndexByte(crockford, c)
		if d < 0 {
			return time.Time{}
		}
		ms = ms<<5 | int64(d)
	}
	return time.UnixMilli(ms)
}

// crockford is the digits of payd's IDs.
const crockford = "0123456789abcdefghjkmnpqrstvwxyz"

// amountIs tells whether a decimal amount equals n.
func amountIs(amount string, n int64) bool {
	d, err := decimal.NewFromString(amount)
	return err == nil && d.Equal(decimal.NewFromInt(n))
}

// String says what the receiver got.
func (r *receiver) String() string {
	return fmt.Sprintf("%d verified deposit.succeeded for a waiting deposit, %d duplicates, %d for no waiting deposit, %d of other types, %d refused signatures",
		r.succeeded.Load(), r.duplicates.Load(), r.unexpected.Load(), r.others.Load(), r.refused.Load())
}

// errAwait is -await's error.
var errAwait = errors.New("-await: want poll or webhook")

// awaitWebhook tells whether -await selects webhooks.
func awaitWebhook(await string) (bool, error) {
	switch await {
	case "", "poll":
		return false, nil
	case "webhook":
		return true, nil
	}
	return false, errAwait
}
