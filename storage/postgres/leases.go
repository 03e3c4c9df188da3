package postgres

import (
	"context"

	"github.com/payd-engine/payd/engine"
)

// ReleaseLeases clears owner's leases on open work. Each statement spells
// the WHERE clause of its table's partial "due" index, so it walks only the
// open rows; finished rows never hold a lease (the engine clears it as it
// records an outcome). A row another transaction has locked is waited for:
// its lease may be owner's.
func (t *tx) ReleaseLeases(ctx context.Context, owner string) error {
	for _, q := range []string{
		`UPDATE attempts SET lease_owner = '', leased_until = NULL
			WHERE status IN ` + runningStatuses + ` AND lease_owner = $1`,
		`UPDATE withdrawals SET lease_owner = '', leased_until = NULL
			WHERE status = '` + engine.WithdrawalProcessing + `' AND lease_owner = $1`,
		`UPDATE refunds SET lease_owner = '', leased_until = NULL
			WHERE status = '` + engine.RefundProcessing + `' AND lease_owner = $1`,
		`UPDATE deliveries SET lease_owner = '', leased_until = NULL
			WHERE status = '` + engine.DeliveryPending + `' AND lease_owner = $1`,
	} {
		if _, err := t.tx.Exec(ctx, q, owner); err != nil {
			return interpretError(err)
		}
	}
	return nil
}
