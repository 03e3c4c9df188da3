package console_test

import (
	"bufio"
	"crypto/sha256"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	payd "github.com/payd-engine/payd"
	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydtest"
	"github.com/payd-engine/payd/transport/console"
)

// fakeArgon stands in for argon2id: a cheap deterministic hash (a right
// password still logs in) that counts its calls and, once held, waits in
// each call until released.
type fakeArgon struct {
	calls   atomic.Int64
	entered chan struct{}
	mu      sync.Mutex
	hold    chan struct{}
}

func useFakeArgon(t *testing.T) *fakeArgon {
	f := &fakeArgon{entered: make(chan struct{}, 1000)}
	t.Cleanup(console.SwapArgon(f.hash))
	return f
}

func (f *fakeArgon) hash(password, salt []byte, _, _ uint32, _ uint8, keyLen uint32) []byte {
	f.calls.Add(1)
	f.mu.Lock()
	hold := f.hold
	f.mu.Unlock()
	if hold != nil {
		f.entered <- struct{}{}
		<-hold
	}
	sum := sha256.Sum256(append(append([]byte{}, salt...), password...))
	out := make([]byte, keyLen)
	copy(out, sum[:])
	return out
}

// holdAll makes every hash from now on wait until release.
func (f *fakeArgon) holdAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hold = make(chan struct{})
}

func (f *fakeArgon) release() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.hold != nil {
		close(f.hold)
		f.hold = nil
	}
}

// direct sends console requests straight to the handler, from whatever
// peer address an attacker would have, with one browser's login cookie.
type direct struct {
	t      *testing.T
	h      http.Handler
	cookie *http.Cookie
	csrf   string
}

func newDirect(t *testing.T, srv *paydtest.Server) *direct {
	req := httptest.NewRequest(http.MethodGet, "/console/login", nil)
	req.RemoteAddr = "192.0.2.1:1000"
	rec := httptest.NewRecorder()
	srv.App.Handler.ServeHTTP(rec, req)
	d := &direct{t: t, h: srv.App.Handler}
	for _, c := range rec.Result().Cookies() {
		if c.Name == "payd_console_login" {
			d.cookie = c
		}
	}
	m := csrfField.FindStringSubmatch(rec.Body.String())
	if d.cookie == nil || m == nil {
		t.Fatalf("login page: %d, no login cookie or form", rec.Code)
	}
	d.csrf = html.UnescapeString(m[1])
	return d
}

