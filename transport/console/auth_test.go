package console

import (
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"hash"
	"strings"
	"testing"
	"time"
)

// RFC 6238, appendix B: the test vectors of TOTP with eight digits, for
// SHA-1, SHA-256 and SHA-512 with their seeds.
func TestTOTPMatchesRFC6238(t *testing.T) {
	seed20 := []byte("12345678901234567890")
	seed32 := []byte("12345678901234567890123456789012")
	seed64 := []byte(strings.Repeat("1234567890", 6) + "1234")
	algs := []struct {
		name string
		h    func() hash.Hash
		seed []byte
	}{{"SHA1", sha1.New, seed20}, {"SHA256", sha256.New, seed32}, {"SHA512", sha512.New, seed64}}
	vectors := []struct {
		unix  int64
		codes [3]string
	}{
		{59, [3]string{"94287082", "46119246", "90693936"}},
		{1111111109, [3]string{"07081804", "68084774", "25091201"}},
		{1111111111, [3]string{"14050471", "67062674", "99943326"}},
		{1234567890, [3]string{"89005924", "91819424", "93441116"}},
		{2000000000, [3]string{"69279037", "90698825", "38618901"}},
		{20000000000, [3]string{"65353130", "77737706", "47863826"}},
	}
	for _, v := range vectors {
		for i, a := range algs {
			got := totpCode(a.h, a.seed, totpCounter(time.Unix(v.unix, 0)), 8)
			if got != v.codes[i] {
				t.Errorf("%s at %d: %s, want %s", a.name, v.unix, got, v.codes[i])
			}
		}
	}
}

func TestCheckTOTP(t *testing.T) {
	secret := []byte("12345678901234567890")
	now := time.Unix(1111111111, 0)
	code := totpCode(sha1.New, secret, totpCounter(now), 6)
	step, ok := checkTOTP(secret, code, now)
	if !ok || step != totpCounter(now) {
		t.Fatalf("current code: step %d, ok %v", step, ok)
	}
	if _, ok := checkTOTP(secret, code, now.Add(30*time.Second)); !ok {
		t.Error("a code one step late is refused")
	}
	if _, ok := checkTOTP(secret, code, now.Add(90*time.Second)); ok {
		t.Error("a code three steps late is accepted")
	}
	if _, ok := checkTOTP(secret, "000000", now); ok && code != "000000" {
		t.Error("a wrong code is accepted")
	}
	b, text := newTOTPSecret()
	back, err := parseTOTPSecret(strings.ToLower(text))
	if err != nil || string(back) != string(b) {
		t.Errorf("secret round trip: %v", err)
	}
}

func TestPasswordHash(t *testing.T) {
	cheap := argonParams{memoryKiB: 64, passes: 1, lanes: 1}
	h := hashPassword("correct horse battery", cheap)
	if !strings.HasPrefix(h, "$argon2id$v=19$m=64,t=1,p=1$") {
		t.Fatalf("encoding %s", h)
	}
	if !checkPassword(h, "correct horse battery") {
		t.Error("the right password is refused")
	}
	if checkPassword(h, "correct horse batterz") {
		t.Error("a wrong password is accepted")
	}
	if h2 := hashPassword("correct horse battery", cheap); h2 == h {
		t.Error("two hashes of one password are equal: no salt")
	}
	for _, bad := range []string{"", "$argon2i$v=19$m=64,t=1,p=1$AAAA$AAAA", strings.Replace(h, "t=1", "t=0", 1)} {
		if checkPassword(bad, "correct horse battery") {
			t.Errorf("accepted against %q", bad)
		}
	}
}
