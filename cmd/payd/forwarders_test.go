package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	payd "github.com/payd-engine/payd"
	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydtest"
	"github.com/payd-engine/payd/provider/smsinbox"
)

// The off-the-shelf Android forwarders of issue 19, each posting its
// payload exactly as its source code builds it (the source is cited at
// each builder), end to end: the deposit the SMS proves is verified.

// forward is one raw post of a forwarder app.
type forward struct {
	path   string // under /api/v1/devices/
	query  url.Values
	header http.Header
	body   []byte
}

func (h *harness) forward(f forward) *response {
	h.t.Helper()
	u := h.URL + "/api/v1/devices/" + f.path
	if len(f.query) > 0 {
		u += "?" + f.query.Encode()
	}
	r, err := http.NewRequest(http.MethodPost, u, bytes.NewReader(f.body))
	if err != nil {
		h.t.Fatal(err)
	}
	for k, vs := range f.header {
		r.Header[k] = vs
	}
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		h.t.Fatal(err)
	}
	defer res.Body.Close()
	out := &response{Status: res.StatusCode, Header: res.Header}
	out.Body, _ = io.ReadAll(res.Body)
	_ = json.Unmarshal(out.Body, &out.JSON)
	return out
}

// adminErr runs an admin command that must fail and returns its error.
func (h *harness) adminErr(args ...string) string {
	h.t.Helper()
	var stdout, stderr bytes.Buffer
	args = append(append([]string{"admin"}, args...), "--db", filepath.Join(h.Dir, "payd.db"), "--json")
	err := run(context.Background(), args, &stdout, &stderr)
	if err == nil {
		h.t.Fatalf("payd %s succeeded: %s", strings.Join(args, " "), stdout.String())
	}
	return err.Error() + stderr.String()
}

// escapeJSONCommons is Apache Commons Text's StringEscapeUtils.escapeJson,
// which the JSON-template forwarder applies to %text%: it escapes "/" too.
func escapeJSONCommons(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, `/`, `\/`, "\n", `\n`, "\r", `\r`, "\t", `\t`).Replace(s)
}

// smsToURLBody is what Incoming SMS to URL forwarder
// (bogkonstantin/android_income_sms_gateway_webhook) posts with its default
// template, ForwardingConfig.getDefaultJsonTemplate, filled in by
// ForwardingConfig.prepareMessage: %from% as is, %text% through
// escapeJson, the stamps as bare epoch milliseconds, %sim% "sim1", "sim2"
// or "undetected" (SmsBroadcastReceiver.onReceive).
func smsToURLBody(from, text string, sent, received time.Time, sim string) []byte {
	return []byte("{\n  \"from\":\"" + from + "\",\n  \"text\":\"" + escapeJSONCommons(text) +
		"\",\n  \"sentStamp\":" + strconv.FormatInt(sent.UnixMilli(), 10) +
		",\n  \"receivedStamp\":" + strconv.FormatInt(received.UnixMilli(), 10) +
		",\n  \"sim\":\"" + sim + "\"\n}")
}

// smsToURLHeaders are the app's request headers: Request sets the content
// type; the user's headers JSON (default {"User-agent":"SMS Forwarder
// App"}, getDefaultJsonHeaders) adds the rest, here the device token.
func smsToURLHeaders(token string) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("User-agent", "SMS Forwarder App")
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	return h
}

// smsGatewayReceived is SMS Gateway for Android's (capcom6/android-sms-gateway)
// sms:received webhook: WebHookEventDTO (modules/webhooks/domain) around
// SmsEventPayload.SmsReceived (modules/webhooks/payload), built in
// modules/receiver/ReceiverService.kt and serialized by Gson (subclass
// fields first, nulls left out, dates as yyyy-MM-dd'T'HH:mm:ss.SSSXXX per
// extensions/GsonBuilder.kt).
func smsGatewayReceived(sender, text string, at time.Time, sim int) []byte {
	type payload struct {
		Message     string `json:"message"`
		ReceivedAt  string `json:"receivedAt"`
		MessageID   string `json:"messageId"`
		Sender      string `json:"sender"`
		Recipient   string `json:"recipient"`
		SimNumber   int    `json:"simNumber"`
		PhoneNumber string `json:"phoneNumber"`
	}
	b, _ := json.Marshal(struct {
		ID        string  `json:"id"`
		WebhookID string  `json:"webhookId"`
		Event     string  `json:"event"`
		DeviceID  string  `json:"deviceId"`
		Payload   payload `json:"payload"`
	}{"Vv1nU6R3pQwC0b8rZ2k9x", "payd-sms", "sms:received", "ffffffff9a2b3c4d5e6f7", payload{
		text, at.In(engine.Dhaka).Format("2006-01-02T15:04:05.000-07:00"), fmt.Sprintf("%x", len(text)*7919),
		sender, "+8801811111111", sim, sender,
	}})
	return b
}

