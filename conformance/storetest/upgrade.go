package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
)

// UpgradeTransactionIDs is the upgrade test of migration 0020, which made a
// submitted transaction ID unique per organization and marks succeeded IDs
// in a table of their own. open opens the store (migrating it); downgrade
// takes an open store back to the schema before 0020, rows kept, and
// closes it. Attempts written before come through unchanged, and each
// succeeded one is marked.
func UpgradeTransactionIDs(t *testing.T, open func() Store, downgrade func(Store)) {
	t.Helper()
	s := open()
	mustDeposits(t, s, "org_1", "1", "2")
	mustDeposits(t, s, "org_2", "3", "4")
	won := newAttempt("att_won", "dep_1", "org_1", engine.ChannelBkash, "TRX1")
	won.Status, won.Tries = engine.AttemptSucceeded, 2
	lost := newAttempt("att_lost", "dep_3", "org_2", engine.ChannelBkash, "TRX2")
	lost.Status, lost.FailureCode, lost.Tries = engine.AttemptFailed, engine.FailureRecipientMismatch, 1
	running := newAttempt("att_run", "dep_2", "org_1", engine.ChannelNagad, "TRX1")
	running.Status, running.PayerPhone = engine.AttemptDelayed, "01712345678"
	running.LeaseOwner, running.LeasedUntil = "worker-1", base.Add(time.Minute)
	other := newAttempt("att_other", "dep_4", "org_2", engine.ChannelNagad, "TRX3")
	other.Status = engine.AttemptSucceeded
	all := []*engine.Attempt{won, lost, running, other}
	create(t, s, engine.Tx.CreateAttempt, all...)
	downgrade(s)

	s = open()
	defer s.Close()
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		for _, want := range all {
			got, err := tx.GetAttempt(ctx, want.ID)
			if err != nil {
				return fmt.Errorf("%s: %w", want.ID, err)
			}
			assertEqual(t, got, want)
		}
		for _, c := range []struct{ channel, id string }{
			{engine.ChannelBkash, "TRX1"}, {engine.ChannelNagad, "TRX3"},
		} {
			got, err := tx.GetSucceededAttempt(ctx, c.channel, c.id)
			if err != nil {
				return fmt.Errorf("succeeded %s %s: %w", c.channel, c.id, err)
			}
			if got.Status != engine.AttemptSucceeded || got.Channel != c.channel || got.TransactionID != c.id {
				t.Errorf("succeeded %s %s is %+v", c.channel, c.id, got)
			}
		}
		for _, c := range []struct{ channel, id string }{
			{engine.ChannelBkash, "TRX2"}, {engine.ChannelNagad, "TRX1"},
		} {
			if _, err := tx.GetSucceededAttempt(ctx, c.channel, c.id); !errors.Is(err, engine.ErrNotFound) {
				t.Errorf("succeeded %s %s: %v, want ErrNotFound", c.channel, c.id, err)
			}
		}
		return nil
	})
	// The new rules hold for the old rows: another organization may submit
	// an ID, but not succeed one that succeeded; the organization itself
	// may not submit its ID again.
	again := newAttempt("att_again", "dep_2", "org_1", engine.ChannelBkash, "TRX2")
	wantDuplicate(t, "the organization's own ID", try(s, engine.Tx.CreateAttempt, newAttempt("att_dup", "dep_2", "org_1", engine.ChannelBkash, "TRX1")))
	squat := newAttempt("att_squat", "dep_3", "org_2", engine.ChannelBkash, "TRX1")
	create(t, s, engine.Tx.CreateAttempt, squat, again)
	wantDuplicate(t, "a second success", try(s, engine.Tx.MarkTransactionSucceeded, squat))
	create(t, s, engine.Tx.MarkTransactionSucceeded, again)
}
