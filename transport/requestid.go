package transport

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"strings"
)

// RequestIDHeader carries a request's ID: a client may send its own, and
// every answer of the API names the one its log lines carry.
const RequestIDHeader = "X-Request-Id"

// maxRequestIDLen bounds a client's request ID: longer ones are replaced.
const maxRequestIDLen = 64

type requestIDKey struct{}

// RequestID is the ID of the request whose context ctx is, or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// requestID keeps the client's X-Request-Id when it is sane (one value, 1
// to 64 of HTTP's token characters, so it can neither forge a log line nor
// bloat one) and otherwise makes one.
func requestID(r *http.Request) string {
	if values := r.Header.Values(RequestIDHeader); len(values) == 1 && saneRequestID(values[0]) {
		return values[0]
	}
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

func saneRequestID(id string) bool {
	if id == "" || len(id) > maxRequestIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// LogHandler wraps h so that every record logged with a request's context
// carries its request_id, whoever logs it (the transport, the engine, a
// provider).
func LogHandler(h slog.Handler) slog.Handler {
	if _, wrapped := h.(requestIDHandler); wrapped {
		return h
	}
	return requestIDHandler{h}
}

type requestIDHandler struct{ slog.Handler }

func (h requestIDHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := RequestID(ctx); id != "" {
		r.AddAttrs(slog.String("request_id", id))
	}
	return h.Handler.Handle(ctx, r)
}

func (h requestIDHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return requestIDHandler{h.Handler.WithAttrs(attrs)}
}

func (h requestIDHandler) WithGroup(name string) slog.Handler {
	return requestIDHandler{h.Handler.WithGroup(name)}
}
