package postgres_test

import (
	"context"
	"testing"

	"github.com/payd-engine/payd/conformance/storetest"
	"github.com/payd-engine/payd/storage/postgres"
	"github.com/payd-engine/payd/storage/postgres/pgtest"
)

// TestStore holds the Postgres store to the suite every store passes. Each
// subtest gets a database of its own (pgtest.URL), dropped when it ends.
func TestStore(t *testing.T) {
	pgtest.AdminURL(t) // skip the whole suite at once when unset
	storetest.Exercise(t, func(t *testing.T) storetest.Store {
		s, err := postgres.Open(context.Background(), pgtest.URL(t))
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}
