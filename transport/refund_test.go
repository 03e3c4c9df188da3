package transport_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	payd "github.com/payd-engine/payd"
	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydtest"
	"github.com/payd-engine/payd/provider/sandbox"
	"github.com/payd-engine/payd/transport"
)

// Refunds (the contract's extension), over HTTP on both stores.

// paidH2H creates an H2H deposit of org's for amount and pays it through
// the sandbox, and returns its ID.
func (h *harness) paidH2H(org *testOrg, merchantID, amount, txID string) string {
	h.t.Helper()
	created := h.CreateH2H(org, h2h(kv{"merchant_id", `"` + merchantID + `"`}, kv{"amount", `"` + amount + `"`}))
	if created.Status != http.StatusCreated {
		h.t.Fatalf("create: %d %s", created.Status, created.Body)
	}
	id := str(created.JSON, "id")
	pay := fmt.Sprintf(`{"channel":"bkash","transaction_id":%q,"payer_phone":"01712345678","recipient_phone":"01811111111","amount":%q,"status":"completed"}`, txID, amount)
	if res := h.SandboxPay(org, pay); res.Status != http.StatusCreated {
		h.t.Fatalf("payment: %d %s", res.Status, res.Body)
	}
	h.Verify(org, id, `{"provider_transaction_id":"`+txID+`"}`)
	h.Work()
	if res := h.GetDeposit(org, id, true); str(res.JSON, "status") != engine.StatusSucceeded {
		h.t.Fatalf("deposit not succeeded: %s", res.Body)
	}
	return id
}

// refund posts a refund of deposit dep, signed when sign is set.
func (h *harness) refund(org *testOrg, dep, body string, sign bool) *response {
	h.t.Helper()
	return h.Do(org, request{Path: "/api/v1/deposits/" + dep + "/refunds", APIKey: org.APIKey, Sign: sign, Body: body})
}

func (h *harness) getJSON(org *testOrg, path string, sign bool) *response {
	h.t.Helper()
	return h.Do(org, request{Method: http.MethodGet, Path: path, APIKey: org.APIKey, Sign: sign})
}

// ledgerClean fails the test unless every balance row equals its entries
// (what payd admin ledger verify checks).
func (h *harness) ledgerClean() {
	h.t.Helper()
	check, err := h.Engine.VerifyLedger(context.Background())
	if err != nil {
		h.t.Fatal(err)
	}
	if len(check.Differences) != 0 {
		h.t.Fatalf("ledger differences: %+v", check.Differences)
	}
}

func refundOrg(h *harness) *testOrg {
	org := h.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true), WithdrawalsEnabled: ptr(true)})
	h.AddWallet(org, "bkash", "cash_out", "01811111111", "Agent")
	return org
}

