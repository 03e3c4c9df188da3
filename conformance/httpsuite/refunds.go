package httpsuite

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/payd-engine/payd/transport/client"
)

// The contract's extension: refunds (docs/spec/contract.md, "Extension:
// refunds"), written from the contract alone.

var refundSchema = schema{
	{name: "id", kind: kString, rule: prefixed("rf_")},
	{name: "deposit_id", kind: kString, rule: prefixed("dep_")},
	{name: "amount", kind: kString, rule: amount},
	{name: "status", kind: kString, rule: oneOf("processing", "succeeded", "failed")},
	{name: "merchant_id", kind: kString, rule: nonEmpty},
	{name: "reason", kind: kStringOrNull},
	{name: "metadata", kind: kObject},
	{name: "failure_code", kind: kStringOrNull},
	{name: "created_at", kind: kString, rule: rfc3339},
}

func refundBody(amount, merchantID, extra string) []byte {
	b := fmt.Sprintf(`{"merchant_id":%q`, merchantID)
	if amount != "" {
		b += fmt.Sprintf(`,"amount":%q`, amount)
	}
	return []byte(b + extra + "}")
}

// checkRefunds: a paid H2H deposit of a new organization refunded in two
// parts; every refusal of the contract's table in its order; the hold,
// settlement and the deposit's refunded state; reads, lists and isolation.
func (s *suite) checkRefunds(t T) {
	s.needSandbox(t)
	r := s.newOrg(t, "refunds", OrgOptions{H2H: true}, [2]string{"bkash", "cash_out"})
	payer := randomPhone("018")
	dep := s.createH2H(t, r, h2hBody("600", "bkash_agent", s.mid("rf-dep"), payer, ""))
	depID := gets(dep, "id")
	expect(t, "refunded_amount of a new deposit", gets(dep, "refunded_amount"), "0.00")
	path := "/v1/deposits/" + depID + "/refunds"
	post := func(body []byte, sign bool, o *org) *response {
		t.Helper()
		return s.do(t, request{method: http.MethodPost, path: path, body: body, org: o, sign: sign})
	}

	// Before it is paid: not refundable.
	expectError(t, "refund of a pending deposit", post(refundBody("", s.mid("rf-early"), ""), true, r),
		http.StatusConflict, "deposit_not_refundable", "")

	tx := txID()
	s.pay(t, r, dep, tx, payer, nil)
	expectStatus(t, "verify", s.verify(t, r, depID, tx), http.StatusAccepted)
	if d := s.waitDeposit(t, r, depID); d.Status != client.StatusSucceeded {
		t.Fatalf("deposit %s ended %s", depID, d.Status)
	}
	s.expectBalance(t, r, "after the deposit", "600.00", "0.00")

	for _, c := range []struct {
		what, body string
	}{
		{"amount zero", `{"merchant_id":"x","amount":"0"}`},
		{"amount three decimals", `{"merchant_id":"x","amount":"1.005"}`},
		{"amount a number", `{"merchant_id":"x","amount":5}`},
		{"amount negative", `{"merchant_id":"x","amount":"-5"}`},
		{"no merchant_id", `{"amount":"5"}`},
		{"merchant_id too long", `{"merchant_id":"` + strings.Repeat("m", 256) + `"}`},
		{"reason too long", `{"merchant_id":"x","reason":"` + strings.Repeat("r", 501) + `"}`},
		{"unknown field", `{"merchant_id":"x","refund_all":true}`},
	} {
		expectError(t, c.what, post([]byte(c.body), true, r), http.StatusBadRequest, "invalid_request", "")
	}
	expectError(t, "unsigned refund of an H2H deposit", post(refundBody("5", s.mid("rf-unsigned"), ""), false, r),
		http.StatusUnauthorized, "unauthorized", "")
	expectError(t, "refund of another organization's deposit", post(refundBody("5", s.mid("rf-other"), ""), true, s.b),
		http.StatusNotFound, "not_found", "")
	expectError(t, "refund of more than the deposit", post(refundBody("600.01", s.mid("rf-big"), ""), true, r),
		http.StatusConflict, "refund_exceeds_deposit", "")
	s.expectBalance(t, r, "after refused refunds", "600.00", "0.00")

	// Half: held at once.
	first := post(refundBody("300", s.mid("rf-1"), `,"reason":"half","metadata":{"k":1}`), true, r)
	expectStatus(t, "first refund", first, http.StatusCreated)
	f := checkShape(t, "first refund", first.json, refundSchema)
	expect(t, "status", gets(f, "status"), "processing")
	expect(t, "amount", gets(f, "amount"), "300.00")
	expect(t, "deposit_id", gets(f, "deposit_id"), depID)
	s.expectBalance(t, r, "while the first refund runs", "300.00", "300.00")

	again := post(refundBody("300.00", s.mid("rf-1"), `,"reason":"not compared"`), true, r)
	expectStatus(t, "replayed refund", again, http.StatusOK)
	expect(t, "replay's id", gets(again.json, "id"), gets(f, "id"))
	expectError(t, "merchant_id with another amount", post(refundBody("299", s.mid("rf-1"), ""), true, r),
		http.StatusConflict, "merchant_id_conflict", "")
	expectError(t, "merchant_id without the amount", post(refundBody("", s.mid("rf-1"), ""), true, r),
		http.StatusConflict, "merchant_id_conflict", "")
	expectError(t, "more than is left", post(refundBody("300.01", s.mid("rf-2"), ""), true, r),
		http.StatusConflict, "refund_exceeds_deposit", "")
	// The balance holds 300: a debit leaves 100 available; 200 is refused
	// and holds nothing.
	if err := s.target.Hooks.AdjustBalance(t.Context(), r.ID, "-200", "httpsuite"); err != nil {
		t.Fatalf("adjust: %v", err)
	}
	expectError(t, "refund beyond the available balance", post(refundBody("200", s.mid("rf-3"), ""), true, r),
		http.StatusForbidden, "insufficient_balance", "")
	s.expectBalance(t, r, "after the refused refund", "100.00", "300.00")
	if err := s.target.Hooks.AdjustBalance(t.Context(), r.ID, "200", "httpsuite"); err != nil {
		t.Fatalf("adjust: %v", err)
	}

	firstID := gets(f, "id")
	if err := r.cli.SandboxSettleRefund(t.Context(), firstID, "succeeded"); err != nil {
		t.Fatalf("settle %s: %v", firstID, err)
	}
	if got, err := r.cli.WaitForRefund(t.Context(), firstID, s.wait); err != nil || got.Status != client.RefundSucceeded {
		t.Fatalf("wait for %s: %+v %v", firstID, got, err)
	}
	d := s.getDeposit(t, r, depID)
	expect(t, "status after half", gets(d, "status"), "succeeded")
	expect(t, "refunded_amount after half", gets(d, "refunded_amount"), "300.00")
	s.expectBalance(t, r, "after the first refund settled", "300.00", "0.00")

	// The rest, without an amount.
	rest := post(refundBody("", s.mid("rf-4"), ""), true, r)
	expectStatus(t, "the rest", rest, http.StatusCreated)
	restID := gets(rest.json, "id")
	expect(t, "the rest's amount", gets(rest.json, "amount"), "300.00")
	if err := r.cli.SandboxSettleRefund(t.Context(), restID, "succeeded"); err != nil {
		t.Fatalf("settle %s: %v", restID, err)
	}
	if got, err := r.cli.WaitForRefund(t.Context(), restID, s.wait); err != nil || got.Status != client.RefundSucceeded {
		t.Fatalf("wait for %s: %+v %v", restID, got, err)
	}
	d = s.getDeposit(t, r, depID)
	expect(t, "status after all", gets(d, "status"), "refunded")
	expect(t, "verification.state after all", gets(d, "verification", "state"), "refunded")
	expect(t, "refunded_amount after all", gets(d, "refunded_amount"), "600.00")
	s.expectBalance(t, r, "after both refunds", "0.00", "0.00")
	expectError(t, "refund of a refunded deposit", post(refundBody("1", s.mid("rf-5"), ""), true, r),
		http.StatusConflict, "deposit_not_refundable", "")

	// Reads: signed as the deposit's; another organization's is not found.
	res := s.do(t, request{method: http.MethodGet, path: "/v1/refunds/" + firstID, org: r, sign: true})
	expectStatus(t, "GET refund", res, http.StatusOK)
	g := checkShape(t, "GET refund", res.json, refundSchema)
	expect(t, "GET refund status", gets(g, "status"), "succeeded")
	expect(t, "GET refund reason", gets(g, "reason"), "half")
	if g["failure_code"] != nil {
		t.Errorf("failure_code of a succeeded refund: %v", g["failure_code"])
	}
	expectError(t, "unsigned GET refund", s.do(t, request{method: http.MethodGet, path: "/v1/refunds/" + firstID, org: r}),
		http.StatusUnauthorized, "unauthorized", "")
	expectError(t, "GET another organization's refund", s.do(t, request{method: http.MethodGet, path: "/v1/refunds/" + firstID, org: s.b, sign: true}),
		http.StatusNotFound, "not_found", "")
	res = s.do(t, request{method: http.MethodGet, path: "/v1/refunds?deposit_id=" + depID + "&limit=1", org: r, sign: true})
	expectStatus(t, "list refunds", res, http.StatusOK)
	page, _ := res.json.(map[string]any)
	items, _ := page["data"].([]any)
	if len(items) != 1 || page["has_more"] != true {
		t.Fatalf("first page of refunds: %v", page)
	}
	expect(t, "newest refund first", gets(checkShape(t, "listed refund", items[0], refundSchema), "id"), restID)
	res = s.do(t, request{method: http.MethodGet, path: "/v1/refunds?starting_after=" + restID, org: r, sign: true})
	page, _ = res.json.(map[string]any)
	items, _ = page["data"].([]any)
	if len(items) != 1 || gets(items[0], "id") != firstID || page["has_more"] != false {
		t.Fatalf("second page of refunds: %v", page)
	}
	res = s.do(t, request{method: http.MethodGet, path: "/v1/refunds", org: s.b, sign: true})
	expectStatus(t, "another organization's refunds", res, http.StatusOK)
	if items, _ := res.json.(map[string]any)["data"].([]any); len(items) != 0 {
		t.Errorf("organization b lists %d refunds of another organization", len(items))
	}
}
