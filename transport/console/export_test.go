package console

import (
	"crypto/sha1"
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