// smsGatewayPing is its system:ping (modules/webhooks/EventsReceiver.kt:
// mapOf("health" to HealthResponse)).
func smsGatewayPing() []byte {
	return []byte(`{"id":"ZK0pG6sV1yH3aQ8mT5n2c","webhookId":"payd-ping","event":"system:ping","deviceId":"ffffffff9a2b3c4d5e6f7",` +
		`"payload":{"health":{"version":"1.40.0","releaseId":40000,"status":"pass","checks":{"battery:level":{"status":"pass","observedValue":87,"observedUnit":"percent","description":"Battery level in percent"}}}}}`)
}

// smsGatewaySign is PayloadSingingPlugin's signature: HMAC-SHA256 keyed
// with the signing key, of the body text followed by the Unix-seconds
// timestamp, in lowercase hex.
func smsGatewaySign(key string, body []byte, at time.Time) http.Header {
	ts := strconv.FormatInt(at.Unix(), 10)
	m := hmac.New(sha256.New, []byte(key))
	m.Write(body)
	m.Write([]byte(ts))
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "me.capcom.smsgateway/1.40.0")
	h.Set("X-Timestamp", ts)
	h.Set("X-Signature", hex.EncodeToString(m.Sum(nil)))
	return h
}

// smsForwarderSign is SmsForwarder's (pppscn/SmsForwarder,
// utils/sender/WebhookUtils.kt) timestamp and sign: Unix milliseconds, and
// the URL-encoded Base64 HMAC-SHA256 keyed with the secret of
// "timestamp\nsecret".
func smsForwarderSign(secret string, at time.Time) (ts, sign string) {
	ts = strconv.FormatInt(at.UnixMilli(), 10)
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts + "\n" + secret))
	return ts, url.QueryEscape(base64.StdEncoding.EncodeToString(m.Sum(nil)))
}

// smsForwarderForm is SmsForwarder's POST with the request parameters the
// guide (docs/forwarders/smsforwarder.md) sets,
//
//	from=[from]&org_content=[org_content]&timestamp=[timestamp]&sign=[sign]&card_slot=[card_slot]&received_at=[receive_time:yyyy-MM-dd'T'HH:mm:ssXXX]
//
// each value filled in raw and sent as a form (okhttp's FormBody, which
// encodes the already URL-encoded sign once more); card_slot is
// "SIM1_<label>", "SIM2_<label>" or "" (receiver/SmsReceiver.kt).
func smsForwarderForm(from, text, cardSlot string, at time.Time, ts, sign string) []byte {
	v := []string{
		"from=" + url.QueryEscape(from), "org_content=" + url.QueryEscape(text), "timestamp=" + ts,
		"sign=" + url.QueryEscape(sign), "card_slot=" + url.QueryEscape(cardSlot),
		"received_at=" + url.QueryEscape(at.In(engine.Dhaka).Format("2006-01-02T15:04:05-07:00")),
	}
	return []byte(strings.Join(v, "&"))
}

// smsForwarderJSON is the same with the guide's JSON template: values
// through escapeJson (Gson, which escapes = and ' as well), [from] raw.
func smsForwarderJSON(from, text, cardSlot string, at time.Time, ts, sign string) []byte {
	esc := func(s string) string {
		b, _ := json.Marshal(s)
		return strings.NewReplacer("=", `\u003d`, "'", `\u0027`).Replace(string(b[1 : len(b)-1]))
	}
	return []byte(`{"from":"` + from + `","org_content":"` + esc(text) + `","timestamp":"` + ts + `","sign":"` + sign +
		`","card_slot":"` + esc(cardSlot) + `","received_at":"` + at.In(engine.Dhaka).Format("2006-01-02T15:04:05-07:00") + `"}`)
}

