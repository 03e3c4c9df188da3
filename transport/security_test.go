package transport_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	payd "github.com/payd-engine/payd"
	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydtest"
	"github.com/payd-engine/payd/provider/sandbox"
	"github.com/payd-engine/payd/transport/signing"
)

// Security review (issue 15): each test here failed on the code before its
// fix. RELIABILITY.md lists them; those of the server binary and the
// admin CLI are in cmd/payd.

// TestSandboxScopedToOrganization: one organization's outage switch and its
// recorded payments reach no other organization.
func TestSandboxScopedToOrganization(t *testing.T) {
	h := newHarness(t, paydtest.WithSandbox(sandbox.Config{PayoutDelay: time.Second}))
	victim := h.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true), WithdrawalsEnabled: ptr(true)})
	attacker := h.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	h.AddWallet(victim, "bkash", "cash_out", "01811111111", "Agent")
	h.Fund(victim, "1000")

	if res := h.Do(attacker, request{Path: "/api/sandbox/outage", APIKey: attacker.APIKey, Body: `{"enabled":true}`}); res.Status != 200 {
		t.Fatalf("outage: %d %s", res.Status, res.Body)
	}
	// The victim's lookups and payouts carry on through the attacker's outage.
	dep := str(h.CreateH2H(victim, h2h(kv{"merchant_id", `"scoped-1"`})).JSON, "id")
	if res := h.SandboxPay(victim, `{"channel":"bkash","transaction_id":"OWN1","payer_phone":"01712345678","recipient_phone":"01811111111","amount":"500","status":"completed"}`); res.Status != 201 {
		t.Fatalf("victim's payment: %d %s", res.Status, res.Body)
	}
	h.Verify(victim, dep, `{"provider_transaction_id":"OWN1"}`)
	wd := h.Do(victim, request{Path: "/api/v1/withdraws", APIKey: victim.APIKey, Body: withdrawal(kv{"amount", `"100"`})})
	if wd.Status != 201 {
		t.Fatalf("withdrawal: %d %s", wd.Status, wd.Body)
	}
	h.Work()
	h.Clock.Add(5 * time.Second)
	h.Work()
	assertJSONField(t, h.GetDeposit(victim, dep, true).Body, "status", `"succeeded"`)
	got := h.Do(victim, request{Method: "GET", Path: "/api/v1/withdraws/" + str(wd.JSON, "id"), APIKey: victim.APIKey})
	assertJSONField(t, got.Body, "status", `"succeeded"`)

	// A payment the attacker records proves nothing to the victim's deposit,
	// and does not stop the victim recording the same ID in its own sandbox.
	dep2 := str(h.CreateH2H(victim, h2h(kv{"merchant_id", `"scoped-2"`})).JSON, "id")
	if res := h.SandboxPay(attacker, `{"channel":"bkash","transaction_id":"THEIRS1","payer_phone":"01712345678","recipient_phone":"01811111111","amount":"500","status":"completed"}`); res.Status != 201 {
		t.Fatalf("attacker's payment: %d %s", res.Status, res.Body)
	}
	h.Verify(victim, dep2, `{"provider_transaction_id":"THEIRS1"}`)
	h.Work()
	if res := h.GetDeposit(victim, dep2, true); str(res.JSON, "status") == "succeeded" {
		t.Fatalf("another organization's sandbox payment verified the deposit: %s", res.Body)
	}
	if res := h.SandboxPay(victim, `{"channel":"bkash","transaction_id":"THEIRS1","payer_phone":"01712345678","recipient_phone":"01811111111","amount":"1","status":"completed"}`); res.Status != 201 {
		t.Fatalf("the victim's own record of an ID another organization recorded: %d %s", res.Status, res.Body)
	}

	// The attacker's own outage still holds for the attacker.
	h.AddWallet(attacker, "bkash", "cash_out", "01822222222", "Agent")
	adep := str(h.CreateH2H(attacker, h2h(kv{"merchant_id", `"scoped-3"`})).JSON, "id")
	h.SandboxPay(attacker, `{"channel":"bkash","transaction_id":"THEIRS2","payer_phone":"01712345678","recipient_phone":"01822222222","amount":"500","status":"completed"}`)
	if res := h.Verify(attacker, adep, `{"provider_transaction_id":"THEIRS2"}`); res.Status != 202 {
		t.Fatalf("attacker's verify: %d %s", res.Status, res.Body)
	}
	h.Work()
	assertJSONField(t, h.GetDeposit(attacker, adep, true).Body, "status", `"processing"`)
}

