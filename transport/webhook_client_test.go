package transport

import (
	"net/netip"
	"testing"
)

func TestPublicAddress(t *testing.T) {
	refused := []string{
		"127.0.0.1", "127.255.255.254", "10.0.0.1", "172.16.0.1", "172.31.255.255", "192.168.1.1",
		"169.254.169.254", "100.64.0.1", "0.0.0.0", "0.1.2.3", "192.0.0.8", "198.18.0.1", "224.0.0.1",
		"240.0.0.1", "255.255.255.255", "::1", "::", "fe80::1", "fc00::1", "fd12:3456::1", "ff02::1",
		"::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "64:ff9b::7f00:1", "2002:7f00:1::1",
		"2001:db8::1", "fec0::1",
	}
	for _, s := range refused {
		if PublicAddress(netip.MustParseAddr(s)) {
			t.Errorf("%s was allowed", s)
		}
	}
	for _, s := range []string{"8.8.8.8", "1.1.1.1", "203.0.114.1", "103.4.145.1", "2606:4700:4700::1111", "::ffff:8.8.8.8"} {
		if !PublicAddress(netip.MustParseAddr(s)) {
			t.Errorf("%s was refused", s)
		}
	}
}
