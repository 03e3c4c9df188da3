package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/payd-engine/payd/engine"
)

// countQueuesQuery reads each queue through the partial index its claim
// uses, spelling the index's own WHERE literal so the planner takes it:
// attempts_due, withdrawals_due, refunds_due, deliveries_due hold only the
// work waiting.
// withdrawals_due is pinned: the lists' withdrawals_organization_status
// (0012) covers the query too, and unpinned the planner scanned it whole.
const countQueuesQuery = `SELECT status, count(*), min(created_at) FROM attempts
		WHERE status IN ('` + engine.AttemptProcessing + `', '` + engine.AttemptDelayed + `') GROUP BY status
	UNION ALL SELECT 'payouts', count(*), min(created_at) FROM withdrawals INDEXED BY withdrawals_due
		WHERE status = '` + engine.WithdrawalProcessing + `'
	UNION ALL SELECT 'refunds', count(*), min(created_at) FROM refunds INDEXED BY refunds_due
		WHERE status = '` + engine.RefundProcessing + `'
	UNION ALL SELECT 'deliveries', count(*), min(created_at) FROM deliveries
		WHERE status = '` + engine.DeliveryPending + `'`

func (t *tx) CountQueues(ctx context.Context) (*engine.Queues, error) {
	rows, err := t.tx.QueryContext(ctx, countQueuesQuery)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	q := &engine.Queues{}
	for rows.Next() {
		var name string
		var n int
		var oldest sql.NullInt64
		if err := rows.Scan(&name, &n, &oldest); err != nil {
			return nil, err
		}
		queue := engine.Queue{Items: n}
		if oldest.Valid {
			queue.Oldest = time.UnixMicro(oldest.Int64).UTC()
		}
		switch name {
		case engine.AttemptProcessing:
			q.AttemptsProcessing = queue
		case engine.AttemptDelayed:
			q.AttemptsDelayed = queue
		case "payouts":
			q.PayoutsProcessing = queue
		case "refunds":
			q.RefundsProcessing = queue
		case "deliveries":
			q.DeliveriesPending = queue
		}
	}
	return q, rows.Err()
}
