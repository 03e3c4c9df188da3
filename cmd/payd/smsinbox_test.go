package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydtest"
	"github.com/payd-engine/payd/provider/smsinbox"
	"github.com/payd-engine/payd/transport"
)

// newInboxHarness is a reference server with the SMS inbox provider, whose
// mock clock starts at the wall clock's minute: admin commands run as
// processes of their own, on the wall clock, against the same database.
func newInboxHarness(t *testing.T) *harness {
	t.Helper()
	t.Setenv("PAYD_MASTER_KEY", "")
	h := newHarness(t, paydtest.WithSMSInbox(smsinbox.Config{Silence: 5 * time.Minute}))
	h.syncClock()
	return h
}

// syncClock moves the mock clock up to the wall clock, after an admin
// command stamped its changes with the wall clock.
func (h *harness) syncClock() {
	if now := time.Now().Truncate(time.Millisecond); now.After(h.Clock.Now()) {
		h.Clock.Set(now)
	}
}

func (h *harness) admin(args ...string) map[string]any {
	h.t.Helper()
	out := runAdmin(h.t, filepath.Join(h.Dir, "payd.db"), args...)
	h.syncClock()
	return out
}

// device posts to a device endpoint with a device token.
func (h *harness) device(token, path string, body any) *response {
	h.t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		h.t.Fatal(err)
	}
	r, err := http.NewRequest(http.MethodPost, h.URL+"/api/v1/devices/"+path, bytes.NewReader(b))
	if err != nil {
		h.t.Fatal(err)
	}
	r.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		h.t.Fatal(err)
	}
	defer res.Body.Close()
	out := &response{Status: res.StatusCode}
	out.Body, _ = io.ReadAll(res.Body)
	_ = json.Unmarshal(out.Body, &out.JSON)
	return out
}

// sms is one forwarded message.
type sms struct {
	Sender     string `json:"sender"`
	Body       string `json:"body"`
	ReceivedAt string `json:"received_at,omitempty"`
}

// cashOutSMS is the message a bKash agent wallet gets when a customer cashes
// out at it, as bKash words it.
func cashOutSMS(amount, from, balance, trxID string, at time.Time) sms {
	return sms{Sender: "bKash", Body: fmt.Sprintf("Cash Out Tk %s from %s successful. Fee Tk 0.00. Balance Tk %s. TrxID %s at %s",
		amount, from, balance, trxID, at.In(engine.Dhaka).Format("02/01/2006 15:04"))}
}

