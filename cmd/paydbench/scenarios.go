package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// client sends the load: one keep-alive connection per worker.
type client struct {
	prefix string // path prefix of payd's base URL (/api), signed as part of the target
	host   string // host:port of payd
	org    *org
	bearer string // "Bearer <API key>"
	secret []byte // H2H signing secret
	conns  *connPool
	run    string // unique per run, so merchant_ids never collide
	seq    atomic.Int64

	requests atomic.Int64  // sent, for the load tool's CPU per request
	received *atomic.Int64 // webhook deliveries served (-await webhook), nil if none
	paydPID  int           // the measured payd, for its CPU per operation
	// writeBusy reads the measured payd's write-transaction time (nil: none)
	writeBusy func() (time.Duration, bool)

	mu       sync.Mutex
	deposits []string // h2h-get: paths of H2H deposits to read

	poll   time.Duration // verify: wait between reads of a deposit
	hooks  *receiver     // verify: learn of success from webhooks instead (-await webhook)
	phases phases        // verify: where the time of a deposit went
}

// phases add up the steps of verify's deposits, to say where their time
// goes: the three requests, then the wait for the worker (read by polling,
// or the webhook's arrival).
type phases struct {
	n, create, pay, submit, wait, polls atomic.Int64
	// toEvent: -await webhook, from the submission's answer to the
	// event's writing (its ID's time, to the millisecond); the rest of the
	// wait is the delivery.
	toEvent atomic.Int64
}

// describe averages the phases; waitedFor names what ended the wait.
func (p *phases) describe(waitedFor string) string {
	n := p.n.Load()
	if n == 0 {
		return "none finished"
	}
	avg := func(v *atomic.Int64) string { return ms(time.Duration(v.Load() / n)) }
	text := fmt.Sprintf("create %s, sandbox payment %s, submit %s, wait for %s %s (%.1f reads)",
		avg(&p.create), avg(&p.pay), avg(&p.submit), waitedFor, avg(&p.wait), float64(p.polls.Load())/float64(n))
	if toEvent := p.toEvent.Load(); toEvent != 0 {
		text += fmt.Sprintf(": event written after %s, delivered %s later",
			ms(time.Duration(toEvent/n)), ms(time.Duration((p.wait.Load()-toEvent)/n)))
	}
	return text
}

func newClient(base string, o *org, workers int) *client {
	hostPort := strings.TrimPrefix(base, "http://")
	slash := strings.Index(hostPort, "/")
	prefix := hostPort[slash:]
	hostPort = hostPort[:slash]
	return &client{
		host: hostPort, prefix: prefix, org: o, run: fmt.Sprint(time.Now().UnixNano()),
		bearer: "Bearer " + o.apiKey, secret: []byte(o.secret), conns: newConnPool(hostPort, workers+4),
	}
}

// handled counts the requests the tool sent and the webhook deliveries
// it served.
func (c *client) handled() int64 {
	n := c.requests.Load()
	if c.received != nil {
		n += c.received.Load()
	}
	return n
}

// bufs are response bodies' buffers, reused: the load tool's own
// allocations are CPU it takes from payd on a shared machine.
var bufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// call sends one request and decodes a JSON answer into out (if not nil).
// The body is sent as given, and signed as sent when sign is set.
func (c *client) call(ctx context.Context, method, path string, body []byte, sign bool, want int, out any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	buf := bufs.Get().(*bytes.Buffer)
	defer bufs.Put(buf)
	buf.Reset()
	c.requests.Add(1)
	status, err := c.roundTrip(method, path, body, sign, buf)
	if err != nil {
		return err
	}
	if status != want {
		return fmt.Errorf("%s %s: %d %s", method, path, status, bytes.TrimSpace(buf.Bytes()))
	}
	if out != nil {
		return json.Unmarshal(buf.Bytes(), out)
	}
	return nil
}

// appendMerchantID appends a merchant_id unique to this run.
func (c *client) appendMerchantID(b []byte, kind string) []byte {
	b = append(append(append(append(b, kind...), '-'), c.run...), '-')
	return strconv.AppendInt(b, c.seq.Add(1), 10)
}

// createdDeposit is what verify and h2h-get need of a create's answer.
type createdDeposit struct {
	ID         string `json:"id"`
	NextAction struct {
		Recipient struct {
			Value string `json:"value"`
		} `json:"recipient"`
	} `json:"next_action"`
}

// h2hCreateBody is a signed H2H create's body: these bytes, with a
// merchant_id of its own, are what is signed and sent.
func (c *client) h2hCreateBody() []byte {
	b := make([]byte, 0, 192)
	b = append(b, `{"amount":"1000","payment_method":"bkash_agent","redirect_url":"https://shop.example/r","merchant_id":"`...)
	b = c.appendMerchantID(b, "h2h")
	return append(b, `","checkout_mode":"h2h","payer":{"phone":"01712345678"}}`...)
}

func (c *client) createH2H(ctx context.Context) (*createdDeposit, error) {
	var d createdDeposit
	return &d, c.call(ctx, "POST", "/v1/deposits", c.h2hCreateBody(), true, http.StatusCreated, &d)
}

