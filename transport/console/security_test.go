package console_test

import (
	"context"
	"fmt"
	"html"
	"io"
	"maps"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydtest"
	"github.com/payd-engine/payd/provider/smsinbox"
	"github.com/payd-engine/payd/transport/console"
)

// browser is a client with its own cookies that does not follow
// redirects, so a test sees each answer.
type browser struct {
	t      *testing.T
	srv    *paydtest.Server
	client *http.Client
	// csrf is the token of the last page's forms.
	csrf string
}

func newBrowser(t *testing.T, srv *paydtest.Server) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, srv: srv, client: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

type page struct {
	status int
	header http.Header
	body   string
}

func (b *browser) do(req *http.Request) page {
	b.t.Helper()
	res, err := b.client.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if m := csrfField.FindStringSubmatch(string(body)); m != nil {
		b.csrf = html.UnescapeString(m[1])
	}
	return page{res.StatusCode, res.Header, string(body)}
}

func (b *browser) get(path string) page {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, b.srv.URL+path, nil)
	return b.do(req)
}

// post sends a form; the page's CSRF token is added unless form has one
// (an empty "csrf" sends none).
func (b *browser) post(path string, form url.Values) page {
	b.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if _, ok := form["csrf"]; !ok {
		form.Set("csrf", b.csrf)
	} else if form.Get("csrf") == "" {
		form.Del("csrf")
	}
	req, _ := http.NewRequest(http.MethodPost, b.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.do(req)
}

func (b *browser) sessionCookie() string {
	u, _ := url.Parse(b.srv.URL + "/console/")
	for _, c := range b.client.Jar.Cookies(u) {
		if c.Name == "payd_console" {
			return c.Value
		}
	}
	return ""
}

func (b *browser) setSessionCookie(v string) {
	u, _ := url.Parse(b.srv.URL + "/console/")
	b.client.Jar.SetCookies(u, []*http.Cookie{{Name: "payd_console", Value: v, Path: "/console"}})
}

const password = "correct horse battery staple"

// operator adds an operator and completes its setup through the setup
// page; with totp, it turns the second factor on and returns its secret.
func operator(t *testing.T, srv *paydtest.Server, email, role, orgID string, totp bool) string {
	t.Helper()
	_, token, err := srv.Engine.AddOperator(context.Background(), engine.AddOperatorParams{
		Email: email, Role: role, OrganizationID: orgID, Platform: orgID == ""})
	if err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, srv)
	p := b.get("/console/setup?token=" + url.QueryEscape(token))
	if p.status != http.StatusOK {
		t.Fatalf("setup page: %d", p.status)
	}
	secret := regexp.MustCompile(`id="secret">([A-Z2-7]+)<`).FindStringSubmatch(p.body)[1]
	form := url.Values{"token": {token}, "password": {password}, "confirm": {password}, "totp_secret": {secret}}
	if totp {
		form.Set("code", console.TOTPCode(secret, srv.Now()))
	}
	if p := b.post("/console/setup", form); p.status != http.StatusSeeOther {
		t.Fatalf("setup: %d %s", p.status, p.body)
	}
	// The link works once.
	if p := b.get("/console/setup?token=" + url.QueryEscape(token)); p.status != http.StatusNotFound {
		t.Fatalf("setup link used twice: %d", p.status)
	}
	return secret
}

// login logs b in and fails the test unless it works.
func (b *browser) login(email, code string) {
	b.t.Helper()
	b.get("/console/login")
	p := b.post("/console/login", url.Values{"email": {email}, "password": {password}, "code": {code}})
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/console/" {
		b.t.Fatalf("login %s: %d %s", email, p.status, p.body)
	}
	b.get("/console/") // the page's forms carry the session's token
}

type fixture struct {
	srv    *paydtest.Server
	orgA   *paydtest.Org
	orgB   *paydtest.Org
	depB   *engine.Deposit
	keyOfB string
}

