// Package console is payd's operator console: server-rendered pages under
// /console for the people who run payd, often from a phone, to see and act
// without a shell (approve a held SMS, complete a payout, find a deposit by
// the transaction ID a payer reads out), and the public page of a payment
// link under /pay.
//
// It is html/template with no JavaScript at all, the hosted checkout's
// strict Content-Security-Policy with a per-response nonce for its one
// stylesheet, X-Frame-Options DENY, in English and Bangla. Operators log in
// with an argon2id password and an optional TOTP code; sessions live in
// the database (the cookie holds a token, the store its hash), every form
// carries a CSRF token bound to the session, and every change runs with
// the operator as the audit log's actor. An organization's operator sees
// only that organization (another's resources are 404); what each role
// may do is the routes table's (a refusal is 403).
//
// The console imports the engine and no provider or store: the SMS inbox's
// operations reach it through Inbox, and the bKash provider's through
// Bkash, which the wiring adapts.
package console

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/transport"
)

//go:embed web/*.html web/console.css
var files embed.FS

// Config configures the console.
type Config struct {
	Engine *engine.Engine
	// Inbox, when set, shows the SMS inbox's pages and the manual payout
	// queue.
	Inbox Inbox
	// Bkash, when set, lets an owner connect the organization to bKash's
	// API from the keys page.
	Bkash Bkash
	// PublicURL is where payers reach payd's handler, the path it is
	// mounted under included: payment links and their return pages are
	// under it. An https one also makes every cookie of the console Secure
	// (see secureCookies). Handlers.SetPublicURL changes it later.
	PublicURL string
	// Mount is the path under which the host serves these handlers with
	// http.StripPrefix ("/payments"; "" at the root): every link, form
	// action, redirect and cookie path of the console begins with it.
	Mount  string
	Logger *slog.Logger
	// LoginRate is how many login attempts one client network (an IPv4
	// address, an IPv6 /64) and one account may each make a minute
	// (default 10); the account lockout is the engine's.
	LoginRate int
	// TrustedProxies are the reverse proxies whose X-Forwarded-For and
	// X-Forwarded-Proto are believed (none by default).
	TrustedProxies TrustedProxies
	// Now is the clock of TOTP codes (default the engine's).
	Now func() time.Time

	// APIPrefix is the API's path under the mount ("/api"): a paired
	// phone's forwarder posts under it.
	APIPrefix string

	// Sandbox says the provider is the sandbox: every page says so, so
	// that nobody mistakes test money for real.
	Sandbox bool

	// PayRate bounds the requests of one client address to the payment
	// link pages (default DefaultPayRate; a negative PerSecond: none).
	PayRate transport.Rate
}

// Path is where the console is, under the handlers' mount (Config.Mount).
const Path = "/console"

// PayPath is where payment links are, under the handlers' mount.
const PayPath = "/pay/"

// Cookie names. The session cookie holds the session's token; the login
// cookie a random value the login and setup forms' CSRF tokens are bound
// to before there is a session.
const (
	sessionCookie = "payd_console"
	loginCookie   = "payd_console_login"
	langCookie    = "payd_console_lang"
)

type server struct {
	eng       *engine.Engine
	sandbox   bool
	apiPrefix string
	inbox     Inbox
	bkash     Bkash
	// publicURL is Config.PublicURL without its trailing slash; httpsURL:
	// it is https.
	publicURL atomic.Pointer[string]
	httpsURL  atomic.Bool
	mount     string
	logger    *slog.Logger
	now       func() time.Time
	pages     *template.Template
	css       template.CSS
	proxies   TrustedProxies
	// Login attempts are counted per client network and per account.
	clientThrottle, accountThrottle *throttle
	payLimit                        *transport.Limiter
	// dummyHash is checked against when the email is unknown, so a login
	// takes as long whether or not the account exists. Made at the first
	// such login: a server whose console nobody uses never pays argon2id's
	// memory.
	dummyHash func() string
}

