package payd_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	payd "github.com/payd-engine/payd"
	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydtest"
	"github.com/payd-engine/payd/provider/sandbox"
	"github.com/payd-engine/payd/provider/smsinbox"
	"github.com/payd-engine/payd/storage/postgres"
	"github.com/payd-engine/payd/storage/postgres/pgtest"
)

// dbProxy forwards TCP connections to a database and can cut them: while
// cut it closes the connections it holds and every new one at once, as a
// primary that died (or a network that lost it) would look to payd.
type dbProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	down   bool
	conns  map[net.Conn]bool
}

func newDBProxy(t *testing.T, target string) *dbProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &dbProxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	t.Cleanup(func() { ln.Close(); p.cut() })
	go p.serve()
	return p
}

func (p *dbProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		down := p.down
		p.mu.Unlock()
		if down {
			c.Close()
			continue
		}
		go p.forward(c)
	}
}

func (p *dbProxy) forward(c net.Conn) {
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	p.conns[c], p.conns[s] = true, true
	p.mu.Unlock()
	go func() { io.Copy(s, c); s.Close() }()
	io.Copy(c, s)
	c.Close()
}

// cut closes every connection and refuses new ones until restore.
func (p *dbProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		c.Close()
		delete(p.conns, c)
	}
}

func (p *dbProxy) restore() {
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
}

// onProxiedPostgres builds the server on a Postgres database of its own
// reached through a dbProxy (skipped without PAYD_TEST_POSTGRES_URL).
func onProxiedPostgres(t *testing.T) (paydtest.Option, *dbProxy, *postgres.Store) {
	t.Helper()
	dsn := pgtest.URL(t)
	u, err := url.Parse(dsn)
	if err != nil || !strings.HasPrefix(dsn, "postgres") {
		t.Skipf("PAYD_TEST_POSTGRES_URL is not a URL: %v", err)
	}
	p := newDBProxy(t, u.Host)
	u.Host = p.ln.Addr().String()
	q := u.Query()
	q.Set("connect_timeout", "2")
	u.RawQuery = q.Encode()
	store, err := postgres.Open(context.Background(), u.String(), sandbox.Migrations(), smsinbox.Migrations())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return func(c *payd.Config) { c.Store = store }, p, store
}

// TestDatabaseOutageAnswers503: while the database is unreachable, every
// API answer is 503 database_unavailable with Retry-After (never a 500),
// the checkout and the console show a "try again in a moment" page, and
// /readyz says why; once the database is back, everything answers again
// and the outage shows in the metrics.
func TestDatabaseOutageAnswers503(t *testing.T) {
	opt, proxy, _ := onProxiedPostgres(t)
	s := paydtest.MustOpen(t, opt)
	org := s.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true), WithdrawalsEnabled: ptr(true)})
	s.AddWallet(org, "bkash", "cash_out", "01811111111", "Agent")
	s.Fund(org, "10000")
	dep := s.CreateH2H(org, paydtest.H2H(paydtest.KV{"merchant_id", `"before"`}))
	if dep.Status != http.StatusCreated {
		t.Fatalf("create before the outage: %d %s", dep.Status, dep.Body)
	}
	red := s.Do(org, paydtest.Request{APIKey: org.APIKey, Body: paydtest.Redirect(paydtest.KV{"merchant_id", `"redirect"`})})
	if red.Status != http.StatusOK && red.Status != http.StatusCreated {
		t.Fatalf("redirect create: %d %s", red.Status, red.Body)
	}
	checkout, _ := url.Parse(paydtest.Str(red.JSON, "redirect_url"))

	proxy.cut()
	for _, req := range []paydtest.Request{
		{APIKey: org.APIKey, Sign: true, Body: paydtest.H2H(paydtest.KV{"merchant_id", `"during"`})},
		{APIKey: org.APIKey, Sign: true, Method: "GET", Path: "/api/v1/deposits/" + paydtest.Str(dep.JSON, "id")},
		{APIKey: org.APIKey, Sign: true, Path: "/api/v1/deposits/" + paydtest.Str(dep.JSON, "id") + "/verify", Body: `{"provider_transaction_id":"ABC123XYZ9"}`},
		{APIKey: org.APIKey, Path: "/api/v1/withdraws", Body: paydtest.Withdrawal(paydtest.KV{"merchant_id", `"wd-during"`})},
		{APIKey: org.APIKey, Method: "GET", Path: "/api/v1/withdraws?merchant_id=wd-during"},
		{APIKey: org.APIKey, Method: "GET", Path: "/api/v1/balance"},
	} {
		res := s.Do(org, req)
		if res.Status != http.StatusServiceUnavailable || res.ErrorCode() != engine.CodeDatabaseUnavailable || res.Header.Get("Retry-After") == "" {
			t.Errorf("%s %s during the outage: %d %q Retry-After %q, want 503 %s with Retry-After",
				req.Method, req.Path, res.Status, res.Body, res.Header.Get("Retry-After"), engine.CodeDatabaseUnavailable)
		}
		if strings.Contains(string(res.Body), "127.0.0.1") || strings.Contains(string(res.Body), "SQLSTATE") {
			t.Errorf("the answer tells the database's details: %s", res.Body)
		}
	}
	for _, path := range []string{checkout.Path, "/pay/plink_none"} {
		res, err := http.Get(s.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" ||
			!strings.Contains(res.Header.Get("Content-Type"), "text/html") || !strings.Contains(strings.ToLower(string(body)), "try again") {
			t.Errorf("GET %s during the outage: %d %s Retry-After %q: %.300s", path, res.StatusCode, res.Header.Get("Content-Type"), res.Header.Get("Retry-After"), body)
		}
	}
	res, err := http.Get(s.OpsURL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "no writable primary") {
		t.Errorf("/readyz during the outage: %d %s", res.StatusCode, body)
	}

	proxy.restore()
	if res := s.CreateH2H(org, paydtest.H2H(paydtest.KV{"merchant_id", `"after"`})); res.Status != http.StatusCreated {
		t.Fatalf("create after the outage: %d %s", res.Status, res.Body)
	}
	if res := s.Do(org, paydtest.Request{APIKey: org.APIKey, Path: "/api/v1/withdraws", Body: paydtest.Withdrawal(paydtest.KV{"merchant_id", `"wd-after"`})}); res.Status != http.StatusCreated {
		t.Fatalf("withdrawal after the outage: %d %s", res.Status, res.Body)
	}
	families := scrape(t, s)
	if got := gaugeValue(t, families, "payd_db_unavailable_seconds", nil); got != 0 {
		t.Errorf("payd_db_unavailable_seconds after the outage: %v, want 0", got)
	}
	if m := series(families, "payd_db_unavailable_seconds_total", nil); m == nil || m.GetCounter().GetValue() <= 0 {
		t.Errorf("payd_db_unavailable_seconds_total: %v, want the outage's length", m)
	}
	if m := series(families, "payd_db_outages_total", nil); m == nil || m.GetCounter().GetValue() != 1 {
		t.Errorf("payd_db_outages_total: %v, want 1", m)
	}
	if m := series(families, "payd_db_reconnects_total", nil); m == nil || m.GetCounter().GetValue() < 1 {
		t.Errorf("payd_db_reconnects_total: %v, want at least 1", m)
	}
	failed := 0.0
	for _, cause := range []string{"connect", "connection_lost"} {
		if m := series(families, "payd_db_unavailable_transactions_total", map[string]string{"cause": cause}); m != nil {
			failed += m.GetCounter().GetValue()
		}
	}
	if failed < 6 {
		t.Errorf("payd_db_unavailable_transactions_total{cause=connect|connection_lost}: %v, want at least one per request", failed)
	}
}

