package console

import (
	"crypto/sha1"
	"maps"
	"time"
)

// TOTPCode is the code an authenticator app shows at t for a secret in
// the base32 text the setup page shows.
func TOTPCode(secret string, t time.Time) string {
	b, err := parseTOTPSecret(secret)
	if err != nil {
		panic(err)
	}
	return totpCode(sha1.New, b, totpCounter(t), totpDigits)
}

// SwapArgon makes every password hash f's until restore.
func SwapArgon(f func(password, salt []byte, passes, memoryKiB uint32, lanes uint8, keyLen uint32) []byte) (restore func()) {
	old := argonIDKey
	argonIDKey = f
	return func() { argonIDKey = old }
}

// The bounds of password checks: at most PasswordChecks hashes at once,
// PasswordChecksWaiting more waiting for one.
const PasswordChecks, PasswordChecksWaiting = passwordChecks, passwordChecksWaiting

// RouteRoles is the least role of each console route, by pattern.
func RouteRoles() map[string]string { return maps.Clone(routeRole) }
