package smsinboxtest

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/conformance/storekit"
	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/smsinbox"
	"github.com/payd-engine/payd/provider/smsinbox/smsparse"
)

// The SMS inbox provider's tables, through the inbox's own transactions
// (smsinbox.Store), which are the engine's with more methods.

// Helpers: write, get, create, try and wantLocked of the inbox's
// transactions.

func inboxWrite(t *testing.T, s Store, fn func(ctx context.Context, tx smsinbox.Tx) error) {
	t.Helper()
	if err := inbox(s).InboxTx(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

func inboxGet[T any](t *testing.T, s Store, fn func(ctx context.Context, tx smsinbox.Tx) (T, error)) T {
	t.Helper()
	var v T
	if err := inbox(s).InboxReadTx(context.Background(), func(ctx context.Context, tx smsinbox.Tx) error {
		var err error
		v, err = fn(ctx, tx)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return v
}

func inboxCreate[T any](t *testing.T, s Store, insert func(smsinbox.Tx, context.Context, T) error, rows ...T) {
	t.Helper()
	inboxWrite(t, s, func(ctx context.Context, tx smsinbox.Tx) error {
		for i, r := range rows {
			if err := insert(tx, ctx, r); err != nil {
				return fmt.Errorf("row %d: %w", i, err)
			}
		}
		return nil
	})
}

func inboxTry[T any](s Store, insert func(smsinbox.Tx, context.Context, T) error, row T) error {
	return inbox(s).InboxTx(context.Background(), func(ctx context.Context, tx smsinbox.Tx) error { return insert(tx, ctx, row) })
}

// inboxLocked checks that lock reads want in a write transaction and in a
// read one.
func inboxLocked[T any](t *testing.T, s Store, want T, lock func(ctx context.Context, tx smsinbox.Tx) (T, error)) {
	t.Helper()
	var got T
	inboxWrite(t, s, func(ctx context.Context, tx smsinbox.Tx) error {
		var err error
		got, err = lock(ctx, tx)
		return err
	})
	storekit.AssertEqual(t, got, want)
	storekit.AssertEqual(t, inboxGet(t, s, lock), want)
}

// inboxCalls are named inbox transaction bodies that must each return
// ErrNotFound.
type inboxCalls map[string]func(ctx context.Context, tx smsinbox.Tx) error

func inboxAllNotFound(t *testing.T, s Store, reads, writes inboxCalls) {
	t.Helper()
	ctx := context.Background()
	for name, fn := range reads {
		storekit.WantNotFound(t, name, inbox(s).InboxReadTx(ctx, fn))
	}
	for name, fn := range writes {
		storekit.WantNotFound(t, name, inbox(s).InboxTx(ctx, fn))
	}
}

// Fixtures.

func sha(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

func newDevice(id, orgID string) *smsinbox.Device {
	return &smsinbox.Device{
		ID: id, OrganizationID: orgID, Name: "Phone " + id,
		TokenHash: sha("token:" + id), TokenHint: id[len(id)-1:], CreatedAt: base,
	}
}

func newChain(walletID, orgID, deviceID, channel string) *smsinbox.Chain {
	return &smsinbox.Chain{WalletID: walletID, OrganizationID: orgID, DeviceID: deviceID, Channel: channel, UpdatedAt: base}
}

// dhaka is the zone smsparse reads a message's time in.
var dhaka = time.FixedZone("Asia/Dhaka", 6*60*60)

// newParsed is a bKash-like credit of 500 with a transaction ID.
func newParsed(channel, transactionID string) *smsparse.Message {
	return &smsparse.Message{
		Channel: channel, Kind: smsparse.KindMoneyReceived, Credit: true,
		Amount: dec("500"), Counterparty: "01711111111", TransactionID: transactionID,
		Time: base.Truncate(time.Minute).In(dhaka), Balance: dec("1500.50"),
	}
}

// newSMS is a message of a device whose fingerprint is its ID's; parsed,
// if not nil, sets its channel.
func newSMS(id, orgID, deviceID, walletID, status string, parsed *smsparse.Message) *smsinbox.SMS {
	m := &smsinbox.SMS{
		ID: id, OrganizationID: orgID, DeviceID: deviceID, WalletID: walletID,
		Sender: "bKash", Body: "body of " + id, Fingerprint: sha("sms:" + id),
		ReceivedAt: base, Status: status, Parsed: parsed, CreatedAt: base, UpdatedAt: base,
	}
	if parsed != nil {
		m.Channel = parsed.Channel
	}
	return m
}

func newManualPayout(key, orgID string) *smsinbox.ManualPayout {
	return &smsinbox.ManualPayout{OrganizationID: orgID, Payout: engine.Payout{
		IdempotencyKey: key, Method: "bkash", Account: "01711111111", Amount: dec("500"),
		Status: smsinbox.PayoutQueued, CreatedAt: base,
	}}
}

// mustInboxFixture creates org_1 and org_2, their wallets wal_1 (bKash)
// and wal_2 (Nagad) of org_1 and wal_9 (bKash) of org_2, and devices dev_1
// of org_1 and dev_9 of org_2.
func mustInboxFixture(t *testing.T, s Store) {
	t.Helper()
	storekit.MustOrgs(t, s, "org_1", "org_2")
	storekit.Create(t, s, engine.Tx.CreateWallet,
		storekit.NewWallet("wal_1", "org_1", engine.ChannelBkash, engine.OperationCashOut, "01700000001"),
		storekit.NewWallet("wal_2", "org_1", engine.ChannelNagad, engine.OperationCashOut, "01700000002"),
		storekit.NewWallet("wal_9", "org_2", engine.ChannelBkash, engine.OperationCashOut, "01700000009"))
	inboxCreate(t, s, smsinbox.Tx.CreateDevice, newDevice("dev_1", "org_1"), newDevice("dev_9", "org_2"))
}

// Transactions.

// InboxTx and InboxReadTx are InTx and ReadTx: commit, rollback on error,
// errors unchanged, read-only.
func testInboxTransactions(t *testing.T, s Store) {
	ctx := context.Background()
	storekit.MustOrgs(t, s, "org_1")
	sentinel := errors.New("stop")
	err := inbox(s).InboxTx(ctx, func(ctx context.Context, tx smsinbox.Tx) error {
		if err := tx.CreateDevice(ctx, newDevice("dev_rolled_back", "org_1")); err != nil {
			return err
		}
		return sentinel
	})
	if err != sentinel {
		t.Errorf("InboxTx returned %v, want the fn's error", err)
	}
	if err := inbox(s).InboxReadTx(ctx, func(context.Context, smsinbox.Tx) error { return sentinel }); err != sentinel {
		t.Errorf("InboxReadTx returned %v, want the fn's error", err)
	}
	err = inbox(s).InboxReadTx(ctx, func(ctx context.Context, tx smsinbox.Tx) error {
		return tx.CreateDevice(ctx, newDevice("dev_read_only", "org_1"))
	})
	if err == nil {
		t.Error("InboxReadTx allowed a write")
	}
	// The engine's methods are there too, in the same transaction.
	inboxWrite(t, s, func(ctx context.Context, tx smsinbox.Tx) error {
		if _, err := tx.LockOrganization(ctx, "org_1"); err != nil {
			return err
		}
		return tx.CreateDevice(ctx, newDevice("dev_1", "org_1"))
	})
	if got := inboxGet(t, s, func(ctx context.Context, tx smsinbox.Tx) ([]*smsinbox.Device, error) {
		return tx.ListDevices(ctx, "org_1")
	}); storekit.JoinIDs(got, func(d *smsinbox.Device) string { return d.ID }) != "1" {
		t.Errorf("devices %s, want only dev_1", storekit.JoinIDs(got, func(d *smsinbox.Device) string { return d.ID }))
	}
}

// Devices.

func testSMSDeviceRoundTrip(t *testing.T, s Store) {
	storekit.MustOrgs(t, s, "org_1", "org_2")
	// Inserted newest first: the list is oldest first all the same.
	bare := newDevice("dev_2", "org_1")
	bare.Name, bare.CreatedAt = "", base.Add(time.Second)
	full := &smsinbox.Device{
		ID: "dev_1", OrganizationID: "org_1", Name: "Counter phone ☎",
		TokenHash: sha("token"), TokenHint: "Xy_9", CreatedAt: base,
		LastSeenAt: ptr(base.Add(time.Minute + time.Microsecond)), RevokedAt: ptr(base.Add(time.Hour)),
	}
	// The same creation time as dev_1: after it by ID.
	tie := newDevice("dev_3", "org_1")
	other := newDevice("dev_9", "org_2")
	inboxCreate(t, s, smsinbox.Tx.CreateDevice, bare, full, tie, other)

	byHash := func(hash []byte) *smsinbox.Device {
		t.Helper()
		return inboxGet(t, s, func(ctx context.Context, tx smsinbox.Tx) (*smsinbox.Device, error) {
			return tx.GetDeviceByTokenHash(ctx, hash)
		})
	}
	list := func(orgID string) []*smsinbox.Device {
		t.Helper()
		return inboxGet(t, s, func(ctx context.Context, tx smsinbox.Tx) ([]*smsinbox.Device, error) {
			return tx.ListDevices(ctx, orgID)
		})
	}
	for _, want := range []*smsinbox.Device{bare, full, tie, other} {
		storekit.AssertEqual(t, byHash(want.TokenHash), want)
		inboxLocked(t, s, want, func(ctx context.Context, tx smsinbox.Tx) (*smsinbox.Device, error) {
			return tx.LockDevice(ctx, want.OrganizationID, want.ID)
		})
	}
	if got := byHash(bare.TokenHash); got.LastSeenAt != nil || got.RevokedAt != nil {
		t.Errorf("bare device read back seen %v, revoked %v", got.LastSeenAt, got.RevokedAt)
	}
	storekit.AssertEqual(t, list("org_1"), []*smsinbox.Device{full, tie, bare})
	storekit.AssertEqual(t, list("org_2"), []*smsinbox.Device{other})
	if got := list("org_x"); len(got) != 0 {
		t.Errorf("ListDevices(org_x) = %d devices", len(got))
	}

	// The token hash is unique, across organizations; so is the ID.
	dup := newDevice("dev_4", "org_2")
	dup.TokenHash = sha("token")
	storekit.WantDuplicate(t, "device with a known token hash", inboxTry(s, smsinbox.Tx.CreateDevice, dup))
	dup = newDevice("dev_1", "org_1")
	storekit.WantDuplicate(t, "device with a known ID", inboxTry(s, smsinbox.Tx.CreateDevice, dup))
	storekit.WantInternal(t, "device of a missing organization", inboxTry(s, smsinbox.Tx.CreateDevice, newDevice("dev_5", "org_x")))
	storekit.AssertEqual(t, byHash(sha("token")), full)

	// Update writes name, token hash and hint (a rotation), last seen and
	// revoked, and nothing else.
	full.Name, full.LastSeenAt, full.RevokedAt = "Renamed", ptr(base.Add(2*time.Minute)), nil
	full.TokenHash, full.TokenHint = sha("rotated"), "zzzz"
	bare.Name, bare.LastSeenAt, bare.RevokedAt = "Named", ptr(base.Add(3*time.Second)), ptr(base.Add(4*time.Second))
	inboxWrite(t, s, func(ctx context.Context, tx smsinbox.Tx) error {
		changed := *full
		changed.OrganizationID, changed.CreatedAt = "org_2", base.Add(time.Hour)
		if err := tx.UpdateDevice(ctx, &changed); err != nil {
			return err
		}
		return tx.UpdateDevice(ctx, bare)
	})
	storekit.AssertEqual(t, byHash(sha("rotated")), full)
	storekit.AssertEqual(t, byHash(bare.TokenHash), bare)
	// The old token's hash finds nothing: a rotated token stops at once.
	storekit.WantNotFound(t, "GetDeviceByTokenHash(old hash)", inbox(s).InboxReadTx(context.Background(), func(ctx context.Context, tx smsinbox.Tx) error {
		_, err := tx.GetDeviceByTokenHash(ctx, sha("token"))
		return err
	}))
	// Another device's token hash is refused.
	clash := *bare
	clash.TokenHash = sha("rotated")
	storekit.WantDuplicate(t, "update to a known token hash", inboxTry(s, smsinbox.Tx.UpdateDevice, &clash))
	storekit.AssertEqual(t, list("org_1"), []*smsinbox.Device{full, tie, bare})

	inboxAllNotFound(t, s, inboxCalls{
		"GetDeviceByTokenHash": func(ctx context.Context, tx smsinbox.Tx) error {
			_, err := tx.GetDeviceByTokenHash(ctx, sha("unknown"))
			return err
		},
		"GetDeviceByTokenHash/nil": func(ctx context.Context, tx smsinbox.Tx) error {
			_, err := tx.GetDeviceByTokenHash(ctx, nil)
			return err
		},
		"LockDevice/read": func(ctx context.Context, tx smsinbox.Tx) error {
			_, err := tx.LockDevice(ctx, "org_1", "dev_x")
			return err
		},
	}, inboxCalls{
		"LockDevice": func(ctx context.Context, tx smsinbox.Tx) error {
			_, err := tx.LockDevice(ctx, "org_1", "dev_x")
			return err
		},
		"LockDevice/other org": func(ctx context.Context, tx smsinbox.Tx) error {
			_, err := tx.LockDevice(ctx, "org_2", "dev_1")
			return err
		},
		"LockDevice/no org": func(ctx context.Context, tx smsinbox.Tx) error {
			_, err := tx.LockDevice(ctx, "", "dev_1")
			return err
		},
		"UpdateDevice": func(ctx context.Context, tx smsinbox.Tx) error {
			return tx.UpdateDevice(ctx, newDevice("dev_x", "org_1"))
		},
	})
}

// Balance chains.

func testSMSChainRoundTrip(t *testing.T, s Store) {
	mustInboxFixture(t, s)
	storekit.Create(t, s, engine.Tx.CreateWallet,
		storekit.NewWallet("wal_3", "org_1", engine.ChannelBkash, engine.OperationCashOut, "01700000003"),
		storekit.NewWallet("wal_4", "org_1", smsparse.ChannelUpay, engine.OperationCashOut, "01700000004"))
	inboxCreate(t, s, smsinbox.Tx.CreateDevice, newDevice("dev_2", "org_1"))
	anchored := &smsinbox.Chain{
		WalletID: "wal_1", OrganizationID: "org_1", DeviceID: "dev_1", Channel: engine.ChannelBkash,
		Balance: decimal.NewNullDecimal(dec("1500.50")), BalanceMessageID: "sms_1", UpdatedAt: base.Add(time.Microsecond),
	}
	// No balance yet: NULL, not zero.
	unanchored := newChain("wal_2", "org_1", "dev_1", engine.ChannelNagad)
	zero := newChain("wal_3", "org_1", "dev_2", engine.ChannelBkash)
	zero.Balance = decimal.NewNullDecimal(dec("0"))
	other := newChain("wal_9", "org_2", "dev_9", engine.ChannelBkash)
	inboxCreate(t, s, smsinbox.Tx.CreateChain, zero, other, unanchored, anchored)

	for _, want := range []*smsinbox.Chain{anchored, unanchored, zero, other} {
		inboxLocked(t, s, want, func(ctx context.Context, tx smsinbox.Tx) (*smsinbox.Chain, error) {
			return tx.LockChain(ctx, want.OrganizationID, want.WalletID)
		})
	}
	lock := func(orgID, walletID string) *smsinbox.Chain {
		t.Helper()
		return inboxGet(t, s, func(ctx context.Context, tx smsinbox.Tx) (*smsinbox.Chain, error) {
			return tx.LockChain(ctx, orgID, walletID)
		})
	}
	if got := lock("org_1", "wal_2"); got.Balance.Valid {
		t.Errorf("unanchored chain read back with balance %v", got.Balance)
	}
	if got := lock("org_1", "wal_1"); !got.Balance.Valid || !got.Balance.Decimal.Equal(dec("1500.5")) {
		t.Errorf("anchored chain read back with balance %v", got.Balance)
	}
	if got := lock("org_1", "wal_3"); !got.Balance.Valid || !got.Balance.Decimal.IsZero() {
		t.Errorf("zero chain read back with balance %v", got.Balance)
	}
	list := func(orgID, deviceID string) []*smsinbox.Chain {
		t.Helper()
		return inboxGet(t, s, func(ctx context.Context, tx smsinbox.Tx) ([]*smsinbox.Chain, error) {
			return tx.ListChains(ctx, orgID, deviceID)
		})
	}
	storekit.AssertEqual(t, list("org_1", ""), []*smsinbox.Chain{anchored, unanchored, zero})
	storekit.AssertEqual(t, list("org_1", "dev_1"), []*smsinbox.Chain{anchored, unanchored})
	storekit.AssertEqual(t, list("org_1", "dev_2"), []*smsinbox.Chain{zero})
	storekit.AssertEqual(t, list("org_2", ""), []*smsinbox.Chain{other})
	for _, c := range [][2]string{{"org_1", "dev_9"}, {"org_2", "dev_1"}, {"org_1", "dev_x"}, {"org_x", ""}, {"", ""}} {
		if got := list(c[0], c[1]); len(got) != 0 {
			t.Errorf("ListChains(%q, %q) = %s", c[0], c[1], storekit.JoinIDs(got, func(c *smsinbox.Chain) string { return c.WalletID }))
		}
	}

	dup := newChain("wal_1", "org_1", "dev_2", engine.ChannelBkash)
	storekit.WantDuplicate(t, "second chain of a wallet", inboxTry(s, smsinbox.Tx.CreateChain, dup))
	storekit.WantInternal(t, "chain of a missing wallet",
		inboxTry(s, smsinbox.Tx.CreateChain, newChain("wal_x", "org_1", "dev_1", engine.ChannelBkash)))
	storekit.WantInternal(t, "chain of a missing device",
		inboxTry(s, smsinbox.Tx.CreateChain, newChain("wal_4", "org_1", "dev_x", smsparse.ChannelUpay)))
	storekit.AssertEqual(t, lock("org_1", "wal_1"), anchored)

	// Update writes device, balance, balance message and updated at, and
	// nothing else; a balance can go back to none.
	unanchored.DeviceID, unanchored.Balance, unanchored.BalanceMessageID = "dev_2", decimal.NewNullDecimal(dec("0.01")), "sms_2"
	unanchored.UpdatedAt = base.Add(time.Minute)
	anchored.Balance, anchored.BalanceMessageID, anchored.UpdatedAt = decimal.NullDecimal{}, "", base.Add(2*time.Minute)
	inboxWrite(t, s, func(ctx context.Context, tx smsinbox.Tx) error {
		changed := *unanchored
		changed.OrganizationID, changed.Channel = "org_2", engine.ChannelBkash
		if err := tx.UpdateChain(ctx, &changed); err != nil {
			return err
		}
		return tx.UpdateChain(ctx, anchored)
	})
	storekit.AssertEqual(t, list("org_1", ""), []*smsinbox.Chain{anchored, unanchored, zero})
	storekit.AssertEqual(t, list("org_1", "dev_2"), []*smsinbox.Chain{unanchored, zero})

	inboxAllNotFound(t, s, inboxCalls{
		"LockChain/read": func(ctx context.Context, tx smsinbox.Tx) error {
			_, err := tx.LockChain(ctx, "org_1", "wal_x")
			return err
		},
	}, inboxCalls{
		"LockChain/unknown wallet": func(ctx context.Context, tx smsinbox.Tx) error {
			_, err := tx.LockChain(ctx, "org_1", "wal_x")
			return err
		},
		"LockChain/another org's wallet": func(ctx context.Context, tx smsinbox.Tx) error {
			_, err := tx.LockChain(ctx, "org_1", "wal_9")
			return err
		},
		"LockChain/wallet of org_1 from org_2": func(ctx context.Context, tx smsinbox.Tx) error {
			_, err := tx.LockChain(ctx, "org_2", "wal_1")
			return err
		},
		"UpdateChain": func(ctx context.Context, tx smsinbox.Tx) error {
			return tx.UpdateChain(ctx, newChain("wal_x", "org_1", "dev_1", engine.ChannelBkash))
		},
	})
}

// SetWalletsLiveUntil sets and clears engine.Wallet.LiveUntil of the
// wallets it names, and changes nothing else.
func testSetWalletsLiveUntil(t *testing.T, s Store) {
	mustInboxFixture(t, s)
	getWallet := func(orgID, id string) *engine.Wallet {
		t.Helper()
		return storekit.Get(t, s, func(ctx context.Context, tx engine.Tx) (*engine.Wallet, error) { return tx.GetWallet(ctx, orgID, id) })
	}
	w1, w2, w9 := getWallet("org_1", "wal_1"), getWallet("org_1", "wal_2"), getWallet("org_2", "wal_9")
	set := func(ids []string, until *time.Time) {
		t.Helper()
		inboxWrite(t, s, func(ctx context.Context, tx smsinbox.Tx) error { return tx.SetWalletsLiveUntil(ctx, ids, until) })
	}
	check := func() {
		t.Helper()
		storekit.AssertEqual(t, getWallet("org_1", "wal_1"), w1)
		storekit.AssertEqual(t, getWallet("org_1", "wal_2"), w2)
		storekit.AssertEqual(t, getWallet("org_2", "wal_9"), w9)
	}

	until := base.Add(5*time.Minute + time.Microsecond)
	set([]string{"wal_2", "wal_1"}, &until)
	w1.LiveUntil, w2.LiveUntil = ptr(until), ptr(until)
	check()
	set([]string{"wal_9"}, ptr(base))
	w9.LiveUntil = ptr(base)
	check()
	set([]string{"wal_1"}, nil)
	w1.LiveUntil = nil
	check()
	// None is nothing to do.
	set(nil, &until)
	set([]string{}, nil)
	check()
	// The engine's lock of a wallet sees it too.
	storekit.WantLocked(t, s, w2, func(ctx context.Context, tx engine.Tx) (*engine.Wallet, error) {
		return tx.LockWallet(ctx, "org_1", "wal_2")
	})
}

// Messages.

func getSMS(t *testing.T, s Store, orgID string, fingerprint []byte) *smsinbox.SMS {
	t.Helper()
	return inboxGet(t, s, func(ctx context.Context, tx smsinbox.Tx) (*smsinbox.SMS, error) {
		return tx.GetSMSByFingerprint(ctx, orgID, fingerprint)
	})
}

func testSMSRoundTrip(t *testing.T, s Store) {
	mustInboxFixture(t, s)
	// Every field set, the parse result included; amounts keep their value
	// (1500.50 is 1500.5), the commission its four decimals, the time its
	// instant (read back in any zone).
	credit := &smsinbox.SMS{
		ID: "sms_1", OrganizationID: "org_1", DeviceID: "dev_1", WalletID: "wal_1",
		Sender: "bKash", Body: "You have received Tk 1,500.50 from 01711111111.\nকৃতজ্ঞতা ☺",
		Fingerprint: sha("credit"), ReceivedAt: base.Add(-time.Microsecond),
		Status: smsinbox.StatusAccepted, Reason: "", DuplicateOf: "", Channel: smsparse.ChannelBkash,
		Parsed: &smsparse.Message{
			Channel: smsparse.ChannelBkash, Kind: smsparse.KindCashOutReceived, Credit: true,
			Amount: dec("1500.50"), Fee: dec("0"), Commission: dec("16.1343"),
			Counterparty: "01711111111", TransactionID: "ABC123XYZ0",
			Time: time.Date(2025, 3, 14, 15, 26, 0, 0, dhaka), Balance: dec("25000.75"), Reference: "inv 7",
		},
		CreatedAt: base, UpdatedAt: base.Add(time.Microsecond),
	}
	// A debit: Credit false, a fee, no counterparty, no reference.
	debit := newSMS("sms_2", "org_1", "dev_1", "wal_2", smsinbox.StatusHeld, &smsparse.Message{
		Channel: smsparse.ChannelNagad, Kind: smsparse.KindSendMoney, Credit: false,
		Amount: dec("510"), Fee: dec("5.00"), Commission: dec("0"), TransactionID: "7XK2M9QA",
		Time: time.Date(2025, 1, 2, 3, 4, 0, 0, dhaka), Balance: dec("0"),
	})
	debit.Reason = "balance 0.00 does not follow"
	// Not parsed: no channel, no wallet, no parse result.
	untrusted := newSMS("sms_3", "org_1", "dev_1", "", smsinbox.StatusUntrustedSender, nil)
	untrusted.Sender, untrusted.Reason = "+8801711111111", "sender +8801711111111 is not a wallet's"
	// From a wallet's sender, but not understood: a channel, no parse result.
	unparsed := newSMS("sms_4", "org_1", "dev_1", "", smsinbox.StatusUnparsed, nil)
	unparsed.Channel, unparsed.Reason = smsparse.ChannelBkash, "unknown format"
	// Another organization's message with credit's text.
	other := newSMS("sms_9", "org_2", "dev_9", "wal_9", smsinbox.StatusAccepted, newParsed(smsparse.ChannelBkash, "ABC123XYZ0"))
	other.Fingerprint = credit.Fingerprint
	inboxCreate(t, s, smsinbox.Tx.CreateSMS, credit, debit, untrusted, unparsed, other)

	for _, want := range []*smsinbox.SMS{credit, debit, untrusted, unparsed} {
		storekit.AssertEqual(t, getSMS(t, s, "org_1", want.Fingerprint), want)
	}
	storekit.AssertEqual(t, getSMS(t, s, "org_2", credit.Fingerprint), other)
	got := getSMS(t, s, "org_1", credit.Fingerprint)
	if p := got.Parsed; p == nil || p.Channel != got.Channel || !p.Amount.Equal(dec("1500.5")) ||
		p.Commission.String() != "16.1343" || !p.Time.Equal(credit.Parsed.Time) || got.Match != nil {
		t.Errorf("credit read back as %+v, parsed %+v", got, p)
	}
	for _, want := range []*smsinbox.SMS{untrusted, unparsed} {
		if got := getSMS(t, s, "org_1", want.Fingerprint); got.Parsed != nil {
			t.Errorf("%s read back with a parse result %+v", want.ID, got.Parsed)
		}
	}
	if got := getSMS(t, s, "org_1", debit.Fingerprint); got.Parsed.Credit || !got.Parsed.Balance.IsZero() || !got.Parsed.Fee.Equal(dec("5")) {
		t.Errorf("debit read back with parse result %+v", got.Parsed)
	}
	storekit.WantInternal(t, "message of a missing device",
		inboxTry(s, smsinbox.Tx.CreateSMS, newSMS("sms_x", "org_1", "dev_x", "", smsinbox.StatusUnparsed, nil)))
	storekit.WantDuplicate(t, "message with a known ID",
		inboxTry(s, smsinbox.Tx.CreateSMS, newSMS("sms_1", "org_1", "dev_1", "", smsinbox.StatusDuplicate, nil)))

	// Update writes status, reason and updated at, and nothing else.
	debit.Status, debit.Reason, debit.UpdatedAt = smsinbox.StatusAccepted, "", base.Add(time.Minute)
	credit.Status, credit.Reason, credit.UpdatedAt = smsinbox.StatusConflict, "two texts of ABC123XYZ0", base.Add(2*time.Minute)
	inboxWrite(t, s, func(ctx context.Context, tx smsinbox.Tx) error {
		changed := *debit
		changed.Body, changed.WalletID, changed.Channel, changed.Parsed = "x", "wal_1", smsparse.ChannelBkash, nil
		changed.ReceivedAt, changed.CreatedAt, changed.DuplicateOf = base.Add(time.Hour), base.Add(time.Hour), "sms_1"
		if err := tx.UpdateSMS(ctx, &changed); err != nil {
			return err
		}
		return tx.UpdateSMS(ctx, credit)
	})
	storekit.AssertEqual(t, getSMS(t, s, "org_1", debit.Fingerprint), debit)
	storekit.AssertEqual(t, getSMS(t, s, "org_1", credit.Fingerprint), credit)
	storekit.AssertEqual(t, getSMS(t, s, "org_2", credit.Fingerprint), other)

	inboxAllNotFound(t, s, inboxCalls{
		"GetSMSByFingerprint": func(ctx context.Context, tx smsinbox.Tx) error {
			_, err := tx.GetSMSByFingerprint(ctx, "org_1", sha("unknown"))
			return err
		},
		"GetSMSByFingerprint/other org": func(ctx context.Context, tx smsinbox.Tx) error {
			_, err := tx.GetSMSByFingerprint(ctx, "org_2", debit.Fingerprint)
			return err
		},
	}, inboxCalls{
		"UpdateSMS": func(ctx context.Context, tx smsinbox.Tx) error {
			return tx.UpdateSMS(ctx, newSMS("sms_x", "org_1", "dev_1", "", smsinbox.StatusHeld, nil))
		},
	})
}

// One original per text and organization; copies, stored as duplicates,
// are invisible to the lookups of originals.
func testSMSDuplicates(t *testing.T, s Store) {
	mustInboxFixture(t, s)
	const trx = "TRX0000001"
	orig := newSMS("sms_1", "org_1", "dev_1", "wal_1", smsinbox.StatusHeld, newParsed(smsparse.ChannelBkash, trx))
	orig.CreatedAt = base.Add(time.Second)
	inboxCreate(t, s, smsinbox.Tx.CreateSMS, orig)

	// A second original of the same text, whatever its status, is refused,
	// and the transaction goes on.
	second := newSMS("sms_2", "org_1", "dev_1", "wal_1", smsinbox.StatusAccepted, newParsed(smsparse.ChannelBkash, trx))
	second.Fingerprint = orig.Fingerprint
	storekit.WantDuplicate(t, "second original", inboxTry(s, smsinbox.Tx.CreateSMS, second))
	// Copies: status duplicate, any number of them. They carry the parse
	// result here so that only their status keeps them out of the lookups.
	copy1 := newSMS("sms_3", "org_1", "dev_1", "wal_1", smsinbox.StatusDuplicate, newParsed(smsparse.ChannelBkash, trx))
	copy1.Fingerprint, copy1.DuplicateOf, copy1.Reason = orig.Fingerprint, orig.ID, "the same message as sms_1"
	copy1.CreatedAt = base.Add(-time.Second)
	copy2 := newSMS("sms_4", "org_1", "dev_1", "wal_1", smsinbox.StatusDuplicate, nil)
	copy2.Fingerprint, copy2.DuplicateOf, copy2.Channel = orig.Fingerprint, orig.ID, smsparse.ChannelBkash
	inboxWrite(t, s, func(ctx context.Context, tx smsinbox.Tx) error {
		if err := tx.CreateSMS(ctx, second); !errors.Is(err, engine.ErrDuplicate) {
			return fmt.Errorf("second original in a transaction: %v, want ErrDuplicate", err)
		}
		if err := tx.CreateSMS(ctx, copy1); err != nil {
			return err
		}
		return tx.CreateSMS(ctx, copy2)
	})
	// Another organization has originals of its own.
	theirs := newSMS("sms_9", "org_2", "dev_9", "wal_9", smsinbox.StatusAccepted, newParsed(smsparse.ChannelBkash, trx))
	theirs.Fingerprint = orig.Fingerprint
	inboxCreate(t, s, smsinbox.Tx.CreateSMS, theirs)

	storekit.AssertEqual(t, getSMS(t, s, "org_1", orig.Fingerprint), orig)
	storekit.AssertEqual(t, getSMS(t, s, "org_2", orig.Fingerprint), theirs)
	// Copies of copies are still copies.
	copy3 := newSMS("sms_5", "org_1", "dev_1", "wal_1", smsinbox.StatusDuplicate, nil)
	copy3.Fingerprint, copy3.DuplicateOf = orig.Fingerprint, orig.ID
	inboxCreate(t, s, smsinbox.Tx.CreateSMS, copy3)
	storekit.AssertEqual(t, getSMS(t, s, "org_1", orig.Fingerprint), orig)
	all := inboxGet(t, s, func(ctx context.Context, tx smsinbox.Tx) ([]*smsinbox.SMS, error) {
		return tx.ListSMS(ctx, smsinbox.ListSMSParams{OrganizationID: "org_1"})
	})
	if ids := storekit.JoinIDs(all, func(m *smsinbox.SMS) string { return m.ID }); ids != "1,5,4,3" {
		t.Errorf("org_1's messages %s, want 1,5,4,3", ids)
	}
}

func testListSMSByTransactionID(t *testing.T, s Store) {
	mustInboxFixture(t, s)
	const trx = "TRX0000001"
	bkash := func(id, status string, created time.Duration) *smsinbox.SMS {
		m := newSMS(id, "org_1", "dev_1", "wal_1", status, newParsed(smsparse.ChannelBkash, trx))
		m.CreatedAt = base.Add(created)
		return m
	}
	accepted := bkash("sms_3", smsinbox.StatusAccepted, time.Second)
	// Created first: first, whatever its ID.
	conflict := bkash("sms_4", smsinbox.StatusConflict, 0)
	// The same creation time as accepted: after it by ID.
	held := bkash("sms_5", smsinbox.StatusHeld, time.Second)
	copied := bkash("sms_1", smsinbox.StatusDuplicate, -time.Second)
	copied.Fingerprint, copied.DuplicateOf = accepted.Fingerprint, accepted.ID
	otherID := newSMS("sms_6", "org_1", "dev_1", "wal_1", smsinbox.StatusAccepted, newParsed(smsparse.ChannelBkash, "TRX0000002"))
	otherChannel := newSMS("sms_7", "org_1", "dev_1", "wal_2", smsinbox.StatusAccepted, newParsed(smsparse.ChannelNagad, trx))
	otherOrg := newSMS("sms_9", "org_2", "dev_9", "wal_9", smsinbox.StatusAccepted, newParsed(smsparse.ChannelBkash, trx))
	unparsed := newSMS("sms_8", "org_1", "dev_1", "", smsinbox.StatusUnparsed, nil)
	unparsed.Channel = smsparse.ChannelBkash
	inboxCreate(t, s, smsinbox.Tx.CreateSMS, accepted, conflict, held, copied, otherID, otherChannel, otherOrg, unparsed)

	list := func(orgID, channel, trx string) []*smsinbox.SMS {
		t.Helper()
		return inboxGet(t, s, func(ctx context.Context, tx smsinbox.Tx) ([]*smsinbox.SMS, error) {
			return tx.ListSMSByTransactionID(ctx, orgID, channel, trx)
		})
	}
	storekit.AssertEqual(t, list("org_1", smsparse.ChannelBkash, trx), []*smsinbox.SMS{conflict, accepted, held})
	storekit.AssertEqual(t, list("org_1", smsparse.ChannelBkash, "TRX0000002"), []*smsinbox.SMS{otherID})
	storekit.AssertEqual(t, list("org_1", smsparse.ChannelNagad, trx), []*smsinbox.SMS{otherChannel})
	storekit.AssertEqual(t, list("org_2", smsparse.ChannelBkash, trx), []*smsinbox.SMS{otherOrg})
	for _, c := range [][3]string{
		{"org_1", smsparse.ChannelUpay, trx}, {"org_1", smsparse.ChannelBkash, "TRX0000003"},
		{"org_x", smsparse.ChannelBkash, trx}, {"org_1", smsparse.ChannelBkash, "trx0000001"},
		// An unparsed message carries no transaction ID: "" finds none.
		{"org_1", smsparse.ChannelBkash, ""},
	} {
		if got := list(c[0], c[1], c[2]); len(got) != 0 {
			t.Errorf("ListSMSByTransactionID(%q, %q, %q) = %s", c[0], c[1], c[2], storekit.JoinIDs(got, func(m *smsinbox.SMS) string { return m.ID }))
		}
	}
}

func testListHeldSMS(t *testing.T, s Store) {
	mustInboxFixture(t, s)
	held := func(id, walletID string, received time.Duration) *smsinbox.SMS {
		m := newSMS(id, "org_1", "dev_1", walletID, smsinbox.StatusHeld, newParsed(smsparse.ChannelBkash, "TRX"+id[len(id)-1:]))
		m.ReceivedAt = base.Add(received)
		// Created in the opposite order: received time decides.
		m.CreatedAt = base.Add(-received)
		return m
	}
	h1 := held("sms_1", "wal_1", 2*time.Second)
	h2 := held("sms_2", "wal_1", 0)
	h3 := held("sms_3", "wal_1", time.Second)
	// The same received time as h2: after it by ID.
	h4 := held("sms_4", "wal_1", 0)
	notHeld := held("sms_5", "wal_1", -time.Second)
	notHeld.Status = smsinbox.StatusConflict
	otherWallet := held("sms_6", "wal_2", -time.Second)
	otherWallet.Channel, otherWallet.Parsed.Channel = smsparse.ChannelNagad, smsparse.ChannelNagad
	otherOrg := newSMS("sms_9", "org_2", "dev_9", "wal_9", smsinbox.StatusHeld, newParsed(smsparse.ChannelBkash, "TRX9"))
	inboxCreate(t, s, smsinbox.Tx.CreateSMS, h1, h2, h3, h4, notHeld, otherWallet, otherOrg)

	list := func(walletID string) []*smsinbox.SMS {
		t.Helper()
		return inboxGet(t, s, func(ctx context.Context, tx smsinbox.Tx) ([]*smsinbox.SMS, error) {
			return tx.ListHeldSMS(ctx, walletID)
		})
	}
	storekit.AssertEqual(t, list("wal_1"), []*smsinbox.SMS{h2, h4, h3, h1})
	storekit.AssertEqual(t, list("wal_2"), []*smsinbox.SMS{otherWallet})
	storekit.AssertEqual(t, list("wal_9"), []*smsinbox.SMS{otherOrg})
	if got := list("wal_x"); len(got) != 0 {
		t.Errorf("ListHeldSMS(wal_x) = %d messages", len(got))
	}
	// Accepted, it is held no longer.
	h3.Status, h3.UpdatedAt = smsinbox.StatusAccepted, base.Add(time.Minute)
	inboxWrite(t, s, func(ctx context.Context, tx smsinbox.Tx) error { return tx.UpdateSMS(ctx, h3) })
	storekit.AssertEqual(t, list("wal_1"), []*smsinbox.SMS{h2, h4, h1})
}

func testListSMS(t *testing.T, s Store) {
	mustInboxFixture(t, s)
	// dep_1 of org_1 has an attempt of bKash TRXA; dep_9 of org_2 one of
	// bKash TRXB.
	storekit.Create(t, s, engine.Tx.CreateDeposit, storekit.NewDeposit("dep_1", "org_1", "m_1"), storekit.NewDeposit("dep_9", "org_2", "m_9"))
	att1 := storekit.NewAttempt("att_1", "dep_1", "org_1", engine.ChannelBkash, "TRXA")
	att1.Status, att1.FailureCode = engine.AttemptFailed, engine.FailureAmountMismatch
	storekit.Create(t, s, engine.Tx.CreateAttempt, att1, storekit.NewAttempt("att_9", "dep_9", "org_2", engine.ChannelBkash, "TRXB"))

	msg := func(id, walletID, status, channel, trx string, created time.Duration) *smsinbox.SMS {
		var p *smsparse.Message
		if trx != "" {
			p = newParsed(channel, trx)
		}
		m := newSMS(id, "org_1", "dev_1", walletID, status, p)
		m.Channel, m.CreatedAt = channel, base.Add(created)
		return m
	}
	// Its transaction ID was submitted to dep_1.
	s1 := msg("sms_1", "wal_1", smsinbox.StatusAccepted, engine.ChannelBkash, "TRXA", 0)
	// A copy of it: a copy is matched to nothing.
	s2 := msg("sms_2", "wal_1", smsinbox.StatusDuplicate, engine.ChannelBkash, "TRXA", time.Second)
	s2.Fingerprint, s2.DuplicateOf = s1.Fingerprint, s1.ID
	// TRXB was submitted to another organization's deposit: none of org_1's
	// business.
	s3 := msg("sms_3", "wal_1", smsinbox.StatusHeld, engine.ChannelBkash, "TRXB", 2*time.Second)
	// TRXA on another channel.
	s4 := msg("sms_4", "wal_2", smsinbox.StatusAccepted, engine.ChannelNagad, "TRXA", 3*time.Second)
	// Not parsed, no transaction ID.
	s5 := msg("sms_5", "", smsinbox.StatusUnparsed, engine.ChannelBkash, "", 4*time.Second)
	// The same creation time as s5: after it, as newest first is by ID
	// descending too.
	s0 := msg("sms_0", "", smsinbox.StatusUntrustedSender, "", "", 4*time.Second)
	s9 := newSMS("sms_9", "org_2", "dev_9", "wal_9", smsinbox.StatusAccepted, newParsed(engine.ChannelBkash, "TRXB"))
	inboxCreate(t, s, smsinbox.Tx.CreateSMS, s1, s2, s3, s4, s5, s0, s9)
	wantS1, wantS9 := *s1, *s9
	wantS1.Match = &smsinbox.Match{DepositID: "dep_1", AttemptID: "att_1", Status: engine.AttemptFailed, FailureCode: engine.FailureAmountMismatch}
	wantS9.Match = &smsinbox.Match{DepositID: "dep_9", AttemptID: "att_9", Status: engine.AttemptProcessing}

	list := func(p smsinbox.ListSMSParams) []*smsinbox.SMS {
		t.Helper()
		return inboxGet(t, s, func(ctx context.Context, tx smsinbox.Tx) ([]*smsinbox.SMS, error) {
			return tx.ListSMS(ctx, p)
		})
	}
	all := []*smsinbox.SMS{s5, s0, s4, s3, s2, &wantS1}
	storekit.AssertEqual(t, list(smsinbox.ListSMSParams{OrganizationID: "org_1"}), all)
	storekit.AssertEqual(t, list(smsinbox.ListSMSParams{OrganizationID: "org_1", Limit: -1}), all)
	storekit.AssertEqual(t, list(smsinbox.ListSMSParams{OrganizationID: "org_1", Limit: 6}), all)
	storekit.AssertEqual(t, list(smsinbox.ListSMSParams{OrganizationID: "org_1", Limit: 2}), []*smsinbox.SMS{s5, s0})
	storekit.AssertEqual(t, list(smsinbox.ListSMSParams{OrganizationID: "org_1", WalletID: "wal_1"}), []*smsinbox.SMS{s3, s2, &wantS1})
	storekit.AssertEqual(t, list(smsinbox.ListSMSParams{OrganizationID: "org_1", WalletID: "wal_1", Limit: 1}), []*smsinbox.SMS{s3})
	storekit.AssertEqual(t, list(smsinbox.ListSMSParams{OrganizationID: "org_1", Status: smsinbox.StatusAccepted}), []*smsinbox.SMS{s4, &wantS1})
	storekit.AssertEqual(t, list(smsinbox.ListSMSParams{OrganizationID: "org_1", WalletID: "wal_1", Status: smsinbox.StatusAccepted}),
		[]*smsinbox.SMS{&wantS1})
	storekit.AssertEqual(t, list(smsinbox.ListSMSParams{OrganizationID: "org_2"}), []*smsinbox.SMS{&wantS9})
	for _, p := range []smsinbox.ListSMSParams{
		{OrganizationID: "org_x"}, {}, {OrganizationID: "org_1", WalletID: "wal_9"},
		{OrganizationID: "org_1", Status: smsinbox.StatusConflict},
	} {
		if got := list(p); len(got) != 0 {
			t.Errorf("ListSMS(%+v) = %s", p, storekit.JoinIDs(got, func(m *smsinbox.SMS) string { return m.ID }))
		}
	}

	// The match is the attempt as it is now.
	att1.Status, att1.FailureCode, att1.UpdatedAt = engine.AttemptSucceeded, "", base.Add(time.Minute)
	storekit.Write(t, s, func(ctx context.Context, tx engine.Tx) error { return tx.UpdateAttempt(ctx, att1) })
	wantS1.Match.Status, wantS1.Match.FailureCode = engine.AttemptSucceeded, ""
	storekit.AssertEqual(t, list(smsinbox.ListSMSParams{OrganizationID: "org_1", Status: smsinbox.StatusAccepted}), []*smsinbox.SMS{s4, &wantS1})
}

// Manual payouts.

func getManualPayout(t *testing.T, s Store, key string) *smsinbox.ManualPayout {
	t.Helper()
	return inboxGet(t, s, func(ctx context.Context, tx smsinbox.Tx) (*smsinbox.ManualPayout, error) {
		return tx.GetManualPayout(ctx, key)
	})
}

func testManualPayouts(t *testing.T, s Store) {
	storekit.MustOrgs(t, s, "org_1", "org_2")
	queued := newManualPayout("wdr_1", "org_1")
	queued.Amount = dec("1500.50")
	done := &smsinbox.ManualPayout{OrganizationID: "org_1", Operator: "admin:alice ☺", Payout: engine.Payout{
		IdempotencyKey: "wdr_2", Reference: "BK7Q2M9XA1", Method: "nagad", Account: "01811111111",
		Amount: dec("0"), Status: smsinbox.PayoutSucceeded, CreatedAt: base.Add(time.Second),
		CompletedAt: base.Add(time.Minute + time.Microsecond),
	}}
	failed := newManualPayout("wdr_3", "org_1")
	failed.Status, failed.Reason, failed.Operator = smsinbox.PayoutFailed, "account closed", "admin:bob"
	failed.CreatedAt, failed.CompletedAt = base.Add(2*time.Second), base.Add(3*time.Second)
	// A refund: the payout of a deposit's payer, in the same queue.
	failed.DepositID = "dep_3"
	// The same creation time as queued: after it by key.
	theirs := newManualPayout("wdr_9", "org_2")
	theirs.Amount, theirs.Status, theirs.Reference, theirs.SMSID = dec("0.01"), smsinbox.PayoutMatched, "REF0000009", "sms_9"
	inboxCreate(t, s, smsinbox.Tx.CreateManualPayout, theirs, failed, done, queued)

	for _, want := range []*smsinbox.ManualPayout{queued, done, failed, theirs} {
		storekit.AssertEqual(t, getManualPayout(t, s, want.IdempotencyKey), want)
		inboxLocked(t, s, want, func(ctx context.Context, tx smsinbox.Tx) (*smsinbox.ManualPayout, error) {
			return tx.LockManualPayout(ctx, want.IdempotencyKey)
		})
	}
	if got := getManualPayout(t, s, "wdr_1"); !got.CompletedAt.IsZero() || !got.Amount.Equal(dec("1500.5")) {
		t.Errorf("queued payout read back completed %v, amount %s", got.CompletedAt, got.Amount)
	}
	if got := getManualPayout(t, s, "wdr_2"); !got.Amount.IsZero() {
		t.Errorf("payout of 0 read back as %s", got.Amount)
	}

	dup := newManualPayout("wdr_1", "org_2")
	dup.Amount = dec("1")
	storekit.WantDuplicate(t, "payout with a known key", inboxTry(s, smsinbox.Tx.CreateManualPayout, dup))
	storekit.WantInternal(t, "payout of a missing organization", inboxTry(s, smsinbox.Tx.CreateManualPayout, newManualPayout("wdr_x", "org_x")))
	storekit.AssertEqual(t, getManualPayout(t, s, "wdr_1"), queued)

	list := func(p smsinbox.ListPayoutsParams) []*smsinbox.ManualPayout {
		t.Helper()
		return inboxGet(t, s, func(ctx context.Context, tx smsinbox.Tx) ([]*smsinbox.ManualPayout, error) {
			return tx.ListManualPayouts(ctx, p)
		})
	}
	storekit.AssertEqual(t, list(smsinbox.ListPayoutsParams{}), []*smsinbox.ManualPayout{queued, theirs, done, failed})
	storekit.AssertEqual(t, list(smsinbox.ListPayoutsParams{OrganizationID: "org_1"}), []*smsinbox.ManualPayout{queued, done, failed})
	storekit.AssertEqual(t, list(smsinbox.ListPayoutsParams{Status: smsinbox.PayoutQueued}), []*smsinbox.ManualPayout{queued})
	storekit.AssertEqual(t, list(smsinbox.ListPayoutsParams{OrganizationID: "org_2", Status: smsinbox.PayoutMatched}), []*smsinbox.ManualPayout{theirs})
	for _, p := range []smsinbox.ListPayoutsParams{
		{OrganizationID: "org_x"}, {Status: "unknown"}, {OrganizationID: "org_2", Status: smsinbox.PayoutFailed},
	} {
		if got := list(p); len(got) != 0 {
			t.Errorf("ListManualPayouts(%+v) = %s", p, storekit.JoinIDs(got, func(p *smsinbox.ManualPayout) string { return p.IdempotencyKey }))
		}
	}

	// Update writes status, reference, reason, operator, SMS and completed
	// at, and nothing else; a completion can go back to none.
	queued.Status, queued.Reference, queued.Operator, queued.CompletedAt = smsinbox.PayoutSucceeded, "REF0000001", "admin:carol", base.Add(time.Hour)
	queued.SMSID = "sms_1"
	failed.Status, failed.Reason, failed.Operator, failed.CompletedAt = smsinbox.PayoutQueued, "", "", time.Time{}
	inboxWrite(t, s, func(ctx context.Context, tx smsinbox.Tx) error {
		changed := *queued
		changed.OrganizationID, changed.Method, changed.Account = "org_2", "upay", "x"
		changed.Amount, changed.CreatedAt, changed.DepositID = dec("9"), base.Add(time.Hour), "dep_x"
		if err := tx.UpdateManualPayout(ctx, &changed); err != nil {
			return err
		}
		return tx.UpdateManualPayout(ctx, failed)
	})
	storekit.AssertEqual(t, getManualPayout(t, s, "wdr_1"), queued)
	storekit.AssertEqual(t, getManualPayout(t, s, "wdr_3"), failed)
	storekit.AssertEqual(t, list(smsinbox.ListPayoutsParams{Status: smsinbox.PayoutQueued}), []*smsinbox.ManualPayout{failed})
	storekit.AssertEqual(t, list(smsinbox.ListPayoutsParams{OrganizationID: "org_1", Status: smsinbox.PayoutSucceeded}),
		[]*smsinbox.ManualPayout{queued, done})

	// Waiting for an operator: failed (queued again, created at base+2s)
	// and theirs (matched, at base), of both organizations; the settled
	// are not counted.
	storekit.AssertEqual(t, inboxGet(t, s, func(ctx context.Context, tx smsinbox.Tx) (map[string]engine.Queue, error) {
		return tx.CountWaitingPayouts(ctx)
	}), map[string]engine.Queue{
		smsinbox.PayoutQueued:  {Items: 1, Oldest: base.Add(2 * time.Second)},
		smsinbox.PayoutMatched: {Items: 1, Oldest: base},
	})
	more := newManualPayout("wdr_4", "org_2")
	more.CreatedAt = base.Add(time.Second)
	inboxCreate(t, s, smsinbox.Tx.CreateManualPayout, more)
	storekit.AssertEqual(t, inboxGet(t, s, func(ctx context.Context, tx smsinbox.Tx) (map[string]engine.Queue, error) {
		return tx.CountWaitingPayouts(ctx)
	}), map[string]engine.Queue{
		smsinbox.PayoutQueued:  {Items: 2, Oldest: base.Add(time.Second)},
		smsinbox.PayoutMatched: {Items: 1, Oldest: base},
	})

	inboxAllNotFound(t, s, inboxCalls{
		"GetManualPayout": func(ctx context.Context, tx smsinbox.Tx) error {
			_, err := tx.GetManualPayout(ctx, "wdr_x")
			return err
		},
		"LockManualPayout/read": func(ctx context.Context, tx smsinbox.Tx) error {
			_, err := tx.LockManualPayout(ctx, "wdr_x")
			return err
		},
	}, inboxCalls{
		"LockManualPayout": func(ctx context.Context, tx smsinbox.Tx) error {
			_, err := tx.LockManualPayout(ctx, "wdr_x")
			return err
		},
		"UpdateManualPayout": func(ctx context.Context, tx smsinbox.Tx) error {
			return tx.UpdateManualPayout(ctx, newManualPayout("wdr_x", "org_1"))
		},
	})
}

// Concurrency.

// LockChain serializes the messages of a wallet: each moves its balance
// one up, and the balance is the counter.
func testLockChainSerializes(t *testing.T, s Store) {
	mustInboxFixture(t, s)
	c := newChain("wal_1", "org_1", "dev_1", engine.ChannelBkash)
	c.Balance = decimal.NewNullDecimal(dec("0"))
	inboxCreate(t, s, smsinbox.Tx.CreateChain, c)
	lock := func(ctx context.Context, tx smsinbox.Tx) (*smsinbox.Chain, error) {
		return tx.LockChain(ctx, "org_1", "wal_1")
	}
	storekit.LockSerializes(t, inbox(s).InboxTx, inbox(s).InboxReadTx, 20, storekit.Counter[smsinbox.Tx, *smsinbox.Chain]{
		Lock: lock, Get: lock, Update: smsinbox.Tx.UpdateChain,
		Count: func(c *smsinbox.Chain) int { return int(c.Balance.Decimal.IntPart()) },
		Inc: func(c *smsinbox.Chain) {
			c.Balance = decimal.NewNullDecimal(c.Balance.Decimal.Add(decimal.NewFromInt(1)))
			c.BalanceMessageID = fmt.Sprintf("sms_%d", c.Balance.Decimal.IntPart())
		},
	})
}

// LockDevice serializes a device's reports: each moves its last report a
// microsecond on, and how far past base it is is the counter.
func testLockDeviceSerializes(t *testing.T, s Store) {
	mustInboxFixture(t, s)
	lock := func(ctx context.Context, tx smsinbox.Tx) (*smsinbox.Device, error) {
		return tx.LockDevice(ctx, "org_1", "dev_1")
	}
	storekit.LockSerializes(t, inbox(s).InboxTx, inbox(s).InboxReadTx, 20, storekit.Counter[smsinbox.Tx, *smsinbox.Device]{
		Lock: lock, Get: lock, Update: smsinbox.Tx.UpdateDevice,
		Count: func(d *smsinbox.Device) int { return microsAfter(d.LastSeenAt) },
		Inc: func(d *smsinbox.Device) {
			d.LastSeenAt = ptr(base.Add(time.Duration(microsAfter(d.LastSeenAt)+1) * time.Microsecond))
		},
	})
}

// LockManualPayout serializes the operators recording a payout's outcome:
// each appends to its reason, whose length is the counter.
func testLockManualPayoutSerializes(t *testing.T, s Store) {
	storekit.MustOrgs(t, s, "org_1")
	inboxCreate(t, s, smsinbox.Tx.CreateManualPayout, newManualPayout("wdr_1", "org_1"))
	lock := func(ctx context.Context, tx smsinbox.Tx) (*smsinbox.ManualPayout, error) {
		return tx.LockManualPayout(ctx, "wdr_1")
	}
	storekit.LockSerializes(t, inbox(s).InboxTx, inbox(s).InboxReadTx, 20, storekit.Counter[smsinbox.Tx, *smsinbox.ManualPayout]{
		Lock: lock, Get: lock, Update: smsinbox.Tx.UpdateManualPayout,
		Count: func(p *smsinbox.ManualPayout) int { return len(p.Reason) },
		Inc:   func(p *smsinbox.ManualPayout) { p.Reason += "x" },
	})
}

// Two copies of one SMS posted at once: exactly one is stored as the
// original, the others meet it as ErrDuplicate (and Ingest then stores
// them as copies).
func testConcurrentSameSMS(t *testing.T, s Store) {
	mustInboxFixture(t, s)
	storekit.RaceForOne(t, inbox(s).InboxTx, 20, func(ctx context.Context, tx smsinbox.Tx, i int) error {
		m := newSMS(fmt.Sprintf("sms_%02d", i), "org_1", "dev_1", "wal_1", smsinbox.StatusHeld, newParsed(smsparse.ChannelBkash, "TRX0000001"))
		m.Fingerprint = sha("same")
		return tx.CreateSMS(ctx, m)
	})
	if ids := storekit.JoinIDs(inboxGet(t, s, func(ctx context.Context, tx smsinbox.Tx) ([]*smsinbox.SMS, error) {
		return tx.ListSMS(ctx, smsinbox.ListSMSParams{OrganizationID: "org_1"})
	}), func(m *smsinbox.SMS) string { return m.ID }); len(ids) != 2 {
		t.Errorf("messages %s stored, want one", ids)
	}
}

// Held messages, bounded so that a forger cannot grow them without limit:
// found by the balance they follow, oldest
// stored first for expiry, and counted.

// heldFollowing is a held message of wal_1 that follows the balances prevs.
func heldFollowing(id string, received time.Duration, prevs ...string) *smsinbox.SMS {
	m := newSMS(id, "org_1", "dev_1", "wal_1", smsinbox.StatusHeld, newParsed(smsparse.ChannelBkash, "TRX"+id))
	m.ReceivedAt, m.CreatedAt = base.Add(received), base.Add(-received)
	for _, p := range prevs {
		m.PrevBalances = append(m.PrevBalances, dec(p))
	}
	return m
}

func testListHeldSMSFollowing(t *testing.T, s Store) {
	mustInboxFixture(t, s)
	a := heldFollowing("sms_a", 3*time.Second, "1000")
	// Equal values whatever their scale: 1000.00 is 1000.
	b := heldFollowing("sms_b", time.Second, "999.39", "1000.00")
	c := heldFollowing("sms_c", 2*time.Second, "1000.5")
	legacy := heldFollowing("sms_l", 4*time.Second) // stored before PrevBalances: read until it leaves held
	accepted := heldFollowing("sms_d", 0, "1000")
	accepted.Status = smsinbox.StatusAccepted
	otherWallet := heldFollowing("sms_e", 0, "1000")
	otherWallet.WalletID = "wal_2"
	inboxCreate(t, s, smsinbox.Tx.CreateSMS, a, b, c, legacy, accepted, otherWallet)

	following := func(balance string) []*smsinbox.SMS {
		t.Helper()
		return inboxGet(t, s, func(ctx context.Context, tx smsinbox.Tx) ([]*smsinbox.SMS, error) {
			return tx.ListHeldSMSFollowing(ctx, "wal_1", dec(balance))
		})
	}
	storekit.AssertEqual(t, following("1000.00"), []*smsinbox.SMS{b, a, legacy})
	storekit.AssertEqual(t, following("999.39"), []*smsinbox.SMS{b, legacy})
	storekit.AssertEqual(t, following("1000.50"), []*smsinbox.SMS{c, legacy})
	storekit.AssertEqual(t, following("1"), []*smsinbox.SMS{legacy})
	// Expired, a message is followed no more.
	legacy.Status, b.Status = smsinbox.StatusExpired, smsinbox.StatusConflict
	inboxWrite(t, s, func(ctx context.Context, tx smsinbox.Tx) error {
		if err := tx.UpdateSMS(ctx, legacy); err != nil {
			return err
		}
		return tx.UpdateSMS(ctx, b)
	})
	storekit.AssertEqual(t, following("1000"), []*smsinbox.SMS{a})
	if got := following("1"); len(got) != 0 {
		t.Errorf("ListHeldSMSFollowing(1) = %d messages", len(got))
	}

	oldest := func(before time.Time, limit int) []*smsinbox.SMS {
		t.Helper()
		return inboxGet(t, s, func(ctx context.Context, tx smsinbox.Tx) ([]*smsinbox.SMS, error) {
			return tx.ListOldestHeldSMS(ctx, "wal_1", before, limit)
		})
	}
	// By when stored (CreatedAt), not received: a before c; before is
	// exclusive.
	storekit.AssertEqual(t, oldest(base, 10), []*smsinbox.SMS{a, c})
	storekit.AssertEqual(t, oldest(base, 1), []*smsinbox.SMS{a})
	storekit.AssertEqual(t, oldest(c.CreatedAt, 10), []*smsinbox.SMS{a})
	if got := oldest(a.CreatedAt, 10); len(got) != 0 {
		t.Errorf("ListOldestHeldSMS(before the oldest) = %d messages", len(got))
	}
}

// The counts follow every insert and status change, per wallet ("" for
// none) and status, within the organization.
func testSMSCounts(t *testing.T, s Store) {
	mustInboxFixture(t, s)
	h1 := heldFollowing("sms_1", 0, "1")
	h2 := heldFollowing("sms_2", time.Second, "2")
	unparsed := newSMS("sms_3", "org_1", "dev_1", "", smsinbox.StatusUnparsed, nil)
	theirs := newSMS("sms_9", "org_2", "dev_9", "wal_9", smsinbox.StatusHeld, newParsed(smsparse.ChannelBkash, "TRX9"))
	inboxCreate(t, s, smsinbox.Tx.CreateSMS, h1, h2, unparsed, theirs)
	// A refused insert counts nothing.
	dup := newSMS("sms_4", "org_1", "dev_1", "wal_1", smsinbox.StatusHeld, nil)
	dup.Fingerprint = h1.Fingerprint
	storekit.WantDuplicate(t, "a second original", inboxTry(s, smsinbox.Tx.CreateSMS, dup))
	h1.Status = smsinbox.StatusAccepted
	h2.Status, h2.Reason = smsinbox.StatusHeld, "reason only" // no status change
	inboxWrite(t, s, func(ctx context.Context, tx smsinbox.Tx) error {
		if err := tx.UpdateSMS(ctx, h1); err != nil {
			return err
		}
		return tx.UpdateSMS(ctx, h2)
	})
	counts := func(orgID string) []smsinbox.SMSCount {
		t.Helper()
		return inboxGet(t, s, func(ctx context.Context, tx smsinbox.Tx) ([]smsinbox.SMSCount, error) {
			return tx.ListSMSCounts(ctx, orgID)
		})
	}
	storekit.AssertEqual(t, counts("org_1"), []smsinbox.SMSCount{
		{WalletID: "", Status: smsinbox.StatusUnparsed, Count: 1},
		{WalletID: "wal_1", Status: smsinbox.StatusAccepted, Count: 1},
		{WalletID: "wal_1", Status: smsinbox.StatusHeld, Count: 1},
	})
	storekit.AssertEqual(t, counts("org_2"), []smsinbox.SMSCount{{WalletID: "wal_9", Status: smsinbox.StatusHeld, Count: 1}})
	if got := counts("org_x"); len(got) != 0 {
		t.Errorf("counts of org_x: %v", got)
	}
	for _, c := range []struct {
		org, wallet, status string
		want                int
	}{
		{"org_1", "wal_1", smsinbox.StatusHeld, 1},
		{"org_1", "wal_1", smsinbox.StatusExpired, 0},
		{"org_1", "", smsinbox.StatusUnparsed, 1},
		{"org_2", "wal_1", smsinbox.StatusHeld, 0},
	} {
		got := inboxGet(t, s, func(ctx context.Context, tx smsinbox.Tx) (int, error) {
			return tx.CountSMS(ctx, c.org, c.wallet, c.status)
		})
		if got != c.want {
			t.Errorf("CountSMS(%s, %q, %s) = %d, want %d", c.org, c.wallet, c.status, got, c.want)
		}
	}
	// A rolled-back change counts nothing.
	err := inbox(s).InboxTx(context.Background(), func(ctx context.Context, tx smsinbox.Tx) error {
		h2.Status = smsinbox.StatusExpired
		if err := tx.UpdateSMS(ctx, h2); err != nil {
			return err
		}
		return errors.New("stop")
	})
	if err == nil {
		t.Fatal("rollback: no error")
	}
	storekit.AssertEqual(t, counts("org_1")[2], smsinbox.SMSCount{WalletID: "wal_1", Status: smsinbox.StatusHeld, Count: 1})
}

func testSMSSettings(t *testing.T, s Store) {
	storekit.MustOrgs(t, s, "org_1", "org_2")
	get := func(orgID string) (*smsinbox.Settings, error) {
		var out *smsinbox.Settings
		err := inbox(s).InboxReadTx(context.Background(), func(ctx context.Context, tx smsinbox.Tx) error {
			var err error
			out, err = tx.GetSettings(ctx, orgID)
			return err
		})
		return out, err
	}
	if _, err := get("org_1"); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("settings never set: %v", err)
	}
	one := &smsinbox.Settings{OrganizationID: "org_1", PayoutSMSConfirm: true, HeldMax: 1000, HeldMaxAge: 24 * time.Hour, UpdatedAt: base}
	two := &smsinbox.Settings{OrganizationID: "org_2", HeldMax: 5, HeldMaxAge: 90 * time.Second, UpdatedAt: base}
	inboxCreate(t, s, smsinbox.Tx.PutSettings, one, two)
	one.PayoutSMSConfirm, one.HeldMax, one.HeldMaxAge, one.UpdatedAt = false, 7, time.Hour+time.Microsecond, base.Add(time.Minute)
	inboxCreate(t, s, smsinbox.Tx.PutSettings, one)
	for _, want := range []*smsinbox.Settings{one, two} {
		got, err := get(want.OrganizationID)
		if err != nil {
			t.Fatal(err)
		}
		storekit.AssertEqual(t, got, want)
	}
	storekit.WantInternal(t, "settings of a missing organization", inboxTry(s, smsinbox.Tx.PutSettings, &smsinbox.Settings{OrganizationID: "org_x", UpdatedAt: base}))
}

// inbox is the SMS inbox's store on s: the provider's own SQL on the
// store's engine.SQLTx.
func inbox(s Store) smsinbox.Store { return smsinbox.NewSQLStore(s) }
