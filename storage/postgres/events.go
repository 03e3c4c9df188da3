package postgres

import (
	"context"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/storage/internal/schema"
)

// The event outbox.

const eventColumns = schema.EventColumns

func scanEvent(row scanner) (*engine.Event, error) {
	var e engine.Event
	err := row.Scan(&e.ID, &e.OrganizationID, &e.Type, &e.ResourceID, bytesCol{&e.Payload}, timeCol{&e.CreatedAt})
	if err != nil {
		return nil, interpretError(err)
	}
	return &e, nil
}

func (t *tx) CreateEvent(ctx context.Context, e *engine.Event) error {
	// notNullBytes: an empty payload is an empty BYTEA, not NULL.
	return t.insert(ctx, "event "+e.ID, `INSERT INTO events (`+eventColumns+`) VALUES (`+params(6)+`)`,
		e.ID, e.OrganizationID, e.Type, e.ResourceID, notNullBytes(e.Payload), e.CreatedAt)
}

func (t *tx) GetEvent(ctx context.Context, id string) (*engine.Event, error) {
	return scanEvent(t.tx.QueryRow(ctx, `SELECT `+eventColumns+` FROM events WHERE id = $1`, id))
}

func (t *tx) ListEvents(ctx context.Context, p engine.ListEventsParams) ([]*engine.Event, error) {
	var f filter
	f.eq("organization_id", p.OrganizationID)
	f.eq("resource_id", p.ResourceID)
	q := `SELECT ` + eventColumns + ` FROM events` + f.where() + ` ORDER BY created_at, id` + f.limit(p.Limit)
	return queryList(ctx, t, scanEvent, q, f.args...)
}
