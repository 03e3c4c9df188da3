package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/payd-engine/payd/provider/smsinbox"
)

// The device flags of the off-the-shelf forwarders: SIM slots,
// a device's own silence, a signing secret. docs/forwarders/ says which
// app needs which.

// deviceAddExtra is device add's flags beyond its wallets.
type deviceAddExtra struct {
	silence optionalDuration
	signing *bool
}

func deviceAddFlags(fs *flag.FlagSet) *deviceAddExtra {
	var e deviceAddExtra
	fs.Var(&e.silence, "silence", "how long the phone may go without reporting (a message or a heartbeat) before its wallets leave the pool, e.g. 6h for an app that sends no heartbeat (default: the server's --sms-silence)")
	e.signing = fs.Bool("signing-secret", false, "make a secret the phone's app signs its posts with (SMS Gateway, SmsForwarder); printed once, and then every post must be signed")
	return &e
}

// apply sets p's wallets, their slots (WALLET:SLOT), silence and secret.
func (e *deviceAddExtra) apply(p *smsinbox.AddDeviceParams, wallets []string) error {
	for _, w := range wallets {
		id, slot, err := walletSlot(w, ":")
		if err != nil {
			return err
		}
		p.WalletIDs = append(p.WalletIDs, id)
		if slot != 0 {
			if p.Slots == nil {
				p.Slots = map[string]int{}
			}
			p.Slots[id] = slot
		}
	}
	if e.silence.v != nil {
		p.Silence = *e.silence.v
	}
	p.SigningSecret = *e.signing
	return nil
}

// walletSlot splits "WALLET<sep>SLOT"; a bare wallet has slot 0.
func walletSlot(s, sep string) (string, int, error) {
	id, slot, ok := strings.Cut(s, sep)
	if !ok {
		return s, 0, nil
	}
	n, err := strconv.Atoi(slot)
	if err != nil || n < 0 || n > smsinbox.MaxSIMSlot {
		return "", 0, fmt.Errorf("%q: the SIM slot after %q is 1 to %d (0 for any)", s, sep, smsinbox.MaxSIMSlot)
	}
	return id, n, nil
}

func deviceConfig(fs *flag.FlagSet) func(context.Context, *smsinbox.Provider) (any, error) {
	org := fs.String("org", "", "organization ID")
	device := fs.String("device", "", "device ID")
	var silence optionalDuration
	var slots repeatable
	var signing optionalBool
	fs.Var(&silence, "silence", "how long the phone may go without reporting before its wallets leave the pool; 0 for the server's --sms-silence")
	fs.Var(&slots, "slot", "WALLET=SIM_SLOT: the SIM slot whose messages prove one of the device's wallets; 0 for any (repeatable)")
	fs.Var(&signing, "signing-secret", "true: a new secret the app signs with, printed once (the old one stops now); false: the device no longer signs")
	return func(ctx context.Context, inbox *smsinbox.Provider) (any, error) {
		cfg := smsinbox.DeviceConfig{Silence: silence.v, SigningSecret: signing.v}
		for _, s := range slots {
			id, slot, err := walletSlot(s, "=")
			if err != nil {
				return nil, err
			}
			if !strings.Contains(s, "=") {
				return nil, fmt.Errorf("--slot %q: want WALLET=SIM_SLOT", s)
			}
			if cfg.Slots == nil {
				cfg.Slots = map[string]int{}
			}
			cfg.Slots[id] = slot
		}
		creds, err := inbox.ConfigureDevice(ctx, *org, *device, cfg)
		if err != nil {
			return nil, err
		}
		v := smsinbox.NewDeviceView(creds.Device, creds.Chains)
		v.SigningSecret = creds.SigningSecret
		return v, nil
	}
}
