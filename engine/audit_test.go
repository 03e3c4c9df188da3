package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
)

// Every admin mutation appends one audit entry, with the context's actor,
// in its own transaction; a refused one appends nothing; no entry carries
// a secret.
func TestAuditLogOfAdminActions(t *testing.T) {
	f := newFixtureOn(t, "sqlite")
	ctx := engine.WithActor(f.ctx, "alice")
	eng := f.eng
	var secrets []string
	// Each action a millisecond after the last, so the log's order is the
	// order of the actions.
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		f.clock.Add(time.Millisecond)
	}
	f.clock.Add(time.Millisecond) // after the fixture's own organization
	creds, err := eng.CreateOrganization(ctx, engine.OrganizationSettings{Name: ptr("Audited"), WithdrawalsEnabled: ptr(true)})
	must(err)
	org := creds.Organization.ID
	secrets = append(secrets, creds.APIKey.APIKey, creds.APIKey.SigningSecret)
	_, err = eng.UpdateOrganization(ctx, org, engine.OrganizationSettings{H2HEnabled: ptr(true), DepositFeePercent: ptr(dec("1.5"))})
	must(err)
	key2, err := eng.CreateAPIKey(ctx, org)
	must(err)
	secrets = append(secrets, key2.APIKey, key2.SigningSecret)
	key3, err := eng.RotateAPIKey(ctx, key2.APIKeyID, time.Hour)
	must(err)
	secrets = append(secrets, key3.APIKey, key3.SigningSecret)
	_, err = eng.RevokeAPIKey(ctx, key3.APIKeyID)
	must(err)
	ss, err := eng.RotateSigningSecret(ctx, creds.APIKey.APIKeyID)
	must(err)
	secrets = append(secrets, ss)
	w, err := eng.AddWallet(ctx, engine.AddWalletParams{OrganizationID: org, Channel: "bkash", Operation: "cash_out", Phone: "01811111112", Name: "Agent"})
	must(err)
	_, err = eng.SetWalletEnabled(ctx, org, w.ID, false)
	must(err)
	_, err = eng.SetWalletEnabled(ctx, org, w.ID, true)
	must(err)
	// The adjustment names its own actor, which the entry records.
	j, err := eng.AdjustBalance(ctx, engine.AdjustParams{OrganizationID: org, Amount: "1000", Reason: "float", Actor: "treasury"})
	must(err)
	// Without one, it is the context's.
	j2, err := eng.AdjustBalance(ctx, engine.AdjustParams{OrganizationID: org, Amount: "-10", Reason: "fee"})
	must(err)
	if j2.Actor != "alice" {
		t.Errorf("adjustment without an actor recorded %q, want the context's", j2.Actor)
	}
	ep, whsec, err := eng.AddWebhookEndpoint(ctx, org, "https://hooks.example/payd?token=receiver-secret-token#frag")
	must(err)
	secrets = append(secrets, whsec, "receiver-secret-token")
	rotated, err := eng.RotateWebhookSecret(ctx, ep.ID)
	must(err)
	secrets = append(secrets, rotated)
	_, err = eng.EnableWebhookEndpoint(ctx, ep.ID)
	must(err)
	wd, err := f.withdraw(org, "bkash", "01712345678", "100", "audit-1")
	must(err)
	ev := f.events(wd.ID)[0]
	_, err = eng.Redeliver(ctx, ev.ID, "")
	must(err)
	must(eng.RemoveWebhookEndpoint(ctx, ep.ID))

	// Refused actions leave no entry.
	for name, err := range map[string]error{
		"update": func() error {
			_, err := eng.UpdateOrganization(ctx, org, engine.OrganizationSettings{Name: ptr("")})
			return err
		}(),
		"wallet twice": func() error {
			_, err := eng.AddWallet(ctx, engine.AddWalletParams{OrganizationID: org, Channel: "bkash", Operation: "cash_out", Phone: "01811111112"})
			return err
		}(),
		"overdraw": func() error {
			_, err := eng.AdjustBalance(ctx, engine.AdjustParams{OrganizationID: org, Amount: "-1000000", Reason: "x"})
			return err
		}(),
		"remove again":  eng.RemoveWebhookEndpoint(ctx, ep.ID),
		"revoke absent": func() error { _, err := eng.RevokeAPIKey(ctx, "key_nope"); return err }(),
	} {
		if err == nil {
			t.Errorf("%s: succeeded", name)
		}
	}

	entries, err := eng.ListAudit(f.ctx, org, 0)
	must(err)
	want := []struct{ action, subject, actor string }{
		{engine.AuditOrgCreate, org, "alice"},
		{engine.AuditOrgUpdate, org, "alice"},
		{engine.AuditKeyCreate, key2.APIKeyID, "alice"},
		{engine.AuditKeyRotate, key2.APIKeyID, "alice"},
		{engine.AuditKeyRevoke, key3.APIKeyID, "alice"},
		{engine.AuditSigningSecretRotate, creds.APIKey.APIKeyID, "alice"},
		{engine.AuditWalletAdd, w.ID, "alice"},
		{engine.AuditWalletDisable, w.ID, "alice"},
		{engine.AuditWalletEnable, w.ID, "alice"},
		{engine.AuditBalanceAdjust, j.ID, "treasury"},
		{engine.AuditBalanceAdjust, j2.ID, "alice"},
		{engine.AuditWebhookAdd, ep.ID, "alice"},
		{engine.AuditWebhookRotateSecret, ep.ID, "alice"},
		{engine.AuditWebhookEnable, ep.ID, "alice"},
		{engine.AuditWebhookRedeliver, ev.ID, "alice"},
		{engine.AuditWebhookRemove, ep.ID, "alice"},
	}
	if len(entries) != len(want) {
		for _, e := range entries {
			t.Logf("%s %s %s %v", e.Action, e.Subject, e.Actor, e.Details)
		}
		t.Fatalf("%d audit entries, want %d", len(entries), len(want))
	}
	for i, e := range entries {
		if e.Action != want[i].action || e.Subject != want[i].subject || e.Actor != want[i].actor || e.OrganizationID != org {
			t.Errorf("entry %d: %s %s by %s (org %s), want %s %s by %s", i, e.Action, e.Subject, e.Actor, e.OrganizationID,
				want[i].action, want[i].subject, want[i].actor)
		}
		for k, v := range e.Details {
			for _, s := range secrets {
				if strings.Contains(v, s) || strings.Contains(k, s) {
					t.Errorf("entry %d (%s) carries a secret in %s=%q", i, e.Action, k, v)
				}
			}
		}
	}
	if d := entries[1].Details; d["h2h_enabled"] != "true" || d["deposit_fee_percent"] != "1.5" || len(d) != 2 {
		t.Errorf("org.update details = %v", d)
	}
	if d := entries[9].Details; d["amount"] != "1000.00" || d["reason"] != "float" {
		t.Errorf("balance.adjust details = %v", d)
	}
	if d := entries[11].Details; d["url"] != "https://hooks.example/payd" {
		t.Errorf("webhook.add kept %q of the URL", d["url"])
	}
	// Without WithActor the actor is unknown; a bad one is not trusted.
	_, err = eng.CreateAPIKey(f.ctx, org)
	must(err)
	_, err = eng.CreateAPIKey(engine.WithActor(f.ctx, "bad\nactor"), org)
	must(err)
	latest, err := eng.ListAudit(f.ctx, org, 2)
	must(err)
	if len(latest) != 2 || latest[0].Actor != "unknown" || latest[1].Actor != "unknown" {
		t.Errorf("latest entries: %+v %+v", latest[0], latest[1])
	}
	if _, err := eng.ListAudit(f.ctx, "org_nope", 0); engine.ErrorCode(err) != engine.CodeNotFound {
		t.Errorf("ListAudit of an unknown organization: %v", err)
	}
}

