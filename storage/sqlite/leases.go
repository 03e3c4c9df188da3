package sqlite

import (
	"context"

	"github.com/payd-engine/payd/engine"
)

// ReleaseLeases clears owner's leases on open work. Each statement spells
// the WHERE clause of its table's partial "due" index, so it walks only the
// open rows; finished rows never hold a lease (the engine clears it as it
// records an outcome).
func (t *tx) ReleaseLeases(ctx context.Context, owner string) error {
	for _, q := range releaseLeasesQueries {
		if _, err := t.tx.ExecContext(ctx, q, owner); err != nil {
			return interpretError(err)
		}
	}
	return nil
}

// releaseLeasesQueries clear the leases of the owner given as argument.
var releaseLeasesQueries = []string{
	`UPDATE attempts SET lease_owner = '', leased_until = 0
		WHERE status IN ` + runningStatuses + ` AND lease_owner = ?`,
	`UPDATE withdrawals SET lease_owner = '', leased_until = 0
		WHERE status = '` + engine.WithdrawalProcessing + `' AND lease_owner = ?`,
	`UPDATE refunds SET lease_owner = '', leased_until = 0
		WHERE status = '` + engine.RefundProcessing + `' AND lease_owner = ?`,
	`UPDATE deliveries SET lease_owner = '', leased_until = 0
		WHERE status = '` + engine.DeliveryPending + `' AND lease_owner = ?`,
}
