package smsinbox_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/smsinbox"
)

// run posts n cash-outs of 100.00 from balance on, each minute after at,
// the clock advancing step between posts, and returns them.
func (f *fixture) run(prefix string, balance string, n int, at time.Time, step time.Duration) []*smsinbox.SMS {
	f.t.Helper()
	b := decimal.RequireFromString(balance)
	var out []*smsinbox.SMS
	for i := range n {
		b = b.Add(decimal.NewFromInt(100))
		out = append(out, f.ingest(cashOut("100.00", engine.FormatAmount(b), fmt.Sprintf("%s%0*d", prefix, 10-len(prefix), i), at.Add(time.Duration(i)*time.Minute))))
		f.clock.Add(step)
	}
	return out
}

func (f *fixture) gaps() []*smsinbox.Gap {
	f.t.Helper()
	gs, err := f.inbox.ListGaps(f.ctx, f.org, "", 0)
	if err != nil {
		f.t.Fatal(err)
	}
	return gs
}

// wantNotProven fails unless no message of ms proves its transaction.
func (f *fixture) wantNotProven(ms []*smsinbox.SMS) {
	f.t.Helper()
	for _, m := range ms {
		if _, err := f.lookup(m.Parsed.TransactionID); !errors.Is(err, engine.ErrTransactionNotFound) {
			f.t.Fatalf("%s (%s) proves its transaction: %v", m.ID, m.Parsed.TransactionID, err)
		}
	}
	if n := len(f.gaps()); n != 0 {
		f.t.Fatalf("%d gaps recorded", n)
	}
}

// The phone misses one SMS: the messages after it form a run, and once
// ResyncAfter of them are held and the chain has been quiet for
// ResyncQuiet, the chain moves over the gap by itself, recorded, audited
// and counted; the next message continues it as usual.
func TestChainResyncsOverAMissedMessage(t *testing.T) {
	onBothStores(t, testChainResyncsOverAMissedMessage)
}

func testChainResyncsOverAMissedMessage(t *testing.T, f *fixture) {
	f.anchor("10000")
	f.clock.Add(time.Minute)
	wantStatus(t, f.ingest(cashOut("100.00", "10,100.00", "TRX0000001", t0)), smsinbox.StatusAccepted)
	f.clock.Add(time.Minute)
	// Missed: Cash Out Tk 500.00, balance 10,600.00. Then:
	held := f.run("TRXA", "10600", 3, t0.Add(2*time.Minute), 4*time.Minute)
	for _, m := range held {
		if got := f.get(m.ID); got.Status != smsinbox.StatusHeld {
			t.Fatalf("%s is %s before the quiet window passed", m.ID, got.Status)
		}
	}
	f.clock.Add(time.Minute) // 13 minutes since the first of the run
	last := f.ingest(cashOut("100.00", "11,000.00", "TRXA000003", t0.Add(20*time.Minute)))
	wantStatus(t, last, smsinbox.StatusAccepted)
	for _, m := range append(held, last) {
		got := f.get(m.ID)
		if got.Status != smsinbox.StatusAccepted || got.GapID == "" {
			t.Fatalf("%s after the re-synchronization: %s %q", m.ID, got.Status, got.GapID)
		}
		if _, err := f.lookup(m.Parsed.TransactionID); err != nil {
			t.Fatalf("lookup %s: %v", m.Parsed.TransactionID, err)
		}
	}
	gs := f.gaps()
	if len(gs) != 1 {
		t.Fatalf("gaps %v", gs)
	}
	g := gs[0]
	if g.Amount.String() != "500" || g.FromBalance.String() != "10100" || g.ToBalance.String() != "10600" ||
		g.Messages != 4 || g.FirstMessageID != held[0].ID || g.LastMessageID != last.ID || g.Actor != "smsinbox" || g.WalletID != f.wallet.ID {
		t.Fatalf("gap %+v", g)
	}
	audit, _ := f.eng.ListAudit(f.ctx, f.org, 0)
	if a := audit[len(audit)-1]; a.Action != smsinbox.AuditWalletResync || a.Actor != "smsinbox" || a.Details["amount"] != "500.00" || a.Details["gap"] != g.ID {
		t.Fatalf("audit %+v", a)
	}
	if s, _ := f.inbox.Stats(f.ctx, f.org); s.Gaps[f.wallet.ID] != 1 {
		t.Fatalf("stats gaps %v", s.Gaps)
	}
	wantStatus(t, f.ingest(cashOut("100.00", "11,100.00", "TRX0000009", t0.Add(30*time.Minute))), smsinbox.StatusAccepted)
}

