package payd_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	payd "github.com/payd-engine/payd"
	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/sandbox"
	"github.com/payd-engine/payd/provider/smsinbox"
	"github.com/payd-engine/payd/storage/sqlite"
)

// TestRefusesASchemaBehind: a host that did not migrate its provider's
// line gets an error naming the line and the versions it lacks, not a
// payd that fails on its first SMS.
func TestRefusesASchemaBehind(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "payd.db")
	store, err := sqlite.Open(ctx, path) // the store's own line only
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	keyring, err := engine.NewKeyring(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	newInbox := func() engine.Provider {
		p, err := smsinbox.New(smsinbox.Config{Store: smsinbox.NewSQLStore(store), Keyring: keyring})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	newSandbox := func() engine.Provider {
		p, err := sandbox.New(sandbox.Config{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	cfg := payd.Config{Store: store, Keyring: keyring, PublicURL: "https://pay.example", APIPrefix: "/api"}
	for _, c := range []struct {
		provider func() engine.Provider
		want     string
	}{
		{newSandbox, `line "sandbox" is at version 0, this code needs 3 (missing 0001, 0002, 0003)`},
		{newInbox, `line "smsinbox" is at version 0, this code needs 5 (missing 0001, 0002, 0003, 0004, 0005)`},
	} {
		cfg.Provider = c.provider()
		if _, err := payd.New(cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New = %v, want an error saying %s", err, c.want)
		}
	}
	if _, err := store.Migrate(ctx, smsinbox.Migrations()); err != nil {
		t.Fatal(err)
	}
	cfg.Provider = newInbox()
	app, err := payd.New(cfg)
	if err != nil {
		t.Fatalf("migrated: %v", err)
	}
	// Readiness holds the provider's line too: a record lost (or a
	// migration rolled back by hand) is named.
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `DELETE FROM payd_migrations WHERE line = 'smsinbox' AND version = 5`); err != nil {
		t.Fatal(err)
	}
	if err := app.Ready(ctx); err == nil || !strings.Contains(err.Error(), `line "smsinbox" is at version 4, this code needs 5 (missing 0005)`) {
		t.Errorf("Ready = %v", err)
	}
}