// scenario is one measured operation.
type scenario struct {
	// prepare runs before the clock starts.
	prepare func(ctx context.Context, c *client, workers int) error
	op      func(ctx context.Context, c *client, worker, i int) error
}

var scenarioByName = map[string]scenario{
	"redirect-create": {op: func(ctx context.Context, c *client, _, _ int) error {
		b := make([]byte, 0, 160)
		b = append(b, `{"amount":"500","payment_method":"bkash","redirect_url":"https://shop.example/r","merchant_id":"`...)
		b = append(c.appendMerchantID(b, "r"), `","metadata":{"order":"A-1"}}`...)
		return c.call(ctx, "POST", "/v1/deposits", b, false, http.StatusOK, nil)
	}},
	"h2h-create": {op: func(ctx context.Context, c *client, _, _ int) error {
		return c.call(ctx, "POST", "/v1/deposits", c.h2hCreateBody(), true, http.StatusCreated, nil)
	}},
	"h2h-get": {
		prepare: func(ctx context.Context, c *client, workers int) error {
			for range max(workers, 64) {
				d, err := c.createH2H(ctx)
				if err != nil {
					return err
				}
				c.mu.Lock()
				c.deposits = append(c.deposits, "/v1/deposits/"+d.ID)
				c.mu.Unlock()
			}
			return nil
		},
		op: func(ctx context.Context, c *client, worker, i int) error {
			path := c.deposits[(worker*7919+i)%len(c.deposits)]
			return c.call(ctx, "GET", path, nil, true, http.StatusOK, nil)
		},
	},
	// verify measures whole H2H deposits through to succeeded: create,
	// sandbox payment, submitted transaction ID, then the wait until the
	// worker has looked the payment up, credited the ledger and written
	// the event, learnt (-await) by reading the deposit every -poll (2 ms
	// by default) or from its verified deposit.succeeded webhook. Its rate
	// is deposits completed per second.
	"verify": {op: verifyDeposit},
	"withdraw-create": {op: func(ctx context.Context, c *client, _, _ int) error {
		b := make([]byte, 0, 128)
		b = append(b, `{"amount":"100","phone":"01712345678","payment_method":"bkash","merchant_id":"`...)
		b = append(c.appendMerchantID(b, "w"), `"}`...)
		return c.call(ctx, "POST", "/v1/withdraws", b, false, http.StatusCreated, nil)
	}},
}

// verifyTimeout bounds the wait for a deposit to succeed, either way.
const verifyTimeout = 30 * time.Second

func verifyDeposit(ctx context.Context, c *client, _, _ int) error {
	t := time.Now()
	lap := func(into *atomic.Int64) {
		now := time.Now()
		into.Add(int64(now.Sub(t)))
		t = now
	}
	d, err := c.createH2H(ctx)
	if err != nil {
		return err
	}
	lap(&c.phases.create)
	path := "/v1/deposits/" + d.ID
	var done <-chan arrival
	if c.hooks != nil {
		// Expected before the submission, so the event cannot come first.
		done = c.hooks.expect(d.ID)
		defer c.hooks.forget(d.ID)
	}
	b := make([]byte, 0, 192)
	b = append(b, `{"channel":"bkash","transaction_id":"B`...)
	b = append(b, c.run[len(c.run)-9:]...)
	b = strconv.AppendInt(b, c.seq.Add(1), 10)
	tx := b[len(`{"channel":"bkash","transaction_id":"`):]
	b = append(b, `","payer_phone":"01712345678","recipient_phone":"`...)
	b = append(b, d.NextAction.Recipient.Value...)
	b = append(b, `","amount":"1000","status":"completed"}`...)
	if err := c.call(ctx, "POST", "/sandbox/payments", b, false, http.StatusCreated, nil); err != nil {
		return err
	}
	lap(&c.phases.pay)
	submit := make([]byte, 0, 64)
	submit = append(append(append(submit, `{"provider_transaction_id":"`...), tx...), `"}`...)
	if err := c.call(ctx, "POST", path+"/verify", submit, true, http.StatusAccepted, nil); err != nil {
		return err
	}
	lap(&c.phases.submit)
	if done != nil {
		timer := time.NewTimer(verifyTimeout)
		defer timer.Stop()
		select {
		case a := <-done:
			if a.err != nil {
				return a.err
			}
			if !a.written.IsZero() {
				c.phases.toEvent.Add(int64(a.written.Sub(t)))
			}
			lap(&c.phases.wait)
			c.phases.n.Add(1)
			return nil
		case <-timer.C:
			return fmt.Errorf("no deposit.succeeded webhook for %s within %s", d.ID, verifyTimeout)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for deadline := time.Now().Add(verifyTimeout); time.Now().Before(deadline); time.Sleep(c.poll) {
		var got struct {
			Status string `json:"status"`
		}
		c.phases.polls.Add(1)
		if err := c.call(ctx, "GET", path, nil, true, http.StatusOK, &got); err != nil {
			return err
		}
		if got.Status == "succeeded" {
			lap(&c.phases.wait)
			c.phases.n.Add(1)
			return nil
		}
		if got.Status != "processing" && got.Status != "pending" {
			return fmt.Errorf("deposit %s ended %s", d.ID, got.Status)
		}
	}
	return fmt.Errorf("deposit %s not verified within %s", d.ID, verifyTimeout)
}
