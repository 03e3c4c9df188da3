package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/payd-engine/payd/transport/signing"
)

// client sends the load: one keep-alive connection per worker.
type client struct {
	base   string
	prefix string // path prefix of base, signed as part of the target
	org    *org
	http   *http.Client
	run    string // unique per run, so merchant_ids never collide
	seq    atomic.Int64

	requests atomic.Int64 // sent, for the load tool's CPU per request
	paydPID  int          // the measured payd, for its CPU per operation

	mu       sync.Mutex
	deposits []string // H2H deposits to read

	poll   time.Duration // verify: wait between reads of a deposit
	phases phases        // verify: where the time of a deposit went
}

// phases add up the steps of verify's deposits, to say where their time
// goes: the three requests, then the wait for the worker (read by polling).
type phases struct {
	n, create, pay, submit, wait, polls atomic.Int64
}

func (p *phases) String() string {
	n := p.n.Load()
	if n == 0 {
		return "none finished"
	}
	avg := func(v *atomic.Int64) string { return ms(time.Duration(v.Load() / n)) }
	return fmt.Sprintf("create %s, sandbox payment %s, submit %s, wait for succeeded %s (%.1f reads)",
		avg(&p.create), avg(&p.pay), avg(&p.submit), avg(&p.wait), float64(p.polls.Load())/float64(n))
}

func newClient(base string, o *org, workers int) *client {
	prefix := base[strings.Index(base[len("http://"):], "/")+len("http://"):]
	return &client{
		base: base, prefix: prefix, org: o, run: fmt.Sprint(time.Now().UnixNano()),
		http: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: workers + 4}},
	}
}

// call sends one request and decodes a JSON answer into out (if not nil).
func (c *client) call(ctx context.Context, method, path, body string, sign bool, want int, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.org.apiKey)
	if sign {
		ts := signing.Timestamp(time.Now())
		req.Header.Set(signing.TimestampHeader, ts)
		req.Header.Set(signing.SignatureHeader, signing.Sign([]byte(c.org.secret), ts, method, c.prefix+path, []byte(body)))
	}
	c.requests.Add(1)
	res, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	if res.StatusCode != want {
		return fmt.Errorf("%s %s: %d %s", method, path, res.StatusCode, bytes.TrimSpace(data))
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
}

func (c *client) merchantID(kind string) string {
	return fmt.Sprintf("%s-%s-%d", kind, c.run, c.seq.Add(1))
}

func (c *client) createH2H(ctx context.Context) (map[string]any, error) {
	body := fmt.Sprintf(`{"amount":"1000","payment_method":"bkash_agent","redirect_url":"https://shop.example/r","merchant_id":%q,"checkout_mode":"h2h","payer":{"phone":"01712345678"}}`, c.merchantID("h2h"))
	var d map[string]any
	return d, c.call(ctx, "POST", "/v1/deposits", body, true, http.StatusCreated, &d)
}

// scenario is one measured operation.
type scenario struct {
	// prepare runs before the clock starts.
	prepare func(ctx context.Context, c *client, workers int) error
	op      func(ctx context.Context, c *client, worker, i int) error
}

var scenarioByName = map[string]scenario{
	"redirect-create": {op: func(ctx context.Context, c *client, _, _ int) error {
		body := fmt.Sprintf(`{"amount":"500","payment_method":"bkash","redirect_url":"https://shop.example/r","merchant_id":%q,"metadata":{"order":"A-1"}}`, c.merchantID("r"))
		return c.call(ctx, "POST", "/v1/deposits", body, false, http.StatusOK, nil)
	}},
	"h2h-create": {op: func(ctx context.Context, c *client, _, _ int) error {
		_, err := c.createH2H(ctx)
		return err
	}},
	"h2h-get": {
		prepare: func(ctx context.Context, c *client, workers int) error {
			for range max(workers, 64) {
				d, err := c.createH2H(ctx)
				if err != nil {
					return err
				}
				c.mu.Lock()
				c.deposits = append(c.deposits, d["id"].(string))
				c.mu.Unlock()
			}
			return nil
		},
		op: func(ctx context.Context, c *client, worker, i int) error {
			id := c.deposits[(worker*7919+i)%len(c.deposits)]
			return c.call(ctx, "GET", "/v1/deposits/"+id, "", true, http.StatusOK, nil)
		},
	},
	// verify measures whole H2H deposits through to succeeded: create,
	// sandbox payment, submitted transaction ID, then polling (every -poll, 2 ms
	// by default) until the
	// worker has looked the payment up, credited the ledger and written
	// the event. Its rate is deposits completed per second.
	"verify": {op: func(ctx context.Context, c *client, worker, i int) error {
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
		id := d["id"].(string)
		recipient := d["next_action"].(map[string]any)["recipient"].(map[string]any)["value"].(string)
		tx := fmt.Sprintf("B%s%d", c.run[len(c.run)-9:], c.seq.Add(1))
		pay := fmt.Sprintf(`{"channel":"bkash","transaction_id":%q,"payer_phone":"01712345678","recipient_phone":%q,"amount":"1000","status":"completed"}`, tx, recipient)
		if err := c.call(ctx, "POST", "/sandbox/payments", pay, false, http.StatusCreated, nil); err != nil {
			return err
		}
		lap(&c.phases.pay)
		if err := c.call(ctx, "POST", "/v1/deposits/"+id+"/verify", fmt.Sprintf(`{"provider_transaction_id":%q}`, tx), true, http.StatusAccepted, nil); err != nil {
			return err
		}
		lap(&c.phases.submit)
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(c.poll) {
			var got struct{ Status string }
			c.phases.polls.Add(1)
			if err := c.call(ctx, "GET", "/v1/deposits/"+id, "", true, http.StatusOK, &got); err != nil {
				return err
			}
			if got.Status == "succeeded" {
				lap(&c.phases.wait)
				c.phases.n.Add(1)
				return nil
			}
			if got.Status != "processing" && got.Status != "pending" {
				return fmt.Errorf("deposit %s ended %s", id, got.Status)
			}
		}
		return fmt.Errorf("deposit %s not verified within 30 s", id)
	}},
	"withdraw-create": {op: func(ctx context.Context, c *client, _, _ int) error {
		body := fmt.Sprintf(`{"amount":"100","phone":"01712345678","payment_method":"bkash","merchant_id":%q}`, c.merchantID("w"))
		return c.call(ctx, "POST", "/v1/withdraws", body, false, http.StatusCreated, nil)
	}},
}
