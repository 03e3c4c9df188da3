package postgres

import (
	"context"
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
		timeCol{&ep.PreviousSecretExpiresAt}, &ep.Enabled, &ep.DisabledReason, timeCol{&ep.FailingSince},
		timeCol{&ep.CreatedAt}, timeCol{&ep.UpdatedAt})
	if err != nil {
		return nil, interpretError(err)
	}
	return &ep, nil
}

func (t *tx) CreateWebhookEndpoint(ctx context.Context, ep *engine.WebhookEndpoint) error {
	return t.insert(ctx, "webhook endpoint "+ep.ID,
		`INSERT INTO webhook_endpoints (`+webhookEndpointColumns+`) VALUES (`+params(11)+`)`,
		ep.ID, ep.OrganizationID, ep.URL, notNullBytes(ep.Secret), nullBytes(ep.PreviousSecret),
		zeroNull(ep.PreviousSecretExpiresAt), ep.Enabled, ep.DisabledReason, zeroNull(ep.FailingSince),
		ep.CreatedAt, ep.UpdatedAt)
}

func (t *tx) GetWebhookEndpoint(ctx context.Context, id string) (*engine.WebhookEndpoint, error) {
	return scanWebhookEndpoint(t.tx.QueryRow(ctx,
		`SELECT `+webhookEndpointColumns+` FROM webhook_endpoints WHERE id = $1`, id))
}

// LockWebhookEndpoint is GetWebhookEndpoint under FOR NO KEY UPDATE (see
// lockRow).
func (t *tx) LockWebhookEndpoint(ctx context.Context, id string) (*engine.WebhookEndpoint, error) {
	return scanWebhookEndpoint(t.tx.QueryRow(ctx,
		`SELECT `+webhookEndpointColumns+` FROM webhook_endpoints WHERE id = $1`+t.lockRow(), id))
}

func (t *tx) ListWebhookEndpoints(ctx context.Context, organizationID string, enabledOnly bool) ([]*engine.WebhookEndpoint, error) {
	return queryList(ctx, t, scanWebhookEndpoint, endpointsQuery(enabledOnly), organizationID)
}

// endpointsQuery lists an organization's endpoints ($1), or its enabled
// ones.
func endpointsQuery(enabledOnly bool) string {
	q := `SELECT ` + webhookEndpointColumns + ` FROM webhook_endpoints WHERE organization_id = $1`
	if enabledOnly {
		q += ` AND enabled`
	}
	return q + ` ORDER BY created_at, id`
}

func (t *tx) UpdateWebhookEndpoint(ctx context.Context, ep *engine.WebhookEndpoint) error {
	// An endpoint's organization never changes.
	return t.exec(ctx, `UPDATE webhook_endpoints SET url = $1, secret = $2, previous_secret = $3,
		previous_secret_expires_at = $4, enabled = $5, disabled_reason = $6, failing_since = $7, updated_at = $8
		WHERE id = $9`,
		ep.URL, notNullBytes(ep.Secret), nullBytes(ep.PreviousSecret), zeroNull(ep.PreviousSecretExpiresAt),
		ep.Enabled, ep.DisabledReason, zeroNull(ep.FailingSince), ep.UpdatedAt, ep.ID)
}

// DeleteWebhookEndpoint deletes the endpoint row; its deliveries and their
// attempts go with it through the schema's ON DELETE CASCADE.
func (t *tx) DeleteWebhookEndpoint(ctx context.Context, id string) error {
	return t.exec(ctx, `DELETE FROM webhook_endpoints WHERE id = $1`, id)
}

// Deliveries.

const deliveryColumns = schema.DeliveryColumns

func scanDelivery(row scanner) (*engine.Delivery, error) {
	var d engine.Delivery
	err := row.Scan(&d.ID, &d.EventID, &d.EndpointID, &d.OrganizationID, &d.Status, &d.Attempts,
		timeCol{&d.NextAttemptAt}, &d.LeaseOwner, timeCol{&d.LeasedUntil}, &d.LastStatusCode, &d.LastError,
		timeCol{&d.DeliveredAt}, timeCol{&d.CreatedAt}, timeCol{&d.UpdatedAt})
	if err != nil {
		return nil, interpretError(err)
	}
	return &d, nil
}