// TestSMSInboxEndToEnd runs a self-hosted deployment on real-money rules:
// a receiving phone forwards its agent wallet's SMS, H2H deposits are
// verified against them, and withdrawals go through the operator's queue.
func TestSMSInboxEndToEnd(t *testing.T) {
	h := newInboxHarness(t)
	ctx := context.Background()
	org := h.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true), WithdrawalsEnabled: ptr(true)})
	other := h.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	wallet := h.AddWallet(org, "bkash", "cash_out", "01811111111", "Agent")
	// A wallet no phone proves never gets a deposit: mustCreate checks
	// every recipient is the proven wallet.
	h.AddWallet(org, "bkash", "cash_out", "01899999999", "Unproven")
	const payer = "01712345678"
	create := func(merchantID, amount string) *response {
		t.Helper()
		return h.CreateH2H(org, h2h(kv{"merchant_id", `"` + merchantID + `"`}, kv{"amount", `"` + amount + `"`}))
	}
	mustCreate := func(merchantID, amount string) string {
		t.Helper()
		res := create(merchantID, amount)
		if res.Status != 201 || str(res.JSON, "next_action", "recipient", "value") != wallet.Phone {
			t.Fatalf("create %s: %d %s", merchantID, res.Status, res.Body)
		}
		return str(res.JSON, "id")
	}
	status := func(id string) (string, string) {
		t.Helper()
		res := h.GetDeposit(org, id, true)
		return str(res.JSON, "status"), str(res.JSON, "verification", "failure_code")
	}
	// post forwards m and reads what payd made of it where the operator
	// does: the device is told only that it was received.
	post := func(token string, m sms, wantSMSStatus string) *smsinbox.SMS {
		t.Helper()
		h.Clock.Add(time.Second) // newest first: this one
		res := h.device(token, "sms", m)
		if res.Status != 200 || string(res.Body) != `{"received":true}`+"\n" {
			t.Fatalf("post %q: %d %s", m.Body, res.Status, res.Body)
		}
		last, err := h.Inbox.ListSMS(ctx, smsinbox.ListSMSParams{OrganizationID: org.ID, Limit: 1})
		if err != nil || len(last) != 1 || last[0].Status != wantSMSStatus {
			t.Fatalf("post %q: stored as %v (%v), want %s", m.Body, last, err, wantSMSStatus)
		}
		return last[0]
	}

	// The phone is registered: its token is shown once, and until the
	// phone reports, the wallet is out of the pool.
	dev := h.admin("device", "add", "--org", org.ID, "--name", "counter 1", "--wallet", wallet.ID)
	token := str(dev, "token")
	if !strings.HasPrefix(token, "payd_dev_") {
		t.Fatalf("device add: %v", dev)
	}
	if res := create("before-heartbeat", "500"); res.Status != 503 || res.ErrorCode() != "method_unavailable" {
		t.Fatalf("create before the phone reported: %d %s", res.Status, res.Body)
	}
	if res := h.device("payd_dev_wrong", "heartbeat", map[string]any{}); res.Status != 401 {
		t.Fatalf("heartbeat with a wrong token: %d %s", res.Status, res.Body)
	}
	if res := h.device(token, "heartbeat", map[string]any{}); res.Status != 200 || str(res.JSON, "live_until") == "" {
		t.Fatalf("heartbeat: %d %s", res.Status, res.Body)
	}
	h.admin("sms", "anchor", "--org", org.ID, "--wallet", wallet.ID, "--balance", "10000")

	// A genuine SMS proves a payment submitted after it.
	paid := mustCreate("paid-first", "500")
	original := cashOutSMS("500.00", payer, "10,500.00", "BKA1000001", h.Clock.Now())
	post(token, original, "accepted")
	if res := h.Verify(org, paid, `{"provider_transaction_id":"BKA1000001"}`); res.Status != 202 {
		t.Fatalf("verify: %d %s", res.Status, res.Body)
	}
	h.Work()
	if s, _ := status(paid); s != "succeeded" {
		t.Fatalf("deposit proven by its SMS is %s", s)
	}

	// The forwarder sends the same SMS again (a retry, with its own line
	// breaks): recognized as a copy, counted once.
	// The copy is of the same text: a clock that crossed a minute since
	// would make it another message.
	again := original
	again.Body = strings.ReplaceAll(again.Body, ". ", ".\r\n")
	dup := post(token, again, "duplicate")
	if dup.DuplicateOf == "" {
		t.Fatalf("copy names no original: %+v", dup)
	}

	// An SMS arriving after the ID was submitted: the attempt waits as
	// delayed, and the SMS makes it succeed without waiting for a retry.
	late := mustCreate("sms-late", "700")
	h.Verify(org, late, `{"provider_transaction_id":"BKA1000002"}`)
	h.Work()
	if s, _ := status(late); s != "processing" {
		t.Fatalf("deposit whose SMS has not come is %s", s)
	}
	post(token, cashOutSMS("700.00", payer, "11,200.00", "BKA1000002", h.Clock.Now()), "accepted")
	h.Work() // same instant: no backoff ran out
	if s, _ := status(late); s != "succeeded" {
		t.Fatalf("deposit whose SMS came late is %s", s)
	}

	// Messages out of order: the later one waits for the earlier one.
	first, second := mustCreate("order-1", "300"), mustCreate("order-2", "400")
	post(token, cashOutSMS("400.00", payer, "11,900.00", "BKA1000004", h.Clock.Now()), "held")
	post(token, cashOutSMS("300.00", payer, "11,500.00", "BKA1000003", h.Clock.Now()), "accepted")
	h.Verify(org, first, `{"provider_transaction_id":"BKA1000003"}`)
	h.Verify(org, second, `{"provider_transaction_id":"BKA1000004"}`)
	h.Work()
	for _, id := range []string{first, second} {
		if s, _ := status(id); s != "succeeded" {
			t.Fatalf("out-of-order deposit %s is %s", id, s)
		}
	}

	// A forged SMS: right format and sender, but its balance does not
	// follow the wallet's. It is held and proves nothing; the deposit
	// fails when its verification bound passes.
	forgedDep := mustCreate("forged", "5000")
	post(token, cashOutSMS("5,000.00", payer, "20,000.00", "BKF9999999", h.Clock.Now()), "held")
	h.Verify(org, forgedDep, `{"provider_transaction_id":"BKF9999999"}`)
	h.Work()
	// An unknown format from the wallet's sender is kept and reported;
	// a message from a phone number is not trusted.
	post(token, sms{Sender: "bKash", Body: "Get 10% cashback on your next payment at any shop! T&C apply."}, "unparsed")
	post(token, sms{Sender: "+8801999999999", Body: cashOutSMS("5,000.00", payer, "16,900.00", "BKF9999998", h.Clock.Now()).Body}, "untrusted_sender")
	// Another organization's key cannot see or verify this deposit.
	if res := h.GetDeposit(other, forgedDep, true); res.Status != 404 {
		t.Fatalf("other org's GET: %d", res.Status)
	}
	// The wallet's phone keeps reporting while the forged deposit waits.
	for range 4 {
		h.Clock.Add(4 * time.Minute)
		h.device(token, "heartbeat", map[string]any{})
		h.Work()
	}
	h.Clock.Add(20 * time.Minute)
	h.device(token, "heartbeat", map[string]any{})
	h.Work()
	if s, code := status(forgedDep); s != "failed" || code != "transaction_not_found" {
		t.Fatalf("deposit claimed by a forged SMS: %s %s", s, code)
	}

	// The phone goes silent: its wallet leaves the pool, and comes back
	// when the phone reports.
	h.Clock.Add(6 * time.Minute)
	if res := create("silent", "500"); res.Status != 503 {
		t.Fatalf("create while the phone is silent: %d %s", res.Status, res.Body)
	}
	h.device(token, "heartbeat", map[string]any{})
	mustCreate("back", "500")

	// sms list shows every message, what it was parsed as, and what it was
	// matched to.
	list := h.admin("sms", "list", "--org", org.ID)
	byTrx := map[string]map[string]any{}
	statuses := map[string]int{}
	for _, m := range list["messages"].([]any) {
		m := m.(map[string]any)
		statuses[str(m, "status")]++
		if trx := str(m, "transaction_id"); trx != "" && str(m, "status") != "duplicate" {
			byTrx[trx] = m
		}
	}
	if want := map[string]int{"accepted": 4, "held": 1, "duplicate": 1, "unparsed": 1, "untrusted_sender": 1}; fmt.Sprint(statuses) != fmt.Sprint(want) {
		t.Fatalf("sms list statuses %v, want %v", statuses, want)
	}
	if m := byTrx["BKA1000001"]; str(m, "matched_to", "deposit_id") != paid || str(m, "matched_to", "attempt_status") != "succeeded" ||
		str(m, "kind") != "cash_out_received" || str(m, "amount") != "500.00" || str(m, "balance") != "10500.00" {
		t.Fatalf("sms list, genuine message: %v", m)
	}
	if m := byTrx["BKF9999999"]; str(m, "status") != "held" || !strings.Contains(str(m, "reason"), "does not follow") ||
		str(m, "matched_to", "failure_code") != "transaction_not_found" {
		t.Fatalf("sms list, forged message: %v", m)
	}

	// Withdrawals go to the operator's queue; the operator's send, or
	// their failure to send, moves the withdrawal and its ledger entries.
	balanceBefore := h.Balance(org)
	sent := h.Do(org, request{Path: "/api/v1/withdraws", APIKey: org.APIKey, Body: withdrawal(kv{"merchant_id", `"wd-1"`}, kv{"amount", `"1000"`})})
	refused := h.Do(org, request{Path: "/api/v1/withdraws", APIKey: org.APIKey, Body: withdrawal(kv{"merchant_id", `"wd-2"`}, kv{"amount", `"200"`})})
	if sent.Status != 201 || refused.Status != 201 {
		t.Fatalf("withdrawals: %d %s / %d %s", sent.Status, sent.Body, refused.Status, refused.Body)
	}
	h.Work()
	queue := h.admin("payout", "list", "--org", org.ID)
	if n := len(queue["payouts"].([]any)); n != 2 {
		t.Fatalf("payout queue has %d payouts, want 2: %v", n, queue)
	}
	done := h.admin("payout", "complete", "--withdrawal", str(sent.JSON, "id"), "--provider-transaction-id", "bko7777777")
	if str(done, "status") != "succeeded" || str(done, "provider_transaction_id") != "BKO7777777" {
		t.Fatalf("payout complete: %v", done)
	}
	h.admin("payout", "fail", "--withdrawal", str(refused.JSON, "id"), "--reason", "recipient wallet blocked")
	h.Work()
	for id, want := range map[string]string{str(sent.JSON, "id"): "succeeded", str(refused.JSON, "id"): "failed"} {
		res := h.Do(org, request{Method: "GET", Path: "/api/v1/withdraws/" + id, APIKey: org.APIKey})
		if str(res.JSON, "status") != want {
			t.Fatalf("withdrawal %s is %s, want %s", id, res.Body, want)
		}
	}
	if queue := h.admin("payout", "list", "--org", org.ID); len(queue["payouts"].([]any)) != 0 {
		t.Fatalf("queue after the operator acted: %v", queue)
	}
	bal, err := h.Engine.GetBalance(ctx, org.ID)
	if err != nil {
		t.Fatal(err)
	}
	// Deposits 500+700+300+400 credited; the 1000 paid out; the 200 released.
	if got := bal.Available.String(); got != "900" || !bal.Held.IsZero() {
		t.Fatalf("balance after payouts %s held %s (before: %s)", got, bal.Held, balanceBefore)
	}
}

