package postgres

import (
	"context"
	"time"

	"github.com/payd-engine/payd/engine"
)

// countQueuesQuery reads each queue through the partial index its claim
// uses, spelling the index's own WHERE literal so the planner takes it:
// attempts_due, withdrawals_due, refunds_due, deliveries_due hold only the
// work waiting.
const countQueuesQuery = `SELECT status, count(*), min(created_at) FROM attempts
		WHERE status IN ('` + engine.AttemptProcessing + `', '` + engine.AttemptDelayed + `') GROUP BY status
	UNION ALL SELECT 'payouts', count(*), min(created_at) FROM withdrawals
		WHERE status = '` + engine.WithdrawalProcessing + `'
	UNION ALL SELECT 'refunds', count(*), min(created_at) FROM refunds
		WHERE status = '` + engine.RefundProcessing + `'
	UNION ALL SELECT 'deliveries', count(*), min(created_at) FROM deliveries
		WHERE status = '` + engine.DeliveryPending + `'`

func (t *tx) CountQueues(ctx context.Context) (*engine.Queues, error) {
	rows, err := t.tx.Query(ctx, countQueuesQuery)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	q := &engine.Queues{}
	for rows.Next() {
		var name string
		var n int64
		var oldest *time.Time
		if err := rows.Scan(&name, &n, &oldest); err != nil {
			return nil, err
		}
		queue := engine.Queue{Items: int(n)}
		if oldest != nil {
			queue.Oldest = oldest.UTC()
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
