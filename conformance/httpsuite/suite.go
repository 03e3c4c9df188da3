package httpsuite

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/payd-engine/payd/transport/client"
)

// org is an organization of the suite, with a Go client for it.
type org struct {
	Org
	label string
	cli   *client.Client
	// wallets by "channel/operation": the phone and name of the wallet.
	wallets map[string]wallet
}

type wallet struct{ phone, name string }

// suite is one run against a target.
type suite struct {
	target Target
	base   string // BaseURL without a trailing slash
	prefix string // the path of BaseURL: the host-relative API prefix
	http   *http.Client
	run    string // random tag of this run, in names and merchant IDs
	wait   client.WaitOptions

	// sandbox tells whether the deployment serves the sandbox endpoints;
	// noSandbox says why not.
	sandbox   bool
	noSandbox string

	// a: H2H and withdrawals, wallets bkash/cash_out and nagad/make_payment;
	// deposits and verification live here.
	// b: H2H and withdrawals, wallet bkash/cash_out; withdrawals live here,
	// and it is a's counterpart for isolation.
	// c: neither H2H nor withdrawals.
	a, b, c *org

	// Resources later checks refer to (empty when their check skipped).
	withdrawalOfB string
}

// Run checks the deployment target against the interface and the contract,
// in subtests of t. It creates its own organizations through target.Hooks,
// so it can run against a deployment in use; it never uses the sandbox's
// global outage switch, and it creates withdrawals only when the sandbox
// provider serves the deployment (a real payout would move money).
func Run(t T, target Target) {
	t.Helper()
	s, err := newSuite(target)
	if err != nil {
		t.Fatalf("%v", err)
	}
	s.setup(t) // not a subtest, so that -run can pick any check
	t.Run("errors", s.checkErrors)
	t.Run("deposits", s.checkDeposits)
	t.Run("signing", s.checkSigning)
	t.Run("idempotency", s.checkIdempotency)
	t.Run("verification", s.checkVerification)
	t.Run("withdrawals", s.checkWithdrawals)
	t.Run("isolation", s.checkIsolation)
	t.Run("lists", s.checkLists)
	t.Run("webhooks", s.checkWebhooks)
	t.Run("refunds", s.checkRefunds)
}