// The device endpoints hold bodies to the API's rules and take only a live
// device's token.
func TestSMSInboxIngestRules(t *testing.T) {
	h := newInboxHarness(t)
	org := h.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	wallet := h.AddWallet(org, "bkash", "cash_out", "01811111111", "Agent")
	dev := h.admin("device", "add", "--org", org.ID, "--wallet", wallet.ID)
	token := str(dev, "token")
	for _, c := range []struct {
		name      string
		token     string
		body      any
		status    int
		code, msg string
	}{
		{"no sender", token, map[string]any{"body": "x"}, 400, "invalid_request", "sender:"},
		{"no body", token, map[string]any{"sender": "bKash"}, 400, "invalid_request", "body:"},
		{"blank body", token, map[string]any{"sender": "bKash", "body": " \n"}, 400, "invalid_request", "body:"},
		{"body not a string", token, map[string]any{"sender": "bKash", "body": 5}, 400, "invalid_request", "body:"},
		{"unknown field", token, map[string]any{"sender": "bKash", "body": "x", "sim": 1}, 400, "invalid_request", "sim:"},
		{"bad received_at", token, map[string]any{"sender": "bKash", "body": "x", "received_at": "yesterday"}, 400, "invalid_request", "received_at:"},
		{"received in the future", token, map[string]any{"sender": "bKash", "body": "x", "received_at": h.Clock.Now().Add(time.Hour).Format(time.RFC3339)}, 400, "invalid_request", "received_at:"},
		{"long body", token, map[string]any{"sender": "bKash", "body": strings.Repeat("x", 4097)}, 400, "invalid_request", "body:"},
		{"api key is not a device token", org.APIKey, map[string]any{"sender": "bKash", "body": "x"}, 401, "unauthorized", ""},
		{"unknown token", "payd_dev_nope", map[string]any{"sender": "bKash", "body": "x"}, 401, "unauthorized", ""},
	} {
		res := h.device(c.token, "sms", c.body)
		if res.Status != c.status || res.ErrorCode() != c.code || !strings.Contains(res.ErrorMessage(), c.msg) {
			t.Errorf("%s: %d %s", c.name, res.Status, res.Body)
		}
	}
	if res := h.Do(org, request{Method: http.MethodGet, Path: "/api/v1/devices/sms"}); res.Status != 405 {
		t.Errorf("GET: %d", res.Status)
	}
	if list := h.admin("sms", "list", "--org", org.ID); len(list["messages"].([]any)) != 0 {
		t.Fatalf("refused posts were stored: %v", list)
	}
	h.admin("device", "revoke", "--org", org.ID, "--device", str(dev, "id"))
	if res := h.device(token, "heartbeat", map[string]any{}); res.Status != 401 {
		t.Fatalf("heartbeat of a revoked device: %d %s", res.Status, res.Body)
	}
	// A sandbox server has no device endpoints.
	sb := newHarness(t)
	if res := sb.device(token, "heartbeat", map[string]any{}); res.Status != 404 {
		t.Fatalf("device endpoint on a sandbox server: %d", res.Status)
	}
}

