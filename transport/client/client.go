package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/payd-engine/payd/transport/signing"
)

// Defaults of a Client.
const (
	// DefaultRetries is how many times a call is retried after a network
	// failure or a 429/503 answer.
	DefaultRetries = 3
	// DefaultTimeout bounds one attempt of the default HTTP client.
	DefaultTimeout = 30 * time.Second
	// DefaultBackoffMin and DefaultBackoffMax bound the exponential,
	// jittered wait between retries after a network failure.
	DefaultBackoffMin = 250 * time.Millisecond
	DefaultBackoffMax = 5 * time.Second
	// MaxRetryAfter caps how long a Retry-After answer is waited for before
	// a retry; a longer wait is left to the caller (Error.RetryAfter).
	MaxRetryAfter = 30 * time.Second
)

// maxResponseBytes bounds how much of a response body is read. payd's
// answers are a few KiB (metadata is at most 8 KiB).
const maxResponseBytes = 1 << 20

// Client calls the payd API for one organization's API key. It is safe for
// concurrent use.
type Client struct {
	base       string // base URL without a trailing slash
	baseErr    error  // why base is unusable, reported by every call
	apiKey     string
	secret     []byte
	http       *http.Client
	retries    int
	clock      func() time.Time
	backoffMin time.Duration
	backoffMax time.Duration
	userAgent  string
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient sets the HTTP client, e.g. for a proxy, TLS settings or a
// different timeout. The default has a 30 s timeout and follows no
// redirects: a redirect would change the signed request target.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) {
		if hc != nil {
			c.http = hc
		}
	}
}

// WithRetries sets how many times a call is retried after a network
// failure or a 429/503 answer (default 3; 0 disables retries).
func WithRetries(n int) Option {
	return func(c *Client) { c.retries = max(n, 0) }
}

// WithClock sets the clock of request signatures (default time.Now). The
// server refuses timestamps more than five minutes from its own clock.
func WithClock(now func() time.Time) Option {
	return func(c *Client) {
		if now != nil {
			c.clock = now
		}
	}
}

// WithBackoff sets the bounds of the wait between retries after a network
// failure (and after a 429/503 without Retry-After): it starts near min and
// doubles up to max, with jitter so that clients do not retry in step.
func WithBackoff(minWait, maxWait time.Duration) Option {
	return func(c *Client) {
		if minWait > 0 {
			c.backoffMin = minWait
		}
		if maxWait > 0 {
			c.backoffMax = maxWait
		}
		c.backoffMax = max(c.backoffMax, c.backoffMin)
	}
}

// WithUserAgent sets the User-Agent header, e.g. to name your shop in the
// server's logs.
func WithUserAgent(ua string) Option {
	return func(c *Client) { c.userAgent = ua }
}

// New returns a client. baseURL includes the API prefix, e.g.
// "http://127.0.0.1:8080/api". apiKey is the bearer key; signingSecret is
// the H2H signing secret, which may be "" if you use redirect deposits and
// withdrawals only. A malformed baseURL is reported by every call.
func New(baseURL, apiKey, signingSecret string, opts ...Option) *Client {
	c := &Client{
		base:       strings.TrimRight(baseURL, "/"),
		apiKey:     apiKey,
		retries:    DefaultRetries,
		clock:      time.Now,
		backoffMin: DefaultBackoffMin,
		backoffMax: DefaultBackoffMax,
		userAgent:  "payd-go-client/1",
	}
	if signingSecret != "" {
		c.secret = []byte(signingSecret)
	}
	if u, err := url.Parse(c.base); err != nil {
		c.baseErr = fmt.Errorf("payd: base URL: %w", err)
	} else if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		c.baseErr = fmt.Errorf("payd: base URL %q: want http(s)://host[/prefix]", baseURL)
	}
	for _, o := range opts {
		o(c)
	}
	if c.http == nil {
		c.http = &http.Client{
			Timeout: DefaultTimeout,
			CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse
			},
		}
	}
	return c
}

// call is one operation: what to send and whether to sign it.
type call struct {
	method string
	path   string // below the base URL, already escaped: "/v1/deposits/dep_x"
	body   []byte // nil for no body
	signed bool
}

// response is a 2xx answer.
type response struct {
	status int
	body   []byte
}

