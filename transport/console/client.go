package console

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// TrustedProxies are the reverse proxies in front of payd whose
// X-Forwarded-For and X-Forwarded-Proto are believed. The zero value
// trusts none: the client is the connection's peer.
type TrustedProxies struct {
	prefixes []netip.Prefix
}

// ParseTrustedProxies reads a comma- or space-separated list of IP
// addresses and CIDR prefixes ("127.0.0.1, 10.0.0.0/8, fd00::/8").
func ParseTrustedProxies(list string) (TrustedProxies, error) {
	var t TrustedProxies
	for _, f := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		var p netip.Prefix
		if strings.Contains(f, "/") {
			var err error
			if p, err = netip.ParsePrefix(f); err != nil {
				return TrustedProxies{}, fmt.Errorf("%q is not an IP address or CIDR prefix", f)
			}
			if p.Addr().Is4In6() {
				if p.Bits() < 96 {
					return TrustedProxies{}, fmt.Errorf("%q is not an IP address or CIDR prefix", f)
				}
				p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
			}
		} else {
			a, err := netip.ParseAddr(f)
			if err != nil || a.Zone() != "" {
				return TrustedProxies{}, fmt.Errorf("%q is not an IP address or CIDR prefix", f)
			}
			a = a.Unmap()
			p = netip.PrefixFrom(a, a.BitLen())
		}
		t.prefixes = append(t.prefixes, p.Masked())
	}
	return t, nil
}

// Contains reports whether a is a trusted proxy's address.
func (t TrustedProxies) Contains(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range t.prefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// String lists the prefixes, as ParseTrustedProxies reads them.
func (t TrustedProxies) String() string {
	s := make([]string, len(t.prefixes))
	for i, p := range t.prefixes {
		s[i] = p.String()
	}
	return strings.Join(s, ",")
}

// The client of a request. The console derives it once a request, in
// withClient: its address (for throttles) and whether the cookies set for
// it are Secure. Every per-client limit of the console keys on clientNet.

type clientInfo struct {
	// addr is the client's address; invalid if the peer's is not an IP's.
	addr   netip.Addr
	peer   string // RemoteAddr, the key when addr is invalid
	secure bool
}

type clientKey struct{}

// withClient derives the client of each request for clientAddr,
// clientNet and the cookies.
func (s *server) withClient(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := &clientInfo{addr: s.proxies.client(r), peer: r.RemoteAddr, secure: s.secureCookies(r)}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), clientKey{}, c)))
	})
}

// clientOf is the client withClient derived; a request that did not pass
// there is its peer's, with Secure cookies.
func clientOf(r *http.Request) *clientInfo {
	if c, ok := r.Context().Value(clientKey{}).(*clientInfo); ok {
		return c
	}
	return &clientInfo{addr: peerAddr(r.RemoteAddr), peer: r.RemoteAddr, secure: true}
}

// clientAddr is the address of r's client: the connection's peer or,
// when the peer is a trusted proxy, the right-most X-Forwarded-For address
// that is not a trusted proxy's.
func clientAddr(r *http.Request) string {
	c := clientOf(r)
	if !c.addr.IsValid() {
		return c.peer
	}
	return c.addr.String()
}

// clientNet is what a per-client limit counts: the client's IPv4 address,
// or the /64 of its IPv6 address, since one line or host gets a whole /64
// and could spend a fresh address on every try.
func clientNet(r *http.Request) string {
	c := clientOf(r)
	switch {
	case !c.addr.IsValid():
		return c.peer
	case c.addr.Is6():
		return netip.PrefixFrom(c.addr, 64).Masked().String()
	}
	return c.addr.String()
}

// peerAddr is the IP address of a RemoteAddr, IPv4-mapped ones as IPv4.
func peerAddr(remote string) netip.Addr {
	if ap, err := netip.ParseAddrPort(remote); err == nil {
		return ap.Addr().Unmap().WithZone("")
	}
	if a, err := netip.ParseAddr(remote); err == nil {
		return a.Unmap().WithZone("")
	}
	return netip.Addr{}
}

// client is the client's address: X-Forwarded-For is read only when the
// peer is a trusted proxy, right to left, past the trusted proxies' own
// addresses. What lies left of the first untrusted address the client
// wrote itself and is never read.
func (t TrustedProxies) client(r *http.Request) netip.Addr {
	a := peerAddr(r.RemoteAddr)
	if !a.IsValid() || !t.Contains(a) {
		return a
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		h := strings.TrimSpace(hops[i])
		if h == "" {
			continue
		}
		hop := peerAddr(h)
		if !hop.IsValid() {
			hop = peerAddr(strings.Trim(h, "[]"))
		}
		if !hop.IsValid() {
			return a // not an address a proxy wrote: the last trusted hop is what is known
		}
		if !t.Contains(hop) {
			return hop
		}
		a = hop
	}
	return a
}

// proxyHeaders are headers only a proxy adds to a request.
var proxyHeaders = []string{"X-Forwarded-For", "X-Forwarded-Proto", "X-Forwarded-Host", "X-Real-Ip", "Forwarded", "Via"}

// secureCookies decides whether the cookies set for r are Secure:
//
//  1. an https public URL says how browsers reach payd: Secure;
//  2. a request over TLS: Secure;
//  3. a request from a trusted proxy: Secure unless the proxy's one
//     X-Forwarded-Proto says http (a proxy that sends none gets Secure);
//  4. otherwise Secure unless the request looks like a browser on this
//     machine talking to a loopback listener (localBrowser), which would
//     drop a Secure cookie sent over http.
//
// The Host header alone does not do: a proxy rewrites it to the upstream's
// name (nginx's proxy_pass sends "127.0.0.1:8080").
func (s *server) secureCookies(r *http.Request) bool {
	if s.httpsURL.Load() || r.TLS != nil {
		return true
	}
	if peer := peerAddr(r.RemoteAddr); peer.IsValid() && s.proxies.Contains(peer) {
		v := r.Header.Values("X-Forwarded-Proto")
		return len(v) != 1 || !strings.EqualFold(strings.TrimSpace(v[0]), "http")
	}
	return !localBrowser(r)
}

// localBrowser reports whether r came straight to a loopback listener from
// a browser that names a loopback host: HTTP/1.1 or later (nginx's
// proxy_pass speaks HTTP/1.0 by default) with none of a proxy's headers.
func localBrowser(r *http.Request) bool {
	local, _ := r.Context().Value(http.LocalAddrContextKey).(*net.TCPAddr)
	if local == nil || !local.IP.IsLoopback() || !r.ProtoAtLeast(1, 1) || !loopbackHost(r.Host) {
		return false
	}
	for _, h := range proxyHeaders {
		if len(r.Header.Values(h)) > 0 {
			return false
		}
	}
	return true
}

func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil && a.Unmap().IsLoopback()
}
