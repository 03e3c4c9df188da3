package smsinbox_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/smsinbox"
	"github.com/payd-engine/payd/storage/postgres"
	"github.com/payd-engine/payd/storage/postgres/pgtest"
	"github.com/payd-engine/payd/storage/sqlite"
)

// forEachStore runs test on a fixture over SQLite and, when
// PAYD_TEST_POSTGRES_URL is set, over Postgres, with an inbox that holds a
// keyring (signing secrets).
func forEachStore(t *testing.T, test func(t *testing.T, f *fixture)) {
	open := map[string]func(t *testing.T) (engine.Store, error){
		"sqlite": func(t *testing.T) (engine.Store, error) {
			return sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "payd.db"), smsinbox.Migrations())
		},
		"postgres": func(t *testing.T) (engine.Store, error) {
			return postgres.Open(context.Background(), pgtest.URL(t), smsinbox.Migrations())
		},
	}
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			store, err := open[kind](t)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { store.Close() })
			f := newFixtureOn(t, store, nil)
			keyring, _ := engine.NewKeyring(make([]byte, engine.MasterKeySize))
			if f.inbox, err = smsinbox.New(smsinbox.Config{Store: smsinbox.NewSQLStore(store), Clock: f.clock, Silence: 5 * time.Minute, Keyring: keyring}); err != nil {
				t.Fatal(err)
			}
			f.inbox.Attach(f.eng)
			test(t, f)
		})
	}
}

func gatewaySig(key string, body []byte, at time.Time) smsinbox.Signature {
	ts := strconv.FormatInt(at.Unix(), 10)
	m := hmac.New(sha256.New, []byte(key))
	m.Write(body)
	m.Write([]byte(ts))
	return smsinbox.Signature{Scheme: smsinbox.SchemeSMSGateway, Timestamp: ts, MAC: hex.EncodeToString(m.Sum(nil)), Body: body}
}

func forwarderSig(secret string, at time.Time) smsinbox.Signature {
	ts := strconv.FormatInt(at.UnixMilli(), 10)
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts + "\n" + secret))
	return smsinbox.Signature{Scheme: smsinbox.SchemeSmsForwarder, Timestamp: ts, MAC: url.QueryEscape(base64.StdEncoding.EncodeToString(m.Sum(nil)))}
}

func wantCode(t *testing.T, what string, err error, code, msg string) {
	t.Helper()
	if engine.ErrorCode(err) != code || !strings.Contains(errMessage(err), msg) {
		t.Errorf("%s: %v, want %s %q", what, err, code, msg)
	}
}

