package httpsuite

import (
	"net/http"
)

// checkIsolation: another organization's resources answer 404 not_found,
// whatever the operation, and merchant IDs are unique per organization.
func (s *suite) checkIsolation(t T) {
	mid := s.mid("isolation")
	h2h := s.createH2H(t, s.a, h2hBody("640", "bkash_agent", mid, "01712345678", ""))
	res := s.do(t, request{method: http.MethodPost, path: "/v1/deposits", body: redirectBody("640", "bkash", s.mid("isolation-redirect"), ""), org: s.a})
	expectStatus(t, "create redirect deposit", res, http.StatusOK)
	redirect := gets(res.json, "id")

	for _, c := range []struct {
		name string
		r    request
	}{
		{"b reads a's H2H deposit", request{method: http.MethodGet, path: "/v1/deposits/" + gets(h2h, "id"), org: s.b, sign: true}},
		{"b reads a's redirect deposit", request{method: http.MethodGet, path: "/v1/deposits/" + redirect, org: s.b}},
		{"b reads a's redirect deposit, signed", request{method: http.MethodGet, path: "/v1/deposits/" + redirect, org: s.b, sign: true}},
		{"b verifies a's deposit", request{method: http.MethodPost, path: "/v1/deposits/" + gets(h2h, "id") + "/verify", org: s.b, sign: true,
			body: []byte(`{"provider_transaction_id":"` + txID() + `"}`)}},
		{"c reads a's H2H deposit", request{method: http.MethodGet, path: "/v1/deposits/" + gets(h2h, "id"), org: s.c, sign: true}},
	} {
		expectError(t, c.name, s.do(t, c.r), http.StatusNotFound, "not_found", "")
	}
	if s.withdrawalOfB != "" {
		res := s.do(t, request{method: http.MethodGet, path: "/v1/withdraws/" + s.withdrawalOfB, org: s.a})
		expectError(t, "a reads b's withdrawal", res, http.StatusNotFound, "not_found", "")
	} else {
		t.Logf("no withdrawal of b to read from a (the withdrawal lifecycle did not run)")
	}

	// b's deposit with a's merchant ID is a deposit of its own.
	other := s.createH2H(t, s.b, h2hBody("640", "bkash_agent", mid, "01712345678", ""))
	if gets(other, "id") == gets(h2h, "id") {
		t.Errorf("b's create with a's merchant ID returned a's deposit %s", gets(h2h, "id"))
	}
	expect(t, "b's recipient is from b's pool", gets(other, "next_action", "recipient", "value"), s.b.wallets["bkash/cash_out"].phone)
}
