// Package paydtest runs a payd for a test: one harness for the reference
// server's end-to-end tests, transport's tests, the Go client's, the HTTP
// conformance suite's and the examples'. A Server is payd's App over a
// real SQLite file in a temporary directory, reached over real HTTP.
//
//	s := paydtest.MustRunMain(t)           // wall clock, background work running
//	s := paydtest.MustOpen(t)              // mock clock at Start, the test drives the engine
//	org := s.NewOrg(engine.OrganizationSettings{})
//	res := s.Do(org, paydtest.Request{APIKey: org.APIKey, Sign: true, Body: `{...}`})
package paydtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	payd "github.com/payd-engine/payd"
	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/sandbox"
	"github.com/payd-engine/payd/provider/smsinbox"
	"github.com/payd-engine/payd/storage/sqlite"
	"github.com/payd-engine/payd/transport"
)

// Start is the mock clock's time when a MustOpen server starts.
var Start = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

// Server is a payd in-process.
type Server struct {
	// App is the wired payd; Restart and Rebuild replace it.
	*payd.App
	// Config is what App was built from.
	Config payd.Config
	// URL is where payd is reached, e.g. http://127.0.0.1:PORT (plus
	// Mount); the API is under URL + "/api".
	URL string
	// Mount is the path the server serves payd under with
	// http.StripPrefix (WithMount); "" at the root.
	Mount string
	// OpsURL is the root of the operations endpoints (App.OpsHandler:
	// /metrics, /healthz, /readyz), on a listener of their own.
	OpsURL string
	// Dir holds the database, DB, and its master key file, DB + ".key", so
	// that payd admin --db DB uses the server's key.
	Dir, DB string
	// Clock is the server's mock clock; nil on the wall clock.
	Clock *clock.Mock
	// Sandbox or Inbox is the App's provider, as the options chose (the
	// sandbox by default).
	Sandbox *sandbox.Provider
	Inbox   *smsinbox.Provider // the SMS inbox, when the options chose it

	// store is the store the server opened; withProvider is the last
	// option that chose the provider, which Rebuild and Restart run again
	// for a new provider over the store, as a new process would build.
	store        engine.Store
	withProvider Option

	tb    testing.TB // for the helpers' failures; nil outside a test
	srv   *httptest.Server
	mu    sync.Mutex // guards stops
	stops []func()
}

// Option changes a Server's configuration before its App is built.
type Option func(*payd.Config)

// WithMount serves payd under path ("/payments") with http.StripPrefix,
// as a host mounts it: PublicURL and URL name it.
func WithMount(path string) Option {
	return func(c *payd.Config) { c.PublicURL = strings.TrimRight(c.PublicURL, "/") + path }
}

// WithSandbox makes the provider a sandbox built from cfg (on the
// server's clock unless cfg has one).
func WithSandbox(cfg sandbox.Config) Option {
	return func(c *payd.Config) {
		if cfg.Clock == nil {
			cfg.Clock = c.Clock
		}
		sb, err := sandbox.New(cfg)
		if err != nil {
			panic(err)
		}
		c.Provider = sb
	}
}

// WithSMSInbox makes the provider an SMS inbox built from cfg over the
// server's store, clock, keyring and logger.
func WithSMSInbox(cfg smsinbox.Config) Option {
	return func(c *payd.Config) {
		cfg.Store = smsinbox.NewSQLStore(c.Store)
		if cfg.Clock == nil {
			cfg.Clock = c.Clock
		}
		cfg.Keyring, cfg.Logger = c.Keyring, c.Logger
		inbox, err := smsinbox.New(cfg)
		if err != nil {
			panic(err)
		}
		c.Provider = inbox
	}
}

// WithProvider makes the provider p, the host's own or a paydmock.Provider:
// Rebuild and Restart keep it.
func WithProvider(p engine.Provider) Option {
	return func(c *payd.Config) { c.Provider = p }
}

// WithWebhooks makes w the webhook sender (a paydmock.WebhookClient, to see
// the posts without a server).
func WithWebhooks(w engine.WebhookClient) Option {
	return func(c *payd.Config) { c.Webhooks = w }
}