func errMessage(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// A signing device's signatures: fresh within MaxSignatureAge either way,
// matching, once each; an unsigned post only from a device that does not
// sign.
func TestVerifySignature(t *testing.T) {
	forEachStore(t, func(t *testing.T, f *fixture) {
		creds, err := f.inbox.ConfigureDevice(f.ctx, f.org, f.device.ID, smsinbox.DeviceConfig{SigningSecret: ptr(true)})
		if err != nil || creds.SigningSecret == "" {
			t.Fatalf("configure: %v %+v", err, creds)
		}
		dev, key := creds.Device, creds.SigningSecret
		body := []byte(`{"event":"system:ping"}`)
		now := f.clock.Now()
		verify := func(sig smsinbox.Signature) error { return f.inbox.VerifySignature(f.ctx, dev, sig) }
		if err := verify(gatewaySig(key, body, now.Add(-smsinbox.MaxSignatureAge))); err != nil {
			t.Fatalf("oldest acceptable timestamp: %v", err)
		}
		if err := verify(gatewaySig(key, body, now.Add(smsinbox.MaxSignatureAge))); err != nil {
			t.Fatalf("newest acceptable timestamp: %v", err)
		}
		wantCode(t, "stale", verify(gatewaySig(key, body, now.Add(-smsinbox.MaxSignatureAge-time.Second))), engine.CodeUnauthorized, "timestamp")
		wantCode(t, "future", verify(gatewaySig(key, body, now.Add(smsinbox.MaxSignatureAge+time.Second))), engine.CodeUnauthorized, "timestamp")
		wantCode(t, "wrong key", verify(gatewaySig(key+"x", body, now)), engine.CodeUnauthorized, "does not match")
		wantCode(t, "not hex", verify(smsinbox.Signature{Scheme: smsinbox.SchemeSMSGateway, Timestamp: "1", MAC: "zz"}), engine.CodeUnauthorized, "")
		wantCode(t, "timestamp in ms", verify(smsinbox.Signature{Scheme: smsinbox.SchemeSMSGateway, Timestamp: strconv.FormatInt(now.UnixMilli(), 10), MAC: "00"}), engine.CodeUnauthorized, "timestamp")
		sig := gatewaySig(key, body, now)
		if err := verify(sig); err != nil {
			t.Fatal(err)
		}
		wantCode(t, "replay", verify(sig), engine.CodeUnauthorized, "already used")
		fs := forwarderSig(key, now)
		if err := verify(fs); err != nil {
			t.Fatalf("SmsForwarder sign: %v", err)
		}
		wantCode(t, "SmsForwarder replay", verify(fs), engine.CodeUnauthorized, "already used")
		raw := forwarderSig(key, now.Add(time.Millisecond))
		if raw.MAC, err = url.QueryUnescape(raw.MAC); err != nil {
			t.Fatal(err)
		}
		if err := verify(raw); err != nil {
			t.Fatalf("SmsForwarder sign, Base64 not URL-encoded: %v", err)
		}
		wantCode(t, "unsigned post of a signing device", verify(smsinbox.Signature{}), engine.CodeUnauthorized, "required")

		// Once the timestamps are stale, the used signatures are forgotten
		// (their timestamps are refused anyway).
		f.clock.Add(smsinbox.MaxSignatureAge + time.Minute)
		if err := verify(gatewaySig(key, body, f.clock.Now())); err != nil {
			t.Fatal(err)
		}

		// A new secret: the old one stops now. No secret: unsigned posts
		// only.
		again, err := f.inbox.ConfigureDevice(f.ctx, f.org, f.device.ID, smsinbox.DeviceConfig{SigningSecret: ptr(true)})
		if err != nil {
			t.Fatal(err)
		}
		dev = again.Device
		wantCode(t, "old secret", verify(gatewaySig(key, body, f.clock.Now())), engine.CodeUnauthorized, "does not match")
		off, err := f.inbox.ConfigureDevice(f.ctx, f.org, f.device.ID, smsinbox.DeviceConfig{SigningSecret: ptr(false)})
		if err != nil {
			t.Fatal(err)
		}
		dev = off.Device
		if err := verify(smsinbox.Signature{}); err != nil {
			t.Fatalf("unsigned post of a device without a secret: %v", err)
		}
		wantCode(t, "signed post of a device without a secret", verify(gatewaySig(key, body, f.clock.Now())), engine.CodeUnauthorized, "no signing secret")
	})
}

// A sealed secret is bound to its device: copied to another device's row,
// it does not open.
func TestSigningSecretNeedsAKeyring(t *testing.T) {
	f := newFixture(t) // its inbox has no keyring
	if _, err := f.inbox.ConfigureDevice(f.ctx, f.org, f.device.ID, smsinbox.DeviceConfig{SigningSecret: ptr(true)}); engine.ErrorCode(err) != engine.CodeConflict {
		t.Fatalf("signing secret without a master key: %v", err)
	}
}

// SIM slots: per channel, one wallet for any slot or one per slot; a
// message is routed by its slot and never guessed.
func TestSIMSlots(t *testing.T) {
	forEachStore(t, func(t *testing.T, f *fixture) {
		one, two := f.addWallet("bkash", "01822222222"), f.addWallet("bkash", "01833333333")
		nagad := f.addWallet("nagad", "01844444444")
		add := func(slots map[string]int, wallets ...string) (*smsinbox.DeviceCredentials, error) {
			return f.inbox.AddDevice(f.ctx, smsinbox.AddDeviceParams{OrganizationID: f.org, Name: "dual", WalletIDs: wallets, Slots: slots})
		}
		for name, c := range map[string]struct {
			slots   map[string]int
			wallets []string
		}{
			"two wallets of a channel, no slots":   {nil, []string{one.ID, two.ID}},
			"one of them on any slot":              {map[string]int{one.ID: 1}, []string{one.ID, two.ID}},
			"both on slot 1":                       {map[string]int{one.ID: 1, two.ID: 1}, []string{one.ID, two.ID}},
			"slot out of range":                    {map[string]int{one.ID: smsinbox.MaxSIMSlot + 1}, []string{one.ID}},
			"slot of a wallet the device lacks":    {map[string]int{two.ID: 1}, []string{one.ID}},
			"negative slot":                        {map[string]int{one.ID: -1}, []string{one.ID}},
			"a wallet of the fixture's live phone": {nil, []string{f.wallet.ID}},
		} {
			if _, err := add(c.slots, c.wallets...); err == nil {
				t.Errorf("%s: added", name)
			}
		}
		creds, err := add(map[string]int{one.ID: 1, two.ID: 2}, one.ID, two.ID, nagad.ID)
		if err != nil {
			t.Fatal(err)
		}
		dev := creds.Device
		for _, w := range []string{one.ID, two.ID} {
			if _, _, err := f.inbox.Anchor(f.ctx, f.org, w, decimal.RequireFromString("10000")); err != nil {
				t.Fatal(err)
			}
		}
		in := func(slot int, balance, trx string) *smsinbox.SMS {
			t.Helper()
			msg := cashOut("500.00", balance, trx, f.clock.Now())
			msg.SIMSlot = slot
			m, _, err := f.inbox.Ingest(f.ctx, dev, msg)
			if err != nil {
				t.Fatal(err)
			}
			return m
		}
		if m := in(2, "10,500.00", "TRX0000021"); m.Status != smsinbox.StatusAccepted || m.WalletID != two.ID {
			t.Fatalf("slot 2: %s %s %s", m.Status, m.WalletID, m.Reason)
		}
		if m := in(1, "10,500.00", "TRX0000011"); m.Status != smsinbox.StatusAccepted || m.WalletID != one.ID {
			t.Fatalf("slot 1: %s %s %s", m.Status, m.WalletID, m.Reason)
		}
		for slot, trx := range map[int]string{0: "TRX0000001", 3: "TRX0000031"} {
			if m := in(slot, "11,000.00", trx); m.Status != smsinbox.StatusNoWallet || m.WalletID != "" {
				t.Fatalf("slot %d: %s %s %s", slot, m.Status, m.WalletID, m.Reason)
			}
		}
		// The nagad wallet takes any slot.
		nm, _, err := f.inbox.Ingest(f.ctx, dev, smsinbox.Incoming{SIMSlot: 2, Sender: "NAGAD", Body: "Money Received.\nAmount: Tk 500.00\nSender: 01712345678\nRef: N/A\nTxnID: 71A2B3C4\nBalance: Tk 1,500.00\n21/11/2026 16:03"})
		if err != nil || nm.WalletID != nagad.ID || nm.Status != smsinbox.StatusHeld {
			t.Fatalf("nagad on slot 2: %v %+v", err, nm)
		}
		// Config moves the slots under the same rule, in the device's
		// organization only.
		if _, err := f.inbox.ConfigureDevice(f.ctx, f.org, dev.ID, smsinbox.DeviceConfig{Slots: map[string]int{one.ID: 2}}); err == nil {
			t.Fatal("two wallets on slot 2")
		}
		if _, err := f.inbox.ConfigureDevice(f.ctx, "org_other", dev.ID, smsinbox.DeviceConfig{Slots: map[string]int{one.ID: 2, two.ID: 1}}); engine.ErrorCode(err) != engine.CodeNotFound {
			t.Fatalf("another organization's config: %v", err)
		}
		if _, err := f.inbox.ConfigureDevice(f.ctx, f.org, dev.ID, smsinbox.DeviceConfig{Slots: map[string]int{f.wallet.ID: 2}}); engine.ErrorCode(err) != engine.CodeNotFound {
			t.Fatalf("a wallet of another device: %v", err)
		}
		if _, err := f.inbox.ConfigureDevice(f.ctx, f.org, dev.ID, smsinbox.DeviceConfig{Slots: map[string]int{one.ID: 2, two.ID: 1}}); err != nil {
			t.Fatal(err)
		}
		if m := in(2, "11,000.00", "TRX0000022"); m.Status != smsinbox.StatusAccepted || m.WalletID != one.ID {
			t.Fatalf("slot 2 after the swap: %s %s %s", m.Status, m.WalletID, m.Reason)
		}
	})
}

// A device's own silence: its heartbeat and its messages keep its wallets
// live for it, and a change holds from its last report.
func TestDeviceSilence(t *testing.T) {
	forEachStore(t, func(t *testing.T, f *fixture) {
		if _, err := f.inbox.ConfigureDevice(f.ctx, f.org, f.device.ID, smsinbox.DeviceConfig{Silence: ptr(30 * time.Second)}); engine.ErrorCode(err) != engine.CodeInvalidRequest {
			t.Fatalf("silence under a minute: %v", err)
		}
		until, err := f.inbox.Heartbeat(f.ctx, f.device)
		if err != nil || !until.Equal(f.clock.Now().Add(5*time.Minute)) {
			t.Fatalf("heartbeat on the server's silence: %v %v", until, err)
		}
		if _, err := f.inbox.ConfigureDevice(f.ctx, f.org, f.device.ID, smsinbox.DeviceConfig{Silence: ptr(3 * time.Hour)}); err != nil {
			t.Fatal(err)
		}
		liveUntil := func() time.Time {
			t.Helper()
			ws, err := f.eng.ListWallets(f.ctx, f.org)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range ws {
				if w.ID == f.wallet.ID && w.LiveUntil != nil {
					return *w.LiveUntil
				}
			}
			t.Fatalf("wallet %s has no live_until", f.wallet.ID)
			return time.Time{}
		}
		if got := liveUntil(); !got.Equal(f.clock.Now().Add(3 * time.Hour)) {
			t.Fatalf("live until %v after the silence changed, want the last report + 3h", got)
		}
		f.clock.Add(time.Hour)
		f.ingest(smsinbox.Incoming{Sender: "+8801999999999", Body: "hello"})
		if got := liveUntil(); !got.Equal(f.clock.Now().Add(3 * time.Hour)) {
			t.Fatalf("live until %v after a message, want now + 3h", got)
		}
	})
}
