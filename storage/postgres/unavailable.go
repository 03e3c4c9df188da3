package postgres

import (
	"context"
	"errors"
	"io"
	"net"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/payd-engine/payd/engine"
)

// Causes of a transaction that failed because no writable primary was
// reachable, the labels of DBHealth.Failures.
const (
	causeConnect            = "connect"              // no server took the connection (down, or only standbys)
	causeShutdown           = "shutdown"             // 57P01 admin_shutdown, 57P02 crash_shutdown
	causeStarting           = "starting"             // 57P03 cannot_connect_now: starting up or recovering
	causeReadOnly           = "read_only"            // 25006: a standby, or a primary being demoted
	causeTooManyConnections = "too_many_connections" // 53300
	causeConnectionLost     = "connection_lost"      // the connection broke mid-transaction
)

var causes = [...]string{causeConnect, causeShutdown, causeStarting, causeReadOnly, causeTooManyConnections, causeConnectionLost}

// unavailableError is a driver error that says the database cannot take
// the transaction now. It is engine.ErrUnavailable to errors.Is, and
// unwraps to the driver's error for the log.
type unavailableError struct {
	cause string
	err   error
}

func (e *unavailableError) Error() string {
	return "postgres: database unavailable (" + e.cause + "): " + e.err.Error()
}
func (e *unavailableError) Unwrap() error        { return e.err }
func (e *unavailableError) Is(target error) bool { return target == engine.ErrUnavailable }

// unavailableCause says whether err means that no writable primary is
// reachable now, and why. A context that ended is the caller's doing,
// never the database's.
func unavailableCause(ctx context.Context, err error) (string, bool) {
	if err == nil || ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return "", false
	}
	if errors.Is(err, errStandby) {
		return causeReadOnly, true
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "57P01" || pe.Code == "57P02":
			return causeShutdown, true
		case pe.Code == "57P03":
			return causeStarting, true
		case pe.Code == "25006":
			return causeReadOnly, true
		case pe.Code == "53300":
			return causeTooManyConnections, true
		case len(pe.Code) == 5 && pe.Code[:2] == "08": // connection exception
			return causeConnectionLost, true
		}
		if _, ok := errors.AsType[*pgconn.ConnectError](err); !ok {
			return "", false // the server answered: a statement's own error
		}
	}
	if _, ok := errors.AsType[*pgconn.ConnectError](err); ok {
		return causeConnect, true
	}
	if errors.Is(err, pgconn.ErrConnClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE) {
		return causeConnectionLost, true
	}
	if _, ok := errors.AsType[*net.OpError](err); ok {
		return causeConnectionLost, true
	}
	return "", false
}

// health is the store's DBHealth, kept with atomics: every transaction
// reports to it, and while the database answers that costs one load.
type health struct {
	downSince  atomic.Int64 // unix nanoseconds; 0 while available
	outages    atomic.Int64
	downTotal  atomic.Int64 // nanoseconds
	reconnects atomic.Int64
	failures   [len(causes)]atomic.Int64
}

// errStandby is Ready's answer on a server in recovery: a standby, which
// answers reads and refuses every write.
var errStandby = errors.New("postgres: the server is a standby (in recovery), not a writable primary")

// observe notes the outcome of a transaction (or a statement of its own)
// and returns err, marked engine.ErrUnavailable when it means that no
// writable primary was reachable. Only a write that succeeded (or Ready,
// which checks for a primary) ends an outage: a standby answers reads.
//
// began (unix nanoseconds) is when the transaction started: one that began
// before the outage did (a commit that made it just before the primary
// died) ends nothing.
func (h *health) observe(ctx context.Context, err error, wrote bool, began int64) error {
	cause, down := unavailableCause(ctx, err)
	if !down {
		if err == nil && wrote {
			h.up(began)
		}
		return err
	}
	for i, c := range causes {
		if c == cause {
			h.failures[i].Add(1)
		}
	}
	h.downSince.CompareAndSwap(0, time.Now().UnixNano())
	return &unavailableError{cause: cause, err: err}
}

// up ends the outage under way, if any, after a write that began at
// began succeeded.
func (h *health) up(began int64) {
	since := h.downSince.Load()
	if since == 0 || began < since || !h.downSince.CompareAndSwap(since, 0) {
		return
	}
	h.outages.Add(1)
	h.downTotal.Add(max(time.Now().UnixNano()-since, 0))
}

// connected counts a new connection as a reconnect during an outage.
func (h *health) connected() {
	if h.downSince.Load() != 0 {
		h.reconnects.Add(1)
	}
}

func (h *health) snapshot() engine.DBHealth {
	d := engine.DBHealth{
		Outages: h.outages.Load(), UnavailableTotal: time.Duration(h.downTotal.Load()),
		Reconnects: h.reconnects.Load(), Failures: make(map[string]int64, len(causes)),
	}
	if since := h.downSince.Load(); since != 0 {
		d.UnavailableSince = time.Unix(0, since)
	}
	for i, c := range causes {
		d.Failures[c] = h.failures[i].Load()
	}
	return d
}

var _ engine.DBHealther = (*Store)(nil)

// DBHealth reports the database's availability as this store saw it
// (engine.DBHealther).
func (s *Store) DBHealth() engine.DBHealth { return s.health.snapshot() }
