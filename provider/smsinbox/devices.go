package smsinbox

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/payd-engine/payd/engine"
)

// AddDeviceParams describes a new device and the wallets whose SMS it
// receives, at most one per channel.
type AddDeviceParams struct {
	OrganizationID string
	Name           string
	WalletIDs      []string
	// Slots maps wallets to the SIM slot whose messages prove them; a
	// wallet not in it takes any slot (see checkChains).
	Slots map[string]int
	// Silence is the device's own silence; 0 means the server's.
	Silence time.Duration
	// SigningSecret gives the device a secret its app signs posts with.
	SigningSecret bool
}

// DeviceCredentials is a new device with its token (and signing secret),
// shown only here.
type DeviceCredentials struct {
	Device        *Device
	Token         string
	SigningSecret string
	Chains        []*Chain
}

// AddDevice registers a device. Its wallets leave the recipient pool until
// it first reports. A wallet proven by a revoked device moves to the new
// one with its balance chain; one proven by a live device is refused.
func (p *Provider) AddDevice(ctx context.Context, params AddDeviceParams) (*DeviceCredentials, error) {
	name := strings.TrimSpace(params.Name)
	if err := checkLabel("name", name, 100); err != nil {
		return nil, err
	}
	if len(params.WalletIDs) == 0 {
		return nil, engine.Invalid("wallet", "name at least one wallet whose SMS the device receives")
	}
	if err := checkSilence(params.Silence); err != nil {
		return nil, err
	}
	for w, slot := range params.Slots {
		if err := checkSlot(w, slot); err != nil {
			return nil, err
		}
		if !slices.Contains(params.WalletIDs, w) {
			return nil, engine.Invalid("slot", w+" is not one of the device's wallets")
		}
	}
	token, err := newToken()
	if err != nil {
		return nil, err
	}
	now := p.now()
	creds := &DeviceCredentials{Token: token, Device: &Device{
		ID: engine.NewID(PrefixDevice, now), OrganizationID: params.OrganizationID, Name: name,
		TokenHash: hashToken(token), TokenHint: token[len(token)-4:], CreatedAt: now, Silence: params.Silence,
	}}
	if params.SigningSecret {
		if creds.SigningSecret, err = p.sealSigningSecret(creds.Device); err != nil {
			return nil, err
		}
	}
	err = p.store.InboxTx(ctx, func(ctx context.Context, tx Tx) error {
		if _, err := tx.LockOrganization(ctx, params.OrganizationID); err != nil {
			return notFound(err, "organization")
		}
		if err := tx.CreateDevice(ctx, creds.Device); err != nil {
			return err
		}
		creds.Chains = nil
		for _, id := range params.WalletIDs {
			w, err := tx.LockWallet(ctx, params.OrganizationID, id)
			if err != nil {
				return notFound(err, "wallet "+id)
			}
			creds.Chains = append(creds.Chains, &Chain{WalletID: w.ID, Channel: w.Channel, SIMSlot: params.Slots[id]})
		}
		// Per channel, one wallet for any SIM slot or one per slot: checked
		// before any chain moves.
		if err := checkChains(creds.Chains); err != nil {
			return err
		}
		for i, id := range params.WalletIDs {
			w, err := tx.LockWallet(ctx, params.OrganizationID, id)
			if err != nil {
				return err
			}
			if creds.Chains[i], err = p.chainFor(ctx, tx, w, creds.Device.ID, params.Slots[id], now); err != nil {
				return err
			}
		}
		if err := tx.SetWalletsLiveUntil(ctx, params.WalletIDs, &now); err != nil {
			return err
		}
		details := map[string]string{"name": name, "wallets": strings.Join(params.WalletIDs, ",")}
		if params.Silence != 0 {
			details["silence"] = params.Silence.String()
		}
		if params.SigningSecret {
			details["signing_secret"] = "new"
		}
		for _, c := range creds.Chains {
			if c.SIMSlot != 0 {
				details["slots"] += fmt.Sprintf(",%s:%d", c.WalletID, c.SIMSlot)
			}
		}
		details["slots"] = strings.TrimPrefix(details["slots"], ",")
		if details["slots"] == "" {
			delete(details, "slots")
		}
		return p.audit(ctx, tx, AuditDeviceAdd, params.OrganizationID, creds.Device.ID, details)
	})
	if err != nil {
		return nil, err
	}
	return creds, nil
}

// chainFor starts the balance chain of w on a new device, or moves it there
// from a revoked one.
func (p *Provider) chainFor(ctx context.Context, tx Tx, w *engine.Wallet, deviceID string, slot int, now time.Time) (*Chain, error) {
	c, err := tx.LockChain(ctx, w.OrganizationID, w.ID)
	if errors.Is(err, engine.ErrNotFound) {
		c = &Chain{WalletID: w.ID, OrganizationID: w.OrganizationID, DeviceID: deviceID, Channel: w.Channel, SIMSlot: slot, UpdatedAt: now}
		return c, tx.CreateChain(ctx, c)
	}
	if err != nil {
		return nil, err
	}
	old, err := tx.LockDevice(ctx, w.OrganizationID, c.DeviceID)
	if err != nil {
		return nil, err
	}
	if old.RevokedAt == nil {
		return nil, engine.Errorf(engine.CodeConflict, "wallet: %s is proven by device %s; revoke it first", w.ID, old.ID)
	}
	c.DeviceID, c.SIMSlot, c.UpdatedAt = deviceID, slot, now
	return c, tx.UpdateChain(ctx, c)
}