// TestRepeatedCredentialHeadersRefused: a request with two values of a
// credential header is refused in the envelope, whichever value is valid.
func TestRepeatedCredentialHeadersRefused(t *testing.T) {
	h := newHarness(t)
	org := h.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	other := h.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	h.AddWallet(org, "bkash", "cash_out", "01811111111", "Agent")
	refused := func(name string, res *response) {
		t.Helper()
		if (res.Status != 400 && res.Status != 401) || res.ErrorCode() == "" {
			t.Errorf("%s: %d %s, want 400 or 401 in the envelope", name, res.Status, res.Body)
		}
	}
	bearer := func(key string) string { return "Bearer " + key }
	for _, keys := range [][]string{{org.APIKey, other.APIKey}, {org.APIKey, "nonsense"}, {org.APIKey, org.APIKey}} {
		refused("two Authorization headers", h.SendHeaders("GET", "/api/v1/balance", "", http.Header{"Authorization": {bearer(keys[0]), bearer(keys[1])}}))
	}

	create := h2h(kv{"merchant_id", `"dup-headers"`})
	signed := func() http.Header {
		ts := signing.Timestamp(h.Clock.Now())
		return http.Header{
			"Authorization":         {bearer(org.APIKey)},
			signing.TimestampHeader: {ts},
			signing.SignatureHeader: {signing.Sign([]byte(org.Secret), ts, "POST", "/api/v1/deposits", []byte(create))},
		}
	}
	hdr := signed()
	hdr[signing.SignatureHeader] = append(hdr[signing.SignatureHeader], "v1,bm9uc2Vuc2U=")
	refused("two signatures", h.SendHeaders("POST", "/api/v1/deposits", create, hdr))
	hdr = signed()
	hdr[signing.TimestampHeader] = append(hdr[signing.TimestampHeader], "1")
	refused("two timestamps", h.SendHeaders("POST", "/api/v1/deposits", create, hdr))
	// Nothing was created by the refused requests; the well-formed one is.
	if res := h.SendHeaders("POST", "/api/v1/deposits", create, signed()); res.Status != 201 {
		t.Fatalf("the same create with each header once: %d %s", res.Status, res.Body)
	}
}

// TestRepeatedDeviceTokenRefused: the device endpoints refuse two tokens.
func TestRepeatedDeviceTokenRefused(t *testing.T) {
	h := newInboxHarness(t)
	org := h.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	wallet := h.AddWallet(org, "bkash", "cash_out", "01811111111", "Agent")
	token := h.addDevice(org, wallet.ID)
	for _, second := range []string{"payd_dev_nonsense", token} {
		res := h.SendHeaders("POST", "/api/v1/devices/heartbeat", "", http.Header{"Authorization": {"Bearer " + token, "Bearer " + second}})
		if (res.Status != 400 && res.Status != 401) || res.ErrorCode() == "" {
			t.Errorf("two device tokens: %d %s, want 400 or 401 in the envelope", res.Status, res.Body)
		}
	}
	if res := h.SendHeaders("POST", "/api/v1/devices/heartbeat", "", http.Header{"Authorization": {"Bearer " + token}}); res.Status != 200 {
		t.Fatalf("one token: %d %s", res.Status, res.Body)
	}
}

// TestOversizedBodyWithConnectionCloseGets413: a client that sends more
// than 64 KiB and says Connection: close reads the whole 413, not a reset,
// whether the excess fits in the socket buffers or not, and so does one
// refused before its body is read.
func TestOversizedBodyWithConnectionCloseGets413(t *testing.T) {
	h := newHarness(t)
	org := h.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	addr := strings.TrimPrefix(h.URL, "http://")
	for _, c := range []struct {
		path, apiKey string
		size         int
		wantStatus   string
	}{
		{"/api/v1/deposits", org.APIKey, 70 << 10, "413"},
		{"/api/v1/deposits", org.APIKey, 4 << 20, "413"},
		{"/api/sandbox/payments", org.APIKey, 4 << 20, "413"},
		{"/api/v1/deposits", "nonsense", 4 << 20, "401"},
	} {
		for range 3 { // a reset is a race the client loses only sometimes
			status, answer, err := rawPost(addr, c.path, c.apiKey, c.size)
			if err != nil {
				t.Fatalf("%s with %d bytes: %v after reading %q", c.path, c.size, err, answer)
			}
			if status != c.wantStatus || !strings.Contains(answer, `{"error":{"code":`) {
				t.Fatalf("%s with %d bytes: status %s, answer %q", c.path, c.size, status, answer)
			}
		}
	}
}

