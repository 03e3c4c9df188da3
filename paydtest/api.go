package paydtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/payd-engine/payd/engine"
)

// KV is one member of a request body: a key and its raw JSON text. It is
// an array, not a struct, so that other packages write KV{"amount", `"5"`}.
type KV [2]string

// Drop as the raw value removes the member.
const Drop = "\x00drop"

var (
	h2hBase = []KV{
		{"amount", `"500"`}, {"payment_method", `"bkash_agent"`},
		{"redirect_url", `"https://shop.example/return"`}, {"merchant_id", `"MID"`},
		{"checkout_mode", `"h2h"`}, {"payer", `{"phone":"01712345678"}`},
	}
	redirectBase = []KV{
		{"amount", `"500"`}, {"payment_method", `"bkash"`},
		{"redirect_url", `"https://shop.example/return"`}, {"merchant_id", `"MID"`},
	}
	withdrawalBase = []KV{
		{"amount", `"500"`}, {"phone", `"01712345678"`}, {"payment_method", `"bkash"`}, {"merchant_id", `"MID"`},
	}
)

// Body renders base with overrides applied: a key in over replaces the
// base member in place, or is appended; Drop removes it.
func Body(base []KV, over ...KV) string {
	members := append([]KV(nil), base...)
	for _, o := range over {
		replaced := false
		for i := range members {
			if members[i][0] == o[0] {
				members[i][1], replaced = o[1], true
			}
		}
		if !replaced {
			members = append(members, o)
		}
	}
	parts := make([]string, 0, len(members))
	for _, m := range members {
		if m[1] != Drop {
			parts = append(parts, fmt.Sprintf("%q:%s", m[0], m[1]))
		}
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// H2H is a valid H2H deposit create (bkash_agent, 500) with over applied.
func H2H(over ...KV) string { return Body(h2hBase, over...) }

// Redirect is a valid redirect deposit create (bkash, 500) with over applied.
func Redirect(over ...KV) string { return Body(redirectBase, over...) }

// Withdrawal is a valid wallet withdrawal create (bkash, 500) with over
// applied.
func Withdrawal(over ...KV) string { return Body(withdrawalBase, over...) }

// MustJSON is v encoded as JSON.
func MustJSON(tb testing.TB, v any) string {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// Verify submits a transaction ID for a deposit of org's, signed.
func (s *Server) Verify(org *Org, id, body string) *Response {
	s.helper()
	return s.Do(org, Request{Path: "/api/v1/deposits/" + id + "/verify", APIKey: org.APIKey, Sign: true, Body: body})
}

// SandboxPay records a simulated wallet payment in org's sandbox.
func (s *Server) SandboxPay(org *Org, body string) *Response {
	s.helper()
	return s.Do(org, Request{Path: "/api/sandbox/payments", APIKey: org.APIKey, Body: body})
}

// Work runs one pass of the engine's background work: verification
// attempts, payouts, refunds, then deposit expiry.
func (s *Server) Work() {
	s.helper()
	if _, err := s.Engine.ProcessAttempts(context.Background()); err != nil {
		s.fatal(err)
	}
	if _, err := s.Engine.ProcessPayouts(context.Background()); err != nil {
		s.fatal(err)
	}
	if _, err := s.Engine.ProcessRefunds(context.Background()); err != nil {
		s.fatal(err)
	}
	if _, err := s.Engine.ExpireDeposits(context.Background()); err != nil {
		s.fatal(err)
	}
}

// Fund credits org's balance by amount.
func (s *Server) Fund(org *Org, amount string) {
	s.helper()
	if _, err := s.Engine.AdjustBalance(context.Background(), engine.AdjustParams{OrganizationID: org.ID, Amount: amount, Reason: "funding", Actor: "test"}); err != nil {
		s.fatal(err)
	}
}

// Balance is the body of org's GET /v1/balance.
func (s *Server) Balance(org *Org) string {
	s.helper()
	res := s.Do(org, Request{Method: http.MethodGet, Path: "/api/v1/balance", APIKey: org.APIKey})
	if res.Status != http.StatusOK {
		s.fatal(fmt.Errorf("balance: %d %s", res.Status, res.Body))
	}
	return string(res.Body)
}

// SendHeaders sends a request with header as it is, repeated values and
// all, and no signature of its own.
func (s *Server) SendHeaders(method, path, body string, header http.Header) *Response {
	s.helper()
	r, err := http.NewRequest(method, s.URL+path, strings.NewReader(body))
	if err != nil {
		s.fatal(err)
	}
	r.Header = header
	return s.send(r)
}

// SyncBuffer is a bytes.Buffer that a running server (its log) and the
// test share.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p, for the server's logger.
func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String is everything written so far, for the test to read.
func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
