package sqlite

import (
	"context"
	"strings"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/storage/internal/rowset"
	"github.com/payd-engine/payd/storage/internal/schema"
)

// Webhook endpoints, deliveries and delivery attempts.

const webhookEndpointColumns = schema.WebhookEndpointColumns

func scanWebhookEndpoint(row scanner) (*engine.WebhookEndpoint, error) {
	var ep engine.WebhookEndpoint
	err := row.Scan(&ep.ID, &ep.OrganizationID, &ep.URL, bytesCol{&ep.Secret}, bytesCol{&ep.PreviousSecret},
		epochTimeCol{&ep.PreviousSecretExpiresAt}, &ep.Enabled, &ep.DisabledReason, epochTimeCol{&ep.FailingSince},
		timeCol{&ep.CreatedAt}, timeCol{&ep.UpdatedAt})
	if err != nil {
		return nil, interpretError(err)
	}
	return &ep, nil
}

// notNullBytes stores a nil slice as an empty BLOB, for NOT NULL columns.
func notNullBytes(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

func (t *tx) CreateWebhookEndpoint(ctx context.Context, ep *engine.WebhookEndpoint) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO webhook_endpoints (`+webhookEndpointColumns+`) VALUES (`+placeholders(11)+`)`,
		ep.ID, ep.OrganizationID, ep.URL, notNullBytes(ep.Secret), nullBytes(ep.PreviousSecret),
		epochMicros(ep.PreviousSecretExpiresAt), ep.Enabled, ep.DisabledReason, epochMicros(ep.FailingSince),
		micros(ep.CreatedAt), micros(ep.UpdatedAt))
	return interpretError(err)
}

func (t *tx) GetWebhookEndpoint(ctx context.Context, id string) (*engine.WebhookEndpoint, error) {
	return scanWebhookEndpoint(t.tx.QueryRowContext(ctx,
		`SELECT `+webhookEndpointColumns+` FROM webhook_endpoints WHERE id = ?`, id))
}

// LockWebhookEndpoint is a plain GetWebhookEndpoint: the IMMEDIATE write
// transaction is exclusive and is itself the lock (see LockDeposit).
func (t *tx) LockWebhookEndpoint(ctx context.Context, id string) (*engine.WebhookEndpoint, error) {
	return t.GetWebhookEndpoint(ctx, id)
}

func (t *tx) ListWebhookEndpoints(ctx context.Context, organizationID string, enabledOnly bool) ([]*engine.WebhookEndpoint, error) {
	q := `SELECT ` + webhookEndpointColumns + ` FROM webhook_endpoints WHERE organization_id = ?`
	if enabledOnly {
		q += ` AND enabled = 1`
	}
	return queryList(ctx, t, scanWebhookEndpoint, q+` ORDER BY created_at, id`, organizationID)
}

func (t *tx) UpdateWebhookEndpoint(ctx context.Context, ep *engine.WebhookEndpoint) error {
	// An endpoint's organization never changes.
	return t.exec(ctx, `UPDATE webhook_endpoints SET url = ?, secret = ?, previous_secret = ?,
		previous_secret_expires_at = ?, enabled = ?, disabled_reason = ?, failing_since = ?, updated_at = ?
		WHERE id = ?`,
		ep.URL, notNullBytes(ep.Secret), nullBytes(ep.PreviousSecret), epochMicros(ep.PreviousSecretExpiresAt),
		ep.Enabled, ep.DisabledReason, epochMicros(ep.FailingSince), micros(ep.UpdatedAt), ep.ID)
}

// DeleteWebhookEndpoint deletes the endpoint row; its deliveries and their
// attempts go with it through the schema's ON DELETE CASCADE.
func (t *tx) DeleteWebhookEndpoint(ctx context.Context, id string) error {
	return t.exec(ctx, `DELETE FROM webhook_endpoints WHERE id = ?`, id)
}

// Deliveries.

const deliveryColumns = schema.DeliveryColumns

func scanDelivery(row scanner) (*engine.Delivery, error) {
	var d engine.Delivery
	err := row.Scan(&d.ID, &d.EventID, &d.EndpointID, &d.OrganizationID, &d.Status, &d.Attempts,
		epochTimeCol{&d.NextAttemptAt}, &d.LeaseOwner, epochTimeCol{&d.LeasedUntil}, &d.LastStatusCode, &d.LastError,
		epochTimeCol{&d.DeliveredAt}, timeCol{&d.CreatedAt}, timeCol{&d.UpdatedAt})
	if err != nil {
		return nil, interpretError(err)
	}
	return &d, nil
}

// CreateDelivery relies on UNIQUE (event_id, endpoint_id) for ErrDuplicate.
func (t *tx) CreateDelivery(ctx context.Context, d *engine.Delivery) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO deliveries (`+deliveryColumns+`) VALUES (`+placeholders(14)+`)`,
		d.ID, d.EventID, d.EndpointID, d.OrganizationID, d.Status, d.Attempts, epochMicros(d.NextAttemptAt),
		d.LeaseOwner, epochMicros(d.LeasedUntil), d.LastStatusCode, d.LastError, epochMicros(d.DeliveredAt),
		micros(d.CreatedAt), micros(d.UpdatedAt))
	return interpretError(err)
}

