package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestAdminOperator: add prints a one-time setup link (the token stored
// only hashed), list shows operators without secrets, disable stops one.
func TestAdminOperator(t *testing.T) {
	db := newAdminDB(t)
	org := runAdmin(t, db, "org", "create", "--name", "Shop")["organization_id"].(string)
	out := runAdmin(t, db, "operator", "add", "--email", "Owner@Example.com", "--role", "owner", "--org", org, "--public-url", "https://pay.example.com/")
	link, _ := out["setup_link"].(string)
	if !strings.HasPrefix(link, "https://pay.example.com/console/setup?token=") || len(link) < len("https://pay.example.com/console/setup?token=")+30 {
		t.Fatalf("setup link %q", link)
	}
	op := out["operator"].(map[string]any)
	if op["email"] != "owner@example.com" || op["set_up"] != false || op["organization_id"] != org {
		t.Errorf("operator %v", op)
	}
	runAdmin(t, db, "operator", "add", "--email", "platform@example.com", "--role", "viewer", "--platform")
	list := runAdmin(t, db, "operator", "list")["operators"].([]any)
	if len(list) != 2 {
		t.Fatalf("list: %v", list)
	}
	if only := runAdmin(t, db, "operator", "list", "--org", org)["operators"].([]any); len(only) != 1 {
		t.Errorf("list --org: %v", only)
	}
	token := link[strings.Index(link, "token=")+len("token="):]
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"admin", "operator", "list", "--db", db, "--json"}, &stdout, &stderr); err != nil || strings.Contains(stdout.String(), token) {
		t.Errorf("list shows the setup token (err %v)", err)
	}
	disabled := runAdmin(t, db, "operator", "disable", "--operator", op["id"].(string))
	if disabled["disabled_at"] == nil {
		t.Errorf("disable: %v", disabled)
	}
	for _, bad := range [][]string{
		{"operator", "add", "--email", "x@example.com", "--role", "admin", "--org", org},
		{"operator", "add", "--email", "x@example.com", "--role", "viewer", "--org", org, "--platform"},
		{"operator", "add", "--email", "x@example.com", "--role", "viewer"},
		{"operator", "add", "--email", "not-an-email", "--role", "viewer", "--platform"},
		{"operator", "add", "--email", "owner@example.com", "--role", "viewer", "--platform"},
	} {
		stdout.Reset()
		if err := run(context.Background(), append(append([]string{"admin"}, bad...), "--db", db), &stdout, &stderr); err == nil {
			t.Errorf("payd admin %s: no error", strings.Join(bad, " "))
		}
	}
}