func newFixture(t *testing.T) *fixture {
	srv := paydtest.MustOpen(t)
	f := &fixture{srv: srv, orgA: srv.NewOrg(engine.OrganizationSettings{}), orgB: srv.NewOrg(engine.OrganizationSettings{})}
	d, _, err := srv.Engine.CreateDeposit(context.Background(), engine.CreateDepositParams{
		OrganizationID: f.orgB.ID, Amount: "500", PaymentMethod: "bkash", RedirectURL: "https://shop.example/back", MerchantID: "merchant-of-b-77"})
	if err != nil {
		t.Fatal(err)
	}
	f.depB, f.keyOfB = d, f.orgB.KeyID
	return f
}

func (f *fixture) links(t *testing.T, org *paydtest.Org) int {
	t.Helper()
	ls, err := f.srv.Engine.ListPaymentLinks(context.Background(), org.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	return len(ls)
}

func TestCSRFTokenRequired(t *testing.T) {
	f := newFixture(t)
	operator(t, f.srv, "a@example.com", engine.RoleOperator, f.orgA.ID, false)
	operator(t, f.srv, "a2@example.com", engine.RoleOperator, f.orgA.ID, false)
	a, other := newBrowser(t, f.srv), newBrowser(t, f.srv)
	a.login("a@example.com", "")
	other.login("a2@example.com", "")
	form := func(csrf string) url.Values {
		return url.Values{"amount": {"250"}, "note": {"x"}, "csrf": {csrf}}
	}
	if p := a.post("/console/links", form("")); p.status != http.StatusForbidden {
		t.Errorf("POST without a CSRF token: %d, want 403", p.status)
	}
	if p := a.post("/console/links", form(other.csrf)); p.status != http.StatusForbidden {
		t.Errorf("POST with another session's CSRF token: %d, want 403", p.status)
	}
	if p := a.post("/console/login", url.Values{"email": {"a@example.com"}, "password": {password}, "csrf": {""}}); p.status != http.StatusForbidden {
		t.Errorf("login POST without a token: %d, want 403", p.status)
	}
	if n := f.links(t, f.orgA); n != 0 {
		t.Fatalf("a refused POST created %d links", n)
	}
	if p := a.post("/console/links", form(a.csrf)); p.status != http.StatusOK || !strings.Contains(p.body, `id="new-link"`) {
		t.Fatalf("POST with the session's token: %d", p.status)
	}
	if n := f.links(t, f.orgA); n != 1 {
		t.Fatalf("links = %d, want 1", n)
	}
	// The change is audited with the operator as actor.
	es, err := f.srv.Engine.ListAudit(context.Background(), f.orgA.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range es {
		found = found || e.Action == engine.AuditPaymentLinkCreate && e.Actor == "console:a@example.com"
	}
	if !found {
		t.Error("no audit entry of the link by console:a@example.com")
	}
}

func TestViewerCannotChange(t *testing.T) {
	f := newFixture(t)
	operator(t, f.srv, "v@example.com", engine.RoleViewer, f.orgA.ID, false)
	v := newBrowser(t, f.srv)
	v.login("v@example.com", "")
	if p := v.get("/console/keys"); p.status != http.StatusOK || strings.Contains(p.body, "/rotate") {
		t.Errorf("a viewer's keys page: %d, offers rotate: %v", p.status, strings.Contains(p.body, "/rotate"))
	}
	if p := v.post("/console/links", url.Values{"amount": {"250"}}); p.status != http.StatusForbidden {
		t.Errorf("a viewer's change: %d, want 403", p.status)
	}
	if p := v.post("/console/keys/"+f.orgA.KeyID+"/revoke", nil); p.status != http.StatusForbidden {
		t.Errorf("a viewer's key revoke: %d, want 403", p.status)
	}
	if n := f.links(t, f.orgA); n != 0 {
		t.Errorf("a viewer created %d links", n)
	}
	keys, _ := f.srv.Engine.ListAPIKeys(context.Background(), f.orgA.ID)
	if keys[0].ExpiresAt != nil {
		t.Error("a viewer revoked a key")
	}
	// A viewer may still log out.
	if p := v.post("/console/logout", nil); p.status != http.StatusSeeOther {
		t.Errorf("a viewer's logout: %d", p.status)
	}
}

func TestOrganizationsSeeOnlyTheirOwn(t *testing.T) {
	f := newFixture(t)
	operator(t, f.srv, "a@example.com", engine.RoleOwner, f.orgA.ID, false)
	operator(t, f.srv, "p@example.com", engine.RoleViewer, "", false)
	a := newBrowser(t, f.srv)
	a.login("a@example.com", "")
	for _, path := range []string{
		"/console/deposits/" + f.depB.ID,
		"/console/deposits/" + f.depB.ID + "?org=" + f.orgB.ID,
	} {
		if p := a.get(path); p.status != http.StatusNotFound || strings.Contains(p.body, "merchant-of-b-77") {
			t.Errorf("org A's operator on %s: %d, want 404", path, p.status)
		}
	}
	if p := a.get("/console/deposits?merchant_id=merchant-of-b-77&org=" + f.orgB.ID); strings.Contains(p.body, f.depB.ID) {
		t.Error("org A's search found org B's deposit")
	}
	if p := a.post("/console/keys/"+f.keyOfB+"/revoke", nil); p.status != http.StatusNotFound {
		t.Errorf("org A's operator revoking org B's key: %d, want 404", p.status)
	}
	keys, _ := f.srv.Engine.ListAPIKeys(context.Background(), f.orgB.ID)
	if keys[0].ExpiresAt != nil {
		t.Fatal("org A's operator revoked org B's key")
	}
	// A platform operator sees every organization.
	p := newBrowser(t, f.srv)
	p.login("p@example.com", "")
	if pg := p.get("/console/deposits/" + f.depB.ID + "?org=" + f.orgB.ID); pg.status != http.StatusOK || !strings.Contains(pg.body, "merchant-of-b-77") {
		t.Errorf("platform operator on org B's deposit: %d", pg.status)
	}
}

func TestLoginRotatesTheSession(t *testing.T) {
	f := newFixture(t)
	operator(t, f.srv, "a@example.com", engine.RoleOperator, f.orgA.ID, false)
	b := newBrowser(t, f.srv)
	// A token planted before login (fixation) is not what login gives.
	b.setSessionCookie("planted-by-an-attacker-0123456789")
	b.login("a@example.com", "")
	first := b.sessionCookie()
	if first == "" || first == "planted-by-an-attacker-0123456789" {
		t.Fatalf("session cookie after login: %q", first)
	}
	// Logging in again in the same browser gives a new session and ends
	// the old one.
	b.login("a@example.com", "")
	second := b.sessionCookie()
	if second == first {
		t.Fatal("the session token did not change at login")
	}
	old := newBrowser(t, f.srv)
	old.setSessionCookie(first)
	if p := old.get("/console/"); p.status != http.StatusSeeOther || !strings.HasPrefix(p.header.Get("Location"), "/console/login") {
		t.Errorf("the session before the second login still works: %d", p.status)
	}
}

func TestCookieAttributes(t *testing.T) {
	f := newFixture(t)
	operator(t, f.srv, "a@example.com", engine.RoleOperator, f.orgA.ID, false)
	b := newBrowser(t, f.srv)
	b.get("/console/login")
	form := url.Values{"email": {"a@example.com"}, "password": {password}, "csrf": {b.csrf}}
	login := func(host string) *http.Cookie {
		req, _ := http.NewRequest(http.MethodPost, f.srv.URL+"/console/login", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Host = host
		u, _ := url.Parse(f.srv.URL + "/console/login")
		for _, c := range b.client.Jar.Cookies(u) {
			req.AddCookie(c) // the jar keeps them from a request naming another host
		}
		res := b.do(req)
		for _, c := range (&http.Response{Header: res.header}).Cookies() {
			if c.Name == "payd_console" {
				return c
			}
		}
		t.Fatalf("no session cookie for host %s (%d) %s", host, res.status, res.body)
		return nil
	}
	c := login("pay.example.com")
	if !c.Secure || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/console" {
		t.Errorf("cookie on a public host: %+v", c)
	}
	if c := login("127.0.0.1"); c.Secure || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode {
		t.Errorf("cookie on loopback: %+v", c)
	}
}

func TestLockoutAfterRepeatedFailures(t *testing.T) {
	f := newFixture(t)
	operator(t, f.srv, "a@example.com", engine.RoleOperator, f.orgA.ID, false)
	b := newBrowser(t, f.srv)
	b.get("/console/login")
	try := func(pw string) int {
		return b.post("/console/login", url.Values{"email": {"a@example.com"}, "password": {pw}}).status
	}
	for i := range engine.MaxLoginFailures {
		if s := try("wrong password " + string(rune('a'+i))); s != http.StatusUnauthorized {
			t.Fatalf("wrong password %d: %d", i, s)
		}
	}
	if s := try(password); s != http.StatusUnauthorized {
		t.Fatalf("the right password during the lockout: %d, want 401", s)
	}
	es, _ := f.srv.Engine.ListAudit(context.Background(), f.orgA.ID, 0)
	if !containsAction(es, engine.AuditOperatorLocked) {
		t.Error("the lockout is not audited")
	}
	f.srv.Clock.Add(engine.LoginLockout)
	if s := try(password); s != http.StatusSeeOther {
		t.Fatalf("the right password after the lockout: %d", s)
	}
}

func containsAction(es []*engine.AuditEntry, action string) bool {
	for _, e := range es {
		if e.Action == action {
			return true
		}
	}
	return false
}

func TestLoginThrottle(t *testing.T) {
	f := newFixture(t)
	b := newBrowser(t, f.srv)
	b.get("/console/login")
	status := 0
	for range 11 {
		status = b.post("/console/login", url.Values{"email": {"nobody@example.com"}, "password": {"x"}}).status
	}
	if status != http.StatusTooManyRequests {
		t.Errorf("the 11th login in a minute from one address: %d, want 429", status)
	}
}

func TestLogoutEndsTheSession(t *testing.T) {
	f := newFixture(t)
	operator(t, f.srv, "a@example.com", engine.RoleOperator, f.orgA.ID, false)
	b := newBrowser(t, f.srv)
	b.login("a@example.com", "")
	token := b.sessionCookie()
	if p := b.post("/console/logout", nil); p.status != http.StatusSeeOther {
		t.Fatalf("logout: %d", p.status)
	}
	replay := newBrowser(t, f.srv)
	replay.setSessionCookie(token)
	if p := replay.get("/console/"); p.status != http.StatusSeeOther {
		t.Errorf("the token after logout: %d, want a redirect to login", p.status)
	}
	if p := replay.post("/console/links", url.Values{"amount": {"1"}, "csrf": {b.csrf}}); p.status != http.StatusForbidden {
		t.Errorf("a POST with the token after logout: %d, want 403", p.status)
	}
}

func TestSessionTimeouts(t *testing.T) {
	f := newFixture(t)
	operator(t, f.srv, "a@example.com", engine.RoleOperator, f.orgA.ID, false)
	idle := newBrowser(t, f.srv)
	idle.login("a@example.com", "")
	busy := newBrowser(t, f.srv)
	busy.login("a@example.com", "")
	// Used every 20 minutes, a session lives until its absolute timeout;
	// one left alone ends after the idle timeout.
	for elapsed := time.Duration(0); elapsed+20*time.Minute < engine.SessionAbsoluteTimeout; elapsed += 20 * time.Minute {
		f.srv.Clock.Add(20 * time.Minute)
		if p := busy.get("/console/"); p.status != http.StatusOK {
			t.Fatalf("a session in use after %v: %d", elapsed+20*time.Minute, p.status)
		}
	}
	if p := idle.get("/console/"); p.status != http.StatusSeeOther {
		t.Errorf("an idle session: %d, want a redirect to login", p.status)
	}
	f.srv.Clock.Add(20 * time.Minute)
	if p := busy.get("/console/"); p.status != http.StatusSeeOther {
		t.Errorf("a session past its absolute timeout: %d, want a redirect to login", p.status)
	}
}

func TestTOTP(t *testing.T) {
	f := newFixture(t)
	secret := operator(t, f.srv, "a@example.com", engine.RoleOperator, f.orgA.ID, true)
	b := newBrowser(t, f.srv)
	b.get("/console/login")
	if p := b.post("/console/login", url.Values{"email": {"a@example.com"}, "password": {password}}); p.status != http.StatusUnauthorized {
		t.Errorf("no code: %d, want 401", p.status)
	}
	// The code that turned the factor on at setup is used: wait a step.
	f.srv.Clock.Add(30 * time.Second)
	code := console.TOTPCode(secret, f.srv.Now())
	b.login("a@example.com", code)
	replay := newBrowser(t, f.srv)
	replay.get("/console/login")
	if p := replay.post("/console/login", url.Values{"email": {"a@example.com"}, "password": {password}, "code": {code}}); p.status != http.StatusUnauthorized {
		t.Errorf("the same code twice: %d, want 401", p.status)
	}
}

func TestSecurityHeaders(t *testing.T) {
	f := newFixture(t)
	b := newBrowser(t, f.srv)
	p1, p2 := b.get("/console/login"), b.get("/console/login")
	csp := p1.header.Get("Content-Security-Policy")
	nonce := regexp.MustCompile(`style-src 'nonce-([^']+)'`).FindStringSubmatch(csp)
	if nonce == nil || !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Fatalf("CSP %q", csp)
	}
	if !strings.Contains(p1.body, `<style nonce="`+nonce[1]+`">`) || strings.Contains(p1.body, "<script") {
		t.Error("the page's style does not carry the response's nonce, or the page has a script")
	}
	if p2.header.Get("Content-Security-Policy") == csp {
		t.Error("two responses share a nonce")
	}
	if p1.header.Get("X-Frame-Options") != "DENY" || p1.header.Get("Cache-Control") != "no-store" {
		t.Errorf("headers %v", p1.header)
	}
	if p := b.get("/console/"); p.status != http.StatusSeeOther {
		t.Errorf("the overview without a session: %d", p.status)
	}
}

// crawl fetches every console page b reaches by following the links of
// the pages it reaches from start (each once, in both languages), and
// returns them by path.
func (b *browser) crawl(start ...string) map[string]page {
	b.t.Helper()
	href := regexp.MustCompile(`href="(/console/[^"]*)"`)
	seen := map[string]page{}
	queue := append([]string(nil), start...)
	for len(queue) > 0 && len(seen) < 300 {
		path := queue[0]
		queue = queue[1:]
		if _, ok := seen[path]; ok {
			continue
		}
		p := b.get(path)
		seen[path] = p
		for _, m := range href.FindAllStringSubmatch(p.body, -1) {
			next := html.UnescapeString(m[1])
			if strings.Contains(next, "lang=") {
				continue
			}
			queue = append(queue, next)
			sep := "?"
			if strings.Contains(next, "?") {
				sep = "&"
			}
			queue = append(queue, next+sep+"lang=bn")
		}
	}
	return seen
}

// chainFixture is an SMS inbox organization whose wallet's chain was
// anchored at 73,918.46 by its owner, proved a cash-out up to 74,418.46,
// and holds a message that does not follow that balance.
type chainFixture struct {
	srv       *paydtest.Server
	org       *paydtest.Org
	wallet    *engine.Wallet
	device    *smsinbox.DeviceCredentials
	anchored  string
	chain     string
	heldClaim string
}

func newChainFixture(t *testing.T) *chainFixture {
	t.Helper()
	ctx := context.Background()
	srv := paydtest.MustOpen(t, paydtest.WithSMSInbox(smsinbox.Config{}))
	f := &chainFixture{srv: srv, org: srv.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)}),
		anchored: "73918.46", chain: "74418.46", heldClaim: "80000.00"}
	f.wallet = srv.AddWallet(f.org, "bkash", "cash_out", "01811111111", "Agent")
	dev, err := srv.Inbox.AddDevice(ctx, smsinbox.AddDeviceParams{OrganizationID: f.org.ID, Name: "counter-phone", WalletIDs: []string{f.wallet.ID}})
	if err != nil {
		t.Fatal(err)
	}
	f.device = dev
	owner := engine.WithActor(ctx, "console:owner@example.com")
	if _, _, err := srv.Inbox.Anchor(owner, f.org.ID, f.wallet.ID, decimal.RequireFromString(f.anchored)); err != nil {
		t.Fatal(err)
	}
	at := srv.Now().In(engine.Dhaka).Format("02/01/2006 15:04")
	for _, body := range []string{
		"Cash Out Tk 500.00 from 01712345678 successful. Fee Tk 0.00. Balance Tk 74,418.46. TrxID 8N7A6D5EE7 at " + at,
		"Cash Out Tk 1,000.00 from 01712345679 successful. Fee Tk 0.00. Balance Tk 80,000.00. TrxID 9Q2W3E4R5T at " + at,
	} {
		if _, _, err := srv.Inbox.Ingest(ctx, dev.Device, smsinbox.Incoming{Sender: "bKash", Body: body, ReceivedAt: srv.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	ms, err := srv.Inbox.ListSMS(ctx, smsinbox.ListSMSParams{OrganizationID: f.org.ID})
	if err != nil {
		t.Fatal(err)
	}
	statuses := map[string]bool{}
	for _, m := range ms {
		statuses[m.Status] = true
	}
	if !statuses[smsinbox.StatusAccepted] || !statuses[smsinbox.StatusHeld] {
		t.Fatalf("fixture: messages %v, want one accepted and one held", statuses)
	}
	return f
}

// balanceShown reports which of the chain's balances (as payd formats them,
// or as the SMS prints them) body shows.
func (f *chainFixture) balanceShown(body string) string {
	for _, b := range []string{f.anchored, f.chain, f.heldClaim} {
		d := decimal.RequireFromString(b)
		for _, s := range []string{b, humanize(d)} {
			if strings.Contains(body, s) {
				return s
			}
		}
	}
	return ""
}

// humanize is an amount with thousands separators, as an SMS prints it.
func humanize(d decimal.Decimal) string {
	s := d.StringFixed(2)
	whole, frac, _ := strings.Cut(s, ".")
	var out []byte
	for i := range len(whole) {
		if i > 0 && (len(whole)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, whole[i])
	}
	return string(out) + "." + frac
}

// TestOnlyOwnersSeeAChainBalance: the balance a wallet's chain continues
// from is what stops a leaked device token from forging an SMS that proves
// a deposit never paid; a viewer or an operator reaches no page that shows
// it (the devices page, a held message's reason or text, the audit log's
// anchor), in either language. The owner sees it where the chain is
// anchored.
func TestOnlyOwnersSeeAChainBalance(t *testing.T) {
	f := newChainFixture(t)
	operator(t, f.srv, "v@example.com", engine.RoleViewer, f.org.ID, false)
	operator(t, f.srv, "o@example.com", engine.RoleOperator, f.org.ID, false)
	operator(t, f.srv, "owner@example.com", engine.RoleOwner, f.org.ID, false)
	for _, email := range []string{"v@example.com", "o@example.com"} {
		b := newBrowser(t, f.srv)
		b.login(email, "")
		pages := b.crawl("/console/", "/console/devices", "/console/sms", "/console/audit")
		if len(pages) < 20 {
			t.Fatalf("%s reached only %d pages", email, len(pages))
		}
		for path, p := range pages {
			if p.status != http.StatusOK {
				t.Errorf("%s: %s: %d", email, path, p.status)
			}
			if s := f.balanceShown(p.body); s != "" {
				t.Errorf("%s sees the chain balance %s on %s", email, s, path)
			}
		}
		// The held message is still there to review, by its transaction ID.
		if p := b.get("/console/sms?status=held"); !strings.Contains(p.body, "9Q2W3E4R5T") {
			t.Errorf("%s: the held message is not shown", email)
		}
	}
	owner := newBrowser(t, f.srv)
	owner.login("owner@example.com", "")
	p := owner.get("/console/sms")
	if !strings.Contains(p.body, `id="chain-`+f.wallet.ID+`">`+f.chain+`<`) {
		t.Error("the owner does not see the chain's balance where it is anchored")
	}
}

// TestOnlyOwnersTouchCredentials: an operator who could rotate the API key
// would see the new key and signing secret while the old key kept working
// for 24 hours, and could create withdrawals through the API unnoticed;
// a device token is a credential too, and an anchor sets the chain's
// secret balance. Each is the owner's alone: an operator's or a viewer's
// POST is 403 and changes nothing; the owner's is audited with the owner
// as actor.
func TestOnlyOwnersTouchCredentials(t *testing.T) {
	ctx := context.Background()
	f := newChainFixture(t)
	operator(t, f.srv, "v@example.com", engine.RoleViewer, f.org.ID, false)
	operator(t, f.srv, "o@example.com", engine.RoleOperator, f.org.ID, false)
	operator(t, f.srv, "owner@example.com", engine.RoleOwner, f.org.ID, false)
	dev := f.device.Device.ID
	keyState := func() string {
		ks, err := f.srv.Engine.ListAPIKeys(ctx, f.org.ID)
		if err != nil {
			t.Fatal(err)
		}
		var s []string
		for _, k := range ks {
			s = append(s, fmt.Sprintf("%s %s %v", k.ID, k.Hint, k.ExpiresAt))
		}
		return strings.Join(s, "; ")
	}
	deviceState := func() string {
		ds, err := f.srv.Inbox.ListDevices(ctx, f.org.ID)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%s %v %v", ds[0].Device.TokenHint, ds[0].Device.RevokedAt, ds[0].Chains[0].Balance)
	}
	actions := []struct {
		path string
		form url.Values
	}{
		{"/console/keys/" + f.org.KeyID + "/rotate", nil},
		{"/console/keys/" + f.org.KeyID + "/revoke", nil},
		{"/console/devices/" + dev + "/rotate", nil},
		{"/console/devices/" + dev + "/revoke", nil},
		{"/console/sms/anchor", url.Values{"wallet": {f.wallet.ID}, "balance": {"1.00"}}},
	}
	keysBefore, devBefore := keyState(), deviceState()
	audits := func() int { // but logins
		es, _ := f.srv.Engine.ListAudit(ctx, f.org.ID, 0)
		n := 0
		for _, e := range es {
			if e.Action != engine.AuditOperatorLogin {
				n++
			}
		}
		return n
	}
	auditsBefore := audits()
	for _, email := range []string{"o@example.com", "v@example.com"} {
		b := newBrowser(t, f.srv)
		b.login(email, "")
		if p := b.get("/console/keys"); strings.Contains(p.body, "/rotate") || strings.Contains(p.body, "/revoke") {
			t.Errorf("%s is offered a key's rotate or revoke", email)
		}
		if p := b.get("/console/devices"); strings.Contains(p.body, "/rotate") || strings.Contains(p.body, "/revoke") {
			t.Errorf("%s is offered a device's rotate or revoke", email)
		}
		if p := b.get("/console/sms"); strings.Contains(p.body, `action="/console/sms/anchor"`) {
			t.Errorf("%s is offered the anchor", email)
		}
		b.get("/console/")
		for _, a := range actions {
			p := b.post(a.path, maps.Clone(a.form))
			if p.status != http.StatusForbidden || strings.Contains(p.body, `id="new-key"`) || strings.Contains(p.body, `id="device-token"`) {
				t.Errorf("%s POST %s: %d, want 403 showing no secret", email, a.path, p.status)
			}
		}
	}
	if got := keyState(); got != keysBefore {
		t.Errorf("the API keys changed: %s, were %s", got, keysBefore)
	}
	if got := deviceState(); got != devBefore {
		t.Errorf("the device or chain changed: %s, was %s", got, devBefore)
	}
	if n := audits(); n != auditsBefore {
		t.Errorf("refused actions left %d audit entries", n-auditsBefore)
	}

	// The owner may, each audited with the owner as actor.
	o := newBrowser(t, f.srv)
	o.login("owner@example.com", "")
	o.get("/console/")
	for _, a := range actions {
		p := o.post(a.path, maps.Clone(a.form))
		if p.status != http.StatusOK && p.status != http.StatusSeeOther {
			t.Errorf("owner POST %s: %d", a.path, p.status)
		}
	}
	wantAudit := map[string]string{
		engine.AuditKeyRotate: f.org.KeyID, engine.AuditKeyRevoke: f.org.KeyID,
		smsinbox.AuditDeviceRotate: dev, smsinbox.AuditDeviceRevoke: dev, smsinbox.AuditWalletAnchor: f.wallet.ID,
	}
	es, _ := f.srv.Engine.ListAudit(ctx, f.org.ID, 0)
	for action, subject := range wantAudit {
		found := false
		for _, e := range es {
			found = found || e.Action == action && e.Subject == subject && e.Actor == "console:owner@example.com"
		}
		if !found {
			t.Errorf("no %s audit entry of %s by console:owner@example.com", action, subject)
		}
	}
}

// TestConsoleRoleTable: every console action names the least role it
// needs in the one table, a viewer's none but logout; credential and
// chain actions are the owner's.
func TestConsoleRoleTable(t *testing.T) {
	owners := map[string]bool{
		"POST /console/keys/{id}/rotate":     true,
		"POST /console/keys/{id}/revoke":     true,
		"POST /console/devices/{id}/rotate":  true,
		"POST /console/devices/{id}/revoke":  true,
		"POST /console/sms/anchor":           true,
		"POST /console/bkash/connect":        true,
		"POST /console/bkash/disconnect":     true,
		"POST /console/webhooks":             true,
		"POST /console/keys":                 true,
		"POST /console/keys/{id}/secret":     true,
		"POST /console/devices":              true,
		"POST /console/settings":             true,
		"POST /console/organizations":        true,
		"POST /console/balance/adjust":       true,
		"POST /console/webhooks/{id}/remove": true,
	}
	for pattern, role := range console.RouteRoles() {
		switch {
		case owners[pattern] && role != engine.RoleOwner:
			t.Errorf("%s needs %s, want owner", pattern, role)
		case strings.HasPrefix(pattern, "POST ") && pattern != "POST /console/logout" && role == engine.RoleViewer:
			t.Errorf("%s is open to viewers", pattern)
		}
		delete(owners, pattern)
	}
	for pattern := range owners {
		t.Errorf("%s is not in the role table", pattern)
	}
}

// TestWebhookURLsRedacted: an endpoint's query string may carry the
// receiver's token; the console shows the URL as the audit log keeps it.
func TestWebhookURLsRedacted(t *testing.T) {
	f := newFixture(t)
	if _, _, err := f.srv.Engine.AddWebhookEndpoint(context.Background(), f.orgA.ID, "https://hooks.shop.example/payd?token=receiver-secret-4711#frag"); err != nil {
		t.Fatal(err)
	}
	for _, role := range []string{engine.RoleViewer, engine.RoleOperator, engine.RoleOwner} {
		email := role + "@example.com"
		operator(t, f.srv, email, role, f.orgA.ID, false)
		b := newBrowser(t, f.srv)
		b.login(email, "")
		for path, p := range b.crawl("/console/", "/console/webhooks", "/console/audit") {
			if strings.Contains(p.body, "receiver-secret-4711") || strings.Contains(p.body, "#frag") {
				t.Errorf("%s sees the receiver's token on %s", role, path)
			}
		}
		if p := b.get("/console/webhooks"); !strings.Contains(p.body, "https://hooks.shop.example/payd<") {
			t.Errorf("%s does not see the endpoint's redacted URL", role)
		}
	}
}
