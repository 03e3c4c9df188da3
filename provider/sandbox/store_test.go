package sandbox_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/payd-engine/payd/provider/sandbox"
	"github.com/payd-engine/payd/provider/sandbox/sandboxtest"
	"github.com/payd-engine/payd/storage/postgres"
	"github.com/payd-engine/payd/storage/postgres/pgtest"
	"github.com/payd-engine/payd/storage/sqlite"
)

// TestStore holds both stores to the suite of the sandbox's own tables, each
// migrated with nothing but the store's own line and the sandbox's.
func TestStore(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		sandboxtest.Exercise(t, func(t *testing.T) sandboxtest.Store {
			s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "payd.db"), sandbox.Migrations())
			if err != nil {
				t.Fatal(err)
			}
			return s
		})
	})
	t.Run("postgres", func(t *testing.T) {
		pgtest.AdminURL(t)
		t.Parallel()
		sandboxtest.Exercise(t, func(t *testing.T) sandboxtest.Store {
			s, err := postgres.Open(context.Background(), pgtest.URL(t), sandbox.Migrations())
			if err != nil {
				t.Fatal(err)
			}
			return s
		})
	})
}
