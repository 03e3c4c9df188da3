package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydserver"
	"github.com/payd-engine/payd/transport"
)

// standardWebhooksVerify is an independent implementation of the Standard
// Webhooks scheme, written from the specification's text rather than from
// payd's code: the signed content is "{msg_id}.{timestamp}.{payload}", the
// key is the base64-decoded part of the secret after "whsec_", the
// signature is base64(HMAC-SHA256), and the header holds space-delimited
// "v1,<sig>" entries, any of which may match.
func standardWebhooksVerify(secret string, h http.Header, payload []byte) bool {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return false
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(h.Get("webhook-id") + "." + h.Get("webhook-timestamp") + "." + string(payload)))
	expected := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	for _, sig := range strings.Split(h.Get("webhook-signature"), " ") {
		if hmac.Equal([]byte(sig), []byte(expected)) {
			return true
		}
	}
	return false
}

func TestIndependentVerifierReproducesTheSpecVector(t *testing.T) {
	h := http.Header{}
	h.Set("webhook-id", "msg_p5jXN8AQM9LWM0D4loKWxJek")
	h.Set("webhook-timestamp", "1614265330")
	h.Set("webhook-signature", "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
	if !standardWebhooksVerify("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", h, []byte(`{"test": 2432232314}`)) {
		t.Fatal("the test's own verifier does not reproduce the published vector")
	}
}

// receiver is an httptest webhook endpoint that records what it gets and
// answers with the status its respond function picks.
type receiver struct {
	srv     *httptest.Server
	mu      sync.Mutex
	got     []received
	respond func(n int) (status int, header map[string]string)
}

type received struct {
	header http.Header
	body   []byte
}

func newReceiver(t *testing.T, respond func(n int) (int, map[string]string)) *receiver {
	r := &receiver{respond: respond}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, received{req.Header.Clone(), body})
		n := len(r.got)
		r.mu.Unlock()
		status, header := 200, map[string]string(nil)
		if r.respond != nil {
			status, header = r.respond(n)
		}
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) deliveries() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

// webhookHarness is a harness whose webhooks may reach loopback receivers.
func webhookHarness(t *testing.T) *harness {
	h := newHarnessWith(t, paydserver.SandboxSettings{})
	h.rebuild(transport.NewWebhookClient(true))
	return h
}

// rebuild rewires the app over the same store with another webhook client.
func (h *harness) rebuild(client engine.WebhookClient) {
	h.t.Helper()
	h.Rebuild(func(c *paydserver.Config) { c.Webhooks = client })
}

func (h *harness) addEndpoint(org *testOrg, url string) (string, string) {
	h.t.Helper()
	ep, secret, err := h.Engine.AddWebhookEndpoint(context.Background(), org.ID, url)
	if err != nil {
		h.t.Fatal(err)
	}
	return ep.ID, secret
}

func (h *harness) deliver() int {
	h.t.Helper()
	n, err := h.Engine.DeliverWebhooks(context.Background())
	if err != nil {
		h.t.Fatal(err)
	}
	return n
}

