package smsinbox_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/smsinbox"
)

// audits returns the actions audited on subject, oldest first.
func (f *fixture) audits(subject string) []engine.AuditEntry {
	f.t.Helper()
	all, err := f.eng.ListAudit(f.ctx, f.org, 0)
	if err != nil {
		f.t.Fatal(err)
	}
	var out []engine.AuditEntry
	for _, a := range all {
		if a.Subject == subject {
			out = append(out, *a)
		}
	}
	return out
}

func (f *fixture) otherOrg() string {
	f.t.Helper()
	creds, err := f.eng.CreateOrganization(f.ctx, engine.OrganizationSettings{Name: ptr("Other")})
	if err != nil {
		f.t.Fatal(err)
	}
	return creds.Organization.ID
}

// The operator approves what they read on the phone: a held message then
// proves its transaction and, newer than the chain's head, moves the chain
// (over a gap, recorded with the operator as its actor); an older one
// only proves its transaction. Approving again changes nothing; another
// organization's message is not found.
func TestApproveSMS(t *testing.T) {
	f := newFixture(t)
	f.anchor("10000")
	ops := engine.WithActor(f.ctx, "ops")
	f.clock.Add(time.Minute)
	held := f.ingest(cashOut("100.00", "10,600.00", "TRX0000002", t0.Add(2*time.Minute)))
	wantStatus(t, held, smsinbox.StatusHeld)
	if _, err := f.inbox.ApproveSMS(ops, f.org, held.ID, " "); engine.ErrorCode(err) != engine.CodeInvalidRequest {
		t.Fatalf("approve without a reason: %v", err)
	}
	for _, org := range []string{f.otherOrg(), "org_nope"} {
		if _, err := f.inbox.ApproveSMS(ops, org, held.ID, "seen on the phone"); engine.ErrorCode(err) != engine.CodeNotFound {
			t.Fatalf("approve from %s: %v", org, err)
		}
		if _, err := f.inbox.RejectSMS(ops, org, held.ID, "forged"); engine.ErrorCode(err) != engine.CodeNotFound {
			t.Fatalf("reject from %s: %v", org, err)
		}
	}
	if _, err := f.inbox.ApproveSMS(ops, f.org, "sms_nope", "seen"); engine.ErrorCode(err) != engine.CodeNotFound {
		t.Fatalf("approve of an unknown message: %v", err)
	}
	f.clock.Add(time.Second)
	m, err := f.inbox.ApproveSMS(ops, f.org, held.ID, "seen on the phone")
	if err != nil || m.Status != smsinbox.StatusAccepted || m.ReviewedBy != "ops" {
		t.Fatalf("approve: %+v %v", m, err)
	}
	if _, err := f.lookup("TRX0000002"); err != nil {
		t.Fatalf("an approved message proves nothing: %v", err)
	}
	gs := f.gaps()
	if len(gs) != 1 || gs[0].Actor != "ops" || gs[0].Amount.String() != "500" || gs[0].FirstMessageID != held.ID {
		t.Fatalf("gap of the approval: %+v", gs)
	}
	// The chain moved to it: the next message continues it.
	f.clock.Add(time.Second)
	wantStatus(t, f.ingest(cashOut("100.00", "10,700.00", "TRX0000003", t0.Add(3*time.Minute))), smsinbox.StatusAccepted)
	if again, err := f.inbox.ApproveSMS(ops, f.org, held.ID, "once more"); err != nil || again.Status != smsinbox.StatusAccepted {
		t.Fatalf("approve again: %+v %v", again, err)
	}
	if a := f.audits(held.ID); len(a) != 1 || a[0].Action != smsinbox.AuditSMSApprove || a[0].Actor != "ops" ||
		a[0].Details["reason"] != "seen on the phone" || a[0].Details["gap"] != gs[0].ID || a[0].Details["was"] != smsinbox.StatusHeld {
		t.Fatalf("audit of the approval: %+v", a)
	}
	if _, err := f.inbox.RejectSMS(ops, f.org, held.ID, "too late"); engine.ErrorCode(err) != engine.CodeConflict {
		t.Fatalf("reject of an accepted message: %v", err)
	}
	// An older message (delivered late, held) only proves its transaction.
	f.clock.Add(time.Second)
	old := f.ingest(cashOut("100.00", "9,900.00", "TRX0000000", t0))
	wantStatus(t, old, smsinbox.StatusHeld)
	if m, err := f.inbox.ApproveSMS(ops, f.org, old.ID, "seen"); err != nil || m.Status != smsinbox.StatusAccepted {
		t.Fatalf("approve an old message: %+v %v", m, err)
	}
	wantStatus(t, f.ingest(cashOut("100.00", "10,800.00", "TRX0000004", t0.Add(4*time.Minute))), smsinbox.StatusAccepted)
	// A text whose transaction ID another accepted text carries: one of
	// the two is false, and approving it would prove the ID twice.
	conflict := f.ingest(cashOut("900.00", "20,000.00", "TRX0000004", t0.Add(4*time.Minute)))
	wantStatus(t, conflict, smsinbox.StatusConflict)
	if _, err := f.inbox.ApproveSMS(ops, f.org, conflict.ID, "seen"); engine.ErrorCode(err) != engine.CodeConflict {
		t.Fatalf("approve a second text of a proven ID: %v", err)
	}
	// Nothing to approve in a copy, an unparsed or an untrusted message.
	for _, in := range []smsinbox.Incoming{
		cashOut("100.00", "10,800.00", "TRX0000004", t0.Add(4*time.Minute)),
		{Sender: "bKash", Body: "Get 10% cashback!"},
		{Sender: "MyBank", Body: "OTP 1234"},
	} {
		m := f.ingest(in)
		if _, err := f.inbox.ApproveSMS(ops, f.org, m.ID, "seen"); engine.ErrorCode(err) != engine.CodeConflict {
			t.Fatalf("approve a %s message: %v", m.Status, err)
		}
		if _, err := f.inbox.RejectSMS(ops, f.org, m.ID, "no"); engine.ErrorCode(err) != engine.CodeConflict {
			t.Fatalf("reject a %s message: %v", m.Status, err)
		}
	}
}