func (f *fixture) get(id string) *smsinbox.SMS {
	f.t.Helper()
	ms, err := f.inbox.ListSMS(f.ctx, smsinbox.ListSMSParams{OrganizationID: f.org})
	if err != nil {
		f.t.Fatal(err)
	}
	for _, m := range ms {
		if m.ID == id {
			return m
		}
	}
	f.t.Fatalf("no message %s", id)
	return nil
}

// ResyncAfter 0 turns the healing off; a larger one waits for more.
func TestResyncSettings(t *testing.T) {
	f := newFixture(t)
	f.anchor("10000")
	f.settings(smsinbox.SettingsUpdate{ResyncAfter: ptr(0)})
	f.clock.Add(time.Minute)
	ms := f.run("OFF", "20000", 6, t0, 5*time.Minute)
	f.wantNotProven(ms)
	f.settings(smsinbox.SettingsUpdate{ResyncAfter: ptr(8), ResyncQuiet: ptr(time.Minute)})
	ms = append(ms, f.run("OFG", "20600", 1, t0.Add(6*time.Minute), time.Minute)...)
	f.wantNotProven(ms) // 7 held
	f.run("OFX", "20700", 1, t0.Add(7*time.Minute), time.Minute)
	if len(f.gaps()) != 1 {
		t.Fatalf("8 held messages did not re-synchronize the chain")
	}
	for _, u := range []smsinbox.SettingsUpdate{{ResyncAfter: ptr(-1)}, {ResyncAfter: ptr(51)}, {ResyncQuiet: ptr(time.Second)}, {ResyncQuiet: ptr(25 * time.Hour)}} {
		if _, err := f.inbox.UpdateSettings(f.ctx, f.org, u); engine.ErrorCode(err) != engine.CodeInvalidRequest {
			t.Fatalf("settings %+v: %v", u, err)
		}
	}
	s, _ := f.inbox.Settings(f.ctx, f.org)
	if s.ResyncAfter != 8 || s.ResyncQuiet != time.Minute {
		t.Fatalf("settings %+v", s)
	}
	if d := smsinbox.DefaultSettings("org"); d.ResyncAfter != 3 || d.ResyncQuiet != 10*time.Minute {
		t.Fatalf("defaults %+v", d)
	}
}

// A forger holding the device's token posts a burst of self-consistent
// forgeries from a made-up balance. The phone's next real message, inside
// the quiet window, continues the real chain: the forged run never counts,
// nor does any run that continues it, however long and however patient.
func TestForgedRunContradictedByALaterRealMessage(t *testing.T) {
	onBothStores(t, testForgedRunContradictedByALaterRealMessage)
}

func testForgedRunContradictedByALaterRealMessage(t *testing.T, f *fixture) {
	f.anchor("10000")
	f.clock.Add(time.Minute)
	forged := f.run("FRG", "50000", 5, t0, time.Second)
	f.clock.Add(5 * time.Minute)
	wantStatus(t, f.ingest(cashOut("100.00", "10,100.00", "REAL000001", t0.Add(6*time.Minute))), smsinbox.StatusAccepted)
	f.clock.Add(time.Hour)
	// The forger goes on from the forged balance, past the quiet window.
	forged = append(forged, f.run("FRH", "50500", 5, t0.Add(70*time.Minute), 15*time.Minute)...)
	f.wantNotProven(forged)
	wantStatus(t, f.ingest(cashOut("100.00", "10,200.00", "REAL000002", t0.Add(3*time.Hour))), smsinbox.StatusAccepted)
}

