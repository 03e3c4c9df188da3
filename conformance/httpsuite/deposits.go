package httpsuite

import (
	"net/http"
	"time"
)

// metadataSent is metadata with what survives only when it is returned
// unchanged: numbers whose text matters, nesting, HTML-ish characters and
// non-ASCII text.
const metadataSent = `{"order":"A-1 <b>&</b>","n":1.50,"big":12345678901234567890,"nested":{"list":[1,"two",null,true]},"text":"টাকা"}`

// metadataReordered is the same JSON value with its keys in another order.
const metadataReordered = `{"text":"টাকা","nested":{"list":[1,"two",null,true]},"big":12345678901234567890,"n":1.50,"order":"A-1 <b>&</b>"}`

// checkDeposits: redirect and H2H creates, reads, replays and conflicts,
// next_action by payment method, and the shapes of all of them.
func (s *suite) checkDeposits(t T) {
	t.Run("redirect", func(t T) {
		mid := s.mid("redirect")
		res := s.do(t, request{method: http.MethodPost, path: "/v1/deposits", body: redirectBody("500", "bkash", mid, metadataSent), org: s.a})
		expectStatus(t, "create redirect deposit", res, http.StatusOK)
		created := checkDeposit(t, "create redirect deposit", res.json, false)
		expect(t, "amount", gets(created, "amount"), "500.00")
		expect(t, "status", gets(created, "status"), "pending")
		expect(t, "payment_method", gets(created, "payment_method"), "bkash")
		expect(t, "merchant_id", gets(created, "merchant_id"), mid)
		if !sameJSON(created["metadata"], decodeJSON([]byte(metadataSent))) {
			t.Errorf("metadata %v is not the metadata sent %s", created["metadata"], metadataSent)
		}
		if u := gets(created, "redirect_url"); u == "" || u == "https://shop.example/return" {
			t.Errorf("redirect_url %q: want the hosted checkout, not null and not the request's return page", u)
		}
		id := gets(created, "id")

		// A redirect deposit is read with the bearer key alone.
		res = s.do(t, request{method: http.MethodGet, path: "/v1/deposits/" + id, org: s.a})
		expectStatus(t, "unsigned GET of a redirect deposit", res, http.StatusOK)
		got := checkDeposit(t, "GET redirect deposit", res.json, true)
		if _, ok := got["bank_transaction_id"]; ok && got["bank_transaction_id"] != nil {
			t.Errorf("bank_transaction_id of an unpaid deposit = %v, want null", got["bank_transaction_id"])
		}
		delete(got, "bank_transaction_id")
		if d := diffKeys(created, got); len(d) > 0 {
			t.Errorf("GET differs from the create response in %v", d)
		}

		// Replays compare amounts as decimals and metadata as JSON values.
		for _, c := range []struct{ name, amount, metadata string }{
			{"identical", "500", metadataSent},
			{"amount 500.00", "500.00", metadataSent},
			{"metadata keys reordered", "500", metadataReordered},
		} {
			res = s.do(t, request{method: http.MethodPost, path: "/v1/deposits", body: redirectBody(c.amount, "bkash", mid, c.metadata), org: s.a})
			expectStatus(t, "replay "+c.name, res, http.StatusOK)
			expect(t, "id of replay "+c.name, gets(res.json, "id"), id)
		}
		for _, c := range []struct{ name, body string }{
			{"other amount", string(redirectBody("501", "bkash", mid, metadataSent))},
			{"other method", string(redirectBody("500", "nagad", mid, metadataSent))},
			{"other metadata", string(redirectBody("500", "bkash", mid, `{"order":"A-2"}`))},
			{"as h2h", string(h2hBody("500", "bkash", mid, "01712345678", metadataSent))},
		} {
			res = s.do(t, request{method: http.MethodPost, path: "/v1/deposits", body: []byte(c.body), org: s.a, sign: true})
			expectError(t, "reuse with "+c.name, res, http.StatusConflict, "merchant_id_conflict", "")
		}
	})

	t.Run("redirect amount ranges", func(t T) {
		for i, c := range []struct{ amount, method, want string }{
			{"100", "nagad", "100.00"}, {"25000", "upay", "25000.00"},
			{"25000", "bank", "25000.00"}, {"300000", "bank", "300000.00"}, {"100.5", "bkash", "100.50"},
		} {
			res := s.do(t, request{method: http.MethodPost, path: "/v1/deposits", body: redirectBody(c.amount, c.method, s.mid("range-"+string(rune('a'+i))), ""), org: s.a})
			expectStatus(t, c.method+" "+c.amount, res, http.StatusOK)
			m := checkDeposit(t, c.method+" "+c.amount, res.json, false)
			expect(t, c.method+" amount", gets(m, "amount"), c.want)
			if !sameJSON(m["metadata"], map[string]any{}) {
				t.Errorf("metadata of a create without metadata = %v, want {}", m["metadata"])
			}
		}
	})

	t.Run("h2h instructions", func(t T) {
		mid := s.mid("h2h")
		body := h2hBody("750.5", "bkash_agent", mid, "+8801712345678", metadataSent)
		res := s.do(t, request{method: http.MethodPost, path: "/v1/deposits", body: body, org: s.a, sign: true})
		expectStatus(t, "create H2H deposit", res, http.StatusCreated)
		created := checkDeposit(t, "create H2H deposit", res.json, false)
		id := gets(created, "id")
		w := s.a.wallets["bkash/cash_out"]
		for _, c := range []struct{ what, got, want string }{
			{"amount", gets(created, "amount"), "750.50"},
			{"status", gets(created, "status"), "pending"},
			{"checkout_mode", gets(created, "checkout_mode"), "h2h"},
			{"next_action.type", gets(created, "next_action", "type"), "display_instructions"},
			{"next_action.channel", gets(created, "next_action", "channel"), "bkash"},
			{"next_action.operation", gets(created, "next_action", "operation"), "cash_out"},
			{"next_action.recipient.value", gets(created, "next_action", "recipient", "value"), w.phone},
			{"next_action.recipient.name", gets(created, "next_action", "recipient", "name"), w.name},
			{"next_action.amount", gets(created, "next_action", "amount"), "750.50"},
			{"next_action.verification.endpoint", gets(created, "next_action", "verification", "endpoint"), s.prefix + "/v1/deposits/" + id + "/verify"},
			{"verification.state", gets(created, "verification", "state"), "awaiting_reference"},
		} {
			expect(t, c.what, c.got, c.want)
		}
		expect(t, "verification.attempts_used", geti(created, "verification", "attempts_used"), 0)
		expect(t, "verification.attempts_remaining", geti(created, "verification", "attempts_remaining"), 3)
		if created["provider_transaction_id"] != nil {
			t.Errorf("provider_transaction_id before success = %v, want null", created["provider_transaction_id"])
		}
		if !sameJSON(created["metadata"], decodeJSON([]byte(metadataSent))) {
			t.Errorf("metadata %v is not the metadata sent %s", created["metadata"], metadataSent)
		}
		checkWindow(t, "expires_at of display_instructions", res, gets(created, "expires_at"), 15*time.Minute)

		got := s.getDeposit(t, s.a, id)
		if !sameJSON(created, got) {
			t.Errorf("signed GET differs from the create response in %v", diffKeys(created, got))
		}
		res = s.do(t, request{method: http.MethodGet, path: "/v1/deposits/" + id, org: s.a})
		expectError(t, "unsigned GET of an H2H deposit", res, http.StatusUnauthorized, "unauthorized", "missing_signature")

		// Replays: the same bytes, and the same contract in other words.
		for _, c := range []struct{ name, body string }{
			{"identical", string(body)},
			{"local phone, amount 750.50", string(h2hBody("750.50", "bkash_agent", mid, "01712345678", metadataSent))},
			{"8801 phone, reordered metadata", string(h2hBody("750.5", "bkash_agent", mid, "8801712345678", metadataReordered))},
		} {
			res = s.do(t, request{method: http.MethodPost, path: "/v1/deposits", body: []byte(c.body), org: s.a, sign: true})
			expectStatus(t, "replay "+c.name, res, http.StatusOK)
			if !sameJSON(res.json, created) {
				t.Errorf("replay %s differs from the create response in %v", c.name, diffKeys(created, res.json))
			}
		}
		for _, c := range []struct{ name, body string }{
			{"other amount", string(h2hBody("750.51", "bkash_agent", mid, "01712345678", metadataSent))},
			{"other payer", string(h2hBody("750.50", "bkash_agent", mid, "01812345678", metadataSent))},
			{"other method", string(h2hBody("750.50", "bkash_merchant", mid, "01712345678", metadataSent))},
			{"no metadata", string(h2hBody("750.50", "bkash_agent", mid, "01712345678", ""))},
			{"as redirect", string(redirectBody("750.50", "bkash_agent", mid, metadataSent))},
		} {
			res = s.do(t, request{method: http.MethodPost, path: "/v1/deposits", body: []byte(c.body), org: s.a, sign: true})
			expectError(t, "reuse with "+c.name, res, http.StatusConflict, "merchant_id_conflict", "")
		}
	})

	t.Run("h2h payment methods", func(t T) {
		// make_payment wallet: nagad_merchant.
		d := s.createH2H(t, s.a, h2hBody("25000", "nagad_merchant", s.mid("nagad-merchant"), "01912345678", ""))
		w := s.a.wallets["nagad/make_payment"]
		expect(t, "nagad_merchant next_action.type", gets(d, "next_action", "type"), "display_instructions")
		expect(t, "nagad_merchant channel", gets(d, "next_action", "channel"), "nagad")
		expect(t, "nagad_merchant operation", gets(d, "next_action", "operation"), "make_payment")
		expect(t, "nagad_merchant recipient", gets(d, "next_action", "recipient", "value"), w.phone)
		expect(t, "nagad_merchant amount", gets(d, "amount"), "25000.00")

		// No nagad cash_out wallet in the pool: method unavailable.
		res := s.do(t, request{method: http.MethodPost, path: "/v1/deposits", org: s.a, sign: true,
			body: h2hBody("500", "nagad_agent", s.mid("nagad-agent"), "01912345678", "")})
		expectError(t, "nagad_agent without a nagad cash_out wallet", res, http.StatusServiceUnavailable, "method_unavailable", "")

		// bkash: the provider's checkout.
		res = s.do(t, request{method: http.MethodPost, path: "/v1/deposits", org: s.a, sign: true,
			body: h2hBody("100", "bkash", s.mid("h2h-redirect"), "01712345678", "")})
		expectStatus(t, "create H2H bkash deposit", res, http.StatusCreated)
		d = checkDeposit(t, "create H2H bkash deposit", res.json, false)
		expect(t, "bkash next_action.type", gets(d, "next_action", "type"), "redirect")
		expect(t, "bkash verification.state", gets(d, "verification", "state"), "processing")
		expect(t, "bkash verification.attempts_used", geti(d, "verification", "attempts_used"), 0)
		expect(t, "bkash verification.attempts_remaining", geti(d, "verification", "attempts_remaining"), 0)
		expect(t, "bkash status", gets(d, "status"), "pending")
		checkWindow(t, "expires_at of a redirect action", res, gets(d, "expires_at"), 30*time.Minute)
		expectError(t, "verify on a redirect action", s.verify(t, s.a, gets(d, "id"), txID()), http.StatusConflict, "redirect_action", "")
	})
}

// checkWindow checks that expires_at is window after the server's time
// (from the answer's Date header), within a few seconds.
func checkWindow(t T, what string, res *response, expiresAt string, window time.Duration) {
	t.Helper()
	exp, err := time.Parse(time.RFC3339, expiresAt)
	if err != nil {
		return // the shape check reported it
	}
	date, err := http.ParseTime(res.header.Get("Date"))
	if err != nil {
		t.Logf("%s: no Date header to compare with", what)
		return
	}
	if d := exp.Sub(date); d < window-5*time.Second || d > window+5*time.Second {
		t.Errorf("%s = %s is %s after the answer's Date %s, want the default window %s", what, expiresAt, d, date.Format(time.RFC3339), window)
	}
}
