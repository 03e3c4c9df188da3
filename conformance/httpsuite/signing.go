package httpsuite

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// checkSigning: every H2H operation refuses a missing, malformed, stale or
// invalid signature with 401 and the contract's reason, and accepts a
// signature made as the contract describes, at the edge of the tolerance
// and over a request target with a query.
func (s *suite) checkSigning(t T) {
	// On organization b, whose per-key rate limit of verify requests the
	// verification checks on a do not share.
	o := s.b
	dep := s.createH2H(t, o, h2hBody("300", "bkash_agent", s.mid("sig-target"), "01712345678", ""))
	depID := gets(dep, "id")
	now := s.serverNow(t)
	ts := func(d time.Duration) string { return strconv.FormatInt(now.Add(d).Unix(), 10) }
	verifyBody := []byte(`{"provider_transaction_id":"` + txID() + `"}`)
	createMID := s.mid("sig-create")

	ops := []struct {
		name   string
		method string
		path   string
		body   []byte
	}{
		{"create", http.MethodPost, "/v1/deposits", h2hBody("300", "bkash_agent", createMID, "01712345678", "")},
		{"get", http.MethodGet, "/v1/deposits/" + depID, nil},
		{"verify", http.MethodPost, "/v1/deposits/" + depID + "/verify", verifyBody},
	}
	cases := []struct {
		name   string
		r      request
		reason string
	}{
		{"no signature headers", request{}, "missing_signature"},
		{"timestamp only", request{timestamp: ts(0)}, "missing_signature"},
		{"signature only", request{signature: "v1=AAAA"}, "missing_signature"},
		{"signature not v1", request{sign: true, signature: "v2=" + strings.Repeat("A", 43)}, "malformed_signature"},
		{"signature in standard base64", request{sign: true, signature: "v1=ab+/cd=="}, "malformed_signature"},
		{"timestamp not digits", request{sign: true, timestamp: "1.7e9"}, "malformed_signature"},
		{"timestamp in milliseconds", request{sign: true, timestamp: strconv.FormatInt(now.UnixMilli(), 10)}, "stale_signature"},
		{"timestamp 6 minutes old", request{sign: true, timestamp: ts(-6 * time.Minute)}, "stale_signature"},
		{"timestamp 6 minutes ahead", request{sign: true, timestamp: ts(6 * time.Minute)}, "stale_signature"},
		{"wrong secret", request{sign: true, secret: []byte("payd_ss_not-the-secret")}, "invalid_signature"},
		{"another organization's secret", request{sign: true, secret: []byte(s.a.SigningSecret)}, "invalid_signature"},
		{"another method signed", request{sign: true, signMethod: http.MethodPut}, "invalid_signature"},
		{"another target signed", request{sign: true, signTarget: s.prefix + "/v1/deposits/dep_other"}, "invalid_signature"},
		{"another body signed", request{sign: true, signBody: []byte(`{}`)}, "invalid_signature"},
	}
	for _, op := range ops {
		t.Run(op.name, func(t T) {
			for _, c := range cases {
				r := c.r
				r.method, r.path, r.body, r.org = op.method, op.path, op.body, o
				if c.name == "another body signed" && op.body == nil {
					r.signBody = []byte(`{"x":1}`) // a GET signs an empty body
				}
				expectError(t, c.name, s.do(t, r), http.StatusUnauthorized, "unauthorized", c.reason)
			}
		})
	}

	t.Run("accepted", func(t T) {
		// Nothing was created by the refused creates: this one is new.
		res := s.do(t, request{method: http.MethodPost, path: "/v1/deposits", body: ops[0].body, org: o, sign: true, timestamp: ts(-4 * time.Minute)})
		expectStatus(t, "create signed 4 minutes ago", res, http.StatusCreated)
		res = s.do(t, request{method: http.MethodGet, path: "/v1/deposits/" + depID, org: o, sign: true, timestamp: ts(4 * time.Minute)})
		expectStatus(t, "GET signed 4 minutes ahead", res, http.StatusOK)
		// The request target includes the query exactly as sent.
		res = s.do(t, request{method: http.MethodGet, path: "/v1/deposits/" + depID + "?expand=none", org: o, sign: true})
		expectStatus(t, "GET with a query, signed over path and query", res, http.StatusOK)
		res = s.do(t, request{method: http.MethodGet, path: "/v1/deposits/" + depID + "?expand=none", org: o, sign: true,
			signTarget: s.prefix + "/v1/deposits/" + depID})
		expectError(t, "GET with a query, signed over the path alone", res, http.StatusUnauthorized, "unauthorized", "invalid_signature")
		// No refused verify queued an attempt.
		d := s.getDeposit(t, o, depID)
		expect(t, "verification.attempts_used after refused verifies", geti(d, "verification", "attempts_used"), 0)
		expect(t, "status after refused verifies", gets(d, "status"), "pending")
	})
}
