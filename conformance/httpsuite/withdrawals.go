package httpsuite

import (
	"net/http"

	"github.com/payd-engine/payd/transport/client"
)

// checkWithdrawals: holds, insufficient balance, merchant ID reuse, and
// payouts settled through the sandbox, with the balance after each step.
// Organization b's balance starts at zero.
func (s *suite) checkWithdrawals(t T) {
	t.Run("insufficient balance", func(t T) {
		res := s.do(t, request{method: http.MethodPost, path: "/v1/withdraws", org: s.b,
			body: []byte(withdrawalBody("100", "01812345678", "bkash", s.mid("wd-broke"), ""))})
		expectError(t, "withdrawal from an empty balance", res, http.StatusForbidden, "insufficient_balance", "")
		s.expectBalance(t, s.b, "after the refused withdrawal", "0.00", "0.00")
	})

	t.Run("lifecycle", func(t T) {
		if !s.sandbox {
			t.Skipf("%s; an accepted withdrawal on another provider would send a real payout", s.noSandbox)
		}
		if err := s.target.Hooks.AdjustBalance(t.Context(), s.b.ID, "5000", "httpsuite float"); err != nil {
			t.Fatalf("adjust balance: %v", err)
		}
		s.expectBalance(t, s.b, "after crediting 5000", "5000.00", "0.00")

		mid := s.mid("wd-1")
		res := s.do(t, request{method: http.MethodPost, path: "/v1/withdraws", org: s.b,
			body: []byte(withdrawalBody("1000", "+8801812345678", "bkash", mid, metadataSent))})
		expectStatus(t, "create withdrawal", res, http.StatusCreated)
		w := checkShape(t, "create withdrawal", res.json, withdrawalSchema)
		id := gets(w, "id")
		expect(t, "phone", gets(w, "phone"), "01812345678")
		expect(t, "amount", gets(w, "amount"), "1000.00")
		expect(t, "status", gets(w, "status"), "processing")
		expect(t, "payment_method", gets(w, "payment_method"), "bkash")
		expect(t, "merchant_id", gets(w, "merchant_id"), mid)
		if !sameJSON(w["metadata"], decodeJSON([]byte(metadataSent))) {
			t.Errorf("metadata %v is not the metadata sent %s", w["metadata"], metadataSent)
		}
		s.withdrawalOfB = id
		s.expectBalance(t, s.b, "after holding 1000", "4000.00", "1000.00")

		res = s.do(t, request{method: http.MethodPost, path: "/v1/withdraws", org: s.b,
			body: []byte(withdrawalBody("1000", "01812345678", "bkash", mid, metadataSent))})
		expectError(t, "identical withdrawal again", res, http.StatusConflict, "merchant_id_exists", "")
		res = s.do(t, request{method: http.MethodPost, path: "/v1/withdraws", org: s.b,
			body: []byte(withdrawalBody("200", "01912345678", "nagad", mid, ""))})
		expectError(t, "other withdrawal with the same merchant_id", res, http.StatusConflict, "merchant_id_exists", "")
		res = s.do(t, request{method: http.MethodPost, path: "/v1/withdraws", org: s.b,
			body: []byte(withdrawalBody("4000.01", "01812345678", "bkash", s.mid("wd-too-much"), ""))})
		expectError(t, "withdrawal of more than available", res, http.StatusForbidden, "insufficient_balance", "")
		s.expectBalance(t, s.b, "after refused withdrawals", "4000.00", "1000.00")

		res = s.do(t, request{method: http.MethodGet, path: "/v1/withdraws/" + id, org: s.b})
		expectStatus(t, "GET withdrawal", res, http.StatusOK)
		got := checkShape(t, "GET withdrawal", res.json, withdrawalSchema)
		for _, k := range []string{"id", "phone", "payment_method", "amount", "metadata", "merchant_id"} {
			if !sameJSON(got[k], w[k]) {
				t.Errorf("GET %s = %v, create answered %v", k, got[k], w[k])
			}
		}

		if err := s.b.cli.SandboxSettleWithdrawal(t.Context(), id, "succeeded"); err != nil {
			t.Fatalf("settle %s: %v", id, err)
		}
		done, err := s.b.cli.WaitForWithdrawal(t.Context(), id, s.wait)
		if err != nil {
			t.Fatalf("wait for %s: %v", id, err)
		}
		expect(t, "status after a successful payout", done.Status, client.WithdrawalSucceeded)
		res = s.do(t, request{method: http.MethodGet, path: "/v1/withdraws/" + id, org: s.b})
		checkShape(t, "GET settled withdrawal", res.json, withdrawalSchema)
		s.expectBalance(t, s.b, "after the payout settled", "4000.00", "0.00")

		// Racing identical creates: one payout, the others refused.
		mid2 := s.mid("wd-race")
		created := ""
		for _, res := range s.race(t, concurrency, request{method: http.MethodPost, path: "/v1/withdraws", org: s.b,
			body: []byte(withdrawalBody("100", "01912345678", "nagad", mid2, ""))}) {
			switch {
			case res == nil:
			case res.status == http.StatusCreated && created == "":
				created = gets(res.json, "id")
			case res.status == http.StatusConflict && res.errorCode() == "merchant_id_exists":
			default:
				t.Errorf("racing withdrawal: got %s, want one 201 and 409 merchant_id_exists for the others", res)
			}
		}
		if created == "" {
			t.Fatalf("no racing withdrawal was created")
		}
		s.expectBalance(t, s.b, "after the racing withdrawals", "3900.00", "100.00")

		// A failed payout releases the hold.
		err = s.b.cli.SandboxSettleWithdrawal(t.Context(), created, "failed")
		switch {
		case client.IsCode(err, "conflict"):
			t.Logf("the sandbox settled %s by itself before it could be failed; checking the success instead", created)
		case err != nil:
			t.Fatalf("settle %s: %v", created, err)
		}
		done, err = s.b.cli.WaitForWithdrawal(t.Context(), created, s.wait)
		if err != nil {
			t.Fatalf("wait for %s: %v", created, err)
		}
		if done.Status == client.WithdrawalFailed {
			s.expectBalance(t, s.b, "after the payout failed", "4000.00", "0.00")
		} else {
			s.expectBalance(t, s.b, "after the payout settled", "3900.00", "0.00")
		}
	})
}
