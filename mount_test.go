package payd_test

import (
	"context"
	"encoding/hex"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	payd "github.com/payd-engine/payd"
	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/sandbox"
	"github.com/payd-engine/payd/storage/sqlite"
	"github.com/payd-engine/payd/transport/client"
)

// mounted is a payd whose whole handler a host serves under /payments with
// http.StripPrefix, beside a route of its own that fails the test if payd
// ever sends a browser or a client outside the mount.
type mounted struct {
	t   *testing.T
	app *payd.App
	url string // the server's root; payd is under url + "/payments"
	web *http.Client
	// csrf is the token of the last console page's forms.
	csrf string
}

const mountPath = "/payments"

func newMounted(t *testing.T) *mounted {
	t.Helper()
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "payd.db"), sandbox.Migrations())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	keyring, err := engine.NewKeyring(make([]byte, engine.MasterKeySize))
	if err != nil {
		t.Fatal(err)
	}
	sb, err := sandbox.New(sandbox.Config{})
	if err != nil {
		t.Fatal(err)
	}
	// Wired before the listener exists: PublicURL is only the mount.
	app, err := payd.New(payd.Config{Store: store, Keyring: keyring, Provider: sb, PublicURL: mountPath, APIPrefix: "/api",
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(mountPath+"/", http.StripPrefix(mountPath, app.Handler))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("a request outside the mount: %s %s", r.Method, r.URL)
		http.NotFound(w, r)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	if err := app.SetPublicURL(srv.URL + "/elsewhere"); err == nil {
		t.Error("SetPublicURL moved the mount")
	}
	if err := app.SetPublicURL(srv.URL + mountPath); err != nil {
		t.Fatal(err)
	}
	jar, _ := cookiejar.New(nil)
	return &mounted{t: t, app: app, url: srv.URL, web: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type answer struct {
	status   int
	location string
	cookies  []*http.Cookie
	body     string
}

// do sends a browser's request to target, a path of the server or an
// absolute URL, and checks what payd wrote: its redirect and every link,
// form action and refresh of the page point under the mount (or at the
// merchant's own return URL).
func (m *mounted) do(method, target string, form url.Values) answer {
	m.t.Helper()
	if strings.HasPrefix(target, "/") {
		target = m.url + target
	}
	var body io.Reader
	if form != nil {
		if _, ok := form["csrf"]; !ok && m.csrf != "" {
			form.Set("csrf", m.csrf)
		}
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, target, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	res, err := m.web.Do(req)
	if err != nil {
		m.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	a := answer{res.StatusCode, res.Header.Get("Location"), res.Cookies(), string(b)}
	if c := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(a.body); c != nil {
		m.csrf = html.UnescapeString(c[1])
	}
	if a.location != "" {
		m.underMount("Location of "+method+" "+target, a.location)
	}
	for _, c := range a.cookies {
		if !strings.HasPrefix(c.Path, mountPath+"/") && c.Path != mountPath+"/console" && c.Path != "/" {
			m.t.Errorf("cookie %s of %s has path %q", c.Name, target, c.Path)
		}
		if c.Name != "payd_console_lang" && c.Path == "/" {
			m.t.Errorf("cookie %s of %s is not scoped to the mount", c.Name, target)
		}
	}
	for _, l := range pageLinks.FindAllStringSubmatch(a.body, -1) {
		link := html.UnescapeString(l[1] + l[2])
		if strings.HasPrefix(link, "?") || strings.HasPrefix(link, "#") || link == "" ||
			strings.HasPrefix(link, "https://shop.example/") || strings.HasPrefix(link, "data:") {
			continue // the page itself, or the merchant's return URL
		}
		if strings.HasPrefix(link, "https://wa.me/") || strings.HasPrefix(link, "sms:") || strings.HasPrefix(link, "mailto:") {
			continue // a payment link shared by the operator's apps
		}
		m.underMount("a link on "+target, link)
	}
	return a
}

// pageLinks finds the URLs of href, action, src and refresh attributes.
var pageLinks = regexp.MustCompile(`(?:href|action|src|data-url)="([^"]*)"|content="\d+; url=([^"]*)"`)

func (m *mounted) underMount(what, link string) {
	m.t.Helper()
	if !strings.HasPrefix(link, mountPath+"/") && !strings.HasPrefix(link, m.url+mountPath+"/") {
		m.t.Errorf("%s is %q: not under %s", what, link, mountPath)
	}
}

// TestMountedUnderAPrefix: payd's handler served under
// http.StripPrefix("/payments", ...), its public URL set after the
// listener, walks a redirect deposit from its create through the hosted
// checkout and the sandbox's pay button to succeeded, answers an H2H
// deposit with a verify endpoint it serves, and serves the console's login
// and a payment link, every URL it writes (API answers, events, redirects,
// links, form actions, cookies) under the mount.
func TestMountedUnderAPrefix(t *testing.T) {
	ctx := context.Background()
	m := newMounted(t)
	creds, err := m.app.Engine.CreateOrganization(ctx, engine.OrganizationSettings{Name: ptr("Mounted"), H2HEnabled: ptr(true)})
	if err != nil {
		t.Fatal(err)
	}
	org := creds.Organization.ID
	if _, err := m.app.Engine.AddWallet(ctx, engine.AddWalletParams{OrganizationID: org, Channel: "bkash", Operation: "cash_out", Phone: "01711000001", Name: "Agent"}); err != nil {
		t.Fatal(err)
	}
	api := client.New(m.url+mountPath+"/api", creds.APIKey.APIKey, creds.APIKey.SigningSecret)

	// A redirect deposit, paid on the hosted checkout.
	dep, err := api.CreateRedirectDeposit(ctx, client.RedirectDepositRequest{Amount: "500", PaymentMethod: "bkash",
		RedirectURL: "https://shop.example/return", MerchantID: "order-1"})
	if err != nil {
		t.Fatal(err)
	}
	if dep.RedirectURL == nil || !strings.HasPrefix(*dep.RedirectURL, m.url+mountPath+"/checkout/") {
		t.Fatalf("redirect_url %v: not the mounted checkout", dep.RedirectURL)
	}
	page := m.do(http.MethodGet, *dep.RedirectURL, nil)
	action := regexp.MustCompile(`<form method="post" action="([^"]*/pay[^"]*)"`).FindStringSubmatch(page.body)
	if page.status != http.StatusOK || action == nil {
		t.Fatalf("checkout page: %d %s", page.status, page.body)
	}
	paid := m.do(http.MethodPost, html.UnescapeString(action[1]), url.Values{"payer_phone": {"01712345678"}})
	if paid.status != http.StatusSeeOther {
		t.Fatalf("sandbox pay: %d %s", paid.status, paid.body)
	}
	if _, err := m.app.Engine.ProcessAttempts(ctx); err != nil {
		t.Fatal(err)
	}
	done := m.do(http.MethodGet, paid.location, nil)
	if !strings.Contains(done.body, `id="return"`) {
		t.Fatalf("the checkout did not finish: %s", done.body)
	}
	got, err := api.GetDeposit(ctx, dep.ID)
	if err != nil || !got.Succeeded() {
		t.Fatalf("deposit after the checkout: %+v %v", got, err)
	}

	// An H2H deposit names a verify endpoint under the mount, in its
	// answers, and that endpoint serves it.
	h2h, _, err := api.CreateH2HDeposit(ctx, client.H2HDepositRequest{Amount: "300", PaymentMethod: "bkash_agent",
		RedirectURL: "https://shop.example/return", MerchantID: "order-2", PayerPhone: "01712345678"})
	if err != nil {
		t.Fatal(err)
	}
	endpoint := mountPath + "/api/v1/deposits/" + h2h.ID + "/verify"
	if ep := h2h.NextAction.Verification.Endpoint; ep != endpoint {
		t.Errorf("verification endpoint %q, want %q", ep, endpoint)
	}
	if again, err := api.GetDeposit(ctx, h2h.ID); err != nil || again.NextAction.Verification.Endpoint != endpoint {
		t.Errorf("the deposit's status does not name %s: %+v %v", endpoint, again, err)
	}
	if _, err := api.SubmitTransactionID(ctx, h2h.ID, "NOSUCHTX01"); err != nil {
		t.Errorf("verify at the named endpoint: %v", err)
	}

	// The console: its redirect to the login page, the page, a setup and
	// a login, all under the mount.
	if a := m.do(http.MethodGet, mountPath+"/console/links", nil); a.status != http.StatusSeeOther ||
		a.location != mountPath+"/console/login?next=%2Fconsole%2Flinks" {
		t.Errorf("console without a session: %d %q", a.status, a.location)
	}
	if a := m.do(http.MethodGet, mountPath+"/console/login", nil); a.status != http.StatusOK || !strings.Contains(a.body, `action="`+mountPath+`/console/login"`) {
		t.Errorf("login page: %d %s", a.status, a.body)
	}
	_, token, err := m.app.Engine.AddOperator(ctx, engine.AddOperatorParams{Email: "op@shop.example", Role: engine.RoleOperator, OrganizationID: org})
	if err != nil {
		t.Fatal(err)
	}
	setup := m.do(http.MethodGet, mountPath+"/console/setup?token="+url.QueryEscape(token), nil)
	secret := regexp.MustCompile(`id="secret">([A-Z2-7]+)<`).FindStringSubmatch(setup.body)
	if secret == nil {
		t.Fatalf("setup page: %d %s", setup.status, setup.body)
	}
	const pw = "correct horse battery staple"
	if a := m.do(http.MethodPost, mountPath+"/console/setup", url.Values{"token": {token}, "password": {pw}, "confirm": {pw}, "totp_secret": {secret[1]}}); a.status != http.StatusSeeOther {
		t.Fatalf("setup: %d %s", a.status, a.body)
	}
	m.do(http.MethodGet, mountPath+"/console/login?next=%2Fconsole%2Flinks", nil)
	login := m.do(http.MethodPost, mountPath+"/console/login", url.Values{"email": {"op@shop.example"}, "password": {pw}, "next": {"/console/links"}})
	if login.status != http.StatusSeeOther || login.location != mountPath+"/console/links" {
		t.Fatalf("login: %d %q", login.status, login.location)
	}
	m.do(http.MethodGet, login.location, nil) // its forms carry the session's token
	links := m.do(http.MethodPost, mountPath+"/console/links", url.Values{"amount": {"750"}, "note": {"Invoice 7"}})
	link := regexp.MustCompile(`id="new-link" href="([^"]+)"`).FindStringSubmatch(links.body)
	if links.status != http.StatusOK || link == nil || !strings.HasPrefix(link[1], m.url+mountPath+"/pay/") {
		t.Fatalf("payment link: %d %v", links.status, link)
	}
	m.do(http.MethodGet, mountPath+"/console/", nil) // every link of the overview is checked

	// The payer opens the link and is sent to the mounted checkout; the
	// deposit returns to the link's page.
	m.web.Jar, _ = cookiejar.New(nil)
	m.csrf = ""
	m.do(http.MethodGet, link[1], nil)
	open := m.do(http.MethodPost, link[1], url.Values{"method": {"bkash"}})
	if open.status != http.StatusSeeOther || !strings.HasPrefix(open.location, m.url+mountPath+"/checkout/") {
		t.Fatalf("paying the link: %d %q", open.status, open.location)
	}
	st, err := m.app.Engine.GetPaymentLinkByToken(ctx, link[1][strings.LastIndex(link[1], "/")+1:])
	if err != nil || st.Deposit == nil || st.Deposit.RedirectURL != link[1] {
		t.Fatalf("the link's deposit returns to %v, want %s (%v)", st, link[1], err)
	}
	m.do(http.MethodGet, open.location, nil)
}

// TestPublicURLChecked: New and SetPublicURL refuse a public URL that is
// not a base URL, naming the Go field.
func TestPublicURLChecked(t *testing.T) {
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "payd.db"), sandbox.Migrations())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	key, _ := hex.DecodeString(strings.Repeat("ab", engine.MasterKeySize))
	keyring, _ := engine.NewKeyring(key)
	sb, _ := sandbox.New(sandbox.Config{})
	for _, u := range []string{"ftp://x/", "payments", "https://x/p?q=1", "https://x/a/../b", "//x/p"} {
		_, err := payd.New(payd.Config{Store: store, Keyring: keyring, Provider: sb, PublicURL: u})
		if err == nil || !strings.Contains(err.Error(), "payd.Config.PublicURL") {
			t.Errorf("PublicURL %q: %v", u, err)
		}
	}
	app, err := payd.New(payd.Config{Store: store, Keyring: keyring, Provider: sb})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.SetPublicURL("https://shop.example/"); err != nil || app.PublicURL() != "https://shop.example" {
		t.Errorf("SetPublicURL at the root: %v, %q", err, app.PublicURL())
	}
	if err := app.SetPublicURL("https://shop.example/payments"); err == nil {
		t.Error("SetPublicURL moved the mount from the root")
	}
}

// TestConfigErrorsNameGoFields: what New refuses it names as a Go field,
// never as a command-line flag.
func TestConfigErrorsNameGoFields(t *testing.T) {
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "payd.db"), sandbox.Migrations())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	keyring, _ := engine.NewKeyring(make([]byte, engine.MasterKeySize))
	sb, _ := sandbox.New(sandbox.Config{})
	for _, c := range []struct {
		cfg  payd.Config
		want string
	}{
		{payd.Config{Keyring: keyring, Provider: sb}, "payd.Config.Store is nil"},
		{payd.Config{Store: store, Provider: sb}, "payd.Config.Keyring is nil"},
		{payd.Config{Store: store, Keyring: keyring}, "payd.Config.Provider is nil"},
		{payd.Config{Store: store, Keyring: keyring, Provider: sb, Engine: engine.Config{Provider: sb}}, "payd.Config.Engine.Provider is set"},
		{payd.Config{Store: store, Keyring: keyring, Provider: sb, Engine: engine.Config{APIPrefix: "/x"}}, "payd.Config.Engine.APIPrefix is set"},
		{payd.Config{Store: store, Keyring: keyring, Provider: sb, APIPrefix: "api"}, "payd.Config.APIPrefix"},
	} {
		_, err := payd.New(c.cfg)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "--") {
			t.Errorf("%s: got %v", c.want, err)
		}
	}
}

