package transport_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydtest"
	"github.com/payd-engine/payd/provider/sandbox"
	"github.com/payd-engine/payd/storage/postgres"
	"github.com/payd-engine/payd/storage/postgres/pgtest"
	"github.com/payd-engine/payd/transport/signing"
)

// hostileCase is one hostile request and the answer the contract gives it.
type hostileCase struct {
	name   string
	method string // POST by default
	path   string
	body   string
	sign   bool // a valid H2H signature over whatever is sent
	header map[string]string
	// raw, when set, is sent byte for byte instead (what net/http's
	// client refuses to write); "{KEY}" is replaced by the API key.
	raw string
	// want is the status; code the error code, "" when the answer is
	// net/http's own (a malformed request never reaches payd's handlers),
	// "*" for any (the hosted checkout answers its 404 as a page).
	want int
	code string
}

// TestHostileInput sends hostile requests through HTTP to every endpoint:
// oversized and deeply nested bodies, invalid UTF-8, huge metadata, NUL
// bytes, header injection, path tricks in IDs, SQL metacharacters in every
// string field, odd amounts and mass assignment. Each gets its 4xx (never a
// 500, a redirect or a dropped connection) and leaves nothing stored. On
// SQLite and, with PAYD_TEST_POSTGRES_URL, on Postgres, where bytes SQLite
// keeps would make an error.
func TestHostileInput(t *testing.T) {
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			var h *harness
			if kind == "postgres" {
				url := pgtest.URL(t)
				h = newHarness(t)
				store, err := postgres.Open(context.Background(), url, sandbox.Migrations())
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { store.Close() })
				h.Config.Store = store
				h.Rebuild()
			} else {
				h = newHarness(t)
			}
			runHostile(t, h)
		})
	}
}

