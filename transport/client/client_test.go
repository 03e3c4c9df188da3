package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/payd-engine/payd/transport/client"
	"github.com/payd-engine/payd/transport/signing"
)

// fastRetries keeps network-failure retries quick in tests.
var fastRetries = client.WithBackoff(time.Millisecond, 5*time.Millisecond)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// apiError asserts that err is an *Error with status and code.
func apiError(t *testing.T, err error, status int, code string) *client.Error {
	t.Helper()
	var e *client.Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v (%T), want *client.Error %d %s", err, err, status, code)
	}
	if e.StatusCode != status || e.Code != code {
		t.Fatalf("err = %d %q (%s), want %d %q", e.StatusCode, e.Code, e.Message, status, code)
	}
	if !client.IsCode(err, code) {
		t.Fatalf("IsCode(err, %q) = false", code)
	}
	return e
}

func h2hRequest(merchantID string) client.H2HDepositRequest {
	return client.H2HDepositRequest{
		Amount: "750.50", PaymentMethod: "bkash_agent", RedirectURL: "https://shop.example/return",
		MerchantID: merchantID, PayerPhone: "+8801712345678",
		Metadata: json.RawMessage(`{"cart":"A-17","total":1.50,"note":"<b>&</b>"}`),
	}
}

func TestRedirectDepositCreateReplayConflict(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := ctxT(t)
	c := client.New(e.Base, e.APIKey, e.Secret)
	req := client.RedirectDepositRequest{
		Amount: "500", PaymentMethod: "bkash", RedirectURL: "https://shop.example/return",
		MerchantID: "order-1001", Metadata: json.RawMessage(`{"cart":"A-17","n":1.50,"html":"<b>"}`),
	}
	d, err := c.CreateRedirectDeposit(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(d.ID, "dep_") || d.Amount != "500.00" || d.Status != client.StatusPending ||
		d.PaymentMethod != "bkash" || d.MerchantID != "order-1001" || d.CheckoutMode != "" {
		t.Fatalf("deposit = %+v", d)
	}
	if d.RedirectURL == nil || !strings.HasPrefix(*d.RedirectURL, e.URL+"/checkout/") {
		t.Fatalf("redirect_url = %v, want the hosted checkout", d.RedirectURL)
	}
	if string(d.Metadata) != string(req.Metadata) {
		t.Fatalf("metadata = %s, want byte for byte %s", d.Metadata, req.Metadata)
	}
	if d.IsTerminal() || d.Succeeded() || d.NextAction != nil || d.Verification != nil {
		t.Fatalf("fresh redirect deposit: %+v", d)
	}

	again, err := c.CreateRedirectDeposit(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if again.ID != d.ID {
		t.Fatalf("replay gave %s, want %s", again.ID, d.ID)
	}

	req.Amount = "501"
	_, err = c.CreateRedirectDeposit(ctx, req)
	apiError(t, err, http.StatusConflict, client.CodeMerchantIDConflict)

	// Reading it is signed but the server ignores the signature; a client
	// without a signing secret reads redirect deposits too.
	for _, cl := range []*client.Client{c, client.New(e.Base, e.APIKey, "")} {
		got, err := cl.GetDeposit(ctx, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != d.ID || got.BankTransactionID != nil || string(got.Metadata) != string(req.Metadata) {
			t.Fatalf("GetDeposit = %+v", got)
		}
	}
}

func TestH2HCreateReplayConflict(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := ctxT(t)
	c := client.New(e.Base+"/", e.APIKey, e.Secret) // a trailing slash is fine
	req := h2hRequest("order-1002")
	d, created, err := c.CreateH2HDeposit(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if !created {
		t.Fatal("created = false for a new deposit")
	}
	if d.CheckoutMode != client.CheckoutH2H || d.Status != client.StatusPending || d.Amount != "750.50" ||
		d.ProviderTransactionID != nil || string(d.Metadata) != string(req.Metadata) {
		t.Fatalf("deposit = %+v", d)
	}
	if until := time.Until(d.ExpiresAt); until < 14*time.Minute || until > 16*time.Minute {
		t.Fatalf("expires_at = %v, want about 15 minutes from now", d.ExpiresAt)
	}
	na := d.NextAction
	if na == nil || na.Type != client.ActionDisplayInstructions || na.Channel != "bkash" || na.Operation != "cash_out" ||
		na.Recipient.Type != "phone" || na.Recipient.Value != e.WalletPhone || na.Recipient.Name == nil ||
		*na.Recipient.Name != "Agent Rahim" || na.Amount != "750.50" || na.Currency != "BDT" || na.QRPayload != nil ||
		na.Verification.Endpoint != "/api/v1/deposits/"+d.ID+"/verify" ||
		len(na.Verification.RequiredFields) != 1 || na.Verification.RequiredFields[0] != "provider_transaction_id" {
		t.Fatalf("next_action = %+v", na)
	}
	if v := d.Verification; v == nil || v.State != "awaiting_reference" || v.AttemptsUsed != 0 || v.AttemptsRemaining != 3 || v.FailureCode != nil {
		t.Fatalf("verification = %+v", v)
	}

	again, created, err := c.CreateH2HDeposit(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if created || again.ID != d.ID {
		t.Fatalf("replay: created = %v, id = %s; want false, %s", created, again.ID, d.ID)
	}

	req.Amount = "751"
	_, _, err = c.CreateH2HDeposit(ctx, req)
	apiError(t, err, http.StatusConflict, client.CodeMerchantIDConflict)

	// The signed read works with the /api prefix in the signed target.
	got, err := c.GetDeposit(ctx, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != d.ID || got.NextAction == nil || got.NextAction.Recipient.Value != e.WalletPhone {
		t.Fatalf("GetDeposit = %+v", got)
	}
}

func TestH2HFlowWithWebhook(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := ctxT(t)

	// A merchant's webhook endpoint, verified with VerifyWebhook.
	events := make(chan *client.Event, 10)
	var secret string
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ev, err := client.VerifyWebhook(secret, r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		events <- ev
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(recv.Close)
	_, secret, err := e.Engine.AddWebhookEndpoint(ctx, e.OrgID, recv.URL)
	if err != nil {
		t.Fatal(err)
	}

	c := client.New(e.Base, e.APIKey, e.Secret)
	req := h2hRequest("order-flow")
	d, _, err := c.CreateH2HDeposit(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	na := d.NextAction
	if err := c.SandboxPayment(ctx, client.SandboxPaymentRequest{
		Channel: na.Channel, TransactionID: "8N7A6D5EE7M", PayerPhone: "01712345678",
		RecipientPhone: na.Recipient.Value, Amount: na.Amount,
	}); err != nil {
		t.Fatal(err)
	}
	v, err := c.SubmitTransactionID(ctx, d.ID, " 8n7a6d5ee7m ")
	if err != nil {
		t.Fatal(err)
	}
	if !v.Queued || v.Status != "processing" || v.DepositID != d.ID || !strings.HasPrefix(v.AttemptID, "att_") ||
		v.ProviderTransactionID != "8N7A6D5EE7M" || v.AttemptsUsed != 1 || v.AttemptsRemaining != 2 {
		t.Fatalf("verification = %+v", v)
	}

	done, err := c.WaitForDeposit(ctx, d.ID, client.WaitOptions{Interval: 10 * time.Millisecond, MaxInterval: 50 * time.Millisecond, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !done.Succeeded() || !done.IsTerminal() || done.NextAction != nil ||
		done.ProviderTransactionID == nil || *done.ProviderTransactionID != "8N7A6D5EE7M" ||
		done.Verification == nil || done.Verification.State != "succeeded" {
		t.Fatalf("deposit = %+v", done)
	}

	again, err := c.SubmitTransactionID(ctx, d.ID, "8N7A6D5EE7M")
	if err != nil {
		t.Fatal(err)
	}
	if again.Queued || again.Status != "resolved" || again.AttemptID != v.AttemptID ||
		again.AttemptStatus != "succeeded" || again.DepositStatus != client.StatusSucceeded || again.FailureCode != nil {
		t.Fatalf("repeat = %+v", again)
	}

	// A new ID on the terminal deposit is refused.
	_, err = c.SubmitTransactionID(ctx, d.ID, "OTHER123")
	apiError(t, err, http.StatusConflict, client.CodeDepositTerminal)

	select {
	case ev := <-events:
		if ev.Type != client.EventDepositSucceeded || !strings.HasPrefix(ev.ID, "evt_") || ev.Timestamp.IsZero() {
			t.Fatalf("event = %+v", ev)
		}
		dep, err := ev.Deposit()
		if err != nil {
			t.Fatal(err)
		}
		if dep.ID != d.ID || !dep.Succeeded() || string(dep.Metadata) != string(req.Metadata) {
			t.Fatalf("event deposit = %+v", dep)
		}
		if _, err := ev.Withdrawal(); err == nil {
			t.Fatal("Withdrawal() of a deposit event succeeded")
		}
	case <-ctx.Done():
		t.Fatal("no deposit.succeeded webhook arrived")
	}
}

func TestH2HRedirectActionIsNotVerified(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := ctxT(t)
	c := client.New(e.Base, e.APIKey, e.Secret)
	req := h2hRequest("order-redirect")
	req.PaymentMethod = "bkash"
	d, created, err := c.CreateH2HDeposit(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if !created || d.NextAction == nil || d.NextAction.Type != client.ActionRedirect ||
		!strings.HasPrefix(d.NextAction.URL, e.URL+"/checkout/") || d.Verification.State != "processing" {
		t.Fatalf("deposit = %+v, next_action = %+v", d, d.NextAction)
	}
	_, err = c.SubmitTransactionID(ctx, d.ID, "ABC123")
	apiError(t, err, http.StatusConflict, client.CodeRedirectAction)
}

func TestWithdrawals(t *testing.T) {
	e := newEnv(t, envOptions{Withdrawals: true, Balance: "5000", PayoutMode: "manual"})
	ctx := ctxT(t)
	c := client.New(e.Base, e.APIKey, e.Secret)

	w, err := c.CreateWithdrawal(ctx, client.WithdrawalRequest{
		Amount: "1000", Phone: "+8801712345678", PaymentMethod: "bkash", MerchantID: "payout-1",
		Metadata: json.RawMessage(`{"invoice":7}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(w.ID, "wd_") || w.Status != client.WithdrawalProcessing || w.Amount != "1000.00" ||
		w.Phone != "01712345678" || w.MerchantID != "payout-1" || string(w.Metadata) != `{"invoice":7}` || w.IsTerminal() {
		t.Fatalf("withdrawal = %+v", w)
	}
	b, err := c.Balance(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if *b != (client.Balance{Currency: "BDT", Available: "4000.00", Held: "1000.00"}) {
		t.Fatalf("balance = %+v", b)
	}

	_, err = c.CreateWithdrawal(ctx, client.WithdrawalRequest{Amount: "1000", Phone: "01712345678", PaymentMethod: "bkash", MerchantID: "payout-1"})
	if e := apiError(t, err, http.StatusConflict, client.CodeMerchantIDExists); e.Retried {
		t.Fatal("Retried set without any network failure")
	}
	_, err = c.CreateWithdrawal(ctx, client.WithdrawalRequest{Amount: "4500", Phone: "01712345678", PaymentMethod: "bkash", MerchantID: "payout-2"})
	apiError(t, err, http.StatusForbidden, client.CodeInsufficientBalance)

	if err := c.SandboxSettleWithdrawal(ctx, w.ID, "succeeded"); err != nil {
		t.Fatal(err)
	}
	fast := client.WaitOptions{Interval: 10 * time.Millisecond, Timeout: 20 * time.Second}
	got, err := c.WaitForWithdrawal(ctx, w.ID, fast)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != client.WithdrawalSucceeded || !got.IsTerminal() {
		t.Fatalf("after settle: %+v", got)
	}

	w2, err := c.CreateWithdrawal(ctx, client.WithdrawalRequest{Amount: "500", Phone: "01812345678", PaymentMethod: "nagad", MerchantID: "payout-3"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SandboxSettleWithdrawal(ctx, w2.ID, "failed"); err != nil {
		t.Fatal(err)
	}
	if got, err := c.WaitForWithdrawal(ctx, w2.ID, fast); err != nil || got.Status != client.WithdrawalFailed {
		t.Fatalf("after failed settle: %+v, %v", got, err)
	}
	b, err = c.Balance(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if b.Available != "4000.00" || b.Held != "0.00" {
		t.Fatalf("final balance = %+v", b)
	}

	if got, err := c.GetWithdrawal(ctx, w.ID); err != nil || got.Status != client.WithdrawalSucceeded {
		t.Fatalf("GetWithdrawal = %+v, %v", got, err)
	}
	_, err = c.GetWithdrawal(ctx, "wd_missing")
	apiError(t, err, http.StatusNotFound, client.CodeNotFound)
}

// countingTransport counts the requests that reach the network.
type countingTransport struct {
	n    atomic.Int32
	next http.RoundTripper
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(r)
}

func TestTypedErrors(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := ctxT(t)
	ct := &countingTransport{next: http.DefaultTransport}
	c := client.New(e.Base, e.APIKey, e.Secret, client.WithHTTPClient(&http.Client{Transport: ct}), fastRetries)

	wrong := client.New(e.Base, "payd_sk_wrong", e.Secret)
	_, err := wrong.Balance(ctx)
	if e := apiError(t, err, http.StatusUnauthorized, client.CodeUnauthorized); e.Message != "invalid_api_key" {
		t.Fatalf("message = %q", e.Message)
	}
	if !strings.Contains(err.Error(), "401 unauthorized: invalid_api_key") {
		t.Fatalf("Error() = %q", err.Error())
	}

	_, err = c.GetDeposit(ctx, "dep_missing")
	apiError(t, err, http.StatusNotFound, client.CodeNotFound)

	_, err = c.CreateRedirectDeposit(ctx, client.RedirectDepositRequest{
		Amount: "1e3", PaymentMethod: "bkash", RedirectURL: "https://shop.example/r", MerchantID: "bad-amount",
	})
	if e := apiError(t, err, http.StatusBadRequest, client.CodeInvalidRequest); !strings.HasPrefix(e.Message, "amount: ") {
		t.Fatalf("message = %q, want amount: ...", e.Message)
	}

	_, _, err = c.CreateH2HDeposit(ctx, client.H2HDepositRequest{
		Amount: "500", PaymentMethod: "bkash_agent", RedirectURL: "https://shop.example/r", MerchantID: "bad-phone", PayerPhone: "12345",
	})
	if e := apiError(t, err, http.StatusBadRequest, client.CodeInvalidRequest); !strings.HasPrefix(e.Message, "payer.phone: ") {
		t.Fatalf("message = %q", e.Message)
	}

	_, err = c.CreateWithdrawal(ctx, client.WithdrawalRequest{Amount: "100", Phone: "01712345678", PaymentMethod: "bkash", MerchantID: "w"})
	apiError(t, err, http.StatusForbidden, client.CodeForbidden)

	if n := ct.n.Load(); n != 4 {
		t.Fatalf("%d requests for 4 refused calls: a 4xx must not be retried", n)
	}

	if _, err := c.GetDeposit(ctx, ""); err == nil || isAPI(err) {
		t.Fatalf("empty ID: %v, want a local error", err)
	}
	bad := client.New("ftp://example.com", e.APIKey, e.Secret)
	if _, err := bad.Balance(ctx); err == nil || isAPI(err) {
		t.Fatalf("bad base URL: %v", err)
	}
}

func isAPI(err error) bool {
	var e *client.Error
	return errors.As(err, &e)
}

func TestSignatureFailures(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := ctxT(t)
	c := client.New(e.Base, e.APIKey, e.Secret)
	d, _, err := c.CreateH2HDeposit(ctx, h2hRequest("order-sig"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		c      *client.Client
		reason string
	}{
		{"no secret", client.New(e.Base, e.APIKey, ""), "missing_signature"},
		{"wrong secret", client.New(e.Base, e.APIKey, "payd_ss_wrong"), "invalid_signature"},
		{"skewed clock", client.New(e.Base, e.APIKey, e.Secret, client.WithClock(func() time.Time { return time.Now().Add(-6 * time.Minute) })), "stale_signature"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.c.GetDeposit(ctx, d.ID)
			if e := apiError(t, err, http.StatusUnauthorized, client.CodeUnauthorized); e.Message != tc.reason {
				t.Fatalf("message = %q, want %q", e.Message, tc.reason)
			}
		})
	}
	// The default HTTP client follows no redirect: a redirect would change
	// the signed target. (payd answers a non-canonical path 404, so a proxy
	// in front of it redirects here.)
	redirector := httptest.NewServer(http.RedirectHandler(e.URL+"/api/v1/deposits/"+d.ID, http.StatusMovedPermanently))
	defer redirector.Close()
	_, err = client.New(redirector.URL+"/api", e.APIKey, e.Secret).GetDeposit(ctx, d.ID)
	var redirect *client.Error
	if !errors.As(err, &redirect) || redirect.StatusCode/100 != 3 || redirect.Code != "" {
		t.Fatalf("err = %v, want the redirect as an *Error", err)
	}
}

// attempt is what a flaky transport saw of one request.
type attempt struct {
	timestamp, signature, target string
	body                         string
}

// flakyTransport sits in front of the real server. The first failBefore
// requests fail as a refused connection without being sent; the next
// dropAfter requests are sent, processed by the server, and their answer is
// lost as by a reset connection.
type flakyTransport struct {
	mu         sync.Mutex
	failBefore int
	dropAfter  int
	seen       []attempt
	next       http.RoundTripper
}

func (f *flakyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(r.Body)
		r.Body.Close()
		r.Body = io.NopCloser(strings.NewReader(string(body)))
	}
	f.mu.Lock()
	f.seen = append(f.seen, attempt{r.Header.Get(signing.TimestampHeader), r.Header.Get(signing.SignatureHeader), r.URL.RequestURI(), string(body)})
	failBefore := f.failBefore > 0
	dropAfter := !failBefore && f.dropAfter > 0
	if failBefore {
		f.failBefore--
	} else if dropAfter {
		f.dropAfter--
	}
	f.mu.Unlock()
	if failBefore {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	}
	resp, err := f.next.RoundTrip(r)
	if err != nil || !dropAfter {
		return resp, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return nil, &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
}

func (f *flakyTransport) attempts() []attempt {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]attempt(nil), f.seen...)
}

// steppingClock advances a second on every reading, so that each signature
// has its own timestamp.
func steppingClock() func() time.Time {
	var n atomic.Int64
	start := time.Now()
	return func() time.Time { return start.Add(time.Duration(n.Add(1)) * time.Second) }
}

// checkFresh asserts every attempt carried the same body and target and its
// own timestamp and signature.
func checkFresh(t *testing.T, seen []attempt, want int) {
	t.Helper()
	if len(seen) != want {
		t.Fatalf("%d attempts, want %d", len(seen), want)
	}
	sigs := map[string]bool{}
	stamps := map[string]bool{}
	for _, a := range seen {
		if a.body != seen[0].body || a.target != seen[0].target {
			t.Fatalf("attempts differ: %+v vs %+v", a, seen[0])
		}
		if a.signature == "" || sigs[a.signature] || stamps[a.timestamp] {
			t.Fatalf("attempt reused a timestamp or signature: %+v", seen)
		}
		sigs[a.signature], stamps[a.timestamp] = true, true
	}
}

func TestRetryNetworkFailureBeforeSending(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := ctxT(t)
	ft := &flakyTransport{failBefore: 2, next: http.DefaultTransport}
	c := client.New(e.Base, e.APIKey, e.Secret, client.WithHTTPClient(&http.Client{Transport: ft}),
		client.WithClock(steppingClock()), fastRetries)
	d, created, err := c.CreateH2HDeposit(ctx, h2hRequest("order-flaky"))
	if err != nil {
		t.Fatal(err)
	}
	if !created {
		t.Fatal("created = false: only the third attempt reached the server")
	}
	seen := ft.attempts()
	checkFresh(t, seen, 3)
	if seen[0].target != "/api/v1/deposits" {
		t.Fatalf("signed target = %q", seen[0].target)
	}

	// Reads retry the same way.
	ft.mu.Lock()
	ft.failBefore, ft.seen = 1, nil
	ft.mu.Unlock()
	if got, err := c.GetDeposit(ctx, d.ID); err != nil || got.ID != d.ID {
		t.Fatalf("GetDeposit = %+v, %v", got, err)
	}
	checkFresh(t, ft.attempts(), 2)

	// Retries are bounded: WithRetries(1) makes two attempts, then returns
	// the network error.
	ft.mu.Lock()
	ft.failBefore, ft.seen = 5, nil
	ft.mu.Unlock()
	c1 := client.New(e.Base, e.APIKey, e.Secret, client.WithHTTPClient(&http.Client{Transport: ft}), client.WithRetries(1), fastRetries)
	if _, err := c1.GetDeposit(ctx, d.ID); err == nil || isAPI(err) {
		t.Fatalf("err = %v, want the network error", err)
	}
	if n := len(ft.attempts()); n != 2 {
		t.Fatalf("%d attempts with WithRetries(1)", n)
	}

	// An error that would recur (here a certificate problem) is not retried.
	var calls atomic.Int32
	broken := roundTripFunc(func(*http.Request) (*http.Response, error) {
		calls.Add(1)
		return nil, errors.New("tls: failed to verify certificate")
	})
	c2 := client.New(e.Base, e.APIKey, e.Secret, client.WithHTTPClient(&http.Client{Transport: broken}), fastRetries)
	if _, err := c2.Balance(ctx); err == nil || calls.Load() != 1 {
		t.Fatalf("err = %v after %d attempts, want 1", err, calls.Load())
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestRetryResponseLostAfterProcessing(t *testing.T) {
	e := newEnv(t, envOptions{Withdrawals: true, Balance: "5000", PayoutMode: "manual"})
	ctx := ctxT(t)
	ft := &flakyTransport{next: http.DefaultTransport}
	c := client.New(e.Base, e.APIKey, e.Secret, client.WithHTTPClient(&http.Client{Transport: ft}),
		client.WithClock(steppingClock()), fastRetries)
	drop := func(n int) {
		ft.mu.Lock()
		ft.dropAfter, ft.seen = n, nil
		ft.mu.Unlock()
	}

	// H2H create: the first answer (201) is lost; the retry is a replay.
	drop(1)
	d, created, err := c.CreateH2HDeposit(ctx, h2hRequest("order-lost"))
	if err != nil {
		t.Fatal(err)
	}
	checkFresh(t, ft.attempts(), 2)
	if created {
		t.Fatal("created = true: the retry must be answered as a replay (200)")
	}
	if got, err := c.GetDeposit(ctx, d.ID); err != nil || got.MerchantID != "order-lost" {
		t.Fatalf("GetDeposit = %+v, %v", got, err)
	}

	// Redirect create: the same deposit comes back.
	drop(1)
	rd, err := c.CreateRedirectDeposit(ctx, client.RedirectDepositRequest{
		Amount: "500", PaymentMethod: "nagad", RedirectURL: "https://shop.example/r", MerchantID: "order-lost-r",
	})
	if err != nil {
		t.Fatal(err)
	}
	drop(0)
	if again, err := c.CreateRedirectDeposit(ctx, client.RedirectDepositRequest{
		Amount: "500", PaymentMethod: "nagad", RedirectURL: "https://shop.example/r", MerchantID: "order-lost-r",
	}); err != nil || again.ID != rd.ID {
		t.Fatalf("redirect retry made a second deposit: %v vs %v (%v)", rd.ID, again, err)
	}

	// Verify: the repeat returns the same attempt, without using another.
	if err := c.SandboxPayment(ctx, client.SandboxPaymentRequest{
		Channel: "bkash", TransactionID: "LOST1234", PayerPhone: "01712345678", RecipientPhone: e.WalletPhone, Amount: "750.50",
	}); err != nil {
		t.Fatal(err)
	}
	drop(1)
	v, err := c.SubmitTransactionID(ctx, d.ID, "LOST1234")
	if err != nil {
		t.Fatal(err)
	}
	checkFresh(t, ft.attempts(), 2)
	if v.ProviderTransactionID != "LOST1234" || (v.Queued && v.AttemptsUsed != 1) {
		t.Fatalf("verification = %+v", v)
	}
	drop(0)
	done, err := c.WaitForDeposit(ctx, d.ID, client.WaitOptions{Interval: 10 * time.Millisecond, Timeout: 20 * time.Second})
	if err != nil || !done.Succeeded() || done.Verification.AttemptsUsed != 1 {
		t.Fatalf("deposit = %+v, %v", done, err)
	}

	// Withdrawal create: the contract makes a reused merchant_id a 409, so
	// the retry is answered merchant_id_exists; the client finds the
	// withdrawal its lost attempt made and returns it, and exactly one
	// payout holds the balance.
	drop(1)
	wd, err := c.CreateWithdrawal(ctx, client.WithdrawalRequest{Amount: "1000", Phone: "+8801712345678", PaymentMethod: "bkash", MerchantID: "payout-lost"})
	if err != nil || wd.MerchantID != "payout-lost" || wd.Amount != "1000.00" || wd.ID == "" {
		t.Fatalf("CreateWithdrawal after a lost answer = %+v, %v; want the withdrawal it made", wd, err)
	}
	if b, err := c.Balance(ctx); err != nil || b.Held != "1000.00" {
		t.Fatalf("balance = %+v, %v; want exactly one hold", b, err)
	}
	// Another request under the same merchant_id, whose answer was lost
	// too, is not given that withdrawal: it is merchant_id_exists.
	drop(1)
	_, err = c.CreateWithdrawal(ctx, client.WithdrawalRequest{Amount: "1001", Phone: "01712345678", PaymentMethod: "bkash", MerchantID: "payout-lost"})
	if e := apiError(t, err, http.StatusConflict, client.CodeMerchantIDExists); !e.Retried {
		t.Fatal("Retried = false after a lost answer")
	}
	// Without a lost answer, a reused merchant_id is merchant_id_exists.
	drop(0)
	_, err = c.CreateWithdrawal(ctx, client.WithdrawalRequest{Amount: "1000", Phone: "01712345678", PaymentMethod: "bkash", MerchantID: "payout-lost"})
	if e := apiError(t, err, http.StatusConflict, client.CodeMerchantIDExists); e.Retried {
		t.Fatal("Retried set without a lost answer")
	}
	if b, err := c.Balance(ctx); err != nil || b.Held != "1000.00" {
		t.Fatalf("balance = %+v, %v; want exactly one hold", b, err)
	}
}

// TestWithdrawalCommittedBehind503: a withdrawal whose commit reached the
// database but whose answer was a 503 database_unavailable (the primary
// died as it committed) is found and returned by the retried create.
func TestWithdrawalCommittedBehind503(t *testing.T) {
	e := newEnv(t, envOptions{Withdrawals: true, Balance: "5000", PayoutMode: "manual"})
	ctx := ctxT(t)
	var creates atomic.Int32
	lost := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		res, err := http.DefaultTransport.RoundTrip(r)
		if err == nil && r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/v1/withdraws") && creates.Add(1) == 1 {
			res.Body.Close()
			body := `{"error":{"code":"database_unavailable","message":"the database is unavailable; try again in a moment"}}`
			return &http.Response{StatusCode: http.StatusServiceUnavailable, Header: http.Header{"Content-Type": {"application/json"}},
				Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
		}
		return res, err
	})
	c := client.New(e.Base, e.APIKey, e.Secret, client.WithHTTPClient(&http.Client{Transport: lost}), fastRetries)
	wd, err := c.CreateWithdrawal(ctx, client.WithdrawalRequest{Amount: "700", Phone: "01712345678", PaymentMethod: "bkash", MerchantID: "payout-503"})
	if err != nil || wd.MerchantID != "payout-503" || wd.Amount != "700.00" {
		t.Fatalf("CreateWithdrawal = %+v, %v; want the withdrawal the first attempt made", wd, err)
	}
	if n := creates.Load(); n != 2 {
		t.Fatalf("%d creates sent, want 2", n)
	}
	if b, err := c.Balance(ctx); err != nil || b.Held != "700.00" {
		t.Fatalf("balance = %+v, %v; want exactly one hold", b, err)
	}
}

// rateLimiter answers the first n requests with 429 (or status) and
// Retry-After, then proxies to the real server.
func rateLimiter(t *testing.T, target string, n int, status int, retryAfter string) (*httptest.Server, *atomic.Int32) {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	var count atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if int(count.Add(1)) <= n {
			if retryAfter != "" {
				w.Header().Set("Retry-After", retryAfter)
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			code := "rate_limited"
			if status == http.StatusServiceUnavailable {
				code = "verification_unavailable"
			}
			fmt.Fprintf(w, `{"error":{"code":%q,"message":"slow down"}}`, code)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &count
}

func TestRetryRateLimited(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := ctxT(t)

	front, count := rateLimiter(t, e.URL, 1, http.StatusTooManyRequests, "1")
	c := client.New(front.URL+"/api", e.APIKey, e.Secret, client.WithClock(steppingClock()))
	start := time.Now()
	d, created, err := c.CreateH2HDeposit(ctx, h2hRequest("order-429"))
	if err != nil {
		t.Fatal(err)
	}
	if !created || count.Load() != 2 {
		t.Fatalf("created = %v after %d requests", created, count.Load())
	}
	if waited := time.Since(start); waited < time.Second {
		t.Fatalf("retried after %v, before Retry-After", waited)
	}
	if _, err := c.GetDeposit(ctx, d.ID); err != nil {
		t.Fatal(err)
	}

	// 503 without Retry-After is retried after the backoff.
	front, count = rateLimiter(t, e.URL, 2, http.StatusServiceUnavailable, "")
	c = client.New(front.URL+"/api", e.APIKey, e.Secret, fastRetries)
	if _, err := c.GetDeposit(ctx, d.ID); err != nil || count.Load() != 3 {
		t.Fatalf("503 retry: %v after %d requests", err, count.Load())
	}

	// When the retries run out, the last answer is returned, with its
	// Retry-After.
	front, count = rateLimiter(t, e.URL, 10, http.StatusTooManyRequests, "0")
	c = client.New(front.URL+"/api", e.APIKey, e.Secret, client.WithRetries(2), fastRetries)
	_, err = c.Balance(ctx)
	apiError(t, err, http.StatusTooManyRequests, client.CodeRateLimited)
	if count.Load() != 3 {
		t.Fatalf("%d requests with WithRetries(2)", count.Load())
	}

	// A Retry-After beyond the cap is not waited for.
	front, count = rateLimiter(t, e.URL, 10, http.StatusTooManyRequests, "3600")
	c = client.New(front.URL+"/api", e.APIKey, e.Secret)
	_, err = c.Balance(ctx)
	if e := apiError(t, err, http.StatusTooManyRequests, client.CodeRateLimited); e.RetryAfter != time.Hour || count.Load() != 1 {
		t.Fatalf("RetryAfter = %v after %d requests", e.RetryAfter, count.Load())
	}
}

func TestNonJSONErrorBody(t *testing.T) {
	var count atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		count.Add(1)
		http.Error(w, "<html>bad gateway</html>", http.StatusBadGateway)
	}))
	t.Cleanup(srv.Close)
	c := client.New(srv.URL+"/api", "k", "s", fastRetries)
	_, err := c.Balance(ctxT(t))
	if e := apiError(t, err, http.StatusBadGateway, ""); e.Message != "<html>bad gateway</html>" {
		t.Fatalf("message = %q", e.Message)
	}
	if count.Load() != 1 {
		t.Fatalf("%d requests: an HTTP answer other than 429/503 is not retried", count.Load())
	}
}

func TestWaitForDepositTimeout(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := ctxT(t)
	c := client.New(e.Base, e.APIKey, e.Secret)
	d, _, err := c.CreateH2HDeposit(ctx, h2hRequest("order-wait"))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	got, err := c.WaitForDeposit(ctx, d.ID, client.WaitOptions{Interval: 10 * time.Millisecond, MaxInterval: 20 * time.Millisecond, Timeout: 150 * time.Millisecond})
	if !errors.Is(err, client.ErrWaitTimeout) {
		t.Fatalf("err = %v, want ErrWaitTimeout", err)
	}
	if got == nil || got.ID != d.ID || got.Status != client.StatusPending {
		t.Fatalf("last deposit = %+v", got)
	}
	if took := time.Since(start); took < 150*time.Millisecond || took > 5*time.Second {
		t.Fatalf("waited %v for a 150ms bound", took)
	}

	cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	got, err = c.WaitForDeposit(cctx, d.ID, client.WaitOptions{Interval: 10 * time.Millisecond})
	if !errors.Is(err, context.DeadlineExceeded) || got == nil {
		t.Fatalf("ctx end: %+v, %v", got, err)
	}

	// A permanent error ends the wait at once.
	_, err = c.WaitForDeposit(ctx, "dep_missing", client.WaitOptions{Interval: 10 * time.Millisecond})
	apiError(t, err, http.StatusNotFound, client.CodeNotFound)
}

func TestSandboxOutage(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := ctxT(t)
	c := client.New(e.Base, e.APIKey, e.Secret)
	if err := c.SandboxOutage(ctx, true); err != nil {
		t.Fatal(err)
	}
	if !e.Sandbox.Outage(e.OrgID) {
		t.Fatal("outage not switched on")
	}
	if err := c.SandboxOutage(ctx, false); err != nil || e.Sandbox.Outage(e.OrgID) {
		t.Fatalf("outage off: %v", err)
	}
	err := c.SandboxPayment(ctx, client.SandboxPaymentRequest{Channel: "bkash", TransactionID: "X", PayerPhone: "01712345678", Amount: "100"})
	apiError(t, err, http.StatusBadRequest, client.CodeInvalidRequest)
}