// TestHostHeaderWritesNoLink: a request whose Host (and forwarding
// headers) name another site gets links under the configured public URL
// all the same: payd never builds a URL from what a client says it
// reached.
func TestHostHeaderWritesNoLink(t *testing.T) {
	ctx := context.Background()
	m := newMounted(t)
	creds, err := m.app.Engine.CreateOrganization(ctx, engine.OrganizationSettings{Name: ptr("Hosted")})
	if err != nil {
		t.Fatal(err)
	}
	forged := func(method, path, body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, m.url+path, strings.NewReader(body))
		req.Host = "evil.example"
		req.Header.Set("X-Forwarded-Host", "evil.example")
		req.Header.Set("X-Forwarded-Proto", "https")
		req.Header.Set("Authorization", "Bearer "+creds.APIKey.APIKey)
		res, err := m.web.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := forged(http.MethodPost, mountPath+"/api/v1/deposits",
		`{"amount":"500","payment_method":"bkash","redirect_url":"https://shop.example/return","merchant_id":"forged-host"}`)
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(b), `"redirect_url":"`+m.url+mountPath+`/checkout/`) || strings.Contains(string(b), "evil") {
		t.Errorf("deposit created with a forged Host: %d %s", res.StatusCode, b)
	}
	res = forged(http.MethodGet, mountPath+"/console/", "")
	res.Body.Close()
	if loc := res.Header.Get("Location"); loc != mountPath+"/console/login?next=%2Fconsole%2F" {
		t.Errorf("console redirect with a forged Host: %q", loc)
	}
}
