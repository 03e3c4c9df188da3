package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
)

// The operator console's rows: operators, sessions, payment links, and the
// console's searches (migrations 0016 and 0021).

func newOperator(id, email, orgID string) *engine.Operator {
	return &engine.Operator{
		ID: id, Email: email, Role: engine.RoleOperator, OrganizationID: orgID,
		SetupTokenHash: []byte("setup:" + id), SetupExpiresAt: base.Add(time.Hour), CreatedAt: base, UpdatedAt: base,
	}
}

func testOperatorRoundTrip(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1")
	a, b := newOperator("op_1", "a@example.com", "org_1"), newOperator("op_2", "b@example.com", "")
	create(t, s, inConsole(engine.ConsoleTx.CreateOperator), a, b)
	wantDuplicate(t, "same email", try(s, inConsole(engine.ConsoleTx.CreateOperator), newOperator("op_3", "a@example.com", "")))
	wantDuplicate(t, "same setup token", try(s, inConsole(engine.ConsoleTx.CreateOperator), &engine.Operator{
		ID: "op_4", Email: "c@example.com", Role: engine.RoleViewer, SetupTokenHash: a.SetupTokenHash, CreatedAt: base, UpdatedAt: base}))
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		got, err := tx.Console().GetOperator(ctx, "op_1")
		if err != nil {
			return err
		}
		assertEqual(t, got, a)
		if got, err = tx.Console().GetOperatorByEmail(ctx, "b@example.com"); err != nil {
			return err
		}
		assertEqual(t, got, b)
		if got, err = tx.Console().GetOperatorBySetupTokenHash(ctx, []byte("setup:op_1")); err != nil {
			return err
		}
		assertEqual(t, got, a)
		org, err := tx.Console().ListOperators(ctx, "org_1")
		if err != nil {
			return err
		}
		all, err := tx.Console().ListOperators(ctx, "")
		if ids := joinIDs(org, opID) + " | " + joinIDs(all, opID); ids != "1 | 1,2" {
			t.Errorf("ListOperators = %s", ids)
		}
		return err
	})
	// Every mutable field changes; a used setup token and no second factor
	// are NULL, and two operators may have none.
	disabled := base.Add(2 * time.Hour)
	a.PasswordHash, a.TOTPSecret, a.LastTOTPStep = "$argon2id$v=19$x", []byte("sealed"), 58000000
	a.SetupTokenHash, a.SetupExpiresAt, a.FailedLogins = nil, time.Time{}, 3
	a.LockedUntil, a.DisabledAt, a.UpdatedAt = base.Add(time.Minute), &disabled, base.Add(time.Second)
	b.SetupTokenHash, b.SetupExpiresAt = nil, time.Time{}
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		if err := tx.Console().UpdateOperator(ctx, a); err != nil {
			return err
		}
		return tx.Console().UpdateOperator(ctx, b)
	})
	got := get(t, s, func(ctx context.Context, tx engine.Tx) (*engine.Operator, error) {
		return tx.Console().GetOperator(ctx, "op_1")
	})
	assertEqual(t, got, a)
	wantLocked(t, s, a, func(ctx context.Context, tx engine.Tx) (*engine.Operator, error) {
		return tx.Console().LockOperator(ctx, "op_1")
	})
	wantAllNotFound(t, s, calls{
		"GetOperator": func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.Console().GetOperator(ctx, "op_9")
			return err
		},
		"GetOperatorByEmail": func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.Console().GetOperatorByEmail(ctx, "x@example.com")
			return err
		},
		"GetOperatorBySetupTokenHash": func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.Console().GetOperatorBySetupTokenHash(ctx, []byte("setup:op_1"))
			return err
		},
		"GetOperatorSessionByHash": func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.Console().GetOperatorSessionByHash(ctx, []byte("x"))
			return err
		},
		"GetPaymentLinkByToken": func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.Console().GetPaymentLinkByToken(ctx, "x")
			return err
		},
	}, calls{
		"UpdateOperator": func(ctx context.Context, tx engine.Tx) error {
			return tx.Console().UpdateOperator(ctx, newOperator("op_9", "z@example.com", ""))
		},
		"UpdateOperatorSession": func(ctx context.Context, tx engine.Tx) error {
			return tx.Console().UpdateOperatorSession(ctx, &engine.OperatorSession{ID: "ses_9"})
		},
		"UpdatePaymentLink": func(ctx context.Context, tx engine.Tx) error {
			return tx.Console().UpdatePaymentLink(ctx, &engine.PaymentLink{ID: "plink_9"})
		},
	})
}