func TestWebhookDeliveries(t *testing.T) {
	h := webhookHarness(t)
	org := h.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true), WithdrawalsEnabled: ptr(true)})
	h.AddWallet(org, "bkash", "cash_out", "01811111111", "Agent")
	rcv := newReceiver(t, nil)
	_, secret := h.addEndpoint(org, rcv.srv.URL+"/hooks")

	dep := h.CreateH2H(org, h2h(kv{"merchant_id", `"w1"`}, kv{"metadata", `{"order":"A<1>","n":1.50}`}))
	id := str(dep.JSON, "id")
	h.sandboxPay(org, `{"channel":"bkash","transaction_id":"WHTX1","payer_phone":"01712345678","recipient_phone":"01811111111","amount":"500","status":"completed"}`)
	h.verify(org, id, `{"provider_transaction_id":"WHTX1"}`)
	h.work()
	h.fund(org, "1000")
	wd := h.Do(org, request{Path: "/api/v1/withdraws", APIKey: org.APIKey, Body: withdrawal(kv{"merchant_id", `"w-out"`})})
	h.work()
	h.Clock.Add(5 * time.Second)
	h.work()
	h.deliver()

	got := rcv.deliveries()
	types := []string{}
	for _, d := range got {
		if !standardWebhooksVerify(secret, d.header, d.body) {
			t.Fatalf("delivery does not verify: %v %s", d.header, d.body)
		}
		var ev struct {
			ID, Type, Timestamp string
			Data                json.RawMessage
		}
		if err := json.Unmarshal(d.body, &ev); err != nil {
			t.Fatal(err)
		}
		if d.header.Get("webhook-id") != ev.ID || !strings.HasPrefix(ev.ID, "evt_") || d.header.Get("Content-Type") != "application/json" {
			t.Fatalf("headers %v for event %s", d.header, ev.ID)
		}
		if _, err := time.Parse(time.RFC3339, ev.Timestamp); err != nil {
			t.Fatalf("timestamp %q", ev.Timestamp)
		}
		types = append(types, ev.Type)
		switch ev.Type {
		case "deposit.succeeded":
			// data is the deposit exactly as its status endpoint shows it.
			now := strings.TrimSpace(string(h.GetDeposit(org, id, true).Body))
			if string(ev.Data) != now {
				t.Fatalf("deposit.succeeded data\n%s\nstatus endpoint\n%s", ev.Data, now)
			}
		case "withdraw.created":
			assertJSONField(t, ev.Data, "status", `"processing"`)
			assertJSONField(t, ev.Data, "id", `"`+str(wd.JSON, "id")+`"`)
		case "withdraw.succeeded":
			assertJSONField(t, ev.Data, "status", `"succeeded"`)
		}
	}
	// Posts to one endpoint run concurrently, so arrival order is free
	// (Standard Webhooks promises none); each type must arrive once.
	sort.Strings(types)
	if strings.Join(types, ",") != "deposit.succeeded,withdraw.created,withdraw.succeeded" {
		t.Fatalf("event types %v", types)
	}
	// Nothing is delivered twice once acknowledged.
	if n := h.deliver(); n != 0 || len(rcv.deliveries()) != 3 {
		t.Fatalf("redelivered %d", n)
	}
}

func TestWebhookRetries(t *testing.T) {
	h := webhookHarness(t)
	org := h.NewOrg(engine.OrganizationSettings{})
	rcv := newReceiver(t, func(n int) (int, map[string]string) {
		if n < 3 {
			return 500, nil
		}
		return 204, nil
	})
	_, secret := h.addEndpoint(org, rcv.srv.URL)
	h.Do(org, request{APIKey: org.APIKey, Body: redirect(kv{"merchant_id", `"r"`})})
	h.Clock.Add(30 * time.Minute) // the redirect checkout expires: deposit.expired
	h.work()

	h.deliver()
	if len(rcv.deliveries()) != 1 {
		t.Fatal("no first post")
	}
	// The first retry comes 5 s later, give or take 10%.
	h.Clock.Add(4400 * time.Millisecond)
	if h.deliver(); len(rcv.deliveries()) != 1 {
		t.Fatal("retried before 4.5 s")
	}
	h.Clock.Add(1200 * time.Millisecond)
	if h.deliver(); len(rcv.deliveries()) != 2 {
		t.Fatal("no retry by 5.6 s")
	}
	// The second retry comes after 5 minutes, give or take 10%.
	h.Clock.Add(4*time.Minute + 29*time.Second)
	if h.deliver(); len(rcv.deliveries()) != 2 {
		t.Fatal("second retry before 4.5 min")
	}
	h.Clock.Add(62 * time.Second)
	h.deliver()
	got := rcv.deliveries()
	if len(got) != 3 {
		t.Fatalf("%d posts, want 3", len(got))
	}
	for i, d := range got {
		if !standardWebhooksVerify(secret, d.header, d.body) {
			t.Fatalf("post %d does not verify", i)
		}
		if d.header.Get("webhook-id") != got[0].header.Get("webhook-id") || string(d.body) != string(got[0].body) {
			t.Fatalf("post %d is not the same message", i)
		}
		if i > 0 && d.header.Get("webhook-timestamp") == got[i-1].header.Get("webhook-timestamp") {
			t.Fatalf("post %d reused the timestamp", i)
		}
	}
	events, err := h.Engine.ListEventDeliveries(context.Background(), org.ID, 0)
	if err != nil || len(events) != 1 || events[0].Deliveries[0].Status != "delivered" || len(events[0].Deliveries[0].Posts) != 3 {
		t.Fatalf("delivery record: %+v %v", events, err)
	}
}

