package engine

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"time"
)

// Identifier prefixes fixed by the contract, and payd's own.
const (
	PrefixDeposit      = "dep_"
	PrefixWithdrawal   = "wd_"
	PrefixRefund       = "rf_"
	PrefixAttempt      = "att_"
	PrefixEvent        = "evt_"
	PrefixOrganization = "org_"
	PrefixAPIKey       = "key_"
	PrefixWallet       = "wal_"
	PrefixJournal      = "jnl_"
	PrefixEndpoint     = "we_"
	PrefixDelivery     = "dlv_"
)

// crockford is Crockford's base32 alphabet in lower case: no padding, no
// ambiguous letters, and byte order equals lexical order.
const crockford = "0123456789abcdefghjkmnpqrstvwxyz"

// NewID returns prefix followed by 26 characters: 48 bits of milliseconds then
// 80 random bits (a ULID). Time order keeps B-tree inserts local as tables grow.
func NewID(prefix string, now time.Time) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(now.UnixMilli())<<16)
	if _, err := rand.Read(b[6:]); err != nil {
		panic("payd: crypto/rand failed: " + err.Error())
	}
	out := make([]byte, len(prefix), len(prefix)+26)
	copy(out, prefix)
	// 128 bits as 26 base32 digits, least significant digit last.
	hi := binary.BigEndian.Uint64(b[:8])
	lo := binary.BigEndian.Uint64(b[8:])
	var digits [26]byte
	for i := 25; i >= 0; i-- {
		digits[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(append(out, digits[:]...))
}

// RandomToken returns n random bytes as unpadded base64url: for secrets and
// unguessable URLs.
func RandomToken(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("payd: crypto/rand failed: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(b)
}