// Handlers are the console's two handlers: Console under Path, and Pay,
// the public payment link pages under PayPath (on the payers' listener).
type Handlers struct {
	Console http.Handler
	Pay     http.Handler

	s *server
}

// Mount is Config.Mount, without a trailing slash.
func (h *Handlers) Mount() string { return h.s.mount }

// SetPublicURL changes Config.PublicURL, for a host that knows where it is
// reached only once its listener exists.
func (h *Handlers) SetPublicURL(u string) { h.s.setPublicURL(u) }

// PayURL is the payer's page of a payment link's token (an invoice of the
// UddoktaPay-compatible checkout is one).
func (h *Handlers) PayURL(token string) string { return h.s.publicAt(PayPath + url.PathEscape(token)) }

func (s *server) setPublicURL(u string) {
	u = strings.TrimRight(u, "/")
	s.publicURL.Store(&u)
	parsed, err := url.Parse(u)
	s.httpsURL.Store(err == nil && strings.EqualFold(parsed.Scheme, "https"))
}

// publicAt is the URL payers reach path at, path starting with "/".
func (s *server) publicAt(path string) string { return *s.publicURL.Load() + path }

// The console's roles, each allowed all that those before it are:
//   - viewer: every page, nothing that changes anything (but logging out);
//   - operator: the day's work: payouts, SMS review, wallets, redelivery,
//     payment links;
//   - owner: credentials (API keys and their signing secrets, device
//     tokens; any credential action added later belongs here too) and the
//     balance chain's anchor, the one secret that stops a leaked device
//     token from forging an SMS that proves a payment; only the owner sees
//     a chain's balance, where it is anchored.
// An unknown role may do nothing.

// public marks a page without a session (login, setup, payment links).
const public = ""

var roleRank = map[string]int{engine.RoleViewer: 1, engine.RoleOperator: 2, engine.RoleOwner: 3}

// hasRole reports whether op may do what needs role.
func hasRole(op *engine.Operator, role string) bool {
	if role == public {
		return true
	}
	return op != nil && roleRank[role] > 0 && roleRank[op.Role] >= roleRank[role]
}

// anchorRole anchors a wallet's balance chain, and so alone sees a chain's
// balance.
const anchorRole = engine.RoleOwner

type handler = func(s *server, w http.ResponseWriter, r *http.Request, q *request) error

