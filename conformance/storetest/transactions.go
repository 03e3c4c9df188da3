package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
)

// wantOrgs checks which of ids exist, and that the store still takes a
// write (a transaction left open could hold its only writer).
func wantOrgs(t *testing.T, s Store, exist map[string]bool) {
	t.Helper()
	create(t, s, engine.Tx.CreateOrganization, newOrg("org_after"))
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		for id, want := range exist {
			_, err := tx.GetOrganization(ctx, id)
			switch {
			case want && err != nil:
				t.Errorf("%s: %v, want it there", id, err)
			case !want && err != engine.ErrNotFound:
				t.Errorf("%s: %v, want ErrNotFound", id, err)
			}
		}
		return nil
	})
}

func testCommit(t *testing.T, s Store) {
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		if err := tx.CreateOrganization(ctx, newOrg("org_1")); err != nil {
			return err
		}
		// A transaction reads its own writes.
		if _, err := tx.GetOrganization(ctx, "org_1"); err != nil {
			return fmt.Errorf("own write: %w", err)
		}
		return tx.CreateOrganization(ctx, newOrg("org_2"))
	})
	wantOrgs(t, s, map[string]bool{"org_1": true, "org_2": true})
}

func testRollbackOnError(t *testing.T, s Store) {
	mustOrgs(t, s, "org_0")
	err := s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
		if err := tx.CreateOrganization(ctx, newOrg("org_err")); err != nil {
			return err
		}
		org := newOrg("org_0")
		org.Name = "changed"
		if err := tx.UpdateOrganization(ctx, org); err != nil {
			return err
		}
		return errors.New("no")
	})
	if err == nil {
		t.Fatal("InTx succeeded")
	}
	wantOrgs(t, s, map[string]bool{"org_err": false, "org_0": true})
	if got := getOrg(t, s, "org_0"); got.Name != newOrg("org_0").Name {
		t.Errorf("update rolled back to name %q", got.Name)
	}
}

func testRollbackOnPanic(t *testing.T, s Store) {
	func() {
		defer func() {
			if p := recover(); p != "boom" {
				t.Errorf("recovered %v, want the fn's panic", p)
			}
		}()
		_ = s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
			if err := tx.CreateOrganization(ctx, newOrg("org_panic")); err != nil {
				return err
			}
			panic("boom")
		})
	}()
	wantOrgs(t, s, map[string]bool{"org_panic": false})
}

// InTx and ReadTx return fn's error itself, so that the engine can tell
// its own errors and a store's sentinels apart.
func testErrorsUnchanged(t *testing.T, s Store) {
	ctx := context.Background()
	sentinel := &engine.Error{Code: engine.CodeForbidden, Message: "no"}
	wrapped := fmt.Errorf("wrapped: %w", sentinel)
	err := s.InTx(ctx, func(ctx context.Context, tx engine.Tx) error {
		if err := tx.CreateOrganization(ctx, newOrg("org_err")); err != nil {
			return err
		}
		return wrapped
	})
	var e *engine.Error
	if err != wrapped || !errors.As(err, &e) || e != sentinel {
		t.Errorf("InTx returned %v, want the fn's error", err)
	}
	if err := s.ReadTx(ctx, func(context.Context, engine.Tx) error { return wrapped }); err != wrapped {
		t.Errorf("ReadTx returned %v, want the fn's error", err)
	}
	// A store's own sentinels pass through as they are.
	mustOrgs(t, s, "org_1")
	wantDuplicate(t, "InTx of a duplicate", try(s, engine.Tx.CreateOrganization, newOrg("org_1")))
	wantNotFound(t, "InTx of a missing row", s.InTx(ctx, func(ctx context.Context, tx engine.Tx) error {
		_, err := tx.GetOrganization(ctx, "org_x")
		return err
	}))
	wantOrgs(t, s, map[string]bool{"org_err": false, "org_1": true})
}

func testReadTxIsReadOnly(t *testing.T, s Store) {
	err := s.ReadTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
		return tx.CreateOrganization(ctx, newOrg("org_1"))
	})
	if err == nil {
		t.Error("ReadTx allowed a write")
	}
	wantOrgs(t, s, map[string]bool{"org_1": false})
}

// A write is invisible to other transactions until it commits.
func testReadTxSeesNoUncommittedWrites(t *testing.T, s Store) {
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		if err := tx.CreateOrganization(ctx, newOrg("org_1")); err != nil {
			return err
		}
		err := s.ReadTx(ctx, func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.GetOrganization(ctx, "org_1")
			return err
		})
		if err != engine.ErrNotFound {
			t.Errorf("uncommitted organization read: %v, want ErrNotFound", err)
		}
		return nil
	})
	wantOrgs(t, s, map[string]bool{"org_1": true})
}

// ReadTx reads one snapshot: a write committed while it runs is not in it.
func testReadTxSnapshot(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1")
	written := false
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		before, err := tx.ListOrganizations(ctx)
		if err != nil {
			return err
		}
		// ReadTx may run fn again: write only once.
		if !written {
			create(t, s, engine.Tx.CreateOrganization, newOrg("org_2"))
			written = true
		}
		after, err := tx.ListOrganizations(ctx)
		if err != nil {
			return err
		}
		if _, err := tx.GetOrganization(ctx, "org_2"); err != engine.ErrNotFound {
			t.Errorf("organization committed during the ReadTx: %v, want ErrNotFound", err)
		}
		if len(before) != 1 || len(after) != 1 {
			t.Errorf("ReadTx listed %d then %d organizations, want 1 and 1", len(before), len(after))
		}
		return nil
	})
	wantOrgs(t, s, map[string]bool{"org_1": true, "org_2": true})
}

