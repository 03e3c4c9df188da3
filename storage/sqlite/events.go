package sqlite

import (
	"context"
	"strings"

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
	// A non-nil slice, so that an empty payload is an empty BLOB, not NULL.
	payload := e.Payload
	if payload == nil {
		payload = []byte{}
	}
	_, err := t.tx.ExecContext(ctx, `INSERT INTO events (`+eventColumns+`) VALUES (`+placeholders(6)+`)`,
		e.ID, e.OrganizationID, e.Type, e.ResourceID, payload, micros(e.CreatedAt))
	return interpretError(err)
}

func (t *tx) GetEvent(ctx context.Context, id string) (*engine.Event, error) {
	return scanEvent(t.tx.QueryRowContext(ctx, `SELECT `+eventColumns+` FROM events WHERE id = ?`, id))
}

func (t *tx) ListEvents(ctx context.Context, p engine.ListEventsParams) ([]*engine.Event, error) {
	var where []string
	var args []any
	if p.OrganizationID != "" {
		where = append(where, "organization_id = ?")
		args = append(args, p.OrganizationID)
	}
	if p.ResourceID != "" {
		where = append(where, "resource_id = ?")
		args = append(args, p.ResourceID)
	}
	q := `SELECT ` + eventColumns + ` FROM events`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	q += ` ORDER BY created_at, id`
	if p.Limit > 0 {
		q += ` LIMIT ?`
		args = append(args, p.Limit)
	}
	return queryList(ctx, t, scanEvent, q, args...)
}