// CreateDelivery relies on UNIQUE (event_id, endpoint_id) for ErrDuplicate.
func (t *tx) CreateDelivery(ctx context.Context, d *engine.Delivery) error {
	return t.insert(ctx, "delivery "+d.ID, `INSERT INTO deliveries (`+deliveryColumns+`) VALUES (`+params(14)+`)`,
		d.ID, d.EventID, d.EndpointID, d.OrganizationID, d.Status, d.Attempts, zeroNull(d.NextAttemptAt),
		d.LeaseOwner, zeroNull(d.LeasedUntil), d.LastStatusCode, d.LastError, zeroNull(d.DeliveredAt),
		d.CreatedAt, d.UpdatedAt)
}

func (t *tx) GetDelivery(ctx context.Context, id string) (*engine.Delivery, error) {
	return scanDelivery(t.tx.QueryRow(ctx, `SELECT `+deliveryColumns+` FROM deliveries WHERE id = $1`, id))
}

// LockDelivery is GetDelivery under FOR NO KEY UPDATE (see lockRow).
func (t *tx) LockDelivery(ctx context.Context, id string) (*engine.Delivery, error) {
	return scanDelivery(t.tx.QueryRow(ctx, `SELECT `+deliveryColumns+` FROM deliveries WHERE id = $1`+t.lockRow(), id))
}

func (t *tx) UpdateDelivery(ctx context.Context, d *engine.Delivery) error {
	// The event, endpoint and organization of a delivery never change.
	return t.exec(ctx, `UPDATE deliveries SET status = $1, attempts = $2, next_attempt_at = $3,
		lease_owner = $4, leased_until = $5, last_status_code = $6, last_error = $7, delivered_at = $8,
		updated_at = $9
		WHERE id = $10`,
		d.Status, d.Attempts, zeroNull(d.NextAttemptAt), d.LeaseOwner, zeroNull(d.LeasedUntil),
		d.LastStatusCode, d.LastError, zeroNull(d.DeliveredAt), d.UpdatedAt, d.ID)
}

func (t *tx) ListDeliveries(ctx context.Context, p engine.ListDeliveriesParams) ([]*engine.Delivery, error) {
	var f filter
	f.eq("organization_id", p.OrganizationID)
	f.eq("event_id", p.EventID)
	f.eq("endpoint_id", p.EndpointID)
	f.eq("status", p.Status)
	q := `SELECT ` + deliveryColumns + ` FROM deliveries` + f.where() + ` ORDER BY created_at, id` + f.limit(p.Limit)
	return queryList(ctx, t, scanDelivery, q, f.args...)
}

// stillDueDelivery is the condition of a claimable delivery, on alias d:
// arguments now ($3). The claim's locked CTE checks it again on the few
// candidates it reads by primary key; it is spelled so that no plan can
// use the deliveries_due index for it (the status with an empty string
// appended), through which it would read every pending delivery, those
// waiting too.
const stillDueDelivery = `d.status || '' = '` + engine.DeliveryPending + `'
	AND (d.next_attempt_at IS NULL OR d.next_attempt_at <= $3)
	AND (d.leased_until IS NULL OR d.leased_until <= $3)`