// RevokeDevice stops a device's token from working, now. Its wallets stay
// out of the recipient pool until another device proves them.
func (p *Provider) RevokeDevice(ctx context.Context, orgID, deviceID string) (*Device, error) {
	var d *Device
	err := p.store.InboxTx(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		if d, err = tx.LockDevice(ctx, orgID, deviceID); err != nil {
			return notFound(err, "device")
		}
		if d.RevokedAt != nil {
			return nil
		}
		now := p.now()
		d.RevokedAt = &now
		if err := tx.UpdateDevice(ctx, d); err != nil {
			return err
		}
		if err := p.setLive(ctx, tx, d, now); err != nil {
			return err
		}
		return p.audit(ctx, tx, AuditDeviceRevoke, orgID, d.ID, map[string]string{"name": d.Name})
	})
	return d, err
}

// DeviceStatus is a device with the wallets it proves.
type DeviceStatus struct {
	Device *Device
	Chains []*Chain
}

// ListDevices returns an organization's devices with their wallets.
func (p *Provider) ListDevices(ctx context.Context, orgID string) ([]DeviceStatus, error) {
	var out []DeviceStatus
	err := p.store.InboxReadTx(ctx, func(ctx context.Context, tx Tx) error {
		if _, err := tx.GetOrganization(ctx, orgID); err != nil {
			return notFound(err, "organization")
		}
		devices, err := tx.ListDevices(ctx, orgID)
		if err != nil {
			return err
		}
		chains, err := tx.ListChains(ctx, orgID, "")
		if err != nil {
			return err
		}
		for _, d := range devices {
			s := DeviceStatus{Device: d}
			for _, c := range chains {
				if c.DeviceID == d.ID {
					s.Chains = append(s.Chains, c)
				}
			}
			out = append(out, s)
		}
		return nil
	})
	return out, err
}

// Authenticate returns the live device a bearer token belongs to, or an
// unauthorized error.
func (p *Provider) Authenticate(ctx context.Context, token string) (*Device, error) {
	invalid := engine.Errorf(engine.CodeUnauthorized, "invalid_device_token")
	if !strings.HasPrefix(token, TokenPrefix) || len(token) > 128 {
		return nil, invalid
	}
	var d *Device
	err := p.store.InboxReadTx(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		d, err = tx.GetDeviceByTokenHash(ctx, hashToken(token))
		return err
	})
	if errors.Is(err, engine.ErrNotFound) || err == nil && d.RevokedAt != nil {
		return nil, invalid
	}
	return d, err
}

// Heartbeat records that a device is alive: its wallets stay in the pool
// for another silence (its own, or Config.Silence). It returns until when.
func (p *Provider) Heartbeat(ctx context.Context, dev *Device) (time.Time, error) {
	now := p.now()
	var until time.Time
	err := p.store.InboxTx(ctx, func(ctx context.Context, tx Tx) error {
		d, err := p.touch(ctx, tx, dev, now)
		if err == nil {
			until = now.Add(p.silenceOf(d))
		}
		return err
	})
	return until, err
}

// touch records a report of a device in the caller's transaction, under
// the device's lock, which also serializes its messages.
func (p *Provider) touch(ctx context.Context, tx Tx, dev *Device, now time.Time) (*Device, error) {
	d, err := tx.LockDevice(ctx, dev.OrganizationID, dev.ID)
	if err != nil {
		return nil, err
	}
	if d.RevokedAt != nil {
		return nil, engine.Errorf(engine.CodeUnauthorized, "invalid_device_token")
	}
	d.LastSeenAt = &now
	if err := tx.UpdateDevice(ctx, d); err != nil {
		return nil, err
	}
	return d, p.setLive(ctx, tx, d, now.Add(p.silenceOf(d)))
}

// setLive sets the LiveUntil of the wallets a device proves.
func (p *Provider) setLive(ctx context.Context, tx Tx, d *Device, until time.Time) error {
	chains, err := tx.ListChains(ctx, d.OrganizationID, d.ID)
	if err != nil {
		return err
	}
	ids := make([]string, len(chains))
	for i, c := range chains {
		ids[i] = c.WalletID
	}
	return tx.SetWalletsLiveUntil(ctx, ids, &until)
}

// newToken returns a new device token: 32 random bytes.
func newToken() (string, error) {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return "", err
	}
	return TokenPrefix + base64.RawURLEncoding.EncodeToString(secret), nil
}

func hashToken(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}