// A store that is an engine.OneReader reads one row, or one list, by a
// statement that sees what is committed; it refuses a write, and may
// refuse a second statement, with an error, and then has changed nothing.
func testReadOne(t *testing.T, s Store) {
	r, ok := s.(engine.OneReader)
	if !ok {
		t.Skip("the store is not an engine.OneReader")
	}
	ctx := context.Background()
	mustDeposits(t, s, "org_1", "a", "b")
	var got *engine.Deposit
	err := r.ReadOne(ctx, func(ctx context.Context, tx engine.Tx) error {
		var err error
		got, err = tx.GetDeposit(ctx, "org_1", "dep_a")
		return err
	})
	if err != nil || got == nil || got.MerchantID != "m_a" {
		t.Fatalf("ReadOne of a deposit: %+v, %v", got, err)
	}
	err = r.ReadOne(ctx, func(ctx context.Context, tx engine.Tx) error {
		_, err := tx.GetDeposit(ctx, "org_2", "dep_a")
		return err
	})
	wantNotFound(t, "ReadOne of another organization's deposit", err)
	var orgs []*engine.Organization
	err = r.ReadOne(ctx, func(ctx context.Context, tx engine.Tx) error {
		var err error
		orgs, err = tx.ListOrganizations(ctx)
		return err
	})
	if err != nil || len(orgs) != 1 {
		t.Fatalf("ReadOne of a list: %d organizations, %v", len(orgs), err)
	}
	// What another transaction commits is seen by the next ReadOne.
	mustOrgs(t, s, "org_2")
	err = r.ReadOne(ctx, func(ctx context.Context, tx engine.Tx) error {
		_, err := tx.GetOrganization(ctx, "org_2")
		return err
	})
	if err != nil {
		t.Fatalf("ReadOne after a commit: %v", err)
	}
	if err := r.ReadOne(ctx, func(ctx context.Context, tx engine.Tx) error {
		return tx.CreateOrganization(ctx, newOrg("org_3"))
	}); err == nil {
		t.Error("ReadOne allowed a write")
	}
	// A second statement either works or fails; it never writes.
	_ = r.ReadOne(ctx, func(ctx context.Context, tx engine.Tx) error {
		if _, err := tx.GetOrganization(ctx, "org_1"); err != nil {
			return err
		}
		return tx.CreateOrganization(ctx, newOrg("org_4"))
	})
	wantOrgs(t, s, map[string]bool{"org_3": false, "org_4": false, "org_2": true})
}

// ReadOne reads a deposit as ReadTx does, every column (a NULL wallet
// included), and sees each update committed after the read before.
func testReadOneDeposit(t *testing.T, s Store) {
	r, ok := s.(engine.OneReader)
	if !ok {
		t.Skip("the store is not an engine.OneReader")
	}
	mustOrgs(t, s, "org_1")
	create(t, s, engine.Tx.CreateWallet, newWallet("wal_1", "org_1", engine.ChannelBkash, engine.OperationCashOut, "01800000000"))
	h2h := newDeposit("dep_h2h", "org_1", "m_h2h")
	h2h.CheckoutMode, h2h.Action, h2h.Metadata = engine.CheckoutH2H, engine.ActionDisplayInstructions, []byte(`{"a":[1,"x"]}`)
	h2h.Channel, h2h.Operation, h2h.WalletID = engine.ChannelBkash, engine.OperationCashOut, "wal_1"
	h2h.RecipientPhone, h2h.RecipientName, h2h.QRPayload, h2h.AttemptsUsed = "01800000000", "Agent ☃", "qr", 2
	redirect := newDeposit("dep_redirect", "org_1", "m_redirect") // no wallet: NULL
	create(t, s, engine.Tx.CreateDeposit, h2h, redirect)
	readOne := func(id string) *engine.Deposit {
		t.Helper()
		var d *engine.Deposit
		if err := r.ReadOne(context.Background(), func(ctx context.Context, tx engine.Tx) error {
			var err error
			d, err = tx.GetDeposit(ctx, "org_1", id)
			return err
		}); err != nil {
			t.Fatalf("ReadOne of %s: %v", id, err)
		}
		return d
	}
	for _, want := range []*engine.Deposit{h2h, redirect} {
		assertEqual(t, readOne(want.ID), want)
		for name, by := range map[string]func(ctx context.Context, tx engine.Tx) (*engine.Deposit, error){
			"merchant ID": func(ctx context.Context, tx engine.Tx) (*engine.Deposit, error) {
				return tx.GetDepositByMerchantID(ctx, "org_1", want.MerchantID)
			},
			"checkout token": func(ctx context.Context, tx engine.Tx) (*engine.Deposit, error) {
				return tx.GetDepositByCheckoutToken(ctx, want.CheckoutToken)
			},
		} {
			var got *engine.Deposit
			err := r.ReadOne(context.Background(), func(ctx context.Context, tx engine.Tx) error {
				var err error
				got, err = by(ctx, tx)
				return err
			})
			if err != nil {
				t.Fatalf("ReadOne of %s by %s: %v", want.ID, name, err)
			}
			assertEqual(t, got, want)
		}
		assertEqual(t, readOne(want.ID), get(t, s, func(ctx context.Context, tx engine.Tx) (*engine.Deposit, error) {
			return tx.GetDeposit(ctx, "org_1", want.ID)
		}))
	}
	for i := range 3 {
		h2h.AttemptsUsed, h2h.UpdatedAt = 3+i, base.Add(time.Duration(i+1)*time.Second)
		write(t, s, func(ctx context.Context, tx engine.Tx) error { return tx.UpdateDeposit(ctx, h2h) })
		assertEqual(t, readOne(h2h.ID), h2h)
	}
}