// TestRefundAttacks: the contract's refusals, each leaving nothing behind
// (no refund, no hold, no event): another organization's deposit is not
// found; a deposit that did not succeed is not refundable; an H2H
// deposit's refund must be signed; amounts are plain positive decimals
// of at most two places; a replayed merchant_id with another amount is a
// conflict; a refund beyond the deposit or the available balance is
// refused and holds nothing; a provider that cannot refund is a 503.
func TestRefundAttacks(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		org, other := refundOrg(h), refundOrg(h)
		dep := h.paidH2H(org, "paid", "500", "RFA1")
		pending := str(h.CreateH2H(org, h2h(kv{"merchant_id", `"pending"`})).JSON, "id")
		balance := h.Balance(org)

		for _, c := range []struct {
			name, dep, body string
			as              *testOrg
			sign            bool
			status          int
			code            string
		}{
			{"another organization's deposit", dep, `{"merchant_id":"x1"}`, other, true, 404, "not_found"},
			{"another organization's deposit, unsigned", dep, `{"merchant_id":"x1"}`, other, false, 404, "not_found"},
			{"no such deposit", "dep_nope", `{"merchant_id":"x1"}`, org, true, 404, "not_found"},
			{"a pending deposit", pending, `{"merchant_id":"x2"}`, org, true, 409, "deposit_not_refundable"},
			{"unsigned refund of an H2H deposit", dep, `{"merchant_id":"x3","amount":"10"}`, org, false, 401, "unauthorized"},
			{"three decimals", dep, `{"merchant_id":"x4","amount":"10.001"}`, org, true, 400, "invalid_request"},
			{"zero", dep, `{"merchant_id":"x4","amount":"0"}`, org, true, 400, "invalid_request"},
			{"zero with decimals", dep, `{"merchant_id":"x4","amount":"0.00"}`, org, true, 400, "invalid_request"},
			{"negative", dep, `{"merchant_id":"x4","amount":"-10"}`, org, true, 400, "invalid_request"},
			{"a JSON number", dep, `{"merchant_id":"x4","amount":10}`, org, true, 400, "invalid_request"},
			{"an exponent", dep, `{"merchant_id":"x4","amount":"1e2"}`, org, true, 400, "invalid_request"},
			{"empty amount", dep, `{"merchant_id":"x4","amount":""}`, org, true, 400, "invalid_request"},
			{"no merchant_id", dep, `{"amount":"10"}`, org, true, 400, "invalid_request"},
			{"a long merchant_id", dep, `{"merchant_id":"` + strings.Repeat("m", 256) + `"}`, org, true, 400, "invalid_request"},
			{"a long reason", dep, `{"merchant_id":"x5","reason":"` + strings.Repeat("r", 501) + `"}`, org, true, 400, "invalid_request"},
			{"an unknown field", dep, `{"merchant_id":"x5","currency":"BDT"}`, org, true, 400, "invalid_request"},
			{"more than the deposit", dep, `{"merchant_id":"x6","amount":"500.01"}`, org, true, 409, "refund_exceeds_deposit"},
		} {
			res := h.refund(c.as, c.dep, c.body, c.sign)
			if res.Status != c.status || res.ErrorCode() != c.code {
				t.Errorf("%s: %d %s, want %d %s", c.name, res.Status, res.Body, c.status, c.code)
			}
		}
		if got := h.Balance(org); got != balance {
			t.Errorf("balance after refusals %s, want %s", got, balance)
		}

		// A replay: the same merchant_id, deposit and amount is the same
		// refund (200); another amount, or none, is a conflict.
		first := h.refund(org, dep, `{"merchant_id":"r1","amount":"100","reason":"damaged"}`, true)
		if first.Status != http.StatusCreated || str(first.JSON, "status") != "processing" || str(first.JSON, "amount") != "100.00" {
			t.Fatalf("refund: %d %s", first.Status, first.Body)
		}
		again := h.refund(org, dep, `{"merchant_id":"r1","amount":"100.00","reason":"other words"}`, true)
		if again.Status != http.StatusOK || str(again.JSON, "id") != str(first.JSON, "id") {
			t.Errorf("replay: %d %s", again.Status, again.Body)
		}
		for _, body := range []string{`{"merchant_id":"r1","amount":"100.01"}`, `{"merchant_id":"r1"}`} {
			if res := h.refund(org, dep, body, true); res.Status != 409 || res.ErrorCode() != "merchant_id_conflict" {
				t.Errorf("replay %s: %d %s", body, res.Status, res.Body)
			}
		}
		// merchant_ids of deposits are another namespace.
		if res := h.refund(org, dep, `{"merchant_id":"paid","amount":"1"}`, true); res.Status != http.StatusCreated {
			t.Errorf("refund named as a deposit: %d %s", res.Status, res.Body)
		}

		// The available balance is 500 - 101 = 399: a debit leaves 50, and a
		// refund of 60 is refused and holds nothing.
		if _, err := h.Engine.AdjustBalance(context.Background(), engine.AdjustParams{OrganizationID: org.ID, Amount: "-349", Reason: "test", Actor: "test"}); err != nil {
			t.Fatal(err)
		}
		before := h.Balance(org)
		if res := h.refund(org, dep, `{"merchant_id":"r2","amount":"60"}`, true); res.Status != 403 || res.ErrorCode() != "insufficient_balance" {
			t.Errorf("beyond the balance: %d %s", res.Status, res.Body)
		}
		if got := h.Balance(org); got != before {
			t.Errorf("balance after a refused refund %s, want %s", got, before)
		}
		if res := h.getJSON(org, "/api/v1/refunds?deposit_id="+dep, true); len(res.JSON["data"].([]any)) != 2 {
			t.Errorf("refunds after refusals: %s", res.Body)
		}

		// A provider that cannot refund now: 503, after every other check.
		h.Sandbox.SetOutage(org.ID, true)
		if res := h.refund(org, dep, `{"merchant_id":"r3","amount":"10"}`, true); res.Status != 503 || res.ErrorCode() != "method_unavailable" {
			t.Errorf("outage: %d %s", res.Status, res.Body)
		}
		if res := h.refund(org, dep, `{"merchant_id":"r1","amount":"100"}`, true); res.Status != http.StatusOK {
			t.Errorf("replay during an outage: %d %s", res.Status, res.Body)
		}
		h.Sandbox.SetOutage(org.ID, false)

		// Reads: another organization's refund is not found; an H2H
		// deposit's refund is read signed.
		rf := "/api/v1/refunds/" + str(first.JSON, "id")
		if res := h.getJSON(other, rf, true); res.Status != 404 {
			t.Errorf("another organization's refund: %d %s", res.Status, res.Body)
		}
		if res := h.getJSON(org, rf, false); res.Status != 401 {
			t.Errorf("unsigned read: %d %s", res.Status, res.Body)
		}
		if res := h.getJSON(org, rf, true); res.Status != 200 || str(res.JSON, "reason") != "damaged" {
			t.Errorf("signed read: %d %s", res.Status, res.Body)
		}
		if res := h.getJSON(org, "/api/v1/refunds", false); res.Status != 401 {
			t.Errorf("unsigned list: %d %s", res.Status, res.Body)
		}
		if res := h.getJSON(other, "/api/v1/refunds", true); res.Status != 200 || len(res.JSON["data"].([]any)) != 0 {
			t.Errorf("another organization's list: %d %s", res.Status, res.Body)
		}
		h.ledgerClean()
	})
}