// do sends c with retries. Each attempt is a new request with a fresh
// timestamp and signature over the same body. It returns the 2xx answer,
// an *Error for any other answer, or the last network error.
func (c *Client) do(ctx context.Context, cl call) (*response, error) {
	if c.baseErr != nil {
		return nil, c.baseErr
	}
	retried := false // an earlier attempt failed on the network, or answered 503
	for attempt := 0; ; attempt++ {
		resp, err := c.once(ctx, cl)
		var wait time.Duration
		switch {
		case err == nil:
			return resp, nil
		case ctx.Err() != nil:
			return nil, err
		case isAPIError(err):
			apiErr := err.(*Error)
			apiErr.Retried = retried
			if !retryableStatus(apiErr.StatusCode) || attempt >= c.retries {
				return nil, apiErr
			}
			// A 503 may come from a commit whose answer the database lost
			// (database_unavailable during a failover): the change may
			// have been made, as after a network failure.
			retried = retried || apiErr.StatusCode == http.StatusServiceUnavailable
			wait = apiErr.RetryAfter
			if wait == 0 {
				wait = c.backoff(attempt)
			}
			if wait > MaxRetryAfter || !fitsDeadline(ctx, wait) {
				return nil, apiErr // waiting is the caller's decision
			}
		case retryableNetError(err):
			retried = true
			if attempt >= c.retries {
				return nil, err
			}
			wait = c.backoff(attempt)
		default:
			return nil, err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("payd: %w while waiting to retry after: %w", ctx.Err(), err)
		case <-t.C:
		}
	}
}

// once sends one attempt.
func (c *Client) once(ctx context.Context, cl call) (*response, error) {
	var body io.Reader
	if cl.body != nil {
		body = bytes.NewReader(cl.body)
	}
	req, err := http.NewRequestWithContext(ctx, cl.method, c.base+cl.path, body)
	if err != nil {
		return nil, fmt.Errorf("payd: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+c.apiKey)
	req.Header.Set("Accept", "application/json")
	if c.userAgent != "" {
		req.Header.Set("User-Agent", c.userAgent)
	}
	if cl.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if cl.signed && c.secret != nil {
		// The signed target is the request target as Go writes it on the
		// request line: the escaped path (with the base URL's prefix).
		ts := signing.Timestamp(c.clock())
		req.Header.Set(signing.TimestampHeader, ts)
		req.Header.Set(signing.SignatureHeader, signing.Sign(c.secret, ts, cl.method, req.URL.RequestURI(), cl.body))
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return nil, err // the answer was lost on the way: a network failure
	}
	if len(data) > maxResponseBytes {
		return nil, fmt.Errorf("payd: %s %s: response larger than %d bytes", cl.method, cl.path, maxResponseBytes)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, newError(resp.StatusCode, resp.Header, data)
	}
	return &response{status: resp.StatusCode, body: data}, nil
}

func isAPIError(err error) bool {
	_, ok := err.(*Error)
	return ok
}

// retryableStatus: 429 (rate limited) and 503 (temporarily unavailable)
// are the only answers worth repeating; any other 4xx would be refused
// again, and a 500 may not be transient.
func retryableStatus(status int) bool {
	return status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable
}

// retryableNetError reports whether err is a network failure after which
// the same request may simply be sent again: a refused, reset or aborted
// connection, a timeout, or an answer cut short. Errors that would recur
// (a bad certificate, a malformed URL, an unknown host) are not.
func retryableNetError(err error) bool {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	for _, e := range []error{syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.ECONNABORTED,
		syscall.EPIPE, syscall.ETIMEDOUT, syscall.EHOSTUNREACH, syscall.ENETUNREACH, syscall.ENETDOWN} {
		if errors.Is(err, e) {
			return true
		}
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return dnsErr.IsTimeout || dnsErr.IsTemporary
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) {
		return true // dial, read or write failed on the connection
	}
	var netErr net.Error
	return errors.As(err, &netErr) && netErr.Timeout()
}

// backoff returns the wait before retry number attempt+1: exponential from
// backoffMin, capped at backoffMax, with "equal jitter" (half fixed, half
// random).
func (c *Client) backoff(attempt int) time.Duration {
	d := c.backoffMin
	for i := 0; i < attempt && d < c.backoffMax; i++ {
		d *= 2
	}
	d = min(d, c.backoffMax)
	half := d / 2
	return half + rand.N(half+1)
}

// fitsDeadline reports whether waiting d leaves ctx's deadline unreached.
func fitsDeadline(ctx context.Context, d time.Duration) bool {
	deadline, ok := ctx.Deadline()
	return !ok || time.Until(deadline) > d
}

// marshal encodes a request body without HTML escaping, so metadata
// strings go out (and come back) byte for byte.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("payd: encode request: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// decode parses a 2xx answer into v.
func decode(resp *response, v any) error {
	if err := json.Unmarshal(resp.body, v); err != nil {
		return fmt.Errorf("payd: decode %d answer: %w", resp.status, err)
	}
	return nil
}

// pathID escapes an identifier as one path segment, refusing values that
// cannot be one.
func pathID(what, id string) (string, error) {
	if id == "" || id == "." || id == ".." {
		return "", fmt.Errorf("payd: %s ID %q is not an identifier", what, id)
	}
	return url.PathEscape(id), nil
}
