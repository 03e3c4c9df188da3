package payd

import (
	"errors"
	"fmt"
	"time"

	"github.com/payd-engine/payd/engine"
)

// watchDBHealth adds the store's availability to the metrics, when it
// keeps one (storage/postgres does).
func (a *App) watchDBHealth(s Store) {
	if h, ok := s.(engine.DBHealther); ok {
		a.Metrics.WatchDBHealth(h, time.Now)
	}
}

// unreadyDatabase says why the database is not ready, naming how long no
// writable primary has been reachable during an outage.
func (a *App) unreadyDatabase(err error) error {
	if h, ok := a.store.(engine.DBHealther); ok && errors.Is(err, engine.ErrUnavailable) {
		if since := h.DBHealth().UnavailableSince; !since.IsZero() {
			return fmt.Errorf("database: no writable primary reachable for %s: %w", time.Since(since).Round(time.Second), err)
		}
	}
	return fmt.Errorf("database: %w", err)
}