// TestConcurrentRefundsNeverExceedDeposit: many refunds of one deposit
// sent at once, each of a fifth of it, over HTTP: exactly five are
// accepted, the rest refused refund_exceeds_deposit, exactly the deposit
// is held (the balance could cover more), and the ledger's balances equal its entries. On both stores.
func TestConcurrentRefundsNeverExceedDeposit(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		org := refundOrg(h)
		dep := h.paidH2H(org, "race", "500", "RACE1")
		h.Fund(org, "10000") // the balance is not what bounds them
		const n = 24
		statuses := make([]int, n)
		codes := make([]string, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				res := h.refund(org, dep, fmt.Sprintf(`{"merchant_id":"race-%d","amount":"100"}`, i), true)
				statuses[i], codes[i] = res.Status, res.ErrorCode()
			})
		}
		wg.Wait()
		accepted := 0
		for i := range n {
			switch {
			case statuses[i] == http.StatusCreated:
				accepted++
			case statuses[i] != 409 || codes[i] != "refund_exceeds_deposit":
				t.Errorf("refund %d: %d %s", i, statuses[i], codes[i])
			}
		}
		if accepted != 5 {
			t.Errorf("%d refunds of 100 accepted for a deposit of 500, want 5", accepted)
		}
		var b map[string]string
		_ = json.Unmarshal([]byte(h.Balance(org)), &b)
		if b["available"] != "10000.00" || b["held"] != "500.00" {
			t.Errorf("balance %v, want 10000.00 available and 500.00 held", b)
		}
		h.ledgerClean()
	})
}

