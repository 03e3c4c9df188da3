// Package signing computes and checks the HMAC signatures of H2H requests,
// for the server and for merchants' clients alike.
//
// The canonical request is five parts joined by "\n": "v1", the
// X-Service-Timestamp value, the upper-case HTTP method, the request target
// exactly as sent (path plus "?query" if any) and the exact body bytes. The
// signature header is "v1=" + unpadded base64url(HMAC-SHA256(secret, canonical)).
package signing

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"hash"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Header names of a signed request.
const (
	TimestampHeader = "X-Service-Timestamp"
	SignatureHeader = "X-Service-Signature"
)

// Tolerance is how far a request's timestamp may be from the server's clock.
const Tolerance = 300 * time.Second

// Reasons a signature is refused.
var (
	ErrMissing   = errors.New("missing_signature")
	ErrMalformed = errors.New("malformed_signature")
	ErrStale     = errors.New("stale_signature")
	ErrInvalid   = errors.New("invalid_signature")
)

// wellFormed reports whether timestamp is digits and signature "v1="
// and base64url characters, within their bounds. (Byte loops: the two
// regular expressions they replace cost a third of the check.)
func wellFormed(timestamp, signature string) bool {
	if len(timestamp) > 20 || len(signature) > 128 || len(signature) <= len("v1=") || signature[:len("v1=")] != "v1=" {
		return false
	}
	for i := 0; i < len(timestamp); i++ {
		if c := timestamp[i]; c < '0' || c > '9' {
			return false
		}
	}
	for i := len("v1="); i < len(signature); i++ {
		switch c := signature[i]; {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// Sign returns the X-Service-Signature value of a request.
func Sign(secret []byte, timestamp, method, target string, body []byte) string {
	return "v1=" + base64.RawURLEncoding.EncodeToString(mac(secret, timestamp, method, target, body))
}

// Timestamp formats t as an X-Service-Timestamp value.
func Timestamp(t time.Time) string { return strconv.FormatInt(t.Unix(), 10) }

func mac(secret []byte, timestamp, method, target string, body []byte) []byte {
	h, pool := keyedMAC(secret)
	defer pool.Put(h)
	h.Reset()
	// The parts before the body in one write: one allocation, not five.
	head := make([]byte, 0, len("v1\n\n\n\n")+len(timestamp)+len(method)+len(target))
	head = append(append(append(head, "v1\n"...), timestamp...), '\n')
	head = append(append(append(append(head, strings.ToUpper(method)...), '\n'), target...), '\n')
	h.Write(head)
	h.Write(body)
	return h.Sum(make([]byte, 0, sha256.Size))
}

// keyedMACs keeps, per secret, HMAC states already keyed. Reset restores
// one's keyed state from a copy (crypto/hmac keeps one after its first
// Reset) instead of hashing the key's two padded blocks again, and reuse
// saves the four allocations of hmac.New: together about a tenth of a
// signed GET's signature check. Secrets are held as the key cache holds
// them; the map is emptied when it reaches maxKeyedMACs, so rotated
// secrets do not accumulate.
var keyedMACs struct {
	sync.RWMutex
	pools map[string]*sync.Pool
}

const maxKeyedMACs = 4096

// keyedMAC returns an HMAC-SHA256 of secret, in any state, and the pool to
// return it to.
func keyedMAC(secret []byte) (hash.Hash, *sync.Pool) {
	keyedMACs.RLock()
	pool := keyedMACs.pools[string(secret)]
	keyedMACs.RUnlock()
	if pool == nil {
		key := bytes.Clone(secret)
		pool = &sync.Pool{New: func() any { return hmac.New(sha256.New, key) }}
		keyedMACs.Lock()
		if len(keyedMACs.pools) >= maxKeyedMACs || keyedMACs.pools == nil {
			keyedMACs.pools = make(map[string]*sync.Pool)
		}
		if p, ok := keyedMACs.pools[string(key)]; ok {
			pool = p
		} else {
			keyedMACs.pools[string(key)] = pool
		}
		keyedMACs.Unlock()
	}
	return pool.Get().(hash.Hash), pool
}

func Verify(secrets [][]byte, timestamp, signature, method, target string, body []byte, now time.Time) error {
	if timestamp == "" || signature == "" {
		return ErrMissing
	}
	if !wellFormed(timestamp, signature) {
		return ErrMalformed
	}
	ts, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return ErrStale // digits, but beyond any clock
	}
	if skew := now.Unix() - ts; skew > int64(Tolerance/time.Second) || skew < -int64(Tolerance/time.Second) {
		return ErrStale
	}
	var buf [96]byte // 128 base64 characters at most
	n, err := base64.RawURLEncoding.Decode(buf[:], []byte(signature[len("v1="):]))
	if err != nil {
		return ErrMalformed
	}
	given := buf[:n]
	ok := false
	for _, s := range secrets {
		// Check every secret so the time taken does not tell which matched.
		ok = hmac.Equal(given, mac(s, timestamp, method, target, body)) || ok
	}
	if !ok {
		return ErrInvalid
	}
	return nil
}
