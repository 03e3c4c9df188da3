// Package transport is payd's optional net/http layer: it mounts the /v1 API
// under a configurable prefix and serves the hosted checkout page.
package transport

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/transport/signing"
)

// Engine is the part of the engine the transport calls.
type Engine interface {
	Authenticate(ctx context.Context, apiKey string) (*engine.Principal, error)
	CreateDeposit(ctx context.Context, p engine.CreateDepositParams) (*engine.Deposit, bool, error)
	GetDeposit(ctx context.Context, orgID, id string) (*engine.Deposit, error)
	GetDepositByCheckoutToken(ctx context.Context, token string) (*engine.Deposit, error)
	SubmitTransactionID(ctx context.Context, p engine.VerifyParams) (*engine.Verification, error)
	SubmitCheckoutPayment(ctx context.Context, token, transactionID string) (*engine.Verification, error)
	SubmitTransactionIDByToken(ctx context.Context, token, transactionID string) (*engine.Verification, error)
	SubmitWalletCheckout(ctx context.Context, p engine.WalletCheckoutParams) (*engine.Verification, error)
	CancelCheckout(ctx context.Context, token string) (*engine.Deposit, error)
	CreateWithdrawal(ctx context.Context, p engine.CreateWithdrawalParams) (*engine.Withdrawal, error)
	GetWithdrawal(ctx context.Context, orgID, id string) (*engine.Withdrawal, error)
	PollPayoutNow(ctx context.Context, orgID, id string) error
	GetBalance(ctx context.Context, orgID string) (*engine.Balance, error)
	Now() time.Time

	// Refunds (refund.go).
	CreateRefund(ctx context.Context, p engine.CreateRefundParams) (*engine.Refund, bool, error)
	GetRefund(ctx context.Context, orgID, id string) (*engine.Refund, error)
	ListRefunds(ctx context.Context, p engine.ListParams) (*engine.Page[*engine.Refund], error)
	PollRefundNow(ctx context.Context, orgID, id string) error

	// Lists (list.go).
	ListDeposits(ctx context.Context, p engine.ListParams) (*engine.Page[*engine.Deposit], error)
	ListWithdrawals(ctx context.Context, p engine.ListParams) (*engine.Page[*engine.Withdrawal], error)
	ListEventsPage(ctx context.Context, p engine.ListParams) (*engine.Page[*engine.Event], error)
	ListBalanceTransactions(ctx context.Context, p engine.ListParams) (*engine.Page[*engine.BalanceTransaction], error)
	GetOrgEvent(ctx context.Context, orgID, id string) (*engine.Event, error)
	OrganizationTakesH2H(ctx context.Context, orgID string) (bool, error)
}

// Sandbox is the control surface of a test-mode provider. When set, the
// API serves POST {prefix}/sandbox/payments and /sandbox/outage, and the
// hosted checkout offers the payer's side: pay or cancel. Each organization
// has a sandbox of its own: its payments prove only its deposits and its
// outage fails only its provider calls.
type Sandbox interface {
	// RecordPayment records a simulated wallet payment in the sandbox of
	// p.OrganizationID.
	RecordPayment(ctx context.Context, p SandboxPayment) (*engine.ProviderTransaction, error)
	// SetOutage makes every provider call for an organization fail (true)
	// or work (false).
	SetOutage(organizationID string, down bool)
	// SettlePayout decides the outcome ("succeeded" or "failed") of the
	// payout of an organization's withdrawal.
	SettlePayout(ctx context.Context, organizationID, withdrawalID, outcome string) error
	// SettleRefund decides the outcome ("succeeded" or "failed") of an
	// organization's refund.
	SettleRefund(ctx context.Context, organizationID, refundID, outcome string) error
}

// SandboxPayment is a simulated payment in the contract's fields, and the
// organization whose sandbox records it: the engine's type, which the
// sandbox provider takes as it is.
type SandboxPayment = engine.SandboxPayment

