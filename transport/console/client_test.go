package console

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestClientOfRequest: the client address and the network its limits
// count, from the peer and, behind a trusted proxy, X-Forwarded-For.
func TestClientOfRequest(t *testing.T) {
	proxies, err := ParseTrustedProxies("127.0.0.1, 10.0.0.0/8, fd00::/8")
	if err != nil {
		t.Fatal(err)
	}
	s := &server{proxies: proxies}
	for _, tc := range []struct {
		remote   string
		xff      []string
		addr, nw string
	}{
		{"198.51.100.7:5000", nil, "198.51.100.7", "198.51.100.7"},
		{"198.51.100.7:5000", []string{"203.0.113.1"}, "198.51.100.7", "198.51.100.7"}, // untrusted peer
		{"[2001:db8:1:2:3:4:5:6]:5000", nil, "2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"},
		{"[::ffff:198.51.100.7]:5000", nil, "198.51.100.7", "198.51.100.7"},
		{"127.0.0.1:5000", nil, "127.0.0.1", "127.0.0.1"}, // a proxy that names nobody
		{"127.0.0.1:5000", []string{"203.0.113.1"}, "203.0.113.1", "203.0.113.1"},
		{"127.0.0.1:5000", []string{"6.6.6.6, 203.0.113.1, 10.0.0.2"}, "203.0.113.1", "203.0.113.1"},
		{"127.0.0.1:5000", []string{"6.6.6.6", "203.0.113.1", "10.0.0.2"}, "203.0.113.1", "203.0.113.1"}, // header lines
		{"127.0.0.1:5000", []string{"[2001:db8::9]:443, fd00::1"}, "2001:db8::9", "2001:db8::/64"},
		{"127.0.0.1:5000", []string{"203.0.113.1:1234"}, "203.0.113.1", "203.0.113.1"},
		{"127.0.0.1:5000", []string{"10.0.0.3, 10.0.0.2"}, "10.0.0.3", "10.0.0.3"}, // every hop trusted
		{"127.0.0.1:5000", []string{"unknown, 10.0.0.2"}, "10.0.0.2", "10.0.0.2"},  // garbage: the last trusted hop
		{"127.0.0.1:5000", []string{"203.0.113.1, , "}, "203.0.113.1", "203.0.113.1"},
		{"pipe", nil, "pipe", "pipe"},
	} {
		r := httptest.NewRequest(http.MethodGet, "/console/login", nil)
		r.RemoteAddr = tc.remote
		for _, v := range tc.xff {
			r.Header.Add("X-Forwarded-For", v)
		}
		var addr, nw string
		s.withClient(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
			addr, nw = clientAddr(r), clientNet(r)
		})).ServeHTTP(httptest.NewRecorder(), r)
		if addr != tc.addr || nw != tc.nw {
			t.Errorf("%s %q: client %s in %s, want %s in %s", tc.remote, tc.xff, addr, nw, tc.addr, tc.nw)
		}
	}
}