func opID(o *engine.Operator) string { return o.ID }

func testOperatorSessions(t *testing.T, s Store) {
	create(t, s, inConsole(engine.ConsoleTx.CreateOperator), newOperator("op_1", "a@example.com", ""), newOperator("op_2", "b@example.com", ""))
	newSession := func(id, op string) *engine.OperatorSession {
		return &engine.OperatorSession{ID: id, TokenHash: []byte("hash:" + id), OperatorID: op,
			CreatedAt: base, LastSeenAt: base, ExpiresAt: base.Add(12 * time.Hour)}
	}
	s1, s2, s3 := newSession("ses_1", "op_1"), newSession("ses_2", "op_1"), newSession("ses_3", "op_2")
	create(t, s, inConsole(engine.ConsoleTx.CreateOperatorSession), s1, s2, s3)
	wantDuplicate(t, "same token hash", try(s, inConsole(engine.ConsoleTx.CreateOperatorSession), &engine.OperatorSession{
		ID: "ses_4", TokenHash: s1.TokenHash, OperatorID: "op_2", CreatedAt: base, LastSeenAt: base, ExpiresAt: base}))
	got := get(t, s, func(ctx context.Context, tx engine.Tx) (*engine.OperatorSession, error) {
		return tx.Console().GetOperatorSessionByHash(ctx, []byte("hash:ses_1"))
	})
	assertEqual(t, got, s1)
	s1.LastSeenAt = base.Add(time.Minute)
	at := base.Add(2 * time.Minute)
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		if err := tx.Console().UpdateOperatorSession(ctx, s1); err != nil {
			return err
		}
		return tx.Console().RevokeOperatorSessions(ctx, "op_1", at)
	})
	s1.RevokedAt, s2.RevokedAt = &at, &at
	for _, want := range []*engine.OperatorSession{s1, s2, s3} {
		got := get(t, s, func(ctx context.Context, tx engine.Tx) (*engine.OperatorSession, error) {
			return tx.Console().GetOperatorSessionByHash(ctx, want.TokenHash)
		})
		assertEqual(t, got, want)
	}
}

