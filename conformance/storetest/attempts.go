package storetest

import (
	"context"
	"errors"
	"fmt"
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
		if got, err = tx.GetAttemptByTransactionID(ctx, "org_1", engine.ChannelNagad, "TRX2"); err != nil {
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
		wantLocked(t, s, want, func(ctx context.Context, tx engine.Tx) (*engine.Attempt, error) {
			d, a, err := tx.LockDepositAndAttempt(ctx, "dep_1", want.ID)
			if err == nil && d.ID != "dep_1" {
				err = fmt.Errorf("LockDepositAndAttempt gave deposit %s, want dep_1", d.ID)
			}
			return a, err
		})
	}

	wantAllNotFound(t, s, calls{
		"GetAttempt": func(ctx context.Context, tx engine.Tx) error { _, err := tx.GetAttempt(ctx, "att_x"); return err },
		"GetAttemptByTransactionID/channel": func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.GetAttemptByTransactionID(ctx, "org_1", engine.ChannelNagad, "TRX1")
			return err
		},
		"GetAttemptByTransactionID/id": func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.GetAttemptByTransactionID(ctx, "org_1", engine.ChannelBkash, "TRX9")
			return err
		},
		"GetAttemptByTransactionID/organization": func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.GetAttemptByTransactionID(ctx, "org_2", engine.ChannelBkash, "TRX1")
			return err
		},
		"GetSucceededAttempt": func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.GetSucceededAttempt(ctx, engine.ChannelNagad, "TRX2") // succeeded, never marked
			return err
		},
	}, calls{
		"UpdateAttempt": func(ctx context.Context, tx engine.Tx) error {
			return tx.UpdateAttempt(ctx, newAttempt("att_x", "dep_1", "org_1", "bkash", "X"))
		},
		"LockAttempt": func(ctx context.Context, tx engine.Tx) error { _, err := tx.LockAttempt(ctx, "att_x"); return err },
		"LockDepositAndAttempt/attempt": func(ctx context.Context, tx engine.Tx) error {
			_, _, err := tx.LockDepositAndAttempt(ctx, "dep_1", "att_x")
			return err
		},
		"LockDepositAndAttempt/deposit": func(ctx context.Context, tx engine.Tx) error {
			_, _, err := tx.LockDepositAndAttempt(ctx, "dep_x", a.ID)
			return err
		},
	})
	// An attempt must belong to a deposit that exists.
	wantInternal(t, "attempt of a missing deposit",
		try(s, engine.Tx.CreateAttempt, newAttempt("att_y", "dep_missing", "org_1", "bkash", "Y")))
}

// Within an organization a transaction ID serves one attempt per channel;
// another organization may submit it too: only a success holds it across
// organizations (testSucceededTransactions).
func testAttemptDuplicateTransactionID(t *testing.T, s Store) {
	mustDeposits(t, s, "org_1", "1", "2")
	mustDeposits(t, s, "org_2", "3")
	create(t, s, engine.Tx.CreateAttempt, newAttempt("att_1", "dep_1", "org_1", engine.ChannelBkash, "TRX1"))
	for name, a := range map[string]*engine.Attempt{
		"same deposit":  newAttempt("att_2", "dep_1", "org_1", engine.ChannelBkash, "TRX1"),
		"other deposit": newAttempt("att_3", "dep_2", "org_1", engine.ChannelBkash, "TRX1"),
		"same id":       newAttempt("att_1", "dep_2", "org_1", engine.ChannelBkash, "TRX5"),
	} {
		wantDuplicate(t, name, try(s, engine.Tx.CreateAttempt, a))
	}
	// Another organization, and the same ID on another channel (another
	// payment).
	create(t, s, engine.Tx.CreateAttempt,
		newAttempt("att_4", "dep_3", "org_2", engine.ChannelBkash, "TRX1"),
		newAttempt("att_5", "dep_3", "org_2", engine.ChannelNagad, "TRX1"))
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		for _, c := range []struct{ org, channel, want string }{
			{"org_1", engine.ChannelBkash, "att_1"},
			{"org_2", engine.ChannelBkash, "att_4"},
			{"org_2", engine.ChannelNagad, "att_5"},
		} {
			got, err := tx.GetAttemptByTransactionID(ctx, c.org, c.channel, "TRX1")
			if err != nil {
				return fmt.Errorf("%s %s TRX1: %w", c.org, c.channel, err)
			}
			if got.ID != c.want {
				t.Errorf("%s %s TRX1 is %s, want %s", c.org, c.channel, got.ID, c.want)
			}
		}
		return nil
	})
}

