package httpsuite

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/payd-engine/payd/transport/client"
	"github.com/payd-engine/payd/transport/webhook"
)

// delivery is one webhook post the receiver got.
type delivery struct {
	header http.Header
	body   []byte
	at     time.Time
}

// receiver is a webhook endpoint in this process that records every post
// and answers 200.
type receiver struct {
	url string
	srv *http.Server

	mu  sync.Mutex
	got []delivery
}

func (s *suite) startReceiver(t T) *receiver {
	t.Helper()
	addr := s.target.WebhookListenAddr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("webhook receiver: %v", err)
	}
	path := "/payd-httpsuite/" + s.run
	r := &receiver{url: "http://" + ln.Addr().String() + path}
	if s.target.WebhookURL != "" {
		r.url = s.target.WebhookURL
	}
	r.srv = &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
		r.mu.Lock()
		r.got = append(r.got, delivery{req.Header.Clone(), body, time.Now()})
		r.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	})}
	go func() { _ = r.srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = r.srv.Shutdown(ctx)
	})
	return r
}

func (r *receiver) deliveries() []delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]delivery(nil), r.got...)
}

// checkWebhooks: the events of a deposit and a payout reach a registered
// endpoint, each signed with the Standard Webhooks scheme under the
// endpoint's secret, with data equal to the resource at its status
// endpoint.
func (s *suite) checkWebhooks(t T) {
	if !s.target.Webhooks {
		t.Skipf("Target.Webhooks is off: the deployment is not known to reach a receiver in this process " +
			"(a reference server needs --webhook-allow-private for a loopback one; set -webhooks / --webhooks to check)")
	}
	s.needSandbox(t)
	rcv := s.startReceiver(t)
	w := s.newOrg(t, "w", OrgOptions{H2H: true, Withdrawals: true}, [2]string{"bkash", "cash_out"})
	secret, err := s.target.Hooks.AddWebhookEndpoint(t.Context(), w.ID, rcv.url)
	if err != nil {
		t.Fatalf("add webhook endpoint %s: %v", rcv.url, err)
	}
	if key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_")); !strings.HasPrefix(secret, "whsec_") || err != nil || len(key) < 24 {
		t.Errorf("endpoint secret is not whsec_ and the standard base64 of at least 24 bytes")
	}
	if err := s.target.Hooks.AdjustBalance(t.Context(), w.ID, "1000", "httpsuite webhooks"); err != nil {
		t.Fatalf("adjust balance: %v", err)
	}

	// A deposit that succeeds.
	dep := s.createH2H(t, w, h2hBody("500", "bkash_agent", s.mid("hook-deposit"), "01712345678", metadataSent))
	depID := gets(dep, "id")
	tx := txID()
	s.pay(t, w, dep, tx, "01712345678", nil)
	if res := s.verify(t, w, depID, tx); res.status != http.StatusAccepted {
		t.Fatalf("submit %s: got %s, want 202", tx, res)
	}
	if d := s.waitDeposit(t, w, depID); d.Status != client.StatusSucceeded {
		t.Fatalf("deposit %s ended %s, want succeeded", depID, d.Status)
	}

	// A payout that succeeds.
	res := s.do(t, request{method: http.MethodPost, path: "/v1/withdraws", org: w,
		body: []byte(withdrawalBody("200", "01812345678", "bkash", s.mid("hook-withdrawal"), `{"payout":1}`))})
	expectStatus(t, "create withdrawal", res, http.StatusCreated)
	wdID := gets(res.json, "id")
	if err := w.cli.SandboxSettleWithdrawal(t.Context(), wdID, "succeeded"); err != nil {
		t.Fatalf("settle %s: %v", wdID, err)
	}
	if wd, err := w.cli.WaitForWithdrawal(t.Context(), wdID, s.wait); err != nil || wd.Status != client.WithdrawalSucceeded {
		t.Fatalf("withdrawal %s: %v, err %v; want succeeded", wdID, wd, err)
	}

	// Wait for the three events.
	want := []string{"deposit.succeeded " + depID, "withdraw.created " + wdID, "withdraw.succeeded " + wdID}
	deadline := time.Now().Add(s.target.WaitTimeout)
	var got []delivery
	for {
		got = rcv.deliveries()
		seen := map[string]bool{}
		for _, d := range got {
			v := decodeJSON(d.body)
			seen[gets(v, "type")+" "+gets(v, "data", "id")] = true
		}
		missing := []string{}
		for _, k := range want {
			if !seen[k] {
				missing = append(missing, k)
			}
		}
		if len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s the receiver got %d deliveries but not %v", s.target.WaitTimeout, len(got), missing)
		}
		time.Sleep(s.target.PollInterval)
	}

	// Every delivery verifies, and its data is the resource.
	current := map[string]map[string]any{
		depID: s.getDeposit(t, w, depID),
	}
	res = s.do(t, request{method: http.MethodGet, path: "/v1/withdraws/" + wdID, org: w})
	current[wdID] = checkShape(t, "GET withdrawal", res.json, withdrawalSchema)
	other := webhook.NewSecret()
	bodies := map[string][]byte{}
	for i, d := range got {
		what := fmt.Sprintf("delivery %d (%s)", i+1, d.header.Get(webhook.HeaderID))
		if err := webhook.Verify(secret, d.header, d.body, d.at); err != nil {
			t.Errorf("%s: Standard Webhooks verification failed: %v", what, err)
			continue
		}
		if err := webhook.Verify(other, d.header, d.body, d.at); !errors.Is(err, webhook.ErrNoMatch) {
			t.Errorf("%s: verifies under an unrelated secret too (%v)", what, err)
		}
		for _, sig := range strings.Fields(d.header.Get(webhook.HeaderSignature)) {
			if !strings.HasPrefix(sig, "v1,") {
				t.Errorf("%s: signature %q is not v1,<base64>", what, sig)
			}
		}
		if ts, err := strconv.ParseInt(d.header.Get(webhook.HeaderTimestamp), 10, 64); err != nil || d.at.Sub(time.Unix(ts, 0)).Abs() > time.Minute {
			t.Errorf("%s: webhook-timestamp %q is not the Unix time of the post", what, d.header.Get(webhook.HeaderTimestamp))
		}
		ev := checkShape(t, what, decodeJSON(d.body), eventSchema)
		if ev == nil {
			continue
		}
		id := d.header.Get(webhook.HeaderID)
		if gets(ev, "id") != id {
			t.Errorf("%s: body id %q differs from webhook-id %q", what, gets(ev, "id"), id)
		}
		if prev, ok := bodies[id]; ok && string(prev) != string(d.body) {
			t.Errorf("%s: a redelivery of %s carries another body", what, id)
		}
		bodies[id] = d.body
		typ, data := gets(ev, "type"), ev["data"]
		resource := current[gets(data, "id")]
		if resource == nil {
			t.Errorf("%s: %s for %s, a resource of no check here (another organization's?)", what, typ, gets(data, "id"))
			continue
		}
		switch {
		case strings.HasPrefix(typ, "deposit."):
			checkDeposit(t, what+" data", data, true)
		default:
			checkShape(t, what+" data", data, withdrawalSchema)
		}
		if typ == "withdraw.created" {
			// The withdrawal as it was at creation: processing.
			expect(t, what+" data.status", gets(data, "status"), "processing")
			if d := diffKeys(data, resource); len(d) != 1 || d[0] != "status" {
				t.Errorf("%s: data differs from GET /v1/withdraws/%s in %v, want only status", what, wdID, d)
			}
			continue
		}
		if !sameJSON(data, resource) {
			t.Errorf("%s: %s data differs from the status endpoint's resource in %v", what, typ, diffKeys(data, resource))
		}
	}
	t.Logf("%d deliveries of %d events checked", len(got), len(bodies))
	if !sameJSON(current[depID]["metadata"], decodeJSON([]byte(metadataSent))) {
		t.Errorf("deposit metadata %v is not the metadata sent", current[depID]["metadata"])
	}
}
