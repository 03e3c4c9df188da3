package console

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1"
	"crypto/subtle"
	"encoding/base32"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"strings"
	"time"

	"golang.org/x/crypto/argon2"
)

// Passwords: argon2id (RFC 9106) with OWASP's parameters for it (19 MiB,
// two passes, one lane), encoded as the PHC string format so that
// stronger parameters can be introduced while old hashes still verify.

// argonParams are the cost parameters of a password hash.
type argonParams struct {
	memoryKiB uint32
	passes    uint32
	lanes     uint8
}

var defaultArgon = argonParams{memoryKiB: 19 * 1024, passes: 2, lanes: 1}

// MinPasswordLength is the shortest password an operator may set.
const MinPasswordLength = 12

const argonKeyLength = 32

// Password checks are bounded: at most passwordChecks argon2id hashes run
// at once (each holds its 19 MiB until it ends), and at most
// passwordChecksWaiting more wait for one. A login or setup past that is
// refused at once without a hash, so that a flood from many networks
// neither queues without bound in front of the operators' own logins nor
// grows the process.
const passwordChecks, passwordChecksWaiting = 2, 8

// hashGate admits password checks: tickets bounds those running and
// waiting, slots those running.
type hashGate struct{ tickets, slots chan struct{} }

func newHashGate(running, waiting int) *hashGate {
	return &hashGate{tickets: make(chan struct{}, running+waiting), slots: make(chan struct{}, running)}
}

// passwordGate is the process's: its cores and memory are what it shares.
var passwordGate = newHashGate(passwordChecks, passwordChecksWaiting)

// enter waits for a slot and returns its release, or false at once when
// as many checks run and wait as may (or when ctx ends while waiting).
func (g *hashGate) enter(ctx context.Context) (leave func(), ok bool) {
	select {
	case g.tickets <- struct{}{}:
	default:
		return nil, false
	}
	select {
	case g.slots <- struct{}{}:
	case <-ctx.Done():
		<-g.tickets
		return nil, false
	}
	return func() { <-g.slots; <-g.tickets }, true
}

// argonKey is an argon2id hash; callers hold a slot of passwordGate.
func argonKey(password, salt []byte, passes, memoryKiB uint32, lanes uint8, keyLen uint32) []byte {
	return argonIDKey(password, salt, passes, memoryKiB, lanes, keyLen)
}

// argonIDKey computes a hash; tests replace it to count or hold hashes.
var argonIDKey = argon2.IDKey

// hashPassword returns the PHC encoding of password's argon2id hash under
// a fresh salt.
func hashPassword(password string, p argonParams) string {
	salt := make([]byte, 16)
	_, _ = rand.Read(salt)
	key := argonKey([]byte(password), salt, p.passes, p.memoryKiB, p.lanes, argonKeyLength)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, p.memoryKiB, p.passes, p.lanes,
		b64.EncodeToString(salt), b64.EncodeToString(key))
}

// checkPassword reports whether password matches the encoded hash, in time
// that does not depend on where they differ.
func checkPassword(encoded, password string) bool {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[1] != "argon2id" || parts[2] != fmt.Sprintf("v=%d", argon2.Version) {
		return false
	}
	var p argonParams
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.memoryKiB, &p.passes, &p.lanes); err != nil ||
		p.memoryKiB < 8 || p.memoryKiB > 1<<21 || p.passes < 1 || p.passes > 10 || p.lanes < 1 {
		return false
	}
	b64 := base64.RawStdEncoding
	salt, err1 := b64.DecodeString(parts[4])
	want, err2 := b64.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(want) == 0 {
		return false
	}
	got := argonKey([]byte(password), salt, p.passes, p.memoryKiB, p.lanes, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1
}

// checkNewPassword says what is wrong with a password an operator chose.
func checkNewPassword(password, confirm string) error {
	switch {
	case len([]rune(password)) < MinPasswordLength:
		return errors.New("pw_short")
	case len(password) > 1024:
		return errors.New("pw_long")
	case password != confirm:
		return errors.New("pw_mismatch")
	}
	return nil
}

// The second factor: TOTP (RFC 6238) over HOTP (RFC 4226) with HMAC-SHA-1,
// 30-second steps and six digits, what every authenticator app speaks.

const (
	totpStep   = 30 * time.Second
	totpDigits = 6
	// totpSkew is how many steps a code may be early or late.
	totpSkew = 1
)

// totpCode is the RFC 4226 code of counter under secret.
func totpCode(h func() hash.Hash, secret []byte, counter int64, digits int) string {
	mac := hmac.New(h, secret)
	var msg [8]byte
	binary.BigEndian.PutUint64(msg[:], uint64(counter))
	mac.Write(msg[:])
	sum := mac.Sum(nil)
	off := sum[len(sum)-1] & 0x0f
	bin := binary.BigEndian.Uint32(sum[off:off+4]) & 0x7fffffff
	mod := uint32(1)
	for range digits {
		mod *= 10
	}
	return fmt.Sprintf("%0*d", digits, bin%mod)
}

// totpCounter is the RFC 6238 time step of t.
func totpCounter(t time.Time) int64 { return t.Unix() / int64(totpStep/time.Second) }

// checkTOTP returns the time step whose code code is, within totpSkew
// steps of now, or false. The caller refuses a step already used.
func checkTOTP(secret []byte, code string, now time.Time) (int64, bool) {
	code = strings.ReplaceAll(strings.TrimSpace(code), " ", "")
	if len(code) != totpDigits {
		return 0, false
	}
	c := totpCounter(now)
	for s := c - totpSkew; s <= c+totpSkew; s++ {
		if subtle.ConstantTimeCompare([]byte(totpCode(sha1.New, secret, s, totpDigits)), []byte(code)) == 1 {
			return s, true
		}
	}
	return 0, false
}

var totpEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// newTOTPSecret returns 20 random bytes (RFC 4226's recommended length) and
// their base32 text, which the operator types or scans into the app.
func newTOTPSecret() ([]byte, string) {
	b := make([]byte, 20)
	_, _ = rand.Read(b)
	return b, totpEncoding.EncodeToString(b)
}

// parseTOTPSecret reads the base32 text newTOTPSecret made.
func parseTOTPSecret(s string) ([]byte, error) {
	b, err := totpEncoding.DecodeString(strings.ToUpper(strings.ReplaceAll(s, " ", "")))
	if err != nil || len(b) < 16 {
		return nil, errors.New("bad secret")
	}
	return b, nil
}