// A rejected message never proves anything; rejecting again changes
// nothing, and it can no longer be approved.
func TestRejectSMS(t *testing.T) {
	f := newFixture(t)
	f.anchor("10000")
	ops := engine.WithActor(f.ctx, "ops")
	f.clock.Add(time.Minute)
	forged := f.ingest(cashOut("5,000.00", "50,000.00", "FRG0000001", t0))
	if _, err := f.inbox.RejectSMS(ops, f.org, forged.ID, ""); engine.ErrorCode(err) != engine.CodeInvalidRequest {
		t.Fatalf("reject without a reason: %v", err)
	}
	for range 2 {
		f.clock.Add(time.Second)
		m, err := f.inbox.RejectSMS(ops, f.org, forged.ID, "not on the phone")
		if err != nil || m.Status != smsinbox.StatusRejected || m.ReviewedBy != "ops" {
			t.Fatalf("reject: %+v %v", m, err)
		}
	}
	if a := f.audits(forged.ID); len(a) != 1 || a[0].Action != smsinbox.AuditSMSReject || a[0].Actor != "ops" || a[0].Details["reason"] != "not on the phone" {
		t.Fatalf("audit of the rejection: %+v", a)
	}
	if _, err := f.inbox.ApproveSMS(ops, f.org, forged.ID, "changed my mind"); engine.ErrorCode(err) != engine.CodeConflict {
		t.Fatalf("approve a rejected message: %v", err)
	}
	if _, err := f.lookup("FRG0000001"); !errors.Is(err, engine.ErrTransactionNotFound) {
		t.Fatalf("a rejected message proves its transaction: %v", err)
	}
	if s, _ := f.inbox.Stats(f.ctx, f.org); s.Total[smsinbox.StatusRejected] != 1 || s.Total[smsinbox.StatusHeld] != 0 {
		t.Fatalf("stats %v", s.Total)
	}
}

