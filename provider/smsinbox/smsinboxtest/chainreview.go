package smsinboxtest

import (
	"context"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/conformance/storekit"
	"github.com/payd-engine/payd/provider/smsinbox"
	"github.com/payd-engine/payd/provider/smsinbox/smsparse"
)

// The SMS inbox's self-healing chain and the operator's review:
// a message by ID within its organization, the held messages since the
// chain last moved and by their balance, gaps, and the columns they added
// (pasted_by, reviewed_by, gap_id, the chain's gaps).
func testSMSChainReview(t *testing.T, s Store) {
	mustInboxFixture(t, s)
	held := func(id string, stored time.Duration, balance string) *smsinbox.SMS {
		m := newSMS(id, "org_1", "dev_1", "wal_1", smsinbox.StatusHeld, newParsed(smsparse.ChannelBkash, "TRX"+id))
		m.Parsed.Balance, m.CreatedAt = dec(balance), base.Add(stored)
		return m
	}
	a, b, c := held("sms_a", time.Second, "1500.5"), held("sms_b", 2*time.Second, "1600"), held("sms_c", 3*time.Second, "1500.50")
	a.PastedBy, b.ReviewedBy = "ops", "ops2"
	accepted := held("sms_d", 4*time.Second, "1500.5")
	accepted.Status = smsinbox.StatusAccepted
	other := held("sms_e", 5*time.Second, "1500.5")
	other.WalletID = "wal_2"
	inboxCreate(t, s, smsinbox.Tx.CreateSMS, a, b, c, accepted, other)

	get := func(orgID, id string) (*smsinbox.SMS, error) {
		var m *smsinbox.SMS
		err := inbox(s).InboxReadTx(context.Background(), func(ctx context.Context, tx smsinbox.Tx) error {
			var err error
			m, err = tx.GetSMS(ctx, orgID, id)
			return err
		})
		return m, err
	}
	for _, want := range []*smsinbox.SMS{a, b} {
		got, err := get("org_1", want.ID)
		if err != nil {
			t.Fatal(err)
		}
		storekit.AssertEqual(t, got, want)
	}
	for _, c := range [][2]string{{"org_2", "sms_a"}, {"org_1", "sms_x"}} {
		if _, err := get(c[0], c[1]); err == nil {
			t.Errorf("GetSMS(%s, %s) found a message", c[0], c[1])
		} else {
			storekit.WantNotFound(t, "GetSMS "+c[0]+" "+c[1], err)
		}
	}

	since := func(at time.Time, limit int) []*smsinbox.SMS {
		t.Helper()
		return inboxGet(t, s, func(ctx context.Context, tx smsinbox.Tx) ([]*smsinbox.SMS, error) {
			return tx.ListHeldSMSSince(ctx, "wal_1", at, limit)
		})
	}
	// Stored after since (exclusive), oldest first, held only, the wallet's only.
	storekit.AssertEqual(t, since(base, 10), []*smsinbox.SMS{a, b, c})
	storekit.AssertEqual(t, since(a.CreatedAt, 10), []*smsinbox.SMS{b, c})
	storekit.AssertEqual(t, since(base, 2), []*smsinbox.SMS{a, b})
	if got := since(c.CreatedAt, 10); len(got) != 0 {
		t.Errorf("ListHeldSMSSince(the newest) = %d messages", len(got))
	}

	byBalance := func(balance string) []*smsinbox.SMS {
		t.Helper()
		return inboxGet(t, s, func(ctx context.Context, tx smsinbox.Tx) ([]*smsinbox.SMS, error) {
			return tx.ListHeldSMSByBalance(ctx, "wal_1", dec(balance), 10)
		})
	}
	// Equal values whatever their scale.
	storekit.AssertEqual(t, byBalance("1500.50"), []*smsinbox.SMS{a, c})
	storekit.AssertEqual(t, byBalance("1600.00"), []*smsinbox.SMS{b})
	if got := byBalance("1"); len(got) != 0 {
		t.Errorf("ListHeldSMSByBalance(1) = %d messages", len(got))
	}

	// UpdateSMS writes the review and the gap; a message leaves held.
	a.Status, a.ReviewedBy, a.GapID, a.UpdatedAt = smsinbox.StatusAccepted, "ops3", "gap_1", base.Add(time.Minute)
	inboxWrite(t, s, func(ctx context.Context, tx smsinbox.Tx) error { return tx.UpdateSMS(ctx, a) })
	if got, _ := get("org_1", "sms_a"); got == nil {
		t.Fatal("sms_a is gone")
	} else {
		storekit.AssertEqual(t, got, a)
	}
	storekit.AssertEqual(t, byBalance("1500.5"), []*smsinbox.SMS{c})

	// The chain's count of gaps.
	chain := newChain("wal_1", "org_1", "dev_1", smsparse.ChannelBkash)
	chain.Balance, chain.Gaps = decimal.NewNullDecimal(dec("1000")), 2
	inboxCreate(t, s, smsinbox.Tx.CreateChain, chain)
	chain.Gaps++
	inboxWrite(t, s, func(ctx context.Context, tx smsinbox.Tx) error { return tx.UpdateChain(ctx, chain) })
	inboxLocked(t, s, chain, func(ctx context.Context, tx smsinbox.Tx) (*smsinbox.Chain, error) {
		return tx.LockChain(ctx, "org_1", "wal_1")
	})

	gap := func(id, orgID, walletID string, at time.Duration) *smsinbox.Gap {
		return &smsinbox.Gap{
			ID: id, OrganizationID: orgID, WalletID: walletID, FromBalance: dec("1000"), FromMessageID: "sms_0",
			ToBalance: dec("1500.5"), Amount: dec("500.5"), FirstMessageID: "sms_a", LastMessageID: "sms_c",
			Messages: 3, Actor: "smsinbox", CreatedAt: base.Add(at),
		}
	}
	g1, g2, g3 := gap("gap_1", "org_1", "wal_1", time.Second), gap("gap_2", "org_1", "wal_2", 2*time.Second), gap("gap_3", "org_2", "wal_9", 0)
	g2.FromMessageID, g2.Amount, g2.Actor = "", dec("-20.25"), "ops"
	inboxCreate(t, s, smsinbox.Tx.CreateGap, g1, g2, g3)
	if err := inboxTry(s, smsinbox.Tx.CreateGap, g1); err == nil {
		t.Error("a gap inserted twice")
	}
	gaps := func(orgID, walletID string, limit int) []*smsinbox.Gap {
		t.Helper()
		return inboxGet(t, s, func(ctx context.Context, tx smsinbox.Tx) ([]*smsinbox.Gap, error) {
			return tx.ListGaps(ctx, orgID, walletID, limit)
		})
	}
	storekit.AssertEqual(t, gaps("org_1", "", 0), []*smsinbox.Gap{g2, g1})
	storekit.AssertEqual(t, gaps("org_1", "", 1), []*smsinbox.Gap{g2})
	storekit.AssertEqual(t, gaps("org_1", "wal_1", 0), []*smsinbox.Gap{g1})
	storekit.AssertEqual(t, gaps("org_2", "", 0), []*smsinbox.Gap{g3})
}
