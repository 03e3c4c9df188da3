package smsinbox

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/payd-engine/payd/engine"
)

// Off-the-shelf Android forwarder apps on a device: the SIM slot
// each wallet's messages come from, a device's own silence, and the
// signatures of the apps that sign their posts. The HTTP shapes of the
// apps' payloads are the transport's (transport/forwarders.go).

// MaxSIMSlot is the highest SIM slot number a wallet can be mapped to.
const MaxSIMSlot = 8

// Bounds of a device's own silence.
const (
	MinDeviceSilence = time.Minute
	MaxDeviceSilence = 7 * 24 * time.Hour
)

// MaxSignatureAge is how far a signed post's timestamp may be from payd's
// clock, either way: older is stale (or replayed), newer is a wrong clock.
const MaxSignatureAge = 5 * time.Minute

// Signature schemes of the apps that sign their posts.
const (
	// SchemeSMSGateway is SMS Gateway for Android's (capcom6): X-Signature
	// is the lowercase hex HMAC-SHA256, keyed with the signing key's UTF-8
	// bytes, of the body followed by X-Timestamp (Unix seconds), per its
	// modules/webhooks/plugins/PayloadSingingPlugin.kt.
	SchemeSMSGateway = "sms-gateway"
	// SchemeSmsForwarder is SmsForwarder's (pppscn): sign is the Base64
	// HMAC-SHA256, keyed with the secret, of timestamp (Unix milliseconds)
	// + "\n" + secret, URL-encoded, per its utils/sender/WebhookUtils.kt.
	// It covers no text: it proves the secret and the time, not the body.
	SchemeSmsForwarder = "smsforwarder"
)

// Audit action of a device's configuration change.
const AuditDeviceConfig = "sms_device.config"

// Signature is what a signed post carries. Scheme "" is an unsigned post.
type Signature struct {
	Scheme    string
	Timestamp string
	MAC       string
	// Body is the request body as received (SchemeSMSGateway signs it).
	Body []byte
}

// VerifySignature checks a post of dev against its signing secret: a
// device that has one must sign, with a fresh timestamp, every post, and a
// signature is accepted once. A device that has none cannot sign.
func (p *Provider) VerifySignature(ctx context.Context, dev *Device, sig Signature) error {
	if sig.Scheme == "" {
		if len(dev.SigningSecret) > 0 {
			return engine.Errorf(engine.CodeUnauthorized, "signature: is required: this device signs its posts; post to its app's endpoint")
		}
		return nil
	}
	if len(dev.SigningSecret) == 0 {
		return engine.Errorf(engine.CodeUnauthorized, "signature: this device has no signing secret (payd admin device config --signing-secret)")
	}
	if p.keyring == nil {
		return errors.New("smsinbox: a device signs its posts, but the inbox has no Keyring to open its secret")
	}
	secret, err := p.keyring.Open(dev.SigningSecret, signingContext(dev.ID))
	if err != nil {
		return err
	}
	var at time.Time
	var mac, want []byte
	switch sig.Scheme {
	case SchemeSMSGateway:
		secs, err := strconv.ParseInt(sig.Timestamp, 10, 64)
		if err != nil || secs <= 0 || len(sig.Timestamp) > 12 {
			return engine.Errorf(engine.CodeUnauthorized, "timestamp: must be Unix seconds")
		}
		at = time.Unix(secs, 0)
		h := hmac.New(sha256.New, secret)
		h.Write(sig.Body)
		h.Write([]byte(sig.Timestamp))
		want = h.Sum(nil)
		if mac, err = hex.DecodeString(sig.MAC); err != nil {
			mac = nil
		}
	case SchemeSmsForwarder:
		ms, err := strconv.ParseInt(sig.Timestamp, 10, 64)
		if err != nil || ms <= 0 || len(sig.Timestamp) > 15 {
			return engine.Errorf(engine.CodeUnauthorized, "timestamp: must be Unix milliseconds")
		}
		at = time.UnixMilli(ms)
		h := hmac.New(sha256.New, secret)
		h.Write([]byte(sig.Timestamp + "\n"))
		h.Write(secret)
		want = h.Sum(nil)
		// The app URL-encodes the Base64; a form or JSON body carries it so.
		b64 := sig.MAC
		if unescaped, err := url.PathUnescape(b64); err == nil {
			b64 = unescaped
		}
		if mac, err = base64.StdEncoding.DecodeString(b64); err != nil {
			mac = nil
		}
	default:
		return fmt.Errorf("smsinbox: unknown signature scheme %q", sig.Scheme)
	}
	now := p.now()
	if d := now.Sub(at); d > MaxSignatureAge || d < -MaxSignatureAge {
		return engine.Errorf(engine.CodeUnauthorized, "timestamp: more than %s from the server's clock (a stale or replayed request, or the phone's clock is wrong)", MaxSignatureAge)
	}
	if !hmac.Equal(mac, want) {
		return engine.Errorf(engine.CodeUnauthorized, "signature: does not match")
	}
	used := sha256.Sum256(append([]byte(sig.Scheme+"\x00"), mac...))
	err = p.store.InboxTx(ctx, func(ctx context.Context, tx Tx) error {
		return tx.UseSignature(ctx, dev.ID, used[:], at.Add(MaxSignatureAge).UTC(), now)
	})
	if errors.Is(err, engine.ErrDuplicate) {
		return engine.Errorf(engine.CodeUnauthorized, "signature: already used (a replayed request)")
	}
	return err
}

