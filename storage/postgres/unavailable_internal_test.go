package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/payd-engine/payd/engine"
)

// TestUnavailableCause: the errors a failover shows the driver are
// engine.ErrUnavailable with their cause, and a statement's own errors,
// or a caller that went away, are not.
func TestUnavailableCause(t *testing.T) {
	// A real ConnectError: nothing listens on the port.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, connectErr := pgx.Connect(context.Background(), "postgres://u@"+addr+"/db?connect_timeout=2")
	if connectErr == nil {
		t.Fatal("connected to nothing")
	}
	for _, c := range []struct {
		err   error
		cause string
	}{
		{connectErr, causeConnect},
		{&pgconn.PgError{Code: "57P01", Message: "terminating connection due to administrator command"}, causeShutdown},
		{&pgconn.PgError{Code: "57P02"}, causeShutdown},
		{&pgconn.PgError{Code: "57P03", Message: "the database system is starting up"}, causeStarting},
		{fmt.Errorf("insert: %w", &pgconn.PgError{Code: "25006", Message: "cannot execute INSERT in a read-only transaction"}), causeReadOnly},
		{&pgconn.PgError{Code: "53300"}, causeTooManyConnections},
		{&pgconn.PgError{Code: "08006"}, causeConnectionLost},
		{fmt.Errorf("commit: %w", pgconn.ErrConnClosed), causeConnectionLost},
		{fmt.Errorf("failed to receive message: %w", io.ErrUnexpectedEOF), causeConnectionLost},
		{&net.OpError{Op: "read", Err: syscall.ECONNRESET}, causeConnectionLost},
		{errStandby, causeReadOnly},
		{&pgconn.PgError{Code: "23505"}, ""},
		{&pgconn.PgError{Code: "40001"}, ""},
		{pgx.ErrNoRows, ""},
		{engine.ErrNotFound, ""},
		{context.Canceled, ""},
		{errors.New("something else"), ""},
	} {
		cause, ok := unavailableCause(context.Background(), c.err)
		if cause != c.cause || ok != (c.cause != "") {
			t.Errorf("%v: cause %q %v, want %q", c.err, cause, ok, c.cause)
		}
		var h health
		got := h.observe(context.Background(), c.err, true, time.Now().UnixNano())
		if errors.Is(got, engine.ErrUnavailable) != (c.cause != "") || !errors.Is(got, c.err) {
			t.Errorf("%v: observed as %v", c.err, got)
		}
	}
	// A caller that went away is never the database's outage.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, ok := unavailableCause(ctx, fmt.Errorf("read: %w", io.ErrUnexpectedEOF)); ok {
		t.Error("a cancelled request counted as an outage")
	}
}

// TestHealthOutage: an outage starts with the first failure and ends with
// the next write that succeeded, not with a read (a standby answers reads)
// nor with a write that began before it.
func TestHealthOutage(t *testing.T) {
	var h health
	ctx := context.Background()
	h.connected()
	before := time.Now().UnixNano()
	_ = h.observe(ctx, pgconn.ErrConnClosed, true, time.Now().UnixNano())
	_ = h.observe(ctx, &pgconn.PgError{Code: "25006"}, true, time.Now().UnixNano())
	h.connected()
	_ = h.observe(ctx, nil, false, time.Now().UnixNano())
	_ = h.observe(ctx, nil, true, before) // a commit that began before the outage
	d := h.snapshot()
	if d.UnavailableSince.IsZero() || d.Outages != 0 || d.Reconnects != 1 ||
		d.Failures[causeConnectionLost] != 1 || d.Failures[causeReadOnly] != 1 {
		t.Fatalf("during the outage: %+v", d)
	}
	_ = h.observe(ctx, nil, true, time.Now().UnixNano())
	if d := h.snapshot(); !d.UnavailableSince.IsZero() || d.Outages != 1 || d.UnavailableTotal <= 0 {
		t.Fatalf("after it: %+v", d)
	}
}
