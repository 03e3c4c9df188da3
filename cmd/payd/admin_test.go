package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// admin runs "payd admin ..." against db and decodes its --json output.
func runAdmin(t *testing.T, db string, args ...string) map[string]any {
	t.Helper()
	var stdout, stderr bytes.Buffer
	args = append(append([]string{"admin"}, args...), "--db", db, "--json")
	if err := run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("payd %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	var out map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("payd %s printed no JSON object: %q", strings.Join(args, " "), stdout.String())
	}
	if strings.Count(strings.TrimSpace(stdout.String()), "\n") != 0 {
		t.Fatalf("--json printed more than one line: %q", stdout.String())
	}
	return out
}

// newAdminDB is a new SQLite database made by payd admin init.
func newAdminDB(t *testing.T) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "payd.db")
	if out := runAdmin(t, db, "init"); out["created"] != true {
		t.Fatalf("admin init: %v", out)
	}
	return db
}

func TestAdminCommands(t *testing.T) {
	t.Setenv("PAYD_MASTER_KEY", "")
	db := newAdminDB(t)
	org := runAdmin(t, db, "org", "create", "--name", "Shop", "--h2h", "--instructions-window", "20m", "--deposit-fee-percent", "1.5")
	for _, k := range []string{"organization_id", "api_key", "signing_secret", "api_key_id"} {
		if str(org, k) == "" {
			t.Fatalf("org create: no %s in %v", k, org)
		}
	}
	id := str(org, "organization_id")
	shown := runAdmin(t, db, "org", "show", "--org", id)
	if shown["h2h_enabled"] != true || shown["withdrawals_enabled"] != false || shown["deposits_enabled"] != true ||
		str(shown, "instructions_window") != "20m0s" || str(shown, "deposit_fee_percent") != "1.5" {
		t.Fatalf("org show: %v", shown)
	}
	updated := runAdmin(t, db, "org", "update", "--org", id, "--withdrawals", "--h2h=false")
	if updated["withdrawals_enabled"] != true || updated["h2h_enabled"] != false || str(updated, "name") != "Shop" {
		t.Fatalf("org update changed the wrong things: %v", updated)
	}
	w := runAdmin(t, db, "wallet", "add", "--org", id, "--channel", "bkash", "--operation", "cash_out", "--phone", "+8801711000001", "--name", "Agent", "--max-amount", "5000")
	if str(w, "phone") != "01711000001" || str(w, "max_amount") != "5000.00" || w["enabled"] != true {
		t.Fatalf("wallet add: %v", w)
	}
	if d := runAdmin(t, db, "wallet", "disable", "--org", id, "--wallet", str(w, "wallet_id")); d["enabled"] != false {
		t.Fatalf("wallet disable: %v", d)
	}
	rotated := runAdmin(t, db, "signing-secret", "rotate", "--key", str(org, "api_key_id"))
	if s := str(rotated, "signing_secret"); !strings.HasPrefix(s, "payd_ss_") || s == str(org, "signing_secret") {
		t.Fatalf("signing-secret rotate: %v", rotated)
	}
	newKey := runAdmin(t, db, "key", "rotate", "--key", str(org, "api_key_id"), "--grace", "0s")
	if !strings.HasPrefix(str(newKey, "api_key"), "payd_sk_") {
		t.Fatalf("key rotate: %v", newKey)
	}
	keys := runAdmin(t, db, "key", "list", "--org", id)
	if list, _ := keys["api_keys"].([]any); len(list) != 2 || strings.Contains(mustJSON(t, keys), str(org, "api_key")) {
		t.Fatalf("key list: %v", keys)
	}

	fees := runAdmin(t, db, "org", "update", "--org", id, "--deposit-fee", "bkash_agent=1.5%+2", "--withdraw-commission", "bank=0.5%")
	if df, _ := fees["deposit_fees"].(map[string]any); df["bkash_agent"] != "1.5%+2.00" {
		t.Fatalf("per-method fees: %v", fees)
	}
	if wc, _ := fees["withdraw_commissions"].(map[string]any); wc["bank"] != "0.5%+0.00" {
		t.Fatalf("per-method commissions: %v", fees)
	}
	if cleared := runAdmin(t, db, "org", "update", "--org", id, "--deposit-fee", "bkash_agent=default"); cleared["deposit_fees"] != nil {
		t.Fatalf("removing a per-method fee: %v", cleared)
	}

	adj := runAdmin(t, db, "balance", "adjust", "--org", id, "--amount", "1250.50", "--reason", "opening float", "--actor", "alice")
	if str(adj, "available") != "1250.50" || str(adj, "journal", "actor") != "alice" {
		t.Fatalf("balance adjust: %v", adj)
	}
	runAdmin(t, db, "balance", "adjust", "--org", id, "--amount", "-250.50", "--reason", "correction", "--actor", "bob")
	if b := runAdmin(t, db, "balance", "show", "--org", id); str(b, "available") != "1000.00" || str(b, "held") != "0.00" {
		t.Fatalf("balance show: %v", b)
	}
	ledger := runAdmin(t, db, "ledger", "--org", id)
	if js, _ := ledger["journals"].([]any); len(js) != 2 {
		t.Fatalf("ledger: %v", ledger)
	}
	var table bytes.Buffer
	if err := run(context.Background(), []string{"admin", "ledger", "--db", db, "--org", id}, &table, &table); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"adjustment", "available", "1250.50", "-250.50", "correction (by bob)", "available 1000.00 BDT, held 0.00 BDT"} {
		if !strings.Contains(table.String(), want) {
			t.Fatalf("ledger table lacks %q:\n%s", want, table.String())
		}
	}

	// Errors are reported, not printed as results.
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"admin", "wallet", "add", "--db", db, "--org", id, "--channel", "upay", "--operation", "cash_out", "--phone", "01711000001"}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "channel") || stdout.Len() != 0 {
		t.Fatalf("bad channel: err %v, stdout %q", err, stdout.String())
	}
	if err := run(context.Background(), []string{"admin", "org", "show", "--db", db, "--org", "org_missing"}, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), "not_found") {
		t.Fatalf("missing org: %v", err)
	}
	if err := run(context.Background(), []string{"admin", "balance", "adjust", "--db", db, "--org", id, "--amount", "-5000", "--reason", "x"}, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), "insufficient_balance") {
		t.Fatalf("overdraft by adjustment: %v", err)
	}
}