// An entry is written in the transaction of its change: when the change
// rolls back, so does the entry, and when the entry cannot be written, the
// change does not happen.
func TestAuditEntryInTheChangesTransaction(t *testing.T) {
	f := newFixtureOn(t, "sqlite")
	failing := &failAuditStore{Store: f.store}
	eng, err := engine.New(engine.Config{Store: failing, Provider: f.provider, Clock: f.clock, Keyring: f.keyring})
	if err != nil {
		t.Fatal(err)
	}
	before, _ := f.eng.ListWallets(f.ctx, f.org.ID)
	if _, err := eng.AddWallet(f.ctx, engine.AddWalletParams{OrganizationID: f.org.ID, Channel: "nagad", Operation: "cash_out", Phone: "01911111111"}); err == nil {
		t.Fatal("AddWallet succeeded although its audit entry failed")
	}
	after, _ := f.eng.ListWallets(f.ctx, f.org.ID)
	if len(after) != len(before) {
		t.Fatalf("the wallet was added without its audit entry")
	}
}

// failAuditStore fails every AppendAudit.
type failAuditStore struct{ engine.Store }

type failAuditTx struct{ engine.Tx }

func (failAuditTx) AppendAudit(context.Context, *engine.AuditEntry) error {
	return errInjectedAudit
}

var errInjectedAudit = &engine.Error{Code: engine.CodeInternal, Message: "injected audit failure"}

func (s *failAuditStore) InTx(ctx context.Context, fn func(ctx context.Context, tx engine.Tx) error) error {
	return s.Store.InTx(ctx, func(ctx context.Context, tx engine.Tx) error { return fn(ctx, failAuditTx{tx}) })
}