// The operator pastes the SMS the phone missed: parsed, stored as theirs,
// audited, it continues the chain, and the messages held behind it follow.
// Pasting it again returns it; a text that is not a wallet's, that payd
// cannot read, or of another channel is refused and nothing is stored.
func TestPasteSMS(t *testing.T) { onBothStores(t, testPasteSMS) }

func testPasteSMS(t *testing.T, f *fixture) {
	ops := engine.WithActor(f.ctx, "ops")
	f.clock.Add(time.Minute)
	after := f.ingest(cashOut("100.00", "10,600.00", "TRX0000002", t0.Add(time.Minute)))
	wantStatus(t, after, smsinbox.StatusHeld)
	missed := cashOut("500.00", "10,500.00", "TRX0000001", t0)
	params := smsinbox.PasteParams{OrganizationID: f.org, WalletID: f.wallet.ID, Sender: missed.Sender, Text: missed.Body}
	for _, c := range []struct {
		name string
		p    smsinbox.PasteParams
		code string
	}{
		{"untrusted sender", smsinbox.PasteParams{OrganizationID: f.org, WalletID: f.wallet.ID, Sender: "+8801712345678", Text: missed.Body}, engine.CodeInvalidRequest},
		{"unreadable", smsinbox.PasteParams{OrganizationID: f.org, WalletID: f.wallet.ID, Sender: "bKash", Text: "Tk 500 received"}, engine.CodeInvalidRequest},
		{"empty", smsinbox.PasteParams{OrganizationID: f.org, WalletID: f.wallet.ID, Sender: "bKash", Text: " "}, engine.CodeInvalidRequest},
		{"another channel", smsinbox.PasteParams{OrganizationID: f.org, WalletID: f.wallet.ID, Sender: "NAGAD",
			Text: "Money Received.\nAmount: Tk 500.00\nSender: 01712345678\nRef: N/A\nTxnID: 71ABCDEF\nBalance: Tk 10,500.00\n21/11/2026 16:03"}, engine.CodeInvalidRequest},
		{"in the future", smsinbox.PasteParams{OrganizationID: f.org, WalletID: f.wallet.ID, Sender: "bKash", Text: missed.Body, ReceivedAt: t0.Add(time.Hour)}, engine.CodeInvalidRequest},
		{"another organization's wallet", smsinbox.PasteParams{OrganizationID: f.otherOrg(), WalletID: f.wallet.ID, Sender: "bKash", Text: missed.Body}, engine.CodeNotFound},
		{"unknown wallet", smsinbox.PasteParams{OrganizationID: f.org, WalletID: "wal_nope", Sender: "bKash", Text: missed.Body}, engine.CodeNotFound},
	} {
		if _, err := f.inbox.PasteSMS(ops, c.p); engine.ErrorCode(err) != c.code {
			t.Fatalf("paste, %s: %v", c.name, err)
		}
	}
	if all, _ := f.inbox.ListSMS(f.ctx, smsinbox.ListSMSParams{OrganizationID: f.org}); len(all) != 1 {
		t.Fatalf("refused pastes were stored: %d messages", len(all))
	}
	f.clock.Add(time.Second)
	m, err := f.inbox.PasteSMS(ops, params)
	if err != nil || m.Status != smsinbox.StatusAccepted || m.PastedBy != "ops" || m.DeviceID != f.device.ID {
		t.Fatalf("paste: %+v %v", m, err)
	}
	for _, trx := range []string{"TRX0000001", "TRX0000002"} {
		if _, err := f.lookup(trx); err != nil {
			t.Fatalf("lookup %s after the paste: %v", trx, err)
		}
	}
	if again, err := f.inbox.PasteSMS(ops, params); err != nil || again.ID != m.ID {
		t.Fatalf("paste again: %+v %v", again, err)
	}
	if a := f.audits(m.ID); len(a) != 1 || a[0].Action != smsinbox.AuditSMSPaste || a[0].Actor != "ops" || a[0].Details["transaction_id"] != "TRX0000001" {
		t.Fatalf("audit of the paste: %+v", a)
	}
	// The device forwards it after all: a copy of the pasted one.
	wantStatus(t, f.ingest(missed), smsinbox.StatusDuplicate)
	// A pasted text that does not continue the chain is held, as a
	// device's would be.
	f.clock.Add(time.Second)
	forged := cashOut("100.00", "99,999.00", "TRX0000009", t0.Add(5*time.Minute))
	if h, err := f.inbox.PasteSMS(ops, smsinbox.PasteParams{OrganizationID: f.org, WalletID: f.wallet.ID, Sender: "bKash", Text: forged.Body}); err != nil || h.Status != smsinbox.StatusHeld {
		t.Fatalf("paste a text that does not follow: %+v %v", h, err)
	}
}