// routes are every console page and action with the least role it needs:
// the one place that says who may do what. A refused role gets the
// console's forbidden page (403) before the handler runs.
var routes = []struct {
	pattern, role string
	handle        handler
}{
	{"GET /console/login", public, (*server).loginPage},
	{"POST /console/login", public, (*server).login},
	{"GET /console/setup", public, (*server).setupPage},
	{"POST /console/setup", public, (*server).setup},
	{"POST /console/logout", engine.RoleViewer, (*server).logout},

	{"GET /console/{$}", engine.RoleViewer, (*server).overview},
	{"GET /console/deposits", engine.RoleViewer, (*server).deposits},
	{"GET /console/deposits/{id}", engine.RoleViewer, (*server).deposit},
	{"GET /console/withdrawals", engine.RoleViewer, (*server).withdrawals},
	{"GET /console/sms", engine.RoleViewer, (*server).sms},
	{"GET /console/devices", engine.RoleViewer, (*server).devices},
	{"GET /console/wallets", engine.RoleViewer, (*server).wallets},
	{"GET /console/webhooks", engine.RoleViewer, (*server).webhooks},
	{"GET /console/keys", engine.RoleViewer, (*server).keys},
	{"GET /console/audit", engine.RoleViewer, (*server).audit},
	{"GET /console/links", engine.RoleViewer, (*server).links},
	{"GET /console/balance", engine.RoleViewer, (*server).balance},
	{"GET /console/settings", engine.RoleViewer, (*server).settings},
	{"GET /console/exports/{kind}", engine.RoleViewer, (*server).exportDownload},

	{"POST /console/deposits/{id}/refund", engine.RoleOperator, (*server).refundReview},
	{"POST /console/deposits/{id}/refunds", engine.RoleOperator, (*server).refundCreate},
	{"POST /console/payouts/{id}/complete", engine.RoleOperator, (*server).payoutComplete},
	{"POST /console/payouts/{id}/confirm", engine.RoleOperator, (*server).payoutConfirm},
	{"POST /console/payouts/{id}/fail", engine.RoleOperator, (*server).payoutFail},
	{"POST /console/sms/{id}/approve", engine.RoleOperator, (*server).smsApprove},
	{"POST /console/sms/{id}/reject", engine.RoleOperator, (*server).smsReject},
	{"POST /console/sms/paste", engine.RoleOperator, (*server).smsPaste},
	{"POST /console/sms/credit", engine.RoleOperator, (*server).smsCredit},
	{"POST /console/wallets", engine.RoleOperator, (*server).walletAdd},
	{"POST /console/wallets/{id}/enable", engine.RoleOperator, (*server).walletEnable},
	{"POST /console/wallets/{id}/disable", engine.RoleOperator, (*server).walletDisable},
	{"POST /console/wallets/{id}/limits", engine.RoleOperator, (*server).walletLimits},
	{"POST /console/events/{id}/redeliver", engine.RoleOperator, (*server).redeliver},
	{"POST /console/ipns/{link}/redeliver", engine.RoleOperator, (*server).ipnRedeliver},
	{"POST /console/webhooks/{id}/test", engine.RoleOperator, (*server).webhookTest},
	{"POST /console/webhooks/{id}/enable", engine.RoleOperator, (*server).webhookEnable},
	{"POST /console/links", engine.RoleOperator, (*server).linkCreate},

	{"POST /console/sms/anchor", anchorRole, (*server).smsAnchor},
	{"POST /console/devices", engine.RoleOwner, (*server).deviceAdd},
	{"POST /console/devices/{id}/rotate", engine.RoleOwner, (*server).deviceRotate},
	{"POST /console/devices/{id}/revoke", engine.RoleOwner, (*server).deviceRevoke},
	{"POST /console/settings", engine.RoleOwner, (*server).settingsSave},
	// A platform owner's alone (the handler checks the platform).
	{"POST /console/organizations", engine.RoleOwner, (*server).orgCreate},
	{"POST /console/webhooks", engine.RoleOwner, (*server).webhookAdd},
	{"POST /console/webhooks/{id}/remove", engine.RoleOwner, (*server).webhookRemove},
	{"POST /console/balance/adjust", engine.RoleOwner, (*server).balanceAdjust},
	{"POST /console/keys", engine.RoleOwner, (*server).keyCreate},
	{"POST /console/keys/{id}/rotate", engine.RoleOwner, (*server).keyRotate},
	{"POST /console/keys/{id}/revoke", engine.RoleOwner, (*server).keyRevoke},
	{"POST /console/keys/{id}/secret", engine.RoleOwner, (*server).keySecret},
	{"POST /console/compat/enable", engine.RoleOwner, (*server).compatEnable},
	{"POST /console/compat/disable", engine.RoleOwner, (*server).compatDisable},
	{"POST /console/bkash/connect", engine.RoleOwner, (*server).bkashConnect},
	{"POST /console/bkash/disconnect", engine.RoleOwner, (*server).bkashDisconnect},
}

// routeRole is the least role of each route, by pattern.
var routeRole = func() map[string]string {
	m := make(map[string]string, len(routes))
	for _, rt := range routes {
		if _, ok := roleRank[rt.role]; !ok && rt.role != public {
			panic("console: route " + rt.pattern + " names no role")
		}
		// A viewer changes nothing.
		if strings.HasPrefix(rt.pattern, "POST ") && rt.role == engine.RoleViewer && rt.pattern != "POST /console/logout" {
			panic("console: route " + rt.pattern + " lets a viewer change something")
		}
		m[rt.pattern] = rt.role
	}
	return m
}()

