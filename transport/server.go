// Package transport is payd's optional net/http layer: it mounts the /v1 API
// under a configurable prefix and serves the hosted checkout page.
package transport

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"sort"
	"strings"
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
	CancelCheckout(ctx context.Context, token string) (*engine.Deposit, error)
	CreateWithdrawal(ctx context.Context, p engine.CreateWithdrawalParams) (*engine.Withdrawal, error)
	GetWithdrawal(ctx context.Context, orgID, id string) (*engine.Withdrawal, error)
	GetWithdrawalByMerchantID(ctx context.Context, orgID, merchantID string) (*engine.Withdrawal, error)
	PollPayoutNow(ctx context.Context, orgID, id string) error
	GetBalance(ctx context.Context, orgID string) (*engine.Balance, error)
	Now() time.Time
}

// Sandbox is the control surface of a test-mode provider. When set, the
// API serves POST {prefix}/sandbox/payments and /sandbox/outage, and the
// hosted checkout offers the payer's side: pay or cancel.
type Sandbox interface {
	// RecordPayment records a simulated wallet payment.
	RecordPayment(ctx context.Context, p SandboxPayment) (*engine.ProviderTransaction, error)
	// SetOutage makes every provider call fail (true) or work (false).
	SetOutage(down bool)
	// SettlePayout decides the outcome ("succeeded" or "failed") of the
	// payout of a withdrawal.
	SettlePayout(ctx context.Context, withdrawalID, outcome string) error
}

// SandboxPayment is a simulated payment in the contract's fields.
type SandboxPayment struct {
	Channel, TransactionID, PayerPhone, RecipientPhone, Amount, Status, CompletedAt, Type string
}

// MaxBodyBytes is the largest request body the API reads (413 beyond).
const MaxBodyBytes = 64 << 10

// Config configures the HTTP handler.
type Config struct {
	Engine Engine
	// Prefix is the path under which /v1 is served, e.g. "/api" (the
	// reference server's) or "" for the root.
	Prefix string
	// Logger receives one line per request and the detail of every 500.
	// Defaults to slog.Default().
	Logger *slog.Logger
	// Sandbox, when set, mounts the sandbox endpoints (test mode only).
	Sandbox Sandbox
	// RateLimits are per API key; the zero value means no limits.
	RateLimits RateLimits
	// Devices, when set, mounts the SMS inbox's device endpoints.
	Devices Devices
}

type server struct {
	engine  Engine
	prefix  string
	logger  *slog.Logger
	sandbox Sandbox
	devices Devices
	// limiters by requestClass.
	limiters [3]*limiter
}

// NewHandler returns the handler of the API under cfg.Prefix and of the
// hosted checkout pages under /checkout/.
func NewHandler(cfg Config) http.Handler {
	s := &server{engine: cfg.Engine, prefix: strings.TrimRight(cfg.Prefix, "/"), logger: cfg.Logger, sandbox: cfg.Sandbox, devices: cfg.Devices}
	if s.logger == nil {
		s.logger = slog.Default()
	}
	s.limiters[classDefault] = newLimiter(cfg.RateLimits.Default, time.Now)
	s.limiters[classVerify] = newLimiter(cfg.RateLimits.Verify, time.Now)
	s.limiters[classWithdraw] = newLimiter(cfg.RateLimits.Withdraw, time.Now)
	mux := http.NewServeMux()
	s.route(mux, "/v1/deposits", map[string]handlerFunc{http.MethodPost: s.createDeposit})
	s.route(mux, "/v1/deposits/{id}", map[string]handlerFunc{http.MethodGet: s.getDeposit})
	s.route(mux, "/v1/deposits/{id}/verify", map[string]handlerFunc{http.MethodPost: s.verifyDeposit})
	s.route(mux, "/v1/withdraws", map[string]handlerFunc{http.MethodPost: s.createWithdrawal, http.MethodGet: s.findWithdrawal})
	s.route(mux, "/v1/withdraws/{id}", map[string]handlerFunc{http.MethodGet: s.getWithdrawal})
	s.route(mux, "/v1/balance", map[string]handlerFunc{http.MethodGet: s.getBalance})
	s.route(mux, "/openapi.json", map[string]handlerFunc{http.MethodGet: s.openAPI})
	if s.sandbox != nil {
		s.route(mux, "/sandbox/payments", map[string]handlerFunc{http.MethodPost: s.recordSandboxPayment})
		s.route(mux, "/sandbox/withdraws/{id}/settle", map[string]handlerFunc{http.MethodPost: s.settleSandboxWithdrawal})
		s.route(mux, "/sandbox/outage", map[string]handlerFunc{http.MethodPost: s.setSandboxOutage})
		mux.Handle("POST /checkout/{token}/pay", s.handle(s.checkoutPay))
		mux.Handle("POST /checkout/{token}/cancel", s.handle(s.checkoutCancel))
	}
	if s.devices != nil {
		s.route(mux, "/v1/devices/sms", map[string]handlerFunc{http.MethodPost: s.ingestSMS})
		s.route(mux, "/v1/devices/heartbeat", map[string]handlerFunc{http.MethodPost: s.deviceHeartbeat})
	}
	mux.Handle(s.prefix+"/", s.handle(func(w http.ResponseWriter, r *http.Request) error {
		return engine.Errorf(engine.CodeNotFound, "no such endpoint: %s", r.URL.Path)
	}))
	mux.Handle("GET /checkout/{token}", s.handle(s.checkoutPage))
	mux.Handle("POST /checkout/{token}/verify", s.handle(s.checkoutVerify))
	return s.logRequests(s.canonicalPaths(mux))
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
	codeRequestTooLarge:                http.StatusRequestEntityTooLarge,
	codeRateLimited:                    http.StatusTooManyRequests,
	engine.CodeInternal:                http.StatusInternalServerError,
	engine.CodeMethodUnavailable:       http.StatusServiceUnavailable,
	engine.CodeVerificationUnavailable: http.StatusServiceUnavailable,
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
		if !errors.As(err, &e) || statusByCode[e.Code] == 0 {
			if errors.Is(r.Context().Err(), context.Canceled) {
				return // the client is gone; nobody reads an answer
			}
			s.logger.ErrorContext(r.Context(), "internal error", "method", r.Method, "path", r.URL.Path, "err", err)
			e = &engine.Error{Code: engine.CodeInternal, Message: "internal error"}
		}
		var env errorEnvelope
		env.Error.Code, env.Error.Message = e.Code, e.Message
		writeJSON(w, statusByCode[e.Code], env)
	})
}

// writeJSON writes v without HTML escaping, so metadata strings come back
// byte for byte as they were sent.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // a write error means the client is gone
}

// authenticate resolves the bearer API key of a request.
func (s *server) authenticate(r *http.Request) (*engine.Principal, error) {
	scheme, key, _ := strings.Cut(r.Header.Get("Authorization"), " ")
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
	err := signing.Verify(p.SigningSecrets,
		r.Header.Get(signing.TimestampHeader), r.Header.Get(signing.SignatureHeader),
		r.Method, target, body, s.engine.Now())
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

// logRequests writes one line per request. It never logs headers, so no
// API key or signature reaches the log.
func (s *server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		s.logger.LogAttrs(r.Context(), slog.LevelInfo, "request",
			slog.String("method", r.Method),
			slog.String("path", r.URL.Path),
			slog.Int("status", rec.status),
			slog.Duration("duration", time.Since(start)))
	})
}