func testPaymentLinks(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1", "org_2")
	newLink := func(id, org string, at time.Time) *engine.PaymentLink {
		return &engine.PaymentLink{ID: id, OrganizationID: org, Amount: dec("1250.50"), Note: "invoice ☃ " + id,
			Token: "tok_" + id, CreatedBy: "a@example.com", CreatedAt: at, UpdatedAt: at}
	}
	l1, l2, l3 := newLink("plink_1", "org_1", base), newLink("plink_2", "org_1", base.Add(time.Second)), newLink("plink_3", "org_2", base)
	create(t, s, inConsole(engine.ConsoleTx.CreatePaymentLink), l1, l2, l3)
	wantDuplicate(t, "same token", try(s, inConsole(engine.ConsoleTx.CreatePaymentLink), &engine.PaymentLink{
		ID: "plink_4", OrganizationID: "org_1", Amount: dec("1"), Token: l1.Token, CreatedAt: base, UpdatedAt: base}))
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		got, err := tx.Console().GetPaymentLinkByToken(ctx, "tok_plink_1")
		if err != nil {
			return err
		}
		assertEqual(t, got, l1)
		_, err = tx.Console().GetPaymentLink(ctx, "org_2", "plink_1")
		wantNotFound(t, "another organization's link", err)
		ls, err := tx.Console().ListPaymentLinks(ctx, "org_1", 10)
		if ids := joinIDs(ls, func(l *engine.PaymentLink) string { return l.ID }); ids != "2,1" {
			t.Errorf("ListPaymentLinks = %s, want newest first", ids)
		}
		return err
	})
	l1.DepositID, l1.Deposits, l1.PaidDepositID, l1.UpdatedAt = "dep_1", 1, "dep_0", base.Add(time.Minute)
	write(t, s, func(ctx context.Context, tx engine.Tx) error { return tx.Console().UpdatePaymentLink(ctx, l1) })
	got := get(t, s, func(ctx context.Context, tx engine.Tx) (*engine.PaymentLink, error) {
		return tx.Console().GetPaymentLink(ctx, "org_1", "plink_1")
	})
	assertEqual(t, got, l1)
	wantLocked(t, s, l1, func(ctx context.Context, tx engine.Tx) (*engine.PaymentLink, error) {
		return tx.Console().LockPaymentLink(ctx, "org_1", "plink_1")
	})
	wantAllNotFound(t, s, nil, calls{
		"LockPaymentLink of another organization": func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.Console().LockPaymentLink(ctx, "org_2", "plink_1")
			return err
		},
	})
}

// LockPaymentLink serializes the opens of a link's checkouts: each counts
// one more in deposits.
func testLockPaymentLinkSerializes(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1")
	create(t, s, inConsole(engine.ConsoleTx.CreatePaymentLink), &engine.PaymentLink{ID: "plink_1", OrganizationID: "org_1", Amount: dec("800"),
		Token: "tok_1", CreatedAt: base, UpdatedAt: base})
	lockSerializes(t, s, 20, counter[*engine.PaymentLink]{
		Lock: func(ctx context.Context, tx engine.Tx) (*engine.PaymentLink, error) {
			return tx.Console().LockPaymentLink(ctx, "org_1", "plink_1")
		},
		Get: func(ctx context.Context, tx engine.Tx) (*engine.PaymentLink, error) {
			return tx.Console().GetPaymentLink(ctx, "org_1", "plink_1")
		},
		Update: inConsole(engine.ConsoleTx.UpdatePaymentLink),
		Count:  func(l *engine.PaymentLink) int { return l.Deposits },
		Inc:    func(l *engine.PaymentLink) { l.Deposits++ },
	})
}

