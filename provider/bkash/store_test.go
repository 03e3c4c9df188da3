package bkash_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/payd-engine/payd/provider/bkash"
	"github.com/payd-engine/payd/provider/bkash/bkashtest"
	"github.com/payd-engine/payd/storage/postgres"
	"github.com/payd-engine/payd/storage/postgres/pgtest"
	"github.com/payd-engine/payd/storage/sqlite"
)

// TestStore holds both stores to the suite of the provider's own tables.
func TestStore(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		bkashtest.Exercise(t, func(t *testing.T) bkashtest.Store {
			s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "payd.db"), bkash.Migrations())
			if err != nil {
				t.Fatal(err)
			}
			return s
		})
	})
	t.Run("postgres", func(t *testing.T) {
		pgtest.AdminURL(t)
		t.Parallel()
		bkashtest.Exercise(t, func(t *testing.T) bkashtest.Store {
			s, err := postgres.Open(context.Background(), pgtest.URL(t), bkash.Migrations())
			if err != nil {
				t.Fatal(err)
			}
			return s
		})
	})
}
