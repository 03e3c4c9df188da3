package smsinbox_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/payd-engine/payd/provider/smsinbox"
	"github.com/payd-engine/payd/provider/smsinbox/smsinboxtest"
	"github.com/payd-engine/payd/storage/postgres"
	"github.com/payd-engine/payd/storage/postgres/pgtest"
	"github.com/payd-engine/payd/storage/sqlite"
)

// TestStore holds both stores to the suite of the smsinbox's own tables, each
// migrated with nothing but the store's own line and the smsinbox's.
func TestStore(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		smsinboxtest.Exercise(t, func(t *testing.T) smsinboxtest.Store {
			s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "payd.db"), smsinbox.Migrations())
			if err != nil {
				t.Fatal(err)
			}
			return s
		})
	})
	t.Run("postgres", func(t *testing.T) {
		pgtest.AdminURL(t)
		t.Parallel()
		smsinboxtest.Exercise(t, func(t *testing.T) smsinboxtest.Store {
			s, err := postgres.Open(context.Background(), pgtest.URL(t), smsinbox.Migrations())
			if err != nil {
				t.Fatal(err)
			}
			return s
		})
	})
}