func (t *tx) GetDelivery(ctx context.Context, id string) (*engine.Delivery, error) {
	return scanDelivery(t.tx.QueryRowContext(ctx, `SELECT `+deliveryColumns+` FROM deliveries WHERE id = ?`, id))
}

// LockDelivery is a plain GetDelivery: the IMMEDIATE write transaction is
// exclusive and is itself the lock (see LockDeposit).
func (t *tx) LockDelivery(ctx context.Context, id string) (*engine.Delivery, error) {
	return t.GetDelivery(ctx, id)
}

func (t *tx) UpdateDelivery(ctx context.Context, d *engine.Delivery) error {
	// The event, endpoint and organization of a delivery never change.
	return t.exec(ctx, `UPDATE deliveries SET status = ?, attempts = ?, next_attempt_at = ?,
		lease_owner = ?, leased_until = ?, last_status_code = ?, last_error = ?, delivered_at = ?, updated_at = ?
		WHERE id = ?`,
		d.Status, d.Attempts, epochMicros(d.NextAttemptAt), d.LeaseOwner, epochMicros(d.LeasedUntil),
		d.LastStatusCode, d.LastError, epochMicros(d.DeliveredAt), micros(d.UpdatedAt), d.ID)
}

func (t *tx) ListDeliveries(ctx context.Context, p engine.ListDeliveriesParams) ([]*engine.Delivery, error) {
	var where []string
	var args []any
	for _, f := range []struct{ column, value string }{
		{"organization_id", p.OrganizationID},
		{"event_id", p.EventID},
		{"endpoint_id", p.EndpointID},
		{"status", p.Status},
	} {
		if f.value != "" {
			where = append(where, f.column+" = ?")
			args = append(args, f.value)
		}
	}
	q := `SELECT ` + deliveryColumns + ` FROM deliveries`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	q += ` ORDER BY created_at, id`
	if p.Limit > 0 {
		q += ` LIMIT ?`
		args = append(args, p.Limit)
	}
	return queryList(ctx, t, scanDelivery, q, args...)
}

// claimDeliveriesQuery leases the due deliveries of enabled endpoints not
// among exclude endpoint IDs: arguments owner, leased until, now, now, the
// exclude IDs, the fast IDs and their cap (if any fast), the per-endpoint
// cap, limit. Like claimQuery it spells the
// deliveries_due partial index's WHERE clause as a literal. The window
// numbers each endpoint's candidates in due order, so the cap keeps the
// earliest of each; the outer ORDER BY and LIMIT then keep the earliest of
// those. Unlike the other claims it reads every due candidate, not just
// limit of them: the cap needs them numbered before the limit applies.
func claimDeliveriesQuery(exclude, fast int) string {
	notIn := ""
	if exclude > 0 {
		notIn = ` AND d.endpoint_id NOT IN (` + placeholders(exclude) + `)`
	}
	capped := `n <= ?`
	if fast > 0 {
		capped = `n <= CASE WHEN endpoint_id IN (` + placeholders(fast) + `) THEN ? ELSE ? END`
	}
	return `UPDATE deliveries SET lease_owner = ?, leased_until = ?
	WHERE id IN (
		SELECT id FROM (
			SELECT d.id, d.endpoint_id, d.next_attempt_at,
				ROW_NUMBER() OVER (PARTITION BY d.endpoint_id ORDER BY d.next_attempt_at, d.id) AS n
			FROM deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
			WHERE d.status = '` + engine.DeliveryPending + `' AND d.next_attempt_at <= ? AND d.leased_until <= ?
				AND e.enabled = 1` + notIn + `)
		WHERE ` + capped + `
		ORDER BY next_attempt_at, id LIMIT ?)
	RETURNING ` + deliveryColumns
}

