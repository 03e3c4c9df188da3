package postgres

import (
	"context"
	"testing"

	"github.com/payd-engine/payd/storage/postgres/pgtest"

	"github.com/payd-engine/payd/conformance/storetest"
)

// A database made by older code upgrades without loss: the shared suite
// takes a new database back to the schema before each data migration and
// opens it again.
func TestUpgrades(t *testing.T) {
	storetest.ExerciseUpgrades(t, func(t *testing.T) func() storetest.Store {
		path := pgtest.URL(t)
		return func() storetest.Store {
			s, err := Open(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
	})
}