// Operators racing: many approvals of one held message, many pastes of one
// text, and the device forwarding that text, at once, with real goroutines
// on both stores: one approval audited, one message for the text (at most
// one paste audited), and every paste answered with that message.
func TestReviewConcurrently(t *testing.T) { onBothStores(t, testReviewConcurrently) }

func testReviewConcurrently(t *testing.T, f *fixture) {
	ops := engine.WithActor(f.ctx, "ops")
	f.clock.Add(time.Minute)
	held := f.ingest(cashOut("100.00", "99,999.00", "TRX0000009", t0.Add(5*time.Minute)))
	missed := cashOut("500.00", "10,500.00", "TRX0000001", t0)
	params := smsinbox.PasteParams{OrganizationID: f.org, WalletID: f.wallet.ID, Sender: missed.Sender, Text: missed.Body}
	f.clock.Add(time.Second)
	var wg sync.WaitGroup
	pasted := make([]string, 8)
	for i := range 8 {
		wg.Go(func() {
			if m, err := f.inbox.ApproveSMS(ops, f.org, held.ID, "seen on the phone"); err != nil || m.Status != smsinbox.StatusAccepted {
				t.Errorf("approve: %+v %v", m, err)
			}
		})
		wg.Go(func() {
			m, err := f.inbox.PasteSMS(ops, params)
			if err != nil {
				t.Errorf("paste: %v", err)
				return
			}
			pasted[i] = m.ID
		})
		wg.Go(func() {
			if _, _, err := f.inbox.Ingest(f.ctx, f.device, missed); err != nil {
				t.Errorf("ingest: %v", err)
			}
		})
	}
	wg.Wait()
	if a := f.audits(held.ID); len(a) != 1 || a[0].Action != smsinbox.AuditSMSApprove {
		t.Fatalf("approvals audited: %+v", a)
	}
	if _, err := f.lookup("TRX0000009"); err != nil {
		t.Fatalf("the approved message proves nothing: %v", err)
	}
	for _, id := range pasted {
		if id != pasted[0] {
			t.Fatalf("pastes answered with different messages: %v", pasted)
		}
	}
	if a := f.audits(pasted[0]); len(a) > 1 {
		t.Fatalf("pastes audited: %+v", a)
	}
	all, err := f.inbox.ListSMS(f.ctx, smsinbox.ListSMSParams{OrganizationID: f.org})
	if err != nil {
		t.Fatal(err)
	}
	originals := 0
	for _, m := range all {
		if m.Parsed != nil && m.Parsed.TransactionID == "TRX0000001" && m.Status != smsinbox.StatusDuplicate {
			originals++
		}
	}
	if originals != 1 {
		t.Fatalf("%d originals of the missed text", originals)
	}
}