// New returns the console's handlers.
func New(cfg Config) *Handlers {
	s := &server{eng: cfg.Engine, sandbox: cfg.Sandbox, apiPrefix: strings.TrimRight(cfg.APIPrefix, "/"), inbox: cfg.Inbox, bkash: cfg.Bkash, mount: strings.TrimRight(cfg.Mount, "/"), logger: cfg.Logger, now: cfg.Now}
	s.setPublicURL(cfg.PublicURL)
	if s.logger == nil {
		s.logger = slog.Default()
	}
	if s.now == nil {
		s.now = s.eng.Now
	}
	rate := cfg.LoginRate
	if rate <= 0 {
		rate = 10
	}
	s.clientThrottle, s.accountThrottle = newThrottle(rate, time.Minute), newThrottle(rate, time.Minute)
	s.proxies = cfg.TrustedProxies
	s.payLimit = transport.NewLimiter(payRate(cfg.PayRate), s.now)
	s.pages = template.Must(template.New("").Funcs(funcs).ParseFS(files, "web/*.html"))
	css, err := files.ReadFile("web/console.css")
	if err != nil {
		panic(err)
	}
	s.css = template.CSS(css)
	s.dummyHash = sync.OnceValue(func() string { return hashPassword(engine.RandomToken(16), defaultArgon) })

	mux := http.NewServeMux()
	for _, rt := range routes {
		mux.Handle(rt.pattern, s.page(rt.handle, rt.role))
	}
	// The root of a listener of the console's own leads to it.
	mux.Handle("GET /{$}", http.RedirectHandler(s.mount+"/console/", http.StatusSeeOther))
	mux.Handle("GET /console", http.RedirectHandler(s.mount+"/console/", http.StatusSeeOther))
	mux.Handle("/console/", s.page(func(*server, http.ResponseWriter, *http.Request, *request) error { return errNotFound }, public))

	pay := http.NewServeMux()
	pay.Handle("GET /pay/{token}", s.page((*server).payPage, public))
	pay.Handle("POST /pay/{token}", s.page((*server).pay, public))
	pay.Handle("POST /pay/{token}/cancel", s.page((*server).payCancel, public))
	pay.Handle("/pay/", s.page(func(*server, http.ResponseWriter, *http.Request, *request) error { return errNotFound }, public))
	return &Handlers{Console: s.withClient(limitForms(mux)), Pay: s.withClient(s.limitPay(limitForms(pay))), s: s}
}

// maxFormBytes bounds a console form.
const maxFormBytes = 16 << 10

func limitForms(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
		next.ServeHTTP(w, r)
	})
}

// request is what a page knows of who asks.
type request struct {
	lang    string
	nonce   string
	session *engine.OperatorSession
	// token is the session cookie's value (when logged in).
	token    string
	operator *engine.Operator
	// org is the organization the page shows: the operator's own, or the
	// one a platform operator picked (?org=).
	org  string
	orgs []*engine.Organization
	// csrf is the token every form of the page carries.
	csrf string
	// mount is Config.Mount, which the console's own paths follow.
	mount string
	// shop is the organization a payer's page is of: its header names it,
	// not the console.
	shop string
}

// ctx returns r's context naming the operator as the audit log's actor.
func (q *request) ctx(r *http.Request) context.Context {
	if q.operator == nil {
		return r.Context()
	}
	return engine.WithActor(r.Context(), "console:"+q.operator.Email)
}

// Errors pages return; the one wrapper renders them.
var (
	errNotFound  = engine.Errorf(engine.CodeNotFound, "not found")
	errForbidden = engine.Errorf(engine.CodeForbidden, "forbidden")
)

