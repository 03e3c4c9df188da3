package engine

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
)

// MasterKeySize is the length of the master key in bytes (AES-256).
const MasterKeySize = 32

// Keyring seals secrets that payd must be able to read back (signing and
// webhook secrets: an HMAC needs the secret itself, so it cannot be hashed)
// with AES-256-GCM under the server's master key.
type Keyring struct{ aead cipher.AEAD }

// NewKeyring returns a Keyring for a 32-byte master key.
func NewKeyring(masterKey []byte) (*Keyring, error) {
	if len(masterKey) != MasterKeySize {
		return nil, fmt.Errorf("master key must be %d bytes, got %d", MasterKeySize, len(masterKey))
	}
	block, err := aes.NewCipher(masterKey)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Keyring{aead: aead}, nil
}

// sealVersion is the first byte of a sealed value, so the format can change.
const sealVersion = 1

// Seal encrypts plaintext. The context (for example the owning row's ID) is
// authenticated but not stored: a sealed value copied to another row fails
// to open.
func (k *Keyring) Seal(plaintext []byte, context string) []byte {
	nonce := make([]byte, k.aead.NonceSize(), 1+k.aead.NonceSize()+len(plaintext)+k.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		panic("payd: crypto/rand failed: " + err.Error())
	}
	out := append([]byte{sealVersion}, nonce...)
	return k.aead.Seal(out, nonce, plaintext, []byte(context))
}

// ErrSealBroken is returned when a sealed value does not open: a wrong master
// key, a value moved between rows, or tampering.
var ErrSealBroken = errors.New("sealed secret does not open under this master key")

// Open decrypts a value made by Seal with the same context.
func (k *Keyring) Open(sealed []byte, context string) ([]byte, error) {
	n := k.aead.NonceSize()
	if len(sealed) < 1+n || sealed[0] != sealVersion {
		return nil, ErrSealBroken
	}
	plain, err := k.aead.Open(nil, sealed[1:1+n], sealed[1+n:], []byte(context))
	if err != nil {
		return nil, ErrSealBroken
	}
	return plain, nil
}
