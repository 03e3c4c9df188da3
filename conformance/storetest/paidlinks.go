package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
)

// seedPaidLinks writes links and checkouts of every kind, for an
// adapter's test of migration 0021, and returns the paid deposit each link
// must have ("" for none).
func seedPaidLinks(t *testing.T, s engine.Store) map[string]string {
	t.Helper()
	base := time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)
	want := map[string]string{}
	err := s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
		for _, org := range []string{"org_1", "org_2"} {
			if err := tx.CreateOrganization(ctx, &engine.Organization{ID: org, Name: org, CreatedAt: base, UpdatedAt: base}); err != nil {
				return err
			}
		}
		for i, c := range []struct {
			org      string
			statuses []string // of checkouts 1, 2, …; "late" is cancelled with a succeeded attempt
			paid     int      // the paid checkout's number, 0 for none
		}{
			{"org_1", []string{engine.StatusSucceeded, engine.StatusPending}, 1},
			{"org_1", []string{"late", engine.StatusCancelled, engine.StatusPending}, 1},
			{"org_1", []string{engine.StatusCancelled, engine.StatusExpired, engine.StatusRefunded}, 3},
			{"org_2", []string{engine.StatusCancelled, engine.StatusPending}, 0},
			{"org_2", nil, 0},
		} {
			l := &engine.PaymentLink{ID: engine.NewID(engine.PrefixPaymentLink, base), OrganizationID: c.org,
				Amount: decimal.RequireFromString("800"), Token: "tok_" + string(rune('a'+i)), Deposits: len(c.statuses), CreatedAt: base, UpdatedAt: base}
			want[l.ID] = ""
			for n, status := range c.statuses {
				id := engine.NewID(engine.PrefixDeposit, base)
				d := &engine.Deposit{
					ID: id, OrganizationID: c.org, MerchantID: l.ID + "-" + string(rune('1'+n)),
					CheckoutMode: engine.CheckoutRedirect, Amount: l.Amount, PaymentMethod: "bkash", RedirectURL: "https://pay.example/pay/x",
					Metadata: []byte("{}"), Status: status, Action: engine.ActionRedirect, Channel: engine.ChannelBkash,
					CheckoutToken: "tok_" + id, CheckoutURL: "https://pay.example/c/" + id, VerificationState: engine.VerificationProcessing,
					ExpiresAt: base.Add(time.Hour), CreatedAt: base, UpdatedAt: base,
				}
				if status == "late" {
					d.Status = engine.StatusCancelled
				}
				if err := tx.CreateDeposit(ctx, d); err != nil {
					return err
				}
				if status == "late" {
					if err := tx.CreateAttempt(ctx, &engine.Attempt{ID: engine.NewID(engine.PrefixAttempt, base), DepositID: id, OrganizationID: c.org,
						Channel: engine.ChannelBkash, TransactionID: "LATE" + id[len(id)-6:], Status: engine.AttemptSucceeded,
						NextRunAt: base, CreatedAt: base, UpdatedAt: base}); err != nil {
						return err
					}
				}
				if n+1 == c.paid {
					want[l.ID] = id
				}
				l.DepositID = id
			}
			if err := tx.Console().CreatePaymentLink(ctx, l); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return want
}

// checkPaidLinks checks that every link seedPaidLinks wrote is paid by the
// deposit it returned.
func checkPaidLinks(t *testing.T, s engine.Store, want map[string]string) {
	t.Helper()
	err := s.ReadTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
		for _, org := range []string{"org_1", "org_2"} {
			ls, err := tx.Console().ListPaymentLinks(ctx, org, 10)
			if err != nil {
				return err
			}
			for _, l := range ls {
				if l.PaidDepositID != want[l.ID] {
					t.Errorf("link %s: paid by %q, want %q", l.ID, l.PaidDepositID, want[l.ID])
				}
				delete(want, l.ID)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != 0 {
		t.Errorf("links not found: %v", want)
	}
}