// A device has a rate limit bucket of its own, apart from the API keys',
// for its SMS and its heartbeats: a flood of guesses is cut short.
func TestSMSInboxRateLimit(t *testing.T) {
	h := newInboxHarness(t)
	h.Config.RateLimits = transport.RateLimits{Device: transport.Rate{PerSecond: 0.1, Burst: 3}}
	h.Rebuild()
	org := h.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	w1, w2 := h.AddWallet(org, "bkash", "cash_out", "01811111111", ""), h.AddWallet(org, "bkash", "cash_out", "01822222222", "")
	one := str(h.admin("device", "add", "--org", org.ID, "--wallet", w1.ID), "token")
	two := str(h.admin("device", "add", "--org", org.ID, "--wallet", w2.ID), "token")
	if res := h.device(one, "heartbeat", map[string]any{}); res.Status != 200 {
		t.Fatalf("report: %d", res.Status)
	}
	for i := range 2 {
		guess := cashOutSMS("1.00", "01712345678", fmt.Sprintf("%d.00", 100+i), fmt.Sprintf("GUESS%05d", i), h.Clock.Now())
		if res := h.device(one, "sms", guess); res.Status != 200 {
			t.Fatalf("SMS %d of the burst: %d", i, res.Status)
		}
	}
	for path, body := range map[string]any{"sms": sms{Sender: "bKash", Body: "one guess too many"}, "heartbeat": map[string]any{}} {
		if res := h.device(one, path, body); res.Status != 429 || res.ErrorCode() != "rate_limited" {
			t.Fatalf("%s past the burst: %d %s", path, res.Status, res.Body)
		}
	}
	if res := h.device(two, "heartbeat", map[string]any{}); res.Status != 200 {
		t.Fatalf("another device was limited: %d", res.Status)
	}
	// API keys are not limited here: the device's bucket is its own.
	for range 5 {
		if res := h.Do(org, request{Method: "GET", Path: "/api/v1/balance", APIKey: org.APIKey}); res.Status != 200 {
			t.Fatalf("API key limited by a device's bucket: %d", res.Status)
		}
	}
	if list := h.admin("sms", "list", "--org", org.ID); len(list["messages"].([]any)) != 2 {
		t.Fatalf("refused posts were stored: %v", list)
	}
}