// MaxBodyBytes is the largest request body the API reads (413 beyond).
const MaxBodyBytes = 64 << 10

// Config configures the HTTP handler.
type Config struct {
	Engine Engine
	// Prefix is the path under which /v1 is served, e.g. "/api" (the
	// reference server's) or "" for the root.
	Prefix string
	// Mount is the path under which the host serves the handler with
	// http.StripPrefix ("/payments"; "" at the root). Routes stay
	// relative to it; the links payd writes (checkout pages and forms,
	// verify endpoints) begin with it.
	Mount string
	// Logger receives one line per request and the detail of every 500.
	// Defaults to slog.Default().
	Logger *slog.Logger
	// Sandbox, when set, mounts the sandbox endpoints (test mode only).
	Sandbox Sandbox
	// RateLimits are per API key; the zero value means no limits.
	RateLimits RateLimits
	// Devices, when set, mounts the SMS inbox's device endpoints.
	Devices Devices
	// ObserveRequest, when set, is told of every answered request: the
	// route pattern that served it, without Prefix ("" when none did; never
	// the raw path, which holds IDs and checkout tokens), its method,
	// status and time.
	ObserveRequest func(route, method string, status int, elapsed time.Duration)
	// CompatPayURL, when set (and the engine has the compat side), mounts
	// the UddoktaPay-compatible endpoints: it is the payer's page of an
	// invoice (the console's payment-link page).
	CompatPayURL func(token string) string
}

type server struct {
	engine Engine
	prefix string
	// mount is Config.Mount; links is mount+prefix, where the API's links
	// point.
	mount, links string
	logger       *slog.Logger
	sandbox      Sandbox
	devices      Devices
	observe      func(route, method string, status int, elapsed time.Duration)
	// limiters by requestClass.
	limiters [4]*limiter
}