// rawPost sends a JSON body of size bytes over a TCP connection of its own,
// saying Connection: close, and reads the answer to its end.
func rawPost(addr, path, apiKey string, size int) (status, answer string, err error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return "", "", err
	}
	defer conn.Close()
	body := append([]byte(`{"metadata":{"pad":"`), bytes.Repeat([]byte("a"), size)...)
	head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n",
		path, addr, apiKey, len(body))
	go func() { // the server stops reading: the rest of the write may fail
		if _, err := conn.Write([]byte(head)); err == nil {
			conn.Write(body)
		}
	}()
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	got, err := io.ReadAll(conn)
	answer = string(got)
	if err != nil {
		return "", answer, err
	}
	line, _, _ := strings.Cut(answer, "\r\n")
	if f := strings.Fields(line); len(f) > 1 {
		status = f[1]
	}
	return status, answer, nil
}

// TestCheckoutTokenNotInAccessLog: a checkout token acts on its deposit's
// checkout, so the access log shows no more of it than a hint.
func TestCheckoutTokenNotInAccessLog(t *testing.T) {
	var logs paydtest.SyncBuffer
	h := newHarness(t, func(c *payd.Config) {
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	org := h.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	h.AddWallet(org, "bkash", "cash_out", "01811111111", "Agent")
	id := str(h.CreateH2H(org, h2h(kv{"merchant_id", `"log-1"`})).JSON, "id")
	token := h.checkoutToken(org, id)
	checkoutGet(t, h.URL+"/checkout/"+token, "")
	checkoutPost(t, h.URL+"/checkout/"+token+"/verify?lang=en", url.Values{"transaction_id": {"NOPE1"}})
	checkoutPost(t, h.URL+"/checkout/"+token+"/pay", url.Values{"payer_phone": {"01712345678"}})
	out := logs.String()
	if strings.Contains(out, token) || strings.Contains(out, token[:16]) {
		t.Fatalf("the checkout token is in the log:\n%s", out)
	}
	for _, want := range []string{"path=/checkout/" + token[:4] + "…/verify", "path=/checkout/" + token[:4] + "…/pay", "status=303"} {
		if !strings.Contains(out, want) {
			t.Errorf("the access log has no %q:\n%s", want, out)
		}
	}
}

// TestWebhookLastErrorRedacted: a failing delivery's stored error names
// the endpoint without the query and fragment that may carry a receiver's
// token, as the audit log does.
func TestWebhookLastErrorRedacted(t *testing.T) {
	h := webhookHarness(t)
	org := h.NewOrg(engine.OrganizationSettings{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close() // nothing listens there: every post fails to connect
	const secret = "s3cret-receiver-token"
	h.addEndpoint(org, "http://"+dead+"/hook?token="+secret+"#"+secret)
	h.Do(org, request{APIKey: org.APIKey, Body: redirect(kv{"merchant_id", `"redact-1"`})})
	h.Clock.Add(30 * time.Minute)
	h.Work()
	h.deliver()
	events, err := h.Engine.ListEventDeliveries(context.Background(), org.ID, 0)
	if err != nil || len(events) != 1 || len(events[0].Deliveries) != 1 {
		t.Fatalf("deliveries: %+v %v", events, err)
	}
	d := events[0].Deliveries[0]
	texts := []string{d.LastError}
	for _, p := range d.Posts {
		texts = append(texts, p.Error)
	}
	for _, text := range texts {
		if strings.Contains(text, secret) {
			t.Errorf("stored error holds the URL's token: %q", text)
		}
	}
	if !strings.Contains(d.LastError, "http://"+dead+"/hook") {
		t.Errorf("stored error does not name the endpoint: %q", d.LastError)
	}
}
