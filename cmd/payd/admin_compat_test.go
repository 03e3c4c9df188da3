package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
)

// TestAdminCompat: enable shows a key once (the database keeps only its
// hash), the key authenticates as its organization only on the compat
// side, enabling again replaces it, and disable revokes it.
func TestAdminCompat(t *testing.T) {
	t.Setenv("PAYD_MASTER_KEY", "")
	db := newAdminDB(t)
	org := runAdmin(t, db, "org", "create", "--name", "Shop")
	id := str(org, "organization_id")
	first := str(runAdmin(t, db, "compat", "enable", "--org", id), "api_key")
	if !strings.HasPrefix(first, "payd_up_") {
		t.Fatalf("compat enable: key %q", first)
	}
	raw, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte(first)) {
		t.Fatal("the compat key is stored in plaintext")
	}
	ctx := context.Background()
	eng, done := openEngine(t, db)
	if got, err := eng.AuthenticateCompat(ctx, first); err != nil || got != id {
		t.Fatalf("AuthenticateCompat = %q, %v; want %s", got, err, id)
	}
	if _, err := eng.AuthenticateCompat(ctx, str(org, "api_key")); err == nil {
		t.Fatal("an API key authenticated as a compat key")
	}
	if _, err := eng.Authenticate(ctx, first); err == nil {
		t.Fatal("a compat key authenticated as an API key")
	}
	done()
	second := str(runAdmin(t, db, "compat", "enable", "--org", id), "api_key")
	runAdmin(t, db, "compat", "disable", "--org", id)
	eng, done = openEngine(t, db)
	defer done()
	for _, k := range []string{first, second} {
		if _, err := eng.AuthenticateCompat(ctx, k); err == nil {
			t.Fatal("a replaced or revoked compat key still authenticates")
		}
	}
	var stdout, stderr bytes.Buffer
	if err := run(ctx, []string{"admin", "compat", "disable", "--org", id, "--db", db, "--json"}, &stdout, &stderr); err == nil {
		t.Fatal("disabling twice succeeded")
	}
}