// NewHandler returns the handler of the API under cfg.Prefix and of the
// hosted checkout pages under /checkout/.
func NewHandler(cfg Config) http.Handler {
	s := &server{engine: cfg.Engine, prefix: strings.TrimRight(cfg.Prefix, "/"), logger: cfg.Logger, sandbox: cfg.Sandbox, devices: cfg.Devices, observe: cfg.ObserveRequest}
	if s.logger == nil {
		s.logger = slog.Default()
	}
	s.mount = strings.TrimRight(cfg.Mount, "/")
	s.links = s.mount + s.prefix
	s.logger = slog.New(LogHandler(s.logger.Handler()))
	s.limiters[classDefault] = newLimiter(cfg.RateLimits.Default, time.Now)
	s.limiters[classVerify] = newLimiter(cfg.RateLimits.Verify, time.Now)
	s.limiters[classWithdraw] = newLimiter(cfg.RateLimits.Withdraw, time.Now)
	s.limiters[classDevice] = newLimiter(cfg.RateLimits.Device, time.Now)
	mux := http.NewServeMux()
	s.route(mux, "/v1/deposits", map[string]handlerFunc{http.MethodPost: s.createDeposit, http.MethodGet: s.listDeposits})
	s.route(mux, "/v1/deposits/{id}", map[string]handlerFunc{http.MethodGet: s.getDeposit})
	s.route(mux, "/v1/deposits/{id}/verify", map[string]handlerFunc{http.MethodPost: s.verifyDeposit})
	s.route(mux, "/v1/deposits/{id}/refunds", map[string]handlerFunc{http.MethodPost: s.createRefund})
	s.route(mux, "/v1/refunds", map[string]handlerFunc{http.MethodGet: s.listRefunds})
	s.route(mux, "/v1/refunds/{id}", map[string]handlerFunc{http.MethodGet: s.getRefund})
	s.route(mux, "/v1/withdraws", map[string]handlerFunc{http.MethodPost: s.createWithdrawal, http.MethodGet: s.listWithdrawals})
	s.route(mux, "/v1/withdraws/{id}", map[string]handlerFunc{http.MethodGet: s.getWithdrawal})
	s.route(mux, "/v1/balance", map[string]handlerFunc{http.MethodGet: s.getBalance})
	s.route(mux, "/v1/balance/transactions", map[string]handlerFunc{http.MethodGet: s.listBalanceTransactions})
	s.route(mux, "/v1/events", map[string]handlerFunc{http.MethodGet: s.listEvents})
	s.route(mux, "/v1/events/{id}", map[string]handlerFunc{http.MethodGet: s.getEvent})
	s.route(mux, "/openapi.json", map[string]handlerFunc{http.MethodGet: s.openAPI})
	if s.sandbox != nil {
		s.route(mux, "/sandbox/payments", map[string]handlerFunc{http.MethodPost: s.recordSandboxPayment})
		s.route(mux, "/sandbox/withdraws/{id}/settle", map[string]handlerFunc{http.MethodPost: s.settleSandboxWithdrawal})
		s.route(mux, "/sandbox/refunds/{id}/settle", map[string]handlerFunc{http.MethodPost: s.settleSandboxRefund})
		s.route(mux, "/sandbox/outage", map[string]handlerFunc{http.MethodPost: s.setSandboxOutage})
		mux.Handle("POST /checkout/{token}/pay", s.handle(s.checkoutPay))
		mux.Handle("POST /checkout/{token}/cancel", s.handle(s.checkoutCancel))
	}
	s.compatRoutes(mux, cfg.CompatPayURL)
	if s.devices != nil {
		s.route(mux, "/v1/devices/sms", map[string]handlerFunc{http.MethodPost: s.ingestSMS})
		s.route(mux, "/v1/devices/heartbeat", map[string]handlerFunc{http.MethodPost: s.deviceHeartbeat})
		s.forwarderRoutes(mux)
	}
	mux.Handle(s.prefix+"/", s.handle(func(w http.ResponseWriter, r *http.Request) error {
		return engine.Errorf(engine.CodeNotFound, "no such endpoint: %s", r.URL.Path)
	}))
	if s.prefix != "" {
		// Outside the prefix too, a client gets the envelope, and a hint.
		mux.Handle("/", s.handle(func(w http.ResponseWriter, r *http.Request) error {
			example := s.links + "/v1/balance"
			if strings.HasPrefix(r.URL.Path, "/v1/") {
				example = s.links + r.URL.Path
			}
			return engine.Errorf(engine.CodeNotFound, "no such endpoint: %s; the API is under %s (e.g. %s)", s.mount+r.URL.Path, s.links, example)
		}))
	}
	mux.Handle("GET /checkout/{token}", s.handle(pageUnavailable(s.checkoutPage)))
	mux.Handle("POST /checkout/{token}/verify", s.handle(pageUnavailable(s.checkoutVerify)))
	return limitBodies(s.logRequests(s.canonicalPaths(mux)))
}

// limitBodies reads every request body through http.MaxBytesReader on the
// connection's own ResponseWriter, and once the handler is done reads what
// it left unread, up to the limit. A body over the limit then makes the
// server half-close and linger before it closes, so a client that said
// Connection: close reads its whole answer (the 413, or a 401 refused
// before the body was read) instead of a reset caused by unread data.
func limitBodies(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := http.MaxBytesReader(w, r.Body, MaxBodyBytes)
		r.Body = body
		next.ServeHTTP(w, r)
		_, _ = io.Copy(io.Discard, body)
	})
}

// handlerFunc is an HTTP handler that returns its error instead of writing
// it, so that one place renders every error envelope.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// route mounts handlers for one path, answering other methods with 405.
func (s *server) route(mux *http.ServeMux, path string, byMethod map[string]handlerFunc) {
	mux.Handle(s.prefix+path, s.handle(func(w http.ResponseWriter, r *http.Request) error {
		h, ok := byMethod[r.Method]
		if !ok {
			allowed := make([]string, 0, len(byMethod))
			for m := range byMethod {
				allowed = append(allowed, m)
			}
			sort.Strings(allowed)
			w.Header().Set("Allow", strings.Join(allowed, ", "))
			return errMethodNotAllowed
		}
		return h(w, r)
	}))
}