// depositVerified creates a deposit of amount, submits trx for it after
// post forwarded its SMS, and reports whether it succeeded.
func depositVerified(t *testing.T, h *harness, org *paydtest.Org, wallet *engine.Wallet, merchantID, amount, trx string, post func()) {
	t.Helper()
	res := h.CreateH2H(org, h2h(kv{"merchant_id", `"` + merchantID + `"`}, kv{"amount", `"` + amount + `"`}))
	if res.Status != 201 || str(res.JSON, "next_action", "recipient", "value") != wallet.Phone {
		t.Fatalf("create %s: %d %s", merchantID, res.Status, res.Body)
	}
	id := str(res.JSON, "id")
	h.Clock.Add(time.Second)
	post()
	if v := h.Verify(org, id, `{"provider_transaction_id":"`+trx+`"}`); v.Status != 202 {
		t.Fatalf("verify %s: %d %s", merchantID, v.Status, v.Body)
	}
	h.Work()
	if s := str(h.GetDeposit(org, id, true).JSON, "status"); s != "succeeded" {
		last, _ := h.Inbox.ListSMS(context.Background(), smsinbox.ListSMSParams{OrganizationID: org.ID, Limit: 1})
		t.Fatalf("deposit %s proven by its forwarded SMS is %s; last SMS %+v", merchantID, s, last[0])
	}
}

// received asserts the one answer to a forwarded SMS.
func received(t *testing.T, what string, res *response) {
	t.Helper()
	if res.Status != 200 || string(res.Body) != `{"received":true}`+"\n" {
		t.Fatalf("%s: %d %s", what, res.Status, res.Body)
	}
}

// TestForwarderSMSToURL: Incoming SMS to URL forwarder, its default
// template, the token in its headers setting; no heartbeat: the device's
// silence of 2 h keeps its wallet live by its messages alone.
func TestForwarderSMSToURL(t *testing.T) {
	h := newInboxHarness(t)
	org := h.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	wallet := h.AddWallet(org, "bkash", "cash_out", "01811111111", "Agent")
	token := str(h.admin("device", "add", "--org", org.ID, "--wallet", wallet.ID, "--silence", "2h"), "token")
	h.admin("sms", "anchor", "--org", org.ID, "--wallet", wallet.ID, "--balance", "10000")
	post := func(m sms) {
		t.Helper()
		now := h.Clock.Now()
		received(t, "sms-to-url", h.forward(forward{path: "forwarders/sms-to-url", header: smsToURLHeaders(token),
			body: smsToURLBody(m.Sender, m.Body, now.Add(-3*time.Second), now, "sim1")}))
	}
	// The app sends no heartbeat: its first message, any message, is its
	// first report (the guide says to send the phone one).
	post(sms{Sender: "+8801999999999", Body: "hello from the shop owner"})
	depositVerified(t, h, org, wallet, "sms-to-url-1", "500", "BKA2000001", func() {
		post(cashOutSMS("500.00", "01712345678", "10,500.00", "BKA2000001", h.Clock.Now()))
	})
	// No heartbeat ever: the wallet stays in the pool for the device's 2 h
	// after its last message, then leaves it.
	h.Clock.Add(110 * time.Minute)
	if res := h.CreateH2H(org, h2h(kv{"merchant_id", `"live"`}, kv{"amount", `"100"`})); res.Status != 201 {
		t.Fatalf("110 min after the last message: %d %s", res.Status, res.Body)
	}
	h.Clock.Add(15 * time.Minute)
	if res := h.CreateH2H(org, h2h(kv{"merchant_id", `"silent"`}, kv{"amount", `"100"`})); res.Status != 503 {
		t.Fatalf("past the device's silence: %d %s", res.Status, res.Body)
	}
	// A message, any message, brings it back.
	post(sms{Sender: "+8801999999999", Body: "are you there?"})
	depositVerified(t, h, org, wallet, "sms-to-url-2", "700", "BKA2000002", func() {
		post(cashOutSMS("700.00", "01712345678", "11,200.00", "BKA2000002", h.Clock.Now()))
	})
}