// claimDeliveriesQuery leases the due deliveries of enabled endpoints not
// among the excluded ones: arguments owner, leased until, now, the
// excluded endpoint IDs (a text array, never NULL), the per-endpoint cap,
// limit, the fast endpoint IDs (a text array, never NULL) and their cap.
//
// FOR UPDATE cannot lock the rows of a query with a window function, so the
// claim has two steps. The due CTE reads the due deliveries as two scans
// of deliveries_due, each bounded on the index (never tried, then due
// again), never those waiting for a later try: a receiver that is down
// has its deliveries retried for days, and one condition "NULL or before
// now" bounds neither end of the index (TestDeliveryClaimReadsOnlyDueRows).
// The candidates CTE numbers each endpoint's due deliveries in due order,
// keeps the first cap of each, then the earliest limit of those. The
// locked CTE then locks those candidates, skipping any another
// transaction has locked; it repeats the due condition so that at
// READ COMMITTED a candidate another claimer leased (and committed) since
// the statement's snapshot is checked again as it is now and left out. It
// looks the candidates up by primary key (= ANY of an array computed once).
// Both are MATERIALIZED so that each runs exactly once.
const claimDeliveriesQuery = `WITH due AS MATERIALIZED (
		SELECT d.id, d.endpoint_id, d.next_attempt_at FROM deliveries d
		WHERE d.status = '` + engine.DeliveryPending + `' AND d.next_attempt_at IS NULL
			AND (d.leased_until IS NULL OR d.leased_until <= $3)
		UNION ALL
		SELECT d.id, d.endpoint_id, d.next_attempt_at FROM deliveries d
		WHERE d.status = '` + engine.DeliveryPending + `' AND d.next_attempt_at <= $3
			AND (d.leased_until IS NULL OR d.leased_until <= $3)),
	candidates AS MATERIALIZED (
		SELECT id FROM (
			SELECT d.id, d.endpoint_id, d.next_attempt_at,
				ROW_NUMBER() OVER (PARTITION BY d.endpoint_id ORDER BY d.next_attempt_at NULLS FIRST, d.id) AS n
			FROM due d JOIN webhook_endpoints e ON e.id = d.endpoint_id
			WHERE e.enabled AND NOT (d.endpoint_id = ANY ($4::text[]))) c
		WHERE n <= CASE WHEN endpoint_id = ANY ($7::text[]) THEN $8::bigint ELSE $5::bigint END
		ORDER BY next_attempt_at NULLS FIRST, id LIMIT $6),
	locked AS MATERIALIZED (
		SELECT d.id FROM deliveries d
		WHERE d.id = ANY (ARRAY (SELECT id FROM candidates)) AND ` + stillDueDelivery + `
		FOR NO KEY UPDATE OF d SKIP LOCKED)
	UPDATE deliveries SET lease_owner = $1, leased_until = $2
	WHERE id = ANY (ARRAY (SELECT id FROM locked))
	RETURNING ` + deliveryColumns

// ClaimDueDeliveries selects, locks and leases in one statement
// (claimDeliveriesQuery). A Limit of zero or less claims nothing; a
// PerEndpoint of zero or less caps nothing.
func (t *tx) ClaimDueDeliveries(ctx context.Context, p engine.ClaimDeliveriesParams) ([]*engine.Delivery, error) {
	if p.Limit <= 0 {
		return nil, nil
	}
	// No endpoint can have more than Limit claimed anyway.
	perEndpoint := p.Limit
	if p.PerEndpoint > 0 {
		perEndpoint = min(p.PerEndpoint, p.Limit)
	}
	// A nil slice would be a NULL array, for which "= ANY" is NULL, not
	// false: it would exclude every endpoint.
	exclude := p.ExcludeEndpoints
	if exclude == nil {
		exclude = []string{}
	}
	fast, fastPerEndpoint := p.FastEndpoints, perEndpoint
	if fast == nil || p.FastPerEndpoint <= 0 {
		fast = []string{}
	} else {
		fastPerEndpoint = min(p.FastPerEndpoint, p.Limit)
	}
	out, err := claimList(ctx, t, scanDelivery, claimDeliveriesQuery,
		p.Owner, zeroNull(p.LeasedUntil), p.Now, exclude, perEndpoint, p.Limit, fast, fastPerEndpoint)
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
	err := row.Scan(&a.DeliveryID, timeCol{&a.AttemptedAt}, &a.StatusCode, &a.Error, durationCol{&a.Duration})
	if err != nil {
		return nil, interpretError(err)
	}
	return &a, nil
}

func (t *tx) CreateDeliveryAttempt(ctx context.Context, a *engine.DeliveryAttempt) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO delivery_attempts (`+deliveryAttemptColumns+`) VALUES (`+params(5)+`)`,
		a.DeliveryID, a.AttemptedAt, a.StatusCode, a.Error, int64(a.Duration))
	return interpretError(err)
}

// ListDeliveryAttempts orders by attempted_at, then by the order the posts
// were recorded in.
func (t *tx) ListDeliveryAttempts(ctx context.Context, deliveryID string) ([]*engine.DeliveryAttempt, error) {
	return queryList(ctx, t, scanDeliveryAttempt, `SELECT `+deliveryAttemptColumns+` FROM delivery_attempts
		WHERE delivery_id = $1 ORDER BY attempted_at, id`, deliveryID)
}

// CountDisabledWebhookEndpoints reads the partial index
// webhook_endpoints_disabled, spelling its WHERE so the planner takes it.
func (t *tx) CountDisabledWebhookEndpoints(ctx context.Context) (int, error) {
	var n int64
	err := t.tx.QueryRow(ctx, `SELECT count(*) FROM webhook_endpoints WHERE NOT enabled`).Scan(&n)
	return int(n), err
}