// Open builds a payd over a new SQLite file in dir, behind a test HTTP
// server, with the API under /api.
// Its background work does not run until Run. Close stops it.
func Open(dir string, opts ...Option) (*Server, error) {
	s := &Server{Dir: dir, DB: filepath.Join(dir, "payd.db")}
	master := make([]byte, engine.MasterKeySize)
	if _, err := rand.Read(master); err != nil {
		return nil, err
	}
	keyring, err := engine.NewKeyring(master)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(s.DB+".key", []byte(hex.EncodeToString(master)), 0o600); err != nil {
		return nil, err
	}
	store, err := sqlite.Open(context.Background(), s.DB, sandbox.Migrations(), smsinbox.Migrations())
	if err != nil {
		return nil, err
	}
	s.onClose(func() { store.Close() })
	s.store = store
	// The handler is read on each request, so that the sandbox's checkout
	// links can name the server's own URL, and Restart can replace it.
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.Mount != "" {
			http.StripPrefix(s.Mount, s.App.Handler).ServeHTTP(w, r)
			return
		}
		s.App.Handler.ServeHTTP(w, r)
	}))
	s.onClose(s.srv.Close)
	s.URL = s.srv.URL
	ops := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.App.OpsHandler().ServeHTTP(w, r)
	}))
	s.onClose(ops.Close)
	s.OpsURL = ops.URL
	s.Config = payd.Config{
		Store: store, Keyring: keyring, PublicURL: s.URL, APIPrefix: "/api",
		Logger: slog.New(slog.DiscardHandler),
	}
	s.withProvider = WithSandbox(sandbox.Config{})
	if err := s.build(opts); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// build applies opts to Config, builds a new provider and the App.
func (s *Server) build(opts []Option) error {
	s.Config.Provider = nil
	for _, o := range opts {
		o(&s.Config)
		if s.Config.Provider != nil {
			s.withProvider, s.Config.Provider = o, nil
		}
	}
	s.withProvider(&s.Config)
	app, err := payd.New(s.Config)
	if err != nil {
		return err
	}
	if u, err := url.Parse(s.Config.PublicURL); err == nil {
		s.Mount = strings.TrimRight(u.Path, "/")
		s.URL = s.srv.URL + s.Mount
	}
	s.App = app
	s.Sandbox, _ = app.Provider.(*sandbox.Provider)
	s.Inbox, _ = app.Provider.(*smsinbox.Provider)
	return nil
}

// Run starts the engine's background work (verification, expiry, payouts,
// webhooks) until Close.
func (s *Server) Run() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	app := s.App
	go func() { defer close(done); _ = app.Run(ctx) }()
	s.onClose(func() { cancel(); <-done })
}

// Close stops the background work, the HTTP server and the store, in that
// order.
func (s *Server) Close() {
	s.mu.Lock()
	stops := s.stops
	s.stops = nil
	s.mu.Unlock()
	for i := len(stops) - 1; i >= 0; i-- {
		stops[i]()
	}
}

func (s *Server) onClose(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stops = append(s.stops, f)
}

// MustRunMain runs a payd on the wall clock with its background work, as
// payd serve does, and stops it when the test ends. Its webhooks may reach
// loopback receivers (the test's).
func MustRunMain(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	s, err := RunMain(tb.TempDir(), opts...)
	if err != nil {
		tb.Fatalf("start payd: %v", err)
	}
	s.tb = tb
	tb.Cleanup(s.Close)
	return s
}

// RunMain is MustRunMain outside a test (an Example): Close stops it.
func RunMain(dir string, opts ...Option) (*Server, error) {
	opts = append([]Option{func(c *payd.Config) { c.Webhooks = transport.NewWebhookClient(true) }}, opts...)
	s, err := Open(dir, opts...)
	if err != nil {
		return nil, err
	}
	s.Run()
	return s, nil
}

// MustOpen builds a payd on a mock clock set to Start, without background
// work: the test moves the clock and drives the engine. It stops when the
// test ends.
func MustOpen(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	mock := clock.NewMock()
	mock.Set(Start)
	opts = append([]Option{func(c *payd.Config) { c.Clock = mock }}, opts...)
	s, err := Open(tb.TempDir(), opts...)
	if err != nil {
		tb.Fatalf("start payd: %v", err)
	}
	s.Clock, s.tb = mock, tb
	tb.Cleanup(s.Close)
	return s
}

// Rebuild builds a new App (and provider) over the same store with the
// configuration changed by opts, as a restart with other flags would.
func (s *Server) Rebuild(opts ...Option) {
	s.helper()
	if err := s.build(opts); err != nil {
		s.fatal(err)
	}
}

// Restart closes the store and builds a new App over the same file, as a
// new process would, keeping the rest of the configuration.
func (s *Server) Restart() {
	s.helper()
	if err := s.Config.Store.Close(); err != nil {
		s.fatal(err)
	}
	store, err := sqlite.Open(context.Background(), s.DB, sandbox.Migrations(), smsinbox.Migrations())
	if err != nil {
		s.fatal(err)
	}
	s.onClose(func() { store.Close() })
	s.store, s.Config.Store = store, store
	s.Rebuild()
}

// Now is the server's time.
func (s *Server) Now() time.Time {
	if s.Clock != nil {
		return s.Clock.Now()
	}
	return time.Now()
}

func (s *Server) helper() {
	if s.tb != nil {
		s.tb.Helper()
	}
}

func (s *Server) fatal(err error) {
	if s.tb == nil {
		panic(err)
	}
	s.tb.Helper()
	s.tb.Fatal(err)
}