// A succeeded transaction ID is marked once per channel, in any
// organization; a second mark is ErrDuplicate and leaves the transaction
// usable, so the caller can fail its attempt instead and commit. For an
// organization, an ID is then held by its own attempt if it has one, else
// by the succeeded one.
func testSucceededTransactions(t *testing.T, s Store) {
	mustDeposits(t, s, "org_1", "1", "2")
	mustDeposits(t, s, "org_2", "3")
	mustOrgs(t, s, "org_3")
	a1 := newAttempt("att_1", "dep_1", "org_1", engine.ChannelBkash, "TRX1")
	a2 := newAttempt("att_2", "dep_3", "org_2", engine.ChannelBkash, "TRX1")
	a3 := newAttempt("att_3", "dep_2", "org_1", engine.ChannelNagad, "TRX1")
	create(t, s, engine.Tx.CreateAttempt, a1, a2, a3)
	a1.Status, a3.Status = engine.AttemptSucceeded, engine.AttemptSucceeded
	a2.Status, a2.FailureCode = engine.AttemptFailed, engine.FailureTransactionIDUsed
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		if err := tx.MarkTransactionSucceeded(ctx, a1); err != nil {
			return err
		}
		if err := tx.UpdateAttempt(ctx, a1); err != nil {
			return err
		}
		// Another organization's attempt of the same payment, in the same
		// transaction: refused, and the transaction goes on.
		if err := tx.MarkTransactionSucceeded(ctx, a2); !errors.Is(err, engine.ErrDuplicate) {
			return fmt.Errorf("second mark of bkash TRX1: %v, want ErrDuplicate", err)
		}
		if err := tx.UpdateAttempt(ctx, a2); err != nil {
			return err
		}
		// The same ID on another channel is another payment.
		if err := tx.MarkTransactionSucceeded(ctx, a3); err != nil {
			return err
		}
		return tx.UpdateAttempt(ctx, a3)
	})
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		for channel, want := range map[string]*engine.Attempt{engine.ChannelBkash: a1, engine.ChannelNagad: a3} {
			got, err := tx.GetSucceededAttempt(ctx, channel, "TRX1")
			if err != nil {
				return fmt.Errorf("%s TRX1: %w", channel, err)
			}
			assertEqual(t, got, want)
		}
		got, err := tx.GetAttempt(ctx, "att_2")
		if err != nil {
			return err
		}
		assertEqual(t, got, a2)
		for _, c := range []struct{ org, channel, want string }{
			{"org_1", engine.ChannelBkash, "att_1"},
			{"org_2", engine.ChannelBkash, "att_2"}, // its own, failed
			{"org_3", engine.ChannelBkash, "att_1"}, // none of its own
			{"org_3", engine.ChannelNagad, "att_3"},
		} {
			got, err := tx.GetAttemptByTransactionID(ctx, c.org, c.channel, "TRX1")
			if err != nil {
				return fmt.Errorf("%s %s TRX1: %w", c.org, c.channel, err)
			}
			if got.ID != c.want {
				t.Errorf("%s %s TRX1 is held by %s, want %s", c.org, c.channel, got.ID, c.want)
			}
		}
		if _, err := tx.GetAttemptByTransactionID(ctx, "org_3", engine.ChannelBkash, "TRX9"); !errors.Is(err, engine.ErrNotFound) {
			t.Errorf("org_3 bkash TRX9: %v, want ErrNotFound", err)
		}
		return nil
	})
	// Again, in a transaction of its own, by any attempt of the ID.
	for _, a := range []*engine.Attempt{a1, a2} {
		wantDuplicate(t, "mark of "+a.ID, try(s, engine.Tx.MarkTransactionSucceeded, a))
	}
	// A mark names an attempt that exists.
	wantInternal(t, "mark of a missing attempt",
		try(s, engine.Tx.MarkTransactionSucceeded, newAttempt("att_x", "dep_1", "org_1", engine.ChannelBkash, "TRX9")))
}