func signingContext(deviceID string) string { return "sms_device.signing_secret:" + deviceID }

// newSigningSecret returns a new signing secret: 24 random bytes, in
// characters any app's settings field takes.
func newSigningSecret() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// sealSigningSecret gives d a new signing secret and returns it.
func (p *Provider) sealSigningSecret(d *Device) (string, error) {
	if p.keyring == nil {
		return "", engine.Errorf(engine.CodeConflict, "signing_secret: the server has no master key to keep it under")
	}
	secret, err := newSigningSecret()
	if err != nil {
		return "", err
	}
	d.SigningSecret = p.keyring.Seal([]byte(secret), signingContext(d.ID))
	return secret, nil
}

func checkSilence(d time.Duration) error {
	if d != 0 && (d < MinDeviceSilence || d > MaxDeviceSilence) {
		return engine.Invalid("silence", fmt.Sprintf("must be between %s and %s (or 0 for the server's)", MinDeviceSilence, MaxDeviceSilence))
	}
	return nil
}

// silenceOf is how long d may be silent.
func (p *Provider) silenceOf(d *Device) time.Duration {
	if d.Silence > 0 {
		return d.Silence
	}
	return p.silence
}

func checkSlot(walletID string, slot int) error {
	if slot < 0 || slot > MaxSIMSlot {
		return engine.Invalid("slot", fmt.Sprintf("%s: a SIM slot is 1 to %d (0 for any)", walletID, MaxSIMSlot))
	}
	return nil
}

// checkChains holds a device's wallets to the routing rule: per channel,
// either one wallet for any slot, or one wallet per slot. A message is then
// never routed by a guess.
func checkChains(chains []*Chain) error {
	type key struct {
		channel string
		slot    int
	}
	seen := map[key]string{}
	perChannel := map[string][]*Chain{}
	for _, c := range chains {
		perChannel[c.Channel] = append(perChannel[c.Channel], c)
	}
	channels := make([]string, 0, len(perChannel))
	for ch := range perChannel {
		channels = append(channels, ch)
	}
	sort.Strings(channels)
	for _, ch := range channels {
		cs := perChannel[ch]
		for _, c := range cs {
			if c.SIMSlot == 0 && len(cs) > 1 {
				return engine.Invalid("wallet", fmt.Sprintf("the device has %d %s wallets: give each its SIM slot (WALLET:SLOT)", len(cs), ch))
			}
			k := key{ch, c.SIMSlot}
			if other, dup := seen[k]; dup {
				return engine.Invalid("wallet", fmt.Sprintf("%s and %s are both %s wallets on SIM slot %d", other, c.WalletID, ch, c.SIMSlot))
			}
			seen[k] = c.WalletID
		}
	}
	return nil
}