// unavailableStore fails every transaction with engine.ErrUnavailable
// while down, as a store whose database has no writable primary.
type unavailableStore struct {
	payd.Store
	down atomic.Bool
}

func (s *unavailableStore) InTx(ctx context.Context, fn func(ctx context.Context, tx engine.Tx) error) error {
	if s.down.Load() {
		return fmt.Errorf("test: no primary: %w", engine.ErrUnavailable)
	}
	return s.Store.InTx(ctx, fn)
}

func (s *unavailableStore) ReadTx(ctx context.Context, fn func(ctx context.Context, tx engine.Tx) error) error {
	if s.down.Load() {
		return fmt.Errorf("test: no primary: %w", engine.ErrUnavailable)
	}
	return s.Store.ReadTx(ctx, fn)
}

// TestStoreUnavailableAnswers503 is TestDatabaseOutageAnswers503's mapping
// without Postgres: any store's engine.ErrUnavailable is a 503
// database_unavailable with Retry-After, on the API and the checkout.
func TestStoreUnavailableAnswers503(t *testing.T) {
	var store *unavailableStore
	s := paydtest.MustOpen(t, func(c *payd.Config) {
		store = &unavailableStore{Store: c.Store}
		c.Store = store
	})
	org := s.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true), WithdrawalsEnabled: ptr(true)})
	s.AddWallet(org, "bkash", "cash_out", "01811111111", "Agent")
	red := s.Do(org, paydtest.Request{APIKey: org.APIKey, Body: paydtest.Redirect()})
	if red.Status != http.StatusOK && red.Status != http.StatusCreated {
		t.Fatalf("redirect create: %d %s", red.Status, red.Body)
	}
	checkout, _ := url.Parse(paydtest.Str(red.JSON, "redirect_url"))
	store.down.Store(true)
	for _, req := range []paydtest.Request{
		{APIKey: org.APIKey, Sign: true, Body: paydtest.H2H(paydtest.KV{"merchant_id", `"during"`})},
		{APIKey: org.APIKey, Path: "/api/v1/withdraws", Body: paydtest.Withdrawal()},
		{APIKey: org.APIKey, Method: "GET", Path: "/api/v1/balance"},
	} {
		res := s.Do(org, req)
		if res.Status != http.StatusServiceUnavailable || res.ErrorCode() != engine.CodeDatabaseUnavailable || res.Header.Get("Retry-After") != "2" {
			t.Errorf("%s %s: %d %s Retry-After %q", req.Method, req.Path, res.Status, res.Body, res.Header.Get("Retry-After"))
		}
	}
	res, err := http.Get(s.URL + checkout.Path)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "Try again in a moment") {
		t.Errorf("checkout: %d %.200s", res.StatusCode, body)
	}
}
