package transport_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payd-engine/payd"
	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydtest"
	"github.com/payd-engine/payd/provider/sandbox"
	"github.com/payd-engine/payd/provider/smsinbox"
)

// apiDoc is the served OpenAPI document with a validator of its schemas,
// and the record of which documented responses the test has seen.
type apiDoc struct {
	t    *testing.T
	doc  map[string]any
	v    *schemaValidator
	seen map[string]map[int]bool // "POST /v1/deposits" -> statuses
}

func loadAPIDoc(t *testing.T, url string) *apiDoc {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET %s: %d %s", url, res.StatusCode, res.Header.Get("Content-Type"))
	}
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("the document is not JSON: %v", err)
	}
	d := &apiDoc{t: t, doc: doc, v: newSchemaValidator(doc), seen: map[string]map[int]bool{}}
	d.record("GET", "/openapi.json", http.StatusOK, body)
	return d
}

// operation returns the document's operation for method and path template.
func (d *apiDoc) operation(method, tmpl string) map[string]any {
	d.t.Helper()
	paths, _ := d.doc["paths"].(map[string]any)
	item, _ := paths[tmpl].(map[string]any)
	op, _ := item[strings.ToLower(method)].(map[string]any)
	if op == nil {
		d.t.Fatalf("the document has no operation %s %s", method, tmpl)
	}
	return op
}

// record validates a response against the document: its status must be
// documented for the operation, and its body must match that response's
// schema.
func (d *apiDoc) record(method, tmpl string, status int, body []byte) {
	d.t.Helper()
	op := d.operation(method, tmpl)
	responses, _ := op["responses"].(map[string]any)
	r, ok := responses[strconv.Itoa(status)]
	if !ok {
		d.t.Fatalf("%s %s answered %d, which the document does not list: %s", method, tmpl, status, body)
	}
	resp := r.(map[string]any)
	if ref, ok := resp["$ref"].(string); ok {
		target, err := d.v.resolve(ref)
		if err != nil {
			d.t.Fatal(err)
		}
		resp = target.(map[string]any)
	}
	schema := resp["content"].(map[string]any)["application/json"].(map[string]any)["schema"]
	if err := d.v.validateJSON(schema, body); err != nil {
		d.t.Fatalf("%s %s %d does not match the document: %v\nbody: %s", method, tmpl, status, err, body)
	}
	key := method + " " + tmpl
	if d.seen[key] == nil {
		d.seen[key] = map[int]bool{}
	}
	d.seen[key][status] = true
}

// request validates a request body the test sends as valid against the
// operation's requestBody schema.
func (d *apiDoc) request(method, tmpl, body string) {
	d.t.Helper()
	rb := d.operation(method, tmpl)["requestBody"].(map[string]any)
	schema := rb["content"].(map[string]any)["application/json"].(map[string]any)["schema"]
	if err := d.v.validateJSON(schema, []byte(body)); err != nil {
		d.t.Fatalf("a valid request to %s %s does not match the document: %v\nbody: %s", method, tmpl, err, body)
	}
}

// validateSchema checks a body against a named component schema.
func (d *apiDoc) validateSchema(name string, body []byte) {
	d.t.Helper()
	if err := d.v.validateJSON(map[string]any{"$ref": "#/components/schemas/" + name}, body); err != nil {
		d.t.Fatalf("not a %s: %v\nbody: %s", name, err, body)
	}
}