// cashInSMS is the message a bKash agent wallet gets when it cashes in to a
// customer: how an operator pays a withdrawal from it.
func cashInSMS(amount, to, balance, trxID string, at time.Time) sms {
	return sms{Sender: "bKash", Body: fmt.Sprintf("Cash In Tk %s to %s successful. Fee Tk 0.00. Balance Tk %s. TrxID %s at %s",
		amount, to, balance, trxID, at.In(engine.Dhaka).Format("02/01/2006 15:04"))}
}

// leakedBalance is what a forger reads off a device's answer: the wallet's
// last known balance, if the answer carries one.
var leakedBalance = regexp.MustCompile(`(?i)last known balance ([0-9][0-9,]*\.[0-9]{2})`)

// TestSMSInboxForgerLearnsNothing reproduces issue 15's exploit through
// HTTP: a holder of a device token posts a made-up SMS, reads the wallet's
// balance from the answer, forges a Cash Out that continues it and claims
// its transaction ID on a deposit, and forges a Cash In to a queued
// payout's phone. Every answer must be the same acknowledgement, so the
// forger learns nothing and neither forgery counts.
func TestSMSInboxForgerLearnsNothing(t *testing.T) {
	h := newInboxHarness(t)
	org := h.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true), WithdrawalsEnabled: ptr(true)})
	wallet := h.AddWallet(org, "bkash", "cash_out", "01811111111", "Agent")
	token := str(h.admin("device", "add", "--org", org.ID, "--wallet", wallet.ID), "token")
	h.device(token, "heartbeat", map[string]any{})
	h.admin("sms", "anchor", "--org", org.ID, "--wallet", wallet.ID, "--balance", "12500")
	h.Fund(org, "1000")
	payout := h.Do(org, request{Path: "/api/v1/withdraws", APIKey: org.APIKey, Body: withdrawal(kv{"merchant_id", `"wd-forged"`}, kv{"amount", `"1000"`}, kv{"phone", `"01755555555"`})})
	if payout.Status != 201 {
		t.Fatalf("withdrawal: %d %s", payout.Status, payout.Body)
	}
	h.Work()
	h.Clock.Add(time.Minute)

	var answers []*response
	post := func(m sms) *response {
		t.Helper()
		res := h.device(token, "sms", m)
		answers = append(answers, res)
		return res
	}
	// The probe: any made-up message with the wallet's sender.
	probe := post(cashOutSMS("1.00", "01712345678", "1.00", "PROBE00001", h.Clock.Now()))
	balance := "10000.00" // a blind guess, if the answer tells nothing
	if m := leakedBalance.FindSubmatch(probe.Body); m != nil {
		balance = strings.ReplaceAll(string(m[1]), ",", "")
	}
	known := decimal.RequireFromString(balance)
	// A genuine message, a copy, a conflicting text, an unknown format and
	// an untrusted sender: a device must not tell any of them apart.
	post(cashOutSMS("100.00", "01712345678", "12,600.00", "GENUINE001", h.Clock.Now()))
	post(cashOutSMS("100.00", "01712345678", "12,600.00", "GENUINE001", h.Clock.Now()))
	post(cashOutSMS("900.00", "01712345678", "99,999.00", "GENUINE001", h.Clock.Now()))
	post(sms{Sender: "bKash", Body: "Get 10% cashback on your next payment!"})
	post(sms{Sender: "+8801999999999", Body: "hello"})
	known = known.Add(decimal.NewFromInt(100))

	dep := h.CreateH2H(org, h2h(kv{"merchant_id", `"forged-deposit"`}, kv{"amount", `"500"`}))
	if dep.Status != 201 {
		t.Fatalf("create: %d %s", dep.Status, dep.Body)
	}
	post(cashOutSMS("500.00", "01712345678", engine.FormatAmount(known.Add(decimal.NewFromInt(500))), "FORGED0001", h.Clock.Now()))
	post(cashInSMS("1000.00", "01755555555", engine.FormatAmount(known.Add(decimal.NewFromInt(500-1000))), "FORGED0002", h.Clock.Now()))
	h.Verify(org, str(dep.JSON, "id"), `{"provider_transaction_id":"FORGED0001"}`)
	h.Work()

	for i, res := range answers {
		if res.Status != 200 || string(res.Body) != `{"received":true}`+"\n" {
			t.Errorf("answer %d tells the device %d %s; want 200 {\"received\":true}", i, res.Status, res.Body)
		}
	}
	if s := str(h.GetDeposit(org, str(dep.JSON, "id"), true).JSON, "status"); s == "succeeded" {
		t.Errorf("a forged SMS credited a deposit (balance %s read off the answer)", balance)
	}
	res := h.Do(org, request{Method: "GET", Path: "/api/v1/withdraws/" + str(payout.JSON, "id"), APIKey: org.APIKey})
	if s := str(res.JSON, "status"); s == "succeeded" {
		t.Errorf("a forged Cash In completed a payout that was never sent")
	}
	// The operator sees both forgeries, held.
	held := h.admin("sms", "list", "--org", org.ID, "--status", "held")
	if n := len(held["messages"].([]any)); n != 3 {
		t.Errorf("sms list --status held has %d messages, want the probe and both forgeries: %v", n, held)
	}
}