// TestForwarderSMSGateway: SMS Gateway for Android, its webhooks signed
// with the device's signing secret, the token in the URL (webhooks carry
// no headers of the user's); system:ping is the heartbeat.
func TestForwarderSMSGateway(t *testing.T) {
	h := newInboxHarness(t)
	org := h.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	wallet := h.AddWallet(org, "bkash", "cash_out", "01811111111", "Agent")
	dev := h.admin("device", "add", "--org", org.ID, "--wallet", wallet.ID, "--signing-secret")
	token, key := str(dev, "token"), str(dev, "signing_secret")
	if key == "" {
		t.Fatalf("device add --signing-secret shows no secret: %v", dev)
	}
	q := url.Values{"token": {token}}
	ping := smsGatewayPing()
	if res := h.forward(forward{path: "forwarders/sms-gateway", query: q, header: smsGatewaySign(key, ping, h.Clock.Now()), body: ping}); res.Status != 200 || str(res.JSON, "live_until") == "" {
		t.Fatalf("system:ping: %d %s", res.Status, res.Body)
	}
	h.admin("sms", "anchor", "--org", org.ID, "--wallet", wallet.ID, "--balance", "10000")
	depositVerified(t, h, org, wallet, "sms-gateway-1", "500", "BKA3000001", func() {
		m := cashOutSMS("500.00", "01712345678", "10,500.00", "BKA3000001", h.Clock.Now())
		body := smsGatewayReceived(m.Sender, m.Body, h.Clock.Now(), 1)
		received(t, "sms:received", h.forward(forward{path: "forwarders/sms-gateway", query: q, header: smsGatewaySign(key, body, h.Clock.Now()), body: body}))
	})
}

// TestForwarderSmsForwarder: SmsForwarder's webhook as a form (token in
// the URL) and as JSON (token in its headers setting), signed.
func TestForwarderSmsForwarder(t *testing.T) {
	h := newInboxHarness(t)
	org := h.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	wallet := h.AddWallet(org, "bkash", "cash_out", "01811111111", "Agent")
	dev := h.admin("device", "add", "--org", org.ID, "--wallet", wallet.ID, "--signing-secret")
	token, secret := str(dev, "token"), str(dev, "signing_secret")
	h.admin("sms", "anchor", "--org", org.ID, "--wallet", wallet.ID, "--balance", "10000")
	// No heartbeat: a first message is its first report.
	ts, sign := smsForwarderSign(secret, h.Clock.Now())
	received(t, "first message", h.forward(forward{path: "forwarders/smsforwarder", query: url.Values{"token": {token}},
		header: http.Header{"Content-Type": {"application/x-www-form-urlencoded"}},
		body:   smsForwarderForm("+8801999999999", "hello", "SIM1_Robi", h.Clock.Now(), ts, sign)}))
	h.Clock.Add(time.Millisecond)
	depositVerified(t, h, org, wallet, "smsforwarder-form", "500", "BKA4000001", func() {
		m := cashOutSMS("500.00", "01712345678", "10,500.00", "BKA4000001", h.Clock.Now())
		ts, sign := smsForwarderSign(secret, h.Clock.Now())
		hd := http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}
		received(t, "form", h.forward(forward{path: "forwarders/smsforwarder", query: url.Values{"token": {token}}, header: hd,
			body: smsForwarderForm(m.Sender, m.Body, "SIM1_Robi", h.Clock.Now(), ts, sign)}))
	})
	depositVerified(t, h, org, wallet, "smsforwarder-json", "700", "BKA4000002", func() {
		m := cashOutSMS("700.00", "01712345678", "11,200.00", "BKA4000002", h.Clock.Now())
		ts, sign := smsForwarderSign(secret, h.Clock.Now())
		hd := http.Header{"Content-Type": {"application/json"}, "Authorization": {"Bearer " + token}}
		received(t, "json", h.forward(forward{path: "forwarders/smsforwarder", header: hd,
			body: smsForwarderJSON(m.Sender, m.Body, "SIM1_Robi", h.Clock.Now(), ts, sign)}))
	})
}