// A burst of forgeries waits out the quiet window; the real chain's next
// message comes in it and is accepted, even with no more forgeries.
func TestForgedBurstWaitsForTheQuietWindow(t *testing.T) {
	f := newFixture(t)
	f.anchor("10000")
	f.clock.Add(time.Minute)
	forged := f.run("FRG", "50000", 20, t0, time.Second)
	f.wantNotProven(forged)
	f.clock.Add(9 * time.Minute)
	wantStatus(t, f.ingest(cashOut("100.00", "10,100.00", "REAL000001", t0.Add(10*time.Minute))), smsinbox.StatusAccepted)
	f.clock.Add(time.Hour)
	wantStatus(t, f.ingest(cashOut("100.00", "10,200.00", "REAL000002", t0.Add(70*time.Minute))), smsinbox.StatusAccepted)
	f.wantNotProven(forged)
}

// A run dated before the message that set the chain's balance contradicts
// it: the real balance then was the chain's.
func TestForgedRunOlderThanTheChainsHead(t *testing.T) {
	f := newFixture(t)
	f.anchor("10000")
	f.clock.Add(time.Minute)
	wantStatus(t, f.ingest(cashOut("100.00", "10,100.00", "REAL000001", t0.Add(time.Hour))), smsinbox.StatusAccepted)
	f.clock.Add(time.Minute)
	f.wantNotProven(f.run("FRG", "50000", 6, t0, 5*time.Minute))
}

// Two runs held at once (a forger's beside the real one after a missed
// message): neither counts, however long; the operator rejects the
// forgeries, and the real run re-synchronizes the chain.
func TestTwoRunsAreAmbiguousUntilTheOperatorRejects(t *testing.T) {
	onBothStores(t, testTwoRunsAreAmbiguousUntilTheOperatorRejects)
}

func testTwoRunsAreAmbiguousUntilTheOperatorRejects(t *testing.T, f *fixture) {
	f.anchor("10000")
	f.clock.Add(time.Minute)
	var real, forged []*smsinbox.SMS
	for i := range 4 {
		at := t0.Add(time.Duration(i) * time.Minute)
		real = append(real, f.ingest(cashOut("100.00", engine.FormatAmount(decimal.NewFromInt(int64(10600+100*i))), fmt.Sprintf("REAL%06d", i), at)))
		forged = append(forged, f.ingest(cashOut("100.00", engine.FormatAmount(decimal.NewFromInt(int64(50100+100*i))), fmt.Sprintf("FRG%07d", i), at)))
		f.clock.Add(5 * time.Minute)
	}
	f.wantNotProven(append(real, forged...))
	ops := engine.WithActor(f.ctx, "ops")
	for i, m := range forged {
		f.clock.Add(time.Second)
		r, err := f.inbox.RejectSMS(ops, f.org, m.ID, "not on the phone")
		if err != nil || r.Status != smsinbox.StatusRejected || r.ReviewedBy != "ops" {
			t.Fatalf("reject: %+v %v", r, err)
		}
		if i < len(forged)-1 {
			f.wantNotProven(real)
		}
	}
	for _, m := range real {
		if _, err := f.lookup(m.Parsed.TransactionID); err != nil {
			t.Fatalf("the real run after the forgeries were rejected: %v", err)
		}
	}
	f.wantNotProvenIDs(forged)
}

func (f *fixture) wantNotProvenIDs(ms []*smsinbox.SMS) {
	f.t.Helper()
	for _, m := range ms {
		if _, err := f.lookup(m.Parsed.TransactionID); !errors.Is(err, engine.ErrTransactionNotFound) {
			f.t.Fatalf("%s proves its transaction: %v", m.Parsed.TransactionID, err)
		}
	}
}