// The operator's side of issue 15 through the CLI: a rotated token stops
// at once, held messages are counted, and a payout matched by its SMS
// waits for payout confirm unless the organization turns that off.
func TestSMSInboxOperatorGuards(t *testing.T) {
	h := newInboxHarness(t)
	org := h.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true), WithdrawalsEnabled: ptr(true)})
	wallet := h.AddWallet(org, "bkash", "cash_out", "01811111111", "Agent")
	dev := h.admin("device", "add", "--org", org.ID, "--wallet", wallet.ID)
	old := str(dev, "token")
	rotated := h.admin("device", "rotate", "--org", org.ID, "--device", str(dev, "id"))
	token := str(rotated, "token")
	if res := h.device(old, "heartbeat", map[string]any{}); res.Status != 401 {
		t.Fatalf("old token after rotate: %d %s", res.Status, res.Body)
	}
	if res := h.device(token, "heartbeat", map[string]any{}); res.Status != 200 {
		t.Fatalf("new token after rotate: %d %s", res.Status, res.Body)
	}
	h.admin("sms", "anchor", "--org", org.ID, "--wallet", wallet.ID, "--balance", "10000")

	settings := h.admin("sms", "settings", "--org", org.ID)
	if settings["payout_sms_confirm"] != true || settings["held_max"] != float64(1000) || str(settings, "held_max_age") != "24h0m0s" {
		t.Fatalf("default settings: %v", settings)
	}
	h.Fund(org, "2000")
	payout := func(merchantID string) string {
		t.Helper()
		res := h.Do(org, request{Path: "/api/v1/withdraws", APIKey: org.APIKey, Body: withdrawal(kv{"merchant_id", `"` + merchantID + `"`}, kv{"amount", `"500"`}, kv{"phone", `"01755555555"`})})
		if res.Status != 201 {
			t.Fatalf("withdrawal: %d %s", res.Status, res.Body)
		}
		h.Work()
		return str(res.JSON, "id")
	}
	status := func(id string) string {
		t.Helper()
		return str(h.Do(org, request{Method: "GET", Path: "/api/v1/withdraws/" + id, APIKey: org.APIKey}).JSON, "status")
	}
	first := payout("wd-confirm")
	h.Clock.Add(time.Minute)
	h.device(token, "sms", cashInSMS("500.00", "01755555555", "9,500.00", "BKS1000001", h.Clock.Now()))
	h.Work()
	if s := status(first); s != "processing" {
		t.Fatalf("withdrawal matched by its SMS, before confirmation: %s", s)
	}
	matched := h.admin("payout", "list", "--org", org.ID)["payouts"].([]any)
	if len(matched) != 1 || str(matched[0].(map[string]any), "status") != "matched" || str(matched[0].(map[string]any), "provider_transaction_id") != "BKS1000001" {
		t.Fatalf("payout list: %v", matched)
	}
	h.admin("payout", "confirm", "--withdrawal", first)
	h.Work()
	if s := status(first); s != "succeeded" {
		t.Fatalf("confirmed withdrawal: %s", s)
	}

	// Turned off, the SMS completes the payout alone.
	if s := h.admin("sms", "settings", "--org", org.ID, "--payout-sms-confirm=false", "--held-max", "50"); s["payout_sms_confirm"] != false || s["held_max"] != float64(50) {
		t.Fatalf("settings: %v", s)
	}
	second := payout("wd-auto")
	h.Clock.Add(time.Minute)
	h.device(token, "sms", cashInSMS("500.00", "01755555555", "9,000.00", "BKS1000002", h.Clock.Now()))
	h.Work()
	if s := status(second); s != "succeeded" {
		t.Fatalf("withdrawal completed by its SMS: %s", s)
	}

	// A forgery is held, counted and listed.
	h.device(token, "sms", cashOutSMS("1.00", "01712345678", "1.00", "FORGED0001", h.Clock.Now()))
	stats := h.admin("sms", "stats", "--org", org.ID)
	if msgs := stats["messages"].(map[string]any); msgs["held"] != float64(1) || msgs["accepted"] != float64(2) {
		t.Fatalf("sms stats: %v", stats)
	}
	if w := stats["wallets"].(map[string]any)[wallet.ID].(map[string]any); w["held"] != float64(1) {
		t.Fatalf("sms stats of the wallet: %v", stats)
	}
	audit := h.admin("audit", "--org", org.ID)
	if !strings.Contains(fmt.Sprint(audit), "sms_device.rotate") || !strings.Contains(fmt.Sprint(audit), "payout.confirm") {
		t.Fatalf("audit: %v", audit)
	}
}