// lockedBuffer is a log sink the server's goroutines write to.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestForwarderAttacks: every new path of the device endpoints against
// whoever holds a URL, a token, or a captured request.
func TestForwarderAttacks(t *testing.T) {
	var logs lockedBuffer
	t.Setenv("PAYD_MASTER_KEY", "")
	h := newHarness(t, func(c *payd.Config) {
		c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}, paydtest.WithSMSInbox(smsinbox.Config{Silence: 5 * time.Minute}))
	h.syncClock()
	org := h.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	other := h.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	wallet := h.AddWallet(org, "bkash", "cash_out", "01811111111", "Agent")
	otherWallet := h.AddWallet(other, "bkash", "cash_out", "01822222222", "Other")
	dev := h.admin("device", "add", "--org", org.ID, "--wallet", wallet.ID, "--signing-secret")
	token, key := str(dev, "token"), str(dev, "signing_secret")
	plain := str(h.admin("device", "add", "--org", other.ID, "--wallet", otherWallet.ID), "token")
	h.admin("sms", "anchor", "--org", org.ID, "--wallet", wallet.ID, "--balance", "10000")
	q := url.Values{"token": {token}}
	const gw = "forwarders/sms-gateway"
	genuine := func(trx, balance string) []byte {
		m := cashOutSMS("500.00", "01712345678", balance, trx, h.Clock.Now())
		return smsGatewayReceived(m.Sender, m.Body, h.Clock.Now(), 1)
	}
	stored := func() int {
		t.Helper()
		ms, err := h.Inbox.ListSMS(context.Background(), smsinbox.ListSMSParams{OrganizationID: org.ID})
		if err != nil {
			t.Fatal(err)
		}
		return len(ms)
	}
	refused := func(name string, res *response, status int, code string, msg ...string) {
		t.Helper()
		if res.Status != status || res.ErrorCode() != code || len(msg) > 0 && !strings.Contains(res.ErrorMessage(), msg[0]) {
			t.Errorf("%s: %d %s, want %d %s %q", name, res.Status, res.Body, status, code, msg)
		}
		if strings.Contains(string(res.Body), token) || strings.Contains(string(res.Body), key) {
			t.Errorf("%s: the answer repeats a credential: %s", name, res.Body)
		}
	}

	body := genuine("BKA5000001", "10,500.00")
	now := h.Clock.Now()
	bad := smsGatewaySign("not-the-key", body, now)
	refused("bad signature", h.forward(forward{path: gw, query: q, header: bad, body: body}), 401, "unauthorized", "does not match")
	unsigned := smsGatewaySign(key, body, now)
	unsigned.Del("X-Signature")
	unsigned.Del("X-Timestamp")
	refused("missing signature", h.forward(forward{path: gw, query: q, header: unsigned, body: body}), 401, "unauthorized", "are required")
	refused("stale timestamp", h.forward(forward{path: gw, query: q, header: smsGatewaySign(key, body, now.Add(-6*time.Minute)), body: body}), 401, "unauthorized", "timestamp")
	refused("future timestamp", h.forward(forward{path: gw, query: q, header: smsGatewaySign(key, body, now.Add(6*time.Minute)), body: body}), 401, "unauthorized", "timestamp")
	tampered := smsGatewaySign(key, body, now)
	refused("body changed after signing", h.forward(forward{path: gw, query: q, header: tampered, body: genuine("BKA5000009", "10,500.00")}), 401, "unauthorized", "does not match")
	twice := smsGatewaySign(key, body, now)
	twice.Add("X-Signature", twice.Get("X-Signature"))
	refused("duplicated X-Signature", h.forward(forward{path: gw, query: q, header: twice, body: body}), 400, "invalid_request", "X-Signature")
	twiceTS := smsGatewaySign(key, body, now)
	twiceTS.Add("X-Timestamp", strconv.FormatInt(now.Add(-time.Hour).Unix(), 10))
	refused("duplicated X-Timestamp", h.forward(forward{path: gw, query: q, header: twiceTS, body: body}), 400, "invalid_request", "X-Timestamp")
	both := smsGatewaySign(key, body, now)
	both.Set("Authorization", "Bearer "+token)
	refused("token in the header and the URL", h.forward(forward{path: gw, query: q, header: both, body: body}), 400, "invalid_request", "once")
	refused("token twice in the URL", h.forward(forward{path: gw, query: url.Values{"token": {token, token}}, header: smsGatewaySign(key, body, now), body: body}), 400, "invalid_request", "once")
	refused("unsigned post of a signing device", h.device(token, "sms", cashOutSMS("500.00", "01712345678", "10,500.00", "BKA5000001", now)), 401, "unauthorized", "signature")
	refused("heartbeat of a signing device, unsigned", h.device(token, "heartbeat", map[string]any{}), 401, "unauthorized", "signature")
	refused("signed post of a device without a secret", h.forward(forward{path: gw, query: url.Values{"token": {plain}}, header: smsGatewaySign(key, body, now), body: body}), 401, "unauthorized", "no signing secret")
	huge := smsGatewayReceived("bKash", strings.Repeat("x", 70<<10), now, 1)
	refused("oversized payload", h.forward(forward{path: gw, query: q, header: smsGatewaySign(key, huge, now), body: huge}), 413, "request_too_large")
	if n := stored(); n != 0 {
		t.Fatalf("refused posts stored %d messages", n)
	}

	// The genuine post, then its replay.
	signed := smsGatewaySign(key, body, now)
	received(t, "genuine", h.forward(forward{path: gw, query: q, header: signed, body: body}))
	refused("replayed request", h.forward(forward{path: gw, query: q, header: signed, body: body}), 401, "unauthorized", "already used")
	ping := smsGatewayPing()
	pingSig := smsGatewaySign(key, ping, now)
	if res := h.forward(forward{path: gw, query: q, header: pingSig, body: ping}); res.Status != 200 {
		t.Fatalf("ping: %d %s", res.Status, res.Body)
	}
	refused("replayed ping (keeping a dead phone live)", h.forward(forward{path: gw, query: q, header: pingSig, body: ping}), 401, "unauthorized", "already used")
	// SmsForwarder's sign covers only its timestamp: a captured one is
	// spent once.
	fts, fsign := smsForwarderSign(key, now)
	form := http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}
	m := cashOutSMS("1.00", "01712345678", "10,501.00", "BKA5000002", now)
	received(t, "smsforwarder", h.forward(forward{path: "forwarders/smsforwarder", query: q, header: form, body: smsForwarderForm(m.Sender, m.Body, "SIM1_", now, fts, fsign)}))
	forged := cashOutSMS("9000.00", "01712345678", "19,501.00", "BKF5000003", now)
	refused("SmsForwarder sign reused on another body", h.forward(forward{path: "forwarders/smsforwarder", query: q, header: form,
		body: smsForwarderForm(forged.Sender, forged.Body, "SIM1_", now, fts, fsign)}), 401, "unauthorized", "already used")

	// Another organization's device token proves nothing of this one's.
	dep := h.CreateH2H(org, h2h(kv{"merchant_id", `"cross-org"`}, kv{"amount", `"500"`}))
	if dep.Status != 201 {
		t.Fatalf("create: %d %s", dep.Status, dep.Body)
	}
	cross := cashOutSMS("500.00", "01712345678", "11,001.00", "BKX5000004", h.Clock.Now())
	received(t, "other org's device", h.forward(forward{path: "forwarders/sms-to-url", query: url.Values{"token": {plain}},
		header: smsToURLHeaders(""), body: smsToURLBody(cross.Sender, cross.Body, now, now, "sim1")}))
	h.Verify(org, str(dep.JSON, "id"), `{"provider_transaction_id":"BKX5000004"}`)
	h.Work()
	if s := str(h.GetDeposit(org, str(dep.JSON, "id"), true).JSON, "status"); s == "succeeded" {
		t.Errorf("another organization's device proved a deposit")
	}
	// A slot cannot map a device to another organization's wallet.
	if msg := h.adminErr("device", "config", "--org", other.ID, "--device", str(dev, "id"), "--slot", wallet.ID+"=2"); !strings.Contains(msg, "not found") {
		t.Errorf("config of another org's device: %s", msg)
	}
	if msg := h.adminErr("device", "add", "--org", other.ID, "--wallet", wallet.ID+":1"); !strings.Contains(msg, "not found") {
		t.Errorf("device add with another org's wallet on a slot: %s", msg)
	}

	// The token in the URL reaches no log: not the request lines, not
	// the warnings, not an error's detail.
	refused("unknown forwarder path", h.forward(forward{path: "forwarders/nope", query: q, body: body}), 404, "not_found")
	h.Work()
	for _, secret := range []string{token, plain, key} {
		if strings.Contains(logs.String(), secret) || strings.Contains(logs.String(), secret[len(secret)-12:]) {
			t.Fatalf("a credential reached the log:\n%s", logs.String())
		}
	}
	if !strings.Contains(logs.String(), "/api/v1/devices/forwarders/sms-gateway") {
		t.Fatalf("the request log lost its lines:\n%s", logs.String())
	}
	// Nor a metrics label.
	res, err := http.Get(h.OpsURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	scrape, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if strings.Contains(string(scrape), token[len(token)-12:]) || !strings.Contains(string(scrape), `route="/v1/devices/forwarders/sms-gateway"`) {
		t.Fatalf("metrics: a token, or no route label of the forwarders:\n%s", scrape)
	}
}