func TestWebhookRetryAfterGoneAndExhaustion(t *testing.T) {
	h := webhookHarness(t)
	org := h.NewOrg(engine.OrganizationSettings{})
	limited := newReceiver(t, func(n int) (int, map[string]string) {
		if n == 1 {
			return 429, map[string]string{"Retry-After": "120"}
		}
		return 200, nil
	})
	gone := newReceiver(t, func(int) (int, map[string]string) { return 410, nil })
	failing := newReceiver(t, func(int) (int, map[string]string) { return 503, nil })
	h.addEndpoint(org, limited.srv.URL)
	goneID, _ := h.addEndpoint(org, gone.srv.URL)
	failingID, _ := h.addEndpoint(org, failing.srv.URL)
	h.Do(org, request{APIKey: org.APIKey, Body: redirect(kv{"merchant_id", `"x"`})})
	h.Clock.Add(30 * time.Minute)
	h.work()
	h.deliver()

	// Retry-After is honoured exactly, not the 5 s schedule.
	h.Clock.Add(119 * time.Second)
	if h.deliver(); len(limited.deliveries()) != 1 {
		t.Fatal("retried before Retry-After")
	}
	h.Clock.Add(time.Second)
	if h.deliver(); len(limited.deliveries()) != 2 {
		t.Fatal("not retried after Retry-After")
	}
	// 410 disables the endpoint at once.
	eps, _ := h.Engine.ListWebhookEndpoints(context.Background(), org.ID)
	for _, ep := range eps {
		if ep.ID == goneID && (ep.Enabled || !strings.Contains(ep.DisabledReason, "410")) {
			t.Fatalf("410 endpoint: %+v", ep)
		}
	}
	// The failing endpoint gets its eight posts over ~27.5 h, then the
	// delivery is exhausted and kept.
	for range 40 {
		h.Clock.Add(time.Hour)
		h.deliver()
	}
	if n := len(failing.deliveries()); n != 8 {
		t.Fatalf("failing endpoint got %d posts, want 8", n)
	}
	if len(gone.deliveries()) != 1 {
		t.Fatal("a disabled endpoint was posted to again")
	}
	events, _ := h.Engine.ListEventDeliveries(context.Background(), org.ID, 0)
	statuses := map[string]string{}
	for _, d := range events[0].Deliveries {
		statuses[d.EndpointID] = d.Status
	}
	if statuses[failingID] != "exhausted" || statuses[goneID] != "exhausted" {
		t.Fatalf("statuses %v", statuses)
	}
	// Manual redelivery queues it again.
	failing.respond = func(int) (int, map[string]string) { return 200, nil }
	if n, err := h.Engine.Redeliver(context.Background(), events[0].Event.ID, failingID); err != nil || n != 1 {
		t.Fatalf("redeliver: %d %v", n, err)
	}
	h.deliver()
	if n := len(failing.deliveries()); n != 9 {
		t.Fatalf("after redelivery %d posts", n)
	}
}

// TestWebhookRestartMidRetries closes the store between two posts of a
// retry series and shows the event is delivered by the new process.
func TestWebhookRestartMidRetries(t *testing.T) {
	h := webhookHarness(t)
	org := h.NewOrg(engine.OrganizationSettings{})
	rcv := newReceiver(t, func(n int) (int, map[string]string) {
		if n == 1 {
			return 502, nil
		}
		return 200, nil
	})
	h.addEndpoint(org, rcv.srv.URL)
	h.Do(org, request{APIKey: org.APIKey, Body: redirect(kv{"merchant_id", `"x"`})})
	h.Clock.Add(30 * time.Minute)
	h.work()
	h.deliver()
	h.Restart()
	h.Clock.Add(10 * time.Second)
	h.deliver()
	if got := rcv.deliveries(); len(got) != 2 || got[0].header.Get("webhook-id") != got[1].header.Get("webhook-id") {
		t.Fatalf("after restart: %d posts", len(got))
	}
}