var errMethodNotAllowed = &engine.Error{Code: codeMethodNotAllowed, Message: "method not allowed"}

// statusByCode maps each error code of the contract to its HTTP status.
var statusByCode = map[string]int{
	engine.CodeInvalidRequest:          http.StatusBadRequest,
	engine.CodeUnauthorized:            http.StatusUnauthorized,
	engine.CodeForbidden:               http.StatusForbidden,
	engine.CodeInsufficientBalance:     http.StatusForbidden,
	engine.CodeNotFound:                http.StatusNotFound,
	codeMethodNotAllowed:               http.StatusMethodNotAllowed,
	engine.CodeMerchantIDConflict:      http.StatusConflict,
	engine.CodeMerchantIDExists:        http.StatusConflict,
	engine.CodeDepositTerminal:         http.StatusConflict,
	engine.CodeAttemptInProgress:       http.StatusConflict,
	engine.CodeAttemptLimitReached:     http.StatusConflict,
	engine.CodeTransactionIDUsed:       http.StatusConflict,
	engine.CodeRedirectAction:          http.StatusConflict,
	engine.CodeConflict:                http.StatusConflict,
	engine.CodeDepositNotRefundable:    http.StatusConflict,
	engine.CodeRefundExceedsDeposit:    http.StatusConflict,
	codeRequestTooLarge:                http.StatusRequestEntityTooLarge,
	codeRateLimited:                    http.StatusTooManyRequests,
	engine.CodeInternal:                http.StatusInternalServerError,
	engine.CodeMethodUnavailable:       http.StatusServiceUnavailable,
	engine.CodeVerificationUnavailable: http.StatusServiceUnavailable,
	engine.CodeDatabaseUnavailable:     http.StatusServiceUnavailable,
}

// errorEnvelope is the body of every error response.
type errorEnvelope struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (s *server) handle(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := h(w, r)
		if err == nil {
			return
		}
		var e *engine.Error
		if u := engine.UnavailableError(err); u != nil {
			e = u
			s.noteUnavailable(w, r, err)
		} else if !errors.As(err, &e) || statusByCode[e.Code] == 0 {
			if errors.Is(r.Context().Err(), context.Canceled) {
				return // the client is gone; nobody reads an answer
			}
			s.logger.ErrorContext(r.Context(), "internal error", "method", r.Method, "path", loggedPath(r), "err", err)
			e = &engine.Error{Code: engine.CodeInternal, Message: "internal error"}
		}
		var env errorEnvelope
		env.Error.Code, env.Error.Message = e.Code, e.Message
		writeJSON(w, statusByCode[e.Code], env)
	})
}

var (
	jsonContentType = []string{"application/json"}
	noStore         = []string{"no-store"}
)

