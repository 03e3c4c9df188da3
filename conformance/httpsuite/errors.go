package httpsuite

import (
	"fmt"
	"net/http"
	"strings"
)

// checkErrors: authentication, request strictness and validation answers,
// with their status, code and message shape. None of these requests may
// create anything.
func (s *suite) checkErrors(t T) {
	t.Run("authentication", func(t T) {
		for _, c := range []struct {
			name, method, path, key string
			header                  map[string]string
			reason                  string
		}{
			{"no key on balance", http.MethodGet, "/v1/balance", "", nil, "missing_api_key"},
			{"no key on create deposit", http.MethodPost, "/v1/deposits", "", nil, "missing_api_key"},
			{"no key on create withdrawal", http.MethodPost, "/v1/withdraws", "", nil, "missing_api_key"},
			{"unknown key", http.MethodGet, "/v1/balance", "payd_sk_" + strings.Repeat("0", 43), nil, "invalid_api_key"},
			{"signing secret as key", http.MethodGet, "/v1/balance", s.a.SigningSecret, nil, "invalid_api_key"},
			{"basic scheme", http.MethodGet, "/v1/balance", "", map[string]string{"Authorization": "Basic " + s.a.APIKey}, ""},
		} {
			r := request{method: c.method, path: c.path, apiKey: c.key, header: c.header}
			if c.method == http.MethodPost {
				r.body = redirectBody("500", "bkash", s.mid("auth"), "")
			}
			expectError(t, c.name, s.do(t, r), http.StatusUnauthorized, "unauthorized", c.reason)
		}
	})

	t.Run("not found", func(t T) {
		for _, c := range []struct{ name, path string }{
			{"unknown endpoint", "/v1/no-such-thing"},
			{"unknown deposit", "/v1/deposits/dep_" + s.run + "nosuchdeposit"},
			{"unknown withdrawal", "/v1/withdraws/wd_" + s.run + "nosuchwithdrawal"},
		} {
			expectError(t, c.name, s.do(t, request{method: http.MethodGet, path: c.path, org: s.a, sign: true}), http.StatusNotFound, "not_found", "")
		}
	})

	t.Run("deposit request validation", func(t T) {
		mid := s.mid("invalid")
		phone := randomPhone("018")
		valid := fmt.Sprintf(`"payment_method":"bkash_agent","redirect_url":"https://shop.example/return","merchant_id":%q,"checkout_mode":"h2h","payer":{"phone":%q}`, mid, phone)
		for _, c := range []struct {
			name, body, field string
			h2h               bool
		}{
			{"array body", `[]`, "", false},
			{"truncated JSON", `{"amount":"500"`, "", false},
			{"two JSON values", `{"amount":"500"} {}`, "", false},
			{"unknown field", `{"amount":"500",` + valid + `,"colour":"red"}`, "colour", true},
			{"duplicate key", `{"amount":"500","amount":"600",` + valid + `}`, "amount", true},
			{"amount as number", `{"amount":500,` + valid + `}`, "amount", true},
			{"amount with 3 decimals", `{"amount":"500.005",` + valid + `}`, "amount", true},
			{"amount with sign", `{"amount":"+500",` + valid + `}`, "amount", true},
			{"amount with exponent", `{"amount":"5e2",` + valid + `}`, "amount", true},
			{"amount with space", `{"amount":" 500",` + valid + `}`, "amount", true},
			{"amount with leading zero", `{"amount":"0500",` + valid + `}`, "amount", true},
			{"amount below range", `{"amount":"99.99",` + valid + `}`, "amount", true},
			{"amount above range", `{"amount":"25000.01",` + valid + `}`, "amount", true},
			{"bank redirect below range", string(redirectBody("24999.99", "bank", mid, "")), "amount", false},
			{"bank redirect above range", string(redirectBody("300000.01", "bank", mid, "")), "amount", false},
			{"unknown payment method", string(redirectBody("500", "paypal", mid, "")), "payment_method", false},
			{"redirect method for h2h", `{"amount":"500","payment_method":"upay","redirect_url":"https://shop.example/return","merchant_id":"` + mid + `","checkout_mode":"h2h","payer":{"phone":"` + phone + `"}}`, "payment_method", true},
			{"unknown checkout mode", `{"amount":"500","payment_method":"bkash","redirect_url":"https://shop.example/return","merchant_id":"` + mid + `","checkout_mode":"popup"}`, "checkout_mode", false},
			{"missing merchant_id", `{"amount":"500","payment_method":"bkash","redirect_url":"https://shop.example/return"}`, "merchant_id", false},
			{"empty merchant_id", string(redirectBody("500", "bkash", "", "")), "merchant_id", false},
			{"relative redirect_url", `{"amount":"500","payment_method":"bkash","redirect_url":"/return","merchant_id":"` + mid + `"}`, "redirect_url", false},
			{"metadata not an object", string(redirectBody("500", "bkash", mid, `["a"]`)), "metadata", false},
			{"metadata with 51 keys", string(redirectBody("500", "bkash", mid, manyKeys(51))), "metadata", false},
			{"h2h without payer", `{"amount":"500","payment_method":"bkash_agent","redirect_url":"https://shop.example/return","merchant_id":"` + mid + `","checkout_mode":"h2h"}`, "payer", true},
			{"payer phone too short", string(h2hBody("500", "bkash_agent", mid, "0171234567", "")), "payer.phone", true},
			{"payer phone with spaces", string(h2hBody("500", "bkash_agent", mid, "017 1234 5678", "")), "payer.phone", true},
			{"payer phone on a bad operator", string(h2hBody("500", "bkash_agent", mid, "01212345678", "")), "payer.phone", true},
			{"payer phone as number", `{"amount":"500",` + strings.Replace(valid, `"phone":"`+phone+`"`, `"phone":1712345678`, 1) + `}`, "payer.phone", true},
		} {
			res := s.do(t, request{method: http.MethodPost, path: "/v1/deposits", body: []byte(c.body), org: s.a, sign: c.h2h})
			expectError(t, c.name, res, http.StatusBadRequest, "invalid_request", c.field)
		}
		// None of them created a deposit: the merchant ID is still free.
		res := s.do(t, request{method: http.MethodPost, path: "/v1/deposits", body: h2hBody("500", "bkash_agent", mid, phone, ""), org: s.a, sign: true})
		expect(t, "status of a create with the merchant ID of the refused requests", res.status, http.StatusCreated)
	})

	t.Run("request too large", func(t T) {
		body := redirectBody("500", "bkash", s.mid("large"), `{"pad":"`+strings.Repeat("x", 65<<10)+`"}`)
		expectError(t, "65 KiB body", s.do(t, request{method: http.MethodPost, path: "/v1/deposits", body: body, org: s.a}),
			http.StatusRequestEntityTooLarge, "request_too_large", "")
	})

	t.Run("withdrawal request validation", func(t T) {
		mid := s.mid("wd-invalid")
		for _, c := range []struct{ name, body, field string }{
			{"amount below range", withdrawalBody("99.99", "01712345678", "bkash", mid, ""), "amount"},
			{"amount above range", withdrawalBody("25000.01", "01712345678", "nagad", mid, ""), "amount"},
			{"amount as number", `{"amount":100,"phone":"01712345678","payment_method":"bkash","merchant_id":"` + mid + `"}`, "amount"},
			{"bank amount below range", withdrawalBody("49999.99", "1234567890", "bank", mid, ""), "amount"},
			{"bank account too short", withdrawalBody("50000", "1234567", "bank", mid, ""), "phone"},
			{"bank account with letters", withdrawalBody("50000", "12345678AB", "bank", mid, ""), "phone"},
			{"invalid phone", withdrawalBody("100", "0171234567", "bkash", mid, ""), "phone"},
			{"unknown method", withdrawalBody("100", "01712345678", "rocket", mid, ""), "payment_method"},
			{"deposit method", withdrawalBody("100", "01712345678", "bkash_agent", mid, ""), "payment_method"},
			{"missing merchant_id", `{"amount":"100","phone":"01712345678","payment_method":"bkash"}`, "merchant_id"},
			{"unknown field", `{"amount":"100","phone":"01712345678","payment_method":"bkash","merchant_id":"` + mid + `","note":"x"}`, "note"},
		} {
			res := s.do(t, request{method: http.MethodPost, path: "/v1/withdraws", body: []byte(c.body), org: s.b})
			expectError(t, c.name, res, http.StatusBadRequest, "invalid_request", c.field)
		}
		s.expectBalance(t, s.b, "after refused withdrawals", "0.00", "0.00")
	})

	t.Run("not enabled", func(t T) {
		res := s.do(t, request{method: http.MethodPost, path: "/v1/deposits", org: s.c, sign: true,
			body: h2hBody("500", "bkash_agent", s.mid("c-h2h"), "01712345678", "")})
		expectError(t, "H2H create of an organization without H2H", res, http.StatusForbidden, "forbidden", "")
		res = s.do(t, request{method: http.MethodPost, path: "/v1/withdraws", org: s.c,
			body: []byte(withdrawalBody("100", "01712345678", "bkash", s.mid("c-wd"), ""))})
		expectError(t, "withdrawal of an organization without withdrawals", res, http.StatusForbidden, "forbidden", "")
	})
}

// manyKeys is a metadata object with n keys.
func manyKeys(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(`"k%d":%d`, i, i)
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func withdrawalBody(amount, phone, method, merchantID, metadata string) string {
	b := fmt.Sprintf(`{"amount":%q,"phone":%q,"payment_method":%q,"merchant_id":%q`, amount, phone, method, merchantID)
	if metadata != "" {
		b += `,"metadata":` + metadata
	}
	return b + "}"
}