// TestOpenAPI makes real requests to every documented operation (its
// successes and main errors) and validates each answer against the served
// OpenAPI 3.1 document; then checks that every operation was exercised.
func TestOpenAPI(t *testing.T) {
	h := newHarness(t, paydtest.WithSandbox(sandbox.Config{PayoutMode: "manual", UnavailablePayoutMethods: []string{"upay"}}))
	doc := loadAPIDoc(t, h.URL+"/api/openapi.json")
	if doc.doc["openapi"] != "3.1.0" {
		t.Fatalf("openapi %v", doc.doc["openapi"])
	}
	if servers := doc.doc["servers"].([]any); servers[0].(map[string]any)["url"] != "/api" {
		t.Fatalf("servers %v", servers)
	}
	org := h.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true), WithdrawalsEnabled: ptr(true)})
	plain := h.NewOrg(engine.OrganizationSettings{})
	if _, err := h.Engine.AddWallet(context.Background(), engine.AddWalletParams{
		OrganizationID: org.ID, Channel: "bkash", Operation: "cash_out", Phone: "01811111111", Name: "Agent", QRPayload: "bkash-qr-1",
	}); err != nil {
		t.Fatal(err)
	}
	h.AddWallet(org, "bkash", "make_payment", "01822222222", "")

	// call sends req and validates the answer as operation method tmpl,
	// checking the status too.
	call := func(o *testOrg, tmpl string, req request, want int) *response {
		t.Helper()
		if req.APIKey == "" {
			req.APIKey = o.APIKey
		} else if req.APIKey == "-" {
			req.APIKey = ""
		}
		if req.Method == "" {
			req.Method = http.MethodPost
		}
		if req.Path == "" {
			req.Path = "/api" + tmpl
		}
		if want < 300 && req.Body != "" {
			doc.request(req.Method, tmpl, req.Body)
		}
		res := h.Do(o, req)
		if res.Status != want {
			t.Fatalf("%s %s: %d, want %d: %s", req.Method, req.Path, res.Status, want, res.Body)
		}
		doc.record(req.Method, tmpl, res.Status, res.Body)
		return res
	}
	const deposits, deposit, verify = "/v1/deposits", "/v1/deposits/{id}", "/v1/deposits/{id}/verify"
	get := func(path string) request { return request{Method: http.MethodGet, Path: "/api" + path} }
	signedGet := func(path string) request { return request{Method: http.MethodGet, Path: "/api" + path, Sign: true} }

	// POST /v1/deposits
	red := call(org, deposits, request{Body: redirect(kv{"merchant_id", `"o1"`}, kv{"metadata", `{"cart":[1,2]}`})}, 200)
	call(org, deposits, request{Body: redirect(kv{"merchant_id", `"o1"`}, kv{"metadata", `{"cart":[1,2]}`})}, 200)
	ins := call(org, deposits, request{Sign: true, Body: h2h(kv{"merchant_id", `"o2"`})}, 201)
	call(org, deposits, request{Sign: true, Body: h2h(kv{"merchant_id", `"o2"`})}, 200)
	act := call(org, deposits, request{Sign: true, Body: h2h(kv{"merchant_id", `"o3"`}, kv{"payment_method", `"bkash"`})}, 201)
	mp := call(org, deposits, request{Sign: true, Body: h2h(kv{"merchant_id", `"o4"`}, kv{"payment_method", `"bkash_merchant"`})}, 201)
	if str(ins.JSON, "next_action", "qr_payload") != "bkash-qr-1" || str(act.JSON, "next_action", "type") != "redirect" {
		t.Fatalf("setup: %s %s", ins.Body, act.Body)
	}
	call(org, deposits, request{Body: redirect(kv{"amount", `500`})}, 400)
	call(org, deposits, request{APIKey: "-", Body: redirect()}, 401)
	call(org, deposits, request{Body: h2h()}, 401)
	call(plain, deposits, request{Sign: true, Body: h2h()}, 403)
	call(org, deposits, request{Body: redirect(kv{"merchant_id", `"o1"`}, kv{"amount", `"600"`})}, 409)
	call(org, deposits, request{Body: redirect(kv{"metadata", `{"pad":"` + strings.Repeat("x", 64<<10) + `"}`})}, 413)
	call(org, deposits, request{Sign: true, Body: h2h(kv{"merchant_id", `"o5"`}, kv{"payment_method", `"nagad_agent"`})}, 503)

	// GET /v1/deposits/{id}
	call(org, deposit, get("/v1/deposits/"+str(red.JSON, "id")), 200)
	for _, d := range []*response{ins, act, mp} {
		call(org, deposit, signedGet("/v1/deposits/"+str(d.JSON, "id")), 200)
	}
	call(org, deposit, get("/v1/deposits/"+str(ins.JSON, "id")), 401)
	call(org, deposit, request{APIKey: "-", Method: http.MethodGet, Path: "/api/v1/deposits/" + str(red.JSON, "id")}, 401)
	call(org, deposit, get("/v1/deposits/dep_00000000000000000000000000"), 404)
	call(plain, deposit, get("/v1/deposits/"+str(red.JSON, "id")), 404)

	// POST /v1/deposits/{id}/verify
	insPath := "/api/v1/deposits/" + str(ins.JSON, "id") + "/verify"
	call(org, verify, request{Path: insPath, Sign: true, Body: `{}`}, 400)
	call(org, verify, request{Path: insPath, Body: `{"provider_transaction_id":"TX1"}`}, 401)
	call(org, verify, request{Path: "/api/v1/deposits/dep_00000000000000000000000000/verify", Sign: true, Body: `{"provider_transaction_id":"TX1"}`}, 404)
	call(org, verify, request{Path: "/api/v1/deposits/" + str(act.JSON, "id") + "/verify", Sign: true, Body: `{"provider_transaction_id":"TX1"}`}, 409)
	call(org, "/sandbox/payments", request{Body: `{"channel":"bkash","transaction_id":"TX1","payer_phone":"01712345678","recipient_phone":"01811111111","amount":"500","status":"completed","type":"cash_out"}`}, 201)
	call(org, verify, request{Path: insPath, Sign: true, Body: `{"provider_transaction_id":"tx1"}`}, 202)
	call(org, verify, request{Path: insPath, Sign: true, Body: `{"provider_transaction_id":"TX2"}`}, 409)
	h.Work()
	call(org, verify, request{Path: insPath, Sign: true, Body: `{"provider_transaction_id":"TX1"}`}, 200)
	paid := call(org, deposit, signedGet("/v1/deposits/"+str(ins.JSON, "id")), 200)
	assertJSONField(t, paid.Body, "next_action", "null")
	assertJSONField(t, paid.Body, "status", `"succeeded"`)
	// A failed attempt: the resolved repeat carries its failure_code.
	mpPath := "/api/v1/deposits/" + str(mp.JSON, "id") + "/verify"
	call(org, "/sandbox/payments", request{Body: `{"channel":"bkash","transaction_id":"TX3","payer_phone":"01712345678","recipient_phone":"01822222222","amount":"499","status":"completed"}`}, 201)
	call(org, verify, request{Path: mpPath, Sign: true, Body: `{"provider_transaction_id":"TX3"}`}, 202)
	h.Work()
	call(org, verify, request{Path: mpPath, Sign: true, Body: `{"provider_transaction_id":"TX3"}`}, 200)
	call(org, deposit, signedGet("/v1/deposits/"+str(mp.JSON, "id")), 200)

	// Refunds, the contract's extension, of the paid H2H deposit (the
	// available balance is its 500).
	const refundsOf, refunds, refund, settleRefund = "/v1/deposits/{id}/refunds", "/v1/refunds", "/v1/refunds/{id}", "/sandbox/refunds/{id}/settle"
	insRefunds := "/api/v1/deposits/" + str(ins.JSON, "id") + "/refunds"
	rf := call(org, refundsOf, request{Path: insRefunds, Sign: true, Body: `{"merchant_id":"rf1","amount":"100","reason":"damaged","metadata":{"n":1}}`}, 201)
	call(org, refundsOf, request{Path: insRefunds, Sign: true, Body: `{"merchant_id":"rf1","amount":"100.00"}`}, 200)
	call(org, refundsOf, request{Path: insRefunds, Sign: true, Body: `{"merchant_id":"rf2","amount":"1.001"}`}, 400)
	call(org, refundsOf, request{Path: insRefunds, Body: `{"merchant_id":"rf2"}`}, 401)
	call(org, refundsOf, request{Path: "/api/v1/deposits/dep_00000000000000000000000000/refunds", Sign: true, Body: `{"merchant_id":"rf2"}`}, 404)
	call(org, refundsOf, request{Path: insRefunds, Sign: true, Body: `{"merchant_id":"rf2","amount":"400.01"}`}, 409)
	call(org, refundsOf, request{Path: "/api/v1/deposits/" + str(mp.JSON, "id") + "/refunds", Sign: true, Body: `{"merchant_id":"rf2"}`}, 409)
	call(org, refundsOf, request{Path: insRefunds, Sign: true, Body: `{"merchant_id":"rf2","metadata":{"pad":"` + strings.Repeat("x", 64<<10) + `"}}`}, 413)
	if _, err := h.Engine.AdjustBalance(context.Background(), engine.AdjustParams{OrganizationID: org.ID, Amount: "-350", Reason: "test", Actor: "test"}); err != nil {
		t.Fatal(err)
	}
	call(org, refundsOf, request{Path: insRefunds, Sign: true, Body: `{"merchant_id":"rf2","amount":"60"}`}, 403)
	h.Fund(org, "350")
	h.Sandbox.SetOutage(org.ID, true)
	call(org, refundsOf, request{Path: insRefunds, Sign: true, Body: `{"merchant_id":"rf2","amount":"60"}`}, 503)
	h.Sandbox.SetOutage(org.ID, false)
	rfID := str(rf.JSON, "id")
	h.Work()
	call(org, settleRefund, request{Path: "/api/sandbox/refunds/" + rfID + "/settle", Body: `{"outcome":"maybe"}`}, 400)
	call(org, settleRefund, request{Path: "/api/sandbox/refunds/rf_00000000000000000000000000/settle", Body: `{"outcome":"succeeded"}`}, 404)
	call(org, settleRefund, request{Path: "/api/sandbox/refunds/" + rfID + "/settle", Body: `{"outcome":"succeeded"}`}, 200)
	call(org, settleRefund, request{Path: "/api/sandbox/refunds/" + rfID + "/settle", Body: `{"outcome":"failed"}`}, 409)
	h.Work()
	done := call(org, refund, signedGet("/v1/refunds/"+rfID), 200)
	assertJSONField(t, done.Body, "status", `"succeeded"`)
	call(org, refund, get("/v1/refunds/"+rfID), 401)
	call(org, refund, signedGet("/v1/refunds/rf_00000000000000000000000000"), 404)
	call(org, refunds, signedGet("/v1/refunds?deposit_id="+str(ins.JSON, "id")), 200)
	call(org, refunds, signedGet("/v1/refunds?limit=0"), 400)
	call(org, refunds, get("/v1/refunds"), 401)
	call(org, deposit, signedGet("/v1/deposits/"+str(ins.JSON, "id")), 200)

	// Withdrawals and the balance.
	const withdraws, withdraw = "/v1/withdraws", "/v1/withdraws/{id}"
	h.Fund(org, "10000")
	wd := call(org, withdraws, request{Body: withdrawal(kv{"merchant_id", `"w1"`}, kv{"metadata", `{"payout":1}`})}, 201)
	call(org, withdraws, request{Body: withdrawal(kv{"amount", `500`})}, 400)
	call(org, withdraws, request{APIKey: "-", Body: withdrawal()}, 401)
	call(plain, withdraws, request{Body: withdrawal()}, 403)
	call(org, withdraws, request{Body: withdrawal(kv{"merchant_id", `"w2"`}, kv{"amount", `"25000"`})}, 403)
	call(org, withdraws, request{Body: withdrawal(kv{"merchant_id", `"w1"`})}, 409)
	call(org, withdraws, request{Body: withdrawal(kv{"merchant_id", `"w3"`}, kv{"payment_method", `"upay"`})}, 503)
	call(org, withdraws, request{Body: withdrawal(kv{"metadata", `{"pad":"` + strings.Repeat("x", 64<<10) + `"}`})}, 413)
	wdID := str(wd.JSON, "id")
	call(org, withdraw, get("/v1/withdraws/"+wdID), 200)
	call(org, withdraw, get("/v1/withdraws/wd_00000000000000000000000000"), 404)
	call(org, withdraw, request{APIKey: "-", Method: http.MethodGet, Path: "/api/v1/withdraws/" + wdID}, 401)
	call(org, "/v1/balance", get("/v1/balance"), 200)
	call(org, "/v1/balance", request{APIKey: "-", Method: http.MethodGet, Path: "/api/v1/balance"}, 401)

	// The sandbox.
	const settle = "/sandbox/withdraws/{id}/settle"
	call(org, "/sandbox/payments", request{Body: `{"channel":"bkash","transaction_id":"TX1","payer_phone":"01712345678","amount":"500","status":"completed"}`}, 409)
	call(org, "/sandbox/payments", request{Body: `{"channel":"bkash","transaction_id":"TX9","payer_phone":"01712345678","amount":"500","status":"done"}`}, 400)
	call(org, "/sandbox/payments", request{APIKey: "-", Body: `{}`}, 401)
	call(org, "/sandbox/payments", request{Body: `{"channel":"nagad","transaction_id":"TX9","payer_phone":"01712345678","amount":"100","status":"failed","completed_at":"2026-11-21T10:00:00Z"}`}, 201)
	call(org, "/sandbox/outage", request{Body: `{"enabled":false}`}, 200)
	call(org, "/sandbox/outage", request{Body: `{"enabled":"no"}`}, 400)
	call(org, "/sandbox/outage", request{APIKey: "-", Body: `{"enabled":false}`}, 401)
	call(org, settle, request{Path: "/api/sandbox/withdraws/" + wdID + "/settle", Body: `{"outcome":"maybe"}`}, 400)
	call(org, settle, request{Path: "/api/sandbox/withdraws/wd_00000000000000000000000000/settle", Body: `{"outcome":"succeeded"}`}, 404)
	call(org, settle, request{Path: "/api/sandbox/withdraws/" + wdID + "/settle", Body: `{"outcome":"succeeded"}`}, 200)
	call(org, settle, request{Path: "/api/sandbox/withdraws/" + wdID + "/settle", Body: `{"outcome":"failed"}`}, 409)
	call(org, settle, request{APIKey: "-", Path: "/api/sandbox/withdraws/" + wdID + "/settle", Body: `{"outcome":"failed"}`}, 401)
	h.Work()
	settled := call(org, withdraw, get("/v1/withdraws/"+wdID), 200)
	assertJSONField(t, settled.Body, "status", `"succeeded"`)

	// The lists, payd's extensions: every item of every kind validates.
	const events, event, balanceTxns = "/v1/events", "/v1/events/{id}", "/v1/balance/transactions"
	found := call(org, withdraws, get("/v1/withdraws?merchant_id=w1"), 200)
	if !strings.Contains(string(found.Body), wdID) {
		t.Fatalf("merchant_id filter: %s", found.Body)
	}
	call(org, withdraws, get("/v1/withdraws?limit=2&status=succeeded"), 200)
	call(org, withdraws, get("/v1/withdraws?merchant_id=w1&colour=x"), 400)
	call(org, withdraws, request{APIKey: "-", Method: http.MethodGet, Path: "/api/v1/withdraws"}, 401)
	call(org, deposits, signedGet("/v1/deposits?limit=100"), 200)
	call(plain, deposits, get("/v1/deposits"), 200)
	call(org, deposits, get("/v1/deposits"), 401)
	call(org, deposits, signedGet("/v1/deposits?limit=0"), 400)
	evs := call(org, events, signedGet("/v1/events?limit=100"), 200)
	call(org, events, signedGet("/v1/events?type=deposit.paid"), 400)
	call(org, events, get("/v1/events"), 401)
	var evPage struct{ Data []struct{ ID string } }
	if err := json.Unmarshal(evs.Body, &evPage); err != nil || len(evPage.Data) == 0 {
		t.Fatalf("events: %v %s", err, evs.Body)
	}
	evID := evPage.Data[0].ID
	call(org, event, signedGet("/v1/events/"+evID), 200)
	call(org, event, signedGet("/v1/events/evt_00000000000000000000000000"), 404)
	call(org, event, get("/v1/events/"+evID), 401)
	call(org, balanceTxns, signedGet("/v1/balance/transactions?limit=100"), 200)
	call(plain, balanceTxns, get("/v1/balance/transactions"), 200)
	call(org, balanceTxns, get("/v1/balance/transactions"), 401)
	call(org, balanceTxns, signedGet("/v1/balance/transactions?account=fees"), 400)
	call(org, balanceTxns, request{APIKey: "-", Method: http.MethodGet, Path: "/api/v1/balance/transactions"}, 401)

	// Outside the operations: a method a path does not serve, and a path
	// that does not exist, answer the documented envelope.
	for _, c := range []struct {
		method, path string
		status       int
	}{{http.MethodPost, "/api/v1/balance", 405}, {http.MethodDelete, "/api/v1/deposits", 405}, {http.MethodGet, "/api/v2/deposits", 404}} {
		res := h.Do(org, request{Method: c.method, Path: c.path, APIKey: org.APIKey})
		if res.Status != c.status {
			t.Fatalf("%s %s: %d", c.method, c.path, res.Status)
		}
		doc.validateSchema("Error", res.Body)
	}

	// Every path of the document serves exactly its documented methods:
	// any other is 405, so no operation the server has goes undocumented.
	// The device endpoints are served in SMS inbox mode only.
	ih := newInboxHarness(t)
	for tmpl, item := range doc.doc["paths"].(map[string]any) {
		path := "/api" + strings.ReplaceAll(tmpl, "{id}", wdID)
		server := h
		if strings.HasPrefix(tmpl, "/v1/devices/") {
			server = ih
		}
		for _, method := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
			if _, documented := item.(map[string]any)[strings.ToLower(method)]; documented {
				continue
			}
			if res := server.Do(org, request{Method: method, Path: path, APIKey: org.APIKey}); res.Status != http.StatusMethodNotAllowed {
				t.Errorf("%s %s: %d, but the document does not list the method: %s", method, path, res.Status, res.Body)
			}
		}
	}

	// The device endpoints, on a server in SMS inbox mode.
	iorg := ih.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	iw := ih.AddWallet(iorg, "bkash", "cash_out", "01811111111", "Agent")
	token := ih.addDevice(iorg, iw.ID)
	device := func(tmpl, body string, want int) {
		t.Helper()
		if want < 300 && body != "" {
			doc.request(http.MethodPost, tmpl, body)
		}
		res := ih.Do(iorg, request{Path: "/api" + tmpl, APIKey: token, Body: body})
		if res.Status != want {
			t.Fatalf("POST %s: %d, want %d: %s", tmpl, res.Status, want, res.Body)
		}
		doc.record(http.MethodPost, tmpl, res.Status, res.Body)
	}
	const sms, heartbeat = "/v1/devices/sms", "/v1/devices/heartbeat"
	device(heartbeat, "", 200)
	device(heartbeat, "{}", 200)
	device(heartbeat, `{"battery":5}`, 400)
	msg := `{"sender":"bKash","body":"Cash Out Tk 500.00 from 01712345678 successful. Fee Tk 0.00. Balance Tk 1,500.00. TrxID BKA1000001 at 21/11/2026 16:03","received_at":"2026-11-21T16:03:05+06:00"}`
	device(sms, msg, 200)
	device(sms, msg, 200)
	device(sms, `{"sender":"bKash","body":"Get 10% cashback!"}`, 200)
	device(sms, `{"sender":"bKash"}`, 400)
	device(sms, `{"sender":"bKash","body":"`+strings.Repeat("x", 64<<10)+`"}`, 413)
	token = "payd_dev_revoked"
	device(sms, msg, 401)

	// The forwarder apps' endpoints (payd's extension, forwarders.go).
	fw := ih.AddWallet(iorg, "nagad", "cash_out", "01822222222", "Agent 2")
	token = ih.addDevice(iorg, fw.ID)
	const toURL, gateway, forwarder = "/v1/devices/forwarders/sms-to-url", "/v1/devices/forwarders/sms-gateway", "/v1/devices/forwarders/smsforwarder"
	device(toURL, `{"from":"bKash","text":"hello","sentStamp":1764000000000,"receivedStamp":1764000001000,"sim":"sim1"}`, 200)
	device(toURL, `{"from":"bKash"}`, 400)
	device(forwarder, `{"from":"bKash","org_content":"hello again","timestamp":"1764000000000","card_slot":"SIM1_Robi"}`, 200)
	device(forwarder, `{"from":"bKash","content":"bKash\nhello"}`, 400)
	device(gateway, `{"event":"system:ping","payload":{}}`, 401)
	signer := ih.AddWallet(iorg, "bkash", "cash_out", "01833333333", "Agent 3")
	creds, err := ih.Inbox.AddDevice(context.Background(), smsinbox.AddDeviceParams{OrganizationID: iorg.ID, WalletIDs: []string{signer.ID}, SigningSecret: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{`{"event":"system:ping","payload":{"health":{}}}`, `{"event":"sms:received","payload":{"message":"hi","sender":"bKash","simNumber":1}}`} {
		ts := strconv.FormatInt(ih.Now().Unix(), 10)
		mac := hmac.New(sha256.New, []byte(creds.SigningSecret))
		mac.Write([]byte(body + ts))
		doc.request(http.MethodPost, gateway, body)
		res := ih.Do(iorg, request{Path: "/api" + gateway, APIKey: creds.Token, Body: body,
			Header: map[string]string{"X-Timestamp": ts, "X-Signature": hex.EncodeToString(mac.Sum(nil))}})
		if res.Status != 200 {
			t.Fatalf("POST %s: %d %s", gateway, res.Status, res.Body)
		}
		doc.record(http.MethodPost, gateway, res.Status, res.Body)
	}

	// The UddoktaPay-compatible endpoints (payd's extension, compat.go):
	// their answers, errors included, are UddoktaPay's shapes.
	corg, other := h.newCompatOrg(), h.newCompatOrg()
	const checkoutV2, verifyPayment = "/checkout-v2", "/verify-payment"
	compat := func(tmpl, key, body string, want int) *response {
		t.Helper()
		if want < 300 {
			doc.request(http.MethodPost, tmpl, body)
		}
		res := h.compat(strings.TrimPrefix(tmpl, "/"), key, body)
		if res.Status != want {
			t.Fatalf("POST %s: %d, want %d: %s", tmpl, res.Status, want, res.Body)
		}
		doc.record(http.MethodPost, tmpl, res.Status, res.Body)
		return res
	}
	inv := invoiceOf(t, compat(checkoutV2, corg.compatKey, compatCheckoutBody("100"), 200))
	compat(checkoutV2, corg.compatKey, strings.Replace(compatCheckoutBody(`"250.50"`), `{"order_id":"42"}`, `[]`, 1), 200)
	compat(checkoutV2, corg.compatKey, compatCheckoutBody("10.001"), 400)
	compat(checkoutV2, corg.APIKey, compatCheckoutBody("100"), 401)
	compat(checkoutV2, "", compatCheckoutBody("100"), 401)
	compat(checkoutV2, corg.compatKey, `{"amount":"100","metadata":{"pad":"`+strings.Repeat("x", 64<<10)+`"}}`, 413)
	compat(verifyPayment, corg.compatKey, `{"invoice_id":"`+inv+`"}`, 200)
	compat(verifyPayment, corg.compatKey, `{}`, 400)
	compat(verifyPayment, corg.compatKey, `{"invoice_id":"plink_none"}`, 404)
	compat(verifyPayment, other.compatKey, `{"invoice_id":"`+inv+`"}`, 404)
	compat(verifyPayment, org.APIKey, `{"invoice_id":"`+inv+`"}`, 401)

	// Every operation of the document was exercised, with a success and
	// (but for the document itself) an error.
	var missing []string
	for tmpl, item := range doc.doc["paths"].(map[string]any) {
		for method := range item.(map[string]any) {
			key := strings.ToUpper(method) + " " + tmpl
			ok2xx, ok4xx := false, tmpl == "/openapi.json"
			for status := range doc.seen[key] {
				ok2xx = ok2xx || status < 300
				ok4xx = ok4xx || status >= 400
			}
			if !ok2xx || !ok4xx {
				missing = append(missing, key)
			}
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Fatalf("operations not exercised with a success and an error: %v", missing)
	}
}

// TestOpenAPIDocument checks the document itself: every $ref resolves,
// every schema uses only keywords the validator knows, every operation has
// an operationId, and every error response's schema is an error envelope.
func TestOpenAPIDocument(t *testing.T) {
	h := newHarness(t)
	doc := loadAPIDoc(t, h.URL+"/api/openapi.json")
	ids := map[string]bool{}
	for tmpl, item := range doc.doc["paths"].(map[string]any) {
		for method, opAny := range item.(map[string]any) {
			op := opAny.(map[string]any)
			id, _ := op["operationId"].(string)
			if id == "" || ids[id] {
				t.Fatalf("%s %s: operationId %q missing or repeated", method, tmpl, id)
			}
			ids[id] = true
			for status, r := range op["responses"].(map[string]any) {
				resp := r.(map[string]any)
				if ref, ok := resp["$ref"].(string); ok {
					target, err := doc.v.resolve(ref)
					if err != nil {
						t.Fatal(err)
					}
					resp = target.(map[string]any)
				}
				schema := resp["content"].(map[string]any)["application/json"].(map[string]any)["schema"]
				if status[0] != '4' && status[0] != '5' {
					continue
				}
				// The UddoktaPay-compatible endpoints answer errors in
				// UddoktaPay's shape, and only those.
				if slices.Contains(op["tags"].([]any), any("uddoktapay")) {
					if err := doc.v.validateJSON(schema, []byte(`{"status":false,"message":"amount: is required"}`)); err != nil {
						t.Fatalf("%s %s %s: %v", method, tmpl, status, err)
					}
					for _, other := range []string{`{"error":{"code":"unauthorized","message":"x"}}`, `{"status":true,"message":"x"}`} {
						if err := doc.v.validateJSON(schema, []byte(other)); err == nil {
							t.Fatalf("%s %s %s: the error schema accepts %s", method, tmpl, status, other)
						}
					}
					continue
				}
				// An error response is an envelope whose codes are all
				// among those of the Error schema, and nothing else.
				target, err := doc.v.resolve(schema.(map[string]any)["$ref"].(string))
				if err != nil {
					t.Fatalf("%s %s %s: %v", method, tmpl, status, err)
				}
				fields := target.(map[string]any)["properties"].(map[string]any)["error"].(map[string]any)["properties"].(map[string]any)
				codes := fields["code"].(map[string]any)["enum"].([]any)
				// A message from the schema's own list where it has one.
				message := any("missing_api_key")
				if messages, ok := fields["message"].(map[string]any)["enum"].([]any); ok {
					message = messages[0]
				}
				for _, c := range codes {
					env, _ := json.Marshal(map[string]any{"error": map[string]any{"code": c, "message": message}})
					if err := doc.v.validateJSON(schema, env); err != nil {
						t.Fatalf("%s %s %s: %v", method, tmpl, status, err)
					}
					doc.validateSchema("Error", env)
				}
				if err := doc.v.validateJSON(schema, []byte(`{"id":"dep_x"}`)); err == nil {
					t.Fatalf("%s %s %s: the error schema accepts a non-envelope", method, tmpl, status)
				}
			}
		}
	}
	// Every schema uses only keywords the validator knows.
	if err := doc.v.checkKeywords(doc.doc["components"], "components"); err != nil {
		t.Fatal(err)
	}
	if err := doc.v.checkKeywords(doc.doc["paths"], "paths"); err != nil {
		t.Fatal(err)
	}
}

// downStore fails every transaction with engine.ErrUnavailable while down,
// as a store whose database has no writable primary.
type downStore struct {
	payd.Store
	down atomic.Bool
}

func (s *downStore) InTx(ctx context.Context, fn func(ctx context.Context, tx engine.Tx) error) error {
	if s.down.Load() {
		return fmt.Errorf("test: no primary: %w", engine.ErrUnavailable)
	}
	return s.Store.InTx(ctx, fn)
}

func (s *downStore) ReadTx(ctx context.Context, fn func(ctx context.Context, tx engine.Tx) error) error {
	if s.down.Load() {
		return fmt.Errorf("test: no primary: %w", engine.ErrUnavailable)
	}
	return s.Store.ReadTx(ctx, fn)
}

// TestOpenAPIDatabaseUnavailable: while no writable primary is reachable,
// every documented operation but the document itself answers a 503 the
// document lists (database_unavailable, or the compat endpoints' shape),
// with Retry-After.
func TestOpenAPIDatabaseUnavailable(t *testing.T) {
	var store, inboxStore *downStore
	h := newHarness(t, func(c *payd.Config) { store = &downStore{Store: c.Store}; c.Store = store })
	ih := newHarness(t, paydtest.WithSMSInbox(smsinbox.Config{Silence: 5 * time.Minute}),
		func(c *payd.Config) { inboxStore = &downStore{Store: c.Store}; c.Store = inboxStore })
	doc := loadAPIDoc(t, h.URL+"/api/openapi.json")
	org := h.newCompatOrg()
	iorg := ih.NewOrg(engine.OrganizationSettings{})
	token := ih.addDevice(iorg, ih.AddWallet(iorg, "bkash", "cash_out", "01811111111", "Agent").ID)
	store.down.Store(true)
	inboxStore.down.Store(true)
	for tmpl, item := range doc.doc["paths"].(map[string]any) {
		if tmpl == "/openapi.json" {
			continue
		}
		for method := range item.(map[string]any) {
			method = strings.ToUpper(method)
			req := request{Method: method, Path: "/api" + strings.ReplaceAll(tmpl, "{id}", "dep_00000000000000000000000000"), APIKey: org.APIKey, Sign: true}
			server, o := h, org.testOrg
			switch {
			case strings.HasPrefix(tmpl, "/v1/devices/"):
				server, o, req.APIKey, req.Sign = ih, iorg, token, false
			case tmpl == "/checkout-v2" || tmpl == "/verify-payment":
				req.APIKey, req.Sign = "", false
				req.Header = map[string]string{"RT-UDDOKTAPAY-API-KEY": org.compatKey}
			}
			if method == http.MethodPost {
				req.Body = `{}`
			}
			res := server.Do(o, req)
			if res.Status != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" {
				t.Errorf("%s %s: %d Retry-After %q: %s", method, tmpl, res.Status, res.Header.Get("Retry-After"), res.Body)
				continue
			}
			doc.record(method, tmpl, res.Status, res.Body)
			if !strings.HasPrefix(tmpl, "/checkout-v2") && !strings.HasPrefix(tmpl, "/verify-payment") && res.ErrorCode() != engine.CodeDatabaseUnavailable {
				t.Errorf("%s %s: %s, want %s", method, tmpl, res.Body, engine.CodeDatabaseUnavailable)
			}
		}
	}
	n := 0
	for key, statuses := range doc.seen {
		if statuses[http.StatusServiceUnavailable] {
			n++
		} else if key != "GET /openapi.json" {
			t.Errorf("%s: no 503 seen", key)
		}
	}
	if n < 20 {
		t.Fatalf("only %d operations answered 503", n)
	}
}
