package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"syscall"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/transport/webhook"
)

// WebhookTimeout bounds one delivery: connect, send, and the answer.
const WebhookTimeout = 15 * time.Second

// WebhookClient posts signed events to merchants' endpoints. It follows no
// redirects, uses no proxy, and checks every destination after DNS
// resolution, when the connection is made, so a name that resolves to a
// private address (or is rebound to one) is refused.
type WebhookClient struct {
	client *http.Client
}

var _ engine.WebhookClient = (*WebhookClient)(nil)

// ErrRefusedDestination is the failure of a delivery to an address that
// webhooks may not reach.
var ErrRefusedDestination = errors.New("destination refused")

// NewWebhookClient returns a client. With allowPrivate, loopback, private
// and link-local destinations are allowed (for local receivers only).
func NewWebhookClient(allowPrivate bool) *WebhookClient {
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	if !allowPrivate {
		dialer.Control = refuseNonPublic
	}
	return &WebhookClient{client: &http.Client{
		Timeout: WebhookTimeout,
		Transport: &http.Transport{
			Proxy:                 nil, // a proxy would connect for us, past the check
			DialContext:           dialer.DialContext,
			ForceAttemptHTTP2:     true,
			TLSHandshakeTimeout:   10 * time.Second,
			ResponseHeaderTimeout: WebhookTimeout,
			MaxIdleConnsPerHost:   4,
			IdleConnTimeout:       90 * time.Second,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// refuseNonPublic is the dialer's Control: it runs after DNS resolution,
// on the address about to be connected to, before any packet is sent.
func refuseNonPublic(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrRefusedDestination, address)
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || !PublicAddress(ip) {
		return fmt.Errorf("%w: %s is not a public address", ErrRefusedDestination, host)
	}
	return nil
}

// nonPublic are the ranges a webhook may never reach without the operator's
// leave, beyond what netip classifies (loopback, private, link-local,
// multicast, unspecified): special-purpose blocks of the IANA registries,
// and every IPv6 form that carries an IPv4 address (which may be private)
// other than IPv4-mapped, which PublicAddress judges by its IPv4.
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation (TEST-NET-1)
	netip.MustParsePrefix("192.88.99.0/24"),  // deprecated 6to4 relay anycast
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // documentation (TEST-NET-2)
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation (TEST-NET-3)
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, and broadcast
	netip.MustParsePrefix("::/96"),           // IPv4-compatible: embeds any IPv4 address
	netip.MustParsePrefix("::ffff:0:0:0/96"), // IPv4-translated (SIIT): embeds any IPv4 address
	netip.MustParsePrefix("64:ff9b::/96"),    // NAT64: may reach any IPv4 address
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64
	netip.MustParsePrefix("100::/64"),        // discard
	netip.MustParsePrefix("2001::/23"),       // IETF protocol assignments (Teredo, ORCHID...)
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("2002::/16"),       // 6to4: embeds an IPv4 address
	netip.MustParsePrefix("3fff::/20"),       // documentation
	netip.MustParsePrefix("5f00::/16"),       // SRv6 segment identifiers
	netip.MustParsePrefix("fec0::/10"),       // deprecated site-local
}

// PublicAddress reports whether a webhook may be delivered to ip without
// the operator allowing private destinations. IPv4-mapped IPv6 addresses
// (::ffff:127.0.0.1) are judged as the IPv4 address they carry.
func PublicAddress(ip netip.Addr) bool {
	ip = ip.Unmap()
	if !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// Deliver posts one webhook, signed with every given secret.
func (c *WebhookClient) Deliver(ctx context.Context, req engine.WebhookRequest) engine.WebhookResult {
	ts := req.Timestamp.Unix()
	sig, err := webhook.SignatureHeader(req.Secrets, req.MessageID, ts, req.Body)
	if err != nil {
		return engine.WebhookResult{Err: err}
	}
	httpReq, err := http.NewRequestWithContext(ctx, http.MethodPost, req.URL, bytes.NewReader(req.Body))
	if err != nil {
		return engine.WebhookResult{Err: err}
	}
	httpReq.Header.Set("Content-Type", "application/json")
	httpReq.Header.Set("User-Agent", "payd-webhooks/1")
	httpReq.Header.Set(webhook.HeaderID, req.MessageID)
	httpReq.Header.Set(webhook.HeaderTimestamp, strconv.FormatInt(ts, 10))
	httpReq.Header.Set(webhook.HeaderSignature, sig)
	res, err := c.client.Do(httpReq)
	if err != nil {
		return engine.WebhookResult{Err: err}
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10)) // lets the connection be reused
	result := engine.WebhookResult{StatusCode: res.StatusCode}
	if res.StatusCode == http.StatusTooManyRequests || res.StatusCode == http.StatusServiceUnavailable {
		result.RetryAfter = retryAfter(res.Header.Get("Retry-After"), req.Timestamp)
	}
	return result
}

// retryAfter reads a Retry-After header: delay seconds or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if secs, err := strconv.Atoi(v); err == nil && secs > 0 {
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// PostIPN posts an UddoktaPay-style IPN: body with the given headers (the
// compat key), through the same client, so the same destination rules
// apply as to webhooks.
func (c *WebhookClient) PostIPN(ctx context.Context, url string, header map[string]string, body []byte) engine.WebhookResult {
	httpReq, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return engine.WebhookResult{Err: err}
	}
	httpReq.Header.Set("Content-Type", "application/json")
	httpReq.Header.Set("User-Agent", "payd-ipn/1")
	for k, v := range header {
		httpReq.Header.Set(k, v)
	}
	res, err := c.client.Do(httpReq)
	if err != nil {
		return engine.WebhookResult{Err: err}
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	result := engine.WebhookResult{StatusCode: res.StatusCode}
	if res.StatusCode == http.StatusTooManyRequests || res.StatusCode == http.StatusServiceUnavailable {
		result.RetryAfter = retryAfter(res.Header.Get("Retry-After"), time.Now())
	}
	return result
}