// ClaimDueDeliveries selects and leases in one statement; the IMMEDIATE
// transaction serializes claims, so there is nothing locked to skip. A
// Limit of zero or less claims nothing; a PerEndpoint of zero or less caps
// nothing.
func (t *tx) ClaimDueDeliveries(ctx context.Context, p engine.ClaimDeliveriesParams) ([]*engine.Delivery, error) {
	if p.Limit <= 0 {
		return nil, nil
	}
	// No endpoint can have more than Limit claimed anyway.
	perEndpoint := p.Limit
	if p.PerEndpoint > 0 {
		perEndpoint = min(p.PerEndpoint, p.Limit)
	}
	now := micros(p.Now)
	args := make([]any, 0, 7+len(p.ExcludeEndpoints)+len(p.FastEndpoints))
	args = append(args, p.Owner, epochMicros(p.LeasedUntil), now, now)
	for _, id := range p.ExcludeEndpoints {
		args = append(args, id)
	}
	fast := p.FastEndpoints
	if p.FastPerEndpoint <= 0 {
		fast = nil
	}
	for _, id := range fast {
		args = append(args, id)
	}
	if len(fast) > 0 {
		args = append(args, min(p.FastPerEndpoint, p.Limit))
	}
	args = append(args, perEndpoint, p.Limit)
	out, err := queryList(ctx, t, scanDelivery, claimDeliveriesQuery(len(p.ExcludeEndpoints), len(fast)), args...)
	if err != nil {
		return nil, err
	}
	// RETURNING's row order is unspecified.
	rowset.SortDue(out, func(x *engine.Delivery) (time.Time, string) { return x.NextAttemptAt, x.ID })
	return out, nil
}

// Delivery attempts.

const deliveryAttemptColumns = schema.DeliveryAttemptColumns

func scanDeliveryAttempt(row scanner) (*engine.DeliveryAttempt, error) {
	var a engine.DeliveryAttempt
	err := row.Scan(&a.DeliveryID, timeCol{&a.AttemptedAt}, &a.StatusCode, &a.Error, &a.Duration)
	if err != nil {
		return nil, interpretError(err)
	}
	return &a, nil
}

func (t *tx) CreateDeliveryAttempt(ctx context.Context, a *engine.DeliveryAttempt) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO delivery_attempts (`+deliveryAttemptColumns+`) VALUES (`+placeholders(5)+`)`,
		a.DeliveryID, micros(a.AttemptedAt), a.StatusCode, a.Error, int64(a.Duration))
	return interpretError(err)
}

// ListDeliveryAttempts orders by attempted_at, then by the order the posts
// were recorded in.
func (t *tx) ListDeliveryAttempts(ctx context.Context, deliveryID string) ([]*engine.DeliveryAttempt, error) {
	return queryList(ctx, t, scanDeliveryAttempt, `SELECT `+deliveryAttemptColumns+` FROM delivery_attempts
		WHERE delivery_id = ? ORDER BY attempted_at, id`, deliveryID)
}

// CountDisabledWebhookEndpoints reads the partial index
// webhook_endpoints_disabled, spelling its WHERE so the planner takes it.
const countDisabledEndpointsQuery = `SELECT count(*) FROM webhook_endpoints WHERE enabled = 0`

func (t *tx) CountDisabledWebhookEndpoints(ctx context.Context) (int, error) {
	var n int
	err := t.tx.QueryRowContext(ctx, countDisabledEndpointsQuery).Scan(&n)
	return n, err
}