// routeChain returns the chain of a message on channel from SIM slot (0:
// the app did not say) among a device's chains, or nil and why none.
func routeChain(chains []*Chain, channel string, slot int) (*Chain, string) {
	slotted := false
	for _, c := range chains {
		if c.Channel != channel {
			continue
		}
		if c.SIMSlot == 0 || c.SIMSlot == slot {
			return c, ""
		}
		slotted = true
	}
	switch {
	case !slotted:
		return nil, "the device proves no " + channel + " wallet"
	case slot == 0:
		return nil, "the forwarder did not say which SIM slot received it, and the device's " + channel + " wallets are per slot"
	default:
		return nil, fmt.Sprintf("the device proves no %s wallet on SIM slot %d", channel, slot)
	}
}

// DeviceConfig changes a device's settings; nil or empty fields are kept.
type DeviceConfig struct {
	// Silence: 0 means the server's.
	Silence *time.Duration
	// Slots maps wallets the device proves to their SIM slot (0: any).
	Slots map[string]int
	// SigningSecret: true gives the device a new signing secret (the old
	// one stops working), false removes it.
	SigningSecret *bool
}

// ConfigureDevice changes a device's silence, its wallets' SIM slots and
// its signing secret. A new secret is in the result, shown only here.
func (p *Provider) ConfigureDevice(ctx context.Context, orgID, deviceID string, cfg DeviceConfig) (*DeviceCredentials, error) {
	if cfg.Silence != nil {
		if err := checkSilence(*cfg.Silence); err != nil {
			return nil, err
		}
	}
	for w, slot := range cfg.Slots {
		if err := checkSlot(w, slot); err != nil {
			return nil, err
		}
	}
	creds := &DeviceCredentials{}
	err := p.store.InboxTx(ctx, func(ctx context.Context, tx Tx) error {
		d, err := tx.LockDevice(ctx, orgID, deviceID)
		if err != nil {
			return notFound(err, "device")
		}
		if d.RevokedAt != nil {
			return engine.Errorf(engine.CodeConflict, "device %s is revoked; add a new one", d.ID)
		}
		details := map[string]string{"name": d.Name}
		if cfg.Silence != nil {
			d.Silence = *cfg.Silence
			details["silence"] = d.Silence.String()
		}
		creds.SigningSecret = ""
		if cfg.SigningSecret != nil {
			d.SigningSecret = nil
			details["signing_secret"] = "removed"
			if *cfg.SigningSecret {
				if creds.SigningSecret, err = p.sealSigningSecret(d); err != nil {
					return err
				}
				details["signing_secret"] = "new"
			}
		}
		if err := tx.UpdateDevice(ctx, d); err != nil {
			return err
		}
		chains, err := tx.ListChains(ctx, orgID, d.ID)
		if err != nil {
			return err
		}
		changed := map[string]bool{}
		for w, slot := range cfg.Slots {
			found := false
			for _, c := range chains {
				if c.WalletID == w {
					found, c.SIMSlot, changed[w] = true, slot, true
				}
			}
			if !found {
				return engine.Errorf(engine.CodeNotFound, "wallet %s is not proven by device %s", w, d.ID)
			}
		}
		if err := checkChains(chains); err != nil {
			return err
		}
		var slots []string
		for _, c := range chains {
			if changed[c.WalletID] {
				if err := tx.UpdateChain(ctx, c); err != nil {
					return err
				}
				slots = append(slots, c.WalletID+":"+strconv.Itoa(c.SIMSlot))
			}
		}
		if len(slots) > 0 {
			details["slots"] = strings.Join(slots, ",")
		}
		// The new silence holds from now: the last report stands.
		if cfg.Silence != nil && d.LastSeenAt != nil {
			if err := p.setLive(ctx, tx, d, d.LastSeenAt.Add(p.silenceOf(d))); err != nil {
				return err
			}
		}
		creds.Device, creds.Chains = d, chains
		return p.audit(ctx, tx, AuditDeviceConfig, orgID, d.ID, details)
	})
	if err != nil {
		return nil, err
	}
	return creds, nil
}