func runHostile(t *testing.T, h *harness) {
	ctx := context.Background()
	org := h.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true), WithdrawalsEnabled: ptr(true)})
	other := h.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true), WithdrawalsEnabled: ptr(true)})
	h.AddWallet(org, "bkash", "cash_out", "01811111111", "Agent")
	h.Fund(org, "100000")
	// The targets of verify and settle cases: a pending deposit and a
	// processing withdrawal, which no hostile request may change.
	dep := h.CreateH2H(org, h2h(kv{"merchant_id", `"target-deposit"`}))
	wd := h.Do(org, request{Path: "/api/v1/withdraws", APIKey: org.APIKey, Body: withdrawal(kv{"merchant_id", `"target-withdrawal"`})})
	if dep.Status != 201 || wd.Status != 201 {
		t.Fatalf("setup: %d %s / %d %s", dep.Status, dep.Body, wd.Status, wd.Body)
	}
	depID, wdID := str(dep.JSON, "id"), str(wd.JSON, "id")
	verifyPath := "/api/v1/deposits/" + depID + "/verify"
	settlePath := "/api/sandbox/withdraws/" + wdID + "/settle"
	balanceBefore := h.Balance(org)

	cases := hostileCases(depID, wdID, verifyPath, settlePath)
	fivexx := 0
	for i, c := range cases {
		// Every body names a merchant_id of its own, to look for after.
		c.body = strings.ReplaceAll(c.body, `"MID"`, fmt.Sprintf(`"hostile-%d"`, i))
		status, code, body := sendHostile(t, h, org, c)
		if status >= 500 {
			fivexx++
		}
		if status != c.want || code != c.code && c.code != "*" {
			t.Errorf("%s: %d %q, want %d %q; body %.300s", c.name, status, code, c.want, c.code, body)
		}
	}

	// Nothing stored: no deposit, withdrawal, payment, attempt, journal or
	// event came of any of it.
	err := h.Config.Store.ReadTx(ctx, func(ctx context.Context, tx engine.Tx) error {
		for i := range cases {
			mid := fmt.Sprintf("hostile-%d", i)
			for _, o := range []*testOrg{org, other} {
				if d, err := tx.GetDepositByMerchantID(ctx, o.ID, mid); !errors.Is(err, engine.ErrNotFound) {
					t.Errorf("case %d (%s) stored deposit %v (%v)", i, cases[i].name, d, err)
				}
				if w, err := tx.GetWithdrawalByMerchantID(ctx, o.ID, mid); !errors.Is(err, engine.ErrNotFound) {
					t.Errorf("case %d (%s) stored withdrawal %v (%v)", i, cases[i].name, w, err)
				}
			}
		}
		d, err := tx.GetDeposit(ctx, org.ID, depID)
		if err != nil {
			return err
		}
		if d.Status != engine.StatusPending || d.AttemptsUsed != 0 {
			t.Errorf("the target deposit is %s with %d attempts", d.Status, d.AttemptsUsed)
		}
		w, err := tx.GetWithdrawal(ctx, org.ID, wdID)
		if err != nil {
			return err
		}
		if w.MerchantID != "target-withdrawal" || !w.Amount.Equal(dec("500")) {
			t.Errorf("the target withdrawal changed: %+v", w)
		}
		for _, o := range []*testOrg{org, other} {
			evs, err := tx.ListEvents(ctx, engine.ListEventsParams{OrganizationID: o.ID})
			if err != nil {
				return err
			}
			if want := map[*testOrg]int{org: 1, other: 0}[o]; len(evs) != want { // withdraw.created of the target
				t.Errorf("%d events, want %d", len(evs), want)
			}
			js, err := tx.ListJournals(ctx, o.ID)
			if err != nil {
				return err
			}
			if want := map[*testOrg]int{org: 2, other: 0}[o]; len(js) != want { // the funding and the target's hold
				t.Errorf("%d journals, want %d", len(js), want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := h.Balance(org); got != balanceBefore {
		t.Errorf("balance moved: %s -> %s", balanceBefore, got)
	}
	if _, err := sandbox.NewSQLStore(h.Config.Store).GetSandboxPayment(ctx, org.ID, "bkash", "HOSTILE1"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("a hostile sandbox payment was recorded: %v", err)
	}
	accepted := runAcceptedVerbatim(t, h, org)
	t.Logf("FIGURES hostile_inputs=%d accepted_verbatim=%d 5xx=%d", len(cases), accepted, fivexx)
}

// runAcceptedVerbatim sends SQL metacharacters, quotes and unicode in the
// free-text fields that allow them (merchant_id, metadata, redirect_url): they
// are stored and answered back byte for byte, and the tables are intact.
func runAcceptedVerbatim(t *testing.T, h *harness, org *testOrg) int {
	sqlish := []string{
		`'; DROP TABLE deposits; --`,
		`" OR "1"="1`,
		`1' OR '1'='1' /*`,
		`x'); DELETE FROM withdrawals; --`,
		`\'; SELECT pg_sleep(10); --`,
		`%' AND 1=0 UNION SELECT * FROM api_keys --`,
		"ﾟ･✿ヾ╲(｡◕‿◕｡)╱✿･ﾟ $$ ; -- ",
	}
	n := 0
	for i, s := range sqlish {
		mid := fmt.Sprintf("%s #%d", s, i)
		meta := fmt.Sprintf(`{%s:%s,"n":1.50}`, mustJSON(t, s), mustJSON(t, s))
		for _, r := range []request{
			{Body: redirect(kv{"merchant_id", mustJSON(t, mid)}, kv{"metadata", meta},
				kv{"redirect_url", mustJSON(t, "https://shop.example/return?q="+strings.NewReplacer(" ", "%20", "\"", "%22", "\\", "%5C").Replace(s))})},
			{Path: "/api/v1/withdraws", Body: withdrawal(kv{"merchant_id", mustJSON(t, mid)}, kv{"metadata", meta})},
		} {
			r.APIKey = org.APIKey
			res := h.Do(org, r)
			if res.Status != 200 && res.Status != 201 {
				t.Errorf("verbatim %q: %d %s", mid, res.Status, res.Body)
				continue
			}
			n++
			if str(res.JSON, "merchant_id") != mid || !strings.Contains(string(res.Body), `"metadata":`+meta) {
				t.Errorf("verbatim %q came back as %s", mid, res.Body)
			}
			path := "/api/v1/deposits/"
			if r.Path != "" {
				path = "/api/v1/withdraws/"
			}
			got := h.Do(org, request{Method: "GET", Path: path + str(res.JSON, "id"), APIKey: org.APIKey})
			if got.Status != 200 || str(got.JSON, "merchant_id") != mid {
				t.Errorf("read back %q: %d %s", mid, got.Status, got.Body)
			}
		}
	}
	return n
}

// sendHostile sends one case, following no redirect, and returns the
// status, the error code and the body. A dropped connection (a panic in a
// handler) fails the test.
func sendHostile(t *testing.T, h *harness, org *testOrg, c hostileCase) (int, string, []byte) {
	t.Helper()
	method := c.method
	if method == "" {
		method = http.MethodPost
	}
	var res *http.Response
	if c.raw != "" {
		conn, err := net.Dial("tcp", strings.TrimPrefix(h.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		raw := strings.ReplaceAll(c.raw, "{KEY}", org.APIKey)
		if _, err := io.WriteString(conn, raw); err != nil {
			t.Fatalf("%s: write: %v", c.name, err)
		}
		if res, err = http.ReadResponse(bufio.NewReader(conn), nil); err != nil {
			t.Fatalf("%s: no answer (%v): a panic or a dropped connection", c.name, err)
		}
	} else {
		req, err := http.NewRequest(method, h.URL+c.path, strings.NewReader(c.body))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		req.Header.Set("Authorization", "Bearer "+org.APIKey)
		if c.sign {
			ts := signing.Timestamp(h.Clock.Now())
			req.Header.Set(signing.TimestampHeader, ts)
			req.Header.Set(signing.SignatureHeader, signing.Sign([]byte(org.Secret), ts, method, req.URL.RequestURI(), []byte(c.body)))
		}
		for k, v := range c.header {
			req.Header[k] = []string{v}
		}
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		if res, err = client.Do(req); err != nil {
			t.Fatalf("%s: no answer (%v): a panic or a dropped connection", c.name, err)
		}
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	var r response
	r.Body = body
	_ = json.Unmarshal(body, &r.JSON)
	if res.StatusCode >= 400 && r.ErrorCode() == "" && c.code != "" && c.code != "*" {
		t.Errorf("%s: %d without the error envelope: %.200s", c.name, res.StatusCode, body)
	}
	for k, vs := range res.Header {
		for _, v := range vs {
			if strings.ContainsAny(k+v, "\r\n") || strings.EqualFold(k, "X-Injected") {
				t.Errorf("%s: injected response header %s: %q", c.name, k, v)
			}
		}
	}
	return res.StatusCode, r.ErrorCode(), body
}

// hostileCases builds the table. MID in a body becomes a merchant_id of
// the case's own.
func hostileCases(depID, wdID, verifyPath, settlePath string) []hostileCase {
	var cs []hostileCase
	add := func(c hostileCase) { cs = append(cs, c) }
	bad := func(name, method, path, body string, sign bool, want int, code string) {
		add(hostileCase{name: name, method: method, path: path, body: body, sign: sign, want: want, code: code})
	}
	const invalid = "invalid_request"
	// The POST endpoints, each with a valid body to spoil.
	type endpoint struct {
		name, path string
		sign       bool
		body       func(over ...kv) string
	}
	endpoints := []endpoint{
		{"redirect deposit", "/api/v1/deposits", false, redirect},
		{"h2h deposit", "/api/v1/deposits", true, h2h},
		{"verify", verifyPath, true, func(over ...kv) string {
			return paydtest.Body([]kv{{"provider_transaction_id", `"HOSTILE1"`}}, over...)
		}},
		{"withdrawal", "/api/v1/withdraws", false, withdrawal},
		{"sandbox payment", "/api/sandbox/payments", false, func(over ...kv) string {
			return paydtest.Body([]kv{{"channel", `"bkash"`}, {"transaction_id", `"HOSTILE1"`}, {"payer_phone", `"01712345678"`},
				{"recipient_phone", `"01811111111"`}, {"amount", `"500"`}, {"status", `"completed"`}}, over...)
		}},
		{"sandbox settle", settlePath, false, func(over ...kv) string { return paydtest.Body([]kv{{"outcome", `"succeeded"`}}, over...) }},
		{"sandbox outage", "/api/sandbox/outage", false, func(over ...kv) string { return paydtest.Body([]kv{{"enabled", `false`}}, over...) }},
	}
	stringFields := map[string][]string{
		"redirect deposit": {"amount", "payment_method", "redirect_url", "merchant_id", "checkout_mode"},
		"h2h deposit":      {"amount", "payment_method", "redirect_url", "merchant_id"},
		"verify":           {"provider_transaction_id"},
		"withdrawal":       {"amount", "phone", "payment_method", "merchant_id"},
		"sandbox payment":  {"channel", "transaction_id", "payer_phone", "recipient_phone", "amount", "status", "completed_at", "type"},
		"sandbox settle":   {"outcome"},
	}
	deep := func(n int, open, close string) string {
		return strings.Repeat(open, n) + "1" + strings.Repeat(close, n)
	}
	for _, e := range endpoints {
		p := e.name + ": "
		// Size.
		bad(p+"body of 64 KiB + 1", "", e.path, e.body(kv{"x", `"` + strings.Repeat("x", 64<<10) + `"`}), e.sign, 413, "request_too_large")
		bad(p+"body of 4 MiB", "", e.path, `{"x":"`+strings.Repeat("x", 4<<20)+`"}`, e.sign, 413, "request_too_large")
		// Nesting.
		bad(p+"object nested 33 deep", "", e.path, e.body(kv{"x", deep(33, `{"a":`, "}")}), e.sign, 400, invalid)
		bad(p+"array nested 30000 deep", "", e.path, e.body(kv{"x", deep(30000, "[", "]")}), e.sign, 400, invalid)
		bad(p+"unbalanced nesting", "", e.path, strings.Repeat(`{"a":[`, 5000), e.sign, 400, invalid)
		bad(p+"body is deep arrays only", "", e.path, deep(20000, "[", "]"), e.sign, 400, invalid)
		// Encoding.
		bad(p+"invalid UTF-8 in a key", "", e.path, e.body(kv{"\xff\xfe", `"x"`}), e.sign, 400, invalid)
		bad(p+"UTF-16 body", "", e.path, "\xff\xfe{\x00}\x00", e.sign, 400, invalid)
		bad(p+"byte order mark", "", e.path, "\xef\xbb\xbf"+e.body(), e.sign, 400, invalid)
		bad(p+"raw NUL in the object", "", e.path, strings.Replace(e.body(), "{", "{\x00", 1), e.sign, 400, invalid)
		bad(p+"trailing garbage", "", e.path, e.body()+"\x00", e.sign, 400, invalid)
		bad(p+"JSON with comments", "", e.path, "/* x */"+e.body(), e.sign, 400, invalid)
		// Mass assignment.
		for _, field := range []string{"status", "balance", "organization_id", "id", "created_at", "attempts_used", "commission", "fee", "verification", "provider_transaction_id", "deposit_id", "amount_credited"} {
			if e.name == "verify" && field == "provider_transaction_id" {
				continue
			}
			value := `"succeeded"`
			switch field {
			case "balance":
				value = `"1000000.00"`
			case "organization_id":
				value = `"org_someone_else"`
			case "id", "deposit_id":
				value = `"` + depID + `"`
			case "verification":
				value = `{"state":"succeeded","attempts_used":0}`
			case "attempts_used":
				value = `0`
			}
			bad(p+"mass assignment of "+field, "", e.path, e.body(kv{field, value}), e.sign, 400, invalid)
		}
		bad(p+"mass assignment by case", "", e.path, e.body(kv{"Status", `"succeeded"`}), e.sign, 400, invalid)
		// Every string field: invalid UTF-8, NUL, SQL, wrong type, huge.
		for _, f := range stringFields[e.name] {
			for _, v := range []struct{ name, raw string }{
				{"invalid UTF-8", "\"\xc3\x28\""},
				{"overlong UTF-8 NUL", "\"\xc0\x80\""},
				{"surrogate half", "\"\xed\xa0\x80\""},
				{"escaped NUL", `"\u0000"`},
				{"raw NUL", "\"a\x00b\""},
				{"raw newline", "\"a\nb\""},
				{"SQL quote", `"' OR '1'='1"`},
				{"SQL statement", `"1; DROP TABLE deposits; --"`},
				{"SQL comment", `"bkash'--"`},
				{"huge", `"` + strings.Repeat("9", 60000) + `"`},
				{"object", `{"$gt":""}`},
				{"array", `["x"]`},
				{"number", `-0`},
			} {
				if f == "merchant_id" && (v.name == "SQL quote" || v.name == "SQL statement" || v.name == "SQL comment") {
					continue // free text: stored verbatim (runAcceptedVerbatim)
				}
				if (f == "provider_transaction_id" || f == "transaction_id") && v.name == "SQL comment" {
					continue // printable ASCII without spaces: a valid transaction ID, stored verbatim
				}
				if f == "redirect_url" && v.name == "SQL comment" {
					continue // not a URL anyway: same answer below
				}
				bad(p+f+" "+v.name, "", e.path, e.body(kv{f, v.raw}), e.sign, 400, invalid)
			}
		}
		// Amounts.
		if strings.Contains(strings.Join(stringFields[e.name], ","), "amount") {
			amounts := []string{
				`"-0"`, `"-0.00"`, `"+0"`, `"0e0"`, `"1e3"`, `"1E3"`, `"5e2"`, `"1.5e2"`, `"500e0"`, `"0x1F4"`, `"Infinity"`,
				`"NaN"`, `"500.001"`, `"500.0000000000000000001"`, `"١٢٣"`, `"５００"`, `"500\u0000"`, `"500 "`, `"\u00a0500"`,
				`"99999999999999999999999999999999999"`, `"-500"`, `-0`, `1e3`, `500.0`, `5E+2`, `null`, `true`,
			}
			if e.name != "sandbox payment" { // a simulated payment of 0 is valid; a deposit or payout of 0 is not
				amounts = append(amounts, `"0.00"`)
			}
			for _, a := range amounts {
				bad(p+"amount "+a, "", e.path, e.body(kv{"amount", a}), e.sign, 400, invalid)
			}
		}
	}
	// Metadata, where the endpoint takes it.
	for _, e := range endpoints[:4] {
		if e.name == "verify" {
			continue
		}
		p := e.name + ": "
		bad(p+"metadata of 51 keys", "", e.path, e.body(kv{"metadata", metadataKeys(51)}), e.sign, 400, invalid)
		bad(p+"metadata of 8193 bytes", "", e.path, e.body(kv{"metadata", metadataOfSize(8193)}), e.sign, 400, invalid)
		bad(p+"metadata of 60 KiB", "", e.path, e.body(kv{"metadata", metadataOfSize(60 << 10)}), e.sign, 400, invalid)
		bad(p+"metadata of 10000 keys", "", e.path, e.body(kv{"metadata", metadataKeys(10000)}), e.sign, 413, "request_too_large")
		bad(p+"metadata nested 33 deep", "", e.path, e.body(kv{"metadata", deep(33, `{"a":`, "}")}), e.sign, 400, invalid)
		bad(p+"metadata with a duplicate key", "", e.path, e.body(kv{"metadata", `{"a":1,"a":2}`}), e.sign, 400, invalid)
		bad(p+"metadata with invalid UTF-8", "", e.path, e.body(kv{"metadata", "{\"a\":\"\xff\"}"}), e.sign, 400, invalid)
		bad(p+"metadata with a raw NUL", "", e.path, e.body(kv{"metadata", "{\"a\":\"\x00\"}"}), e.sign, 400, invalid)
		bad(p+"metadata an array", "", e.path, e.body(kv{"metadata", `[{"a":1}]`}), e.sign, 400, invalid)
		bad(p+"metadata a string of JSON", "", e.path, e.body(kv{"metadata", `"{\"a\":1}"`}), e.sign, 400, invalid)
	}

	// Path tricks in IDs, over the raw wire so nothing cleans them first.
	getAs := func(name, target string, want int, code string) {
		add(hostileCase{name: "path: " + name, raw: "GET " + target + " HTTP/1.1\r\nHost: payd\r\nAuthorization: Bearer {KEY}\r\nConnection: close\r\n\r\n", want: want, code: code})
	}
	get := func(name, target string, want int) { getAs(name, target, want, "not_found") }
	for _, base := range []string{"/api/v1/deposits/", "/api/v1/withdraws/"} {
		for _, id := range []string{
			"..", "%2e%2e", "..%2F..%2Fbalance", "..%2f" + wdID, "a%2Fb", "%2F", "%5C..%5C..%5Cetc%5Cpasswd", "..\\..\\",
			strings.Repeat("d", 10000), "dep_%C3%BC%E2%98%83", "%F0%9F%92%B8", "%00", "dep_x%00.json", "%FF%FE", "%C0%AF",
			"dep_x'%20OR%20'1'='1", "dep_x%3BDROP%20TABLE%20deposits", "%25", "~", "*", "dep_x%0D%0AX-Injected:%201",
		} {
			get(base+id, base+id, 404)
		}
		// Not a URL: net/http refuses it before any handler.
		for _, id := range []string{"%", "%zz", "dep_x' OR '1'='1"} {
			getAs(base+id, base+id, 400, "")
		}
	}
	for _, target := range []string{
		"/api/v1/deposits/../withdraws/" + wdID, "/api/v1/deposits/./" + depID, "/api//v1/deposits/" + depID,
		"/api/v1/deposits/" + depID + "/../../withdraws/" + wdID, "/api/v1/%2e%2e/v1/balance", "/api/v1/deposits/" + depID + "/verify/..",
		"/checkout/%00", "/api/sandbox/withdraws/%00/settle",
	} {
		get(target, target, 404)
	}
	// The withdrawal list's filter: hostile text matches nothing, or is
	// refused naming the parameter before it reaches the database.
	getAs("merchant_id injection", "/api/v1/withdraws?merchant_id='%20OR%20'1'='1", 200, "")
	for _, target := range []string{
		"/api/v1/withdraws?merchant_id=%00", "/api/v1/withdraws?merchant_id=%FF", "/api/v1/withdraws?merchant_id=" + strings.Repeat("m", 5000),
		"/api/v1/deposits?starting_after=%00", "/api/v1/events?resource_id=%FF", "/api/v1/balance/transactions?ending_before=" + strings.Repeat("t", 5000),
	} {
		getAs(target, target, 400, "invalid_request")
	}
	for _, target := range []string{"/checkout/..%2F..%2Fapi%2Fv1%2Fbalance", "/checkout/" + strings.Repeat("t", 5000), "/checkout/%E2%98%83"} {
		getAs(target, target, 404, "*") // the checkout's own not-found page
	}
	getAs("GET of a settle with a tricky ID", "/api/sandbox/withdraws/..%2F"+wdID+"/settle", 405, "method_not_allowed")
	// Signed POSTs to tricky paths: the signature is valid, the ID is not.
	for _, id := range []string{"..%2F" + depID, "%00", strings.Repeat("x", 5000), "dep_%E2%98%83"} {
		add(hostileCase{name: "verify path " + id[:min(len(id), 20)], path: "/api/v1/deposits/" + id + "/verify",
			body: `{"provider_transaction_id":"HOSTILE1"}`, sign: true, want: 404, code: "not_found"})
	}
	add(hostileCase{name: "settle of an ID with a NUL", path: "/api/sandbox/withdraws/wd_%00/settle", body: `{"outcome":"failed"}`, want: 404, code: "not_found"})

	// Headers: injection, NUL, size, over the raw wire.
	raw := func(name, headers string, want int, code string) {
		add(hostileCase{name: "header: " + name, raw: "POST /api/v1/withdraws HTTP/1.1\r\nHost: payd\r\n" + headers +
			"Content-Length: 2\r\nConnection: close\r\n\r\n{}", want: want, code: code})
	}
	raw("CR in a value", "Authorization: Bearer {KEY}\rX-Injected: 1\r\n", 400, "")
	raw("bare LF ends a header line", "X-Service-Timestamp: 1\nX-Injected: 1\r\nAuthorization: Bearer {KEY}\r\n", 400, invalid)
	raw("NUL in a value", "Authorization: Bearer {KEY}\x00\r\n", 400, "")
	raw("NUL in a name", "X-Na\x00me: 1\r\nAuthorization: Bearer {KEY}\r\n", 400, "")
	raw("space before the colon", "Authorization : Bearer {KEY}\r\n", 400, "")
	raw("obsolete line folding (joined, as RFC 9112 allows)", "Authorization: Bearer\r\n {KEY}\r\n", 400, invalid)
	raw("header of 2 MiB", "Authorization: Bearer {KEY}\r\nX-Big: "+strings.Repeat("a", 2<<20)+"\r\n", 431, "")
	raw("api key of 100 KiB", "Authorization: Bearer payd_sk_"+strings.Repeat("a", 100<<10)+"\r\n", 401, "unauthorized")
	raw("20000 headers", strings.Repeat("X-H: v\r\n", 20000)+"Authorization: Bearer nope\r\n", 401, "unauthorized")
	raw("two Authorization headers", "Authorization: Bearer {KEY}\r\nAuthorization: Bearer payd_sk_other\r\n", 400, invalid)
	raw("signature of 50 KiB", "Authorization: Bearer {KEY}\r\nX-Service-Timestamp: 1\r\nX-Service-Signature: v1="+strings.Repeat("A", 50<<10)+"\r\n", 400, invalid)
	add(hostileCase{name: "header: Content-Length and a bad chunked body", raw: "POST /api/v1/withdraws HTTP/1.1\r\nHost: payd\r\nAuthorization: Bearer {KEY}\r\n" +
		"Transfer-Encoding: chunked\r\nContent-Length: 6\r\nConnection: close\r\n\r\nzz\r\n{}\r\n", want: 400, code: "*"})
	raw("negative Content-Length", "Authorization: Bearer {KEY}\r\nContent-Length: -1\r\n", 400, "")
	add(hostileCase{name: "header: UTF-8 API key", path: "/api/v1/withdraws", body: withdrawal(), header: map[string]string{"Authorization": "Bearer payd_sk_☃"}, want: 401, code: "unauthorized"})
	add(hostileCase{name: "header: timestamp with CRLF-like text", path: "/api/v1/deposits", body: h2h(),
		header: map[string]string{"X-Service-Timestamp": "1%0d%0aX-Injected: 1", "X-Service-Signature": "v1=AAAA"}, want: 401, code: "unauthorized"})
	add(hostileCase{name: "chunked body of 1 MiB", raw: "POST /api/v1/withdraws HTTP/1.1\r\nHost: payd\r\nAuthorization: Bearer {KEY}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n" +
		fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", 1<<20, strings.Repeat("x", 1<<20)), want: 413, code: "request_too_large"})
	return cs
}
