package console

import "testing"

// BenchmarkLoginPasswordCheck is the argon2id check of one login (19 MiB,
// two passes, one lane): what a login costs the server, and a guesser.
func BenchmarkLoginPasswordCheck(b *testing.B) {
	h := hashPassword("correct horse battery staple", defaultArgon)
	for b.Loop() {
		if !checkPassword(h, "correct horse battery staple") {
			b.Fatal("refused")
		}
	}
}