func testSearchDeposits(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1", "org_2")
	var ds []*engine.Deposit
	for i, spec := range []struct{ org, phone, status string }{
		{"org_1", "01711111111", engine.StatusPending},
		{"org_1", "01722222222", engine.StatusSucceeded},
		{"org_1", "", engine.StatusFailed},
		{"org_2", "01711111111", engine.StatusSucceeded},
	} {
		d := newDeposit("dep_"+string(rune('a'+i)), spec.org, "m_"+string(rune('a'+i)))
		d.PayerPhone, d.Status = spec.phone, spec.status
		d.CreatedAt = base.Add(time.Duration(i) * time.Hour)
		ds = append(ds, d)
	}
	create(t, s, engine.Tx.CreateDeposit, ds...)
	create(t, s, engine.Tx.CreateAttempt, newAttempt("att_1", "dep_b", "org_1", engine.ChannelBkash, "TXB"),
		newAttempt("att_2", "dep_d", "org_2", engine.ChannelNagad, "TXD"))
	channels := engine.Channels()
	for _, c := range []struct {
		name string
		p    engine.SearchDepositsParams
		want string
	}{
		{"organization", engine.SearchDepositsParams{OrganizationID: "org_1", Limit: 10}, "c,b,a"},
		{"everyone", engine.SearchDepositsParams{Limit: 10}, "d,c,b,a"},
		{"limit", engine.SearchDepositsParams{Limit: 2}, "d,c"},
		{"merchant ID", engine.SearchDepositsParams{OrganizationID: "org_1", MerchantID: "m_b", Limit: 10}, "b"},
		{"another's merchant ID", engine.SearchDepositsParams{OrganizationID: "org_2", MerchantID: "m_b", Limit: 10}, ""},
		{"transaction ID", engine.SearchDepositsParams{TransactionID: "TXB", Channels: channels, Limit: 10}, "b"},
		{"another's transaction ID", engine.SearchDepositsParams{OrganizationID: "org_1", TransactionID: "TXD", Channels: channels, Limit: 10}, ""},
		{"payer phone", engine.SearchDepositsParams{PayerPhone: "01711111111", Limit: 10}, "d,a"},
		{"status", engine.SearchDepositsParams{OrganizationID: "org_1", Status: engine.StatusFailed, Limit: 10}, "c"},
		{"dates", engine.SearchDepositsParams{From: base.Add(time.Hour), To: base.Add(3 * time.Hour), Limit: 10}, "c,b"},
	} {
		got := get(t, s, func(ctx context.Context, tx engine.Tx) ([]*engine.Deposit, error) { return tx.SearchDeposits(ctx, c.p) })
		if ids := joinIDs(got, func(d *engine.Deposit) string { return d.ID }); ids != c.want {
			t.Errorf("%s: SearchDeposits = %q, want %q", c.name, ids, c.want)
		}
	}
	counts := get(t, s, func(ctx context.Context, tx engine.Tx) (map[string]int, error) {
		return tx.CountDepositsSince(ctx, "org_1", base.Add(time.Hour))
	})
	if len(counts) != 2 || counts[engine.StatusSucceeded] != 1 || counts[engine.StatusFailed] != 1 {
		t.Errorf("CountDepositsSince = %v", counts)
	}
}

func testSearchWithdrawals(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1", "org_2")
	w1, w2, w3 := newWithdrawal("wd_1", "org_1", "m_1"), newWithdrawal("wd_2", "org_1", "m_2"), newWithdrawal("wd_3", "org_2", "m_3")
	w2.CreatedAt, w3.CreatedAt = base.Add(time.Hour), base.Add(2*time.Hour)
	w2.Status = engine.WithdrawalSucceeded
	create(t, s, engine.Tx.CreateWithdrawal, w1, w2, w3)
	for _, c := range []struct {
		name string
		p    engine.SearchWithdrawalsParams
		want string
	}{
		{"organization", engine.SearchWithdrawalsParams{OrganizationID: "org_1", Limit: 10}, "2,1"},
		{"everyone", engine.SearchWithdrawalsParams{Limit: 10}, "3,2,1"},
		{"merchant ID", engine.SearchWithdrawalsParams{MerchantID: "m_1", Limit: 10}, "1"},
		{"status", engine.SearchWithdrawalsParams{OrganizationID: "org_1", Status: engine.WithdrawalProcessing, Limit: 10}, "1"},
	} {
		got := get(t, s, func(ctx context.Context, tx engine.Tx) ([]*engine.Withdrawal, error) {
			return tx.SearchWithdrawals(ctx, c.p)
		})
		if ids := joinIDs(got, func(w *engine.Withdrawal) string { return w.ID }); ids != c.want {
			t.Errorf("%s: SearchWithdrawals = %q, want %q", c.name, ids, c.want)
		}
	}
	counts := get(t, s, func(ctx context.Context, tx engine.Tx) (map[string]int, error) {
		return tx.CountWithdrawalsSince(ctx, "", base)
	})
	if len(counts) != 2 || counts[engine.WithdrawalProcessing] != 2 || counts[engine.WithdrawalSucceeded] != 1 {
		t.Errorf("CountWithdrawalsSince = %v", counts)
	}
}
