// Package webhook implements the Standard Webhooks signing scheme that payd
// signs its events with, for the server and for merchants verifying them.
//
// Each delivery carries webhook-id (the event ID, the same on every retry),
// webhook-timestamp (Unix seconds, fresh on every attempt) and
// webhook-signature: space-separated "v1,<base64 HMAC-SHA256>" values, one
// per valid secret, over "<id>.<timestamp>.<body>". A secret is "whsec_"
// followed by the standard base64 of its key bytes.
package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Header names of a webhook delivery.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// SecretPrefix begins every endpoint secret.
const SecretPrefix = "whsec_"

// Tolerance is how far a delivery's timestamp may be from the receiver's
// clock before Verify refuses it as a replay.
const Tolerance = 5 * time.Minute

// Errors of Verify.
var (
	ErrMissingHeaders = errors.New("webhook: missing webhook-id, webhook-timestamp or webhook-signature")
	ErrStale          = errors.New("webhook: timestamp too far from now")
	ErrNoMatch        = errors.New("webhook: no signature matches")
	ErrBadSecret      = errors.New("webhook: secret is not whsec_ followed by base64")
)

// NewSecret returns a new endpoint secret of 32 random bytes.
func NewSecret() string {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		panic("webhook: crypto/rand failed: " + err.Error())
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(key)
}

// key decodes a secret to its HMAC key. The prefix is optional, as in the
// reference implementations.
func key(secret string) ([]byte, error) {
	k, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, SecretPrefix))
	if err != nil || len(k) == 0 {
		return nil, ErrBadSecret
	}
	return k, nil
}

// Sign returns one "v1,<signature>" value for a delivery.
func Sign(secret, id string, timestamp int64, body []byte) (string, error) {
	k, err := key(secret)
	if err != nil {
		return "", err
	}
	return "v1," + base64.StdEncoding.EncodeToString(mac(k, id, timestamp, body)), nil
}

func mac(k []byte, id string, timestamp int64, body []byte) []byte {
	h := hmac.New(sha256.New, k)
	h.Write([]byte(id))
	h.Write([]byte("."))
	h.Write([]byte(strconv.FormatInt(timestamp, 10)))
	h.Write([]byte("."))
	h.Write(body)
	return h.Sum(nil)
}

// SignatureHeader signs a delivery with every secret (during a rotation the
// new and the previous one) and joins the values with spaces.
func SignatureHeader(secrets []string, id string, timestamp int64, body []byte) (string, error) {
	values := make([]string, 0, len(secrets))
	for _, s := range secrets {
		v, err := Sign(s, id, timestamp, body)
		if err != nil {
			return "", err
		}
		values = append(values, v)
	}
	return strings.Join(values, " "), nil
}

// Verify checks a delivery's headers against the endpoint secret before its
// body is trusted: the timestamp must be within Tolerance of now, and one of
// the v1 signatures must match. Parse the body only after it returns nil,
// and process each webhook-id once.
func Verify(secret string, header http.Header, body []byte, now time.Time) error {
	k, err := key(secret)
	if err != nil {
		return err
	}
	id, ts, sigs := header.Get(HeaderID), header.Get(HeaderTimestamp), header.Get(HeaderSignature)
	if id == "" || ts == "" || sigs == "" {
		return ErrMissingHeaders
	}
	t, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return ErrStale
	}
	if d := now.Sub(time.Unix(t, 0)); d > Tolerance || d < -Tolerance {
		return ErrStale
	}
	want := mac(k, id, t, body)
	for _, sig := range strings.Fields(sigs) {
		version, value, ok := strings.Cut(sig, ",")
		if !ok || version != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(value)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return ErrNoMatch
}
