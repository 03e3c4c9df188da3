package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// payd admin records who did what (--actor, $USER by default) and
// "payd admin audit" reads it back, without a secret in sight.
func TestAdminAuditLog(t *testing.T) {
	t.Setenv("PAYD_MASTER_KEY", "")
	t.Setenv("USER", "ops-user")
	db := newAdminDB(t)
	org := runAdmin(t, db, "org", "create", "--name", "Audited", "--h2h", "--actor", "alice")
	id := str(org, "organization_id")
	runAdmin(t, db, "org", "update", "--org", id, "--withdrawals", "--actor", "bob")
	w := runAdmin(t, db, "wallet", "add", "--org", id, "--channel", "bkash", "--operation", "cash_out", "--phone", "01711000001")
	runAdmin(t, db, "wallet", "disable", "--org", id, "--wallet", str(w, "wallet_id"))
	runAdmin(t, db, "balance", "adjust", "--org", id, "--amount", "500", "--reason", "float", "--actor", "treasury")
	key := runAdmin(t, db, "key", "create", "--org", id)
	ss := runAdmin(t, db, "signing-secret", "rotate", "--key", str(key, "api_key_id"))
	ep := runAdmin(t, db, "webhook", "add", "--org", id, "--url", "https://hooks.example/in")
	runAdmin(t, db, "webhook", "remove", "--endpoint", str(ep, "endpoint_id"))

	log := runAdmin(t, db, "audit", "--org", id)
	entries, _ := log["entries"].([]any)
	want := []struct{ action, actor string }{
		{"org.create", "alice"}, {"org.update", "bob"}, {"wallet.add", "ops-user"}, {"wallet.disable", "ops-user"},
		{"balance.adjust", "treasury"}, {"api_key.create", "ops-user"}, {"signing_secret.rotate", "ops-user"},
		{"webhook.add", "ops-user"}, {"webhook.remove", "ops-user"},
	}
	if len(entries) != len(want) {
		t.Fatalf("audit: %d entries, want %d: %v", len(entries), len(want), log)
	}
	for i, e := range entries {
		if str(e, "action") != want[i].action || str(e, "actor") != want[i].actor || str(e, "audit_id") == "" || str(e, "time") == "" {
			t.Errorf("entry %d: %v, want %s by %s", i, e, want[i].action, want[i].actor)
		}
	}
	if latest := runAdmin(t, db, "audit", "--org", id, "--limit", "1"); len(latest["entries"].([]any)) != 1 {
		t.Errorf("--limit 1: %v", latest)
	}
	// The human form: one line per entry under a header.
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"admin", "audit", "--org", id, "--db", db}, &stdout, &stderr); err != nil {
		t.Fatalf("audit: %v %s", err, stderr.String())
	}
	text := stdout.String()
	if n := strings.Count(text, "\n"); n != len(want)+1 || !strings.Contains(text, "treasury") || !strings.Contains(text, `reason="float"`) {
		t.Errorf("audit text:\n%s", text)
	}
	for _, secret := range []string{str(org, "api_key"), str(org, "signing_secret"), str(key, "api_key"), str(key, "signing_secret"), str(ss, "signing_secret"), str(ep, "secret")} {
		if secret == "" || strings.Contains(text, secret) || strings.Contains(mustJSON(t, log), secret) {
			t.Errorf("the audit log shows a secret (%q)", secret)
		}
	}
	// There is no command that changes or removes entries.
	for name := range adminCommands {
		if strings.HasPrefix(name, "audit ") {
			t.Errorf("admin command %q: the audit log is read-only", name)
		}
	}
}
