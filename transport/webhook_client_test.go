package transport

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"syscall"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
)

func TestPublicAddress(t *testing.T) {
	refused := []string{
		"127.0.0.1", "127.255.255.254", "10.0.0.1", "172.16.0.1", "172.31.255.255", "192.168.1.1",
		"169.254.169.254", "100.64.0.1", "0.0.0.0", "0.1.2.3", "192.0.0.8", "198.18.0.1", "224.0.0.1",
		"240.0.0.1", "255.255.255.255", "::1", "::", "fe80::1", "fc00::1", "fd12:3456::1", "ff02::1",
		"::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "64:ff9b::7f00:1", "2002:7f00:1::1",
		"2001:db8::1", "fec0::1",
	}
	for _, s := range append(refused, issue15Refused...) {
		if PublicAddress(netip.MustParseAddr(s)) {
			t.Errorf("%s was allowed", s)
		}
	}
	for _, s := range issue15Public {
		if !PublicAddress(netip.MustParseAddr(s)) {
			t.Errorf("%s was refused", s)
		}
	}
}

// issue15Refused are the addresses the security review found let through,
// and their neighbours: documentation (TEST-NET-1..3, IPv6's), IPv4-
// compatible and IPv4-translated IPv6 carrying any IPv4, CGNAT and
// benchmarking edges, multicast and broadcast, NAT64 and 6to4 embedding a
// private IPv4, the deprecated 6to4 relay anycast, SRv6 SIDs.
var issue15Refused = []string{
	"192.0.2.1", "192.0.2.255", "198.51.100.7", "203.0.113.9", "203.0.113.255",
	"::7f00:1", "::a00:1", "::a9fe:a9fe", "::808:808", "::ffff:0:7f00:1", "::ffff:0:808:808",
	"100.64.0.0", "100.127.255.255", "198.18.0.0", "198.19.255.255",
	"224.0.0.251", "239.255.255.250", "ff0e::1", "ff05::2", "255.255.255.255",
	"64:ff9b::a00:1", "64:ff9b::c0a8:101", "64:ff9b:1::a9fe:a9fe", "2002:a00:1::1", "2002:c0a8:101::1",
	"2001:db8:ffff::1", "3fff::1", "192.88.99.1", "5f00::1",
}

// issue15Public are public addresses next to the refused ranges.
var issue15Public = []string{
	"8.8.8.8", "1.1.1.1", "203.0.114.1", "103.4.145.1", "2606:4700:4700::1111", "::ffff:8.8.8.8",
	"192.0.3.1", "198.51.99.1", "198.51.101.1", "203.0.112.1", "100.63.255.255", "100.128.0.1",
	"198.17.255.255", "198.20.0.1", "2001:db9::1", "2400:cb00::1",
}

// TestWebhookGuardRefusesAtDialTime dials each refused address through a
// dialer whose Control is the webhook client's guard, then, should the
// guard let it through, refuses it itself: no packet leaves for anything
// but loopback, and a guard that lets an address through fails the test.
func TestWebhookGuardRefusesAtDialTime(t *testing.T) {
	errLetThrough := errors.New("the guard let it through")
	d := &net.Dialer{Timeout: time.Second, Control: func(network, address string, c syscall.RawConn) error {
		if err := refuseNonPublic(network, address, c); err != nil {
			return err
		}
		return errLetThrough
	}}
	for _, s := range issue15Refused {
		_, err := d.DialContext(context.Background(), "tcp", net.JoinHostPort(s, "443"))
		if !errors.Is(err, ErrRefusedDestination) {
			t.Errorf("dial %s: %v, want %v", s, err, ErrRefusedDestination)
		}
	}
	for _, s := range issue15Public {
		_, err := d.DialContext(context.Background(), "tcp", net.JoinHostPort(s, "443"))
		if !errors.Is(err, errLetThrough) {
			t.Errorf("dial %s: %v, want it let through", s, err)
		}
	}

	// The client's own dialer uses the guard: a loopback receiver is
	// refused unless private destinations are allowed.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	req := engine.WebhookRequest{URL: srv.URL, MessageID: "msg_1", Timestamp: time.Now(), Body: []byte(`{}`), Secrets: []string{"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}}
	if res := NewWebhookClient(false).Deliver(context.Background(), req); !errors.Is(res.Err, ErrRefusedDestination) {
		t.Errorf("loopback receiver without allowPrivate: %+v", res)
	}
	if res := NewWebhookClient(true).Deliver(context.Background(), req); res.Err != nil || res.StatusCode != 200 {
		t.Errorf("loopback receiver with allowPrivate: %+v", res)
	}
}