// TestRefundMerchantStory: the merchant refunds half of an H2H deposit,
// then the rest (no amount: all that is left), over the HTTP API; the
// sandbox settles both; the merchant's endpoint receives refund.created,
// refund.succeeded (twice each) and deposit.refunded, every one verified
// as Standard Webhooks; the deposit is refunded, verification included,
// and the available balance is lower by exactly the refunds. On both
// stores.
func TestRefundMerchantStory(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		h.Rebuild(paydtest.WithSandbox(sandbox.Config{PayoutMode: "manual"}), func(c *payd.Config) {
			c.Webhooks = transport.NewWebhookClient(true)
		})
		org := refundOrg(h)
		rcv := paydtest.NewReceiver(t, nil)
		_, secret := h.addEndpoint(org, rcv.URL+"/hooks")
		dep := h.paidH2H(org, "story", "800", "STORY1")
		balance := func() (available, held string) {
			var b map[string]string
			_ = json.Unmarshal([]byte(h.Balance(org)), &b)
			return b["available"], b["held"]
		}
		if a, _ := balance(); a != "800.00" {
			t.Fatalf("available %s after the deposit", a)
		}

		half := h.refund(org, dep, `{"merchant_id":"story-1","amount":"400","reason":"half back","metadata":{"ticket":7}}`, true)
		if half.Status != http.StatusCreated {
			t.Fatalf("first refund: %d %s", half.Status, half.Body)
		}
		settle := func(id string) {
			t.Helper()
			res := h.Do(org, request{Path: "/api/sandbox/refunds/" + id + "/settle", APIKey: org.APIKey, Body: `{"outcome":"succeeded"}`})
			if res.Status != http.StatusOK {
				t.Fatalf("settle: %d %s", res.Status, res.Body)
			}
			h.Work()
		}
		h.Work() // sent, pending in the sandbox
		if a, held := balance(); a != "400.00" || held != "400.00" {
			t.Fatalf("while the first refund runs: available %s, held %s", a, held)
		}
		settle(str(half.JSON, "id"))
		d := h.GetDeposit(org, dep, true)
		if str(d.JSON, "status") != "succeeded" || str(d.JSON, "refunded_amount") != "400.00" {
			t.Fatalf("deposit after half: %s", d.Body)
		}

		rest := h.refund(org, dep, `{"merchant_id":"story-2"}`, true)
		if rest.Status != http.StatusCreated || str(rest.JSON, "amount") != "400.00" {
			t.Fatalf("the rest: %d %s", rest.Status, rest.Body)
		}
		h.Work()
		settle(str(rest.JSON, "id"))
		d = h.GetDeposit(org, dep, true)
		if str(d.JSON, "status") != "refunded" || str(d.JSON, "verification", "state") != "refunded" || str(d.JSON, "refunded_amount") != "800.00" {
			t.Fatalf("deposit after all: %s", d.Body)
		}
		if a, held := balance(); a != "0.00" || held != "0.00" {
			t.Fatalf("after both refunds: available %s, held %s; want 0.00 and 0.00", a, held)
		}
		if res := h.refund(org, dep, `{"merchant_id":"story-3","amount":"1"}`, true); res.Status != 409 || res.ErrorCode() != "deposit_not_refundable" {
			t.Errorf("refund of a refunded deposit: %d %s", res.Status, res.Body)
		}
		for _, id := range []string{str(half.JSON, "id"), str(rest.JSON, "id")} {
			if res := h.getJSON(org, "/api/v1/refunds/"+id, true); str(res.JSON, "status") != "succeeded" || res.JSON["failure_code"] != nil {
				t.Errorf("refund %s: %s", id, res.Body)
			}
		}

		// The balance transactions show the holds and settlements.
		bts := h.getJSON(org, "/api/v1/balance/transactions?limit=100", true)
		var kinds []string
		for _, row := range bts.JSON["data"].([]any) {
			kinds = append(kinds, str(row, "kind")+"/"+str(row, "account"))
		}
		for _, want := range []string{"refund_hold/available", "refund_hold/held", "refund_settle/held"} {
			if n := countOf(kinds, want); n != 2 {
				t.Errorf("%d balance transactions %s, want 2 (all: %v)", n, want, kinds)
			}
		}

		// One pass posts a few deliveries per endpoint: pass until none is
		// left.
		for h.deliver() > 0 {
		}
		var types []string
		for _, dv := range rcv.Deliveries() {
			if !standardWebhooksVerify(secret, dv.Header, dv.Body) {
				t.Fatalf("delivery does not verify: %v %s", dv.Header, dv.Body)
			}
			var ev struct {
				Type string
				Data map[string]any
			}
			if err := json.Unmarshal(dv.Body, &ev); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(ev.Type, "refund.") && ev.Type != "deposit.refunded" {
				continue
			}
			types = append(types, ev.Type)
			if ev.Type == "deposit.refunded" && (str(ev.Data, "status") != "refunded" || str(ev.Data, "refunded_amount") != "800.00") {
				t.Errorf("deposit.refunded data: %v", ev.Data)
			}
			if ev.Type == "refund.created" && (str(ev.Data, "status") != "processing" || str(ev.Data, "deposit_id") != dep) {
				t.Errorf("refund.created data: %v", ev.Data)
			}
		}
		sort.Strings(types)
		if got := strings.Join(types, ","); got != "deposit.refunded,refund.created,refund.created,refund.succeeded,refund.succeeded" {
			t.Errorf("refund events %s", got)
		}
		h.ledgerClean()
	})
}