// TestDeadReceiverBlocksNoOne: one endpoint answers 500 forever and
// another hangs; a third still gets every event at once.
func TestDeadReceiverBlocksNoOne(t *testing.T) {
	h := webhookHarness(t)
	org := h.NewOrg(engine.OrganizationSettings{})
	release := make(chan struct{})
	hanging := newReceiver(t, func(int) (int, map[string]string) { <-release; return 200, nil })
	t.Cleanup(func() { close(release) })
	dead := newReceiver(t, func(int) (int, map[string]string) { return 500, nil })
	healthy := newReceiver(t, nil)
	h.addEndpoint(org, hanging.srv.URL)
	h.addEndpoint(org, dead.srv.URL)
	h.addEndpoint(org, healthy.srv.URL)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.Engine.Run(ctx) }()
	for i := range 5 {
		h.Do(org, request{APIKey: org.APIKey, Body: redirect(kv{"merchant_id", `"m` + strconv.Itoa(i) + `"`})})
	}
	h.Clock.Add(30 * time.Minute)
	deadline := time.Now().Add(10 * time.Second)
	for len(healthy.deliveries()) < 5 && time.Now().Before(deadline) {
		h.Clock.Add(time.Second) // the poll timer: expiry, then deliveries
		time.Sleep(10 * time.Millisecond)
	}
	if n := len(healthy.deliveries()); n != 5 {
		t.Fatalf("the healthy endpoint got %d of 5 events while another hung", n)
	}
	if len(dead.deliveries()) == 0 || len(hanging.deliveries()) == 0 {
		t.Fatal("the failing endpoints were not tried")
	}
	cancel()
	release <- struct{}{}
	<-done
}

func TestWebhookDestinationsRefused(t *testing.T) {
	local := newReceiver(t, nil)
	port := local.srv.URL[strings.LastIndex(local.srv.URL, ":")+1:]
	refusing := transport.NewWebhookClient(false)
	req := engine.WebhookRequest{MessageID: "evt_1", Timestamp: time.Now(), Body: []byte("{}"), Secrets: []string{"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}}
	for _, url := range []string{
		"http://127.0.0.1:" + port + "/",
		"http://localhost:" + port + "/", // refused after DNS resolution
		"http://10.0.0.1/",
		"http://169.254.169.254/latest/meta-data/",
		"http://[::ffff:127.0.0.1]:" + port + "/",
		"http://[::1]:" + port + "/",
		"http://0.0.0.0:" + port + "/",
	} {
		req.URL = url
		res := refusing.Deliver(context.Background(), req)
		if res.Err == nil || !strings.Contains(res.Err.Error(), "destination refused") {
			t.Errorf("%s: %+v, want refused", url, res)
		}
	}
	if n := len(local.deliveries()); n != 0 {
		t.Fatalf("a refused destination received %d posts", n)
	}
	req.URL = local.srv.URL
	if res := transport.NewWebhookClient(true).Deliver(context.Background(), req); res.StatusCode != 200 {
		t.Fatalf("with --webhook-allow-private: %+v", res)
	}
	// Redirects are not followed: a 302 is a failed post, and its target
	// never hears of it.
	target := newReceiver(t, nil)
	redirecting := newReceiver(t, func(int) (int, map[string]string) { return 302, map[string]string{"Location": target.srv.URL} })
	req.URL = redirecting.srv.URL
	if res := transport.NewWebhookClient(true).Deliver(context.Background(), req); res.StatusCode != 302 || len(target.deliveries()) != 0 {
		t.Fatalf("redirect: %+v, target got %d", res, len(target.deliveries()))
	}
}

func TestWebhookSecretRotation(t *testing.T) {
	h := webhookHarness(t)
	org := h.NewOrg(engine.OrganizationSettings{})
	rcv := newReceiver(t, nil)
	epID, old := h.addEndpoint(org, rcv.srv.URL)
	fresh, err := h.Engine.RotateWebhookSecret(context.Background(), epID)
	if err != nil {
		t.Fatal(err)
	}
	h.Do(org, request{APIKey: org.APIKey, Body: redirect(kv{"merchant_id", `"a"`})})
	h.Clock.Add(30 * time.Minute)
	h.work()
	h.deliver()
	d := rcv.deliveries()[0]
	if !standardWebhooksVerify(old, d.header, d.body) || !standardWebhooksVerify(fresh, d.header, d.body) || len(strings.Fields(d.header.Get("webhook-signature"))) != 2 {
		t.Fatalf("during the rotation both secrets must verify: %v", d.header)
	}
	h.Clock.Add(24 * time.Hour)
	h.Do(org, request{APIKey: org.APIKey, Body: redirect(kv{"merchant_id", `"b"`})})
	h.Clock.Add(30 * time.Minute)
	h.work()
	h.deliver()
	d = rcv.deliveries()[1]
	if standardWebhooksVerify(old, d.header, d.body) || !standardWebhooksVerify(fresh, d.header, d.body) {
		t.Fatal("after the grace only the new secret may verify")
	}
}
