package transport_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	payd "github.com/payd-engine/payd"
	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydtest"
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

// webhookHarness is a harness whose webhooks may reach loopback receivers.
func webhookHarness(t *testing.T) *harness {
	h := newHarness(t)
	h.rebuild(transport.NewWebhookClient(true))
	return h
}

// rebuild rewires the app over the same store with another webhook client.
func (h *harness) rebuild(client engine.WebhookClient) {
	h.t.Helper()
	h.Rebuild(func(c *payd.Config) { c.Webhooks = client })
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
	rcv := paydtest.NewReceiver(t, nil)
	_, secret := h.addEndpoint(org, rcv.URL+"/hooks")

	dep := h.CreateH2H(org, h2h(kv{"merchant_id", `"w1"`}, kv{"metadata", `{"order":"A<1>","n":1.50}`}))
	id := str(dep.JSON, "id")
	h.SandboxPay(org, `{"channel":"bkash","transaction_id":"WHTX1","payer_phone":"01712345678","recipient_phone":"01811111111","amount":"500","status":"completed"}`)
	h.Verify(org, id, `{"provider_transaction_id":"WHTX1"}`)
	h.Work()
	h.Fund(org, "1000")
	wd := h.Do(org, request{Path: "/api/v1/withdraws", APIKey: org.APIKey, Body: withdrawal(kv{"merchant_id", `"w-out"`})})
	h.Work()
	h.Clock.Add(5 * time.Second)
	h.Work()
	h.deliver()

	got := rcv.Deliveries()
	types := []string{}
	for _, d := range got {
		if !standardWebhooksVerify(secret, d.Header, d.Body) {
			t.Fatalf("delivery does not verify: %v %s", d.Header, d.Body)
		}
		var ev struct {
			ID, Type, Timestamp string
			Data                json.RawMessage
		}
		if err := json.Unmarshal(d.Body, &ev); err != nil {
			t.Fatal(err)
		}
		if d.Header.Get("webhook-id") != ev.ID || !strings.HasPrefix(ev.ID, "evt_") || d.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("headers %v for event %s", d.Header, ev.ID)
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
	if n := h.deliver(); n != 0 || len(rcv.Deliveries()) != 3 {
		t.Fatalf("redelivered %d", n)
	}
}

func TestWebhookRetries(t *testing.T) {
	h := webhookHarness(t)
	org := h.NewOrg(engine.OrganizationSettings{})
	rcv := paydtest.NewReceiver(t, func(n int) (int, map[string]string) {
		if n < 3 {
			return 500, nil
		}
		return 204, nil
	})
	_, secret := h.addEndpoint(org, rcv.URL)
	h.Do(org, request{APIKey: org.APIKey, Body: redirect(kv{"merchant_id", `"r"`})})
	h.Clock.Add(30 * time.Minute) // the redirect checkout expires: deposit.expired
	h.Work()

	h.deliver()
	if len(rcv.Deliveries()) != 1 {
		t.Fatal("no first post")
	}
	// The first retry comes 5 s later, give or take 10%.
	h.Clock.Add(4400 * time.Millisecond)
	if h.deliver(); len(rcv.Deliveries()) != 1 {
		t.Fatal("retried before 4.5 s")
	}
	h.Clock.Add(1200 * time.Millisecond)
	if h.deliver(); len(rcv.Deliveries()) != 2 {
		t.Fatal("no retry by 5.6 s")
	}
	// The second retry comes after 5 minutes, give or take 10%.
	h.Clock.Add(4*time.Minute + 29*time.Second)
	if h.deliver(); len(rcv.Deliveries()) != 2 {
		t.Fatal("second retry before 4.5 min")
	}
	h.Clock.Add(62 * time.Second)
	h.deliver()
	got := rcv.Deliveries()
	if len(got) != 3 {
		t.Fatalf("%d posts, want 3", len(got))
	}
	for i, d := range got {
		if !standardWebhooksVerify(secret, d.Header, d.Body) {
			t.Fatalf("post %d does not verify", i)
		}
		if d.Header.Get("webhook-id") != got[0].Header.Get("webhook-id") || string(d.Body) != string(got[0].Body) {
			t.Fatalf("post %d is not the same message", i)
		}
		if i > 0 && d.Header.Get("webhook-timestamp") == got[i-1].Header.Get("webhook-timestamp") {
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
	limited := paydtest.NewReceiver(t, func(n int) (int, map[string]string) {
		if n == 1 {
			return 429, map[string]string{"Retry-After": "120"}
		}
		return 200, nil
	})
	gone := paydtest.NewReceiver(t, func(int) (int, map[string]string) { return 410, nil })
	failing := paydtest.NewReceiver(t, func(int) (int, map[string]string) { return 503, nil })
	h.addEndpoint(org, limited.URL)
	goneID, _ := h.addEndpoint(org, gone.URL)
	failingID, _ := h.addEndpoint(org, failing.URL)
	h.Do(org, request{APIKey: org.APIKey, Body: redirect(kv{"merchant_id", `"x"`})})
	h.Clock.Add(30 * time.Minute)
	h.Work()
	h.deliver()

	// Retry-After is honoured exactly, not the 5 s schedule.
	h.Clock.Add(119 * time.Second)
	if h.deliver(); len(limited.Deliveries()) != 1 {
		t.Fatal("retried before Retry-After")
	}
	h.Clock.Add(time.Second)
	if h.deliver(); len(limited.Deliveries()) != 2 {
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
	if n := len(failing.Deliveries()); n != 8 {
		t.Fatalf("failing endpoint got %d posts, want 8", n)
	}
	if len(gone.Deliveries()) != 1 {
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
	failing.Respond(func(int) (int, map[string]string) { return 200, nil })
	if n, err := h.Engine.Redeliver(context.Background(), events[0].Event.ID, failingID); err != nil || n != 1 {
		t.Fatalf("redeliver: %d %v", n, err)
	}
	h.deliver()
	if n := len(failing.Deliveries()); n != 9 {
		t.Fatalf("after redelivery %d posts", n)
	}
}

// TestWebhookRestartMidRetries closes the store between two posts of a
// retry series and shows the event is delivered by the new process.
func TestWebhookRestartMidRetries(t *testing.T) {
	h := webhookHarness(t)
	org := h.NewOrg(engine.OrganizationSettings{})
	rcv := paydtest.NewReceiver(t, func(n int) (int, map[string]string) {
		if n == 1 {
			return 502, nil
		}
		return 200, nil
	})
	h.addEndpoint(org, rcv.URL)
	h.Do(org, request{APIKey: org.APIKey, Body: redirect(kv{"merchant_id", `"x"`})})
	h.Clock.Add(30 * time.Minute)
	h.Work()
	h.deliver()
	h.Restart()
	h.Clock.Add(10 * time.Second)
	h.deliver()
	if got := rcv.Deliveries(); len(got) != 2 || got[0].Header.Get("webhook-id") != got[1].Header.Get("webhook-id") {
		t.Fatalf("after restart: %d posts", len(got))
	}
}

// TestDeadReceiverBlocksNoOne: one endpoint answers 500 forever and
// another hangs; a third still gets every event at once.
func TestDeadReceiverBlocksNoOne(t *testing.T) {
	h := webhookHarness(t)
	org := h.NewOrg(engine.OrganizationSettings{})
	release := make(chan struct{})
	hanging := paydtest.NewReceiver(t, func(int) (int, map[string]string) { <-release; return 200, nil })
	t.Cleanup(func() { close(release) })
	dead := paydtest.NewReceiver(t, func(int) (int, map[string]string) { return 500, nil })
	healthy := paydtest.NewReceiver(t, nil)
	h.addEndpoint(org, hanging.URL)
	h.addEndpoint(org, dead.URL)
	h.addEndpoint(org, healthy.URL)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.Engine.Run(ctx) }()
	for i := range 5 {
		h.Do(org, request{APIKey: org.APIKey, Body: redirect(kv{"merchant_id", `"m` + strconv.Itoa(i) + `"`})})
	}
	h.Clock.Add(30 * time.Minute)
	deadline := time.Now().Add(10 * time.Second)
	for len(healthy.Deliveries()) < 5 && time.Now().Before(deadline) {
		h.Clock.Add(time.Second) // the poll timer: expiry, then deliveries
		time.Sleep(10 * time.Millisecond)
	}
	if n := len(healthy.Deliveries()); n != 5 {
		t.Fatalf("the healthy endpoint got %d of 5 events while another hung", n)
	}
	if len(dead.Deliveries()) == 0 || len(hanging.Deliveries()) == 0 {
		t.Fatal("the failing endpoints were not tried")
	}
	cancel()
	release <- struct{}{}
	<-done
}

func TestWebhookDestinationsRefused(t *testing.T) {
	local := paydtest.NewReceiver(t, nil)
	port := local.URL[strings.LastIndex(local.URL, ":")+1:]
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
	if n := len(local.Deliveries()); n != 0 {
		t.Fatalf("a refused destination received %d posts", n)
	}
	req.URL = local.URL
	if res := transport.NewWebhookClient(true).Deliver(context.Background(), req); res.StatusCode != 200 {
		t.Fatalf("with --webhook-allow-private: %+v", res)
	}
	// Redirects are not followed: a 302 is a failed post, and its target
	// never hears of it.
	target := paydtest.NewReceiver(t, nil)
	redirecting := paydtest.NewReceiver(t, func(int) (int, map[string]string) { return 302, map[string]string{"Location": target.URL} })
	req.URL = redirecting.URL
	if res := transport.NewWebhookClient(true).Deliver(context.Background(), req); res.StatusCode != 302 || len(target.Deliveries()) != 0 {
		t.Fatalf("redirect: %+v, target got %d", res, len(target.Deliveries()))
	}
}

func TestWebhookSecretRotation(t *testing.T) {
	h := webhookHarness(t)
	org := h.NewOrg(engine.OrganizationSettings{})
	rcv := paydtest.NewReceiver(t, nil)
	epID, old := h.addEndpoint(org, rcv.URL)
	fresh, err := h.Engine.RotateWebhookSecret(context.Background(), epID)
	if err != nil {
		t.Fatal(err)
	}
	h.Do(org, request{APIKey: org.APIKey, Body: redirect(kv{"merchant_id", `"a"`})})
	h.Clock.Add(30 * time.Minute)
	h.Work()
	h.deliver()
	d := rcv.Deliveries()[0]
	if !standardWebhooksVerify(old, d.Header, d.Body) || !standardWebhooksVerify(fresh, d.Header, d.Body) || len(strings.Fields(d.Header.Get("webhook-signature"))) != 2 {
		t.Fatalf("during the rotation both secrets must verify: %v", d.Header)
	}
	h.Clock.Add(24 * time.Hour)
	h.Do(org, request{APIKey: org.APIKey, Body: redirect(kv{"merchant_id", `"b"`})})
	h.Clock.Add(30 * time.Minute)
	h.Work()
	h.deliver()
	d = rcv.Deliveries()[1]
	if standardWebhooksVerify(old, d.Header, d.Body) || !standardWebhooksVerify(fresh, d.Header, d.Body) {
		t.Fatal("after the grace only the new secret may verify")
	}
}