// TestRefundFailsAndReleases: a refund the provider fails releases its
// hold, frees its amount for another refund, and carries failure_code.
func TestRefundFailsAndReleases(t *testing.T) {
	h := newHarness(t, paydtest.WithSandbox(sandbox.Config{PayoutMode: "manual"}))
	org := refundOrg(h)
	dep := h.paidH2H(org, "fail", "500", "FAIL1")
	rf := h.refund(org, dep, `{"merchant_id":"f1"}`, true)
	if rf.Status != http.StatusCreated {
		t.Fatalf("refund: %d %s", rf.Status, rf.Body)
	}
	if res := h.refund(org, dep, `{"merchant_id":"f2","amount":"0.01"}`, true); res.ErrorCode() != "refund_exceeds_deposit" {
		t.Fatalf("while the first runs: %d %s", res.Status, res.Body)
	}
	h.Work()
	h.Do(org, request{Path: "/api/sandbox/refunds/" + str(rf.JSON, "id") + "/settle", APIKey: org.APIKey, Body: `{"outcome":"failed"}`})
	h.Work()
	got := h.getJSON(org, "/api/v1/refunds/"+str(rf.JSON, "id"), true)
	if str(got.JSON, "status") != "failed" || str(got.JSON, "failure_code") != engine.RefundFailureDeclined {
		t.Fatalf("failed refund: %s", got.Body)
	}
	if b := h.Balance(org); !strings.Contains(b, `"available":"500.00"`) || !strings.Contains(b, `"held":"0.00"`) {
		t.Fatalf("balance after a failed refund: %s", b)
	}
	if d := h.GetDeposit(org, dep, true); str(d.JSON, "status") != "succeeded" || str(d.JSON, "refunded_amount") != "0.00" {
		t.Fatalf("deposit after a failed refund: %s", d.Body)
	}
	if res := h.refund(org, dep, `{"merchant_id":"f3","amount":"500"}`, true); res.Status != http.StatusCreated {
		t.Fatalf("refund after the failure: %d %s", res.Status, res.Body)
	}
	h.ledgerClean()
}

// TestRefundAutoSettles: in auto mode a refund settles by itself after
// the delay, as payouts do.
func TestRefundAutoSettles(t *testing.T) {
	h := newHarness(t, paydtest.WithSandbox(sandbox.Config{PayoutMode: "auto", PayoutDelay: 2 * time.Second}))
	org := refundOrg(h)
	dep := h.paidH2H(org, "auto", "300", "AUTO1")
	rf := h.refund(org, dep, `{"merchant_id":"a1"}`, true)
	h.Work()
	if got := h.getJSON(org, "/api/v1/refunds/"+str(rf.JSON, "id"), true); str(got.JSON, "status") != "processing" {
		t.Fatalf("before the delay: %s", got.Body)
	}
	h.Clock.Add(5 * time.Second)
	h.Work()
	if got := h.getJSON(org, "/api/v1/refunds/"+str(rf.JSON, "id"), true); str(got.JSON, "status") != "succeeded" {
		t.Fatalf("after the delay: %s", got.Body)
	}
	if d := h.GetDeposit(org, dep, true); str(d.JSON, "status") != "refunded" {
		t.Fatalf("deposit: %s", d.Body)
	}
}

func countOf(xs []string, x string) int {
	n := 0
	for i := slices.Index(xs, x); i >= 0; i = slices.Index(xs, x) {
		n++
		xs = xs[i+1:]
	}
	return n
}

// TestRefundReadsSignedAfterH2HStops: a refund of an H2H deposit is read
// signed, as the deposit is, even after its organization stops taking
// H2H: the refund, the refund list, the refund's events (whose data shows
// no checkout_mode) and their list.
func TestRefundReadsSignedAfterH2HStops(t *testing.T) {
	h := newHarness(t)
	org := refundOrg(h)
	dep := h.paidH2H(org, "stops", "500", "STOPS1")
	rf := h.refund(org, dep, `{"merchant_id":"s1","amount":"50"}`, true)
	if rf.Status != http.StatusCreated {
		t.Fatalf("refund: %d %s", rf.Status, rf.Body)
	}
	if _, err := h.Engine.UpdateOrganization(t.Context(), org.ID, engine.OrganizationSettings{H2HEnabled: ptr(false)}); err != nil {
		t.Fatal(err)
	}
	evs := h.getJSON(org, "/api/v1/events?type=refund.created", true)
	data, _ := evs.JSON["data"].([]any)
	if len(data) != 1 {
		t.Fatalf("refund.created events: %s", evs.Body)
	}
	for _, path := range []string{
		"/api/v1/refunds/" + str(rf.JSON, "id"),
		"/api/v1/refunds",
		"/api/v1/events/" + str(data[0], "id"),
		"/api/v1/events?type=refund.created",
	} {
		if res := h.getJSON(org, path, false); res.Status != http.StatusUnauthorized {
			t.Errorf("unsigned GET %s: %d %s", path, res.Status, res.Body)
		}
		if res := h.getJSON(org, path, true); res.Status != http.StatusOK {
			t.Errorf("signed GET %s: %d %s", path, res.Status, res.Body)
		}
	}
}