// writeJSON writes v without HTML escaping, so metadata strings come back
// byte for byte as they were sent.
func writeJSON(w http.ResponseWriter, status int, v any) {
	// Shared values, not Header.Set's fresh slice each: net/http only reads
	// them, and Add would copy before appending (cap 1).
	h := w.Header()
	h["Content-Type"] = jsonContentType
	h["Cache-Control"] = noStore
	w.WriteHeader(status)
	if a, ok := v.(jsonAppender); ok {
		bp := jsonBuffers.Get().(*[]byte)
		defer jsonBuffers.Put(bp)
		if b, err := a.AppendJSON((*bp)[:0]); err == nil {
			*bp = b[:0]
			_, _ = w.Write(append(b, '\n')) // as Encode, with its newline
			return
		}
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // a write error means the client is gone
}

// jsonAppender is an answer that encodes itself as encoding/json would,
// without its reflection (engine.H2HDeposit, a signed GET's answer).
type jsonAppender interface {
	AppendJSON([]byte) ([]byte, error)
}

var jsonBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// credentialHeader returns the one value of a header that carries a
// credential (an API key, a device token, a signature or its timestamp). A
// request with two is refused: which one a proxy, a log or payd would act
// on is not something a caller should be able to play with.
func credentialHeader(r *http.Request, name string) (string, error) {
	values := r.Header.Values(name)
	if len(values) > 1 {
		return "", engine.Invalid(name, "must be sent once")
	}
	if len(values) == 0 {
		return "", nil
	}
	return values[0], nil
}

// authenticate resolves the bearer API key of a request.
func (s *server) authenticate(r *http.Request) (*engine.Principal, error) {
	authorization, err := credentialHeader(r, "Authorization")
	if err != nil {
		return nil, err
	}
	scheme, key, _ := strings.Cut(authorization, " ")
	key = strings.TrimSpace(key)
	if !strings.EqualFold(scheme, "Bearer") || key == "" {
		return nil, engine.Errorf(engine.CodeUnauthorized, engine.ReasonMissingAPIKey)
	}
	return s.engine.Authenticate(r.Context(), key)
}

// checkSignature verifies the H2H signature headers of a request.
func (s *server) checkSignature(r *http.Request, p *engine.Principal, body []byte) error {
	target := r.RequestURI
	if target == "" {
		target = r.URL.RequestURI()
	}
	timestamp, err := credentialHeader(r, signing.TimestampHeader)
	if err != nil {
		return err
	}
	signature, err := credentialHeader(r, signing.SignatureHeader)
	if err != nil {
		return err
	}
	err = signing.Verify(p.SigningSecrets, timestamp, signature, r.Method, target, body, s.engine.Now())
	if err != nil {
		return engine.Errorf(engine.CodeUnauthorized, "%s", err.Error())
	}
	return nil
}

// statusRecorder remembers the status a handler wrote, for the access log.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(status int) {
	r.status = status
	r.ResponseWriter.WriteHeader(status)
}

// loggedPath is a request's path as the logs show it: a hosted checkout's
// token is masked to its first characters, since the token alone acts on
// its deposit's checkout.
func loggedPath(r *http.Request) string {
	const prefix = "/checkout/"
	rest, ok := strings.CutPrefix(r.URL.Path, prefix)
	if !ok {
		return r.URL.Path
	}
	token, tail := rest, ""
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		token, tail = rest[:i], rest[i:]
	}
	if len(token) > 4 {
		token = token[:4]
	}
	return prefix + token + "…" + tail
}

// routeLabel is the route pattern that served r (the mux set r.Pattern),
// without its method, which the method label carries, and without the
// deployment's API prefix, so that a dashboard reads "/v1/deposits/{id}"
// wherever payd is mounted. It is "" for the catch-alls that answer an
// unknown path, and for a path refused before the mux.
func (s *server) routeLabel(r *http.Request) string {
	route := r.Pattern
	if _, path, ok := strings.Cut(route, " "); ok {
		route = path
	}
	if route == s.prefix+"/" || route == "/" {
		return ""
	}
	if rest, ok := strings.CutPrefix(route, s.prefix); ok && strings.HasPrefix(rest, "/") {
		return rest
	}
	return route
}

// logRequests gives every request its ID (RequestID), answers it in
// X-Request-Id, writes one line per request and tells ObserveRequest. It
// never logs headers, so no API key or signature reaches the log.
func (s *server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := requestID(r)
		w.Header().Set(RequestIDHeader, id)
		r = r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id))
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		elapsed := time.Since(start)
		s.logger.LogAttrs(r.Context(), slog.LevelInfo, "request",
			slog.String("method", r.Method),
			slog.String("path", loggedPath(r)),
			slog.Int("status", rec.status),
			slog.Duration("duration", elapsed))
		if s.observe != nil {
			s.observe(s.routeLabel(r), r.Method, rec.status, elapsed)
		}
	})
}