// page wraps a page: security headers, language, the session (required
// unless role is public: without one a GET goes to the login page and a
// POST is 403), the CSRF check of every POST, the role, and the rendering
// of errors.
func (s *server) page(h handler, role string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := &request{lang: language(w, r), nonce: newNonce(), mount: s.mount}
		setSecurityHeaders(w, q.nonce)
		err := s.serve(w, r, q, h, role)
		if err != nil {
			s.renderError(w, r, q, err)
		}
	})
}

func (s *server) serve(w http.ResponseWriter, r *http.Request, q *request, h handler, role string) error {
	if c, err := r.Cookie(sessionCookie); err == nil && c.Value != "" {
		sess, op, err := s.eng.OperatorSession(r.Context(), c.Value)
		switch {
		case err == nil:
			q.session, q.operator, q.token = sess, op, c.Value
			q.csrf = csrfToken(c.Value)
		case errors.Is(err, engine.ErrLoginRefused):
			s.clearCookie(w, r, sessionCookie)
		default:
			return err
		}
	}
	if role != public && q.operator == nil {
		if r.Method == http.MethodGet {
			// next is the page under the mount: the login adds it back.
			http.Redirect(w, r, s.mount+"/console/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return nil
		}
		return errForbidden
	}
	if q.csrf == "" {
		q.csrf = s.loginCSRF(w, r)
	}
	if r.Method == http.MethodPost {
		if err := r.ParseForm(); err != nil {
			return engine.Invalid("body", "must be a form of at most 16 KiB")
		}
		// The token is bound to this browser's session (or login cookie):
		// another session's token, or none, is refused before anything.
		if !hmac.Equal([]byte(r.PostForm.Get("csrf")), []byte(q.csrf)) || q.csrf == "" {
			return errForbidden
		}
	}
	if q.operator != nil {
		if err := s.pickOrganization(r, q); err != nil {
			return err
		}
	}
	if !hasRole(q.operator, role) {
		return errForbidden
	}
	return h(s, w, r, q)
}

// pickOrganization sets the organization the page shows.
func (s *server) pickOrganization(r *http.Request, q *request) error {
	if !q.operator.Platform() {
		q.org = q.operator.OrganizationID
		return nil
	}
	orgs, err := s.eng.ListOrganizations(r.Context())
	if err != nil {
		return err
	}
	q.orgs = orgs
	want := r.URL.Query().Get("org")
	if want == "" {
		want = r.PostForm.Get("org")
	}
	for _, o := range orgs {
		if o.ID == want {
			q.org = want
			return nil
		}
	}
	if want != "" {
		return errNotFound
	}
	if len(orgs) > 0 {
		q.org = orgs[0].ID
	}
	return nil
}

// csrfToken is the CSRF token of a session: an HMAC of its token, so it
// needs no storage and no other session's token equals it.
func csrfToken(sessionToken string) string {
	m := hmac.New(sha256.New, []byte(sessionToken))
	m.Write([]byte("payd console csrf"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// loginCSRF returns the CSRF token of a browser without a session, bound
// to its login cookie (set now if missing).
func (s *server) loginCSRF(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(loginCookie); err == nil && len(c.Value) >= 16 && len(c.Value) <= 64 {
		return csrfToken(c.Value)
	}
	v := engine.RandomToken(24)
	s.setCookie(w, r, loginCookie, v, 0)
	if r.Method == http.MethodPost {
		return "" // a POST with no login cookie has no token to match
	}
	return csrfToken(v)
}

func setSecurityHeaders(w http.ResponseWriter, nonce string) {
	h := w.Header()
	h.Set("Content-Security-Policy", fmt.Sprintf(
		"default-src 'none'; style-src 'nonce-%s'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'", nonce))
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
}

func (s *server) setCookie(w http.ResponseWriter, r *http.Request, name, value string, maxAge time.Duration) {
	c := &http.Cookie{Name: name, Value: value, Path: s.cookiePath(name), HttpOnly: true, Secure: clientOf(r).secure, SameSite: http.SameSiteStrictMode}
	if maxAge > 0 {
		c.MaxAge = int(maxAge / time.Second)
	}
	http.SetCookie(w, c)
}

// cookiePath scopes the session cookie to the console; the login cookie
// also backs the CSRF tokens of the payment link pages.
func (s *server) cookiePath(name string) string {
	if name == sessionCookie {
		return s.mount + Path
	}
	return s.mount + "/"
}

func (s *server) clearCookie(w http.ResponseWriter, r *http.Request, name string) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: "", Path: s.cookiePath(name), MaxAge: -1, HttpOnly: true, Secure: clientOf(r).secure, SameSite: http.SameSiteStrictMode})
}

func newNonce() string {
	b := make([]byte, 18)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// language is the page's language: ?lang= (remembered in a cookie), the
// cookie, or Accept-Language.
func language(w http.ResponseWriter, r *http.Request) string {
	if l := r.URL.Query().Get("lang"); l == langEnglish || l == langBangla {
		http.SetCookie(w, &http.Cookie{Name: langCookie, Value: l, Path: "/", SameSite: http.SameSiteLaxMode, MaxAge: 365 * 24 * 3600})
		return l
	}
	if c, err := r.Cookie(langCookie); err == nil && (c.Value == langEnglish || c.Value == langBangla) {
		return c.Value
	}
	for part := range strings.SplitSeq(r.Header.Get("Accept-Language"), ",") {
		tag, _, _ := strings.Cut(strings.TrimSpace(part), ";")
		base, _, _ := strings.Cut(strings.ToLower(tag), "-")
		if base == langBangla {
			return langBangla
		}
		if base == langEnglish {
			return langEnglish
		}
	}
	return langEnglish
}

// view is what every page template gets.
type view struct {
	Lang, OtherLang, Nonce string
	CSS                    template.CSS
	CSRF                   string
	Operator               *engine.Operator
	Org                    string
	Orgs                   []*engine.Organization
	Inbox, Sandbox         bool
	Shop                   string
	Title                  string
	Nav                    string
	// Path is the page's own path, and Base the mount that every link of
	// the console begins with.
	Path, Base string
	Done       string
	Data       any
}

func (v *view) T(key string, args ...any) string { return translate(v.Lang, key, args...) }

// OrgQuery is "org=ID" for a platform operator's links, "" otherwise: a
// URL's query as it is (its "=" kept, the ID escaped here).
func (v *view) OrgQuery() template.URL {
	if v.Operator != nil && v.Operator.Platform() && v.Org != "" {
		return template.URL("org=" + url.QueryEscape(v.Org))
	}
	return ""
}

// ReadOnly reports whether the operator only looks (a viewer).
func (v *view) ReadOnly() bool { return !hasRole(v.Operator, engine.RoleOperator) }

// May reports whether the operator may use the route of pattern, as the
// routes table says: a page offers only the forms its operator may send.
func (v *view) May(pattern string) (bool, error) {
	role, ok := routeRole[pattern]
	if !ok {
		return false, fmt.Errorf("no console route %q", pattern)
	}
	return hasRole(v.Operator, role), nil
}

func (s *server) render(w http.ResponseWriter, r *http.Request, q *request, status int, name, nav string, data any) error {
	v := &view{Lang: q.lang, OtherLang: langBangla, Nonce: q.nonce, CSS: s.css, CSRF: q.csrf, Operator: q.operator,
		Org: q.org, Orgs: q.orgs, Inbox: s.inbox != nil, Sandbox: s.sandbox, Shop: q.shop, Title: translate(q.lang, "t_"+name), Nav: nav, Path: s.mount + r.URL.Path, Base: s.mount, Data: data}
	if q.lang == langBangla {
		v.OtherLang = langEnglish
	}
	if d := r.URL.Query().Get("done"); d != "" && hasText(d) {
		v.Done = translate(q.lang, d)
	}
	var buf bytes.Buffer
	if err := s.pages.ExecuteTemplate(&buf, name, v); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, err := buf.WriteTo(w)
	return err
}

// statusOf maps an engine error to the page's HTTP status.
var statusOf = map[string]int{
	engine.CodeInvalidRequest:       http.StatusBadRequest,
	engine.CodeUnauthorized:         http.StatusUnauthorized,
	engine.CodeForbidden:            http.StatusForbidden,
	engine.CodeNotFound:             http.StatusNotFound,
	engine.CodeConflict:             http.StatusConflict,
	engine.CodeDepositTerminal:      http.StatusConflict,
	engine.CodeAttemptInProgress:    http.StatusConflict,
	engine.CodeMerchantIDConflict:   http.StatusConflict,
	engine.CodeDepositNotRefundable: http.StatusConflict,
	engine.CodeRefundExceedsDeposit: http.StatusConflict,
	engine.CodeMethodUnavailable:    http.StatusUnprocessableEntity,
	engine.CodeInsufficientBalance:  http.StatusUnprocessableEntity,
}

// renderError shows an error page: the engine's message for a refusal, a
// bare "internal error" (and a log line) for anything else.
func (s *server) renderError(w http.ResponseWriter, r *http.Request, q *request, err error) {
	var e *engine.Error
	status, msg := http.StatusInternalServerError, translate(q.lang, "err_internal")
	if engine.UnavailableError(err) != nil {
		// No primary database for a moment (a failover): nothing to log per
		// page, and nothing the operator or payer did wrong.
		w.Header().Set("Retry-After", "2")
		status, msg = http.StatusServiceUnavailable, translate(q.lang, "err_unavailable")
	} else if errors.As(err, &e) && statusOf[e.Code] != 0 {
		status, msg = statusOf[e.Code], e.Message
		switch e.Code {
		case engine.CodeNotFound:
			msg = translate(q.lang, "err_not_found")
		case engine.CodeForbidden:
			msg = translate(q.lang, "err_forbidden")
		}
	} else {
		s.logger.ErrorContext(r.Context(), "console", "path", r.URL.Path, "err", err)
	}
	if rerr := s.render(w, r, q, status, "error", "", msg); rerr != nil {
		s.logger.ErrorContext(r.Context(), "console: render error page", "err", rerr)
	}
}

// done answers an action with 303 to page, telling it what was done.
func done(w http.ResponseWriter, r *http.Request, q *request, page, what string) error {
	sep := "?"
	if strings.Contains(page, "?") {
		sep = "&"
	}
	target := q.mount + page + sep + "done=" + url.QueryEscape(what)
	if q.operator != nil && q.operator.Platform() {
		target += "&org=" + url.QueryEscape(q.org)
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
	return nil
}

// throttle counts attempts per key in fixed windows. It tracks at most
// maxThrottleKeys keys a window; past that a new key is refused until the
// window ends, so that a flood of fresh keys cannot grow it without bound.
type throttle struct {
	mu     sync.Mutex
	limit  int
	window time.Duration
	start  time.Time
	counts map[string]int
}

const maxThrottleKeys = 1 << 16

func newThrottle(limit int, window time.Duration) *throttle {
	return &throttle{limit: limit, window: window, counts: map[string]int{}}
}

// allow counts an attempt under key and reports whether it is within the
// limit of its window.
func (t *throttle) allow(key string, now time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if now.Sub(t.start) >= t.window {
		t.start, t.counts = now, map[string]int{}
	}
	n, ok := t.counts[key]
	if !ok && len(t.counts) >= maxThrottleKeys {
		return false
	}
	t.counts[key] = n + 1
	return n+1 <= t.limit
}
