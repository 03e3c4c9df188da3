package sqlite

import (
	"errors"
	"testing"

	"github.com/payd-engine/payd/engine"
)

// TestBusyBeyondRetriesIsUnavailable: a database still locked by another
// process after every retry is engine.ErrUnavailable (answered 503
// database_unavailable), not an internal error.
func TestBusyBeyondRetriesIsUnavailable(t *testing.T) {
	err := retryPolicy.GiveUp(maxAttempts, errors.New("database is locked (5) (SQLITE_BUSY)"))
	if !errors.Is(err, engine.ErrUnavailable) {
		t.Fatalf("%v is not engine.ErrUnavailable", err)
	}
}
