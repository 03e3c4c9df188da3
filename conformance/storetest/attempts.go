package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
)

func testAttemptRoundTrip(t *testing.T, s Store) {
	mustDeposits(t, s, "org_1", "1", "2")
	// a is never leased: zero LeasedUntil and empty LeaseOwner.
	a := newAttempt("att_1", "dep_1", "org_1", engine.ChannelBkash, "TRX1")
	b := &engine.Attempt{
		ID: "att_2", DepositID: "dep_1", OrganizationID: "org_1", Channel: engine.ChannelNagad, TransactionID: "TRX2",
		PayerPhone: "01712345678", // typed on a wallet checkout
		Status:     engine.AttemptDelayed, FailureCode: engine.FailureTransactionNotFound, Tries: 3,
		NextRunAt: base.Add(time.Minute), LeaseOwner: "worker-1", LeasedUntil: base.Add(30 * time.Second),
		CreatedAt: base.Add(time.Microsecond), UpdatedAt: base.Add(time.Second),
	}
	c := newAttempt("att_0", "dep_2", "org_1", engine.ChannelBkash, "TRX3")
	create(t, s, engine.Tx.CreateAttempt, a, b, c)
	listAttempts := func(depositID string) []*engine.Attempt {
		t.Helper()
		return get(t, s, func(ctx context.Context, tx engine.Tx) ([]*engine.Attempt, error) {
			return tx.ListAttempts(ctx, depositID)
		})
	}
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		got, err := tx.GetAttempt(ctx, "att_1")
		if err != nil {
			return err
		}
		assertEqual(t, got, a)
		if !got.LeasedUntil.IsZero() || got.LeaseOwner != "" {
			t.Errorf("never-leased attempt read back with lease %q until %v", got.LeaseOwner, got.LeasedUntil)
		}
		if got, err = tx.GetAttemptByTransactionID(ctx, engine.ChannelNagad, "TRX2"); err != nil {
			return err
		}
		assertEqual(t, got, b)
		return nil
	})
	assertEqual(t, listAttempts("dep_1"), []*engine.Attempt{a, b})
	if list := listAttempts("dep_x"); len(list) != 0 {
		t.Errorf("ListAttempts(dep_x) = %v", list)
	}

	// Resolve b, clearing its lease; lease a.
	b.Status, b.FailureCode, b.Tries = engine.AttemptSucceeded, "", 4
	b.NextRunAt, b.LeaseOwner, b.LeasedUntil, b.UpdatedAt = base.Add(time.Hour), "", time.Time{}, base.Add(2*time.Hour)
	a.Status, a.FailureCode, a.Tries = engine.AttemptFailed, engine.FailureAmountMismatch, 1
	a.LeaseOwner, a.LeasedUntil, a.UpdatedAt = "worker-2", base.Add(time.Minute), base.Add(time.Minute)
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		if err := tx.UpdateAttempt(ctx, a); err != nil {
			return err
		}
		return tx.UpdateAttempt(ctx, b)
	})
	assertEqual(t, listAttempts("dep_1"), []*engine.Attempt{a, b})
	for _, want := range []*engine.Attempt{a, b} {
		wantLocked(t, s, want, func(ctx context.Context, tx engine.Tx) (*engine.Attempt, error) {
			return tx.LockAttempt(ctx, want.ID)
		})
	}

	wantAllNotFound(t, s, calls{
		"GetAttempt": func(ctx context.Context, tx engine.Tx) error { _, err := tx.GetAttempt(ctx, "att_x"); return err },
		"GetAttemptByTransactionID/channel": func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.GetAttemptByTransactionID(ctx, engine.ChannelNagad, "TRX1")
			return err
		},
		"GetAttemptByTransactionID/id": func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.GetAttemptByTransactionID(ctx, engine.ChannelBkash, "TRX9")
			return err
		},
	}, calls{
		"UpdateAttempt": func(ctx context.Context, tx engine.Tx) error {
			return tx.UpdateAttempt(ctx, newAttempt("att_x", "dep_1", "org_1", "bkash", "X"))
		},
		"LockAttempt": func(ctx context.Context, tx engine.Tx) error { _, err := tx.LockAttempt(ctx, "att_x"); return err },
	})
	// An attempt must belong to a deposit that exists.
	wantInternal(t, "attempt of a missing deposit",
		try(s, engine.Tx.CreateAttempt, newAttempt("att_y", "dep_missing", "org_1", "bkash", "Y")))
}

// One transaction ID serves one deposit per channel, across organizations.
func testAttemptDuplicateTransactionID(t *testing.T, s Store) {
	mustDeposits(t, s, "org_1", "1", "2")
	mustDeposits(t, s, "org_2", "3")
	create(t, s, engine.Tx.CreateAttempt, newAttempt("att_1", "dep_1", "org_1", engine.ChannelBkash, "TRX1"))
	for name, a := range map[string]*engine.Attempt{
		"same deposit":       newAttempt("att_2", "dep_1", "org_1", engine.ChannelBkash, "TRX1"),
		"other deposit":      newAttempt("att_3", "dep_2", "org_1", engine.ChannelBkash, "TRX1"),
		"other organization": newAttempt("att_4", "dep_3", "org_2", engine.ChannelBkash, "TRX1"),
		"same id":            newAttempt("att_1", "dep_2", "org_1", engine.ChannelBkash, "TRX5"),
	} {
		wantDuplicate(t, name, try(s, engine.Tx.CreateAttempt, a))
	}
	// The same ID on another channel is another payment.
	create(t, s, engine.Tx.CreateAttempt, newAttempt("att_5", "dep_3", "org_2", engine.ChannelNagad, "TRX1"))
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		for channel, want := range map[string]string{engine.ChannelBkash: "att_1", engine.ChannelNagad: "att_5"} {
			got, err := tx.GetAttemptByTransactionID(ctx, channel, "TRX1")
			if err != nil {
				return err
			}
			if got.ID != want {
				t.Errorf("%s TRX1 is %s, want %s", channel, got.ID, want)
			}
		}
		return nil
	})
}