func newSuite(target Target) (*suite, error) {
	u, err := url.Parse(strings.TrimRight(target.BaseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" {
		return nil, fmt.Errorf("Target.BaseURL %q: want http(s)://host[:port][/prefix]", target.BaseURL)
	}
	if target.Hooks == nil {
		return nil, fmt.Errorf("Target.Hooks is nil")
	}
	if target.WaitTimeout <= 0 {
		target.WaitTimeout = 30 * time.Second
	}
	if target.PollInterval <= 0 {
		target.PollInterval = 100 * time.Millisecond
	}
	hc := target.HTTPClient
	if hc == nil {
		hc = &http.Client{
			Timeout:       30 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	return &suite{
		target: target, base: u.String(), prefix: u.EscapedPath(), http: hc, run: randomHex(4),
		wait: client.WaitOptions{Interval: target.PollInterval, MaxInterval: time.Second, Timeout: target.WaitTimeout},
	}, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// randomPhone returns a Bangladesh mobile number in local form on the
// operator prefix (e.g. "017").
func randomPhone(operator string) string {
	n, _ := rand.Int(rand.Reader, big.NewInt(100_000_000))
	return fmt.Sprintf("%s%08d", operator, n.Int64())
}

// txID returns a fresh transaction ID in upper case.
func txID() string { return "CT" + strings.ToUpper(randomHex(6)) }

// mid is a merchant ID unique to this run.
func (s *suite) mid(what string) string { return "conf-" + s.run + "-" + what }

func (s *suite) newOrg(t T, label string, o OrgOptions, wallets ...[2]string) *org {
	t.Helper()
	o.Name = "httpsuite " + s.run + " " + label
	created, err := s.target.Hooks.CreateOrganization(t.Context(), o)
	if err != nil {
		t.Fatalf("create organization %s: %v", label, err)
	}
	x := &org{Org: created, label: label, wallets: map[string]wallet{},
		cli: client.New(s.target.BaseURL, created.APIKey, created.SigningSecret,
			client.WithHTTPClient(s.http), client.WithBackoff(50*time.Millisecond, time.Second))}
	for i, w := range wallets {
		wl := wallet{phone: randomPhone("017"), name: fmt.Sprintf("Conformance %s %d", label, i+1)}
		if err := s.target.Hooks.AddWallet(t.Context(), x.ID, w[0], w[1], wl.phone, wl.name); err != nil {
			t.Fatalf("add wallet %s/%s to %s: %v", w[0], w[1], label, err)
		}
		x.wallets[w[0]+"/"+w[1]] = wl
	}
	return x
}

// setup creates the organizations and finds out whether the deployment
// has the sandbox provider.
func (s *suite) setup(t T) {
	s.a = s.newOrg(t, "a", OrgOptions{H2H: true, Withdrawals: true}, [2]string{"bkash", "cash_out"}, [2]string{"nagad", "make_payment"})
	s.b = s.newOrg(t, "b", OrgOptions{H2H: true, Withdrawals: true}, [2]string{"bkash", "cash_out"})
	s.c = s.newOrg(t, "c", OrgOptions{})
	// An empty sandbox payment is refused as invalid by a sandbox and is
	// not found on a deployment without one; it records nothing.
	res := s.do(t, request{method: http.MethodPost, path: "/sandbox/payments", body: []byte(`{}`), org: s.a})
	switch res.status {
	case http.StatusBadRequest:
		s.sandbox = true
	case http.StatusNotFound:
		s.noSandbox = "the deployment has no sandbox provider (POST /sandbox/payments answers 404)"
		t.Logf("%s: checks that need it skip", s.noSandbox)
	default:
		t.Fatalf("probe POST /sandbox/payments {}: got %s, want 400 (sandbox) or 404 (none)", res)
	}
	t.Logf("base URL %s, API prefix %q, run %s, organizations a=%s b=%s c=%s", s.base, s.prefix, s.run, s.a.ID, s.b.ID, s.c.ID)
}

func (s *suite) needSandbox(t T) {
	t.Helper()
	if !s.sandbox {
		t.Skipf("%s", s.noSandbox)
	}
}

// h2hBody is the body of an H2H create.
func h2hBody(amount, method, merchantID, phone string, metadata string) []byte {
	b := fmt.Sprintf(`{"amount":%q,"payment_method":%q,"redirect_url":"https://shop.example/return","merchant_id":%q,"checkout_mode":"h2h","payer":{"phone":%q}`,
		amount, method, merchantID, phone)
	if metadata != "" {
		b += `,"metadata":` + metadata
	}
	return []byte(b + "}")
}

// redirectBody is the body of a redirect create.
func redirectBody(amount, method, merchantID, metadata string) []byte {
	b := fmt.Sprintf(`{"amount":%q,"payment_method":%q,"redirect_url":"https://shop.example/return","merchant_id":%q`, amount, method, merchantID)
	if metadata != "" {
		b += `,"metadata":` + metadata
	}
	return []byte(b + "}")
}

// createH2H creates an H2H deposit of o and checks it was created (201).
func (s *suite) createH2H(t T, o *org, body []byte) map[string]any {
	t.Helper()
	res := s.do(t, request{method: http.MethodPost, path: "/v1/deposits", body: body, org: o, sign: true})
	expectStatus(t, "create H2H deposit", res, http.StatusCreated)
	return checkDeposit(t, "create H2H deposit", res.json, false)
}

// getDeposit reads a deposit of o, signed, and checks its shape.
func (s *suite) getDeposit(t T, o *org, id string) map[string]any {
	t.Helper()
	res := s.do(t, request{method: http.MethodGet, path: "/v1/deposits/" + id, org: o, sign: true})
	expectStatus(t, "GET deposit "+id, res, http.StatusOK)
	return checkDeposit(t, "GET deposit "+id, res.json, true)
}

// verify submits a transaction ID for a deposit of o.
func (s *suite) verify(t T, o *org, depositID, tx string) *response {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"provider_transaction_id": tx})
	return s.do(t, request{method: http.MethodPost, path: "/v1/deposits/" + depositID + "/verify", body: body, org: o, sign: true})
}

// pay records, on the sandbox, the payment a payer makes for a deposit's
// display_instructions, with changes applied.
func (s *suite) pay(t T, o *org, dep map[string]any, tx, payer string, change func(*client.SandboxPaymentRequest)) {
	t.Helper()
	typ := "cash_out"
	if gets(dep, "next_action", "operation") == "make_payment" {
		typ = "payment"
	}
	p := client.SandboxPaymentRequest{
		Channel: gets(dep, "next_action", "channel"), TransactionID: tx, PayerPhone: payer,
		RecipientPhone: gets(dep, "next_action", "recipient", "value"), Amount: gets(dep, "amount"),
		Status: "completed", Type: typ,
	}
	if change != nil {
		change(&p)
	}
	if err := o.cli.SandboxPayment(t.Context(), p); err != nil {
		t.Fatalf("record sandbox payment %s: %v", tx, err)
	}
}

// waitDeposit polls a deposit with the client until it is terminal.
func (s *suite) waitDeposit(t T, o *org, id string) *client.Deposit {
	t.Helper()
	d, err := o.cli.WaitForDeposit(t.Context(), id, s.wait)
	if err != nil {
		t.Fatalf("wait for deposit %s: %v", id, err)
	}
	return d
}

// waitAttempt polls a deposit until its verification is no longer being
// checked (the state a failed attempt leaves while IDs remain) and returns
// the last read.
func (s *suite) waitAttempt(t T, o *org, id string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(s.target.WaitTimeout)
	interval := s.target.PollInterval
	for {
		d := s.getDeposit(t, o, id)
		if gets(d, "status") != "processing" && gets(d, "verification", "state") != "processing" {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("deposit %s still processing after %s: %v", id, s.target.WaitTimeout, d)
		}
		time.Sleep(interval)
		interval = min(interval*3/2, time.Second)
	}
}

// balance reads o's balance and checks its shape.
func (s *suite) balance(t T, o *org) (available, held string) {
	t.Helper()
	res := s.do(t, request{method: http.MethodGet, path: "/v1/balance", org: o})
	expectStatus(t, "GET balance", res, http.StatusOK)
	m := checkShape(t, "GET balance", res.json, balanceSchema)
	return gets(m, "available"), gets(m, "held")
}

func (s *suite) expectBalance(t T, o *org, what, available, held string) {
	t.Helper()
	a, h := s.balance(t, o)
	if a != available || h != held {
		t.Errorf("%s: balance available %s held %s, want %s and %s", what, a, h, available, held)
	}
}

// serverNow is the server's clock, from the Date header of an answer.
func (s *suite) serverNow(t T) time.Time {
	t.Helper()
	res := s.do(t, request{method: http.MethodGet, path: "/v1/balance", org: s.c})
	d, err := http.ParseTime(res.header.Get("Date"))
	if err != nil {
		return time.Now()
	}
	return d
}

// expect reports a value that differs from the wanted one.
func expect[V comparable](t T, what string, got, want V) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}
