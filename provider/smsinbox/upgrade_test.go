package smsinbox_test

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/smsinbox"
	"github.com/payd-engine/payd/provider/smsinbox/smsparse"
	"github.com/payd-engine/payd/storage/sqlite"
)

// oldDatabase is a SQLite database at migration 0011 whose inbox and
// sandbox rows were written by storage/sqlite, before the providers kept
// their own SQL (commit 616e9b3; oldRows below is what it wrote, and the
// sandbox's test reads its sandbox rows). It returns a copy to open.
func oldDatabase(t *testing.T) string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "testdata", "sqlite-0011-stored-by-storage.db.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "payd.db")
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if _, err := io.Copy(out, zr); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReadsRowsTheStoresWrote: an existing database keeps working. The
// inbox's SQL, now its own, reads every field the storage adapter wrote,
// and its writes land in the same tables.
func TestReadsRowsTheStoresWrote(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, oldDatabase(t), smsinbox.Migrations())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	org, w, d, c, ms, s, ps, live := oldRows()
	inbox := smsinbox.NewSQLStore(store)
	err = inbox.InboxReadTx(ctx, func(ctx context.Context, tx smsinbox.Tx) error {
		gotD, err := tx.GetDeviceByTokenHash(ctx, d.TokenHash)
		if err != nil {
			return err
		}
		check(t, "device", gotD, d)
		gotC, err := tx.LockChain(ctx, org.ID, w.ID)
		if err != nil {
			return err
		}
		check(t, "chain", gotC, c)
		for _, m := range ms {
			got, err := tx.GetSMSByFingerprint(ctx, org.ID, m.Fingerprint)
			if err != nil {
				return err
			}
			check(t, "sms "+m.ID, got, m)
		}
		gotS, err := tx.GetSettings(ctx, org.ID)
		if err != nil {
			return err
		}
		check(t, "settings", gotS, s)
		for _, p := range ps {
			got, err := tx.GetManualPayout(ctx, p.IdempotencyKey)
			if err != nil {
				return err
			}
			check(t, "payout "+p.IdempotencyKey, got, p)
		}
		gotW, err := tx.GetWallet(ctx, org.ID, w.ID)
		if err != nil {
			return err
		}
		if gotW.LiveUntil == nil || !gotW.LiveUntil.Equal(live) {
			t.Errorf("live_until = %v, want %v", gotW.LiveUntil, live)
		}
		if n, err := tx.CountSMS(ctx, org.ID, w.ID, smsinbox.StatusAccepted); err != nil || n != 1 {
			t.Errorf("CountSMS = %d, %v, want 1", n, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// A copy of an old message is still a duplicate of it: the unique
	// index and the inbox's SQL agree on the stored fingerprint.
	err = inbox.InboxTx(ctx, func(ctx context.Context, tx smsinbox.Tx) error {
		dup := *ms[0]
		dup.ID = "sms_3"
		return tx.CreateSMS(ctx, &dup)
	})
	if !errorsIsDuplicate(err) {
		t.Errorf("CreateSMS of an old message's copy = %v, want engine.ErrDuplicate", err)
	}
}

func errorsIsDuplicate(err error) bool { return err != nil && errors.Is(err, engine.ErrDuplicate) }

// check compares got and want by value: as JSON, in which a decimal is
// its canonical text (1500.50 and 1500.5 are equal) and a time its instant.
func check(t *testing.T, what string, got, want any) {
	t.Helper()
	g, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	w, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if string(g) != string(w) {
		t.Errorf("%s:\n got %s\nwant %s", what, g, w)
	}
}

// oldRows are the rows the fixture holds, as the code before the inbox
// kept its own SQL wrote them.
func oldRows() (org *engine.Organization, w *engine.Wallet, d *smsinbox.Device, c *smsinbox.Chain, ms []*smsinbox.SMS, s *smsinbox.Settings, ps []*smsinbox.ManualPayout, live time.Time) {
	at := time.Date(2026, 11, 20, 8, 30, 15, 123456000, time.UTC)
	seen := at.Add(time.Minute)
	org = &engine.Organization{ID: "org_old", Name: "Old", CreatedAt: at, UpdatedAt: at}
	w = &engine.Wallet{ID: "wal_old", OrganizationID: org.ID, Channel: "bkash", Operation: "cash_out", Phone: "01711111111", Enabled: true, CreatedAt: at}
	d = &smsinbox.Device{ID: "dev_old", OrganizationID: org.ID, Name: "phone", TokenHash: []byte{1, 2, 3, 4}, TokenHint: "abcd", CreatedAt: at, LastSeenAt: &seen}
	c = &smsinbox.Chain{WalletID: w.ID, OrganizationID: org.ID, DeviceID: d.ID, Channel: "bkash",
		Balance: decimal.NewNullDecimal(decimal.RequireFromString("1500.50")), BalanceMessageID: "sms_1", UpdatedAt: at}
	parsed := &smsparse.Message{Channel: "bkash", Kind: smsparse.KindCashIn, Credit: true,
		Amount: decimal.RequireFromString("500"), Fee: decimal.RequireFromString("0"), Commission: decimal.RequireFromString("2.05"),
		Counterparty: "01822222222", TransactionID: "TRXOLD1", Time: time.Date(2026, 11, 20, 14, 30, 0, 0, time.UTC),
		Balance: decimal.RequireFromString("1500.50"), Reference: "ref"}
	ms = []*smsinbox.SMS{
		{ID: "sms_1", OrganizationID: org.ID, DeviceID: d.ID, WalletID: w.ID, Sender: "bKash", Body: "You have received...",
			Fingerprint: []byte{9, 8, 7}, ReceivedAt: at, Status: smsinbox.StatusAccepted, Channel: "bkash", Parsed: parsed,
			PrevBalances: []decimal.Decimal{decimal.RequireFromString("998.45"), decimal.RequireFromString("1000.5")},
			CreatedAt:    at, UpdatedAt: seen},
		{ID: "sms_2", OrganizationID: org.ID, DeviceID: d.ID, Sender: "Unknown", Body: "hello",
			Fingerprint: []byte{6, 5}, ReceivedAt: seen, Status: smsinbox.StatusUntrustedSender, Reason: "not a wallet sender",
			CreatedAt: seen, UpdatedAt: seen},
	}
	// Migration 0013 gives an organization's stored settings the default
	// re-synchronization.
	s = &smsinbox.Settings{OrganizationID: org.ID, PayoutSMSConfirm: true, HeldMax: 7, HeldMaxAge: 90 * time.Minute, UpdatedAt: at,
		ResyncAfter: 3, ResyncQuiet: 10 * time.Minute}
	ps = []*smsinbox.ManualPayout{
		{Payout: engine.Payout{IdempotencyKey: "wdr_1:1", Method: "bkash", Account: "01733333333", Amount: decimal.RequireFromString("250.75"),
			Status: smsinbox.PayoutQueued, CreatedAt: at}, OrganizationID: org.ID},
		{Payout: engine.Payout{IdempotencyKey: "wdr_2:1", Reference: "TRXSENT", Method: "nagad", Account: "01744444444",
			Amount: decimal.RequireFromString("100"), Status: smsinbox.PayoutSucceeded, CreatedAt: at, CompletedAt: seen},
			OrganizationID: org.ID, Operator: "ops@example.com", SMSID: "sms_1"},
	}
	return org, w, d, c, ms, s, ps, at.Add(time.Hour)
}
