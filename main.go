package payd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// Main is a running payd: an App served over HTTP on a listener, with its
// background work. Run serves the App and starts its background work with
// App.Run (Main adds no other way to start it); Close drains the requests in
// flight, then stops the background work (work it leaves claimed is taken
// over when its lease runs out).
type Main struct {
	// App is what Main serves and runs.
	App *App
	// Logger receives the HTTP servers' errors.
	Logger *slog.Logger
	// ShutdownTimeout bounds how long Close drains requests in flight.
	ShutdownTimeout time.Duration

	srv      *http.Server
	ops      *http.Server // nil without RunOps
	console  *http.Server // nil without RunConsole
	served   chan error
	stopWork context.CancelFunc
	worked   chan error
}

// NewMain returns a Main for app; logger receives the HTTP server's errors.
func NewMain(app *App, logger *slog.Logger) *Main {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Main{App: app, Logger: logger, ShutdownTimeout: 20 * time.Second}
}

// Run serves the App on ln and starts its background work (App.Run); it
// returns at once. Served reports when the server stops by itself.
func (m *Main) Run(ln net.Listener) {
	m.srv = &http.Server{
		Handler:           m.App.Handler,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(m.Logger.Handler(), slog.LevelWarn),
	}
	var workCtx context.Context
	workCtx, m.stopWork = context.WithCancel(context.Background())
	m.worked = make(chan error, 1)
	go func() { m.worked <- m.App.Run(workCtx) }()
	m.served = make(chan error, 1)
	go func() { m.served <- m.srv.Serve(ln) }()
}

// RunOps serves the App's operations endpoints (OpsHandler: /metrics,
// /healthz, /readyz) on ln, apart from the API, until Close or Stop.
func (m *Main) RunOps(ln net.Listener) {
	m.ops = &http.Server{
		Handler:           m.App.OpsHandler(),
		ReadHeaderTimeout: 5 * time.Second,
		WriteTimeout:      30 * time.Second,
		ErrorLog:          slog.NewLogLogger(m.Logger.Handler(), slog.LevelWarn),
	}
	go func() { _ = m.ops.Serve(ln) }()
}

// RunConsole serves the operator console (App.Console, under /console) on
// ln, apart from the API, until Close or Stop. Its links follow the path
// of Config.PublicURL, as the API's do: a proxy in front of ln strips it.
func (m *Main) RunConsole(ln net.Listener) {
	m.console = &http.Server{
		Handler:           m.App.Console,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      30 * time.Second,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(m.Logger.Handler(), slog.LevelWarn),
	}
	go func() { _ = m.console.Serve(ln) }()
}

// Served receives the error of a server that stopped other than by Close.
func (m *Main) Served() <-chan error { return m.served }

// Close drains the requests in flight for up to ShutdownTimeout, then stops
// the background work, after the last request.
func (m *Main) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), m.ShutdownTimeout)
	defer cancel()
	var err error
	if serr := m.srv.Shutdown(ctx); serr != nil {
		err = fmt.Errorf("shutdown: %w", serr)
	} else if serr := <-m.served; !errors.Is(serr, http.ErrServerClosed) {
		err = serr
	}
	m.stop()
	return err
}

// stop ends the background work and waits for it, and closes the
// operations listener.
func (m *Main) stop() {
	m.stopWork()
	<-m.worked
	if m.ops != nil {
		m.ops.Close()
	}
	if m.console != nil {
		m.console.Close()
	}
}

// Stop ends the background work of a Main whose server already stopped by
// itself (its error came on Served).
func (m *Main) Stop() { m.stop() }