// A run with a fork in it (two messages continue the same balance) is not
// one run.
func TestForkedRunDoesNotResync(t *testing.T) {
	f := newFixture(t)
	f.anchor("10000")
	f.clock.Add(time.Minute)
	ms := f.run("FRG", "50000", 3, t0, time.Second)
	ms = append(ms, f.ingest(cashOut("50.00", "50,150.00", "FRK0000001", t0.Add(5*time.Minute))))
	f.clock.Add(time.Hour)
	ms = append(ms, f.ingest(cashOut("100.00", "50,400.00", "FRK0000002", t0.Add(6*time.Minute))))
	f.wantNotProven(ms)
}

// The chain's root of trust is the operator's anchor: an unanchored chain
// never re-synchronizes. Messages that are not the wallet's (an untrusted
// sender, another channel) are never held, so never in a run.
func TestRunsThatNeverResync(t *testing.T) {
	f := newFixture(t)
	f.clock.Add(time.Minute)
	f.wantNotProven(f.run("UNA", "10000", 6, t0, 5*time.Minute))
	for i := range 6 {
		m := f.ingest(smsinbox.Incoming{Sender: "+8801712345678", Body: cashOut("100.00", fmt.Sprintf("%d.00", 90100+100*i), fmt.Sprintf("PHN%07d", i), t0).Body})
		wantStatus(t, m, smsinbox.StatusUntrustedSender)
		f.clock.Add(5 * time.Minute)
	}
	f.wantNotProvenIDs(nil)
}

// Residual risk, bounded: on a quiet wallet a patient forger's run is
// accepted, but a payout its debit matches waits for the operator even
// when the organization lets SMS complete payouts, and the gap is audited.
func TestResyncedDebitOnlyMatchesAPayout(t *testing.T) {
	f := newFixture(t)
	f.settings(smsinbox.SettingsUpdate{PayoutSMSConfirm: ptr(false)})
	f.anchor("10000")
	f.queue("wd_1", "bkash", "01712345678", "500")
	f.clock.Add(time.Minute)
	at := f.clock.Now()
	f.ingest(cashOut("100.00", "40,100.00", "FRG0000001", at))
	f.clock.Add(6 * time.Minute)
	f.ingest(cashOut("100.00", "40,200.00", "FRG0000002", at))
	f.clock.Add(6 * time.Minute)
	send := f.ingest(cashInAt("500.00", "01712345678", "39,700.00", "FRG0000003", at))
	wantStatus(t, send, smsinbox.StatusAccepted)
	if got := f.payout("wd_1"); got != "matched FRG0000003" {
		t.Fatalf("a re-synchronized send left the payout %s", got)
	}
	if len(f.gaps()) != 1 {
		t.Fatal("the gap was not recorded")
	}
}

// A run whose balances go one way and whose times go the other is not a
// wallet's history.
func TestRunBackwardsInTimeDoesNotResync(t *testing.T) {
	f := newFixture(t)
	f.anchor("10000")
	f.clock.Add(time.Minute)
	var ms []*smsinbox.SMS
	for i := range 4 {
		ms = append(ms, f.ingest(cashOut("100.00", fmt.Sprintf("%d.00", 50100+100*i), fmt.Sprintf("BCK%07d", i), t0.Add(time.Duration(40-10*i)*time.Minute))))
		f.clock.Add(6 * time.Minute)
	}
	f.wantNotProven(ms)
}

// Two messages of a run with one transaction ID (a forger's replay with
// other text): accepting the run would prove the ID twice.
func TestRunWithARepeatedTransactionIDDoesNotResync(t *testing.T) {
	f := newFixture(t)
	f.anchor("10000")
	f.settings(smsinbox.SettingsUpdate{ResyncAfter: ptr(5)})
	f.clock.Add(time.Minute)
	ms := f.run("DUP", "50000", 3, t0, 6*time.Minute)
	ms = append(ms, f.ingest(cashOut("100.00", "50,400.00", "DUP0000000", t0.Add(20*time.Minute))))
	f.clock.Add(time.Hour)
	ms = append(ms, f.ingest(cashOut("100.00", "50,500.00", "DUP0000009", t0.Add(30*time.Minute))))
	f.wantNotProven(ms)
}