// TestForwarderDualSIM: a dual-SIM phone proves one wallet per SIM slot; a
// message from a slot with no wallet, or from an undetected slot, proves
// nothing and is never given to the other slot's wallet.
func TestForwarderDualSIM(t *testing.T) {
	h := newInboxHarness(t)
	org := h.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	one := h.AddWallet(org, "bkash", "cash_out", "01811111111", "SIM 1")
	two := h.AddWallet(org, "bkash", "cash_out", "01822222222", "SIM 2")
	if msg := h.adminErr("device", "add", "--org", org.ID, "--wallet", one.ID, "--wallet", two.ID); !strings.Contains(msg, "SIM slot") {
		t.Fatalf("two bKash wallets without slots: %s", msg)
	}
	dev := h.admin("device", "add", "--org", org.ID, "--wallet", one.ID+":1", "--wallet", two.ID+":2", "--silence", "1h")
	token := str(dev, "token")
	h.admin("sms", "anchor", "--org", org.ID, "--wallet", one.ID, "--balance", "10000")
	h.admin("sms", "anchor", "--org", org.ID, "--wallet", two.ID, "--balance", "20000")
	post := func(m sms, sim string) *smsinbox.SMS {
		t.Helper()
		h.Clock.Add(time.Second)
		now := h.Clock.Now()
		received(t, sim, h.forward(forward{path: "forwarders/sms-to-url", header: smsToURLHeaders(token), body: smsToURLBody(m.Sender, m.Body, now, now, sim)}))
		last, err := h.Inbox.ListSMS(context.Background(), smsinbox.ListSMSParams{OrganizationID: org.ID, Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		return last[0]
	}
	// SIM 2's message continues SIM 2's chain only.
	if m := post(cashOutSMS("500.00", "01712345678", "20,500.00", "BKA6000001", h.Clock.Now()), "sim2"); m.Status != "accepted" || m.WalletID != two.ID {
		t.Fatalf("sim2 message: %s %s %s", m.Status, m.WalletID, m.Reason)
	}
	for sim, trx := range map[string]string{"undetected": "BKA6000002", "sim3": "BKA6000003"} {
		if m := post(cashOutSMS("500.00", "01712345678", "10,500.00", trx, h.Clock.Now()), sim); m.Status != "no_wallet" || m.WalletID != "" {
			t.Fatalf("%s message: %s %s %s", sim, m.Status, m.WalletID, m.Reason)
		}
	}
	// The slots move with device config; the list shows them.
	h.admin("device", "config", "--org", org.ID, "--device", str(dev, "id"), "--slot", one.ID+"=2", "--slot", two.ID+"=1")
	list := h.admin("device", "list", "--org", org.ID)
	d := list["devices"].([]any)[0].(map[string]any)
	if str(d, "silence") != "1h0m0s" {
		t.Errorf("device list silence: %v", d)
	}
	for _, w := range d["wallets"].([]any) {
		w := w.(map[string]any)
		if want := map[string]float64{one.ID: 2, two.ID: 1}[str(w, "wallet_id")]; w["sim_slot"] != want {
			t.Errorf("device list wallet %v, want slot %v", w, want)
		}
	}
	if m := post(cashOutSMS("100.00", "01712345678", "10,100.00", "BKA6000009", h.Clock.Now()), "sim2"); m.Status != "accepted" || m.WalletID != one.ID {
		t.Fatalf("sim2 message after the swap: %s %s %s", m.Status, m.WalletID, m.Reason)
	}
}