// login posts the login form from the peer address remote.
func (d *direct) login(remote, email, password string, header http.Header) int {
	form := url.Values{"email": {email}, "password": {password}, "csrf": {d.csrf}}
	req := httptest.NewRequest(http.MethodPost, "/console/login", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range header {
		req.Header[k] = v
	}
	req.RemoteAddr = remote
	req.AddCookie(&http.Cookie{Name: d.cookie.Name, Value: d.cookie.Value})
	rec := httptest.NewRecorder()
	d.h.ServeHTTP(rec, req)
	return rec.Code
}

func trustProxies(t *testing.T, list string) paydtest.Option {
	p, err := console.ParseTrustedProxies(list)
	if err != nil {
		t.Fatal(err)
	}
	return func(c *payd.Config) { c.TrustedProxies = p }
}

// TestLoginFloodFromOneIPv6Network: an attacker holding an IPv6 /64 (the
// least a home line gets) sends each guess from another of its 2^64
// addresses; the throttle counts the network, not the address.
func TestLoginFloodFromOneIPv6Network(t *testing.T) {
	srv := paydtest.MustOpen(t)
	fa := useFakeArgon(t)
	d := newDirect(t, srv)
	for i := range 30 {
		st := d.login(fmt.Sprintf("[2001:db8:1:2:%x::1]:4000", i+1), fmt.Sprintf("guess%d@example.com", i), "x", nil)
		if i < 10 && st != http.StatusUnauthorized {
			t.Fatalf("guess %d from the /64: %d, want 401", i+1, st)
		}
		if i >= 10 && st != http.StatusTooManyRequests {
			t.Fatalf("guess %d from one /64 within a minute: %d, want 429", i+1, st)
		}
	}
	if c := fa.calls.Load(); c > 11 { // the dummy hash, then one a guess
		t.Errorf("%d password hashes for 10 allowed guesses: throttled guesses were hashed", c)
	}
	// Another /64, and an IPv4 address, are not held back.
	if st := d.login("[2001:db8:1:3::1]:4000", "other@example.com", "x", nil); st != http.StatusUnauthorized {
		t.Errorf("a guess from the next /64: %d, want 401", st)
	}
	if st := d.login("198.51.100.1:4000", "other@example.com", "x", nil); st != http.StatusUnauthorized {
		t.Errorf("a guess from an IPv4 address: %d, want 401", st)
	}
}

// TestLoginFloodAgainstOneAccount: an attacker with many IPv4 addresses
// guesses one operator's password, one guess an address. The lockout stops
// the guesses being tried, but each still cost an argon2id check; the
// account's own throttle refuses them before any hash.
func TestLoginFloodAgainstOneAccount(t *testing.T) {
	srv := paydtest.MustOpen(t)
	fa := useFakeArgon(t)
	org := srv.NewOrg(engine.OrganizationSettings{})
	operator(t, srv, "a@example.com", engine.RoleOperator, org.ID, false)
	operator(t, srv, "b@example.com", engine.RoleOperator, org.ID, false)
	d := newDirect(t, srv)
	d.login("192.0.2.200:4000", "warm@example.com", "x", nil) // makes the dummy hash a locked account's guesses are checked against
	before := fa.calls.Load()
	for i := range 30 {
		st := d.login(fmt.Sprintf("198.51.100.%d:4000", i+1), "A@example.com ", fmt.Sprintf("guess %d", i), nil)
		if i < 10 && st != http.StatusUnauthorized {
			t.Fatalf("guess %d: %d, want 401", i+1, st)
		}
		if i >= 10 && st != http.StatusTooManyRequests {
			t.Fatalf("guess %d at one account from its own address within a minute: %d, want 429", i+1, st)
		}
	}
	if c := fa.calls.Load() - before; c != 10 {
		t.Errorf("%d password hashes for 10 allowed guesses", c)
	}
	// Another account logs in from a fresh address.
	if st := d.login("203.0.113.5:4000", "b@example.com", password, nil); st != http.StatusSeeOther {
		t.Errorf("another account's login: %d, want 303", st)
	}
}

// TestLoginFailsFastWhenPasswordChecksAreFull: logins from many networks
// at once, each for another account, queue for the argon2id checks. Only
// a bounded number wait; the rest are refused at once with 503 and no hash.
func TestLoginFailsFastWhenPasswordChecksAreFull(t *testing.T) {
	srv := paydtest.MustOpen(t)
	fa := useFakeArgon(t)
	d := newDirect(t, srv)
	// The first unknown email makes the dummy hash.
	if st := d.login("[2001:db8:ffff::1]:4000", "warm@example.com", "x", nil); st != http.StatusUnauthorized {
		t.Fatalf("warm-up: %d", st)
	}
	warm := fa.calls.Load()
	fa.holdAll()
	const n = 40
	statuses := make(chan int, n)
	got := 0
	defer func() {
		fa.release()
		for ; got < n; got++ {
			<-statuses
		}
	}()
	for i := range n {
		go func() {
			statuses <- d.login(fmt.Sprintf("[2001:db8:%x::1]:4000", i+1), fmt.Sprintf("user%d@example.com", i), "x", nil)
		}()
	}
	for range console.PasswordChecks {
		select {
		case <-fa.entered:
		case <-time.After(10 * time.Second):
			t.Fatal("no password check started")
		}
	}
	refused := n - console.PasswordChecks - console.PasswordChecksWaiting
	deadline := time.After(5 * time.Second)
	for busy := 0; busy < refused; busy++ {
		select {
		case st := <-statuses:
			got++
			if st != http.StatusServiceUnavailable {
				t.Fatalf("a login while the password checks are full: %d, want 503", st)
			}
		case <-deadline:
			t.Fatalf("%d of %d logins answered while the password checks were full: the others wait for a hash", busy, refused)
		}
	}
	if c := fa.calls.Load() - warm; c != console.PasswordChecks {
		t.Errorf("%d hashes started while full, want %d", c, console.PasswordChecks)
	}
	fa.release()
	for ; got < n; got++ {
		if st := <-statuses; st != http.StatusUnauthorized {
			t.Errorf("a login that waited for its check: %d, want 401", st)
		}
	}
	if c := fa.calls.Load() - warm; c != console.PasswordChecks+console.PasswordChecksWaiting {
		t.Errorf("%d hashes in all, want %d", c, console.PasswordChecks+console.PasswordChecksWaiting)
	}
}

// TestForwardedForTrust: X-Forwarded-For names the client only when the
// peer is a trusted proxy, and then its right-most address that is not a
// trusted proxy's; what the client wrote to the left of it changes nothing.
func TestForwardedForTrust(t *testing.T) {
	guesses := func(t *testing.T, d *direct, remote string, xff func(i int) string) (throttledAt int) {
		for i := range 20 {
			h := http.Header{"X-Forwarded-For": {xff(i)}}
			st := d.login(remote, fmt.Sprintf("guess%d@example.com", i), "x", h)
			if st == http.StatusTooManyRequests {
				return i + 1
			}
			if st != http.StatusUnauthorized {
				t.Fatalf("guess %d: %d", i+1, st)
			}
		}
		return 0
	}
	t.Run("no trusted proxy", func(t *testing.T) {
		srv := paydtest.MustOpen(t)
		useFakeArgon(t)
		d := newDirect(t, srv)
		if n := guesses(t, d, "127.0.0.1:4000", func(i int) string { return fmt.Sprintf("198.51.100.%d", i+1) }); n != 11 {
			t.Errorf("without a trusted proxy, a forged X-Forwarded-For per guess: throttled at guess %d, want 11", n)
		}
	})
	t.Run("trusted proxy", func(t *testing.T) {
		srv := paydtest.MustOpen(t, trustProxies(t, "127.0.0.1, 10.0.0.0/8"))
		useFakeArgon(t)
		d := newDirect(t, srv)
		// Twenty clients behind the proxy: none throttled by another.
		if n := guesses(t, d, "127.0.0.1:4000", func(i int) string { return fmt.Sprintf("198.51.100.%d", i+1) }); n != 0 {
			t.Errorf("20 clients behind the trusted proxy: throttled at guess %d, want none", n)
		}
		// One client forging the left part, through two trusted proxies.
		if n := guesses(t, d, "127.0.0.1:4000", func(i int) string { return fmt.Sprintf("203.0.113.%d, 192.0.2.77, 10.1.2.3", i+1) }); n != 11 {
			t.Errorf("one client behind two trusted proxies, forging its X-Forwarded-For: throttled at guess %d, want 11", n)
		}
		// A peer that is not a trusted proxy is the client, whatever it says.
		if n := guesses(t, d, "192.0.2.88:4000", func(i int) string { return fmt.Sprintf("198.51.100.%d", i+101) }); n != 11 {
			t.Errorf("an untrusted peer's X-Forwarded-For: throttled at guess %d, want 11", n)
		}
	})
}

// cookieOf returns the Set-Cookie named name of res.
func cookieOf(res *http.Response, name string) *http.Cookie {
	for _, c := range res.Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// loginPageCookie gets the login page over a real connection with host
// and header, and returns the login cookie it sets.
func loginPageCookie(t *testing.T, srv *paydtest.Server, host string, header http.Header) *http.Cookie {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/console/login", nil)
	req.Host = host
	for k, v := range header {
		req.Header[k] = v
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	c := cookieOf(res, "payd_console_login")
	if c == nil {
		t.Fatalf("no login cookie (%d)", res.StatusCode)
	}
	return c
}

// sessionCookieVia logs in over a real connection naming host, as a proxy
// that rewrites Host does, and returns the session cookie.
func sessionCookieVia(t *testing.T, srv *paydtest.Server, email, host string) *http.Cookie {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/console/login", nil)
	req.Host = host
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var body strings.Builder
	_, _ = bufio.NewReader(res.Body).WriteTo(&body)
	res.Body.Close()
	lc, m := cookieOf(res, "payd_console_login"), csrfField.FindStringSubmatch(body.String())
	if lc == nil || m == nil {
		t.Fatalf("login page via %s: %d", host, res.StatusCode)
	}
	form := url.Values{"email": {email}, "password": {password}, "csrf": {html.UnescapeString(m[1])}}
	req, _ = http.NewRequest(http.MethodPost, srv.URL+"/console/login", strings.NewReader(form.Encode()))
	req.Host = host
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(&http.Cookie{Name: lc.Name, Value: lc.Value})
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err = client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	c := cookieOf(res, "payd_console")
	if c == nil {
		t.Fatalf("login via %s: %d, no session cookie", host, res.StatusCode)
	}
	return c
}

// http10Cookie gets the login page as nginx's default proxy_pass asks for
// it: HTTP/1.0, Host the upstream's address, no forwarding header.
func http10Cookie(t *testing.T, srv *paydtest.Server) *http.Cookie {
	t.Helper()
	u, _ := url.Parse(srv.URL)
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /console/login HTTP/1.0\r\nHost: %s\r\nConnection: close\r\n\r\n", u.Host)
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	c := cookieOf(res, "payd_console_login")
	if c == nil {
		t.Fatalf("no login cookie (%d)", res.StatusCode)
	}
	return c
}

// TestCookieSecureBehindProxy: a proxy that reaches payd over plain HTTP
// on loopback and rewrites Host to 127.0.0.1 (nginx's default) must not
// get cookies without Secure: an https public URL makes them Secure, and
// without one any sign of a proxy does.
func TestCookieSecureBehindProxy(t *testing.T) {
	t.Run("https public URL", func(t *testing.T) {
		srv := paydtest.MustOpen(t, func(c *payd.Config) { c.PublicURL = "https://pay.example.com" })
		org := srv.NewOrg(engine.OrganizationSettings{})
		operator(t, srv, "a@example.com", engine.RoleOperator, org.ID, false)
		if c := sessionCookieVia(t, srv, "a@example.com", "127.0.0.1"); !c.Secure || !c.HttpOnly {
			t.Errorf("session cookie behind a proxy sending Host: 127.0.0.1, public URL https: %+v", c)
		}
	})
	t.Run("no public URL", func(t *testing.T) {
		srv := paydtest.MustOpen(t)
		host := strings.TrimPrefix(srv.URL, "http://")
		if c := loginPageCookie(t, srv, host, nil); c.Secure {
			t.Errorf("a browser on this machine at %s: Secure, which it would drop", srv.URL)
		}
		for _, h := range []string{"X-Forwarded-For", "X-Forwarded-Proto", "X-Real-Ip", "Forwarded", "Via"} {
			if c := loginPageCookie(t, srv, host, http.Header{h: {"203.0.113.9"}}); !c.Secure {
				t.Errorf("a request through a proxy (it sent %s) over loopback: not Secure", h)
			}
		}
		if c := http10Cookie(t, srv); !c.Secure {
			t.Error("an HTTP/1.0 request over loopback (nginx's default proxy_pass): not Secure")
		}
	})
	t.Run("trusted proxy", func(t *testing.T) {
		srv := paydtest.MustOpen(t, trustProxies(t, "127.0.0.0/8"))
		host := strings.TrimPrefix(srv.URL, "http://")
		for _, tc := range []struct {
			proto  string
			secure bool
		}{{"https", true}, {"", true}, {"http", false}, {"https, http", true}} {
			h := http.Header{}
			if tc.proto != "" {
				h.Set("X-Forwarded-Proto", tc.proto)
			}
			if c := loginPageCookie(t, srv, host, h); c.Secure != tc.secure {
				t.Errorf("trusted proxy, X-Forwarded-Proto %q: Secure %v, want %v", tc.proto, c.Secure, tc.secure)
			}
		}
	})
}

func TestParseTrustedProxies(t *testing.T) {
	p, err := console.ParseTrustedProxies("127.0.0.1, 10.0.0.0/8 ::1,fd00::/8,::ffff:192.0.2.0/120")
	if err != nil {
		t.Fatal(err)
	}
	if p.String() != "127.0.0.1/32,10.0.0.0/8,::1/128,fd00::/8,192.0.2.0/24" {
		t.Errorf("parsed %s", p)
	}
	for _, bad := range []string{"proxy.lan", "10.0.0.0/33", "fe80::1%eth0", "127.0.0.1:80"} {
		if _, err := console.ParseTrustedProxies(bad); err == nil || !strings.Contains(err.Error(), "not an IP address or CIDR") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if p, err := console.ParseTrustedProxies(""); err != nil || p.String() != "" {
		t.Errorf("empty: %v %v", p, err)
	}
}
